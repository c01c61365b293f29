"""The derived lexical index of memories: SQLite FTS5 beside the LMDB store.

One file, ``<data_dir>/recall/memories.db``. A row per servable memory
(``status == "active"``, not quarantined; anything else is removed from the
index), carrying the columns visibility is decided on: tenant, project,
user, session, purpose, sensitivity, expiry. Two indexes find candidates:

- ``post``: a posting per (partition, term, row) of the statement's terms
  (``memory_terms.terms``: words, stems, identifier parts, CJK bigrams), so
  a lookup walks only the postings of partitions the viewer may see;
- ``mem_tri`` (FTS5): the statement under the ``trigram`` tokenizer, for
  substrings of code identifiers and text in scripts without spaces, with
  a ``tacl`` column holding the tenant as one trigram, so a MATCH only ever
  walks that tenant's rows.

Authorization is the WHERE clause of the candidate query itself: a record
the viewer may not see never becomes a candidate, so no ranking, count or
score is ever computed over it. Ranking (``filters/recall``) runs on the
candidates with statistics (``N``, average length) also taken over the
visible records only.

Catch-up: the index keeps its own watermark (``meta.seq``) on the store's
memory change feed (``store.memories.changes``) and applies every change
after it, in one SQLite transaction with the new watermark, before a search
(a check of ``last_seq`` when nothing changed). After a crash, reopening and
the next search catch up; ``rebuild()`` starts over from an empty file
(``ctxproxy memory reindex``). ``forget`` and ``erase_free_pages`` are what
``store/forget.py`` calls through ``store.derived``.
"""
from __future__ import annotations

import hashlib
import heapq
import logging
import math
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from .bounded import SLOT_BYTES, ByteLRU
from .memory_terms import fts_phrase, terms
from .sqlite_index import SQLiteFile, Viewer, attach, placeholders, sensitivity_rank, trigram_token

log = logging.getLogger("ctxproxy.store.recall")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v);
-- A partition: one combination of the visibility columns. Every row belongs to
-- one; a viewer's visible set is a handful of partitions, and the counts
-- ranking needs (documents, lengths, document frequencies) are kept per
-- partition, so they are read, never counted, at query time. Rows that can
-- expire get partitions of their own (``expiring``), counted live.
CREATE TABLE IF NOT EXISTS part(
    id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, project TEXT NOT NULL, user TEXT NOT NULL,
    session TEXT NOT NULL, purpose TEXT NOT NULL, sensitivity INTEGER NOT NULL, kind TEXT NOT NULL,
    expiring INTEGER NOT NULL, docs INTEGER NOT NULL DEFAULT 0, nterms INTEGER NOT NULL DEFAULT 0,
    nctx INTEGER NOT NULL DEFAULT 0,
    UNIQUE(tenant, user, project, session, purpose, sensitivity, kind, expiring));
CREATE TABLE IF NOT EXISTS mem(
    rowid INTEGER PRIMARY KEY, part INTEGER NOT NULL,
    tenant TEXT NOT NULL, memory_id TEXT NOT NULL,
    project TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL, purpose TEXT NOT NULL,
    sensitivity INTEGER NOT NULL, expires_at REAL, observed_at REAL NOT NULL, evergreen INTEGER NOT NULL,
    kind TEXT NOT NULL, origin TEXT NOT NULL, confidence REAL NOT NULL, external_id TEXT NOT NULL,
    evidence_ref TEXT NOT NULL, evidence_sessions TEXT NOT NULL, revision INTEGER NOT NULL,
    statement TEXT NOT NULL, terms TEXT NOT NULL, nterms INTEGER NOT NULL,
    thread TEXT NOT NULL, ctx TEXT NOT NULL, nctx INTEGER NOT NULL,
    near TEXT NOT NULL DEFAULT '',  -- the rows whose terms are this row's ctx (and whose ctx holds its terms)
    tacl TEXT NOT NULL,  -- the tenant as one trigram (sqlite_index.trigram_token), for the substring index
    UNIQUE(tenant, memory_id));
