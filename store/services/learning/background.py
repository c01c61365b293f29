"""The learning job in the background of ``ctxproxy serve``: one thread per process.

    job = Background(learner, interval=300)   # [learn] interval
    job.start()                               # first pass after one interval
    ...
    job.stop()                                # at shutdown: the pass in progress finishes its step

Off the event loop and off the turn path: a daemon thread that runs
``Learner.tick`` every ``interval`` seconds, at a lower scheduling priority
than the proxy's threads (Linux: its own nice value), so that a turn waits
for it as little as the store allows. With ``--workers N`` every worker runs
one; the tenant's lease lets one of them consolidate at a time.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Any

log = logging.getLogger("ctxproxy.learn")

NICE = 10  # added to the thread's scheduling niceness where the OS allows it per thread


class Background:
    def __init__(self, learner: Any, interval: float, *, first_delay: float | None = None) -> None:
        self.learner = learner
        self.interval = max(1.0, float(interval))
        self.first_delay = self.interval if first_delay is None else first_delay
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="ctxproxy-learn", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:  # a lower priority for this thread only (Linux threads have their own nice value)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, os.getpriority(
                os.PRIO_PROCESS, threading.get_native_id()) + NICE))
        except (AttributeError, OSError):
            pass
        delay = self.first_delay
        while not self._stop.wait(delay):
            try:
                self.learner.tick()
            except Exception:  # the next pass tries again; the proxy goes on either way
                log.exception("learn: background pass failed")
            self.passes += 1
            delay = self.interval

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self.learner.stopping = True
        if self._thread is not None:
            self._thread.join(timeout)
