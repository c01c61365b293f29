"""Benchmark of tool-output pruning on a tool-heavy session.

    python bench/bench_prune.py                 # 200 turns per API, ~1 minute
    python bench/bench_prune.py --turns 60      # quicker
    python bench/bench_prune.py --write         # also append the tables to bench/RESULTS.md

What it does (everything on 127.0.0.1, every loop bounded by ``--turns``):

* starts the scripted provider (ctxproxy.proxy.scripted_provider) and ctxproxy in this
  process, one proxy per configuration, and drives a scripted agent session
  through each with the official SDK (tests/toolsession.py: the model calls a
  tool every turn; the agent answers with file reads, grep hits, test logs and
  listings of 400-9000 characters; every other turn streamed);
* configurations: ``off`` (prune not in the pipeline), ``batched`` (the
  defaults: trigger 100k tokens, clear down to 50%), and ``naive`` (same
  trigger, ``target_ratio = 1``, ``min_batch_ratio = 0``: clear just enough on
  every turn that crosses the trigger, i.e. no batching);
* from what the provider received, per configuration: input tokens summed
  over the session and saved against ``off``; the share of turns whose cached
  prefix was kept (same definition as the tests: Anthropic, up to the last
  ``cache_control``; OpenAI, the previous request's whole input); cache-miss
  tokens (tokens after the prefix shared with the previous request, which a
  provider has to process uncached / write to cache) and a cost in "input
  token equivalents" at Anthropic's prompt-cache prices (read 0.1x, write
  1.25x);
* the prune filter's own time on one turn of the final, largest request
  (decisions already made, warm token cache), measured directly on the hook.
"""
from __future__ import annotations

import argparse
import asyncio
import copy
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import orjson  # noqa: E402
from aiohttp import web  # noqa: E402

from ctxproxy.proxy.scripted_provider import FakeProvider  # noqa: E402
from toolsession import (  # noqa: E402
    _strip_cc, canned, canon, input_tokens, prefix_share, run_session, script, tool_outputs)

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.filters import Pipeline, Turn  # noqa: E402
from ctxproxy.filters.base import Identity  # noqa: E402
from ctxproxy.filters.prune import PruneConfig, PruneFilter  # noqa: E402
from ctxproxy.filters.tokens import TokenCounter  # noqa: E402
from ctxproxy.proxy.adapters import ADAPTERS  # noqa: E402
from ctxproxy.proxy.edge.server import make_app  # noqa: E402
from ctxproxy.store import open_store  # noqa: E402

RESULTS = HERE / "RESULTS.md"
APIS = ("anthropic", "chat", "responses")
KEY = {"anthropic": "messages", "chat": "messages", "responses": "input"}
CONFIGS = {
    "off": None,
    "batched": "trigger_tokens = {trigger}\ntarget_ratio = 0.5\n",
    "naive": "trigger_tokens = {trigger}\ntarget_ratio = 1.0\nmin_batch_ratio = 0.0\n",
}
COUNT = TokenCounter()


def toml_for(name: str, trigger: int) -> str:
    if CONFIGS[name] is None:
        return '[pipeline]\nrequest = ["identify"]\n'
    return '[pipeline]\nrequest = ["identify", "prune"]\n\n[filters.prune]\n' + CONFIGS[name].format(trigger=trigger)


