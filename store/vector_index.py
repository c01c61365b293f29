"""The derived vector index of memories (the embeddings extra).

One file, ``<data_dir>/recall/vectors.db``: a row per servable memory with
the columns visibility is decided on (the same as the lexical index's, so
``memory_index.visibility`` is its WHERE clause too) and the statement's
vector as a float32 blob. No text: ids, scope labels and numbers only.

- Written off the turn's path: a search that finds the store's memory
  change feed ahead of this index's watermark wakes one background thread
  that embeds what is new (``kick``); the search goes on with what is
  indexed (a memory embedded late is ranked lexically until then).
  ``catch_up`` runs the same work inline (the CLI, tests).
- Authorization before ranking: ``search`` runs the viewer's WHERE clause
  first (an index-only scan of the visibility columns) and computes a
  similarity only for the rows it returned. The vectors themselves are kept
  in memory per tenant (int8 with a scale per row, appended as rows are
  added; rowids never reused), so a search reads no blob from the file; a
  row that is gone from the file is never returned by the WHERE clause, and
  a forget drops the tenant's copy. The copies are bounded: past
  ``cache_rows`` rows in all, the tenants searched least recently are
  dropped (and read again from the file when next searched).
- Derived like every index: ``rebuild`` (``ctxproxy memory reindex``)
  starts over from LMDB; a different model empties it at open (its vectors
  would not compare); ``forget`` deletes the subject's rows and
  ``erase_free_pages`` scrubs the file.

The model is given (``use(embedder)``: ``.name``, ``.dim``,
``.embed(texts)`` → unit float32 rows); this module never loads one, and
opening it for ``forget`` needs neither the model nor numpy.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Sequence

from .memory_index import follow_changes, forget_subject, rebuild_all, servable, visibility
from .sqlite_index import SQLiteFile, Viewer, attach, sensitivity_rank

log = logging.getLogger("ctxproxy.store.recall")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v);
CREATE TABLE IF NOT EXISTS vec(
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL, memory_id TEXT NOT NULL,
    project TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL, purpose TEXT NOT NULL,
    sensitivity INTEGER NOT NULL, expires_at REAL, kind TEXT NOT NULL,
    evidence_sessions TEXT NOT NULL, v BLOB NOT NULL,
    UNIQUE(tenant, memory_id));
-- Covers the visibility WHERE clause: a search scans only this index.
CREATE INDEX IF NOT EXISTS vec_vis ON vec(tenant, user, project, purpose, session, sensitivity, expires_at, kind);
"""


