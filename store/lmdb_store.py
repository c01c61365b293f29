"""The LMDB store: the interfaces of ``interfaces`` over one environment.

Named databases (values are orjson documents carrying ``"v"``, their record
version, and ``"tenant"``, checked again on every read)::

    meta         schema                         -> {schema_version, history}
    effects      T key call_id                  -> effect record
    effects_idx  T "c" call_id|alias key call_id   (empty values: secondary
                 T "s" session key call_id          indexes for by_call_id and
                 T "t" task key call_id             list by session / task)
                 T "r" "s"|"t" session|task -> 8 random bytes, renewed on every
                                                    write of one of its records
    sessions     T session                      -> {state, subject, subjects}
                 T session part                 -> {state, part}  (state that grows with the
                                                    conversation, read only by its owner)
    checkpoints  T id                           -> document   } scope_idx:
    manifests    T id                           -> document   }  T kind "s" session id
    pruned       T id                           -> document   }  T kind "u" subject id
    memories     T id                           -> document   }  T "sessions" "u" subject session
    receipts     T request_id                   -> deletion receipt
    index        T "t" term doc                 -> posting data
                 T "d" doc term                 -> (reverse entry, to drop a doc's postings)
    proxy_keys   (by key id, see ``proxy_keys``)

``T`` is ``tenant \\x00`` (see ``keys``); every scan starts below it.

Erasure finds what holds a session's or a subject's data through
``scope_idx``: a document is indexed under its session and each of its
``sessions`` (a task's checkpoint lists the effects of every session of the
task), a session under every subject it has had (``subjects``: a session
whose user changed still holds the earlier user's data).

Schema: ``meta`` holds the store's schema version. Opening a store written by
a newer ctxproxy fails with a clear ``StoreError``; an older one is migrated
forward one version at a time with ``MIGRATIONS[from_version]``, each step in
its own transaction together with the version bump.
"""
from __future__ import annotations

import os
import time
import uuid
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence, TypeVar

import orjson

from . import keys, surrogates
from .document_store import DocumentRules, doc_sessions
from .effect_ledger import LedgerRules, revision_of
from .encoding import RECORD_VERSION
from .encoding import dump as _dump
from .erasure import (ERASABLE_DOC_KINDS, MEMORIES_EXPIRED, MEMORY_INDEX, MEMORY_REVISIONS, POINTER_INDEXES,
                      POINTERS, SNAPSHOT_REF, SNAPSHOTS, TRIM, Request, finish, matcher, memory_plan, pointers_of,
                      memory_remains, seal, session_remains, unfrozen)
from .errors import StoreError
from .lmdb_env import BatchRunner, LMDBEnv, SnapshotRunner, acquire, release
from .lmdb_env import load as _load
from .lmdb_env import scan as _scan
from .lmdb_env import scan_rest as _scan_rest
from .lmdb_learning import LEARN, LMDBLearning
from .lmdb_memories import MEMORY_DBS, LMDBMemories, migrate_documents
from .proxy_keys import PROXY_KEYS, LMDBProxyKeys
from .records import (CHECKPOINTS, DEFAULT_PENDING_TIMEOUT, EFFECTS, INDEX, MANIFESTS, MEMORIES, PRUNED, RECEIPTS,
                      SESSIONS, DeletionReceipt, StoreStats)
from .records import DOC_KINDS, REF_POINTERS, TURN_POINTERS  # noqa: F401  (where callers have found them)
from .repositories import RepositorySet
from .session_state import SessionRules, subjects_of

SCHEMA_VERSION = 2  # bump with a MIGRATIONS entry from the previous version

META = "meta"
EFFECTS_IDX = "effects_idx"
SCOPE_IDX = "scope_idx"
DB_NAMES = (META, EFFECTS, EFFECTS_IDX, SESSIONS, CHECKPOINTS, MANIFESTS, PRUNED, *MEMORY_DBS,
            INDEX, RECEIPTS, SCOPE_IDX, PROXY_KEYS, LEARN)
_POINTERS = POINTER_INDEXES
_TRIM = TRIM

DEFAULT_MAP_SIZE = 256 << 20
DEFAULT_MAX_MAP_SIZE = 64 << 30
_SCHEMA_KEY = b"schema"

T = TypeVar("T")


class MigrationContext:
    """What a migration function gets: raw access to every record of every
    tenant inside the migration's write transaction."""

    def __init__(self, txn: Any, dbs: Mapping[str, Any]) -> None:
        self._txn = txn
        self._dbs = dbs

    def items(self, kind: str) -> list[tuple[bytes, dict[str, Any]]]:
        cursor = self._txn.cursor(self._dbs[kind])
        return [(k, orjson.loads(v)) for k, v in cursor.iternext()]

    def put(self, kind: str, key: bytes, record: Mapping[str, Any]) -> None:
        self._txn.put(key, surrogates.dumps(record), db=self._dbs[kind])

    def delete(self, kind: str, key: bytes) -> None:
        self._txn.delete(key, db=self._dbs[kind])


Migration = Callable[[MigrationContext], None]
MIGRATIONS: dict[int, Migration] = {  # from_version -> function that upgrades it to from_version + 1
    1: lambda ctx: migrate_documents(ctx._txn, ctx._dbs, time.time),  # memories become MemoryRecords
}


