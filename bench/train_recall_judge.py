"""Train recall's learned judge (``ctxproxy.store.services.recall.judge``) over the agent turns' halves.

    python bench/train_recall_judge.py               # leave-one-half-out table; writes recall_judge.json
    python bench/train_recall_judge.py --no-write    # the table only
    python bench/train_recall_judge.py --false-cost 2

Rows: every candidate that reaches the judge (``rank.match`` set its parts and it
shares a word with the turn) in each recall a turn makes — the filter's, and a
tool-result turn's second one (``recall_output``) — read through the real store
and recaller exactly as ``bench_recall_turns.py`` reads them. A turn's needed
fact is a positive; every other candidate a negative (a turn that needs nothing
gives negatives only).

Model: logistic regression over ``judge.FEATURES`` (standardised, an L2
penalty ``--l2``, full-batch Adam in numpy — needed here only; the judge
scores in pure Python); positives and negatives weigh the same in total; the
weights of the match's own measures (``MONOTONE``) are kept at 0 or above, so
that more of the match never counts against a memory.
Cut-off: on the training turns, the probability that maximises turn hit rate
less ``--false-cost`` times the false-injection rate (both turn-level, each
half weighing the same).

Measured strictly leave-one-half-out: for each half, a judge trained and
cut off on the other halves only scores it through the real recall; beside it
today's rules (judge off) and the judge trained on every half (in-sample), all
in one run. The shipped file is the judge trained on every half.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall_turns as brt  # noqa: E402


class Recorder:
    """Stands in for the judge while the rows are read: records each candidate's features, keeps none."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, list[float]]] = []

    def keep(self, pool, rows):
        self.rows += [(s.cand.statement, row) for s, row in zip(pool, rows) if s.match > 0]
        return []


def collect(cfg) -> dict[str, list[tuple[bool, list[tuple[int, list[float]]]]]]:
    """Per half, per turn: (it needs a fact, [(label, features)])."""
    from dataclasses import replace

    from ctxproxy.store.services.recall import judge

    rec = Recorder()
    shipped = judge.shipped
    judge.shipped = lambda: rec  # the recaller takes the recorder for the shipped judge
    out: dict = {}
    try:
        for name, half in brt.halves():
            turns: list = []

            def on_turn(key, expect, got, turns=turns):
                turns.append((expect is not None, [(int(bool(expect) and expect in st), row) for st, row in rec.rows]))
                rec.rows.clear()

            brt.run_half(half, replace(cfg, judge=True), False, name, on_turn=on_turn)
            out[name] = turns
    finally:
        judge.shipped = shipped
    return out


# more of the match never counts against a memory: these weights are kept at 0 or above
MONOTONE = ("chance", "match", "anchors", "floor", "rules", "cover_query", "cover_own", "gap", "phrases",
            "chance_share", "match_share", "cover_own_share")


def fit(turns, l2: float, steps: int = 3000):
    import numpy as np

    from ctxproxy.store.services.recall.judge import FEATURES

    mono = [FEATURES.index(f) for f in MONOTONE]

    X = np.array([row for _, rows in turns for _, row in rows], dtype=float)
    y = np.array([lab for _, rows in turns for lab, _ in rows], dtype=float)
    mu, sd = X.mean(0), X.std(0)
    sd[sd == 0] = 1.0
    Z = (X - mu) / sd
    pos = max(1.0, y.sum())
    neg = max(1.0, len(y) - y.sum())
    w_row = np.where(y == 1, 0.5 / pos, 0.5 / neg)
    w = np.zeros(Z.shape[1])
    b = 0.0
    m = v = np.zeros(Z.shape[1] + 1)
    lr, b1, b2 = 0.05, 0.9, 0.999
    for t in range(1, steps + 1):  # Adam
        p = 1 / (1 + np.exp(-(Z @ w + b)))
        g = w_row * (p - y)
        grad = np.concatenate([Z.T @ g + l2 * w, [g.sum()]])
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        step = lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
        w, b = w - step[:-1], b - step[-1]
        w[mono] = np.maximum(w[mono], 0.0)  # projected: standardising keeps a weight's sign
    weights = w / sd
    bias = b - float((w * mu / sd).sum())
    return [float(x) for x in weights], float(bias)


