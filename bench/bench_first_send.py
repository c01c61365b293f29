"""The first send of run.py's 196K-token conversation (142 tool calls, 527 KB) to a
process that never saw it, in-process through the turn engine (``tests/enginedriver.py``),
the provider a function: how long the request filters keep it before it is forwarded,
and when the turn's end (records, manifest, work left for after the answer) is done.

    python bench/bench_first_send.py [ROUNDS]      # 6: rounds of each, interleaved

Each round is a fresh store and pipeline. "read first" makes checkpoint read the long
history before forwarding, as it did before it left that for the turn's end; "default"
is the shipped code. Medians per variant; compare within one run.
"""
from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from profile_engine import canned  # noqa: E402
from run import LongConversation  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.filters.checkpoint.filter import CheckpointFilter  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402


async def one(conv: LongConversation) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        async with EngineDriver(load_config(None, data_dir=d),
                                provider=canned(Reply.tool_call("Bash", {"command": "ls"}))) as drive:
            small = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10,
                                "messages": [{"role": "user", "content": "hi"}]}).encode()
            await drive.call("POST", "/v1/messages", {**conv.g.HEADERS, "X-Ctx-Session": "warm"}, small)
            t0 = time.perf_counter()
            got = await drive.call("POST", "/v1/messages", {**conv.g.HEADERS, "X-Ctx-Session": "long"},
                                   conv.bodies[0])
            done = (time.perf_counter() - t0) * 1e3
            assert got.status == 200, got.body[:300]
            up = next(s for s in got.turn.spans if s[0] == "upstream")
            return (up[1] - got.turn.started_ns) / 1e6, done


async def amain(rounds: int) -> None:
    conv = LongConversation(later=1)
    shipped = CheckpointFilter.__dict__["_defer"]  # the staticmethod itself
    got: dict[str, list[tuple[float, float]]] = {"read first": [], "default": []}
    for r in range(2 * rounds):
        name = "read first" if r % 2 == 0 else "default"
        CheckpointFilter._defer = staticmethod(lambda *a: False) if name == "read first" else shipped
        got[name].append(await one(conv))
    CheckpointFilter._defer = shipped
    for name, xs in got.items():
        fwd = [f for f, _ in xs]
        print(f"{name}: forwarded after {statistics.median(fwd):.1f} ms (median; {min(fwd):.1f}-{max(fwd):.1f}), "
              f"turn done after {statistics.median(d for _, d in xs):.1f} ms ({rounds} rounds)")


if __name__ == "__main__":
    asyncio.run(amain(int(sys.argv[1]) if len(sys.argv) > 1 else 6))
