"""Where an eval set's sessions go: a real ctxproxy in this process in front of the
scripted provider, or the scripted provider directly (the no-proxy baseline).

    async with target("ctxproxy", cfg_path, data_dir, rules_dir) as t:
        await t.admin("POST", "memories", {...}, tenant="acme")
        status, body = await t.post("/v1/messages", body, headers)
        t.settle()                       # the proxy's after-the-turn writes are on disk
        t.fake.model_requests[-1].json   # what the provider received

Everything is on 127.0.0.1; the provider needs no key and makes no call out.
"""
from __future__ import annotations

import os
import secrets
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, AsyncIterator

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
    app: Any = None  # the proxy's aiohttp app (None: direct)
    token: str = ""
    keys_mode: bool = False  # auth.mode = "keys": each principal calls with its own proxy key
    _keys: dict = field(default_factory=dict)

    @property
    def proxied(self) -> bool:
        return self.app is not None

    async def post(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        async with self.http.post(self.url + path, data=orjson.dumps(body),
                                  headers={"content-type": "application/json", **headers}) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw)
            except orjson.JSONDecodeError:
                return resp.status, raw

    async def admin(self, method: str, path: str, body: Any = None, tenant: str | None = None) -> tuple[int, Any]:
        """An admin API call (``/ctx/v1/<path>``) as the operator; direct: (0, None), there is no proxy."""
        if not self.proxied:
            return 0, None
        params = {"tenant": tenant} if tenant else None
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

    def settle(self) -> None:
        """The proxy's after-the-turn writes (session index, manifests) are committed."""
        if self.proxied:
            from ..edge.server import APP_STATE

            self.app[APP_STATE].services["writer"].flush()

    @property
    def store(self) -> Any:
        from ..edge.server import APP_STATE

        return self.app[APP_STATE].services["store"]


def eval_config(config: str | os.PathLike | None, data_dir: Path, upstream: str, rules_dir: Path | None,
                cache_dir: Path | None = None) -> Any:
    """The configuration under test, pointed at the scripted provider and a fresh data dir.
    When the set brings rule files and the configuration lists none, the rules bundle reads
    them from ``rules_dir`` (the configuration's own rules are kept otherwise). ``cache_dir``:
    where the compiled redaction rules are cached when the configuration names no place, shared
    by every proxy of one eval run (compiling them is most of a proxy's start-up)."""
    from ctxproxy.config import load_config

    cfg = load_config(config, port=0, data_dir=str(data_dir), anthropic_upstream=upstream,
                      openai_upstream=upstream, shutdown_timeout=1.0)
    cfg = replace(cfg, server=replace(cfg.server, admin_token="eval-" + secrets.token_hex(16)))
    redact = cfg.filters.get("redact") or {}
    if cache_dir is not None and not redact.get("cache_dir"):
        cfg = replace(cfg, filters={**cfg.filters, "redact": {**redact, "cache_dir": str(cache_dir)}})
    if rules_dir is not None:
        inject = dict(cfg.filters.get("inject") or {})
        rules = dict(inject.get("rules") or {})
        if not any(rules.get(layer) for layer in ("managed", "task", "project", "local")):
            rules.update(root=str(rules_dir), project=["AGENTS.md", "**/AGENTS.md"], refresh_seconds=0)
            inject["rules"] = rules
            cfg = replace(cfg, filters={**cfg.filters, "inject": inject})
    return cfg


@asynccontextmanager
async def target(name: str, config: str | os.PathLike | None, data_dir: Path,
                 rules_dir: Path | None = None, cache_dir: Path | None = None) -> AsyncIterator[Target]:
    """A fresh scripted provider and, for ``ctxproxy``, a fresh proxy over ``data_dir``."""
    from aiohttp import web

    from ..edge.server import make_app

    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    async with FakeProvider(record_limit=None) as fake, aiohttp.ClientSession() as http:
        if name == "direct":
            yield Target(name, fake.url, fake, http)
            return
        cfg = eval_config(config, data_dir, fake.url, rules_dir, cache_dir)
        app = make_app(cfg)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        try:
            yield Target(name, f"http://{host}:{port}", fake, http, app, cfg.server.admin_token,
                         cfg.auth.mode == "keys")
        finally:
            await runner.cleanup()
