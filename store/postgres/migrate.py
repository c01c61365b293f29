"""``ctxproxy store migrate --from lmdb --to postgres`` (and ``--from postgres
--to lmdb``): every record of one store copied into the other, as the records
are stored, then verified: per kind, the count and a sha256 over the records
in key order must agree on both sides.

The session index (the turns a session tree's search reads) is carried as
two more kinds, ``session_tree`` and ``session_turns``: the embedded side's
is the SQLite file ``<data_dir>/recall/sessions.db`` beside the LMDB store,
copied row by row in the order it was written (its terms as they are, so
ranking stays the same).

Resumable: each kind is copied in pages, one transaction per page, and every
write skips a record that is already there; a run that stopped (or a second
run) starts over and goes on where the records end. The copy reads the
source a page per transaction and may run while nothing writes to it: stop
the proxies first.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from .. import keys
from ..encoding import load
from ..learning_state import LEARN
from ..lmdb_env import pages
from ..lmdb_memories import MEMORY_REVS
from ..lmdb_store import META, SCOPE_IDX, LMDBStore
from ..memory_records import MemoryRecord
from ..proxy_keys import PROXY_KEYS, _id_key, _record, _tenant_prefix
from ..records import DOC_KINDS, EFFECTS, INDEX, MEMORIES, SESSIONS
from ..session_index import SESSION_TREE, SESSION_TURNS, SessionIndex
from .common import ident
from .documents import PGDocuments
from .pool import ALL_TENANTS, Tx
from .proxy_keys import KEYS_TENANT
from .store import PGStore

PAGE = 500
KINDS = (EFFECTS, SESSIONS, *DOC_KINDS, MEMORIES, INDEX, PROXY_KEYS, LEARN)
INDEX_KINDS = (SESSION_TREE, SESSION_TURNS)  # the session index's rows


def _session_index(lmdb: LMDBStore, create: bool = False) -> SessionIndex | None:
    """The embedded session index beside an LMDB store (None: it has none and ``create`` is off)."""
    path = Path(lmdb.path).parent / "recall" / "sessions.db"
    return SessionIndex(path) if create or path.exists() else None


def _copy_index(src: Any, dst: Any, progress: Callable[[str, int], None]) -> None:
    """The session index's rows from one index to another, a page per transaction, in the order written."""
    for kind in INDEX_KINDS:
        n = 0
        for page in _pages(src.records(kind, PAGE)):
            dst.put_records(kind, page)
            n += len(page)
            progress(kind, n)


def _index_digests(index: Any) -> dict[str, tuple[int, str]]:
    return {kind: _digest(kind, (orjson.dumps(r) for r in (index.records(kind, PAGE) if index else ())))
            for kind in INDEX_KINDS}


