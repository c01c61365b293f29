"""``EffectLedger``'s rules, once for every backend: what a pending call
records, which states may follow which (first result wins, only open
effects are resolved), how a pending record reads once it is stale, the
order of listings.

A backend subclasses ``LedgerRules`` and stores and finds the records (the
dicts ``encoding`` stores) inside a transaction of its runner::

    _get_in(txn, tenant, key, call_id, lock)   the record, or None (``lock``: it will be rewritten)
    _insert_in(txn, tenant, rec)               a new record with its index entries; False when another
                                               writer stored the same (key, call id) first
    _rewrite_in(txn, tenant, rec)              the record changed in place
    _add_calls_in(txn, tenant, rec, calls)     more call ids (aliases) that find it
    _of_key_in(txn, tenant, key, lock)         every record of an idempotency key
    _of_call_in(txn, tenant, call_id)          every record a call id or alias finds
    _listed_in(txn, tenant, session, task)     the records of a session, a task, or the tenant

and ``revision``, which each backend derives its own way.
"""
from __future__ import annotations

from typing import Any, Callable, Collection, Mapping, Sequence

from . import keys
from .checks import check_str, str_list
from .encoding import RECORD_VERSION
from .errors import EffectStateError, StoreError
from .records import (COMPLETED, EFFECT_STATES, OPEN_STATES, PENDING, RESOLUTIONS, RESOLVED, RESULT_STATES,
                      UNKNOWN, EffectRecord)


