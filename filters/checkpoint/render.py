"""The checkpoint text: the task state and the side effects the compaction hid, within one token budget.

The effects field is the effect ledger's content (``EffectItem``: each side
effect with its state, the first digits of its idempotency key, and its
references): pending / unknown ones under the open questions and pending
approvals, completed ones (irreversible first, newest first) and failed ones
after the evidence.

Fitting drops whole items (never the goal, the open questions, the pending /
unknown effects or the next safe action), in the order that loses least:
older test runs, failed effects, completed effects local to the working tree
(an edit can be seen there), then from the longest of the instructions,
decisions, evidence and irreversible completed effects — task-state lists
lose the item after their first third (the first items set the task, the
newest are current), effects their oldest. Effects left out are counted in
one line that says how to list them. Only if pending / unknown effects alone
overflow are they shortened (their call and key, no result details), and
then the oldest counted too. The same input always renders to the same
bytes, and a cut never splits a quote.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .state import TaskState

HEADER = ("Task-state checkpoint (recorded by ctxproxy from this session's turns, tool results and effect ledger "
          "as of its compaction; the compacted history may no longer show them, later turns are in the "
          "conversation). [tN] is the user turn an item came from; quotes are the user's own words.")
CONSIDERED = 40  # newest completed / local / failed effects fitted; older ones are only counted
OPEN = "result was never seen (they may or may not have taken effect)"


@dataclass(frozen=True)
class EffectItem:
    """One side effect the compaction hid, as the checkpoint shows it."""

    group: str  # open (pending / unknown) | done | failed
    irreversible: bool  # it may have left the working tree (a push, a PR, a deployment, a message)
    call: str  # the tool, its arguments in short form, the first digits of its idempotency key
    state: str
    details: str = ""  # "; refs: …" or '; result: "…"'

    @property
    def full(self) -> str:
        return f"{self.call} → {self.state}{self.details}"


def _q(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def render(st: TaskState, effects: list[EffectItem], count: Callable[[str], int], budget: int,
           listing: str = "") -> tuple[str, int]:
    """(text, items left out) for ``st`` and ``effects`` (newest first) within ``budget`` tokens."""
    lists = {"instructions": list(st.instructions), "decisions": list(st.decisions), "evidence": list(st.evidence),
             "done": [e for e in effects if e.group == "done" and e.irreversible]}
    local = [e for e in effects if e.group == "done" and not e.irreversible]
    failed = [e for e in effects if e.group == "failed"]
    opened = [e for e in effects if e.group == "open"]
    left = {"done": 0, "failed": 0, "open": 0}
    for group, items in (("done", lists["done"]), ("done", local), ("failed", failed)):
        left[group] += len(items[CONSIDERED:])  # the budget holds far fewer: fitting stays cheap
        del items[CONSIDERED:]
    short = False
    dropped = 0
    while True:
        lines = _lines(st, lists, local, failed, opened, short, left, listing)
        # per-line counts (the counter caches them) first; the whole text is counted once it may fit
        if sum(count(line) for line in lines) + len(lines) <= budget:
            text = "\n".join(lines)
            if count(text) <= budget:
                return text, dropped
        tests = [i for i, e in enumerate(lists["evidence"]) if e[1] == "test"]
        if len(tests) > 1:
            del lists["evidence"][tests[0]]
        elif failed:
            failed.pop()
            left["failed"] += 1
        elif local:
            local.pop()
            left["done"] += 1
        elif any(lists.values()):
            longest = max(lists, key=lambda k: (len(lists[k]), k))
            items = lists[longest]
            if longest == "done":
                items.pop()
                left["done"] += 1
            else:
                del items[len(items) // 3]
        elif not short and opened:
            short = True
            continue
        elif opened:
            opened.pop()
            left["open"] += 1
        else:
            return "\n".join(lines), dropped
        dropped += 1


def _lines(st: TaskState, lists: dict, local: list, failed: list, opened: list, short: bool, left: dict,
           listing: str) -> list[str]:
    lines = [HEADER]
    if st.goal:
        lines.append(f"Goal [t{st.goal[0]}]: {_q(st.goal[1])}")
    if lists["instructions"]:
        lines.append("User instructions and corrections (verbatim, newest last; they still apply):")
        lines += [f"- [t{t}] {_q(text)}" for t, text in lists["instructions"]]
    if lists["decisions"]:
        lines.append("Decisions already taken (do not reopen them):")
        lines += [f"- [t{t}] {text}" for t, text in lists["decisions"]]
    done = lists["done"] + local
    carried = _carried(lists["evidence"], done)
    evidence = [e for i, e in enumerate(lists["evidence"]) if i not in carried]
    if evidence:
        lines.append("Verified evidence (from tool results; already done):")
        lines += [f"- [t{t}] {text}" for t, _kind, text in evidence]
    if st.question:
        lines.append("Open questions:")
        lines.append(f"- [t{st.question[0]}] you asked the user, still unanswered: {_q(st.question[1])}")
    if opened:
        lines.append(f"Pending approvals — tool calls whose {OPEN}:")
        lines += [f"- {e.call} → {e.state}" if short else f"- {e.full}" for e in opened]
    if done:
        turns = {j: lists["evidence"][i][0] for i, j in sorted(carried.items(), reverse=True)}
        lines.append("Side effects already done (from the effect ledger; do not repeat them), newest first:")
        lines += [f"- [t{turns[j]}] {e.full}" if j in turns else f"- {e.full}" for j, e in enumerate(done)]
    if failed:
        lines.append("Failed or not executed, newest first:")
        lines += [f"- {e.full}" for e in failed]
    if any(left.values()):
        what = ", ".join(f"{n} {name}" for name, n in (("completed", left["done"]), ("failed", left["failed"]),
                                                       ("pending or unknown", left["open"])) if n)
        lines.append(f"(Side effects not listed here for the budget: {what}; they stay in the ledger"
                     + (f", listed by {listing}" if listing else "") + ".)")
    lines.append("Next safe action: " + next_action(st, opened))
    return lines


def _carried(evidence: list, done: list[EffectItem]) -> dict[int, int]:
    """Evidence items a listed effect already shows (its URL, commit sha or
    deployment line is in the effect's result): evidence index -> effect index.
    The effect line carries them, with their turn."""
    out = {}
    for i, (_t, kind, text) in enumerate(evidence):
        mark = text.split()[1] if kind == "commit" and len(text.split()) > 1 else text
        if kind == "test" or not mark:
            continue
        j = next((j for j, e in enumerate(done) if mark in e.details), None)
        if j is not None:
            out[i] = j
    return out


def next_action(st: TaskState, opened: list[EffectItem]) -> str:
    if st.question:
        return f"wait for the user's answer to {_q(st.question[1])}; do not act on it before."
    if opened:
        return f"confirm whether {opened[-1].call} took effect (ask the user if unsure) before running it again."
    return "continue the user's latest request; do not repeat work listed as done above."
