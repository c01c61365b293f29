"""The background pass's child process leaves the cores to the proxy: it runs
niced, and gives way to the proxy's turns in flight (a bounded wait before each
step, so it always finishes). Not in the idle scheduling class: a pass holds
the store's write lock while it writes, and on a busy machine an idle-class
process could hold it indefinitely (the proxy's write-ahead would wait behind
it)."""
from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys

from types import SimpleNamespace

import pytest
from learnsessions import Say, run_agent

from ctxproxy.proxy.edge.server import store_opener
from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store.services.learning.background import NICE, Background, GiveWay, TurnsInFlight, lower_priority


def learned(store):
    return {r.statement: r for r in store.memories.iter_tenant("default") if r.created_by == "learn"}


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


async def test_a_pass_finishes_while_turns_run(make_proxy, fake):
    """The pass gives way to turns in flight, at most MAX_WAIT before each step: a proxy that
    is never idle (a turn always in flight here, and more coming one after another) still sees
    the pass through, and shutdown stops it between two steps."""
    proxy = await make_proxy("[learn]\nmin_idle = 0.0\ninterval = 1.0\n")
    said = ["Never commit generated files.", "Always run the linter before pushing.",
            "Prefer small commits with one change each."]
    for k, sentence in enumerate(said):
        await run_agent(proxy, fake, "claude-code", [Say(f"Tidy module {k}. {sentence}", "OK.")],
                        session=f"b{k}", user="alice")
    counted = proxy.state.turns
    assert isinstance(counted, TurnsInFlight)  # serve's edge counts its model calls for the pass
    started = counted.shared[1]
    counted.shared[0] += 1  # a turn that never ends: the pass can never wait for an idle proxy
    client = proxy.anthropic(default_headers={"x-ctx-session": "busy", "x-ctx-user": "bob"})
    store = proxy.settled_store()
    try:
        # bounded by time, not by a count of turns: spawning the pass's child and importing the
        # package takes seconds on a loaded machine, while a turn takes milliseconds
        deadline = asyncio.get_running_loop().time() + 240
        i = 0
        while not all(s in learned(store) for s in said) and asyncio.get_running_loop().time() < deadline:
            i += 1
            fake.script(Reply.text("ok"))
            await client.messages.create(model="claude-test-1", max_tokens=16,
                                         messages=[{"role": "user", "content": f"turn {i}"}])
            store = proxy.settled_store()
        got = learned(store)
        assert all(s in got and got[s].status == "proposed" for s in said), f"after {i} turns: {sorted(got)}"
    finally:
        counted.shared[0] -= 1
        await client.close()
    assert counted.count == 0 and counted.shared[1] > started  # each turn counted, and uncounted at its end


def test_give_way_waits_for_turns_at_most_max_wait_and_stops_at_shutdown():
    turns = TurnsInFlight(multiprocessing.get_context("spawn"))
    learner = SimpleNamespace(stopping=False)
    give_way = GiveWay(turns.shared, learner, pace=0.0, max_wait=0.05, poll=0.001)
    give_way()  # no turn in flight: the step goes on at once
    assert give_way.forced == 0
    with turns:
        give_way()  # a turn that does not end: the wait runs out and the step runs anyway
        assert give_way.forced == 1
        learner.stopping = True
        give_way = GiveWay(turns.shared, learner, pace=0.0, max_wait=3600.0, poll=0.001)
        give_way()  # shutting down: no waiting for turns (returns: the test does not hang)
        assert give_way.forced == 0
    assert turns.count == 0 and turns.shared[1] == 1  # one turn started, none in flight


async def test_shutdown_stops_a_pass_that_is_giving_way(make_proxy, fake):
    """A pass waiting for a quiet proxy that never comes stops at shutdown between two steps:
    stop() returns, the pass's thread and child are gone, what the pass wrote stands."""
    proxy = await make_proxy("[learn]\nenabled = false\nmin_idle = 0.0\n")
    for k in range(6):
        await run_agent(proxy, fake, "claude-code", [Say(f"Tidy module {k}. Never commit file {k}.", "OK.")],
                        session=f"s{k}", user="alice")
    store = proxy.settled_store()
    cfg = proxy.state.config
    job = Background(store_opener(cfg), cfg, proxy.state.services["data_dir"], first_delay=0.0, grace=30.0)
    job.turns.shared[0] = 1  # a request that never ends: every step waits its longest
    job.start()
    try:
        for _ in range(3000):  # bounded: the child starts (imports), then takes the tenant's lease
            if store.learning.lease("default") is not None:
                break
            await asyncio.sleep(0.02)
        assert store.learning.lease("default") is not None  # the pass is under way
    finally:
        await asyncio.to_thread(job.stop, 60)
    assert not job._thread.is_alive()
    assert store.learning.lease("default") is None  # it let go of the lease on its way out
