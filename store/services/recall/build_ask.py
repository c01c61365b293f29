"""Whether a message asks to build something it specifies whole, and whether a memory constrains.

"Add a Vitest test for the GradeGrid component checking that empty cells render as a dash", "Write
a SQL query that gives the no-show rate per clinic per month": the request says what to build and
leaves nothing to look up — no question, no value or convention of the project it points at ("our",
"the allowed window", "the same way the other queues do it", "whatever node version we're required
to stay on"). What the project's memory can add to such a request is a rule the build must keep
("Branches must be named chub-<ticket>-<slug>", "Refunds only go back to the original payment
method"), not what the component it names is ("The Vue front end uses Pinia for state and Vitest for
unit tests"): that memory shares the component's words, not a need.
"""
from __future__ import annotations

import re

_BUILD = re.compile(
    r"(?:^|(?<=[.!;:,\n])\s*)(?:(?:please|pls|now|ok|okay|next|then|also)\W+|in\s+\S+/\S+\s+)?"
    r"(?:add|write|create|implement|make|build|generate|refactor|replace|dedupe|update|set\s+up|extract|convert"
    r"|split|port)\b(?!\s+(?:check|sure|it\s+work))", re.I)
_OPEN = re.compile(
    r"\?|\b(?:which|what|where|who|whose|when|how|why|our|ours|we|we're|we've|us|whatever|usual|standard"
    r"|convention|policy|rules?|actually|the\s+(?:right|correct|proper|real|actual|allowed|required|expected|existing|current"
    r"|configured|same|official|approved|agreed)|same\s+way|like\s+the\s+others?|as\s+the\s+others?)\b", re.I)
_RULE = re.compile(
    r"\b(?:must|never|only|always|at\s+most|at\s+least|up\s+to|cannot|can't|not|no|don't|do\s+not|reject\w*"
    r"|requir\w*|should|limit\w*|capped|max\w*|min\w*|forbid\w*|block\w*|need\w*|unless|otherwise|instead)\b",
    re.I)


def specified(text: str) -> bool:
    """Whether ``text`` (the user's own words) asks to build something and leaves nothing of the
    project open: no question, nothing it points at."""
    return bool(_BUILD.search(text)) and not _OPEN.search(text)


# A value a build would use: a setting, a host, a path, an identifier, a number with its unit.
_VALUE = re.compile(r"\w[=_./:@]\w|\d|`")


def constrains(statement: str) -> bool:
    """Whether a memory states a rule (must, never, only, at most, rejects, requires…) or a value
    the build would use (``CARRIER_MODE=sandbox``, a host, a path, a number)."""
    return bool(_RULE.search(statement) or _VALUE.search(statement))


# A unit test asked for a named piece of code, the cases its words list ("Write a pytest unit test for
# slugify_beer_name() in brewing/names.py covering accents, extra spaces and apostrophes", "add unit tests
# for the pure helper format_uprn … it should zero-pad to 12 digits"): the test follows from the code and
# the cases given, whatever the project decided. One pointing at a value of the project the test must hold
# ("use the real threshold value", "assert the exact queue name", "the rounding boundary cases") is not.
_TEST = re.compile(r"\A\W*(?:(?:please|pls|now|ok|okay|next|then|also)\W+)?(?:(?:can|could|would)\s+you\s+"
                   r"(?:please\s+)?)?(?:write|add|create)\s+(?:(?:a|an|the|some|more)\s+)?(?:[\w-]+\s+){0,3}?tests?"
                   r"\s+(?:for|of|in|covering|that|checking)\b", re.I)  # the test is what is built, not "…+ test"
_POLITE_HEAD = re.compile(r"\A\W*(?:please\s+)?(?:can|could|would)\s+you\b[^?]*\?", re.I)
_HELD_VALUE = re.compile(r"\b(?:real|exact|actual|boundar\w*|threshold\w*|limits?|caps?|max\w*|min\w*|rules?"
                         r"|constants?|configured|current)\b", re.I)


def unit_test_said_whole(text: str) -> bool:
    """Whether ``text`` (the user's own words) asks only for a unit test of named code, its cases
    said, nothing of the project open nor a value of it pointed at."""
    if not _TEST.match(text) or _HELD_VALUE.search(text):
        return False
    polite = _POLITE_HEAD.match(text)  # "Can you write unit tests for X? It should…": the question is the request
    return not _OPEN.search(text[polite.end():] if polite else text)
