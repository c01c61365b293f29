"""Connections to PostgreSQL: one pool per store, transactions with the tenant set.

The store's interfaces are synchronous (LMDB answers in microseconds), and
they are called from the store's writer thread, from ``asyncio.to_thread``
in the admin API and from the CLI; so the driver is psycopg 3 with its
thread-safe ``ConnectionPool``. Each call borrows a connection for one
transaction and gives it back.

Safe behind a transaction-mode pooler (PgBouncer ``pool_mode =
transaction``): nothing outlives a transaction — no server-side prepared
statements (``prepare_threshold=None``), no session settings; the tenant is
set with ``set_config(..., true)``, local to the transaction. LISTEN needs a
session of its own, so it uses ``listen_dsn`` (the server itself, not the
pooler; see ``notify``).

Row-level security: every table's policy admits the rows whose ``tenant``
is ``current_setting('ctxproxy.tenant')``. ``Tx.tenant(t)`` sets it before a
repository's statements; a statement run without it sees no row at all.
Work that spans tenants (the operator's key listing, erasures pending in
every tenant, the memory change feed) runs as ``ALL_TENANTS``.

Availability: a connection error marks the store unavailable and raises
``StoreUnavailable``; ``Availability`` probes with backoff until the server
answers again (``/ctx/healthz`` reports it, the edge answers model calls 503
while it lasts unless ``[store] on_unavailable = "forward"``).
"""
from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from ..errors import StoreError, StoreUnavailable, WriteNeeded

log = logging.getLogger("ctxproxy.store")

T = TypeVar("T")
ALL_TENANTS = "#all"  # tenant ids never start with "#": the operator's view across tenants
TENANT_SETTING = "ctxproxy.tenant"


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - the postgres extra is missing
        raise StoreError("the postgres backend needs psycopg: pip install 'ctxproxy[postgres]'") from exc
    return psycopg


