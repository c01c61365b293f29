"""The background pass's child process leaves the cores to the proxy: it runs
under the idle scheduling class (only on a core nothing else wants)."""
from __future__ import annotations

import multiprocessing
import os
import sys

import pytest

from ctxproxy.store.services.learning.background import lower_priority


def _report(queue) -> None:
    lower_priority()
    queue.put(os.sched_getscheduler(0))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE is Linux's")
def test_a_pass_runs_under_the_idle_scheduling_class():
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_report, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=60) == os.SCHED_IDLE
    finally:
        child.join(30)
    assert os.sched_getscheduler(0) != os.SCHED_IDLE  # the caller's own class is untouched
