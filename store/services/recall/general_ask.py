"""Whether a message asks for general knowledge: what a concept is, or how two differ.

"Explain what a Timescale continuous aggregate is", "what's the difference between a gVCF and a
regular VCF": the answer is the same in every project, so a memory of this one holding the concept's words ("a Timescale continuous aggregate `readings_hourly`
precomputes hourly totals") is not what is asked. A message that speaks of the project ("our", "we":
"explain how we round feed-in credits") or asks why something happened ("explain why journey 88213 got
charged twice") is not such an ask, nor is one about a thing named with a definite article or
asked as what it does ("tell me what the staging port is", "explain what the `CHUB_FF_X` flag
does"): that is how a project's own setting is asked after.
"""
from __future__ import annotations

import re

_GENERAL = re.compile(
    r"\b(?:explain|describe)\s+(?:to me\s+)?(?:what\s+(?:an?\s+)?(?!(?:the|this|that|these|those|our|your|my)\b)[\w`'\".:-]+"
    r"(?:\s+[\w`'\".:-]+){0,6}?\s+(?:is|are|means?)\b|the\s+difference\s+between\b)"
    r"|\b(?:what(?:'s| is| are)|whats)\s+the\s+difference\s+between\b"
    # a library's warning pasted ("what does this Django warning mean?"): its words are the library's
    r"|\bwhat\s+(?:does|do)\s+(?:this|these)\s+(?:[\w.-]+\s+){0,2}warnings?\s+mean\b"
    r"|\bwhat(?:'s| is| are)\s+(?:this|these)\s+(?:[\w.-]+\s+){0,2}warnings?\s+about\b", re.I)
_CUES = ("explain", "describe", "difference between", "warning")
_PROJECT = re.compile(r"\b(?:our|ours|we|we're|we've|us)\b", re.I)


def general(text: str) -> bool:
    """Whether ``text`` (the user's own words) asks what a concept is or how two differ, and says
    nothing of the project."""
    low = text.lower()  # most messages hold none of the cue words: a substring test settles them at C speed
    if not any(cue in low for cue in _CUES):
        return False
    return bool(_GENERAL.search(text)) and not _PROJECT.search(text)
