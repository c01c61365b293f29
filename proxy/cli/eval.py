"""``ctxproxy eval``: the facts, isolation and compaction regression sets (docs/eval.md).

Runs each set end to end through a real ctxproxy (the configuration under
test, in this process on 127.0.0.1, or with --child as `ctxproxy serve` in a
child process) and through no proxy at all, against the built-in scripted
provider: no network, no API key. Prints a table, writes
the JSON report with --json; with --baseline it prints each metric's change
and exits 1 when one regressed by more than --max-regression (a CI gate).

    ctxproxy eval                                   # all sets, the default configuration
    ctxproxy eval --set facts --config ctxproxy.toml --cases team-cases.jsonl
    ctxproxy eval --json eval.json --baseline main-eval.json --max-regression 2
    ctxproxy eval --child --config ctxproxy.toml    # the proxy as its own process, as deployed
    ctxproxy eval --set turns --no-sealed           # while tuning: the sealed held-out half left unread
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from .options import CLIError, add_config_option

EXIT_REGRESSION = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("eval", help="run the facts, isolation and compaction regression sets",
                              description="\n\n".join(__doc__.split("\n\n")[1:]) if __doc__ else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", dest="set_name", default="all", choices=("facts", "isolation", "turns", "compaction", "all"),
                   help="which set to run (default: all)")
    add_config_option(p, "the ctxproxy.toml under test (default: the built-in defaults)")
    p.add_argument("--data", metavar="DIR", help="keep the proxies' data directories here (default: a temp dir)")
    p.add_argument("--cases", metavar="FILE", help="the team's own cases, JSONL (docs/eval.md)")
    p.add_argument("--json", metavar="OUT", help="write the report as JSON to this file")
    p.add_argument("--baseline", metavar="PREV.json", help="a previous --json report: print changes, gate on them")
    p.add_argument("--max-regression", metavar="PCT", type=float, default=1.0,
                   help="allowed worsening of a metric: percentage points for shares, percent for counts "
                        "(default 1.0; leakage, freshness errors and duplicate side effects allow none)")
    p.add_argument("--seed", type=int, default=7, help="seed of the generated sets (default 7)")
    p.add_argument("--quick", action="store_true", help="small generated sets (the CI slice)")
    p.add_argument("--child", action="store_true",
                   help="run the proxy under test as a child process (`ctxproxy serve` on a free 127.0.0.1 "
                        "port) instead of in this process; the report is the same")
    p.add_argument("--no-sealed", dest="sealed", action="store_false",
                   help="leave the sealed held-out halves out, unread (every run made while changing what they "
                        "measure; they are scored once, at the end)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ctxproxy.config import ConfigError, load_config

    from ..eval.cases import CaseError, load
    from ..eval.report import compare, table
    from ..eval.runner import FULL, QUICK, SETS, run_eval

    if args.config:
        try:
            load_config(args.config)
        except ConfigError as exc:
            raise CLIError(f"--config: {exc}", 2) from None
    if args.max_regression < 0:
        raise CLIError("--max-regression must be >= 0", 2)
    baseline = _read_json(args.baseline) if args.baseline else None
    try:
        cases = load(args.cases) if args.cases else None
    except CaseError as exc:
        raise CLIError(f"--cases: {exc}", 2) from None
    sets = SETS if args.set_name == "all" else (args.set_name,)
    sizes = QUICK if args.quick else FULL

    def go(data: Path) -> dict:
        try:
            return asyncio.run(run_eval(sets, args.config, data, args.seed, sizes, cases, child=args.child,
                                        sealed=args.sealed))
        except (CaseError, RuntimeError) as exc:  # a case the proxy refused, a probe it did not answer, a child
            raise CLIError(f"eval: {exc}", 2) from None

    if args.data:
        data = Path(args.data)
        if data.exists() and (not data.is_dir() or any(data.iterdir())):
            raise CLIError(f"--data: {data} is not an empty directory (every run starts from empty stores)", 2)
        data.mkdir(parents=True, exist_ok=True)
        report = go(data)
    else:
        with tempfile.TemporaryDirectory(prefix="ctxproxy-eval-") as tmp:
            report = go(Path(tmp))
    deltas = compare(report, baseline, args.max_regression) if baseline is not None else None
    print(table(report, deltas))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    failed = [d for d in deltas or () if d.failed]
    if failed:
        print(f"\nregressed beyond --max-regression {args.max_regression:g}: "
              + ", ".join(f"{d.set}.{d.metric} {d.baseline} -> {d.current}" for d in failed), file=sys.stderr)
        return EXIT_REGRESSION
    return 0


def _read_json(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise CLIError(f"--baseline: cannot read {path} ({exc})", 2) from None
    if not isinstance(data, dict) or not isinstance(data.get("sets"), dict):
        raise CLIError(f"--baseline: {path} is not a ctxproxy eval report", 2)
    return data
