"""Normalised forms of a memory statement, for duplicate and contradiction keys.

The store indexes these so a write can find, in one lookup, the records of its
scope that say the same thing (``exact_key``), the same words in another order
or casing (``near_key``), or something about the same subject (a caller's
``subject_key``, or ``derive_subject``'s guess).
"""
from __future__ import annotations

import hashlib
import re
import unicodedata

_WORD = re.compile(r"\w+(?:[.\-]\w+)*", re.UNICODE)
_STOP = frozenset(
    "a an the and or of to in on at for with by is are was were be been it its this that these those "
    "we i you he she they our my your their please always should must do does".split())
_VALUE = re.compile(r"\d")
# "X is Y", "X: Y", "X uses Y", "X = Y": the left side (and verb) names the subject.
_COPULA = re.compile(r"^(?P<subj>.{2,80}?)\s*(?:\b(?:is|are|was|uses?|runs?|prefers?|=)\b|:)\s+(?P<val>\S.*)$",
                     re.IGNORECASE | re.DOTALL)


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
    content = sorted({w for w in words(text) if w not in _STOP}) or sorted(set(words(text)))
    return _digest("n", " ".join(content))


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the content-word sets (0..1)."""
    sa = {w for w in words(a) if w not in _STOP}
    sb = {w for w in words(b) if w not in _STOP}
    if not sa or not sb:
        return 1.0 if sa == sb else 0.0
    return len(sa & sb) / len(sa | sb)


def derive_subject(text: str) -> str:
    """A guess at what the statement is about, so a new value supersedes the old.

    "The deploy branch is main" -> "deploy branch is"; "The cache uses Redis
    6" -> "the cache uses redis" (the words without a digit: versions, sizes,
    ports are the value). "" when there is nothing specific to key on.
    """
    flat = " ".join(unicodedata.normalize("NFKC", text).split())
    m = _COPULA.match(flat)
    # "X is Y" keys on X only when X names something specific (two content words or more)
    # and Y is a short value: "The user is in Berlin" and "... is in Munich" may both hold.
    if m and len(words(m.group("subj"))) <= 8 and len(words(m.group("val"))) <= 4:
        content = [w for w in words(m.group("subj")) if w not in _STOP]
        if len(content) >= 2:
            verb = flat[m.end("subj"):m.start("val")]
            return " ".join([*content, *words(verb)])
    ws = words(flat)
    # one number in a short statement is its value ("Redis 6"); two or more are identifiers too
    if sum(1 for w in ws if _VALUE.search(w)) == 1 and len(ws) <= 16:
        rest = [w for w in ws if not _VALUE.search(w)]
        if rest:
            return " ".join(rest)
    return ""


def subject_digest(project: str, user: str, session: str, subject_key: str) -> str:
    return _digest("k", project, user, session, subject_key)


def scoped(project: str, user: str, session: str, key: str) -> str:
    """A text key made specific to one scope."""
    return _digest("s", project, user, session, key)
