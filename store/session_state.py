"""``SessionStore``'s rules, once for every backend: what a session record
holds (its state, the subject and every subject it has had, when it was
created), that a part never outlives its session, and that an update which
changes nothing writes nothing.

A backend subclasses ``SessionRules`` and reads and writes the records (the
dicts ``encoding`` stores) inside a transaction of its runner::

    _read_in(txn, tenant, session, part, lock)  the record (``part`` None: the session's own), or None
    _store_in(txn, tenant, session, part, rec)  write it; the session's own record files the
                                                session under ``rec["subject"]`` as well

and ``delete`` and ``list``.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from . import keys
from .checks import check_str
from .encoding import RECORD_VERSION, canon


def subjects_of(rec: Mapping[str, Any] | None) -> list[str]:
    """Every subject a session record has had (records before ``subjects``: its one)."""
    rec = rec or {}
    return list(rec.get("subjects") or ([rec["subject"]] if rec.get("subject") is not None else []))


class SessionRules:
    def __init__(self, x: Any, ctx: Any) -> None:
        self._x = x
        self._ctx = ctx

    def _read_in(self, txn: Any, tenant: str, session: str, part: str | None,
                 lock: bool = False) -> dict[str, Any] | None:
        raise NotImplementedError

    def _store_in(self, txn: Any, tenant: str, session: str, part: str | None, rec: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _write(self, tenant: str, session: str, subject: str | None,
               build: Callable[[dict[str, Any]], dict[str, Any]], part: str | None = None) -> dict[str, Any]:
        keys.check_tenant(tenant)
        keys.part(session, "session")
        if part is not None:
            keys.part(part, "part")
        check_str(subject, "subject", optional=True)

        def record(txn: Any, own: str | None, state_of: Callable[[dict[str, Any]], dict[str, Any]],
                   now: float) -> dict[str, Any]:
            main = own is None
            old = self._read_in(txn, tenant, session, own, lock=True)
            state = state_of({} if old is None else dict(old["state"]))
            keep_subject = subject if subject is not None else (old or {}).get("subject")
            # A new subject does not replace the old one: the session still holds the old
            # subject's data, and erasing that subject must find it.
            subjects = subjects_of(old)
            if keep_subject is not None and keep_subject not in subjects:
                subjects.append(keep_subject)
            rec = {"v": RECORD_VERSION, "tenant": tenant, "session": session,
                   "subject": keep_subject if main else None,  # a part's subject is its session's
                   "state": state, "created_at": now if old is None else old["created_at"], "updated_at": now}
            if not main:
                rec["part"] = own
            elif subjects:
                rec["subjects"] = subjects
            self._store_in(txn, tenant, session, own, rec)
            return state

        def op(txn: Any) -> dict[str, Any]:
            now = self._ctx.clock()
            if part is not None and (subject is not None or self._read_in(txn, tenant, session, None) is None):
                record(txn, None, lambda state: state, now)  # a part never outlives its session
            return record(txn, part, build, now)

        return self._x.write(op)

    def get(self, tenant: str, session: str, part: str | None = None) -> dict[str, Any] | None:
        keys.check_tenant(tenant)

        def op(txn: Any) -> dict[str, Any] | None:
            rec = self._read_in(txn, tenant, session, part)
            return None if rec is None else rec["state"]

        return self._x.read(op)

    def get_parts(self, tenant: str, session: str, parts: Sequence[str | None]) -> dict[str | None, Any]:
        """The session's own state (``None``) and each named part's, read in one
        transaction (a turn's filters share it: one read instead of one each)."""
        keys.check_tenant(tenant)

        def op(txn: Any) -> dict[str | None, Any]:
            out: dict[str | None, Any] = {}
            for part in parts:
                rec = self._read_in(txn, tenant, session, part)
                out[part] = None if rec is None else rec["state"]
            return out

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
                want = canon(v)  # a tuple and a list of the same items store alike
                if want is None or canon(state[k]) != want:
                    return False
            return True

        # A turn that changes nothing writes nothing: no put, and a batch left
        # without writes commits without a sync. ``current``: the state as the
        # caller just read it, which spares reading it again.
        if current is not None and subject is None:
            if holds(current):
                return dict(current)
            return self._write(tenant, session, subject, merge, part)
        keys.check_tenant(tenant)

        def unchanged(txn: Any) -> dict[str, Any] | None:
            rec = self._read_in(txn, tenant, session, part)
            if rec is None:
                return None
            if part is None and subject not in (None, rec.get("subject")) or not holds(rec["state"]):
                return None
            return rec["state"]

        same = self._x.read(unchanged)
        if same is not None:
            return same
        return self._write(tenant, session, subject, merge, part)
