"""The per-session index: each turn's redacted user and assistant text.

One SQLite file, ``<data_dir>/recall/sessions.db``, derived like the memory
index (a cache: ``forget`` erases from it, ``erase_free_pages`` scrubs it):

- ``sessions``: one row per session the proxy saw — its tenant, user,
  project and parent. The first turn of a session fixes them (first write
  wins), and a parent is kept only when it is a session already known for
  the same tenant and the same user: a forged ``X-Ctx-Parent-Session``
  naming someone else's session, or re-parenting an existing session, links
  nothing;
- ``turns``: a row per turn and role (``user``, ``assistant``, ``tool``)
  with the visibility columns (tenant, session, user, project, purpose) and
  FTS5 tables over its terms and its trigrams, as for memories.

A session tree is a session, its ancestors and its descendants, all of the
same user. Search sees the caller's tree by default; ``widen`` may be
``same_user`` (every session of the user) or ``same_project`` (the user's
sessions in the project) — never another tenant, never another user.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

from . import surrogates
from .memory_index import Candidate, Stats
from .memory_terms import fts_phrase, fts_query, terms
from .sqlite_index import SQLiteFile, Viewer, acl_token, attach, placeholders, trigram_token

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v);
CREATE TABLE IF NOT EXISTS sessions(
    tenant TEXT NOT NULL, session TEXT NOT NULL, parent TEXT NOT NULL, user TEXT NOT NULL,
    project TEXT NOT NULL, first_seen REAL NOT NULL, PRIMARY KEY(tenant, session));
CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(tenant, parent);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions(tenant, user, project);
CREATE TABLE IF NOT EXISTS turns(
    rowid INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL, session TEXT NOT NULL, turn_id TEXT NOT NULL, role TEXT NOT NULL,
    user TEXT NOT NULL, project TEXT NOT NULL, purpose TEXT NOT NULL, observed_at REAL NOT NULL,
    text TEXT NOT NULL, terms TEXT NOT NULL, nterms INTEGER NOT NULL, acl TEXT NOT NULL,
    tacl TEXT NOT NULL DEFAULT '',  -- the tenant as one trigram (sqlite_index.trigram_token)
    UNIQUE(tenant, session, turn_id, role));
CREATE INDEX IF NOT EXISTS turns_scope ON turns(tenant, session);
CREATE INDEX IF NOT EXISTS turns_user ON turns(tenant, user);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_terms USING fts5(
    terms, acl, content='turns', content_rowid='rowid', tokenize="unicode61 remove_diacritics 0 tokenchars '_'");
CREATE VIRTUAL TABLE IF NOT EXISTS turns_tri USING fts5(
    text, tacl, content='turns', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS turns_ai AFTER INSERT ON turns BEGIN
    INSERT INTO turns_terms(rowid, terms, acl) VALUES (new.rowid, new.terms, new.acl);
    INSERT INTO turns_tri(rowid, text, tacl) VALUES (new.rowid, new.text, new.tacl);
END;
CREATE TRIGGER IF NOT EXISTS turns_ad AFTER DELETE ON turns BEGIN
    INSERT INTO turns_terms(turns_terms, rowid, terms, acl) VALUES ('delete', old.rowid, old.terms, old.acl);
    INSERT INTO turns_tri(turns_tri, rowid, text, tacl) VALUES ('delete', old.rowid, old.text, old.tacl);
END;
"""


def _without_old_substring_index(con: Any) -> None:
    """Before the schema: a substring index made before it held the tenant
    (so a substring match read every tenant's rows) is dropped with the
    triggers that feed it, the turns get their tenant's trigram token, and
    the index is made again and rebuilt from them."""
    row = con.execute("SELECT sql FROM sqlite_master WHERE name = 'turns_tri'").fetchone()
    if row is None or "tacl" in row[0]:
        return
    con.execute("BEGIN IMMEDIATE")
    for statement in ("DROP TRIGGER IF EXISTS turns_ai", "DROP TRIGGER IF EXISTS turns_ad", "DROP TABLE turns_tri"):
        con.execute(statement)
    if "tacl" not in {r[1] for r in con.execute("PRAGMA table_info(turns)")}:
        con.execute("ALTER TABLE turns ADD COLUMN tacl TEXT NOT NULL DEFAULT ''")
    for (tenant,) in con.execute("SELECT DISTINCT tenant FROM turns").fetchall():
        con.execute("UPDATE turns SET tacl = ? WHERE tenant = ?", (trigram_token(tenant), tenant))
    con.execute("COMMIT")
    con.executescript(SCHEMA)
    con.execute("INSERT INTO turns_tri(turns_tri) VALUES ('rebuild')")


