"""Recall's memory index in PostgreSQL: the embedded index's layout
(``store.memory_index.MemoryIndex``) in the tables of
``sql/0003_recall_index.sql``, so every replica reads one index and no host
keeps its own.

Written in the memory write's transaction (``apply_in`` from
``PGMemories._write_row``, ``remove_in`` from its erasure): a memory is
recallable on every replica once its write commits, and an erasure removes
its index rows with it. Ranking is the embedded index's: the terms are
``memory_terms.terms`` of the statement, the document frequencies and
lengths are the same per-partition counts, the candidates are chosen by
the same steps as ``MemoryIndex._search`` (in one statement:
``recall_search``), and BM25 runs in Python on them
(``store/services/recall/rank.py``).

Reading sends each statement as a read-only transaction of its own with
the viewer's tenant set (row-level security: another tenant's rows are
neither candidates nor counted), BEGIN and COMMIT in the same round trip.
"""
from __future__ import annotations

import time
from collections import namedtuple
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from ..memory_index import (COMPLETIONS, CONTEXT_WINDOW, POOL, Candidate, MemoryIndex, Stats, _candidate, context_of,
                            date_terms, query_keys, servable, thread_of)
from ..memory_records import MemoryRecord
from ..memory_terms import terms
from ..sqlite_index import Viewer, sensitivity_rank
from . import recall_search
from .recall_search import _like  # noqa: F401  (the session index matches substrings alike)
from .common import load
from .pool import ALL_TENANTS, TENANT_SETTING, Tx

_PAGE = 500


# -- writing (in the memory write's transaction) --------------------------------------

# The rows of a transaction's records not sent yet (tx.rows key): (tenant, their columns).
_PENDING = ("recall_index", "pending")
FLUSH_AT = 500  # records whose rows go in one statement at most

_COLUMNS = ("user_id", "project", "session", "purpose", "sensitivity", "kind", "expiring", "memory_id", "expires_at",
            "observed_at", "evergreen", "origin", "confidence", "external_id", "evidence_ref", "evidence_sessions",
            "revision", "statement", "terms", "nterms", "thread", "distinct_terms")
_TYPES = ("text", "text", "text", "text", "smallint", "text", "boolean", "text", "float8", "float8", "boolean",
          "text", "float8", "text", "text", "text", "integer", "text", "text", "integer", "text", "text")
_PART = "user_id, project, session, purpose, sensitivity, kind, expiring"

# Records' rows, postings and counts in one statement, whatever their number; the docs in the records' order.
_INSERT = (
    "WITH v AS (SELECT * FROM unnest(" + ", ".join(f"%({c})s::{t}[]" for c, t in zip(_COLUMNS, _TYPES))
    + ") WITH ORDINALITY AS v(" + ", ".join(_COLUMNS) + ", i)), "
    # The partitions' rows first, in one order: writers of one partition queue on its row, so counts never deadlock.
    "p AS (INSERT INTO recall_parts (tenant, " + _PART + ", docs, nterms) SELECT %(t)s, " + _PART + ", count(*), "
    "sum(nterms) FROM v GROUP BY " + _PART + " ORDER BY " + _PART + " ON CONFLICT (tenant, " + _PART + ") "
    "DO UPDATE SET docs = recall_parts.docs + excluded.docs, nterms = recall_parts.nterms + excluded.nterms "
    "RETURNING id, " + _PART + "), "
    # Docs in the records' order (the embedded index's rowids follow its writes; rankings break ties by them).
    "m AS (INSERT INTO recall_memories (tenant, part, memory_id, project, user_id, session, purpose, sensitivity, "
    "expires_at, observed_at, evergreen, kind, origin, confidence, external_id, evidence_ref, evidence_sessions, "
    "revision, statement, terms, nterms, thread) SELECT %(t)s, p.id, v.memory_id, v.project, v.user_id, v.session, "
    "v.purpose, v.sensitivity, v.expires_at, v.observed_at, v.evergreen, v.kind, v.origin, v.confidence, "
    "v.external_id, v.evidence_ref, v.evidence_sessions, v.revision, v.statement, v.terms, v.nterms, v.thread "
    "FROM v JOIN p USING (" + _PART + ") ORDER BY v.i RETURNING doc, part, memory_id), "
    "mt AS (SELECT m.doc, m.part, x.term FROM m JOIN v ON v.memory_id = m.memory_id "
    "CROSS JOIN LATERAL unnest(string_to_array(v.distinct_terms, ' ')) AS x(term)), "
    "post AS (INSERT INTO recall_postings (tenant, part, term, doc) SELECT %(t)s, part, term, doc FROM mt), "
    "df AS (INSERT INTO recall_df (tenant, part, term, n) SELECT %(t)s, part, term, count(*) FROM mt "
    "GROUP BY part, term ORDER BY part, term ON CONFLICT (tenant, part, term) DO UPDATE SET n = recall_df.n + excluded.n) "
    "SELECT doc FROM m ORDER BY doc")


