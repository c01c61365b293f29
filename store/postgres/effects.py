"""``EffectLedger`` over PostgreSQL: one row per (key, call id), the record
as the embedded store encodes it; ``effect_calls`` finds a record by its call
id or an alias. A turn inserts its pending calls and updates the rows of the
calls it settles: no row shared between turns of different sessions.

``revision`` is derived, never stored: every write takes a new ``seq`` from a
sequence, so (rows, newest seq) of a session changes with every write and
delete — without a per-session counter row that every turn would update.
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Collection, Mapping, Sequence

from ..errors import EffectStateError, StoreError
from ..lmdb_store import RECORD_VERSION, _check_str, _str_list
from ..records import (COMPLETED, EFFECT_STATES, EFFECTS, OPEN_STATES, PENDING, RESOLUTIONS, RESOLVED,
                       RESULT_STATES, UNKNOWN, EffectRecord)
from .common import Ctx, Runner, dump, ident, load, opt_ident, tenant_of
from .pool import Tx

class PGEffects:
    def __init__(self, x: Runner, ctx: Ctx) -> None:
        self._x = x
        self._ctx = ctx

    def _record(self, tenant: str, rec: Mapping[str, Any], now: float) -> EffectRecord:
        return EffectRecord.from_stored(tenant, rec, now, self._ctx.pending_timeout)

    # -- in-transaction primitives (also used by erasure) --------------------------

    @staticmethod
    def _get_in(tx: Tx, tenant: str, key: str, call_id: str, lock: bool = False) -> dict[str, Any] | None:
        row = tx.tenant(tenant).one(
            "SELECT doc FROM effects WHERE tenant = %s AND key = %s AND call_id = %s"
            + (" FOR UPDATE" if lock and not tx.readonly else ""),
            (tenant, ident(key, "effect key"), ident(call_id, "call id")))
        return None if row is None else load(EFFECTS, row[0], tenant)

    @staticmethod
    def _write_in(tx: Tx, tenant: str, rec: Mapping[str, Any], insert: bool) -> int:
        """Rows written (an insert of a row that is there already writes none)."""
        k, c = ident(rec["key"], "effect key"), ident(rec["call_id"], "call id")
        if insert:
            return tx.tenant(tenant).exec(
                "INSERT INTO effects (tenant, key, call_id, session, task, created_at, seq, doc) "
                "VALUES (%s, %s, %s, %s, %s, %s, nextval('effects_seq'), %s) ON CONFLICT DO NOTHING",
                (tenant, k, c, opt_ident(rec.get("session"), "session"), opt_ident(rec.get("task"), "task"),
                 rec["created_at"], dump(EFFECTS, rec)))
        return tx.tenant(tenant).exec(
                "UPDATE effects SET doc = %s, seq = nextval('effects_seq') "
                "WHERE tenant = %s AND key = %s AND call_id = %s", (dump(EFFECTS, rec), tenant, k, c))

    @staticmethod
    def _add_calls_in(tx: Tx, tenant: str, key: str, call_id: str, calls: Sequence[str]) -> None:
        k, c = ident(key, "effect key"), ident(call_id, "call id")
        tx.tenant(tenant).many(
            "INSERT INTO effect_calls (tenant, call_id, key, own_call_id) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING", [(tenant, ident(a, "call id"), k, c) for a in calls])

    @staticmethod
    def _delete_in(tx: Tx, tenant: str, key: str, call_id: str) -> None:
        k, c = ident(key, "effect key"), ident(call_id, "call id")
        tx.tenant(tenant).exec("DELETE FROM effects WHERE tenant = %s AND key = %s AND call_id = %s",
                               (tenant, k, c))
        tx.exec("DELETE FROM effect_calls WHERE tenant = %s AND key = %s AND own_call_id = %s", (tenant, k, c))

    def _update(self, tenant: str, key: str, call_id: str,
                change: Callable[[dict[str, Any], float], bool]) -> EffectRecord | None:
        tenant_of(tenant)

        def op(tx: Tx) -> EffectRecord | None:
            rec = self._get_in(tx, tenant, key, call_id, lock=True)
            if rec is None:
                return None
            now = self._ctx.clock()
            if change(rec, now):
                rec["updated_at"] = now
                self._write_in(tx, tenant, rec, insert=False)
            return self._record(tenant, rec, now)

        return self._x.write(op)

    # -- the interface ---------------------------------------------------------------

    def put_pending(self, tenant: str, *, key: str, call_id: str, tool: str, args_canonical: str,
                    session: str | None = None, task: str | None = None, side_effect: bool = True,
                    turn_id: str | None = None, aliases: Sequence[str] = ()) -> EffectRecord:
        tenant_of(tenant)
        ident(key, "effect key"), ident(call_id, "call id")
        _check_str(tool, "tool")
        _check_str(args_canonical, "args_canonical")
        _check_str(session, "session", optional=True)
        _check_str(task, "task", optional=True)
        _check_str(turn_id, "turn_id", optional=True)
        extra = [a for a in dict.fromkeys(_str_list(aliases, "aliases")) if a != call_id]
        for a in extra:
            ident(a, "alias")

        def existing(tx: Tx, rec: dict[str, Any], now: float) -> EffectRecord:
            new = [a for a in extra if a not in rec.get("aliases", ())]
            if new:
                rec["aliases"] = [*rec.get("aliases", ()), *new]
                rec["updated_at"] = now
                self._write_in(tx, tenant, rec, insert=False)
                self._add_calls_in(tx, tenant, key, call_id, new)
            return self._record(tenant, rec, now)

        def op(tx: Tx) -> EffectRecord:
            now = self._ctx.clock()
            rec = self._get_in(tx, tenant, key, call_id, lock=True)
            if rec is not None:
                return existing(tx, rec, now)
            rec = {"v": RECORD_VERSION, "tenant": tenant, "key": key, "call_id": call_id, "tool": tool,
                   "args_canonical": args_canonical, "side_effect": bool(side_effect), "state": PENDING,
                   "created_at": now, "updated_at": now, "session": session, "task": task,
                   "turn_id": turn_id, "aliases": extra}
            if not self._write_in(tx, tenant, rec, insert=True):
                # another replica recorded the same call a moment ago (one recorded it at the answer's
                # end, the other finds it in the next request's history): its record stands
                return existing(tx, self._get_in(tx, tenant, key, call_id, lock=True), now)
            self._add_calls_in(tx, tenant, key, call_id, [call_id, *extra])
            return self._record(tenant, rec, now)

        return self._x.write(op)

    def complete(self, tenant: str, key: str, call_id: str, *, state: str = COMPLETED,
                 result_digest: str | None = None, result_size: int | None = None, refs: Sequence[str] = (),
                 excerpt: str | None = None, turn_id: str | None = None) -> EffectRecord | None:
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

    def mark_unknown(self, tenant: str, key: str, call_id: str, *, note: str | None = None
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

    def resolve(self, tenant: str, key: str, *, resolution: str, call_id: str | None = None,
                note: str | None = None, by: str | None = None) -> list[EffectRecord]:
        if resolution not in RESOLUTIONS:
            raise StoreError(f"resolution must be one of {RESOLUTIONS}, not {resolution!r}")
        _check_str(note, "note", optional=True)
        _check_str(by, "by", optional=True)
        tenant_of(tenant)
        k = ident(key, "effect key")

        def op(tx: Tx) -> list[EffectRecord]:
            now = self._ctx.clock()
            if call_id is not None:
                rec = self._get_in(tx, tenant, key, call_id, lock=True)
                found = [] if rec is None else [rec]
            else:
                rows = tx.tenant(tenant).all("SELECT doc FROM effects WHERE tenant = %s AND key = %s "
                                             "ORDER BY call_id FOR UPDATE", (tenant, k))
                found = [load(EFFECTS, r[0], tenant) for r in rows]
            if not found:
                return []
            open_ = [rec for rec in found if self._record(tenant, rec, now).state in OPEN_STATES]
            if not open_:
                states = sorted({self._record(tenant, r, now).state for r in found})
                raise EffectStateError(
                    f"effect {key} is {'/'.join(states)}; only pending or unknown effects can be resolved")
            out = []
            for rec in open_:
                rec.update(state=RESOLVED, resolution=resolution, note=note, resolved_by=by, updated_at=now)
                self._write_in(tx, tenant, rec, insert=False)
                out.append(self._record(tenant, rec, now))
            return out

        return self._x.write(op)

    def get(self, tenant: str, key: str, call_id: str) -> EffectRecord | None:
        tenant_of(tenant)

        def op(tx: Tx) -> EffectRecord | None:
            rec = self._get_in(tx, tenant, key, call_id)
            return None if rec is None else self._record(tenant, rec, self._ctx.clock())

        return self._x.read(op)

    def by_key(self, tenant: str, key: str) -> list[EffectRecord]:
        tenant_of(tenant)
        k = ident(key, "effect key")

        def op(tx: Tx) -> list[EffectRecord]:
            now = self._ctx.clock()
            rows = tx.tenant(tenant).all("SELECT doc FROM effects WHERE tenant = %s AND key = %s", (tenant, k))
            recs = [self._record(tenant, load(EFFECTS, r[0], tenant), now) for r in rows]
            return sorted(recs, key=lambda r: (r.created_at, r.call_id))

        return self._x.read(op)

    def by_call_id(self, tenant: str, call_id: str, *, session: str | None = None) -> EffectRecord | None:
        tenant_of(tenant)
        c = ident(call_id, "call id")

        def op(tx: Tx) -> EffectRecord | None:
            rows = tx.tenant(tenant).all(
                "SELECT e.doc FROM effect_calls c JOIN effects e ON e.tenant = c.tenant AND e.key = c.key "
                "AND e.call_id = c.own_call_id WHERE c.tenant = %s AND c.call_id = %s", (tenant, c))
            recs = [r for r in (load(EFFECTS, row[0], tenant) for row in rows)
                    if session is None or r.get("session") == session]
            if not recs:
                return None
            best = max(recs, key=lambda r: (r["created_at"], r["key"]))
            return self._record(tenant, best, self._ctx.clock())

        return self._x.read(op)

    def revision(self, tenant: str, *, session: str | None = None, task: str | None = None) -> bytes | None:
        if (session is None) == (task is None):
            raise StoreError("revision needs exactly one of session or task")
        tenant_of(tenant)
        column, value = (("session", ident(session, "session")) if session is not None
                         else ("task", ident(task, "task")))

        def op(tx: Tx) -> bytes | None:
            row = tx.tenant(tenant).one(f"SELECT count(*), max(seq) FROM effects WHERE tenant = %s AND {column} = %s",
                                        (tenant, value))
            if not row or not row[0]:
                return None
            return hashlib.sha256(f"{row[0]}:{row[1]}".encode()).digest()[:8]

        return self._x.read(op)

    def list(self, tenant: str, *, session: str | None = None, task: str | None = None,
             state: str | Collection[str] | None = None, side_effect: bool | None = None) -> list[EffectRecord]:
        states = None if state is None else ({state} if isinstance(state, str) else set(state))
        if states is not None and not states <= set(EFFECT_STATES):
            raise StoreError(f"unknown effect state in {sorted(states)}; states are {EFFECT_STATES}")
        tenant_of(tenant)
        _check_str(session, "session", optional=True)
        _check_str(task, "task", optional=True)

        def op(tx: Tx) -> list[EffectRecord]:
            sql, params = "SELECT doc FROM effects WHERE tenant = %s", [tenant]
            if session is not None:
                sql, params = sql + " AND session = %s", [*params, ident(session, "session")]
            if task is not None:
                sql, params = sql + " AND task = %s", [*params, ident(task, "task")]
            now = self._ctx.clock()
            out = []
            for row in tx.tenant(tenant).all(sql, params):
                rec = load(EFFECTS, row[0], tenant)
                if side_effect is not None and rec["side_effect"] != side_effect:
                    continue
                r = self._record(tenant, rec, now)
                if states is None or r.state in states:
                    out.append(r)
            return sorted(out, key=lambda r: (r.created_at, r.key, r.call_id))

        return self._x.read(op)
