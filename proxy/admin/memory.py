"""Admin endpoints of durable memory and forgetting (bearer token, see ``admin``).

    POST   /ctx/v1/memories               {statement, kind?, origin?, project?, user?, ...}
                                          -> 201 {memory_id, status, supersedes?, duplicate_of?}
                                          -> 422 {"error": {"type": "memory_blocked", "reason", "message"}}
    POST   /ctx/v1/memories:batch         [ {...}, ... ] (up to 1,000) -> 200 {"results": [...]}
    GET    /ctx/v1/memories?project=&user=&session=&status=&kind=&limit=
    GET    /ctx/v1/memories/{id}          the record and its history (every revision)
    POST   /ctx/v1/memories/{id}/approve  {revision?}
    POST   /ctx/v1/memories/{id}/reject   {revision?}
    PATCH  /ctx/v1/memories/{id}          {revision?, statement?, ...} a new revision, gated again; 409 if stale
    DELETE /ctx/v1/memories/{id}          erase it (a forget receipt)
    POST   /ctx/v1/forget                 {"user"|"session"|"memory"|"project": id, "request_id"?}
    GET    /ctx/v1/forget/{request_id}    the receipt, re-checking that nothing of the subject remains

Bad bodies (not JSON, invalid UTF-8, wrong types, unknown fields, a statement
over the size limit) answer 400 naming the field, and store nothing. Another
tenant's memory answers exactly like one that does not exist (404).
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable

import orjson
from aiohttp import web

from ctxproxy.store import forget as forgetting
from ctxproxy.store.errors import RevisionConflict, StoreError
from ctxproxy.store.memory_records import KINDS, STATUSES

from .app import admin_error, admin_principal, admin_route, required_store, tenant_of

MAX_BATCH = 1000
CREATED_BY = "admin-api"


def _gate_module() -> Any:
    """The memory gate, imported on the first memory call: its threat rules take a
    moment to compile, which a proxy that never writes a memory does not pay at start-up."""
    from ctxproxy.store.services.memory import gate

    return gate


def _bad_field(field: str, message: str) -> Exception:
    """The gate's FieldError (a 400 naming the field)."""
    return _gate_module().FieldError(field, message)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _error(status: int, message: str, **extra: Any) -> web.Response:
    return admin_error(status, message, **extra)


def _field_error(exc: Any) -> web.Response:
    return _error(400, str(exc), type="invalid_request", field=exc.field)


def _not_found(memory_id: str) -> web.Response:
    return _error(404, f"no memory {memory_id!r}", type="not_found")


def _conflict(exc: RevisionConflict) -> web.Response:
    return _error(409, str(exc), type="revision_conflict", current_revision=exc.current)


async def _body(request: web.Request, *, array: bool = False) -> Any:
    raw = await request.read()
    if not raw and not array:
        return {}
    try:
        body = orjson.loads(raw)  # invalid UTF-8 is a decode error too
    except orjson.JSONDecodeError as exc:
        raise _bad_field("body", f"not valid JSON: {exc}") from None
    if array:
        if isinstance(body, dict) and isinstance(body.get("memories"), list):
            body = body["memories"]
        if not isinstance(body, list):
            raise _bad_field("body", "expected a JSON array of memories")
    elif not isinstance(body, dict):
        raise _bad_field("body", "expected a JSON object")
    return body


def gate_of(request: web.Request, store: Any) -> Any:
    from ..edge.app_state import APP_STATE

    services = request.app[APP_STATE].services
    gate = services.memory_gate
    if gate is None or gate.store is not store:
        g = _gate_module()
        gate = services.memory_gate = g.MemoryGate(store, g.GateConfig.from_config(services.config))
    return gate


def _by(request: web.Request) -> str:
    """Who writes: the tenant admin key (``key:<id>``), else the operator's admin API."""
    principal = admin_principal(request)
    key_id = getattr(principal, "key_id", "") if principal is not None else ""
    return f"key:{key_id}" if key_id else CREATED_BY


def _tenant(request: web.Request, body: Any) -> str:
    value = body.pop("tenant", None) if isinstance(body, dict) else None
    return tenant_of(request, value)


def _revision(body: dict) -> int | None:
    rev = body.pop("revision", None)
    if rev is not None and (isinstance(rev, bool) or not isinstance(rev, int) or rev < 0):
        raise _bad_field("revision", "expected the revision number the change is based on")
    return rev


