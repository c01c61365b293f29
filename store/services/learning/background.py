"""The learning job in the background of ``ctxproxy serve``.

    job = Background(open_store, cfg, data_dir)   # open_store: a picklable function giving the store
    job.start()                                   # the first pass after one [learn] interval
    ...
    job.stop()                                    # at shutdown: a pass in progress stops between two steps

Off the event loop and off the turn path, and out of the proxy's process: a
thread waits ``[learn] interval`` seconds, then runs one pass (``Learner.tick``)
in a child process of its own (spawned, with its own store handle, niced),
and waits again. The proxy's event loop never shares the interpreter lock
with the job; the thread sleeps on the child's exit and on shutdown (no
polling while a pass runs).

The pass gives way to turns (``GiveWay``): it works in small steps (one
session read, a few proposals written) and before each one waits while the
proxy has a turn in flight or started one within the last ``POLL`` seconds
(counters in shared memory, ``job.turns``, that the serving process keeps
around each proxied HTTP request) — at most
``MAX_WAIT`` seconds, so a proxy that is never idle still sees the pass
finish, a step at a time — and rests as long as the last step worked. With
``--workers N`` every worker starts passes; the tenant's lease lets one of
them consolidate at a time. A child that does not stop within ``grace``
seconds of shutdown is terminated (what it committed stands: every step is
idempotent, the watermark moves only after a consolidation).
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from multiprocessing.connection import wait
from typing import Any, Callable, Sequence

log = logging.getLogger("ctxproxy.learn")

NICE = 10  # the child's added scheduling niceness
PACE = 1.0  # the child rests as long as it works between two steps: at most half a core
MAX_WAIT = 0.25  # seconds a step waits for the proxy to have no turn in flight, then runs anyway
POLL = 0.005  # seconds between two looks at the proxy's turns in flight


class TurnsInFlight:
    """The serving process's count of proxied requests in flight (model calls
    among them), in shared memory the pass's child process reads (``with
    job.turns:`` around each). Only the event loop's thread changes it."""

    def __init__(self, ctx: Any) -> None:
        self.shared = ctx.RawArray("q", 2)  # [in flight, started so far]

    def __enter__(self) -> "TurnsInFlight":
        self.shared[0] += 1
        self.shared[1] += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shared[0] -= 1

    @property
    def count(self) -> int:
        return int(self.shared[0])


class GiveWay:
    """Between two steps of a pass (``Learner.between``): rest as long as the
    last step's CPU took (``pace``), and on until the proxy is quiet — no turn
    in flight and none started for one ``poll`` — ``max_wait`` seconds at most,
    so the pass always finishes. Stopping (shutdown) cuts the wait short."""

    def __init__(self, turns: Any, learner: Any, *, pace: float = PACE, max_wait: float = MAX_WAIT,
                 poll: float = POLL, hold: Any = None) -> None:
        self.turns, self.learner = turns, learner
        self.hold = hold  # the benchmark's: while its value is set, the pass waits here (between two steps)
        self.pace, self.max_wait, self.poll = pace, max_wait, poll
        self.waited = 0.0  # seconds spent giving way (the benchmark reports it)
        self.forced = 0  # steps that ran while a turn was in flight (the wait ran out)
        self._worked = time.process_time()

    def __call__(self) -> None:
        for _ in range(360_000):  # bounded (2 hours); never holding the store's write lock here
            if self.hold is None or not self.hold.value or self.learner.stopping:
                break
            time.sleep(0.02)
        start = time.perf_counter()
        rest = min(self.max_wait, (time.process_time() - self._worked) * self.pace)  # the CPU the step took
        deadline = start + max(rest, self.max_wait)
        if rest > 0:
            time.sleep(rest)
        now = time.perf_counter()
        seen = -1
        # quiet: no turn in flight, and none started for one poll (turns one after another are no pause)
        while self.turns is not None and not self.learner.stopping and (self.turns[0] > 0 or self.turns[1] != seen):
            if now >= deadline:
                self.forced += 1
                break
            seen = self.turns[1]
            time.sleep(self.poll)
            now = time.perf_counter()
        self.waited += now - start
        self._worked = time.process_time()


