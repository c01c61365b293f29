"""``ProxyKeyStore`` over PostgreSQL, and how a revocation reaches every replica.

A key is a row of ``proxy_keys`` (found by its id before anyone knows its
tenant: the lookup runs as the operator's ``#all``, then the record's own
tenant is checked). Every create and revoke, and every erasure, moves the
generation (a row of ``store_meta`` under ``#keys``) and sends ``NOTIFY
ctxproxy_security`` in the same transaction, so a notification exists only
for a committed change.

Each replica's ``Invalidation`` listens on that channel; ``generation()`` is
a memory read of the highest generation seen. The backstop: when the last
comparison with the database is older than ``check_interval`` (a listener
that lost its connection and missed a notification), ``generation()`` reads
the stored value again. A key cache keyed on the generation (``proxy.auth``)
so drops a revoked key on the next request after the notification arrives,
and at the latest ``check_interval`` seconds after the commit.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from ..errors import StoreError
from ..proxy_keys import _ID_RE, KeyRules, ProxyKey, _dump, _record, revoked
from .common import Runner
from .pool import ALL_TENANTS, Pool, Tx

log = logging.getLogger("ctxproxy.store")

CHANNEL = "ctxproxy_security"
KEYS_TENANT = "#keys"
CHECK_INTERVAL = 1.0


class Invalidation:
    """The highest security generation this process has seen, kept current by
    LISTEN on its own connection (``listen_dsn``: the server, not a
    transaction-mode pooler, which cannot hold a LISTEN) and by a version
    check at most every ``check_interval`` seconds."""

    def __init__(self, pool: Pool, listen_dsn: str, check_interval: float = CHECK_INTERVAL) -> None:
        self._pool = pool
        self._dsn = listen_dsn
        self.check_interval = check_interval
        self.generation = 0
        self._checked = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.listening = threading.Event()
        self.listeners: list[Callable[[int], None]] = []
        self._thread = threading.Thread(target=self._run, name="ctxproxy-pg-listen", daemon=True)
        self._thread.start()

    def seen(self, generation: int) -> None:
        with self._lock:
            moved = generation > self.generation
            if moved:
                self.generation = generation
        if moved:
            for fn in self.listeners:
                fn(generation)

    def stored(self) -> int:
        row = self._pool.run(lambda tx: tx.tenant(KEYS_TENANT).one(
            "SELECT value FROM store_meta WHERE tenant = %s AND name = 'generation'", (KEYS_TENANT,)))
        return 0 if row is None else int(bytes(row[0]))

    def current(self) -> int:
        now = time.monotonic()
        if now - self._checked >= self.check_interval or not self.listening.is_set():
            self._checked = now
            self.seen(self.stored())
        return self.generation

    def _run(self) -> None:
        import psycopg

        delay = 0.1
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._dsn, autocommit=True, connect_timeout=5,
                                     application_name="ctxproxy-listen") as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.seen(self.stored())  # what changed while not listening
                    self.listening.set()
                    delay = 0.1
                    while not self._stop.is_set():
                        for n in conn.notifies(timeout=0.5, stop_after=1):
                            if n.payload.startswith("keys:"):
                                self.seen(int(n.payload[5:]))
            except Exception as exc:  # the server went away: reconnect with backoff
                if self._stop.is_set():
                    break
                if self.listening.is_set():
                    log.warning("PostgreSQL notifications lost (%s); reconnecting", type(exc).__name__)
                self.listening.clear()
                self._stop.wait(delay)
                delay = min(delay * 2, 5.0)
        self.listening.clear()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)


def bump_generation(tx: Tx) -> int:
    """Move the security generation in ``tx`` and tell every replica when it
    commits: a key created or revoked, or an erasure (what a replica
    remembered of erased records is not served again)."""
    row = tx.tenant(KEYS_TENANT).one(
        "INSERT INTO store_meta (tenant, name, value) VALUES (%s, 'generation', '1') "
        "ON CONFLICT (tenant, name) DO UPDATE SET value = convert_to((convert_from(store_meta.value, 'UTF8')::bigint + 1)::text, 'UTF8') "
        "RETURNING value", (KEYS_TENANT,))
    generation = int(bytes(row[0]))
    tx.notify(CHANNEL, f"keys:{generation}")
    return generation


class PGProxyKeys(KeyRules):
    def __init__(self, x: Runner, clock: Callable[[], float], invalidation: Invalidation | None) -> None:
        self._x = x
        self._clock = clock
        self._inv = invalidation

    def _insert(self, record: ProxyKey) -> None:
        def op(tx: Tx) -> int:
            tx.tenant(record.principal.tenant).exec(
                "INSERT INTO proxy_keys (tenant, key_id, created_at, doc) VALUES (%s, %s, %s, %s)",
                (record.principal.tenant, record.id, record.created_at, _dump(record)))
            return bump_generation(tx)

        self._published(self._x.write(op))

    def _published(self, generation: int) -> None:
        if self._inv is not None and not getattr(self._x, "deferred", False):  # (a batch has not committed yet)
            self._inv.seen(generation)  # this process need not wait for its own notification

    def get(self, key_id: str) -> ProxyKey | None:
        if not isinstance(key_id, str) or not _ID_RE.match(key_id):
            return None
        row = self._x.read(lambda tx: tx.tenant(ALL_TENANTS).one(
            "SELECT tenant, doc FROM proxy_keys WHERE key_id = %s", (key_id,)))
        if row is None:
            return None
        rec = _record(bytes(row[1]))
        if rec.principal.tenant != row[0]:
            raise StoreError(f"proxy key {key_id} is filed under another tenant than its record's")
        return rec

    def list(self, tenant: str | None = None) -> list[ProxyKey]:
        def op(tx: Tx) -> list[Any]:
            if tenant is None:
                return tx.tenant(ALL_TENANTS).all("SELECT doc FROM proxy_keys")
            return tx.tenant(tenant).all("SELECT doc FROM proxy_keys WHERE tenant = %s", (tenant,))

        found = [_record(bytes(r[0])) for r in self._x.read(op)]
        return sorted(found, key=lambda r: (r.created_at, r.id))

    def revoke(self, key_id: str, tenant: str | None = None) -> ProxyKey | None:
        if not isinstance(key_id, str) or not _ID_RE.match(key_id):
            return None

        def op(tx: Tx) -> tuple[ProxyKey | None, int | None]:
            row = tx.tenant(tenant or ALL_TENANTS).one(
                "SELECT tenant, doc FROM proxy_keys WHERE key_id = %s FOR UPDATE", (key_id,))
            if row is None:
                return None, None
            rec, changed = revoked(_record(bytes(row[1])), tenant, self._clock())
            if not changed:
                return rec, None
            tx.exec("UPDATE proxy_keys SET revoked_at = %s, doc = %s WHERE tenant = %s AND key_id = %s",
                    (rec.revoked_at, _dump(rec), row[0], key_id))
            return rec, bump_generation(tx)

        rec, generation = self._x.write(op)
        if generation is not None:
            self._published(generation)
        return rec

    def generation(self) -> int:
        """Moves with every create and revoke on any replica (see the module docstring)."""
        if self._inv is None:
            return self._x.read(lambda tx: int(bytes(tx.tenant(KEYS_TENANT).one(
                "SELECT coalesce((SELECT value FROM store_meta WHERE tenant = %s AND name = 'generation'), "
                "'0'::bytea)", (KEYS_TENANT,))[0])))
        return self._inv.current()
