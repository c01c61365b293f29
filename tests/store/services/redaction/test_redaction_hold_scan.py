"""The hold-back's Hyperscan scan before the held text's last run: it only says where the
walk starts, so the stream holds back and releases exactly what it did without it."""
from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest
from secretcorpus import TEST_KEY, realistic_megabyte, redactor

from ctxproxy.store.services.redaction import StreamRedactor, engine
from ctxproxy.store.services.redaction.hold_scan import SpacedScan, Unsupported, reversed_pattern

sys.path.insert(0, str(Path(__file__).parent))
from test_redaction_stream import _GLUED, _PROSE, GHP, RELEASED_EARLY_CASES, SHORT_CASES  # noqa: E402

pytestmark = pytest.mark.skipif(not engine.prefilter.hyperscan_available(), reason="needs hyperscan")

# Texts around the scan's edges: words a keyword begins, whitespace of every kind, characters
# beyond ASCII (one byte each for the scan, Latin-1 or not), a word boundary at the start.
_EXTRA = ["password = hunter2hunter2 and then\ttoken:\n", "ÿ ж 東京 😀 ünäpi_key=Zq8vN2mK4pL6wE9x ",
          "\\nAPI_TOKEN=Hq4Vm8Zr2Kt6xYwQ\r\n", "x-----BEGIN RSA PRIVATE KEY----- "]


def _pieces(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    corpus = realistic_megabyte()[:60_000] + _PROSE + "".join(SHORT_CASES + RELEASED_EARLY_CASES + _EXTRA)
    out = []
    for _ in range(n):
        a = rng.randrange(0, len(corpus) - 160)
        piece = corpus[a:a + rng.randint(1, 150)]
        if rng.random() < 0.4:
            piece = rng.choice(_EXTRA) + piece + rng.choice([" ", "\n", "é ", "😀\t", ""])
        out.append(piece)
    return out


@pytest.fixture(scope="module")
def red():
    r = redactor("hyperscan")
    r.warm()
    return r


def _tables(red):
    for index in (red._pending, red._secret_index):
        for table in index.tables():
            if table._spaced_scan is not None:
                yield table


def test_the_tables_a_stream_searches_have_a_scan(red):
    """Where a match and where a secret may be in progress: the joined tables a stream's
    searches go through, each with its own alternatives that may consume whitespace."""
    tables = list(_tables(red))
    assert tables == [red._pending.searched(), red._secret_index.searched()]
    assert all(t._narrow and t.spaced_alts() for t in tables)


def test_the_scan_never_starts_after_a_position_an_alternative_matches_from(red):
    """Each spaced alternative, tried with its own Python regex at every position before the
    last run: where one matches to the run's start, the scan starts there or before."""
    for table in _tables(red):
        singles = [re.compile("(?:" + a + r")\Z", re.ASCII) for a in table.spaced_alts()]
        for piece in _pieces(1, 150):
            tail = engine._last_run(piece, 0)
            text = piece[:tail]
            matches = [p for p in range(tail) if any(rx.match(text, p) for rx in singles)]
            for pos in range(tail):
                first = table._spaced_scan.first(piece, pos, tail, engine.encode)
                leftmost = next((p for p in matches if p >= pos), tail)
                assert pos <= first <= leftmost, (piece, pos)


def test_the_leftmost_position_is_the_walks_with_and_without_the_scan(red, monkeypatch):
    monkeypatch.setattr(engine, "SCAN_MIN", 0)  # the scan at every search, however short
    for table in _tables(red):
        scan = table._spaced_scan
        for piece in _pieces(2, 150):
            for pos in range(len(piece) + 1):
                with_scan = table.leftmost(piece, pos, len(piece))
                table._spaced_scan = None
                try:
                    walked = table.leftmost(piece, pos, len(piece))
                finally:
                    table._spaced_scan = scan
                assert with_scan == walked, (piece, pos)


def _stream(red, chunks: list[str]) -> str:
    sr = StreamRedactor(red, TEST_KEY)
    return "".join([sr.feed(c) for c in chunks] + [sr.flush()])


@pytest.mark.parametrize("secret", _GLUED + [GHP, "PGPASSWORD=Hq4Vm8Zr2Kt6"])
def test_a_secret_split_across_every_boundary_amid_multibyte_prose(red, monkeypatch, secret):
    """Twelve-character pieces (what a model streams), the secret's every offset a boundary,
    the scan used at every piece: the stream is the whole text redacted."""
    monkeypatch.setattr(engine, "SCAN_MIN", 0)
    at = len(_PROSE) // 3
    text = _PROSE[:at] + secret + " 東京😀 " + _PROSE[at:at + 200]
    want = red.redact(text, TEST_KEY).text
    assert want != text
    for k in range(at - 1, at + len(secret) + 2):
        cuts = sorted({*range(k % 12, len(text), 12), k} - {0})
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        assert _stream(red, chunks) == want, k


def test_the_stream_is_the_same_with_and_without_the_scan(red, monkeypatch):
    """Random pieces of code, logs, JSON and prose with secrets, cut at random: what goes out
    at each piece (not only the whole) is the same with the scan as without."""
    rng = random.Random(3)
    corpus = realistic_megabyte()[:40_000]
    monkeypatch.setattr(engine, "SCAN_MIN", 0)
    for _ in range(20):
        a = rng.randrange(0, len(corpus) - 3000)
        text = corpus[a:a + 3000]
        cuts = sorted(rng.sample(range(1, len(text)), 250))
        chunks = [text[x:y] for x, y in zip([0, *cuts], [*cuts, len(text)])]
        outs = {}
        for use in (True, False):
            monkeypatch.setattr(engine, "SPACED_SCAN", use)
            scans = {t: t._spaced_scan for t in _tables(red)}
            if not use:
                for t in scans:
                    t._spaced_scan = None
            try:
                sr = StreamRedactor(red, TEST_KEY)
                outs[use] = [sr.feed(c) for c in chunks] + [sr.flush()]
            finally:
                for t, s in scans.items():
                    t._spaced_scan = s
        assert outs[True] == outs[False]
        assert "".join(outs[True]) == red.redact(text, TEST_KEY).text


def test_reversed_patterns_are_relaxed_not_narrowed():
    """Lookarounds and anchors go, word boundaries stay, classes take every non-ASCII byte."""
    assert reversed_pattern(r"(?<=\n)ab\b[^c]") == r"[\x00-bd-\xff]\bba"
    assert reversed_pattern(r"x{0,400}y\Z") == "y(?:x)*"
    rx = re.compile(reversed_pattern(r"(?i:key)[\w]{2,3}").encode(), re.ASCII)
    assert rx.fullmatch(b"a_YEk") and not rx.fullmatch("éaYEk".encode("latin-1"))


def test_an_alternative_hyperscan_cannot_take_leaves_the_walk_alone():
    with pytest.raises(Unsupported):
        SpacedScan([r"(a)\1"])