def lower_priority() -> str:
    """This process yields the cores to the proxy: a higher niceness. Not the
    idle scheduling class: a pass holds the store's write lock while it writes,
    and a process that only runs on an idle core could hold it for as long as
    the machine is busy, stalling the proxy's own write-ahead behind it. Says
    which it got."""
    try:
        os.nice(NICE)
        return "nice"
    except (AttributeError, OSError):
        return "normal"


def _stopped(stop: Any) -> bool:
    return bool(stop.value) if hasattr(stop, "value") else stop.is_set()


def _watch(stop: Any, learner: Any) -> None:
    """Polls the parent's flag: never waits on a process-shared condition,
    which a parent setting it after this process ended could block on forever
    (a multiprocessing Event counts a sleeper that exited as still sleeping)."""
    while not _stopped(stop):
        time.sleep(0.2)
    learner.stopping = True


def child_main(open_store: Callable[[], Any], cfg: Any, data_dir: str, stop: Any,
               tenants: Sequence[str] | None = None, ready: Any = None, turns: Any = None,
               gave_way: Any = None, hold: Any = None) -> None:
    """One pass in a child process: every tenant (or ``tenants``, forced: the
    benchmark's), then exit. ``stop`` (a shared flag or an event) makes it
    stop between two steps; ``ready`` (an event) is set once the store is
    open; ``turns``: the proxy's turns in flight (``TurnsInFlight.shared``),
    given way to; ``gave_way`` (a shared array of 2 doubles): seconds waited
    and steps forced, and ``hold`` (a shared flag: the pass waits between two
    steps while it is set), for the benchmark."""
    lower_priority()
    from .job import Learner

    store = open_store()
    give_way = None
    try:
        learner = Learner.for_config(store, cfg, data_dir)
        learner.between = give_way = GiveWay(turns, learner, hold=hold)
        watcher = threading.Thread(target=_watch, args=(stop, learner), daemon=True)
        watcher.start()
        if ready is not None:
            ready.set()
        if tenants is None:
            learner.tick()
        else:
            for tenant in tenants:
                learner.run(tenant)
    finally:
        store.close()
        if gave_way is not None and give_way is not None:
            gave_way[0], gave_way[1] = give_way.waited, give_way.forced


class Background:
    def __init__(self, open_store: Callable[[], Any], cfg: Any, data_dir: str, *,
                 first_delay: float | None = None, grace: float = 10.0) -> None:
        self.open_store, self.cfg, self.data_dir = open_store, cfg, str(data_dir)
        self.interval = max(1.0, float(cfg.learn.interval))
        self.first_delay = self.interval if first_delay is None else first_delay
        self.grace = grace
        self._ctx = multiprocessing.get_context("spawn")  # never fork a process that holds LMDB
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()  # stop() wakes the thread waiting on a pass
        self._child_stop = self._ctx.Value("b", 0, lock=False)  # a flag the child polls
        self.turns = TurnsInFlight(self._ctx)  # the serving process counts its model calls here
        self._thread: threading.Thread | None = None
        self.passes = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="ctxproxy-learn", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        delay = self.first_delay
        while not self._stop.wait(delay):
            self._child_stop.value = 0
            child = self._ctx.Process(target=child_main, name="ctxproxy-learn",
                                      args=(self.open_store, self.cfg, self.data_dir, self._child_stop, None, None,
                                            self.turns.shared),
                                      daemon=True)
            try:
                child.start()
                wait([child.sentinel, self._wake_r])  # its exit or shutdown: no wake-ups while it runs
                if child.is_alive():  # shutting down
                    self._child_stop.value = 1
                    child.join(self.grace)
                    if child.is_alive():
                        child.terminate()
                        child.join(5)
                elif child.exitcode:
                    log.warning("learn: a background pass exited with code %s", child.exitcode)
            except Exception:  # the next pass tries again; the proxy goes on either way
                log.exception("learn: background pass failed")
            self.passes += 1
            delay = self.interval

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        self._child_stop.value = 1
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(self.grace + 10 if timeout is None else timeout)
        if self._thread is None or not self._thread.is_alive():
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