FTS_TABLES = ("turns_terms", "turns_tri")
WIDEN = ("tree", "same_user", "same_project")
MAX_TURN_CHARS = 20000  # of one role's text in one turn
MAX_TREE = 256  # sessions in one tree (a bound on the IN list)
MAX_CANDIDATES = 2000  # turns of one tree; document frequencies are counted among them


def substring_match(tenant: str, substrings: Sequence[str]) -> str:
    """The trigram index's query for any of ``substrings`` in ``tenant``'s
    turns: made within the tenant's rows, as the word match is, so other
    tenants' hits are never read (nor is the time to read them spent)."""
    return f'tacl : {fts_phrase(trigram_token(tenant))} AND text : ({" OR ".join(map(fts_phrase, substrings))})'


class TurnTexts(NamedTuple):
    """One turn's texts for the index: ``texts`` are ``(role, text)``."""

    tenant: str
    session: str
    turn_id: str
    texts: tuple[tuple[str, str], ...]
    user: str = ""
    project: str = ""
    purpose: str = ""
    observed_at: float = 0.0


SESSION_TREE, SESSION_TURNS = "session_tree", "session_turns"  # what a copy between backends carries
RECORD_FIELDS = {
    SESSION_TREE: ("tenant", "session", "parent", "user", "project", "first_seen"),
    SESSION_TURNS: ("tenant", "session", "turn_id", "role", "user", "project", "purpose", "observed_at", "text",
                    "terms", "nterms"),
}


def record(kind: str, values: Sequence[Any]) -> dict[str, Any]:
    """A row of ``kind`` as a copy carries it (times as floats, lengths as ints: one form on every backend)."""
    out = dict(zip(RECORD_FIELDS[kind], values))
    for f in ("first_seen", "observed_at"):
        if f in out:
            out[f] = float(out[f])
    if "nterms" in out:
        out["nterms"] = int(out["nterms"])
    return out


HIT_COLUMNS = ("turn_id", "role", "session", "user", "project", "purpose", "observed_at", "text", "terms", "nterms")


def index_rows(t: TurnTexts) -> list[tuple[str, str, list[str]]]:
    """(role, text as indexed, its terms) of each of a turn's texts worth a row."""
    out = []
    for role, text in t.texts:
        # NUL as U+FFFD too: a PostgreSQL text cannot hold it, and both backends keep one form
        text = surrogates.text(text[:MAX_TURN_CHARS]).replace("\x00", "\ufffd")
        if text.strip():
            out.append((role, text, terms(text)))
    return out


def hits(by_word: Sequence[tuple], by_substring: Sequence[tuple], limit: int) -> list[Candidate]:
    """The candidates of a search: the rows holding a word, then (while fewer
    than ``limit``) those holding a substring, each row once, in that order."""
    rows: dict[tuple, tuple] = {}
    for r in by_word:
        rows[(r[2], r[0], r[1])] = r
    if len(rows) < limit:
        for r in by_substring:
            rows.setdefault((r[2], r[0], r[1]), r)
    return [Candidate(memory_id=f"turn:{r[0]}:{r[1]}", external_id="", kind="event", origin=r[1],
                      project=r[4], user=r[3], session=r[2], purpose=r[5], sensitivity=1, observed_at=float(r[6]),
                      evergreen=False, confidence=1.0, evidence_ref=f"session:{r[2]}/turn:{r[0]}",
                      statement=r[7], terms=r[8], nterms=int(r[9]), source="session") for r in rows.values()]


