"""Group commit off the event loop: writes that may land after the turn.

Work that must be durable *before* a request goes upstream (the effect
ledger's write-ahead) commits inline. Work that only has to land eventually —
manifests, calls recorded at response end — goes through ``BackgroundWriter``:
one thread drains a queue and commits everything queued so far in ONE batch,
so N concurrent turns cost one fsync instead of N and the event loop never
waits for a disk.

``submit(op)`` takes ``op(batch)`` and returns a Future. If a group's commit
fails, its ops are retried one by one so one bad write cannot take the others
down; each Future carries its own outcome.
"""
from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable

log = logging.getLogger("ctxproxy.store")

Op = Callable[[Any], Any]
_STOP = object()


class BackgroundWriter:
    def __init__(self, store: Any, max_group: int = 256):
        self.store = store
        self.max_group = max_group
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, op: Op) -> Future:
        fut: Future = Future()
        with self._lock:
            if self._closed:
                fut.set_exception(RuntimeError("store writer is closed"))
                return fut
            if self._thread is None:  # started on first use: after any fork
                self._thread = threading.Thread(target=self._run, name="ctxproxy-store-writer", daemon=True)
                self._thread.start()
            self._q.put((op, fut))
        return fut

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until everything submitted so far is committed (or failed):
        read-your-writes for the admin API and the CLI in this process."""
        self.submit(lambda b: None).exception(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Commit what is queued, then stop the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
            self._q.put(_STOP)
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self._q.get()
            group = []
            stop = item is _STOP
            if not stop:
                group.append(item)
            while len(group) < self.max_group:  # take whatever else is already waiting
                try:
                    item = self._q.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                group.append(item)
            if group:
                self._commit(group)
            if stop:
                return

    def _commit(self, group: list[tuple[Op, Future]]) -> None:
        try:
            results = []
            with self.store.batch() as b:
                for op, _ in group:
                    results.append(op(b))
        except Exception as exc:
            if len(group) > 1:  # find the bad one: each op alone
                for one in group:
                    self._commit([one])
                return
            fut = group[0][1]
            log.warning("background store write failed: %s", type(exc).__name__)
            fut.set_exception(exc)
            return
        for (_, fut), result in zip(group, results):
            fut.set_result(result)
