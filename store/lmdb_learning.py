"""``store.learning``: what the learning job keeps besides memories, over LMDB.

One named database, ``learn``, keys prefixed by tenant::

    T "lease"                 -> {owner, until, heartbeat_at, taken_at}: one consolidation per tenant
    T "job"                   -> {watermark, scopes, last_run, cooldown_until, failures, retry_at, ...}
    T "#seq"                  -> the tenant's last extraction number (8 bytes BE)
    T "q" seq(8 BE)           -> {session, user}: a session extracted (phase 2's input feed)
    T "r" digest              -> {user, at}: a rejected proposal (its scope and text, digested)
    T "e" memory_id           -> {evidence: [{session, user, agent, turns, effects, outcome, quote}]}
    T "es" session memory_id  -> ""  } the evidence of a session / a user, for forgetting
    T "eu" user memory_id     -> ""  }

The per-session extraction state itself is a part of the session record
(``sessions`` part ``learn``), so erasing a session erases it.

The watermark never moves back: ``save_job`` keeps the larger of the stored
and the given one. The lease is taken, renewed and dropped in one write
transaction each, so two processes sharing the environment never both hold it.
"""
from __future__ import annotations

from typing import Any

from . import keys
from .learning_state import LEARN, LearningRules
from .lmdb_env import key_tenants

__all__ = ["LEARN", "LMDBLearning"]


class LMDBLearning(LearningRules):
    """``LearningStore`` over LMDB (the rules are ``LearningRules``'): a name is
    the key below the tenant's prefix."""

    _db = property(lambda self: self._ctx.dbs[LEARN])

    def _raw_in(self, txn: Any, tenant: str, name: bytes) -> bytes | None:
        return txn.get(keys.tenant_prefix(tenant) + name, db=self._db)

    def _set_in(self, txn: Any, tenant: str, name: bytes, value: bytes) -> None:
        txn.put(keys.tenant_prefix(tenant) + name, value, db=self._db)

    def _del_in(self, txn: Any, tenant: str, name: bytes) -> None:
        txn.delete(keys.tenant_prefix(tenant) + name, db=self._db)

    def _range_in(self, txn: Any, tenant: str, prefix: bytes, start: bytes | None = None,
                  limit: int | None = None) -> list[tuple[bytes, bytes]]:
        tp = keys.tenant_prefix(tenant)
        out: list[tuple[bytes, bytes]] = []
        cursor = txn.cursor(self._db)
        if cursor.set_range(tp + (prefix if start is None else start)):
            for k, v in cursor.iternext():
                if not k.startswith(tp + prefix) or (limit is not None and len(out) >= limit):
                    break
                out.append((k[len(tp):], v))
        return out

    def tenants(self) -> list[str]:
        """Tenants with learning state."""
        return self._x.read(lambda txn: key_tenants(txn, self._db))