CREATE INDEX IF NOT EXISTS mem_scope ON mem(tenant, user, project);
CREATE INDEX IF NOT EXISTS mem_part ON mem(part);
CREATE INDEX IF NOT EXISTS mem_thread ON mem(thread, observed_at);
-- The inverted index: a posting per (partition, distinct term, row), so a
-- lookup walks only the postings of partitions the viewer may see.
CREATE TABLE IF NOT EXISTS post(part INTEGER NOT NULL, term TEXT NOT NULL, doc INTEGER NOT NULL,
    PRIMARY KEY(part, term, doc)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS df(part INTEGER NOT NULL, term TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY(part, term)) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS mem_tri USING fts5(
    statement, tacl, content='mem', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS mem_tri_ai AFTER INSERT ON mem BEGIN
    INSERT INTO mem_tri(rowid, statement, tacl) VALUES (new.rowid, new.statement, new.tacl);
END;
CREATE TRIGGER IF NOT EXISTS mem_tri_ad AFTER DELETE ON mem BEGIN
    INSERT INTO mem_tri(mem_tri, rowid, statement, tacl) VALUES ('delete', old.rowid, old.statement, old.tacl);
END;
"""
# What an older layout left (dropped when the format changes; the rows are indexed again).
_OLD = ("DROP TRIGGER IF EXISTS mem_ai", "DROP TRIGGER IF EXISTS mem_ad", "DROP TRIGGER IF EXISTS mem_au",
        "DROP TRIGGER IF EXISTS mem_tri_ai", "DROP TRIGGER IF EXISTS mem_tri_ad",
        "DROP TABLE IF EXISTS mem_terms", "DROP TABLE IF EXISTS vis", "DROP TABLE IF EXISTS mem_tri",
        "DROP TABLE IF EXISTS post", "DROP TABLE IF EXISTS df", "DROP TABLE IF EXISTS mem",
        "DROP TABLE IF EXISTS part")
FTS_TABLES = ("mem_tri",)
CATCH_UP_BATCH = 1000
POOL = 300  # candidates per search (and their neighbouring events) scored exactly
FREQUENT = 0.1  # a word in more than this share of the visible memories only scores the candidates...
FEW = 100  # (...but never one in this many or fewer: its postings are cheap to read)
FREQUENT_POOL = 0.2  # ...and when every query word is, the candidates are this share of POOL
MAX_TERMS = 48  # query terms looked up (bits of one mask, with 8 substrings)
COMPLETIONS = 8  # terms a prefix completes to (``word_forms``)

CONTEXT_WINDOW = 2  # an event's document also holds this many neighbouring events on each side
# A viewer found to see no memory at all is kept so under its tenant's revision (``nothing_visible``):
# a new turn of a tenant without memories then asks the index file nothing. False: counted every
# time (the benchmarks compare both).
KEEP_NOTHING_VISIBLE = True

CANDIDATE_COLUMNS = ("memory_id", "external_id", "kind", "origin", "project", "user", "session", "purpose",
            "sensitivity", "observed_at", "evergreen", "confidence", "evidence_ref", "statement", "terms",
            "nterms", "ctx", "nctx")


def follow_changes(file: Any, memories: Any, lock: Any, apply: Any) -> int:
    """Apply the store's memory changes after ``file``'s watermark to a derived index:
    ``apply(con, gone, records)`` per batch, each batch committed with its watermark (safe
    across threads and processes). Returns the number of memories applied."""
    applied = 0
    with lock:
        con = file.db()
        while True:
            con.execute("BEGIN IMMEDIATE")  # another process may have moved it meanwhile
            try:
                changes = memories.changes(int(file.meta("seq", 0) or 0), CATCH_UP_BATCH)
                if not changes:
                    con.execute("COMMIT")
                    break
                gone, recs = [], []
                for tenant, memory_id in dict.fromkeys((tenant, memory_id) for _, tenant, memory_id in changes):
                    rec = memories.get(tenant, memory_id)
                    if rec is None:
                        gone.append((tenant, memory_id))
                    else:
                        recs.append(rec)
                apply(con, gone, recs)
                con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', ?)", (changes[-1][0],))
                con.execute("COMMIT")
                applied += len(gone) + len(recs)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            if len(changes) < CATCH_UP_BATCH:
                break
    return applied


def rebuild_all(file: Any, store: Any, lock: Any, clear: Any, apply: Any) -> int:
    """Empty a derived index (``clear(con)``) and apply every tenant's memories
    to it again in batches (``apply(con, records) -> indexed``), up to the
    feed's current position: one transaction, its watermark with it. Returns
    how many were indexed."""
    memories = store.memories
    with lock:
        seq = memories.last_seq()
        con = file.db()
        con.execute("BEGIN IMMEDIATE")
        try:
            clear(con)
            n = 0
            for tenant in store_tenants(store):
                batch: list = []
                for rec in memories.iter_tenant(tenant):
                    batch.append(rec)
                    if len(batch) >= CATCH_UP_BATCH:
                        n += apply(con, batch)
                        batch = []
                n += apply(con, batch)
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', ?)", (seq,))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return n


def forget_subject(delete: Any, tenant: str, subject: dict, memory_ids: Sequence[str]) -> int:
    """Delete a derived index's rows (``delete(where, params) -> rows``) of these
    memories and of anything bound to the subject: a user, a session (also as
    an evidence session), a project, a memory. Returns the rows deleted."""
    ids = list(memory_ids) + ([str(subject["memory"])] if "memory" in subject else [])
    clauses, params = [], []
    for key in ("user", "project", "session"):
        if subject.get(key):
            clauses.append(f"{key} = ?")
            params.append(str(subject[key]))
    if subject.get("session"):
        clauses.append("instr(' ' || evidence_sessions || ' ', ' ' || ? || ' ') > 0")
        params.append(str(subject["session"]))
    removed = 0
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        removed += delete(f"tenant = ? AND memory_id IN ({placeholders(chunk)})", (tenant, *chunk))
    if clauses:
        removed += delete(f"tenant = ? AND ({' OR '.join(clauses)})", (tenant, *params))
    return removed


@dataclass(slots=True)
class Candidate:
    """A memory the viewer may see that matched the query (its text stays in
    the store's process: only ids, labels and scores ever leave in reports)."""

    memory_id: str
    external_id: str
    kind: str
    origin: str
    project: str
    user: str
    session: str
    purpose: str
    sensitivity: int
    observed_at: float
    evergreen: bool
    confidence: float
    evidence_ref: str
    statement: str
    terms: str
    nterms: int
    ctx: str = ""  # terms of the neighbouring events (same thread), weighted lower
    nctx: int = 0
    source: str = "memory"
    doc: int = 0  # the row in its index (events of one thread are ordered by (observed_at, doc))
    near: str = ""  # the docs of its neighbouring events, space-separated

    @property
    def scope(self) -> str:
        return "session" if self.session else "user" if self.user else "project" if self.project else "tenant"


@dataclass(frozen=True, slots=True)
class Stats:
    """Lexical statistics over what the viewer may see (never over the rest)."""

    docs: int
    avg_terms: float
    avg_ctx: float = 0.0
    df: Mapping[str, int] | None = None  # per query key, among visible documents (None: count candidates)


@dataclass(frozen=True, slots=True)
class Partitions:
    """The partitions a viewer may see: ``fixed`` hold rows that never expire,
    ``expiring`` rows checked against the clock at the query."""

    fixed: tuple[int, ...]
    expiring: tuple[int, ...]
    tenant: str = ""  # whose they are (a backend keyed by tenant first reads by it)

    @property
    def all(self) -> tuple[int, ...]:
        return self.fixed + self.expiring


def scope_where(viewer: Viewer, exclude_kinds: Sequence[str] = (), alias: str = "p") -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) over the visibility columns that
    a viewer's rows (here: partitions) must pass: the tenant, each scope
    column empty or the viewer's (sessions: its tree), the sensitivity
    ceiling, the kinds. (Expiry is per row: see ``visibility``, ``Partitions``.)"""
    sessions = tuple(dict.fromkeys(("", *viewer.sessions)))
    where = (f"{alias}.tenant = ? AND {alias}.project IN ('', ?) AND {alias}.user IN ('', ?) "
             f"AND {alias}.purpose IN ('', ?) AND {alias}.session IN ({placeholders(sessions)}) "
             f"AND {alias}.sensitivity <= ?")
    params = [viewer.tenant, viewer.project, viewer.user, viewer.purpose, *sessions,
              min(sensitivity_rank(viewer.ceiling), 2)]
    if exclude_kinds:
        where += f" AND {alias}.kind NOT IN ({placeholders(exclude_kinds)})"
        params += list(exclude_kinds)
    return where, params


def query_keys(words: Sequence[str], substrings: Sequence[str]) -> tuple[list[str], list[str]]:
    """What a search looks up: the words (each once, at most ``MAX_TERMS``) and
    the substring keys (``"\x00"`` and the substring in lower case; three
    characters or more, each once, at most 8)."""
    return (list(dict.fromkeys(words))[:MAX_TERMS],
            list(dict.fromkeys("\x00" + s.lower() for s in substrings if len(s) >= 3))[:8])


def visibility(viewer: Viewer, now: float, exclude_kinds: Sequence[str] = (), alias: str = "m"
               ) -> tuple[str, list[Any]]:
    """The full WHERE clause a viewer's rows must pass (``scope_where``, and not
    expired), for a table holding the visibility columns per row."""
    where, params = scope_where(viewer, exclude_kinds, alias)
    return (f"{where} AND ({alias}.expires_at IS NULL OR {alias}.expires_at > ?)", [*params, now])


FORMAT = "7"  # of the indexed rows; another value is re-indexed at open (7: events of one time ordered by rowid)


def _drop_older_layout(con: Any) -> None:
    """Before the schema: the tables of another layout go (their rows are
    indexed again from the change feed: the index is derived)."""
    con.execute("CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v)")
    row = con.execute("SELECT v FROM meta WHERE k = 'format'").fetchone()
    if row is not None and row[0] != FORMAT:
        con.execute("BEGIN IMMEDIATE")
        for statement in _OLD:
            con.execute(statement)
        con.execute("DELETE FROM meta WHERE k IN ('seq', 'format')")
        con.execute("COMMIT")


def servable(rec: Any) -> bool:
    return rec is not None and rec.status == "active" and not rec.quarantine


def _part_key(rec: Any) -> tuple:
    return (rec.tenant, rec.user, rec.project, rec.session, rec.purpose, sensitivity_rank(rec.sensitivity),
            rec.kind, int(rec.expires_at is not None))


CACHE_BYTES = 1 << 20  # what reads of the index keep in this process (visible partitions, counts, df)
DF_WORDS = 50000  # words whose document frequency is kept per set of partitions
DF_WORD_BYTES = 160  # one of them in that memo (a word and its count in a dict; measured)


class MemoryIndex:
    """The memory index of one store (see the module docstring)."""

    name = "recall.memories"

    def __init__(self, path: str | Path, store: Any = None):
        self.file = SQLiteFile(path, SCHEMA, prepare=_drop_older_layout)
        self.store = store
        if self.file.meta("format") != FORMAT:  # new, or an older layout dropped: index from the feed's start
            self.file.db().execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', 0), ('format', ?)", (FORMAT,))
        self._catch_lock = threading.Lock()
        self._caught_up = 0  # a feed position the watermark was seen at or past (it never moves back)
        # (what, viewer, ..., data_version) -> partitions / stats / document frequencies
        self._cache = ByteLRU(CACHE_BYTES, "memory index reads")
        # ``revision``: per tenant, the changes this process applied (moved after their commit);
        # ``_epoch`` moves every tenant's, for changes applied where their tenants were not seen
        self._revs: dict[str, int] = {}
        self._epoch = 0

    @classmethod
    def open(cls, data_dir: str | Path, store: Any) -> "MemoryIndex":
        """The index under ``data_dir``, registered on ``store.derived``."""
        return attach(cls, Path(data_dir) / "recall" / "memories.db", store, store)

    def generation(self) -> int:
        """Changes whenever something was forgotten (a cached result is stale)."""
        return int(self.file.meta("forgets", 0) or 0)

    def revision(self, tenant: str, at: int | None = None) -> int:
        """Moves whenever one of ``tenant``'s memories is written, changes status or is
        forgotten, by this process or another (through the store's change feed): a result
        kept under an earlier revision is stale. Caught up first, which is a check of the
        feed's position when nothing changed; then a dictionary read. ``at``: the store's
        last committed id as the caller just read it, nothing awaited since
        (``memories.last_seq``)."""
        if self.store is not None:
            self.catch_up(at)
        return self._epoch + self._revs.get(tenant, 0)

    def _moved(self, tenants: Iterable[str]) -> None:
        """After the commit: a revision read from now on comes with what the commit wrote."""
        for t in set(tenants):
            self._revs[t] = self._revs.get(t, 0) + 1

    # -- writing -----------------------------------------------------------------
    def watermark(self) -> int:
        return int(self.file.meta("seq", 0) or 0)

    def upsert(self, records: Iterable[Any]) -> int:
        """Index (or drop, when not servable) each record; one transaction."""
        con = self.file.db()
        records = list(records)
        n = 0
        con.execute("BEGIN IMMEDIATE")
        try:
            for rec in records:
                n += self._apply(con, rec)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._cache.clear()
        self._moved(rec.tenant for rec in records)
        return n

    def _apply(self, con: Any, rec: Any) -> int:
        self._delete(con, "tenant = ? AND memory_id = ?", (rec.tenant, rec.memory_id))
        if not servable(rec):
            return 0
        observed = float(rec.observed_at or rec.created_at or 0.0)
        found = terms(rec.statement) + date_terms(observed)
        thread = thread_of(rec)
        key = _part_key(rec)
        con.execute("INSERT OR IGNORE INTO part(tenant, user, project, session, purpose, sensitivity, kind, "
                    "expiring) VALUES (?,?,?,?,?,?,?,?)", key)
        part = con.execute("SELECT id FROM part WHERE tenant = ? AND user = ? AND project = ? AND session = ? "
                           "AND purpose = ? AND sensitivity = ? AND kind = ? AND expiring = ?", key).fetchone()[0]
        doc = con.execute(
            "INSERT INTO mem(part, tenant, memory_id, project, user, session, purpose, sensitivity, expires_at, "
            "observed_at, evergreen, kind, origin, confidence, external_id, evidence_ref, evidence_sessions, "
            "revision, statement, terms, nterms, thread, ctx, nctx, tacl) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'',0,?)",
            (part, rec.tenant, rec.memory_id, rec.project, rec.user, rec.session, rec.purpose,
             sensitivity_rank(rec.sensitivity), rec.expires_at, observed,
             int(bool(rec.evergreen)), rec.kind, rec.origin, float(rec.confidence), rec.external_id,
             rec.evidence_ref, " ".join(rec.evidence_sessions), int(rec.revision), rec.statement,
             " ".join(found), len(found), thread, trigram_token(rec.tenant))).lastrowid
        distinct = [(part, t) for t in dict.fromkeys(found)]
        con.executemany("INSERT INTO post(part, term, doc) VALUES (?,?,?)", [(p, t, doc) for p, t in distinct])
        con.executemany("INSERT INTO df(part, term, n) VALUES (?,?,1) "
                        "ON CONFLICT(part, term) DO UPDATE SET n = n + 1", distinct)
        con.execute("UPDATE part SET docs = docs + 1, nterms = nterms + ? WHERE id = ?", (len(found), part))
        if thread:
            _refresh_context(con, thread, observed, doc)
        return 1

    def _delete(self, con: Any, where: str, params: Sequence[Any]) -> int:
        """Delete rows with their postings and counts; the neighbours of a
        deleted event forget its terms too."""
        rows = con.execute(f"SELECT rowid, part, terms, nterms, nctx, thread, observed_at FROM mem WHERE {where}",
                           params).fetchall()
        if not rows:
            return 0
        for doc, part, text, nterms, nctx, _, _ in rows:
            distinct = [(part, t) for t in dict.fromkeys(text.split())]
            con.executemany("DELETE FROM post WHERE part = ? AND term = ? AND doc = ?",
                            [(p, t, doc) for p, t in distinct])
            con.executemany("UPDATE df SET n = n - 1 WHERE part = ? AND term = ?", distinct)
            con.execute("UPDATE part SET docs = docs - 1, nterms = nterms - ?, nctx = nctx - ? WHERE id = ?",
                        (nterms, nctx, part))
        parts = sorted({r[1] for r in rows})
        # No count or partition outlives its rows: a term or a name only a forgotten record had is gone.
        con.execute(f"DELETE FROM df WHERE part IN ({placeholders(parts)}) AND n <= 0", parts)
        n = con.execute(f"DELETE FROM mem WHERE {where}", params).rowcount
        con.execute(f"DELETE FROM part WHERE id IN ({placeholders(parts)}) AND docs <= 0", parts)
        for doc, _, _, _, _, thread, observed in rows:
            if thread:
                _refresh_context(con, thread, observed, doc)
        return n

    def catch_up(self, at: int | None = None) -> int:
        """Apply the store's memory changes after this index's watermark.
        Cheap when there are none; safe from several threads and processes
        (each batch and its watermark commit together). ``at``: as ``revision``'s."""
        memories = self.store.memories
        last = memories.last_seq() if at is None else memories.last_seq(at)
        if last <= self._caught_up:  # the watermark only moves forward: it was past this already
            return 0
        seen = self.watermark()
        if last <= seen:
            # applied by another process (or thread): which tenants it touched is not known here
            self._epoch += 1
            self._caught_up = last
            return 0
        touched: list[str] = []
        begun: list[int] = []  # the watermark each batch began at
        try:
            applied = follow_changes(self.file, memories, self._catch_lock,
                                     lambda con, gone, recs: self._apply_changes(con, gone, recs, touched, begun))
        finally:
            if touched:
                self._cache.clear()
                self._moved(touched)
            if begun[:1] != [seen]:  # some changes after ``seen`` were applied elsewhere meanwhile
                self._epoch += 1
        self._caught_up = max(self._caught_up, last)
        return applied

    def _apply_changes(self, con: Any, gone: list[tuple[str, str]], recs: list, touched: list[str],
                       begun: list[int]) -> None:
        begun.append(int(self.file.meta("seq", 0) or 0))  # (in the batch's transaction: this thread's connection)
        for tenant, memory_id in gone:
            self._delete(con, "tenant = ? AND memory_id = ?", (tenant, memory_id))
        for rec in recs:
            self._apply(con, rec)
        touched.extend(t for t, _ in gone)
        touched.extend(rec.tenant for rec in recs)

    def rebuild(self) -> int:
        """Empty the index and index every tenant's memories from the store
        again, up to the feed's current position (``ctxproxy memory reindex``)."""
        def clear(con: Any) -> None:
            for table in ("mem", "post", "df", "part"):
                con.execute(f"DELETE FROM {table}")
            for table in FTS_TABLES:
                con.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")

        n = rebuild_all(self.file, self.store, self._catch_lock, clear,
                        lambda con, recs: sum(self._apply(con, rec) for rec in recs))
        self._cache.clear()
        self._epoch += 1
        self.catch_up()  # writes that landed while it ran
        return n

    def _tenants(self) -> list[str]:
        return store_tenants(self.store)

    # -- forgetting (store.derived) ------------------------------------------------
    def forget(self, tenant: str, subject: dict, memory_ids: Sequence[str]) -> dict[str, int]:
        """Erase the subject's rows: the given memories and anything bound to
        the subject (a user, a session — also as an evidence session — a
        project, a memory)."""
        con = self.file.db()
        con.execute("BEGIN IMMEDIATE")
        try:
            removed = forget_subject(lambda where, params: self._delete(con, where, params), tenant, subject,
                                     memory_ids)
            self.file.bump(con, "forgets")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._cache.clear()
        self._moved((tenant,))
        return {"memory_index_rows": removed}

    def erase_free_pages(self) -> None:
        self.file.erase_free_pages(FTS_TABLES)

    # -- reading -------------------------------------------------------------------
    def search(self, viewer: Viewer, words: Sequence[str], substrings: Sequence[str] = (),
               now: float | None = None, limit: int = POOL, exclude_kinds: Sequence[str] = ()
               ) -> tuple[list[Candidate], Stats]:
        """The memories ``viewer`` may see that hold any of ``words`` (terms)
        or ``substrings`` (trigram) — at most ``limit`` — and the statistics
        over what it may see: its document count and lengths, and each
        key's document frequency among its visible documents.

        Two phases. The document frequencies come first, read from the
        per-partition counts of the viewer's partitions. Then the rarest
        words find the candidates: words are taken rarest first while their
        postings together stay within ``limit``; the more frequent ones
        only score those candidates (ranking reads every word). When even
        the rarest word is in more than ``limit`` visible memories, the
        ``limit`` holding the most query weight (visible idf) are kept,
        chosen in SQLite. Every step reads only the viewer's partitions, so
        the work done depends on what it may see, never on the rest."""
        if not viewer.known or (not words and not substrings):
            return [], Stats(0, 0.0)
        if self.store is not None:
            self.catch_up()
        now = time.time() if now is None else now
        with self._reading(viewer.tenant) as (con, version):
            return self._search(con, version, viewer, words, substrings, now, limit, exclude_kinds)

    def _search(self, con: Any, version: tuple, viewer: Viewer, words: Sequence[str], substrings: Sequence[str],
                now: float, limit: int, exclude_kinds: Sequence[str]) -> tuple[list[Candidate], Stats]:
        parts = self._partitions(con, viewer, tuple(exclude_kinds), version)
        stats = self._stats(con, parts, now, version)
        words, subs = query_keys(words, substrings)
        if not parts.all:
            return [], Stats(stats.docs, stats.avg_terms, stats.avg_ctx, dict.fromkeys(words + subs, 0))
        df = self._df(con, parts, words, now, version)
        n_docs = max(stats.docs, 1)
        weight = {k: math.log(1.0 + (n_docs - df[k] + 0.5) / (df[k] + 0.5)) for k in words}
        held: dict[int, float] = {}  # candidate row -> query weight (visible idf) of the keys it holds
        for key in subs:
            docs = self._substring_docs(con, viewer.tenant, parts, key[1:], now)
            df[key] = len(docs)
            w = weight[key] = math.log(1.0 + (n_docs - len(docs) + 0.5) / (len(docs) + 0.5))
            for doc in docs:
                held[doc] = held.get(doc, 0.0) + w
        rare, total = [], 0
        common = max(FREQUENT * stats.docs, FEW)
        for key in sorted((k for k in words if df[k]), key=lambda k: df[k]):
            if rare and (total + df[key] > limit or df[key] > common):
                break  # this word and the more frequent ones only score the candidates
            rare.append(key)
            total += df[key]
        if len(held) > limit:
            held = dict(heapq.nsmallest(limit, held.items(), key=lambda kv: (-kv[1], kv[0])))
        if total > limit:  # every word is frequent: the rows holding the most of them, fewer
            rare, limit = [k for k in words if df[k]], max(1, int(limit * FREQUENT_POOL))
        ids = sorted({*held, *self._heaviest(con, parts, {k: weight[k] for k in rare}, now, limit)})
        rows = self._rows_and_near(con, parts, ids, now, limit)
        rows.sort(key=lambda r: r[0])
        return ([_candidate(r) for r in rows],
                Stats(stats.docs, stats.avg_terms, stats.avg_ctx, df))

    def _rows_and_near(self, con: Any, parts: Partitions, ids: Sequence[int], now: float, limit: int
                       ) -> list[tuple]:
        """The rows ``ids`` and the events around them: those hold a match's
        words in their context, so they are candidates too (of the same
        thread, so of the same partition; checked again all the same). The
        first ``limit`` neighbours count, in the order of the rows (by rowid)
        and of each row's ``near``."""
        rows = self._rows(con, parts, ids, now)
        have = set(ids)
        near = list(dict.fromkeys(d for r in rows for d in map(int, r[-1].split()) if d not in have))
        return rows + self._rows(con, parts, near[:limit], now)

    @staticmethod
    def _rows(con: Any, parts: Partitions, ids: Sequence[int], now: float) -> list[tuple]:
        """The candidates' columns (and ``near``), for rows of visible partitions only."""
        cols = ", ".join(CANDIDATE_COLUMNS)
        where = f"part IN ({placeholders(parts.all)})"
        if parts.expiring:
            where += f" AND (part NOT IN ({placeholders(parts.expiring)}) OR expires_at > ?)"
        args = [*parts.all, *parts.expiring, now] if parts.expiring else list(parts.all)
        rows: list[tuple] = []
        for i in range(0, len(ids), 500):
            chunk = list(ids[i:i + 500])
            rows += con.execute(f"SELECT {cols}, rowid, near FROM mem WHERE rowid IN ({placeholders(chunk)}) "
                                f"AND {where}", (*chunk, *args)).fetchall()
        return rows

    @contextmanager
    def _reading(self, tenant: str) -> Iterator[tuple[Any, tuple]]:
        """The connection a read runs on and what its cached values are valid for."""
        con = self.file.db()
        yield con, _version(con)

    def partitions(self, viewer: Viewer, exclude_kinds: tuple[str, ...] = ()) -> Partitions:
        """The partitions ``viewer`` may see (cached until the index changes)."""
        with self._reading(viewer.tenant) as (con, version):
            return self._partitions(con, viewer, exclude_kinds, version)

    def _partitions(self, con: Any, viewer: Viewer, exclude_kinds: tuple[str, ...], version: tuple) -> Partitions:
        key = ("parts", viewer, exclude_kinds, version)
        hit = self._cache.get(key)
        if hit is None:
            rows = self._read_partitions(con, viewer, exclude_kinds)
            hit = Partitions(tuple(r[0] for r in rows if not r[1]), tuple(r[0] for r in rows if r[1]), viewer.tenant)
            self._remember(key, hit)
        return hit

    @staticmethod
    def _read_partitions(con: Any, viewer: Viewer, exclude_kinds: tuple[str, ...]) -> list[tuple[int, int]]:
        """(id, expiring) of the partitions ``viewer`` may see, by id."""
        where, params = scope_where(viewer, exclude_kinds)
        return con.execute(f"SELECT p.id, p.expiring FROM part p WHERE {where} ORDER BY p.id", params).fetchall()

    def _remember(self, key: tuple, value: Any, nbytes: int | None = None) -> None:
        self._cache.put(key, value, nbytes)

    def _stats(self, con: Any, parts: Partitions, now: float, version: tuple) -> Stats:
        """Count and average lengths of the visible rows: the fixed partitions'
        kept sums, the expiring ones' rows counted at the minute."""
        key = ("stats", parts, int(now // 60) if parts.expiring else 0, version)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        n, terms_sum, ctx_sum = self._read_stats(con, parts, now)
        hit = Stats(int(n), terms_sum / n if n else 0.0, ctx_sum / n if n else 0.0)
        self._remember(key, hit)
        return hit

    @staticmethod
    def _read_stats(con: Any, parts: Partitions, now: float) -> tuple[int, int, int]:
        """(rows, their terms, their context terms) of the visible partitions."""
        n = terms_sum = ctx_sum = 0
        if parts.fixed:
            a, b, c = con.execute(f"SELECT SUM(docs), SUM(nterms), SUM(nctx) FROM part WHERE id IN "
                                  f"({placeholders(parts.fixed)})", parts.fixed).fetchone()
            n, terms_sum, ctx_sum = a or 0, b or 0, c or 0
        if parts.expiring:
            a, b, c = con.execute(f"SELECT COUNT(*), SUM(nterms), SUM(nctx) FROM mem WHERE part IN "
                                  f"({placeholders(parts.expiring)}) AND expires_at > ?",
                                  (*parts.expiring, now)).fetchone()
            n, terms_sum, ctx_sum = n + (a or 0), terms_sum + (b or 0), ctx_sum + (c or 0)
        return n, terms_sum, ctx_sum

    def doc_freqs(self, viewer: Viewer, words: Sequence[str], now: float | None = None,
                  exclude_kinds: Sequence[str] = ()) -> tuple[int, dict[str, int]]:
        """The number of memories ``viewer`` may see and each word's document
        frequency among them (read from the partitions' counts, like ``search``)."""
        if not viewer.known:
            return 0, dict.fromkeys(words, 0)
        if self.store is not None:
            self.catch_up()
        now = time.time() if now is None else now
        with self._reading(viewer.tenant) as (con, version):
            parts = self._partitions(con, viewer, tuple(exclude_kinds), version)
            docs = self._stats(con, parts, now, version).docs
            return docs, (self._df(con, parts, list(dict.fromkeys(words)), now, version) if parts.all
                          else dict.fromkeys(words, 0))

    def word_forms(self, viewer: Viewer, words: Sequence[str], prefixes: Sequence[str], now: float | None = None,
                   exclude_kinds: Sequence[str] = (), limit: int = COMPLETIONS
                   ) -> tuple[int, dict[str, int], dict[str, list[str]]]:
        """The forms of a message's words a memory ``viewer`` may see holds: the number of memories
        it may see, the visible document frequency of each word and of each term that begins with a
        prefix, and those terms — up to ``limit`` a prefix, first in term order (a clipped word's
        full forms: ``prod`` → ``production``; the partitions' counts, a range of their key)."""
        if not viewer.known or not (words or prefixes):
            return 0, {w: 0 for w in words}, {}
        if self.store is not None:
            self.catch_up()
        now = time.time() if now is None else now
        with self._reading(viewer.tenant) as (con, version):
            parts = self._partitions(con, viewer, tuple(exclude_kinds), version)
            completed: dict[str, list[str]] = {}
            for prefix in dict.fromkeys(prefixes) if parts.all else ():
                found = sorted({t for table, ids in (("df", parts.fixed), ("post", parts.expiring)) if ids
                                for (t,) in con.execute(
                                    f"SELECT DISTINCT term FROM {table} WHERE part IN ({placeholders(ids)}) "
                                    f"AND term > ? AND term < ? ORDER BY term LIMIT ?",
                                    (*ids, prefix, prefix + "\U0010ffff", limit))})[:limit]
                if found:
                    completed[prefix] = found
            keys = list(dict.fromkeys([*words, *(t for ts in completed.values() for t in ts)]))
            df = self._df(con, parts, keys, now, version) if parts.all else dict.fromkeys(keys, 0)
            return self._stats(con, parts, now, version).docs, df, completed

    def nothing_visible(self, viewer: Viewer, now: float, exclude_kinds: tuple[str, ...] = ()) -> bool:
        """Whether ``viewer`` may see no memory at all, decided from the kept
        counts (a recall then need not parse its query). Found so, it is kept
        under the tenant's revision with the time it was found at: no memory becomes
        visible without a write of one, which moves the revision, by whichever process
        wrote it, and an expiring memory only leaves the view as time goes on, so from
        that time on the index file is not read. An earlier time (a recall "as the
        store stood then") may still see a memory that expired since: counted."""
        key = ("nothing", viewer, exclude_kinds, self.revision(viewer.tenant))  # (caught up first)
        if KEEP_NOTHING_VISIBLE:
            since = self._cache.get(key)
            if since is not None and now >= since:
                return True
        nothing = self.stats(viewer, now, exclude_kinds).docs == 0
        if nothing and KEEP_NOTHING_VISIBLE:
            self._remember(key, now)  # (earlier than any kept: it was not taken above)
        return nothing

    def stats(self, viewer: Viewer, now: float, exclude_kinds: tuple[str, ...] = ()) -> Stats:
        """Count and average length of the viewer's visible memories."""
        with self._reading(viewer.tenant) as (con, version):
            return self._stats(con, self._partitions(con, viewer, exclude_kinds, version), now, version)

    def _df(self, con: Any, parts: Partitions, words: Sequence[str], now: float, version: tuple) -> dict[str, int]:
        """Each word's document frequency among the visible rows. The counts of
        partitions that never expire change only with the index (whose version
        is in the key): a word's count is read once per set of partitions."""
        if parts.expiring or not words:
            return self._read_df(con, parts, words, now)
        key = ("df", parts, version)
        known = self._cache.get(key)
        if known is None:
            known = {}
            self._remember(key, known)
        todo = [w for w in words if w not in known]
        if todo:
            fresh = self._read_df(con, parts, todo, now)
            if len(known) < DF_WORDS:
                known.update(fresh)
                self._remember(key, known, SLOT_BYTES + len(known) * DF_WORD_BYTES)  # its size grew
            return {w: known[w] if w in known else fresh[w] for w in words}
        return {w: known[w] for w in words}

    def _read_df(self, con: Any, parts: Partitions, words: Sequence[str], now: float) -> dict[str, int]:
        df = dict.fromkeys(words, 0)
        if not words:
            return df
        if parts.fixed:
            for term, n in con.execute(
                    f"SELECT term, SUM(n) FROM df WHERE part IN ({placeholders(parts.fixed)}) "
                    f"AND term IN ({placeholders(words)}) GROUP BY term", (*parts.fixed, *words)):
                df[term] += n
        if parts.expiring:
            for term, n in con.execute(
                    f"SELECT p.term, COUNT(*) FROM post p JOIN mem m ON m.rowid = p.doc "
                    f"WHERE p.part IN ({placeholders(parts.expiring)}) AND p.term IN ({placeholders(words)}) "
                    f"AND m.expires_at > ? GROUP BY p.term", (*parts.expiring, *words, now)):
                df[term] += n
        return df

    @staticmethod
    def _live(parts: Partitions, now: float, doc: str = "p.doc") -> tuple[str, list[Any]]:
        """The extra condition on a posting when some visible partitions expire."""
        if not parts.expiring:
            return "", []
        return (f" AND (p.part NOT IN ({placeholders(parts.expiring)}) OR EXISTS (SELECT 1 FROM mem m "
                f"WHERE m.rowid = {doc} AND m.expires_at > ?))", [*parts.expiring, now])

    def _heaviest(self, con: Any, parts: Partitions, weights: Mapping[str, float], now: float, limit: int
                  ) -> list[int]:
        """The ``limit`` visible rows holding the most weight of these words
        (their visible idf), chosen in SQLite from the postings alone; ties:
        the oldest rows."""
        if not weights:
            return []
        live, args = self._live(parts, now)
        values = ", ".join("(?, ?)" for _ in weights)
        return [r[0] for r in con.execute(
            f"WITH q(term, w) AS (VALUES {values}) SELECT p.doc, ROUND(SUM(q.w), 6) AS held FROM q "
            f"JOIN post p ON p.term = q.term AND p.part IN ({placeholders(parts.all)}) WHERE 1{live} "
            f"GROUP BY p.doc ORDER BY held DESC, p.doc LIMIT ?",
            (*(x for kv in weights.items() for x in kv), *parts.all, *args, limit))]

    def _substring_docs(self, con: Any, tenant: str, parts: Partitions, sub: str, now: float) -> list[int]:
        """Rows of the viewer's partitions holding ``sub``, matched within the
        tenant's rows (another tenant's hits are never read)."""
        live, args = self._live(parts, now, "t.rowid")
        live = live.replace("p.part", "x.part")
        match = f'tacl : {fts_phrase(trigram_token(tenant))} AND statement : {fts_phrase(sub)}'
        rows = con.execute(  # CROSS JOIN: the few hits first, each row then checked (not every row matched)
            f"SELECT t.rowid FROM mem_tri t CROSS JOIN mem x ON x.rowid = t.rowid WHERE mem_tri MATCH ? "
            f"AND x.part IN ({placeholders(parts.all)}){live}",
            (match, *parts.all, *args)).fetchall()
        return [r[0] for r in rows]

    def fetch(self, viewer: Viewer, memory_ids: Sequence[str], now: float | None = None,
              exclude_kinds: Sequence[str] = ()) -> list[Candidate]:
        """The candidates of these memory ids that ``viewer`` may see (the
        visibility check applies again: an id alone grants nothing)."""
        if not viewer.known or not memory_ids:
            return []
        now = time.time() if now is None else now
        with self._reading(viewer.tenant) as (con, version):
            parts = self._partitions(con, viewer, tuple(exclude_kinds), version)
            if not parts.all:
                return []
            # The ids pick the rows (by tenant and memory id); _rows checks each one's partition.
            rowids = self._rowids(con, viewer.tenant, list(memory_ids))
            return [_candidate(r) for r in self._rows(con, parts, rowids, now)]

    @staticmethod
    def _rowids(con: Any, tenant: str, ids: list[str]) -> list[int]:
        rowids: list[int] = []
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            rowids += [r[0] for r in con.execute(f"SELECT rowid FROM mem WHERE tenant = ? AND memory_id IN "
                                                 f"({placeholders(chunk)})", (tenant, *chunk))]
        return rowids

    def count(self, tenant: str) -> int:
        return self.file.db().execute("SELECT COUNT(*) FROM mem WHERE tenant = ?", (tenant,)).fetchone()[0]

    def close(self) -> None:
        self.file.close()



def _version(con: Any) -> tuple[int, int]:
    """What a cached read is valid for: this connection's view of the file
    (``data_version`` moves when another connection commits; this process's
    own writes clear the cache)."""
    return id(con), con.execute("PRAGMA data_version").fetchone()[0]


def store_tenants(store: Any) -> list[str]:
    """Every tenant of the store's memories (its listing, else every tenant the feed ever named)."""
    tenants = getattr(store.memories, "tenants", None)
    if callable(tenants):
        return list(tenants())
    seen: dict[str, None] = {}
    after = 0
    while True:
        batch = store.memories.changes(after, CATCH_UP_BATCH)
        if not batch:
            return list(seen)
        for _, tenant, _ in batch:
            seen[tenant] = None
        after = batch[-1][0]


def _candidate(row: tuple) -> Candidate:
    """A row of ``CANDIDATE_COLUMNS`` followed by its doc and its ``near``."""
    return Candidate(*row[:10], bool(row[10]), *row[11:-2], "memory", *row[-2:])


def thread_of(rec: Any) -> str:
    """Events from one conversation are neighbours: the same evidence session
    and exactly the same visibility (so a document's context never carries
    words a viewer of it could not see). Other kinds stand alone."""
    if rec.kind != "event" or not (rec.evidence_sessions or rec.session):
        return ""
    key = "\x00".join((rec.tenant, rec.project, rec.user, rec.session, rec.purpose, rec.sensitivity,
                       str(rec.expires_at), (rec.evidence_sessions or (rec.session,))[0]))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _refresh_context(con: Any, thread: str, observed: float, doc: int) -> None:
    """Recompute the context of the events around row ``doc`` (observed at
    ``observed``; inserted, or just deleted) in ``thread``, and their
    partitions' context length. Events are ordered by (observed_at, rowid):
    the turns of one session often share one time, and then their order is
    the order they were written in."""
    w = CONTEXT_WINDOW
    cols = "rowid, observed_at, terms, nctx, part"
    before = con.execute(f"SELECT {cols} FROM mem WHERE thread = ? AND (observed_at, rowid) < (?, ?) "
                         "ORDER BY observed_at DESC, rowid DESC LIMIT ?", (thread, observed, doc, 2 * w)).fetchall()
    after = con.execute(f"SELECT {cols} FROM mem WHERE thread = ? AND (observed_at, rowid) >= (?, ?) "
                        "ORDER BY observed_at, rowid LIMIT ?", (thread, observed, doc, 2 * w + 1)).fetchall()
    for row, ctx, n, near in context_of(before, after):
        if con.execute("UPDATE mem SET ctx = ?, nctx = ?, near = ? WHERE rowid = ? AND (ctx != ? OR near != ?)",
                       (ctx, n, near, row[0], ctx, near)).rowcount and n != row[3]:
            con.execute("UPDATE part SET nctx = nctx + ? WHERE id = ?", (n - row[3], row[4]))


def context_of(before: Sequence[tuple], after: Sequence[tuple]) -> Iterator[tuple[tuple, str, int, str]]:
    """The new context of each event around an edit: ``before`` (nearest
    first) and ``after`` are the thread's rows ``(doc, observed_at, terms,
    nctx, part)`` on each side of it; yields ``(row, ctx, nctx, near)`` for
    the rows within ``CONTEXT_WINDOW`` of it."""
    w = CONTEXT_WINDOW
    rows = list(before)[::-1] + list(after)
    at = len(before)  # where the edit was: rows within w of it have new neighbours
    for i in range(max(0, at - w), min(len(rows), at + w + 1)):
        around = [r for j, r in enumerate(rows) if j != i and abs(j - i) <= w]
        ctx = " ".join(r[2] for r in around)
        yield rows[i], ctx, len(ctx.split()) if ctx else 0, " ".join(str(r[0]) for r in around)


def open_memory_index(data_dir: str | Path, store: Any) -> Any:
    """The store's own memory index when it keeps one in its database
    (PostgreSQL: one index every replica shares), else the SQLite index
    under ``data_dir`` derived from the store's change feed."""
    own = getattr(store, "memory_index", None)
    return own() if callable(own) else MemoryIndex.open(data_dir, store)


def date_terms(observed: float) -> list[str]:
    """The month and year a memory was observed (UTC), as words: "what did
    we decide in March" finds March's memories."""
    if observed <= 0:
        return []
    day = datetime.fromtimestamp(observed, timezone.utc)
    return terms(day.strftime("%B %Y"))
