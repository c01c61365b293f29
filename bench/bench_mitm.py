"""Transparent mode's cost: ``ctxproxy mitm`` against mitmproxy with an empty addon, same run.

Four processes besides this one (the load client): the scripted provider
over TLS (its own CA), ``ctxproxy mitm`` (the real command, default pipeline),
``ctxproxy serve`` on the same pipeline (for scale: what the agents that take a
base URL get), and the baseline — the same mitmproxy start-up (``MitmProxy``: same options,
same CA) with an addon that only streams event streams (``response.stream =
True``; without it mitmproxy buffers a stream whole, and the baseline would
look slower than it is). Measured over real TLS through HTTPS CONNECT, with
pooled connections (as the SDKs keep them):

1. added latency: sequential non-streamed chat calls, p50/p99, for the
   provider direct, the baseline and ctxproxy; ctxproxy's added latency is
   its p50 minus the baseline's;
2. streams per second: concurrent streamed chat calls, whole streams read.

    nice python bench/bench_mitm.py [--requests 300] [--streams 400] [--concurrency 16] [--append]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # tlscerts: the tests' private CA

from common import LoadMeter, append_results, section_head  # noqa: E402
from run import cpu_seconds, free_port, pct  # noqa: E402

CHAT = {"model": "gpt-5", "messages": [{"role": "user", "content": "Say something about latency."}]}


# -- the child processes ------------------------------------------------------------

def role_fake(port: int, cert: str, key: str) -> None:
    import ssl

    from ctxproxy.proxy.scripted_provider import FakeProvider, Reply

    async def main() -> None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        fp = FakeProvider(default_reply=Reply.text("tokens " * 40, delta_chars=20), record_limit=100)
        await fp.start(port=port, ssl_context=ctx, url_host="localhost")
        await asyncio.Event().wait()

    asyncio.run(main())


class StreamOnly:
    """The baseline's addon: no filters; event streams are relayed as they come."""

    def responseheaders(self, flow) -> None:
        if flow.response.headers.get("content-type", "").startswith("text/event-stream"):
            flow.response.stream = True


def role_baseline(config: str, data_dir: str) -> None:
    import signal

    from ctxproxy.config import load_config
    from ctxproxy.proxy.mitm.server import MitmProxy
    from ctxproxy.proxy.services import settle_heap

    async def main() -> None:
        proxy = MitmProxy(load_config(config, data_dir=data_dir), addons=(StreamOnly(),))
        await proxy.start(ours=False)
        settle_heap()  # as ctxproxy mitm does
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        await proxy.stop()

    asyncio.run(main())


# -- the load client --------------------------------------------------------------------

