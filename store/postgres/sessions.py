"""``SessionStore`` over PostgreSQL (the rules are ``session_state``'s): a row
per session (part ``''``) and per named part; ``session_subjects`` lists
every subject a session has had."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..records import SESSIONS
from ..session_state import SessionRules
from .common import dump, ident, load, tenant_of
from .pool import Tx


class PGSessions(SessionRules):
    """In a transaction that may write, the first read of a session locks and
    reads all its rows (its own and every part) in one statement, in one
    order (a session's rows are read in a batch to be rewritten: taking the
    locks at once spares a round trip per part); what it locked or wrote is
    kept in ``tx.rows`` (nobody else can change those rows before the
    transaction ends)."""

    def _read_in(self, tx: Tx, tenant: str, session: str, part: str | None,
                 lock: bool = False) -> dict[str, Any] | None:
        sp = ident(session, "session")
        key = (SESSIONS, tenant, sp, "" if part is None else ident(part, "part"))
        if tx.readonly:
            row = tx.tenant(tenant).one("SELECT doc FROM sessions WHERE tenant = %s AND session = %s AND part = %s",
                                        key[1:])
            return None if row is None else load(SESSIONS, row[0], tenant)
        whole = (SESSIONS, tenant, sp, None)  # every row of the session is in tx.rows (absent: no such row)
        if whole not in tx.rows:
            for part_, doc in tx.tenant(tenant).all(
                    "SELECT part, doc FROM sessions WHERE tenant = %s AND session = %s ORDER BY part COLLATE \"C\" "
                    "FOR UPDATE", (tenant, sp)):
                tx.rows.setdefault((SESSIONS, tenant, sp, part_), bytes(doc))
            tx.rows[whole] = b""
        raw = tx.rows.get(key)
        return None if raw is None else load(SESSIONS, raw, tenant)

    def _store_in(self, tx: Tx, tenant: str, session: str, part: str | None, rec: Mapping[str, Any]) -> None:
        sp = ident(session, "session")
        key = (SESSIONS, tenant, sp, "" if part is None else ident(part, "part"))
        raw = dump(SESSIONS, rec)
        tx.tenant(tenant).send(
            "INSERT INTO sessions (tenant, session, part, created_at, updated_at, doc) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, session, part) "
            "DO UPDATE SET updated_at = excluded.updated_at, doc = excluded.doc",
            (*key[1:], rec["created_at"], rec["updated_at"], raw))
        tx.rows[key] = raw
        if part is None and rec["subject"] is not None:
            tx.send("INSERT INTO session_subjects (tenant, subject, session) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING", (tenant, ident(rec["subject"], "subject"), sp))

    def get_parts(self, tenant: str, session: str, parts: Sequence[str | None]) -> dict[str | None, Any]:
        """The session's own state (``None``) and each named part's, in one statement."""
        tenant_of(tenant)
        names = {("" if p is None else ident(p, "part")): p for p in parts}

        def op(tx: Tx) -> dict[str | None, Any]:
            out: dict[str | None, Any] = dict.fromkeys(parts)
            if not tx.readonly:  # in a batch: through the lock and what the batch wrote
                for p in parts:
                    rec = self._read_in(tx, tenant, session, p)
                    out[p] = None if rec is None else rec["state"]
                return out
            for part, doc in tx.tenant(tenant).all(
                    "SELECT part, doc FROM sessions WHERE tenant = %s AND session = %s AND part = ANY(%s)",
                    (tenant, ident(session, "session"), list(names))):
                out[names[part]] = load(SESSIONS, doc, tenant)["state"]
            return out

        return self._x.read(op)

    @staticmethod
    def _delete_in(tx: Tx, tenant: str, session: str) -> int:
        """A session's row, its parts and its subject entries."""
        sp = ident(session, "session")
        for key in [k for k in tx.rows if k[:3] == (SESSIONS, tenant, sp)]:
            del tx.rows[key]
        n = tx.tenant(tenant).exec("DELETE FROM sessions WHERE tenant = %s AND session = %s", (tenant, sp))
        tx.exec("DELETE FROM session_subjects WHERE tenant = %s AND session = %s", (tenant, sp))
        return n

    def delete(self, tenant: str, session: str) -> bool:
        tenant_of(tenant)
        return self._x.write(lambda tx: self._delete_in(tx, tenant, session) > 0)

    def list(self, tenant: str, *, subject: str | None = None) -> list[str]:
        tenant_of(tenant)

        def op(tx: Tx) -> list[str]:
            if subject is None:
                rows = tx.tenant(tenant).all(
                    "SELECT doc FROM sessions WHERE tenant = %s AND part = '' ORDER BY session COLLATE \"C\"", (tenant,))
            else:
                rows = tx.tenant(tenant).all(
                    "SELECT s.doc FROM session_subjects u JOIN sessions s ON s.tenant = u.tenant "
                    "AND s.session = u.session AND s.part = '' WHERE u.tenant = %s AND u.subject = %s "
                    "ORDER BY s.session COLLATE \"C\"", (tenant, ident(subject, "subject")))
            return [load(SESSIONS, r[0], tenant)["session"] for r in rows]

        return self._x.read(op)
