"""``SessionStore`` over PostgreSQL: a row per session (part ``''``) and per
named part; ``session_subjects`` lists every subject a session has had."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ..lmdb_store import RECORD_VERSION, _canon, _check_str
from ..records import SESSIONS
from .common import Ctx, Runner, dump, ident, load, tenant_of
from .pool import Tx


def _subjects(rec: Mapping[str, Any] | None) -> list[str]:
    rec = rec or {}
    return list(rec.get("subjects") or ([rec["subject"]] if rec.get("subject") is not None else []))


class PGSessions:
    def __init__(self, x: Runner, ctx: Ctx) -> None:
        self._x = x
        self._ctx = ctx

    @staticmethod
    def _get_in(tx: Tx, tenant: str, session: str, part: str | None, lock: bool = False) -> dict[str, Any] | None:
        row = tx.tenant(tenant).one(
            "SELECT doc FROM sessions WHERE tenant = %s AND session = %s AND part = %s"
            + (" FOR UPDATE" if lock and not tx.readonly else ""),
            (tenant, ident(session, "session"), "" if part is None else ident(part, "part")))
        return None if row is None else load(SESSIONS, row[0], tenant)

    @staticmethod
    def _delete_in(tx: Tx, tenant: str, session: str) -> int:
        """A session's row, its parts and its subject entries."""
        sp = ident(session, "session")
        n = tx.tenant(tenant).exec("DELETE FROM sessions WHERE tenant = %s AND session = %s", (tenant, sp))
        tx.exec("DELETE FROM session_subjects WHERE tenant = %s AND session = %s", (tenant, sp))
        return n

    def _write(self, tenant: str, session: str, subject: str | None,
               build: Callable[[dict[str, Any]], dict[str, Any]], part: str | None = None) -> dict[str, Any]:
        tenant_of(tenant)
        sp = ident(session, "session")
        pp = "" if part is None else ident(part, "part")
        _check_str(subject, "subject", optional=True)

        def record(tx: Tx, key_part: str, state_of: Callable[[dict[str, Any]], dict[str, Any]],
                   now: float) -> dict[str, Any]:
            main = key_part == ""
            old = self._get_in(tx, tenant, session, None if main else part, lock=True)
            state = state_of({} if old is None else dict(old["state"]))
            keep_subject = subject if subject is not None else (old or {}).get("subject")
            subjects = _subjects(old)
            if keep_subject is not None and keep_subject not in subjects:
                subjects.append(keep_subject)
            rec = {"v": RECORD_VERSION, "tenant": tenant, "session": session,
                   "subject": keep_subject if main else None, "state": state,
                   "created_at": now if old is None else old["created_at"], "updated_at": now}
            if not main:
                rec["part"] = part
            elif subjects:
                rec["subjects"] = subjects
            tx.exec("INSERT INTO sessions (tenant, session, part, created_at, updated_at, doc) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, session, part) "
                    "DO UPDATE SET updated_at = excluded.updated_at, doc = excluded.doc",
                    (tenant, sp, key_part, rec["created_at"], now, dump(SESSIONS, rec)))
            if main and keep_subject is not None:
                tx.exec("INSERT INTO session_subjects (tenant, subject, session) VALUES (%s, %s, %s) "
                        "ON CONFLICT DO NOTHING", (tenant, ident(keep_subject, "subject"), sp))
            return state

        def op(tx: Tx) -> dict[str, Any]:
            now = self._ctx.clock()
            if part is not None and (subject is not None or self._get_in(tx, tenant, session, None) is None):
                record(tx, "", lambda state: state, now)  # a part never outlives its session
            return record(tx, pp, build, now)

        return self._x.write(op)

    def get(self, tenant: str, session: str, part: str | None = None) -> dict[str, Any] | None:
        tenant_of(tenant)

        def op(tx: Tx) -> dict[str, Any] | None:
            rec = self._get_in(tx, tenant, session, part)
            return None if rec is None else rec["state"]

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
                if state[k] == v:
                    continue
                want = _canon(v)
                if want is None or _canon(state[k]) != want:
                    return False
            return True

        if current is not None and subject is None:
            if holds(current):
                return dict(current)
            return self._write(tenant, session, subject, merge, part)
        tenant_of(tenant)

        def unchanged(tx: Tx) -> dict[str, Any] | None:
            rec = self._get_in(tx, tenant, session, part)
            if rec is None:
                return None
            if part is None and subject not in (None, rec.get("subject")) or not holds(rec["state"]):
                return None
            return rec["state"]

        same = self._x.read(unchanged)
        if same is not None:
            return same
        return self._write(tenant, session, subject, merge, part)

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
