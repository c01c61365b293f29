"""Admin API for pruned tool outputs (``ctx://pruned/<id>`` references).

    GET /ctx/v1/pruned/{id}[?tenant=T][&format=text]   the original (JSON, or the bare text)
    GET /ctx/v1/pruned?session=S[&tenant=T]             what a session had pruned (no content)

A reference names no tenant: without ``tenant`` an id is found in the tenant
the prune filter recorded for it (an id -> tenant pointer, as manifests have),
or, for originals stored before those pointers, in
``filters.identify.default_tenant``. With ``tenant`` only that tenant's
originals are found; an id of another tenant is simply not found. Listing by
session needs the tenant (default: the default tenant). The bearer-token
check is ``admin.guarded``'s.
"""
from __future__ import annotations

from aiohttp import web

from ctxproxy.store.lookups import describe_pruned, find_pruned

from .app import admin_error, admin_route, required_store, tenant_of


@admin_route("GET", "pruned/{id}")
async def get_pruned(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request, default=False)  # by default the original's own tenant
    store = await required_store(request)
    doc = find_pruned(store, request.match_info["id"], tenant, fallback=tenant_of(request))
    if doc is None:
        where = f" for tenant {tenant!r}" if tenant else ""
        return admin_error(404, f"no pruned output {request.match_info['id']!r}{where}")
    if request.query.get("format") == "text":
        return web.Response(text=str(doc.data.get("content", "")), content_type="text/plain", charset="utf-8")
    return web.json_response(describe_pruned(doc))


@admin_route("GET", "pruned")
async def list_pruned(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request)
    session = request.query.get("session")
    if not session:
        return admin_error(400, "session: required (GET /ctx/v1/pruned?session=ID)")
    store = await required_store(request)
    docs = store.pruned.list(tenant, session=session)
    return web.json_response({"tenant": tenant, "session": session,
                              "pruned": [describe_pruned(d, content=False) for d in docs]})
