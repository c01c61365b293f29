"""The derived lexical index of memories: SQLite FTS5 beside the LMDB store.

One file, ``<data_dir>/recall/memories.db``. A row per servable memory
(``status == "active"``, not quarantined; anything else is removed from the
index), carrying the columns visibility is decided on: tenant, project,
user, session, purpose, sensitivity, expiry. Two FTS5 tables index it:

- ``mem_terms``: the statement's terms (``memory_terms.terms``: words,
  stems, identifier parts, CJK bigrams) and an ``acl`` column holding the
  tenant's token, so a MATCH only ever walks that tenant's postings;
- ``mem_tri``: the statement under the ``trigram`` tokenizer, for substrings
  of code identifiers and text in scripts without spaces.

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
from datetime import datetime, timezone
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .memory_terms import fts_query, terms
from .sqlite_index import SQLiteFile, Viewer, acl_token, attach, placeholders, sensitivity_rank

log = logging.getLogger("ctxproxy.store.recall")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v);
CREATE TABLE IF NOT EXISTS mem(
    rowid INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL, memory_id TEXT NOT NULL,
    project TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL, purpose TEXT NOT NULL,
    sensitivity INTEGER NOT NULL, expires_at REAL, observed_at REAL NOT NULL, evergreen INTEGER NOT NULL,
    kind TEXT NOT NULL, origin TEXT NOT NULL, confidence REAL NOT NULL, external_id TEXT NOT NULL,
    evidence_ref TEXT NOT NULL, evidence_sessions TEXT NOT NULL, revision INTEGER NOT NULL,
    statement TEXT NOT NULL, terms TEXT NOT NULL, nterms INTEGER NOT NULL, acl TEXT NOT NULL,
    thread TEXT NOT NULL, ctx TEXT NOT NULL, nctx INTEGER NOT NULL,
    UNIQUE(tenant, memory_id));
CREATE INDEX IF NOT EXISTS mem_scope ON mem(tenant, user, project);
-- The visibility columns again, narrow: the candidate query checks one row of
-- this per posting, so it should touch as few pages as possible.
CREATE TABLE IF NOT EXISTS vis(
    rowid INTEGER PRIMARY KEY, tenant TEXT NOT NULL, project TEXT NOT NULL, user TEXT NOT NULL,
    session TEXT NOT NULL, purpose TEXT NOT NULL, sensitivity INTEGER NOT NULL, expires_at REAL,
    kind TEXT NOT NULL, nterms INTEGER NOT NULL, nctx INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS vis_scope ON vis(tenant, user, project);
CREATE INDEX IF NOT EXISTS mem_thread ON mem(thread, observed_at);
CREATE VIRTUAL TABLE IF NOT EXISTS mem_terms USING fts5(
    terms, ctx, acl, content='mem', content_rowid='rowid', tokenize="unicode61 remove_diacritics 0 tokenchars '_'");
CREATE VIRTUAL TABLE IF NOT EXISTS mem_tri USING fts5(
    statement, content='mem', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS mem_ai AFTER INSERT ON mem BEGIN
    INSERT INTO mem_terms(rowid, terms, ctx, acl) VALUES (new.rowid, new.terms, new.ctx, new.acl);
    INSERT INTO mem_tri(rowid, statement) VALUES (new.rowid, new.statement);
    INSERT INTO vis VALUES (new.rowid, new.tenant, new.project, new.user, new.session, new.purpose,
                            new.sensitivity, new.expires_at, new.kind, new.nterms, new.nctx);
END;
CREATE TRIGGER IF NOT EXISTS mem_ad AFTER DELETE ON mem BEGIN
    DELETE FROM vis WHERE rowid = old.rowid;
    INSERT INTO mem_terms(mem_terms, rowid, terms, ctx, acl) VALUES ('delete', old.rowid, old.terms, old.ctx, old.acl);
    INSERT INTO mem_tri(mem_tri, rowid, statement) VALUES ('delete', old.rowid, old.statement);
END;
CREATE TRIGGER IF NOT EXISTS mem_au AFTER UPDATE OF ctx ON mem BEGIN
    UPDATE vis SET nctx = new.nctx WHERE rowid = new.rowid;
    INSERT INTO mem_terms(mem_terms, rowid, terms, ctx, acl) VALUES ('delete', old.rowid, old.terms, old.ctx, old.acl);
    INSERT INTO mem_terms(rowid, terms, ctx, acl) VALUES (new.rowid, new.terms, new.ctx, new.acl);
END;
"""
FTS_TABLES = ("mem_terms", "mem_tri")
CATCH_UP_BATCH = 1000
POOL = 300  # candidates per search scored exactly (the rest: fewer or rarer query terms)
MAX_TERMS = 48  # query terms looked up (bits of one mask, with 8 substrings)

