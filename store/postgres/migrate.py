"""``ctxproxy store migrate --from lmdb --to postgres``: every record of an
embedded store copied into a PostgreSQL database, as the records are stored
(the same bytes), then verified: per kind, the count and a sha256 over the
records in key order must agree on both sides.

Resumable: each kind is copied in pages, one transaction per page, and every
insert skips a row that is already there; a run that stopped (or a second
run) starts over and goes on where the rows end. The copy reads the LMDB
environment directly (a snapshot per page) and may run while nothing writes
to it: stop the proxies first.
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Iterator

import orjson

from .. import keys
from ..lmdb_memories import MEMORY_REVS
from ..lmdb_store import DOC_KINDS, LMDBStore
from ..memory_records import MemoryRecord
from ..proxy_keys import PROXY_KEYS, _record
from ..records import EFFECTS, INDEX, MEMORIES, SESSIONS
from .common import ident
from .documents import PGDocuments
from .pool import ALL_TENANTS, Tx
from .proxy_keys import KEYS_TENANT
from .store import PGStore

PAGE = 500
KINDS = (EFFECTS, SESSIONS, *DOC_KINDS, MEMORIES, INDEX, PROXY_KEYS)


def _values(src: LMDBStore, db: str, keep: Callable[[bytes], bool] = lambda k: True) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of a named database, a page per read transaction."""
    after = b""
    while True:
        def page(txn: Any, start: bytes = after) -> list[tuple[bytes, bytes]]:
            cursor = txn.cursor(src._ctx.dbs[db])
            out: list[tuple[bytes, bytes]] = []
            if not cursor.set_range(start):
                return out
            for k, v in cursor.iternext():
                if k == start and start:
                    continue
                out.append((bytes(k), bytes(v)))
                if len(out) >= PAGE:
                    break
            return out

        items = src._handle.read(page)
        if not items:
            return
        for k, v in items:
            if keep(k):
                yield k, v
        after = items[-1][0]


def _pages(it: Iterator[Any]) -> Iterator[list[Any]]:
    page: list[Any] = []
    for item in it:
        page.append(item)
        if len(page) >= PAGE:
            yield page
            page = []
    if page:
        yield page


def _source(src: LMDBStore, kind: str) -> Iterator[tuple[bytes, bytes]]:
    if kind == PROXY_KEYS:
        return _values(src, PROXY_KEYS, lambda k: k.startswith(b"i" + keys.SEP))
    if kind == INDEX:  # the postings, not their reverse entries (T "d" doc term, empty)
        return _values(src, INDEX, lambda k: k.split(keys.SEP, 2)[1:2] == [b"t"])
    return _values(src, kind)


def _copy_page(dst: PGStore, kind: str, items: list[tuple[bytes, bytes]], src: LMDBStore) -> None:
    def op(tx: Tx) -> None:
        for _, raw in items:
            _copy_one(dst, tx, kind, raw, src)

    dst._pool.run(op)


