"""The stream hold-back's whole pending search by Hyperscan, measured against the Python walk.

    nice python bench/bench_hold_hyperscan.py [--rounds 3000] [--check 300]

The hold-back (``engine._Search.leftmost``) finds the leftmost position from which
an in-progress alternative (a prefix regex, ``patterns.py``) matches the text to its
end, by a walk in Python over the positions. What is kept uses Hyperscan only
before the text's last run (``hold_scan.py``); two ways to have it find the whole
answer, each tried here on the default profile's pending alternatives, relaxed to
match more (lookarounds and anchors dropped, repeats over ``--cap`` unbounded, each
class widened to every byte a non-ASCII character encodes to):

- *reversed*: every alternative reversed (``hold_scan.reversed_pattern``), anchored
  at the start, in groups of ``--group-chars``; the reversed text scanned; a match of
  a group ending at ``q`` is a candidate start ``len - q`` (the walk then tries only
  those). Block mode reports every end: a callback into Python per (group, candidate),
  and inside a token every position is one.
- *SOM*: every alternative forward, its non-empty strings only, word boundaries
  dropped too, anchored at the data's end with start-of-match reporting: one report
  per group, the leftmost start, a lower bound for the walk to start from.

For each: the database's compile time, each text's scan time beside the walk's
(``Redactor._pending_locate`` without the kept scan, p50 µs, this thread), the
callbacks, and that the candidates / bound never miss a position the walk finds
(``--check`` random pieces of ``secretcorpus.realistic_megabyte``, every start
position in them). A benchmark of what was tried and not kept
(docs/performance-history.md).
"""
from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path
from re import _constants as sre_c
from re import _parser as sre_parse

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

import hyperscan as hs  # noqa: E402
from run import REPLY_TEXT  # noqa: E402
from secretcorpus import hyperscan_cache_dir, realistic_megabyte  # noqa: E402

from ctxproxy.store.services import redaction  # noqa: E402
from ctxproxy.store.services.redaction import engine, hold_scan  # noqa: E402
from ctxproxy.store.services.redaction.hold_scan import Unsupported, _byte_class, reversed_pattern  # noqa: E402

def relaxed(alt: str) -> str:
    """The non-empty strings ``alt`` may match, and more, forward (``hold_scan.reversed_pattern``
    is the reversed form, empty string included). Raises ``Unsupported``."""
    try:
        tree = sre_parse.parse(alt, re.ASCII)
    except (re.error, RecursionError, OverflowError) as exc:
        raise Unsupported(str(exc)) from None
    out = _nonempty(list(tree), tree.state.flags)
    if out is None:
        raise Unsupported("matches only the empty string")
    return out


def _nonempty(items: list, flags: int) -> str | None:
    """The non-empty strings of the sequence: its first non-empty item (after items that
    may be empty), then the rest as it is."""
    options = []
    for i, (op, av) in enumerate(items):
        head = _nonempty_item(op, av, flags)
        if head is not None:
            options.append(head + _seq(items[i + 1:], flags))
        if not _nullable(op, av, flags):
            break
    if not options:
        return None
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


def _nonempty_item(op, av, flags: int) -> str | None:
    if op in (sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.IN, sre_c.ANY):
        return _byte_class(op, av, flags)
    if op is sre_c.SUBPATTERN:
        return _nonempty(list(av[3]), (flags | av[1]) & ~av[2])
    if op is sre_c.ATOMIC_GROUP:
        return _nonempty(list(av), flags)
    if op is sre_c.BRANCH:
        options = [x for x in (_nonempty(list(alt), flags) for alt in av[1]) if x is not None]
        return None if not options else "(?:" + "|".join(options) + ")"
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        _lo, hi, body = av
        first = _nonempty(list(body), flags) if hi else None
        if first is None or hi == 1:
            return first
        rest = _seq(list(body), flags)
        return first + (_repeat(rest, 0, hi - 1) if rest else "")
    if op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
        return None  # takes no character
    raise Unsupported(str(op))


def _nullable(op, av, flags: int) -> bool:
    if op in (sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.IN, sre_c.ANY):
        return False
    if op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
        return True
    state = sre_parse.State()
    state.flags = flags
    return sre_parse.SubPattern(state, [(op, av)]).getwidth()[0] == 0


def _seq(items: list, flags: int) -> str:
    """Forward, word boundaries dropped too (a start-of-match database has no context)."""
    return "".join(_item(op, av, flags) for op, av in items)


def _item(op, av, flags: int) -> str:
    if op in (sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.IN, sre_c.ANY):
        return _byte_class(op, av, flags)
    if op in (sre_c.SUBPATTERN, sre_c.ATOMIC_GROUP):
        inner = _seq(list(av[3] if op is sre_c.SUBPATTERN else av),
                     (flags | av[1]) & ~av[2] if op is sre_c.SUBPATTERN else flags)
        return f"(?:{inner})" if inner else ""
    if op is sre_c.BRANCH:
        return "(?:" + "|".join(_seq(list(alt), flags) for alt in av[1]) + ")"
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        lo, hi, body = av
        inner = _seq(list(body), flags)
        return _repeat(inner, lo, hi) if inner and hi else ""
    if op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
        return ""
    raise Unsupported(str(op))


