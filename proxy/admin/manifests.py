"""Admin API for Context Manifests (what the model saw, per turn).

    GET /ctx/v1/manifests/{turn_id}[?tenant=T]             one turn (id from X-Ctx-Turn-Id)
    GET /ctx/v1/manifests?session=S[&tenant=T][&limit=N]   a session's turns, oldest first

A turn id is found without its tenant (the manifest filter keeps a turn ->
tenant pointer); ``tenant`` restricts the lookup to that tenant. Listing by
session needs the tenant, default ``filters.identify.default_tenant``.
Manifests hold refs, labels, counts and timings, never content. The
bearer-token check is ``admin.guarded``'s.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web

from ctxproxy.filters.manifest.filter import TURN_INDEX_TENANT

from .app import admin_error, admin_route, required_store, tenant_of

MAX_LIST = 1000


def pointed_tenant(docs: Any, index_tenant: str, id: str) -> str | None:
    """The tenant an id -> tenant pointer in ``index_tenant`` names, or None.
    Only filters write these pointers; one naming an index tenant is ignored."""
    pointer = docs.get(index_tenant, id)
    tenant = pointer.data.get("tenant") if pointer is not None else None
    return tenant if isinstance(tenant, str) and tenant and not tenant.startswith("#") else None


def find_manifest(store: Any, turn_id: str, tenant: str | None = None) -> Any:
    """The stored manifest of ``turn_id`` (a ``StoredDoc``) or None; shared with the CLI."""
    if tenant is None:
        tenant = pointed_tenant(store.manifests, TURN_INDEX_TENANT, turn_id)
        if tenant is None:
            return None
    return store.manifests.get(tenant, turn_id)


def list_manifests(store: Any, tenant: str, session: str, limit: int = MAX_LIST) -> list[dict]:
    docs = store.manifests.list(tenant, session=session)
    return [dict(d.data) for d in docs[-limit:]] if limit > 0 else []


@admin_route("GET", "manifests/{turn_id}")
async def get_manifest(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request, default=False)  # by default the turn's own tenant
    store = await required_store(request)
    turn_id = request.match_info["turn_id"]
    doc = find_manifest(store, turn_id, tenant)
    if doc is None:
        where = f" for tenant {tenant!r}" if tenant else ""
        return admin_error(404, f"no manifest for turn {turn_id!r}{where}")
    return web.json_response(dict(doc.data))


@admin_route("GET", "manifests")
async def get_manifests(request: web.Request) -> web.StreamResponse:
    tenant = tenant_of(request)
    session = request.query.get("session")
    if not session:
        return admin_error(400, "session: required (GET /ctx/v1/manifests?session=ID)")
    try:
        limit = int(request.query.get("limit", MAX_LIST))
    except ValueError:
        return admin_error(400, "limit: expected an integer")
    if not 1 <= limit <= MAX_LIST:
        return admin_error(400, f"limit: expected 1..{MAX_LIST}")
    store = await required_store(request)
    manifests = list_manifests(store, tenant, session, limit)
    return web.json_response({"tenant": tenant, "session": session, "count": len(manifests),
                              "manifests": manifests})
