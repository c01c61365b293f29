"""``DocumentStore`` (checkpoints, manifests, pruned originals, receipts) and
``TermIndex`` over PostgreSQL. A document is a row of ``documents``; it is
found by session and subject through ``document_scopes`` (its own session,
each of its ``sessions``, its subject), as erasure needs."""
from __future__ import annotations

from typing import Any, Mapping

from ..document_store import DocumentRules, doc_sessions
from ..encoding import RECORD_VERSION
from ..records import INDEX
from .common import Ctx, Runner, dump, ident, load, tenant_of
from .pool import Tx


class PGDocuments(DocumentRules):
    """``DocumentStore`` over PostgreSQL, one per kind (the rules are ``DocumentRules``')."""

    def _scopes(self, tenant: str, rec: Mapping[str, Any], ip: str) -> list[tuple]:
        out = [(tenant, self.kind, "s", ident(s, "session"), ip) for s in doc_sessions(rec)]
        if rec.get("subject") is not None:
            out.append((tenant, self.kind, "u", ident(rec["subject"], "subject"), ip))
        return out

    def _read_in(self, tx: Tx, tenant: str, id: str) -> dict[str, Any] | None:
        row = tx.tenant(tenant).one("SELECT doc FROM documents WHERE tenant = %s AND kind = %s AND id = %s",
                                    (tenant, self.kind, ident(id, f"{self.kind} id")))
        return None if row is None else load(self.kind, row[0], tenant)

    def _store_in(self, tx: Tx, tenant: str, id: str, rec: Mapping[str, Any],
                  old: Mapping[str, Any] | None) -> None:
        ip = ident(id, f"{self.kind} id")
        tx.tenant(tenant).write_check()
        if old is not None:
            tx.send("DELETE FROM document_scopes WHERE tenant = %s AND kind = %s AND id = %s",
                    (tenant, self.kind, ip))
        tx.send("INSERT INTO documents (tenant, kind, id, created_at, doc) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant, kind, id) DO UPDATE SET doc = excluded.doc",
                (tenant, self.kind, ip, rec["created_at"], dump(self.kind, rec)))
        tx.many("INSERT INTO document_scopes (tenant, kind, scope, value, id) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING", self._scopes(tenant, rec, ip))

    def _remove_in(self, tx: Tx, tenant: str, id: str, rec: Mapping[str, Any]) -> int:
        return self._delete_in(tx, tenant, id)

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

    def _found_in(self, tx: Tx, tenant: str, session: str | None, subject: str | None) -> list[dict[str, Any]]:
        if session is not None:
            return self._scoped_in(tx, tenant, "s", ident(session, "session"))
        if subject is not None:
            return self._scoped_in(tx, tenant, "u", ident(subject, "subject"))
        return [load(self.kind, r[0], tenant) for r in tx.tenant(tenant).all(
            "SELECT doc FROM documents WHERE tenant = %s AND kind = %s", (tenant, self.kind))]


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
            tx.tenant(tenant).send("DELETE FROM postings WHERE tenant = %s AND doc_id = %s", (tenant, dp))
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