def _repeat(inner: str, lo: int, hi) -> str:
    cap = hold_scan.REPEAT_CAP
    if hi is sre_c.MAXREPEAT or hi > cap:
        quant = "*" if lo == 0 else ("+" if lo == 1 else f"{{{min(lo, cap)},}}")
    else:
        quant = f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
    return f"(?:{inner}){quant}"


def compile_db(patterns: list[str], flags: int):
    db = hs.Database(mode=hs.HS_MODE_BLOCK)
    t0 = time.perf_counter()
    db.compile(expressions=[p.encode("ascii") for p in patterns], ids=list(range(len(patterns))),
               elements=len(patterns), flags=[flags] * len(patterns))
    db.scratch = hs.Scratch(db)
    return db, time.perf_counter() - t0


def grouped(written: list[str], limit: int) -> list[list[str]]:
    groups: list[list[str]] = []
    size = limit
    for w in sorted(written, key=len):
        if size + len(w) > limit:
            groups.append([])
            size = 0
        groups[-1].append(w)
        size += len(w) + 1
    return groups


class Reversed:
    def __init__(self, alts: list[str], limit: int):
        groups = grouped([reversed_pattern(a) for a in alts], limit)
        self.db, self.compile_s = compile_db(["^(?:" + "|".join(g) + ")" for g in groups], hs.HS_FLAG_ALLOWEMPTY)
        self.groups = len(groups)
        self.calls = 0

    def candidates(self, text: str) -> set[int]:
        n, got = len(text), []
        self.db.scan(engine.encode(text)[::-1], match_event_handler=lambda g, f, t, fl, c: got.append(t))
        self.calls = len(got)
        return {n - q for q in got if q}


class Som:
    def __init__(self, alts: list[str], limit: int):
        groups = grouped(list({relaxed(a) for a in alts}), limit)
        self.db, self.compile_s = compile_db(["(?:" + "|".join(g) + r")\z" for g in groups],
                                             hs.HS_FLAG_SOM_LEFTMOST)
        self.groups = len(groups)
        self.calls = 0

    def bound(self, text: str) -> int:
        got = [len(text)]
        self.db.scan(engine.encode(text), match_event_handler=lambda g, f, t, fl, c: got.append(f))
        self.calls = len(got) - 1
        return min(got)


TEXTS = ["I read src/a", "app/config.py", REPLY_TEXT[60:140], "CTX_TIMEOUT_SECRET_KEY=abcdef0123456789abcdef0123"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3000)
    ap.add_argument("--check", type=int, default=300, help="random pieces checked for a missed position")
    ap.add_argument("--cap", type=int, default=16, help="repeats bounded above this are written unbounded")
    ap.add_argument("--group-chars", type=int, default=12000)
    ap.add_argument("--only", choices=["reversed", "som"])
    args = ap.parse_args()
    hold_scan.REPEAT_CAP = args.cap
    rules = [r for r in redaction.builtin_rules() if r.group in redaction.DEFAULT_GROUPS]
    engine.SPACED_SCAN = False  # the walk alone, to compare with
    red = redaction.Redactor(rules, cache_dir=hyperscan_cache_dir())
    red.warm()
    index = red._pending
    alts = index._short._alts + (index._long._alts if index._long else [])
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {len(alts)} alternatives (the pending index)")
    kinds = {"reversed": Reversed, "som": Som}
    rng = random.Random(5)
    corpus = realistic_megabyte()[:40000]
    pieces = []
    for _ in range(args.check):
        a = rng.randrange(0, len(corpus) - 200)
        piece = corpus[a:a + rng.randint(1, 100)]
        if rng.random() < 0.3:
            piece += rng.choice(["é", "ж", "😀", "ÿ", "\n", " ", "K"]) + piece[:5]
        pieces.append(piece)
    for name, kind in kinds.items():
        if args.only and name != args.only:
            continue
        scan = kind(alts, args.group_chars)
        missed = 0
        for piece in pieces:
            for pos in range(len(piece)):
                want = index.start(piece, pos)
                if want >= len(piece):
                    continue
                if name == "som":
                    missed += pos + scan.bound(piece[pos:]) > want
                else:
                    missed += want not in {pos + c for c in scan.candidates(piece[pos:])}
        print(f"\n{name}: {scan.groups} groups, compile {scan.compile_s:.1f} s, missed positions {missed}")
        print("| text | scan µs | callbacks | walk µs |")
        print("|---|---:|---:|---:|")
        for text in TEXTS:
            ts, tw = [], []
            for _ in range(args.rounds):
                t0 = time.thread_time_ns()
                scan.bound(text) if name == "som" else scan.candidates(text)
                ts.append(time.thread_time_ns() - t0)
                t0 = time.thread_time_ns()
                red._pending_locate(text, 0)
                tw.append(time.thread_time_ns() - t0)
            print(f"| {text[:24]!r} | {statistics.median(ts) / 1e3:.1f} | {scan.calls} | "
                  f"{statistics.median(tw) / 1e3:.1f} |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
