"""The session's records kept decoded between turns, on and off, alternated in one process.

    python bench/bench_session_cache.py [turn|tool|chat] [--n 100] [--rounds 16]

The default pipeline driven in-process through the turn engine as
``profile_engine.py`` drives it (no sockets, a canned provider). Each round
runs a block of turns with the store's session cache (``store/session_cache.py``)
and a block with the read it replaced (every turn reads and decodes its
session's five records in a transaction), in alternating order, and prints
per block: the event loop thread's CPU per turn, the process's, the turn's
one read of its session (``Turn._read_session``, loop thread CPU per turn)
and the request hooks of the filters that read it (their CPU on the loop's
thread). Small blocks and many rounds keep the machine's drift out of the
comparison. ``turn``: run.py's two 4 KB requests again and again (a repeated
turn); ``tool`` / ``chat``: new turns of small tool conversations or plain
chats, a new conversation every few turns (each block its own). The load
average is printed at the start and the end. A benchmark, not a test.
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

import profile_engine as pe  # noqa: E402
from enginedriver import EngineDriver  # noqa: E402
from run import KINDS, REPLY_TEXT  # noqa: E402

import ctxproxy.filters.base as base  # noqa: E402
from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402
from ctxproxy.store import keys  # noqa: E402
from ctxproxy.store.lmdb_env import load as _load  # noqa: E402
from ctxproxy.store.lmdb_store import LMDBSessions  # noqa: E402
from ctxproxy.store.records import SESSIONS  # noqa: E402
from ctxproxy.store.session_state import SessionRules  # noqa: E402

READERS = ("session read", "effects", "checkpoint", "prune", "inject", "identify", "memory_tool")

NEW_GET_PARTS, NEW_GET = LMDBSessions.get_parts, LMDBSessions.get


def _old_get_parts(self, tenant, session, parts):
    """The read before the cache: the five records read and decoded in one transaction."""
    pk = self._pk(tenant, session)
    wanted = [(p, pk if p is None else pk + keys.SEP + keys.part(p, "part")) for p in parts]
    db = self._db

    def op(txn):
        out = {}
        for part, key in wanted:
            raw = txn.get(key, db=db)
            out[part] = None if raw is None else _load(SESSIONS, raw, tenant)["state"]
        return out

    return self._x.read(op)


def use_cache(on: bool) -> None:
    LMDBSessions.get_parts = NEW_GET_PARTS if on else _old_get_parts
    LMDBSessions.get = NEW_GET if on else SessionRules.get


READ_US: list[float] = []  # the loop thread's CPU in each turn's session read (``Turn._read_session``)
_read_session = base.Turn._read_session


def _timed_read(self, store, key):
    t0 = time.thread_time_ns()
    try:
        return _read_session(self, store, key)
    finally:
        READ_US.append((time.thread_time_ns() - t0) / 1e3)


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


async def block(drive, calls) -> tuple[float, float, dict[str, float]]:
    hooks: dict[str, float] = {}
    READ_US.clear()
    t0, c0 = time.thread_time(), time.process_time()
    for call in calls:
        got = await drive.call(*call)
        assert got.status == 200, got.body[:300]
        for name, us in pe.request_spans(got.turn).items():
            hooks[name] = hooks.get(name, 0.0) + us
    n = len(calls)
    return ((time.thread_time() - t0) * 1e6 / n, (time.process_time() - c0) * 1e6 / n,
            {k: v / n for k, v in hooks.items()} | {"session read": sum(READ_US) / n})


def calls_for(mode: str, n: int, tag: str) -> list:
    if mode == "turn":
        return [("POST", k.path, k.headers, k.body) for k in KINDS] * (n // 2)
    calls = pe.growing_turns(n, mode == "tool")
    return [(m, p, h, b.replace(b"Conversation ", f"{tag} ".encode()).replace(b"call_", f"{tag}_".encode()))
            for m, p, h, b in calls]


async def amain(args: argparse.Namespace) -> None:
    # the filters' own timings and spans read this thread's CPU: each hook's CPU on the loop
    base.time = types.SimpleNamespace(perf_counter=time.thread_time, time_ns=time.thread_time_ns)
    base.Turn._read_session = _timed_read
    print(f"load average at start: {loadavg()}")
    results: dict[bool, list] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as d:
        cfg = load_config(None, data_dir=d)
        async with EngineDriver(cfg, provider=pe.canned(Reply.text(REPLY_TEXT, delta_chars=12))) as drive:
            for on in (True, False):  # warm-up, both ways
                use_cache(on)
                await block(drive, calls_for(args.mode, 200, f"Warm{on}"))
            for r in range(args.rounds):
                for on in ((True, False) if r % 2 else (False, True)):
                    use_cache(on)
                    loop, proc, hooks = await block(drive, calls_for(args.mode, args.n, f"R{r}{on}"))
                    results[on].append((loop, proc, hooks))
                    print(f"round {r} cache {'on ' if on else 'off'}: loop thread {loop:.0f} us/turn, "
                          f"process {proc:.0f} us/turn; " + ", ".join(
                              f"{k} {hooks[k]:.1f}" for k in READERS if k in hooks))
    use_cache(True)
    for on in (False, True):
        rs = results[on]
        print(f"median cache {'on ' if on else 'off'}: loop {statistics.median(r[0] for r in rs):.0f}, "
              f"process {statistics.median(r[1] for r in rs):.0f} us/turn; " + ", ".join(
                  f"{k} {statistics.median(r[2].get(k, 0.0) for r in rs):.1f}" for k in READERS))
    print(f"load average at end: {loadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", nargs="?", default="turn", choices=("turn", "tool", "chat"))
    ap.add_argument("--n", type=int, default=100, help="turns per block")
    ap.add_argument("--rounds", type=int, default=16)
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
