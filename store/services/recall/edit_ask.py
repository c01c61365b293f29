"""Whether a message only asks for a mechanical edit of the code: a rename, a lint, typo or compile error fixed.

"Rename the React component DealerFarmTable to FarmListTable everywhere in dealer-portal/src and update the
imports", "fix this lint error please": the edit is the same whatever the project has decided, so the
memory about the component the request names ("The dealer portal uses TanStack Query and Tailwind…") is
not what it needs — it shares the component's words, not a need. A message that asks something
(a ``?``), or speaks of the project ("we", "our": "rename the column; we deploy the API and the workers
separately, so…"), is not such a request, nor is one that opens otherwise ("I want to rename…", "refactor
the balance model to use float": a change of behaviour may break what a memory says must hold).
With ``wide`` (``software_asks``, off by default), the same edits said otherwise are such requests too: a tool's complaint reported and then "fix" ("mypy
complains in geo.py, fix types"), sorting imports, a docstring, running the formatter, files ignored by git,
a polite question followed only by "no behaviour change", after a lead-in naming the earlier work ("Back to
the PDF work from before the summary: can you rename…"). Renaming a contract others read — a column, a
table, an API's field or endpoint, an event — is not, unless the old one is kept ("rename field bin_uid
to bin_id in driver endpoints, drop old one": the clients' compatibility is the project's).
"""
from __future__ import annotations

import re

_ERRORS = (r"(?:lint(?:er|ing)?|typos?|spelling|compil(?:e|er|ation)|formatting|mypy|eslint|flake8|ruff|pylint"
           r"|clippy|tsc)")
_EDIT = re.compile(
    r"\A\W*(?:(?:please|pls|now|ok|okay|next)\W+)?(?:(?:can|could|would)\s+you\s+(?:please\s+)?)?(?:"
    r"rename\b"
    r"|(?:refactor|convert|rewrite)\b(?=.*\b(?:no\s+behaviou?r\s+change|behaviou?r\s+(?:identical|unchanged)"
    r"|keep(?:ing)?\s+(?:\S+\s+){0,3}(?:the\s+same|identical|unchanged)))"
    r"|(?:fix|sort\s+out|clean\s+up|silence)\s+(?:(?:the|this|that|these|those|a|all|all\s+the|remaining"
    r"|the\s+remaining)\s+)?" + _ERRORS + r"\b"
    r"|add\s+(?:the\s+)?(?:missing\s+)?type\s+(?:hints|annotations)\b"
    r"|(?:clean\s+up|remove)\s+(?:the\s+|all\s+(?:the\s+)?)?unused\s+imports\b)", re.I)
# The same edits said otherwise (``wide``: ``software_asks``)
_WIDE = re.compile(
    r"\A\W*(?:(?:please|pls|now|ok|okay|next)\W+)?(?:(?:can|could|would)\s+you\s+(?:please\s+)?)?(?:"
    r"sort\s+(?:the\s+)?imports\b"
    r"|(?:add|update|correct|fix|finish)\s+(?:a\s+|the\s+)?docstrings?\b"
    r"|typos?\b(?=[^?\n]*['\"`])"  # the misspelt word quoted ("typo 'recieved' in…"), not "typo in the staging port"
    r"|run\s+(?:the\s+)?(?:formatter|black|prettier|gofmt|isort|ruff\s+format)\b"
    r"|add\b[^?\n]{0,60}\bto\s+(?:the\s+)?\.gitignore\b"
    r"|fix\s+(?:the\s+)?failing\s+" + _ERRORS + r"\b)", re.I)
# A tool's complaint said first, then the order ("lint failing on patrons module, fix"): one line, no question.
# (A checker's complaint only: "JPY prices show the wrong formatting, fix" is about the project's money.)
_CHECKERS = r"(?:lint(?:er|ing)?|mypy|eslint|flake8|ruff|pylint|clippy|tsc|compil(?:e|er|ation)\s+errors?)"
_FIX_AFTER = re.compile(r"\A[^?\n]{0,80}\b" + _CHECKERS + r"\b[^?\n]{0,80}\bfix(?:\s+(?:it|them|this|that|types))?\W*\Z",
                        re.I)
_LEAD_IN = re.compile(r"\A\W*(?:back\s+to|continuing(?:\s+from)?|returning\s+to)\b[^:\n]{0,120}:\s*", re.I)
_ASKS = re.compile(r"\?|\b(?:our|ours|we|we're|we've|us)\b", re.I)
_POLITE = re.compile(r"\A\W*(?:can|could|would)\s+you\b[^?]*\?\s*\Z", re.I)  # "can you fix these lint errors?"
# ...put as a polite question, then only that the behaviour stays as it is ("No behavior change.")
_POLITE_HEAD = re.compile(r"\A\W*(?:please\s+)?(?:can|could|would)\s+you\b[^?]*\?", re.I)
_KEEP_ONLY = re.compile(r"\A(?:\W*(?:no\s+(?:behaviou?r|logic)\s+changes?|keep\s+(?:\S+\s+){0,3}(?:the\s+same|identical"
                        r"|unchanged)|don'?t\s+change\s+(?:the\s+|any\s+)?behaviou?r|nothing\s+else\s+(?:needs\s+to\s+)?"
                        r"changes?))*\W*\Z", re.I)
_CONTRACT = re.compile(r"\brenam\w*\b.*(?<![\w/.-])(?:columns?|tables?|fields?|endpoints?|api|events?|topics?)(?![\w/.-])",
                       re.I | re.S)  # a word of the text, not of a path ("services/cms-api")
_KEPT = re.compile(r"\b(?:keep\w*|kept|backwards?|compat\w*|alias|unchanged)\b", re.I)


def mechanical(text: str, wide: bool = False) -> bool:
    """Whether ``text`` (the user's own words) opens with a mechanical edit and neither asks nor
    speaks of the project; ``wide``: the same edits said otherwise too (see the module docstring)."""
    if not wide:
        if not _EDIT.match(text):
            return False
        # a request put as a question ("can you sort out these eslint warnings?") asks nothing more
        return not _ASKS.search(_POLITE.sub("", text) if _POLITE.match(text) else text)
    lead = _LEAD_IN.match(text)
    body = text[lead.end():] if lead else text
    if not (_EDIT.match(body) or _WIDE.match(body) or _FIX_AFTER.match(body)):
        return False
    if _CONTRACT.search(body) and not _KEPT.search(body):
        return False  # a contract others read, renamed and the old one dropped
    # a request put as a question asks nothing more, nor does "No behaviour change." after it
    polite = _POLITE_HEAD.match(body)
    if polite and _KEEP_ONLY.match(body[polite.end():]):
        body = ""
    return not _ASKS.search((lead.group() if lead else "") + body)
