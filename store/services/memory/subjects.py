"""What a memory statement is about, so a new value of the same subject supersedes the old.

``derive_subject(text)`` is the ``subject_key`` the gate stores when a writer
gives none: statements with the same key in the same scope contradict each
other (the newer supersedes, both are kept). ``values(text)`` are the parts a
key leaves out — versions, numbers, ports, sizes, paths — so two statements
that differ in them are never near-duplicates of each other.

    "The deploy branch is main."            -> "deploy branch is"
    "The cache uses Redis 6."               -> "the cache uses redis"
    "The shop service uses PostgreSQL 16 on port 5433."
                                            -> "shop service uses | postgresql # on port #"
    "Service 3 listens on port 8003."       -> "service 3 listens | on port #"  (3 names the service)
"""
from __future__ import annotations

import re
import unicodedata

from ctxproxy.store.memory_text import STOP_WORDS as _STOP, words

_DIGIT = re.compile(r"\d")
# "X is Y", "X: Y", "X uses Y", "X = Y": the left side (and verb) names the subject.
_COPULA = re.compile(r"^(?P<subj>.{2,80}?)\s*(?:\b(?:is|are|was|uses?|runs?|prefers?|=)\b|:)\s+(?P<val>\S.*)$",
                     re.IGNORECASE | re.DOTALL)
# The verbs that end a subject and start what is said of it (a value may change, the subject not).
_VERBS = frozenset(
    "is are was were uses use runs run listens listen lives live stores store keeps keep writes write reads read "
    "points point deploys deploy serves serve requires require needs need has have targets target connects "
    "connect binds bind pins pin ships ship depends depend expects expect defaults default sits sit logs log "
    "caches cache holds hold limits limit retains retain allows allow builds build".split())
# A token that is a value rather than a word: has a digit (versions, numbers, ports, sizes,
# hosts like pg-7), or is a path or URL.
_PATH = re.compile(r"[/\\]|^~|^\.{1,2}/|\w\.\w{1,5}$")
_EDGE = "\"'`()[]{}<>,;:.!?"
MAX_SUBJECT_WORDS = 8
MAX_PREDICATE_WORDS = 16


def _is_value(token: str) -> bool:
    t = token.strip(_EDGE)
    return bool(t) and (bool(_DIGIT.search(t)) or bool(_PATH.search(t)))


def values(text: str) -> list[str]:
    """The value tokens of a statement, in order (punctuation around them dropped)."""
    flat = unicodedata.normalize("NFKC", text).casefold()
    return [t.strip(_EDGE) for t in flat.split() if _is_value(t)]


def derive_subject(text: str) -> str:
    """A guess at what the statement is about ("" when there is nothing specific to key on)."""
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
    if sum(1 for w in ws if _DIGIT.search(w)) == 1 and len(ws) <= 16:
        rest = [w for w in ws if not _DIGIT.search(w)]
        if rest:
            return " ".join(rest)
    return _subject_and_shape(flat)


def _subject_and_shape(flat: str) -> str:
    """"<subject> <verb> | <what is said, values masked>": the subject's own words
    (numbers there name it: "Service 3") and the shape of the predicate, where each
    version, number, port, size or path is a ``#``. "" unless the subject names
    something and the predicate holds a value."""
    tokens = flat.split()
    for i, tok in enumerate(tokens[:MAX_SUBJECT_WORDS + 1]):
        if i and tok.casefold().strip(_EDGE) in _VERBS:
            break
    else:
        return ""
    subject = [w for w in words(" ".join(tokens[:i])) if w not in _STOP]
    predicate = tokens[i + 1:]
    if not subject or not predicate or len(predicate) > MAX_PREDICATE_WORDS:
        return ""
    shape: list[str] = []
    for tok in predicate:
        if _is_value(tok):
            if not shape or shape[-1] != "#":
                shape.append("#")
        else:
            shape += words(tok)
    if "#" not in shape or not any(w != "#" and w not in _STOP for w in shape) and len(subject) < 2:
        return ""
    return " ".join([*subject, *words(tokens[i]), "|", *shape])
