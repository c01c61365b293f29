"""The typed shape of ``ctxproxy.toml`` (filters declare their own sections)."""
from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Literal, Mapping

from .typed import ConfigError, overlay, parse_section

ADMIN_TOKEN_ENV = "CTXPROXY_ADMIN_TOKEN"
MAX_MAP_SIZE_MB = 1 << 24  # 16 TiB: more than any disk this runs on; a typo beyond it is caught here
# Executables that run other programs: naming one in [mitm] passthrough_programs would
# pass every agent written for it (Claude Code, Codex's npm wrapper, OpenClaw are all node).
_INTERPRETER = re.compile(r"(?:node(?:js)?|python[0-9.]*|pypy[0-9.]*|bun|deno|ruby[0-9.]*|perl[0-9.]*|php[0-9.]*"
                          r"|java|dotnet|mono|[a-z]*sh|env|busybox)$")


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"  # loopback by default; a container binds 0.0.0.0
    port: int = 8788
    workers: int = 1  # >1: N processes on one port (SO_REUSEPORT)
    data_dir: str = ".ctxproxy"  # LMDB store and caches
    max_body_bytes: int = 32 * 1024 * 1024  # larger model-call bodies get 413; pass-through streams on
    admin_token: str = ""  # bearer token for /ctx/v1/; else $CTXPROXY_ADMIN_TOKEN
    admin_loopback_only: bool = True  # refuse admin calls from non-loopback peers
    secret_file: str = ""  # server secret for per-session keys; default <data_dir>/secret
    shutdown_timeout: float = 5.0  # on SIGTERM/SIGINT, seconds requests in flight get before they are cut
    coalesce_deltas: bool = True  # a stream's text deltas that arrive in one read go on as one event
    loop: Literal["auto", "asyncio", "uvloop"] = "auto"  # auto: uvloop when installed (proxy/event_loop.py)

    def validate(self, path: str) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"{path}.port: expected 0..65535, got {self.port}")
        if self.workers < 1:
            raise ConfigError(f"{path}.workers: expected at least 1, got {self.workers}")
        if self.max_body_bytes < 1024:
            raise ConfigError(f"{path}.max_body_bytes: expected at least 1024, got {self.max_body_bytes}")
        if not 0 <= self.shutdown_timeout <= 3600:  # NaN fails this too
            raise ConfigError(f"{path}.shutdown_timeout: expected 0..3600 seconds, got {self.shutdown_timeout:g}")


@dataclass(frozen=True)
class UpstreamConfig:
    connect_timeout: float = 10.0  # seconds to connect to a provider (504 after)
    read_timeout: float = 600.0  # seconds for headers, and between two stream chunks
    pool_size: int = 256  # pooled connections across all routes

    def validate(self, path: str) -> None:
        for name in ("connect_timeout", "read_timeout"):
            _positive_seconds(getattr(self, name), f"{path}.{name}")
        if self.pool_size < 1:
            raise ConfigError(f"{path}.pool_size: expected at least 1 connection, got {self.pool_size}")


DATABASE_URL_ENV = "CTXPROXY_DATABASE_URL"


@dataclass(frozen=True)
class StoreConfig:
    map_size_mb: int = 256  # initial LMDB map; grows on demand
    max_map_size_mb: int = 65536
    pending_timeout: float = 900.0  # seconds before a tool call with no result shows as "unknown"
    backend: Literal["lmdb", "postgres"] = "lmdb"  # postgres: replicas of a fleet share one database
    dsn: str = ""  # postgres: libpq URI or key=value; default $CTXPROXY_DATABASE_URL, else libpq's PG* variables
    on_unavailable: Literal["fail_closed", "forward"] = "fail_closed"  # database down: 503, or forward unrecorded
    pool_size: int = 10  # postgres: connections per process
    listen_dsn: str = ""  # postgres: where LISTEN connects when dsn is a transaction-mode pooler; default dsn

    def database_url(self) -> str:
        """The DSN the postgres backend connects with ("" lets libpq read PG* variables)."""
        return self.dsn or os.environ.get(DATABASE_URL_ENV, "")

    def validate(self, path: str) -> None:
        if self.pool_size < 1:
            raise ConfigError(f"{path}.pool_size: expected at least 1 connection, got {self.pool_size}")
        for name in ("dsn", "listen_dsn"):
            value = getattr(self, name)
            if value and "://" in value and not value.startswith(("postgresql://", "postgres://")):
                raise ConfigError(f"{path}.{name}: expected a postgresql:// URI or libpq key=value pairs, "
                                  f"got {value.split('://', 1)[0]}://...")
        if self.map_size_mb < 1:
            raise ConfigError(f"{path}.map_size_mb: expected at least 1 (MiB), got {self.map_size_mb}")
        if self.max_map_size_mb < self.map_size_mb:
            raise ConfigError(f"{path}.max_map_size_mb: expected at least map_size_mb ({self.map_size_mb}), "
                              f"got {self.max_map_size_mb}")
        if self.max_map_size_mb > MAX_MAP_SIZE_MB:
            raise ConfigError(f"{path}.max_map_size_mb: expected at most {MAX_MAP_SIZE_MB} (16 TiB), "
                              f"got {self.max_map_size_mb}")
        _positive_seconds(self.pending_timeout, f"{path}.pending_timeout")


