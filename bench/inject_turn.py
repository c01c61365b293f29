"""inject: per-turn cost as the conversation grows (a benchmark, not a test).

    python bench/inject_turn.py            # conversations of ~1K .. ~200K tokens
    python bench/inject_turn.py --quick

Each turn runs the inject filter alone on an Anthropic request shaped like
Claude Code's (system blocks with breakpoints, a growing tool-heavy history)
with a rules bundle (managed + project files), a frozen memory snapshot in a
real LMDB store, and a checkpoint segment offered per turn. The parse is not
timed (the adapter's cost, not inject's). Inject should cost O(new content):
the ratio of the largest to the smallest conversation's time per turn is
printed (target <= 3).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.base import Identity
from ctxproxy.filters.inject.filter import InjectConfig, InjectFilter, MemoryConfig, RulesConfig
from ctxproxy.filters.segments import Segment, offer
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.store import open_store


def conversation(n_pairs: int) -> bytes:
    system = [{"type": "text", "text": "You are an agent."},
              {"type": "text", "text": "Prompt " * 2000, "cache_control": {"type": "ephemeral"}}]
    msgs = [{"role": "user", "content": "start the task"}]
    for i in range(n_pairs):
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {i}"},
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"cat file{i}"}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"line {i} of output\n" * 40}]})
    msgs[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return orjson.dumps({"model": "m", "max_tokens": 100, "system": system, "messages": msgs})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [2, 20, 200, 800] if not args.quick else [2, 200]
    reps = 200 if not args.quick else 50
    tmp = Path(tempfile.mkdtemp(prefix="ctxproxy-bench-inject-"))
    (tmp / "AGENTS.md").write_text("# Project\n" + "\n".join(f"- rule {i}: do the thing" for i in range(200)))
    (tmp / "policy.md").write_text("# Policy\nNever push to main.\n")
    store = open_store(tmp / "store")
    for i in range(50):
        store.memories.put("t", f"m{i}", {"text": f"memory {i} " * 10, "scope": "tenant", "trust": "curated"})
    f = InjectFilter(InjectConfig(rules=RulesConfig(root=str(tmp), managed=("policy.md",), project=("AGENTS.md",)),
                                  memory=MemoryConfig()), store)
    tokens = TokenCounter()
    adapter = ADAPTERS["anthropic"]
    rows = []
    for n in sizes:
        raw = conversation(n)
        size_tokens = tokens.count(raw.decode())
        times = []
        for r in range(reps):
            view = adapter.parse_request(raw)
            turn = Turn(api="anthropic", route="anthropic", path="/v1/messages", headers={}, request=view,
                        tokens=tokens, identity=Identity(tenant="t", session=f"s{n}", task="k", source="header"))
            offer(turn, Segment(kind="checkpoint", ref=f"cp@{r}", text=f"goal: step {r}\nnext: continue",
                                origin="bench", placement="turn"))
            t0 = time.perf_counter()
            Pipeline([f]).run_request(turn)  # its session write committed, as the proxy does
            times.append((time.perf_counter() - t0) * 1e6)
        rows.append((n, size_tokens, statistics.median(times), sorted(times)[int(len(times) * 0.99) - 1]))
    store.close()
    print("| history pairs | conversation tokens | inject p50 µs | inject p99 µs |")
    print("| ---: | ---: | ---: | ---: |")
    for n, t, p50, p99 in rows:
        print(f"| {n} | {t} | {p50:.0f} | {p99:.0f} |")
    ratio = rows[-1][2] / rows[0][2]
    print(f"\nlargest / smallest p50: {ratio:.2f} (target <= 3)")
    sys.exit(0)


if __name__ == "__main__":
    main()
