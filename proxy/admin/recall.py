"""Admin endpoints of recall (bearer token, see ``admin``).

    POST /ctx/v1/recall {"query", "user"?, "project"?, "session"?, "purpose"?, "k"?, "as_of"?,
                         "max_sensitivity"?}
         -> {"items": [{"memory_id", "external_id", "score", "source", "observed_at", "statement", ...}]}
    GET  /ctx/v1/sessions/search?q=...&session=S | &user=U [&purpose=&limit=]
         -> {"hits": [{"session", "turn_id", "role", "score", "observed_at", "text"}]}

The tenant comes from the credentials (``tenant_of``); what is answered is
what the recall filter would inject for that principal (same ranking, same
visibility). A principal that does not exist gets ``{"items": []}``, like
one with nothing relevant.
"""
from __future__ import annotations

import asyncio

import orjson
from aiohttp import web

from ctxproxy.store.services.recall.queries import QueryError, recall_items, session_hits
from ctxproxy.store.services.recall.services import recall_services

from .app import admin_error, admin_route, required_store, tenant_of


def _json(data, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _bad(exc: QueryError) -> web.Response:
    return admin_error(400, str(exc), field=exc.field)


def _recall_config(request: web.Request):
    """The recall filter's ranking and excluded kinds, as configured."""
    from ctxproxy.filters import filter_configs

    from ..edge.app_state import APP_STATE

    cfg = request.app[APP_STATE].config
    rc = filter_configs(cfg).get("recall")
    return (rc.rank, tuple(rc.exclude_kinds)) if rc is not None else (None, ())


@admin_route("POST", "recall")
async def recall(request: web.Request) -> web.Response:
    from ..edge.app_state import APP_STATE

    store = await required_store(request)
    raw = await request.read()
    try:
        body = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return _bad(QueryError("body", "not valid JSON"))
    if not isinstance(body, dict):
        return _bad(QueryError("body", "expected a JSON object"))
    tenant = tenant_of(request, body.pop("tenant", None))
    rs = recall_services(request.app[APP_STATE].services)
    if rs is None or store is None:
        return _json({"items": []})
    rank, exclude = _recall_config(request)
    try:
        out = await asyncio.to_thread(recall_items, rs, tenant, body, rank, exclude)
    except QueryError as exc:
        return _bad(exc)
    return _json(out)


@admin_route("GET", "sessions/search")
async def sessions_search(request: web.Request) -> web.Response:
    from ..edge.app_state import APP_STATE

    await required_store(request)
    tenant = tenant_of(request)
    q = request.query
    try:
        limit = int(q.get("limit", "20"))
    except ValueError:
        return _bad(QueryError("limit", "expected an integer"))
    rs = recall_services(request.app[APP_STATE].services)
    try:
        out = await asyncio.to_thread(session_hits, rs, tenant, q.get("q", ""), session=q.get("session", ""),
                                      user=q.get("user", ""), purpose=q.get("purpose", ""), limit=limit)
    except QueryError as exc:
        return _bad(exc)
    return _json(out)
