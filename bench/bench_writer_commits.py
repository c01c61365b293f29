"""What the store's writer thread costs per turn, with one switch on and off in
alternated blocks of one process: run.py's two 4 KB requests back to back
through the turn engine in process (``tests/enginedriver.py``, the real LMDB
store and writer), ``--concurrent K`` of them at once.

    python bench/bench_writer_commits.py [--turns 600] [--blocks 8] [--concurrent 8]
                                         [--switch ctxproxy.store.lmdb_store:LMDBStore.lazy_commits]
                                         [--values True,False]

The switch is an attribute (of a class or module) set to the first of
``--values`` (Python literals) in one block and the second in the next (the
default: lazy commits of gathered manifests on and off). Per block: the writer
thread's CPU per turn (user and system from ``/proc``, their sum from the
thread's CPU clock), the loop thread's, commits per turn (LMDB's transaction
ids), the writer's waits per turn (voluntary context switches) and the turns'
wall time. Prints each block and the medians by setting;
writes nothing outside a temporary directory.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import importlib
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from profile_engine import canned  # noqa: E402
from run import KINDS, REPLY_TEXT  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def writer_thread() -> threading.Thread | None:
    return next((t for t in threading.enumerate() if t.name == "ctxproxy-store-writer"), None)


def thread_clock(t: threading.Thread) -> float:
    return time.clock_gettime(time.pthread_getcpuclockid(t.ident))


def user_system(t: threading.Thread) -> tuple[float, float]:
    stat = Path(f"/proc/self/task/{t.native_id}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def waits(t: threading.Thread) -> int:
    """The thread's voluntary context switches so far: each a wait (for work, the GIL, the disk)."""
    status = Path(f"/proc/self/task/{t.native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


def switch(spec: str) -> tuple[object, str]:
    module, path = spec.split(":", 1)
    if "." not in path:  # a module's own attribute
        return importlib.import_module(module), path
    obj, attr = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), obj), attr


async def block(drive, n: int, conc: int, env) -> dict[str, float]:
    calls = [("POST", k.path, k.headers, k.body) for k in KINDS]
    w = writer_thread()
    w0, us0, l0, t0 = thread_clock(w), user_system(w), time.thread_time(), time.perf_counter()
    x0, v0 = env.last_txnid(), waits(w)
    left = iter(range(n))

    async def client() -> None:
        for i in left:
            got = await drive.call(*calls[i % len(calls)])
            assert got.status == 200, got.body[:200]

    await asyncio.gather(*(client() for _ in range(conc)))
    wall = time.perf_counter() - t0
    us1 = user_system(w)
    return {"writer": (thread_clock(w) - w0) / n * 1e6, "user": (us1[0] - us0[0]) / n * 1e6,
            "system": (us1[1] - us0[1]) / n * 1e6, "loop": (time.thread_time() - l0) / n * 1e6,
            "commits": (env.last_txnid() - x0) / n, "waits": (waits(w) - v0) / n, "wall": wall / n * 1e6}


async def amain(args: argparse.Namespace) -> None:
    owner, attr = switch(args.switch)
    before = getattr(owner, attr)
    with tempfile.TemporaryDirectory() as d:
        cfg = load_config(None, data_dir=d)
        async with EngineDriver(cfg, provider=canned(Reply.text(REPLY_TEXT, delta_chars=12))) as drive:
            env = drive.services["store"]._env
            for k in KINDS:  # warm-up: caches, memos, the session's state
                for _ in range(50):
                    await drive.call("POST", k.path, k.headers, k.body)
            values = [ast.literal_eval(v) for v in args.values.split(",")]
            rows: dict[object, list[dict]] = {v: [] for v in values}
            try:
                for b in range(args.blocks):
                    on = values[b % 2]
                    setattr(owner, attr, on)
                    r = await block(drive, args.turns, args.concurrent, env)
                    rows[on].append(r)
                    print(f"block {b} ({attr}={on}): writer {r['writer']:.1f} us/turn (user {r['user']:.0f}, "
                          f"system {r['system']:.0f}), loop {r['loop']:.0f}, commits/turn {r['commits']:.3f}, "
                          f"writer waits/turn {r['waits']:.2f}, "
                          f"wall {r['wall']:.0f} us/turn", flush=True)
            finally:
                setattr(owner, attr, before)
    for on, rs in rows.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        print(f"median {attr}={on}: writer {med['writer']:.1f} us/turn (user {med['user']:.0f}, system "
              f"{med['system']:.0f}), loop {med['loop']:.0f}, commits/turn {med['commits']:.3f}, "
              f"writer waits/turn {med['waits']:.2f}, "
              f"wall {med['wall']:.0f} us/turn")
    print(f"load {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=600)
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--concurrent", type=int, default=8)
    ap.add_argument("--switch", default="ctxproxy.store.lmdb_store:LMDBStore.lazy_commits")
    ap.add_argument("--values", default="True,False", help="the two values alternated (Python literals)")
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
