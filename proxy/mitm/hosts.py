"""Which connections transparent mode decrypts, and which route serves a request.

``ctxproxy mitm`` sees a host and port (the client's CONNECT, the TLS SNI)
before it sees a path. It intercepts exactly the hosts the config names — each
route's upstream host, plus ``[mitm] hosts`` (Codex's ChatGPT login at
``chatgpt.com``), less ``[mitm] passthrough`` — and passes every other one
through as TLS, undecrypted.

Inside an intercepted host the request path decides, as in ``serve``: the
route's own base path (``https://openrouter.ai/api``) is stripped and what is
left names the API. A host from ``[mitm] hosts`` has no route of its own: it
takes the default route of the family its path speaks (``…/responses`` is
OpenAI's), its pipeline and settings, but never that route's injected key —
a key for api.openai.com must not travel to another host.
"""
from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple
from urllib.parse import urlsplit

from ctxproxy.config import Config

from ..routing import Match, Route, Router, call_api, canonical_path

DEFAULT_PORTS = {"https": 443, "http": 80}


class HostRoute(NamedTuple):
    route: Route | None  # None: a ``[mitm] hosts`` entry, routed by the path's API family
    base: str  # the route's upstream path ("" or "/api"), stripped before the API is read


def _key(host: str, port: int) -> tuple[str, int]:
    return host.rstrip(".").lower(), port


class HostRouter:
    def __init__(self, cfg: Config, router: Router | None = None):
        router = router or Router(cfg)
        # A ``[mitm] hosts`` entry takes its family's default route, without its injected key.
        self._keyless = {family: replace(r, injected_key="") for family, r in router.default.items()}
        self._hosts: dict[tuple[str, int], list[HostRoute]] = {}
        for route in router.routes.values():
            u = urlsplit(route.upstream)
            port = u.port or DEFAULT_PORTS[u.scheme]
            self._hosts.setdefault(_key(u.hostname or "", port), []).append(HostRoute(route, u.path.rstrip("/")))
        for host in cfg.mitm.hosts:
            self._hosts.setdefault(_key(host, 443), []).append(HostRoute(None, ""))
        for entries in self._hosts.values():  # the longest base path first: /api/v2 before /api
            entries.sort(key=lambda e: -len(e.base))
        # Configured to go through undecrypted, on every port: the only hosts a route or
        # ``hosts`` names that are not intercepted.
        self.passthrough = sorted({_key(h, 0)[0] for h in cfg.mitm.passthrough})
        named = {h for h, _ in self._hosts}
        self.needless_passthrough = [h for h in self.passthrough if h not in named]  # never intercepted anyway
        self._hosts = {k: v for k, v in self._hosts.items() if k[0] not in self.passthrough}

    def intercepts(self, host: str | None, port: int) -> bool:
        return bool(host) and _key(host, port) in self._hosts

    def hosts(self) -> list[str]:
        """``host:port`` of every intercepted host (for the start-up log)."""
        return sorted(f"{h}:{p}" for h, p in self._hosts)

    def match(self, host: str, port: int, raw_path: str, method: str) -> Match | None:
        """The route a request to ``host:port`` takes; None if the host is not
        intercepted (its bytes are not ours to read)."""
        entries = self._hosts.get(_key(host, port))
        if not entries:
            return None
        path = canonical_path(raw_path.split("?", 1)[0])
        # The routes whose base path the request is under (the longest base), else the
        # host's shortest: a model call on an intercepted host never escapes the filters.
        under = [e for e in entries if _under(path, e.base)] or [entries[-1]]
        base = under[0].base if _under(path, under[0].base) else ""
        rest = path[len(base):] or "/"
        api, aux = call_api(rest, method)
        family = "anthropic" if api == "anthropic" else "openai"
        # Routes sharing a host and base path (one gateway for both families): the path's family.
        same = [e for e in under if e.base == under[0].base]
        entry = next((e for e in same if e.route is not None and e.route.family == family), same[0])
        route = entry.route or self._keyless.get(family)
        return Match(route, rest, api, aux) if route is not None else None


def _under(path: str, base: str) -> bool:
    return not base or path == base or path.startswith(base + "/")
