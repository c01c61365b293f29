"""``EffectLedger`` over PostgreSQL (the rules are ``effect_ledger``'s): one
row per (key, call id), the record as every backend encodes it;
``effect_calls`` finds a record by its call id or an alias. A turn inserts
its pending calls and updates the rows of the calls it settles: no row
shared between turns of different sessions.

``revision`` is derived, never stored: every write takes a new ``seq`` from a
sequence, so (rows, newest seq) of a session changes with every write and
delete — without a per-session counter row that every turn would update.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

from ..effect_ledger import LedgerRules, revision_of
from ..records import EFFECTS
from .common import dump, ident, load, opt_ident, tenant_of
from .pool import Tx


class PGEffects(LedgerRules):
    # -- in-transaction primitives (also used by erasure and the migration) -------------

    def _get_in(self, tx: Tx, tenant: str, key: str, call_id: str, lock: bool = False) -> dict[str, Any] | None:
        row = tx.tenant(tenant).one(
            "SELECT doc FROM effects WHERE tenant = %s AND key = %s AND call_id = %s"
            + (" FOR UPDATE" if lock and not tx.readonly else ""),
            (tenant, ident(key, "effect key"), ident(call_id, "call id")))
        return None if row is None else load(EFFECTS, row[0], tenant)

    def _insert_in(self, tx: Tx, tenant: str, rec: Mapping[str, Any]) -> bool:
        if not self._insert_row_in(tx, tenant, rec, dump(EFFECTS, rec)):
            return False
        self._add_calls_in(tx, tenant, rec, [rec["call_id"], *rec.get("aliases", ())])
        return True

    @staticmethod
    def _insert_row_in(tx: Tx, tenant: str, rec: Mapping[str, Any], raw: bytes) -> bool:
        """The row of a record as encoded (``raw``); False when it is there already."""
        return bool(tx.tenant(tenant).exec(
            "INSERT INTO effects (tenant, key, call_id, session, task, created_at, seq, doc) "
            "VALUES (%s, %s, %s, %s, %s, %s, nextval('effects_seq'), %s) ON CONFLICT DO NOTHING",
            (tenant, ident(rec["key"], "effect key"), ident(rec["call_id"], "call id"),
             opt_ident(rec.get("session"), "session"), opt_ident(rec.get("task"), "task"), rec["created_at"], raw)))

    def _rewrite_in(self, tx: Tx, tenant: str, rec: Mapping[str, Any]) -> None:
        tx.tenant(tenant).send(
            "UPDATE effects SET doc = %s, seq = nextval('effects_seq') WHERE tenant = %s AND key = %s AND call_id = %s",
            (dump(EFFECTS, rec), tenant, ident(rec["key"], "effect key"), ident(rec["call_id"], "call id")))

    def _add_calls_in(self, tx: Tx, tenant: str, rec: Mapping[str, Any], calls: Sequence[str]) -> None:
        k, c = ident(rec["key"], "effect key"), ident(rec["call_id"], "call id")
        tx.tenant(tenant).many(
            "INSERT INTO effect_calls (tenant, call_id, key, own_call_id) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING", [(tenant, ident(a, "call id"), k, c) for a in calls])

    def _of_key_in(self, tx: Tx, tenant: str, key: str, lock: bool = False) -> list[dict[str, Any]]:
        rows = tx.tenant(tenant).all("SELECT doc FROM effects WHERE tenant = %s AND key = %s ORDER BY call_id"
                                     + (" FOR UPDATE" if lock and not tx.readonly else ""),
                                     (tenant, ident(key, "effect key")))
        return [load(EFFECTS, r[0], tenant) for r in rows]

    def _of_call_in(self, tx: Tx, tenant: str, call_id: str) -> list[dict[str, Any]]:
        rows = tx.tenant(tenant).all(
            "SELECT e.doc FROM effect_calls c JOIN effects e ON e.tenant = c.tenant AND e.key = c.key "
            "AND e.call_id = c.own_call_id WHERE c.tenant = %s AND c.call_id = %s", (tenant, ident(call_id, "call id")))
        return [load(EFFECTS, r[0], tenant) for r in rows]

    def _listed_in(self, tx: Tx, tenant: str, session: str | None, task: str | None) -> list[dict[str, Any]]:
        sql, params = "SELECT doc FROM effects WHERE tenant = %s", [tenant]
        if session is not None:
            sql, params = sql + " AND session = %s", [*params, ident(session, "session")]
        if task is not None:
            sql, params = sql + " AND task = %s", [*params, ident(task, "task")]
        return [load(EFFECTS, r[0], tenant) for r in tx.tenant(tenant).all(sql, params)]

    @staticmethod
    def _delete_in(tx: Tx, tenant: str, key: str, call_id: str) -> None:
        k, c = ident(key, "effect key"), ident(call_id, "call id")
        tx.tenant(tenant).exec("DELETE FROM effects WHERE tenant = %s AND key = %s AND call_id = %s",
                               (tenant, k, c))
        tx.exec("DELETE FROM effect_calls WHERE tenant = %s AND key = %s AND own_call_id = %s", (tenant, k, c))

    def revision(self, tenant: str, *, session: str | None = None, task: str | None = None) -> bytes | None:
        column, value = revision_of(session, task)
        tenant_of(tenant)
        value = ident(value, column)

        def op(tx: Tx) -> bytes | None:
            row = tx.tenant(tenant).one(f"SELECT count(*), max(seq) FROM effects WHERE tenant = %s AND {column} = %s",
                                        (tenant, value))
            if not row or not row[0]:
                return None
            return hashlib.sha256(f"{row[0]}:{row[1]}".encode()).digest()[:8]

        return self._x.read(op)
