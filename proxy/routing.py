"""Which route (upstream + provider family) serves a request path."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote

from ctxproxy.config import Config, ConfigError, RouteConfig
from ctxproxy.config.upstream import base_segments, beyond_base  # noqa: F401  (re-exported)

from .adapters import api_for_path


@dataclass(frozen=True)
class Route:
    name: str
    config: RouteConfig
    upstream: str  # base URL without trailing slash
    injected_key: str  # credential to inject ("" = forward the caller's)
    base_path: tuple[str, ...] = ()  # segments of the upstream URL's own path ("/v1" -> ("v1",))

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
    upstream_path: str  # path to request after route.upstream (prefix and shared segments stripped)
    api: str | None  # the wire API whose pipeline applies, None for pass-through
    auxiliary: bool = False  # count_tokens, compact: only the filters that guard requests
    principal: Any = None  # keys mode: the proxy key's principal, set by the edge check (proxy.auth)


_PASS = (None, False)
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789abcdefABCDEF")


def canonical_path(path: str) -> str:
    """``path`` (raw, percent-encoded) in the form a provider reads it as
    (RFC 3986 §6.2.2): ``%XX`` of an unreserved character decoded, ``.`` and
    ``..`` segments removed. Other escapes (``%2F``…) are kept as they came.
    Routing and forwarding use this form, so ``/v1/%63hat/completions`` or
    ``/v1/./messages`` is the model call the provider will take it for, and
    ``/<prefix>/../x`` does not climb out of a route's upstream path."""
    if "%" not in path and "/." not in path:
        return path  # the common case: already canonical
    if "%" in path:
        out, i, n = [], 0, len(path)
        while i < n:
            c = path[i]
            if c == "%" and i + 2 < n and path[i + 1] in _HEX and path[i + 2] in _HEX:
                ch = chr(int(path[i + 1:i + 3], 16))
                out.append(ch if ch in _UNRESERVED else path[i:i + 3])
                i += 3
            else:
                out.append(c)
                i += 1
        path = "".join(out)
    if "/." not in path:
        return path
    segments: list[str] = []
    parts = path.split("/")
    for k, seg in enumerate(parts[1:], 1):  # parts[0] is "" (the path starts with "/")
        last = k == len(parts) - 1
        if seg == ".":
            if last:
                segments.append("")
        elif seg == "..":
            if segments:
                segments.pop()
            if last:
                segments.append("")
        else:
            segments.append(seg)
    return (parts[0] if parts[0] else "") + "/" + "/".join(segments)


def model_path(path: str) -> str:
    """What a POST to ``path`` could reach at a lenient provider: every escape
    decoded and empty segments dropped (``/v1//messages``, ``/v1/chat%2Fcompletions``).
    Only for deciding whether a request is a model call: such a request gets the
    filters, never a pass-through past them."""
    if "%" in path:
        path = unquote(path, errors="surrogateescape")
    if "//" in path:
        path = "/" + "/".join(s for s in path.split("/") if s)
    return path


def _api(path: str, method: str) -> tuple[str | None, bool]:
    if method != "POST":
        return _PASS
    found = api_for_path(path)
    if found[0] is None:
        lenient = model_path(path)
        if lenient != path:
            found = api_for_path(lenient)
    return found


MODEL_CALL_CACHE = 1024  # model-call paths whose route match is kept


class Router:
    def __init__(self, cfg: Config):
        routes = []
        for name, rc in cfg.routes.items():
            key = ""
            if rc.api_key_env:
                key = os.environ.get(rc.api_key_env, "")
                if not key:
                    raise ConfigError(f"routes.{name}.api_key_env: environment variable {rc.api_key_env} is not set")
            routes.append(Route(name, rc, rc.upstream.rstrip("/"), key, base_segments(rc.upstream)))
        self.prefixed = sorted((r for r in routes if r.config.prefix), key=lambda r: -len(r.config.prefix))
        self.default = {r.family: r for r in routes if not r.config.prefix}
        # Model calls come to a handful of paths: their matches are kept (they depend on
        # nothing but the raw path), so routing one is a dict lookup. Bounded in number
        # and length, since the paths are the clients' to choose.
        self._model_calls: dict[str, Match] = {}

    def match(self, path: str, method: str, headers) -> Match:
        """``path``: the request's raw path, still percent-encoded; it goes upstream
        in its canonical form (``canonical_path``), the route's prefix stripped."""
        if method == "POST":
            found = self._model_calls.get(path)
            if found is None:
                found = self._match(path, method, headers)
                if found.api is not None and len(path) <= 512:
                    if len(self._model_calls) >= MODEL_CALL_CACHE:
                        self._model_calls.clear()
                    self._model_calls[path] = found
            return found
        return self._match(path, method, headers)

    @property
    def routes(self) -> dict[str, Route]:
        """Every route by name."""
        return {r.name: r for r in [*self.prefixed, *self.default.values()]}

    def _match(self, path: str, method: str, headers) -> Match:
        path = canonical_path(path)
        for r in self.prefixed:
            p = r.config.prefix
            if path == p or path.startswith(p + "/"):
                rest = path[len(p):] or "/"
                return Match(r, beyond_base(r.base_path, rest), *_api(rest, method))
        api, aux = _api(path, method)
        if api == "anthropic":
            family = "anthropic"
        elif api in ("chat", "responses"):
            family = "openai"
        else:  # pass-through: the caller's headers say which provider it means
            family = "anthropic" if ("anthropic-version" in headers or "x-api-key" in headers) else "openai"
        route = self.default.get(family) or next(iter(self.default.values()))
        return Match(route, beyond_base(route.base_path, path), api, aux)


call_api = _api  # (API, auxiliary) of a path past its route's prefix: for edges that route by host (mitm/hosts.py)
