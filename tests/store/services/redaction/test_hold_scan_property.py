"""The hold-back's Hyperscan scan (``hold_scan.py``) keeps the stream's property: what
goes out, concatenated, is the whole text redacted, for every split, with secrets cut at
every boundary, characters beyond ASCII, long runs of whitespace and many matches in
progress at once; without Hyperscan (the pure-Python engine) too. A scan that raises fails
the stream closed: nothing of the piece it was looking at goes out."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretcorpus import TEST_KEY, redactor

from ctxproxy.store.services.redaction import RedactionError, StreamRedactor, engine, hold_scan

sys.path.insert(0, str(Path(__file__).parent))
from test_redaction_stream import GHP, JWT, PEM, SLACK  # noqa: E402

# Words that begin matches which may hold whitespace (keyword, separator, value), the secrets
# themselves, characters beyond ASCII (Latin-1 and not, one and two UTF-16 units), and prose.
SECRETS = [GHP, SLACK, JWT, "API_TOKEN=Hq4Vm8Zr2Kt6xYwQ", "postgres://admin:hunter2hunter2@db.internal/app",
           PEM, PEM.replace("\n", "\r\n"), "Authorization: Bearer " + JWT]
OPENERS = ["password", "password =", "PGPASSWORD=", "api_key:", "token", "Authorization: Bearer", "secret",
           "-----BEGIN RSA PRIVATE KEY-----", "key", "pass", "=", ":", '"', "'", "%2F", "\\n"]
WIDE = ["é", "ü", "ÿ", "ж", "東京", "😀", "—", "\u00a0", "\u2028", "ﬁ", "\ud800"]  # (a lone surrogate too)
PROSE = ["the", "deploy", "runs", "then", "ok.", "café", "naïve", "(see", "log)", "x", "_", "-"]


def spaces() -> st.SearchStrategy[str]:
    return st.builds(lambda c, n: c * n, st.sampled_from([" ", "\t", "\n", "\r\n", " \t", "\u3000"]),
                     st.sampled_from([1, 2, 3, 8, 40, 300]))


FRAGMENT = st.one_of(st.sampled_from(SECRETS), st.sampled_from(OPENERS), st.sampled_from(WIDE),
                     st.sampled_from(PROSE), spaces())


def texts() -> st.SearchStrategy[str]:
    return st.lists(FRAGMENT, min_size=1, max_size=40).map("".join)


def _stream(red, text: str, cuts: list[int]) -> str:
    points = sorted({c % (len(text) + 1) for c in cuts})
    sr = StreamRedactor(red, TEST_KEY)
    out, last = [], 0
    for p in points:
        out.append(sr.feed(text[last:p]))
        last = p
    out.append(sr.feed(text[last:]))
    return "".join(out) + sr.flush()


@pytest.fixture(scope="module")
def scanned():
    if not engine.prefilter.hyperscan_available():
        pytest.skip("needs hyperscan")
    red = redactor("hyperscan")
    red.warm()
    assert any(t._spaced_scan is not None for ix in (red._pending, red._secret_index) for t in ix.tables())
    return red


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(texts(), st.lists(st.integers(0, 100_000), max_size=40), st.sampled_from([0, engine.SCAN_MIN]))
def test_the_stream_is_the_whole_text_redacted_for_every_split_with_the_scan(scanned, text, cuts, scan_min):
    old, engine.SCAN_MIN = engine.SCAN_MIN, scan_min  # 0: the scan at every search, however short
    try:
        assert _stream(scanned, text, cuts) == scanned.redact(text, TEST_KEY).text
    finally:
        engine.SCAN_MIN = old


@settings(max_examples=60, deadline=None)
@given(texts(), st.lists(st.integers(0, 100_000), max_size=40))
def test_the_stream_is_the_whole_text_redacted_for_every_split_without_hyperscan(text, cuts):
    red = redactor("python")
    assert _stream(red, text, cuts) == red.redact(text, TEST_KEY).text
    assert all(t._spaced_scan is None for ix in (red._pending, red._secret_index) for t in ix.tables())


@pytest.mark.parametrize("secret", SECRETS)
def test_a_secret_behind_long_whitespace_and_wide_text_cut_at_every_offset(scanned, monkeypatch, secret):
    monkeypatch.setattr(engine, "SCAN_MIN", 0)
    text = "東京 😀 naïve " + "password = " + " " * 64 + "\t\n" * 20 + "key: " + secret + " ж done"
    want = scanned.redact(text, TEST_KEY).text
    assert want != text and "Hq4Vm8Zr2Kt6xYwQ" not in want and GHP not in want
    for k in range(len(text) + 1):
        assert _stream(scanned, text, [k]) == want, k
    at = text.index(secret)
    for k in range(at - 2, at + len(secret) + 2):  # twelve-character pieces, one boundary at every offset
        assert _stream(scanned, text, [*range(k % 12, len(text), 12), k]) == want, k


class _Broken:
    """A Hyperscan database whose scan fails (what a scratch or a database error looks like)."""

    def __init__(self):
        self.scans = 0

    def scan(self, data, match_event_handler=None):
        self.scans += 1
        raise hold_scan._hs.error("scan failed")


def test_a_scan_that_raises_fails_the_stream_closed(scanned, monkeypatch):
    monkeypatch.setattr(engine, "SCAN_MIN", 0)
    text = "Résumé: the naïve café served crème brûlée, then the deploy ran with " + GHP + " and stopped."
    cut = text.index(GHP) + 5
    sr = StreamRedactor(scanned, TEST_KEY)
    first = sr.feed(text[:20])
    broken = _Broken()
    for ix in (scanned._pending, scanned._secret_index):
        for t in ix.tables():
            if t._spaced_scan is not None:
                monkeypatch.setattr(t._spaced_scan, "_db", broken)
    with pytest.raises(RedactionError):
        sr.feed(text[20:cut])
    assert broken.scans and GHP[:5] not in first


@pytest.mark.parametrize("hyperscan", [True, False])
def test_a_custom_rule_whose_match_holds_spaces_and_wide_characters_streams_as_it_redacts(monkeypatch,
                                                                                         hyperscan):
    """A match that may hold any character (``.``, a negated class) across spaces: characters
    beyond ASCII inside it, before the held text's last run, still hold it back."""
    from ctxproxy.store.services.redaction import Redactor
    from ctxproxy.store.services.redaction.rules import make_rule

    if hyperscan and not engine.prefilter.hyperscan_available():
        pytest.skip("needs hyperscan")
    monkeypatch.setattr(engine, "SCAN_MIN", 0)
    red = Redactor([make_rule("wide-block", "generic", r"(?s)BEGIN.{4,60}?END", secret=None),
                    make_rule("quoted", "generic", r'pw\s*=\s*"[^"]{6,40}"', secret=None)],
                   use_hyperscan=hyperscan)
    for text in ("see BEGIN café 東京 😀 ü\u3000ж — crème END done", 'x pw = "é ü 東京 😀 naïve" ok'):
        want = red.redact(text, TEST_KEY).text
        assert "[REDACTED:" in want
        for k in range(len(text) + 1):
            assert _stream(red, text, [k]) == want, k
        for k in range(3):
            assert _stream(red, text, list(range(k, len(text), 3))) == want, k
