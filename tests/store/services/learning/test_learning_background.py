"""The background pass's child process leaves the cores to the proxy: it runs
niced. Not in the idle scheduling class: a pass holds the store's write lock
while it writes, and on a busy machine an idle-class process could hold it
indefinitely (the proxy's write-ahead would wait behind it)."""
from __future__ import annotations

import multiprocessing
import os
import sys

import pytest

from ctxproxy.store.services.learning.background import NICE, lower_priority


def _report(queue) -> None:
    lower_priority()
    queue.put((os.sched_getscheduler(0), os.nice(0)))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scheduling classes are Linux's")
def test_a_pass_runs_niced_in_the_normal_class():
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_report, args=(queue,))
    child.start()
    mine = os.nice(0)
    try:
        policy, niceness = queue.get(timeout=60)
        assert policy == os.SCHED_OTHER and niceness == min(19, mine + NICE)
    finally:
        child.join(30)
    assert os.nice(0) == mine  # the caller's own niceness is untouched
