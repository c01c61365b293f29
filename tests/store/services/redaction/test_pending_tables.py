"""The hold-back's search skips a position by the characters around it
(previous, current, next): it must never skip one where a rule's match may
still be in progress. Checked against trying every alternative at every
position, on the secret corpus and a megabyte of code and logs cut at
random points (the hold-back always looks at a text cut so)."""
from __future__ import annotations

import random
import re

import pytest
from secretcorpus import build_corpus, realistic_megabyte, redactor

from ctxproxy.store.services.redaction import engine as engine_mod


def _tables():
    red = redactor("hyperscan")
    return {"pending": red._pending._both, "secret": red._secret_index._both}


@pytest.fixture(scope="module")
def tables():
    return _tables()


def _brute(alts: list[re.Pattern], text: str, pos: int, end: int) -> int:
    for p in range(pos, end):
        if any(rx.match(text, p) for rx in alts):
            return p
    return end


def _texts() -> list[str]:
    rng = random.Random(7)
    corpus = [s.text for s in build_corpus(positives_per_rule=2)]
    mega = realistic_megabyte(size=60_000)
    texts = []
    for t in rng.sample(corpus, 120):
        texts.append(t[:rng.randint(1, len(t))])
    for _ in range(120):
        a = rng.randrange(len(mega) - 400)
        texts.append(mega[a:a + rng.randint(1, 400)])
    texts += ["x\n" + "API_KEY", "say \"PGPASSWORD", "a\\nTOKEN", "é" + "ghp_", "\u2028secret"]
    # what a wider lookbehind looks at two back: an escape, a percent-encoding, or neither
    for glue in ("\\n", "\\r", "\\t", "%2F", "%3d", "n", "an", "é\\n", "\\é", "%é"):
        for tail in ("ghp_aB3dE5fG7h", "API_KEY", "HRKU-AAx", "Zq8vN2mK4pL6wEx", "export X", "TOKEN=Hq4V"):
            texts.append("run: " + glue + tail)
            texts.append(glue + tail)
    return texts


@pytest.mark.parametrize("which", ["pending", "secret"])
def test_leftmost_equals_trying_every_alternative_everywhere(tables, which):
    table = tables[which]
    parts = [table._first, table._second] if isinstance(table, engine_mod._JoinedTable) else [table]
    alts = [re.compile(a + r"\Z", re.ASCII) for t in parts for a in t._alts]
    rng = random.Random(11)
    for text in _texts():
        pos = rng.randrange(len(text))
        assert table.leftmost(text, pos, len(text)) == _brute(alts, text, pos, len(text)), (text, pos)


def bits(chars) -> int:
    return sum(1 << c for c in chars)


def test_a_wide_lookbehind_stands_for_its_last_character():
    assert engine_mod._last_class(r"\x5c[nr]") == r"[\x6e\x72]"
    assert engine_mod._last_class(r"\x25(?:[0-9A-Fa-f]){2}").startswith(r"[\x30")
    after = engine_mod._begins_after(r"(?:\A|(?<=\n)|(?<=\x5c[nr])|(?<=\x22))F(?:OO?)?")
    assert after[ord("F")] == bits(map(ord, '\n"nr'))
    assert engine_mod._begins_after(r"\bk(?:ey?)?")[ord("k")] == bits(
        c for c in range(128) if not (chr(c).isalnum() or chr(c) == "_"))


def test_what_a_wide_lookbehind_looks_at_two_back():
    assert engine_mod._second_last(r"\x5c[nr]") == {ord("\\")}
    assert engine_mod._second_last(r"\x25(?:[0-9A-Fa-f]){2}") == set(map(ord, "0123456789ABCDEFabcdef"))
    assert engine_mod._second_last(r"\x22") is None  # one character wide: nothing two back
    alt = r"(?:\A|(?<=\n)|(?<=\x5c[nr])|(?<=\x22))F(?:OO?)?"
    assert engine_mod._wide_seconds(alt) == (frozenset({ord("\\")}),)
    # two back is not a backslash: after n or r the name cannot begin, after a new line it can
    assert engine_mod._begins_after(alt, (False,))[ord("F")] == bits(map(ord, '\n"'))
    assert engine_mod._begins_after(alt, None)[ord("F")] == bits(map(ord, '\n"nr'))


def test_the_character_two_back_narrows_where_an_escaped_token_may_begin(tables):
    """After ``\\n`` more alternatives may begin than after ``an`` (``(?<=\\\\[nrt])``); the
    table by one character holds them all, and the search finds what trying every
    alternative finds either way (``test_leftmost_equals_trying_every_alternative_everywhere``)."""
    table = tables["pending"]
    cmap, befores, _ = table.classes()
    before = table.masks()[0]
    g, n = ord("g"), ord("n")
    escaped, plain = befores[cmap[ord("\\")]][n][g], befores[cmap[ord("a")]][n][g]
    assert plain & ~escaped == 0 and escaped & ~plain != 0
    assert before[n][g] == before[n][g] | escaped  # the table by one character holds both
    assert befores[cmap[129]][n][g] == plain  # the text's start: nothing two back


def test_what_may_follow_a_first_character():
    nxt = engine_mod._goes_on_with(r"(?i:a(?:z(?:u(?:re?)?)?)?)")
    assert nxt[ord("a")] == bits(map(ord, "zZ"))


def test_the_last_run_is_where_the_text_stops_having_whitespace():
    """Found from the end: the same position as searching ``[^\\s]*\\Z`` (ASCII whitespace)
    from ``pos``, on text with other Unicode spaces and long words."""
    rx = re.compile(r"[^ \t\n\r\f\v]*\Z")
    rng = random.Random(5)
    alphabet = ["a", "Z", "9", " ", "\t", "\n", "\r", "\f", "\v", "\u2028", "\xa0", "é", "ghp_" + "x" * 40]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        pos = rng.randint(0, len(text))
        assert engine_mod._last_run(text, pos) == rx.search(text, pos).start(), (text, pos)


@pytest.mark.parametrize("strings", [
    ["key", "api", "api_key", "apikey", "-", "->", "a", " ", "=", "==", "secret", "sec"],
    ["x", "", "xy"],
])
def test_the_heads_search_finds_the_longest_head_at_each_position(strings):
    """Grouped by first character, the alternation finds what one alternative of every
    string, longest first, finds: the same string at the same positions."""
    flat = re.compile("(?=(" + "|".join(map(re.escape, sorted(strings, key=lambda o: (-len(o), o)))) + "))")
    grouped = re.compile("(?=(" + engine_mod._longest_first(strings) + "))")
    rng = random.Random(9)
    for _ in range(400):
        text = "".join(rng.choice(["api_key", "apikey", "a", "-", ">", " ", "=", "sec", "ret", "é", "xy", "k"])
                       for _ in range(rng.randint(0, 12)))
        assert [m.span(1) + (m.group(1),) for m in grouped.finditer(text)] == \
            [m.span(1) + (m.group(1),) for m in flat.finditer(text)], text


def test_the_redactor_finds_heads_by_first_character(tables):
    red = redactor("hyperscan")
    text = 'x = {"api_key": "k"}; password=hunter2 -> ok\\nAuthorization: Bearer abc'.lower()
    flat = re.compile("(?=(" + "|".join(map(re.escape, sorted(red._head_within, key=lambda o: (-len(o), o)))) + "))")
    assert [m.group(1) for m in red._head_rx.finditer(text)] == [m.group(1) for m in flat.finditer(text)]
