"""Added latency of ``[auth] mode = "keys"`` against ``open``, in one run.

    python bench/bench_auth.py             # 1500 requests per target and kind, 2 process pairs
    python bench/bench_auth.py --quick     # smoke run
    python bench/bench_auth.py --same-process   # both modes served by one process
    python bench/bench_auth.py --in-process     # provider, client and three proxies on one event loop

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
``--in-process`` goes further for a busy machine: the fake provider, the
client and the proxies share one event loop, and a second open-mode proxy
(``open2``) is the A/A control that shows the noise floor of the same run.
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
from run import (KINDS, REPLY_TEXT, ROOT, cpu_seconds, Kind, Proc, Target, ctxproxy_argv, free_port, one_request, pct,  # noqa: E402
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
    from ctxproxy.proxy.edge.server import CUT_GRACE, make_app

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


async def in_process(args: argparse.Namespace) -> tuple[list[Target], str]:
    """Everything on this event loop: the provider, ``open``, ``open2`` (A/A) and ``keys``."""
    from aiohttp import web

    from ctxproxy.config import load_config
    from ctxproxy.proxy.auth import issue_key
    from ctxproxy.proxy.scripted_provider import FakeProvider, Reply
    from ctxproxy.proxy.edge.server import APP_STATE, make_app

    tmp = Path(tempfile.mkdtemp(prefix="ctxbench-auth-"))
    keys_toml = tmp / "keys.toml"
    keys_toml.write_text(CORE.read_text() + '\n[auth]\nmode = "keys"\n')
    async with FakeProvider(default_reply=Reply.text(REPLY_TEXT)) as fake:
        runners, targets = [], []
        try:
            for name, config in (("open", CORE), ("open2", CORE), ("keys", keys_toml)):
                cfg = load_config(config, port=0, data_dir=str(tmp / name), anthropic_upstream=fake.url,
                                  openai_upstream=fake.url)
                runner = web.AppRunner(make_app(cfg), access_log=None)
                await runner.setup()
                await web.TCPSite(runner, "127.0.0.1", 0).start()
                runners.append(runner)
                targets.append(Target(name, f"http://127.0.0.1:{runner.addresses[0][1]}", None))
            st = runners[-1].app[APP_STATE]
            key = issue_key(st.services["store"], st.config, "bench", user="u")["key"]
            direct = Target("direct", fake.url, None)
            async with aiohttp.ClientSession() as s:
                for t in (direct, *targets):
                    t.session = s
                await measure([(direct, KINDS), (targets[0], KINDS), (targets[1], KINDS),
                               (targets[2], [keyed(k, key) for k in KINDS])], args.n, args.warmup)
        finally:
            for r in runners:
                await r.cleanup()
    return [direct, *targets], "one process and event loop for provider, client and proxies"


async def subprocesses(args: argparse.Namespace) -> tuple[list[Target], str]:
    """The provider and the proxies as processes (``--same-process``: one serves both modes)."""
    tmp = Path(tempfile.mkdtemp(prefix="ctxbench-auth-"))
    keys_toml = tmp / "keys.toml"
    keys_toml.write_text(CORE.read_text() + '\n[auth]\nmode = "keys"\n')
    fport = free_port()
    fake = Proc("fake", [sys.executable, "-m", "ctxproxy.proxy.scripted_provider", str(fport),
                         "--text", REPLY_TEXT], fport, tmp / "fake.log")
    fake.start(None)
    direct, open_t, keys_t = Target("direct", fake.url, None), Target("open", "", None), Target("keys", "", None)
    try:
        await wait_ready(fake, "/v1/models")
        for pair in range(args.pairs):
            data = tmp / f"pair{pair}"
            made = subprocess.run([*ctxproxy_argv(), "keys", "create", "--tenant", "bench", "--user", "u",
                                   "--data-dir", str(data / "keys"), "--json"], capture_output=True, check=True)
            key = json.loads(made.stdout)["key"]
            if args.same_process:
                ports = free_port(), free_port()
                procs = [Proc(f"both{pair}", [sys.executable, __file__, "--serve", fake.url, str(ports[0]),
                                              str(ports[1]), str(keys_toml), str(data)], ports[1], tmp / "both.log")]
                procs[0].start(None)
            else:
                procs = [start_proxy(f"open{pair}", CORE, data / "open", fake.url, tmp),
                         start_proxy(f"keys{pair}", keys_toml, data / "keys", fake.url, tmp)]
            try:
                for p in procs:
                    await wait_ready(p, "/ctx/healthz")
                open_t.url = f"http://127.0.0.1:{ports[0]}" if args.same_process else procs[0].url
                keys_t.url = procs[-1].url
                async with aiohttp.ClientSession() as a, aiohttp.ClientSession() as b, \
                        aiohttp.ClientSession() as c:
                    direct.session, open_t.session, keys_t.session = a, b, c
                    own = {} if args.same_process else {open_t.name: procs[0], keys_t.name: procs[1]}
                    cpu0 = {name: cpu_seconds(p.pid) for name, p in own.items()}
                    await measure([(direct, KINDS), (open_t, KINDS), (keys_t, [keyed(k, key) for k in KINDS])],
                                  args.n // args.pairs, args.warmup)
                    for t in (open_t, keys_t):  # each process served only its own target's requests
                        if t.name in own:
                            t.load_cpu += cpu_seconds(own[t.name].pid) - cpu0[t.name]
                            t.load_n += (args.n // args.pairs + args.warmup) * len(KINDS)
            finally:
                for p in procs:
                    p.stop()
    finally:
        fake.stop()
    how = "processes serving both modes" if args.same_process else "process pairs"
    return [direct, open_t, keys_t], f"{args.pairs} fresh {how}"


def report(targets: list[Target], how: str, meter: LoadMeter) -> str:
    errors = {t.name: (t.errors, t.error_samples) for t in targets if t.errors}
    if errors:
        raise SystemExit(f"requests failed: {errors}")
    by = {t.name: t for t in targets}
    names = [t.name for t in targets]
    extra = ["open2"] if "open2" in by else []
    head = ("| kind | " + " | ".join(f"{n} p50 / p99 ms" for n in names) + " | keys / open (p50) | "
            + "".join(f"{n} / open (A/A) | " for n in extra) + "added ms: open / keys (p50) | added keys / open |")
    rows = [head, "|" + "---|" * (len(names) + len(extra) + 4)]
    for kind in KINDS:
        p50 = {n: pct(by[n].lat[kind.name], 50) for n in names}
        p99 = {n: pct(by[n].lat[kind.name], 99) for n in names}
        d, o, k = p50["direct"], p50["open"], p50["keys"]
        rows.append(f"| {kind.name} | " + " | ".join(f"{p50[n]:.3f} / {p99[n]:.3f}" for n in names)
                    + f" | {k / o:.3f} | " + "".join(f"{p50[n] / o:.3f} | " for n in extra)
                    + f"{o - d:.3f} / {k - d:.3f} | {(k - d) / max(o - d, 1e-9):.3f} |")
    n = len(by["direct"].lat[KINDS[0].name])
    cpu = ""
    if by["open"].load_n and by["keys"].load_n:  # CPU per request: what a busy machine hardly moves
        o, k = (by[m].load_cpu * 1e6 / by[m].load_n for m in ("open", "keys"))
        cpu = (f"CPU per request of the proxy process (utime+stime over its requests): open {o:.0f} µs, "
               f"keys {k:.0f} µs, ratio {k / o:.3f}.\n\n")
    return (section_head("auth: keys vs open") + f"\n{n} requests per target and kind at concurrency 1, {how}, "
            "core pipeline (`bench/core-only.toml`), the key in `X-Ctx-Key`.\n\n"
            + "\n".join(rows) + "\n\n" + cpu + meter.summary() + "\n")


async def amain(args: argparse.Namespace) -> None:
    meter = LoadMeter()
    targets, how = await (in_process(args) if args.in_process else subprocesses(args))
    text = report(targets, how, meter)
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
    ap.add_argument("--in-process", action="store_true",
                    help="provider, client and proxies on one event loop, with an A/A control")
    ap.add_argument("--quick", action="store_true", help="a smoke run (200 requests), not appended")
    args = ap.parse_args()
    if args.quick:
        args.n, args.warmup, args.pairs = 200, 20, 1
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
