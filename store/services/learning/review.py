"""A person reviews what learning proposed: with the user's own words and the evidence.

    items = proposals(store, tenant, user="alice")       # newest evidence first
    approve(store, gate, tenant, ids, by="cli")          # active: in the next session's frozen snapshot
    reject(store, gate, tenant, ids, by="cli")           # deleted, and never proposed again
    edit(store, gate, tenant, id, "new words", by="cli") # a new revision, still proposed, gated again

Each of approve / reject answers per id (``{"memory_id", "status"}`` or
``{"memory_id", "error": {"type", "message"}}``), so a bulk review reports
every item and one bad id stops nothing. Only records the learning job
wrote (``created_by = "learn"``) are reviewed here; another id is "not a
learned proposal" (the same answer as a missing one).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ctxproxy.store.errors import RevisionConflict
from ctxproxy.store.learned import LEARNED_BY

from .candidates import digest

REVIEWABLE = ("proposed", "hypothesis")


def _learned(store: Any, tenant: str, memory_id: str) -> Any:
    rec = store.memories.get(tenant, memory_id)
    return rec if rec is not None and rec.created_by == LEARNED_BY else None


def describe(store: Any, rec: Any) -> dict[str, Any]:
    """A proposal as a reviewer sees it: the record, how often it recurred, the
    user's words it came from and the evidence (sessions, turns, tool calls, outcomes)."""
    evidence = store.learning.evidence(rec.tenant, rec.memory_id)
    quotes = list(dict.fromkeys(e["quote"] for e in evidence if e.get("quote")))
    return {"memory_id": rec.memory_id, "revision": rec.revision, "status": rec.status, "kind": rec.kind,
            "origin": rec.origin, "statement": rec.statement, "scope": rec.scope, "project": rec.project,
            "user": rec.user, "recurrence": len(evidence), "agents": sorted({e["agent"] for e in evidence
                                                                            if e.get("agent")}),
            "verified": sum(1 for e in evidence if e.get("outcome")), "quotes": quotes[:5],
            "evidence": [{k: e[k] for k in ("session", "agent", "turns", "effects", "outcome", "steps", "at")
                          if k in e} for e in evidence],
            "observed_at": rec.observed_at, "quarantine": rec.quarantine}


def proposals(store: Any, tenant: str, *, user: str | None = None, project: str | None = None,
              status: Iterable[str] = REVIEWABLE) -> list[dict[str, Any]]:
    wanted = tuple(status)
    out = [describe(store, r) for r in store.memories.iter_tenant(tenant)
           if r.created_by == LEARNED_BY and r.status in wanted
           and (user is None or r.user == user) and (project is None or r.project == project)]
    return sorted(out, key=lambda p: (-p["recurrence"], -p["verified"], -p["observed_at"], p["memory_id"]))


def _error(memory_id: str, kind: str, message: str) -> dict[str, Any]:
    return {"memory_id": memory_id, "error": {"type": kind, "message": message}}


def _each(store: Any, tenant: str, ids: Iterable[str], revisions: dict[str, int] | None,
          act: Callable[[Any, int | None], dict[str, Any]]) -> list[dict[str, Any]]:
    """``act(record, expected_revision)``'s answer for each learned proposal in
    ``ids``; a missing one (or not learned) and a conflict are that id's error."""
    from ctxproxy.store.services.memory.gate import NotFound, StateError

    out = []
    for mid in ids:
        rec = _learned(store, tenant, mid)
        try:
            if rec is None:
                raise NotFound(mid)
            out.append(act(rec, (revisions or {}).get(mid)))
        except NotFound:
            out.append(_error(mid, "not_found", f"no learned proposal {mid!r}"))
        except (StateError, RevisionConflict) as exc:
            out.append(_error(mid, "conflict", str(exc)))
    return out


def approve(store: Any, gate: Any, tenant: str, ids: Iterable[str], *, by: str = "",
            revisions: dict[str, int] | None = None) -> list[dict[str, Any]]:
    def act(rec: Any, revision: int | None) -> dict[str, Any]:
        res = gate.approve(tenant, rec.memory_id, by=by, expected_revision=revision)
        if res.refused is not None:
            return {**_error(rec.memory_id, "memory_blocked", res.refused.message), "reason": res.refused.reason}
        return res.answer()

    return _each(store, tenant, ids, revisions, act)


def reject(store: Any, gate: Any, tenant: str, ids: Iterable[str], *, by: str = "",
           revisions: dict[str, int] | None = None) -> list[dict[str, Any]]:
    def act(rec: Any, revision: int | None) -> dict[str, Any]:
        done = gate.reject(tenant, rec.memory_id, by=by, expected_revision=revision)
        # remembered under the text as proposed and as each session's candidate had it (an edit changed it)
        names = {digest(rec.kind, rec.project, rec.user, rec.statement),
                 *(e["key"] for e in store.learning.evidence(tenant, rec.memory_id) if e.get("key"))}
        for name in names:
            store.learning.reject(tenant, name, user=rec.user)
        return {"memory_id": rec.memory_id, "status": done.status, "revision": done.revision}

    return _each(store, tenant, ids, revisions, act)


def edit(store: Any, gate: Any, tenant: str, memory_id: str, statement: str, *, by: str = "",
         revision: int | None = None) -> Any:
    """A new revision with the reviewer's words (still to be approved); the gate's Outcome."""
    from ctxproxy.store.services.memory.gate import NotFound, StateError

    rec = _learned(store, tenant, memory_id)
    if rec is None:
        raise NotFound(memory_id)
    if rec.status not in REVIEWABLE:
        raise StateError(f"memory {memory_id} is {rec.status}; only proposals are reviewed")
    return gate.edit(tenant, memory_id, {"statement": statement}, expected_revision=revision, by=by)
