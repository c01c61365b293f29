"""Admin API for pruned tool outputs (``ctx://pruned/<id>`` references).

    GET /ctx/v1/pruned/{id}[?tenant=T][&format=text]   the original (JSON, or the bare text)
    GET /ctx/v1/pruned?session=S[&tenant=T]             what a session had pruned (no content)

The tenant defaults to ``filters.identify.default_tenant``. An id of another
tenant is simply not found. The bearer-token check is ``admin.guarded``'s.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web

from ctxproxy.filters.prune import REF_PREFIX

from .admin import admin_error, admin_route, settled_store, tenant_of


def describe(doc: Any, content: bool = True) -> dict[str, Any]:
    """JSON form of a stored original (shared with the CLI)."""
    data = dict(doc.data)
    out = {"id": doc.id, "ref": REF_PREFIX + doc.id, "tenant": doc.tenant, "session": doc.session,
           "created_at": doc.created_at}
    for key in ("call_id", "tool", "tokens", "chars", "sha256", "is_error", "api", "turn_id"):
        out[key] = data.get(key)
    if content:
        out["content"] = data.get("content", "")
    return out


@admin_route("GET", "pruned/{id}")
async def get_pruned(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request)
    store = await settled_store(request)
    if store is None:
        return admin_error(503, "no store is configured")
    pid = request.match_info["id"]
    if pid.startswith(REF_PREFIX):
        pid = pid[len(REF_PREFIX):]
    doc = store.pruned.get(tenant, pid)
    if doc is None:
        return admin_error(404, f"no pruned output {pid!r} for tenant {tenant!r}")
    if request.query.get("format") == "text":
        return web.Response(text=str(doc.data.get("content", "")), content_type="text/plain", charset="utf-8")
    return web.json_response(describe(doc))


@admin_route("GET", "pruned")
async def list_pruned(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request)
    session = request.query.get("session")
    if not session:
        return admin_error(400, "session: required (GET /ctx/v1/pruned?session=ID)")
    store = await settled_store(request)
    if store is None:
        return admin_error(503, "no store is configured")
    docs = store.pruned.list(tenant, session=session)
    return web.json_response({"tenant": tenant, "session": session,
                              "pruned": [describe(d, content=False) for d in docs]})
