"""Would the recall extra's static embeddings help the memory gate's learned signal? A probe.

    python bench/gate_embeddings_probe.py --corpora DIR [--oof FILE]

Embeds every dev text of ``bench/gate_corpora.py`` whole (wordllama ``l2_supercat``, 256
dimensions, the vectors ``store/services/recall/embeddings.py`` computes) and fits a logistic
regression on the vectors alone, out of fold with ``train_gate.py``'s folds (a hand-written or
composed bank in one fold in every language; public corpora by family), weighted as
``train_gate.py`` weighs its rows. The threshold is set as ``train_gate.py`` sets it: at most
0.3% of any language's clean dev text falsely blocked out of fold. Prints, per bank and language,
the attacks the vectors catch; with ``--oof FILE`` (``train_gate.py --save-oof``'s output, same
dev texts in the same order) also the n-gram model's, and the two stacked (their margins summed
with weights fitted out of fold). Needs the embeddings extra; nothing is shipped from here.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_corpora  # noqa: E402
from train_gate import HAND, TRAIN_CHARS, bank_of, family_cutoff  # noqa: E402

from ctxproxy.store.services.memory.threats import normalise  # noqa: E402
from ctxproxy.store.services.recall.embeddings import shared_embedder  # noqa: E402


def fit_dense(X: np.ndarray, y: np.ndarray, sw: np.ndarray, l2: float, steps: int = 300) -> tuple[np.ndarray, float]:
    w, b = np.zeros(X.shape[1]), 0.0
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    for t in range(1, steps + 1):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w + b, -50, 50)))
        g = (p - y) * sw
        gw, gb = X.T @ g + l2 * w, g.sum()
        m, v = 0.9 * m + 0.1 * gw, 0.999 * v + 0.001 * gw * gw
        w -= 0.05 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
        b -= 0.05 * (mb / (1 - 0.9 ** t)) / (np.sqrt(vb / (1 - 0.999 ** t)) + 1e-8)
    return w, b


def cutoff(dev, score: np.ndarray, max_false: float) -> float:
    clean = defaultdict(list)
    for t, s_ in zip(dev, score):
        if t.label == "clean":
            clean[t.lang].append((s_, t.group()))
    return max(max(family_cutoff(v, max_false) for v in clean.values() if len(v) >= 20), 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=os.environ.get("CTXPROXY_GATE_CORPORA", ""))
    ap.add_argument("--oof", default="", help="train_gate.py --save-oof output for the same dev texts")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--max-false", type=float, default=0.003)
    args = ap.parse_args()
    texts, _ = gate_corpora.load(args.corpora, with_sealed=False)
    dev = [t for t in texts if t.split == "dev" and t.label in ("attack", "clean")]
    emb = shared_embedder()
    docs = [normalise(t.text[:TRAIN_CHARS]) for t in dev]
    X = np.concatenate([emb.embed(docs[i:i + 2048]) for i in range(0, len(docs), 2048)]).astype(np.float64)
    X = (X - X.mean(axis=0)) / (X.std(axis=0) + 1e-9)  # standardised: the optimiser's steps suit every dimension
    y = np.array([1.0 if t.label == "attack" else 0.0 for t in dev])
    group_of = [(t.label, t.lang, t.corpus) for t in dev]
    size = Counter(group_of)
    sw = np.array([(3.0 if t.corpus.startswith(HAND) else 1.0) / np.sqrt(size[g]) for t, g in zip(dev, group_of)])
    for label in (0.0, 1.0):
        sw[y == label] /= 2 * sw[y == label].sum()
    banks = sorted({bank_of(t) for t in dev if t.corpus.startswith(HAND)})
    fold = np.array([banks.index(bank_of(t)) % args.folds if t.corpus.startswith(HAND)
                     else int(hashlib.sha256(t.group().encode()).hexdigest(), 16) % args.folds for t in dev])
    oof = np.zeros(len(dev))
    for k in range(args.folds):
        tr, te = fold != k, fold == k
        w, b = fit_dense(X[tr], y[tr], sw[tr], args.l2)
        oof[te] = X[te] @ w + b
    scores = {"vectors": oof}
    if args.oof:
        ngram = np.array([json.loads(line)["score"] for line in open(args.oof, encoding="utf-8")])
        assert len(ngram) == len(dev), "the --oof file is for other dev texts"
        scores["n-grams"] = ngram
        # Stacked: the two margins' weights fitted out of fold on the same folds.
        Z = np.stack([ngram, oof], axis=1)
        stacked = np.zeros(len(dev))
        for k in range(args.folds):
            tr, te = fold != k, fold == k
            w, b = fit_dense(Z[tr], y[tr], sw[tr], 0.0, steps=500)
            stacked[te] = Z[te] @ w + b
        scores["stacked"] = stacked
    cuts = {name: cutoff(dev, s_, args.max_false) for name, s_ in scores.items()}
    print("folds by bank:", {b: banks.index(b) % args.folds for b in banks})
    print("out-of-fold attacks caught (clean falsely blocked) at each score's own cut-off "
          "(<= {:.1f}% of any language's clean dev text):".format(100 * args.max_false))
    print("| bank | lang | " + " | ".join(scores) + " |")
    keys = sorted({(bank_of(t), t.lang) for t in dev if t.corpus.startswith(HAND)})
    keys += [("all public corpora", "en"), ("all dev texts", "all")]
    for bank, lang in keys:
        if bank == "all dev texts":
            idx = np.arange(len(dev))
        elif bank == "all public corpora":
            idx = np.array([i for i, t in enumerate(dev) if not t.corpus.startswith(HAND)])
        else:
            idx = np.array([i for i, t in enumerate(dev) if t.corpus.startswith(HAND) and bank_of(t) == bank
                            and t.lang == lang])
        a, c = idx[y[idx] == 1], idx[y[idx] == 0]
        cells = [f"{100 * np.mean(s_[a] > cuts[n]) if len(a) else float('nan'):.1f}% "
                 f"({100 * np.mean(s_[c] > cuts[n]) if len(c) else float('nan'):.2f}%)" for n, s_ in scores.items()]
        print(f"| {bank[:40]} | {lang} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
