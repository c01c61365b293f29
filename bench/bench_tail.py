"""What makes the slow requests slow at concurrency 1: run.py's two 4 KB requests (Chat and
Anthropic, non-stream) one after the other through the turn engine in process
(``tests/enginedriver.py``, the real store, its writer thread, the heap settled as ``serve``
settles it), and for each request its time until the answer (before the turn's end runs) and
until the turn's end, its loop thread's CPU, and what else ran meanwhile:

- a garbage collection (``gc.callbacks``: its generation and how long it ran),
- a commit of the store's writer thread (its Python part holds the GIL; its fsync does not),
- a release of the store's mapped pages (``store/mapped_pages.py``),
- the loop thread preempted by the OS (involuntary context switches: another process's load).

    python bench/bench_tail.py [N] [--gap MS] [--switch MS] [--spans]

``--gap``: ms between two requests (the client's own time; 1). ``--switch``: Python's GIL
switch interval for the run (default: the process's, 5 ms). ``--spans``: each part of the
turn's p50/p99/max. Prints the distribution of the answer time (and per kind), for the
requests over the p99 how many each cause overlapped, and the time each turn was blocked:
its wall time less its loop thread's CPU and its wait on the run queue
(``/proc/thread-self/schedstat``), i.e. waiting for the GIL or a commit. Per request and
in process, so the machine's load is told apart (the run-queue and preemption figures)."""
from __future__ import annotations

import argparse
import asyncio
import gc
import resource
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
from ctxproxy.proxy.engine import Exchange  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402
from ctxproxy.proxy.services import settle_heap  # noqa: E402
from ctxproxy.store import mapped_pages, writer  # noqa: E402

Span = tuple[int, int, str]  # (start ns, end ns, what)
SPANS: list[dict] = []  # per request: its turn's spans (a filter's hook, upstream...), ms
MARKS: list[int] = []  # when the request's turn end began (its answer was complete)


def _mark_finish() -> None:
    real = Exchange.finish

    def finish(self):
        MARKS.append(time.perf_counter_ns())
        real(self)

    Exchange.finish = finish


class Recorder:
    """Spans of what else ran: collections, writer commits, page releases."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.commit_cpu: list[float] = []  # the writer thread's CPU per commit, ms
        self._gc_start = 0
        gc.callbacks.append(self._gc)
        self._wrap_writer()
        self._wrap_release()

    def _gc(self, phase: str, info: dict) -> None:
        if threading.current_thread() is not threading.main_thread():
            what = f"gc{info['generation']} (writer thread)"
        else:
            what = f"gc{info['generation']}"
        if phase == "start":
            self._gc_start = time.perf_counter_ns()
        else:
            self.spans.append((self._gc_start, time.perf_counter_ns(), what))

    def _wrap_writer(self) -> None:
        real = writer.BackgroundWriter._commit_running
        rec = self

        def commit_running(self, group, attempt=0):
            t0, c0 = time.perf_counter_ns(), time.thread_time()
            try:
                return real(self, group, attempt)
            finally:
                rec.commit_cpu.append((time.thread_time() - c0) * 1e3)
                rec.spans.append((t0, time.perf_counter_ns(), "writer commit"))

        writer.BackgroundWriter._commit_running = commit_running

    def _wrap_release(self) -> None:
        real = mapped_pages.release
        rec = self

        def release(path):
            t0 = time.perf_counter_ns()
            try:
                return real(path)
            finally:
                rec.spans.append((t0, time.perf_counter_ns(), "pages released"))

        mapped_pages.release = release

    def during(self, t0: int, t1: int) -> list[Span]:
        return [s for s in self.spans if s[0] < t1 and s[1] > t0]


def runqueue_ns() -> int:
    """ns this thread has waited on a run queue for a CPU (the OS's doing, not ours)."""
    with open("/proc/thread-self/schedstat", "rb") as f:
        return int(f.read().split()[1])


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100.0 * len(s) + 0.5)) - 1))]


