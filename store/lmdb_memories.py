"""``store.memories``: durable memory records over LMDB, with their history.

Named databases::

    memories       T id                     -> current revision (record JSON)
    memory_revs    T id rev(4 bytes BE)     -> every earlier revision (the current one is in memories)
    memory_idx     T "x" scope+external_id  -> id (unique per scope)
                   T "u" user id            }
                   T "p" project id         }  (empty values) listing and erasure by
                   T "s" session id         }  user, project, session (own + evidence)
                   T "c" scope group id     }  a scope's records, "s"napshot / "r"ecalled kinds
                   T "k" scope+subject id   }  contradiction candidates   } live records
                   T "h" scope+text id      }  exact duplicates           } only
                   T "n" scope+words id     }  near duplicates            }
                   T "e" expires_at id      }  records by expiry (seconds, 8 bytes BE), for purges
                   T "#n" scope             -> live recalled records in the scope (a counter)
                   T "#a" reason            -> refused writes (the audit counter, nothing else kept)
    memory_feed    seq(8 bytes BE)          -> {"tenant", "id"}: every put and erasure, for
                                               derived indexes catching up from a watermark

A write and its index entries, revision and feed entry commit in one
transaction (fsync on return). Live statuses (active, proposed, hypothesis)
count against the scope's limits; the gate reads them through
``scope_records`` and ``recalled_count``.
"""
from __future__ import annotations

import struct
from typing import Any, Callable, Iterator, Mapping

import orjson

from . import keys, memory_text
from .errors import ExternalIdTaken, RevisionConflict
from .lmdb_env import load as load_record
from .lmdb_env import key_tenants, pages
from .lmdb_env import scan as _scan
from .lmdb_env import scan_rest as _scan_rest
from .memory_listing import MemoryListing
from .memory_records import SNAPSHOT_KINDS, STATUSES, MemoryRecord, new_memory_id
from .memory_storage import LIVE, PAGE, dump_record, validate_record

MEMORIES = "memories"
MEMORY_REVS = "memory_revs"
MEMORY_IDX = "memory_idx"
MEMORY_FEED = "memory_feed"
MEMORY_DBS = (MEMORIES, MEMORY_REVS, MEMORY_IDX, MEMORY_FEED)


def _load(raw: bytes, tenant: str) -> MemoryRecord:
    return MemoryRecord.from_dict(load_record("memory", raw, tenant))


def _group(kind: str) -> bytes:
    return b"s" if kind in SNAPSHOT_KINDS else b"r"


def _scope_part(project: str, user: str, session: str) -> bytes:
    return memory_text.scoped(project, user, session, "").encode()


