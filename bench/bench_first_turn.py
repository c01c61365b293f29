"""What the first model call of a process pays beyond the later ones.

    python bench/bench_first_turn.py                # 5 processes, 6 turns each
    python bench/bench_first_turn.py --cold         # the same with filters' warm() skipped (before it existed)

Each process is a fresh ``ctxproxy serve`` (default config) in front of the
scripted provider; once ``/ctx/healthz`` answers, it gets streamed Anthropic
turns, each in a new session and on a new client connection, carrying a
secret, a tool call and its result, and an answer that streams a secret back.
A turn's time is to the first text delta. Printed per process: the first
turn's time minus the median of the later ones (what the process's start-up
left to its first turn), then the median over processes.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from common import wait_up

from ctxproxy.proxy.ports import free_port
from ctxproxy.proxy.scripted_provider import FakeProviderThread, Reply

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
COLD = ("from ctxproxy.filters.base import Pipeline; Pipeline.warm = lambda self, done=None: None; ")


def body(i: int) -> bytes:
    return json.dumps({"model": "claude-x", "max_tokens": 64, "stream": True, "system": "You are helpful.",
                       "messages": [
                           {"role": "user", "content": f"task {i}: open a PR with token {SECRET}"},
                           {"role": "assistant", "content": [{"type": "tool_use", "id": f"tu{i}", "name": "Bash",
                                                              "input": {"command": "gh pr create"}}]},
                           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{i}",
                                                         "content": "https://github.com/o/r/pull/4821 " * 40}]},
                           {"role": "user", "content": "thanks, what next?"}]}).encode()


async def turn(url: str, i: int) -> float:
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json",
               "x-ctx-session": f"s{i}"}
    async with aiohttp.ClientSession() as http:  # a new connection each turn, the first one's too
        t = time.perf_counter()
        async with http.post(url + "/v1/messages", data=body(i), headers=headers) as r:
            assert r.status == 200, await r.text()
            first = None
            async for line in r.content:
                if first is None and line.startswith(b"data: ") and b"text_delta" in line:
                    first = time.perf_counter() - t
            assert first is not None
            return first


async def one_process(fake_url: str, turns: int, cold: bool) -> list[float]:
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        code = (COLD if cold else "") + "from ctxproxy.proxy.cli.main import main; main()"
        argv = [sys.executable, "-c", code, "serve", "--port", str(port), "--data-dir", str(Path(data) / "d"),
                "--anthropic-upstream", fake_url, "--openai-upstream", fake_url]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            url = f"http://127.0.0.1:{port}"
            async with aiohttp.ClientSession() as http:
                await wait_up(http, url, proc, limit=60.0)
            return [await turn(url, i) for i in range(turns)]
        finally:
            proc.terminate()
            proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=5)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--cold", action="store_true", help="skip the filters' warm() at start-up")
    args = ap.parse_args()
    answer = Reply.text(f"here is the key {SECRET} again, and some more words to stream " * 3)
    added = []
    with FakeProviderThread(default_reply=answer) as fake:
        asyncio.run(turn(fake.url, -1))  # the client's own first call (imports, connect) stays out of the numbers
        for n in range(args.processes):
            times = asyncio.run(one_process(fake.url, args.turns, args.cold))
            later = statistics.median(times[1:])
            added.append(times[0] - later)
            print(f"process {n}: first turn {times[0] * 1000:.1f} ms, later turns (median) {later * 1000:.1f} ms, "
                  f"added {added[-1] * 1000:.1f} ms")
    print(f"{'cold' if args.cold else 'warm'}: the first turn's added time to first token, median over "
          f"{args.processes} processes: {statistics.median(added) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
