"""Whether a message only asks for a mechanical edit of the code: a rename, a lint, typo or compile error fixed.

"Rename the React component DealerFarmTable to FarmListTable everywhere in dealer-portal/src and update the
imports", "fix this lint error please": the edit is the same whatever the project has decided, so the
memory about the component the request names ("The dealer portal uses TanStack Query and Tailwind…") is
not what it needs — it shares the component's words, not a need. A message that asks something
(a ``?``), or speaks of the project ("we", "our": "rename the column; we deploy the API and the workers
separately, so…"), is not such a request, nor is one that opens otherwise ("I want to rename…", "refactor
the balance model to use float": a change of behaviour may break what a memory says must hold).
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
_ASKS = re.compile(r"\?|\b(?:our|ours|we|we're|we've|us)\b", re.I)
_POLITE = re.compile(r"\A\W*(?:can|could|would)\s+you\b[^?]*\?\s*\Z", re.I)  # "can you fix these lint errors?"


def mechanical(text: str) -> bool:
    """Whether ``text`` (the user's own words) opens with a mechanical edit and neither asks nor
    speaks of the project."""
    if not _EDIT.match(text):
        return False
    # a request put as a question ("can you sort out these eslint warnings?") asks nothing more
    return not _ASKS.search(_POLITE.sub("", text) if _POLITE.match(text) else text)