def _positive_seconds(value: float, path: str) -> None:
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(f"{path}: expected a positive number of seconds, got {value:g}")


@dataclass(frozen=True)
class RouteConfig:
    upstream: str  # base URL of the provider, e.g. https://api.anthropic.com
    api: Literal["anthropic", "openai"] = "openai"  # provider family (wire format)
    prefix: str = ""  # path prefix for a named upstream, e.g. "/openrouter"
    api_key_env: str = ""  # inject this env var as the credential (replaces the caller's)
    api_key_header: str = ""  # header for an injected key; default x-api-key / authorization
    filters: tuple[str, ...] | None = None  # request filters for this route; default [pipeline]
    websocket: bool = True  # proxy Responses over WebSocket; false refuses the upgrade at once
    tenant: str = ""  # fixed tenant for this route (multi-tenant deployments)

    def validate(self, path: str) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ConfigError(f"{path}.upstream: expected an http(s) URL, got {self.upstream!r}")
        if self.prefix and (not self.prefix.startswith("/") or self.prefix.endswith("/")):
            raise ConfigError(f"{path}.prefix: expected a path like '/openrouter', got {self.prefix!r}")


@dataclass(frozen=True)
class MitmConfig:
    """``ctxproxy mitm`` (transparent mode): where it listens, what it intercepts."""
    host: str = "127.0.0.1"  # loopback by default, like serve
    port: int = 8789
    confdir: str = ""  # its CA and mitmproxy's own files; default <data_dir>/mitm
    hosts: tuple[str, ...] = ("chatgpt.com",)  # intercepted besides the routes' upstream hosts
    upstream_ca: str = ""  # PEM bundle providers are verified against; default the certifi store
    # Never decrypted, though a route or ``hosts`` names them: every client's connections
    # to these hosts go through as TLS, unfiltered (a client that pins the provider's certificate).
    passthrough: tuple[str, ...] = ()
    # Connections from these local programs (the real path of their executable) go through
    # unfiltered; every other client's to the same hosts are still decrypted.
    passthrough_programs: tuple[str, ...] = ()
    http2: bool = True  # offer HTTP/2 to clients and providers

    # A client that once refused the certificate used to switch interception off for its
    # whole address (every local agent shares 127.0.0.1): a config naming it stops start-up.
    REMOVED: ClassVar[dict[str, str]] = {
        "pinned_passthrough": "removed: a refused certificate no longer passes anything through; name the "
                              "hosts in [mitm] passthrough or the programs in [mitm] passthrough_programs"}

    def validate(self, path: str) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"{path}.port: expected 0..65535, got {self.port}")
        for key in ("hosts", "passthrough"):
            for i, h in enumerate(getattr(self, key)):
                if not h or any(c in h for c in "/: \t"):
                    raise ConfigError(f"{path}.{key}[{i}]: expected a host name like 'chatgpt.com', got {h!r}")
        for i, exe in enumerate(self.passthrough_programs):
            if not exe.startswith("/"):
                raise ConfigError(f"{path}.passthrough_programs[{i}]: expected the absolute path of a program's "
                                  f"executable (as the refused-certificate warning names it), got {exe!r}")
            if _INTERPRETER.match(exe.rsplit("/", 1)[-1]):
                raise ConfigError(f"{path}.passthrough_programs[{i}]: {exe} runs many programs (every agent on "
                                  f"that interpreter would go through unfiltered); name a program of its own")


@dataclass(frozen=True)
class AuthConfig:
    mode: Literal["open", "keys"] = "open"  # keys: every proxied call presents a proxy key naming its principal
    failure_limit: int = 30  # failed key checks a peer address may make per minute; more are answered 429
    cache_size: int = 4096  # proxy keys each process keeps in memory (dropped whenever a key is created/revoked)

    def validate(self, path: str) -> None:
        if self.failure_limit < 1:
            raise ConfigError(f"{path}.failure_limit: expected at least 1, got {self.failure_limit}")
        if self.cache_size < 1:
            raise ConfigError(f"{path}.cache_size: expected at least 1, got {self.cache_size}")


