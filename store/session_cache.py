"""Live sessions' records, kept decoded in this process between turns (LMDB).

A turn reads its session's record and every part a filter keeps (five
records); decoding them again on every turn is most of that read. This cache
keeps each live session's records read-only (``frozen``), bounded in bytes
(``SESSIONS_BYTES``), for one environment in one process, and answers a read
without a transaction while it can prove nothing changed:

- It is valid as of one LMDB transaction id, ``at``. A read outside a write
  transaction compares the environment's last committed id (``env.info()``,
  shared memory: another process's commit shows at once) with ``at``; the
  same id means no commit since, and the kept records are the stored ones.
  A snapshot compares its own transaction's id.
- This process's commits keep it valid write-through: a write transaction
  notes every session record it writes or deletes (``note``); just before it
  commits, its id and notes are set aside (``committing``), and once it has
  committed (``committed``) its records replace the kept ones and ``at``
  moves to its id. A commit that erases what it cannot name (``note_unknown``:
  a deletion request re-freezing other sessions' snapshots) empties the cache.
  A read that finds the environment already at the id of this process's
  commit under way (committed, its thread not back yet) applies it itself.
- Any other commit (another worker, another process: ``--workers N``, the
  CLI) is a gap between ``at`` and the id seen: the cache cannot tell which
  sessions it touched, so it is emptied and starts again at the id read.
  With several writing processes the cache so helps only between their
  commits; it is never wrong.

Records written through are kept as their stored bytes and decoded on the
next read (a session that never comes back costs no decoding).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Hashable, Sequence

from .bounded import SLOT_BYTES, ByteLRU
from .frozen import decoded_bytes, freeze

SESSIONS_BYTES = 2 << 20  # the decoded records of this process's live sessions (~600 small sessions)

_ABSENT = None


class _Raw:
    """A record written through, not decoded yet."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:
        self.raw = raw


Decode = Callable[[bytes], Any]  # stored bytes -> the record's state (checked against its tenant)


