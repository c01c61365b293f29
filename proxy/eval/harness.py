"""Where an eval set's sessions go: a real ctxproxy in front of the scripted provider
(in this process, or ``ctxproxy serve`` as a child process: ``child``), or the
scripted provider directly (the no-proxy baseline).

    async with target("ctxproxy", cfg_path, data_dir, rules_dir) as t:
        await t.admin("POST", "memories", {...}, tenant="acme")
        status, body = await t.post("/v1/messages", body, headers)
        await t.settle()                 # the proxy's after-the-turn writes are on disk
        t.fake.model_requests[-1].json   # what the provider received

Everything is on 127.0.0.1; the provider needs no key and makes no call out.
"""
from __future__ import annotations

import os
import secrets
import tempfile
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import aiohttp
import orjson

from ..scripted_provider import FakeProvider

TARGETS = ("ctxproxy", "direct")  # the configuration under test, and the same sessions with no proxy


@dataclass
class Target:
    name: str
    url: str  # where model requests go
    fake: FakeProvider
    http: aiohttp.ClientSession
    proxied: bool = False  # False: direct to the provider
    token: str = ""
    keys_mode: bool = False  # auth.mode = "keys": each principal calls with its own proxy key
    flush: Callable[[], Awaitable[None]] | None = None  # commits the proxy's queued background writes
    _keys: dict = field(default_factory=dict)

    async def post(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        async with self.http.post(self.url + path, data=orjson.dumps(body),
                                  headers={"content-type": "application/json", **headers}) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw)
            except orjson.JSONDecodeError:
                return resp.status, raw

    async def admin(self, method: str, path: str, body: Any = None, tenant: str | None = None,
                    query: dict[str, str] | None = None) -> tuple[int, Any]:
        """An admin API call (``/ctx/v1/<path>``) as the operator; direct: (0, None), there is no proxy."""
        if not self.proxied:
            return 0, None
        params = {**({"tenant": tenant} if tenant else {}), **(query or {})} or None
        async with self.http.request(method, f"{self.url}/ctx/v1/{path}", params=params,
                                     data=None if body is None else orjson.dumps(body),
                                     headers={"Authorization": f"Bearer {self.token}",
                                              "content-type": "application/json"}) as resp:
            raw = await resp.read()
            return resp.status, orjson.loads(raw) if raw else None

    async def identity_headers(self, who: dict[str, str]) -> dict[str, str]:
        """The headers a principal calls with: ``X-Ctx-*`` hints, and in keys mode its own
        proxy key (created once per tenant and user through the admin API) instead of the
        tenant and user hints."""
        from .spec import headers

        if not self.keys_mode:
            return headers(who)
        tenant, user = who.get("tenant") or "default", who.get("user") or ""
        if (tenant, user) not in self._keys:
            status, body = await self.admin("POST", "keys", {"tenant": tenant, "user": user})
            if status != 201:
                raise RuntimeError(f"creating a proxy key for {tenant}/{user}: {status} {body}")
            self._keys[tenant, user] = body["key"]
        rest = {k: v for k, v in who.items() if k not in ("tenant", "user")}
        return {**headers(rest), "X-Ctx-Key": self._keys[tenant, user]}

    async def settle(self) -> None:
        """The proxy's after-the-turn writes (session index, manifests) are committed."""
        if self.flush is not None:
            await self.flush()


def eval_filters(cfg: Any, rules_dir: Path | None, cache_dir: Path | None) -> dict:
    """The configuration's filter sections as the eval runs them. When the set brings rule
    files and the configuration lists none, the rules bundle reads them from ``rules_dir``
    (the configuration's own rules are kept otherwise). ``cache_dir``: where the compiled
    redaction rules are cached when the configuration names no place, shared by every proxy
    of one eval run (compiling them is most of a proxy's start-up)."""
    filters = dict(cfg.filters)
    redact = filters.get("redact") or {}
    if cache_dir is not None and not redact.get("cache_dir"):
        filters["redact"] = {**redact, "cache_dir": str(cache_dir)}
    if rules_dir is not None:
        inject = dict(filters.get("inject") or {})
        rules = dict(inject.get("rules") or {})
        if not any(rules.get(layer) for layer in ("managed", "task", "project", "local")):
            rules.update(root=str(rules_dir), project=["AGENTS.md", "**/AGENTS.md"], refresh_seconds=0)
            inject["rules"] = rules
            filters["inject"] = inject
    return filters


