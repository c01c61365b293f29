"""Phase 2: the candidates of many sessions, merged with what is stored.

- The same candidate from several sessions (or agents) is one group; a group
  whose text is already a live memory raises that memory's recurrence (one
  evidence entry per session) instead of adding a record.
- Groups are ranked: seen in more sessions, then more verified outcomes,
  then newer. The always-injected kinds (preference, procedure) are proposed
  only while the scope's snapshot budget (``[memory.gate] snapshot_chars``:
  2,200 / 1,375 characters) holds them beside what is already live there; the
  rest wait until they recur.
- Everything new goes through the write gate as ``proposed``
  (``created_by = "learn"``): the threat and secret scans, duplicates, limits.
  A contradiction with an active memory supersedes it when a person approves.
- A proposal a person rejected is remembered (``store.learning.reject``, a
  digest of its scope and text) and never proposed again.
- A run with nothing new writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ctxproxy.store.learned import LEARNED_BY
from ctxproxy.store.memory_records import SNAPSHOT_KINDS

from .candidates import Candidate, Extraction

LIVE = ("active", "proposed", "hypothesis")
MAX_EVIDENCE_SESSIONS = 64  # the gate's bound on evidence_sessions
CHUNK = 16  # writes per transaction: the store's one writer lock is held briefly, the proxy's writes wait little
STEP = 16  # candidates looked up between two heartbeats (a background pass gives way to turns there)


@dataclass
class Group:
    """One candidate as seen across sessions."""

    candidate: Candidate
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)  # session -> its evidence entry
    agents: set[str] = field(default_factory=set)
    verified: int = 0
    newest: float = 0.0

    def add(self, ex: Extraction, c: Candidate) -> None:
        entry = {"session": ex.session, "user": ex.user, "agent": ex.agent, "key": c.key(),
                 "turns": list(c.turns), "effects": list(c.effects), "quote": c.quote, "outcome": c.outcome,
                 "steps": list(c.steps), "at": c.observed_at, "extractor": c.extractor}
        self.evidence[ex.session] = {k: v for k, v in entry.items() if v not in ("", [], None)}
        if ex.agent:
            self.agents.add(ex.agent)
        self.verified += c.verified
        if c.observed_at >= self.newest:
            self.newest = c.observed_at
            self.candidate = c

    def rank(self) -> tuple:
        return (-len(self.evidence), -len(self.agents), -self.verified, -self.newest, self.candidate.statement)

    def evidence_ref(self) -> str:
        first = next(iter(self.evidence.values()))
        turns = first.get("turns") or []
        return f"session:{first['session']}" + (f"/turn:{turns[0]}" if turns else "")


@dataclass
class Report:
    mode: str = ""
    sessions: int = 0
    candidates: int = 0
    proposed: int = 0
    recurred: int = 0
    unchanged: int = 0
    rejected_before: int = 0
    over_budget: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    proposals: list[dict[str, Any]] = field(default_factory=list)  # what was (or, dry run, would be) proposed

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def gather(extractions: Iterable[Extraction], keep: Callable[[Candidate], bool] = lambda c: True) -> list[Group]:
    """The candidates grouped across sessions, best first."""
    groups: dict[str, Group] = {}
    for ex in extractions:
        for c in ex.candidates:
            if keep(c):
                groups.setdefault(c.key(), Group(c)).add(ex, c)
    return sorted(groups.values(), key=Group.rank)


def _live_same(store: Any, tenant: str, c: Candidate) -> Any:
    for rec in store.memories.same_text(tenant, c.project, c.user, "", c.statement):
        if rec.status in LIVE and rec.kind == c.kind:
            return rec
    return None


def consolidate(store: Any, gate: Any, tenant: str, extractions: list[Extraction], *,
                keep: Callable[[Candidate], bool] = lambda c: True, dry_run: bool = False,
                heartbeat: Callable[[], None] = lambda: None) -> Report:
    report = Report(sessions=len(extractions))
    groups = gather(extractions, keep)
    report.candidates = len(groups)
    used: dict[tuple[str, str], int] = {}
    caps = gate.config.snapshot_chars
    fresh: list[Group] = []
    known: list[tuple[Any, Group]] = []
    for i, g in enumerate(groups):
        if i % STEP == 0:
            heartbeat()
        c = g.candidate
        if store.learning.rejected(tenant, c.key()):
            report.rejected_before += 1
            continue
        rec = _live_same(store, tenant, c)
        if rec is not None:
            known.append((rec, g))
            continue
        if c.kind in SNAPSHOT_KINDS:
            scope = (c.project, c.user)
            if scope not in used:
                used[scope] = sum(len(r.statement) for r in store.memories.scope_records(
                    tenant, c.project, c.user, "", snapshot=True) if r.status in LIVE)
            if used[scope] + len(c.statement) > int(caps.get(c.scope, 0)):
                report.over_budget += 1
                continue
            used[scope] += len(c.statement)
        fresh.append(g)
    if dry_run:
        for g in fresh:
            refusal = gate.screen(g.candidate.statement, g.evidence_ref())
            if refusal is not None:
                report.refused[refusal.reason] = report.refused.get(refusal.reason, 0) + 1
            else:
                report.proposals.append(_proposal(g))
        report.proposed = len(report.proposals)
        report.recurred = sum(1 for rec, g in known if _news(store, tenant, rec, g))
        report.unchanged = len(known) - report.recurred
        return report
    bodies = [_body(g) for g in fresh]
    outcomes = []
    for start in range(0, len(bodies), CHUNK):  # a transaction per chunk: the writer lock is held briefly
        heartbeat()
        outcomes += gate.write_many(tenant, bodies[start:start + CHUNK], created_by=LEARNED_BY, propose=True)
    for g, out in zip(fresh, outcomes):
        if isinstance(out, Exception) or out.refused is not None:
            reason = getattr(getattr(out, "refused", None), "reason", "invalid")
            report.refused[reason] = report.refused.get(reason, 0) + 1
        elif out.duplicate_of:
            known.append((out.record, g))
        else:
            report.proposed += 1
            report.proposals.append({**_proposal(g), "memory_id": out.record.memory_id, "status": out.record.status})
            known.append((out.record, g))
    heartbeat()
    changed = [(rec, g) for rec, g in known if _news(store, tenant, rec, g)]
    created = {p.get("memory_id") for p in report.proposals}
    report.recurred = sum(1 for rec, _ in changed if rec.memory_id not in created)
    report.unchanged = len(known) - len(changed)
    for start in range(0, len(changed), CHUNK):
        heartbeat()
        with store.batch() as b:
            for rec, g in changed[start:start + CHUNK]:
                _record_evidence(b, tenant, rec, g)
    return report


def _news(store: Any, tenant: str, rec: Any, g: Group) -> bool:
    """Whether the group adds a session the memory's evidence does not have yet."""
    have = {e.get("session") for e in store.learning.evidence(tenant, rec.memory_id)}
    return bool(set(g.evidence) - have)


