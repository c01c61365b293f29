"""A word's family: the forms a memory may write it in that the tokenizer's light stemmer keeps apart.

The stemmer (``memory_terms.stem``) folds inflections only (``approve``, ``approved``,
``approving`` → ``approv``), so a message asking whose **approval** a change needs shares no
term with "the director must **approve** every change", nor "the port is **configured**" with
"the **configuration** of the port". English derives such words with a handful of suffixes;
a word's family is the other words of the same root that those suffixes give (``approval`` ↔
``approv``, ``configur`` ↔ ``configuration``, ``validat`` ↔ ``validation`` ↔ ``validator``,
``deploy`` ↔ ``deployment``) — and, for a long word, its clipping (``application`` ↔ ``app``,
``environment`` ↔ ``env``: its first ``CLIP`` letters), as people shorten words in writing.

Only a family member some visible memory holds is looked up (the index's counts decide, at
query time: nothing in the index changes), and it is the same word of the message to the
floor (``query.units_of``): a memory holding ``approve`` holds the message's ``approval``,
once, at ``family_weight`` of the word (a derived form can drift in meaning: ``general``,
``generation``). A root must keep ``MIN_ROOT`` letters, so that ``portal`` is not ``port``
nor ``signal`` ``sign``.

A short word may itself be the clipping (``prod``, ``repo``, ``roll``): the visible memories'
terms that begin with it (the index's ``word_forms``: ``production``, ``repository``,
``rollout``) are its family too — for words of ``CLIPPED`` letters (a shorter prefix begins too
many words), each completion ``GROWN_BY`` letters longer at least and held by more of the
memories than the word itself (the memories write the long form; where they write the short
word more often, it is a word of its own: ``book``, not ``bookstore``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Sequence

from .query import Query
from .rank import GENERIC, STOP_TERMS, specific_term

MIN_ROOT = 5  # letters a root keeps once a suffix is taken off
MIN_CLIPPED = 7  # letters of a word whose clipping (its first CLIP letters) is looked up
CLIP = 3  # four letters begin another word's stem too often (storybook: stor, of stored)
# Derivational suffixes as the light stemmer leaves them (-ive: ``iv``, -able: ``abl``, -ance: ``anc``).
SUFFIXES = ("ation", "ition", "ment", "ness", "ity", "ion", "abl", "anc", "enc", "al", "er", "or", "iv", "ly")
GROWN = ("al", "ation", "ion", "ment", "er", "or", "iv", "abl")  # the suffixes put on a root: the most productive
CLIPPED = (4, 6)  # letters of a word whose completions are looked up (a clipping: prod, repo, config)
GROWN_BY = 3  # letters a completion adds at least
MAX_FAMILY = 400  # family members looked up per message (one read of the index's counts)
MAX_CLIPPED = 16  # words of a message whose full forms are looked up (a range of the index each)


def family(term: str) -> tuple[str, ...]:
    """The other forms of ``term`` (a stemmed word) worth a lookup: its roots (a derivational suffix
    off, ``MIN_ROOT`` letters kept) with each suffix on, and a long word's clippings."""
    if not term.isalpha() or len(term) < MIN_ROOT:
        return ()
    roots = {term} | {term[: -len(s)] for s in SUFFIXES if term.endswith(s) and len(term) - len(s) >= MIN_ROOT}
    out = {r + s for r in roots for s in ("",) + GROWN}
    if len(term) >= MIN_CLIPPED:
        out.add(term[:CLIP])
    out.discard(term)
    return tuple(sorted(v for v in out if v not in STOP_TERMS and v not in GENERIC))


def clipped(q: Query) -> list[str]:
    """``q``'s specific plain words that may be clippings (``CLIPPED`` letters)."""
    return [t for t in q.weights if t.isalpha() and CLIPPED[0] <= len(t) <= CLIPPED[1] and specific_term(t)
            and t not in q.strong][:MAX_CLIPPED]


def families(q: Query, completed: Mapping[str, Sequence[str]] | None = None, limit: int = MAX_FAMILY
             ) -> dict[str, str]:
    """Each family member of ``q``'s specific plain words, mapped to the word (in the query's order);
    ``completed``: the terms the index holds that begin with a word (``clipped``)."""
    out: dict[str, str] = {}
    completed = completed or {}
    for t in q.weights:
        if not specific_term(t) or t in q.strong:
            continue
        grown = [c for c in completed.get(t, ()) if c.isalpha() and len(c) >= len(t) + GROWN_BY
                 and c not in GENERIC and c not in STOP_TERMS]
        for v in (*grown, *family(t)):
            if v not in q.weights and v not in out:
                out[v] = t
    return dict(list(out.items())[:limit])


Forms = Callable[[list[str], list[str]], "tuple[Mapping[str, int], Mapping[str, Sequence[str]]]"]


def extend(q: Query, read: Forms, room: int, weight: float) -> Query:
    """``q`` with the family members of its words that a visible memory holds, at most ``room`` of
    them, each one word with the message's, at ``weight`` of it. ``read(keys, prefixes)``: the
    visible document frequencies of the keys and of the visible terms that begin with each prefix,
    and those terms (one read of the index: ``word_forms``)."""
    if weight <= 0 or room <= 0:
        return q
    derived, short = families(q), clipped(q)
    if not derived and not short:
        return q
    df, completed = read(list(derived) + short, short)
    # a clipping: the memories write the long form more often than the word itself ("book" is a word
    # of its own where "bookstore" is rarer; "prod" is a clipping where "production" is commoner)
    completed = {t: [c for c in cs if df.get(c, 0) > df.get(t, 0)] for t, cs in completed.items()}
    fam = families(q, completed)  # the completions first: a word's full form, then its derived forms
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
