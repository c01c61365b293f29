"""What each event of run.py's phase-3 stream costs the relay, in process.

    nice python bench/bench_stream_event.py [N] [--thrash] [--profile]

run.py's two streamed requests (Chat and Anthropic, the 151-character reply in
12-character deltas) through the turn engine (``tests/enginedriver.py``: the
default pipeline, the real store), the provider's events one to a read as
run.py's 1 ms pauses deliver them. For each event position: the loop thread's
CPU inside ``Exchange.events`` (p50, µs), the event hooks' share (a hook that only watches the answer is
counted where it ran: after the write, in ``Exchange.settle``), so that the
events before and at the first content token are told apart from the rest.

``--thrash``: before each event (outside the timed part), walk 8 MB of memory
and some unrelated Python, as a process that sat idle for a millisecond while
the provider and the client ran finds its caches; in a real server on a
shared 2-core machine each event costs ~3-4x its hot figure (bench_ttft.py).
``--profile``: a cProfile of ``Exchange.events`` over the measured streams
(thread CPU). ``--walk-only``: the redaction hold-back without its Hyperscan scan
before the held text's last run (to compare, alternating runs). A benchmark, not a
test; nothing is written.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from run import DELTA_CHARS, FIRST_CONTENT, KINDS, REPLY_TEXT  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.filters import base  # noqa: E402
from ctxproxy.proxy import engine  # noqa: E402
from ctxproxy.proxy.adapters import api_for_path  # noqa: E402
from ctxproxy.proxy.engine import CannedUpstream  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply, render_answer  # noqa: E402

_JUNK = bytearray(8 << 20)
_WORDS = [f"w{random.random():.12f}" for _ in range(4000)]


def thrash() -> None:
    """Evict what the last event left in the caches: every line of 8 MB, and unrelated Python."""
    _JUNK[::64] = bytes(len(_JUNK) // 64)
    sorted(_WORDS, key=lambda w: w[::-1])
    {w: len(w) for w in _WORDS}


class Upstream(CannedUpstream):
    async def chunks(self):
        for c in self.chunks_:
            if THRASH:
                thrash()
            yield c


THRASH = False
SETTLING = False
TIMES: list[list[tuple[int, bytes]]] = []  # per stream: (thread CPU ns, the chunk) per events() call
HOOKS: list[dict[tuple[int, str], int]] = []
SETTLE: list[dict[int, int]] = []  # per stream: event index -> thread CPU of the settle after its write
PROFILE: cProfile.Profile | None = None


def _patch() -> None:
    real_events = engine.Exchange.events

    def events(self, chunk):
        if PROFILE is not None:
            PROFILE.enable()
        c0 = time.thread_time_ns()
        out = real_events(self, chunk)
        TIMES[-1].append((time.thread_time_ns() - c0, chunk))
        if PROFILE is not None:
            PROFILE.disable()
        return out

    engine.Exchange.events = events
    real_settle = engine.Exchange.settle

    def settle(self):  # the watching hooks, run after the write: timed apart (not before the bytes)
        global SETTLING
        c0 = time.thread_time_ns()
        SETTLING = True
        try:
            real_settle(self)
        finally:
            SETTLING = False
        if TIMES[-1]:
            SETTLE[-1][len(TIMES[-1]) - 1] = time.thread_time_ns() - c0

    engine.Exchange.settle = settle
    real_call = base.Pipeline._call

    def _call(self, turn, stage, hook, *a):
        if hook is not stage.event:
            return real_call(self, turn, stage, hook, *a)
        c0 = time.thread_time_ns()
        try:
            return real_call(self, turn, stage, hook, *a)
        finally:
            k = (len(TIMES[-1]) - 1, stage.filter.name + " (after)") if SETTLING else (len(TIMES[-1]), stage.filter.name)
            HOOKS[-1][k] = HOOKS[-1].get(k, 0) + time.thread_time_ns() - c0

    base.Pipeline._call = _call


async def amain(args: argparse.Namespace) -> None:
    global THRASH, PROFILE
    reply = Reply.text(REPLY_TEXT, delta_chars=DELTA_CHARS)
    seen: dict = {}

    async def send(forward):
        path = forward.url.split("://", 1)[1].split("/", 1)[1]
        path = "/" + path.split("?", 1)[0]
        if path not in seen:
            api, _ = api_for_path(path)
            seen[path] = render_answer(api, reply, forward.body or b"")
        status, headers, chunks = seen[path]
        return Upstream(status, headers, list(chunks))

    _patch()
    with tempfile.TemporaryDirectory() as d:
        cfg = load_config(None, data_dir=d)
        async with EngineDriver(cfg, provider=send) as drive:
            for kind in KINDS:
                for i in range(args.warmup + args.n):
                    if i == args.warmup:
                        THRASH = args.thrash
                        if args.profile:
                            PROFILE = cProfile.Profile(time.thread_time)
                        del TIMES[:], HOOKS[:], SETTLE[:]
                    TIMES.append([])
                    HOOKS.append({})
                    SETTLE.append({})
                    got = await drive.call("POST", kind.path, kind.headers, kind.stream_body)
                    assert got.status == 200 and FIRST_CONTENT in got.body, got.body[:300]
                THRASH = False
                report(kind.name, args)
                if PROFILE is not None:
                    pstats.Stats(PROFILE).sort_stats(args.sort).print_stats(args.top)
                    PROFILE = None


def report(name: str, args: argparse.Namespace) -> None:
    n = min(len(t) for t in TIMES)
    first = next(i for i, (_, c) in enumerate(TIMES[0]) if FIRST_CONTENT in c)
    print(f"\n{name}: thread CPU in events() per event, p50 µs ({len(TIMES)} streams"
          f"{', caches thrashed before each event' if args.thrash else ''}); the first content token is event "
          f"{first + 1}")
    names = sorted({k[1] for h in HOOKS for k in h}, key=lambda s: s)
    for i in range(min(n, args.events)):
        cpu = statistics.median(t[i][0] for t in TIMES) / 1e3
        hooks = {f: statistics.median(h.get((i, f), 0) for h in HOOKS) / 1e3 for f in names}
        late = statistics.median(s.get(i, 0) for s in SETTLE) / 1e3
        print(f"  event {i + 1:2d}{' *' if i == first else '  '} {cpu:6.1f}   after the write {late:5.1f}   "
              "hooks: " + ", ".join(f"{f} {v:.1f}" for f, v in hooks.items() if v >= 0.5))
    total = statistics.median(sum(c for c, _ in t) for t in TIMES) / 1e3
    print(f"  whole stream: {total:.0f} µs; to the first content token: "
          f"{statistics.median(sum(c for c, _ in t[:first + 1]) for t in TIMES) / 1e3:.0f} µs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=300, help="measured streams per kind (300)")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--thrash", action="store_true", help="evict the caches before each event")
    ap.add_argument("--events", type=int, default=6, help="event positions to print (6)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--walk-only", action="store_true",
                    help="the hold-back walks every position (no Hyperscan scan before the last run)")
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    if args.walk_only:
        from ctxproxy.store.services.redaction import engine as redaction_engine
        redaction_engine.SPACED_SCAN = False
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