_Row = namedtuple("_Row", _COLUMNS)


def _row(rec: MemoryRecord) -> "_Row":
    """``rec``'s columns (its terms, as the embedded index tokenizes them)."""
    observed = float(rec.observed_at or rec.created_at or 0.0)
    found = terms(rec.statement) + date_terms(observed)
    return _Row(rec.user, rec.project, rec.session, rec.purpose, sensitivity_rank(rec.sensitivity), rec.kind,
            rec.expires_at is not None, rec.memory_id, rec.expires_at, observed, bool(rec.evergreen), rec.origin,
            float(rec.confidence), rec.external_id, rec.evidence_ref, " ".join(rec.evidence_sessions),
            int(rec.revision), rec.statement, " ".join(found), len(found), thread_of(rec),
            " ".join(sorted(set(found))))


def _insert_params(tenant: str, rows: Sequence[tuple]) -> dict[str, Any]:
    return {"t": tenant, **{c: [r[i] for r in rows] for i, c in enumerate(_COLUMNS)}}


def apply_in(tx: Tx, rec: MemoryRecord, fresh: bool = False) -> int:
    """Index ``rec`` as it now is (its earlier row goes, unless ``fresh``: it
    has none; a record not servable has none). Returns 1 when it is indexed.

    A record that stands alone waits in the transaction and goes with the
    others written in it: one statement for all (``flush_in``), sent with the
    transaction's next statement or its COMMIT, so a batch of memories pays
    no round trip for its index and counts each partition's and term's rows
    once. An event is written at once (its neighbours are read and written
    around it: two statements more), after what waits."""
    if not fresh:
        remove_in(tx, rec.tenant, [rec.memory_id])
    if not servable(rec):
        return 0
    row = _row(rec)
    if row.thread:  # an event: its neighbours, in the tables, are read now
        flush_in(tx)
        doc = tx.one(_INSERT, _insert_params(rec.tenant, [row]))[0]
        _refresh_context(tx, rec.tenant, row.thread, row.observed_at, doc)
        return 1
    pending = tx.rows.get(_PENDING)
    if pending is not None and pending[0] != rec.tenant:
        flush_in(tx)
        pending = None
    if pending is None:
        pending = tx.rows[_PENDING] = (rec.tenant, [])
        tx.before_commit(flush_in)
    pending[1].append(row)
    if len(pending[1]) >= FLUSH_AT:
        flush_in(tx)
    return 1


def flush_in(tx: Tx) -> None:
    """Send the rows of the transaction's records that wait (``apply_in``),
    with its next statement: before anything reads or deletes index rows in
    it, and before it commits."""
    pending = tx.rows.pop(_PENDING, None)
    if not pending or not pending[1]:
        return
    tenant, rows = pending
    was = tx.tenant_set
    tx.tenant(tenant).send(_INSERT, _insert_params(tenant, rows))
    if was is not None:
        tx.tenant(was)


