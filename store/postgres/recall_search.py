"""Recall's reads of the memory index in PostgreSQL: each one call of a
function of the schema (``sql/0005_recall_search.sql``), so one round trip,
and a plan the server keeps for the connection. On a networked store a
recall pays for its round trips and for planning long statements, not for
the server's work: the visible partitions, their counts, the query's
document frequencies, the candidates and their neighbouring events are
chosen in the database together.

``recall_search`` is ``MemoryIndex._search`` (``store/memory_index.py``)
step for step, in SQL (the function's comment says how); the embedded index
runs the same steps in Python over SQLite.
``tests/store/postgres/test_pg_recall_index.py`` compares the two on every
path (frequent words, small pools, substrings, expiring rows), and the
LoCoMo runs rank identically on both.

Every function reads only the viewer's tenant (row-level security: the
caller sets it in the same round trip) and its visible partitions.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..memory_index import FEW, FREQUENT, FREQUENT_POOL, Stats
from ..sqlite_index import Viewer, sensitivity_rank

_VIEWER = ("%(t)s, %(project)s, %(user)s, %(purpose)s, %(sessions)s::text[], %(ceiling)s, %(exclude)s::text[], "
           "%(now)s::float8")
_SEARCH = ("SELECT * FROM recall_search(" + _VIEWER + ", %(words)s::text[], %(pats)s::text[], %(limit)s, %(small)s, "
           "%(frequent)s::float8, %(few)s::float8)")
_DOC_FREQS = "SELECT * FROM recall_doc_freqs(" + _VIEWER + ", %(words)s::text[])"
_FETCH = "SELECT * FROM recall_fetch(" + _VIEWER + ", %(ids)s::text[])"
# MemoryIndex.word_forms. The terms that begin with each prefix (up to a limit, first in byte order), read in
# the index's range from the prefix up to its ``upper`` bound (``prefix_bound``) and checked with starts_with;
# of the words, those the visible partitions hold; then the document frequencies of both through the
# schema's own counts. Only the order is in byte order: a term of another collation would pass it on to the
# counts' parameters, and their index (of the database's collation) would no longer serve them.
WORD_FORMS = (
    "WITH v AS (SELECT * FROM recall_visible(%(t)s, %(project)s, %(user)s, %(purpose)s, %(sessions)s::text[], "
    "%(ceiling)s, %(exclude)s::text[])), "
    "c AS (SELECT q.prefix, x.term FROM v, unnest(%(prefixes)s::text[], %(uppers)s::text[]) AS q(prefix, upper) "
    "CROSS JOIN LATERAL (SELECT d.term FROM unnest(v.every) AS vp(part) JOIN recall_df d ON d.tenant = %(t)s "
    "AND d.part = vp.part WHERE d.term > q.prefix AND (q.upper IS NULL OR d.term < q.upper) "
    "AND starts_with(d.term, q.prefix) "
    "GROUP BY d.term ORDER BY d.term COLLATE \"C\" LIMIT %(limit)s) x), "
    "e AS (SELECT DISTINCT d.term FROM v, unnest(v.every) AS vp(part) JOIN recall_df d ON d.tenant = %(t)s "
    "AND d.part = vp.part AND d.term = ANY(%(words)s::text[])), "
    "w AS MATERIALIZED (SELECT ARRAY(SELECT e.term FROM e UNION SELECT c.term FROM c) AS words) "
    "SELECT ARRAY(SELECT c.prefix FROM c ORDER BY c.prefix, c.term COLLATE \"C\"), "
    "ARRAY(SELECT c.term FROM c ORDER BY c.prefix, c.term COLLATE \"C\"), w.words, k.docs, k.freqs "
    "FROM w, recall_doc_freqs(" + _VIEWER + ", w.words) k")


def prefix_bound(prefix: str) -> str | None:
    """A bound above every term that begins with ``prefix`` (lower-case letters), in any collation that
    orders the letters a to z: its last letter that is not ``z`` one higher, what follows it dropped
    (``prod`` → ``proe``, ``fizz`` → ``fj``); None when it is all ``z``."""
    head = prefix.rstrip("z")
    return head[:-1] + chr(ord(head[-1]) + 1) if head else None


def _like(sub: str) -> str:
    """``sub`` as an ILIKE pattern matching it anywhere, literally."""
    return "%" + sub.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _viewing(viewer: Viewer, exclude_kinds: Sequence[str], now: float) -> dict[str, Any]:
    return {"t": viewer.tenant, "project": viewer.project, "user": viewer.user, "purpose": viewer.purpose,
            "sessions": list(dict.fromkeys(("", *viewer.sessions))),
            "ceiling": min(sensitivity_rank(viewer.ceiling), 2), "exclude": list(exclude_kinds), "now": float(now)}


def _stats(docs: int, nterms: int, nctx: int, df: dict[str, int] | None = None) -> Stats:
    return Stats(docs, nterms / docs if docs else 0.0, nctx / docs if docs else 0.0, df)


def search(reads: Any, viewer: Viewer, words: list[str], subs: list[str], now: float, limit: int,
           exclude_kinds: Sequence[str]) -> tuple[list[tuple], Stats]:
    """The candidate rows (``CANDIDATE_COLUMNS``, doc, near; by memory id) and the
    statistics of ``MemoryIndex._search``; ``subs`` are its substring keys."""
    rows = reads.all(_SEARCH, {**_viewing(viewer, exclude_kinds, now), "words": words,
                               "pats": [_like(k[1:]) for k in subs], "limit": limit,
                               "small": max(1, int(limit * FREQUENT_POOL)), "frequent": FREQUENT, "few": FEW})
    head = next(r[0] for r in rows if r[0] is not None)
    found = sorted((tuple(r[1:]) for r in rows if r[0] is None), key=lambda r: r[0])
    return found, _stats(*head[:3], dict(zip(words + subs, head[3:])))


def doc_freqs(reads: Any, viewer: Viewer, words: list[str], now: float, exclude_kinds: Sequence[str]
              ) -> tuple[int, dict[str, int]]:
    docs, _, _, df = reads.one(_DOC_FREQS, {**_viewing(viewer, exclude_kinds, now), "words": words})
    return int(docs), dict(zip(words, map(int, df)))


def stats(reads: Any, viewer: Viewer, now: float, exclude_kinds: Sequence[str]) -> Stats:
    return _stats(*reads.one(_DOC_FREQS, {**_viewing(viewer, exclude_kinds, now), "words": []})[:3])


def fetch(reads: Any, viewer: Viewer, memory_ids: list[str], now: float, exclude_kinds: Sequence[str]
          ) -> list[tuple]:
    return [tuple(r) for r in reads.all(_FETCH, {**_viewing(viewer, exclude_kinds, now), "ids": memory_ids})]
