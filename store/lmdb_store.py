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

import hashlib
import os
import re
import time
import uuid
import weakref
from contextlib import contextmanager
from functools import cached_property
from typing import Any, Callable, Collection, Iterator, Mapping, Protocol, Sequence, TypeVar

import orjson

from . import keys, surrogates
from .encoding import dump as _dump
from .errors import EffectStateError, StoreError
from .lmdb_env import BatchRunner, LMDBEnv, SnapshotRunner, acquire, release
from .lmdb_env import load as _load
from .lmdb_env import scan as _scan
from .lmdb_env import scan_rest as _scan_rest
from .lmdb_learning import LEARN, LMDBLearning
from .lmdb_memories import MEMORY_DBS, LMDBMemories, migrate_documents
from .proxy_keys import PROXY_KEYS, LMDBProxyKeys
from .records import (
    CHECKPOINTS,
    COMPLETED,
    EFFECT_STATES,
    EFFECTS,
    INDEX,
    MANIFESTS,
    MEMORIES,
    OPEN_STATES,
    PENDING,
    PRUNED,
    RECEIPTS,
    RESOLUTIONS,
    RESOLVED,
    RESULT_STATES,
    SESSIONS,
    UNKNOWN,
    DeletionReceipt,
    EffectRecord,
    StoredDoc,
    StoreStats,
    receipt_hash,
)

SCHEMA_VERSION = 2  # bump with a MIGRATIONS entry from the previous version
RECORD_VERSION = 1

META = "meta"
EFFECTS_IDX = "effects_idx"
SCOPE_IDX = "scope_idx"
DB_NAMES = (META, EFFECTS, EFFECTS_IDX, SESSIONS, CHECKPOINTS, MANIFESTS, PRUNED, *MEMORY_DBS,
            INDEX, RECEIPTS, SCOPE_IDX, PROXY_KEYS, LEARN)
DOC_KINDS = (CHECKPOINTS, MANIFESTS, PRUNED, RECEIPTS)
ERASABLE_DOC_KINDS = (CHECKPOINTS, MANIFESTS, PRUNED)  # receipts outlive what they record
# Index tenants (a tenant name never starts with "#") holding id -> tenant pointers,
# ``{"tenant": t}``, filed under the session and subject of what they point at, so
# that a turn id or a pruned reference finds its tenant. Erasure removes them too.
TURN_POINTERS = "#turns"  # manifests: turn id -> tenant
REF_POINTERS = "#refs"  # pruned originals: pruned id -> tenant
_POINTERS = ((MANIFESTS, TURN_POINTERS), (PRUNED, REF_POINTERS))
POINTERS = "pointers"  # their count in an erasure's plan and receipt
MEMORIES_EXPIRED = "memories_expired"  # memories whose only evidence was an erased session
MEMORY_REVISIONS = "memory_revisions"
MEMORY_INDEX = "memory_index"
_TRIM = "_trim"  # memories that lose one of several evidence sessions (not counted)
SNAPSHOTS = "snapshots"  # other sessions' frozen memory snapshots showing an erased memory
_SNAPSHOT_REF = re.compile(rb"\(mem:([^,\s)]+), ")

DEFAULT_MAP_SIZE = 256 << 20
DEFAULT_MAX_MAP_SIZE = 64 << 30
DEFAULT_PENDING_TIMEOUT = 900.0  # seconds before a pending effect reads as unknown
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


# -- encoding ------------------------------------------------------------------


