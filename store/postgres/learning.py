"""``LearningStore`` over PostgreSQL (the rules are ``learning_state``'s): the
names and values the embedded store keeps, as rows of ``learning``. Every
write of a tenant's learning state first takes a transaction-level advisory
lock on the tenant, so replicas take, renew and drop the lease one at a
time, as LMDB's single writer does."""
from __future__ import annotations


from ..learning_state import LearningRules
from .pool import ALL_TENANTS, Tx


class PGLearning(LearningRules):
    def _raw_in(self, tx: Tx, tenant: str, name: bytes) -> bytes | None:
        row = tx.tenant(tenant).one("SELECT value FROM learning WHERE tenant = %s AND name = %s", (tenant, name))
        return None if row is None else bytes(row[0])

    def _set_in(self, tx: Tx, tenant: str, name: bytes, value: bytes) -> None:
        tx.tenant(tenant).exec("INSERT INTO learning (tenant, name, value) VALUES (%s, %s, %s) "
                               "ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value", (tenant, name, value))

    def _del_in(self, tx: Tx, tenant: str, name: bytes) -> None:
        tx.tenant(tenant).exec("DELETE FROM learning WHERE tenant = %s AND name = %s", (tenant, name))

    def _range_in(self, tx: Tx, tenant: str, prefix: bytes, start: bytes | None = None,
                  limit: int | None = None) -> list[tuple[bytes, bytes]]:
        # names below ``prefix``: from it (or ``start``) up to the first name that no longer begins with it
        # (a prefix ends with the separator \x00, so prefix[:-1] + \x01 is the first name past them all)
        rows = tx.tenant(tenant).all(
            "SELECT name, value FROM learning WHERE tenant = %s AND name >= %s AND name < %s ORDER BY name"
            + (" LIMIT %s" if limit is not None else ""),
            (tenant, prefix if start is None else start, prefix[:-1] + b"\x01",
             *((int(limit),) if limit is not None else ())))
        return [(bytes(r[0]), bytes(r[1])) for r in rows]

    def _serialize_in(self, tx: Tx, tenant: str) -> None:
        tx.tenant(tenant).one("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"learn:{tenant}",))

    def tenants(self) -> list[str]:
        rows = self._x.read(lambda tx: tx.tenant(ALL_TENANTS).all(
            "SELECT DISTINCT tenant COLLATE \"C\" FROM learning ORDER BY 1"))
        return [r[0] for r in rows]
