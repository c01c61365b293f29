"""What the recall indexes share: one SQLite file each, derived from LMDB.

An index is a cache of the store (LMDB is the source of truth): it can be
deleted and rebuilt at any time. Each file is opened in WAL mode with
``secure_delete`` on (freed pages are zeroed, so erased text does not linger
in the file), one connection per thread (SQLite connections are not shared
across threads), and a ``meta`` table for its watermark.

``Viewer`` is who is asking, as the authenticated identity gives it; the
indexes turn it into a WHERE clause that runs before any ranking.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

SENSITIVITY_RANK = {"public": 0, "internal": 1, "confidential": 2, "secret": 3}


def sensitivity_rank(value: str) -> int:
    """Unknown labels rank as secret: never shown below a secret ceiling (none is)."""
    return SENSITIVITY_RANK.get(value, 3)


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who recalls: the authenticated tenant and what the turn's identity and
    route allow. Empty ``user``/``project``/``purpose`` see only records not
    bound to one; ``sessions`` is the session tree (records bound to another
    session are invisible); ``ceiling`` the highest sensitivity shown."""

    tenant: str
    user: str = ""
    project: str = ""
    purpose: str = ""
    sessions: tuple[str, ...] = ()
    ceiling: str = "internal"

    @property
    def known(self) -> bool:
        return bool(self.tenant)


def acl_token(kind: str, value: str) -> str:
    """A token only letters and digits, so FTS5 matches it as one word."""
    return kind + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:20]


_IDEOGRAPHS = 0x9FFF - 0x4E00 + 1  # CJK Unified Ideographs: letters to every tokenizer


def trigram_token(value: str) -> str:
    """Three characters that stand for ``value`` in a ``trigram`` index, so a
    MATCH on them reads one posting list (``acl_token``'s 21 would be a
    phrase of 19). Ideographs: 20,992³ ≈ 9×10¹² values, so two tenants share
    one with negligible odds, and the SQL filter keeps the rows exact anyway."""
    h = int.from_bytes(hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    out = []
    for _ in range(3):
        h, r = divmod(h, _IDEOGRAPHS)
        out.append(chr(0x4E00 + r))
    return "".join(out)


def placeholders(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)


class SQLiteFile:
    """One SQLite file, a connection per thread, schema made on first open."""

    def __init__(self, path: str | Path, schema: str, prepare: Callable[[sqlite3.Connection], None] | None = None):
        """``prepare`` runs before the schema (e.g. to drop an older layout)."""
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._schema = schema
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if prepare is not None:
            prepare(self.db())
        self.db().executescript(schema)

    def db(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None or getattr(self._local, "pid", None) != os.getpid():
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")  # derived data: a lost tail is caught up again
            con.execute("PRAGMA secure_delete=ON")
            con.execute("PRAGMA temp_store=MEMORY")
            self._local.con, self._local.pid = con, os.getpid()
            with self._lock:
                self._all.append(con)
        return con

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.db().execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return default if row is None else row[0]

    def bump(self, con: Any, key: str) -> None:
        """Count an event (inside the caller's transaction)."""
        con.execute("INSERT INTO meta(k, v) VALUES (?, 1) ON CONFLICT(k) DO UPDATE SET v = v + 1", (key,))

    def erase_free_pages(self, fts_tables: Iterable[str]) -> None:
        """Make erased text unrecoverable from the file: merge FTS5 segments (a
        delete only adds a tombstone until then), checkpoint the WAL into the
        file and truncate it, then VACUUM (secure_delete zeroes what it frees)."""
        con = self.db()
        for table in fts_tables:
            con.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            cons, self._all = self._all, []
        for con in cons:
            try:
                con.close()
            except Exception:  # another thread's connection: closed best effort
                pass
        self._local = threading.local()


def attach(cls: type, path: Path, store: Any, *args: Any) -> Any:
    """The index of ``cls`` already on ``store.derived``, or a new one
    registered there (so ``forget`` reaches it, whoever opened the store)."""
    derived = getattr(store, "derived", None)
    if isinstance(derived, list):
        for d in derived:
            if isinstance(d, cls):
                return d
    index = cls(path, *args)
    if isinstance(derived, list):
        derived.append(index)
    return index