def _outcome(out: Any, created_status: int = 201) -> web.Response:
    if out.refused is not None:
        return _json(out.answer(), 422)
    return _json(out.answer(), created_status)  # a duplicate too: 201 with duplicate_of (the shape)


def answering(missing: str, *, bad_id_is_missing: bool = False) -> Callable[[Any], Any]:
    """The errors every memory and learned-proposal endpoint answers alike: a bad
    field 400, a missing (or another tenant's) ``missing`` 404, a stale revision
    or wrong state 409. ``bad_id_is_missing``: a store error on a call naming an
    id is that id's 404 (a malformed id), on any other call a 400."""

    def wrap(handler: Any) -> Any:
        async def run(request: web.Request) -> web.Response:
            def not_found() -> web.Response:
                return _error(404, f"no {missing} {request.match_info.get('id', '')!r}", type="not_found")

            g = _gate_module()
            try:
                return await handler(request, await required_store(request))
            except g.FieldError as exc:
                return _field_error(exc)
            except g.NotFound:
                return not_found()
            except RevisionConflict as exc:
                return _conflict(exc)
            except g.StateError as exc:
                return _error(409, str(exc), type="invalid_state")
            except StoreError as exc:
                if not bad_id_is_missing:
                    raise
                if "id" in request.match_info:
                    return not_found()
                return _error(400, str(exc), type="invalid_request")

        run.__name__ = handler.__name__
        return run

    return wrap


def review_routes(resource: str, review: Any, answers: Callable[[Any], Any]) -> None:
    """``POST <resource>/{id}/approve`` and ``.../reject``, both ``review(request, store, action)``."""
    for action in ("approve", "reject"):
        async def handler(request: web.Request, store: Any, action: str = action) -> web.Response:
            return await review(request, store, action)

        handler.__name__ = f"{action}_{resource.rsplit('/', 1)[-1]}"
        admin_route("POST", f"{resource}/{{id}}/{action}")(answers(handler))


_answers = answering("memory", bad_id_is_missing=True)


@admin_route("POST", "memories")
@_answers
async def create_memory(request: web.Request, store: Any) -> web.Response:
    body = await _body(request)
    tenant = _tenant(request, body)
    out = await asyncio.to_thread(gate_of(request, store).write, tenant, body, created_by=_by(request))
    return _outcome(out)


@admin_route("POST", "memories:batch")
@_answers
async def create_memories(request: web.Request, store: Any) -> web.Response:
    items = await _body(request, array=True)
    if len(items) > MAX_BATCH:
        return _error(413, f"body: {len(items)} memories, at most {MAX_BATCH} per batch", type="invalid_request",
                      field="body")
    tenant = tenant_of(request)
    for i, item in enumerate(items):  # a record as GET shows it names its tenant: the batch's own
        if isinstance(item, dict) and item.get("tenant", tenant) != tenant:
            raise _bad_field(f"[{i}].tenant", "give the tenant once, as ?tenant= (a batch has one tenant)")
    results = await asyncio.to_thread(gate_of(request, store).write_many, tenant, items, created_by=_by(request))
    out = []
    for i, r in enumerate(results):
        if isinstance(r, Exception):  # the FieldError of a malformed item
            out.append({"code": 400, "error": {"type": "invalid_request", "field": f"[{i}].{r.field}",
                                               "message": f"[{i}].{r}"}})
        else:
            out.append({"code": 422 if r.refused else 201, **r.answer()})
    return _json({"tenant": tenant, "results": out})


@admin_route("GET", "memories")
@_answers
async def list_memories(request: web.Request, store: Any) -> web.Response:
    q = request.query
    tenant = tenant_of(request)
    unknown = sorted(set(q) - {"tenant", "project", "user", "session", "status", "kind", "limit"})
    if unknown:
        return _error(400, f"{unknown[0]}: unknown filter", type="invalid_request", field=unknown[0])
    status, kind = q.get("status") or None, q.get("kind") or None
    if status is not None and status not in STATUSES:
        return _error(400, f"status: expected one of {', '.join(STATUSES)}", type="invalid_request", field="status")
    if kind is not None and kind not in KINDS:
        return _error(400, f"kind: expected one of {', '.join(KINDS)}", type="invalid_request", field="kind")
    try:
        limit = int(q.get("limit", "1000"))
    except ValueError:
        return _error(400, "limit: expected a number", type="invalid_request", field="limit")
    records = await asyncio.to_thread(store.memories.list, tenant, project=_q(q, "project"), user=_q(q, "user"),
                                      session=_q(q, "session"), status=status, kind=kind)
    shown = records[-limit:] if limit > 0 else []
    return _json({"tenant": tenant, "count": len(records), "truncated": len(shown) < len(records),
                  "memories": [r.shown() for r in shown]})


