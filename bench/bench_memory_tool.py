"""What offering the memory tool adds to a turn in which the model does not call it.

    python bench/bench_memory_tool.py                 # 3 x 400 streamed turns per side
    python bench/bench_memory_tool.py --turns 1000 --no-write
    python bench/bench_memory_tool.py --websocket     # Responses WebSocket turns instead

One process serves two ctxproxy apps on the embedded default pipeline in
front of the same scripted provider: one with `[filters.memory_tool]` off,
one with it on. Requests alternate between them (so both run with the same
process's luck and equally warm caches): streamed Anthropic turns, 40
sessions of 10 turns each, the model answering text; with --websocket,
``response.create`` turns on one Responses WebSocket per session (as Codex
runs them). Prints the time to the last byte (the last event) p50/p90 of
each side and the ratio on/off, per repetition; appends them with the
command to bench/RESULTS.md unless --no-write.
"""
from __future__ import annotations

import argparse
import asyncio
import json
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


class WsTurns:
    """Responses WebSocket turns: one socket per session, opened on its first turn."""

    def __init__(self, http: aiohttp.ClientSession):
        self.http = http
        self.sockets: dict[tuple[str, str], aiohttp.ClientWebSocketResponse] = {}

    async def __call__(self, http: aiohttp.ClientSession, url: str, session: str, i: int) -> float:
        t = time.perf_counter()
        ws = self.sockets.get((url, session))
        if ws is None:
            for (u, s), old in list(self.sockets.items()):
                if u == url:
                    await old.close()
                    del self.sockets[(u, s)]
            ws = self.sockets[(url, session)] = await self.http.ws_connect(
                url.replace("http://", "ws://") + "/v1/responses",
                headers={"authorization": "Bearer sk-test", "x-ctx-session": session, "x-ctx-user": "bench"})
        await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", "store": False,
                                      "input": f"step {i}: what is next in the deploy?"}))
        while True:
            msg = await ws.receive(timeout=30)
            assert msg.type == aiohttp.WSMsgType.TEXT, msg
            if '"response.completed"' in msg.data:
                break
        return (time.perf_counter() - t) * 1000.0

    async def close(self) -> None:
        for ws in self.sockets.values():
            await ws.close()


async def measure(turns: int, reps: int, websocket: bool = False) -> list[tuple[float, float, float, float]]:
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
                    turn = WsTurns(http) if websocket else one_turn
                    for i in range(turns):
                        session = f"r{rep}-s{i // 10}"
                        for name, (_, url) in (("off", off), ("on", on)) if i % 2 else (("on", on), ("off", off)):
                            times[name].append(await turn(http, url, session, i))
                    if websocket:
                        await turn.close()
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
    ap.add_argument("--websocket", action="store_true", help="Responses WebSocket turns instead of HTTP")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = asyncio.run(measure(args.turns, args.reps, args.websocket))
    lines = ["| repetition | off p50 ms | on p50 ms | on/off p50 | off p90 ms | on p90 ms |",
             "|---|---:|---:|---:|---:|---:|"]
    for i, (off50, on50, off90, on90) in enumerate(rows, 1):
        lines.append(f"| {i} | {off50:.2f} | {on50:.2f} | {on50 / off50:.3f} | {off90:.2f} | {on90:.2f} |")
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        what = "Responses WebSocket turn" if args.websocket else "turn"
        append_results(section_head(f"memory tool offered, not called: {what} time against the tool off") +
                       f"\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