def _canon(value: Any) -> bytes | None:
    """The stored form of a value, for equality (tuples and lists alike)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _opt_part(value: str | None, what: str) -> bytes | None:
    return None if value is None else keys.part(value, what)


def _check_str(value: object, what: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise StoreError(f"{what} must be a string, not {type(value).__name__}")


def _str_list(values: Sequence[str] | None, what: str) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        raise StoreError(f"{what} must be a list of strings, not a string")
    out = list(values)
    for v in out:
        _check_str(v, what)
    return out


def _doc_sessions(rec: Mapping[str, Any]) -> list[str]:
    """Every session a document holds data of: its own, and ``sessions`` (a
    task's checkpoint lists the effects of each of the task's sessions)."""
    own = [rec["session"]] if rec.get("session") is not None else []
    return own + list(rec.get("sessions") or ())


def _digest(tenant: str, value: str | None) -> str | None:
    if value is None:
        return None
    return hashlib.sha256(tenant.encode() + b"\x00" + value.encode("utf-8", "surrogatepass")).hexdigest()


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


class LMDBEffects:
    """``EffectLedger`` over LMDB."""

    _db = _DB(EFFECTS)
    _idx = _DB(EFFECTS_IDX)

    def __init__(self, x: _Runner, ctx: _Ctx) -> None:
        self._x = x
        self._ctx = ctx

    # internal ----------------------------------------------------------------

    def _record(self, tenant: str, rec: Mapping[str, Any], now: float) -> EffectRecord:
        return EffectRecord.from_stored(tenant, rec, now, self._ctx.pending_timeout)

    @staticmethod
    def _pk_parts(rec: Mapping[str, Any]) -> tuple[bytes, bytes]:
        return keys.part(rec["key"], "effect key"), keys.part(rec["call_id"], "call id")

    def _idx_keys(self, tenant: str, rec: Mapping[str, Any]) -> list[bytes]:
        ek, ec = self._pk_parts(rec)
        out = [keys.key(tenant, b"c", keys.part(c, "call id"), ek, ec)
               for c in [rec["call_id"], *rec.get("aliases", ())]]
        if rec.get("session") is not None:
            out.append(keys.key(tenant, b"s", keys.part(rec["session"], "session"), ek, ec))
        if rec.get("task") is not None:
            out.append(keys.key(tenant, b"t", keys.part(rec["task"], "task"), ek, ec))
        return out

    def _get_in(self, txn: Any, tenant: str, pk: bytes) -> dict[str, Any] | None:
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

    def _put_in(self, txn: Any, tenant: str, pk: bytes, rec: Mapping[str, Any]) -> None:
        txn.put(pk, _dump(EFFECTS, rec), db=self._db)
        rev = os.urandom(8)  # a fresh value, never a counter that could come round again
        for k in self._rev_keys(tenant, rec):
            txn.put(k, rev, db=self._idx)

    def _delete_in(self, txn: Any, tenant: str, pk: bytes, rec: Mapping[str, Any]) -> None:
        txn.delete(pk, db=self._db)
        for k in [*self._idx_keys(tenant, rec), *self._rev_keys(tenant, rec)]:
            txn.delete(k, db=self._idx)

    def _from_index(self, txn: Any, tenant: str, prefix: bytes) -> list[dict[str, Any]]:
        tp = keys.tenant_prefix(tenant)
        out = []
        for rest in _scan_rest(txn, self._idx, prefix):
            rec = self._get_in(txn, tenant, tp + rest)
            if rec is not None:
                out.append(rec)
        return out

    def _update(self, tenant: str, key: str, call_id: str,
                change: Callable[[dict[str, Any], float], bool]) -> EffectRecord | None:
        pk = keys.key(tenant, keys.part(key, "effect key"), keys.part(call_id, "call id"))

        def op(txn: Any) -> EffectRecord | None:
            rec = self._get_in(txn, tenant, pk)
            if rec is None:
                return None
            now = self._ctx.clock()
            if change(rec, now):
                rec["updated_at"] = now
                self._put_in(txn, tenant, pk, rec)
            return self._record(tenant, rec, now)

        return self._x.write(op)

    # public ------------------------------------------------------------------

    def put_pending(
        self,
        tenant: str,
        *,
        key: str,
        call_id: str,
        tool: str,
        args_canonical: str,
        session: str | None = None,
        task: str | None = None,
        side_effect: bool = True,
        turn_id: str | None = None,
        aliases: Sequence[str] = (),
    ) -> EffectRecord:
        ek, ec = keys.part(key, "effect key"), keys.part(call_id, "call id")
        pk = keys.key(tenant, ek, ec)
        _check_str(tool, "tool")
        _check_str(args_canonical, "args_canonical")
        _check_str(session, "session", optional=True)
        _check_str(task, "task", optional=True)
        _check_str(turn_id, "turn_id", optional=True)
        extra = [a for a in dict.fromkeys(_str_list(aliases, "aliases")) if a != call_id]
        for a in extra:
            keys.part(a, "alias")

        def op(txn: Any) -> EffectRecord:
            now = self._ctx.clock()
            rec = self._get_in(txn, tenant, pk)
            if rec is not None:
                new = [a for a in extra if a not in rec.get("aliases", ())]
                if new:
                    rec["aliases"] = [*rec.get("aliases", ()), *new]
                    rec["updated_at"] = now
                    self._put_in(txn, tenant, pk, rec)
                    for a in new:
                        txn.put(keys.key(tenant, b"c", keys.part(a), ek, ec), b"", db=self._idx)
                return self._record(tenant, rec, now)
            rec = {
                "v": RECORD_VERSION,
                "tenant": tenant,
                "key": key,
                "call_id": call_id,
                "tool": tool,
                "args_canonical": args_canonical,
                "side_effect": bool(side_effect),
                "state": PENDING,
                "created_at": now,
                "updated_at": now,
                "session": session,
                "task": task,
                "turn_id": turn_id,
                "aliases": extra,
            }
            self._put_in(txn, tenant, pk, rec)
            for k in self._idx_keys(tenant, rec):
                txn.put(k, b"", db=self._idx)
            return self._record(tenant, rec, now)

        return self._x.write(op)

    def complete(
        self,
        tenant: str,
        key: str,
        call_id: str,
        *,
        state: str = COMPLETED,
        result_digest: str | None = None,
        result_size: int | None = None,
        refs: Sequence[str] = (),
        excerpt: str | None = None,
        turn_id: str | None = None,
    ) -> EffectRecord | None:
        if state not in RESULT_STATES:
            raise StoreError(f"complete() state must be one of {RESULT_STATES}, not {state!r}")
        _check_str(result_digest, "result_digest", optional=True)
        _check_str(excerpt, "excerpt", optional=True)
        _check_str(turn_id, "turn_id", optional=True)
        if result_size is not None and (not isinstance(result_size, int) or result_size < 0):
            raise StoreError(f"result_size must be a non-negative int, not {result_size!r}")
        ref_list = _str_list(refs, "refs")

        def change(rec: dict[str, Any], now: float) -> bool:
            if rec["state"] not in OPEN_STATES:
                return False  # first result wins; history replays it every turn
            rec.update(state=state, result_digest=result_digest, result_size=result_size,
                       refs=ref_list, excerpt=excerpt, result_turn_id=turn_id)
            return True

        return self._update(tenant, key, call_id, change)

    def mark_unknown(
        self, tenant: str, key: str, call_id: str, *, note: str | None = None
    ) -> EffectRecord | None:
        _check_str(note, "note", optional=True)

        def change(rec: dict[str, Any], now: float) -> bool:
            if rec["state"] != PENDING:
                return False
            rec["state"] = UNKNOWN
            if note is not None:
                rec["note"] = note
            return True

        return self._update(tenant, key, call_id, change)

    def resolve(
        self,
        tenant: str,
        key: str,
        *,
        resolution: str,
        call_id: str | None = None,
        note: str | None = None,
        by: str | None = None,
    ) -> list[EffectRecord]:
        if resolution not in RESOLUTIONS:
            raise StoreError(f"resolution must be one of {RESOLUTIONS}, not {resolution!r}")
        _check_str(note, "note", optional=True)
        _check_str(by, "by", optional=True)
        ek = keys.part(key, "effect key")
        ec = _opt_part(call_id, "call id")

        def op(txn: Any) -> list[EffectRecord]:
            now = self._ctx.clock()
            if ec is not None:
                pk = keys.key(tenant, ek, ec)
                rec = self._get_in(txn, tenant, pk)
                found = [] if rec is None else [(pk, rec)]
            else:
                found = [(k, _load(EFFECTS, v, tenant))
                         for k, v in _scan(txn, self._db, keys.prefix(tenant, ek))]
            if not found:
                return []
            open_ = [(pk, rec) for pk, rec in found
                     if self._record(tenant, rec, now).state in OPEN_STATES]
            if not open_:
                states = sorted({self._record(tenant, r, now).state for _, r in found})
                raise EffectStateError(
                    f"effect {key} is {'/'.join(states)}; only pending or unknown effects can be resolved"
                )
            out = []
            for pk, rec in open_:
                rec.update(state=RESOLVED, resolution=resolution, note=note, resolved_by=by,
                           updated_at=now)
                self._put_in(txn, tenant, pk, rec)
                out.append(self._record(tenant, rec, now))
            return out

        return self._x.write(op)

    def get(self, tenant: str, key: str, call_id: str) -> EffectRecord | None:
        pk = keys.key(tenant, keys.part(key, "effect key"), keys.part(call_id, "call id"))

        def op(txn: Any) -> EffectRecord | None:
            rec = self._get_in(txn, tenant, pk)
            return None if rec is None else self._record(tenant, rec, self._ctx.clock())

        return self._x.read(op)

    def by_key(self, tenant: str, key: str) -> list[EffectRecord]:
        prefix = keys.prefix(tenant, keys.part(key, "effect key"))

        def op(txn: Any) -> list[EffectRecord]:
            now = self._ctx.clock()
            recs = [self._record(tenant, _load(EFFECTS, v, tenant), now)
                    for _, v in _scan(txn, self._db, prefix)]
            return sorted(recs, key=lambda r: (r.created_at, r.call_id))

        return self._x.read(op)

    def by_call_id(
        self, tenant: str, call_id: str, *, session: str | None = None
    ) -> EffectRecord | None:
        prefix = keys.prefix(tenant, b"c", keys.part(call_id, "call id"))

        def op(txn: Any) -> EffectRecord | None:
            recs = [r for r in self._from_index(txn, tenant, prefix)
                    if session is None or r.get("session") == session]
            if not recs:
                return None
            best = max(recs, key=lambda r: (r["created_at"], r["key"]))
            return self._record(tenant, best, self._ctx.clock())

        return self._x.read(op)

    def revision(self, tenant: str, *, session: str | None = None, task: str | None = None) -> bytes | None:
        """A value that changes whenever an effect record of this session (or
        task) is written or deleted; None when there is none. Lets a caller keep
        what it derived from ``list`` until the ledger changes."""
        if (session is None) == (task is None):
            raise StoreError("revision needs exactly one of session or task")
        k = (keys.key(tenant, b"r", b"s", keys.part(session, "session")) if session is not None
             else keys.key(tenant, b"r", b"t", keys.part(task, "task")))
        return self._x.read(lambda txn: txn.get(k, db=self._idx))

    def list(
        self,
        tenant: str,
        *,
        session: str | None = None,
        task: str | None = None,
        state: str | Collection[str] | None = None,
        side_effect: bool | None = None,
    ) -> list[EffectRecord]:
        states = None if state is None else ({state} if isinstance(state, str) else set(state))
        if states is not None and not states <= set(EFFECT_STATES):
            raise StoreError(f"unknown effect state in {sorted(states)}; states are {EFFECT_STATES}")
        tp = keys.tenant_prefix(tenant)
        sp, tk = _opt_part(session, "session"), _opt_part(task, "task")

        def op(txn: Any) -> list[EffectRecord]:
            if sp is not None:
                recs = self._from_index(txn, tenant, keys.prefix(tenant, b"s", sp))
            elif tk is not None:
                recs = self._from_index(txn, tenant, keys.prefix(tenant, b"t", tk))
            else:
                recs = [_load(EFFECTS, v, tenant) for _, v in _scan(txn, self._db, tp)]
            now = self._ctx.clock()
            out = []
            for rec in recs:
                if task is not None and rec.get("task") != task:
                    continue
                if side_effect is not None and rec["side_effect"] != side_effect:
                    continue
                r = self._record(tenant, rec, now)
                if states is None or r.state in states:
                    out.append(r)
            return sorted(out, key=lambda r: (r.created_at, r.key, r.call_id))

        return self._x.read(op)


# -- sessions ------------------------------------------------------------------


class LMDBSessions:
    """``SessionStore`` over LMDB."""

    _db = _DB(SESSIONS)
    _scope = _DB(SCOPE_IDX)

    def __init__(self, x: _Runner, ctx: _Ctx) -> None:
        self._x = x
        self._ctx = ctx

    def _subject_key(self, tenant: str, subject: str, session_part: bytes) -> bytes:
        return keys.key(tenant, b"sessions", b"u", keys.part(subject, "subject"), session_part)

    @staticmethod
    def _pk(tenant: str, session: str, part: str | None = None) -> bytes:
        """A session's record, or one of its ``part`` records (the session's key,
        the separator, the part's name), which a scan of the tenant's sessions skips."""
        sp = keys.part(session, "session")
        return keys.key(tenant, sp) if part is None else keys.key(tenant, sp, keys.part(part, "part"))

    @staticmethod
    def _subjects(rec: Mapping[str, Any] | None) -> list[str]:
        """Every subject a session record has had (records before ``subjects``: its one)."""
        rec = rec or {}
        return list(rec.get("subjects") or ([rec["subject"]] if rec.get("subject") is not None else []))

    def _delete_in(self, txn: Any, tenant: str, pk: bytes, rec: Mapping[str, Any]) -> None:
        """Delete a session's record, its parts and its subject index entries."""
        txn.delete(pk, db=self._db)
        for part_key, _ in _scan(txn, self._db, pk + keys.SEP):
            txn.delete(part_key, db=self._db)
        sp = pk[len(keys.tenant_prefix(tenant)):]
        for subject in self._subjects(rec):
            txn.delete(self._subject_key(tenant, subject, sp), db=self._scope)

    def _write(self, tenant: str, session: str, subject: str | None,
               build: Callable[[dict[str, Any]], dict[str, Any]], part: str | None = None) -> dict[str, Any]:
        sp = keys.part(session, "session")
        main = keys.key(tenant, sp)
        pk = self._pk(tenant, session, part)
        _check_str(subject, "subject", optional=True)

        def record(txn: Any, key: bytes, state_of: Callable[[dict[str, Any]], dict[str, Any]],
                   now: float) -> dict[str, Any]:
            raw = txn.get(key, db=self._db)
            old = None if raw is None else _load(SESSIONS, raw, tenant)
            state = state_of({} if old is None else dict(old["state"]))
            keep_subject = subject if subject is not None else (old or {}).get("subject")
            # A new subject does not replace the old one in the index: the session still holds
            # the old subject's data, and erasing that subject must find it.
            subjects = self._subjects(old)
            if keep_subject is not None and keep_subject not in subjects:
                subjects.append(keep_subject)
            rec = {
                "v": RECORD_VERSION,
                "tenant": tenant,
                "session": session,
                "subject": keep_subject if key == main else None,  # a part's subject is its session's
                "state": state,
                "created_at": now if old is None else old["created_at"],
                "updated_at": now,
            }
            if key != main:
                rec["part"] = part
            elif subjects:
                rec["subjects"] = subjects
            txn.put(key, _dump(SESSIONS, rec), db=self._db)
            if key == main and keep_subject is not None:
                txn.put(self._subject_key(tenant, keep_subject, sp), b"", db=self._scope)
            return state

        def op(txn: Any) -> dict[str, Any]:
            now = self._ctx.clock()
            if part is not None and (subject is not None or txn.get(main, db=self._db) is None):
                # a part never outlives its session: deleting the session (or its subject) finds it
                record(txn, main, lambda state: state, now)
            return record(txn, pk, build, now)

        return self._x.write(op)

    def get(self, tenant: str, session: str, part: str | None = None) -> dict[str, Any] | None:
        pk = self._pk(tenant, session, part)

        def op(txn: Any) -> dict[str, Any] | None:
            raw = txn.get(pk, db=self._db)
            return None if raw is None else _load(SESSIONS, raw, tenant)["state"]

        return self._x.read(op)

    def put(self, tenant: str, session: str, state: Mapping[str, Any], *,
            subject: str | None = None, part: str | None = None) -> None:
        new = dict(state)
        self._write(tenant, session, subject, lambda old: new, part)

    def update(self, tenant: str, session: str, changes: Mapping[str, Any], *,
               subject: str | None = None, current: Mapping[str, Any] | None = None,
               part: str | None = None) -> dict[str, Any]:
        def merge(old: dict[str, Any]) -> dict[str, Any]:
            old.update(changes)
            return old

        def holds(state: Mapping[str, Any]) -> bool:
            for k, v in changes.items():
                if k not in state:
                    return False
                if state[k] == v:  # the usual case, without encoding either side
                    continue
                want = _canon(v)  # a tuple and a list of the same items store alike
                if want is None or _canon(state[k]) != want:
                    return False
            return True

        # A turn that changes nothing writes nothing: no put, and a batch left
        # without writes commits without an fsync. ``current``: the state as the
        # caller just read it, which spares reading it again.
        if current is not None and subject is None:
            if holds(current):
                return dict(current)
            return self._write(tenant, session, subject, merge, part)
        pk = self._pk(tenant, session, part)

        def unchanged(txn: Any) -> dict[str, Any] | None:
            raw = txn.get(pk, db=self._db)
            if raw is None:
                return None
            rec = _load(SESSIONS, raw, tenant)
            if part is None and subject not in (None, rec.get("subject")) or not holds(rec["state"]):
                return None
            return rec["state"]

        same = self._x.read(unchanged)
        if same is not None:
            return same
        return self._write(tenant, session, subject, merge, part)

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


