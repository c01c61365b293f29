"""Recall cuts text into tokens one way: the index's tokenizer and what reads a message or a
tool's output against it share ``term_patterns``, and no other module spells those patterns."""
from __future__ import annotations

import re
from pathlib import Path

from ctxproxy.store import term_patterns
from ctxproxy.store.memory_terms import query_terms, terms

ROOT = Path(__file__).resolve().parents[2]
SHARED = {name: rx for name, rx in vars(term_patterns).items()
          if isinstance(rx, re.Pattern) and len(rx.pattern) > 4}  # ``\d`` alone is no tokenizer's


def test_no_module_spells_a_shared_pattern_again():
    assert {"WORD", "HYPHENATED", "CAMEL", "CJK"} <= set(SHARED)
    copies = []
    for folder in ("store", "filters", "proxy", "config"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "term_patterns.py":
                continue
            text = path.read_text(encoding="utf-8")
            copies += [f"{path.relative_to(ROOT)}: {name}" for name, rx in SHARED.items() if rx.pattern in text]
    assert copies == []


def test_the_index_and_a_query_cut_the_same_tokens():
    text = "getUserName de-stress parse_body R2_BUCKET 東京都 redis-cache-1"
    assert terms(text)[:2] == ["destress", "rediscach"]  # hyphenated words joined first
    assert {"getusernam", "get", "user", "nam", "parse_body", "pars", "bodi", "r2_bucket", "東京", "京都"} \
        <= set(query_terms(text))
