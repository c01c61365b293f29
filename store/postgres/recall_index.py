"""Recall's memory index in PostgreSQL: the embedded index's layout and
candidate selection (``store.memory_index.MemoryIndex``) over the tables of
``sql/0003_recall_index.sql``, so every replica reads one index and no host
keeps its own.

Written in the memory write's transaction (``apply_in`` from
``PGMemories._write_row``, ``remove_in`` from its erasure): a memory is
recallable on every replica once its write commits, and an erasure removes
its index rows with it. Ranking is the embedded index's: the terms are
``memory_terms.terms`` of the statement, the document frequencies and
lengths are the same per-partition counts, the candidates are chosen by
the same code (``MemoryIndex._search``), and BM25 runs in Python on them
(``store/services/recall/rank.py``).

Reading sends each statement as a read-only transaction of its own with
the viewer's tenant set (row-level security: another tenant's rows are
neither candidates nor counted), BEGIN and COMMIT in the same round trip,
as the embedded index reads each statement in autocommit.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from ..memory_index import (CANDIDATE_COLUMNS, CONTEXT_WINDOW, MemoryIndex, Partitions, context_of, date_terms,
                            servable, thread_of)
from ..memory_records import MemoryRecord
from ..memory_terms import terms
from ..sqlite_index import Viewer, sensitivity_rank
from .common import load
from .pool import ALL_TENANTS, TENANT_SETTING, Tx

_ROW = ", ".join("user_id" if c == "user" else c for c in CANDIDATE_COLUMNS) + ", doc, near"
_PAGE = 500


def _like(sub: str) -> str:
    """``sub`` as an ILIKE pattern matching it anywhere, literally."""
    return "%" + sub.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _live(parts: Partitions, now: float, doc: str) -> tuple[str, list[Any]]:
    """The extra condition on a row when some visible partitions expire."""
    if not parts.expiring:
        return "", []
    return (f" AND ({doc}.part <> ALL(%s) OR EXISTS (SELECT 1 FROM recall_memories m WHERE m.tenant = {doc}.tenant "
            f"AND m.doc = {doc}.doc AND m.expires_at > %s))", [list(parts.expiring), now])


# -- writing (in the memory write's transaction) --------------------------------------

def apply_in(tx: Tx, rec: MemoryRecord, fresh: bool = False) -> int:
    """Index ``rec`` as it now is (its earlier row goes, unless ``fresh``: it
    has none; a record not servable has none). Returns 1 when it is indexed.
    The partition, the row, its postings and counts are one statement (one
    round trip on the write path); an event's neighbours two more."""
    if not fresh:
        remove_in(tx, rec.tenant, [rec.memory_id])
    if not servable(rec):
        return 0
    tenant = rec.tenant
    observed = float(rec.observed_at or rec.created_at or 0.0)
    found = terms(rec.statement) + date_terms(observed)
    thread = thread_of(rec)
    # The partition row first: writers of one partition queue on it, so its counts never deadlock.
    doc = tx.one(
        "WITH p AS (INSERT INTO recall_parts (tenant, user_id, project, session, purpose, sensitivity, kind, "
        "expiring, docs, nterms) VALUES (%(t)s, %(user)s, %(project)s, %(session)s, %(purpose)s, %(sens)s, %(kind)s, "
        "%(expiring)s, 1, %(n)s) ON CONFLICT (tenant, user_id, project, session, purpose, sensitivity, kind, "
        "expiring) DO UPDATE SET docs = recall_parts.docs + 1, nterms = recall_parts.nterms + excluded.nterms "
        "RETURNING id), "
        "m AS (INSERT INTO recall_memories (tenant, part, memory_id, project, user_id, session, purpose, "
        "sensitivity, expires_at, observed_at, evergreen, kind, origin, confidence, external_id, evidence_ref, "
        "evidence_sessions, revision, statement, terms, nterms, thread) SELECT %(t)s, p.id, %(id)s, %(project)s, "
        "%(user)s, %(session)s, %(purpose)s, %(sens)s, %(expires)s, %(observed)s, %(evergreen)s, %(kind)s, "
        "%(origin)s, %(confidence)s, %(external)s, %(evidence)s, %(sessions)s, %(revision)s, %(statement)s, "
        "%(terms)s, %(n)s, %(thread)s FROM p RETURNING doc, part), "
        "post AS (INSERT INTO recall_postings (tenant, part, term, doc) SELECT %(t)s, m.part, x, m.doc "
        "FROM m, unnest(%(distinct)s::text[]) x), "
        "df AS (INSERT INTO recall_df (tenant, part, term, n) SELECT %(t)s, m.part, x, 1 "
        "FROM m, unnest(%(distinct)s::text[]) x ON CONFLICT (tenant, part, term) DO UPDATE SET n = recall_df.n + 1) "
        "SELECT doc FROM m",
        {"t": tenant, "user": rec.user, "project": rec.project, "session": rec.session, "purpose": rec.purpose,
         "sens": sensitivity_rank(rec.sensitivity), "kind": rec.kind, "expiring": rec.expires_at is not None,
         "n": len(found), "id": rec.memory_id, "expires": rec.expires_at, "observed": observed,
         "evergreen": bool(rec.evergreen), "origin": rec.origin, "confidence": float(rec.confidence),
         "external": rec.external_id, "evidence": rec.evidence_ref, "sessions": " ".join(rec.evidence_sessions),
         "revision": int(rec.revision), "statement": rec.statement, "terms": " ".join(found), "thread": thread,
         "distinct": sorted(set(found))})[0]
    if thread:
        _refresh_context(tx, tenant, thread, observed, doc)
    return 1