def _record_evidence(b: Any, tenant: str, rec: Any, g: Group) -> None:
    """The group's sessions join the memory's evidence (and, a learned one, its
    ``evidence_sessions``, so forgetting a session shortens the list: evidence
    bookkeeping, the statement unchanged)."""
    b.learning.add_evidence(tenant, rec.memory_id, list(g.evidence.values()))
    cur = b.memories.get(tenant, rec.memory_id)
    if cur is None or cur.created_by != LEARNED_BY:
        return
    sessions = tuple(dict.fromkeys((*cur.evidence_sessions, *g.evidence)))[-MAX_EVIDENCE_SESSIONS:]
    if sessions != cur.evidence_sessions:
        b.memories.put(cur.evolve(evidence_sessions=sessions), expected_revision=cur.revision)


def _body(g: Group) -> dict[str, Any]:
    c = g.candidate
    body = {"statement": c.statement, "kind": c.kind, "origin": c.origin, "evidence_ref": g.evidence_ref(),
            "evidence_sessions": list(g.evidence)[-MAX_EVIDENCE_SESSIONS:], "observed_at": g.newest or None,
            "confidence": 1.0 if c.origin in ("user", "verified_tool_result") else 0.5}
    if c.project:
        body["project"] = c.project
    if c.user:
        body["user"] = c.user
    return {k: v for k, v in body.items() if v is not None}


def _proposal(g: Group) -> dict[str, Any]:
    c = g.candidate
    return {"statement": c.statement, "kind": c.kind, "origin": c.origin, "scope": c.scope, "project": c.project,
            "user": c.user, "sessions": len(g.evidence), "agents": sorted(g.agents), "verified": g.verified}
