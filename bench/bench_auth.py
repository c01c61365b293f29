"""Added latency of ``[auth] mode = "keys"`` against ``open``, in one run.

    python bench/bench_auth.py             # 1500 requests per target and kind, 2 process pairs
    python bench/bench_auth.py --quick     # smoke run
    python bench/bench_auth.py --same-process   # both modes served by one process

Starts the scripted provider and, per pair, two ctxproxy processes with the
core pipeline (``bench/core-only.toml``): one in ``open`` mode, one in
``keys`` mode with a key made by ``ctxproxy keys create`` in its data dir
(presented in ``X-Ctx-Key``). Requests at concurrency 1 alternate the three
targets (direct, open, keys) in a random order per step, as ``run.py`` does;
the report gives p50/p99 per target and kind, the ratio keys / open of the
whole request and of the latency each proxy adds over direct (target: the
whole request within 3%). Appends a section to ``bench/RESULTS.md``.

Two processes differ by tens of microseconds per request for their whole life
(see ``run.py``); ``--same-process`` serves both modes from one process on two
ports (as ``same_process.py`` does), so the ratio is the check's own cost.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LoadMeter, append_results, section_head  # noqa: E402
from run import (KINDS, REPLY_TEXT, ROOT, Kind, Proc, Target, ctxproxy_argv, free_port, one_request, pct,  # noqa: E402
                 shuffled, wait_ready)

CORE = ROOT / "bench" / "core-only.toml"


def keyed(kind: Kind, key: str) -> Kind:
    return Kind(kind.name, kind.path, {**kind.headers, "X-Ctx-Key": key}, kind.body, kind.stream_body, kind.terminal)


def start_proxy(name: str, config: Path, data: Path, upstream: str, logs: Path) -> Proc:
    port = free_port()
    p = Proc(name, [*ctxproxy_argv(), "serve", "--config", str(config), "--port", str(port), "--data-dir",
                    str(data), "--anthropic-upstream", upstream, "--openai-upstream", upstream,
                    "--log-level", "WARNING"], port, logs / f"{name}.log")
    p.start(None)
    return p


async def serve_pair(upstream: str, open_port: int, keys_port: int, keys_toml: str, data: str) -> None:
    """The ``--same-process`` child: an open and a keys ctxproxy on one event loop until SIGTERM."""
    import gc
    import signal

    from aiohttp import web

    from ctxproxy.config import load_config
    from ctxproxy.proxy.server import CUT_GRACE, make_app

    runners = []
    for config, port, sub in ((str(CORE), open_port, "open"), (keys_toml, keys_port, "keys")):
        cfg = load_config(config, port=port, data_dir=str(Path(data) / sub), anthropic_upstream=upstream,
                          openai_upstream=upstream)
        runners.append((web.AppRunner(make_app(cfg), handler_cancellation=True, access_log=None,
                                      shutdown_timeout=CUT_GRACE), port))
    for r, _ in runners:
        await r.setup()
    gc.collect()
    gc.freeze()
    gc.set_threshold(20000, 50, 50)  # as ``ctxproxy serve`` does
    for r, port in runners:
        await web.TCPSite(r, "127.0.0.1", port, backlog=1024).start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    for r, _ in runners:
        await r.cleanup()


async def measure(targets: list[tuple[Target, list[Kind]]], n: int, warmup: int) -> None:
    """Each step: every target once per kind, the targets in a fresh random order (run.shuffled)."""
    kinds_of = {t.name: kinds for t, kinds in targets}
    for i in range(warmup + n):
        for t in shuffled([t for t, _ in targets]):
            for kind in kinds_of[t.name]:
                dt = await one_request(t, kind)
                if i >= warmup:
                    t.lat.setdefault(kind.name, []).append(dt)


async def amain(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="ctxbench-auth-"))
    keys_toml = tmp / "keys.toml"
    keys_toml.write_text(CORE.read_text() + '\n[auth]\nmode = "keys"\n')
    fport = free_port()
    fake = Proc("fake", [sys.executable, "-m", "ctxproxy.proxy.scripted_provider", str(fport),
                         "--text", REPLY_TEXT], fport, tmp / "fake.log")
    fake.start(None)
    direct, open_t, keys_t = Target("direct", fake.url, None), Target("open", "", None), Target("keys", "", None)
    meter = None
    try:
        await wait_ready(fake, "/v1/models")
        meter = LoadMeter(lambda: [p.proc.pid for p in (open_t, keys_t) if p.proc] + [fake.pid])
        for pair in range(args.pairs):
            data = tmp / f"pair{pair}"
            made = subprocess.run([*ctxproxy_argv(), "keys", "create", "--tenant", "bench", "--user", "u",
                                   "--data-dir", str(data / "keys"), "--json"], capture_output=True, check=True)
            key = json.loads(made.stdout)["key"]
            if args.same_process:
                ports = free_port(), free_port()
                both = Proc(f"both{pair}", [sys.executable, __file__, "--serve", fake.url, str(ports[0]),
                                            str(ports[1]), str(keys_toml), str(data)], ports[1], tmp / "both.log")
                both.start(None)
                procs = [both]
            else:
                procs = [start_proxy(f"open{pair}", CORE, data / "open", fake.url, tmp),
                         start_proxy(f"keys{pair}", keys_toml, data / "keys", fake.url, tmp)]
            try:
                for p in procs:
                    await wait_ready(p, "/ctx/healthz")
                if args.same_process:
                    open_t.url, keys_t.url = f"http://127.0.0.1:{ports[0]}", procs[0].url
                    open_t.proc = keys_t.proc = procs[0]
                else:
                    open_t.url, open_t.proc, keys_t.url, keys_t.proc = procs[0].url, procs[0], procs[1].url, procs[1]
                async with aiohttp.ClientSession() as a, aiohttp.ClientSession() as b, \
                        aiohttp.ClientSession() as c:
                    direct.session, open_t.session, keys_t.session = a, b, c
                    if pair == 0:
                        meter.rebase()
                    await measure([(direct, KINDS), (open_t, KINDS), (keys_t, [keyed(k, key) for k in KINDS])],
                                  args.n // args.pairs, args.warmup)
            finally:
                for p in procs:
                    p.stop()
    finally:
        fake.stop()
    errors = {t.name: (t.errors, t.error_samples) for t in (direct, open_t, keys_t) if t.errors}
    if errors:
        raise SystemExit(f"requests failed: {errors}")
    rows = ["| kind | direct p50 / p99 ms | open p50 / p99 ms | keys p50 / p99 ms | keys / open (p50) "
            "| added: open / keys ms (p50) | added ratio keys / open |", "|---|---|---|---|---|---|---|"]
    for kind in KINDS:
        d, o, k = (pct(t.lat[kind.name], 50) for t in (direct, open_t, keys_t))
        p99 = [pct(t.lat[kind.name], 99) for t in (direct, open_t, keys_t)]
        rows.append(f"| {kind.name} | {d:.3f} / {p99[0]:.3f} | {o:.3f} / {p99[1]:.3f} | {k:.3f} / {p99[2]:.3f} "
                    f"| {k / o:.3f} | {o - d:.3f} / {k - d:.3f} | {(k - d) / max(o - d, 1e-9):.3f} |")
    n = len(direct.lat[KINDS[0].name])
    text = (section_head("auth: keys vs open") + f"\n{n} requests per target and kind at concurrency 1, "
            f"{args.pairs} fresh {'processes serving both modes' if args.same_process else 'process pairs'}, core pipeline (`bench/core-only.toml`), the key in `X-Ctx-Key`.\n\n"
            + "\n".join(rows) + "\n\n" + (meter.summary() if meter else "") + "\n")
    print(text)
    if not args.quick:
        append_results(text)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        asyncio.run(serve_pair(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1500, help="measured requests per target and kind (all pairs)")
    ap.add_argument("--warmup", type=int, default=100, help="unmeasured requests per pair first")
    ap.add_argument("--pairs", type=int, default=2, help="fresh (open, keys) process pairs")
    ap.add_argument("--same-process", action="store_true", help="one process serves both modes (two ports)")
    ap.add_argument("--quick", action="store_true", help="a smoke run (200 requests), not appended")
    args = ap.parse_args()
    if args.quick:
        args.n, args.warmup, args.pairs = 200, 20, 1
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