CONTEXT_WINDOW = 2  # an event's document also holds this many neighbouring events on each side

_COLUMNS = ("memory_id", "external_id", "kind", "origin", "project", "user", "session", "purpose",
            "sensitivity", "observed_at", "evergreen", "confidence", "evidence_ref", "statement", "terms",
            "nterms", "ctx", "nctx")


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


def visibility(viewer: Viewer, now: float, exclude_kinds: Sequence[str] = (), alias: str = "m"
               ) -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) a viewer's candidates must pass:
    the tenant, each scope column empty or the viewer's (sessions: its tree),
    the sensitivity ceiling, not expired."""
    sessions = tuple(dict.fromkeys(("", *viewer.sessions)))
    where = (f"{alias}.tenant = ? AND {alias}.project IN ('', ?) AND {alias}.user IN ('', ?) "
             f"AND {alias}.purpose IN ('', ?) AND {alias}.session IN ({placeholders(sessions)}) "
             f"AND {alias}.sensitivity <= ? AND ({alias}.expires_at IS NULL OR {alias}.expires_at > ?)")
    params = [viewer.tenant, viewer.project, viewer.user, viewer.purpose, *sessions,
              min(sensitivity_rank(viewer.ceiling), 2), now]
    if exclude_kinds:
        where += f" AND {alias}.kind NOT IN ({placeholders(exclude_kinds)})"
        params += list(exclude_kinds)
    return where, params


FORMAT = "2"  # of the indexed rows; another value is re-indexed at open


def user_token(tenant: str, user: str) -> str:
    return acl_token("u", tenant + "\x00" + user)


def acl_of(tenant: str, user: str) -> str:
    """The row's scope tokens: its tenant, and its user ("" = not user-bound)."""
    return f"{acl_token('t', tenant)} {user_token(tenant, user)}"


def _servable(rec: Any) -> bool:
    return rec is not None and rec.status == "active" and not rec.quarantine


