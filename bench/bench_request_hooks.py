"""The request side of the default pipeline in one process: ``run_request_async``
with its write-ahead commits on the store's writer thread, no sockets.

    python bench/bench_request_hooks.py [N] [grow|same]

``grow``: sessions of 40 turns, each bringing a new tool result (effects,
prune and inject write ahead); ``same``: one request again and again (no
write: the pipeline's own cost). Prints the wall and event-loop-thread CPU
p50 per request. To compare with another tree, run it with that tree first
on ``PYTHONPATH`` (a ``ctxproxy/`` folder holding its proxy, filters, store
and config)."""
import asyncio
import statistics
import sys
import tempfile
import time

import orjson

import ctxproxy.filters.base as base
from ctxproxy.config import load_config
from ctxproxy.filters import Turn, build_pipeline, filter_configs
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.services import open_services

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
MODE = sys.argv[2] if len(sys.argv) > 2 else "grow"


def body(i: int) -> bytes:
    msgs = [{"role": "user", "content": "Fix the loader and open a PR."}]
    for k in range(i):
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {k}."},
            {"type": "tool_use", "id": f"toolu_{k:04d}", "name": "Bash", "input": {"command": f"make test-{k}"}}]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:04d}",
                                                  "content": f"ok {k} " + "line of output\n" * 20}]})
    return orjson.dumps({"model": "claude-test-1", "max_tokens": 100, "system": "You are terse.",
                         "tools": [{"name": "Bash", "input_schema": {"type": "object"}}], "messages": msgs})


async def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        cfg = load_config(None, data_dir=d)
        svc = open_services(cfg)
        pipe = build_pipeline(cfg.pipeline.request, filter_configs(cfg), svc)
        tokens = TokenCounter()
        tokens.load()
        adapter = ADAPTERS["anthropic"]
        walls, cpus = [], []
        hdr = {}
        for i in range(N):
            raw = body(i % 40 if MODE == "grow" else 20)
            if i % 40 == 0:
                hdr = {"x-claude-code-session-id": f"bench-s{i}"}
            turn = Turn(api="anthropic", route="anthropic", path="/v1/messages", headers=hdr,
                        request=adapter.parse_request(raw), tokens=tokens, services=svc)
            t0, c0 = time.perf_counter(), time.thread_time()
            await pipe.run_request_async(turn, reparse=lambda: adapter.parse_request(raw))
            walls.append((time.perf_counter() - t0) * 1000)
            cpus.append((time.thread_time() - c0) * 1000)
            pipe.run_end(turn)
        w, c = walls[N // 5:], cpus[N // 5:]
        kind = "Commit protocol" if hasattr(base, "Commit") else "async hooks"
        print(f"{kind} ({MODE}): request wall p50 {statistics.median(w):.3f} ms; "
              f"event-loop CPU p50 {statistics.median(c):.3f} ms (n={len(w)})")
        pipe.close()
        svc["writer"].close()
        svc["store"].close()


asyncio.run(main())