@dataclass(frozen=True)
class TenantConfig:
    # keys mode: the provider key forwarded on every call of this tenant's proxy keys, in place of
    # the caller's credential, whichever header carries the proxy key (Keyring.route_for): one
    # environment variable for every route, or a table route name -> variable
    api_key_env: str | Mapping[str, str] = ""

    def env_for(self, route: str) -> str:
        if isinstance(self.api_key_env, str):
            return self.api_key_env
        return self.api_key_env.get(route, "")


@dataclass(frozen=True)
class PipelineConfig:
    request: tuple[str, ...] = ("identify",)  # filters in request order


def _default_snapshot_chars() -> dict[str, int]:
    # Hermes' defaults: 2,200 characters of agent/project memory, 1,375 of user profile.
    return {"tenant": 2200, "project": 2200, "user": 1375, "session": 2200}


def _default_ttl() -> dict[str, float]:
    return {"event": 30.0, "failure": 90.0}


@dataclass(frozen=True)
class MemoryGateConfig:
    """``[memory.gate]``: limits, TTLs, duplicate threshold and threat scan of the memory write gate."""

    snapshot_chars: Mapping[str, int] = field(default_factory=_default_snapshot_chars)
    recalled_max_chars: int = 1000  # longest fact / event / failure statement
    recalled_max_records: int = 100000  # live recalled records per scope
    ttl_days: Mapping[str, float] = field(default_factory=_default_ttl)  # kinds absent: no expiry
    purge_grace_days: float = 7.0  # expired records are erased this long after they expired
    near_duplicate: float = 0.9  # content-word overlap (Jaccard) with a same-subject record = duplicate
    learned_signal: bool = True  # the threat scan's learned classifier beside its rules (false: rules only)

    def validate(self, path: str) -> None:
        for scope, n in self.snapshot_chars.items():
            if scope not in ("tenant", "project", "user", "session") or n < 0:
                raise ConfigError(f"{path}.snapshot_chars.{scope}: unknown scope or negative")
        for kind, days in self.ttl_days.items():
            if kind not in ("preference", "fact", "procedure", "failure", "event") or not days >= 0:
                raise ConfigError(f"{path}.ttl_days.{kind}: unknown kind or negative")
        if self.recalled_max_chars < 1 or self.recalled_max_records < 1:
            raise ConfigError(f"{path}: recalled limits must be at least 1")
        if not 0 < self.near_duplicate <= 1:
            raise ConfigError(f"{path}.near_duplicate: expected a number in (0, 1]")
        if not self.purge_grace_days >= 0:
            raise ConfigError(f"{path}.purge_grace_days: expected 0 or more days")


@dataclass(frozen=True)
class MemoryConfig:
    gate: MemoryGateConfig = field(default_factory=MemoryGateConfig)


@dataclass(frozen=True)
class LearnConfig:
    """``[learn]``: the learning job (phase 1 per idle session, phase 2 per tenant).
    It only proposes: a person approves (``ctxproxy learn review``)."""

    enabled: bool = True  # `ctxproxy serve` runs the job in the background
    min_idle: float = 1800.0  # seconds a session has been quiet before it is read
    interval: float = 300.0  # seconds between two passes of the background job
    cooldown: float = 21600.0  # seconds after a tenant's successful consolidation before the next
    lease_ttl: float = 300.0  # seconds a consolidation's lease lasts without a heartbeat
    retry_after: float = 60.0  # first retry after a failed run; doubles up to retry_max
    retry_max: float = 3600.0
    max_sessions: int = 1000  # sessions read per tenant per pass (the rest wait for the next)
    model: str = ""  # optional model-backed extractor: "<route>:<model>" (e.g. "anthropic:claude-haiku-4-5"); "" = off
    model_max_chars: int = 24000  # transcript characters the model extractor reads per session

    def validate(self, path: str) -> None:
        for name in ("min_idle", "interval", "cooldown", "retry_after", "retry_max"):
            value = getattr(self, name)
            if not 0 <= value <= 365 * 86400:  # NaN fails too
                raise ConfigError(f"{path}.{name}: expected 0..31536000 seconds, got {value:g}")
        if not 1 <= self.lease_ttl <= 86400:
            raise ConfigError(f"{path}.lease_ttl: expected 1..86400 seconds, got {self.lease_ttl:g}")
        if self.max_sessions < 1:
            raise ConfigError(f"{path}.max_sessions: expected at least 1, got {self.max_sessions}")
        if self.model and (":" not in self.model or not all(self.model.split(":", 1))):
            raise ConfigError(f"{path}.model: expected \"<route>:<model>\" (or \"\" for none), got {self.model!r}")
        if self.model_max_chars < 1000:
            raise ConfigError(f"{path}.model_max_chars: expected at least 1000, got {self.model_max_chars}")


