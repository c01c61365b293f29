"""Train recall's learned judge (``ctxproxy.store.services.recall.judge``) over the agent turns' halves
and LoCoMo's tuned conversations.

    python bench/train_recall_judge.py               # leave-one-half-out table; writes recall_judge.json
    python bench/train_recall_judge.py --no-write    # the table only
    python bench/train_recall_judge.py --false-cost 2 --locomo-weight 0.5
    python bench/train_recall_judge.py --no-locomo   # agent turns only (as before LoCoMo's rows)
    python bench/train_recall_judge.py --exclude fresh12 --no-write        # design runs without a half
    python bench/train_recall_judge.py --held-out fresh12 --held-out fresh13  # their figures pooled apart

The halves are every labelled half the eval knows: ``proxy/eval/turns.py``'s
``HALVES`` less its sealed ones (never imported here), then the bench's own
``bench/recall_turns_*.py``; a half added to either is trained on and scored
without a change here.

Rows: every candidate that reaches the judge (``rank.match`` set its parts and it
shares a word with the turn) in each recall a turn makes — the filter's, and a
tool-result turn's second one (``recall_output``) — read through the real store
and recaller exactly as ``bench_recall_turns.py`` reads them. A turn's needed
fact is a positive; every other candidate a negative (a turn that needs nothing
gives negatives only). LoCoMo: each question of ``bench_recall.TUNE``'s
conversations (never ``HELD_OUT``'s) recalled as ``POST /ctx/v1/recall`` does
(k 5, the conversation's user, ``as_of`` its last session; its turns written
straight into the store as ``event`` memories), an evidence turn a positive —
so that a one-sentence question's answer is a positive the judge has seen.

Model: logistic regression over ``judge.FEATURES`` (standardised, an L2
penalty ``--l2``, full-batch Adam in numpy — needed here only; the judge
scores in pure Python); within the agent turns and within LoCoMo, positives and
negatives weigh the same in total, LoCoMo ``--locomo-weight`` times the agent
turns; the weights of the match's own measures (``judge.MONOTONE``) are kept at 0 or
above, so that more of the match never counts against a memory.
Cut-offs, one per turn shape (``judge.SHAPES``) — a probability, or the rules'
own verdict for that shape (``None``) —, chosen together (coordinate ascent
from the best shared one) on the training halves: the mean over the agent
halves of turn hit rate less ``--false-cost`` times the false-injection rate,
among the cut-offs that keep an evidence turn of LoCoMo's tuned questions as
often as the rules do (less ``--locomo-slack``; Recall@5 never penalises the
other four memories, so LoCoMo counts its hits only).

Measured strictly leave-one-half-out: for each agent half, a judge trained and
cut off on the other halves (and LoCoMo's tuned conversations) only scores it
through the real recall; beside it today's rules (judge off) and the judge
trained on every half (in-sample), all in one run. The shipped file is the
judge trained on every half. LoCoMo's held-out conversations are never read
here: score them with ``bench/bench_recall.py --split held --set judge=true``.
"""
from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall_turns as brt  # noqa: E402


class Recorder:
    """Stands in for the judge while the rows are read: records each candidate's features, keeps none."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, list[float]]] = []

    def keep(self, pool, rows):
        self.rows += [(s.cand.statement, s.cand.external_id, row) for s, row in zip(pool, rows) if s.match > 0]
        return []


@contextmanager
def judged_by(stand_in):
    """While inside, the recaller takes ``stand_in`` for the shipped judge."""
    from ctxproxy.store.services.recall import judge

    shipped = judge.shipped
    judge.shipped = lambda: stand_in
    try:
        yield stand_in
    finally:
        judge.shipped = shipped


def half_name(module: str) -> str:
    """A half's short name from its module: ``turns`` dev, ``turns_heldout`` old-held-out, ``turns_fresh3``
    fresh3, ``recall_turns_ml`` ml."""
    stem = module.rsplit(".", 1)[-1]
    if stem == "turns":
        return "dev"
    if stem == "turns_heldout":
        return "old-held-out"
    return stem.removeprefix("recall_turns_").removeprefix("turns_")


def halves(exclude=()) -> list[tuple[str, object]]:
    """Every labelled half the eval knows (``turns.HALVES`` less its sealed ones, never imported), then the
    bench's own (``bench/recall_turns_*.py``), by short name; less those named in ``exclude``."""
    import importlib

    from ctxproxy.proxy.eval import turns

    modules = [m for label, m in turns.HALVES if label not in turns.SEALED]
    modules += sorted(p.stem for p in (ROOT / "bench").glob("recall_turns_*.py"))
    unknown = set(exclude) - {half_name(m) for m in modules}
    if unknown:
        sys.exit(f"train_recall_judge: no half named {sorted(unknown)[0]!r}")
    return [(half_name(m), importlib.import_module(m)) for m in modules if half_name(m) not in exclude]