def remove_in(tx: Tx, tenant: str, memory_ids: Sequence[str]) -> int:
    """Delete these memories' rows with their postings and counts; the
    neighbours of a deleted event forget its terms. Returns the index
    entries deleted (rows and postings)."""
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
    """``MemoryIndex`` over the store's own database (see the module docstring)."""

    name = "recall.memories"

    def __init__(self, store: Any) -> None:
        self.store = None  # nothing to catch up: written with the memories
        self._store = store
        self._cache: dict[tuple, Any] = {}

    @classmethod
    def open(cls, data_dir: Any, store: Any) -> "PGMemoryIndex":
        return cls(store)

    @contextmanager
    def _reading(self, tenant: str) -> Iterator[tuple["_Reads", tuple]]:
        with self._store._pool.transaction(readonly=True) as tx:  # a pooled connection; its errors are the store's
            reads = _Reads(tx.conn, tenant)
            # Cached partitions and counts are valid while the tenant's memories are as they were.
            yield reads, ("pg", tenant, reads.one("SELECT max(seq) FROM memory_feed WHERE tenant = %s", (tenant,))[0])

    # -- the embedded index's reads, in SQL of this database -------------------------------
    @staticmethod
    def _read_partitions(tx: _Reads, viewer: Viewer, exclude_kinds: tuple[str, ...]) -> list[tuple[int, bool]]:
        return tx.all(
            "SELECT id, expiring FROM recall_parts WHERE tenant = %s AND project IN ('', %s) "
            "AND user_id IN ('', %s) AND purpose IN ('', %s) AND session = ANY(%s) AND sensitivity <= %s "
            "AND kind <> ALL(%s) ORDER BY id",
            (viewer.tenant, viewer.project, viewer.user, viewer.purpose, list(dict.fromkeys(("", *viewer.sessions))),
             min(sensitivity_rank(viewer.ceiling), 2), list(exclude_kinds)))

    @staticmethod
    def _read_stats(tx: _Reads, parts: Partitions, now: float) -> tuple[int, int, int]:
        n = terms_sum = ctx_sum = 0
        if parts.fixed:
            a, b, c = tx.one("SELECT sum(docs), sum(nterms), sum(nctx) FROM recall_parts WHERE tenant = %s "
                             "AND id = ANY(%s)", (parts.tenant, list(parts.fixed)))
            n, terms_sum, ctx_sum = a or 0, b or 0, c or 0
        if parts.expiring:
            a, b, c = tx.one("SELECT count(*), sum(nterms), sum(nctx) FROM recall_memories WHERE tenant = %s "
                             "AND part = ANY(%s) AND expires_at > %s", (parts.tenant, list(parts.expiring), now))
            n, terms_sum, ctx_sum = n + (a or 0), terms_sum + (b or 0), ctx_sum + (c or 0)
        return int(n), int(terms_sum), int(ctx_sum)

    def _read_df(self, tx: _Reads, parts: Partitions, words: Sequence[str], now: float) -> dict[str, int]:
        df = dict.fromkeys(words, 0)
        if not words:
            return df
        if parts.fixed:
            for term, n in tx.all("SELECT term, sum(n) FROM recall_df WHERE tenant = %s AND part = ANY(%s) "
                                  "AND term = ANY(%s) GROUP BY term", (parts.tenant, list(parts.fixed), list(words))):
                df[term] += int(n)
        if parts.expiring:
            for term, n in tx.all(
                    "SELECT p.term, count(*) FROM recall_postings p JOIN recall_memories m ON m.tenant = p.tenant "
                    "AND m.doc = p.doc WHERE p.tenant = %s AND p.part = ANY(%s) AND p.term = ANY(%s) "
                    "AND m.expires_at > %s GROUP BY p.term", (parts.tenant, list(parts.expiring), list(words), now)):
                df[term] += int(n)
        return df

    def _heaviest(self, tx: _Reads, parts: Partitions, weights: Mapping[str, float], now: float, limit: int
                  ) -> list[int]:
        if not weights:
            return []
        live, args = _live(parts, now, "p")
        return [r[0] for r in tx.all(
            "SELECT p.doc, round(sum(q.w)::numeric, 6) AS held FROM unnest(%s::text[], %s::float8[]) AS q(term, w) "
            f"JOIN recall_postings p ON p.tenant = %s AND p.part = ANY(%s) AND p.term = q.term WHERE true{live} "
            "GROUP BY p.doc ORDER BY held DESC, p.doc LIMIT %s",
            (list(weights), list(weights.values()), parts.tenant, list(parts.all), *args, limit))]

    def _substring_docs(self, tx: _Reads, tenant: str, parts: Partitions, sub: str, now: float) -> list[int]:
        live = " AND (part <> ALL(%s) OR expires_at > %s)" if parts.expiring else ""
        args = [list(parts.expiring), now] if parts.expiring else []
        return [r[0] for r in tx.all(
            f"SELECT doc FROM recall_memories WHERE tenant = %s AND statement ILIKE %s AND part = ANY(%s){live} "
            "ORDER BY doc", (tenant, _like(sub), list(parts.all), *args))]

    def _rows(self, tx: _Reads, parts: Partitions, ids: Sequence[int], now: float) -> list[tuple]:
        if not ids:
            return []
        live = " AND (part <> ALL(%s) OR expires_at > %s)" if parts.expiring else ""
        args = [list(parts.expiring), now] if parts.expiring else []
        return [tuple(r) for r in tx.all(
            # by doc, as the embedded index reads rows by rowid: which neighbours fit in a search's pool follows it
            f"SELECT {_ROW} FROM recall_memories WHERE tenant = %s AND doc = ANY(%s) AND part = ANY(%s){live} "
            "ORDER BY doc",
            (parts.tenant, list(ids), list(parts.all), *args))]

    def _rows_and_near(self, tx: _Reads, parts: Partitions, ids: Sequence[int], now: float, limit: int
                       ) -> list[tuple]:
        """``MemoryIndex._rows_and_near`` in one statement: the neighbours are
        taken in the same order (the rows by doc, then each row's ``near``)."""
        if not ids:
            return []
        live = " AND (m.part <> ALL(%(expiring)s) OR m.expires_at > %(now)s)" if parts.expiring else ""
        cols = ", ".join(f"m.{c}" for c in _ROW.split(", "))
        return [tuple(r[1:]) for r in tx.all(
            f"WITH hit AS (SELECT {cols} FROM recall_memories m WHERE m.tenant = %(t)s "
            f"AND m.doc = ANY(%(ids)s) AND m.part = ANY(%(parts)s){live}), "
            # each neighbour at its first place: (the row's doc, its place in the row's near)
            "around AS (SELECT n.doc::bigint AS doc, min(ARRAY[h.doc, n.i]) AS place "
            "FROM hit h, unnest(string_to_array(h.near, ' ')) WITH ORDINALITY AS n(doc, i) "
            "WHERE n.doc::bigint <> ALL(%(ids)s) GROUP BY n.doc), "
            "first AS (SELECT doc FROM around ORDER BY place LIMIT %(limit)s) "
            f"SELECT 0, {', '.join(c[2:] for c in cols.split(', '))} FROM hit "
            f"UNION ALL SELECT 1, {cols} FROM recall_memories m JOIN first f ON m.doc = f.doc "
            f"WHERE m.tenant = %(t)s AND m.part = ANY(%(parts)s){live}",
            {"t": parts.tenant, "ids": list(ids), "parts": list(parts.all), "expiring": list(parts.expiring),
             "now": now, "limit": limit})]

    @staticmethod
    def _rowids(tx: _Reads, tenant: str, ids: list[str]) -> list[int]:
        return [r[0] for r in tx.all("SELECT doc FROM recall_memories WHERE tenant = %s AND memory_id = ANY(%s)",
                                     (tenant, ids))]

    # -- what the embedded index does beside reading ---------------------------------------
    def catch_up(self) -> int:
        return 0

    def watermark(self) -> int:
        return self._store.memories.last_seq()

    def generation(self) -> int:
        return 0

    def rebuild(self) -> int:
        self._cache.clear()
        return self._store._pool.run(index_all)

    def count(self, tenant: str) -> int:
        return self._store._pool.run(lambda tx: tx.tenant(tenant).one(
            "SELECT count(*) FROM recall_memories WHERE tenant = %s", (tenant,))[0], readonly=True)

    def close(self) -> None:
        self._cache.clear()
