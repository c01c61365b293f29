"""Admin endpoints of the effect ledger (bearer token, see ``admin``).

    GET  /ctx/v1/effects?tenant=&session=&task=&state=&side_effect=   list, oldest first
    GET  /ctx/v1/effects/{key}?tenant=                                 a tool gateway's "was this done?"
                                     ({key}: the whole key, or a prefix of 8+ characters one key begins)
    POST /ctx/v1/effects/lookup      {tool, arguments, task|session, tenant}   same, key computed here
    POST /ctx/v1/effects/{key}/resolve {resolution, call_id?, note?, by?, tenant?}   human arbitration

``tenant`` defaults to ``filters.identify.default_tenant``; every call sees one tenant only (the store
keys are tenant-prefixed). ``status`` of a key: ``completed`` if any
occurrence completed (or a human resolved it completed), else ``pending``,
``unknown``, ``failed`` or ``resolved`` — a gateway executes only on 404 or a
status it accepts.
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from ctxproxy.filters.effects.rules import canonical_json, effect_key
from ctxproxy.store.errors import EffectStateError, StoreError
from ctxproxy.store.lookups import KeyPrefixError, full_key, key_answer
from ctxproxy.store.records import EFFECT_STATES, RESOLUTIONS

from .app import admin_error, admin_route, required_store, tenant_of



def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _bool(value: str | None, name: str) -> bool | None:
    if value is None or value == "":
        return None
    if value.lower() in ("1", "true", "yes"):
        return True
    if value.lower() in ("0", "false", "no"):
        return False
    raise ValueError(f"{name} must be true or false, not {value!r}")


async def _body(request: web.Request) -> dict:
    raw = await request.read()
    if not raw:
        return {}
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ValueError("body must be a JSON object")
    return body


@admin_route("GET", "effects")
async def list_effects(request: web.Request) -> web.Response:
    store = await required_store(request)
    q = request.query
    tenant = tenant_of(request)
    try:
        states = [s for s in q.getall("state", []) for s in s.split(",") if s]
        bad = [s for s in states if s not in EFFECT_STATES]
        if bad:
            raise ValueError(f"unknown state {bad[0]!r} (states: {', '.join(EFFECT_STATES)})")
        side = _bool(q.get("side_effect"), "side_effect")
        limit = int(q.get("limit", "1000"))
    except ValueError as exc:
        return admin_error(400, str(exc))
    try:
        records = store.effects.list(tenant, session=q.get("session") or None, task=q.get("task") or None,
                                     state=states or None, side_effect=side)
    except StoreError as exc:
        return admin_error(400, str(exc))
    shown = records[-limit:] if limit > 0 else []
    return _json({"tenant": tenant, "count": len(records), "truncated": len(shown) < len(records),
                  "effects": [r.to_dict() for r in shown]})


@admin_route("GET", "effects/{key}")
async def get_effect(request: web.Request) -> web.Response:
    store = await required_store(request)
    tenant = tenant_of(request)
    try:
        key = await asyncio.to_thread(full_key, store.effects, tenant, request.match_info["key"])
        records = store.effects.by_key(tenant, key)
    except KeyPrefixError as exc:
        return admin_error(400, str(exc), type="ambiguous_key")
    except StoreError as exc:
        return admin_error(400, str(exc))
    if not records:
        return admin_error(404, f"no effect with key {key} for tenant {tenant}")
    return _json(key_answer(tenant, key, records))


@admin_route("POST", "effects/lookup")
async def lookup_effect(request: web.Request) -> web.Response:
    """The key of (tool, arguments) in a task or session, and its records."""
    store = await required_store(request)
    try:
        body = await _body(request)
        tool = body.get("tool")
        scope = body.get("task") or body.get("session")
        if not isinstance(tool, str) or not tool or not isinstance(scope, str) or not scope:
            raise ValueError("give tool, arguments and task (or session)")
        tenant = tenant_of(request, body.get("tenant"))
        # arguments nested past effects.rules.MAX_DEPTH have no key: a ValueError, so a 400
        key = effect_key(tenant, scope, tool, canonical_json(body.get("arguments", {})))
    except ValueError as exc:
        return admin_error(400, str(exc))
    try:
        records = store.effects.by_key(tenant, key)
    except StoreError as exc:
        return admin_error(400, str(exc))
    answer = key_answer(tenant, key, records)
    return _json(answer, 200 if records else 404)


@admin_route("POST", "effects/{key}/resolve")
async def resolve_effect(request: web.Request) -> web.Response:
    store = await required_store(request)
    key = request.match_info["key"]
    try:
        body = await _body(request)
        resolution = body.get("resolution")
        if resolution not in RESOLUTIONS:
            raise ValueError(f"resolution must be one of {', '.join(RESOLUTIONS)}")
        tenant = tenant_of(request, body.get("tenant"))
        for name in ("call_id", "note", "by"):
            if body.get(name) is not None and not isinstance(body[name], str):
                raise ValueError(f"{name} must be a string")
    except ValueError as exc:
        return admin_error(400, str(exc))
    try:
        key = await asyncio.to_thread(full_key, store.effects, tenant, key)
        resolved = await asyncio.to_thread(  # a write with its fsync: not on the event loop
            store.effects.resolve, tenant, key, resolution=resolution, call_id=body.get("call_id"),
            note=body.get("note"), by=body.get("by") or "admin-api")
    except KeyPrefixError as exc:
        return admin_error(400, str(exc), type="ambiguous_key")
    except EffectStateError as exc:
        return admin_error(409, str(exc))
    except StoreError as exc:
        return admin_error(400, str(exc))
    if not resolved:
        return admin_error(404, f"no effect with key {key} for tenant {tenant}")
    return _json({"tenant": tenant, "key": key, "resolved": [r.to_dict() for r in resolved]})
