"""The task state a session has accumulated: what the checkpoint is made of.

Kept in the session record (``task_state``) as plain JSON, bounded: each
list keeps its newest entries, an entry seen again moves to the end (newest
last, deduplicated), so the record stays small however long the session.
Every entry carries the user turn it came from (``t``, counted per session).

``frozen`` is what the checkpoint shows: the lists as they were when it was
first rendered after the session's latest compaction. What happens after
the compaction is in the conversation itself, so the checkpoint's bytes stay
the same until the next one (a stable text, whatever the placement).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ctxproxy.store.services.digest import text_sha256

LIMITS = {"instructions": 24, "decisions": 16, "evidence": 24}
HEAD = 6  # the first entries of a list are kept when it overflows: they set the task (then the newest)
EVIDENCE_KEEP = {"test": 3, "commit": 6, "url": 8, "deploy": 4}  # newest kept per kind: a newer test run
# supersedes an older one, a PR or a deployment does not
_KNOWN = 2048  # user-turn digests remembered: Codex re-sends every earlier user turn after a compaction
_SAID = 64  # assistant-text digests remembered: agents re-send only the newest ones


def digest(text: str) -> str:
    return text_sha256(" ".join(text.split()).lower())[:16]


@dataclass
class TaskState:
    goal: list | None = None  # [turn, text]
    instructions: list = field(default_factory=list)  # [turn, text]
    decisions: list = field(default_factory=list)  # [turn, text]
    evidence: list = field(default_factory=list)  # [turn, kind, text]
    question: list | None = None  # [turn, text]: the last assistant question not answered yet
    turns: int = 0  # user turns counted in this session
    known: dict = field(default_factory=dict)  # digest of a user turn -> its number
    compactions: int = 0
    seen: list = field(default_factory=list)  # digests of compaction summaries already counted
    said: list = field(default_factory=list)  # digests of the newest assistant texts read
    frozen: dict | None = None  # the shown lists as of the latest compaction (``as_of_compaction``)

    @classmethod
    def load(cls, raw: Any) -> "TaskState":
        if not isinstance(raw, Mapping):
            return cls()
        st = cls()
        for name in ("instructions", "decisions", "evidence", "seen", "said"):
            v = raw.get(name)
            if isinstance(v, list):
                setattr(st, name, [list(e) if isinstance(e, list) else e for e in v])
        for name in ("goal", "question"):
            v = raw.get(name)
            setattr(st, name, list(v) if isinstance(v, list) and len(v) == 2 else None)
        st.turns = int(raw.get("turns") or 0)
        st.compactions = int(raw.get("compactions") or 0)
        st.known = dict(raw.get("known") or {}) if isinstance(raw.get("known"), Mapping) else {}
        st.frozen = dict(raw["frozen"]) if isinstance(raw.get("frozen"), Mapping) else None
        return st

    def dump(self) -> dict:
        return {"goal": self.goal, "instructions": self.instructions, "decisions": self.decisions,
                "evidence": self.evidence, "question": self.question, "turns": self.turns, "known": self.known,
                "compactions": self.compactions, "seen": self.seen, "said": self.said, "frozen": self.frozen}

    @property
    def compacted(self) -> bool:
        return self.compactions > 0

    def turn_of(self, text: str) -> tuple[int, bool]:
        """The number of a user turn (a re-sent turn keeps its own), and whether it is new."""
        d = digest(text)
        if d in self.known:
            return int(self.known[d]), False
        self.turns += 1
        self.known[d] = self.turns
        self._trim()
        return self.turns, True

    def first_seen(self, text: str) -> bool:
        """Whether assistant text ``text`` is read for the first time (then remembered)."""
        d = digest(text)
        if d in self.said:
            return False
        self.said = (self.said + [d])[-_SAID:]
        return True

    def _trim(self) -> None:
        if len(self.known) > _KNOWN:
            for k in list(self.known)[: len(self.known) - _KNOWN]:
                del self.known[k]

    def add(self, name: str, entry: list, move: bool = True) -> None:
        """Append ``entry`` to list ``name``. The same text seen before keeps its
        first turn and, with ``move`` (the user said it again), moves to the end."""
        items: list = getattr(self, name)
        d = digest(entry[-1])
        for i, e in enumerate(items):
            if digest(e[-1]) == d:
                if not move or i == len(items) - 1:
                    return
                entry = [min(e[0], entry[0]), *entry[1:]] if name == "evidence" else entry
                del items[i]
                break
        items.append(entry)
        if name == "evidence":
            same = [i for i, e in enumerate(items) if e[1] == entry[1]]
            for i in reversed(same[: max(0, len(same) - EVIDENCE_KEEP.get(entry[1], 4))]):
                del items[i]
        while len(items) > LIMITS[name]:
            del items[min(HEAD, len(items) - 1)]

    def as_of_compaction(self) -> "TaskState":
        """The state the checkpoint shows: frozen at the first call after each compaction."""
        if self.frozen is None or self.frozen.get("c") != self.compactions:
            self.frozen = {"c": self.compactions, "goal": self.goal, "question": self.question,
                           **{name: [list(e) for e in getattr(self, name)] for name in LIMITS}}
        return TaskState.load(self.frozen)

    def counts(self) -> dict[str, int]:
        return {"instructions": len(self.instructions), "decisions": len(self.decisions),
                "evidence": len(self.evidence), "open": int(self.question is not None),
                "goal": int(self.goal is not None)}
