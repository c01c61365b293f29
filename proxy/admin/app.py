"""The admin API under ``/ctx/v1/``: bearer token, loopback-only by default.

Other parts register their endpoints with ``admin_route``; the auth check is
applied here once, so no endpoint can forget it.

Two kinds of bearer: the operator token (``server.admin_token``) sees every
tenant; a tenant admin key (a proxy key made with ``--admin``) sees only its
own. ``tenant_of`` is the one place an endpoint learns its tenant. For a
tenant admin it is always the key's: another tenant's object is looked up in
the caller's tenant and answers exactly as an id that never existed, and a
call that names another tenant (``?tenant=`` or the body's ``tenant``) is
refused with 403 before anything runs — whether that tenant exists or not,
so the answer tells nothing about it, and an operator never reads a receipt
or a new key for work done somewhere else than asked.
"""
from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
from typing import Any, Awaitable, Callable

from aiohttp import web

from ..edge.app_state import APP_STATE

log = logging.getLogger("ctxproxy.admin")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ADMIN_PREFIX = "/ctx/v1/"
SETTLE_TIMEOUT = 10.0  # seconds an admin call waits for this process's queued writes
_routes: list[tuple[str, str, Handler]] = []


def admin_route(method: str, path: str):
    """Register ``handler`` at ``/ctx/v1/<path>`` (decorator)."""

    def register(handler: Handler) -> Handler:
        _routes.append((method, ADMIN_PREFIX + path.lstrip("/"), handler))
        return handler

    return register


async def settled_store(request: web.Request):
    """The store, after this process's queued background writes landed, so
    an admin read right after a turn sees that turn's records."""
    services = request.app[APP_STATE].services
    writer = services.writer
    if writer is not None:
        try:
            await asyncio.to_thread(writer.flush, SETTLE_TIMEOUT)
        except TimeoutError as exc:  # the store is busy, not broken: the caller may retry
            raise AdminUnavailable(f"the store is busy: {exc}; try again") from None
    return services.store


async def required_store(request: web.Request):
    """``settled_store`` for an endpoint that cannot answer without a store: a
    proxy run without one answers 503 "no store is configured" (JSON admin
    error, no Retry-After: waiting does not help). Every store-backed endpoint
    starts with ``store = await required_store(request)``."""
    store = await settled_store(request)
    if store is None:
        raise AdminNoStore("no store is configured")
    return store


# An admin error's ``type`` by its status, unless the endpoint names a narrower one
# (``revision_conflict``, ``memory_blocked``): what a caller branches on.
ERROR_TYPES = {400: "invalid_request", 401: "unauthenticated", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "request_too_large", 422: "unprocessable",
               429: "rate_limited", 500: "internal_error", 503: "unavailable"}


def error_body(status: int, message: str, type: str | None = None, **extra: Any) -> dict:
    """Every admin error: ``{"error": {"type", "status", "message", ...}}``."""
    etype = type or ERROR_TYPES.get(status) or ("internal_error" if status >= 500 else "invalid_request")
    return {"error": {"type": etype, "status": status, "message": message, **extra}}


def admin_error(status: int, message: str, *, type: str | None = None, headers: Any = None,
                **extra: Any) -> web.Response:
    return web.json_response(error_body(status, message, type, **extra), status=status, headers=headers)


class _AdminHTTPError(web.HTTPException):
    """Raised from a handler: answered as an admin error (JSON) with the class's status."""

    def __init__(self, message: str, **kw: Any):
        super().__init__(text=json.dumps(error_body(self.status_code, message)), content_type="application/json",
                         **kw)


class AdminBadRequest(_AdminHTTPError, web.HTTPBadRequest):
    """A 400 admin error."""


class AdminUnavailable(_AdminHTTPError, web.HTTPServiceUnavailable):
    """A 503 admin error: the store could not be settled in time."""

    def __init__(self, message: str):
        super().__init__(message, headers={"Retry-After": "1"})


class AdminNoStore(_AdminHTTPError, web.HTTPServiceUnavailable):
    """A 503 admin error: this proxy runs without a store."""


class AdminForbidden(_AdminHTTPError, web.HTTPForbidden):
    """A 403 admin error: the credentials do not reach what the call names."""


class AdminNotFound(_AdminHTTPError, web.HTTPNotFound):
    """A 404 admin error."""


async def found(request: web.Request, find: Callable[[Any, str | None], Any], what: str) -> Any:
    """What ``find(store, tenant)`` finds for a call naming one object by id:
    ``tenant`` is ``?tenant=`` or None (the object's own tenant); not found is
    a 404 naming ``what`` (and the tenant, when the call named one)."""
    tenant = tenant_of(request, default=False)
    store = await required_store(request)
    doc = find(store, tenant)
    if doc is None:
        raise AdminNotFound(f"no {what}" + (f" for tenant {tenant!r}" if tenant else ""))
    return doc


def session_of(request: web.Request, resource: str) -> str:
    """``?session=`` of a listing by session (``GET /ctx/v1/<resource>?session=ID``), required."""
    session = request.query.get("session")
    if not session:
        raise AdminBadRequest(f"session: required (GET /ctx/v1/{resource}?session=ID)")
    return session


def admin_principal(request: web.Request) -> Any:
    """The tenant admin key's principal behind this call; None for the operator."""
    return request.get(_PRINCIPAL)


