"""How far prune's estimate of a long conversation first seen is from the exact count, and
how many results its first batch prunes: walking every item's strings against estimating the
small items from their JSON (``ESTIMATE_ITEM_BYTES``), on run.py's 196K-token conversation and
two held out (``bench_growth``'s session 5; the test suite's Chat tool session, 120 results).

    python bench/bench_prune_estimate.py

A benchmark, not a test: nothing is kept (each run is a fresh store in a temporary directory).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

import bench_growth  # noqa: E402
from toolsession import canned, tool_outputs  # noqa: E402

from ctxproxy.filters import Pipeline, Turn, prune  # noqa: E402
from ctxproxy.filters.base import Identity  # noqa: E402
from ctxproxy.filters.prune import PruneConfig, PruneFilter, estimate_tokens  # noqa: E402
from ctxproxy.filters.tokens import TokenCounter  # noqa: E402
from ctxproxy.proxy.adapters import ADAPTERS  # noqa: E402
from ctxproxy.store import open_store  # noqa: E402


def growth(index: int) -> bytes:
    plan = bench_growth.make_plan([200_000], 0, 1, index=index)
    return orjson.dumps(bench_growth.body_for(plan, plan.turns[0][3]))


def first_send(api: str, raw: bytes, small_item: int) -> tuple[int, bool, int]:
    """(prune's raw estimate, whether it was an estimate, results pruned) on a fresh process's first sight."""
    keep = prune.ESTIMATE_ITEM_BYTES
    prune.ESTIMATE_ITEM_BYTES = small_item
    try:
        with tempfile.TemporaryDirectory() as d:
            store = open_store(d)
            try:
                t = Turn(api=api, route="r", path="/", headers={}, request=ADAPTERS[api].parse_request(raw),
                         tokens=TokenCounter(), identity=Identity(tenant="acme", session="s"))
                Pipeline([PruneFilter(PruneConfig(), store)]).run_request(t)
                st = t.state["prune"]
                return st.tokens_estimated, st.counts_estimated, len(st.pruned)
            finally:
                store.close()
    finally:
        prune.ESTIMATE_ITEM_BYTES = keep


def main() -> None:
    exact = TokenCounter()
    conversations = {
        "run.py's conversation": ("anthropic", growth(0)),
        "bench_growth session 5 (held out)": ("anthropic", growth(5)),
        "Chat tool session, 120 results (held out)":
            ("chat", orjson.dumps(canned("chat", tool_outputs(140, seed=11, scale=2.0), 120))),
    }
    for name, (api, raw) in conversations.items():
        total = estimate_tokens(ADAPTERS[api].parse_request(raw), exact.count)
        walked, from_json = first_send(api, raw, 0), first_send(api, raw, prune.ESTIMATE_ITEM_BYTES)
        print(f"{name}: {len(raw) // 1024} KB, {total} tokens exactly; estimate walking every item "
              f"{walked[0]} ({(walked[0] / total - 1) * 100:+.1f} %, {walked[2]} pruned), small items from their "
              f"JSON {from_json[0]} ({(from_json[0] / total - 1) * 100:+.1f} %, {from_json[2]} pruned)"
              + ("" if walked[1] and from_json[1] else " [counted exactly: near the trigger]"))


if __name__ == "__main__":
    main()