class MemoryIndex:
    """The memory FTS index of one store (see the module docstring)."""

    name = "recall.memories"

    def __init__(self, path: str | Path, store: Any = None):
        self.file = SQLiteFile(path, SCHEMA)
        self.store = store
        if self.file.meta("format") != FORMAT:  # rows of an older layout: index again from the feed
            con = self.file.db()
            con.execute("BEGIN IMMEDIATE")
            con.execute("DELETE FROM mem")
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', 0), ('format', ?)", (FORMAT,))
            con.execute("COMMIT")
        self._catch_lock = threading.Lock()
        self._stats: dict[tuple, Stats] = {}

    @classmethod
    def open(cls, data_dir: str | Path, store: Any) -> "MemoryIndex":
        """The index under ``data_dir``, registered on ``store.derived``."""
        return attach(cls, Path(data_dir) / "recall" / "memories.db", store, store)

    def generation(self) -> int:
        """Changes whenever something was forgotten (a cached result is stale)."""
        return int(self.file.meta("forgets", 0) or 0)

    # -- writing -----------------------------------------------------------------
    def watermark(self) -> int:
        return int(self.file.meta("seq", 0) or 0)

    def upsert(self, records: Iterable[Any], con: Any = None) -> int:
        """Index (or drop, when not servable) each record; one transaction."""
        con = con or self.file.db()
        n = 0
        own = not con.in_transaction
        if own:
            con.execute("BEGIN IMMEDIATE")
        try:
            for rec in records:
                n += self._apply(con, rec)
            if own:
                con.execute("COMMIT")
        except BaseException:
            if own:
                con.execute("ROLLBACK")
            raise
        self._stats.clear()
        return n

    def _apply(self, con: Any, rec: Any) -> int:
        self._delete(con, "tenant = ? AND memory_id = ?", (rec.tenant, rec.memory_id))
        if not _servable(rec):
            return 0
        observed = float(rec.observed_at or rec.created_at or 0.0)
        found = terms(rec.statement) + date_terms(observed)
        thread = _thread(rec)
        con.execute(
            "INSERT INTO mem(tenant, memory_id, project, user, session, purpose, sensitivity, expires_at, "
            "observed_at, evergreen, kind, origin, confidence, external_id, evidence_ref, evidence_sessions, "
            "revision, statement, terms, nterms, acl, thread, ctx, nctx) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'',0)",
            (rec.tenant, rec.memory_id, rec.project, rec.user, rec.session, rec.purpose,
             sensitivity_rank(rec.sensitivity), rec.expires_at, observed,
             int(bool(rec.evergreen)), rec.kind, rec.origin, float(rec.confidence), rec.external_id,
             rec.evidence_ref, " ".join(rec.evidence_sessions), int(rec.revision), rec.statement,
             " ".join(found), len(found), acl_of(rec.tenant, rec.user), thread))
        if thread:
            _refresh_context(con, thread, observed)
        return 1

    def _delete(self, con: Any, where: str, params: Sequence[Any]) -> int:
        """Delete rows; the neighbours of a deleted event forget its terms too."""
        threads = con.execute(f"SELECT thread, observed_at FROM mem WHERE {where} AND thread != ''",
                              params).fetchall()
        n = con.execute(f"DELETE FROM mem WHERE {where}", params).rowcount
        for thread, observed in threads:
            _refresh_context(con, thread, observed)
        return n

    def catch_up(self) -> int:
        """Apply the store's memory changes after this index's watermark.
        Cheap when there are none; safe from several threads and processes
        (each batch and its watermark commit together)."""
        memories = self.store.memories
        if memories.last_seq() <= self.watermark():
            return 0
        applied = 0
        with self._catch_lock:
            con = self.file.db()
            while True:
                con.execute("BEGIN IMMEDIATE")  # another process may have moved it meanwhile
                try:
                    after = int(self.file.meta("seq", 0) or 0)
                    changes = memories.changes(after, CATCH_UP_BATCH)
                    if not changes:
                        con.execute("COMMIT")
                        break
                    latest: dict[tuple[str, str], int] = {}
                    for seq, tenant, memory_id in changes:
                        latest[(tenant, memory_id)] = seq
                    for tenant, memory_id in latest:
                        rec = memories.get(tenant, memory_id)
                        if rec is None:
                            self._delete(con, "tenant = ? AND memory_id = ?", (tenant, memory_id))
                        else:
                            self._apply(con, rec)
                    con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', ?)", (changes[-1][0],))
                    con.execute("COMMIT")
                    applied += len(latest)
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                if len(changes) < CATCH_UP_BATCH:
                    break
        if applied:
            self._stats.clear()
        return applied

    def rebuild(self) -> int:
        """Empty the index and index every tenant's memories from the store
        again, up to the feed's current position (``ctxproxy memory reindex``)."""
        memories = self.store.memories
        with self._catch_lock:
            seq = memories.last_seq()
            con = self.file.db()
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("DELETE FROM mem")
                con.execute("DELETE FROM vis")
                for table in FTS_TABLES:
                    con.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")
                n = 0
                for tenant in self._tenants():
                    for rec in memories.iter_tenant(tenant):
                        n += self._apply(con, rec)
                con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seq', ?)", (seq,))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        self._stats.clear()
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
        clauses, params = [], []
        ids = list(memory_ids)
        if "memory" in subject:
            ids.append(str(subject["memory"]))
        for key, column in (("user", "user"), ("project", "project"), ("session", "session")):
            if subject.get(key):
                clauses.append(f"{column} = ?")
                params.append(str(subject[key]))
        if subject.get("session"):
            clauses.append("instr(' ' || evidence_sessions || ' ', ' ' || ? || ' ') > 0")
            params.append(str(subject["session"]))
        removed = 0
        con.execute("BEGIN IMMEDIATE")
        try:
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                removed += self._delete(con, f"tenant = ? AND memory_id IN ({placeholders(chunk)})",
                                        (tenant, *chunk))
            if clauses:
                removed += self._delete(con, f"tenant = ? AND ({' OR '.join(clauses)})", (tenant, *params))
            self.file.bump(con, "forgets")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._stats.clear()
        return {"memory_index_rows": removed}

    def erase_free_pages(self) -> None:
        self.file.erase_free_pages(FTS_TABLES)

    # -- reading -------------------------------------------------------------------
    def search(self, viewer: Viewer, words: Sequence[str], substrings: Sequence[str] = (),
               now: float | None = None, limit: int = POOL, exclude_kinds: Sequence[str] = ()
               ) -> tuple[list[Candidate], Stats]:
        """The memories ``viewer`` may see that hold any of ``words`` (terms)
        or ``substrings`` (trigram) — at most ``limit``, the best by the query
        terms they hold weighted by their visible idf — and the statistics
        over what it may see: its document count and lengths, and each
        term's document frequency among its visible documents."""
        if not viewer.known or (not words and not substrings):
            return [], Stats(0, 0.0)
        if self.store is not None:
            self.catch_up()
        now = time.time() if now is None else now
        where, params = visibility(viewer, now, exclude_kinds)
        stats = self.stats(viewer, now, tuple(exclude_kinds))
        con = self.file.db()
        keys = list(words)[:MAX_TERMS] + ["\x00" + s.lower() for s in substrings if len(s) >= 3][:8]
        # The tenant and user scope in the MATCH too: SQLite intersects those
        # postings before a row is read (the WHERE below is the full check).
        # (A user token names its tenant too.)
        acl = (f'acl : ("{user_token(viewer.tenant, "")}"'
               + (f' OR "{user_token(viewer.tenant, viewer.user)}")' if viewer.user else ")"))
        # One pass in SQLite: for every visible document holding any key, the
        # set of keys it holds (a bit mask). The visibility check is part of
        # this query: nothing hidden is ever counted or ranked.
        parts, args = [], []
        for i, key in enumerate(keys):
            if key.startswith("\x00"):
                parts.append(f"SELECT rowid, {1 << i} AS b FROM mem_tri WHERE mem_tri MATCH ?")
                args.append('"' + key[1:].replace('"', '""') + '"')
            else:
                parts.append(f"SELECT rowid, {1 << i} AS b FROM mem_terms WHERE mem_terms MATCH ?")
                args.append(f'{acl} AND terms : "{key.replace(chr(34), chr(34) * 2)}"')
        masks = con.execute(f"SELECT u.rowid, SUM(DISTINCT u.b) FROM ({' UNION ALL '.join(parts)}) u "
                            f"JOIN vis m ON m.rowid = u.rowid WHERE {where} GROUP BY u.rowid",
                            (*args, *params)).fetchall()
        df = {key: 0 for key in keys}
        for mask, n in Counter(m for _, m in masks).items():
            for i, key in enumerate(keys):
                if mask >> i & 1:
                    df[key] += n
        n_docs = max(stats.docs, 1)
        weight = [math.log(1.0 + (n_docs - df[k] + 0.5) / (df[k] + 0.5)) for k in keys]
        if len(masks) > limit:  # the best by visible idf of what they hold; exact BM25 ranks them next
            worth: dict[int, float] = {}
            for _, mask in masks:
                if mask not in worth:
                    worth[mask] = -sum(w for i, w in enumerate(weight) if mask >> i & 1)
            masks = heapq.nsmallest(limit, masks, key=lambda r: (worth[r[1]], r[0]))
        ids = [r[0] for r in masks]
        cols = ", ".join(_COLUMNS)
        rows = []
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            rows += con.execute(f"SELECT {cols} FROM mem WHERE rowid IN ({placeholders(chunk)})", chunk).fetchall()
        rows.sort(key=lambda r: r[0])
        return ([Candidate(*r[:10], bool(r[10]), *r[11:]) for r in rows],
                Stats(stats.docs, stats.avg_terms, stats.avg_ctx, df))

    def stats(self, viewer: Viewer, now: float, exclude_kinds: tuple[str, ...] = ()) -> Stats:
        """Count and average length of the viewer's visible memories (cached
        until the index changes; expiry read at the minute)."""
        con = self.file.db()
        version = con.execute("PRAGMA data_version").fetchone()[0]
        key = (viewer, exclude_kinds, int(now // 60), version)
        hit = self._stats.get(key)
        if hit is not None:
            return hit
        where, params = visibility(viewer, now, exclude_kinds)
        n, avg, avg_ctx = con.execute(f"SELECT COUNT(*), AVG(m.nterms), AVG(m.nctx) FROM vis m WHERE {where}",
                                      params).fetchone()
        if len(self._stats) > 4096:
            self._stats.clear()
        hit = self._stats[key] = Stats(int(n or 0), float(avg or 0.0), float(avg_ctx or 0.0))
        return hit

    def fetch(self, viewer: Viewer, memory_ids: Sequence[str], now: float | None = None,
              exclude_kinds: Sequence[str] = ()) -> list[Candidate]:
        """The candidates of these memory ids that ``viewer`` may see (the
        visibility WHERE applies again: an id alone grants nothing)."""
        if not viewer.known or not memory_ids:
            return []
        now = time.time() if now is None else now
        where, params = visibility(viewer, now, exclude_kinds)
        cols = ", ".join("m." + c for c in _COLUMNS)
        con = self.file.db()
        rows = []
        ids = list(memory_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            # The ids pick the rows (through UNIQUE(tenant, memory_id)); the WHERE clause checks each.
            rows += con.execute(f"SELECT {cols} FROM mem m WHERE m.rowid IN (SELECT rowid FROM mem WHERE tenant = ? "
                                f"AND memory_id IN ({placeholders(chunk)})) AND {where}",
                                (viewer.tenant, *chunk, *params)).fetchall()
        return [Candidate(*r[:10], bool(r[10]), *r[11:]) for r in rows]

    def count(self, tenant: str) -> int:
        return self.file.db().execute("SELECT COUNT(*) FROM mem WHERE tenant = ?", (tenant,)).fetchone()[0]

    def close(self) -> None:
        self.file.close()



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


def _thread(rec: Any) -> str:
    """Events from one conversation are neighbours: the same evidence session
    and exactly the same visibility (so a document's context never carries
    words a viewer of it could not see). Other kinds stand alone."""
    if rec.kind != "event" or not (rec.evidence_sessions or rec.session):
        return ""
    key = "\x00".join((rec.tenant, rec.project, rec.user, rec.session, rec.purpose, rec.sensitivity,
                       str(rec.expires_at), (rec.evidence_sessions or (rec.session,))[0]))
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def _refresh_context(con: Any, thread: str, observed: float) -> None:
    """Recompute the context of the events around ``observed`` in ``thread``."""
    w = CONTEXT_WINDOW
    before = con.execute("SELECT rowid, observed_at, terms FROM mem WHERE thread = ? AND observed_at < ? "
                         "ORDER BY observed_at DESC, rowid DESC LIMIT ?", (thread, observed, 2 * w)).fetchall()
    after = con.execute("SELECT rowid, observed_at, terms FROM mem WHERE thread = ? AND observed_at >= ? "
                        "ORDER BY observed_at, rowid LIMIT ?", (thread, observed, 2 * w + 1)).fetchall()
    rows = before[::-1] + after
    at = len(before)  # where the edit was: rows within w of it have new neighbours
    for i in range(max(0, at - w), min(len(rows), at + w + 1)):
        ctx = " ".join(r[2] for j, r in enumerate(rows) if j != i and abs(j - i) <= w)
        con.execute("UPDATE mem SET ctx = ?, nctx = ? WHERE rowid = ? AND ctx != ?",
                    (ctx, len(ctx.split()) if ctx else 0, rows[i][0], ctx))


def date_terms(observed: float) -> list[str]:
    """The month and year a memory was observed (UTC), as words: "what did
    we decide in March" finds March's memories."""
    if observed <= 0:
        return []
    day = datetime.fromtimestamp(observed, timezone.utc)
    return terms(day.strftime("%B %Y"))
