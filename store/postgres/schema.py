"""Versioned schema migrations: ``sql/NNNN_name.sql``, applied in order by
``ctxproxy store upgrade`` (``upgrade``), each in its own transaction with
its row in ``ctx_schema`` (and what it needs done in Python after its SQL:
``_THEN``).

A replica never changes the schema: it opens a database only when its
version is one this ctxproxy knows (``check``). Older means "run ctxproxy
store upgrade first"; newer means "this replica is older than the schema:
upgrade ctxproxy". Several replicas upgraded by a rolling restart so keep
running the version they were built for until the operator upgrades the
schema once, between the old and the new release.
"""
from __future__ import annotations

import re
from importlib import resources

from ..errors import StoreError

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql\Z")
_LOCK = 0x63747870  # pg_advisory_xact_lock key: one upgrade at a time


def migrations() -> list[tuple[int, str, str]]:
    """(version, file name, SQL) of every migration shipped, in order."""
    out = []
    for item in resources.files(__package__).joinpath("sql").iterdir():
        m = _NAME.match(item.name)
        if m:
            out.append((int(m.group(1)), item.name, item.read_text(encoding="utf-8")))
    out.sort()
    for i, (version, name, _) in enumerate(out, 1):
        if version != i:
            raise StoreError(f"schema migrations are not numbered 1..n ({name})")
    return out


SCHEMA_VERSION = len(migrations())

_TABLE = """CREATE TABLE IF NOT EXISTS ctx_schema (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


def _index_memories(conn) -> None:
    """Recall's index of the memories already stored (tokenized in Python,
    so not expressible in the migration's SQL), in the migration's transaction."""
    from .pool import Tx
    from .recall_index import index_all

    tx = Tx(conn)
    tx.begun = True  # inside the migration's transaction
    index_all(tx)


_THEN = {"0003_recall_index.sql": _index_memories}  # what a migration needs done after its SQL


def current(conn) -> int:
    """The schema version of the database (0: none yet)."""
    row = conn.execute("SELECT to_regclass('ctx_schema') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    return conn.execute("SELECT coalesce(max(version), 0) FROM ctx_schema").fetchone()[0]


def check(conn) -> int:
    """The database's version if it is the one this ctxproxy runs on, else ``StoreError``."""
    version = current(conn)
    if version < SCHEMA_VERSION:
        raise StoreError(f"the database's schema is v{version}, this ctxproxy needs v{SCHEMA_VERSION}: "
                         "run `ctxproxy store upgrade` first")
    if version > SCHEMA_VERSION:
        raise StoreError(f"the database's schema is v{version}, newer than this ctxproxy knows "
                         f"(v{SCHEMA_VERSION}); upgrade ctxproxy")
    return version


def upgrade(conn) -> list[str]:
    """Apply the migrations the database lacks (``conn`` in autocommit mode); the names applied."""
    applied = []
    for version, name, sql in migrations():
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            conn.execute(_TABLE)
            if conn.execute("SELECT 1 FROM ctx_schema WHERE version = %s", (version,)).fetchone():
                continue
            conn.execute(sql)
            if name in _THEN:
                _THEN[name](conn)
            conn.execute("INSERT INTO ctx_schema (version, name) VALUES (%s, %s)", (version, name))
            applied.append(name)
    newest = conn.execute("SELECT coalesce(max(version), 0) FROM ctx_schema").fetchone()[0]
    if newest > SCHEMA_VERSION:
        raise StoreError(f"the database's schema is v{newest}, newer than this ctxproxy knows (v{SCHEMA_VERSION})")
    return applied
