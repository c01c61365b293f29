"""The last committed transaction id read from LMDB's meta pages or from ``env.info()``, alternated in one process.

    python bench/bench_txnid_read.py [turn|tool|chat] [--n 100] [--rounds 16]

The session cache and the memory feed ask the environment's last committed
transaction id once a turn each (``LMDBEnv.last_txnid``). It is read from a
map of the two meta pages (``store/meta_txnid.py``); before, from
``env.info()``, which releases the GIL around the read and builds a dict.
The default pipeline is driven in-process through the turn engine as
``bench_session_cache.py`` drives it (its blocks, rounds and request kinds),
each round a block each way in alternating order; per block: the event loop
thread's CPU per turn, the process's, the turn's session read and the request
hooks of the filters that read the session. A microbenchmark of the read
alone, with and without a thread competing for the GIL, comes first.
A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

import bench_session_cache as bsc  # noqa: E402
import profile_engine as pe  # noqa: E402
from enginedriver import EngineDriver  # noqa: E402
from run import REPLY_TEXT  # noqa: E402

import ctxproxy.filters.base as base  # noqa: E402
from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402
from ctxproxy.store import open_store  # noqa: E402
from ctxproxy.store.lmdb_env import LMDBEnv  # noqa: E402

NEW = LMDBEnv.last_txnid


def _old(self):
    """The read before: ``env.info()``."""
    if self.closed:
        return None
    return self.env.info()["last_txnid"]


def use_meta(on: bool) -> None:
    LMDBEnv.last_txnid = NEW if on else _old


def micro(d: str) -> None:
    store = open_store(d)
    env = store._env
    try:
        for contended in (False, True):
            stop = threading.Event()

            def spin() -> None:  # a thread that always wants the GIL (as the writer coming back from an fsync)
                while not stop.is_set():
                    sum(range(50))

            t = threading.Thread(target=spin, daemon=True)
            if contended:
                t.start()
            n = 2000 if contended else 200_000
            for on in (True, False, True, False):
                use_meta(on)
                times = []
                for _ in range(n):
                    t0 = time.perf_counter_ns()
                    env.last_txnid()
                    times.append(time.perf_counter_ns() - t0)
                times.sort()
                print(f"read alone{' with a thread wanting the GIL' if contended else ''}, "
                      f"{'meta pages' if on else 'env.info()'}: p50 {times[n // 2] / 1e3:.2f} us, "
                      f"p99 {times[n * 99 // 100] / 1e3:.2f}, mean {statistics.mean(times) / 1e3:.2f}")
            stop.set()
            if contended:
                t.join()
    finally:
        use_meta(True)
        store.close()


async def amain(args: argparse.Namespace) -> None:
    base.time = types.SimpleNamespace(perf_counter=time.thread_time, time_ns=time.thread_time_ns)
    base.Turn._read_session = bsc._timed_read
    print(f"load average at start: {bsc.loadavg()}")
    with tempfile.TemporaryDirectory() as d:
        micro(d + "/micro")
    results: dict[bool, list] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as d:
        cfg = load_config(None, data_dir=d)
        async with EngineDriver(cfg, provider=pe.canned(Reply.text(REPLY_TEXT, delta_chars=12))) as drive:
            for on in (True, False):
                use_meta(on)
                await bsc.block(drive, bsc.calls_for(args.mode, 200, f"Warm{on}"))
            for r in range(args.rounds):
                for on in ((True, False) if r % 2 else (False, True)):
                    use_meta(on)
                    results[on].append(await bsc.block(drive, bsc.calls_for(args.mode, args.n, f"R{r}{on}")))
    use_meta(True)
    for on in (False, True):
        rs = results[on]
        print(f"median {'meta pages' if on else 'env.info()'}: loop {statistics.median(r[0] for r in rs):.1f}, "
              f"process {statistics.median(r[1] for r in rs):.1f} us/turn; " + ", ".join(
                  f"{k} {statistics.median(r[2].get(k, 0.0) for r in rs):.1f}" for k in bsc.READERS))
    print(f"load average at end: {bsc.loadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", nargs="?", default="turn", choices=("turn", "tool", "chat"))
    ap.add_argument("--n", type=int, default=100, help="turns per block")
    ap.add_argument("--rounds", type=int, default=16)
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
