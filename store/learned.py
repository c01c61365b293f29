"""What learning derived from a session or a user goes when they are forgotten.

Backend-neutral (it uses ``store.memories`` and ``store.learning`` only):
every backend's ``open_store`` registers ``LearnedForget`` on
``store.derived``, and ``store.forget`` runs it after ``delete_subject``.
"""
from __future__ import annotations

from typing import Any, Mapping

LEARNED_BY = "learn"  # ``created_by`` of every memory the learning job proposes


def forget_learned(store: Any, tenant: str, subject: Mapping[str, str], memory_ids: list[str]) -> dict[str, int]:
    """After an erasure: a learned memory (``created_by = "learn"``) whose only
    evidence was the erased session, or the erased user's sessions, is erased
    too (``delete_subject`` leaves such a record expired, or — a user — still
    naming the sessions); one with other evidence keeps it, minus theirs. Then
    learning's own records of the subject go."""
    learning = store.learning
    session, user = subject.get("session") or None, subject.get("user") or None
    gone_sessions: set[str] = {session} if session else set()
    affected: list[str] = []
    if session:
        affected += learning.evidence_of(tenant, session=session)
    if user:
        for mid in learning.evidence_of(tenant, user=user):
            affected.append(mid)
            gone_sessions |= {e["session"] for e in learning.evidence(tenant, mid)
                              if e.get("user") == user and e.get("session")}
    counts = learning.forget(tenant, session=session, user=user, memory_ids=memory_ids)
    erased = trimmed = 0
    for mid in dict.fromkeys(affected):
        rec = store.memories.get(tenant, mid)
        if rec is None or rec.created_by != LEARNED_BY:
            continue
        left = tuple(s for s in rec.evidence_sessions if s not in gone_sessions)
        if not left:
            store.memories.erase(tenant, mid)
            learning.forget(tenant, memory_ids=[mid])
            erased += 1
        elif left != rec.evidence_sessions:
            store.memories.put(rec.evolve(evidence_sessions=left))
            trimmed += 1
    return {**counts, "memories": erased, "memories_trimmed": trimmed}


class LearnedForget:
    """Registered on ``store.derived``: forgetting reaches what learning derived
    from the erased subject (``forget_learned``)."""

    name = "learn"

    def __init__(self, store: Any) -> None:
        self.store = store

    def forget(self, tenant: str, subject: Mapping[str, str], memory_ids: list[str]) -> dict[str, int]:
        return forget_learned(self.store, tenant, subject, memory_ids)

    def erase_free_pages(self) -> None:
        """Nothing of its own on disk: it lives in the LMDB environment, compacted by the erasure."""


def attach(store: Any) -> None:
    """Register ``LearnedForget`` on ``store.derived`` once."""
    if not any(getattr(d, "name", "") == LearnedForget.name for d in store.derived):
        store.derived.append(LearnedForget(store))
