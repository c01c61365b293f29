"""ctxproxy.store.postgres — the store of a fleet: every interface of
``store.interfaces`` over one PostgreSQL database that several replicas share.

::

    upgrade(dsn)                        # `ctxproxy store upgrade`: apply the versioned SQL migrations
    store = PGStore.open(dsn)           # a replica: refuses a schema it does not know

Modules: ``pool`` (connections, transactions with the tenant set for
row-level security, availability), ``schema`` (migrations in ``sql/``), one
module per record family (``effects``, ``sessions``, ``documents``,
``memories``, ``proxy_keys``), ``store`` (batches, snapshots, erasure).
"""
from __future__ import annotations

from .pool import ALL_TENANTS, StoreUnavailable
from .schema import SCHEMA_VERSION
from .store import PGStore


def upgrade(dsn: str) -> list[str]:
    """Apply the schema migrations the database lacks; the names of those applied."""
    import psycopg

    from .pool import translate

    try:
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as conn:
            from .schema import upgrade as run

            return run(conn)
    except psycopg.Error as exc:
        raise translate(exc) from exc


def schema_version(dsn: str) -> int:
    import psycopg

    from .pool import translate
    from .schema import current

    try:
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as conn:
            return current(conn)
    except psycopg.Error as exc:
        raise translate(exc) from exc


__all__ = ["PGStore", "StoreUnavailable", "upgrade", "schema_version", "SCHEMA_VERSION", "ALL_TENANTS"]
