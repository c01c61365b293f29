"""What docs/filters/redact.md and the README tell a user to try holds: vendor
documentation example keys and placeholders go through as written, and the
real-shaped keys they suggest instead are redacted under the rule they name."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxproxy.store.services.redaction.profiles import ProfileRegistry

ROOT = Path(__file__).resolve().parents[4]
KEY = b"k" * 32


@pytest.fixture(scope="module")
def redactor():
    return ProfileRegistry.build({}).get("default").redactor


@pytest.mark.parametrize("value", ["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                   "sk-ant-api03-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "your_api_key_here"])
def test_documentation_examples_go_through(redactor, value):
    for text in (f"key {value}", f"aws_secret_access_key = {value}", f"OPENAI_API_KEY={value}"):
        assert redactor.redact(text, KEY).text == text


def test_the_keys_the_docs_suggest_are_redacted_as_they_say():
    doc = (ROOT / "docs" / "filters" / "redact.md").read_text()
    suggested = re.findall(r"`(\S+)` \(becomes `\[REDACTED:([a-z-]+):…\]`\)|`(\S+)`\s+\(`\[REDACTED:([a-z-]+):…\]`\)",
                           doc.replace("\n", " "))
    pairs = [(a or c, b or d) for a, b, c, d in suggested]
    assert len(pairs) == 2, pairs
    redactor = ProfileRegistry.build({}).get("default").redactor
    for value, rule in pairs:
        assert redactor.redact(f"key {value}", KEY).counts == {rule: 1}, value
    readme = (ROOT / "README.md").read_text()
    assert pairs[0][0] in readme and "AKIAIOSFODNN7EXAMPLE" in readme
