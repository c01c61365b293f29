"""Normalised forms of a memory statement, for duplicate and contradiction keys.

The store indexes these so a write can find, in one lookup, the records of its
scope that say the same thing (``exact_key``), the same words in another order
or casing (``near_key``), or something about the same subject (a caller's
``subject_key``, or the gate's guess: ``services.memory.subjects``).
"""
from __future__ import annotations

import hashlib
import re
import unicodedata

_WORD = re.compile(r"\w+(?:[.\-]\w+)*", re.UNICODE)
STOP_WORDS = frozenset(
    "a an the and or of to in on at for with by is are was were be been it its this that these those "
    "we i you he she they our my your their please always should must do does".split())


def normalise(text: str) -> str:
    """NFKC, casefolded, words only, single spaces."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def words(text: str) -> list[str]:
    return normalise(text).split()


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def exact_key(text: str) -> str:
    return _digest("x", normalise(text))


def near_key(text: str) -> str:
    """Same content words in any order, case or punctuation."""
    content = sorted({w for w in words(text) if w not in STOP_WORDS}) or sorted(set(words(text)))
    return _digest("n", " ".join(content))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the content-word sets (0..1)."""
    sa = {w for w in words(a) if w not in STOP_WORDS}
    sb = {w for w in words(b) if w not in STOP_WORDS}
    if not sa or not sb:
        return 1.0 if sa == sb else 0.0
    return len(sa & sb) / len(sa | sb)


def subject_digest(project: str, user: str, session: str, subject_key: str) -> str:
    return _digest("k", project, user, session, subject_key)


def scoped(project: str, user: str, session: str, key: str) -> str:
    """A text key made specific to one scope."""
    return _digest("s", project, user, session, key)
