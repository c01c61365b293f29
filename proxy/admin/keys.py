"""Admin API for proxy keys (bearer token, see ``admin``).

    GET    /ctx/v1/keys[?tenant=T]     keys and their principals, never a secret
    POST   /ctx/v1/keys  {tenant, user?, projects?, purposes?, routes?, admin?, expires_days?}
                                       a new key: its id and the key, shown this once
    DELETE /ctx/v1/keys/{id}           revoke (takes effect on every worker's next request)

The operator sees every tenant's keys (``?tenant=`` narrows the list); a
tenant admin key only its tenant's, and another tenant's key id is answered
as one that does not exist.
"""
from __future__ import annotations

import asyncio
import time

import orjson
from aiohttp import web

from .app import admin_error, admin_route, required_store, tenant_of
from ..auth import issue_key


def _json(data: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


@admin_route("GET", "keys")
async def list_keys(request: web.Request) -> web.Response:
    tenant = tenant_of(request, default=False)  # the operator without ?tenant=: every tenant
    store = await required_store(request)
    now = time.time()
    return _json({"tenant": tenant, "keys": [k.to_dict(now) for k in store.proxy_keys.list(tenant)]})


@admin_route("POST", "keys")
async def create_key(request: web.Request) -> web.Response:
    from ..edge.app_state import APP_STATE

    store = await required_store(request)
    try:
        body = orjson.loads(await request.read() or b"{}")
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        tenant = tenant_of(request, body.get("tenant"))
        fields = {name: body.get(name, default) for name, default in
                  (("user", ""), ("projects", ()), ("purposes", ()), ("routes", ()), ("admin", False),
                   ("expires_days", None))}
        if not isinstance(fields["admin"], bool) or not isinstance(fields["user"], str):
            raise ValueError("admin must be true or false, user a string")
        created = await asyncio.to_thread(issue_key, store, request.app[APP_STATE].config, tenant, **fields)
    except orjson.JSONDecodeError as exc:
        return admin_error(400, f"body is not valid JSON: {exc}")
    except ValueError as exc:
        return admin_error(400, str(exc))
    return _json(created, 201)


@admin_route("DELETE", "keys/{id}")
async def revoke_key(request: web.Request) -> web.Response:
    tenant = tenant_of(request, default=False)
    store = await required_store(request)
    key_id = request.match_info["id"]
    revoked = await asyncio.to_thread(store.proxy_keys.revoke, key_id, tenant)
    if revoked is None:
        return admin_error(404, f"no proxy key {key_id!r}")
    return _json(revoked.to_dict(time.time()))
