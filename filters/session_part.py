"""A part of the session record that one filter owns, kept newest-first in this process.

The store's session record has named parts (``SessionStore.get(..., part=)``)
for state that grows with the conversation and that only its owner reads.
``PartCache`` reads a part once per turn, keeps the copy it last wrote in
this process (with a revision, so a write still queued on the background
writer is never read stale, and a newer one from another worker wins), and
saves changes on the writer off the event loop: what it holds is needed by
later turns, not before this request is forwarded.

A copy the store confirmed and then lost was erased ("forget me", from this
process or another): it is dropped, never written back. A copy whose write
failed is kept (the next change writes it again).

The copies live in the session's one in-process record (``turn_summary``),
beside the filters' last decisions: a turn finds them with the record it
already found, and a session's state leaves the process all at once.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from ctxproxy.store.bounded import entry_bytes
from ctxproxy.store.frozen import thaw

from .turn_summary import SessionMemo

log = logging.getLogger("ctxproxy.filters")


_KNOWN: dict[str, None] = {}  # every part a PartCache was made for, in order


def known_parts() -> tuple[str, ...]:
    """The parts a turn reads with its session's state (``Turn.session_part``)."""
    return tuple(_KNOWN)


def read_with_session(part: str) -> None:
    """Read ``part`` in the turn's one read of its session (``Turn.session_part``),
    for a filter that keeps a part without a ``PartCache``."""
    _KNOWN[part] = None


class PartCache:
    def __init__(self, part: str):
        self.part = part
        read_with_session(part)
        # per session and key: [revision, document, extra, the newest revision the store confirmed]
        self._memo = SessionMemo(f"session part {part}")
        self._lock = threading.Lock()

    def load(self, store: Any, tenant: str, session: str, key: tuple = (), turn: Any = None
             ) -> tuple[int, dict, Any]:
        """(revision, document, in-process extra) of the part; the extra (what
        this process remembers beside it, not stored) is None when the stored
        copy is newer than this process's, or there is none. ``turn``: read
        through it (one read of the session and all its parts per turn)."""
        shared = turn is not None and (tenant, session) == (turn.identity.tenant, turn.identity.session)
        owner = (tenant, session)
        for _ in range(2):  # bounded: a second, fresh read at most
            if shared:
                stored = turn.session_part(store, self.part) or {}
            else:
                stored = store.sessions.get(tenant, session, part=self.part) or {}
            rev = stored.get("rev") if isinstance(stored.get("rev"), int) else 0
            with self._lock:
                memo = self._memo.get(owner, key, turn if shared else None)
                if memo is None or rev >= memo[3]:
                    break
                if not shared:  # stored, then erased: the copy goes too
                    self._memo.pop(owner, key)
                    memo = None
                    break
            # the turn's read may be older than a write confirmed since (in this turn): read anew
            shared = False
        if memo is not None and memo[0] >= rev:
            return memo[0], memo[1], memo[2]
        doc = stored.get("doc")  # read-only as stored (shared with later turns): the caller gets its own copy
        return rev, thaw(doc) if isinstance(doc, dict) else {}, None

    def keep(self, turn: Any, store: Any, key: tuple, rev: int, doc: dict, extra: Any, changed: bool) -> None:
        """Remember ``doc`` (and ``extra``) for this conversation; when ``changed``,
        under the next revision, saved on the store's writer."""
        ident = turn.identity
        if changed:
            rev += 1
        owner = (ident.tenant, ident.session)
        with self._lock:
            old = self._memo.get(owner, key, turn)
            if not changed and old is not None and old[0] == rev:
                # the same document again: kept in place, its size not estimated anew
                # (the extra beside it is small and bounded: a count, a few threads' marks)
                old[1], old[2] = doc, extra
                return
            self._memo.put(owner, key, [rev, doc, extra, old[3] if old is not None else 0],
                           entry_bytes((owner, key), [rev, doc, extra, 0]), turn)
        if not changed:
            return
        record = {"rev": rev, "doc": doc}
        subject = ident.user or None
        part, turn_id = self.part, turn.turn_id

        def write(b: Any) -> None:
            b.sessions.put(ident.tenant, ident.session, record, subject=subject, part=part)

        def done(exc: BaseException | None) -> None:
            if exc is not None:  # kept in this process; the next change writes it again
                log.warning("turn %s: session part %s not saved: %s", turn_id, part, type(exc).__name__)
                return
            with self._lock:
                entry = self._memo.peek(owner, key)
                if entry is not None and entry[3] < rev:
                    entry[3] = rev

        turn.write_after(store, write, done)