class LMDBDocuments:
    """``DocumentStore`` over LMDB, one per kind."""

    _scope = _DB(SCOPE_IDX)

    @property
    def _db(self) -> Any:
        return self._ctx.dbs[self.kind]

    def __init__(self, kind: str, x: _Runner, ctx: _Ctx, index: LMDBIndex | None = None) -> None:
        self.kind = kind
        self._x = x
        self._ctx = ctx
        self._index = index  # memories: deleting one drops its postings

    def _scope_keys(self, tenant: str, rec: Mapping[str, Any], id_part: bytes) -> list[bytes]:
        out = []
        kind = self.kind.encode()
        for s in _doc_sessions(rec):
            out.append(keys.key(tenant, kind, b"s", keys.part(s, "session"), id_part))
        if rec.get("subject") is not None:
            out.append(keys.key(tenant, kind, b"u", keys.part(rec["subject"], "subject"), id_part))
        return out

    def _doc(self, tenant: str, rec: Mapping[str, Any]) -> StoredDoc:
        return StoredDoc(kind=self.kind, tenant=tenant, id=rec["id"], data=rec["data"],
                         created_at=rec["created_at"], updated_at=rec["updated_at"],
                         session=rec.get("session"), subject=rec.get("subject"),
                         sessions=tuple(rec.get("sessions") or ()))

    def _put_in(self, txn: Any, tenant: str, id: str, data: Mapping[str, Any],
                session: str | None, subject: str | None, sessions: Sequence[str] = ()) -> StoredDoc:
        ip = keys.part(id, f"{self.kind} id")
        pk = keys.key(tenant, ip)
        now = self._ctx.clock()
        raw = txn.get(pk, db=self._db)
        old = None if raw is None else _load(self.kind, raw, tenant)
        if old is not None:
            for k in self._scope_keys(tenant, old, ip):
                txn.delete(k, db=self._scope)
        rec = {
            "v": RECORD_VERSION,
            "tenant": tenant,
            "id": id,
            "session": session,
            "subject": subject,
            "created_at": now if old is None else old["created_at"],
            "updated_at": now,
            "data": data,
        }
        if sessions:
            rec["sessions"] = list(sessions)
        txn.put(pk, _dump(self.kind, rec), db=self._db)
        for k in self._scope_keys(tenant, rec, ip):
            txn.put(k, b"", db=self._scope)
        return self._doc(tenant, rec)

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

    def put(self, tenant: str, id: str, data: Mapping[str, Any], *,
            session: str | None = None, subject: str | None = None,
            sessions: Sequence[str] = ()) -> StoredDoc:
        _check_str(session, "session", optional=True)
        _check_str(subject, "subject", optional=True)
        others = [s for s in dict.fromkeys(_str_list(sessions, "sessions")) if s != session]
        if not isinstance(data, Mapping):
            raise StoreError(f"{self.kind} data must be a mapping, not {type(data).__name__}")
        keys.tenant_prefix(tenant)
        payload = dict(data)
        return self._x.write(lambda txn: self._put_in(txn, tenant, id, payload, session, subject, others))

    def get(self, tenant: str, id: str) -> StoredDoc | None:
        pk = keys.key(tenant, keys.part(id, f"{self.kind} id"))

        def op(txn: Any) -> StoredDoc | None:
            raw = txn.get(pk, db=self._db)
            return None if raw is None else self._doc(tenant, _load(self.kind, raw, tenant))

        return self._x.read(op)

    def list(self, tenant: str, *, session: str | None = None,
             subject: str | None = None) -> list[StoredDoc]:
        sp, up = _opt_part(session, "session"), _opt_part(subject, "subject")
        tp = keys.tenant_prefix(tenant)

        def op(txn: Any) -> list[StoredDoc]:
            if sp is not None:
                recs = [r for _, r in self._scoped_in(txn, tenant, b"s", sp)]
            elif up is not None:
                recs = [r for _, r in self._scoped_in(txn, tenant, b"u", up)]
            else:
                recs = [_load(self.kind, v, tenant) for _, v in _scan(txn, self._db, tp)]
            if subject is not None:
                recs = [r for r in recs if r.get("subject") == subject]
            docs = [self._doc(tenant, r) for r in recs]
            return sorted(docs, key=lambda d: (d.created_at, d.id))

        return self._x.read(op)

    def delete(self, tenant: str, id: str) -> bool:
        pk = keys.key(tenant, keys.part(id, f"{self.kind} id"))

        def op(txn: Any) -> bool:
            raw = txn.get(pk, db=self._db)
            if raw is None:
                return False
            self._delete_in(txn, tenant, pk, _load(self.kind, raw, tenant))
            return True

        return self._x.write(op)