def remove_in(tx: Tx, tenant: str, memory_ids: Sequence[str]) -> int:
    """Delete these memories' rows with their postings and counts; the
    neighbours of a deleted event forget its terms. Returns the index
    entries deleted (rows and postings)."""
    flush_in(tx)  # rows still waiting in this transaction are rows too
    rows = tx.all("SELECT doc, part, terms, nterms, nctx, thread, observed_at FROM recall_memories "
                  "WHERE tenant = %s AND memory_id = ANY(%s) ORDER BY doc", (tenant, list(memory_ids)))
    if not rows:
        return 0
    removed = 0
    parts = sorted({r[1] for r in rows})
    for part in parts:  # the partitions' rows first, in one order: see apply_in
        tx.one("SELECT 1 FROM recall_parts WHERE tenant = %s AND id = %s FOR UPDATE", (tenant, part))
    for doc, part, text, nterms, nctx, _, _ in rows:
        distinct = sorted(set(text.split()))
        removed += tx.exec("DELETE FROM recall_postings WHERE tenant = %s AND part = %s AND term = ANY(%s) "
                           "AND doc = %s", (tenant, part, distinct, doc))
        tx.exec("UPDATE recall_df SET n = n - 1 WHERE tenant = %s AND part = %s AND term = ANY(%s)",
                (tenant, part, distinct))
        tx.exec("UPDATE recall_parts SET docs = docs - 1, nterms = nterms - %s, nctx = nctx - %s "
                "WHERE tenant = %s AND id = %s", (nterms, nctx, tenant, part))
    # No count or partition outlives its rows: a term or a name only a forgotten record had is gone.
    tx.exec("DELETE FROM recall_df WHERE tenant = %s AND part = ANY(%s) AND n <= 0", (tenant, parts))
    removed += tx.exec("DELETE FROM recall_memories WHERE tenant = %s AND doc = ANY(%s)",
                       (tenant, [r[0] for r in rows]))
    tx.exec("DELETE FROM recall_parts WHERE tenant = %s AND id = ANY(%s) AND docs <= 0", (tenant, parts))
    for doc, _, _, _, _, thread, observed in rows:
        if thread:
            _refresh_context(tx, tenant, thread, observed, doc)
    return removed


def _refresh_context(tx: Tx, tenant: str, thread: str, observed: float, doc: int) -> None:
    """The context of the events around ``doc`` in ``thread`` (``memory_index.context_of``):
    the neighbours read in one statement, the changed ones and their partition's
    context length written in another."""
    w = CONTEXT_WINDOW
    rows = tx.all(
        "(SELECT false, doc, observed_at, terms, nctx, part FROM recall_memories WHERE tenant = %(t)s "
        "AND thread = %(thread)s AND (observed_at, doc) < (%(at)s, %(doc)s) ORDER BY observed_at DESC, doc DESC "
        "LIMIT %(before)s) UNION ALL (SELECT true, doc, observed_at, terms, nctx, part FROM recall_memories "
        "WHERE tenant = %(t)s AND thread = %(thread)s AND (observed_at, doc) >= (%(at)s, %(doc)s) "
        "ORDER BY observed_at, doc LIMIT %(after)s)",
        {"t": tenant, "thread": thread, "at": observed, "doc": doc, "before": 2 * w, "after": 2 * w + 1})
    order = lambda r: (r[1], r[0])  # noqa: E731  (observed_at, doc)
    before = sorted((tuple(r[1:]) for r in rows if not r[0]), key=order, reverse=True)  # nearest first
    after = sorted((tuple(r[1:]) for r in rows if r[0]), key=order)
    new = list(context_of(before, after))
    if not new:
        return
    # A row whose context changed is written; its partition's length moves by its change (as the embedded index).
    tx.exec(
        "WITH v AS (SELECT * FROM unnest(%(docs)s::bigint[], %(ctx)s::text[], %(n)s::int[], %(near)s::text[], "
        "%(old)s::int[], %(parts)s::bigint[]) AS v(doc, ctx, nctx, near, old, part)), "
        "u AS (UPDATE recall_memories m SET ctx = v.ctx, nctx = v.nctx, near = v.near FROM v "
        "WHERE m.tenant = %(t)s AND m.doc = v.doc AND (m.ctx <> v.ctx OR m.near <> v.near) "
        "RETURNING v.part, v.nctx - v.old AS delta) "
        "UPDATE recall_parts r SET nctx = r.nctx + s.delta FROM (SELECT part, sum(delta) AS delta FROM u "
        "GROUP BY part) s WHERE r.tenant = %(t)s AND r.id = s.part AND s.delta <> 0",
        {"t": tenant, "docs": [r[0] for r, _, _, _ in new], "ctx": [c for _, c, _, _ in new],
         "n": [n for _, _, n, _ in new], "near": [x for _, _, _, x in new], "old": [r[3] for r, _, _, _ in new],
         "parts": [r[4] for r, _, _, _ in new]})