def collect(cfg, exclude=()) -> dict[str, list[tuple[bool, list[tuple[int, list[float]]]]]]:
    """Per half, per turn: (it needs a fact, [(label, features)])."""
    from dataclasses import replace

    rec = Recorder()
    out: dict = {}
    with judged_by(rec):
        for name, half in halves(exclude):
            turns: list = []

            def on_turn(key, expect, got, turns=turns):
                turns.append((expect is not None,
                              [(int(bool(expect) and expect in st), row) for st, _x, row in rec.rows]))
                rec.rows.clear()

            brt.run_half(half, replace(cfg, judge=True), False, name, on_turn=on_turn)
            out[name] = turns
    return out


LOCOMO = "locomo:"  # the name of a LoCoMo conversation's "half"


def collect_locomo(cfg) -> dict[str, list[tuple[bool, list[tuple[int, list[float]]]]]]:
    """Per tuned LoCoMo conversation, per question: (True, [(label, features)])."""
    import tempfile
    from dataclasses import replace

    import bench_recall as br

    from ctxproxy.store import open_store
    from ctxproxy.store.memory_records import MemoryRecord, new_memory_id
    from ctxproxy.store.services.recall.services import RecallServices
    from ctxproxy.store.sqlite_index import Viewer

    if not br.DATASET.exists():
        sys.exit(f"train_recall_judge: {br.DATASET} not found: LoCoMo's tuned rows are part of the shipped judge "
                 "(pass --no-locomo to train on the agent turns only)")
    data = [c for c in json.loads(br.DATASET.read_text()) if c["sample_id"] in br.TUNE]
    leaked = sorted({c["sample_id"] for c in data} & set(br.HELD_OUT))
    if leaked:  # an explicit check: ``python -O`` strips asserts
        sys.exit(f"train_recall_judge: held-out LoCoMo conversations {leaked} are among the tuned ones; refusing")
    rec = Recorder()
    out: dict = {}
    with judged_by(rec):
        with tempfile.TemporaryDirectory(prefix="train-judge-locomo-") as tmp:
            store = open_store(Path(tmp) / "store")
            for conv in data:
                for b in br.memories(conv)[0]:
                    store.memories.put(MemoryRecord(
                        tenant=br.TENANT, statement=b["statement"], kind=b["kind"], origin=b["origin"],
                        status="active", memory_id=new_memory_id(), user=b["user"], observed_at=b["observed_at"],
                        external_id=b["external_id"], evidence_ref=b["evidence_ref"],
                        evidence_sessions=tuple(b["evidence_sessions"])))
            rs = RecallServices(tmp, store)
            try:
                rs.prepare(replace(cfg, judge=True), sync=True)
                recaller = rs.recaller(replace(cfg, judge=True))
                for conv in data:
                    bodies, last = br.memories(conv)
                    viewer = Viewer(br.TENANT, user=conv["sample_id"])
                    turns = []
                    for _cat, question, gold in br.questions(conv, {b["external_id"] for b in bodies}):
                        rec.rows.clear()
                        recaller.recall(viewer, question, k=br.K, as_of=last)
                        turns.append((True, [(int(x in gold), row) for _st, x, row in rec.rows]))
                    out[LOCOMO + conv["sample_id"]] = turns
            finally:
                rs.close()
                store.close()
    return out


