"""One literal pre-gate for every rule family of the threat scan.

A rule, or a part of a composed rule, can only match text that holds one of
its required literals (``literals.required``). A clean memory holds the
literals of a handful of the hundreds of rules, so the scan runs only those.
Finding which literals a text holds is itself the costly step when done rule
by rule or gram by gram in Python, so every family's literals are indexed
together and one query answers them all:

- each literal of four or more characters is filed under its rarest 3-gram
  among all the gate's literals (one without a space when it has one): a
  common word's gram ("the", "you", "in ") would send hundreds of literals to
  a substring test for every text that holds it;
- a text's 3-grams are met with the index keys by one set intersection, and
  only the literals filed under a key the text holds are tested as
  substrings; literals of three characters are their key;
- two-character literals are tested as substrings when ASCII (a few), and by
  the text's 2-grams when not (Chinese and Japanese words), which are built
  only for text that is not ASCII.

The answer is exact, not a filter with false negatives: a member is reported
iff one of its literals is a substring of the text.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

_MAX_SLICED = 1024  # texts up to this length take their n-grams by slices made once, in C (~0.4 MB held)


def _slices(k: int) -> tuple[slice, ...]:
    return tuple(slice(i, i + k) for i in range(_MAX_SLICED))


_SLICES = {2: _slices(2), 3: _slices(3), 4: _slices(4)}


def gram_slices(length: int, k: int) -> Sequence[slice]:
    """The slices that cut a text of ``length`` characters into its pieces of ``k`` (2, 3 or 4), in order."""
    n = max(length - k + 1, 0)
    return _SLICES[k][:n] if n <= _MAX_SLICED else [slice(i, i + k) for i in range(n)]


def ngrams(text: str, k: int) -> set[str]:
    """The set of ``text``'s pieces of ``k`` characters (2, 3 or 4)."""
    return set(map(text.__getitem__, gram_slices(len(text), k)))


def _trigrams(lit: str) -> list[str]:
    return sorted({lit[i:i + 3] for i in range(len(lit) - 2)})


class LiteralGate:
    """Families of members, each member with the literals one of which text must hold for it to run (None: it
    always runs). ``present(text)`` gives, per family, the members whose literals the text holds."""

    def __init__(self, families: Sequence[Sequence[Iterable[str] | None]]):
        ids: dict[str, set[int]] = {}
        always: list[int] = []
        self._ranges: list[tuple[int, int]] = []
        n = 0
        for members in families:
            start = n
            for lits in members:
                if lits is None:
                    always.append(n)
                else:
                    for lit in lits:
                        if len(lit) < 2:
                            raise ValueError(f"literal gate: a literal of {len(lit)} character(s) gates nothing")
                        ids.setdefault(lit, set()).add(n)
                n += 1
            self._ranges.append((start, n))
        self._always = frozenset(always)
        # the rarer a 3-gram among the literals, the fewer literals a text holding it sends to a substring test
        freq = Counter(g for lit in ids if len(lit) > 3 for g in _trigrams(lit))
        exact: dict[str, set[int]] = {}
        long: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
        ascii_pairs: list[tuple[str, tuple[int, ...]]] = []
        pairs: dict[str, set[int]] = {}
        for lit, members in sorted(ids.items()):
            if len(lit) == 2:
                if lit.isascii():
                    ascii_pairs.append((lit, tuple(sorted(members))))
                else:
                    pairs.setdefault(lit, set()).update(members)
            elif len(lit) == 3:
                exact.setdefault(lit, set()).update(members)
            else:
                key = min(_trigrams(lit), key=lambda g: (" " in g, freq[g], g))
                long.setdefault(key, []).append((lit, tuple(sorted(members))))
        self._exact = {k: frozenset(v) for k, v in exact.items()}
        self._long = {k: tuple(v) for k, v in long.items()}
        self._keys = frozenset(self._exact) | frozenset(self._long)
        self._ascii_pairs = tuple(ascii_pairs)
        self._pairs = {k: frozenset(v) for k, v in pairs.items()}
        self._pair_keys = frozenset(self._pairs)

    def present(self, text: str) -> tuple[set[int], ...]:
        """Per family, the indexes of its members one of whose literals ``text`` holds (or that have none)."""
        found = set(self._always)
        exact, long = self._exact, self._long
        for key in ngrams(text, 3) & self._keys:
            hit = exact.get(key)
            if hit is not None:
                found |= hit
            for lit, members in long.get(key, ()):
                if lit in text:
                    found.update(members)
        for lit, members in self._ascii_pairs:
            if lit in text:
                found.update(members)
        if self._pair_keys and not text.isascii():
            pairs = self._pairs
            for key in ngrams(text, 2) & self._pair_keys:
                found |= pairs[key]
        if len(self._ranges) == 1:
            return (found,)
        return tuple({i - lo for i in found if lo <= i < hi} for lo, hi in self._ranges)