def index_all(tx: Tx) -> int:
    """Empty the index and index every tenant's memories again (``tx`` set
    to every tenant): ``ctxproxy memory reindex`` and the schema upgrade
    that brought the index. Returns how many are indexed."""
    tx.tenant(ALL_TENANTS)
    for table in ("recall_postings", "recall_df", "recall_memories", "recall_parts"):
        tx.exec(f"DELETE FROM {table}")
    n = 0
    # In the embedded index's rebuild order (tenants, then ids, bytewise), so the rows' order is the same too.
    for (tenant,) in tx.all('SELECT DISTINCT tenant COLLATE "C" FROM memories ORDER BY 1'):
        after = ""
        while True:
            rows = tx.all('SELECT memory_id, doc FROM memories WHERE tenant = %s AND memory_id COLLATE "C" > %s '
                          'ORDER BY memory_id COLLATE "C" LIMIT %s', (tenant, after, _PAGE))
            for _, raw in rows:
                n += apply_in(tx, MemoryRecord.from_dict(load("memory", bytes(raw), tenant)), fresh=True)
            if len(rows) < _PAGE:
                break
            after = rows[-1][0]
    flush_in(tx)
    tx.exec("SELECT 1")  # what waits goes now: the migration's transaction commits without this Tx
    return n


# -- reading ---------------------------------------------------------------------------

