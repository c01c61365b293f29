"""The records an answer leaves, written after it: the effect ledger's write queue.

When an answer ends, the effects filter records its tool calls ``pending``.
That write need not hold up the answer: it goes on the store's background
writer (group commit, in order) and the event loop does not wait for the
fsync. What the next request of the session must know about it is kept
here, per (tenant, session), bounded: whether the session's latest answer
made calls (its next request brings their results: a write-ahead), and its
write still queued, if any (that request's ledger is then read behind it).
"""
from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any, Callable

from ctxproxy.store.bounded import ByteLRU, entry_bytes

log = logging.getLogger("ctxproxy.filters.effects")

CALLED_BYTES = 256 << 10  # sessions whose latest answer made tool calls, until their next request (~750)
QUEUED_BYTES = 256 << 10  # sessions with a response-end write still queued (a linger's worth)


class ResponseWrites:
    def __init__(self) -> None:
        self._last: Future | None = None  # the newest queued write
        self._writer: Any = None  # the background writer that holds it
        # (tenant, session) whose latest answer in this process made tool calls (bounded)
        self._called = ByteLRU(CALLED_BYTES, "sessions whose answer made calls",
                               fixed=entry_bytes(("tenant", "s" * 40), True))
        # (tenant, session) -> its newest queued write (bounded)
        # (only while queued: a done Future, with its Condition, is ~1 KB)
        self._queued = ByteLRU(QUEUED_BYTES, "queued response-end writes", fixed=entry_bytes(("t", "s" * 40), 0) + 1024)

    def made_calls(self, session: tuple[str, str]) -> None:
        """The session's latest answer made tool calls."""
        self._called.put(session, True)

    def brings_results(self, session: tuple[str, str]) -> bool:
        """Whether the session's latest answer here made calls (asked once per request)."""
        return self._called.pop(session, False)

    def awaits_results(self, session: tuple[str, str]) -> bool:
        """``brings_results`` without asking: the flag stays for the request that reads it."""
        return session in self._called

    def queued(self, session: tuple[str, str]) -> Future | None:
        """The session's write still queued, if any."""
        return self._queued.get(session)

    def submit(self, turn: Any, session: tuple[str, str], write: Callable[[Any], None],
               store: Callable[[], Any]) -> None:
        """Queue ``write`` on the turn's background writer; without one (embedded
        use) write it now in a batch of ``store()``."""
        writer = turn.services.writer
        if writer is None:
            with store().batch() as b:
                write(b)
            return
        turn_id = turn.turn_id
        fut = writer.submit(write, key=turn.write_key)
        self._last = fut
        self._writer = writer
        self._queued.put(session, fut)

        def done(f: Future) -> None:
            self._queued.discard(session, f)
            exc = f.exception()
            if exc is not None:
                log.warning("turn %s: recording tool calls failed: %s: %s; the next request rebuilds them "
                            "from its history", turn_id, type(exc).__name__, exc)

        fut.add_done_callback(done)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued write is on disk (or failed)."""
        last = self._last
        if last is not None and not last.done():
            try:
                self._writer.flush(timeout)  # commit now rather than after the writer's linger
                last.result(timeout)
            except Exception:  # logged by the done callback
                pass
