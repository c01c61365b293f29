"""Benchmark of context fidelity across a client compaction.

    nice python bench/bench_compaction.py                # 200-turn sessions, all agents, ~1-2 minutes
    nice python bench/bench_compaction.py --turns 40     # quicker
    nice python bench/bench_compaction.py --write        # also append the table to bench/RESULTS.md

What it does (everything on 127.0.0.1, every loop bounded):

* starts the scripted provider and ctxproxy in this process, a fresh proxy per
  agent and configuration, and drives the scripted sessions of
  ctxproxy.proxy.eval.agents: Claude Code (``/compact``), Codex (local
  compaction marked in ``x-codex-turn-metadata``; remote compaction v2),
  OpenClaw and Hermes (their summary messages), each in its recorded request
  shape. A session gives instructions, takes two decisions, passes tests,
  commits, opens a PR, deploys to staging, files a follow-up ticket (each
  agent its own way) and asks for an approval, then
  reads ``--turns`` files (one user turn each), then its client compacts
  with a summary that keeps none of it, and it goes on for ``--after`` turns;
* configurations: ``ctxproxy`` (the defaults) and ``off`` (checkpoint filter,
  effect-ledger checkpoint and rule re-injection switched off);
* from what the provider received after the compaction: the share of the
  session's items (goal, 3 instructions, 2 decisions, 4 evidence lines, 2
  side effects, the ticket, the pending approval, the agent's rule files)
  visible in the first request and in every request; side effects the model
  repeated (it opens the PR or files the ticket again when it cannot see it
  did); the checkpoint's size in tokens (o200k; the effect ledger's side
  effects are its effects field, so a separate ledger segment — the second
  number — only appears when the checkpoint filter is off); the share of
  following turns that kept the
  previous turn's cached prefix (Anthropic: up to its last breakpoint;
  OpenAI: the previous request up to ctxproxy's per-turn text).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from aiohttp import web  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.filters.tokens import TokenCounter  # noqa: E402
from ctxproxy.proxy.eval.agents import AGENTS, OFF, run  # noqa: E402
from ctxproxy.proxy.scripted_provider import FakeProvider  # noqa: E402
from ctxproxy.proxy.edge.server import APP_STATE, make_app  # noqa: E402

CONFIGS = {"ctxproxy": "", "off": OFF, "busy": ""}  # busy: ctxproxy on a session whose state outgrows the budget


async def one(agent_name: str, config: str, turns: int, after: int, count) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeProvider(record_limit=None) as fake:
            cfg_path = None
            if CONFIGS[config]:
                cfg_path = Path(tmp) / "c.toml"
                cfg_path.write_text(CONFIGS[config])
            cfg = load_config(cfg_path, port=0, data_dir=str(Path(tmp) / "data"), anthropic_upstream=fake.url,
                              openai_upstream=fake.url, shutdown_timeout=1.0)
            app = make_app(cfg)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]
            try:
                store = app[APP_STATE].services["store"]
                t0 = time.perf_counter()
                r = await run(AGENTS[agent_name](), f"http://127.0.0.1:{port}", fake, filler=turns, after=after,
                              count=count, busy=config == "busy")
                wall = time.perf_counter() - t0
                app[APP_STATE].services["writer"].flush()
                docs = [store.manifests.get("default", t) for t in r.turn_ids[-40:]]
                timings = [d.data.get("timings_ms") or {} for d in docs if d is not None]
            finally:
                await runner.cleanup()
    n = len(r.visible)
    return {"agent": agent_name, "config": config, "first": sum(r.visible.values()) / n,
            "all": sum(r.visible_all.values()) / n, "lost": sorted(k for k, v in r.visible_all.items() if not v),
            "dups": r.duplicates, "tokens": max(r.checkpoint_tokens or [0]),
            "both": max((a + b for a, b in zip(r.checkpoint_tokens, r.ledger_tokens)), default=0), "cache": r.cache_kept,
            "requests": r.requests, "wall": wall,
            "ms": {f: _median([t.get(f) for t in timings]) for f in ("checkpoint", "inject", "effects")}}


def _median(values: list) -> float:
    vals = sorted(v for v in values if isinstance(v, (int, float)))
    return vals[len(vals) // 2] if vals else 0.0


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=190, help="file-reading turns between the set-up and the compaction")
    ap.add_argument("--after", type=int, default=20, help="turns after the compaction")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="which of: " + ", ".join(CONFIGS))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    count = TokenCounter().count
    rows = []
    for name in AGENTS:
        for config in args.configs.split(","):
            rows.append(await one(name, config, args.turns, args.after, count))
            r = rows[-1]
            print(f"{r['agent']:13} {r['config']:9} visible first {r['first']:.0%} all {r['all']:.0%} "
                  f"dups {r['dups']} checkpoint {r['tokens']} tok (with any separate ledger segment {r['both']}) cache kept {r['cache']:.0%} "
                  f"({r['requests']} requests, {r['wall']:.1f} s; ms per request, median of the last 40: "
                  f"{' '.join(f'{k} {v:.2f}' for k, v in r['ms'].items())}) lost: {', '.join(r['lost']) or '-'}", flush=True)
    user_turns = 8 + args.turns + args.after
    table = ["| agent | config | visible after compaction (first request / every request) | repeated side effects "
             "| checkpoint tokens, max (task state, effects included / + a separate ledger segment) "
             "| cache prefix kept on following turns "
             "| checkpoint / inject ms per request (p50, last 40) | not visible |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        table.append(f"| {r['agent']} | {r['config']} | {r['first']:.0%} / {r['all']:.0%} | {r['dups']} | "
                     f"{r['tokens'] or '—'} / {r['both'] or '—'} | {r['cache']:.0%} | "
                     f"{r['ms']['checkpoint']:.2f} / {r['ms']['inject']:.2f} | {', '.join(r['lost']) or '—'} |")
    text = "\n".join(table)
    print(text)
    if args.write:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        with open(HERE / "RESULTS.md", "a") as f:
            f.write(f"\n\n## Context fidelity across a compaction ({stamp})\n\n"
                    f"`nice .venv/bin/python bench/bench_compaction.py --turns {args.turns} --after {args.after} "
                    f"--configs {args.configs} --write` — {user_turns}-turn sessions ({args.turns} file reads between the set-up and the "
                    f"compaction, {args.after} turns after it), through the real proxy and the scripted provider. "
                    "Items: goal, 3 instructions, 2 decisions, 4 evidence lines (tests, commit, PR, deployment), "
                    "2 side effects, the ticket, the pending approval, the agent's rule files. `off`: checkpoint, effect-ledger "
                    "checkpoint and rule re-injection switched off. `busy`: the defaults, on a session whose every "
                    "file-reading turn also gives an instruction and passes a test run (the state outgrows the "
                    "budget; the oldest items are left out).\n\n" + text + "\n")


if __name__ == "__main__":
    asyncio.run(main())
