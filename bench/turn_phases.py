"""Each phase of run.py's turn in process, hot or cold: the request filters
(``Exchange.request``), the whole answer before its bytes go out
(``Exchange.whole``) and the turn's end after them (``Exchange.finish``).

    python bench/turn_phases.py [N] [--think US] [--gap US] [--watchers-first | --alternate]
                                [--per-filter-memos | --no-chain]

N turns of each of run.py's two non-streamed requests (2000), driven through
the turn engine (``tests/enginedriver.py``: no sockets). ``--think``: the
provider answers that many µs after the forward (an idle loop, as while a
real provider thinks); ``--gap``: the client waits that long before its next
request. Both 0 (the default): back to back, every cache hot. With a think
and a gap (e.g. 400 and 200, what run.py's phase 1 leaves) the machine's
other processes run in between and the turn pays for its caches again: what
a served request costs. ``--watchers-first``: a whole answer's watching
hooks (the manifest, recall, the relayed answer) run before its bytes, as
before they were left for ``finish``; ``--alternate``: so every other pair of
turns, in one process (both under the same load and caches), each reported.
``--per-filter-memos``: the request side before the turn summary (each
filter's own memo, ``bench/per_filter_memos.py``) instead of the watchers
first; with ``--alternate``, every other block of 100 pairs of turns (each
switch finds the other memos' decisions stale and decides the session again).
``--no-chain``: every filter decides the request, none replays the chain's
decision (``Pipeline.chain`` off); with ``--alternate``, every other pair of turns.

Prints per phase the wall p50 and mean and the event loop thread's CPU mean
(µs), and each filter's CPU per turn (its hooks, from the turn's own timings
read as thread CPU). A benchmark, not a test; nothing is written.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import types
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from profile_engine import canned  # noqa: E402
from run import KINDS, REPLY_TEXT  # noqa: E402
import per_filter_memos  # noqa: E402

import ctxproxy.filters.base as base  # noqa: E402
from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy import engine as E  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402

PHASES = {"request": ([], []), "whole": ([], []), "finish": ([], [])}
MODE = {"first": False, "nochain": False}  # the whole answer's watchers before its bytes (``--watchers-first``,
# ``--alternate``); the request chain's replay off (``--no-chain``)
BY_MODE: dict[bool, dict[str, tuple[list, list]]] = {
    m: {p: ([], []) for p in PHASES} for m in (False, True)}


def timed(cls: type, name: str, phase: str, coroutine: bool = False) -> None:
    """Note each call's wall and loop-thread CPU under ``phase``."""
    orig = getattr(cls, name)
    if coroutine:
        async def wrapper(self, *a, **k):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return await orig(self, *a, **k)
            finally:
                note(phase, time.perf_counter() - t, time.thread_time() - c)
    else:
        def wrapper(self, *a, **k):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return orig(self, *a, **k)
            finally:
                note(phase, time.perf_counter() - t, time.thread_time() - c)
    setattr(cls, name, wrapper)


def variant() -> bool:
    """Whether this turn runs the variant compared with the shipped code (the one alternated)."""
    return MODE["first"] or MODE["nochain"] or per_filter_memos.MODE["base"]


def note(phase: str, wall: float, cpu: float) -> None:
    for walls, cpus in (PHASES[phase], BY_MODE[variant()][phase]):
        walls.append(wall)
        cpus.append(cpu)


def report(label: str, phases: dict[str, tuple[list, list]]) -> str:
    return label + "; per phase wall p50 / mean, loop CPU mean (us): " + "  ".join(
        f"{phase} {statistics.median(w) * 1e6:.0f} / {statistics.mean(w) * 1e6:.0f}, cpu "
        f"{statistics.mean(c) * 1e6:.0f}" for phase, (w, c) in phases.items())