class VectorIndex:
    """Memory vectors of one store (see the module docstring)."""

    name = "recall.vectors"

    CACHE_ROWS = 400_000  # vectors held in memory across tenants (~300 bytes each with their ids)

    def __init__(self, path: str | Path, store: Any = None, cache_rows: int | None = None):
        self.file = SQLiteFile(path, SCHEMA)
        self.cache_rows = self.CACHE_ROWS if cache_rows is None else cache_rows
        self.store = store
        self.embedder: Any = None
        self._catch_lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._cache: OrderedDict[str, _Vectors] = OrderedDict()  # tenant -> its vectors, least recent first
        self._cache_lock = threading.Lock()

    @classmethod
    def open(cls, data_dir: str | Path, store: Any) -> "VectorIndex":
        """The index under ``data_dir``, registered on ``store.derived``."""
        return attach(cls, Path(data_dir) / "recall" / "vectors.db", store, store)

    def use(self, embedder: Any) -> None:
        """Embed with this model from now on; vectors of another model are dropped."""
        self.embedder = embedder
        if self.file.meta("model") != embedder.name:
            con = self.file.db()
            con.execute("BEGIN IMMEDIATE")
            con.execute("DELETE FROM vec")
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', 0), ('model', ?), ('dim', ?)",
                        (embedder.name, embedder.dim))
            con.execute("COMMIT")
        self._drop_cache()

    # -- writing -----------------------------------------------------------------
    def watermark(self) -> int:
        return int(self.file.meta("seq", 0) or 0)

    def lagging(self) -> bool:
        return self.store is not None and self.store.memories.last_seq() > self.watermark()

    def upsert(self, records: Iterable[Any]) -> int:
        """Embed and index (or drop, when not servable) each record; one transaction."""
        con = self.file.db()
        con.execute("BEGIN IMMEDIATE")
        try:
            n = self._apply(con, list(records))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return n

    def _apply(self, con: Any, records: Sequence[Any]) -> int:
        for rec in records:
            con.execute("DELETE FROM vec WHERE tenant = ? AND memory_id = ?", (rec.tenant, rec.memory_id))
        keep = [r for r in records if servable(r)]
        if not keep:
            return 0
        vectors = self.embedder.embed([r.statement for r in keep])
        con.executemany(
            "INSERT INTO vec(tenant, memory_id, project, user, session, purpose, sensitivity, expires_at, kind, "
            "evidence_sessions, v) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(r.tenant, r.memory_id, r.project, r.user, r.session, r.purpose, sensitivity_rank(r.sensitivity),
              r.expires_at, r.kind, " ".join(r.evidence_sessions), vectors[i].tobytes())
             for i, r in enumerate(keep)])
        return len(keep)

    def catch_up(self) -> int:
        """Embed the store's memory changes after this index's watermark (each
        batch commits with its watermark: safe across threads and processes)."""
        if self.embedder is None or not self.lagging():
            return 0
        return follow_changes(self.file, self.store.memories, self._catch_lock, self._apply_changes)

    def _apply_changes(self, con: Any, gone: list[tuple[str, str]], recs: list) -> None:
        con.executemany("DELETE FROM vec WHERE tenant = ? AND memory_id = ?", gone)
        self._apply(con, recs)

    def kick(self) -> None:
        """Catch up in the background (one daemon thread, started on first use)."""
        if self.embedder is None or self._closed:
            return
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="ctxproxy-vector-index", daemon=True)
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            try:
                self.catch_up()
            except Exception:  # derived data: the next kick retries; recall stays lexical meanwhile
                log.exception("vector index catch-up failed")
                time.sleep(1.0)

    def rebuild(self) -> int:
        """Empty the index and embed every tenant's servable memories again."""
        if self.embedder is None:
            return 0

        def clear(con: Any) -> None:
            con.execute("DELETE FROM vec")
            self._drop_cache()

        n = rebuild_all(self.file, self.store, self._catch_lock, clear, self._apply)
        self.catch_up()
        return n

    # -- forgetting (store.derived) ------------------------------------------------
    def forget(self, tenant: str, subject: dict, memory_ids: Sequence[str]) -> dict[str, int]:
        """Erase the vectors of these memories and of anything bound to the
        subject (a user, a session — also as an evidence session — a project,
        a memory)."""
        con = self.file.db()
        with self._catch_lock:
            con.execute("BEGIN IMMEDIATE")
            try:
                removed = forget_subject(lambda where, params: con.execute(f"DELETE FROM vec WHERE {where}",
                                                                           params).rowcount,
                                         tenant, subject, memory_ids)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        self._drop_cache(tenant)
        return {"memory_vectors": removed}

    def erase_free_pages(self) -> None:
        self.file.erase_free_pages(())

    # -- reading -------------------------------------------------------------------
    def search(self, viewer: Viewer, query_vector: Any, now: float | None = None,
               exclude_kinds: Sequence[str] = (), want: Iterable[str] = (), top: int = 0,
               min_sim: float = -1.0) -> dict[str, float]:
        """Cosine similarities to ``query_vector``, by memory id, among only the
        memories ``viewer`` may see (the WHERE clause runs before any vector
        is touched): of the ``want`` ids, and of the ``top`` most similar at
        or above ``min_sim``."""
        if not viewer.known or self.embedder is None:
            return {}
        import numpy as np

        if self.lagging():
            self.kick()
        now = time.time() if now is None else now
        where, params = visibility(viewer, now, exclude_kinds)
        con = self.file.db()
        rowids = np.fromiter((r[0] for r in con.execute(f"SELECT m.rowid FROM vec m WHERE {where}", params)),
                             dtype=np.int64)
        if not len(rowids):
            return {}
        vecs = self._vectors(viewer.tenant, int(rowids.max()))
        at = np.searchsorted(vecs.rowids, rowids)
        at = at[(at < len(vecs.rowids)) & (vecs.rowids[np.minimum(at, len(vecs.rowids) - 1)] == rowids)]
        q = np.asarray(query_vector, dtype=np.float32)
        out: dict[str, float] = {}
        if top > 0 and len(at):
            sims = vecs.similarity(at, q)
            k = min(top, len(at))
            for j in np.argpartition(-sims, k - 1)[:k].tolist():
                if sims[j] >= min_sim:
                    out[vecs.ids[at[j]]] = float(sims[j])
        visible = np.zeros(len(vecs.ids), dtype=bool)
        visible[at] = True
        wanted = [i for i in (vecs.pos.get(mid) for mid in want) if i is not None and visible[i]]
        if wanted:
            idx = np.asarray(wanted, dtype=np.int64)
            for i, sim in zip(wanted, vecs.similarity(idx, q).tolist()):
                out[vecs.ids[i]] = sim
        return out

    def _vectors(self, tenant: str, needed: int) -> "_Vectors":
        """The tenant's vectors in memory, holding at least the rows up to rowid ``needed``."""
        import numpy as np

        with self._cache_lock:
            have = self._cache.get(tenant)
            if have is not None:
                self._cache.move_to_end(tenant)
                if have.top >= needed:
                    return have
            rows = self.file.db().execute("SELECT rowid, memory_id, v FROM vec WHERE tenant = ? AND rowid > ? "
                                          "ORDER BY rowid", (tenant, have.top if have else 0)).fetchall()
            matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            # A new object, swapped in whole: a search in another thread keeps reading the old one.
            vecs = (have or _Vectors()).extended(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
                                                 [r[1] for r in rows], matrix)
            vecs.top = max(needed, int(vecs.rowids[-1]) if len(vecs.rowids) else 0)
            self._cache[tenant] = vecs
            self._cache.move_to_end(tenant)
            total = sum(len(v.ids) for v in self._cache.values())
            while total > self.cache_rows and len(self._cache) > 1:  # the tenant searched now stays
                _, gone = self._cache.popitem(last=False)
                total -= len(gone.ids)
            return vecs

    def _drop_cache(self, tenant: str | None = None) -> None:
        with self._cache_lock:
            if tenant is None:
                self._cache.clear()
            else:
                self._cache.pop(tenant, None)

    def count(self, tenant: str) -> int:
        return self.file.db().execute("SELECT COUNT(*) FROM vec WHERE tenant = ?", (tenant,)).fetchone()[0]

    def close(self) -> None:
        self._drop_cache()
        self._closed = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.file.close()