def eval_config(config: str | os.PathLike | None, data_dir: Path, upstream: str, rules_dir: Path | None,
                cache_dir: Path | None = None) -> Any:
    """The configuration under test, pointed at the scripted provider and a fresh data dir,
    with ``eval_filters`` and a generated admin token."""
    from ctxproxy.config import load_config

    cfg = load_config(config, port=0, data_dir=str(data_dir), anthropic_upstream=upstream,
                      openai_upstream=upstream, shutdown_timeout=1.0)
    return replace(cfg, server=replace(cfg.server, admin_token=admin_token()),
                   filters=eval_filters(cfg, rules_dir, cache_dir))


_CACHE: list[tempfile.TemporaryDirectory] = []


def shared_cache_dir() -> Path:
    """A directory for the compiled redaction rules, one per process (removed at exit): every
    proxy the process runs, in it or as a child, finds the rules compiled once."""
    if not _CACHE:
        _CACHE.append(tempfile.TemporaryDirectory(prefix="ctxproxy-eval-cache-"))
    return Path(_CACHE[0].name)


def admin_token() -> str:
    return "eval-" + secrets.token_hex(16)


@asynccontextmanager
async def target(name: str, config: str | os.PathLike | None, data_dir: Path, rules_dir: Path | None = None,
                 cache_dir: Path | None = None, child: bool = False) -> AsyncIterator[Target]:
    """A fresh scripted provider and, for ``ctxproxy``, a fresh proxy over ``data_dir``: in this
    process, or with ``child`` ``ctxproxy serve`` in a child process (``eval.child``)."""
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    async with FakeProvider(record_limit=None) as fake, aiohttp.ClientSession() as http:
        if name == "direct":
            yield Target(name, fake.url, fake, http)
        elif child:
            from .child import serve

            async with serve(config, data_dir, fake.url, rules_dir, cache_dir) as proc:
                t = Target(name, proc.url, fake, http, True, proc.token, proc.keys_mode)
                t.flush = lambda: _settle_over_http(t)
                yield t
        else:
            async with _in_process(config, data_dir, fake.url, rules_dir, cache_dir) as (url, cfg, writer):
                yield Target(name, url, fake, http, True, cfg.server.admin_token, cfg.auth.mode == "keys",
                             _flusher(writer))


@asynccontextmanager
async def _in_process(config: Any, data_dir: Path, upstream: str, rules_dir: Path | None,
                      cache_dir: Path | None) -> AsyncIterator[tuple[str, Any, Any]]:
    """``make_app`` with the configuration under test on 127.0.0.1: (url, config, store writer)."""
    from aiohttp import web

    from ..edge.server import APP_STATE, make_app

    cfg = eval_config(config, data_dir, upstream, rules_dir, cache_dir)
    app = make_app(cfg)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}", cfg, app[APP_STATE].services.writer
    finally:
        await runner.cleanup()


def _flusher(writer: Any) -> Callable[[], Awaitable[None]] | None:
    if writer is None:
        return None

    async def flush() -> None:
        writer.flush()
    return flush


async def _settle_over_http(t: Target) -> None:
    """A child's queued writes land before any admin read answers (``admin.settled_store``):
    one read that finds nothing is the settle."""
    status, body = await t.admin("GET", "memories", tenant="ctxproxy-eval-settle", query={"limit": "0"})
    if status != 200:
        raise RuntimeError(f"settling the child proxy's writes: the admin API answered {status} {body}")
