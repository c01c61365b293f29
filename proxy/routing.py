"""Which route (upstream + provider family) serves a request path."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NamedTuple

from ctxproxy.config import Config, ConfigError, RouteConfig

from .adapters import api_for_path


@dataclass(frozen=True)
class Route:
    name: str
    config: RouteConfig
    upstream: str  # base URL without trailing slash
    injected_key: str  # credential to inject ("" = forward the caller's)

    @property
    def family(self) -> str:
        return self.config.api

    @property
    def key_header(self) -> str:
        if self.config.api_key_header:
            return self.config.api_key_header.lower()
        return "x-api-key" if self.family == "anthropic" else "authorization"


class Match(NamedTuple):  # made per request: a tuple is the cheapest record
    route: Route
    upstream_path: str  # path to request upstream (prefix stripped)
    api: str | None  # the wire API whose pipeline applies, None for pass-through
    auxiliary: bool = False  # count_tokens, compact: only the filters that guard requests


_PASS = (None, False)


class Router:
    def __init__(self, cfg: Config):
        routes = []
        for name, rc in cfg.routes.items():
            key = ""
            if rc.api_key_env:
                key = os.environ.get(rc.api_key_env, "")
                if not key:
                    raise ConfigError(f"routes.{name}.api_key_env: environment variable {rc.api_key_env} is not set")
            routes.append(Route(name, rc, rc.upstream.rstrip("/"), key))
        self.prefixed = sorted((r for r in routes if r.config.prefix), key=lambda r: -len(r.config.prefix))
        self.default = {r.family: r for r in routes if not r.config.prefix}

    def match(self, path: str, method: str, headers) -> Match:
        """``path``: the request's raw path, still percent-encoded, as it goes upstream."""
        for r in self.prefixed:
            p = r.config.prefix
            if path == p or path.startswith(p + "/"):
                rest = path[len(p):] or "/"
                return Match(r, rest, *(api_for_path(rest) if method == "POST" else _PASS))
        api, aux = api_for_path(path) if method == "POST" else _PASS
        if api == "anthropic":
            family = "anthropic"
        elif api in ("chat", "responses"):
            family = "openai"
        else:  # pass-through: the caller's headers say which provider it means
            family = "anthropic" if ("anthropic-version" in headers or "x-api-key" in headers) else "openai"
        route = self.default.get(family) or next(iter(self.default.values()))
        return Match(route, path, api, aux)
