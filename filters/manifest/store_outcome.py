"""Whether a turn's manifest reached the store, said only once it is known.

When a turn ends its manifest is only handed to the store's background
writer, which gathers the manifests of the turns ending within one linger
into one write op (``BackgroundWriter.gather``: the first turn gets the op's
Future, the others ride with it). So the turn's span is held open, not
exported, until that op's outcome is known — at most ``wait`` seconds — and
then ends saying what is true: ``stored`` only for a committed manifest,
``failed`` with the error's type, ``pending`` when the wait ran out first.
The span's end time is the turn's end either way; a trace only arrives that
much later (the span processor batches exports anyway). A failed write is
also logged (the turn ids) and counted, whether or not the span waited.

Which op an item rides with is decided inside ``gather``; ``Handover.hand``
calls it under one lock and records the op it returned, so an item that got
None is known to ride with the last op handed out for that writer. An op
whose write failed may still have committed some of its manifests (the
writer retries a failed op item by item), so those are read back from the
store before any is called failed.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from concurrent.futures import Future
from typing import Any, Callable

from ctxproxy.store.errors import StoreUnavailable

log = logging.getLogger("ctxproxy.filters.manifest")

STORED, FAILED, PENDING, OFF = "stored", "failed", "pending", "off"
_LOGGED_IDS = 20  # turn ids named in one log line about a failed op

# (state, error type name or None): what a held span ends with
Settle = Callable[[str, "str | None"], None]


class Handed:
    """One turn's manifest on its way to the store: its state and, while the
    outcome is not known, what ends its span (``hold``)."""

    __slots__ = ("tenant", "turn_id", "state", "error", "waiting", "_settle", "_lock")

    def __init__(self, tenant: str, turn_id: str, state: str = PENDING, error: str | None = None,
                 waiting: bool = False):
        self.tenant, self.turn_id = tenant, turn_id
        self.state, self.error = state, error
        self.waiting = waiting  # an outcome is still to come (``state`` is pending until it does)
        self._settle: Settle | None = None
        self._lock = threading.Lock()

    def hold(self, settle: Settle) -> None:
        """Call ``settle(state, error)`` once: now if no outcome is to come, else when it
        comes (or when the wait runs out, with ``pending``)."""
        with self._lock:
            if self.waiting:
                self._settle = settle
                return
        settle(self.state, self.error)

    def _resolve(self, state: str, error: str | None) -> None:
        with self._lock:
            self.state, self.error, self.waiting = state, error, False
            settle, self._settle = self._settle, None
        if settle is not None:
            settle(state, error)

    def _give_up(self) -> None:
        """The wait ran out: the span ends saying ``pending``; the outcome, when known, is still logged."""
        with self._lock:
            settle, self._settle = self._settle, None
        if settle is not None:
            settle(PENDING, None)


class _Op:
    """One gathered write op: its Future (weakly: the Future keeps its done
    callback, which holds the op, so a strong reference back would be a cycle
    left for the garbage collector on every write), the turns riding with it,
    and once done, its error."""

    __slots__ = ("fut", "riders", "done", "exc", "lock", "__weakref__")

    def __init__(self, fut: Future) -> None:
        self.fut = weakref.ref(fut)
        self.riders: list[Handed] = []
        self.done = False
        self.exc: BaseException | None = None
        self.lock = threading.Lock()


class Handover:
    """The manifests a filter hands to store writers, and their outcomes.

    ``read_back(tenant, turn_id)``: whether the store holds that manifest (asked
    only after a failed op). ``failed(n, error)``: counts ``n`` manifests not
    stored (a metric), on the writer's thread."""

    def __init__(self, read_back: Callable[[str, str], bool], failed: Callable[[int, str], None] | None = None,
                 wait: float = 5.0) -> None:
        self.read_back = read_back
        self.on_failed = failed
        self.wait = wait

    def hand(self, writer: Any, write_all: Callable, item: Any, prepare: Callable | None,
             tenant: str, turn_id: str) -> Handed:
        """``writer.gather(write_all, item, prepare)``, and the Handed that hears its outcome.
        Raises what the writer raises, or the error of a write refused at once."""
        handed = Handed(tenant, turn_id)
        with _GATHERING:
            fut = writer.gather(write_all, item, prepare)
            ops = _CURRENT.get(writer)
            if ops is None:
                ops = _CURRENT[writer] = {}
            current = ops.get(write_all)
            if fut is None or (current is not None and fut is current.fut()):
                op = current
            else:
                if fut.done() and fut.exception() is not None:
                    raise fut.exception()  # refused at once (the writer is closed): nothing rides with it
                op = ops[write_all] = _Op(fut)
                fut.add_done_callback(lambda f, op=op: self._settle_op(op, f))  # one callback per op
                self._bound(op)
            if op is None:  # an op not handed out here: its outcome cannot be told (the span says pending)
                return handed
            handed.waiting = True
            with op.lock:
                if not op.done:
                    op.riders.append(handed)
                    return handed
                exc = op.exc
        self._settle_riders(exc, [handed])  # the op ended before this turn was added to it
        return handed

    def _bound(self, op: _Op) -> None:
        """On an event loop, the op's spans wait at most ``wait`` seconds: a store that
        hangs (a write lock held elsewhere) delays no trace for longer."""
        if self.wait <= 0:  # no span waits
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (embedded, a thread finishing turns at shutdown): spans wait for the write
            return
        ref = weakref.ref(op)
        loop.call_later(self.wait, lambda: (o := ref()) is not None and _give_up(o))

    def _settle_op(self, op: _Op, fut: Future) -> None:
        exc = fut.exception()
        with op.lock:
            op.done, op.exc = True, exc
            riders, op.riders = op.riders, []
        self._settle_riders(exc, riders)

    def _settle_riders(self, exc: BaseException | None, riders: list[Handed]) -> None:
        if exc is None:
            for h in riders:
                h._resolve(STORED, None)
            return
        error = type(exc).__name__
        # the writer retried a failed op item by item: some may be on disk; not when the store was
        # unavailable (the op's one transaction failed whole, and a read back would only wait on it too)
        kept = [False] * len(riders) if isinstance(exc, StoreUnavailable) else [self._present(h) for h in riders]
        lost = [h for h, present in zip(riders, kept) if not present]
        if lost:  # logged and counted before any span says so
            ids = ", ".join(h.turn_id for h in lost[:_LOGGED_IDS]) + (", ..." if len(lost) > _LOGGED_IDS else "")
            log.warning("manifest: %d turn manifest(s) not stored: %s (turns %s)", len(lost), error, ids)
            if self.on_failed is not None:
                try:
                    self.on_failed(len(lost), error)
                except Exception as e:  # telemetry never fails the writer
                    log.debug("manifest: counting failed writes failed: %s", type(e).__name__)
        for h, present in zip(riders, kept):
            h._resolve(STORED, None) if present else h._resolve(FAILED, error)

    def _present(self, h: Handed) -> bool:
        try:
            return bool(self.read_back(h.tenant, h.turn_id))
        except Exception:  # the store cannot say: not known to be stored
            return False


def _give_up(op: _Op) -> None:
    with op.lock:
        riders = list(op.riders)
    for h in riders:
        h._give_up()


_GATHERING = threading.Lock()  # gather and the record of the op it returned, as one step
# writer -> {write_all: its newest op handed out here}
_CURRENT: "weakref.WeakKeyDictionary[Any, dict[Callable, _Op]]" = weakref.WeakKeyDictionary()
