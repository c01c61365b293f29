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

from ..errors import StoreConflict, StoreError, StoreUnavailable, WriteNeeded

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
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith("40") or state == "55P03":  # rolled back (deadlock, serialization), lock not available
        return StoreConflict(f"PostgreSQL: {_first_line(exc)}")  # the server is there: not a reason to go down
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
    """One transaction: statements with the tenant set for row-level security,
    in as few round trips as the answers allow.

    Statements are bound on the client (``ClientCursor``: plain SQL text, so
    nothing outlives the transaction on a pooler) and sent together as one
    simple query where the protocol allows: ``BEGIN``, the tenant setting and
    every write whose answer nobody waits for (``send``) travel with the next
    statement that has an answer to read, or with ``COMMIT``. A write queued
    that way which fails fails the statement it travelled with; the
    transaction is lost either way.

    ``implicit``: a read-only transaction at READ COMMITTED needs no
    ``BEGIN``/``COMMIT``: each statement is its own implicit transaction (what
    READ COMMITTED gives a transaction's statements anyway), carrying the
    tenant and ``transaction_read_only`` in front of it — one round trip per
    read.

    ``rows``: what a repository read under a lock, or wrote, in this
    transaction (by key, as encoded); nobody else can change those rows until
    it ends, so reading them again needs no round trip.
    """

    def __init__(self, conn: Any, begin: str = "BEGIN", readonly: bool = False, implicit: bool = False,
                 prelude: Sequence[str] = ()) -> None:
        psycopg = _psycopg()
        self.conn = conn
        self.cur = psycopg.ClientCursor(conn)
        self.readonly = readonly
        self.implicit = implicit
        self._begin = begin
        self.begun = False
        self._tenant: str | None = None
        self._prelude = list(prelude)  # after BEGIN, before anything else (SET LOCAL ...)
        self._pending: list[str] = []
        self._writes = False  # a write is queued: COMMIT has something to send
        self.rows: dict[Any, Any] = {}
        self._before_commit: list[Callable[["Tx"], None]] = []

    @property
    def tenant_set(self) -> str | None:
        """The tenant the transaction's statements run as (None: not set yet)."""
        return self._tenant

    def before_commit(self, op: Callable[["Tx"], None]) -> None:
        """Run ``op(tx)`` once just before the transaction commits (writes a
        repository keeps back to send together, e.g. recall's index rows)."""
        if op not in self._before_commit:
            self._before_commit.append(op)

    def tenant(self, tenant: str) -> "Tx":
        if tenant != self._tenant:
            self._tenant = tenant
            if not self.implicit:
                self._pending.append(self._setting(tenant))
        return self

    def _setting(self, tenant: str) -> str:
        if self.implicit:
            return self.cur.mogrify("SELECT set_config(%s, %s, true), set_config('transaction_read_only', 'on', true)",
                                    (TENANT_SETTING, tenant))
        return self.cur.mogrify("SELECT set_config(%s, %s, true)", (TENANT_SETTING, tenant))

    def _run(self, statement: str) -> None:
        """``statement`` (bound) with everything queued before it, in one round
        trip; the cursor holds its answer."""
        if self.implicit:
            parts = [self._setting(self._tenant)] if self._tenant is not None else []
        else:
            parts = [] if self.begun else [self._begin, *self._prelude]
            self.begun = True
        parts += self._pending
        parts.append(statement)
        self._pending = []
        self._writes = False
        self.cur.execute("; ".join(parts))
        while self.cur.nextset():  # to the last statement's answer
            pass

    def _bound(self, sql: str, params: Sequence[Any] | None) -> str:
        return sql if params is None else self.cur.mogrify(sql, params)

    def write_check(self) -> None:
        if self.readonly:
            raise WriteNeeded()

    def exec(self, sql: str, params: Sequence[Any] | None = None) -> int:
        """A write whose row count the caller reads: sent now."""
        self.write_check()
        self._run(self._bound(sql, params))
        return self.cur.rowcount

    def send(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """A write whose answer nobody waits for: it travels with the next statement."""
        self.write_check()
        self._pending.append(self._bound(sql, params))
        self._writes = True

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """The same write for each row, travelling together with the next statement."""
        rows = list(rows)
        if rows:
            self.write_check()
            self._pending.extend(self._bound(sql, r) for r in rows)
            self._writes = True

    def one(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        self._run(self._bound(sql, params))
        return self.cur.fetchone()

    def all(self, sql: str, params: Sequence[Any] | None = None) -> list[Any]:
        self._run(self._bound(sql, params))
        return self.cur.fetchall()

    def notify(self, channel: str, payload: str) -> None:
        """Delivered to every listener when (and only if) the transaction commits."""
        self.send("SELECT pg_notify(%s, %s)", (channel, payload))

    def commit(self) -> None:
        while self._before_commit:
            self._before_commit.pop(0)(self)
        if self.begun or self._writes:
            self._run("COMMIT")
        self._pending = []
        self.begun = False

    def rollback(self) -> None:
        self._pending = []
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
        self._kwargs = kwargs
        self._closing = threading.Event()
        self._pool = ConnectionPool(dsn, min_size=min_size, max_size=max_size, kwargs=kwargs, open=False,
                                    timeout=timeout, reconnect_timeout=0, name="ctxproxy-store",
                                    check=_check_if_idle, reset=_note_returned)
        self.availability = Availability(self._probe)
        try:
            self._pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self._pool.close()
            raise StoreUnavailable(f"cannot connect to PostgreSQL ({_redact(dsn)}): {_first_line(exc)}") from exc

    def _probe(self) -> None:
        # A connection of its own: it fails at once while the server refuses
        # (a pool would wait its whole timeout), so the store is back as soon
        # as the server is. Then the idle connections from before the outage
        # are checked and replaced: the first requests after it get live ones.
        psycopg = _psycopg()
        with psycopg.connect(self.dsn, **self._kwargs) as conn:
            conn.execute("SELECT 1")
        self._pool.check()

    def run(self, op: Callable[[Tx], T], *, readonly: bool = False, isolation: str | None = None) -> T:
        """``op(tx)`` in one transaction, committed when it returns."""
        begin = "BEGIN" + (f" ISOLATION LEVEL {isolation}" if isolation else "") + (" READ ONLY" if readonly else "")
        with self.transaction(begin, readonly, implicit=readonly and not isolation) as tx:
            return op(tx)

    @contextmanager
    def transaction(self, begin: str = "BEGIN", readonly: bool = False, *, implicit: bool = False,
                    prelude: Sequence[str] = ()) -> Iterator[Tx]:
        """A transaction for the block: committed when it exits, rolled back if
        it raises (``Tx`` says what ``implicit`` and ``prelude`` do)."""
        psycopg = _psycopg()
        from psycopg_pool import PoolTimeout

        try:
            with self._connection() as conn:
                tx = Tx(conn, begin, readonly, implicit, prelude)
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

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection for one transaction. While the database is down
        the wait goes in short slices, so one started before ``closing()`` gives
        up at its next slice instead of waiting out the pool's timeout (the
        caller gets ``StoreUnavailable``: its write is reported as failed). With
        the database up it is the pool's own wait: its queue keeps waiters in order."""
        from psycopg_pool import PoolTimeout

        deadline = time.monotonic() + self._timeout
        while True:
            if self._closing.is_set() and not self.availability.up:
                raise StoreUnavailable("PostgreSQL unavailable while the store closes: "
                                       f"{self.availability.last_error}")
            left = deadline - time.monotonic()
            wait = left if self.availability.up else min(left, WAIT_SLICE)
            got = False
            try:
                with self._pool.connection(timeout=max(wait, 0.001)) as conn:
                    got = True
                    yield conn
                return
            except PoolTimeout:
                if got or wait >= left:
                    raise

    def closing(self) -> None:
        """The store is about to close: waits for a connection while the
        database is down give up now (the pool itself stays open, so what can
        still be written, is)."""
        self._closing.set()

    def close(self) -> None:
        self._closing.set()
        self.availability.close()
        self._pool.close()


WAIT_SLICE = 0.1  # seconds: how often a wait for a connection while the database is down looks at ``closing()``


# A connection back in the pool within this many seconds is handed out again
# without a check: a busy replica saves a round trip per transaction, and one
# that sat idle (the server may have restarted since) is checked first.
CHECK_AFTER_IDLE = 1.0


def _note_returned(conn: Any) -> None:
    conn._ctx_returned = time.monotonic()


def _check_if_idle(conn: Any) -> None:
    if time.monotonic() - getattr(conn, "_ctx_returned", 0.0) > CHECK_AFTER_IDLE:
        from psycopg_pool import ConnectionPool

        ConnectionPool.check_connection(conn)


def _redact(dsn: str) -> str:
    """A DSN without its password, for messages."""
    import re

    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", re.sub(r"password=\S+", "password=***", dsn))