def _values(src: LMDBStore, db: str, keep: Callable[[bytes], bool] = lambda k: True) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of a named database, a page per read transaction."""
    for items in pages(src._handle.read, lambda: src._ctx.dbs[db], size=PAGE):
        for k, v in items:
            if keep(k):
                yield k, v


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
    if kind == LEARN:  # names and bytes, not JSON: carried as (tenant, name, value)
        return ((k, orjson.dumps([*_learn_key(k), v.hex()])) for k, v in _values(src, LEARN))
    return _values(src, kind)


def _learn_key(k: bytes) -> tuple[str, str]:
    tenant, name = k.split(keys.SEP, 1)
    return tenant.decode("utf-8"), name.hex()


def _copy_page(dst: PGStore, kind: str, items: list[tuple[bytes, bytes]], src: LMDBStore) -> None:
    def op(tx: Tx) -> None:
        for _, raw in items:
            _copy_one(dst, tx, kind, raw, src)

    dst._pool.run(op)


def _learned(dst: Any, txn: Any, carried: bytes) -> None:
    """A learning row as ``_source`` carries it, into either store."""
    tenant, name, value = orjson.loads(carried)
    dst.learning._set_in(txn, tenant, bytes.fromhex(name), bytes.fromhex(value))


def _copy_one(dst: PGStore, tx: Tx, kind: str, raw: bytes, src: LMDBStore) -> None:
    if kind == LEARN:
        return _learned(dst, tx, raw)
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


def _ident_key(kind: str, d: Any) -> tuple:
    """The order both sides are digested in."""
    if kind == LEARN:
        return tuple(d[:2])
    if kind == SESSION_TREE:
        return (d["tenant"], d["session"])
    if kind == SESSION_TURNS:
        return (d["tenant"], d["session"], d["turn_id"], d["role"])
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


# per kind: the table, its key columns (the order pages are read in), the record column
_PG = {EFFECTS: ("effects", "tenant, key, call_id", "doc"), SESSIONS: ("sessions", "tenant, session, part", "doc"),
       INDEX: ("postings", "tenant, term, doc_id", "data"), MEMORIES: ("memories", "tenant, memory_id", "doc"),
       PROXY_KEYS: ("proxy_keys", "key_id", "doc"), LEARN: ("learning", "tenant, name", "value"),
       **{kind: ("documents", "tenant, kind, id", "doc") for kind in DOC_KINDS}}


def _pg_records(src: PGStore, kind: str) -> Iterator[bytes]:
    """The records of a kind as the database holds them, a page per transaction (learning's: as
    ``_source`` carries them)."""
    table, pk, column = _PG[kind]
    width = len(pk.split(","))
    where, params = ("kind = %s", [kind]) if table == "documents" else ("true", [])
    after: tuple | None = None
    while True:
        cond = where if after is None else f"{where} AND ({pk}) > ({', '.join(['%s'] * width)})"
        sql = f"SELECT {pk}, {column} FROM {table} WHERE {cond} ORDER BY {pk} LIMIT {PAGE}"
        rows = src._pool.run(lambda tx, q=sql, p=[*params, *(after or ())]: tx.tenant(ALL_TENANTS).all(q, p),
                             readonly=True)
        if not rows:
            return
        for r in rows:
            if kind == LEARN:
                yield orjson.dumps([r[0], bytes(r[1]).hex(), bytes(r[2]).hex()])
            else:
                yield bytes(r[-1])
        after = tuple(rows[-1][:width])


def verify(src: LMDBStore, dst: PGStore) -> dict[str, dict[str, Any]]:
    """Per kind: count and digest on each side (``source``: LMDB's), and whether they agree."""
    out = {}
    for kind in KINDS:
        a = _digest(kind, (v for _, v in _source(src, kind)))
        b = _digest(kind, _pg_records(dst, kind))
        out[kind] = {"source": a[0], "target": b[0], "same": a == b}
    index = _session_index(src)
    try:
        theirs = _index_digests(dst.session_index())
        for kind, a in _index_digests(index).items():
            out[kind] = {"source": a[0], "target": theirs[kind][0], "same": a == theirs[kind]}
    finally:
        if index is not None:
            index.close()
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
    index = _session_index(src)
    if index is not None:
        try:
            _copy_index(index, dst.session_index(), progress)
        finally:
            index.close()
    return verify(src, dst)


# -- the way back: PostgreSQL to LMDB ------------------------------------------------------


def _lmdb_put(dst: LMDBStore, txn: Any, kind: str, raw: bytes, src: PGStore) -> None:
    """One record into the embedded store with its index entries, unless it is there."""
    if kind == LEARN:
        return _learned(dst, txn, raw)
    if kind == PROXY_KEYS:
        key = _record(raw)
        if txn.get(_id_key(key.id), db=dst._ctx.dbs[PROXY_KEYS]) is None:
            txn.put(_id_key(key.id), raw, db=dst._ctx.dbs[PROXY_KEYS])
            txn.put(_tenant_prefix(key.principal.tenant) + key.id.encode(), b"", db=dst._ctx.dbs[PROXY_KEYS])
        return
    tenant = orjson.loads(raw)["tenant"]
    rec = load(kind, raw, tenant)
    if kind == EFFECTS:
        if dst.effects._get_in(txn, tenant, rec["key"], rec["call_id"]) is None:
            dst.effects._insert_in(txn, tenant, rec)
    elif kind == SESSIONS:
        dst.sessions._store_in(txn, tenant, rec["session"], rec.get("part"), rec)
        sp = keys.part(rec["session"], "session")
        for subject in rec.get("subjects") or ():
            txn.put(dst.sessions._subject_key(tenant, subject, sp), b"", db=dst._ctx.dbs[SCOPE_IDX])
    elif kind in DOC_KINDS:
        docs = dst.docs(kind)
        if docs._read_in(txn, tenant, rec["id"]) is None:
            docs._store_in(txn, tenant, rec["id"], rec, None)
    elif kind == INDEX:
        tp, dp = keys.part(rec["term"], "term"), keys.part(rec["doc"], "doc id")
        txn.put(keys.key(tenant, b"t", tp, dp), raw, db=dst._ctx.dbs[INDEX])
        txn.put(keys.key(tenant, b"d", dp, tp), b"", db=dst._ctx.dbs[INDEX])
    elif kind == MEMORIES:
        m = ident(rec["memory_id"], "memory id")
        revisions = src._pool.run(lambda tx: [bytes(r[0]) for r in tx.tenant(tenant).all(
            "SELECT doc FROM memory_revisions WHERE tenant = %s AND memory_id = %s ORDER BY revision",
            (tenant, m))], readonly=True)
        dst.memories._import_in(txn, MemoryRecord.from_dict(rec), revisions)


def _copy_meta_back(src: PGStore, dst: LMDBStore) -> None:
    """The receipt chains' heads, the memory layer's meta values and the key generation (never lowered)."""
    rows = src._pool.run(lambda tx: tx.tenant(ALL_TENANTS).all("SELECT tenant, name, value FROM store_meta"),
                         readonly=True)

    def op(txn: Any) -> None:
        meta, pk = dst._ctx.dbs[META], dst._ctx.dbs[PROXY_KEYS]
        for tenant, name, value in rows:
            value = bytes(value)
            if name == "receipt_chain":
                txn.put(b"receipt_chain:" + tenant.encode(), value, db=meta)
            elif name.startswith("memory:"):
                txn.put(name.encode(), value, db=meta)
            elif tenant == KEYS_TENANT and name == "generation":
                old = txn.get(b"generation", db=pk)
                gen = max(int(value), int.from_bytes(old, "big") if old else 0)
                txn.put(b"generation", gen.to_bytes(8, "big"), db=pk)

    dst._handle.write(op)


def migrate_back(src: PGStore, dst: LMDBStore, progress: Callable[[str, int], None] = lambda kind, n: None
                 ) -> dict[str, dict[str, Any]]:
    """Copy every kind from the database into the embedded store (resumably), then verify."""
    for kind in KINDS:
        n = 0
        for page in _pages(_pg_records(src, kind)):
            dst._handle.write(lambda txn, p=page, k=kind: [_lmdb_put(dst, txn, k, raw, src) for raw in p])
            n += len(page)
            progress(kind, n)
    _copy_meta_back(src, dst)
    index = _session_index(dst, create=True)
    try:
        _copy_index(src.session_index(), index, progress)
    finally:
        index.close()
    return verify(dst, src)
