"""``DocumentStore`` (checkpoints, manifests, pruned originals, receipts) and
``TermIndex`` over PostgreSQL. A document is a row of ``documents``; it is
found by session and subject through ``document_scopes`` (its own session,
each of its ``sessions``, its subject), as erasure needs."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import StoreError
from ..lmdb_store import RECORD_VERSION, _check_str, _doc_sessions, _str_list
from ..records import INDEX, StoredDoc
from .common import Ctx, Runner, dump, ident, load, tenant_of
from .pool import Tx


class PGDocuments:
    def __init__(self, kind: str, x: Runner, ctx: Ctx, index: "PGIndex | None" = None) -> None:
        self.kind = kind
        self._x = x
        self._ctx = ctx
        self._index = index

    def _doc(self, tenant: str, rec: Mapping[str, Any]) -> StoredDoc:
        return StoredDoc(kind=self.kind, tenant=tenant, id=rec["id"], data=rec["data"],
                         created_at=rec["created_at"], updated_at=rec["updated_at"],
                         session=rec.get("session"), subject=rec.get("subject"),
                         sessions=tuple(rec.get("sessions") or ()))

    def _scopes(self, tenant: str, rec: Mapping[str, Any], ip: str) -> list[tuple]:
        out = [(tenant, self.kind, "s", ident(s, "session"), ip) for s in _doc_sessions(rec)]
        if rec.get("subject") is not None:
            out.append((tenant, self.kind, "u", ident(rec["subject"], "subject"), ip))
        return out

    def _get_in(self, tx: Tx, tenant: str, id: str) -> dict[str, Any] | None:
        row = tx.tenant(tenant).one("SELECT doc FROM documents WHERE tenant = %s AND kind = %s AND id = %s",
                                    (tenant, self.kind, ident(id, f"{self.kind} id")))
        return None if row is None else load(self.kind, row[0], tenant)

    def _put_in(self, tx: Tx, tenant: str, id: str, data: Mapping[str, Any], session: str | None,
                subject: str | None, sessions: Sequence[str] = ()) -> StoredDoc:
        ip = ident(id, f"{self.kind} id")
        now = self._ctx.clock()
        tx.tenant(tenant)
        tx.write_check()
        old = self._get_in(tx, tenant, id)
        rec = {"v": RECORD_VERSION, "tenant": tenant, "id": id, "session": session, "subject": subject,
               "created_at": now if old is None else old["created_at"], "updated_at": now, "data": data}
        if sessions:
            rec["sessions"] = list(sessions)
        if old is not None:
            tx.exec("DELETE FROM document_scopes WHERE tenant = %s AND kind = %s AND id = %s",
                    (tenant, self.kind, ip))
        tx.exec("INSERT INTO documents (tenant, kind, id, created_at, doc) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, kind, id) DO UPDATE SET doc = excluded.doc",
                (tenant, self.kind, ip, rec["created_at"], dump(self.kind, rec)))
        tx.many("INSERT INTO document_scopes (tenant, kind, scope, value, id) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING", self._scopes(tenant, rec, ip))
        return self._doc(tenant, rec)

    def _delete_in(self, tx: Tx, tenant: str, id: str) -> int:
        """Delete one document and its scope entries; returns postings dropped."""
        ip = ident(id, f"{self.kind} id")
        tx.tenant(tenant).exec("DELETE FROM documents WHERE tenant = %s AND kind = %s AND id = %s",
                               (tenant, self.kind, ip))
        tx.exec("DELETE FROM document_scopes WHERE tenant = %s AND kind = %s AND id = %s", (tenant, self.kind, ip))
        return 0 if self._index is None else self._index._remove_doc_in(tx, tenant, id)

    def _scoped_in(self, tx: Tx, tenant: str, scope: str, value: str) -> list[dict[str, Any]]:
        rows = tx.tenant(tenant).all(
            "SELECT d.doc FROM document_scopes s JOIN documents d ON d.tenant = s.tenant AND d.kind = s.kind "
            "AND d.id = s.id WHERE s.tenant = %s AND s.kind = %s AND s.scope = %s AND s.value = %s",
            (tenant, self.kind, scope, value))
        return [load(self.kind, r[0], tenant) for r in rows]

    def put(self, tenant: str, id: str, data: Mapping[str, Any], *, session: str | None = None,
            subject: str | None = None, sessions: Sequence[str] = ()) -> StoredDoc:
        _check_str(session, "session", optional=True)
        _check_str(subject, "subject", optional=True)
        others = [s for s in dict.fromkeys(_str_list(sessions, "sessions")) if s != session]
        if not isinstance(data, Mapping):
            raise StoreError(f"{self.kind} data must be a mapping, not {type(data).__name__}")
        tenant_of(tenant)
        ident(id, f"{self.kind} id")
        payload = dict(data)
        return self._x.write(lambda tx: self._put_in(tx, tenant, id, payload, session, subject, others))

    def get(self, tenant: str, id: str) -> StoredDoc | None:
        tenant_of(tenant)
        ident(id, f"{self.kind} id")

        def op(tx: Tx) -> StoredDoc | None:
            rec = self._get_in(tx, tenant, id)
            return None if rec is None else self._doc(tenant, rec)

        return self._x.read(op)

    def list(self, tenant: str, *, session: str | None = None, subject: str | None = None) -> list[StoredDoc]:
        tenant_of(tenant)
        sp = None if session is None else ident(session, "session")
        up = None if subject is None else ident(subject, "subject")

        def op(tx: Tx) -> list[StoredDoc]:
            if sp is not None:
                recs = self._scoped_in(tx, tenant, "s", sp)
            elif up is not None:
                recs = self._scoped_in(tx, tenant, "u", up)
            else:
                recs = [load(self.kind, r[0], tenant) for r in tx.tenant(tenant).all(
                    "SELECT doc FROM documents WHERE tenant = %s AND kind = %s", (tenant, self.kind))]
            if subject is not None:
                recs = [r for r in recs if r.get("subject") == subject]
            return sorted((self._doc(tenant, r) for r in recs), key=lambda d: (d.created_at, d.id))

        return self._x.read(op)

    def delete(self, tenant: str, id: str) -> bool:
        tenant_of(tenant)
        ident(id, f"{self.kind} id")

        def op(tx: Tx) -> bool:
            if self._get_in(tx, tenant, id) is None:
                return False
            self._delete_in(tx, tenant, id)
            return True

        return self._x.write(op)


class PGIndex:
    """``TermIndex`` over ``postings``."""

    def __init__(self, x: Runner, ctx: Ctx) -> None:
        self._x = x
        self._ctx = ctx

    def _remove_doc_in(self, tx: Tx, tenant: str, doc_id: str) -> int:
        return tx.tenant(tenant).exec("DELETE FROM postings WHERE tenant = %s AND doc_id = %s",
                                      (tenant, ident(doc_id, "doc id")))

    def _count_doc_in(self, tx: Tx, tenant: str, doc_id: str) -> int:
        return tx.tenant(tenant).one("SELECT count(*) FROM postings WHERE tenant = %s AND doc_id = %s",
                                     (tenant, ident(doc_id, "doc id")))[0]

    def put_doc(self, tenant: str, doc_id: str, terms: Mapping[str, Mapping[str, Any]]) -> None:
        tenant_of(tenant)
        dp = ident(doc_id, "doc id")
        rows = [(tenant, ident(term, "term"), dp,
                 dump(INDEX, {"v": RECORD_VERSION, "tenant": tenant, "term": term, "doc": doc_id,
                              "data": dict(data or {})})) for term, data in terms.items()]

        def op(tx: Tx) -> None:
            self._remove_doc_in(tx, tenant, doc_id)
            tx.many("INSERT INTO postings (tenant, term, doc_id, data) VALUES (%s, %s, %s, %s)", rows)

        self._x.write(op)

    def postings(self, tenant: str, term: str) -> list[tuple[str, dict[str, Any]]]:
        tenant_of(tenant)

        def op(tx: Tx) -> list[tuple[str, dict[str, Any]]]:
            rows = tx.tenant(tenant).all("SELECT data FROM postings WHERE tenant = %s AND term = %s "
                                         "ORDER BY doc_id COLLATE \"C\"", (tenant, ident(term, "term")))
            return [(p["doc"], p["data"]) for p in (load(INDEX, r[0], tenant) for r in rows)]

        return self._x.read(op)

    def terms(self, tenant: str, doc_id: str) -> list[str]:
        tenant_of(tenant)

        def op(tx: Tx) -> list[str]:
            rows = tx.tenant(tenant).all("SELECT data FROM postings WHERE tenant = %s AND doc_id = %s "
                                         "ORDER BY term COLLATE \"C\"", (tenant, ident(doc_id, "doc id")))
            return [load(INDEX, r[0], tenant)["term"] for r in rows]

        return self._x.read(op)

    def remove_doc(self, tenant: str, doc_id: str) -> int:
        tenant_of(tenant)
        return self._x.write(lambda tx: self._remove_doc_in(tx, tenant, doc_id))
