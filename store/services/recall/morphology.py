"""A word's family: the forms a memory may write it in that the tokenizer's light stemmer keeps apart.

The stemmer (``memory_terms.stem``) folds inflections only (``approve``, ``approved``,
``approving`` → ``approv``), so a message asking whose **approval** a change needs shares no
term with "the director must **approve** every change", nor "the port is **configured**" with
"the **configuration** of the port". English derives such words with a handful of suffixes;
a word's family is the other words of the same root that those suffixes give (``approval`` ↔
``approv``, ``configur`` ↔ ``configuration``, ``validat`` ↔ ``validation`` ↔ ``validator``,
``deploy`` ↔ ``deployment``) — and, for a long word, its clipping (``application`` ↔ ``app``,
``minutes`` ↔ ``min``), as people shorten words in writing.

Only a family member some visible memory holds is looked up (the index's counts decide, at
query time: nothing in the index changes), and it is the same word of the message to the
floor (``query.units_of``): a memory holding ``approve`` holds the message's ``approval``,
once, at ``family_weight`` of the word (a derived form can drift in meaning: ``general``,
``generation``). A root must keep ``MIN_ROOT`` letters, so that ``portal`` is not ``port``
nor ``signal`` ``sign``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

from .query import Query
from .rank import GENERIC, STOP_TERMS, specific_term

MIN_ROOT = 5  # letters a root keeps once a suffix is taken off
MIN_CLIPPED = 7  # letters of a word whose clipping (its first CLIPS letters) is looked up
CLIPS = (3,)
# Derivational suffixes as the light stemmer leaves them (``-ive`` → ``iv``, ``-able`` → ``abl``, ``-ance`` → ``anc``).
SUFFIXES = ("ation", "ition", "ment", "ness", "ity", "ion", "abl", "anc", "enc", "al", "er", "or", "iv", "ly")
GROWN = ("al", "ation", "ion", "ment", "er", "or", "iv", "abl")  # the suffixes put on a root: the most productive
MAX_FAMILY = 400  # family members looked up per message (one read of the index's counts)


def family(term: str) -> tuple[str, ...]:
    """The other forms of ``term`` (a stemmed word) worth a lookup: its roots (a derivational suffix
    off, ``MIN_ROOT`` letters kept) with each suffix on, and a long word's clippings."""
    if not term.isalpha() or len(term) < MIN_ROOT:
        return ()
    roots = {term} | {term[: -len(s)] for s in SUFFIXES if term.endswith(s) and len(term) - len(s) >= MIN_ROOT}
    out = {r + s for r in roots for s in ("",) + GROWN}
    if len(term) >= MIN_CLIPPED:
        out.update(term[:n] for n in CLIPS)
    out.discard(term)
    return tuple(sorted(v for v in out if v not in STOP_TERMS and v not in GENERIC))


def families(q: Query, limit: int = MAX_FAMILY) -> dict[str, str]:
    """Each family member of ``q``'s specific plain words, mapped to the word (its most salient first:
    the query's order)."""
    out: dict[str, str] = {}
    for t in q.weights:
        if not specific_term(t) or t in q.strong:
            continue
        for v in family(t):
            if v not in q.weights and v not in out:
                out[v] = t
    return dict(list(out.items())[:limit])


def extend(q: Query, lookup: Callable[[list[str]], Mapping[str, int]], room: int, weight: float) -> Query:
    """``q`` with the family members of its words that a visible memory holds (``lookup``: their
    visible document frequencies), at most ``room`` of them, each one word with the message's, at
    ``weight`` of it."""
    fam = families(q) if weight > 0 and room > 0 else {}
    if not fam:
        return q
    df = lookup(list(fam))
    held = [(v, t) for v, t in fam.items() if df.get(v, 0) > 0][:room]
    if not held:
        return q
    weights = dict(q.weights)
    units = dict(q.units)
    focus, anchor = set(q.focus), set(q.anchor)
    for v, t in held:
        weights[v] = q.weights[t] * weight
        units[v] = units.setdefault(t, t)
        if t in q.focus:
            focus.add(v)
        if t in q.anchor:
            anchor.add(v)
    return replace(q, weights=weights, units=units, focus=frozenset(focus), anchor=frozenset(anchor))
