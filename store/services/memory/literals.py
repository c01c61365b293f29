"""Required literals of a regex, for skipping rules that cannot match.

``required(pattern)`` reads Python's parse tree of ``pattern`` and returns a
set of strings such that every match contains at least one of them, or None
when no such set is known. Unlike the redaction engine's ASCII analysis
(``store/services/redaction/patterns.py``) it keeps any Unicode literal: the threat
rules are written for case-folded text in many scripts, and a rule only runs
when one of its literals is in the text.
"""
from __future__ import annotations

from re import _constants as C  # the stdlib regex parse-tree vocabulary
from re import _parser as P

_MAX_SET = 48      # cap on the size of a literal set
_MAX_CLASS = 6     # a character class with more members is not expanded


def _union(alternatives, part, cap: int | None) -> set[str] | None:
    """Union of ``part(alt)`` over a branch's alternatives; None if one has none (or the cap is passed)."""
    out: set[str] = set()
    for alt in alternatives:
        sub = part(alt)
        if not sub:
            return None
        out |= sub
        if cap is not None and len(out) > cap:
            return None
    return out


def _finite(op, av) -> set[str] | None:
    """Every string the item can match, when that set is small; None otherwise."""
    if op is C.LITERAL:
        return {chr(av)}
    if op is C.IN:
        chars: set[str] = set()
        for kind, a in av:
            if kind is C.LITERAL:
                chars.add(chr(a))
            elif kind is C.RANGE and a[1] - a[0] < _MAX_CLASS:
                chars.update(chr(c) for c in range(a[0], a[1] + 1))
            else:
                return None
        return chars if len(chars) <= _MAX_CLASS else None
    if op is C.SUBPATTERN:
        return _finite_seq(av[3])
    if op is C.BRANCH:
        return _union(av[1], _finite_seq, _MAX_SET)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[1] <= 2:
        inner = _finite_seq(av[2])
        if inner is None:
            return None
        out, acc = set(), {""}
        for k in range(av[1] + 1):
            if k >= av[0]:
                out |= acc
            acc = {a + b for a in acc for b in inner}
            if len(out) > _MAX_SET or len(acc) > _MAX_SET:
                return None
        return out
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return {""}
    return None


def _finite_seq(items) -> set[str] | None:
    acc = {""}
    for op, av in items:
        opts = _finite(op, av)
        if opts is None:
            return None
        acc = {a + b for a in acc for b in opts}
        if len(acc) > _MAX_SET:
            return None
    return acc


def _score(cands: set[str]) -> tuple[int, int]:
    return (min(len(s) for s in cands), -len(cands))


def _better(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    good = [c for c in (a, b) if c and "" not in c]
    return max(good, key=_score) if good else None


def _seq(items) -> set[str] | None:
    """Literal set required by a sequence: the best run of finite items, or of an inner item."""
    best, run = None, {""}
    for op, av in items:
        opts = _finite(op, av)
        if opts is not None:
            grown = {a + b for a in run for b in opts}
            if len(grown) <= _MAX_SET:
                run = grown
                continue
            best, run = _better(best, run), opts
            continue
        best = _better(best, run)
        best = _better(best, _inner(op, av))
        run = {""}
    return _better(best, run)


def _inner(op, av) -> set[str] | None:
    if op is C.SUBPATTERN:
        return _seq(av[3])
    if op is C.BRANCH:
        return _union(av[1], _seq, None)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
        return _seq(av[2])
    return None


def required(pattern: str, min_len: int = 2) -> frozenset[str] | None:
    """Strings one of which every match of ``pattern`` contains; None if no set of them is known."""
    found = _seq(P.parse(pattern))
    if not found or min(len(s) for s in found) < min_len:
        return None
    # A literal that contains another one in the set adds nothing.
    keep = {s for s in found if not any(o != s and o in s for o in found)}
    return frozenset(keep)


def requirements(pattern: str, min_len: int = 2) -> list[frozenset[str]]:
    """Every literal set the parts of ``pattern``'s top-level sequence require, each on its own: a match holds
    one literal of each set (``required`` keeps the best one; a pre-gate that asks for all of them runs
    fewer rules). Empty when none is known."""
    out: list[frozenset[str]] = []

    def keep(cands: set[str] | None) -> None:
        if cands and "" not in cands and min(map(len, cands)) >= min_len:
            out.append(frozenset(s for s in cands if not any(o != s and o in s for o in cands)))

    run: set[str] = {""}
    for op, av in P.parse(pattern):
        opts = _finite(op, av)
        if opts is not None:
            grown = {a + b for a in run for b in opts}
            if len(grown) <= _MAX_SET:
                run = grown
            else:
                keep(run)
                run = opts
            continue
        keep(run)
        run = {""}
        keep(_inner(op, av))
    keep(run)
    return out