def translate(exc: BaseException) -> StoreError:
    """A driver error as the store's own."""
    psycopg = _psycopg()
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)) and not isinstance(
            exc, psycopg.errors.QueryCanceled):
        return StoreUnavailable(f"PostgreSQL unavailable: {_first_line(exc)}")
    return StoreError(f"PostgreSQL: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class Availability:
    """Whether the database answered last time. When a call fails to reach it,
    a thread probes it with backoff (doubling, capped) until it answers again;
    ``check()`` never waits (the edge asks on the event loop)."""

    def __init__(self, probe: Callable[[], None], *, first_delay: float = 0.1, max_delay: float = 5.0):
        self._probe = probe
        self._lock = threading.Lock()
        self.up = True
        self.since = time.time()
        self.last_error = ""
        self._first = first_delay
        self._max = max_delay
        self._prober: threading.Thread | None = None
        self._closed = threading.Event()

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            self.last_error = _first_line(exc)
            if not self.up:
                return
            self.up = False
            self.since = time.time()
            log.error("PostgreSQL unavailable: %s", self.last_error)
            if not self._closed.is_set():
                self._prober = threading.Thread(target=self._probe_until_up, name="ctxproxy-pg-probe", daemon=True)
                self._prober.start()

    def succeeded(self) -> None:
        if self.up:
            return
        with self._lock:
            was, self.up = self.up, True
            self.since = time.time()
        if not was:
            log.warning("PostgreSQL reachable again")

    def check(self) -> bool:
        return self.up

    def _probe_until_up(self) -> None:
        delay = self._first
        while not self.up and not self._closed.wait(delay):
            try:
                self._probe()
            except Exception as exc:
                self.last_error = _first_line(exc)
                delay = min(delay * 2, self._max)
                continue
            self.succeeded()

    def close(self) -> None:
        self._closed.set()


class Tx:
    """One transaction: statements with the tenant set for row-level security.

    ``BEGIN`` is sent with the first tenant setting, in one round trip."""

    def __init__(self, conn: Any, begin: str = "BEGIN", readonly: bool = False) -> None:
        self.conn = conn
        self.cur = conn.cursor()
        self.readonly = readonly
        self._begin = begin
        self.begun = False
        self._tenant: str | None = None

    def tenant(self, tenant: str) -> "Tx":
        if tenant != self._tenant:
            from psycopg import sql

            setting = sql.SQL("SELECT set_config({}, {}, true)").format(sql.Literal(TENANT_SETTING),
                                                                         sql.Literal(tenant))
            if not self.begun:
                self.cur.execute(sql.SQL(self._begin + "; ") + setting)
                self.begun = True
            else:
                self.cur.execute(setting)
            self._tenant = tenant
        return self

    def _start(self) -> None:
        if not self.begun:
            self.cur.execute(self._begin)
            self.begun = True

    def write_check(self) -> None:
        if self.readonly:
            raise WriteNeeded()

    def exec(self, sql: str, params: Sequence[Any] | None = None) -> int:
        self.write_check()
        self._start()
        self.cur.execute(sql, params)
        return self.cur.rowcount

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            self.write_check()
            self._start()
            self.cur.executemany(sql, rows)

    def one(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        self._start()
        self.cur.execute(sql, params)
        return self.cur.fetchone()

    def all(self, sql: str, params: Sequence[Any] | None = None) -> list[Any]:
        self._start()
        self.cur.execute(sql, params)
        return self.cur.fetchall()

    def notify(self, channel: str, payload: str) -> None:
        """Delivered to every listener when (and only if) the transaction commits."""
        self.exec("SELECT pg_notify(%s, %s)", (channel, payload))

    def commit(self) -> None:
        if self.begun:
            self.cur.execute("COMMIT")
            self.begun = False

    def rollback(self) -> None:
        if self.begun:
            self.begun = False
            try:
                self.cur.execute("ROLLBACK")
            except Exception:  # the connection is gone: the server rolled back for us
                pass


class Pool:
    """A psycopg ``ConnectionPool`` and the transactions run on it."""

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 5.0,
                 application_name: str = "ctxproxy") -> None:
        _psycopg()
        from psycopg_pool import ConnectionPool

        self.dsn = dsn
        self._timeout = timeout
        kwargs = {"prepare_threshold": None, "application_name": application_name, "autocommit": True,
                  "connect_timeout": max(1, int(timeout))}
        self._pool = ConnectionPool(dsn, min_size=min_size, max_size=max_size, kwargs=kwargs, open=False,
                                    timeout=timeout, reconnect_timeout=0, name="ctxproxy-store",
                                    check=ConnectionPool.check_connection)
        self.availability = Availability(self._probe)
        try:
            self._pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self._pool.close()
            raise StoreUnavailable(f"cannot connect to PostgreSQL ({_redact(dsn)}): {_first_line(exc)}") from exc

    def _probe(self) -> None:
        with self._pool.connection(timeout=self._timeout) as conn:
            conn.execute("SELECT 1")

    def run(self, op: Callable[[Tx], T], *, readonly: bool = False, isolation: str | None = None) -> T:
        """``op(tx)`` in one transaction, committed when it returns."""
        begin = "BEGIN" + (f" ISOLATION LEVEL {isolation}" if isolation else "") + (" READ ONLY" if readonly else "")
        with self.transaction(begin, readonly) as tx:
            return op(tx)

    @contextmanager
    def transaction(self, begin: str = "BEGIN", readonly: bool = False) -> Iterator[Tx]:
        """A transaction for the block: committed when it exits, rolled back if it raises."""
        psycopg = _psycopg()
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection(timeout=self._timeout) as conn:
                tx = Tx(conn, begin, readonly)
                try:
                    yield tx
                    tx.commit()
                except BaseException:
                    tx.rollback()
                    raise
        except (WriteNeeded, StoreError):
            raise
        except PoolTimeout as exc:
            self.availability.failed(exc)
            raise StoreUnavailable(f"PostgreSQL unavailable: {_first_line(exc)}") from exc
        except (psycopg.Error, OSError) as exc:
            err = translate(exc)
            if isinstance(err, StoreUnavailable):
                self.availability.failed(exc)
            raise err from exc
        self.availability.succeeded()

    def connection(self) -> Any:
        """A pooled connection for a block of its own (``with pool.connection() as conn``)."""
        return self._pool.connection(timeout=self._timeout)

    def close(self) -> None:
        self.availability.close()
        self._pool.close()


def _redact(dsn: str) -> str:
    """A DSN without its password, for messages."""
    import re

    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", re.sub(r"password=\S+", "password=***", dsn))
