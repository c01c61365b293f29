"""The full eval sets (``ctxproxy eval --set all``) on the default configuration, beside
deliberately broken ones, for bench/RESULTS.md.

    nice .venv/bin/python bench/bench_eval.py            # default + broken configurations, ~2-3 minutes
    nice .venv/bin/python bench/bench_eval.py --write    # also append the table to bench/RESULTS.md
    nice .venv/bin/python bench/bench_eval.py --json out.json   # the default run's report (a CI baseline)
    nice .venv/bin/python bench/bench_eval.py --child    # also the defaults through `ctxproxy serve` (--child)

Columns: the default configuration, the same sessions with no proxy, and one
broken configuration per set, each run only on the set it should break:
recall off (facts), session search widened to the user's other sessions and
a confidential sensitivity ceiling (isolation), the checkpoint, the ledger's
checkpoint and rule re-injection off, and prune left out of the pipeline
(compaction). Everything on 127.0.0.1 against the scripted provider, the
proxies in this process; with ``--child`` the defaults run once more through
a child ``ctxproxy serve`` per set, whose report must be the same.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import LoadMeter, append_results, section_head  # noqa: E402

from ctxproxy.proxy.eval.agents import OFF  # noqa: E402
from ctxproxy.proxy.eval.report import fmt  # noqa: E402
from ctxproxy.proxy.eval.runner import FULL, SETS, run_eval  # noqa: E402

BROKEN = {  # column -> (set it breaks, configuration)
    "recall off": ("facts", "[filters.recall]\nenabled = false\n"),
    "widen same_user": ("isolation", '[filters.recall]\nwiden = "same_user"\n'),
    "confidential ceiling": ("isolation", '[filters.recall]\nmax_sensitivity = "confidential"\n'),
    "checkpoint off": ("compaction", OFF),
    "prune off": ("compaction", '[pipeline]\nrequest = ["identify", "redact", "effects", "checkpoint", "recall", '
                                '"inject", "manifest"]\n'),
}


def same_report(a: dict, b: dict) -> list[str]:
    """The parts of two reports that differ (metrics of both columns and details), by set."""
    return [f"{s}.{part}" for s in a["sets"] for part in ("ctxproxy", "direct", "details")
            if a["sets"][s][part] != b["sets"].get(s, {}).get(part)]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--child", action="store_true", help="also run the defaults with --child")
    args = ap.parse_args()
    meter = LoadMeter()
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        default = await run_eval(SETS, None, Path(tmp) / "default", args.seed, FULL)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        child_note = ""
        if args.child:
            t0 = time.perf_counter()
            child = await run_eval(SETS, None, Path(tmp) / "child", args.seed, FULL, child=True)
            differ = same_report(default, child)
            child_note = (f" With `--child` (`ctxproxy serve` per set): {time.perf_counter() - t0:.0f} s wall, "
                          + (f"**the report differs: {', '.join(differ)}**." if differ else
                             "the same report (every metric of both columns and the details)."))
        broken = {}
        for col, (set_name, toml) in BROKEN.items():
            cfg = Path(tmp) / f"{col.replace(' ', '-')}.toml"
            cfg.write_text(toml)
            broken[col] = await run_eval((set_name,), str(cfg), Path(tmp) / cfg.stem, args.seed, FULL)
    if args.json:
        Path(args.json).write_text(json.dumps(default, indent=2) + "\n")
    cols = ["ctxproxy (defaults)", "no proxy", *BROKEN]
    lines = ["| set | metric | " + " | ".join(cols) + " |", "|---|---|" + "---:|" * len(cols)]
    for set_name, res in default["sets"].items():
        for metric, value in res["ctxproxy"].items():
            row = [fmt(value), fmt(res["direct"].get(metric))]
            for col, (bset, _) in BROKEN.items():
                row.append(fmt(broken[col]["sets"][bset]["ctxproxy"].get(metric)) if bset == set_name else "")
            lines.append(f"| {set_name} | {metric} | " + " | ".join(row) + " |")
    secs = ", ".join(f"{s} {r['seconds']:.0f} s" for s, r in default["sets"].items())
    text = "\n".join(lines)
    timing = f"`all` on the defaults took {wall:.0f} s wall, {cpu:.0f} s CPU in this process ({secs})."
    print(text)
    print(timing + child_note)
    if args.write:
        append_results(section_head("eval: the facts, isolation and compaction sets") + "\n"
                       + f"`ctxproxy eval --set all` (seed {args.seed}, sizes {default['sizes']}) on the default "
                       "configuration, the same sessions with no proxy, and broken configurations each on the "
                       "set it should break (empty: not run). Gated metrics are defined in docs/eval.md.\n\n"
                       + text + f"\n\n{timing}{child_note} " + meter.summary() + "\n")


if __name__ == "__main__":
    asyncio.run(main())
