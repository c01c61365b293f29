"""What phase 1 finds in one session: candidates, each with its evidence and origin.

A candidate is plain data (stored as JSON in the session's ``learn`` part).
Its ``statement`` is what would be proposed: the user's own sentence
verbatim for an instruction, a correction or a preference; the commands as
the agent ran them for a procedure or a fix. Nothing in a statement is
paraphrased, and nothing in it is copied from a tool's output: a tool's
output is the evidence (``outcome``), never the statement.
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from ctxproxy.store import memory_text

PART = "learn"  # the session part holding a session's extraction (erased with the session)
VERSION = 2  # of the extraction rules: a session extracted by older rules is read again

PREFERENCE, DECISION, PROCEDURE, FAILURE = "preference", "decision", "procedure", "failure"
# what a candidate is -> the memory kind it is proposed as
MEMORY_KIND = {PREFERENCE: "preference", DECISION: "fact", PROCEDURE: "procedure", FAILURE: "failure"}


@dataclass(frozen=True)
class Candidate:
    what: str  # preference | decision | procedure | failure
    statement: str
    origin: str  # user | verified_tool_result | tool_output | model_inference
    project: str = ""
    user: str = ""
    quote: str = ""  # the user's own words it came from (a review shows them)
    turns: tuple[str, ...] = ()  # turn ids it came from
    effects: tuple[str, ...] = ()  # idempotency keys of the tool calls it came from
    steps: tuple[str, ...] = ()  # a procedure's or a fix's steps, as run
    outcome: str = ""  # the verified outcome it leads to (evidence: a test summary, a PR, a deploy line)
    verified: int = 0  # verified outcomes behind it
    observed_at: float = 0.0
    extractor: str = "rules"  # rules | model

    @property
    def kind(self) -> str:
        return MEMORY_KIND[self.what]

    @property
    def scope(self) -> str:
        return "user" if self.user else "project" if self.project else "tenant"

    def key(self) -> str:
        """Names the candidate across sessions: its kind, scope and normalised text."""
        return digest(self.kind, self.project, self.user, self.statement)

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if v not in ("", (), 0, 0.0) or k in ("what", "statement", "origin")}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Candidate":
        known = {f for f in cls.__dataclass_fields__}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in known}
        return cls(**values)


def digest(kind: str, project: str, user: str, statement: str) -> str:
    """A proposal's name for "not again" (rejections): scope and normalised text, hashed."""
    text = "\x00".join((kind, project, user, memory_text.normalise(statement)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Extraction:
    """A session's extraction: the session part ``learn``."""

    session: str
    user: str = ""
    project: str = ""
    agent: str = ""
    through: float = 0.0  # the newest turn read (a later turn means: read it again)
    rows: int = 0
    extracted_at: float = 0.0
    version: int = VERSION
    candidates: list[Candidate] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)  # turns, tools, failures (insights)

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "user": self.user, "project": self.project, "agent": self.agent,
                "through": self.through, "rows": self.rows, "extracted_at": self.extracted_at,
                "version": self.version, "candidates": [c.to_dict() for c in self.candidates],
                "stats": self.stats}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Extraction | None":
        if not isinstance(d, Mapping) or not d.get("session"):
            return None
        return cls(session=str(d["session"]), user=str(d.get("user") or ""), project=str(d.get("project") or ""),
                   agent=str(d.get("agent") or ""), through=float(d.get("through") or 0.0),
                   rows=int(d.get("rows") or 0), extracted_at=float(d.get("extracted_at") or 0.0),
                   version=int(d.get("version") or 0),
                   candidates=[Candidate.from_dict(c) for c in d.get("candidates") or () if isinstance(c, Mapping)],
                   stats=dict(d.get("stats") or {}))
