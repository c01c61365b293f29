"""The checkpoint text: the task state, newest last, within a token budget.

Fitting drops whole items from the longest list (never the goal, the open
questions or the next safe action): older test runs first, then the oldest
item after the list's first third — the first items set the task, the
newest are the most current. The same state always renders to the same
bytes, and a cut never splits a quote.
"""
from __future__ import annotations

from typing import Callable

from .state import TaskState

HEADER = ("Task-state checkpoint (recorded by ctxproxy from this session's own turns and tool results; "
          "the conversation history was compacted and may no longer show them). [tN] is the user turn "
          "an item came from; quotes are the user's own words.")


def _q(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def render(st: TaskState, pending: list[str], count: Callable[[str], int], budget: int) -> tuple[str, int]:
    """(text, items left out) for ``st`` within ``budget`` tokens."""
    lists = {"instructions": list(st.instructions), "decisions": list(st.decisions), "evidence": list(st.evidence)}
    dropped = 0
    while True:
        lines = _lines(st, lists, pending)
        # per-line counts (the counter caches them) first; the whole text is counted once it may fit
        if sum(count(line) for line in lines) + len(lines) <= budget or not any(lists.values()):
            text = "\n".join(lines)
            if count(text) <= budget or not any(lists.values()):
                return text, dropped
        longest = max(lists, key=lambda k: (len(lists[k]), k))
        items = lists[longest]
        tests = [i for i, e in enumerate(items) if longest == "evidence" and e[1] == "test"]
        del items[tests[0] if len(tests) > 1 else len(items) // 3]
        dropped += 1


def _lines(st: TaskState, lists: dict, pending: list[str]) -> list[str]:
    lines = [HEADER]
    if st.goal:
        lines.append(f"Goal [t{st.goal[0]}]: {_q(st.goal[1])}")
    if lists["instructions"]:
        lines.append("User instructions and corrections (verbatim, newest last; they still apply):")
        lines += [f"- [t{t}] {_q(text)}" for t, text in lists["instructions"]]
    if lists["decisions"]:
        lines.append("Decisions already taken (do not reopen them):")
        lines += [f"- [t{t}] {text}" for t, text in lists["decisions"]]
    if lists["evidence"]:
        lines.append("Verified evidence (from tool results; already done):")
        lines += [f"- [t{t}] {text}" for t, _kind, text in lists["evidence"]]
    if st.question or pending:
        lines.append("Open questions and pending approvals:")
        if st.question:
            lines.append(f"- [t{st.question[0]}] you asked the user, still unanswered: {_q(st.question[1])}")
        lines += [f"- pending approval / result never seen: {p}" for p in pending]
    lines.append("Next safe action: " + next_action(st, pending))
    return lines


def next_action(st: TaskState, pending: list[str]) -> str:
    if st.question:
        return f"wait for the user's answer to {_q(st.question[1])}; do not act on it before."
    if pending:
        return f"confirm whether {pending[0]} took effect (ask the user if unsure) before running it again."
    return "continue the user's latest request; do not repeat work listed as done above."