async def amain(args: argparse.Namespace) -> None:
    if args.switch:
        sys.setswitchinterval(args.switch / 1e3)
    rec = Recorder()
    _mark_finish()
    with tempfile.TemporaryDirectory() as d:
        async with EngineDriver(load_config(None, data_dir=d), provider=canned(Reply.text(REPLY_TEXT))) as drive:
            calls = [("POST", k.path, k.headers, k.body) for k in KINDS]
            for i in range(200):  # warm-up, then the heap as serve leaves it
                await drive.call(*calls[i % 2])
            settle_heap()
            rec.spans.clear()
            rows = []  # (answer ms, end ms, loop CPU ms, preempted, t0, t_answer, t_end)
            for i in range(args.n):
                MARKS.clear()
                t0, c0 = time.perf_counter_ns(), time.thread_time()
                ru0 = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
                q0 = runqueue_ns()
                got = await drive.call(*calls[i % 2])
                t2 = time.perf_counter_ns()
                cpu = (time.thread_time() - c0) * 1e3
                pre = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - ru0
                queued = (runqueue_ns() - q0) / 1e6
                assert got.status == 200, got.body[:200]
                rows.append(((MARKS[0] - t0) / 1e6, (t2 - t0) / 1e6, cpu, pre, t0, MARKS[0], t2, queued))
                spans = {}
                for sp in got.turn.spans:
                    if sp[2]:
                        spans[sp[0]] = spans.get(sp[0], 0.0) + (sp[2] - sp[1]) / 1e6
                spans["(turn's end)"] = (t2 - MARKS[0]) / 1e6
                SPANS.append(spans)
                if args.gap:
                    await asyncio.sleep(args.gap / 1e3)
            await asyncio.sleep(0.1)

    ans = [r[0] for r in rows]
    print(f"{args.n} requests at concurrency 1, gap {args.gap} ms, GIL switch interval "
          f"{sys.getswitchinterval() * 1e3:g} ms")
    print("answer ms: " + ", ".join(f"p{p:g} {pct(ans, p):.3f}" for p in (50, 90, 99, 99.9))
          + f", max {max(ans):.3f}; turn's end p50 {pct([r[1] for r in rows], 50):.3f} "
          f"p99 {pct([r[1] for r in rows], 99):.3f}")
    for k, kind in enumerate(KINDS):
        mine = rows[k::2]
        print(f"  {kind.name}: answer p50 {pct([r[0] for r in mine], 50):.3f} p99 {pct([r[0] for r in mine], 99):.3f}"
              f" ms, loop CPU p50 {pct([r[2] for r in mine], 50):.3f} p99 {pct([r[2] for r in mine], 99):.3f} ms")
    p50 = pct(ans, 50)
    edges = [1.25, 1.5, 2, 3, 5, 10]
    counts = [0] * (len(edges) + 1)
    for a in ans:
        k = next((j for j, e in enumerate(edges) if a < e * p50), len(edges))
        counts[k] += 1
    print("histogram (× p50): " + ", ".join(
        f"<{e:g}: {c}" for e, c in zip(edges, counts)) + f", >={edges[-1]:g}: {counts[-1]}")
    p99 = pct(ans, 99)
    slow = [r for r in rows if r[0] >= p99]
    causes: dict[str, int] = {}
    extra: dict[str, list[float]] = {}
    for a, _, cpu, pre, t0, ta, _, _ in slow:
        seen = set()
        for s0, s1, what in rec.during(t0, ta):
            seen.add(what)
            extra.setdefault(what, []).append((min(s1, ta) - max(s0, t0)) / 1e6)
        if pre:
            seen.add("preempted by the OS")
        if a - cpu > 0.5 * p50:
            seen.add("waited (wall - loop CPU > p50/2)")
        for what in seen or {"nothing recorded"}:
            causes[what] = causes.get(what, 0) + 1
    base = sum(1 for r in rows if rec.during(r[4], r[5])) / len(rows)
    print(f"over the p99 ({len(slow)} requests; loop CPU median {statistics.median(r[2] for r in slow):.3f} ms "
          f"vs {statistics.median(r[2] for r in rows):.3f} ms for all):")
    for what, n in sorted(causes.items(), key=lambda kv: -kv[1]):
        ms = extra.get(what)
        print(f"  {what}: {n}" + (f" (overlap median {statistics.median(ms):.3f} ms)" if ms else ""))
    print(f"  (of all requests: a recorded span overlapped {base:.1%}, the OS preempted "
          f"{sum(1 for r in rows if r[3]) / len(rows):.1%})")
    # What the whole turn spent neither running nor waiting for a CPU: waiting for the GIL (or a
    # commit it awaited). Load-robust: the run-queue wait is the machine's, left out.
    blocked = [max(0.0, r[1] - r[2] - r[7]) for r in rows]
    print("turn's time blocked (wall - loop CPU - run-queue wait), ms: " + ", ".join(
        f"p{p:g} {pct(blocked, p):.3f}" for p in (50, 90, 99, 99.9)) + f", max {max(blocked):.3f}; "
        f"run-queue wait p99 {pct([r[7] for r in rows], 99):.3f}; loop CPU p50 {pct([r[2] for r in rows], 50):.3f} "
        f"p99 {pct([r[2] for r in rows], 99):.3f}")
    # The requests whose own loop CPU is over its p99: which part of the turn took the extra.
    cpu99 = pct([r[2] for r in rows], 99)
    med = {k: statistics.median(sp.get(k, 0.0) for sp in SPANS) for k in {k for sp in SPANS for k in sp}}
    over: dict[str, int] = {}
    for r, sp in zip(rows, SPANS):
        if r[2] >= cpu99 and not r[3]:  # not preempted: the extra is the turn's own
            k = max(sp, key=lambda k: sp[k] - med.get(k, 0.0))
            over[k] = over.get(k, 0) + 1
    print("loop CPU over its p99, not preempted: the part that took the most extra: "
          + ("; ".join(f"{k} x{n}" for k, n in sorted(over.items(), key=lambda kv: -kv[1])) or "none"))
    if args.spans:
        for k in sorted(med, key=lambda k: -med[k]):
            xs = [sp.get(k, 0.0) for sp in SPANS]
            print(f"  {k}: p50 {med[k]:.3f} p99 {pct(xs, 99):.3f} p99.9 {pct(xs, 99.9):.3f} max {max(xs):.3f} ms")
    if rec.commit_cpu:
        print(f"writer commits: {len(rec.commit_cpu)}, thread CPU p50 {pct(rec.commit_cpu, 50):.3f} ms, "
              f"p99 {pct(rec.commit_cpu, 99):.3f} ms, max {max(rec.commit_cpu):.3f} ms")
    gcs = [s for s in rec.spans if s[2].startswith("gc")]
    for g in sorted({s[2] for s in gcs}):
        ds = [(s[1] - s[0]) / 1e6 for s in gcs if s[2] == g]
        print(f"{g}: {len(ds)} collections, p50 {pct(ds, 50):.3f} ms, max {max(ds):.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=3000)
    ap.add_argument("--gap", type=float, default=1.0)
    ap.add_argument("--switch", type=float, default=0.0)
    ap.add_argument("--spans", action="store_true", help="each part of the turn's p50/p99/max")
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
