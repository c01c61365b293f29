"""Where a match in progress may begin before the held text's last word: one Hyperscan scan.

The stream hold-back looks for the leftmost position ``p`` from which an
in-progress alternative (a prefix regex, see ``patterns.py``) matches the text
to its end (``engine._Search.leftmost``). Before the text's last run of
characters that are not whitespace (``tail``), only the alternatives that may
consume whitespace can (``spaced``), and the walk in Python looked at every
position there: most of a piece of prose or code. An in-progress alternative
matches every prefix of what it matches, so one that matches ``text[p:]`` with
``p < tail`` matches ``text[p:tail]`` too. ``SpacedScan`` finds every such
``p`` at once: the alternatives reversed, anchored at the start, in one
Hyperscan database; the text up to ``tail``, reversed, scanned. The walk then
starts at the first of them (it decides, exactly as before), or not at all
when there is none, as in most prose. The last run itself is walked as before
(a token's every position may begin one; a scan would report each).

The reversed patterns are relaxed so that they match *more*: lookarounds and
anchors other than word boundaries dropped, large repeats unbounded, each
character class widened to every byte a non-ASCII character may encode to
(``encode`` in ``engine.py``). A position the Python regex accepts is always
reported. An alternative that cannot be written so (a back-reference) leaves
its table without a scan: the walk looks at every position, as before.
"""
from __future__ import annotations

import logging
import re
import threading
from re import _compiler as sre_compile
from re import _constants as sre_c
from re import _parser as sre_parse
from typing import Callable, Sequence

from .patterns import _BIG, _quant
from .prefilter import _hs

log = logging.getLogger("ctxproxy.redaction")

# Repeats bounded above this are written unbounded: wide bounded repeats make the
# database large and slow to compile; unbounded only adds positions for the walk.
REPEAT_CAP = 16
GROUP_CHARS = 12000  # one pattern's length (Hyperscan refuses much longer ones)
_HIGH = list(range(0x80, 0x100))  # the bytes a non-ASCII character may encode to
# Characters a class is tried with to tell whether it takes any non-ASCII one.
_BEYOND = [chr(c) for c in (0x80, 0xAA, 0xB5, 0xBA, 0xC0, 0xDF, 0xE9, 0xFF, 0x100, 0x17F, 0x212A, 0x436,
                            0x1F600)]


class Unsupported(Exception):
    """The alternative holds something a relaxed Hyperscan pattern cannot stand for."""


def reversed_pattern(alt: str) -> str:
    """What ``alt`` (a Python regex read with ``re.ASCII``) may match, reversed and
    relaxed, as Hyperscan reads it (unanchored). Raises ``Unsupported``."""
    try:
        tree = sre_parse.parse(alt, re.ASCII)
    except (re.error, RecursionError, OverflowError) as exc:
        raise Unsupported(str(exc)) from None
    return _seq(list(tree), tree.state.flags)


def _seq(items, flags: int) -> str:
    return "".join(_item(op, av, flags) for op, av in reversed(list(items)))


def _item(op, av, flags: int) -> str:
    if op in (sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.IN, sre_c.ANY):
        return _byte_class(op, av, flags)
    if op is sre_c.SUBPATTERN:
        return _group(_seq(av[3], (flags | av[1]) & ~av[2]))
    if op is sre_c.ATOMIC_GROUP:
        return _group(_seq(av, flags))
    if op is sre_c.BRANCH:
        return "(?:" + "|".join(_seq(alt, flags) for alt in av[1]) + ")"
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        lo, hi, body = av
        inner = _seq(body, flags)
        if not inner or not hi:
            return ""
        if hi is sre_c.MAXREPEAT or hi > REPEAT_CAP:
            lo, hi = min(lo, REPEAT_CAP), _BIG  # unbounded
        return f"(?:{inner}){_quant(lo, hi)}"
    if op is sre_c.AT:
        if av is sre_c.AT_BOUNDARY:
            return r"\b"
        if av is sre_c.AT_NON_BOUNDARY:
            return r"\B"
        return ""  # ^, $, \A, \Z
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return ""  # lookarounds only ever restrict
    raise Unsupported(str(op))