def tenant_of(request: web.Request, value: Any = None, default: bool = True) -> str | None:
    """The tenant an admin call is about: ``value`` (from a JSON body) or
    ``?tenant=``, else the default tenant (``default=False``: None, "any
    tenant"). A tenant admin key: its own tenant, and naming any other one is
    a 403 (raised here, before the endpoint does anything). The operator:
    the body and the query naming two tenants is a 400, a malformed id too.
    Every admin call sees one tenant."""
    from ctxproxy.filters.identify import TENANT_OK, default_tenant

    named = [t for t in (value, request.query.get("tenant")) if t is not None and t != ""]
    principal = request.get(_PRINCIPAL)
    if principal is not None:
        if any(t != principal.tenant for t in named):
            raise AdminForbidden("this admin key acts for its own tenant only: the call names another "
                                 "tenant (?tenant= or the body's tenant), so nothing was done")
        return principal.tenant
    if len(named) == 2 and named[0] != named[1]:
        raise AdminBadRequest("tenant: the body and ?tenant= name different tenants")
    tenant = named[0] if named else None
    if tenant is None:
        return default_tenant(request.app[APP_STATE].config) if default else None
    if not isinstance(tenant, str) or not TENANT_OK.match(tenant):
        raise AdminBadRequest("tenant: expected letters, digits, '.', '_' or '-'")
    return tenant


def _is_loopback(request: web.Request) -> bool:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    if not peer:
        return False
    try:
        return ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


_PRINCIPAL = web.RequestKey("ctxproxy_admin_principal", object)  # the tenant admin key's principal
_REST = web.AppKey("ctxproxy_admin_rest", object)  # the catch-all resource under ADMIN_PREFIX


def guarded(handler: Handler, token: Callable[[], str], loopback_only: bool) -> Handler:
    async def check(request: web.Request) -> web.StreamResponse:
        from ctxproxy.store import KEY_PREFIX

        from ..auth import KeyRefusal, peer_of
        if loopback_only and not _is_loopback(request):
            return admin_error(403, "admin API answers loopback clients only (server.admin_loopback_only)")
        auth = request.headers.get("authorization", "")
        given = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if given.startswith(KEY_PREFIX):  # a tenant admin key
            principal = request.app[APP_STATE].keyring.admin(given, peer_of(request.transport))
            if isinstance(principal, KeyRefusal):
                return admin_error(principal.status, principal.message)
            request[_PRINCIPAL] = principal
            return await answered(handler, request)
        expected = token()
        if not expected:
            return admin_error(403, "admin API is disabled: set server.admin_token or CTXPROXY_ADMIN_TOKEN")
        if not given:
            return admin_error(401, "missing bearer token")
        if not hmac.compare_digest(given.encode(), expected.encode()):
            return admin_error(403, "wrong admin token")
        return await answered(handler, request)

    return check


async def answered(handler: Handler, request: web.Request) -> web.StreamResponse:
    """``handler``'s answer, and every error it raises as an admin error (JSON):
    aiohttp's own (a body over ``server.max_body_bytes`` is its 413, text/plain
    otherwise) and an unexpected failure (500, logged) too."""
    try:
        return await handler(request)
    except _AdminHTTPError:
        raise
    except web.HTTPRequestEntityTooLarge:
        limit = request.app[APP_STATE].config.server.max_body_bytes
        return admin_error(413, f"body: larger than server.max_body_bytes ({limit} bytes)")
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return admin_error(exc.status, exc.text or exc.reason)
    except Exception:
        log.exception("admin %s %s failed", request.method, request.path)
        return admin_error(500, "the admin call failed (the server log has the details)")


def add_admin_routes(app: web.Application, token: Callable[[], str], loopback_only: bool) -> None:
    for method, path, handler in _routes:
        app.router.add_route(method, path, guarded(handler, token, loopback_only))
    rest = app.router.add_route("*", ADMIN_PREFIX + "{tail:.*}", guarded(_unrouted, token, loopback_only))
    app[_REST] = rest.resource


async def _unrouted(request: web.Request) -> web.Response:
    """No admin endpoint has this method and path: 405 with ``Allow`` when the
    path is an endpoint's under another method, else 404."""
    allowed: set[str] = set()
    rest = request.app[_REST]
    for resource in request.app.router.resources():
        if resource is rest or not resource.canonical.startswith(ADMIN_PREFIX):
            continue
        _, methods = await resource.resolve(request)
        allowed |= methods
    if allowed:
        allow = ", ".join(sorted(allowed))
        return admin_error(405, f"{request.method} {request.path}: method not allowed (allowed: {allow})",
                           headers={"Allow": allow})
    return admin_error(404, f"no admin endpoint {request.method} {request.path}")


@admin_route("GET", "status")
async def status(request: web.Request) -> web.Response:
    st = request.app[APP_STATE]
    if admin_principal(request) is not None:  # a tenant admin: nothing about the deployment or other tenants
        return web.json_response({"version": st.version, "tenant": tenant_of(request)})
    return web.json_response({
        "version": st.version,
        "pid": st.pid,
        "config": st.config.source,
        "routes": {name: {"api": r.config.api, "prefix": r.config.prefix, "upstream": r.upstream,
                          "filters": list(st.relay.pipelines[name].names)} for name, r in st.routes.items()},
        "auth": {"mode": st.config.auth.mode, "refused": dict(st.keyring.refused)},
    })
