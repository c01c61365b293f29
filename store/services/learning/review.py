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

from typing import Any, Iterable

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


def approve(store: Any, gate: Any, tenant: str, ids: Iterable[str], *, by: str = "",
            revisions: dict[str, int] | None = None) -> list[dict[str, Any]]:
    from ctxproxy.store.services.memory.gate import NotFound, StateError

    out = []
    for mid in ids:
        if _learned(store, tenant, mid) is None:
            out.append(_error(mid, "not_found", f"no learned proposal {mid!r}"))
            continue
        try:
            res = gate.approve(tenant, mid, by=by, expected_revision=(revisions or {}).get(mid))
        except NotFound:
            out.append(_error(mid, "not_found", f"no learned proposal {mid!r}"))
        except (StateError, RevisionConflict) as exc:
            out.append(_error(mid, "conflict", str(exc)))
        else:
            if res.refused is not None:
                out.append({**_error(mid, "memory_blocked", res.refused.message), "reason": res.refused.reason})
            else:
                out.append(res.answer())
    return out


def reject(store: Any, gate: Any, tenant: str, ids: Iterable[str], *, by: str = "",
           revisions: dict[str, int] | None = None) -> list[dict[str, Any]]:
    from ctxproxy.store.services.memory.gate import NotFound, StateError

    out = []
    for mid in ids:
        rec = _learned(store, tenant, mid)
        if rec is None:
            out.append(_error(mid, "not_found", f"no learned proposal {mid!r}"))
            continue
        try:
            done = gate.reject(tenant, mid, by=by, expected_revision=(revisions or {}).get(mid))
        except NotFound:
            out.append(_error(mid, "not_found", f"no learned proposal {mid!r}"))
            continue
        except (StateError, RevisionConflict) as exc:
            out.append(_error(mid, "conflict", str(exc)))
            continue
        # remembered under the text as proposed and as each session's candidate had it (an edit changed it)
        names = {digest(rec.kind, rec.project, rec.user, rec.statement),
                 *(e["key"] for e in store.learning.evidence(tenant, mid) if e.get("key"))}
        for name in names:
            store.learning.reject(tenant, name, user=rec.user)
        out.append({"memory_id": mid, "status": done.status, "revision": done.revision})
    return out


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