@dataclass(frozen=True)
class Config:
    server: ServerConfig = field(default_factory=ServerConfig)
    upstream: UpstreamConfig = field(default_factory=UpstreamConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    routes: Mapping[str, RouteConfig] = field(default_factory=dict)
    pipeline: PipelineConfig = field(default_factory=PipelineConfig)
    mitm: MitmConfig = field(default_factory=MitmConfig)
    auth: AuthConfig = field(default_factory=AuthConfig)
    tenants: Mapping[str, TenantConfig] = field(default_factory=dict)
    filters: Mapping[str, Any] = field(default_factory=dict)  # each filter parses its own table
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    learn: LearnConfig = field(default_factory=LearnConfig)
    source: str = "<defaults>"

    @property
    def admin_token(self) -> str:
        return self.server.admin_token or os.environ.get(ADMIN_TOKEN_ENV, "")

    def validate(self, path: str) -> None:
        prefixes = [r.prefix for r in self.routes.values()]
        if "" not in prefixes:
            raise ConfigError("routes: at least one route needs prefix = \"\" (the default route)")
        defaults: dict[str, str] = {}
        for name, route in self.routes.items():
            if route.prefix:
                continue
            if route.api in defaults:
                raise ConfigError(
                    f"routes.{name}: routes.{defaults[route.api]} is already the default (prefix \"\") route for "
                    f"api = {route.api!r}; change its upstream in [routes.{defaults[route.api]}], or give "
                    f"[routes.{name}] a prefix")
            defaults[route.api] = name
        seen = set()
        for p in prefixes:
            if p and p in seen:
                raise ConfigError(f"routes: prefix {p!r} is used twice")
            seen.add(p)
        for name, tenant in self.tenants.items():
            if not isinstance(tenant.api_key_env, str):
                unknown = sorted(set(tenant.api_key_env) - set(self.routes))
                if unknown:
                    raise ConfigError(f"tenants.{name}.api_key_env.{unknown[0]}: no such route "
                                      f"(routes: {', '.join(self.routes)})")


_TOP_KEYS = {"server", "upstream", "store", "routes", "pipeline", "mitm", "filters", "memory", "auth", "tenants",
             "learn"}


def default_config_text() -> str:
    return resources.files("ctxproxy.config").joinpath("ctxproxy.toml").read_text("utf-8")


def load_config(path: str | os.PathLike | None = None, **overrides: Any) -> Config:
    """Read ``path`` (or the embedded defaults), validate, apply CLI overrides.

    A user file replaces only the keys it names: a section it writes
    (``[server]``, ``[routes.anthropic]``, ``[memory.gate]``, a filter's
    ``[filters.<name>]``) keeps every default key it leaves out; a value, a
    list or a table of values (``ttl_days``) replaces the default whole. ``overrides`` take ``host``, ``port``,
    ``workers``, ``data_dir``, ``shutdown_timeout``, ``anthropic_upstream`` and
    ``openai_upstream``.
    """
    raw = tomllib.loads(default_config_text())
    source = "<defaults>"
    if path is not None:
        try:
            text = Path(path).read_text("utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
        try:
            user = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        raw = overlay(Config, raw, user)
        source = str(path)
    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise ConfigError(f"{unknown[0]}: unknown section (allowed: {', '.join(sorted(_TOP_KEYS))})")
    raw["filters"] = raw.get("filters", {})
    if not isinstance(raw["filters"], dict):
        raise ConfigError("filters: expected a table")
    cfg = parse_section(Config, raw, "")
    cfg = replace(cfg, source=source)
    return apply_overrides(cfg, **overrides)


def apply_overrides(cfg: Config, **o: Any) -> Config:
    server = cfg.server
    changes = {k: o[k] for k in ("host", "port", "workers", "data_dir", "shutdown_timeout") if o.get(k) is not None}
    if changes:
        server = replace(server, **changes)
        server.validate("server")
    routes = dict(cfg.routes)
    for family in ("anthropic", "openai"):
        url = o.get(f"{family}_upstream")
        if not url:
            continue
        for name, route in routes.items():
            if route.api == family and not route.prefix:
                routes[name] = replace(route, upstream=url.rstrip("/"))
                routes[name].validate(f"routes.{name}")
    return replace(cfg, server=server, routes=routes)


def replace_mitm(cfg: Config, **o: Any) -> Config:
    """``ctxproxy mitm``'s flag overrides (``host``, ``port``) of ``[mitm]``."""
    changes = {k: v for k, v in o.items() if v is not None}
    if not changes:
        return cfg
    mitm = replace(cfg.mitm, **changes)
    mitm.validate("mitm")
    return replace(cfg, mitm=mitm)
