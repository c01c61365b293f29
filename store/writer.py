"""Group commit off the event loop: writes that may land after the turn.

Work that must be durable *before* a request goes upstream (the effect
ledger's write-ahead) commits inline. Work that only has to land eventually —
manifests, calls recorded at response end — goes through ``BackgroundWriter``:
one thread drains a queue and commits everything queued within a short
linger window in ONE batch, so N turns cost one fsync instead of N and the
event loop never waits for a disk. ``flush()`` commits at once.

``submit(op)`` takes ``op(batch)`` and returns a Future. If a group's commit
fails, its ops are retried one by one so one bad write cannot take the others
down; each Future carries its own outcome (an op may so run twice: it must
start over cleanly). An op alone that lost a race with another writer of the
same rows (``StoreConflict``: another replica's transaction) runs again.
A store shared by several processes (``commit_per_key``: PostgreSQL) gets
one transaction per session of a group instead: a session's rows stay
locked only while its own writes run, so another replica's next turn of
that session does not wait for the rest of the group. ``urgent=True`` commits without lingering: a write-ahead
that a request waits for (``filters.base.Commit``) rides with whatever else is
queued, and ops run in the order submitted, so it reads what came before it.

``gather(..., prepare=fn)`` has the thread run ``fn(item)`` while it lingers,
before the commit: work an item needs before it is written (the manifest's
document) stays out of the commits a write-ahead waits for unless one cuts
the linger short. The thread prepares every item waiting in one go (the ones
that gathered while it waited for the interpreter lock), looks again at once,
and with none left waits until ``PREPARE_WAKE`` are gathered unprepared: one
wake-up for a few items, not one each, and no timed wake-up landing in the
middle of the next request (a wake-up is a thread switch and the interpreter
lock handed over twice). Items fewer than that when the linger ends are built
in the commit, by the op that writes them.

A group made only of gathered ops (nothing waits for them to be durable: a
turn's manifest) is committed with ``store.batch(durable=False)`` where the
store offers it (``lazy_commits``: LMDB): one disk flush a commit instead of
two, the meta page flushed by the next commit. The thread flushes it
(``store.sync_lazy()``) when it finds nothing queued, before a ``flush``
returns and at close; every other group commits as before.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable

from .errors import StoreConflict, StoreUnavailable

log = logging.getLogger("ctxproxy.store")

Op = Callable[[Any], Any]
CONFLICT_RETRIES = 3  # a write alone that lost a race with another writer runs again this often
_STOP = object()
_NOW = object()  # flush marker: commit what is gathered without lingering
PREPARE_MAX = 16  # items prepared in one go at most (~25 us each): the interpreter lock held a bounded while
# items waiting unprepared that wake an idle lingering thread: fewer wake-ups (each a thread switch
# and the interpreter lock handed over and back) for a few builds more in a commit cut short
PREPARE_WAKE = 4


class BackgroundWriter:
    def __init__(self, store: Any, max_group: int = 256, linger: float = 0.02):
        self.store = store
        self.max_group = max_group
        self.linger = linger  # seconds to gather more writes into one commit
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._hurry = threading.Event()
        self._wake = threading.Event()  # a lingering thread has an item to prepare, or must hurry
        self._idle = False  # the lingering thread waits for an item to prepare: the next one wakes it
        self._gathered: dict[Any, list] = {}  # ``gather``: items waiting for their op, by what writes them
        self._prepares: dict[Any, Callable[[Any], Any]] = {}  # ``gather``'s prepare, by what writes the items
        self._prepared: dict[Any, int] = {}  # how many of the items waiting were handed to their prepare

    def submit(self, op: Op, urgent: bool = False, key: Any = None) -> Future:
        """``key``: what the op writes under (a session's (tenant, session)).
        A group runs its ops ordered by key (keyless ones last), each key's in
        the order submitted: every process's groups then lock the rows of
        several sessions in one order, and two processes sharing a database
        do not deadlock on them."""
        fut: Future = Future()
        fut.order_key = key  # type: ignore[attr-defined]
        with self._lock:
            if self._closed:
                fut.set_exception(RuntimeError("store writer is closed"))
                return fut
            if self._thread is None or not self._thread.is_alive():  # started on first use: after any fork
                self._thread = threading.Thread(target=self._run, name="ctxproxy-store-writer", daemon=True)
                self._thread.start()
            self._q.put((op, fut))
        if urgent:
            self._hurry_up()
        return fut

    def _hurry_up(self) -> None:
        self._hurry.set()
        self._wake.set()

    def gather(self, write_all: Callable[[Any, list], Any], item: Any,
               prepare: Callable[[Any], Any] | None = None) -> Future | None:
        """Queue ``item`` for ``write_all(batch, items)``, which writes every item
        gathered by the time its op runs: one op per batch, not one per item
        (a turn's end adds one; a busy proxy ends many turns within a linger).
        Returns the op's Future when this call submitted it, else None (the item
        rides with an op already queued, which runs before any ``flush`` that
        comes after this call). The op takes its items once: run again (a
        group's retry, a replayed batch), it writes the same ones.
        ``prepare(item)``: run on the writer's thread while it lingers, if it
        gets to the item before the op runs (``write_all`` must not count on it)."""
        with self._lock:
            closed = self._closed
            if not closed:
                if prepare is not None:
                    self._prepares[write_all] = prepare
                items = self._gathered.get(write_all)
                if items is not None:
                    items.append(item)
                    if prepare is not None and len(items) - self._prepared.get(write_all, 0) >= PREPARE_WAKE:
                        self._wake_idle()
                    return None
                mine = self._gathered[write_all] = [item]
        if closed:  # refused at once; items gathered before stay with the op queued for them
            return self.submit(lambda batch: write_all(batch, [item]))
        taken: list[list] = []

        def take() -> list:
            if not taken:
                with self._lock:
                    taken.append(self._gathered.pop(write_all, []))
                    self._prepared.pop(write_all, None)
            return taken[0]

        def op(batch: Any) -> Any:
            return write_all(batch, take())

        op.gathered = True  # type: ignore[attr-defined]  (nothing waits for it to be durable)
        # when the op fails alone, the writer runs its items one by one (``_commit_running``)
        op.pieces = lambda: [lambda batch, one=one: write_all(batch, [one]) for one in take()]  # type: ignore

        fut = self.submit(op)
        if prepare is not None and PREPARE_WAKE <= 1:
            with self._lock:
                self._wake_idle()
        if fut.done() and fut.exception() is not None:  # closed: the op never runs; nothing waits for it
            with self._lock:
                if self._gathered.get(write_all) is mine:
                    self._gathered.pop(write_all)
                    self._prepared.pop(write_all, None)
        return fut

    def _wake_idle(self) -> None:
        """Wake the lingering thread if it waits for an item to prepare (with
        ``_lock`` held); one busy preparing finds the item when it looks next."""
        if self._idle:
            self._idle = False
            self._wake.set()

    def flush(self, timeout: float = 10.0) -> None:
        """Commit now and wait until everything submitted so far is committed
        (or failed): read-your-writes for the admin API, the CLI and the next
        request of a session in this process."""
        fut = self.submit(_NOW)
        self._hurry_up()
        try:
            fut.exception(timeout)
        except TimeoutError:
            raise TimeoutError(f"the store writer did not commit within {timeout:g} s (is the store's "
                               "write lock held by another process?)") from None

    def close(self, timeout: float = 10.0) -> None:
        """Commit what is queued, then stop the thread. A store that can be
        unreachable (PostgreSQL) is told it is closing, so a write waiting for
        it fails at once (logged, its Future failed: never taken as written)
        instead of holding the shutdown."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
            self._q.put(_STOP)
            self._hurry_up()
        closing = getattr(self.store, "closing", None)
        if closing is not None:
            closing()
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            try:
                first = self._q.get_nowait()
            except queue.Empty:  # nothing queued: a lazy commit's meta page goes to disk now
                self._sync_lazy()
                first = self._q.get()  # block until there is work
            group = [first]
            if group[0] is not _STOP and group[0][0] is not _NOW:
                self._linger()
            self._hurry.clear()
            while len(group) < self.max_group:
                try:
                    group.append(self._q.get_nowait())
                except queue.Empty:
                    break
            stop = _STOP in group
            group = [g for g in group if g is not _STOP]
            if group:
                try:
                    self._commit(group)
                except BaseException as exc:  # the thread lives on: requests wait on it
                    log.error("store writer: a write group failed: %s", type(exc).__name__)
                    for _, fut in group:
                        if not fut.done():
                            fut.set_exception(exc if isinstance(exc, Exception) else
                                              RuntimeError(f"store write aborted ({type(exc).__name__})"))
            if stop:
                self._sync_lazy()
                return

    def _sync_lazy(self) -> None:
        sync = getattr(self.store, "sync_lazy", None)
        if sync is not None:
            try:
                sync()
            except Exception as exc:  # the next commit flushes it; nothing waits for it here
                log.warning("store writer: flushing the last commit failed: %s", type(exc).__name__)

    def _linger(self) -> None:
        """Wait up to the linger for more writes (they just queue: no wake-up per
        write), preparing the gathered items meanwhile: all those waiting, then
        a look again; with none waiting, until one comes. A flush (or close, or
        an urgent write) cuts the wait short."""
        deadline = time.monotonic() + self.linger
        while not self._hurry.is_set():
            tasks = self._next_prepares()
            for prepare, item in tasks:
                try:
                    prepare(item)
                except Exception as exc:  # the op meets it again when it writes the item, and reports it
                    log.debug("store writer: preparing a write failed: %s", type(exc).__name__)
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if tasks:
                continue  # look again at once: the next look that finds none marks the thread idle
            if not self._hurry.is_set():  # set before _wake: a hurry whose wake the look cleared is seen here
                self._wake.wait(left)

    def _next_prepares(self) -> list[tuple[Callable[[Any], Any], Any]]:
        """The gathered items not yet handed to their prepare (at most
        ``PREPARE_MAX``), each with it. None waiting: the thread is marked idle,
        so the next item gathered wakes it."""
        out: list[tuple[Callable[[Any], Any], Any]] = []
        with self._lock:
            for write_all, prepare in self._prepares.items():
                items = self._gathered.get(write_all)
                done = self._prepared.get(write_all, 0)
                if items is not None and done < len(items):
                    take = items[done:done + PREPARE_MAX - len(out)]
                    self._prepared[write_all] = done + len(take)
                    out.extend((prepare, item) for item in take)
                    if len(out) >= PREPARE_MAX:
                        break
            if not out:
                self._idle = True
                self._wake.clear()  # under the lock: an item gathered after this look sets it again
        return out

    def _commit(self, group: list[tuple[Op, Future]]) -> None:
        # A future cancelled before its op ran (the request waiting for it was
        # cancelled) is dropped; the others can no longer be cancelled.
        group = [(op, fut) for op, fut in group if fut.set_running_or_notify_cancel()]
        if group and getattr(self.store, "commit_per_key", False):
            # one transaction per session: a session's rows stay locked only while
            # its own writes run, not while the rest of the group does
            parts: dict[tuple, list[tuple[Op, Future]]] = {}
            for item in sorted((g for g in group if g[0] is not _NOW), key=_order):
                parts.setdefault(_order(item), []).append(item)
            for part in parts.values():
                self._commit_running(part)
            for op, fut in group:
                if op is _NOW:
                    fut.set_result(None)
        elif group:
            self._commit_running(group)

    def _batch(self, n: int, lazy: bool = False) -> Any:
        # a store whose groups can wait on another process's row locks bounds the wait
        group_batch = getattr(self.store, "group_batch", None)
        if n > 1 and group_batch is not None:
            return group_batch()
        return self.store.batch(durable=False) if lazy else self.store.batch()

    def _commit_running(self, group: list[tuple[Op, Future]], attempt: int = 0) -> None:
        try:
            results = []
            ops = sorted((g for g in group if g[0] is not _NOW), key=_order)
            flushing = len(ops) < len(group)
            if ops:
                lazy = (not flushing and getattr(self.store, "lazy_commits", False)
                        and all(getattr(op, "gathered", False) for op, _ in ops))
                with self._batch(len(ops), lazy) as b:
                    for op, fut in ops:
                        results.append((fut, op(b)))
            if flushing:  # a flush returns with every earlier commit on disk, a lazy one's too
                self._sync_lazy()
            done = dict((id(f), r) for f, r in results)
        except Exception as exc:
            if isinstance(exc, StoreUnavailable):  # nothing lands now: each op alone would wait out the store again
                log.warning("background store write failed: %s", type(exc).__name__)
                for op, fut in group:
                    fut.set_result(None) if op is _NOW else fut.set_exception(exc)
                return
            if len(group) > 1:  # find the bad one: each op alone
                for one in group:
                    self._commit_running([one])
                return
            if isinstance(exc, StoreConflict) and attempt < CONFLICT_RETRIES:
                return self._commit_running(group, attempt + 1)  # it lost a race: nothing was written
            op, fut = group[0]
            pieces = op.pieces() if hasattr(op, "pieces") else ()
            if len(pieces) > 1:  # a gathered op: each item alone, so one bad item fails alone
                outcomes = [Future() for _ in pieces]
                for piece, out in zip(pieces, outcomes):
                    out.set_running_or_notify_cancel()
                    self._commit_running([(piece, out)])
                failed = [out.exception() for out in outcomes if out.exception() is not None]
                if failed:
                    fut.set_exception(failed[0])
                else:
                    fut.set_result(None)
                return
            log.warning("background store write failed: %s", type(exc).__name__)
            fut.set_exception(exc)
            return
        for op, fut in group:
            fut.set_result(None if op is _NOW else done[id(fut)])


def _order(item: tuple[Op, Future]) -> tuple:
    key = getattr(item[1], "order_key", None)
    return (1, "") if key is None else (0, repr(key))
