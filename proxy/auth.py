"""The edge check of ``[auth] mode = "keys"``: which principal a request speaks for.

``Keyring.authenticate(headers, peer, route)`` is called once per proxied
request, before anything is read or forwarded, and answers a ``Principal``
or a ``KeyRefusal`` (the caller answers it in the request's API format). It
knows no server framework: headers are any case-insensitive mapping.

A key is looked for in ``X-Ctx-Key`` first (the agent keeps its own provider
credentials), else as the API key (``x-api-key``, ``Authorization: Bearer``),
in which case the route's provider key is forwarded instead (``route_for``).
A proxy key never goes upstream in either case (``engine.upstream_headers``); the
principal rides to the turn on the ``routing.Match``.

Lookups go through a per-process cache that is valid for one value of the
store's key generation (moved by every create and revoke, in any process;
``store.proxy_keys`` makes reading it a memory load), checked on every
request: a revoked key is refused by every worker on its next request.
Failed checks are counted per peer address; past the limit, failures are
answered 429, but a key that verifies is always served, so the limit
cannot lock a valid key out (agents on one host share 127.0.0.1).
"""
from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import logging
import os
import time
from collections import Counter
from typing import Any, Callable, Mapping, NamedTuple

from ctxproxy.config import Config, ConfigError
from ctxproxy.store import KEY_PREFIX, Principal, ProxyKey, split_key

from .routing import Route

log = logging.getLogger("ctxproxy.auth")

WINDOW = 60.0  # seconds over which failure_limit counts
MAX_PEERS = 10000  # peers whose failures are tracked at once


class KeyRefusal(NamedTuple):
    """A proxy-key check that refused a request (the memory gate's refusal is ``gate.Refusal``)."""

    status: int  # 401 bad or missing key, 403 outside the key's sets, 429 too many failures
    message: str
    reason: str  # the counter it is recorded under
    retry_after: int = 0


def presented_key(headers: Mapping[str, str]) -> tuple[str | None, bool]:
    """(the proxy key the caller presents, whether it came as its API key)."""
    given = headers.get("x-ctx-key")
    if given is not None:
        return given.strip(), False
    given = headers.get("x-api-key")
    if given is not None and given.startswith(KEY_PREFIX):
        return given, True
    given = headers.get("authorization")
    if given is not None and given[:7].lower() == "bearer " and given[7:].lstrip().startswith(KEY_PREFIX):
        return given[7:].strip(), True
    return None, False


class KeyCache:
    """Proxy keys by id, for one store generation (unknown ids are kept too, as
    None), each with the secret that last verified against its digest: a key
    seen before is checked by one constant-time comparison with that, no hashing."""

    def __init__(self, store: Any, size: int):
        self._store = store
        self._size = size
        self._gen = -1
        self._keys: dict[str, list] = {}  # id -> [ProxyKey | None, verified secret | None]

    def _entry(self, key_id: str) -> list:
        gen = self._store.proxy_keys.generation()
        if gen != self._gen:
            self._keys.clear()
            self._gen = gen
        entry = self._keys.get(key_id)
        if entry is None:
            if len(self._keys) >= self._size:
                self._keys.clear()
            entry = self._keys[key_id] = [self._store.proxy_keys.get(key_id), None]
        return entry

    def get(self, key_id: str) -> ProxyKey | None:
        return self._entry(key_id)[0]

    def verified(self, key_id: str, secret: str) -> ProxyKey | None:
        """The key ``key_id`` if ``secret`` is its secret, else None."""
        entry = self._entry(key_id)
        record, known = entry
        if record is None:
            return None
        if known is not None and hmac.compare_digest(known, secret):
            return record
        if not record.matches(secret):
            return None
        entry[1] = secret
        return record