class _Vectors:
    """One tenant's vectors in memory: sorted rowids, their memory ids (and
    each id's newest position), and the rows quantised to int8 with a scale
    per row (a quarter of float32's memory; cosine error below 1%). The dot
    products use ``einsum``, not BLAS: a multithreaded BLAS call on a busy
    machine costs more than the arithmetic."""

    __slots__ = ("rowids", "ids", "pos", "q8", "scale", "top")

    def __init__(self) -> None:
        import numpy as np

        self.rowids = np.zeros(0, dtype=np.int64)
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self.q8 = np.zeros((0, 0), dtype=np.int8)
        self.scale = np.zeros(0, dtype=np.float32)
        self.top = 0

    def extended(self, rowids: Any, ids: list[str], matrix: Any) -> "_Vectors":
        """These rows appended, as a new object (this one is left as it is)."""
        import numpy as np

        out = _Vectors()
        out.rowids, out.ids, out.pos, out.q8, out.scale = self.rowids, self.ids, self.pos, self.q8, self.scale
        if not len(ids):
            return out
        peak = np.abs(matrix).max(axis=1)
        peak[peak == 0] = 1.0
        q8 = np.rint(matrix / peak[:, None] * 127.0).astype(np.int8)
        out.rowids = np.concatenate((self.rowids, rowids))
        out.q8 = np.concatenate((self.q8, q8)) if len(self.q8) else q8
        out.scale = np.concatenate((self.scale, (peak / 127.0).astype(np.float32)))
        out.ids = self.ids + ids
        out.pos = dict(self.pos)
        for i, mid in enumerate(ids, len(self.ids)):
            out.pos[mid] = i  # a re-embedded memory: its newest row
        return out

    def similarity(self, idx: Any, q: Any) -> Any:
        import numpy as np

        return np.einsum("ij,j->i", self.q8[idx].astype(np.float32), q) * self.scale[idx]