class _Runner(Protocol):
    def read(self, op: Callable[[Any], T]) -> T: ...
    def write(self, op: Callable[[Any], T]) -> T: ...


def _opt_part(value: str | None, what: str) -> bytes | None:
    return None if value is None else keys.part(value, what)


class _DB:
    """A repository's database handle, looked up on each use: compaction
    (``LMDBEnv.compact``) reopens the environment and replaces every handle."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        return obj._ctx.dbs[self.name]


class _Ctx:
    """What every repository shares: the databases, the clock, the rules."""

    def __init__(self, env: LMDBEnv, clock: Callable[[], float], pending_timeout: float | None):
        self.env = env
        self.dbs = env.dbs
        self.clock = clock
        self.pending_timeout = pending_timeout


# -- effects -------------------------------------------------------------------


class LMDBEffects(LedgerRules):
    """``EffectLedger`` over LMDB (the rules are ``LedgerRules``')."""

    _db = _DB(EFFECTS)
    _idx = _DB(EFFECTS_IDX)

    @staticmethod
    def _pk(tenant: str, key: str, call_id: str) -> bytes:
        return keys.key(tenant, keys.part(key, "effect key"), keys.part(call_id, "call id"))

    def _idx_keys(self, tenant: str, rec: Mapping[str, Any]) -> list[bytes]:
        ek, ec = keys.part(rec["key"], "effect key"), keys.part(rec["call_id"], "call id")
        out = [keys.key(tenant, b"c", keys.part(c, "call id"), ek, ec)
               for c in [rec["call_id"], *rec.get("aliases", ())]]
        if rec.get("session") is not None:
            out.append(keys.key(tenant, b"s", keys.part(rec["session"], "session"), ek, ec))
        if rec.get("task") is not None:
            out.append(keys.key(tenant, b"t", keys.part(rec["task"], "task"), ek, ec))
        return out

    def _load_in(self, txn: Any, tenant: str, pk: bytes) -> dict[str, Any] | None:
        raw = txn.get(pk, db=self._db)
        return None if raw is None else _load(EFFECTS, raw, tenant)

    def _rev_keys(self, tenant: str, rec: Mapping[str, Any]) -> list[bytes]:
        """Keys of the revisions of the record's session and task (see ``revision``)."""
        out = []
        if rec.get("session") is not None:
            out.append(keys.key(tenant, b"r", b"s", keys.part(rec["session"], "session")))
        if rec.get("task") is not None:
            out.append(keys.key(tenant, b"r", b"t", keys.part(rec["task"], "task")))
        return out

    def _delete_in(self, txn: Any, tenant: str, pk: bytes, rec: Mapping[str, Any]) -> None:
        txn.delete(pk, db=self._db)
        for k in [*self._idx_keys(tenant, rec), *self._rev_keys(tenant, rec)]:
            txn.delete(k, db=self._idx)

    def _from_index(self, txn: Any, tenant: str, prefix: bytes) -> list[dict[str, Any]]:
        tp = keys.tenant_prefix(tenant)
        out = []
        for rest in _scan_rest(txn, self._idx, prefix):
            rec = self._load_in(txn, tenant, tp + rest)
            if rec is not None:
                out.append(rec)
        return out

    # -- LedgerRules' primitives ----------------------------------------------------

    def _get_in(self, txn: Any, tenant: str, key: str, call_id: str, lock: bool = False) -> dict[str, Any] | None:
        return self._load_in(txn, tenant, self._pk(tenant, key, call_id))  # (one writer: nothing to lock)

    def _rewrite_in(self, txn: Any, tenant: str, rec: Mapping[str, Any]) -> None:
        txn.put(self._pk(tenant, rec["key"], rec["call_id"]), _dump(EFFECTS, rec), db=self._db)
        rev = os.urandom(8)  # a fresh value, never a counter that could come round again
        for k in self._rev_keys(tenant, rec):
            txn.put(k, rev, db=self._idx)

    def _insert_in(self, txn: Any, tenant: str, rec: Mapping[str, Any]) -> bool:
        self._rewrite_in(txn, tenant, rec)
        for k in self._idx_keys(tenant, rec):
            txn.put(k, b"", db=self._idx)
        return True

    def _add_calls_in(self, txn: Any, tenant: str, rec: Mapping[str, Any], calls: Sequence[str]) -> None:
        ek, ec = keys.part(rec["key"], "effect key"), keys.part(rec["call_id"], "call id")
        for c in calls:
            txn.put(keys.key(tenant, b"c", keys.part(c, "call id"), ek, ec), b"", db=self._idx)

    def _of_key_in(self, txn: Any, tenant: str, key: str, lock: bool = False) -> list[dict[str, Any]]:
        return [_load(EFFECTS, v, tenant)
                for _, v in _scan(txn, self._db, keys.prefix(tenant, keys.part(key, "effect key")))]

    def _of_call_in(self, txn: Any, tenant: str, call_id: str) -> list[dict[str, Any]]:
        return self._from_index(txn, tenant, keys.prefix(tenant, b"c", keys.part(call_id, "call id")))

    def _listed_in(self, txn: Any, tenant: str, session: str | None, task: str | None) -> list[dict[str, Any]]:
        if session is not None:
            return self._from_index(txn, tenant, keys.prefix(tenant, b"s", keys.part(session, "session")))
        if task is not None:
            return self._from_index(txn, tenant, keys.prefix(tenant, b"t", keys.part(task, "task")))
        return [_load(EFFECTS, v, tenant) for _, v in _scan(txn, self._db, keys.tenant_prefix(tenant))]

    def revision(self, tenant: str, *, session: str | None = None, task: str | None = None) -> bytes | None:
        """A value that changes whenever an effect record of this session (or
        task) is written or deleted; None when there is none. Lets a caller keep
        what it derived from ``list`` until the ledger changes."""
        column, value = revision_of(session, task)
        k = keys.key(tenant, b"r", column[:1].encode(), keys.part(value, column))
        return self._x.read(lambda txn: txn.get(k, db=self._idx))



# -- sessions ------------------------------------------------------------------


class LMDBSessions(SessionRules):
    """``SessionStore`` over LMDB (the rules are ``SessionRules``')."""

    _db = _DB(SESSIONS)
    _scope = _DB(SCOPE_IDX)

    def _subject_key(self, tenant: str, subject: str, session_part: bytes) -> bytes:
        return keys.key(tenant, b"sessions", b"u", keys.part(subject, "subject"), session_part)

    @staticmethod
    def _pk(tenant: str, session: str, part: str | None = None) -> bytes:
        """A session's record, or one of its ``part`` records (the session's key,
        the separator, the part's name), which a scan of the tenant's sessions skips."""
        sp = keys.part(session, "session")
        return keys.key(tenant, sp) if part is None else keys.key(tenant, sp, keys.part(part, "part"))

    def _delete_in(self, txn: Any, tenant: str, pk: bytes, rec: Mapping[str, Any]) -> None:
        """Delete a session's record, its parts and its subject index entries."""
        txn.delete(pk, db=self._db)
        self._ctx.env.session_cache.note(txn, (tenant, rec["session"]), None, None)
        for part_key, _ in _scan(txn, self._db, pk + keys.SEP):
            txn.delete(part_key, db=self._db)
        sp = pk[len(keys.tenant_prefix(tenant)):]
        for subject in subjects_of(rec):
            txn.delete(self._subject_key(tenant, subject, sp), db=self._scope)

    def _read_in(self, txn: Any, tenant: str, session: str, part: str | None,
                 lock: bool = False) -> dict[str, Any] | None:
        raw = txn.get(self._pk(tenant, session, part), db=self._db)
        return None if raw is None else _load(SESSIONS, raw, tenant)

    def get(self, tenant: str, session: str, part: str | None = None) -> dict[str, Any] | None:
        if isinstance(self._x, BatchRunner):  # inside a write: what it wrote so far, never a kept copy
            return super().get(tenant, session, part)
        return self.get_parts(tenant, session, (part,))[part]

    def get_parts(self, tenant: str, session: str, parts: Sequence[str | None], at: int | None = None
                  ) -> dict[str | None, Any]:
        """``SessionRules.get_parts``, read-only states (``frozen``) kept for the
        next turn in the environment's ``session_cache``: a read that finds them
        valid at the store's (or the snapshot's) transaction id opens no
        transaction (outside a snapshot) and decodes nothing. Inside a batch:
        read from its transaction, nothing kept. The keys are made once for all
        the parts (a turn reads five records: their keys share all but the part's name).
        ``at``: the environment's last committed id as the caller just read it
        (``LMDBStore.committed_id``), else read here."""
        keys.check_tenant(tenant)
        sk = (tenant, session)
        cache = None if isinstance(self._x, BatchRunner) else self._ctx.env.session_cache
        if cache is not None and isinstance(self._x, _Handle):
            last = self._x.check().last_txnid() if at is None else at
            if last is not None:
                hit = cache.lookup(sk, parts, last, self._decoder(tenant))
                if hit is not None:
                    return hit
        db = self._db

        def wanted() -> list[tuple[str | None, bytes]]:
            pk = self._pk(tenant, session)
            return [(p, pk if p is None else pk + keys.SEP + keys.part(p, "part")) for p in parts]

        def op(txn: Any) -> dict[str | None, Any]:
            if cache is None:
                return {part: None if (raw := txn.get(key, db=db)) is None else _load(SESSIONS, raw, tenant)["state"]
                        for part, key in wanted()}
            txnid = txn.id()
            decode = self._decoder(tenant)
            hit = cache.lookup(sk, parts, txnid, decode)
            if hit is not None:
                return hit
            return cache.fill(sk, txnid, {part: txn.get(key, db=db) for part, key in wanted()}, decode)

        return self._x.read(op)

    @staticmethod
    def _decoder(tenant: str) -> Callable[[bytes], Any]:
        return lambda raw: _load(SESSIONS, raw, tenant)["state"]

    def _store_in(self, txn: Any, tenant: str, session: str, part: str | None, rec: Mapping[str, Any]) -> None:
        raw = _dump(SESSIONS, rec)
        txn.put(self._pk(tenant, session, part), raw, db=self._db)
        self._ctx.env.session_cache.note(txn, (tenant, session), part, raw)
        if part is None and rec["subject"] is not None:
            txn.put(self._subject_key(tenant, rec["subject"], keys.part(session, "session")), b"", db=self._scope)

    def delete(self, tenant: str, session: str) -> bool:
        pk = self._pk(tenant, session)

        def op(txn: Any) -> bool:
            raw = txn.get(pk, db=self._db)
            if raw is None:
                return False
            self._delete_in(txn, tenant, pk, _load(SESSIONS, raw, tenant))
            return True

        return self._x.write(op)

    def list(self, tenant: str, *, subject: str | None = None) -> list[str]:
        tp = keys.tenant_prefix(tenant)

        def op(txn: Any) -> list[str]:
            if subject is None:  # (part records have a separator after the session)
                return [_load(SESSIONS, v, tenant)["session"] for k, v in _scan(txn, self._db, tp)
                        if keys.SEP not in k[len(tp):]]
            out = []
            prefix = keys.prefix(tenant, b"sessions", b"u", keys.part(subject, "subject"))
            for rest in _scan_rest(txn, self._scope, prefix):
                raw = txn.get(tp + rest, db=self._db)
                if raw is not None:
                    out.append(_load(SESSIONS, raw, tenant)["session"])
            return out

        return self._x.read(op)



# -- term index ----------------------------------------------------------------


class LMDBIndex:
    """``TermIndex`` over LMDB."""

    _db = _DB(INDEX)

    def __init__(self, x: _Runner, ctx: _Ctx) -> None:
        self._x = x
        self._ctx = ctx

    def _doc_terms_in(self, txn: Any, tenant: str, doc_part: bytes) -> list[bytes]:
        return _scan_rest(txn, self._db, keys.prefix(tenant, b"d", doc_part))

    def _remove_doc_in(self, txn: Any, tenant: str, doc_part: bytes) -> int:
        n = 0
        for term_part in self._doc_terms_in(txn, tenant, doc_part):
            n += bool(txn.delete(keys.key(tenant, b"t", term_part, doc_part), db=self._db))
            txn.delete(keys.key(tenant, b"d", doc_part, term_part), db=self._db)
        return n

    def put_doc(self, tenant: str, doc_id: str, terms: Mapping[str, Mapping[str, Any]]) -> None:
        dp = keys.part(doc_id, "doc id")
        items = [(term, keys.part(term, "term"), dict(data or {})) for term, data in terms.items()]

        def op(txn: Any) -> None:
            self._remove_doc_in(txn, tenant, dp)
            for term, tp, data in items:
                posting = {"v": RECORD_VERSION, "tenant": tenant, "term": term, "doc": doc_id,
                           "data": data}
                txn.put(keys.key(tenant, b"t", tp, dp), _dump(INDEX, posting), db=self._db)
                txn.put(keys.key(tenant, b"d", dp, tp), b"", db=self._db)

        self._x.write(op)

    def postings(self, tenant: str, term: str) -> list[tuple[str, dict[str, Any]]]:
        prefix = keys.prefix(tenant, b"t", keys.part(term, "term"))

        def op(txn: Any) -> list[tuple[str, dict[str, Any]]]:
            out = []
            for _, v in _scan(txn, self._db, prefix):
                p = _load(INDEX, v, tenant)
                out.append((p["doc"], p["data"]))
            return out

        return self._x.read(op)

    def terms(self, tenant: str, doc_id: str) -> list[str]:
        dp = keys.part(doc_id, "doc id")

        def op(txn: Any) -> list[str]:
            out = []
            for term_part in self._doc_terms_in(txn, tenant, dp):
                raw = txn.get(keys.key(tenant, b"t", term_part, dp), db=self._db)
                if raw is not None:
                    out.append(_load(INDEX, raw, tenant)["term"])
            return out

        return self._x.read(op)

    def remove_doc(self, tenant: str, doc_id: str) -> int:
        dp = keys.part(doc_id, "doc id")
        return self._x.write(lambda txn: self._remove_doc_in(txn, tenant, dp))


# -- documents -----------------------------------------------------------------


_IN_SESSION = keys.SEP + b"s" + keys.SEP  # a document's scope entries: under a session, of a subject
_OF_SUBJECT = keys.SEP + b"u" + keys.SEP


class LMDBDocuments(DocumentRules):
    """``DocumentStore`` over LMDB, one per kind (the rules are ``DocumentRules``')."""

    _scope = _DB(SCOPE_IDX)

    @property
    def _db(self) -> Any:
        return self._ctx.dbs[self.kind]

    def __init__(self, kind: str, x: Any, ctx: Any, index: Any = None) -> None:
        super().__init__(kind, x, ctx, index)
        self._kind_part = kind.encode()
        self._id_what = f"{kind} id"

    def _scope_keys(self, tenant: str, rec: Mapping[str, Any], id_part: bytes) -> list[bytes]:
        """``tenant, kind, s, session, id`` for each of its sessions, ``tenant, kind, u, subject, id``."""
        session, subject, sessions = rec.get("session"), rec.get("subject"), rec.get("sessions")
        if session is None and subject is None and not sessions:  # filed under nothing (a turn pointer)
            return []
        under = keys.tenant_prefix(tenant) + self._kind_part
        tail = keys.SEP + id_part
        if sessions:  # a task's checkpoint: the sessions it holds data of too
            out = [under + _IN_SESSION + keys.part(s, "session") + tail for s in doc_sessions(rec)]
        else:  # one session at most (every manifest and pointer)
            out = [] if session is None else [under + _IN_SESSION + keys.part(session, "session") + tail]
        if subject is not None:
            out.append(under + _OF_SUBJECT + keys.part(subject, "subject") + tail)
        return out

    def _pk(self, tenant: str, id: str) -> bytes:
        return keys.key(tenant, keys.part(id, self._id_what))

    def _insert_in(self, txn: Any, tenant: str, id: str, rec: Mapping[str, Any]) -> dict[str, Any] | None:
        ip = keys.part(id, self._id_what)
        pk = keys.tenant_prefix(tenant) + ip
        dbs = self._ctx.dbs
        db = dbs[self.kind]
        if not txn.put(pk, _dump(self.kind, rec), db=db, overwrite=False):  # one is there: nothing written
            return _load(self.kind, txn.get(pk, db=db), tenant)
        scope = dbs[SCOPE_IDX]
        for k in self._scope_keys(tenant, rec, ip):
            txn.put(k, b"", db=scope)
        return None

    def _read_in(self, txn: Any, tenant: str, id: str) -> dict[str, Any] | None:
        raw = txn.get(self._pk(tenant, id), db=self._db)
        return None if raw is None else _load(self.kind, raw, tenant)

    def _store_in(self, txn: Any, tenant: str, id: str, rec: Mapping[str, Any],
                  old: Mapping[str, Any] | None) -> None:
        ip = keys.part(id, self._id_what)
        if old is not None:
            for k in self._scope_keys(tenant, old, ip):
                txn.delete(k, db=self._scope)
        txn.put(keys.key(tenant, ip), _dump(self.kind, rec), db=self._db)
        for k in self._scope_keys(tenant, rec, ip):
            txn.put(k, b"", db=self._scope)

    def _remove_in(self, txn: Any, tenant: str, id: str, rec: Mapping[str, Any]) -> int:
        return self._delete_in(txn, tenant, self._pk(tenant, id), rec)

    def _delete_in(self, txn: Any, tenant: str, pk: bytes, rec: Mapping[str, Any]) -> int:
        """Delete one document and its index entries; returns postings dropped."""
        ip = pk[len(keys.tenant_prefix(tenant)):]
        txn.delete(pk, db=self._db)
        for k in self._scope_keys(tenant, rec, ip):
            txn.delete(k, db=self._scope)
        return 0 if self._index is None else self._index._remove_doc_in(txn, tenant, ip)

    def _scoped_in(self, txn: Any, tenant: str, scope: bytes, value_part: bytes
                   ) -> list[tuple[bytes, dict[str, Any]]]:
        tp = keys.tenant_prefix(tenant)
        out = []
        for rest in _scan_rest(txn, self._scope, keys.prefix(tenant, self.kind.encode(), scope, value_part)):
            raw = txn.get(tp + rest, db=self._db)
            if raw is not None:
                out.append((tp + rest, _load(self.kind, raw, tenant)))
        return out

    def _found_in(self, txn: Any, tenant: str, session: str | None, subject: str | None) -> list[dict[str, Any]]:
        if session is not None:
            return [r for _, r in self._scoped_in(txn, tenant, b"s", keys.part(session, "session"))]
        if subject is not None:
            return [r for _, r in self._scoped_in(txn, tenant, b"u", keys.part(subject, "subject"))]
        return [_load(self.kind, v, tenant) for _, v in _scan(txn, self._db, keys.tenant_prefix(tenant))]



# -- the store -----------------------------------------------------------------


class _Repos(RepositorySet):
    """The repositories over LMDB, bound to one runner (the environment, a batch or a snapshot)."""

    Effects = LMDBEffects
    Sessions = LMDBSessions
    Index = LMDBIndex
    Documents = LMDBDocuments
    Memories = LMDBMemories
    Learning = LMDBLearning

    def _proxy_keys(self) -> LMDBProxyKeys:
        return LMDBProxyKeys(self._x, self._ctx.env, self._ctx.clock)


class LMDBBatch(_Repos):
    """The repositories writing into one open transaction (see ``Store.batch``)."""


class LMDBSnapshot(_Repos):
    """The repositories reading one consistent snapshot; a write raises
    ``WriteNeeded`` (see ``Store.snapshot``)."""


class _Handle:
    """One ``open_store`` handle on a shared environment; refuses work once closed."""

    def __init__(self, env: LMDBEnv) -> None:
        self.env = env
        self.closed = False

    def check(self) -> LMDBEnv:
        if self.closed:
            raise StoreError(f"store at {self.env.path} is closed")
        return self.env

    def read(self, op: Callable[[Any], T]) -> T:
        return self.check().read(op)

    def write(self, op: Callable[[Any], T]) -> T:
        return self.check().write(op)


class LMDBStore(_Repos):
    """``Store`` over one LMDB environment. Open with ``open_store``."""

    def __init__(self, env: LMDBEnv, *, clock: Callable[[], float],
                 pending_timeout: float | None, schema_version: int) -> None:
        self._env = env
        self._handle = _Handle(env)
        self._ctx = _Ctx(env, clock, pending_timeout)
        self.path = env.path
        self.readonly = env.readonly
        self.schema_version = schema_version
        # Indexes derived from the store (recall's SQLite FTS, the session index) register
        # here when opened; forgetting erases from each (``store.forget``).
        self.derived: list[Any] = []
        super().__init__(self._handle, self._ctx)
        ref = weakref.ref(self)
        self._on_reopen = lambda: (st := ref()) is not None and st._reset_repositories()
        env.on_reopen.append(self._on_reopen)

    def committed_id(self) -> int | None:
        """The environment's last committed transaction id, by any process (``LMDBEnv.last_txnid``),
        or None: read once for reads made together with nothing awaited between them (a turn's
        session and its memories' feed position), which then ask LMDB once instead of each."""
        return self._handle.check().last_txnid()

    def _reset_repositories(self) -> None:
        """Forget the repositories built so far (after compaction reopened the
        environment, a repository that kept a database handle would hold a dead one)."""
        self.forget_repositories()

    @classmethod
    def open(
        cls,
        path: str,
        *,
        map_size: int = DEFAULT_MAP_SIZE,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
        readonly: bool = False,
        pending_timeout: float | None = DEFAULT_PENDING_TIMEOUT,
        max_readers: int = 126,
        clock: Callable[[], float] = time.time,
        schema_version: int = SCHEMA_VERSION,
        migrations: Mapping[int, Migration] | None = None,
    ) -> LMDBStore:
        env = acquire(str(path), db_names=DB_NAMES, map_size=map_size, max_map_size=max_map_size,
                      readonly=readonly, max_readers=max_readers)
        try:
            version = _ensure_schema(env, schema_version,
                                     MIGRATIONS if migrations is None else migrations, clock)
        except BaseException:
            release(env)
            raise
        return cls(env, clock=clock, pending_timeout=pending_timeout, schema_version=version)

    # -- batch -----------------------------------------------------------------

    lazy_commits = True  # ``batch(durable=False)`` is honoured; ``sync_lazy`` settles it

    @contextmanager
    def batch(self, durable: bool = True) -> Iterator[LMDBBatch]:
        """One write transaction for the block: everything the batch's
        repositories write commits (fsync) together when the block exits, or
        not at all if it raises. Keep it short: it holds the single writer
        lock of every process sharing the environment. Inside it, use the
        batch's repositories, not the store's. ``durable=False`` (writes nothing
        waits for): the commit's meta page is flushed later, by the next commit
        or ``sync_lazy`` (``lmdb_env``'s Durability)."""
        runner = BatchRunner(self._handle.check())
        runner.begin()
        try:
            yield LMDBBatch(runner, self._ctx)
            runner.commit(durable)
        except BaseException:
            runner.abort()
            raise

    def sync_lazy(self) -> None:
        """Flush a ``durable=False`` batch's meta page if none flushed it since."""
        if not self._handle.closed:
            self._env.sync_lazy()

    @contextmanager
    def snapshot(self) -> Iterator[LMDBSnapshot]:
        """The repositories over one read transaction, for work that usually
        only reads: the first write raises ``WriteNeeded`` and the caller
        redoes the work in ``batch()``. A turn that writes nothing so never
        takes the writer lock (held by another process, or by the background
        writer during its fsync)."""
        runner = SnapshotRunner(self._handle.check())
        runner.begin()
        try:
            yield LMDBSnapshot(runner, self._ctx)
        finally:
            runner.end()

    # -- deletion ----------------------------------------------------------------

    def _plan(self, txn: Any, req: Request) -> dict[str, dict[bytes, Any]]:
        tenant, session, subject = req.tenant, req.session, req.subject
        if req.kind == "":
            raise StoreError("delete_subject needs a session, a subject, a memory or a project")
        tp = keys.tenant_prefix(tenant)
        dbs = self._ctx.dbs
        session_parts: set[bytes] = set()
        if session is not None:
            session_parts.add(keys.part(session, "session"))
        up = _opt_part(subject, "subject")
        if up is not None:
            session_parts.update(_scan_rest(txn, dbs[SCOPE_IDX],
                                            keys.prefix(tenant, b"sessions", b"u", up)))
        plan: dict[str, dict[bytes, Any]] = {k: {} for k in (SESSIONS, EFFECTS, *ERASABLE_DOC_KINDS)}
        for sp in sorted(session_parts):
            raw = txn.get(tp + sp, db=dbs[SESSIONS])
            if raw is not None:
                plan[SESSIONS][tp + sp] = _load(SESSIONS, raw, tenant)
            for rest in _scan_rest(txn, dbs[EFFECTS_IDX], keys.prefix(tenant, b"s", sp)):
                raw = txn.get(tp + rest, db=dbs[EFFECTS])
                if raw is not None:
                    plan[EFFECTS][tp + rest] = _load(EFFECTS, raw, tenant)
            for kind in ERASABLE_DOC_KINDS:
                plan[kind].update(self.docs(kind)._scoped_in(txn, tenant, b"s", sp))
        if up is not None:
            for kind in ERASABLE_DOC_KINDS:
                plan[kind].update(self.docs(kind)._scoped_in(txn, tenant, b"u", up))
        plan[POINTERS] = self._pointers_in(txn, tenant, session_parts, up, plan)
        plan[MEMORIES], plan[MEMORIES_EXPIRED], plan[_TRIM] = memory_plan(self.memories, txn, req)
        plan[SNAPSHOTS] = self._snapshots_in(txn, tenant, {*plan[MEMORIES], *plan[MEMORIES_EXPIRED]},
                                             set(plan[SESSIONS]))
        return plan

    def _snapshots_in(self, txn: Any, tenant: str, memory_ids: set[str], erased: set[bytes]
                      ) -> dict[bytes, dict[str, Any]]:
        """Other sessions whose frozen memory snapshot shows one of these memories
        (the snapshot filter renders each line with ``(mem:<id>, <day>)``)."""
        if not memory_ids:
            return {}
        out = {}
        tp = keys.tenant_prefix(tenant)
        for k, v in _scan(txn, self._ctx.dbs[SESSIONS], tp):
            if k in erased or b"(mem:" not in v:
                continue
            if {m.decode("utf-8", "replace") for m in SNAPSHOT_REF.findall(v)} & memory_ids:
                out[k] = _load(SESSIONS, v, tenant)
        return out

    def _pointers_in(self, txn: Any, tenant: str, session_parts: set[bytes], up: bytes | None,
                     erased: Mapping[str, Mapping[bytes, Mapping[str, Any]]]
                     ) -> dict[bytes, tuple[str, str, dict[str, Any]]]:
        """This tenant's id -> tenant pointers of the documents erased, and those
        filed under the sessions or subject erased (another tenant may use the same
        session name: its pointers stay)."""
        found: dict[bytes, tuple[str, str, dict[str, Any]]] = {
            self.docs(kind)._pk(index, rec["id"]): (kind, index, rec)
            for kind, index, rec in pointers_of(self.docs, txn, tenant, erased)}
        for kind, index in _POINTERS:
            docs = self.docs(kind)
            scoped = [docs._scoped_in(txn, index, b"s", sp) for sp in sorted(session_parts)]
            if up is not None:
                scoped.append(docs._scoped_in(txn, index, b"u", up))
            for pk, rec in (item for items in scoped for item in items):
                data = rec.get("data")
                if isinstance(data, dict) and data.get("tenant") == tenant:
                    found[pk] = (kind, index, rec)
        return found

    def _counts(self, txn: Any, tenant: str, plan: Mapping[str, Mapping[Any, Any]]) -> dict[str, int]:
        counts = {kind: len(items) for kind, items in plan.items() if kind != _TRIM}
        counts[INDEX] = 0
        counts[MEMORY_REVISIONS] = counts[MEMORY_INDEX] = 0
        for mid, rec in plan[MEMORIES].items():
            pk = self.memories._pk(tenant, mid)
            counts[MEMORY_REVISIONS] += 1 + len(_scan_rest(txn, self._ctx.dbs["memory_revs"], pk + keys.SEP))
            counts[MEMORY_INDEX] += len(self.memories._index_keys(tenant, rec)) + bool(rec.external_id)
            counts[INDEX] += len(self.index._doc_terms_in(txn, tenant, keys.part(mid, "memory id")))
        return counts

    def count_subject(self, tenant: str, *, session: str | None = None, subject: str | None = None,
                      memory: str | None = None, project: str | None = None) -> dict[str, int]:
        req = Request(tenant, "", session=session, subject=subject, memory=memory, project=project)
        return self._handle.read(lambda txn: self._counts(txn, tenant, self._plan(txn, req)))

    def delete_subject(self, tenant: str, *, session: str | None = None,
                       subject: str | None = None, memory: str | None = None,
                       project: str | None = None, request_id: str | None = None) -> DeletionReceipt:
        """Erase what the store holds of one subject (see ``Store.delete_subject``);
        the receipt is stored ``pending`` (``store.forget`` finishes it)."""
        req = Request(tenant, request_id or uuid.uuid4().hex, session=session, subject=subject, memory=memory,
                      project=project)
        rpk = keys.key(tenant, keys.part(req.request_id, "request id"))

        def op(txn: Any) -> DeletionReceipt:
            dbs = self._ctx.dbs
            raw = txn.get(rpk, db=dbs[RECEIPTS])
            if raw is not None:
                return req.replay(_load(RECEIPTS, raw, tenant)["data"])
            plan = self._plan(txn, req)
            counts = self._counts(txn, tenant, plan)
            for pk, rec in plan[SESSIONS].items():
                self.sessions._delete_in(txn, tenant, pk, rec)
            for pk, rec in plan[EFFECTS].items():
                self.effects._delete_in(txn, tenant, pk, rec)
            for kind_ in ERASABLE_DOC_KINDS:
                for pk, rec in plan[kind_].items():
                    self.docs(kind_)._delete_in(txn, tenant, pk, rec)
            for pk, (kind_, index, rec) in plan[POINTERS].items():
                self.docs(kind_)._delete_in(txn, index, pk, rec)
            for mid in plan[MEMORIES]:
                self.memories._erase_in(txn, tenant, mid)
            for pk, rec in plan[SNAPSHOTS].items():  # re-frozen without it at the session's next turn
                txn.put(pk, _dump(SESSIONS, unfrozen(rec)), db=self._ctx.dbs[SESSIONS])
            if plan[SNAPSHOTS]:
                self._ctx.env.session_cache.note_unknown(txn)
            return finish(self.memories, self.receipts, txn, req, plan, counts, self._ctx.clock())

        return self._handle.write(op)

    def seal_receipt(self, tenant: str, request_id: str, *, counts: Mapping[str, int] | None = None,
                     status: str) -> DeletionReceipt:
        """Finish a receipt (``erasure.seal``) in one transaction, so the chain
        stays linear across processes."""
        rpk = keys.key(tenant, keys.part(request_id, "request id"))
        head_key = b"receipt_chain:" + tenant.encode()

        def op(txn: Any) -> DeletionReceipt:
            dbs = self._ctx.dbs
            raw = txn.get(rpk, db=dbs[RECEIPTS])
            if raw is None:
                raise StoreError(f"no receipt {request_id!r}")

            def head() -> dict[str, Any]:
                head_raw = txn.get(head_key, db=dbs[META])
                return orjson.loads(head_raw) if head_raw else {"seq": 0, "hash": ""}

            d, new_head = seal(_load(RECEIPTS, raw, tenant)["data"], counts, status, self._ctx.clock(), head)
            if new_head is not None:
                txn.put(head_key, orjson.dumps(new_head), db=dbs[META])
            self.receipts._put_in(txn, tenant, request_id, d, None, None)
            return DeletionReceipt.from_dict(d)

        return self._handle.write(op)

    def pending_receipts(self) -> list[tuple[str, str]]:
        """(tenant, request id) of every sealed receipt still ``pending``."""
        def op(txn: Any) -> list[tuple[str, str]]:
            out = []
            for k, v in txn.cursor(self._ctx.dbs[RECEIPTS]).iternext():
                rec = orjson.loads(v)
                d = rec.get("data") or {}
                if d.get("status") == "pending" and d.get("hash") and k.split(keys.SEP, 1)[0] != b"#":
                    out.append((rec["tenant"], d["request_id"]))
            return out

        return self._handle.read(op)

    def remaining(self, tenant: str, kind: str, digest: str | None, memory_ids: Sequence[str] = ()
                  ) -> dict[str, int]:
        """What the store still holds of an erased subject, found from its digest
        (receipts keep no ids): memories, sessions and scoped documents whose
        user, session or project digests to it, and the erased memory ids."""
        tp = keys.tenant_prefix(tenant)
        match = matcher(tenant, digest)

        def op(txn: Any) -> dict[str, int]:
            dbs = self._ctx.dbs
            out = {"memories": 0, "sessions": 0, "documents": 0}
            for _, v in _scan(txn, dbs[MEMORIES], tp):
                out["memories"] += memory_remains(orjson.loads(v), kind, match, memory_ids)
            for mid in memory_ids:
                if _scan_rest(txn, dbs["memory_revs"], keys.key(tenant, keys.part(mid, "memory id")) + keys.SEP):
                    out["memories"] += 1
            if kind in ("user", "session"):
                for k, v in _scan(txn, dbs[SESSIONS], tp):
                    out["sessions"] += session_remains(orjson.loads(v), kind, match)
                scope = b"s" if kind == "session" else b"u"
                for rest in _scan_rest(txn, dbs[SCOPE_IDX], tp):
                    parts = keys.split(rest)
                    if len(parts) >= 3 and parts[1] == scope and match(parts[2].decode("utf-8", "replace")):
                        out["documents"] += 1
            return out

        return self._handle.read(op)

    def compact(self) -> bool:
        """Rewrite the store file without free pages (see ``LMDBEnv.compact``);
        False when another process has it open."""
        return self._handle.check().compact()

    # -- lifetime ------------------------------------------------------------------

    def stats(self) -> StoreStats:
        map_size, used, entries = self._handle.check().info()
        return StoreStats(map_size=map_size, used_bytes=used, entries=entries)

    def close(self) -> None:
        """Release this handle; the environment closes with the last one."""
        if not self._handle.closed:
            self._handle.closed = True
            if self._on_reopen in self._env.on_reopen:
                self._env.on_reopen.remove(self._on_reopen)
            release(self._env)

    def __enter__(self) -> LMDBStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ensure_schema(env: LMDBEnv, target: int, migrations: Mapping[int, Migration],
                   clock: Callable[[], float]) -> int:
    meta = env.dbs[META]

    def stored(txn: Any) -> int | None:
        raw = txn.get(_SCHEMA_KEY, db=meta)
        if raw is None:
            return None
        try:
            return int(orjson.loads(raw)["schema_version"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"store at {env.path} has a corrupt schema record: {exc}") from exc

    def newer(version: int) -> StoreError:
        return StoreError(
            f"store schema v{version} is newer than this ctxproxy (v{target}); upgrade ctxproxy"
        )

    if env.readonly:
        version = env.read(stored)
        if version is None:
            raise StoreError(f"store at {env.path} is not initialised (open it read-write once)")
        if version > target:
            raise newer(version)
        if version < target:
            raise StoreError(
                f"store schema v{version} is older than this ctxproxy (v{target}); "
                "open it read-write once to migrate"
            )
        return version

    def init(txn: Any) -> int:
        version = stored(txn)
        if version is None:
            now = clock()
            txn.put(_SCHEMA_KEY, _dump(META, {"v": RECORD_VERSION, "schema_version": target,
                                              "created_at": now, "history": []}), db=meta)
            return target
        return version

    version = env.write(init)
    if version > target:
        raise newer(version)
    while version < target:
        migrate = migrations.get(version)
        if migrate is None:
            raise StoreError(f"no migration from store schema v{version} to v{version + 1}")

        def step(txn: Any, frm: int = version, fn: Migration = migrate) -> int:
            current = stored(txn)
            if current != frm:
                return current  # another process migrated meanwhile
            fn(MigrationContext(txn, env.dbs))
            record = orjson.loads(txn.get(_SCHEMA_KEY, db=meta))
            record["history"] = [*record.get("history", []),
                                 {"from": frm, "to": frm + 1, "at": clock()}]
            record["schema_version"] = frm + 1
            txn.put(_SCHEMA_KEY, _dump(META, record), db=meta)
            return frm + 1

        version = env.write(step)
    if version > target:
        raise newer(version)
    return version
