"""Every built-in rule's sample secret, after non-ASCII prose, cut at every offset into
two and three stream chunks: what the client receives, concatenated, equals redacting
the whole text and holds no secret."""
from __future__ import annotations

import pytest
from secretcorpus import TEST_KEY, build_corpus, redactor

from ctxproxy.store.services.redaction import builtin_rules
from ctxproxy.store.services.redaction.stream import StreamRedactor

ALL_GROUPS = tuple(sorted({r.group for r in builtin_rules()}))
PROSE = "Résumé — 東京 naïve café, ça va? 🔑 "
# One positive sample per rule: the secret in the surroundings the corpus gives it.
SAMPLES = {}
for _s in build_corpus(seed=21, positives_per_rule=1):
    if _s.secrets and _s.rule not in SAMPLES:
        SAMPLES[_s.rule] = _s


def _stream(red, chunks: list[str]) -> str:
    sr = StreamRedactor(red, TEST_KEY)
    out = [sr.feed(c) for c in chunks]
    out.append(sr.flush())
    return "".join(out)


def _check(red, text: str, secrets: list[str], want: str, chunks: list[str], where) -> None:
    got = _stream(red, chunks)
    assert got == want, where
    for value in secrets:
        assert value not in got, (where, value)


def _case(engine: str, rule: str):
    sample = SAMPLES[rule]
    red = redactor(engine, ALL_GROUPS)
    text = PROSE + sample.text
    secrets = [v for _, v in sample.secrets]
    want = red.redact(text, TEST_KEY).text
    for value in secrets:
        assert value not in want, (rule, value)
    # the span the secrets occupy (and a few characters around): where a cut can matter
    starts = [text.index(v) for v in secrets]
    lo = max(0, min(starts) - 3)
    hi = min(len(text), max(s + len(v) for s, v in zip(starts, secrets)) + 3)
    return red, text, secrets, want, lo, hi


EDGE = 24  # a long secret (a PEM block) is cut at every offset near its ends, every 5th inside


def _first_cuts(lo: int, hi: int) -> list[int]:
    if hi - lo <= 3 * EDGE:
        return list(range(lo, hi + 1))
    return sorted({*range(lo, lo + EDGE), *range(lo, hi, 5), *range(hi - EDGE, hi + 1)})


@pytest.mark.parametrize("engine", ["hyperscan", "python"])
@pytest.mark.parametrize("rule", sorted(SAMPLES))
def test_two_chunks_at_every_offset(engine, rule):
    red, text, secrets, want, lo, hi = _case(engine, rule)
    # every offset across the secrets (a long one near its ends and every 5th inside), and
    # the text before them: a cut there holds nothing back
    cuts = sorted({*range(0, lo, 2), *_first_cuts(lo, hi), len(text)})
    for i in cuts:
        _check(red, text, secrets, want, [text[:i], text[i:]], i)


# Every pair of cuts across the secret costs its length squared: the first cut goes at
# the offsets of the secret (and three characters either side), the second 1, 2 and 7
# characters after it and at the secret's end. On the default engine (the pure
# Python one shares the hold-back code and is cut in two chunks above).
SECOND_CUTS = (1, 2, 7)  # 0 (an empty middle chunk) is the two-chunk case above

@pytest.mark.parametrize("rule", sorted(SAMPLES))
def test_three_chunks_at_every_offset(rule):
    red, text, secrets, want, lo, hi = _case("hyperscan", rule)
    n = len(text)
    for i in _first_cuts(lo, hi):
        for j in sorted({*(min(n, i + d) for d in SECOND_CUTS), max(i, hi)}):
            _check(red, text, secrets, want, [text[:i], text[i:j], text[j:]], (i, j))
