"""The session index in PostgreSQL: the embedded index's rows and rules
(``store.session_index.SessionIndex``) over the tables of
``sql/0004_session_index.sql``, so every replica searches every turn of a
session tree, whichever replica answered it.

Writing rides in the store's own transactions: a turn's rows and its
session's first record are statements sent with the background writer's
group (``batch``), travelling with its COMMIT, so indexing adds no round
trip. Reading is one statement each: the session tree with its owner (a
recursive query), and a search — the rows holding a word, those holding a
substring and the count and length of every row of the tree — in one pass
over the tree's rows. Candidates and statistics are then made by the
embedded index's own code (``SessionIndex.search``, ``hits``), so ranking
is the same for the same rows. Every statement runs with the tenant set
(row-level security: another tenant's turns are neither found nor counted).

Erasure is ``forget``'s step after ``delete_subject`` (the store's
``derived``, as for the embedded index): the rows go and the security
generation moves in one transaction; ``forget finish`` rewrites the tables.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ..erasure import digest
from ..session_index import (MAX_TREE, RECORD_FIELDS, SESSION_TREE, SESSION_TURNS, SessionIndex, TurnTexts,
                             assemble_tree, index_rows, record)
from ..sqlite_index import Viewer
from .pool import ALL_TENANTS, Tx
from .proxy_keys import bump_generation

_TABLE = {SESSION_TREE: "session_tree", SESSION_TURNS: "session_turns"}
_KEY = {SESSION_TREE: "tenant, session", SESSION_TURNS: "tenant, id"}
_PAGE = 500

# Whether %(p)s may be %(s)s's parent: a session already recorded for the same user (never itself).
_MAY_PARENT = ("%(p)s <> '' AND %(p)s <> %(s)s AND EXISTS (SELECT 1 FROM session_tree WHERE tenant = %(t)s "
               "AND session = %(p)s AND user_id = %(u)s)")

_TREE = (
    "WITH RECURSIVE me AS (SELECT parent, user_id FROM session_tree WHERE tenant = %(t)s AND session = %(s)s), "
    "start AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM me) THEN (SELECT parent FROM me) "
    f"WHEN {_MAY_PARENT} THEN %(p)s ELSE '' END AS s), "
    "up(s, n) AS (SELECT s, 0 FROM start WHERE s <> '' UNION SELECT p.parent, up.n + 1 FROM session_tree p "
    "JOIN up ON p.tenant = %(t)s AND p.session = up.s WHERE p.parent <> '' AND p.user_id = %(u)s AND up.n < %(max)s), "
    "down(s, n) AS (SELECT %(s)s::text, 0 UNION SELECT c.session, down.n + 1 FROM session_tree c JOIN down "
    "ON c.tenant = %(t)s AND c.parent = down.s WHERE c.user_id = %(u)s AND down.n < %(max)s) "
    "SELECT 'm', user_id, 0, true FROM me "
    "UNION ALL (SELECT 'd', s, n, true FROM down ORDER BY n, s COLLATE \"C\" LIMIT %(max)s) "
    "UNION ALL (SELECT 'u', up.s, up.n, EXISTS (SELECT 1 FROM session_tree o WHERE o.tenant = %(t)s "
    "AND o.session = up.s AND o.user_id = %(u)s) FROM up ORDER BY up.n)")

_HIT = "turn_id, role, session, user_id, project, purpose, observed_at, text, terms, nterms::bigint"


def _write(store: Any, batch: Any, op: Any) -> Any:
    """``op(tx)`` in the caller's open batch of this database (its transaction),
    else in a transaction of its own (also from the writer's thread, whose
    batch the caller did not hand over)."""
    from .store import _TxRunner

    x = getattr(batch, "_x", None)
    return x.write(op) if isinstance(x, _TxRunner) else store._pool.run(op)


# -- writing ---------------------------------------------------------------------------

def note_in(tx: Tx, tenant: str, session: str, user: str, project: str, parent: str, now: float) -> None:
    """Record a session at its first turn, its parent only if it may be (sent, not awaited)."""
    tx.tenant(tenant).send(
        "INSERT INTO session_tree (tenant, session, parent, user_id, project, first_seen) "
        f"SELECT %(t)s, %(s)s, CASE WHEN {_MAY_PARENT} THEN %(p)s ELSE '' END, %(u)s, %(project)s, %(now)s "
        "ON CONFLICT (tenant, session) DO NOTHING",
        {"t": tenant, "s": session, "p": parent, "u": user, "project": project, "now": now})


def add_in(tx: Tx, turns: Sequence[TurnTexts]) -> int:
    """Index turns (a replayed turn replaces its rows), sent, not awaited. Returns the rows."""
    n = 0
    for t in turns:
        for role, text, found in index_rows(t):
            key = (t.tenant, t.session, t.turn_id, role)
            tx.tenant(t.tenant).send("DELETE FROM session_turns WHERE tenant = %s AND session = %s AND turn_id = %s "
                                     "AND role = %s", key)
            tx.send("INSERT INTO session_turns (tenant, session, turn_id, role, user_id, project, purpose, "
                    "observed_at, text, terms, nterms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (*key, t.user, t.project, t.purpose, t.observed_at, text, " ".join(found), len(found)))
            n += 1
    return n


def forget_in(tx: Tx, tenant: str, subject: Mapping[str, Any]) -> dict[str, int]:
    """Delete the index rows of a session, a user or a project (as the embedded index's ``forget``)."""
    turns = sessions = 0
    tx.tenant(tenant)
    if subject.get("session"):
        s = str(subject["session"])
        turns += tx.exec("DELETE FROM session_turns WHERE tenant = %s AND session = %s", (tenant, s))
        sessions += tx.exec("DELETE FROM session_tree WHERE tenant = %s AND session = %s", (tenant, s))
        tx.exec("UPDATE session_tree SET parent = '' WHERE tenant = %s AND parent = %s", (tenant, s))
    if subject.get("user"):
        u = str(subject["user"])
        turns += tx.exec("DELETE FROM session_turns WHERE tenant = %s AND (user_id = %s OR session IN "
                         "(SELECT session FROM session_tree WHERE tenant = %s AND user_id = %s))",
                         (tenant, u, tenant, u))
        sessions += tx.exec("DELETE FROM session_tree WHERE tenant = %s AND user_id = %s", (tenant, u))
    if subject.get("project"):
        turns += tx.exec("DELETE FROM session_turns WHERE tenant = %s AND project = %s",
                         (tenant, str(subject["project"])))
    return {"session_index_turns": turns, "session_index_sessions": sessions}


# -- the index -------------------------------------------------------------------------

class PGSessionIndex(SessionIndex):
    """``SessionIndex`` over the store's own database (see the module docstring)."""

    name = "recall.sessions"

    def __init__(self, store: Any) -> None:
        self._store = store

    @classmethod
    def open(cls, data_dir: Any, store: Any) -> "PGSessionIndex":
        return store.session_index()

    def _read(self, tenant: str, sql: str, params: Any = ()) -> list[Any]:
        return self._store._pool.run(lambda tx: tx.tenant(tenant).all(sql, params), readonly=True)

    def generation(self) -> int:
        """Moves with every erasure on any replica (``forget`` moves the store's
        security generation, which each replica hears of), so a result
        remembered before it is not served again."""
        inv = getattr(self._store, "invalidation", None)
        return 0 if inv is None else inv.current()

    # -- sessions and trees ----------------------------------------------------------
    def note_session(self, tenant: str, session: str, user: str, project: str = "", parent: str = "",
                     now: float | None = None, batch: Any = None) -> None:
        if not tenant or not session:
            return
        import time

        when = time.time() if now is None else now
        _write(self._store, batch, lambda tx: note_in(tx, tenant, session, user, project, parent, when))

    def tree_of(self, tenant: str, session: str, user: str, parent: str = "") -> tuple[tuple[str, ...], str | None]:
        if not tenant or not session:
            return (), None
        rows = self._read(tenant, _TREE, {"t": tenant, "s": session, "u": user, "p": parent, "max": MAX_TREE})
        owner = next((r[1] for r in rows if r[0] == "m"), None)
        if owner is not None and owner != user:
            return (), owner  # someone else's session id: nothing of it is this caller's
        down = [r[1] for r in rows if r[0] == "d"]
        up = [r[1] for r in rows if r[0] == "u"]
        owned = {s for s in down if s != session} | {r[1] for r in rows if r[0] == "u" and r[3]}
        return assemble_tree(session, down, up, owned), owner

    def _recent(self, tenant: str, user: str, project: str | None) -> list[str]:
        sql = "SELECT session FROM session_tree WHERE tenant = %s AND user_id = %s"
        params: list[Any] = [tenant, user]
        if project is not None:
            sql += " AND project = %s"
            params.append(project)
        return [r[0] for r in self._read(tenant, sql + ' ORDER BY first_seen DESC, session COLLATE "C" LIMIT %s',
                                         (*params, MAX_TREE))]

    def owner(self, tenant: str, session: str) -> str | None:
        rows = self._read(tenant, "SELECT user_id FROM session_tree WHERE tenant = %s AND session = %s",
                          (tenant, session))
        return rows[0][0] if rows else None

    # -- turns -----------------------------------------------------------------------
    def add_turns(self, turns: Sequence[TurnTexts], batch: Any = None) -> int:
        """Index turns in the caller's batch (its transaction; a group that fails
        is retried op by op by the writer), else in a transaction of their own."""
        turns = [t for t in turns if t.tenant and t.session]
        if not turns:
            return 0
        return _write(self._store, batch, lambda tx: add_in(tx, turns))

    def _read_search(self, viewer: Viewer, sessions: tuple[str, ...], words: list[str], subs: list[str],
                     limit: int) -> tuple[list[tuple], list[tuple], int, int]:
        nulls = ", ".join(["NULL"] * 9)
        parts = [f"SELECT 0, {nulls}, count(*), coalesce(sum(nterms), 0)::bigint FROM v"]
        if words:
            parts.append(f"(SELECT 1, {_HIT}, id FROM v WHERE string_to_array(terms, ' ') && %(words)s::text[] "
                         "ORDER BY id LIMIT %(limit)s)")
        if subs:
            # case-blind, as the embedded index's trigram match
            parts.append(f"(SELECT 2, {_HIT}, id FROM v WHERE EXISTS (SELECT 1 FROM unnest(%(subs)s::text[]) x "
                         "WHERE strpos(lower(v.text), lower(x)) > 0) ORDER BY id LIMIT %(limit)s)")
        sql = ("WITH v AS MATERIALIZED (SELECT id, turn_id, role, session, user_id, project, purpose, observed_at, "
               "text, terms, nterms FROM session_turns WHERE tenant = %(t)s AND session = ANY(%(sessions)s::text[]) "
               "AND user_id = %(u)s AND purpose IN ('', %(p)s)) " + " UNION ALL ".join(parts))
        rows = self._read(viewer.tenant, sql, {
            "t": viewer.tenant, "sessions": list(sessions), "u": viewer.user, "p": viewer.purpose,
            "words": list(words), "subs": list(subs), "limit": limit})
        head = next(r for r in rows if r[0] == 0)
        by_word = [tuple(r[1:11]) for r in rows if r[0] == 1]
        by_substring = [tuple(r[1:11]) for r in rows if r[0] == 2]
        return by_word, by_substring, int(head[10]), int(head[11])

    # -- reading a session back (the learning job) ---------------------------------------
    def tenants(self) -> list[str]:
        return [r[0] for r in self._read(ALL_TENANTS,
                                         'SELECT DISTINCT tenant COLLATE "C" FROM session_tree ORDER BY 1')]

    def quiet_sessions(self, tenant: str, *, after: float, until: float, limit: int = 100000
                       ) -> list[tuple[str, str, str, float, int]]:
        rows = self._read(tenant,
                          "SELECT t.session, s.user_id, s.project, max(t.observed_at), count(*) FROM session_turns t "
                          "LEFT JOIN session_tree s ON s.tenant = t.tenant AND s.session = t.session "
                          "WHERE t.tenant = %s GROUP BY t.session, s.user_id, s.project "
                          "HAVING max(t.observed_at) > %s AND max(t.observed_at) <= %s "
                          "ORDER BY max(t.observed_at), t.session COLLATE \"C\" LIMIT %s",
                          (tenant, after, until, limit))
        return [(r[0], r[1] or "", r[2] or "", float(r[3]), int(r[4])) for r in rows]

    def session_turns(self, tenant: str, session: str) -> list[tuple[str, str, str, float]]:
        return [(r[0], r[1], r[2], float(r[3])) for r in self._read(
            tenant, "SELECT turn_id, role, text, observed_at FROM session_turns WHERE tenant = %s AND session = %s "
                    "ORDER BY observed_at, id", (tenant, session))]

    def session_info(self, tenant: str, session: str) -> tuple[str, str, str, float] | None:
        rows = self._read(tenant, "SELECT user_id, project, parent, first_seen FROM session_tree "
                                  "WHERE tenant = %s AND session = %s", (tenant, session))
        return None if not rows else (rows[0][0], rows[0][1], rows[0][2], float(rows[0][3]))

    # -- copying between backends (``ctxproxy store migrate``) ------------------------------
    def records(self, kind: str, page: int = _PAGE) -> Iterator[dict[str, Any]]:
        cols = ", ".join("user_id" if f == "user" else f for f in RECORD_FIELDS[kind])
        key = _KEY[kind]
        width = len(key.split(","))
        after: tuple | None = None
        while True:
            cond = "true" if after is None else f"({key}) > ({', '.join(['%s'] * width)})"
            rows = self._read(ALL_TENANTS, f'SELECT {key}, {cols} FROM {_TABLE[kind]} WHERE {cond} '
                                           f'ORDER BY {key} LIMIT {page}', after or ())
            for r in rows:
                yield record(kind, r[width:])
            if len(rows) < page:
                return
            after = tuple(r for r in rows[-1][:width])

    def put_records(self, kind: str, records: Sequence[Mapping[str, Any]]) -> int:
        """Rows of ``kind`` in one statement, in the order given (their ids
        follow it), each unless its key is there; the operator's work across
        tenants. Returns how many were added."""
        if not records:
            return 0
        fields = RECORD_FIELDS[kind]
        cols = ", ".join("user_id" if f == "user" else f for f in fields)
        types = ["float8" if f in ("first_seen", "observed_at") else "int" if f == "nterms" else "text"
                 for f in fields]
        arrays = ", ".join(f"%s::{t}[]" for t in types)
        sql = (f"WITH ins AS (INSERT INTO {_TABLE[kind]} ({cols}) SELECT * FROM unnest({arrays}) "
               "ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM ins")
        columns = [[r[f] for r in records] for f in fields]
        return int(self._store._pool.run(lambda tx: tx.tenant(ALL_TENANTS).one(sql, columns))[0])

    # -- forgetting -----------------------------------------------------------------------
    def forget(self, tenant: str, subject: dict, memory_ids: Sequence[str] = ()) -> dict[str, int]:
        """An erasure's step on the session index (``store.forget``, after
        ``delete_subject``, as the embedded index's): its rows deleted and,
        in the same transaction, the security generation moved, so every
        replica stops serving a recall result it remembered from before."""
        def op(tx: Tx) -> tuple[dict[str, int], int]:
            return forget_in(tx, tenant, subject), bump_generation(tx)

        counts, generation = self._store._pool.run(op)
        inv = getattr(self._store, "invalidation", None)
        if inv is not None:
            inv.seen(generation)  # this process need not wait for its own notification
        return counts

    def erase_free_pages(self) -> None:
        """Nothing here: ``forget finish`` rewrites the tables (``PGStore.rewrite_erased``)."""

    def close(self) -> None:
        pass


# -- backfill from a host's embedded index (``ctxproxy store upgrade``) ----------------------

def embedded_path(data_dir: str | Path) -> Path:
    return Path(data_dir) / "recall" / "sessions.db"


def backfill(store: Any, data_dir: str | Path) -> dict[str, int]:
    """Copy a host's embedded session index into the database (rows already
    there are skipped: every host of a fleet can run it), leaving out every
    row of a session, user or project an erasure receipt of the database
    names: a host's file may have missed an erasure run elsewhere, and what
    was erased must not come back. Returns the rows offered per kind."""
    path = embedded_path(data_dir)
    if not path.exists():
        return {}
    source = SessionIndex(path)
    erased: dict[str, set[tuple[str, str]]] = {}

    def gone(kind: str, r: Mapping[str, Any]) -> bool:
        tenant = r["tenant"]
        if tenant not in erased:
            erased[tenant] = {(d.data.get("subject_kind") or "", d.data.get(f) or "")
                              for d in store.receipts.list(tenant) for f in ("session_digest", "subject_digest")}
        marks = erased[tenant]
        return (("session", digest(tenant, r["session"])) in marks or ("user", digest(tenant, r["user"])) in marks
                # an erased project takes its turns (a session's record names its first project only)
                or (kind == SESSION_TURNS and ("project", digest(tenant, r["project"])) in marks))

    out: dict[str, int] = {}
    index = store.session_index()
    try:
        for kind in (SESSION_TREE, SESSION_TURNS):
            page: list[dict[str, Any]] = []
            n = 0
            for r in source.records(kind):
                if not gone(kind, r):
                    page.append(r)
                if len(page) >= _PAGE:
                    n += index.put_records(kind, page)
                    page = []
            if page:
                n += index.put_records(kind, page)
            out[kind] = n
    finally:
        source.close()
    return out
