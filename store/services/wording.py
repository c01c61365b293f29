"""The user's wording, read as it is: sentences, and which of them direct or correct.

Shared by the checkpoint filter (the task state's instructions) and the
learning job (instructions kept verbatim as proposals). Nothing here
paraphrases: a sentence is quoted whole (clipped at ``MAX_QUOTE``).
"""
from __future__ import annotations

import re
from typing import Iterator

MAX_QUOTE = 240  # characters of one quoted sentence or line

_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+|$)")  # "v1.4.2" is no sentence end
_DIRECTIVE = re.compile(
    r"(?i)(?:^|\b)(?:don'?t|do not|never|always|must|make sure|ensure|please|avoid|only|instead|stop|"
    r"keep|prefer|should(?:n'?t)?|no need|not (?:the|a|in|on)|rather than|use\b|remember)\b")
_CORRECTION = re.compile(r"(?i)^\s*(?:no\b|nope\b|actually\b|wait\b|instead\b|that'?s (?:wrong|not)|not that\b)")


def clip(text: str, limit: int = MAX_QUOTE) -> str:
    """One line, whitespace folded, at most ``limit`` characters (a cut ends in …)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def sentences(text: str) -> Iterator[str]:
    for line in text.splitlines():
        for m in _SENTENCE.finditer(line):
            s = m.group(0).strip()
            if s:
                yield s


def instructions(text: str) -> list[str]:
    """The sentences of a user turn that direct or correct, verbatim (clipped)."""
    out = []
    for i, s in enumerate(sentences(text)):
        if _DIRECTIVE.search(s) or (i == 0 and _CORRECTION.match(s)):
            out.append(clip(s))
    return out
