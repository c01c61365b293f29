"""The task's goal as the agent names it: the ``X-Ctx-Goal`` header.

Both the effect ledger and the task-state checkpoint keep it (in the session
record, and in what they show the model), so it is redacted like the body
before anything keeps it, and redacted whole, before either folds and cuts
it: a secret cut in half would no longer match its rule.
"""
from __future__ import annotations

from .base import Turn

HEADER = "x-ctx-goal"


def header_goal(turn: Turn) -> str | None:
    """The header's text, redacted (``turn.redact_added``, when redact runs); None without one."""
    header = turn.headers.get(HEADER) if turn.headers is not None else None
    if not isinstance(header, str) or not header.strip():
        return None
    redact = turn.redact_added
    return redact(header) if redact is not None else header
