"""The first send of run.py's 196K-token conversation (142 tool calls, 527 KB) to a
process that never saw it, in-process through the turn engine (``tests/enginedriver.py``),
the provider a function: how long the request filters keep it before it is forwarded, when
its answer is complete (what a client waits for: run.py's "first send, added"), when the
turn's end (records, manifest, work left for after the answer) is done, and the event
loop's CPU until the answer.

    python bench/bench_first_send.py [ROUNDS] [--variants=A,B]  # 6: rounds of each variant, interleaved

Each round is a fresh store and pipeline. Variants, each the shipped code but for:
"answer reads history" (checkpoint reads a long first-seen history when the answer comes
instead of at the turn's end with it, as before 2026-12-06 17:00) and "no joined prescan"
(redaction scans each new string alone), "prune waits for its fsync" (prune's write-ahead
awaited before the filters after it run, as before 2026-12-07 15:30, instead of staged:
they run during the fsync), "prune walks small items" (prune's estimate of a first-seen
conversation walks every item's strings, as before 2026-12-07 15:40, instead of reading a
small item's JSON length), "redaction encodes each text" (the joined prescan encodes each
new text, then joins them, as before 2026-12-07 15:50). "A+B" is both. Medians per variant; compare within one run.
"""
from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from profile_engine import canned  # noqa: E402
from run import LongConversation  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.filters.base import Turn  # noqa: E402
from ctxproxy.filters import prune  # noqa: E402
from ctxproxy.filters.checkpoint.filter import CheckpointFilter  # noqa: E402
from ctxproxy.proxy.engine import Exchange  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402
from ctxproxy.store.services.redaction import engine as redaction  # noqa: E402

VARIANTS = ""  # --variants a,b: only these
ANSWERED: list[tuple[int, float]] = []  # (ns, loop thread CPU s) when the answer was complete


def _mark() -> None:
    real = Exchange.finish

    def finish(self):
        ANSWERED.append((time.perf_counter_ns(), time.thread_time()))
        real(self)

    Exchange.finish = finish


@contextmanager
def variant(name: str):
    answered, join_min, staged = CheckpointFilter._answered, redaction.JOIN_MIN, Turn.commit_staged
    prescan = redaction.Redactor._joined_prescan
    small_item = prune.ESTIMATE_ITEM_BYTES
    parts = name.split("+")  # "a+b": both
    if "answer reads history" in parts:
        def old(self, turn, store, answer):
            ident = turn.identity
            if self._deferred:
                self._run_deferred((ident.tenant, ident.session))
            return answered(self, turn, store, answer)
        CheckpointFilter._answered = old
    if "no joined prescan" in parts:
        redaction.JOIN_MIN = 1 << 60
    if "prune waits for its fsync" in parts:
        async def awaited(self, owner, store, write, failed="could not store"):
            return await self.commit(store, write, failed)
        Turn.commit_staged = awaited
    if "prune walks small items" in parts:
        prune.ESTIMATE_ITEM_BYTES = 0
    if "redaction encodes each text" in parts:
        def each(self, texts, digests, misses):
            named = self._hs.joined_events([redaction.encode(texts[i]) for i in misses])
            for k, i in enumerate(misses):
                if k not in named:
                    self._cache.put(digests[i], (), redaction._SPAN_ENTRY)
            return [i for k, i in enumerate(misses) if k in named]
        redaction.Redactor._joined_prescan = each
    try:
        yield
    finally:
        CheckpointFilter._answered, redaction.JOIN_MIN, Turn.commit_staged = answered, join_min, staged
        prune.ESTIMATE_ITEM_BYTES = small_item
        redaction.Redactor._joined_prescan = prescan


async def one(conv: LongConversation) -> tuple[float, float, float, float]:
    with tempfile.TemporaryDirectory() as d:
        async with EngineDriver(load_config(None, data_dir=d),
                                provider=canned(Reply.tool_call("Bash", {"command": "ls"}))) as drive:
            small = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10,
                                "messages": [{"role": "user", "content": "hi"}]}).encode()
            await drive.call("POST", "/v1/messages", {**conv.g.HEADERS, "X-Ctx-Session": "warm"}, small)
            ANSWERED.clear()
            t0, c0 = time.perf_counter_ns(), time.thread_time()
            got = await drive.call("POST", "/v1/messages", {**conv.g.HEADERS, "X-Ctx-Session": "long"},
                                   conv.bodies[0])
            done = (time.perf_counter_ns() - t0) / 1e6
            assert got.status == 200, got.body[:300]
            up = next(s for s in got.turn.spans if s[0] == "upstream")
            at, ac = ANSWERED[0]
            return (up[1] - got.turn.started_ns) / 1e6, (at - t0) / 1e6, done, (ac - c0) * 1e3


async def amain(rounds: int) -> None:
    _mark()
    conv = LongConversation(later=1)
    names = tuple(VARIANTS.split(",")) if VARIANTS else (
        "shipped", "answer reads history", "no joined prescan", "prune waits for its fsync",
        "prune walks small items", "redaction encodes each text",
        "prune waits for its fsync+prune walks small items+redaction encodes each text")
    got: dict[str, list[tuple[float, float, float, float]]] = {n: [] for n in names}
    for r in range(len(names) * rounds):
        name = names[r % len(names)]
        with variant(name):
            got[name].append(await one(conv))
    for name, xs in got.items():
        med = [statistics.median(x[k] for x in xs) for k in range(4)]
        print(f"{name}: forwarded after {med[0]:.1f} ms, answered after {med[1]:.1f} ms "
              f"({min(x[1] for x in xs):.1f}-{max(x[1] for x in xs):.1f}), turn done after {med[2]:.1f} ms; "
              f"loop CPU until answered {med[3]:.1f} ms (medians of {rounds})")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--variants=")]
    VARIANTS = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--variants=")), "")
    asyncio.run(amain(int(args[0]) if args else 6))
