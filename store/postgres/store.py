"""``Store`` over PostgreSQL: the repositories, batches and snapshots as
transactions, and erasure with its receipt chain.

A method of the store runs in a transaction of its own, committed when it
returns; ``batch()`` is one transaction for the block (the background
writer's group commit: a turn's write-ahead and the records of other turns
queued with it commit together, one round trip per statement and one
COMMIT); ``snapshot()`` is a REPEATABLE READ READ ONLY transaction.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Sequence

import orjson

from ..erasure import (ERASABLE_DOC_KINDS, MEMORIES_EXPIRED, MEMORY_INDEX, MEMORY_REVISIONS, POINTER_INDEXES,
                       POINTERS, SNAPSHOT_REF, SNAPSHOTS, TRIM, Request, finish, matcher, memory_plan, pointers_of,
                       memory_remains, seal, session_remains, unfrozen)
from ..errors import StoreError, WriteNeeded
from ..learned import attach as attach_learning
from ..records import (DEFAULT_PENDING_TIMEOUT, EFFECTS, INDEX, MEMORIES, RECEIPTS, SESSIONS, DeletionReceipt,
                       StoreStats)
from ..repositories import RepositorySet
from . import schema
from .common import Ctx, dump, ident, load
from .documents import PGDocuments, PGIndex
from .effects import PGEffects
from .learning import PGLearning
from .memories import PGMemories
from .pool import ALL_TENANTS, Pool, StoreUnavailable, Tx
from .proxy_keys import Invalidation, PGProxyKeys
from .session_index import PGSessionIndex
from .sessions import PGSessions

log = logging.getLogger("ctxproxy.store")

GROUP_LOCK_TIMEOUT = 0.2  # seconds a group commit waits for a row lock (see PGStore.group_batch)

# the tables an erasure deletes rows from: rewritten by `ctxproxy forget finish`
ERASED_TABLES = ("effects", "effect_calls", "sessions", "session_subjects", "documents", "document_scopes",
                 "postings", "memories", "memory_sessions", "memory_revisions", "learning",
                 "recall_memories", "recall_postings", "recall_df", "recall_parts", "session_tree", "session_turns")


class _StoreRunner:
    deferred = False

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self.in_batch = threading.local()  # a thread inside ``batch()`` writes through the batch only

    def read(self, op: Callable[[Tx], Any]) -> Any:
        return self._pool.run(op, readonly=True)

    def write(self, op: Callable[[Tx], Any]) -> Any:
        if getattr(self.in_batch, "open", False):
            raise StoreError("a store write inside this thread's batch(): write through the batch's repositories "
                             "(with the embedded store it would wait for its own lock)")
        return self._pool.run(op)


class _TxRunner:
    """The open transaction of a batch (writes commit with it) or a snapshot (a write raises WriteNeeded)."""

    deferred = True

    def __init__(self, tx: Tx) -> None:
        self._tx = tx
        self.open = True

    def _check(self) -> Tx:
        if not self.open:
            raise StoreError("the batch is not open any more (its block has ended)")
        return self._tx

    def read(self, op: Callable[[Tx], Any]) -> Any:
        return op(self._check())

    def write(self, op: Callable[[Tx], Any]) -> Any:
        tx = self._check()
        if tx.readonly:
            raise WriteNeeded()
        return op(tx)


class _Repos(RepositorySet):
    """The repositories over PostgreSQL, bound to one runner (the store, a batch or a snapshot)."""

    Effects = PGEffects
    Sessions = PGSessions
    Index = PGIndex
    Documents = PGDocuments
    Memories = PGMemories
    Learning = PGLearning

    def __init__(self, x: Any, ctx: Ctx, invalidation: Invalidation | None) -> None:
        super().__init__(x, ctx)
        self._inv = invalidation

    def _proxy_keys(self) -> PGProxyKeys:
        return PGProxyKeys(self._x, self._ctx.clock, self._inv)


class PGStore(_Repos):
    """``Store`` over a PostgreSQL database. Open with ``open_store(dsn=...)``."""

    backend = "postgres"
    commit_per_key = True  # the background writer commits each session's writes on their own (see writer)

    def __init__(self, pool: Pool, *, clock: Callable[[], float], pending_timeout: float | None,
                 schema_version: int, invalidation: Invalidation | None) -> None:
        self._pool = pool
        self.schema_version = schema_version
        self.derived: list[Any] = []  # what ``forget`` erases after ``delete_subject`` (learning, the session index)
        self.readonly = False
        self.path = ""
        self.invalidation = invalidation
        self._closed = False
        self._index_lock = threading.Lock()
        self._memory_index: Any = None
        self._session_index: Any = None
        super().__init__(_StoreRunner(pool), Ctx(clock, pending_timeout), invalidation)

    @classmethod
    def open(cls, dsn: str, *, pending_timeout: float | None = DEFAULT_PENDING_TIMEOUT,
             clock: Callable[[], float] = time.time, pool_size: int = 10, listen: bool = True,
             listen_dsn: str | None = None, timeout: float = 5.0) -> "PGStore":
        pool = Pool(dsn, max_size=pool_size, timeout=timeout)
        try:
            with pool.connection() as conn:
                version = schema.check(conn)
                role = conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
                                    ).fetchone()
                if role and role[0]:
                    log.warning("ctxproxy connects to PostgreSQL as a superuser or a BYPASSRLS role: row-level "
                                "security does not apply to it; use an ordinary role (docs/fleet.md)")
        except BaseException:
            pool.close()
            raise
        inv = Invalidation(pool, listen_dsn or dsn) if listen else None
        store = cls(pool, clock=clock, pending_timeout=pending_timeout, schema_version=version, invalidation=inv)
        attach_learning(store)  # forgetting reaches what learning derived from the subject
        store.derived.append(store.session_index())  # and the session index's rows (a step of its own, as embedded)
        return store

    # -- availability ---------------------------------------------------------------

    @property
    def availability(self) -> Any:
        return self._pool.availability

    def available(self) -> bool:
        """Whether the database answers (probed with backoff while it does not)."""
        return self._pool.availability.check()

    def health(self) -> dict[str, Any]:
        a = self._pool.availability
        up = a.check()
        out: dict[str, Any] = {"backend": "postgres", "database": "up" if up else "down", "since": a.since,
                               "schema_version": self.schema_version}
        if not up:
            out["error"] = a.last_error
        if self.invalidation is not None:
            out["notifications"] = "listening" if self.invalidation.listening.is_set() else "reconnecting"
        return out

    # -- batch and snapshot ------------------------------------------------------------

    @contextmanager
    def batch(self, lock_timeout: float | None = None) -> Iterator[_Repos]:
        """One transaction for the block, committed when it exits (or not at all).
        ``lock_timeout`` (seconds): a row lock not granted by then aborts the
        transaction with ``StoreConflict`` instead of waiting."""
        self._check()
        local = self._x.in_batch
        if getattr(local, "open", False):
            raise StoreError("batch() inside a batch of the same thread: use the open batch's repositories")
        local.open = True
        runner = None
        prelude = () if lock_timeout is None else (f"SET LOCAL lock_timeout = '{max(1, int(lock_timeout * 1000))}ms'",)
        try:
            with self._pool.transaction(prelude=prelude) as tx:
                runner = _TxRunner(tx)
                yield _Repos(runner, self._ctx, self._inv)
        finally:
            local.open = False
            if runner is not None:
                runner.open = False

    def group_batch(self) -> Any:
        """The background writer's batch for the writes of many turns together.
        Two replicas' groups can lock the same sessions in opposite orders; the
        server would break that deadlock only after its ``deadlock_timeout``
        (a second by default), so a group waits for a lock this long at most,
        then its writes run again one by one."""
        return self.batch(lock_timeout=GROUP_LOCK_TIMEOUT)

    @contextmanager
    def snapshot(self) -> Iterator[_Repos]:
        self._check()
        runner = None
        try:
            with self._pool.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", readonly=True) as tx:
                runner = _TxRunner(tx)
                yield _Repos(runner, self._ctx, self._inv)
        finally:
            if runner is not None:
                runner.open = False

    def _check(self) -> None:
        if self._closed:
            raise StoreError("store is closed")

    def memory_index(self) -> Any:
        """Recall's memory index: tables of this database, shared by every replica."""
        from .recall_index import PGMemoryIndex

        with self._index_lock:
            if self._memory_index is None:
                self._memory_index = PGMemoryIndex(self)
            return self._memory_index

    def session_index(self) -> Any:
        """The session index: tables of this database, shared by every replica."""
        with self._index_lock:
            if self._session_index is None:
                self._session_index = PGSessionIndex(self)
            return self._session_index

    # -- erasure ------------------------------------------------------------------------

    def _plan(self, tx: Tx, req: Request) -> dict[str, dict[Any, Any]]:
        tenant, session, subject = req.tenant, req.session, req.subject
        if req.kind == "":
            raise StoreError("delete_subject needs a session, a subject, a memory or a project")
        tx.tenant(tenant)
        sessions: set[str] = set()
        if session is not None:
            sessions.add(ident(session, "session"))
        up = None if subject is None else ident(subject, "subject")
        if up is not None:
            sessions.update(r[0] for r in tx.all(
                "SELECT session FROM session_subjects WHERE tenant = %s AND subject = %s", (tenant, up)))
        ss = sorted(sessions)
        plan: dict[str, dict[Any, Any]] = {k: {} for k in (SESSIONS, EFFECTS, *ERASABLE_DOC_KINDS)}
        for row in tx.all("SELECT session, doc FROM sessions WHERE tenant = %s AND part = '' AND session = ANY(%s)",
                          (tenant, ss)):
            plan[SESSIONS][row[0]] = load(SESSIONS, row[1], tenant)
        for row in tx.all("SELECT doc FROM effects WHERE tenant = %s AND session = ANY(%s)", (tenant, ss)):
            rec = load(EFFECTS, row[0], tenant)
            plan[EFFECTS][(rec["key"], rec["call_id"])] = rec
        for kind in ERASABLE_DOC_KINDS:
            docs = self.docs(kind)
            for sp in ss:
                plan[kind].update((r["id"], r) for r in docs._scoped_in(tx, tenant, "s", sp))
            if up is not None:
                plan[kind].update((r["id"], r) for r in docs._scoped_in(tx, tenant, "u", up))
        plan[POINTERS] = {(kind, index, r["id"]): r for kind, index, r in pointers_of(self.docs, tx, tenant, plan)}
        for kind, index in POINTER_INDEXES:
            docs = self.docs(kind)
            found = [r for sp in ss for r in docs._scoped_in(tx, index, "s", sp)]
            if up is not None:
                found += docs._scoped_in(tx, index, "u", up)
            for r in found:
                if isinstance(r.get("data"), dict) and r["data"].get("tenant") == tenant:
                    plan[POINTERS][(kind, index, r["id"])] = r
        tx.tenant(tenant)
        plan[MEMORIES], plan[MEMORIES_EXPIRED], plan[TRIM] = memory_plan(self.memories, tx, req)
        plan[SNAPSHOTS] = self._snapshots_in(tx, tenant, {*plan[MEMORIES], *plan[MEMORIES_EXPIRED]},
                                             set(plan[SESSIONS]))
        return plan

    def _snapshots_in(self, tx: Tx, tenant: str, memory_ids: set[str], erased: set[str]) -> dict[tuple, dict]:
        if not memory_ids:
            return {}
        out = {}
        for row in tx.tenant(tenant).all(
                "SELECT session, part, doc FROM sessions WHERE tenant = %s AND position('(mem:'::bytea in doc) > 0",
                (tenant,)):
            if row[0] in erased:
                continue
            raw = bytes(row[2])
            if {m.decode("utf-8", "replace") for m in SNAPSHOT_REF.findall(raw)} & memory_ids:
                out[(row[0], row[1])] = load(SESSIONS, raw, tenant)
        return out

    def _counts(self, tx: Tx, tenant: str, plan: Mapping[str, Mapping[Any, Any]]) -> dict[str, int]:
        counts = {kind: len(items) for kind, items in plan.items() if kind != TRIM}
        counts[INDEX] = counts[MEMORY_REVISIONS] = counts[MEMORY_INDEX] = 0
        for mid, rec in plan[MEMORIES].items():
            m = ident(mid, "memory id")
            counts[MEMORY_REVISIONS] += 1 + tx.one(
                "SELECT count(*) FROM memory_revisions WHERE tenant = %s AND memory_id = %s", (tenant, m))[0]
            counts[MEMORY_INDEX] += self.memories._index_count(rec) + bool(rec.external_id)
            counts[INDEX] += self.index._count_doc_in(tx, tenant, mid)
        return counts

    def count_subject(self, tenant: str, *, session: str | None = None, subject: str | None = None,
                      memory: str | None = None, project: str | None = None) -> dict[str, int]:
        req = Request(tenant, "", session=session, subject=subject, memory=memory, project=project)

        def op(tx: Tx) -> dict[str, int]:
            plan = self._plan(tx, req)
            return self._counts(tx.tenant(tenant), tenant, plan)

        return self._pool.run(op, isolation="REPEATABLE READ", readonly=True)

    def delete_subject(self, tenant: str, *, session: str | None = None, subject: str | None = None,
                       memory: str | None = None, project: str | None = None,
                       request_id: str | None = None) -> DeletionReceipt:
        """Erase what the database holds of one subject, in one transaction; the
        receipt is stored ``pending`` (see ``forget finish``)."""
        req = Request(tenant, request_id or uuid.uuid4().hex, session=session, subject=subject, memory=memory,
                      project=project)

        def op(tx: Tx) -> DeletionReceipt:
            tx.tenant(tenant).one("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"erase:{tenant}",))
            old = self.receipts._read_in(tx, tenant, req.request_id)
            if old is not None:
                return req.replay(old["data"])
            plan = self._plan(tx, req)
            tx.tenant(tenant)
            counts = self._counts(tx, tenant, plan)
            for sess in plan[SESSIONS]:
                self.sessions._delete_in(tx, tenant, plan[SESSIONS][sess]["session"])
            for rec in plan[EFFECTS].values():
                self.effects._delete_in(tx, tenant, rec["key"], rec["call_id"])
            for kind_ in ERASABLE_DOC_KINDS:
                for id_ in plan[kind_]:
                    self.docs(kind_)._delete_in(tx, tenant, id_)
            for (kind_, index, id_) in plan[POINTERS]:
                self.docs(kind_)._delete_in(tx, index, id_)
            tx.tenant(tenant)
            for mid in plan[MEMORIES]:
                self.memories._erase_in(tx, tenant, mid)
            for (sess, part), rec in plan[SNAPSHOTS].items():  # re-frozen without it at the session's next turn
                tx.tenant(tenant).exec("UPDATE sessions SET doc = %s WHERE tenant = %s AND session = %s AND part = %s",
                                       (dump(SESSIONS, unfrozen(rec)), tenant, sess, part))
            return finish(self.memories, self.receipts, tx, req, plan, counts, self._ctx.clock())

        return self._pool.run(op)

    def seal_receipt(self, tenant: str, request_id: str, *, counts: Mapping[str, int] | None = None,
                     status: str) -> DeletionReceipt:
        """Finish a receipt (``erasure.seal``); the chain head row is locked, so
        replicas keep the chain linear."""
        def op(tx: Tx) -> DeletionReceipt:
            old = self.receipts._read_in(tx.tenant(tenant), tenant, request_id)
            if old is None:
                raise StoreError(f"no receipt {request_id!r}")

            def head() -> dict[str, Any]:
                tx.exec("INSERT INTO store_meta (tenant, name, value) VALUES (%s, 'receipt_chain', %s) "
                        "ON CONFLICT DO NOTHING", (tenant, orjson.dumps({"seq": 0, "hash": ""})))
                return orjson.loads(bytes(tx.one(
                    "SELECT value FROM store_meta WHERE tenant = %s AND name = 'receipt_chain' FOR UPDATE",
                    (tenant,))[0]))

            d, new_head = seal(old["data"], counts, status, self._ctx.clock(), head)
            if new_head is not None:
                tx.exec("UPDATE store_meta SET value = %s WHERE tenant = %s AND name = 'receipt_chain'",
                        (orjson.dumps(new_head), tenant))
            self.receipts._put_in(tx, tenant, request_id, d, None, None)
            return DeletionReceipt.from_dict(d)

        return self._pool.run(op)

    def pending_receipts(self) -> list[tuple[str, str]]:
        """(tenant, request id) of every sealed receipt still ``pending``, in every tenant."""
        rows = self._pool.run(lambda tx: tx.tenant(ALL_TENANTS).all(
            "SELECT tenant, doc FROM documents WHERE kind = %s AND position('\"pending\"'::bytea in doc) > 0",
            (RECEIPTS,)), readonly=True)
        out = []
        for tenant, raw in rows:
            d = load(RECEIPTS, raw, tenant).get("data") or {}
            if d.get("status") == "pending" and d.get("hash") and not tenant.startswith("#"):
                out.append((tenant, d["request_id"]))
        return out

    def remaining(self, tenant: str, kind: str, digest: str | None, memory_ids: Sequence[str] = ()
                  ) -> dict[str, int]:
        """What the database still holds of an erased subject, found from its digest."""
        match = matcher(tenant, digest)

        def op(tx: Tx) -> dict[str, int]:
            out = {"memories": 0, "sessions": 0, "documents": 0}
            for (raw,) in tx.tenant(tenant).all("SELECT doc FROM memories WHERE tenant = %s", (tenant,)):
                out["memories"] += memory_remains(orjson.loads(raw), kind, match, memory_ids)
            if memory_ids:
                out["memories"] += tx.one("SELECT count(DISTINCT memory_id) FROM memory_revisions WHERE tenant = %s "
                                          "AND memory_id = ANY(%s)", (tenant, list(memory_ids)))[0]
            if kind in ("user", "session"):
                for (raw,) in tx.all("SELECT doc FROM sessions WHERE tenant = %s AND part = ''", (tenant,)):
                    out["sessions"] += session_remains(orjson.loads(raw), kind, match)
                scope = "s" if kind == "session" else "u"
                for (value,) in tx.all("SELECT value FROM document_scopes WHERE tenant = %s AND scope = %s",
                                       (tenant, scope)):
                    if match(value):
                        out["documents"] += 1
            return out

        return self._pool.run(op, readonly=True)

    def compact(self) -> bool:
        """False: a shared database is not rewritten on the way (see ``rewrite_erased``)."""
        return False

    def rewrite_erased(self) -> bool:
        """Rewrite the tables erasures delete from (VACUUM FULL), so no dead tuple
        keeps an erased row readable in the data files. Each table is locked
        while it is rewritten, for every replica: only the operator's
        ``ctxproxy forget finish`` runs it."""
        try:
            with self._pool.connection() as conn:
                for table in ERASED_TABLES:
                    conn.execute(f"VACUUM (FULL, ANALYZE) {table}")
        except Exception as exc:
            from .pool import translate

            raise translate(exc) from exc
        return True

    # -- lifetime ------------------------------------------------------------------------

    def stats(self) -> StoreStats:
        def op(tx: Tx) -> tuple[int, dict[str, int]]:
            size = tx.one("SELECT pg_database_size(current_database())")[0]
            rows = tx.all("SELECT relname, greatest(reltuples, 0)::bigint FROM pg_class WHERE relkind = 'r' "
                          "AND relnamespace = 'public'::regnamespace")
            return size, {r[0]: r[1] for r in rows}

        size, entries = self._pool.run(op, readonly=True)
        return StoreStats(map_size=0, used_bytes=size, entries=entries)

    def closing(self) -> None:
        """The store is about to close (its writer is stopping): a wait for a
        connection while the database is down gives up instead of holding the
        shutdown for the pool's timeout; writes that still can land, do."""
        self._pool.closing()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self.invalidation is not None:
                self.invalidation.close()
            self._pool.close()

    def __enter__(self) -> "PGStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["PGStore", "StoreUnavailable"]
