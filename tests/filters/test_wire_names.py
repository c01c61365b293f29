"""Filters name no wire field: the adapters (proxy/adapters/) are the only
modules that know the three APIs' shapes, and hand the filters what they need
through the request and response views (filters/view.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

FILTERS = Path(__file__).resolve().parents[2] / "filters"
# Keys and event names only one or two of the APIs use; a filter that needs one
# asks its view (``history_keys``, ``tool_names``, ``tool_results``, ...).
WIRE_NAMES = ("tool_use_id", "tool_call_id", "function_call_output", "function_call", "content_block",
              "message_start", "message_delta", "response.completed", "response.output_item",
              "compaction_summary", "input_json_delta", "tool_calls", "compaction_trigger", "previous_response_id",
              "client_metadata", "input_text", "output_text")
# Documentation may say what a view means on the wire; code may not name it.
_DOC = re.compile(r'("""|\'\'\').*?\1|#[^\n]*', re.S)


def wire_names_in(source: str) -> list[str]:
    code = _DOC.sub("", source)
    return [w for w in WIRE_NAMES if re.search(r"[\"']" + re.escape(w) + r"[\"']", code)]


@pytest.mark.parametrize("path", sorted(FILTERS.rglob("*.py")), ids=lambda p: str(p.relative_to(FILTERS)))
def test_a_filter_module_names_no_wire_field(path):
    named = wire_names_in(path.read_text())
    assert not named, f"{path.relative_to(FILTERS.parent)} names {named}: read them through the adapter's view"


def test_the_check_finds_a_wire_name_in_code_only():
    assert wire_names_in('"""A ``"tool_use_id"`` in a docstring."""\n# or "tool_use_id" in a comment\n') == []
    assert wire_names_in('KEYS = ("id", "tool_use_id")\n') == ["tool_use_id"]
