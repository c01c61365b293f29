"""Admin API for Context Manifests (what the model saw, per turn).

    GET /ctx/v1/manifests/{turn_id}[?tenant=T]             one turn (id from X-Ctx-Turn-Id)
    GET /ctx/v1/manifests?session=S[&tenant=T][&limit=N]   a session's turns, oldest first

A turn id is found without its tenant (the manifest filter keeps a turn ->
tenant pointer; a turn of the ``default`` tenant needs none, and is looked up
there); ``tenant`` restricts the lookup to that tenant. Listing by
session needs the tenant, default ``filters.identify.default_tenant``.
Manifests hold refs, labels, counts and timings, never content. The
bearer-token check is ``admin.guarded``'s.
"""
from __future__ import annotations

from aiohttp import web

from ctxproxy.store.lookups import MAX_MANIFESTS, find_manifest, list_manifests

from .app import admin_error, admin_route, found, required_store, session_of, tenant_of


@admin_route("GET", "manifests/{turn_id}")
async def get_manifest(request: web.Request) -> web.StreamResponse:
    turn_id = request.match_info["turn_id"]  # by default the turn's own tenant
    doc = await found(request, lambda store, tenant: find_manifest(store, turn_id, tenant),
                      f"manifest for turn {turn_id!r}")
    return web.json_response(dict(doc.data))


@admin_route("GET", "manifests")
async def get_manifests(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request)
    session = session_of(request, "manifests")
    try:
        limit = int(request.query.get("limit", MAX_MANIFESTS))
    except ValueError:
        return admin_error(400, "limit: expected an integer")
    if not 1 <= limit <= MAX_MANIFESTS:
        return admin_error(400, f"limit: expected 1..{MAX_MANIFESTS}")
    store = await required_store(request)
    manifests = list_manifests(store, tenant, session, limit)
    return web.json_response({"tenant": tenant, "session": session, "count": len(manifests),
                              "manifests": manifests})
