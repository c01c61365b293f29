"""CPU per request at concurrency 32, ctxproxy against the no-op proxy, rounds interleaved.

    python bench/load_cpu.py [--n 3000] [--rounds 4] [--config FILE] [--py-spy OUT.txt] [--streams] [--threads]
                              [--variant MODULE:OBJ.ATTR=VALUE ...]

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

``--variant``: a second ctxproxy, started with an attribute set before it serves
(e.g. ``ctxproxy.store.lmdb_store:LMDBStore.lazy_commits=False``; repeated, each
one), loaded in each round after the first: the same code with and without a
switch, alternated.
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


def thread_times(pid: int) -> dict[int, tuple[float, float]]:
    """(user, system) CPU seconds of each of ``pid``'s threads, by thread id."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        try:  # voluntary context switches: how often the thread waited (a lock, the GIL, a disk, a wake-up)
            waits = int((task / "status").read_text().split("voluntary_ctxt_switches:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            waits = 0
        out[int(task.name)] = (int(fields[11]) / bench.CLK_TCK, int(fields[12]) / bench.CLK_TCK, waits)
    return out


def thread_report(pid: int, before: dict, after: dict, n: int) -> str:
    """Each thread's user+system CPU µs and its waits per request over a load (the loop first,
    then the busiest)."""
    rows = []
    for tid, (u, s, w) in after.items():
        u0, s0, w0 = before.get(tid, (0.0, 0.0, 0))
        du, ds = (u - u0) / n * 1e6, (s - s0) / n * 1e6
        if du + ds > 0:
            rows.append((tid != pid, -(du + ds), "loop" if tid == pid else str(tid), du, ds, (w - w0) / n))
    return ", ".join(f"{name} {du:.0f}+{ds:.0f} ({dw:.2f} waits)" for _, _, name, du, ds, dw in sorted(rows))


def loop_cpu_seconds(pid: int) -> float:
    """utime + stime of the process's main (event-loop) thread, in seconds."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / bench.CLK_TCK


async def load(url: str, n: int, conc: int, pid: int, streams: bool = False,
               threads: bool = False) -> tuple[float, float, float]:
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
        th0 = thread_times(pid) if threads else None
        c0, l0, t0 = bench.cpu_seconds(pid), loop_cpu_seconds(pid), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conc)))
        if th0 is not None:
            print(f"#   threads (user+system µs/request): {thread_report(pid, th0, thread_times(pid), n)}",
                  flush=True)
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
    var = None
    if args.variant:
        vp = bench.free_port()
        var = bench.Proc("variant", variant_argv(args.variant) + [
            "serve", "--port", str(vp), "--data-dir", str(tdir / "data-variant"), "--anthropic-upstream", fake.url,
            "--openai-upstream", fake.url] + (["--config", args.config] if args.config else []), vp,
            tdir / "variant.log")
    spy = None
    try:
        fake.start(None)
        await bench.wait_ready(fake, "/")
        noop.start(None)
        ctx.start(None)
        if var is not None:
            var.start(None)
            await bench.wait_ready(var, "/ctx/healthz", timeout=180.0)
        await bench.wait_ready(noop, "/")
        await bench.wait_ready(ctx, "/ctx/healthz", timeout=180.0)
        print(f"# load {os.getloadavg()}", file=sys.stderr)
        ours, theirs, loops, variants = [], [], [], []
        for r in range(args.rounds):
            if args.py_spy and r == 1:
                spy = subprocess.Popen(["py-spy", "record", "--format", "raw", "--gil", "-r", "250", "-o", args.py_spy,
                                        "-p", str(ctx.pid), "--threads"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            a, wa, la = await load(noop.url, args.n, 32, noop.pid, args.streams, args.threads)
            b, wb, lb = await load(ctx.url, args.n, 32, ctx.pid, args.streams, args.threads)
            theirs.append(a)
            ours.append(b)
            loops.append((la, lb))
            print(f"round {r}: noop {a:.3f} ms CPU/req (loop {la:.3f}; {args.n / wa:.0f}/s), ctxproxy {b:.3f} ms "
                  f"(loop {lb:.3f}; {args.n / wb:.0f}/s), ratio {b / a:.2f}", flush=True)
            if var is not None:
                v, wv, lv = await load(var.url, args.n, 32, var.pid, args.streams, args.threads)
                variants.append(v)
                print(f"round {r}: variant {v:.3f} ms (loop {lv:.3f}; {args.n / wv:.0f}/s), ratio {v / a:.2f}",
                      flush=True)
        ma, mb = statistics.median(theirs), statistics.median(ours)
        la, lb = statistics.median(x for x, _ in loops), statistics.median(y for _, y in loops)
        print(f"median: noop {ma:.3f}, ctxproxy {mb:.3f} ms CPU/req, ratio {mb / ma:.2f} "
              f"(loop threads {la:.3f} / {lb:.3f}); load {os.getloadavg()}")
        if variants:
            mv = statistics.median(variants)
            print(f"median: variant {mv:.3f} ms CPU/req, ratio {mv / ma:.2f}")
    finally:
        if spy is not None:
            spy.send_signal(2)
            spy.wait(timeout=60)
        for p in (ctx, noop, fake) + ((var,) if var is not None else ()):
            p.stop()
        tmp.cleanup()


def variant_argv(specs: list[str]) -> list[str]:
    """ctxproxy's command line, run with each ``MODULE:OBJ.ATTR=VALUE`` set first (VALUE a Python literal)."""
    sets = []
    for spec in specs:
        target, value = spec.split("=", 1)
        module, path = target.split(":", 1)
        obj, attr = path.rsplit(".", 1) if "." in path else ("", path)
        sets.append(f"m = importlib.import_module({module!r}); o = m if not {obj!r} else eval({obj!r}, vars(m)); "
                    f"setattr(o, {attr!r}, ast.literal_eval({value!r}))")
    code = ("import ast, importlib, sys; " + "; ".join(sets) +
            "; from ctxproxy.proxy.cli.main import main; sys.argv[0] = 'ctxproxy'; sys.exit(main())")
    return [sys.executable, "-c", code]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--config")
    ap.add_argument("--py-spy", metavar="OUT")
    ap.add_argument("--streams", action="store_true", help="50-chunk streams (run.py's phase 4) instead")
    ap.add_argument("--threads", action="store_true", help="each thread's user/system CPU per request")
    ap.add_argument("--variant", metavar="MODULE:OBJ.ATTR=VALUE", action="append",
                    help="a second ctxproxy with this attribute set (repeat: several, all in that one)")
    asyncio.run(amain(ap.parse_args()))


if __name__ == "__main__":
    main()