# -- the store -----------------------------------------------------------------


class _Repos:
    """The repositories, bound to one runner (the environment, a batch or a
    snapshot); each is built on first use, since most turns touch one or two."""

    def __init__(self, x: _Runner, ctx: _Ctx) -> None:
        self._x = x
        self._ctx = ctx

    @cached_property
    def effects(self) -> LMDBEffects:
        return LMDBEffects(self._x, self._ctx)

    @cached_property
    def sessions(self) -> LMDBSessions:
        return LMDBSessions(self._x, self._ctx)

    @cached_property
    def index(self) -> LMDBIndex:
        return LMDBIndex(self._x, self._ctx)

    @cached_property
    def checkpoints(self) -> LMDBDocuments:
        return LMDBDocuments(CHECKPOINTS, self._x, self._ctx)

    @cached_property
    def manifests(self) -> LMDBDocuments:
        return LMDBDocuments(MANIFESTS, self._x, self._ctx)

    @cached_property
    def pruned(self) -> LMDBDocuments:
        return LMDBDocuments(PRUNED, self._x, self._ctx)

    @cached_property
    def memories(self) -> LMDBMemories:
        return LMDBMemories(self._x, self._ctx, index=self.index)

    @cached_property
    def receipts(self) -> LMDBDocuments:
        return LMDBDocuments(RECEIPTS, self._x, self._ctx)

    @cached_property
    def proxy_keys(self) -> LMDBProxyKeys:
        return LMDBProxyKeys(self._x, self._ctx.env, self._ctx.clock)

    @cached_property
    def learning(self) -> LMDBLearning:
        return LMDBLearning(self._x, self._ctx)

    def docs(self, kind: str) -> LMDBDocuments:
        return getattr(self, kind)

    @property
    def pending_timeout(self) -> float | None:
        """Seconds after which a pending effect reads as unknown (None: never)."""
        return self._ctx.pending_timeout


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

    def _reset_repositories(self) -> None:
        """Forget the repositories built so far (after compaction reopened the
        environment, a repository that kept a database handle would hold a dead one)."""
        for name, attr in vars(_Repos).items():
            if isinstance(attr, cached_property):
                self.__dict__.pop(name, None)

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

    @contextmanager
    def batch(self) -> Iterator[LMDBBatch]:
        """One write transaction for the block: everything the batch's
        repositories write commits (fsync) together when the block exits, or
        not at all if it raises. Keep it short: it holds the single writer
        lock of every process sharing the environment. Inside it, use the
        batch's repositories, not the store's."""
        runner = BatchRunner(self._handle.check())
        runner.begin()
        try:
            yield LMDBBatch(runner, self._ctx)
            runner.commit()
        except BaseException:
            runner.abort()
            raise

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

    def _plan(self, txn: Any, tenant: str, session: str | None, subject: str | None,
              memory: str | None = None, project: str | None = None) -> dict[str, dict[bytes, Any]]:
        if session is None and subject is None and memory is None and project is None:
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
        plan[POINTERS] = self._pointers_in(txn, tenant, session_parts, up)
        plan[MEMORIES], plan[MEMORIES_EXPIRED], plan[_TRIM] = self._memory_plan(
            txn, tenant, session, subject, memory, project)
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
            if {m.decode("utf-8", "replace") for m in _SNAPSHOT_REF.findall(v)} & memory_ids:
                out[k] = _load(SESSIONS, v, tenant)
        return out

    def _pointers_in(self, txn: Any, tenant: str, session_parts: set[bytes], up: bytes | None
                     ) -> dict[bytes, tuple[str, str, dict[str, Any]]]:
        """This tenant's id -> tenant pointers filed under the sessions or subject
        erased (another tenant may use the same session name: its pointers stay)."""
        found: dict[bytes, tuple[str, str, dict[str, Any]]] = {}
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

    def _memory_plan(self, txn: Any, tenant: str, session: str | None, subject: str | None,
                     memory: str | None, project: str | None) -> tuple[dict, dict, dict]:
        """(memories to erase, to expire, to trim) for an erasure. A session's
        memories go; memories it was evidence for lose it (trim), and expire
        when it was their only evidence (surgical forgetting)."""
        mem = self.memories
        erase: dict[str, Any] = {}
        expire: dict[str, Any] = {}
        trim: dict[str, Any] = {}
        ids: list[str] = []
        if memory is not None:
            ids.append(memory)
        if subject is not None:
            ids += mem._ids_in(txn, tenant, b"u", keys.part(subject, "user"))
        if project is not None:
            ids += mem._ids_in(txn, tenant, b"p", keys.part(project, "project"))
        for rec in mem._records_in(txn, tenant, ids):
            erase[rec.memory_id] = rec
        if session is not None:
            for rec in mem._records_in(txn, tenant, mem._ids_in(txn, tenant, b"s", keys.part(session, "session"))):
                if rec.memory_id in erase:
                    continue
                if rec.session == session:
                    erase[rec.memory_id] = rec
                elif any(s != session for s in rec.evidence_sessions):
                    trim[rec.memory_id] = rec
                else:
                    expire[rec.memory_id] = rec
        return erase, expire, trim

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
        def op(txn: Any) -> dict[str, int]:
            return self._counts(txn, tenant, self._plan(txn, tenant, session, subject, memory, project))

        return self._handle.read(op)

    def delete_subject(self, tenant: str, *, session: str | None = None,
                       subject: str | None = None, memory: str | None = None,
                       project: str | None = None, request_id: str | None = None) -> DeletionReceipt:
        """Erase what the store holds of one subject (see ``Store.delete_subject``);
        the receipt is stored ``pending`` (``store.forget`` finishes it)."""
        rid = request_id or uuid.uuid4().hex
        for value, what in ((session, "session"), (subject, "subject"), (memory, "memory"), (project, "project")):
            _check_str(value, what, optional=True)
        kind, value = next(((k, v) for k, v in (("session", session), ("user", subject), ("memory", memory),
                                                 ("project", project)) if v is not None), ("", None))
        rpk = keys.key(tenant, keys.part(rid, "request id"))

        def op(txn: Any) -> DeletionReceipt:
            dbs = self._ctx.dbs
            raw = txn.get(rpk, db=dbs[RECEIPTS])
            if raw is not None:
                d = _load(RECEIPTS, raw, tenant)["data"]
                # a retry of the same erasure replays its receipt; another erasure under a used
                # id would otherwise "succeed" without erasing anything
                if (d["session_digest"], d["subject_digest"], d.get("subject_kind", kind)) != (
                        _digest(tenant, session), _digest(tenant, value if kind != "session" else subject), kind):
                    raise StoreError(f"request id {rid!r} was already used for another erasure "
                                     "(another subject); use a new request id")
                return DeletionReceipt.from_dict(d, replayed=True)
            plan = self._plan(txn, tenant, session, subject, memory, project)
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
                state = {k: v for k, v in rec["state"].items() if k != "memory_snapshot"}
                txn.put(pk, _dump(SESSIONS, {**rec, "state": state}), db=self._ctx.dbs[SESSIONS])
            now = self._ctx.clock()
            for rec in plan[_TRIM].values():
                self.memories._put_in(txn, rec.evolve(
                    evidence_sessions=tuple(s for s in rec.evidence_sessions if s != session)), None)
            for rec in plan[MEMORIES_EXPIRED].values():  # its only evidence is gone: so is the memory
                self.memories._put_in(txn, rec.evolve(evidence_sessions=(), status="expired", expires_at=now), None)
            receipt = DeletionReceipt(request_id=rid, tenant=tenant, counts=counts, created_at=now,
                                      session_digest=_digest(tenant, session),
                                      subject_digest=_digest(tenant, value if kind != "session" else subject),
                                      subject_kind=kind, memory_ids=tuple(sorted(plan[MEMORIES])),
                                      status="pending")
            self.receipts._put_in(txn, tenant, rid, receipt.to_dict(), None, None)
            return receipt

        return self._handle.write(op)

    def seal_receipt(self, tenant: str, request_id: str, *, counts: Mapping[str, int] | None = None,
                     status: str) -> DeletionReceipt:
        """Finish a receipt: add the derived indexes' counts, set its status, and
        (the first time it leaves ``pending``) link it to the tenant's chain:
        ``seq``, ``prev_hash`` (the previous sealed receipt's ``hash``) and its own
        ``hash``, in one transaction, so the chain stays linear across processes."""
        rpk = keys.key(tenant, keys.part(request_id, "request id"))
        head_key = b"receipt_chain:" + tenant.encode()

        def op(txn: Any) -> DeletionReceipt:
            dbs = self._ctx.dbs
            raw = txn.get(rpk, db=dbs[RECEIPTS])
            if raw is None:
                raise StoreError(f"no receipt {request_id!r}")
            d = dict(_load(RECEIPTS, raw, tenant)["data"])
            merged = dict(d.get("counts") or {})
            for k, n in (counts or {}).items():
                merged[k] = merged.get(k, 0) + int(n)
            d["counts"] = merged
            d["status"] = status
            now = self._ctx.clock()
            if not d.get("hash"):
                head_raw = txn.get(head_key, db=dbs[META])
                head = orjson.loads(head_raw) if head_raw else {"seq": 0, "hash": ""}
                d["completed_at"] = now
                d["seq"] = head["seq"] + 1
                d["prev_hash"] = head["hash"]
                d["hash"] = receipt_hash(d)
                txn.put(head_key, orjson.dumps({"seq": d["seq"], "hash": d["hash"]}), db=dbs[META])
            if status == "erased":
                d["erased_at"] = now
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

        def match(value: Any) -> bool:
            return isinstance(value, str) and bool(value) and _digest(tenant, value) == digest

        def op(txn: Any) -> dict[str, int]:
            dbs = self._ctx.dbs
            out = {"memories": 0, "sessions": 0, "documents": 0}
            field = {"user": "user", "session": "session", "project": "project"}.get(kind)
            for _, v in _scan(txn, dbs[MEMORIES], tp):
                d = orjson.loads(v)
                if d.get("memory_id") in memory_ids or (field and (
                        match(d.get(field)) or (kind == "session" and any(map(match, d.get("evidence_sessions") or ()))))):
                    out["memories"] += 1
            for mid in memory_ids:
                if _scan_rest(txn, dbs["memory_revs"], keys.key(tenant, keys.part(mid, "memory id")) + keys.SEP):
                    out["memories"] += 1
            if kind in ("user", "session"):
                for k, v in _scan(txn, dbs[SESSIONS], tp):
                    d = orjson.loads(v)
                    if (kind == "session" and match(d.get("session"))) or (
                            kind == "user" and any(map(match, d.get("subjects") or [d.get("subject")]))):
                        out["sessions"] += 1
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
