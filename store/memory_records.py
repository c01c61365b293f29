"""The durable memory record: one statement, its scope, where it came from.

A record is immutable; every change is a new revision (``revision`` counts
them, ``store.memories.history`` keeps them all until the record is erased).
Recall and the snapshot serve a record only when ``servable(now)``: active,
not quarantined, not expired.
"""
from __future__ import annotations

import base64
import os
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

KINDS = ("preference", "fact", "procedure", "failure", "event")
ORIGINS = ("user", "verified_tool_result", "tool_output", "model_inference", "imported", "consolidated")
STATUSES = ("active", "proposed", "hypothesis", "superseded", "expired", "deleted")
SENSITIVITIES = ("public", "internal", "confidential")
# Origins whose text is not a person's word: never active by itself (proposed until approved).
UNTRUSTED_ORIGINS = ("tool_output",)
# Kinds always injected (the durable snapshot); the others are only recalled.
SNAPSHOT_KINDS = ("preference", "procedure")

ID_PREFIX = "mem_"


def new_memory_id() -> str:
    """``mem_`` + 26 url-safe characters (156 random bits), opaque."""
    return ID_PREFIX + base64.urlsafe_b64encode(os.urandom(20)).decode()[:26]


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    memory_id: str
    tenant: str
    statement: str
    kind: str
    origin: str
    status: str
    project: str = ""
    user: str = ""
    session: str = ""
    purpose: str = ""
    evidence_ref: str = ""
    evidence_sessions: tuple[str, ...] = ()
    confidence: float = 1.0
    sensitivity: str = "internal"
    observed_at: float = 0.0
    expires_at: float | None = None
    evergreen: bool = False
    supersedes: str = ""
    superseded_by: str = ""
    external_id: str = ""
    created_by: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    revision: int = 1
    quarantine: str = ""
    subject_key: str = ""

    def servable(self, now: float) -> bool:
        """What recall and the snapshot may show."""
        return (self.status == "active" and not self.quarantine
                and (self.expires_at is None or self.expires_at > now))

    @property
    def scope(self) -> str:
        """The narrowest scope the record is bound to (for limits and display)."""
        if self.session:
            return "session"
        if self.user:
            return "user"
        if self.project:
            return "project"
        return "tenant"

    def scope_key(self) -> tuple[str, str, str]:
        return (self.project, self.user, self.session)

    def evolve(self, **changes: Any) -> "MemoryRecord":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = {name: getattr(self, name) for name in FIELD_NAMES}  # (dataclasses.asdict deep-copies: slow)
        d["evidence_sessions"] = list(self.evidence_sessions)
        return d

    def shown(self) -> dict[str, Any]:
        """The record as the admin API and the CLI show it: its fields and its
        ``scope`` object (a create takes this shape back)."""
        d = self.to_dict()
        d["scope"] = {"project": self.project, "user": self.user, "session": self.session}
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "MemoryRecord":
        values = {k: v for k, v in d.items() if k in _KNOWN}
        if "evidence_sessions" in values:
            values["evidence_sessions"] = tuple(values["evidence_sessions"] or ())
        return cls(**values)


FIELD_NAMES = tuple(f.name for f in fields(MemoryRecord))
_KNOWN = frozenset(FIELD_NAMES)
