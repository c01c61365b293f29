"""The literal pre-gate answers exactly: a member is present iff one of its literals is a substring of the text."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxproxy.store.services.memory import threat_compose, threat_mood, threats
from ctxproxy.store.services.memory.literal_gate import LiteralGate, ngrams
from ctxproxy.store.services.memory.literals import requirements
from ctxproxy.store.services.memory.threat_acts import ACT_RULES
from ctxproxy.store.services.memory.threat_rules import RULES

import test_memory_threat_acts as acts_tests  # noqa: E402  (their samples: texts the rules match)
import test_memory_threats as threat_tests  # noqa: E402

# a small alphabet makes literals share grams, and spaces, Latin, Cyrillic and Han letters go down every path
_ALPHABET = "abce t." + "ая" + "下载"
_LITERAL = st.text(_ALPHABET, min_size=2, max_size=7)
_FAMILY = st.lists(st.none() | st.frozensets(_LITERAL, min_size=1, max_size=6), max_size=8)


def _strings(x):
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _strings(v)


def _brute(families, text):
    return tuple({i for i, lits in enumerate(members) if lits is None or any(lit in text for lit in lits)}
                 for members in families)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FAMILY, min_size=1, max_size=3), st.lists(st.text(_ALPHABET, max_size=60), min_size=1, max_size=5))
def test_present_is_exactly_the_members_whose_literals_occur(families, texts):
    gate = LiteralGate(families)
    for text in texts:
        assert gate.present(text) == _brute(families, text)


def test_a_text_longer_than_the_sliced_length_is_read_whole():
    gate = LiteralGate([[{"needle"}, {"下载"}, {"ok"}]])
    text = "x" * 5000 + "needle" + "y" * 5000 + "下载"
    assert gate.present(text) == ({0, 1},)
    assert ngrams(text, 3) == {text[i:i + 3] for i in range(len(text) - 2)}


def test_a_literal_of_one_character_is_refused():
    with pytest.raises(ValueError):
        LiteralGate([[{"a"}]])


# the scan's own table: every text here is read by the rules' and the conventions' regexes through the gate
_WORDS = sorted({w for _, p in RULES + ACT_RULES for w in re.findall(r"[^\W\d_]{3,}", p)})


_REQUIRED = [requirements(r.regex.pattern) for r in threats._RULES]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_WORDS) | st.sampled_from([" ", "\n", ":", "/", ".", "'", "~/", "="]), max_size=40))
def test_the_scan_gate_answers_as_each_rule_and_part_would_alone(words):
    folded = threats.normalise(" ".join(words))
    # a rule is a candidate when the text holds a literal of every set its pattern requires (and what it needs)
    expected = [i for i, sets in enumerate(_REQUIRED)
                if all(any(lit in folded for lit in lits) for lits in sets)
                and (i not in threats._NEEDS or any(n in folded for n in threats._NEEDS[i]))]
    assert threats._candidates(folded) == expected
    parts = threats._present(folded)[1]
    assert parts == {k for k, lits in enumerate(threat_compose.PART_LITERALS) if any(lit in folded for lit in lits)}
    assert threat_compose._present(folded) == parts


def test_every_literal_set_a_rule_requires_is_in_its_matches():
    # the gate skips a rule unless the text holds one literal of each set: check it on every rule's own matches
    texts = [t for module in (threat_tests, acts_tests) for name in ("BLOCKED", "CLEAN", "MORE_BLOCKED", "MORE_CLEAN")
             for t in _strings(getattr(module, name, ()))]
    assert len(texts) > 300
    for _, pattern in RULES + ACT_RULES:
        rx = re.compile(pattern, re.MULTILINE)
        for text in texts:
            folded = threats.normalise(text)
            m = rx.search(folded)
            if m:
                for lits in requirements(pattern):
                    assert any(lit in m.group() or lit in folded for lit in lits), (pattern[:60], text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(sorted({w for _, rx in threat_mood._MOOD_ITEMS
                                         for w in re.findall(r"[^\W\d_]{2,}", rx.pattern)})) | st.just(" "),
                max_size=30))
def test_moods_through_the_gate_are_the_moods_of_every_regex(words):
    folded = threats.normalise(" ".join(words))
    every = {name for name, rx in threat_mood._MOOD_ITEMS if rx.search(folded)}
    assert threat_mood.moods(folded) - {"imp"} == every - {"imp"}
