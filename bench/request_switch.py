"""A switch of the request side on and off, alternated in one process.

    python bench/request_switch.py --switch MODULE:NAME [--switch ...] [N]
                                   [--workload repeat|stream|chat|tool] [--think US] [--gap US]

``--switch MODULE:NAME`` names a module's boolean switch of what a request costs (e.g.
``ctxproxy.filters.base:SHARE_READ_STAMP``; several are flipped together): set True and False every other
block (a pair of requests for ``repeat``/``stream``, a conversation for
``chat``/``tool``; workloads as ``bench/chain_replay.py``), so both modes share
the load and the caches; left True at the end. ``--think``: the provider
answers that many µs after the forward; ``--gap``: the client waits that long
before its next request (both 0: back to back, every cache hot; e.g. 400 and
200: the machine's other work runs in between and each request pays for its
caches again, as a served one does).

Prints per mode the event loop thread's CPU from the exchange's start to the
forward (``Exchange.request``) and of the whole turn, mean and median (µs), and
each request hook's median CPU. A benchmark, not a test; nothing is written.
"""
from __future__ import annotations

import asyncio
import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from chain_replay import Alternated, calls_for, thread_cpu_spans, workload_parser  # noqa: E402
from defer_forward import warmed_engine  # noqa: E402

from ctxproxy.proxy import engine as E  # noqa: E402

TO_FORWARD: dict[bool, list[float]] = {True: [], False: []}


def timed_request(mode) -> None:
    orig = E.Exchange.request

    async def wrapper(self, body, body_length=None):
        on = mode()
        c = time.thread_time()
        try:
            return await orig(self, body, body_length)
        finally:
            TO_FORWARD[on].append(time.thread_time() - c)

    E.Exchange.request = wrapper


class _Pausing:
    """The driver, the client waiting ``gap_us`` after each answer."""

    def __init__(self, drive, gap_us: float):
        self.drive, self.gap = drive, gap_us / 1e6

    async def call(self, *a):
        got = await self.drive.call(*a)
        if self.gap:
            await asyncio.sleep(self.gap)
        return got


async def amain(args, switches: list[tuple[object, str]]) -> None:
    calls, block = calls_for(args.workload, args.n)
    run = Alternated()
    async with warmed_engine(args, calls) as drive:
        TO_FORWARD[True].clear()
        TO_FORWARD[False].clear()

        def switch(on: bool) -> None:
            for module, name in switches:
                setattr(module, name, on)

        await run.run(_Pausing(drive, args.gap), calls, block, switch)
    switch(True)
    names = "+".join(name for _, name in switches)
    run.report({True: f"{names} on ", False: f"{names} off"}, "to the forward", TO_FORWARD, "-")


def main() -> None:
    ap = workload_parser(__doc__)
    ap.add_argument("--switch", required=True, action="append", help="MODULE:NAME, a boolean switch (repeatable)")
    ap.add_argument("--think", type=float, default=0.0, help="µs the provider takes to answer (0)")
    ap.add_argument("--gap", type=float, default=0.0, help="µs between an answer and the next request (0)")
    args = ap.parse_args()
    switches = []
    for spec in args.switch:
        mod_name, _, name = spec.partition(":")
        module = importlib.import_module(mod_name)
        if not isinstance(getattr(module, name, None), bool):
            ap.error(f"{spec} is not a boolean switch")
        switches.append((module, name))
    thread_cpu_spans()
    timed_request(lambda: getattr(*switches[0]))
    asyncio.run(amain(args, switches))


if __name__ == "__main__":
    main()
