"""A part of the session record that one filter owns, kept newest-first in this process.

The store's session record has named parts (``SessionStore.get(..., part=)``)
for state that grows with the conversation and that only its owner reads.
``PartCache`` reads a part once per turn, keeps the copy it last wrote in
this process (with a revision, so a write still queued on the background
writer is never read stale, and a newer one from another worker wins), and
saves changes on the writer off the event loop: what it holds is needed by
later turns, not before this request is forwarded.
"""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any

log = logging.getLogger("ctxproxy.filters")


class PartCache:
    def __init__(self, part: str, size: int = 4096):
        self.part = part
        self.size = size
        self._memo: OrderedDict[tuple, tuple[int, dict, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, store: Any, tenant: str, session: str, key: tuple = ()) -> tuple[int, dict, Any]:
        """(revision, document, in-process extra) of the part; the extra (what
        this process remembers beside it, not stored) is None when the stored
        copy is newer than this process's, or there is none."""
        stored = store.sessions.get(tenant, session, part=self.part) or {}
        rev = stored.get("rev") if isinstance(stored.get("rev"), int) else 0
        with self._lock:
            memo = self._memo.get((tenant, session, *key))
        if memo is not None and memo[0] >= rev:
            return memo
        doc = stored.get("doc")
        return rev, dict(doc) if isinstance(doc, dict) else {}, None

    def keep(self, turn: Any, store: Any, key: tuple, rev: int, doc: dict, extra: Any, changed: bool) -> None:
        """Remember ``doc`` (and ``extra``) for this conversation; when ``changed``,
        under the next revision, saved on the store's writer."""
        ident = turn.identity
        if changed:
            rev += 1
        with self._lock:
            k = (ident.tenant, ident.session, *key)
            self._memo[k] = (rev, doc, extra)
            self._memo.move_to_end(k)
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        if not changed:
            return
        record = {"rev": rev, "doc": doc}
        subject = ident.user or None
        part, turn_id = self.part, turn.turn_id

        def write(b: Any) -> None:
            b.sessions.put(ident.tenant, ident.session, record, subject=subject, part=part)

        def lost(exc: BaseException | None) -> None:
            if exc is not None:  # kept in this process; the next change writes it again
                log.warning("turn %s: session part %s not saved: %s", turn_id, part, type(exc).__name__)

        writer = turn.service("writer")
        try:
            if writer is not None:
                writer.submit(write).add_done_callback(lambda f: lost(f.exception()))
            else:
                with store.batch() as b:
                    write(b)
        except Exception as exc:
            lost(exc)
