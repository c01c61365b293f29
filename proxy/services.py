"""What every driver opens before it serves, and closes after: the services.

``serve`` (the aiohttp edge) and ``mitm`` (transparent mode) start the same
way: the data dir, the server secret, the store and its background writer,
memory upkeep, telemetry, the proxy keys' check — one ``Services`` record
(``filters/services.py``) the engine, the filters and the admin API share.
A test's driver (``tests/enginedriver.py``) opens them here too.
"""
from __future__ import annotations

import gc
import logging
import os
import secrets
from pathlib import Path
from typing import Any, Mapping

from ctxproxy.config import Config
from ctxproxy.filters import Services
from ctxproxy.store import open_configured
from ctxproxy.store.writer import BackgroundWriter

from .auth import Keyring
from .telemetry import open_telemetry
from .version import version

log = logging.getLogger("ctxproxy")


class ServeError(Exception):
    """Start-up failed for a reason the operator can fix (port in use, data
    directory unusable, store unopenable): reported as one line, no traceback."""


def server_secret(cfg: Config) -> bytes:
    """32 random bytes kept in the data dir (mode 0600): per-session keys derive from it.

    ``--workers`` start together and each asks: the first to publish the file wins and
    every one reads that. The bytes are written to a private file first and linked into
    place whole, so no worker ever reads a file that exists but is still empty."""
    path = Path(cfg.server.secret_file or Path(cfg.server.data_dir) / "secret")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return path.read_bytes()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails if another worker published first: its secret stands
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_bytes()


def memory_upkeep(store: Any, cfg: Config) -> None:
    """At load: re-scan memories when the threat rules changed (quarantine),
    purge long-expired ones, and finish erasures left pending (when this
    process has the store to itself). A store without memories or pending
    erasures skips it (and the threat rules' compile time)."""
    from ctxproxy.store.forget import finish_erasure

    if store.pending_receipts():
        finish_erasure(store)
    if store.memories.tenants():
        from ctxproxy.store.services.memory.gate import MemoryGate

        gate = MemoryGate(store, cfg.memory.gate)
        gate.rescan()
        gate.purge_expired()


def open_services(cfg: Config) -> Services:
    """What filters and the admin API use, opened once: the store and its
    writer, the server secret, telemetry, the proxy keys' check."""
    Path(cfg.server.data_dir).mkdir(parents=True, exist_ok=True)
    services = Services(config=cfg, secret=server_secret(cfg), data_dir=cfg.server.data_dir)
    services.store = store = open_configured(cfg.store, cfg.server.data_dir)
    if cfg.store.backend == "postgres" and cfg.store.on_unavailable == "forward":
        log.warning("store.on_unavailable = \"forward\": while PostgreSQL is down, model calls are not refused "
                    "up front (what they would record is lost)")
    services.writer = BackgroundWriter(store)  # group commit for after-the-turn records
    memory_upkeep(store, cfg)
    services.telemetry = open_telemetry(version())  # None unless OTEL_* configures an exporter
    services.keyring = Keyring(cfg, store)
    return services


def given_services(cfg: Config, given: Services | Mapping[str, Any]) -> Services:
    """Services a caller opened (a test, another driver in this process), with
    the proxy keys' check added when it has none."""
    services = Services.of(given)
    if services.keyring is None:
        services.keyring = Keyring(cfg, services.store)
    return services


def close_services(services: Services) -> None:
    """The store's background writer (it commits what is queued), then the store."""
    store = services.store
    if store is None:
        return
    writer = services.writer
    if writer is not None:
        writer.close()
    store.close()


def settle_heap() -> None:
    """Once started: start-up objects (modules, vocabularies, rules) live for the
    whole process, so they move out of the collector's sight, and young objects
    are collected less often — each request allocates many short-lived dicts
    while parsing JSON."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20000, 50, 50)