def _copy_one(dst: PGStore, tx: Tx, kind: str, raw: bytes, src: LMDBStore) -> None:
    d = orjson.loads(raw)
    if kind == PROXY_KEYS:
        key = _record(raw)
        tx.tenant(key.principal.tenant).exec(
            "INSERT INTO proxy_keys (tenant, key_id, created_at, revoked_at, doc) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING", (key.principal.tenant, key.id, key.created_at, key.revoked_at, raw))
        return
    tenant = d["tenant"]
    tx.tenant(tenant)
    if kind == EFFECTS:
        dst.effects._insert_row_in(tx, tenant, d, raw)
        dst.effects._add_calls_in(tx, tenant, d, [d["call_id"], *d.get("aliases", ())])
    elif kind == SESSIONS:
        sp = ident(d["session"], "session")
        part = "" if d.get("part") is None else ident(d["part"], "part")
        tx.exec("INSERT INTO sessions (tenant, session, part, created_at, updated_at, doc) VALUES "
                "(%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tenant, sp, part, d["created_at"], d["updated_at"], raw))
        tx.many("INSERT INTO session_subjects (tenant, subject, session) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(tenant, ident(s, "subject"), sp) for s in d.get("subjects") or ()])
    elif kind in DOC_KINDS:
        docs: PGDocuments = dst.docs(kind)
        ip = ident(d["id"], f"{kind} id")
        tx.exec("INSERT INTO documents (tenant, kind, id, created_at, doc) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING", (tenant, kind, ip, d["created_at"], raw))
        tx.many("INSERT INTO document_scopes (tenant, kind, scope, value, id) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING", docs._scopes(tenant, d, ip))
    elif kind == INDEX:
        tx.exec("INSERT INTO postings (tenant, term, doc_id, data) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (tenant, ident(d["term"], "term"), ident(d["doc"], "doc id"), raw))
    elif kind == MEMORIES:
        if tx.one("SELECT 1 FROM memories WHERE tenant = %s AND memory_id = %s",
                  (tenant, ident(d["memory_id"], "memory id"))) is not None:
            return
        rec = MemoryRecord.from_dict(d)
        pk = keys.key(tenant, keys.part(rec.memory_id, "memory id")) + keys.SEP
        revisions = src._handle.read(lambda txn: _revisions(txn, src, pk))
        dst.memories._import_in(tx, rec, revisions)


def _revisions(txn: Any, src: LMDBStore, prefix: bytes) -> list[bytes]:
    cursor = txn.cursor(src._ctx.dbs[MEMORY_REVS])
    out = []
    if cursor.set_range(prefix):
        for k, v in cursor.iternext():
            if not k.startswith(prefix):
                break
            out.append(bytes(v))
    return out


def _copy_meta(src: LMDBStore, dst: PGStore) -> None:
    """The receipt chains' heads, the key generation and the memory layer's meta values."""
    def read(txn: Any) -> list[tuple[bytes, bytes]]:
        return [(bytes(k), bytes(v)) for k, v in txn.cursor(src._ctx.dbs["meta"]).iternext()]

    gen = src._handle.read(lambda txn: txn.get(b"generation", db=src._ctx.dbs[PROXY_KEYS]))
    rows = []
    for k, v in src._handle.read(read):
        if k.startswith(b"receipt_chain:"):
            rows.append((k[len(b"receipt_chain:"):].decode(), "receipt_chain", v))
        elif k.startswith(b"memory:"):
            rows.append(("#meta", k.decode(), v))
    if gen:
        rows.append((KEYS_TENANT, "generation", str(int.from_bytes(gen, "big")).encode()))

    def op(tx: Tx) -> None:
        for tenant, name, value in rows:
            tx.tenant(tenant).exec("INSERT INTO store_meta (tenant, name, value) VALUES (%s, %s, %s) "
                                   "ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value",
                                   (tenant, name, value))

    dst._pool.run(op)


# -- verification ------------------------------------------------------------------


def _ident_key(kind: str, d: dict[str, Any]) -> tuple:
    """The order both sides are digested in."""
    if kind == PROXY_KEYS:
        return (d["id"],)
    if kind == EFFECTS:
        return (d["tenant"], d["key"], d["call_id"])
    if kind == SESSIONS:
        return (d["tenant"], d["session"], d.get("part") or "")
    if kind == INDEX:
        return (d["tenant"], d["term"], d["doc"])
    if kind == MEMORIES:
        return (d["tenant"], d["memory_id"])
    return (d["tenant"], d["id"])


def _digest(kind: str, raws: Iterator[bytes]) -> tuple[int, str]:
    items = sorted((_ident_key(kind, orjson.loads(r)), r) for r in raws)
    h = hashlib.sha256()
    for _, raw in items:
        h.update(len(raw).to_bytes(8, "big") + raw)
    return len(items), h.hexdigest()


_PG_SQL = {EFFECTS: "SELECT doc FROM effects", SESSIONS: "SELECT doc FROM sessions", INDEX: "SELECT data FROM postings",
           MEMORIES: "SELECT doc FROM memories", PROXY_KEYS: "SELECT doc FROM proxy_keys"}


def verify(src: LMDBStore, dst: PGStore) -> dict[str, dict[str, Any]]:
    """Per kind: count and digest on each side, and whether they agree."""
    out = {}
    for kind in KINDS:
        a = _digest(kind, (v for _, v in _source(src, kind)))
        sql = _PG_SQL.get(kind, "SELECT doc FROM documents WHERE kind = %s")
        rows = dst._pool.run(lambda tx, s=sql, k=kind: tx.tenant(ALL_TENANTS).all(s, (k,) if "%s" in s else None),
                             readonly=True)
        b = _digest(kind, (bytes(r[0]) for r in rows))
        out[kind] = {"source": a[0], "target": b[0], "same": a == b}
    return out


def migrate(src: LMDBStore, dst: PGStore, progress: Callable[[str, int], None] = lambda kind, n: None
            ) -> dict[str, dict[str, Any]]:
    """Copy every kind (resumably), then verify; the verification per kind."""
    for kind in KINDS:
        n = 0
        for page in _pages(_source(src, kind)):
            _copy_page(dst, kind, page, src)
            n += len(page)
            progress(kind, n)
    _copy_meta(src, dst)
    return verify(src, dst)
