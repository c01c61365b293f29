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


async def amain(args: argparse.Namespace) -> None:
    calls, block = calls_for(args.workload, args.n)
    whole: dict[bool, list[float]] = {True: [], False: []}
    hooks: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    replayed = {True: 0, False: 0}
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
            for i, call in enumerate(calls):
                on = ON["chain"] = (i // block) % 2 == 1
                for p, c in zip(pipes, chains):
                    p.chain = c if on else None
                c0 = time.thread_time()
                got = await drive.call(*call)
                whole[on].append(time.thread_time() - c0)
                assert got.status == 200, got.body[:200]
                replayed[on] += bool(got.turn.replayed)
                for name, t0, t1, *_ in got.turn.spans:
                    if name.endswith(".request"):
                        hooks[on].setdefault(name[:-8], []).append((t1 - t0) / 1e3)
    for on in (False, True):
        p, w = PASS[on], whole[on]
        print(f"{'chain replay' if on else 'chain off   '}: request pass CPU mean {statistics.mean(p) * 1e6:.1f} "
              f"median {statistics.median(p) * 1e6:.1f} us; whole turn mean {statistics.mean(w) * 1e6:.1f} "
              f"median {statistics.median(w) * 1e6:.1f} us; turns {len(w)}, replayed {replayed[on]}")
        print("    hooks' median CPU (us): " + ", ".join(
            f"{k} {statistics.median(v):.1f}" for k, v in hooks[on].items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=2000,
                    help="repeat/stream: turns of each request kind; chat/tool: new turns (2000)")
    ap.add_argument("--workload", choices=("repeat", "stream", "chat", "tool"), default="repeat")
    args = ap.parse_args()
    # the pipeline's clock reads this thread's CPU: each hook's span is its CPU
    base.time = types.SimpleNamespace(perf_counter=time.thread_time, time_ns=time.thread_time_ns)
    timed_pass()
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