async def amain(args: argparse.Namespace) -> None:
    inner = canned(Reply.text(REPLY_TEXT, delta_chars=12))
    think, gap = args.think / 1e6, args.gap / 1e6

    async def provider(forward):
        if think:
            await asyncio.sleep(think)
        return await inner(forward)

    hooks: Counter = Counter()
    hooks_by: dict[bool, Counter] = {False: Counter(), True: Counter()}
    calls = [("POST", k.path, k.headers, k.body) for k in KINDS]
    with tempfile.TemporaryDirectory() as d:
        async with EngineDriver(load_config(None, data_dir=d), provider=provider) as drive:
            pipes = list(drive.engine.pipelines.values())
            chains = [p.chain for p in pipes]

            def chain_off(off: bool) -> None:
                MODE["nochain"] = off
                for p, c in zip(pipes, chains):
                    p.chain = None if off else c

            chain_off(args.no_chain)
            for call in calls * 100:  # warm-up: caches, memos, the session's state
                await drive.call(*call)
            for phases in (PHASES, *BY_MODE.values()):
                for walls, cpus in phases.values():
                    walls.clear()
                    cpus.clear()
            for i, call in enumerate(calls * args.n):
                if args.alternate:  # a pair of turns (both kinds) each way
                    if args.no_chain:
                        chain_off(i % 4 < 2)
                    elif args.per_filter_memos:  # in blocks: a switch decides each memo's session again
                        per_filter_memos.MODE["base"] = i // 200 % 2 == 0
                    else:
                        MODE["first"] = i % 4 < 2
                got = await drive.call(*call)
                assert got.status == 200, got.body[:300]
                for name, ms in got.turn.timings_ms.items():
                    hooks[name] += ms
                    hooks_by[variant()][name] += ms
                if gap:
                    await asyncio.sleep(gap)
    turns = 2 * args.n
    label = f"think {args.think:.0f} us, gap {args.gap:.0f} us"
    names = (", per-filter memos", ", the turn summary") if args.per_filter_memos else \
        (", chain off", ", chain replay") if args.no_chain else (", watchers first", ", watchers after the bytes")
    if args.alternate:
        print(report(label + names[0], BY_MODE[True]))
        print(report(label + names[1], BY_MODE[False]))
        for mode in (True, False):
            print(f"  each filter's CPU per turn (us){names[not mode]}: " + ", ".join(
                f"{name} {ms * 1e3 / (turns / 2):.1f}" for name, ms in hooks_by[mode].items()
                if name != "upstream_headers"))
        return
    print(report(label + (names[0] if args.watchers_first or args.per_filter_memos or args.no_chain else ""), PHASES))
    print("  each filter's CPU per turn (us): " + ", ".join(
        f"{name} {ms * 1e3 / turns:.0f}" for name, ms in hooks.items() if name != "upstream_headers"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=2000, help="turns per request kind (2000)")
    ap.add_argument("--think", type=float, default=0.0, help="µs the provider takes to answer (0)")
    ap.add_argument("--gap", type=float, default=0.0, help="µs between an answer and the next request (0)")
    ap.add_argument("--watchers-first", action="store_true",
                    help="a whole answer's watching hooks before its bytes (as before they ran in finish)")
    ap.add_argument("--alternate", action="store_true", help="--watchers-first every other pair of turns")
    ap.add_argument("--no-chain", action="store_true",
                    help="no replay of the request chain's decision (alternated with --alternate)")
    ap.add_argument("--per-filter-memos", action="store_true",
                    help="the request side before the turn summary (alternated with --alternate)")
    args = ap.parse_args()
    # the pipeline's clock reads this thread's CPU: the turns' own timings become CPU per filter
    base.time = types.SimpleNamespace(perf_counter=time.thread_time, time_ns=time.thread_time_ns)
    MODE["first"] = args.watchers_first
    per_filter_memos.install()
    per_filter_memos.MODE["base"] = args.per_filter_memos and not args.alternate
    run_response = base.Pipeline.run_response
    base.Pipeline.run_response = lambda self, turn, view, late=False: run_response(
        self, turn, view, late and not MODE["first"])
    timed(E.Exchange, "request", "request", coroutine=True)
    timed(E.Exchange, "whole", "whole")
    timed(E.Exchange, "finish", "finish")
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
