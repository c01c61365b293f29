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

from .app import admin_route, found, required_store, session_of, tenant_of


@admin_route("GET", "pruned/{id}")
async def get_pruned(request: web.Request) -> web.StreamResponse:
    ref = request.match_info["id"]  # by default the original's own tenant
    doc = await found(request, lambda store, tenant: find_pruned(store, ref, tenant, fallback=tenant_of(request)),
                      f"pruned output {ref!r}")
    if request.query.get("format") == "text":
        return web.Response(text=str(doc.data.get("content", "")), content_type="text/plain", charset="utf-8")
    return web.json_response(describe_pruned(doc))


@admin_route("GET", "pruned")
async def list_pruned(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request)
    session = session_of(request, "pruned")
    store = await required_store(request)
    docs = store.pruned.list(tenant, session=session)
    return web.json_response({"tenant": tenant, "session": session,
                              "pruned": [describe_pruned(d, content=False) for d in docs]})