async def start_proxy(toml: str, upstream: str, data_dir: str) -> tuple[str, web.AppRunner]:
    path = Path(data_dir) / "ctxproxy.toml"
    path.write_text(toml)
    cfg = load_config(path, anthropic_upstream=upstream, openai_upstream=upstream, port=0, data_dir=data_dir)
    runner = web.AppRunner(make_app(cfg), handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    return f"http://{host}:{port}", runner


def client(api: str, url: str):
    import anthropic
    import openai

    if api == "anthropic":
        return anthropic.AsyncAnthropic(base_url=url, api_key="sk-ant-bench", max_retries=0)
    return openai.AsyncOpenAI(base_url=url + "/v1", api_key="sk-bench", max_retries=0)


def shared_items_tokens(api: str, prev: dict, cur: dict) -> int:
    """Tokens of the leading items ``cur`` shares with ``prev`` (plus the
    system / instructions / tools head when that is unchanged)."""
    head = {k: _strip_cc(cur.get(k)) for k in ("tools", "system", "instructions")}
    if canon(head) != canon({k: _strip_cc(prev.get(k)) for k in ("tools", "system", "instructions")}):
        return 0
    total = input_tokens(api, {k: v for k, v in cur.items() if k != KEY[api]}, COUNT.count)
    for a, b in zip(prev.get(KEY[api]) or [], cur.get(KEY[api]) or []):
        if canon(_strip_cc(a)) != canon(_strip_cc(b)):
            break
        total += input_tokens(api, {KEY[api]: [b]}, COUNT.count)
    return total


def measure(api: str, bodies: list[dict]) -> dict:
    tokens = [input_tokens(api, b, COUNT.count) for b in bodies]
    share, breaks = prefix_share(api, bodies)
    miss = tokens[0]
    hit = 0
    for k in range(1, len(bodies)):
        shared = min(shared_items_tokens(api, bodies[k - 1], bodies[k]), tokens[k])
        hit += shared
        miss += tokens[k] - shared
    return {"tokens": sum(tokens), "last": tokens[-1], "peak": max(tokens), "share": share, "breaks": breaks,
            "miss": miss, "hit": hit, "cost": 0.1 * hit + 1.25 * miss}


async def run_one(api: str, name: str, outputs: list, trigger: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="ctxbench-") as tmp:
        async with FakeProvider() as fake:
            url, runner = await start_proxy(toml_for(name, trigger), fake.url, tmp)
            try:
                fake.script(*script(api, outputs))
                t0 = time.perf_counter()
                await run_session(api, client(api, url), outputs,
                                  headers=None if api == "anthropic" else {"X-Ctx-Session": f"bench-{api}"})
                elapsed = time.perf_counter() - t0
                bodies = [r.json for r in fake.model_requests]
            finally:
                await runner.cleanup()
    m = measure(api, bodies)
    m["seconds"] = elapsed
    return m


def filter_time(api: str, outputs: list, trigger: int, reps: int = 20) -> tuple[float, int, int, float]:
    """p50 ms of the prune hook on the request after ``outputs``, decisions
    already stored; and p50 ms of parsing that body (for scale)."""
    with tempfile.TemporaryDirectory(prefix="ctxbench-") as tmp:
        store = open_store(Path(tmp) / "store")
        try:
            f = PruneFilter(PruneConfig(trigger_tokens=trigger, target_ratio=0.5), store)
            raw = orjson.dumps(canned(api, outputs))
            times, parse = [], []
            for _ in range(reps + 1):
                t0 = time.perf_counter()
                view = ADAPTERS[api].parse_request(raw)
                parse.append((time.perf_counter() - t0) * 1000)
                t = Turn(api=api, route="bench", path="/", headers={}, request=view, tokens=COUNT,
                         identity=Identity(tenant="bench", session="s"))
                t0 = time.perf_counter()
                Pipeline([f]).run_request(t)  # originals committed, as the proxy does
                times.append((time.perf_counter() - t0) * 1000)
            tokens = input_tokens(api, orjson.loads(raw), COUNT.count)
            return statistics.median(times[1:]), tokens, len(raw), statistics.median(parse[1:])
        finally:
            store.close()


async def amain(args: argparse.Namespace) -> None:
    outputs = tool_outputs(args.turns - 1, seed=args.seed)
    raw_tool_tokens = sum(COUNT.count(o[2]) for o in outputs)
    rows = []
    for api in args.apis:
        results = {}
        for name in CONFIGS:
            results[name] = await run_one(api, name, copy.deepcopy(outputs), args.trigger)
        rows.append((api, results))
        print(f"# {api} done", file=sys.stderr)

    lines = [
        f"Session: {args.turns} turns, one tool call per turn, {raw_tool_tokens} tokens of tool output in "
        f"total (o200k_base); trigger {args.trigger} tokens; keep_recent 3; batched clears to 50% of the trigger, "
        "naive clears just below it.",
        "",
        "| API | config | input tokens (sum) | saved vs off | last request | prefix kept | cache breaks "
        "| cache-miss tokens | cost (input-token eq.) | cost vs off |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for api, results in rows:
        off = results["off"]
        for name, m in results.items():
            saved = 1 - m["tokens"] / off["tokens"]
            lines.append(
                f"| {api} | {name} | {m['tokens']:,} | {saved:.1%} | {m['last']:,} | {m['share']:.1%} "
                f"| {len(m['breaks'])} | {m['miss']:,} | {m['cost']:,.0f} | {m['cost'] / off['cost']:.2f}x |")
    lines += ["", "Batch points (turns where the cached prefix broke), batched config: "
              + "; ".join(f"{api} {r['batched']['breaks']}" for api, r in rows), ""]
    lines += ["Prune hook time on one quiet turn (decisions already stored, warm caches), p50 of 20:", "",
              "| API | tool results | request tokens | request bytes | prune hook | JSON parse of the body |",
              "|---|---:|---:|---:|---:|---:|"]
    for api in args.apis:
        for n in sorted({min(4, len(outputs)), min(40, len(outputs)), len(outputs)}):
            ms, tokens, size, parse_ms = filter_time(api, outputs[:n], args.trigger)
            lines.append(f"| {api} | {n} | {tokens:,} | {size:,} | {ms:.2f} ms | {parse_ms:.2f} ms |")
    section = (f"## {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} — "
               f"`python bench/bench_prune.py --turns {args.turns}` (tool-output pruning)\n\n"
               + "\n".join(lines) + "\n")
    print(section)
    if args.write:
        with RESULTS.open("a") as f:
            f.write("\n" + section)
        print(f"# appended to {RESULTS}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description="Tokens saved and cache prefix kept by tool-output pruning.")
    ap.add_argument("--turns", type=int, default=200, help="turns per session (default 200, max 1000)")
    ap.add_argument("--trigger", type=int, default=100_000, help="trigger_tokens (default 100000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--apis", nargs="+", default=list(APIS), choices=APIS)
    ap.add_argument("--write", action="store_true", help="append the tables to bench/RESULTS.md")
    args = ap.parse_args()
    args.turns = max(2, min(args.turns, 1000))
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
