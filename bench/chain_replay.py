"""The request chain's replay against every filter deciding, alternated in one process.

    python bench/chain_replay.py [N] [--workload repeat|stream|chat|tool]

``repeat``: run.py's two 4 KB requests sent again and again (what the replay
is for); ``stream``: the same requests streamed; ``chat`` / ``tool``: new turns
of growing conversations (``profile_engine.growing_turns``: nothing to replay,
so what the chain's bookkeeping costs a turn that is never a repeat). The
chain is switched off (``Pipeline.chain = None``) for every other block (a
pair of requests for ``repeat``/``stream``, a conversation for ``chat``/``tool``),
so both modes run under the same load and caches. Prints per mode the event
loop thread's CPU of the request filters' pass (``Pipeline._request_pass``) and
of the whole turn (mean and median, µs), and each request hook's median CPU.
A benchmark, not a test; nothing is written.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from profile_engine import TURNS_PER_SESSION, canned, growing_turns  # noqa: E402
from run import KINDS, REPLY_TEXT  # noqa: E402

import ctxproxy.filters.base as base  # noqa: E402
from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402

ON = {"chain": True}
PASS: dict[bool, list[float]] = {True: [], False: []}


def timed_pass() -> None:
    orig = base.Pipeline._request_pass

    async def wrapper(self, turn, skipped):
        c = time.thread_time()
        try:
            return await orig(self, turn, skipped)
        finally:
            PASS[ON["chain"]].append(time.thread_time() - c)

    base.Pipeline._request_pass = wrapper


def calls_for(workload: str, n: int) -> tuple[list[tuple], int]:
    """The calls and the size of a block run in one mode."""
    if workload in ("repeat", "stream"):
        body = "stream_body" if workload == "stream" else "body"
        return [("POST", k.path, k.headers, getattr(k, body)) for k in KINDS] * n, 2
    return growing_turns(n, workload == "tool"), TURNS_PER_SESSION


class Alternated:
    """Per mode (True/False) of an alternated run: each whole turn's and each request hook's CPU of the event
    loop's thread, and how many turns ``counted`` held."""

    def __init__(self):
        self.whole: dict[bool, list[float]] = {True: [], False: []}
        self.hooks: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
        self.counted = {True: 0, False: 0}

    async def run(self, drive, calls: list[tuple], block: int, switch, counted=lambda turn: False) -> None:
        """Sends ``calls``, the mode flipped every ``block`` of them by ``switch(on)``."""
        for i, call in enumerate(calls):
            on = (i // block) % 2 == 1
            switch(on)
            c0 = time.thread_time()
            got = await drive.call(*call)
            self.whole[on].append(time.thread_time() - c0)
            assert got.status == 200, got.body[:200]
            self.counted[on] += bool(counted(got.turn))
            for name, t0, t1, *_ in got.turn.spans:
                if name.endswith(".request"):
                    self.hooks[on].setdefault(name[:-8], []).append((t1 - t0) / 1e3)

    def report(self, labels: dict[bool, str], part: str, part_cpu: dict[bool, list[float]], counted: str) -> None:
        """Prints per mode ``part``'s CPU (``part_cpu``), the whole turn's, the count and the hooks' medians."""
        for on in (False, True):
            f, w = part_cpu[on], self.whole[on]
            print(f"{labels[on]}: {part} CPU mean {statistics.mean(f) * 1e6:.1f} "
                  f"median {statistics.median(f) * 1e6:.1f} us; whole turn mean {statistics.mean(w) * 1e6:.1f} "
                  f"median {statistics.median(w) * 1e6:.1f} us; turns {len(w)}, {counted} {self.counted[on]}")
            print("    hooks' median CPU (us): " + ", ".join(
                f"{k} {statistics.median(v):.1f}" for k, v in self.hooks[on].items()))


def thread_cpu_spans() -> None:
    """The pipeline's clock reads this thread's CPU: each hook's span is its CPU."""
    base.time = types.SimpleNamespace(perf_counter=time.thread_time, time_ns=time.thread_time_ns)


async def amain(args: argparse.Namespace) -> None:
    calls, block = calls_for(args.workload, args.n)
    run = Alternated()
    with tempfile.TemporaryDirectory() as d:
        async with EngineDriver(load_config(None, data_dir=d),
                                provider=canned(Reply.text(REPLY_TEXT, delta_chars=12))) as drive:
            pipes = list(drive.engine.pipelines.values())
            chains = [p.chain for p in pipes]
            warm = calls[: 200] if args.workload in ("repeat", "stream") else growing_turns(60, True)
            for call in warm:
                await drive.call(*call)
            PASS[True].clear()
            PASS[False].clear()

            def switch(on: bool) -> None:
                ON["chain"] = on
                for p, c in zip(pipes, chains):
                    p.chain = c if on else None

            await run.run(drive, calls, block, switch, counted=lambda turn: turn.replayed)
    run.report({True: "chain replay", False: "chain off   "}, "request pass", PASS, "replayed")


def workload_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of a bench that alternates two modes over ``calls_for``'s workloads."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=2000,
                    help="repeat/stream: turns of each request kind; chat/tool: new turns (2000)")
    ap.add_argument("--workload", choices=("repeat", "stream", "chat", "tool"), default="repeat")
    return ap


def main() -> None:
    args = workload_parser(__doc__).parse_args()
    thread_cpu_spans()
    timed_pass()
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