def _group(inner: str) -> str:
    return f"(?:{inner})" if inner else ""


def _byte_class(op, av, flags: int) -> str:
    """One character's matcher as the bytes it may stand for: the ASCII characters
    Python's matcher takes, and every byte from 0x80 when it takes any non-ASCII one."""
    state = sre_parse.State()
    state.flags = flags
    rx = sre_compile.compile(sre_parse.SubPattern(state, [(op, av)]), flags)
    hit = [c for c in range(128) if rx.fullmatch(chr(c))]
    if any(rx.fullmatch(ch) for ch in _BEYOND):
        hit += _HIGH
    if not hit:
        raise Unsupported("a class that matches nothing")
    if len(hit) == 1:
        return _byte(hit[0])
    parts, run = [], [hit[0]]
    for c in hit[1:]:
        if c == run[-1] + 1:
            run.append(c)
            continue
        parts.append(_range(run))
        run = [c]
    parts.append(_range(run))
    return "[" + "".join(parts) + "]"


def _range(run: list[int]) -> str:
    if len(run) <= 2:
        return "".join(map(_byte, run))
    return _byte(run[0]) + "-" + _byte(run[-1])


def _byte(c: int) -> str:
    """One byte, short where it can be: a letter or a digit as itself."""
    return chr(c) if c < 128 and chr(c).isalnum() else f"\\x{c:02x}"


class SpacedScan:
    """``first(text, pos, tail, encode)``: the leftmost ``p`` in ``[pos, tail)`` from which
    one of ``alts`` may match ``text[p:tail]`` whole (``tail`` when none may)."""

    def __init__(self, alts: Sequence[str]):
        if _hs is None:
            raise RuntimeError("hyperscan is not installed")
        written = sorted({reversed_pattern(a) for a in alts}, key=len)  # Unsupported: no scan
        groups: list[list[str]] = []
        size = GROUP_CHARS
        for w in written:
            if size + len(w) > GROUP_CHARS:
                groups.append([])
                size = 0
            groups[-1].append(w)
            size += len(w) + 1
        self.groups = len(groups)
        self._db = _database(["^(?:" + "|".join(g) + ")" for g in groups])
        self._db.scratch = _hs.Scratch(self._db)
        self._lock = threading.Lock()

    def first(self, text: str, pos: int, tail: int, encode: Callable[[str], bytes]) -> int:
        # The character before ``pos`` too: a word boundary at ``pos`` sees it.
        data = encode(text[pos - 1 if pos else 0:tail])[::-1]
        ends: list[int] = []
        add = ends.append

        def on_match(g: int, frm: int, to: int, flags: int, ctx: object) -> None:
            add(to)

        with self._lock:
            self._db.scan(data, match_event_handler=on_match)
        p = tail - max(ends, default=0)
        return p if p >= pos else pos


# Scans made by this process, by their patterns: a profile's take ~0.5-1 s to compile, and
# tests make many redactors of one profile. A few profiles at most in a server.
_MADE: dict[tuple[str, ...], "SpacedScan"] = {}
_MADE_MAX = 32
_MADE_LOCK = threading.Lock()


def spaced_scan(alts: Sequence[str]) -> SpacedScan:
    """The ``SpacedScan`` of ``alts``, made once per process."""
    key = tuple(alts)
    with _MADE_LOCK:
        scan = _MADE.get(key)
        if scan is None:
            if len(_MADE) >= _MADE_MAX:
                _MADE.pop(next(iter(_MADE)))
            scan = _MADE[key] = SpacedScan(alts)
        return scan


def _database(patterns: list[str]):
    db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
    db.compile(expressions=[p.encode("ascii") for p in patterns], ids=list(range(len(patterns))),
               elements=len(patterns), flags=[_hs.HS_FLAG_ALLOWEMPTY] * len(patterns))
    return db