def turn_rates(turns, judge) -> tuple[int, int, int, int]:
    hits = wanted = false = 0
    for needs, rows in turns:
        probs = [(lab, judge.probability(row)) for lab, row in rows]
        wanted += needs
        hits += needs and any(lab and p >= judge.threshold for lab, p in probs)
        false += any(not lab and p >= judge.threshold for lab, p in probs)
    return hits, wanted, false, len(turns)


def cut_off(by_half, judge, false_cost: float) -> float:
    """The cut-off maximising mean over halves of hit rate − false_cost × false rate."""
    best, best_t = -1e9, 0.5
    for i in range(5, 100):
        judge.threshold = t = i / 100
        value = 0.0
        for turns in by_half.values():
            h, wn, f, n = turn_rates(turns, judge)
            value += (h / wn if wn else 0.0) - false_cost * f / n
        if value > best + 1e-12:
            best, best_t = value, t
    return best_t


def train(by_half, l2: float, false_cost: float, meta=None):
    from ctxproxy.store.services.recall.judge import Judge

    weights, bias = fit([t for turns in by_half.values() for t in turns], l2)
    judge = Judge(weights, bias, 0.5, meta)
    judge.threshold = cut_off(by_half, judge, false_cost)
    return judge


def score(half, cfg, judge) -> tuple[int, int, int, int, int]:
    """A half through the real recall: with ``judge`` (None: today's rules)."""
    from dataclasses import replace

    from ctxproxy.store.services.recall import judge as judge_mod

    if judge is None:
        return brt.run_half(half, replace(cfg, judge=False), False, "")
    shipped = judge_mod.shipped
    judge_mod.shipped = lambda: judge
    try:
        return brt.run_half(half, replace(cfg, judge=True), False, "")
    finally:
        judge_mod.shipped = shipped


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--l2", type=float, default=1e-3)
    p.add_argument("--false-cost", type=float, default=1.0)
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--weights", action="store_true", help="print the shipped judge's weights")
    args = p.parse_args(argv)
    from ctxproxy.store.services.recall import judge as judge_mod
    from ctxproxy.store.services.recall.rank import RankConfig

    cfg = RankConfig()
    by_half = collect(cfg)
    halves = dict(brt.halves())
    full = train(by_half, args.l2, args.false_cost,
                 {"trained_on": sorted(by_half), "l2": args.l2, "false_cost": args.false_cost,
                  "rows": sum(len(r) for t in by_half.values() for _, r in t)})
    print(f"{'half':14} {'turns':>5}  {'rules hit/false':>16}  {'left-out hit/false':>18}  {'in-sample hit/false':>19}"
          f"  cut-off")
    totals = {k: [0, 0, 0, 0] for k in ("rules", "loho", "in")}
    for name, half in halves.items():
        out = train({k: v for k, v in by_half.items() if k != name}, args.l2, args.false_cost)
        cells = []
        for key, j in (("rules", None), ("loho", out), ("in", full)):
            h, wn, ft, _fi, n = score(half, cfg, j)
            totals[key] = [a + b for a, b in zip(totals[key], (h, wn, ft, n))]
            cells.append(f"{h / wn:.3f} / {ft / n:.3f}")
        print(f"{name:14} {n:5}  {cells[0]:>16}  {cells[1]:>18}  {cells[2]:>19}  {out.threshold:.2f}")
    cells = [f"{t[0] / t[1]:.3f} / {t[2] / t[3]:.3f}" for t in totals.values()]
    print(f"{'all (pooled)':14} {totals['rules'][3]:5}  {cells[0]:>16}  {cells[1]:>18}  {cells[2]:>19}  "
          f"{full.threshold:.2f}")
    if args.weights:
        for f, w in zip(judge_mod.FEATURES, full.weights):
            print(f"  {f:12} {w:+.3f}")
        print(f"  {'bias':12} {full.bias:+.3f}  cut-off {full.threshold:.2f}")
    if not args.no_write:
        path = Path(judge_mod.__file__).with_name(judge_mod.WEIGHTS_FILE)
        path.write_text(full.dumps())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
