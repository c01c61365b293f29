"""Where a stream's first token waits: run.py's phase 3 (streams at concurrency 1, the
scripted provider pausing between events) with every process timed from inside.

    nice python bench/bench_ttft.py [N] [--event-delay S] [--kind chat|anthropic]

Starts run.py's provider, the no-op proxy and ``ctxproxy serve`` (default pipeline), each
under a probe (``--probe``: this script patches a few methods, then runs the process's
own main) that notes ``time.perf_counter_ns()`` (CLOCK_MONOTONIC: one clock for every
process of the machine) at each step of a request: the handler entered, the body read,
the request filters done, the forward sent, the provider's headers in, each body chunk
in, each write to the client. The client notes when its request left and when each
chunk came. Streams go to direct, noop and ctxproxy in a fresh random order each step,
as in run.py; the k-th request a process saw is the k-th the client sent it.

Prints, per target and kind, the p50 of each step's time since the client sent the
request, and of each step's share (the time from the step before), so that the added
time to the first token is split into: the request's way in, the request filters, the
way to the provider and back, the first event relayed, the wait for the provider's
content event and its relay. Nothing is written; a benchmark, not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

NOW = time.perf_counter_ns
RECORDS: list[dict] = []  # one per request the probed process saw


def _note(what: str) -> None:
    if RECORDS:
        RECORDS[-1].setdefault(what, NOW())


def _add(what: str, value: int) -> None:
    if RECORDS:
        RECORDS[-1].setdefault(what, []).append(value)


def _queued() -> int:
    """ns this thread has waited on a run queue for a CPU (another process had it)."""
    with open("/proc/thread-self/schedstat", "rb") as f:
        return int(f.read().split()[1])


def _patch_writes() -> None:
    """Every write to a client (the provider's to its client too), and the
    headers of aiohttp's own client as they come."""
    from aiohttp import web

    real_write = web.StreamResponse.write

    async def write(self, data):
        _add("w0", NOW())
        c0, q0 = time.thread_time_ns(), _queued()
        try:
            return await real_write(self, data)
        finally:
            _add("w1", NOW())
            _add("wc", time.thread_time_ns() - c0)
            _add("wq", _queued() - q0)
            _add("wn", len(data))

    web.StreamResponse.write = write

    import aiohttp

    real_request = aiohttp.ClientSession._request

    async def _request(self, *a, **k):
        _note("send")
        resp = await real_request(self, *a, **k)
        _note("hdrs")
        return resp

    aiohttp.ClientSession._request = _request



def _dump(path: str) -> None:
    with open(path, "w") as f:
        json.dump(RECORDS, f)


def probe(role: str, out: str, argv: list[str]) -> None:
    atexit.register(_dump, out)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _patch_writes()
    if role == "provider":
        import run
        from ctxproxy.proxy import scripted_provider

        real_model = scripted_provider.FakeProvider._model

        async def _model(self, request, api):
            RECORDS.append({"in": NOW()})
            return await real_model(self, request, api)

        scripted_provider.FakeProvider._model = _model
        run.provider_main(int(argv[0]), float(argv[1]))
        return
    if role == "noop":
        import noop_proxy

        real_handle = noop_proxy.handle

        async def handle(request):
            if request.method != "POST":  # a readiness probe
                return await real_handle(request)
            RECORDS.append({"in": NOW()})
            await request.read()
            _note("body")
            try:
                return await real_handle(request)
            finally:
                _note("end")

        noop_proxy.handle = handle
        sys.argv = ["noop_proxy.py", *argv]
        noop_proxy.main()
        return
    from ctxproxy.proxy import engine
    from ctxproxy.proxy.edge import relay

    real_handle = relay.Relay.handle

    async def rhandle(self, request, match):
        RECORDS.append({"in": NOW()})
        try:
            return await real_handle(self, request, match)
        finally:
            _note("end")

    relay.Relay.handle = rhandle
    real_req = engine.Exchange.request

    async def request(self, body, body_length=None):
        _note("body")
        out = await real_req(self, body, body_length)
        _note("filters")
        return out

    engine.Exchange.request = request
    real_events = engine.Exchange.events

    def events(self, chunk):
        _add("e0", NOW())
        c0, q0 = time.thread_time_ns(), _queued()
        out = real_events(self, chunk)
        _add("ec", time.thread_time_ns() - c0)
        _add("eq", _queued() - q0)
        _add("e1", NOW())
        _add("en", len(out))
        _add("ein", len(chunk))
        return out

    engine.Exchange.events = events
    from ctxproxy.filters import base

    real_call = base.Pipeline._call

    def _call(self, turn, stage, hook, *a):
        if hook is not stage.event or not RECORDS:
            return real_call(self, turn, stage, hook, *a)
        t = NOW()
        try:
            return real_call(self, turn, stage, hook, *a)
        finally:
            rec = RECORDS[-1]
            rec.setdefault("hooks", []).append((len(rec.get("e0", ())), stage.filter.name, NOW() - t))

    base.Pipeline._call = _call
    real_finish = engine.Exchange.finish

    def finish(self):
        _note("fin0")
        real_finish(self)
        _note("fin1")
        if RECORDS:
            RECORDS[-1]["spans"] = [(n, b - a) for n, a, b, *_ in self.turn.spans if n.endswith(".request")]

    engine.Exchange.finish = finish
    from ctxproxy.proxy.cli.main import main

    sys.argv = ["ctxproxy", *argv]
    main()


# ------------------------------------------------------------------- the client

STREAMED = True  # --plain: non-streamed requests instead (their request side, to compare)


async def one(session, url: str, kind, first_content: bytes) -> dict:
    rec = {"t0": NOW(), "chunks": []}
    buf = b""
    body = kind.stream_body if STREAMED else kind.body
    async with session.post(url + kind.path, data=body, headers=kind.headers) as r:
        rec["hdrs"] = NOW()
        for _ in range(100_000):
            chunk = await r.content.readany()
            if not chunk:
                break
            t = NOW()
            rec["chunks"].append(t)
            if "content" not in rec:
                buf += chunk
                if "data" not in rec and (b"data:" in buf or not STREAMED):
                    rec["data"] = t
                if first_content in buf or not STREAMED:
                    rec["content"] = t
    rec["endc"] = NOW()
    return rec


def start(argv: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, cwd=HERE.parent, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                            stdin=subprocess.DEVNULL, stdout=log.open("wb"), stderr=subprocess.STDOUT)


async def drive(args: argparse.Namespace) -> None:
    import aiohttp

    import run

    me = [sys.executable, str(Path(__file__).resolve())]
    with tempfile.TemporaryDirectory(prefix="ttft-") as d:
        td = Path(d)
        pp, np_, cp = run.free_port(), run.free_port(), run.free_port()
        procs = {
            "provider": start(me + ["--probe", "provider", str(td / "provider.json"), str(pp), str(args.event_delay)],
                              td / "provider.log"),
            "noop": start(me + ["--probe", "noop", str(td / "noop.json"), "--port", str(np_), "--upstream",
                                f"http://127.0.0.1:{pp}"], td / "noop.log"),
            "ctx": start(me + ["--probe", "ctx", str(td / "ctx.json"), "serve", "--port", str(cp), "--data-dir",
                               str(td / "data"), "--anthropic-upstream", f"http://127.0.0.1:{pp}",
                               "--openai-upstream", f"http://127.0.0.1:{pp}"]
                         + (["--config", args.config] if args.config else []), td / "ctx.log"),
        }
        urls = {"direct": f"http://127.0.0.1:{pp}", "noop": f"http://127.0.0.1:{np_}",
                "ctx": f"http://127.0.0.1:{cp}"}
        try:
            for name, path in (("provider", "/"), ("noop", "/"), ("ctx", "/ctx/healthz")):
                p = run.Proc(name, [], int(urls["direct" if name == "provider" else name].rsplit(":", 1)[1]),
                             td / f"{name}.log", procs[name])
                await run.wait_ready(p, path, timeout=180)
            kinds = [k for k in run.KINDS if args.kind in (None, k.name)]
            order: list[tuple[str, str]] = []  # (target, kind) in the order sent
            client: dict[str, list[dict]] = {t: [] for t in urls}
            rng = random.Random(args.seed)
            sessions = {t: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) for t in urls}
            try:
                total = args.warmup + args.n
                for i in range(total * len(kinds)):
                    kind = kinds[i % len(kinds)]
                    targets = list(urls)
                    rng.shuffle(targets)
                    for t in targets:
                        rec = await one(sessions[t], urls[t], kind, run.FIRST_CONTENT)
                        rec["kind"], rec["warm"] = kind.name, i < args.warmup * len(kinds)
                        client[t].append(rec)
                        order.append((t, kind.name))
                        if args.gap:
                            await asyncio.sleep(args.gap / 1000)
            finally:
                for s in sessions.values():
                    await s.close()
        finally:
            for p in procs.values():
                p.send_signal(signal.SIGTERM)
            for p in procs.values():
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
        recs = {n: json.loads((td / f"{n}.json").read_text()) for n in procs}
    # the provider saw every request, in the client's order; health probes left out (no "r"... no "w0")
    prov = [r for r in recs["provider"] if "w0" in r]
    if len(prov) != len(order):
        print(f"# provider saw {len(prov)} streams, client sent {len(order)}", file=sys.stderr)
    by_target: dict[str, list[dict]] = {t: [] for t in urls}
    for (t, _), p in zip(order, prov):
        by_target[t].append(p)
    proxies = {"noop": [r for r in recs["noop"] if "w0" in r or not STREAMED],
               "ctx": [r for r in recs["ctx"] if "e0" in r or not STREAMED]}
    report(client, by_target, proxies, kinds, args)


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def report(client, provider, proxies, kinds, args) -> None:
    for k in kinds:
        print(f"\n## {k.name}: p50 µs since the client sent the request (n={args.n}, event delay "
              f"{args.event_delay * 1e3:g} ms)\n")
        rows: dict[str, dict[str, float]] = {}
        for t in client:
            cs = client[t]
            ps = provider[t]
            xs = proxies.get(t)
            steps: dict[str, list[float]] = {}

            def add(name: str, v: float) -> None:
                steps.setdefault(name, []).append(v / 1e3)

            for j, c in enumerate(cs):
                if c["warm"] or c["kind"] != k.name or "content" not in c:
                    continue
                t0 = c["t0"]
                p = ps[j] if j < len(ps) else None
                x = xs[j] if xs is not None and j < len(xs) else None
                if x is not None:
                    add("proxy: handler entered", x["in"] - t0)
                    add("proxy: body read", x["body"] - t0)
                    for name, ns in x.get("spans", ()):
                        add(f"~ request hook {name}, µs", ns)
                    if "filters" in x:
                        add("proxy: request filters done", x["filters"] - t0)
                    add("proxy: forward handed to aiohttp", x["send"] - t0)
                    if "fin0" in x:
                        add("proxy: turn's end begins", x["fin0"] - t0)
                        add("proxy: turn's end done", x["fin1"] - t0)
                if p is not None:  # its headers go at prepare(), not through write()
                    add("provider: handler entered", p["in"] - t0)
                    for i in range(min(4, len(p.get("w0", ())))):
                        add(f"provider: event {i + 1} write begins", p["w0"][i] - t0)
                if x is not None:
                    if "hdrs" in x:
                        add("proxy: provider's headers in", x["hdrs"] - t0)
                    for i in range(min(4, len(x.get("e0", ())))):
                        add(f"proxy: chunk {i + 1} in, events() begins", x["e0"][i] - t0)
                        add(f"proxy: chunk {i + 1}, events() returns", x["e1"][i] - t0)
                        steps.setdefault(f"~ chunk {i + 1}: bytes in", []).append(x["ein"][i])
                        steps.setdefault(f"~ chunk {i + 1}: bytes out", []).append(x["en"][i])
                        add(f"~ chunk {i + 1}: events()'s thread CPU, µs", x["ec"][i])
                        add(f"~ chunk {i + 1}: events() waiting for a CPU, µs", x["eq"][i])
                    for n, name, ns in x.get("hooks", ()):
                        if n <= 3:
                            add(f"~ chunk {n}: {name}'s event hook, µs", ns)
                    for i in range(min(4, len(x.get("w0", ())))):
                        add(f"proxy: client write {i + 1} begins", x["w0"][i] - t0)
                        add(f"proxy: client write {i + 1} returns", x["w1"][i] - t0)
                        add(f"~ client write {i + 1}: thread CPU, µs", x["wc"][i])
                        add(f"~ client write {i + 1}: waiting for a CPU, µs", x["wq"][i])
                add("client: headers", c["hdrs"] - t0)
                add("client: first data (TTFB)", c["data"] - t0)
                add("client: first content (TTFT)", c["content"] - t0)
                add("client: stream end", c["endc"] - t0)
            rows[t] = {name: med(v) for name, v in steps.items()}
        names: list[str] = []
        for t in rows:
            for n in rows[t]:
                if n not in names:
                    names.append(n)
        names.sort(key=lambda n: min(rows[t].get(n, 1e18) for t in rows) if "~" not in n else 1e17)
        print("| step | " + " | ".join(rows) + " |")
        print("|---|" + "---:|" * len(rows))
        for n in names:
            print(f"| {n} | " + " | ".join(f"{rows[t][n]:.0f}" if n in rows[t] else "" for t in rows) + " |")
        d = rows["direct"]
        for t in ("noop", "ctx"):
            r = rows[t]
            print(f"\n{t}: added TTFB {r['client: first data (TTFB)'] - d['client: first data (TTFB)']:.0f} µs, "
                  f"added TTFT {r['client: first content (TTFT)'] - d['client: first content (TTFT)']:.0f} µs")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        probe(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=200, help="streams per kind per target (200)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--event-delay", type=float, default=0.001)
    ap.add_argument("--kind", choices=("chat", "anthropic"))
    ap.add_argument("--gap", type=float, default=0.0, help="ms between two streams (0)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--config", help="a ctxproxy config file (default: the embedded defaults)")
    ap.add_argument("--plain", action="store_true", help="non-streamed requests (their request side, to compare)")
    args = ap.parse_args()
    global STREAMED
    STREAMED = not args.plain
    asyncio.run(drive(args))


if __name__ == "__main__":
    main()
