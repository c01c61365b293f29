"""The eval report: metric definitions (direction, how a regression is judged), the
table, the JSON document, and the ``--baseline`` gate."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

REPORT_VERSION = 1


@dataclass(frozen=True)
class Metric:
    name: str
    better: str  # "higher" | "lower" | "" (informational, never gated)
    zero_tolerance: bool = False  # any worsening fails, whatever --max-regression says
    count: bool = False  # a count (regression judged relative to the baseline), not a share


METRICS = {m.name: m for m in (
    Metric("recall@1", "higher"), Metric("recall@5", "higher"), Metric("mrr", "higher"), Metric("facts_injected", "higher"),
    Metric("citation_precision", "higher"), Metric("freshness_error", "lower", zero_tolerance=True),
    Metric("noise_ratio", "lower"), Metric("privacy_leakage", "lower", zero_tolerance=True),
    Metric("memory_write_precision", "higher"), Metric("compaction_fidelity", "higher"),
    Metric("duplicate_side_effects", "lower", zero_tolerance=True, count=True),
    Metric("cache_prefix_retention", "higher"), Metric("tokens_saved_by_pruning", "higher"),
    Metric("turn_hit_rate", "higher"), Metric("false_injection_rate", "lower"),
    Metric("false_injections_per_turn", "lower", count=True),
    Metric("input_tokens", "", count=True), Metric("injected_tokens", "", count=True),
)}


@dataclass(frozen=True)
class Delta:
    set: str
    metric: str
    current: float | None
    baseline: float | None
    change: float | None  # percentage points (shares) or percent of the baseline (counts); + = better
    failed: bool


def compare(report: dict, baseline: dict, max_regression: float) -> list[Delta]:
    """Each metric of the ``ctxproxy`` column against the baseline report's; a metric
    present in only one of them is reported, never failed."""
    out = []
    for set_name, cur in report["sets"].items():
        base = (baseline.get("sets") or {}).get(set_name, {}).get("ctxproxy") or {}
        for name, value in cur["ctxproxy"].items():
            m = METRICS.get(name)
            b = base.get(name)
            if m is None or value is None or b is None:
                out.append(Delta(set_name, name, value, b, None, False))
                continue
            sign = 1 if m.better == "higher" else -1 if m.better == "lower" else 0
            if m.count:
                change = (value - b) / max(abs(b), 1) * 100 * sign
            else:
                change = (value - b) * 100 * sign
            failed = bool(sign) and change < 0 and (m.zero_tolerance or -change > max_regression)
            out.append(Delta(set_name, name, value, b, round(change, 2), failed))
    return out


def fmt(v: Any) -> str:
    """A metric's value as printed: shares with three decimals, counts with separators."""
    if v is None:
        return "—"
    if isinstance(v, float) and abs(v) <= 1:
        return f"{v:.3f}"
    return f"{int(v):,}"


def table(report: dict, deltas: list[Delta] | None = None) -> str:
    by = {(d.set, d.metric): d for d in deltas or ()}
    head = ["set", "metric", "ctxproxy", "no proxy"] + (["baseline", "change", ""] if deltas is not None else [])
    rows = [head]
    for set_name, res in report["sets"].items():
        for name, value in res["ctxproxy"].items():
            row = [set_name, name, fmt(value), fmt(res["direct"].get(name))]
            if deltas is not None:
                d = by.get((set_name, name))
                row += [fmt(d.baseline if d else None),
                        "—" if not d or d.change is None else f"{d.change:+.2f}{'%' if METRICS[name].count else ' pt'}",
                        "FAIL" if d and d.failed else ""]
            rows.append(row)
        for split, metrics in ((res.get("details") or {}).get("by_split") or {}).items():  # each half of a set
            for name, value in metrics.items():
                rows.append([f"{set_name}: {split}", name, fmt(value), "—"]
                            + (["—", "—", ""] if deltas is not None else []))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
