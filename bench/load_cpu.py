"""CPU per request at concurrency 32, ctxproxy against the no-op proxy, rounds interleaved.

    python bench/load_cpu.py [--n 3000] [--rounds 4] [--config FILE] [--py-spy OUT.txt] [--streams]

``bench/run.py``'s phase 2 alone (its two 4 KB requests, non-stream, 32 clients),
for a quick before/after of the proxy's CPU per request: each round loads the
no-op proxy and ctxproxy in turn, and the CPU each process used is read from
``/proc``. ``--py-spy`` samples ctxproxy during its rounds (``py-spy record
--format raw``, folded stacks) for a profile of the real server, HTTP included.
Prints per round and the medians; writes nothing.

CPU is given whole and for the event-loop thread alone (``loop``; the rest is
the store writer and other background threads). The profile samples only
while the loop thread holds the GIL (``py-spy --gil``): sampled without it, a
thread that sent on loopback and was descheduled while the kernel woke the
peer (or waits to take the GIL back) shows as CPU in ``transport.write``,
which made the socket writes look like ~25 % of the loop when they use ~1 %.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402


def loop_cpu_seconds(pid: int) -> float:
    """utime + stime of the process's main (event-loop) thread, in seconds."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / bench.CLK_TCK


async def load(url: str, n: int, conc: int, pid: int, streams: bool = False) -> tuple[float, float, float]:
    """(CPU ms per request of ``pid``, wall s, CPU ms per request of its loop thread)
    for ``n`` requests at ``conc`` (``streams``: phase 4's 50-chunk streams instead)."""
    t = bench.Target("t", url, None)
    t.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=conc * 2))
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:  # shared iterator: exactly n requests
            kind = bench.KINDS[i % len(bench.KINDS)]
            if streams:
                await bench.one_stream(t, kind, {**kind.headers, bench.CHUNKS_HEADER: str(bench.STREAM_CHUNKS)})
            else:
                await bench.one_request(t, kind)

    try:
        await asyncio.gather(*(worker() for _ in range(conc)))  # warm the pool, not counted
        counter = iter(range(n))
        c0, l0, t0 = bench.cpu_seconds(pid), loop_cpu_seconds(pid), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conc)))
        return ((bench.cpu_seconds(pid) - c0) / n * 1000.0, time.perf_counter() - t0,
                (loop_cpu_seconds(pid) - l0) / n * 1000.0)
    finally:
        await t.session.close()
        if t.errors:
            print(f"# {url}: {t.errors} errors, e.g. {t.error_samples[:1]}", file=sys.stderr)


async def amain(args: argparse.Namespace) -> None:
    tmp = tempfile.TemporaryDirectory(prefix="ctxload-")
    tdir = Path(tmp.name)
    fp = bench.free_port()
    fake = bench.Proc("fake", [sys.executable, str(HERE / "run.py"), "--serve-provider", str(fp)], fp,
                      tdir / "fake.log")
    np_, cp = bench.free_port(), bench.free_port()
    noop = bench.Proc("noop", [sys.executable, str(HERE / "noop_proxy.py"), "--port", str(np_), "--upstream",
                               fake.url], np_, tdir / "noop.log")
    ctx = bench.Proc("ctx", bench.ctxproxy_argv() + ["serve", "--port", str(cp), "--data-dir", str(tdir / "data"),
                                                     "--anthropic-upstream", fake.url, "--openai-upstream",
                                                     fake.url] + (["--config", args.config] if args.config else []),
                     cp, tdir / "ctx.log")
    spy = None
    try:
        fake.start(None)
        await bench.wait_ready(fake, "/")
        noop.start(None)
        ctx.start(None)
        await bench.wait_ready(noop, "/")
        await bench.wait_ready(ctx, "/ctx/healthz", timeout=180.0)
        print(f"# load {os.getloadavg()}", file=sys.stderr)
        ours, theirs, loops = [], [], []
        for r in range(args.rounds):
            if args.py_spy and r == 1:
                spy = subprocess.Popen(["py-spy", "record", "--format", "raw", "--gil", "-r", "250", "-o", args.py_spy,
                                        "-p", str(ctx.pid), "--threads"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            a, wa, la = await load(noop.url, args.n, 32, noop.pid, args.streams)
            b, wb, lb = await load(ctx.url, args.n, 32, ctx.pid, args.streams)
            theirs.append(a)
            ours.append(b)
            loops.append((la, lb))
            print(f"round {r}: noop {a:.3f} ms CPU/req (loop {la:.3f}; {args.n / wa:.0f}/s), ctxproxy {b:.3f} ms "
                  f"(loop {lb:.3f}; {args.n / wb:.0f}/s), ratio {b / a:.2f}", flush=True)
        ma, mb = statistics.median(theirs), statistics.median(ours)
        la, lb = statistics.median(x for x, _ in loops), statistics.median(y for _, y in loops)
        print(f"median: noop {ma:.3f}, ctxproxy {mb:.3f} ms CPU/req, ratio {mb / ma:.2f} "
              f"(loop threads {la:.3f} / {lb:.3f}); load {os.getloadavg()}")
    finally:
        if spy is not None:
            spy.send_signal(2)
            spy.wait(timeout=60)
        for p in (ctx, noop, fake):
            p.stop()
        tmp.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--config")
    ap.add_argument("--py-spy", metavar="OUT")
    ap.add_argument("--streams", action="store_true", help="50-chunk streams (run.py's phase 4) instead")
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