def fit(by_half, l2: float, locomo_weight: float = 1.0, steps: int = 3000):
    import numpy as np

    from ctxproxy.store.services.recall.judge import FEATURES, MONOTONE

    mono = [FEATURES.index(f) for f in MONOTONE]

    rows = [(name.startswith(LOCOMO), lab, row) for name, turns in by_half.items() for _, rs in turns
            for lab, row in rs]
    X = np.array([row for _, _, row in rows], dtype=float)
    y = np.array([lab for _, lab, _ in rows], dtype=float)
    src = np.array([loc for loc, _, _ in rows], dtype=bool)
    mu, sd = X.mean(0), X.std(0)
    sd[sd == 0] = 1.0
    Z = (X - mu) / sd
    w_row = np.zeros(len(y))
    for part, weight in ((~src, 1.0), (src, locomo_weight)):  # in each source, positives and negatives alike
        pos = max(1.0, (y[part] == 1).sum())
        neg = max(1.0, (y[part] == 0).sum())
        w_row[part] = weight * np.where(y[part] == 1, 0.5 / pos, 0.5 / neg)
    w_row /= w_row.sum()
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


def turn_rates(turns, judge, probs=None) -> tuple[int, int, int, int]:
    """Turns hit, turns needing a fact, turns with a false injection, turns (``probs``: each row's
    (label, shape, probability, the rules' verdict), read once for many cut-offs)."""
    hits = wanted = false = 0
    if probs is None:
        probs = read(turns, judge)
    cuts = judge.thresholds
    for (needs, _), rows in zip(turns, probs):
        kept = []
        for lab, sh, p, ruled in rows:
            cut = cuts.get(sh, judge.threshold)
            if (ruled if cut is None else p >= cut):
                kept.append(lab)
        wanted += needs
        hits += needs and any(kept)
        false += not all(kept)
    return hits, wanted, false, len(turns)


def read(turns, judge):
    from ctxproxy.store.services.recall.judge import FEATURES, shape

    i = FEATURES.index("rules")
    return [[(lab, shape(row), judge.probability(row), bool(row[i])) for lab, row in rows] for _, rows in turns]


def objective(by_half, judge, false_cost: float, probs, need: float = 0.0) -> float:
    """Mean over the agent halves of hit rate − false_cost × false rate; -inf when LoCoMo's questions
    keep an evidence turn less often than ``need`` (pooled)."""
    value, agent, hits, asked = 0.0, 0, 0, 0
    for name, turns in by_half.items():
        h, wn, f, n = turn_rates(turns, judge, probs[name])
        if name.startswith(LOCOMO):
            hits, asked = hits + h, asked + wn
        else:
            value, agent = value + (h / wn if wn else 0.0) - false_cost * f / n, agent + 1
    if asked and hits < need * asked - 1e-9:
        return float("-inf")
    return value / max(1, agent)


def rules_kept(by_half) -> float:
    """The share of LoCoMo's questions whose evidence turn the rules keep (``rules`` among the features)."""
    from ctxproxy.store.services.recall.judge import FEATURES

    i = FEATURES.index("rules")
    turns = [rows for name, ts in by_half.items() if name.startswith(LOCOMO) for _, rows in ts]
    return sum(any(lab and row[i] for lab, row in rows) for rows in turns) / len(turns) if turns else 0.0


def cut_off(by_half, judge, false_cost: float, locomo_slack: float = 0.0) -> dict[str, float | None]:
    """One cut-off per turn shape, each in turn the best with the others held (two rounds, from one shared),
    among those keeping LoCoMo's evidence turns as often as the rules do (less ``locomo_slack``)."""
    from ctxproxy.store.services.recall.judge import SHAPES

    probs = {name: read(turns, judge) for name, turns in by_half.items()}
    need = rules_kept(by_half) - locomo_slack
    grid = [i / 100 for i in range(1, 100)]
    best_t, best = 0.5, -1e9
    for t in grid:  # the agent turns' best shared cut-off first, then each shape's moves (the question's first)
        judge.thresholds = dict.fromkeys(SHAPES, t)
        v = objective(by_half, judge, false_cost, probs)
        if v > best + 1e-12:
            best, best_t = v, t
    cuts = dict.fromkeys(SHAPES, best_t)
    judge.thresholds = cuts
    best = objective(by_half, judge, false_cost, probs, need)
    for _round in range(2):
        for sh in SHAPES:
            for t in [None] + grid:  # None: the rules' verdict for that shape
                judge.thresholds = {**cuts, sh: t}
                v = objective(by_half, judge, false_cost, probs, need)
                if v > best + 1e-12:
                    best, cuts = v, {**cuts, sh: t}
    judge.thresholds = cuts
    return cuts