class LMDBMemories(MemoryListing):
    """``MemoryStore`` over LMDB (see the module docstring)."""

    _db = property(lambda self: self._ctx.dbs[MEMORIES])
    _revs = property(lambda self: self._ctx.dbs[MEMORY_REVS])
    _idx = property(lambda self: self._ctx.dbs[MEMORY_IDX])
    _feed = property(lambda self: self._ctx.dbs[MEMORY_FEED])

    def __init__(self, x: Any, ctx: Any, index: Any = None) -> None:
        self._x = x
        self._ctx = ctx
        self._terms = index  # the older term index: an erased memory's postings go too
        self._seq_at: tuple[int, int] | None = None  # (last committed transaction id, feed position then)

    # -- keys ------------------------------------------------------------------

    @staticmethod
    def _pk(tenant: str, memory_id: str) -> bytes:
        return keys.key(tenant, keys.part(memory_id, "memory id"))

    @staticmethod
    def _ext_key(tenant: str, project: str, user: str, session: str, external_id: str) -> bytes:
        return keys.key(tenant, b"x", memory_text.scoped(project, user, session, "x:" + external_id).encode())

    def _index_keys(self, tenant: str, rec: MemoryRecord) -> list[bytes]:
        ip = keys.part(rec.memory_id, "memory id")
        p, u, s = rec.scope_key()
        sp = _scope_part(p, u, s)
        out = [keys.key(tenant, b"c", sp, _group(rec.kind), ip)]
        if rec.status in LIVE:  # duplicates and contradictions are only looked for among live records
            out += [keys.key(tenant, b"h", memory_text.scoped(p, u, s, memory_text.exact_key(rec.statement)).encode(), ip),
                    keys.key(tenant, b"n", memory_text.scoped(p, u, s, memory_text.near_key(rec.statement)).encode(), ip)]
        if rec.user:
            out.append(keys.key(tenant, b"u", keys.part(rec.user, "user"), ip))
        if rec.project:
            out.append(keys.key(tenant, b"p", keys.part(rec.project, "project"), ip))
        for sess in dict.fromkeys((rec.session, *rec.evidence_sessions)):
            if sess:
                out.append(keys.key(tenant, b"s", keys.part(sess, "session"), ip))
        if rec.expires_at is not None:
            out.append(keys.key(tenant, b"e", struct.pack(">Q", max(0, int(rec.expires_at))), ip))
        if rec.subject_key and rec.status in LIVE:
            out.append(keys.key(tenant, b"k", memory_text.subject_digest(p, u, s, rec.subject_key).encode(), ip))
        return out

    def _counter_key(self, tenant: str, rec: MemoryRecord) -> bytes:
        return keys.key(tenant, b"#n", _scope_part(*rec.scope_key()))

    @staticmethod
    def _counts_recalled(rec: MemoryRecord | None) -> bool:
        return rec is not None and rec.status in LIVE and rec.kind not in SNAPSHOT_KINDS

    def _bump(self, txn: Any, key: bytes, delta: int) -> None:
        raw = txn.get(key, db=self._idx)
        n = (int(raw) if raw else 0) + delta
        if n > 0:
            txn.put(key, str(n).encode(), db=self._idx)
        else:
            txn.delete(key, db=self._idx)

    def _append_feed(self, txn: Any, tenant: str, memory_id: str) -> int:
        cursor = txn.cursor(self._feed)
        seq = struct.unpack(">Q", cursor.key())[0] + 1 if cursor.last() else 1
        txn.put(struct.pack(">Q", seq), orjson.dumps({"tenant": tenant, "id": memory_id}), db=self._feed)
        return seq

    # -- in-transaction primitives (also used by erasure and migrations) -------------

    def _get_in(self, txn: Any, tenant: str, memory_id: str) -> MemoryRecord | None:
        raw = txn.get(self._pk(tenant, memory_id), db=self._db)
        return None if raw is None else _load(raw, tenant)

    def _put_in(self, txn: Any, rec: MemoryRecord, expected_revision: int | None) -> MemoryRecord:
        tenant = rec.tenant
        old = self._get_in(txn, tenant, rec.memory_id)
        current = old.revision if old is not None else 0
        if expected_revision is not None and expected_revision != current:
            raise RevisionConflict(
                f"memory {rec.memory_id} is at revision {current}, not {expected_revision}; "
                "read it again and retry", current=current)
        now = self._ctx.clock()
        rec = rec.evolve(revision=current + 1, updated_at=now,
                         created_at=old.created_at if old is not None else (rec.created_at or now),
                         observed_at=rec.observed_at or now)
        if rec.external_id:
            ek = self._ext_key(tenant, *rec.scope_key(), rec.external_id)
            holder = txn.get(ek, db=self._idx)
            if holder is not None and holder.decode() != rec.memory_id:
                raise ExternalIdTaken(f"external_id {rec.external_id!r} is already used in this scope",
                                      memory_id=holder.decode())
        if old is not None:
            for k in self._index_keys(tenant, old):
                txn.delete(k, db=self._idx)
            if old.external_id:
                txn.delete(self._ext_key(tenant, *old.scope_key(), old.external_id), db=self._idx)
            if self._counts_recalled(old):
                self._bump(txn, self._counter_key(tenant, old), -1)
        if old is not None:  # the revision it replaces joins the history
            self._keep_revision_in(txn, tenant, old.memory_id, old.revision, dump_record(old))
        self._write_in(txn, rec)
        return rec

    def _keep_revision_in(self, txn: Any, tenant: str, memory_id: str, revision: int, raw: bytes) -> None:
        txn.put(self._pk(tenant, memory_id) + keys.SEP + struct.pack(">I", revision), raw, db=self._revs)

    def _write_in(self, txn: Any, rec: MemoryRecord) -> None:
        """The current revision with its index entries, scope counter and a feed entry."""
        tenant = rec.tenant
        txn.put(self._pk(tenant, rec.memory_id), dump_record(rec), db=self._db)
        for k in self._index_keys(tenant, rec):
            txn.put(k, b"", db=self._idx)
        if rec.external_id:
            txn.put(self._ext_key(tenant, *rec.scope_key(), rec.external_id), rec.memory_id.encode(), db=self._idx)
        if self._counts_recalled(rec):
            self._bump(txn, self._counter_key(tenant, rec), 1)
        self._append_feed(txn, tenant, rec.memory_id)

    def _import_in(self, txn: Any, rec: MemoryRecord, revisions: list[bytes]) -> None:
        """A record as another store holds it (revision and times kept), with its earlier revisions' bytes;
        nothing when it is here already (a resumed copy)."""
        if self._get_in(txn, rec.tenant, rec.memory_id) is not None:
            return
        for raw in revisions:
            self._keep_revision_in(txn, rec.tenant, rec.memory_id, _load(raw, rec.tenant).revision, raw)
        self._write_in(txn, rec)

    def _erase_in(self, txn: Any, tenant: str, memory_id: str) -> dict[str, int]:
        """Remove a record, every revision and every index entry; the feed says so."""
        rec = self._get_in(txn, tenant, memory_id)
        if rec is None:
            return {"memories": 0, "revisions": 0, "memory_index": 0}
        pk = self._pk(tenant, memory_id)
        revs = _scan_rest(txn, self._revs, pk + keys.SEP)
        for r in revs:
            txn.delete(pk + keys.SEP + r, db=self._revs)
        idx = 0  # (only the current revision is indexed: a put drops the previous one's entries)
        for k in self._index_keys(tenant, rec):
            idx += bool(txn.delete(k, db=self._idx))
        if rec.external_id:
            idx += bool(txn.delete(self._ext_key(tenant, *rec.scope_key(), rec.external_id), db=self._idx))
        if self._counts_recalled(rec):
            self._bump(txn, self._counter_key(tenant, rec), -1)
        txn.delete(pk, db=self._db)
        if self._terms is not None:
            idx += self._terms._remove_doc_in(txn, tenant, keys.part(memory_id, "memory id"))
        self._append_feed(txn, tenant, memory_id)
        return {"memories": 1, "revisions": len(revs) + 1, "memory_index": idx}

    def _ids_in(self, txn: Any, tenant: str, *parts: bytes) -> list[str]:
        return [r.decode("utf-8", "surrogatepass") for r in _scan_rest(txn, self._idx, keys.prefix(tenant, *parts))]

    def _ids_by_in(self, txn: Any, tenant: str, by: str, value: str) -> list[str]:
        """Ids of the records bound to a ``user``, a ``session`` (own or evidence) or a ``project``."""
        return self._ids_in(txn, tenant, by[:1].encode(), keys.part(value, by))

    def _records_in(self, txn: Any, tenant: str, ids: list[str]) -> list[MemoryRecord]:
        out = []
        for mid in dict.fromkeys(ids):
            rec = self._get_in(txn, tenant, mid)
            if rec is not None:
                out.append(rec)
        return out

    # -- the MemoryStore interface ---------------------------------------------

    def put(self, record: MemoryRecord, *, expected_revision: int | None = None) -> MemoryRecord:
        validate_record(record)
        return self._x.write(lambda txn: self._put_in(txn, record, expected_revision))

    def get(self, tenant: str, memory_id: str) -> MemoryRecord | None:
        return self._x.read(lambda txn: self._get_in(txn, tenant, memory_id))

    def history(self, tenant: str, memory_id: str) -> list[MemoryRecord]:
        pk = self._pk(tenant, memory_id) + keys.SEP

        def op(txn: Any) -> list[MemoryRecord]:
            current = self._get_in(txn, tenant, memory_id)
            if current is None:
                return []
            cursor = txn.cursor(self._revs)
            out = []
            if cursor.set_range(pk):
                for k, v in cursor.iternext():
                    if not k.startswith(pk):
                        break
                    out.append(_load(v, tenant))
            return [*out, current]

        return self._x.read(op)

    def _all_in(self, txn: Any, tenant: str) -> list[MemoryRecord]:
        return [_load(v, tenant) for _, v in _scan(txn, self._db, keys.tenant_prefix(tenant))]

    def iter_tenant(self, tenant: str) -> Iterator[MemoryRecord]:
        """Every record of the tenant, in id order, read a page at a time (no
        transaction is held between pages)."""
        for items in pages(self._x.read, lambda: self._db, keys.tenant_prefix(tenant), PAGE):
            for _, v in items:
                yield _load(v, tenant)

    def tenants(self) -> list[str]:
        """Every tenant that has memory records (for re-scans and purges)."""
        return self._x.read(lambda txn: key_tenants(txn, self._db))

    def expiring(self, tenant: str, before: float) -> list[MemoryRecord]:
        """Records whose ``expires_at`` is before ``before`` (from the expiry index)."""
        prefix = keys.prefix(tenant, b"e")
        limit = struct.pack(">Q", max(0, int(before)))

        def op(txn: Any) -> list[MemoryRecord]:
            ids = []
            cursor = txn.cursor(self._idx)
            if cursor.set_range(prefix):
                for k in cursor.iternext(keys=True, values=False):
                    if not k.startswith(prefix) or k[len(prefix):len(prefix) + 8] >= limit:
                        break
                    ids.append(k[len(prefix) + 9:].decode("utf-8", "surrogatepass"))
            return self._records_in(txn, tenant, ids)

        return self._x.read(op)

    def find_external(self, tenant: str, project: str, user: str, session: str,
                      external_id: str) -> MemoryRecord | None:
        ek = self._ext_key(tenant, project, user, session, external_id)

        def op(txn: Any) -> MemoryRecord | None:
            holder = txn.get(ek, db=self._idx)
            return None if holder is None else self._get_in(txn, tenant, holder.decode())

        return self._x.read(op)

    def same_text(self, tenant: str, project: str, user: str, session: str, statement: str
                  ) -> list[MemoryRecord]:
        """Records of exactly this scope with the same normalised text, or the
        same content words (exact ones first)."""
        h = memory_text.scoped(project, user, session, memory_text.exact_key(statement)).encode()
        n = memory_text.scoped(project, user, session, memory_text.near_key(statement)).encode()

        def op(txn: Any) -> list[MemoryRecord]:
            ids = self._ids_in(txn, tenant, b"h", h) + self._ids_in(txn, tenant, b"n", n)
            return self._records_in(txn, tenant, ids)

        return self._x.read(op)

    def same_subject(self, tenant: str, project: str, user: str, session: str, subject_key: str
                     ) -> list[MemoryRecord]:
        if not subject_key:
            return []
        k = memory_text.subject_digest(project, user, session, subject_key).encode()
        return self._x.read(lambda txn: self._records_in(txn, tenant, self._ids_in(txn, tenant, b"k", k)))

    def scope_records(self, tenant: str, project: str, user: str, session: str, *,
                      snapshot: bool) -> list[MemoryRecord]:
        """Records of exactly this scope, of the snapshot kinds (``snapshot``)
        or the recalled ones."""
        sp = _scope_part(project, user, session)
        g = b"s" if snapshot else b"r"
        return self._x.read(lambda txn: self._records_in(txn, tenant, self._ids_in(txn, tenant, b"c", sp, g)))

    def recalled_count(self, tenant: str, project: str, user: str, session: str) -> int:
        """Live (active, proposed, hypothesis) records of the recalled kinds in this scope."""
        k = keys.key(tenant, b"#n", _scope_part(project, user, session))
        raw = self._x.read(lambda txn: txn.get(k, db=self._idx))
        return int(raw) if raw else 0

    def erase(self, tenant: str, memory_id: str) -> dict[str, int]:
        """Erase a record and all its revisions and index entries (forgetting)."""
        keys.tenant_prefix(tenant)
        return self._x.write(lambda txn: self._erase_in(txn, tenant, memory_id))

    def count_refused(self, tenant: str, reason: str) -> int:
        """Count a refused write (the audit counter: the refused text is not kept)."""
        k = keys.key(tenant, b"#a", keys.part(reason or "unknown", "reason"))

        def op(txn: Any) -> int:
            self._bump(txn, k, 1)
            return int(txn.get(k, db=self._idx))

        return self._x.write(op)

    def refused(self, tenant: str) -> dict[str, int]:
        prefix = keys.prefix(tenant, b"#a")

        def op(txn: Any) -> dict[str, int]:
            out = {}
            cursor = txn.cursor(self._idx)
            if cursor.set_range(prefix):
                for k, v in cursor.iternext():
                    if not k.startswith(prefix):
                        break
                    out[k[len(prefix):].decode("utf-8", "replace")] = int(v)
            return out

        return self._x.read(op)

    def changes(self, after_seq: int, limit: int = 1000) -> list[tuple[int, str, str]]:
        start = struct.pack(">Q", max(0, int(after_seq)) + 1)

        def op(txn: Any) -> list[tuple[int, str, str]]:
            out = []
            cursor = txn.cursor(self._feed)
            if cursor.set_range(start):
                for k, v in cursor.iternext():
                    d = orjson.loads(v)
                    out.append((struct.unpack(">Q", k)[0], d["tenant"], d["id"]))
                    if len(out) >= limit:
                        break
            return out

        return self._x.read(op)

    def last_seq(self, at: int | None = None) -> int:
        """The change feed's last position. ``at``: the environment's last committed id
        as the caller read it a moment ago (``LMDBStore.committed_id``), with nothing
        awaited since, so that reads made together ask LMDB once; None reads it here."""
        def op(txn: Any) -> int:
            cursor = txn.cursor(self._feed)
            return struct.unpack(">Q", cursor.key())[0] if cursor.last() else 0

        # On the store's own handle (a snapshot or a batch reads its own transaction, and has
        # no ``check``): a position read at the environment's last committed transaction id
        # holds until a commit, by any process, moves that id (read without a transaction).
        check = getattr(self._x, "check", None)
        if check is None:
            at = None
        elif at is None:
            at = check().last_txnid()
        kept = self._seq_at
        if at is not None and kept is not None and kept[0] == at:
            return kept[1]
        seq = self._x.read(op)
        if at is not None:
            self._seq_at = (at, seq)  # a commit between the id and the read only makes it newer
        return seq

    def meta(self, name: str) -> Any:
        """A small JSON value of the memory layer kept in ``meta`` (rules version...)."""
        k = b"memory:" + name.encode()
        raw = self._x.read(lambda txn: txn.get(k, db=self._ctx.dbs["meta"]))
        return None if raw is None else orjson.loads(raw)

    def set_meta(self, name: str, value: Any) -> None:
        k = b"memory:" + name.encode()
        self._x.write(lambda txn: txn.put(k, orjson.dumps(value), db=self._ctx.dbs["meta"]))


