"""The core's code path against the no-op proxy's, both served by one process.

    python bench/same_process.py                 # latency, 3 processes x 2000 requests
    python bench/same_process.py --stream        # time to first byte instead
    python bench/same_process.py --pin           # process on the last CPU, the rest on the first
    python bench/same_process.py --new-turns     # each request a new turn of a growing conversation
                                 [--inline-bookkeeping]  # what the request filters keep for the next
                                                 # request kept before the forward (the order before)
    python bench/same_process.py --off MODULE:NAME  # a module's switch off in the served process

``bench/run.py`` compares two processes. Each of its requests finds the proxy's
caches cold (another process ran in between), so it measures a code path plus
what that code path costs to bring back into the caches. Here one process
serves the no-op proxy (``bench/noop_proxy.py``) on one port and ctxproxy
(``--config``, the core pipeline by default) on another, and the requests
alternate between them: both code paths run with the same process's luck and
with caches as warm as each other's. The gap between the two benchmarks is
the price of the core's larger working set, not of its instructions.

Prints the added p50 (proxy minus direct) of each target per process and the
ratio ctxproxy / no-op; appends them with the command to ``bench/RESULTS.md``
unless ``--no-write``.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import aiohttp
from aiohttp import web

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import noop_proxy  # noqa: E402
import run as bench  # noqa: E402


async def serve_both(upstream: str, noop_port: int, ctx_port: int, config: str, data_dir: str,
                     inline: bool = False, off: list[str] = ()) -> None:
    """The child process: both proxies on one event loop until SIGTERM. ``off``: module
    switches (``MODULE:NAME``) set False before the app is made."""
    import importlib

    import ctxproxy.filters.base
    from ctxproxy.config import load_config
    from ctxproxy.proxy.edge.server import CUT_GRACE, make_app

    ctxproxy.filters.base.DEFER_AFTER_FORWARD = not inline
    for spec in off:
        module, _, name = spec.partition(":")
        setattr(importlib.import_module(module), name, False)

    cfg = load_config(config, port=ctx_port, data_dir=data_dir, anthropic_upstream=upstream,
                      openai_upstream=upstream)
    runners = [web.AppRunner(noop_proxy.make_app(upstream), access_log=None),
               web.AppRunner(make_app(cfg), handler_cancellation=True, access_log=None, shutdown_timeout=CUT_GRACE)]
    for r in runners:
        await r.setup()
    gc.collect()
    gc.freeze()
    gc.set_threshold(20000, 50, 50)  # as ``ctxproxy serve`` does; the no-op side gets it too
    for r, port in zip(runners, (noop_port, ctx_port)):
        await web.TCPSite(r, "127.0.0.1", port, backlog=1024).start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    for r in runners:
        await r.cleanup()


async def measure(args: argparse.Namespace) -> str:
    cpus = sorted(os.sched_getaffinity(0))
    pin = args.pin and len(cpus) >= 2
    tmp = tempfile.TemporaryDirectory(prefix="ctxsame-")
    tdir = Path(tmp.name)
    fp = bench.free_port()
    fake = bench.Proc("fakeprovider", [sys.executable, "-m", "ctxproxy.proxy.scripted_provider", str(fp),
                                       "--text", bench.REPLY_TEXT, "--delta-chars", str(bench.DELTA_CHARS),
                                       "--delay-between-events", "0.001", "--record-limit", "200"],
                      fp, tdir / "fake.log")
    what = "time to first byte" if args.stream else "latency"
    lines = ["| process | direct p50 ms | no-op added p50 | ctxproxy added p50 | ratio |", "|---|---:|---:|---:|---:|"]
    ratios = []
    kinds = new_turns(args.n + args.warmup) if args.new_turns else bench.KINDS
    try:
        fake.start({cpus[0]} if pin else None)
        if pin:
            os.sched_setaffinity(0, {cpus[0]})
        await bench.wait_ready(fake, "/")
        for p in range(args.processes):
            noop_port, ctx_port = bench.free_port(), bench.free_port()
            both = bench.Proc("both", [sys.executable, __file__, "--serve", fake.url, str(noop_port), str(ctx_port),
                                       args.config, str(tdir / f"data-{p}")]
                              + (["inline"] if args.inline_bookkeeping else [])
                              + [f"off={spec}" for spec in args.off], ctx_port, tdir / f"both-{p}.log")
            both.start({cpus[-1]} if pin else None)
            try:
                await bench.wait_ready(both, "/ctx/healthz")
                targets = [bench.Target(name, url, None, aiohttp.ClientSession()) for name, url in
                           (("direct", fake.url), ("noop", f"http://127.0.0.1:{noop_port}"), ("ctx", both.url))]
                samples: dict[str, list[float]] = {t.name: [] for t in targets}
                try:
                    for i in range(args.n + args.warmup):
                        kind = kinds[i % len(kinds)]
                        for t in bench.shuffled(targets):
                            ms = (await bench.one_stream(t, kind))[0] if args.stream else await bench.one_request(t, kind)
                            if i >= args.warmup:
                                samples[t.name].append(ms)
                finally:
                    for t in targets:
                        await t.session.close()
                errors = [e for t in targets for e in t.error_samples]
                if errors:
                    raise SystemExit(f"wrong answers: {errors}")
            finally:
                both.stop()
            d = bench.pct(samples["direct"], 50)
            noop_added, ctx_added = bench.pct(samples["noop"], 50) - d, bench.pct(samples["ctx"], 50) - d
            ratio = (bench.pct(samples["ctx"], 50) / bench.pct(samples["noop"], 50) if args.stream
                     else ctx_added / noop_added)
            ratios.append(ratio)
            lines.append(f"| {p + 1} | {d:.3f} | +{noop_added:.3f} | +{ctx_added:.3f} | {ratio:.2f} |")
    finally:
        fake.stop()
        tmp.cleanup()
    m = bench.machine()
    cmd = "python " + " ".join([os.path.relpath(sys.argv[0], bench.ROOT)] + sys.argv[1:])
    kind = "TTFB ratio ctxproxy / no-op" if args.stream else "added-latency ratio ctxproxy / no-op"
    return (f"## {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} — `{cmd}` (one process serves both)\n\n"
            f"Machine: {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, aiohttp {m['aiohttp']}. "
            f"Code: {m['commit']}. {what.capitalize()} at concurrency 1, {args.n} requests per target per "
            f"process, targets in a random order at each step; CPU pinning: "
            f"{'process on the last CPU, provider and client on the first' if pin else 'none'}.\n\n"
            + "\n".join(lines) + f"\n\n{kind}, per process: " + " · ".join(f"{r:.2f}" for r in ratios) + "\n")


def new_turns(n: int) -> list:
    """``n`` new turns of growing plain chats (``profile_engine.growing_turns``), as run.py's kinds:
    every target gets each once, so ctxproxy never sees a request twice."""
    from profile_engine import growing_turns

    by_path = {k.path: k for k in bench.KINDS}
    out = []
    for i, (_, path, headers, body) in enumerate(growing_turns(n, False)):
        doc = json.loads(body)
        doc["messages"][0]["content"] = f"[{os.getpid()}] " + doc["messages"][0]["content"]  # new to every run
        stream = {**doc, "stream": True}
        if path.endswith("/chat/completions"):
            stream["stream_options"] = {"include_usage": True}
        out.append(bench.Kind(f"{by_path[path].name}", path, headers, json.dumps(doc).encode(),
                              json.dumps(stream).encode(), by_path[path].terminal))
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        upstream, noop_port, ctx_port, config, data_dir = sys.argv[2:7]
        asyncio.run(serve_both(upstream, int(noop_port), int(ctx_port), config, data_dir,
                               inline="inline" in sys.argv[7:],
                               off=[a[4:] for a in sys.argv[7:] if a.startswith("off=")]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stream", action="store_true", help="time to first byte of a stream instead of latency")
    ap.add_argument("--pin", action="store_true", help="pin the process to the last CPU, the rest to the first")
    ap.add_argument("--processes", type=int, default=3, help="fresh processes, one after the other (3)")
    ap.add_argument("--n", type=int, default=0, help="requests per target per process (2000; --stream 500)")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--config", default=str(HERE / "core-only.toml"), help="ctxproxy config (the core pipeline)")
    ap.add_argument("--no-write", action="store_true", help="print only, do not append to bench/RESULTS.md")
    ap.add_argument("--new-turns", action="store_true", help="each request a new turn of a growing conversation")
    ap.add_argument("--inline-bookkeeping", action="store_true",
                    help="the request filters' bookkeeping before the forward (filters.base.DEFER_AFTER_FORWARD off)")
    ap.add_argument("--off", action="append", default=[], metavar="MODULE:NAME",
                    help="a module's boolean switch set False in the served process (repeatable), e.g. "
                         "ctxproxy.store.memory_index:KEEP_NOTHING_VISIBLE")
    args = ap.parse_args()
    args.n = args.n or (500 if args.stream else 2000)
    section = asyncio.run(measure(args))
    print(section)
    if not args.no_write:
        with bench.RESULTS.open("a") as f:
            f.write("\n" + section)


if __name__ == "__main__":
    main()