def best_shared(cuts) -> float:
    """The cut-off for a shape the file does not name: the request's (or any shape's that has one)."""
    return next((c for c in (cuts["request"], *cuts.values()) if c is not None), 0.5)


def train(by_half, l2: float, false_cost: float, locomo_weight: float = 1.0, locomo_slack: float = 0.0, meta=None):
    from ctxproxy.store.services.recall.judge import Judge

    weights, bias = fit(by_half, l2, locomo_weight)
    judge = Judge(weights, bias, 0.5, meta)
    cuts = cut_off(by_half, judge, false_cost, locomo_slack)
    judge.threshold = best_shared(cuts)
    return judge


def score(half, cfg, judge) -> tuple[int, int, int, int, int]:
    """A half through the real recall: with ``judge`` (None: today's rules)."""
    from dataclasses import replace

    if judge is None:
        return brt.run_half(half, replace(cfg, judge=False), False, "")
    with judged_by(judge):
        return brt.run_half(half, replace(cfg, judge=True), False, "")


def read_rows(path: Path, features) -> dict:
    """Rows a ``--rows`` run kept, refused unless they were read for these ``features``."""
    try:
        body = json.loads(path.read_text())
        kept, by_half = body["features"], body["rows"]
    except (ValueError, KeyError, TypeError) as e:
        sys.exit(f"train_recall_judge: {path} is not a rows file of this trainer ({type(e).__name__}); "
                 "delete it to read the rows afresh")
    if list(kept) != list(features):
        changed = sorted(set(kept) ^ set(features)) or ["their order"]
        sys.exit(f"train_recall_judge: {path} holds rows of other features than judge.FEATURES (differing: "
                 f"{', '.join(changed)}); delete it to read the rows afresh")
    return by_half


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--l2", type=float, default=1e-3)
    p.add_argument("--false-cost", type=float, default=1.0)
    p.add_argument("--locomo-weight", type=float, default=1.0,
                   help="LoCoMo's tuned rows' total weight against the agent turns' (default 1)")
    p.add_argument("--locomo-slack", type=float, default=0.0,
                   help="how much less often than the rules LoCoMo's evidence turns may be kept (default 0)")
    p.add_argument("--no-locomo", action="store_true", help="the agent turns' rows only")
    p.add_argument("--rows", metavar="FILE", help="keep the rows read in FILE (JSON, with the feature names) and read them from it next time "
                   "(for trying settings; the table's rules column is read fresh)")
    p.add_argument("--exclude", action="append", default=[], metavar="HALF",
                   help="leave this half out of everything: rows, training, table (repeatable; design runs "
                        "without the halves kept for a held-out reading)")
    p.add_argument("--held-out", action="append", default=[], metavar="HALF",
                   help="pool this half's left-out figures apart from the others' (repeatable: the halves not "
                        "used to choose features or settings)")
    p.add_argument("--beside", metavar="FILE",
                   help="also score the judge of this weights file (e.g. the one shipped before) on every half, "
                        "last column")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--weights", action="store_true",
                   help="print the weights of the judge trained in this run on every half (the one written unless --no-write)")
    args = p.parse_args(argv)
    from ctxproxy.store.services.recall import judge as judge_mod
    from ctxproxy.store.services.recall.rank import RankConfig

    cfg = RankConfig()
    if args.rows and Path(args.rows).exists():  # rows read by an earlier run (over the query side of then)
        by_half = read_rows(Path(args.rows), judge_mod.FEATURES)
    else:
        by_half = collect(cfg, args.exclude)
        if not args.no_locomo:
            by_half.update(collect_locomo(cfg))
        if args.rows:
            Path(args.rows).write_text(json.dumps({"features": list(judge_mod.FEATURES), "rows": by_half}))
    if not args.no_locomo and not any(k.startswith(LOCOMO) for k in by_half):
        sys.exit(f"train_recall_judge: no LoCoMo rows{' in ' + args.rows if args.rows else ''}: the shipped judge is "
                 "trained with them (pass --no-locomo to train on the agent turns only)")
    if args.no_locomo:
        by_half = {k: v for k, v in by_half.items() if not k.startswith(LOCOMO)}
    by_half = {k: v for k, v in by_half.items() if k not in args.exclude}
    agent = dict(halves(args.exclude))
    unknown = set(args.held_out) - set(agent)
    if unknown:
        sys.exit(f"train_recall_judge: --held-out {sorted(unknown)[0]!r} is not a half of this run")
    full = train(by_half, args.l2, args.false_cost, args.locomo_weight, args.locomo_slack,
                 {"locomo_slack": args.locomo_slack, "trained_on": sorted(by_half), "l2": args.l2,
                  "false_cost": args.false_cost,
                  "locomo_weight": 0.0 if args.no_locomo else args.locomo_weight,
                  "rows": sum(len(r) for t in by_half.values() for _, r in t)})

    def cuts(j) -> str:
        return " ".join("rules" if j.thresholds[s] is None else f"{j.thresholds[s]:.2f}" for s in judge_mod.SHAPES)

    print(f"{'half':14} {'turns':>5}  {'rules hit/false':>16}  {'left-out hit/false':>18}  {'in-sample hit/false':>19}"
          f"  cut-offs ({' '.join(judge_mod.SHAPES)}){'  beside hit/false' if args.beside else ''}", flush=True)
    beside = judge_mod.load(Path(args.beside)) if args.beside else None
    columns = ("rules", "loho", "in") + (("beside",) if beside else ())
    totals = {k: [0, 0, 0, 0] for k in columns}
    apart = {k: [0, 0, 0, 0] for k in columns}  # the --held-out halves'
    for name, half in agent.items():
        out = train({k: v for k, v in by_half.items() if k != name}, args.l2, args.false_cost, args.locomo_weight,
                    args.locomo_slack)
        cells = []
        for key, j in (("rules", None), ("loho", out), ("in", full), ("beside", beside))[:len(columns)]:
            h, wn, ft, _fi, n = score(half, cfg, j)
            pooled = apart if name in args.held_out else totals
            pooled[key] = [a + b for a, b in zip(pooled[key], (h, wn, ft, n))]
            cells.append(f"{h / wn:.3f} / {ft / n:.3f} ({h}/{ft})")
        print(f"{name:14} {n:5}  {cells[0]:>16}  {cells[1]:>18}  {cells[2]:>19}  {cuts(out)}"
              f"{'  ' + cells[3] if beside else ''}", flush=True)
    for label, pooled in (("tuned (pooled)" if args.held_out else "all (pooled)", totals),
                          ("held-out", apart)):
        if pooled["rules"][3]:
            cells = [f"{t[0] / t[1]:.3f} / {t[2] / t[3]:.3f} ({t[0]}/{t[2]})" for t in pooled.values()]
            print(f"{label:14} {pooled['rules'][3]:5}  {cells[0]:>16}  {cells[1]:>18}  {cells[2]:>19}  "
                  f"{cuts(full)}{'  ' + cells[3] if beside else ''}")
    for name, turns in by_half.items():
        if name.startswith(LOCOMO):  # a rough reading (any evidence turn kept, ignoring top 5): bench_recall's is real
            h, wn, _f, _n = turn_rates(turns, full)
            print(f"{name:14} {wn:5}  in-sample any evidence kept {h / wn:.3f} (rules "
                  f"{rules_kept({name: turns}):.3f})")
    if args.weights:
        for f, w in zip(judge_mod.FEATURES, full.weights):
            print(f"  {f:12} {w:+.3f}")
        print(f"  {'bias':12} {full.bias:+.3f}  cut-offs {cuts(full)}")
    if not args.no_write:
        path = Path(judge_mod.__file__).with_name(judge_mod.WEIGHTS_FILE)
        path.write_text(full.dumps())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
