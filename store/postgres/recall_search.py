"""Recall's reads of the memory index in PostgreSQL, each one statement (one
round trip): on a networked store a recall pays for its round trips, not for
the server's work, so the visible partitions, their counts, the query's
document frequencies, the candidates and their neighbouring events are
chosen in the database together.

``search`` is ``MemoryIndex._search`` (``store/memory_index.py``) step for
step, in SQL: the statistics over the viewer's partitions; each word's
visible document frequency and its weight (visible idf, the same
``ln(1 + (N - df + 0.5) / (df + 0.5))`` in double precision); the rows
holding each substring and their summed weights (the ``limit`` heaviest
kept); the rarest words, taken while their postings together stay within
``limit`` and none is frequent (else every word, and a fifth of the pool);
the rows holding the most weight of those words; those rows and the first
``limit`` of their neighbours. The embedded index runs the same steps in
Python over SQLite; ``tests/store/postgres/test_pg_recall_index.py``
compares the two on every path (frequent words, small pools, substrings,
expiring rows), and the LoCoMo runs rank identically on both.

Every statement reads only the viewer's tenant (row-level security: the
caller sets it in the same round trip) and its visible partitions.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..memory_index import CANDIDATE_COLUMNS, FEW, FREQUENT, FREQUENT_POOL, Stats
from ..sqlite_index import Viewer, sensitivity_rank

_COLS = [("user_id" if c == "user" else c) for c in CANDIDATE_COLUMNS] + ["doc", "near"]
_ROW = ", ".join(f"m.{c}" for c in _COLS)
_NULLS = ", ".join("NULL" for _ in _COLS)

# The viewer's partitions (as ``MemoryIndex._read_partitions``) and their ids as arrays.
_VISIBLE = (
    "vis AS MATERIALIZED (SELECT id, expiring, docs, nterms, nctx FROM recall_parts WHERE tenant = %(t)s "
    "AND project IN ('', %(project)s) AND user_id IN ('', %(user)s) AND purpose IN ('', %(purpose)s) "
    "AND session = ANY(%(sessions)s) AND sensitivity <= %(ceiling)s AND kind <> ALL(%(exclude)s)), "
    "ids AS MATERIALIZED (SELECT coalesce(array_agg(id), '{}') AS every, "
    "coalesce(array_agg(id) FILTER (WHERE NOT expiring), '{}') AS fixed, "
    "coalesce(array_agg(id) FILTER (WHERE expiring), '{}') AS expiring FROM vis), "
    # rows, terms and context terms visible: the fixed partitions' kept sums, the expiring rows counted
    "st AS (SELECT (coalesce(f.docs, 0) + x.docs)::bigint AS docs, (coalesce(f.nterms, 0) + coalesce(x.nterms, 0))"
    "::bigint AS nterms, (coalesce(f.nctx, 0) + coalesce(x.nctx, 0))::bigint AS nctx "
    "FROM (SELECT sum(docs) AS docs, sum(nterms) AS nterms, sum(nctx) AS nctx FROM vis WHERE NOT expiring) f, "
    "(SELECT count(*) AS docs, sum(nterms) AS nterms, sum(nctx) AS nctx FROM recall_memories WHERE tenant = %(t)s "
    "AND part = ANY((SELECT expiring FROM ids)::bigint[]) AND expires_at > %(now)s) x)")

# Each word's visible document frequency: the fixed partitions' counts, the expiring rows' postings counted.
_DF = (
    "q AS (SELECT term, i FROM unnest(%(words)s::text[]) WITH ORDINALITY AS q(term, i)), "
    "df AS (SELECT q.term, q.i, (coalesce((SELECT sum(d.n) FROM recall_df d WHERE d.tenant = %(t)s "
    "AND d.part = ANY((SELECT fixed FROM ids)::bigint[]) AND d.term = q.term), 0) + (SELECT count(*) FROM recall_postings p "
    "JOIN recall_memories m ON m.tenant = p.tenant AND m.doc = p.doc WHERE p.tenant = %(t)s "
    "AND p.part = ANY((SELECT expiring FROM ids)::bigint[]) AND p.term = q.term AND m.expires_at > %(now)s))::bigint AS n "
    "FROM q)")

# A row of a visible partition, not expired (m: recall_memories).
_LIVE = ("m.part = ANY((SELECT every FROM ids)::bigint[]) AND (m.part <> ALL((SELECT expiring FROM ids)::bigint[]) "
         "OR m.expires_at > %(now)s)")

# A visible key's weight, as ``MemoryIndex._search`` computes it (float8 throughout, as Python's floats).
_IDF = "ln(1::float8 + ((nd.n - {df}::float8) + 0.5::float8) / ({df}::float8 + 0.5::float8))"

_SEARCH = (
    "WITH " + _VISIBLE + ", " + _DF + ", "
    "nd AS (SELECT greatest(docs, 1)::float8 AS n FROM st), "
    "kw AS (SELECT df.term, df.i, df.n, " + _IDF.format(df="df.n") + " AS w FROM df, nd), "
    # substrings: the rows holding each, its weight, each row's summed weight (in key order); the heaviest kept
    "s AS (SELECT pat, i FROM unnest(%(subs)s::text[]) WITH ORDINALITY AS s(pat, i)), "
    "sd AS (SELECT s.i, x.doc FROM s CROSS JOIN LATERAL (SELECT m.doc FROM recall_memories m "
    "WHERE m.tenant = %(t)s AND m.statement ILIKE s.pat AND " + _LIVE + ") x), "
    "sc AS (SELECT s.i, count(sd.doc) AS n FROM s LEFT JOIN sd ON sd.i = s.i GROUP BY s.i), "
    "sw AS (SELECT sc.i, " + _IDF.format(df="sc.n") + " AS w FROM sc, nd), "
    "held AS (SELECT sd.doc, sum(sw.w ORDER BY sw.i) AS held FROM sd JOIN sw ON sw.i = sd.i GROUP BY sd.doc "
    "ORDER BY held DESC, sd.doc LIMIT %(limit)s), "
    # the rarest words (by frequency, then query order) while their postings stay within the pool and none is frequent
    "ranked AS (SELECT term, n, w, row_number() OVER o AS r, sum(n) OVER o AS upto FROM kw WHERE n > 0 "
    "WINDOW o AS (ORDER BY n, i ROWS UNBOUNDED PRECEDING)), "
    "rare AS (SELECT ranked.term, ranked.n, ranked.w FROM ranked, st WHERE r = 1 OR (upto <= %(limit)s "
    "AND n::float8 <= greatest(%(frequent)s::float8 * st.docs::float8, %(few)s::float8))), "
    "tot AS (SELECT coalesce(sum(n), 0) AS n FROM rare), "
    # every word frequent: every word counts, for a smaller pool
    "lim AS (SELECT CASE WHEN tot.n > %(limit)s THEN %(small)s ELSE %(limit)s END AS n, tot.n > %(limit)s AS every "
    "FROM tot), "
    "chosen AS (SELECT term, w FROM rare WHERE NOT (SELECT every FROM lim) "
    "UNION ALL SELECT term, w FROM kw WHERE n > 0 AND (SELECT every FROM lim)), "
    "heavy AS (SELECT p.doc FROM chosen q JOIN recall_postings p ON p.tenant = %(t)s "
    "AND p.part = ANY((SELECT every FROM ids)::bigint[]) AND p.term = q.term "
    "WHERE p.part <> ALL((SELECT expiring FROM ids)::bigint[]) OR EXISTS (SELECT 1 FROM recall_memories m "
    "WHERE m.tenant = p.tenant AND m.doc = p.doc AND m.expires_at > %(now)s) "
    "GROUP BY p.doc ORDER BY round(sum(q.w)::numeric, 6) DESC, p.doc LIMIT (SELECT n FROM lim)), "
    "hits AS MATERIALIZED (SELECT doc FROM held UNION SELECT doc FROM heavy), "
    # the rows, and each neighbour at its first place (the row's doc, its place in the row's near)
    "hit AS MATERIALIZED (SELECT " + _ROW + " FROM recall_memories m WHERE m.tenant = %(t)s "
    "AND m.doc IN (SELECT doc FROM hits) AND " + _LIVE + "), "
    "around AS (SELECT n.doc::bigint AS doc, min(ARRAY[h.doc, n.i]) AS place "
    "FROM hit h, unnest(string_to_array(h.near, ' ')) WITH ORDINALITY AS n(doc, i) "
    "WHERE n.doc::bigint NOT IN (SELECT doc FROM hits) GROUP BY n.doc), "
    "first AS (SELECT doc FROM around ORDER BY place LIMIT (SELECT n FROM lim)) "
    "SELECT NULL::bigint[], * FROM hit "
    "UNION ALL SELECT NULL, " + _ROW + " FROM recall_memories m JOIN first f ON m.doc = f.doc "
    "WHERE m.tenant = %(t)s AND " + _LIVE + " "
    # and one row of the statistics: rows, terms, context terms, each word's and each substring's frequency
    "UNION ALL SELECT ARRAY[st.docs, st.nterms, st.nctx] || ARRAY(SELECT n FROM df ORDER BY i) "
    "|| ARRAY(SELECT n FROM sc ORDER BY i), " + _NULLS + " FROM st")

_DOC_FREQS = ("WITH " + _VISIBLE + ", " + _DF + " SELECT st.docs, ARRAY(SELECT n FROM df ORDER BY i) FROM st")

_STATS = "WITH " + _VISIBLE + " SELECT docs, nterms, nctx FROM st"

_FETCH = ("WITH " + _VISIBLE + " SELECT " + _ROW + " FROM recall_memories m WHERE m.tenant = %(t)s "
          "AND m.memory_id = ANY(%(ids)s) AND " + _LIVE + " ORDER BY m.doc")


def _like(sub: str) -> str:
    """``sub`` as an ILIKE pattern matching it anywhere, literally."""
    return "%" + sub.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _viewing(viewer: Viewer, exclude_kinds: Sequence[str], now: float) -> dict[str, Any]:
    return {"t": viewer.tenant, "project": viewer.project, "user": viewer.user, "purpose": viewer.purpose,
            "sessions": list(dict.fromkeys(("", *viewer.sessions))),
            "ceiling": min(sensitivity_rank(viewer.ceiling), 2), "exclude": list(exclude_kinds), "now": now}


def _stats(docs: int, nterms: int, nctx: int, df: dict[str, int] | None = None) -> Stats:
    return Stats(docs, nterms / docs if docs else 0.0, nctx / docs if docs else 0.0, df)


def search(reads: Any, viewer: Viewer, words: list[str], subs: list[str], now: float, limit: int,
           exclude_kinds: Sequence[str]) -> tuple[list[tuple], Stats]:
    """The candidate rows (``CANDIDATE_COLUMNS``, doc, near; by memory id) and the
    statistics of ``MemoryIndex._search``; ``subs`` are its substring keys."""
    rows = reads.all(_SEARCH, {**_viewing(viewer, exclude_kinds, now), "words": words,
                               "subs": [_like(k[1:]) for k in subs], "limit": limit,
                               "small": max(1, int(limit * FREQUENT_POOL)), "frequent": FREQUENT, "few": FEW})
    head = next(r[0] for r in rows if r[0] is not None)
    found = sorted((tuple(r[1:]) for r in rows if r[0] is None), key=lambda r: r[0])
    return found, _stats(*head[:3], dict(zip(words + subs, head[3:])))


def doc_freqs(reads: Any, viewer: Viewer, words: list[str], now: float, exclude_kinds: Sequence[str]
              ) -> tuple[int, dict[str, int]]:
    docs, df = reads.one(_DOC_FREQS, {**_viewing(viewer, exclude_kinds, now), "words": words})
    return int(docs), dict(zip(words, map(int, df)))


def stats(reads: Any, viewer: Viewer, now: float, exclude_kinds: Sequence[str]) -> Stats:
    return _stats(*reads.one(_STATS, _viewing(viewer, exclude_kinds, now)))


def fetch(reads: Any, viewer: Viewer, memory_ids: list[str], now: float, exclude_kinds: Sequence[str]
          ) -> list[tuple]:
    return [tuple(r) for r in reads.all(_FETCH, {**_viewing(viewer, exclude_kinds, now), "ids": memory_ids})]
