"""What the proxy opens once at start-up and hands to every filter: one typed record.

A driver (the aiohttp server, the mitmproxy driver, a test) opens them
(``ctxproxy.proxy.services.open_services``) before it builds the engine; a
filter's ``create(config, services)`` takes what it uses, and a turn carries
the same record (``turn.services``). The admin API reads it too. Fields the
proxy opens only on first use (recall's indexes, the admin API's memory gate
and learner) are declared here like the rest, so every reader and writer
names a field, never a string.

Reading by name (``services["store"]``, ``services.get("writer")``,
``turn.service("writer")``) stays for tests and tools; it only reads.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterator, Mapping


@dataclass(eq=False)
class Services:
    config: Any = None  # ctxproxy.config.Config
    store: Any = None  # the store (LMDB or PostgreSQL), behind ctxproxy.store's interfaces
    writer: Any = None  # the store's background writer (group commit; ``Turn.commit`` uses it)
    secret: bytes | None = None  # the server secret (keys redaction placeholders per session)
    data_dir: str | Path | None = None  # where the store, indexes and caches live
    telemetry: Any = None  # the OTel providers, when OTEL_* configures an exporter
    keyring: Any = None  # keys mode: the proxy keys' check (``proxy.auth.Keyring``)
    retriever: Any = None  # inject's evidence retriever, when one is installed
    recall: Any = None  # recall's indexes, opened on first use (``recall_services``)
    memory_gate: Any = None  # the admin API's memory write gate, made on first use
    learner: Any = None  # the admin API's learning job, made on first use

    @classmethod
    def of(cls, given: "Services | Mapping[str, Any] | None") -> "Services":
        """``given`` as a ``Services`` (a mapping of field names, from a test or a tool)."""
        if isinstance(given, Services):
            return given
        given = dict(given or {})
        unknown = set(given) - _NAMES
        if unknown:
            raise TypeError(f"unknown service(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_NAMES))})")
        return cls(**given)

    # -- reading by name ---------------------------------------------------------------
    def get(self, name: str, default: Any = None) -> Any:
        value = getattr(self, name, None) if name in _NAMES else None
        return default if value is None else value

    def __getitem__(self, name: str) -> Any:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (n for n in _ORDER if getattr(self, n) is not None)


_ORDER = tuple(f.name for f in fields(Services))
_NAMES = frozenset(_ORDER)