class FailureLimiter:
    """Failed key checks per peer address in a sliding window (a leaky counter)."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self._clock = clock
        self._peers: dict[str, tuple[float, float]] = {}  # peer -> (level, at)

    def _level(self, peer: str, now: float) -> float:
        level, at = self._peers.get(peer, (0.0, now))
        return max(0.0, level - (now - at) * self.limit / WINDOW)

    def failed(self, peer: str) -> int:
        """Record a failure; 0 if within the limit, else the seconds to wait."""
        now = self._clock()
        level = self._level(peer, now)
        if level + 1 > self.limit:
            return max(1, round((level + 1 - self.limit) * WINDOW / self.limit))
        if len(self._peers) >= MAX_PEERS and peer not in self._peers:
            self._peers.clear()
        self._peers[peer] = (level + 1, now)
        return 0


class Keyring:
    """Proxy-key checks for model calls and the admin API, with their counters."""

    def __init__(self, cfg: Config, store: Any, clock: Callable[[], float] = time.time):
        self.required = cfg.auth.mode == "keys"
        self._cache = KeyCache(store, cfg.auth.cache_size) if store is not None else None
        self._limiter = FailureLimiter(cfg.auth.failure_limit)
        self._clock = clock
        self._provider_keys = provider_keys(cfg)
        self._routes: dict[tuple[str, str], Route] = {}
        self.refused: Counter[str] = Counter()  # the only record a refused request leaves

    def _refuse(self, peer: str, status: int, message: str, reason: str) -> KeyRefusal:
        if status == 401:
            wait = self._limiter.failed(peer)
            if wait:
                self.refused["rate_limited"] += 1
                return KeyRefusal(429, "too many failed proxy key checks from this address; retry later",
                               "rate_limited", wait)
        self.refused[reason] += 1
        return KeyRefusal(status, message, reason)

    def verify(self, presented: str | None, peer: str) -> Principal | KeyRefusal:
        """The principal of a presented key, or a 401 (429 past the failure limit)."""
        if not presented:
            return self._refuse(peer, 401, "missing proxy key: present it as the API key or in X-Ctx-Key",
                                "missing")
        parsed = split_key(presented)
        record = self._cache.verified(*parsed) if parsed is not None and self._cache is not None else None
        if record is None:
            return self._refuse(peer, 401, "invalid proxy key", "invalid")
        state = record.state(self._clock())
        if state != "active":
            return self._refuse(peer, 401, f"proxy key {record.id} is {state}", state)
        return record.principal

    def active(self, principal: Principal) -> bool:
        """Whether the key behind ``principal`` still works (a long-lived WebSocket asks per turn)."""
        record = self._cache.get(principal.key_id) if self._cache is not None else None
        return record is not None and record.state(self._clock()) == "active"

    def authenticate(self, headers: Mapping[str, str], peer: str, route: Route) -> Principal | KeyRefusal:
        """The principal of a proxied request, or why it is refused."""
        presented, as_api_key = presented_key(headers)
        principal = self.verify(presented, peer)
        if isinstance(principal, KeyRefusal):
            return principal
        if (principal.routes and route.name not in principal.routes) or \
                (route.config.tenant and route.config.tenant != principal.tenant):  # a route pinned to a tenant
            return self._refuse(peer, 403, f"proxy key {principal.key_id} may not use route {route.name!r}",
                                "forbidden")
        for header, allowed, what in (("x-ctx-project", principal.projects, "project"),
                                      ("x-ctx-purpose", principal.purposes, "purpose")):
            named = headers.get(header)
            if named and allowed and named not in allowed:
                return self._refuse(peer, 403, f"proxy key {principal.key_id} may not use {what} {named!r}",
                                    "forbidden")
        if as_api_key and not self.route_for(principal, route).injected_key:
            return self._refuse(peer, 500, f"no provider key for route {route.name!r}: set "
                                f"tenants.{principal.tenant}.api_key_env or routes.{route.name}.api_key_env, "
                                "or present the proxy key in X-Ctx-Key", "no_provider_key")
        return principal

    def admin(self, token: str, peer: str) -> Principal | KeyRefusal:
        """A tenant admin key presented to the admin API."""
        principal = self.verify(token, peer)
        if isinstance(principal, Principal) and not principal.admin:
            return self._refuse(peer, 403, f"proxy key {principal.key_id} is not an admin key", "forbidden")
        return principal

    def route_for(self, principal: Principal, route: Route) -> Route:
        """``route`` with the provider key this principal's calls forward (its tenant's, else the route's)."""
        key = self._provider_keys.get((principal.tenant, route.name))
        if key is None:
            return route
        found = self._routes.get((principal.tenant, route.name))
        if found is None:
            found = self._routes[(principal.tenant, route.name)] = dataclasses.replace(route, injected_key=key)
        return found


def provider_keys(cfg: Config) -> dict[tuple[str, str], str]:
    """(tenant, route) -> provider key, read from the environment once, at start-up."""
    out = {}
    for tenant, tc in cfg.tenants.items():
        for route in cfg.routes:
            env = tc.env_for(route)
            if not env:
                continue
            value = os.environ.get(env, "")
            if not value:
                raise ConfigError(f"tenants.{tenant}.api_key_env: environment variable {env} is not set")
            out[(tenant, route)] = value
    return out


def peer_of(transport: Any) -> str:
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if peer else ""


def warn_if_open(cfg: Config) -> None:
    """Open mode anywhere but loopback: every caller can pick any tenant; say so at start-up."""
    if cfg.auth.mode != "open":
        return
    host = cfg.server.host
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        log.warning("auth.mode = \"open\" on %s: every caller can pick any tenant with X-Ctx-Tenant; "
                    "set [auth] mode = \"keys\" for a shared deployment (docs/tenancy.md)", host)


def issue_key(store: Any, cfg: Config, tenant: str, *, user: str = "", projects: Any = (), purposes: Any = (),
              routes: Any = (), admin: bool = False, expires_days: float | None = None) -> dict[str, Any]:
    """Create a proxy key (the CLI's and the admin API's): its listing plus ``key``,
    shown this once. ``ValueError`` names the bad field."""
    from ctxproxy.filters.identify import TENANT_OK, _ok

    if not isinstance(tenant, str) or not TENANT_OK.match(tenant):
        raise ValueError("tenant: expected letters, digits, '.', '_' or '-' (at most 64)")
    if user and not _ok(user):
        raise ValueError(f"user: {user!r} is not a valid id")
    for what, names in (("project", projects), ("purpose", purposes), ("route", routes)):
        if isinstance(names, str) or not all(isinstance(n, str) and _ok(n) for n in names):
            raise ValueError(f"{what}: expected a list of ids")
    unknown = [r for r in routes if r not in cfg.routes]
    if unknown:
        raise ValueError(f"route: no route {unknown[0]!r} (routes: {', '.join(cfg.routes)})")
    if expires_days is not None and not (isinstance(expires_days, (int, float)) and 0 < expires_days <= 36500):
        raise ValueError("expires: expected a number of days, 0 < days <= 36500")
    now = time.time()
    expires_at = now + expires_days * 86400.0 if expires_days is not None else None
    record, key = store.proxy_keys.create(tenant, user=user or "", projects=projects, purposes=purposes,
                                          routes=routes, admin=admin, expires_at=expires_at)
    return {**record.to_dict(now), "key": key}
