"""The request side's bookkeeping run after the forward, against run before it, alternated in one process.

    python bench/defer_forward.py [N] [--workload repeat|stream|chat|tool] [--think US]

What the request filters hand to ``Turn.defer`` (the facts and decisions kept
for the next request, the chain's keeping) runs once the forward is on its way
(``filters.base.DEFER_AFTER_FORWARD``), or where it was handed over (off).
Workloads as ``bench/chain_replay.py``: ``repeat`` (run.py's two 4 KB requests
again and again), ``stream`` (the same streamed), ``chat`` / ``tool`` (new turns
of growing conversations, ``profile_engine.growing_turns``). The switch flips
every other block (a pair of requests, a conversation), so both modes share
the load and the caches. ``--think``: the provider answers that many µs after
the forward (the loop idle meanwhile, as while a real provider thinks; the
deferred steps run then).

Prints per mode the event loop thread's CPU from the exchange's start to the
forward (``Exchange.request``: what the client waits for before the provider
has the request) and of the whole turn, mean and median (µs), each request
hook's median CPU, and how many turns deferred anything. A benchmark, not a
test; nothing is written.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from chain_replay import Alternated, calls_for, thread_cpu_spans, workload_parser  # noqa: E402
from enginedriver import EngineDriver  # noqa: E402
from profile_engine import canned, growing_turns  # noqa: E402
from run import REPLY_TEXT  # noqa: E402

import ctxproxy.filters.base as base  # noqa: E402
from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy import engine as E  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402

TO_FORWARD: dict[bool, list[float]] = {True: [], False: []}
DEFERRED: dict[bool, int] = {True: 0, False: 0}


def timed_request() -> None:
    orig = E.Exchange.request

    async def wrapper(self, body, body_length=None):
        on = base.DEFER_AFTER_FORWARD
        c = time.thread_time()
        try:
            return await orig(self, body, body_length)
        finally:
            TO_FORWARD[on].append(time.thread_time() - c)
            DEFERRED[on] += bool(self.turn.deferred)

    E.Exchange.request = wrapper


def thinking(provider, think_us: float):
    if think_us <= 0:
        return provider

    async def send(forward):
        await asyncio.sleep(think_us / 1e6)
        return await provider(forward)

    return send


@contextlib.asynccontextmanager
async def warmed_engine(args: argparse.Namespace, calls: list):
    """The engine on a fresh data dir, its provider taking ``args.think`` µs, warmed on the workload."""
    with tempfile.TemporaryDirectory() as d:
        provider = thinking(canned(Reply.text(REPLY_TEXT, delta_chars=12)), args.think)
        async with EngineDriver(load_config(None, data_dir=d), provider=provider) as drive:
            warm = calls[: 200] if args.workload in ("repeat", "stream") else growing_turns(60, True)
            for call in warm:
                await drive.call(*call)
            yield drive


async def amain(args: argparse.Namespace) -> None:
    calls, block = calls_for(args.workload, args.n)
    run = Alternated()
    async with warmed_engine(args, calls) as drive:
        for m in (True, False):
            TO_FORWARD[m].clear()
            DEFERRED[m] = 0

        def switch(on: bool) -> None:
            base.DEFER_AFTER_FORWARD = on

        await run.run(drive, calls, block, switch)
    base.DEFER_AFTER_FORWARD = True
    run.counted = DEFERRED  # counted at the forward, where the steps are handed over
    run.report({True: "deferred    ", False: "before send "}, "to the forward", TO_FORWARD, "deferring")


def main() -> None:
    ap = workload_parser(__doc__)
    ap.add_argument("--think", type=float, default=0.0, help="µs the provider takes to answer (0)")
    args = ap.parse_args()
    thread_cpu_spans()
    timed_request()
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
