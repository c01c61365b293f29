"""``DocumentStore``'s rules, once for every backend (checkpoints, manifests,
pruned originals, receipts): what a document record holds, that a replace
keeps ``created_at``, which sessions and subject file it (erasure finds it
under each), the checks of a put and the order of a listing.

A backend subclasses ``DocumentRules`` and keeps the records (the dicts
``encoding`` stores) inside a transaction of its runner::

    _read_in(txn, tenant, id)                 the record, or None
    _store_in(txn, tenant, id, rec, old)      write it, its scope entries replacing ``old``'s
    _insert_in(txn, tenant, id, rec)          (optional) write it if none is there, else return that one
    _remove_in(txn, tenant, id, rec)          delete it and its scope entries
    _found_in(txn, tenant, session, subject)  the records filed under a session, a subject, or all
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from . import keys
from .checks import check_str, str_list
from .encoding import RECORD_VERSION
from .errors import StoreError
from .records import StoredDoc


def doc_sessions(rec: Mapping[str, Any]) -> list[str]:
    """Every session a document holds data of: its own, and ``sessions`` (a
    task's checkpoint lists the effects of each of the task's sessions)."""
    own = [rec["session"]] if rec.get("session") is not None else []
    return own + list(rec.get("sessions") or ())


def _check_part(ok: set[str], value: Any, what: str, key_what: str) -> None:
    """``value`` checked as a key part (``put``'s checks), remembered in ``ok`` once it passed."""
    check_str(value, what)
    keys.part(value, key_what)
    if type(value) is str:  # noqa: E721
        ok.add(value)


class DocumentRules:
    def __init__(self, kind: str, x: Any, ctx: Any, index: Any = None) -> None:
        self.kind = kind
        self._x = x
        self._ctx = ctx
        self._index = index  # a term index whose postings of a deleted document go with it

    def _read_in(self, txn: Any, tenant: str, id: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def _store_in(self, txn: Any, tenant: str, id: str, rec: Mapping[str, Any],
                  old: Mapping[str, Any] | None) -> None:
        raise NotImplementedError

    def _remove_in(self, txn: Any, tenant: str, id: str, rec: Mapping[str, Any]) -> int:
        raise NotImplementedError

    def _found_in(self, txn: Any, tenant: str, session: str | None, subject: str | None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _insert_in(self, txn: Any, tenant: str, id: str, rec: Mapping[str, Any]) -> dict[str, Any] | None:
        """Store ``rec`` as a new document and return None; if one is there
        already, write nothing and return it. A backend that can do both in
        one step (LMDB: a put that refuses to overwrite) spares a new
        document's read, which is every turn's manifest."""
        old = self._read_in(txn, tenant, id)
        if old is None:
            self._store_in(txn, tenant, id, rec, None)
        return old

    def _doc(self, tenant: str, rec: Mapping[str, Any]) -> StoredDoc:
        return StoredDoc(kind=self.kind, tenant=tenant, id=rec["id"], data=rec["data"],
                         created_at=rec["created_at"], updated_at=rec["updated_at"],
                         session=rec.get("session"), subject=rec.get("subject"),
                         sessions=tuple(rec.get("sessions") or ()))

    def _put_in(self, txn: Any, tenant: str, id: str, data: Mapping[str, Any],
                session: str | None, subject: str | None, sessions: Sequence[str] = ()) -> StoredDoc:
        keys.part(id, f"{self.kind} id")
        return self._doc(tenant, self._record_in(txn, tenant, id, data, session, subject, sessions, self._ctx.clock()))

    def _record_in(self, txn: Any, tenant: str, id: str, data: Mapping[str, Any], session: str | None,
                   subject: str | None, sessions: Sequence[str], now: float) -> dict[str, Any]:
        rec = {"v": RECORD_VERSION, "tenant": tenant, "id": id, "session": session, "subject": subject,
               "created_at": now, "updated_at": now, "data": data}
        if sessions:
            rec["sessions"] = list(sessions)
        old = self._insert_in(txn, tenant, id, rec)
        if old is not None:  # a replace keeps when the document was first stored
            rec["created_at"] = old["created_at"]
            self._store_in(txn, tenant, id, rec, old)
        return rec

    def put(self, tenant: str, id: str, data: Mapping[str, Any], *, session: str | None = None,
            subject: str | None = None, sessions: Sequence[str] = ()) -> StoredDoc:
        check_str(session, "session", optional=True)
        check_str(subject, "subject", optional=True)
        others = [s for s in dict.fromkeys(str_list(sessions, "sessions")) if s != session]
        if not isinstance(data, Mapping):
            raise StoreError(f"{self.kind} data must be a mapping, not {type(data).__name__}")
        keys.check_tenant(tenant)
        keys.part(id, f"{self.kind} id")
        payload = dict(data)
        return self._x.write(lambda txn: self._put_in(txn, tenant, id, payload, session, subject, others))

    def put_many(self, docs: Sequence[tuple[str, str, Mapping[str, Any], str | None, str | None]]) -> int:
        """Insert or replace several documents, each ``(tenant, id, data, session,
        subject)``, in one write, as ``put`` would one by one (checked the same;
        one clock reading for all). Returns how many. A value several share is
        checked once: a turn's manifest and its turn pointer share their id, session
        and subject, and the store's writer puts every turn that ended within its
        linger at once."""
        # the ids, sessions and subjects already checked (one check fits all three; a str
        # subclass is checked every time); a tenant's check keeps its own memo
        ok: set[str] = set()
        id_what = f"{self.kind} id"
        rows = []
        for tenant, id, data, session, subject in docs:
            keys.check_tenant(tenant)
            if type(id) is not str or id not in ok:  # noqa: E721
                _check_part(ok, id, "id", id_what)
            if session is not None and (type(session) is not str or session not in ok):  # noqa: E721
                _check_part(ok, session, "session", "session")
            if subject is not None and (type(subject) is not str or subject not in ok):  # noqa: E721
                _check_part(ok, subject, "subject", "subject")
            if type(data) is not dict and not isinstance(data, Mapping):  # noqa: E721
                raise StoreError(f"{self.kind} data must be a mapping, not {type(data).__name__}")
            rows.append((tenant, id, dict(data), session, subject))

        def op(txn: Any) -> int:
            now = self._ctx.clock()
            for tenant, id, payload, session, subject in rows:
                self._record_in(txn, tenant, id, payload, session, subject, (), now)
            return len(rows)

        return self._x.write(op) if rows else 0

    def get(self, tenant: str, id: str) -> StoredDoc | None:
        keys.check_tenant(tenant)
        keys.part(id, f"{self.kind} id")

        def op(txn: Any) -> StoredDoc | None:
            rec = self._read_in(txn, tenant, id)
            return None if rec is None else self._doc(tenant, rec)

        return self._x.read(op)

    def list(self, tenant: str, *, session: str | None = None, subject: str | None = None) -> list[StoredDoc]:
        """Oldest first."""
        keys.check_tenant(tenant)
        for value, what in ((session, "session"), (subject, "subject")):
            if value is not None:
                keys.part(value, what)

        def op(txn: Any) -> list[StoredDoc]:
            recs = self._found_in(txn, tenant, session, subject)
            if subject is not None:
                recs = [r for r in recs if r.get("subject") == subject]
            return sorted((self._doc(tenant, r) for r in recs), key=lambda d: (d.created_at, d.id))

        return self._x.read(op)

    def delete(self, tenant: str, id: str) -> bool:
        keys.check_tenant(tenant)
        keys.part(id, f"{self.kind} id")

        def op(txn: Any) -> bool:
            rec = self._read_in(txn, tenant, id)
            if rec is None:
                return False
            self._remove_in(txn, tenant, id, rec)
            return True

        return self._x.write(op)