def assemble_tree(session: str, down: Sequence[str], up: Sequence[str], owned: set[str]) -> tuple[str, ...]:
    """A session tree from its descendants (nearest first, the session itself
    among them) and its ancestors (nearest first): each once, only sessions of
    the user (``owned``) besides the session itself, at most ``MAX_TREE``."""
    ids = dict.fromkeys([session, *down, *up])
    return tuple(s for s in ids if s == session or s in owned)[:MAX_TREE]


def open_session_index(data_dir: str | Path, store: Any) -> Any:
    """The store's own session index when it keeps one in its database
    (PostgreSQL: one index every replica shares), else the SQLite file under
    ``data_dir``."""
    own = getattr(store, "session_index", None)
    return own() if callable(own) else SessionIndex.open(data_dir, store)


class SessionIndex:
    name = "recall.sessions"

    def __init__(self, path: str | Path):
        self.file = SQLiteFile(path, SCHEMA, prepare=_without_old_substring_index)

    @classmethod
    def open(cls, data_dir: str | Path, store: Any = None) -> "SessionIndex":
        return attach(cls, Path(data_dir) / "recall" / "sessions.db", store)

    def generation(self) -> int:
        return int(self.file.meta("forgets", 0) or 0)

    # -- sessions and trees ----------------------------------------------------------
    def note_session(self, tenant: str, session: str, user: str, project: str = "", parent: str = "",
                     now: float | None = None, batch: Any = None) -> None:
        """Record a session at its first turn (later calls change nothing).
        ``batch``: the store's batch the caller writes in (a file of its own
        has its own transactions: it is not needed here)."""
        if not tenant or not session:
            return
        con = self.file.db()
        if parent and not self._may_parent(tenant, parent, user, session):
            parent = ""
        con.execute("INSERT OR IGNORE INTO sessions(tenant, session, parent, user, project, first_seen) "
                    "VALUES (?,?,?,?,?,?)", (tenant, session, parent, user, project,
                                             time.time() if now is None else now))

    def _may_parent(self, tenant: str, parent: str, user: str, session: str) -> bool:
        if parent == session:
            return False
        row = self.file.db().execute("SELECT user FROM sessions WHERE tenant = ? AND session = ?",
                                     (tenant, parent)).fetchone()
        return row is not None and row[0] == user

    def tree(self, tenant: str, session: str, user: str, parent: str = "") -> tuple[str, ...]:
        """The session, its ancestors and descendants — only sessions of ``user``.
        A session not recorded yet counts ``parent`` as its own if that may be
        its parent (what ``note_session`` will record)."""
        return self.tree_of(tenant, session, user, parent)[0]

    def tree_of(self, tenant: str, session: str, user: str, parent: str = "") -> tuple[tuple[str, ...], str | None]:
        """``tree`` and the user the session is recorded for (None: not recorded
        yet), read together: a turn asks for both."""
        if not tenant or not session:
            return (), None
        con = self.file.db()
        row = con.execute("SELECT parent, user FROM sessions WHERE tenant = ? AND session = ?",
                          (tenant, session)).fetchone()
        if row is not None and row[1] != user:
            return (), row[1]  # someone else's session id: nothing of it is this caller's
        start_parent = row[0] if row is not None else (parent if parent and self._may_parent(
            tenant, parent, user, session) else "")
        up = con.execute(
            "WITH RECURSIVE up(s, n) AS (SELECT ?, 0 UNION SELECT p.parent, up.n + 1 FROM sessions p JOIN up "
            "ON p.tenant = ? AND p.session = up.s WHERE p.parent != '' AND p.user = ? AND up.n < ?) "
            "SELECT s FROM up ORDER BY n", (start_parent, tenant, user, MAX_TREE)).fetchall() if start_parent else []
        down = con.execute(
            "WITH RECURSIVE down(s, n) AS (SELECT ?, 0 UNION SELECT c.session, down.n + 1 FROM sessions c JOIN down "
            "ON c.tenant = ? AND c.parent = down.s WHERE c.user = ? AND down.n < ?) "
            "SELECT s FROM down ORDER BY n, s LIMIT ?", (session, tenant, user, MAX_TREE, MAX_TREE)).fetchall()
        ids = dict.fromkeys([session, *(r[0] for r in down), *(r[0] for r in up)])
        owners = self._owned(tenant, user, [s for s in ids if s != session])
        return assemble_tree(session, [r[0] for r in down], [r[0] for r in up], owners), \
            (None if row is None else row[1])

    def _owned(self, tenant: str, user: str, sessions: list[str]) -> set[str]:
        if not sessions:
            return set()
        rows = self.file.db().execute(
            f"SELECT session FROM sessions WHERE tenant = ? AND user = ? AND session IN ({placeholders(sessions)})",
            (tenant, user, *sessions)).fetchall()
        return {r[0] for r in rows}

    def visible_sessions(self, viewer: Viewer, session: str, widen: str = "tree", parent: str = "") -> tuple[str, ...]:
        """The sessions ``viewer`` may search from ``session``: its tree, or
        wider by explicit config (``same_user``, ``same_project``)."""
        tree = self.tree(viewer.tenant, session, viewer.user, parent) if session else ()
        if widen == "tree" or not viewer.user:
            return tree
        recent = self._recent(viewer.tenant, viewer.user, viewer.project if widen == "same_project" else None)
        return tuple(dict.fromkeys([*tree, *recent]))[:MAX_TREE]

    def _recent(self, tenant: str, user: str, project: str | None) -> list[str]:
        """The user's sessions (in ``project`` unless None), newest first, at most ``MAX_TREE``."""
        sql = "SELECT session FROM sessions WHERE tenant = ? AND user = ?"
        params: list[Any] = [tenant, user]
        if project is not None:
            sql += " AND project = ?"
            params.append(project)
        sql += " ORDER BY first_seen DESC, session LIMIT ?"
        params.append(MAX_TREE)
        return [r[0] for r in self.file.db().execute(sql, params)]

    def owner(self, tenant: str, session: str) -> str | None:
        """The user a session is recorded for (None: not known)."""
        row = self.file.db().execute("SELECT user FROM sessions WHERE tenant = ? AND session = ?",
                                     (tenant, session)).fetchone()
        return None if row is None else row[0]

    def sessions_of(self, tenant: str, user: str) -> tuple[str, ...]:
        return tuple(self._recent(tenant, user, None))

    # -- turns -----------------------------------------------------------------------
    def add_turn(self, tenant: str, session: str, turn_id: str, texts: Iterable[tuple[str, str]], *,
                 user: str = "", project: str = "", purpose: str = "", observed_at: float | None = None) -> int:
        """Index one turn's texts (``(role, text)``); a replayed turn replaces its rows."""
        return self.add_turns([TurnTexts(tenant, session, turn_id, tuple(texts), user, project, purpose,
                                         time.time() if observed_at is None else observed_at)])

    def add_turns(self, turns: Sequence["TurnTexts"], batch: Any = None) -> int:
        """Index several turns in one transaction (one commit for all, as the
        background writer gathers them); if one fails, each goes alone, so one
        bad turn does not keep the others out. ``batch``: as ``note_session``."""
        con = self.file.db()
        con.execute("BEGIN IMMEDIATE")
        try:
            n = sum(self._insert(con, t) for t in turns)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            if len(turns) < 2:
                raise
        else:
            return n
        n, failed = 0, None
        for t in turns:
            try:
                n += self.add_turns([t])
            except Exception as exc:
                failed = failed or exc
        if failed is not None:  # the others are in; the caller hears of the first that is not
            raise failed
        return n

    @staticmethod
    def _insert(con: Any, t: "TurnTexts") -> int:
        rows = index_rows(t)
        for role, text, found in rows:
            con.execute("DELETE FROM turns WHERE tenant = ? AND session = ? AND turn_id = ? AND role = ?",
                        (t.tenant, t.session, t.turn_id, role))
            con.execute("INSERT INTO turns(tenant, session, turn_id, role, user, project, purpose, observed_at, "
                        "text, terms, nterms, acl, tacl) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (t.tenant, t.session, t.turn_id, role, t.user, t.project, t.purpose, t.observed_at, text,
                         " ".join(found), len(found), acl_token("t", t.tenant), trigram_token(t.tenant)))
        return len(rows)

    def search(self, viewer: Viewer, words: Sequence[str], substrings: Sequence[str] = (), *,
               sessions: Sequence[str], limit: int = MAX_CANDIDATES) -> tuple[list[Candidate], Stats]:
        """Turns of ``sessions`` (already the viewer's tree) holding any of
        ``words``/``substrings``, as candidates; the viewer's user and purpose
        are checked again on every row. What a backend reads is
        ``_read_search``; the candidates and statistics are made from it here,
        so every backend ranks the same rows the same way."""
        sessions = tuple(sessions)[:MAX_TREE]
        if not viewer.known or not sessions or (not words and not substrings):
            return [], Stats(0, 0.0)
        subs = [s for s in substrings if len(s) >= 3]
        by_word, by_substring, n, total = self._read_search(viewer, sessions, list(words), subs, limit)
        return hits(by_word, by_substring, limit), Stats(n, total / n if n else 0.0)

    def _read_search(self, viewer: Viewer, sessions: tuple[str, ...], words: list[str], subs: list[str],
                     limit: int) -> tuple[list[tuple], list[tuple], int, int]:
        """(rows holding a word, rows holding a substring — each the first
        ``limit`` in the order they were indexed, as ``HIT_COLUMNS`` — and the
        count and total length of the viewer's rows of ``sessions``)."""
        where = (f"t.tenant = ? AND t.session IN ({placeholders(sessions)}) AND t.user = ? "
                 "AND t.purpose IN ('', ?)")
        params = [viewer.tenant, *sessions, viewer.user, viewer.purpose]
        con = self.file.db()
        cols = ", ".join(f"t.{c}" for c in HIT_COLUMNS)
        by_word: list[tuple] = []
        if words:
            match = f'acl : {fts_phrase(acl_token("t", viewer.tenant))} AND terms : ({fts_query(words)})'
            by_word = con.execute(f"SELECT {cols} FROM turns t WHERE t.rowid IN (SELECT rowid FROM turns_terms "
                                  f"WHERE turns_terms MATCH ?) AND {where} ORDER BY t.rowid LIMIT ?",
                                  (match, *params, limit)).fetchall()
        by_substring: list[tuple] = []
        if subs and len(by_word) < limit:
            by_substring = con.execute(f"SELECT {cols} FROM turns t WHERE t.rowid IN (SELECT rowid FROM turns_tri "
                                       f"WHERE turns_tri MATCH ?) AND {where} ORDER BY t.rowid LIMIT ?",
                                       (substring_match(viewer.tenant, subs), *params, limit)).fetchall()
        n, total = con.execute(f"SELECT COUNT(*), SUM(t.nterms) FROM turns t WHERE {where}", params).fetchone()
        return by_word, by_substring, int(n or 0), int(total or 0)

    # -- reading a session back (the learning job) ---------------------------------------
    def tenants(self) -> list[str]:
        return [r[0] for r in self.file.db().execute("SELECT DISTINCT tenant FROM sessions ORDER BY tenant")]

    def quiet_sessions(self, tenant: str, *, after: float, until: float, limit: int = 100000
                       ) -> list[tuple[str, str, str, float, int]]:
        """(session, user, project, last turn's time, rows) of the tenant's
        sessions whose last turn came after ``after`` and at or before ``until``
        (idle since), oldest activity first."""
        rows = self.file.db().execute(
            "SELECT t.session, s.user, s.project, MAX(t.observed_at), COUNT(*) FROM turns t "
            "LEFT JOIN sessions s ON s.tenant = t.tenant AND s.session = t.session "
            "WHERE t.tenant = ? GROUP BY t.session HAVING MAX(t.observed_at) > ? AND MAX(t.observed_at) <= ? "
            "ORDER BY MAX(t.observed_at) LIMIT ?", (tenant, after, until, limit)).fetchall()
        return [(r[0], r[1] or "", r[2] or "", float(r[3]), int(r[4])) for r in rows]

    def session_turns(self, tenant: str, session: str) -> list[tuple[str, str, str, float]]:
        """(turn id, role, text, observed_at) of one session's rows, in the order they came."""
        return [(r[0], r[1], r[2], float(r[3])) for r in self.file.db().execute(
            "SELECT turn_id, role, text, observed_at FROM turns WHERE tenant = ? AND session = ? "
            "ORDER BY observed_at, rowid", (tenant, session))]

    def session_info(self, tenant: str, session: str) -> tuple[str, str, str, float] | None:
        """(user, project, parent, first seen) of a recorded session."""
        row = self.file.db().execute("SELECT user, project, parent, first_seen FROM sessions "
                                     "WHERE tenant = ? AND session = ?", (tenant, session)).fetchone()
        return None if row is None else (row[0], row[1], row[2], float(row[3]))

    # -- copying between backends (``ctxproxy store migrate``) ------------------------------
    def records(self, kind: str, page: int = 500) -> Iterator[dict[str, Any]]:
        """Every row of ``kind`` (``"session_tree"``, ``"session_turns"``) as a
        ``RECORD_FIELDS`` record, in the order they were written, a page per read."""
        table = {SESSION_TREE: "sessions", SESSION_TURNS: "turns"}[kind]
        cols = ", ".join(RECORD_FIELDS[kind])
        after = 0
        while True:
            rows = self.file.db().execute(f"SELECT rowid, {cols} FROM {table} WHERE rowid > ? ORDER BY rowid "
                                          "LIMIT ?", (after, page)).fetchall()
            for r in rows:
                yield record(kind, r[1:])
            if len(rows) < page:
                return
            after = rows[-1][0]

    def put_records(self, kind: str, records: Sequence[Mapping[str, Any]]) -> int:
        """Rows of ``kind`` as ``records`` gives them, in one transaction, each
        unless a row of its key is there. Returns how many were added."""
        con = self.file.db()
        fields = RECORD_FIELDS[kind]
        con.execute("BEGIN IMMEDIATE")
        try:
            n = 0
            for r in records:
                if kind == SESSION_TREE:
                    n += con.execute(f"INSERT OR IGNORE INTO sessions({', '.join(fields)}) VALUES "
                                     f"({placeholders(fields)})", [r[f] for f in fields]).rowcount
                else:
                    n += con.execute(f"INSERT OR IGNORE INTO turns({', '.join(fields)}, acl, tacl) VALUES "
                                     f"({placeholders(fields)}, ?, ?)", [*(r[f] for f in fields),
                                     acl_token("t", r["tenant"]), trigram_token(r["tenant"])]).rowcount
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return n

    # -- forgetting (store.derived) ----------------------------------------------------
    def forget(self, tenant: str, subject: dict, memory_ids: Sequence[str] = ()) -> dict[str, int]:
        con = self.file.db()
        turns = sessions = 0
        con.execute("BEGIN IMMEDIATE")
        try:
            if subject.get("session"):
                s = str(subject["session"])
                turns += con.execute("DELETE FROM turns WHERE tenant = ? AND session = ?", (tenant, s)).rowcount
                sessions += con.execute("DELETE FROM sessions WHERE tenant = ? AND session = ?", (tenant, s)).rowcount
                con.execute("UPDATE sessions SET parent = '' WHERE tenant = ? AND parent = ?", (tenant, s))
            if subject.get("user"):
                u = str(subject["user"])
                gone = [r[0] for r in con.execute("SELECT session FROM sessions WHERE tenant = ? AND user = ?",
                                                  (tenant, u))]
                turns += con.execute("DELETE FROM turns WHERE tenant = ? AND user = ?", (tenant, u)).rowcount
                sessions += con.execute("DELETE FROM sessions WHERE tenant = ? AND user = ?", (tenant, u)).rowcount
                for i in range(0, len(gone), 500):
                    chunk = gone[i:i + 500]
                    turns += con.execute(f"DELETE FROM turns WHERE tenant = ? AND session IN ({placeholders(chunk)})",
                                         (tenant, *chunk)).rowcount
            if subject.get("project"):
                p = str(subject["project"])
                turns += con.execute("DELETE FROM turns WHERE tenant = ? AND project = ?", (tenant, p)).rowcount
            self.file.bump(con, "forgets")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return {"session_index_turns": turns, "session_index_sessions": sessions}

    def erase_free_pages(self) -> None:
        self.file.erase_free_pages(FTS_TABLES)

    def close(self) -> None:
        self.file.close()
