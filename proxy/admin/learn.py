"""Admin endpoints of learning (bearer token, see ``admin``; the tenant is the caller's).

    GET   /ctx/v1/learn/status                      lease, watermark, last run, counts
    POST  /ctx/v1/learn/run                         {user? | project?, dry_run?} -> the run's report
    GET   /ctx/v1/learn/proposals?user=&project=    proposals with the user's words and evidence
    POST  /ctx/v1/learn/proposals:review            {approve: [ids]} | {reject: [ids]} (, revisions: {id: n})
    POST  /ctx/v1/learn/proposals/{id}/approve      {revision?}
    POST  /ctx/v1/learn/proposals/{id}/reject       {revision?}
    PATCH /ctx/v1/learn/proposals/{id}              {statement, revision?}: new words, still proposed
    GET   /ctx/v1/learn/insights?user=&format=html|markdown|json
    GET   /ctx/v1/learn/export?format=codex|claude|openclaw|hermes&user=&project=  -> {files: {path: text}}

A run is the same as ``ctxproxy learn run``: now, whatever the cooldown,
under the tenant's lease (409 ``busy`` while another worker consolidates).
Another tenant's proposal answers exactly like one that does not exist (404).
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from ..edge.app_state import APP_STATE
from .app import admin_route, tenant_of
from .memory import _body, _by, _error, _json, _outcome, _revision, answering, gate_of, review_routes

EXPORT_FORMATS = ("codex", "claude", "openclaw", "hermes")
MAX_REVIEW = 1000


def learner_of(request: web.Request, store: Any) -> Any:
    """The process's learner (the background job's, when it runs), sharing the memory gate."""
    from ctxproxy.store.services.learning.job import Learner

    services = request.app[APP_STATE].services
    learner = services.learner
    if learner is None or learner.store is not store:
        cfg = services.config
        learner = services.learner = Learner.for_config(store, cfg, services.data_dir or cfg.server.data_dir,
                                                        gate=gate_of(request, store))
    return learner


def _scope_query(request: web.Request) -> dict[str, str]:
    q = request.query
    unknown = sorted(set(q) - {"tenant", "user", "project", "format"})
    if unknown:
        raise _field(unknown[0], "unknown parameter")
    return {k: q[k] for k in ("user", "project") if q.get(k)}


def _field(name: str, message: str) -> Exception:
    from ctxproxy.store.services.memory.fields import FieldError

    return FieldError(name, message)


_answers = answering("learned proposal")


@admin_route("GET", "learn/status")
@_answers
async def status(request: web.Request, store: Any) -> web.Response:
    learner = learner_of(request, store)
    return _json(await asyncio.to_thread(learner.status, tenant_of(request)))


@admin_route("POST", "learn/run")
@_answers
async def run(request: web.Request, store: Any) -> web.Response:
    body = await _body(request)
    tenant = tenant_of(request, body.pop("tenant", None))
    user, project, dry = body.pop("user", None), body.pop("project", None), body.pop("dry_run", False)
    body.pop("all", None)
    if body:
        raise _field(next(iter(body)), "unknown field")
    for name, value in (("user", user), ("project", project)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise _field(name, "expected a non-empty string")
    if user and project:
        raise _field("project", "give user or project, not both")
    if not isinstance(dry, bool):
        raise _field("dry_run", "expected true or false")
    learner = learner_of(request, store)
    report = await asyncio.to_thread(learner.run, tenant, user=user, project=project, dry_run=dry)
    answer = report.to_dict()
    if report.status == "busy":
        return _json({"error": {"status": 409, "type": "busy", "message": report.error}, "report": answer}, 409)
    return _json(answer)


@admin_route("GET", "learn/proposals")
@_answers
async def proposals(request: web.Request, store: Any) -> web.Response:
    from ctxproxy.store.services.learning import review

    tenant = tenant_of(request)
    items = await asyncio.to_thread(review.proposals, store, tenant, **_scope_query(request))
    return _json({"tenant": tenant, "count": len(items), "proposals": items})


def _revisions(value: Any) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                              for k, v in value.items()):
        raise _field("revisions", "expected {memory_id: revision}")
    return value


@admin_route("POST", "learn/proposals:review")
@_answers
async def review_many(request: web.Request, store: Any) -> web.Response:
    from ctxproxy.store.services.learning import review

    body = await _body(request)
    tenant = tenant_of(request, body.pop("tenant", None))
    revisions = _revisions(body.pop("revisions", None))
    actions = {k: body.pop(k) for k in ("approve", "reject") if k in body}
    if body:
        raise _field(next(iter(body)), "unknown field")
    if len(actions) != 1:
        raise _field("body", "give approve: [ids] or reject: [ids]")
    (action, ids), = actions.items()
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise _field(action, "expected a list of memory ids")
    if len(ids) > MAX_REVIEW:
        return _error(413, f"{action}: {len(ids)} ids, at most {MAX_REVIEW} per call", type="invalid_request",
                      field=action)
    learner = learner_of(request, store)
    results = await asyncio.to_thread(getattr(review, action), store, learner.gate, tenant, ids,
                                      by=_by(request), revisions=revisions)
    return _json({"tenant": tenant, "results": results})


async def _one(request: web.Request, store: Any, action: str) -> web.Response:
    from ctxproxy.store.services.learning import review

    body = await _body(request)
    tenant = tenant_of(request, body.pop("tenant", None))
    rev = _revision(body)
    if body:
        raise _field(next(iter(body)), "unknown field")
    mid = request.match_info["id"]
    learner = learner_of(request, store)
    [res] = await asyncio.to_thread(getattr(review, action), store, learner.gate, tenant, [mid], by=_by(request),
                                    revisions={mid: rev} if rev is not None else None)
    err = res.get("error")
    if err is None:
        return _json(res)
    status = {"not_found": 404, "conflict": 409, "memory_blocked": 422}.get(err["type"], 400)
    return _json({"error": {"status": status, **err, **({"reason": res["reason"]} if "reason" in res else {})}},
                 status)


review_routes("learn/proposals", _one, _answers)


@admin_route("PATCH", "learn/proposals/{id}")
@_answers
async def edit(request: web.Request, store: Any) -> web.Response:
    from ctxproxy.store.services.learning import review

    body = await _body(request)
    tenant = tenant_of(request, body.pop("tenant", None))
    rev = _revision(body)
    statement = body.pop("statement", None)
    if body:
        raise _field(next(iter(body)), "unknown field")
    if not isinstance(statement, str) or not statement.strip():
        raise _field("statement", "expected the new words")
    learner = learner_of(request, store)
    out = await asyncio.to_thread(review.edit, store, learner.gate, tenant, request.match_info["id"], statement,
                                  by=_by(request), revision=rev)
    return _outcome(out, 200)


@admin_route("GET", "learn/insights")
@_answers
async def insights(request: web.Request, store: Any) -> web.Response:
    from ctxproxy.store.services.learning import insights as report

    fmt = request.query.get("format", "html")
    if fmt not in ("html", "markdown", "json"):
        raise _field("format", "expected html, markdown or json")
    tenant = tenant_of(request)
    learner = learner_of(request, store)
    cfg = request.app[APP_STATE].config
    data = await asyncio.to_thread(report.gather, store, learner.sessions, tenant,
                                   user=_scope_query(request).get("user"),
                                   snapshot_chars=dict(cfg.memory.gate.snapshot_chars), secrets=learner.gate.secrets)
    if fmt == "json":
        return web.Response(body=orjson.dumps(data), content_type="application/json")
    if fmt == "markdown":
        return web.Response(text=report.markdown(data), content_type="text/markdown", charset="utf-8")
    return web.Response(text=report.html(data), content_type="text/html", charset="utf-8")


@admin_route("GET", "learn/export")
@_answers
async def export(request: web.Request, store: Any) -> web.Response:
    from ctxproxy.store.services.learning.export import approved_files

    fmt = request.query.get("format", "")
    if fmt not in EXPORT_FORMATS:
        raise _field("format", f"expected one of {', '.join(EXPORT_FORMATS)}")
    tenant = tenant_of(request)
    out = await asyncio.to_thread(approved_files, store, tenant, fmt, **_scope_query(request))
    return _json({"tenant": tenant, **out})