def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # bounded: start-up takes a few seconds
        if proc.poll() is not None:
            raise SystemExit(f"a child exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


async def latency(client: httpx2.AsyncClient, url: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = await client.post(url, json=CHAT)
        assert r.status_code == 200 and b"tokens" in r.content, r.text[:200]
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def streams(client: httpx2.AsyncClient, url: str, n: int, concurrency: int) -> float:
    todo = list(range(n))

    async def worker() -> None:
        while todo:
            todo.pop()
            async with client.stream("POST", url, json={**CHAT, "stream": True}) as r:
                body = b"".join([c async for c in r.aiter_bytes()])
            assert r.status_code == 200 and body.rstrip().endswith(b"[DONE]"), body[-200:]

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return n / (time.perf_counter() - t0)


async def measure(args, targets: dict[str, tuple[str, str | None, str]]) -> dict:
    """``targets``: name -> (base URL the client calls, HTTPS proxy or None, CA file)."""
    results: dict[str, dict] = {}
    clients = {name: httpx2.AsyncClient(proxy=proxy, verify=verify, timeout=60, trust_env=False,
                                        limits=httpx2.Limits(max_connections=args.concurrency))
               for name, (_, proxy, verify) in targets.items()}
    urls = {name: base + "/v1/chat/completions" for name, (base, _, _) in targets.items()}
    try:
        for name, c in clients.items():  # warm-up: connections pooled, caches and tokenizers loaded
            await latency(c, urls[name], 20)
        order = list(clients)
        rounds = 3
        for name in order:
            results[name] = {"lat": [], "sps": []}
        for r in range(rounds):  # interleaved rounds, random order: a drift in load hits all alike
            random.Random(r).shuffle(order)
            for name in order:
                results[name]["lat"] += await latency(clients[name], urls[name], args.requests // rounds)
                results[name]["sps"].append(await streams(clients[name], urls[name], args.streams // rounds,
                                                          args.concurrency))
    finally:
        for c in clients.values():
            await c.aclose()
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--role", choices=("fake", "baseline"), help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--cert", help=argparse.SUPPRESS)
    p.add_argument("--key", help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    p.add_argument("--data-dir", help=argparse.SUPPRESS)
    p.add_argument("--requests", type=int, default=300, help="sequential non-streamed calls per target")
    p.add_argument("--streams", type=int, default=400, help="streams per target")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--append", action="store_true", help="append the results to bench/RESULTS.md")
    args = p.parse_args()
    if args.role == "fake":
        return role_fake(args.port, args.cert, args.key)
    if args.role == "baseline":
        return role_baseline(args.config, args.data_dir)

    from tlscerts import TestCA

    from ctxproxy.config import load_config
    from ctxproxy.proxy.mitm.ca import bundle_path, ensure_ca

    work = Path(tempfile.mkdtemp(prefix="bench-mitm-"))
    ca = TestCA(work / "certs", "bench provider CA")
    cert, key, _ = ca.issue("localhost")
    fake_port, ours_port, base_port, serve_port = free_port(), free_port(), free_port(), free_port()
    fake_url = f"https://localhost:{fake_port}"
    configs = {}
    for name, port in (("ours", ours_port), ("base", base_port)):
        configs[name] = work / f"{name}.toml"
        configs[name].write_text(f'[mitm]\nport = {port}\nupstream_ca = "{ca.pem}"\n'
                                 f'[routes.openai]\napi = "openai"\nupstream = "{fake_url}"\n')
    data = {name: str(work / f"data-{name}") for name in configs}
    ensure_ca(load_config(configs["ours"], data_dir=data["ours"]))
    ensure_ca(load_config(configs["base"], data_dir=data["base"]))
    me = [sys.executable, str(Path(__file__).resolve())]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    log = (work / "children.log").open("wb")
    procs = {
        "fake": subprocess.Popen(me + ["--role", "fake", "--port", str(fake_port), "--cert", str(cert),
                                       "--key", str(key)], env=env, stdout=log, stderr=log),
        "base": subprocess.Popen(me + ["--role", "baseline", "--config", str(configs["base"]),
                                       "--data-dir", data["base"]], env=env, stdout=log, stderr=log),
        "ours": subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", "mitm", "--config",
                                  str(configs["ours"]), "--data-dir", data["ours"], "--log-level", "WARNING"],
                                 env=env, stdout=log, stderr=log),
        # serve, for scale: the agent points its base URL at it; it trusts the provider's CA
        "serve": subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", "--port", str(serve_port),
                                   "--data-dir", str(work / "data-serve"), "--openai-upstream", fake_url,
                                   "--log-level", "WARNING"],
                                  env=dict(env, SSL_CERT_FILE=str(ca.pem)), stdout=log, stderr=log),
    }
    try:
        for name, port in (("fake", fake_port), ("base", base_port), ("ours", ours_port), ("serve", serve_port)):
            wait_port(port, procs[name])
        bundle = {n: str(bundle_path(load_config(configs[n], data_dir=data[n]))) for n in configs}
        targets = {
            "direct": (fake_url, None, str(ca.pem)),
            "mitmproxy + empty addon": (fake_url, f"http://127.0.0.1:{base_port}", bundle["base"]),
            "ctxproxy mitm": (fake_url, f"http://127.0.0.1:{ours_port}", bundle["ours"]),
            "ctxproxy serve (base URL)": (f"http://127.0.0.1:{serve_port}", None, str(ca.pem)),
        }
        meter = LoadMeter(lambda: [p.pid for p in procs.values()])
        cpu0 = {n: cpu_seconds(p.pid) for n, p in procs.items()}
        t0 = time.monotonic()
        results = asyncio.run(measure(args, targets))
        wall = time.monotonic() - t0
        cpu = {n: cpu_seconds(p.pid) - cpu0[n] for n, p in procs.items()}
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    base_p50 = pct(results["mitmproxy + empty addon"]["lat"], 50)
    rows = ["| target | latency p50 ms | p99 ms | added over the empty addon, p50 ms | streams/s (c=%d) |"
            % args.concurrency, "|---|---:|---:|---:|---:|"]
    for name, r in results.items():
        p50 = pct(r["lat"], 50)
        added = f"{p50 - base_p50:+.2f}" if name == "ctxproxy mitm" else ""
        rows.append(f"| {name} | {p50:.2f} | {pct(r['lat'], 99):.2f} | {added} | "
                    f"{sum(r['sps']) / len(r['sps']):.0f} |")
    ratio = (sum(results["ctxproxy mitm"]["sps"]) / sum(results["mitmproxy + empty addon"]["sps"]))
    text = "\n".join([
        section_head("transparent mode: ctxproxy mitm vs mitmproxy with an empty addon"),
        f"{args.requests} sequential non-streamed chat calls and {args.streams} chat streams "
        f"(concurrency {args.concurrency}) per target, in 3 interleaved rounds; real TLS through "
        "HTTPS CONNECT, connections pooled; ctxproxy on the default pipeline.\n",
        *rows, "",
        f"Streams/s, ctxproxy over the empty addon: {ratio:.2f}. CPU seconds over the run: "
        f"ctxproxy mitm {cpu['ours']:.1f}, empty addon {cpu['base']:.1f}, serve {cpu['serve']:.1f}, "
        f"fake provider {cpu['fake']:.1f} (wall {wall:.0f} s; 2 CPUs shared by the five processes). "
        "serve is reached over plain HTTP on loopback (its base URL) and dials the provider over TLS.",
        meter.summary(), ""])
    print(text)
    if args.append:
        append_results(text)


if __name__ == "__main__":
    main()
