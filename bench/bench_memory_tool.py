"""What offering the memory tool adds to a turn in which the model does not call it.

    python bench/bench_memory_tool.py                 # 3 x 400 streamed turns per side
    python bench/bench_memory_tool.py --turns 1000 --no-write

One process serves two ctxproxy apps on the embedded default pipeline in
front of the same scripted provider: one with `[filters.memory_tool]` off,
one with it on. Requests alternate between them (so both run with the same
process's luck and equally warm caches): streamed Anthropic turns, 40
sessions of 10 turns each, the model answering text. Prints the time to the
last byte p50/p90 of each side and the ratio on/off, per repetition; appends
them with the command to bench/RESULTS.md unless --no-write.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import append_results, section_head  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.edge.server import make_app  # noqa: E402
from ctxproxy.proxy.scripted_provider import FakeProviderThread, Reply  # noqa: E402

ON = "[filters.memory_tool]\nenabled = true\n"


async def start(cfg_text: str, data_dir: str, upstream: str) -> tuple[web.AppRunner, str]:
    cfg_path = Path(data_dir) / "c.toml"
    cfg_path.write_text(cfg_text)
    cfg = load_config(cfg_path if cfg_text else None, port=0, data_dir=data_dir, anthropic_upstream=upstream,
                      openai_upstream=upstream)
    runner = web.AppRunner(make_app(cfg), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    return runner, f"http://127.0.0.1:{port}"


async def one_turn(http: aiohttp.ClientSession, url: str, session: str, i: int) -> float:
    body = {"model": "claude-x", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": f"step {i}: what is next in the deploy?"}]}
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "x-ctx-session": session,
               "x-ctx-user": "bench"}
    t = time.perf_counter()
    async with http.post(url + "/v1/messages", json=body, headers=headers) as r:
        assert r.status == 200, await r.text()
        await r.read()
    return (time.perf_counter() - t) * 1000.0


async def measure(turns: int, reps: int) -> list[tuple[float, float, float, float]]:
    fake = FakeProviderThread(default_reply=Reply.text("The next step is to run the smoke tests on staging."),
                              record_limit=100)
    fp = fake.start()
    out = []
    try:
        for rep in range(reps):
            with tempfile.TemporaryDirectory() as off_dir, tempfile.TemporaryDirectory() as on_dir:
                off = await start("", off_dir, fp.url)
                on = await start(ON, on_dir, fp.url)
                times: dict[str, list[float]] = {"off": [], "on": []}
                async with aiohttp.ClientSession() as http:
                    for i in range(turns):
                        session = f"r{rep}-s{i // 10}"
                        for name, (_, url) in (("off", off), ("on", on)) if i % 2 else (("on", on), ("off", off)):
                            times[name].append(await one_turn(http, url, session, i))
                for runner, _ in (off, on):
                    await runner.cleanup()
            warm = {k: v[turns // 10:] for k, v in times.items()}  # the first tenth warms both up
            q = {k: statistics.quantiles(v, n=10) for k, v in warm.items()}
            out.append((statistics.median(warm["off"]), statistics.median(warm["on"]), q["off"][8], q["on"][8]))
    finally:
        fake.stop()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = asyncio.run(measure(args.turns, args.reps))
    lines = ["| repetition | off p50 ms | on p50 ms | on/off p50 | off p90 ms | on p90 ms |",
             "|---|---:|---:|---:|---:|---:|"]
    for i, (off50, on50, off90, on90) in enumerate(rows, 1):
        lines.append(f"| {i} | {off50:.2f} | {on50:.2f} | {on50 / off50:.3f} | {off90:.2f} | {on90:.2f} |")
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        append_results(section_head("memory tool offered, not called: turn time against the tool off") +
                       f"\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
