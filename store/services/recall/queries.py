"""Recall and session search as the admin API and the CLI ask for them.

Both take the tenant from the caller's credentials (the admin API's
``tenant_of``, the CLI's ``--tenant``) and the rest as the request names it;
an unknown user or session simply sees nothing (no error tells it apart
from a session that exists for someone else).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ctxproxy.store.memory_records import SENSITIVITIES
from ctxproxy.store.memory_terms import query_terms
from ctxproxy.store.sqlite_index import Viewer

from .rank import RankConfig
from .query import substrings_of
from .services import RecallServices

MAX_K = 50
SEARCH_FLOOR = 0.05  # a session search hit holds at least this share of the query (BM25 over its ceiling)


class QueryError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


def _text(value: Any, name: str, required: bool = False, limit: int = 256) -> str:
    if value is None or value == "":
        if required:
            raise QueryError(name, "required")
        return ""
    if not isinstance(value, str) or len(value) > limit:
        raise QueryError(name, f"expected a string of at most {limit} characters")
    return value


def recall_items(rs: RecallServices, tenant: str, params: dict, rank: RankConfig | None = None,
                 exclude_kinds: tuple[str, ...] = ()) -> dict:
    """``{"items": [...]}``: what the filter would inject for this principal."""
    unknown = set(params) - {"query", "user", "project", "session", "purpose", "k", "as_of", "max_sensitivity",
                             "parent_session"}
    if unknown:
        raise QueryError(sorted(unknown)[0], "unknown field")
    query = _text(params.get("query"), "query", required=True, limit=20000)
    user = _text(params.get("user"), "user")
    project = _text(params.get("project"), "project")
    session = _text(params.get("session"), "session")
    purpose = _text(params.get("purpose"), "purpose")
    parent = _text(params.get("parent_session"), "parent_session")
    ceiling = params.get("max_sensitivity", "internal")
    if ceiling not in SENSITIVITIES:
        raise QueryError("max_sensitivity", f"expected one of {', '.join(SENSITIVITIES)}")
    k = params.get("k", 8)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise QueryError("k", f"expected an integer 1..{MAX_K}")
    as_of = params.get("as_of")
    if as_of is not None:
        as_of = _when(as_of)
    tree = rs.sessions.tree(tenant, session, user, parent) if session else ()
    viewer = Viewer(tenant=tenant, user=user, project=project, purpose=purpose, sessions=tree, ceiling=ceiling)
    others = tuple(s for s in tree if s != session)
    found = rs.recaller(rank).recall(viewer, query, k=k, as_of=as_of, sessions=others,
                                     exclude_kinds=exclude_kinds)
    return {"items": [item(s) for s in found.items]}


def item(s: Any) -> dict:
    c = s.cand
    return {"memory_id": c.memory_id, "external_id": c.external_id, "score": round(s.score, 4),
            "parts": s.parts(), "kind": c.kind, "scope": c.scope,
            "source": c.evidence_ref if c.source == "session" else "memory",
            "observed_at": iso(c.observed_at), "confidence": c.confidence, "statement": c.statement}


def session_hits(rs: RecallServices, tenant: str, query: str, *, session: str = "", user: str = "",
                 purpose: str = "", limit: int = 20, widen: str = "tree") -> dict:
    """Session-index hits: within ``session``'s tree (its recorded user), or
    every session of ``user``."""
    query = _text(query, "q", required=True, limit=20000)
    if not session and not user:
        raise QueryError("session", "name a session or a user")
    if not 1 <= limit <= 200:
        raise QueryError("limit", "expected 1..200")
    if session:
        owner = rs.sessions.owner(tenant, session)
        if owner is None or (user and owner != user):
            return {"hits": []}
        viewer = Viewer(tenant=tenant, user=owner, purpose=purpose)
        sessions = rs.sessions.visible_sessions(viewer, session, widen)
    else:
        viewer = Viewer(tenant=tenant, user=user, purpose=purpose)
        sessions = rs.sessions.sessions_of(tenant, user)
    found, stats = rs.sessions.search(viewer, query_terms(query), substrings_of(query), sessions=sessions)
    from . import rank as ranking

    cfg = RankConfig(context_weight=0.0)
    scored = ranking.score(found, {w: 1.0 for w in query_terms(query)}, substrings_of(query), stats.docs,
                           stats.avg_terms, datetime.now(timezone.utc).timestamp(), cfg)
    scored = [s for s in scored if s.relevance >= SEARCH_FLOOR]
    scored.sort(key=lambda s: (-s.score, s.cand.memory_id))
    return {"hits": [{"session": s.cand.session, "turn_id": s.cand.memory_id.split(":")[1],
                      "role": s.cand.origin, "score": round(s.score, 4), "observed_at": iso(s.cand.observed_at),
                      "text": s.cand.statement} for s in scored[:limit]]}


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else ""


def _when(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise QueryError("as_of", "expected epoch seconds or an ISO 8601 time") from None
        return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
    raise QueryError("as_of", "expected epoch seconds or an ISO 8601 time")