def migrate_documents(txn: Any, dbs: Mapping[str, Any], clock: Callable[[], float]) -> None:
    """Schema v1 -> v2: memories stored as generic documents become records."""
    class _Ctx2:
        def __init__(self) -> None:
            self.dbs = dbs
            self.clock = clock

    repo = LMDBMemories(None, _Ctx2())
    old = list(txn.cursor(dbs[MEMORIES]).iternext())
    for k, v in old:
        d = orjson.loads(v)
        txn.delete(k, db=dbs[MEMORIES])
        if "data" not in d:
            continue
        data = d.get("data") or {}
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        scope = data.get("scope")
        trust = data.get("trust")
        mid = str(d["id"])
        if not mid or keys.part(mid) != mid.encode():
            mid = new_memory_id()
        rec = MemoryRecord(
            memory_id=mid, tenant=d["tenant"], statement=text, kind="fact",
            origin="user" if trust in ("curated", "reviewed") else "model_inference",
            status=data.get("status", "active") if trust in ("curated", "reviewed") else "hypothesis",
            project=str(data.get("project") or "") if scope == "project" else "",
            user=str(data.get("user") or d.get("subject") or "") if scope == "user" else "",
            session=str(data.get("session") or d.get("session") or "") if scope == "session" else "",
            sensitivity=data.get("sensitivity", "internal") if data.get("sensitivity") in
            ("public", "internal", "confidential") else "confidential",
            created_by="migration", created_at=d.get("created_at", 0.0))
        if rec.status not in STATUSES:
            rec = rec.evolve(status="proposed")
        repo._put_in(txn, rec, None)