class LedgerRules:
    def __init__(self, x: Any, ctx: Any) -> None:
        self._x = x  # the runner: read(op) / write(op), op(txn)
        self._ctx = ctx  # clock, pending_timeout

    def _record(self, tenant: str, rec: Mapping[str, Any], now: float) -> EffectRecord:
        return EffectRecord.from_stored(tenant, rec, now, self._ctx.pending_timeout)

    # -- what a backend provides ---------------------------------------------------

    def _get_in(self, txn: Any, tenant: str, key: str, call_id: str, lock: bool = False) -> dict[str, Any] | None:
        raise NotImplementedError

    def _insert_in(self, txn: Any, tenant: str, rec: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def _rewrite_in(self, txn: Any, tenant: str, rec: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _add_calls_in(self, txn: Any, tenant: str, rec: Mapping[str, Any], calls: Sequence[str]) -> None:
        raise NotImplementedError

    def _of_key_in(self, txn: Any, tenant: str, key: str, lock: bool = False) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _of_call_in(self, txn: Any, tenant: str, call_id: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _listed_in(self, txn: Any, tenant: str, session: str | None, task: str | None) -> list[dict[str, Any]]:
        raise NotImplementedError

    # -- the rules ------------------------------------------------------------------

    def _update(self, tenant: str, key: str, call_id: str,
                change: Callable[[dict[str, Any], float], bool]) -> EffectRecord | None:
        keys.check_tenant(tenant)
        keys.part(key, "effect key"), keys.part(call_id, "call id")

        def op(txn: Any) -> EffectRecord | None:
            rec = self._get_in(txn, tenant, key, call_id, lock=True)
            if rec is None:
                return None
            now = self._ctx.clock()
            if change(rec, now):
                rec["updated_at"] = now
                self._rewrite_in(txn, tenant, rec)
            return self._record(tenant, rec, now)

        return self._x.write(op)

    def put_pending(self, tenant: str, *, key: str, call_id: str, tool: str, args_canonical: str,
                    session: str | None = None, task: str | None = None, side_effect: bool = True,
                    turn_id: str | None = None, aliases: Sequence[str] = ()) -> EffectRecord:
        keys.check_tenant(tenant)
        keys.part(key, "effect key"), keys.part(call_id, "call id")
        check_str(tool, "tool")
        check_str(args_canonical, "args_canonical")
        for value, what in ((session, "session"), (task, "task"), (turn_id, "turn_id")):
            check_str(value, what, optional=True)
        extra = [a for a in dict.fromkeys(str_list(aliases, "aliases")) if a != call_id]
        for a in extra:
            keys.part(a, "alias")

        def existing(txn: Any, rec: dict[str, Any], now: float) -> EffectRecord:
            new = [a for a in extra if a not in rec.get("aliases", ())]
            if new:
                rec["aliases"] = [*rec.get("aliases", ()), *new]
                rec["updated_at"] = now
                self._rewrite_in(txn, tenant, rec)
                self._add_calls_in(txn, tenant, rec, new)
            return self._record(tenant, rec, now)

        def op(txn: Any) -> EffectRecord:
            now = self._ctx.clock()
            rec = self._get_in(txn, tenant, key, call_id, lock=True)
            if rec is not None:
                return existing(txn, rec, now)
            rec = {"v": RECORD_VERSION, "tenant": tenant, "key": key, "call_id": call_id, "tool": tool,
                   "args_canonical": args_canonical, "side_effect": bool(side_effect), "state": PENDING,
                   "created_at": now, "updated_at": now, "session": session, "task": task,
                   "turn_id": turn_id, "aliases": extra}
            if not self._insert_in(txn, tenant, rec):
                # another writer recorded the same call a moment ago (one replica at the answer's end,
                # another from the next request's history): its record stands
                return existing(txn, self._get_in(txn, tenant, key, call_id, lock=True), now)
            return self._record(tenant, rec, now)

        return self._x.write(op)

    def complete(self, tenant: str, key: str, call_id: str, *, state: str = COMPLETED,
                 result_digest: str | None = None, result_size: int | None = None, refs: Sequence[str] = (),
                 excerpt: str | None = None, turn_id: str | None = None) -> EffectRecord | None:
        if state not in RESULT_STATES:
            raise StoreError(f"complete() state must be one of {RESULT_STATES}, not {state!r}")
        for value, what in ((result_digest, "result_digest"), (excerpt, "excerpt"), (turn_id, "turn_id")):
            check_str(value, what, optional=True)
        if result_size is not None and (not isinstance(result_size, int) or result_size < 0):
            raise StoreError(f"result_size must be a non-negative int, not {result_size!r}")
        ref_list = str_list(refs, "refs")

        def change(rec: dict[str, Any], now: float) -> bool:
            if rec["state"] not in OPEN_STATES:
                return False  # first result wins; history replays it every turn
            rec.update(state=state, result_digest=result_digest, result_size=result_size,
                       refs=ref_list, excerpt=excerpt, result_turn_id=turn_id)
            return True

        return self._update(tenant, key, call_id, change)

    def mark_unknown(self, tenant: str, key: str, call_id: str, *, note: str | None = None
                     ) -> EffectRecord | None:
        check_str(note, "note", optional=True)

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
        check_str(note, "note", optional=True)
        check_str(by, "by", optional=True)
        keys.check_tenant(tenant)
        keys.part(key, "effect key")
        if call_id is not None:
            keys.part(call_id, "call id")

        def op(txn: Any) -> list[EffectRecord]:
            now = self._ctx.clock()
            if call_id is not None:
                rec = self._get_in(txn, tenant, key, call_id, lock=True)
                found = [] if rec is None else [rec]
            else:
                found = self._of_key_in(txn, tenant, key, lock=True)
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
                self._rewrite_in(txn, tenant, rec)
                out.append(self._record(tenant, rec, now))
            return out

        return self._x.write(op)

    def get(self, tenant: str, key: str, call_id: str) -> EffectRecord | None:
        keys.check_tenant(tenant)
        keys.part(key, "effect key"), keys.part(call_id, "call id")

        def op(txn: Any) -> EffectRecord | None:
            rec = self._get_in(txn, tenant, key, call_id)
            return None if rec is None else self._record(tenant, rec, self._ctx.clock())

        return self._x.read(op)

    def by_key(self, tenant: str, key: str) -> list[EffectRecord]:
        keys.check_tenant(tenant)
        keys.part(key, "effect key")

        def op(txn: Any) -> list[EffectRecord]:
            now = self._ctx.clock()
            recs = [self._record(tenant, r, now) for r in self._of_key_in(txn, tenant, key)]
            return sorted(recs, key=lambda r: (r.created_at, r.call_id))

        return self._x.read(op)

    def by_call_id(self, tenant: str, call_id: str, *, session: str | None = None) -> EffectRecord | None:
        keys.check_tenant(tenant)
        keys.part(call_id, "call id")

        def op(txn: Any) -> EffectRecord | None:
            recs = [r for r in self._of_call_in(txn, tenant, call_id)
                    if session is None or r.get("session") == session]
            if not recs:
                return None
            best = max(recs, key=lambda r: (r["created_at"], r["key"]))
            return self._record(tenant, best, self._ctx.clock())

        return self._x.read(op)

    def list(self, tenant: str, *, session: str | None = None, task: str | None = None,
             state: str | Collection[str] | None = None, side_effect: bool | None = None) -> list[EffectRecord]:
        states = None if state is None else ({state} if isinstance(state, str) else set(state))
        if states is not None and not states <= set(EFFECT_STATES):
            raise StoreError(f"unknown effect state in {sorted(states)}; states are {EFFECT_STATES}")
        keys.check_tenant(tenant)
        if session is not None:
            keys.part(session, "session")
        if task is not None:
            keys.part(task, "task")

        def op(txn: Any) -> list[EffectRecord]:
            now = self._ctx.clock()
            out = []
            for rec in self._listed_in(txn, tenant, session, task):
                if task is not None and rec.get("task") != task:
                    continue
                if side_effect is not None and rec["side_effect"] != side_effect:
                    continue
                r = self._record(tenant, rec, now)
                if states is None or r.state in states:
                    out.append(r)
            return sorted(out, key=lambda r: (r.created_at, r.key, r.call_id))

        return self._x.read(op)


def revision_of(session: str | None, task: str | None) -> tuple[str, str]:
    """("session" | "task", its id) for ``revision``, which takes exactly one."""
    if (session is None) == (task is None):
        raise StoreError("revision needs exactly one of session or task")
    return ("session", session) if session is not None else ("task", task)  # type: ignore[return-value]