def _q(q: Any, name: str) -> str | None:
    return q[name] if name in q else None  # ?project= (empty) lists the tenant-wide ones


@admin_route("GET", "memories/{id}")
@_answers
async def get_memory(request: web.Request, store: Any) -> web.Response:
    tenant = tenant_of(request)
    mid = request.match_info["id"]
    rec = store.memories.get(tenant, mid)
    if rec is None:
        return _not_found(mid)
    history = store.memories.history(tenant, mid)
    return _json({"memory": rec.shown(), "history": [h.shown() for h in history]})


async def _review(request: web.Request, store: Any, action: str) -> web.Response:
    mid = request.match_info["id"]
    body = await _body(request)
    tenant = _tenant(request, body)
    rev = _revision(body)
    by = body.pop("by", _by(request))
    if not isinstance(by, str) or body:
        raise _bad_field(next(iter(body), "by"), "unknown field" if body else "expected a string")
    gate = gate_of(request, store)
    if action == "approve":
        out = await asyncio.to_thread(gate.approve, tenant, mid, by=by, expected_revision=rev)
        return _outcome(out, 200)
    rec = await asyncio.to_thread(gate.reject, tenant, mid, by=by, expected_revision=rev)
    return _json({"memory_id": rec.memory_id, "status": rec.status, "revision": rec.revision})


review_routes("memories", _review, _answers)


@admin_route("PATCH", "memories/{id}")
@_answers
async def edit_memory(request: web.Request, store: Any) -> web.Response:
    mid = request.match_info["id"]
    body = await _body(request)
    tenant = _tenant(request, body)
    rev = _revision(body)
    if rev is None and request.headers.get("If-Match", "").strip('"').isdigit():
        rev = int(request.headers["If-Match"].strip('"'))
    out = await asyncio.to_thread(gate_of(request, store).edit, tenant, mid, body, expected_revision=rev,
                                  by=_by(request))
    return _outcome(out, 200)


async def _forget(request: web.Request, store: Any, tenant: str, subject: dict, request_id: str | None = None
                  ) -> Any:
    """Erase a subject. What this proxy's turns queued for the store lands first, so
    the erasure covers it (a write landing after it would bring the subject back)."""
    from ..edge.app_state import APP_STATE

    writer = request.app[APP_STATE].services.writer
    if writer is not None:
        await asyncio.to_thread(writer.flush)
    return await asyncio.to_thread(forgetting.forget, store, tenant, subject, request_id=request_id)


@admin_route("DELETE", "memories/{id}")
@_answers
async def delete_memory(request: web.Request, store: Any) -> web.Response:
    tenant = tenant_of(request)
    mid = request.match_info["id"]
    if store.memories.get(tenant, mid) is None:
        return _not_found(mid)
    receipt = await _forget(request, store, tenant, {"memory": mid})
    return _json({"memory_id": mid, "deleted": True, "receipt": receipt.to_dict()})


@admin_route("POST", "forget")
@_answers
async def forget(request: web.Request, store: Any) -> web.Response:
    body = await _body(request)
    tenant = _tenant(request, body)
    rid = body.pop("request_id", None)
    if rid is not None and (not isinstance(rid, str) or not rid.strip() or len(rid) > 200):
        raise _bad_field("request_id", "expected a non-empty string of at most 200 characters")
    forgetting.subject_of(body)  # a bad subject: 400 before anything runs
    try:
        receipt = await _forget(request, store, tenant, body, request_id=rid)
    except StoreError as exc:
        return _error(409 if "already used" in str(exc) else 400, str(exc))
    return _json(receipt.to_dict())


@admin_route("GET", "forget/{request_id}")
@_answers
async def get_forget(request: web.Request, store: Any) -> web.Response:
    rid = request.match_info["request_id"]
    answer = await asyncio.to_thread(forgetting.check, store, tenant_of(request), rid)
    if answer is None:
        return _error(404, f"no erasure receipt {rid!r}", type="not_found")
    return _json(answer)