class SessionCache:
    def __init__(self, max_bytes: int = SESSIONS_BYTES) -> None:
        # (tenant, session) -> [{part: frozen state | None (no record) | _Raw}, {part: bytes}]
        self._lru = ByteLRU(max_bytes, "live sessions' records")
        self._lock = threading.Lock()
        self.at = -1  # the transaction id every kept record is valid at
        self._txn: Any = None  # the open write transaction the notes belong to
        self._notes: list[tuple[Hashable, str | None, bytes | None]] = []
        self._unknown = False
        self._inflight: tuple[int, list, bool] | None = None  # (id, notes, unknown) of a commit under way
        self._early: int | None = None  # the commit under way a read applied (``_apply_landed``)

    @property
    def bytes(self) -> int:
        return self._lru.bytes

    def __len__(self) -> int:
        return len(self._lru)

    # -- reads -------------------------------------------------------------------

    def lookup(self, key: Hashable, parts: Sequence[str | None], txnid: int, decode: Decode
               ) -> dict[str | None, Any] | None:
        """The states of ``parts`` of session ``key`` as of transaction ``txnid``,
        or None when not all are kept valid at it."""
        if txnid != self.at and not self._landed(txnid):
            return None
        with self._lock:
            if txnid != self.at and not self._apply_landed(txnid):
                return None
            entry = self._lru.get(key)
            if entry is None:
                return None
            states, sizes = entry
            out: dict[str | None, Any] = {}
            grew = False
            for p in parts:
                if p not in states:
                    return None
                v = states[p]
                if type(v) is _Raw:
                    sizes[p] = decoded_bytes(v.raw)
                    v = states[p] = freeze(decode(v.raw))
                    grew = True
                out[p] = v
            if grew:
                self._lru.put(key, entry, _entry_bytes(key, sizes))
            return out

    def fill(self, key: Hashable, txnid: int, raws: dict[str | None, bytes | None], decode: Decode
             ) -> dict[str | None, Any]:
        """Decode what a read transaction ``txnid`` found (None: no record) and
        keep it when that read is valid with the rest of the cache."""
        if txnid < self.at or txnid > self.at and self._inflight is not None:
            # an older snapshot, or this process's commit under way and not yet applied:
            # nothing is kept, so nothing is made read-only either
            return {p: None if raw is None else decode(raw) for p, raw in raws.items()}
        states: dict[str | None, Any] = {}
        sizes: dict[str | None, int] = {}
        for p, raw in raws.items():
            if raw is None:
                states[p], sizes[p] = _ABSENT, 0
            else:
                states[p], sizes[p] = freeze(decode(raw)), decoded_bytes(raw)
        out = dict(states)
        with self._lock:
            if txnid > self.at:
                if self._inflight is not None:
                    return out  # (began meanwhile) keep nothing
                self._reset(txnid)  # another process committed since: what is kept may be stale
            elif txnid < self.at:
                return out
            old = self._lru.peek(key)
            if old is not None:  # parts read before and not asked for now are still valid
                for p, v in old[0].items():
                    if p not in states:
                        states[p], sizes[p] = v, old[1][p]
            self._lru.put(key, [states, sizes], _entry_bytes(key, sizes))
        return out

    # -- writes ------------------------------------------------------------------

    def note(self, txn: Any, key: Hashable, part: str | None, raw: bytes | None) -> None:
        """Write transaction ``txn`` wrote ``part`` of session ``key`` as ``raw``
        (``part`` and ``raw`` None: deleted the session with all its parts)."""
        if self._txn is not txn:
            self._txn, self._notes, self._unknown = txn, [], False
        self._notes.append((key, part, raw))

    def note_unknown(self, txn: Any) -> None:
        """``txn`` changes session records it does not name: empty the cache when it commits."""
        if self._txn is not txn:
            self._txn, self._notes = txn, []
        self._unknown = True

    def committing(self, txn: Any, txnid: int) -> None:
        """``txn`` (id ``txnid``) is about to commit: no read may refill the cache
        past ``at`` until it is applied."""
        mine = self._txn is txn
        with self._lock:
            self._inflight = (txnid, self._notes if mine else [], self._unknown if mine else False)
        self._txn, self._notes, self._unknown = None, [], False

    def _landed(self, txnid: int) -> bool:
        """Whether ``txnid`` is this process's commit under way (``committing``):
        a read that finds the environment at it finds that commit landed."""
        inflight = self._inflight
        return inflight is not None and inflight[0] == txnid

    def committed(self, txnid: int) -> None:
        with self._lock:
            if self._early == txnid:  # a read applied it: it did commit
                self._early = None
            inflight, self._inflight = self._inflight, None
            if inflight is not None and inflight[0] == txnid and txnid > self.at:
                self._apply(txnid, inflight)
            # else already covered by a read at or past it

    def _apply_landed(self, txnid: int) -> bool:
        """(Under the lock.) A read found the environment at ``txnid``, this
        process's commit under way whose thread has not returned yet (it waits for
        the interpreter after its fsync): apply it now. The id is this process's:
        its write transaction held LMDB's writer lock since ``committing``, so no
        other process can have committed that id, unless this commit failed first,
        and then ``aborted`` empties what was applied. Whether the cache is now
        valid at ``txnid``."""
        inflight = self._inflight
        if inflight is None or inflight[0] != txnid or txnid <= self.at:
            return False
        self._inflight = None
        self._early = txnid
        return self._apply(txnid, inflight)

    def _apply(self, txnid: int, inflight: tuple[int, list, bool]) -> bool:
        _, notes, unknown = inflight
        if unknown or txnid != self.at + 1:
            self._reset(txnid)  # or another process committed in between
            return False
        self.at = txnid
        for key, part, raw in notes:
            entry = self._lru.peek(key)
            if entry is None:
                continue
            if raw is None:
                self._lru.pop(key)
                continue
            states, sizes = entry
            states[part] = _Raw(raw)
            sizes[part] = len(raw) + 40  # (its decoded size replaces this once it is read)
            self._lru.put(key, entry, _entry_bytes(key, sizes))
        return True

    def aborted(self, txn: Any = None) -> None:
        """``txn`` ended without committing (or its commit failed)."""
        with self._lock:
            self._inflight = None
            if self._early is not None:  # applied by a read, then failed: what it kept may be wrong
                self._early = None
                self._reset(-1)
        if txn is None or self._txn is txn:
            self._txn, self._notes, self._unknown = None, [], False

    def reset(self) -> None:
        """Forget everything (the environment was reopened)."""
        with self._lock:
            self._reset(-1)

    def _reset(self, txnid: int) -> None:
        self._lru.clear()
        self.at = txnid


def _entry_bytes(key: Any, sizes: dict[str | None, int]) -> int:
    # the entry's two lists and dicts, the key's tuple and strings, each part's name and state
    return SLOT_BYTES + 600 + sum(len(k) for k in key) + 120 * len(sizes) + sum(sizes.values())