class _Reads:
    """Statements on one pooled connection, each a read-only transaction of
    its own with the tenant set, sent with its BEGIN and COMMIT in one round
    trip (parameters bound in the client: one simple query). A recall reads
    several times; a round trip each, not three."""

    def __init__(self, conn: Any, tenant: str) -> None:
        import psycopg

        self._cur = psycopg.ClientCursor(conn)
        self._tenant = tenant

    def all(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        cur = self._cur
        if isinstance(params, Mapping):
            tenant, args = "%(ctx_tenant)s", {**params, "ctx_tenant": self._tenant}
        else:
            tenant, args = "%s", (self._tenant, *params)
        try:
            cur.execute(f"BEGIN READ ONLY; SELECT set_config('{TENANT_SETTING}', {tenant}, true); {sql}; COMMIT",
                        args)
        except BaseException:
            try:  # the statement failed inside its BEGIN: end that transaction before the pool takes the connection
                cur.connection.rollback()
            except Exception:  # the connection is gone: the server ended it
                pass
            raise
        cur.nextset()
        cur.nextset()
        return cur.fetchall()

    def one(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        rows = self.all(sql, params)
        return rows[0] if rows else None


class PGMemoryIndex(MemoryIndex):
    """``MemoryIndex`` over the store's own database (see the module docstring).
    A search, a count of document frequencies, the statistics and a fetch are
    one statement each (``recall_search``); nothing is cached between reads,
    so no read waits on a version check first and every replica's writes are
    seen at once."""

    name = "recall.memories"

    def __init__(self, store: Any) -> None:
        self.store = None  # nothing to catch up: written with the memories
        self._store = store
        self._cache: dict[tuple, Any] = {}

    @classmethod
    def open(cls, data_dir: Any, store: Any) -> "PGMemoryIndex":
        return cls(store)

    @contextmanager
    def _reads(self, tenant: str) -> Iterator["_Reads"]:
        with self._store._pool.transaction(readonly=True) as tx:  # a pooled connection; its errors are the store's
            yield _Reads(tx.conn, tenant)

    @contextmanager
    def _reading(self, tenant: str) -> Iterator[tuple["_Reads", tuple]]:
        with self._reads(tenant) as reads:
            # Cached partitions are valid while the tenant's memories are as they were.
            yield reads, ("pg", tenant, reads.one("SELECT max(seq) FROM memory_feed WHERE tenant = %s", (tenant,))[0])

    # -- the reads, one statement each ------------------------------------------------------
    def search(self, viewer: Viewer, words: Sequence[str], substrings: Sequence[str] = (),
               now: float | None = None, limit: int = POOL, exclude_kinds: Sequence[str] = ()
               ) -> tuple[list[Candidate], Stats]:
        if not viewer.known or (not words and not substrings):
            return [], Stats(0, 0.0)
        now = time.time() if now is None else now
        keys, subs = query_keys(words, substrings)
        with self._reads(viewer.tenant) as reads:
            rows, stats = recall_search.search(reads, viewer, keys, subs, now, limit, exclude_kinds)
        return [_candidate(r) for r in rows], stats

    def doc_freqs(self, viewer: Viewer, words: Sequence[str], now: float | None = None,
                  exclude_kinds: Sequence[str] = ()) -> tuple[int, dict[str, int]]:
        if not viewer.known:
            return 0, dict.fromkeys(words, 0)
        now = time.time() if now is None else now
        with self._reads(viewer.tenant) as reads:
            return recall_search.doc_freqs(reads, viewer, list(dict.fromkeys(words)), now, exclude_kinds)

    def word_forms(self, viewer: Viewer, words: Sequence[str], prefixes: Sequence[str], now: float | None = None,
                   exclude_kinds: Sequence[str] = (), limit: int = COMPLETIONS
                   ) -> tuple[int, dict[str, int], dict[str, list[str]]]:
        """``MemoryIndex.word_forms``, in one statement (the visible partitions' counts: of the words,
        those they hold; a prefix's terms in a range of their key, first in byte order, as SQLite
        orders them)."""
        if not viewer.known or not (words or prefixes):
            return 0, {w: 0 for w in words}, {}
        now = time.time() if now is None else now
        with self._reads(viewer.tenant) as reads:
            prefixes = list(dict.fromkeys(prefixes))
            pre, grown, keys, docs, freqs = reads.one(recall_search.WORD_FORMS, {
                **recall_search._viewing(viewer, exclude_kinds, now), "words": list(dict.fromkeys(words)),
                "prefixes": prefixes, "uppers": [recall_search.prefix_bound(p) for p in prefixes], "limit": limit})
        completed: dict[str, list[str]] = {}
        for prefix, term in zip(pre, grown):
            completed.setdefault(prefix, []).append(term)
        return int(docs), {**dict.fromkeys(words, 0), **dict(zip(keys, map(int, freqs)))}, completed

    def stats(self, viewer: Viewer, now: float, exclude_kinds: tuple[str, ...] = ()) -> Stats:
        with self._reads(viewer.tenant) as reads:
            return recall_search.stats(reads, viewer, now, exclude_kinds)

    def nothing_visible(self, viewer: Viewer, now: float, exclude_kinds: tuple[str, ...] = ()) -> bool:
        """Never known in advance here: learning it would cost a round trip,
        as much as the search, which finds nothing then all the same."""
        return False

    def fetch(self, viewer: Viewer, memory_ids: Sequence[str], now: float | None = None,
              exclude_kinds: Sequence[str] = ()) -> list[Candidate]:
        if not viewer.known or not memory_ids:
            return []
        now = time.time() if now is None else now
        with self._reads(viewer.tenant) as reads:
            return [_candidate(r) for r in recall_search.fetch(reads, viewer, list(memory_ids), now, exclude_kinds)]

    @staticmethod
    def _read_partitions(tx: _Reads, viewer: Viewer, exclude_kinds: tuple[str, ...]) -> list[tuple[int, bool]]:
        return tx.all(
            "SELECT id, expiring FROM recall_parts WHERE tenant = %s AND project IN ('', %s) "
            "AND user_id IN ('', %s) AND purpose IN ('', %s) AND session = ANY(%s) AND sensitivity <= %s "
            "AND kind <> ALL(%s) ORDER BY id",
            (viewer.tenant, viewer.project, viewer.user, viewer.purpose, list(dict.fromkeys(("", *viewer.sessions))),
             min(sensitivity_rank(viewer.ceiling), 2), list(exclude_kinds)))

    # -- what the embedded index does beside reading ---------------------------------------
    def catch_up(self) -> int:
        return 0

    def watermark(self) -> int:
        return self._store.memories.last_seq()

    def generation(self) -> int:
        return 0

    def revision(self, tenant: str, at: int | None = None) -> int:
        """The tenant's newest change: every write and erasure of a memory adds to the feed in its
        own transaction, so another replica's is seen at once (a round trip). ``at`` (a local
        store's last committed id, which the embedded index uses to skip a look) does not apply:
        the feed is read every time."""
        with self._reads(tenant) as reads:
            return int(reads.one("SELECT coalesce(max(seq), 0) FROM memory_feed WHERE tenant = %s", (tenant,))[0])

    def rebuild(self) -> int:
        self._cache.clear()
        return self._store._pool.run(index_all)

    def count(self, tenant: str) -> int:
        return self._store._pool.run(lambda tx: tx.tenant(tenant).one(
            "SELECT count(*) FROM recall_memories WHERE tenant = %s", (tenant,))[0], readonly=True)

    def close(self) -> None:
        self._cache.clear()
