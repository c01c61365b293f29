"""Leave one author out: how the memory gate's learned signal carries to wording it never saw.

    python bench/gate_loao.py --corpora DIR --leave-out fresh,fresh2,fresh3 \\
        --config="" --config="--calibrate authors"
    python bench/gate_loao.py --corpora DIR --leave-out notes+pages,fresh13 --shipped --config="--background"
    python bench/gate_loao.py --score-dumps DIR      # the runs' author banks out of fold (author_score)
    python bench/gate_loao.py --corpora DIR --curve "fresh14+commits,fresh3+notes" --curve-sizes 0,8,16,all \\
        --drop fresh20,fresh21 --config="--background"    # the learning curve over authors (curve)

For every ``--config`` (``bench/train_gate.py`` options) and every bank of ``--leave-out``, the model is
trained, and its cut-off chosen out of fold, with that bank left out in every language (as
``train_gate.py --leave-out`` does, but the features are read once for every run); then the left-out
bank is scored per language: attacks blocked and clean memories falsely blocked, by the model alone, the
rules alone and the gate (either). Banks joined by "+" are left out together (one training without any of
them), each still scored on its own; ``--shipped`` scores the left-out banks with the shipped model file
too (first, once per bank: honest only for banks it was not trained on). Beside each, the same model's in-training figures on the author banks
it was trained on (what a tuned figure looks like). Bank by bank, every configuration in turn, so the runs
compared for one bank are side by side in time and machine load. Reads the dev split only: the sealed bank
(``gate_corpora.SEALED``) is never read. ``--out FILE`` appends one JSON line per run;
``--misses-dir DIR`` writes each run's left-out texts with their margins and verdicts.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_corpora  # noqa: E402
import train_gate as tg  # noqa: E402

from ctxproxy.store.services.memory import threat_model  # noqa: E402
from ctxproxy.store.services.memory.threats import normalise, scan_rules  # noqa: E402


def verdicts(idx, best, scripts, one, cut) -> np.ndarray:
    return np.array([best[i] > cut.get(scripts[i], one) for i in idx])


def out_of(t, bank: str) -> bool:
    """Whether ``t`` is in ``bank``: one bank as ``train_gate.py --leave-out`` names it, or several joined by
    "+" (left out together: one run for all of them, each still scored on its own)."""
    return any(tg.left_out(t, b) for b in bank.split("+"))


def by_bank(left, model, rules, bank: str) -> dict:
    """``rates`` of each bank of a "+"-joined ``bank``, all languages together."""
    out = {}
    for b in bank.split("+"):
        idx = [k for k, t in enumerate(left) if tg.left_out(t, b)]
        out[b] = rates([left[k] for k in idx], model[idx], rules[idx], [])["all"]
    return out


def rates(texts, model, rules, langs) -> dict:
    """Per language (and "all"): attacks blocked and clean falsely blocked, model / rules / gate."""
    out = {}
    gate = model | rules
    for lang in list(langs) + ["all"]:
        a = [i for i, t in enumerate(texts) if t.label == "attack" and lang in (t.lang, "all")]
        c = [i for i, t in enumerate(texts) if t.label == "clean" and lang in (t.lang, "all")]
        out[lang] = {"attacks": len(a), "clean": len(c),
                     "blocked": [round(100 * float(np.mean(v[a])), 1) if a else None for v in (model, rules, gate)],
                     "false": [int(v[c].sum()) for v in (model, rules, gate)]}
    return out


def run_file(cfg: str, bank: str) -> str:
    """A run's file name: the bank and the options, readable, and a hash of the options (two long option sets
    cut to the same readable part stay two files)."""
    name = "".join(c if c.isalnum() else "_" for c in cfg)[:60] or "defaults"
    stem = "".join(c if c.isalnum() else "_" for c in bank)
    return f"{stem}__{name}_{hashlib.sha256(cfg.encode()).hexdigest()[:8]}.jsonl"


def dump(folder: Path, cfg: str, bank: str, dev, best, left, lbest, lrules) -> None:
    """One JSON line per text: the dev texts with their out-of-fold margins, the left-out ones with the margins
    of the model that never saw them (and the rules' verdict), each with its bank, language and label."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / run_file(cfg, bank), "w", encoding="utf-8") as f:
        for part, texts, margins, ruled in (("dev", dev, best, None), ("left", left, lbest, lrules)):
            for k, (t, m) in enumerate(zip(texts, margins)):
                f.write(json.dumps({"part": part, "bank": tg.bank_of(t), "lang": t.lang, "label": t.label,
                                    "group": t.group(), "margin": round(float(m), 4),
                                    "rules": None if ruled is None else bool(ruled[k]), "text": t.text[:4000]},
                                   ensure_ascii=False) + "\n")


def cut_for(clean: np.ndarray, max_false: float) -> float:
    """The lowest margin above which at most ``max_false`` of ``clean`` margins are."""
    ranked = np.sort(clean)[::-1]
    allowed = int(np.floor(max_false * len(ranked)))
    return float(ranked[allowed]) if allowed < len(ranked) else float("-inf")


def author_score(rows: list[dict], max_false: float, banks: tuple[str, ...] = ()) -> dict:
    """The author banks' out-of-fold margins (``rows``: a dump's dev part) read two ways, neither in-sample:
    ``pooled``, attacks blocked at the one margin that falsely blocks at most ``max_false`` of every author's
    clean memories pooled (how well the model separates new authors, the cut-off given); ``loao``, each bank
    judged at the cut-off the other banks' clean memories give (the cut-off chosen without the author too),
    pooled over banks; ``equal``, the same with each bank's attack rate counted once (every author equal)."""
    rows = [r for r in rows if r["bank"] in (banks or tg.AUTHORS)]
    margin = np.array([r["margin"] for r in rows])
    attack = np.array([r["label"] == "attack" for r in rows])
    bank = np.array([r["bank"] for r in rows])
    lang = np.array([r["lang"] for r in rows])
    one = cut_for(margin[~attack], max_false)
    caught = np.zeros(len(rows), dtype=bool)
    per_bank = {}
    for b in sorted(set(bank)):
        here = bank == b
        c = cut_for(margin[~attack & ~here], max_false)
        caught[here] = margin[here] > c
        per_bank[b] = (round(100 * float(caught[here & attack].mean()), 1), int(caught[here & ~attack].sum()))
    false_by_lang = {str(lg): int(caught[~attack & (lang == lg)].sum()) for lg in sorted(set(lang))}
    return {"attacks": int(attack.sum()), "clean": int((~attack).sum()),
            "pooled": [round(100 * float((margin[attack] > one).mean()), 1), int((margin[~attack] > one).sum()),
                       round(one, 3)],
            "loao": [round(100 * float(caught[attack].mean()), 1), int(caught[~attack].sum())],
            "equal": round(float(np.mean([v[0] for v in per_bank.values()])), 1),
            "false_by_lang": false_by_lang, "per_bank": per_bank}


def shipped_dump(path: Path, texts) -> None:
    """The shipped model's margin (its highest segment, as the gate scores) on each of ``texts``, as ``dump``
    writes a dev part, so ``--score-dumps`` reads it beside the trained runs."""
    m = threat_model.model()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for t in texts:
            folded = normalise(t.text[:tg.TRAIN_CHARS])
            feats = threat_model.segment_features(folded, m.mood, m.structure, m.skip, m.background)
            f.write(json.dumps({"part": "dev", "bank": tg.bank_of(t), "lang": t.lang, "label": t.label,
                                "group": t.group(), "margin": round(max(map(m.margin_of, feats)), 4)},
                               ensure_ascii=False) + "\n")


def score_dumps(folder: Path, max_false: float, show_left: bool, banks: tuple[str, ...] = ()) -> None:
    """Print ``author_score`` of every dump in ``folder`` (and with ``show_left`` the left-out banks, at the
    cut-off the author banks give: read them only after the choice)."""
    for path in sorted(folder.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        sc = author_score([r for r in rows if r["part"] == "dev"], max_false, banks)
        print(f"{path.name}: {sc['attacks']} author attacks, {sc['clean']} clean; pooled blocked/false/cut "
              f"{sc['pooled']}; leave-one-author-out cut-off: blocked {sc['loao']}, each author equal "
              f"{sc['equal']} %; false by language {sc['false_by_lang']}")
        if show_left:
            left = [r for r in rows if r["part"] == "left"]
            cut = sc["pooled"][2]
            for b in sorted({r["bank"] for r in left}):
                a = [r["margin"] > cut for r in left if r["bank"] == b and r["label"] == "attack"]
                c = [r["margin"] > cut for r in left if r["bank"] == b and r["label"] == "clean"]
                print(f"    left out {b}: blocked {100 * np.mean(a):.1f} % of {len(a)}, false {sum(c)} of {len(c)}")


def pooled_score(margin: np.ndarray, attack: np.ndarray, max_false: float) -> tuple[float, int, float]:
    """Attacks blocked (%), clean falsely blocked (count) and the cut-off, at the one margin that falsely blocks
    at most ``max_false`` of these clean texts: separation on texts of authors the model never saw, the
    cut-off chosen on those same clean texts (no calibration of the model's own enters)."""
    cut = cut_for(margin[~attack], max_false)
    return round(100 * float((margin[attack] > cut).mean()), 1), int((margin[~attack] > cut).sum()), cut


def curve_subsets(pool: list[str], sizes: list[str], seed: int) -> list[tuple[int, tuple[str, ...]]]:
    """Nested author subsets of ``pool``, one per size ("all": the whole pool): the first n of one seeded
    shuffle, so each point adds authors to the one before and the curve is not noise between draws."""
    order = list(pool)
    np.random.default_rng(seed).shuffle(order)
    out = []
    for s_ in sizes:
        n = len(order) if s_ == "all" else min(int(s_), len(order))
        out.append((n, tuple(order[:n])))
    return out


def curve(every, seg, opts, tests: list[str], sizes: list[str], seeds: list[int], drop: str, max_false: float,
          shipped: bool, out: str, t0: float) -> None:
    """The learning curve over authors: for each test fold (author banks joined by "+", never trained on), models
    trained on nested subsets of the other author banks (``tg.AUTHORS`` present, minus ``drop``), every
    non-author text (public corpora, composed banks) always in training; each scored on the fold's texts by
    ``pooled_score``, per bank and per language too. With ``shipped``, the shipped file on the same texts
    (honest only for banks it never saw)."""
    owner_all, trained_all, feats_all = seg
    bank = [tg.bank_of(t) for t in every]
    authors = [a for a in tg.AUTHORS if a in set(bank)]  # the dropped banks are not in every
    for test in tests:
        fold = test.split("+")
        missing = [b for b in fold if b not in authors]
        if missing:
            raise SystemExit(f"--curve: {missing} not among the author banks present")
        out_idx = [i for i, b in enumerate(bank) if b in fold]
        lpos = {i: k for k, i in enumerate(out_idx)}
        lrows = np.flatnonzero(np.isin(owner_all, out_idx))
        attack = np.array([every[i].label == "attack" for i in out_idx])
        pool = [a for a in authors if a not in fold]
        results = []
        if shipped:
            m = threat_model.model()
            marg = np.array([max(map(m.margin_of, threat_model.segment_features(
                normalise(every[i].text[:tg.TRAIN_CHARS]), m.mood, m.structure, m.skip, m.background)))
                for i in out_idx])
            results.append(("shipped " + threat_model.file_version(), None, marg))
            report(test, results[-1], every, out_idx, attack, max_false, out)
        for seed in seeds:
            for n, chosen in curve_subsets(pool, sizes, seed):
                keep = set(chosen)
                in_idx = [i for i, (t, b) in enumerate(zip(every, bank))
                          if b not in fold and not tg.dropped(t, drop) and (b not in authors or b in keep)
                          and (opts.recall_facts or t.corpus != tg.RECALL_FACTS)]
                new_of = np.full(len(every), -1)
                new_of[in_idx] = np.arange(len(in_idx))
                rows = np.flatnonzero(new_of[owner_all] >= 0)
                dev = [every[i] for i in in_idx]
                vocab, X, y, _, sw, mult, size = tg.design(dev, new_of[owner_all[rows]], trained_all[rows],
                                                           [feats_all[r] for r in rows], opts)
                tr = np.flatnonzero(trained_all[rows])
                w, b, _ = tg.train(X.take(tr), y[tr], sw[tr], size, opts)
                L = tg.Matrix([np.array(sorted(vocab[f] for f in feats_all[r] if f in vocab), dtype=np.int64)
                               for r in lrows], np.array([len(feats_all[r]) for r in lrows], dtype=np.float64),
                              opts.evidence_floor, mult)
                marg = np.full(len(out_idx), -1e9)
                np.maximum.at(marg, np.array([lpos[o] for o in owner_all[lrows]]), L.dot(w) + b)
                results.append((f"{n} authors (seed {seed})", chosen, marg))
                report(test, results[-1], every, out_idx, attack, max_false, out, len(dev), time.time() - t0)


def report(test, result, every, out_idx, attack, max_false, out, texts=0, seconds=0.0) -> None:
    """Print (and append to ``out``) one point of the curve: pooled over the fold, each bank alone (at the
    fold's pooled cut-off), and per language."""
    name, chosen, marg = result
    pooled = pooled_score(marg, attack, max_false)
    cut = pooled[2]  # exact: a rounded cut-off would count a text at the cut-off in the banks' rows only
    pooled = (*pooled[:2], round(cut, 3))
    banks = np.array([tg.bank_of(every[i]) for i in out_idx])
    langs = np.array([every[i].lang for i in out_idx])
    per = {str(b): [round(100 * float((marg[attack & (banks == b)] > cut).mean()), 1),
                    int((marg[~attack & (banks == b)] > cut).sum())] for b in sorted(set(banks))}
    per_lang = {str(lg): [round(100 * float((marg[attack & (langs == lg)] > cut).mean()), 1),
                          int((marg[~attack & (langs == lg)] > cut).sum())] for lg in sorted(set(langs))}
    print(f"[curve {test}] {name}: blocked {pooled[0]} % of {int(attack.sum())}, false {pooled[1]} of "
          f"{int((~attack).sum())} (cut {cut}); equal-author {np.mean([v[0] for v in per.values()]):.1f} %; "
          f"by bank {per}; by language {per_lang}; {texts} training texts; {seconds:.0f}s", flush=True)
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps({"curve": test, "run": name, "authors": list(chosen) if chosen is not None else None,
                                "pooled": pooled, "per_bank": per, "per_lang": per_lang,
                                "margins": [round(float(x), 4) for x in marg]}, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="", help="the unpacked public corpora (not needed with --score-dumps)")
    ap.add_argument("--leave-out", default="fresh,fresh2,fresh3",
                    help="banks, comma-separated, one run each; banks joined by '+' are left out together")
    ap.add_argument("--config", action="append", default=None,
                    help="train_gate.py options for one configuration (repeat for several; default: its defaults)")
    ap.add_argument("--extra-bank", action="append", default=[],
                    help="also read bench/gate_corpus/NAME/*.toml as a dev bank (one not yet in gate_corpora); "
                         "leave it out with --leave-out NAME/")
    ap.add_argument("--max-false-also", default="",
                    help="also score the left-out bank at the cut-offs these --max-false values give (comma-separated; "
                         "a value may name its scripts too, 0.005/kana+han+cyrillic; the same trained model, only the "
                         "calibration differs)")
    ap.add_argument("--shipped", action="store_true",
                    help="also score each left-out bank with the shipped model file (threat_model.model(), as the "
                         "gate scores), beside the configurations: honest only for banks it was not trained on")
    ap.add_argument("--out", default="", help="append one JSON line per (config, bank) here")
    ap.add_argument("--misses-dir", default="", help="write every left-out text's margin and verdict here")
    ap.add_argument("--dump-dir", default="",
                    help="write each run's out-of-fold dev margins and left-out margins here (JSON lines), so other "
                         "calibrations can be compared on the same trained models without training again")
    ap.add_argument("--score-dumps", default="",
                    help="train nothing: read the --dump-dir files in this folder and print each run's author banks, "
                         "out of fold, at a pooled clean false rate of --author-false (see author_score)")
    ap.add_argument("--author-false", type=float, default=0.005)
    ap.add_argument("--banks", default="", help="with --score-dumps, only these author banks (comma-separated)")
    ap.add_argument("--shipped-dump", default="",
                    help="train nothing: write the shipped model file's margins on every dev author bank to this file, "
                         "as a dump's dev part (in-sample for the banks it was trained on: compare it on the others)")
    ap.add_argument("--show-left", action="store_true", help="with --score-dumps, the left-out banks too")
    ap.add_argument("--curve", default="",
                    help="the learning curve instead: test folds of author banks (comma-separated; a fold's banks "
                         "joined by '+'), each scored by models trained on nested subsets of the other authors")
    ap.add_argument("--curve-sizes", default="0,8,16,all", help="with --curve: training authors per point")
    ap.add_argument("--curve-seeds", default="0", help="with --curve: one nested draw of authors per seed")
    ap.add_argument("--drop", default="", help="with --curve: banks neither trained on nor scored (held out)")
    args = ap.parse_args()
    if args.score_dumps:
        score_dumps(Path(args.score_dumps), args.author_false, args.show_left,
                    tuple(filter(None, args.banks.split(","))))
        return
    if not args.corpora:
        ap.error("--corpora is needed unless --score-dumps")
    configs = args.config or [""]
    t0 = time.time()
    texts, _ = gate_corpora.load(args.corpora, with_sealed=False)  # the sealed bank is never read here
    texts += [t for name in args.extra_bank for t in gate_corpora._parallel_bank(name, "now dev")]
    if args.curve:
        opts = tg.parser().parse_args(shlex.split(configs[0]) + ["--corpora", args.corpora])
        every = [t for t in texts if t.split == "dev" and t.label in ("attack", "clean")
                 and not tg.dropped(t, args.drop)] + (tg.recall_facts() if opts.recall_facts else [])
        seg = tg.segments(every, not opts.no_mood, opts.structure, opts.skip_pairs, opts.background)
        print(f"{len(every)} texts, segments read; {time.time() - t0:.0f}s", flush=True)
        curve(every, seg, opts, args.curve.split(","), args.curve_sizes.split(","),
              [int(x) for x in args.curve_seeds.split(",")], args.drop, args.author_false, args.shipped, args.out, t0)
        return
    if args.shipped_dump:
        shipped_dump(Path(args.shipped_dump), [t for t in texts if t.split == "dev" and t.label in ("attack", "clean")
                                               and tg.bank_of(t) in tg.AUTHORS])
        return
    every = [t for t in texts if t.split == "dev" and t.label in ("attack", "clean")] + tg.recall_facts()
    folded_all = [normalise(t.text[:tg.TRAIN_CHARS]) for t in every]
    keys_cache: dict[frozenset[str], list[str]] = {}
    seg_cache: dict[tuple[bool, bool, bool, bool], tuple] = {}
    rule_cache: dict[int, bool] = {}

    def ruled(i: int) -> bool:
        if i not in rule_cache:
            rule_cache[i] = scan_rules(every[i].text) is not None
        return rule_cache[i]

    # bank by bank, every configuration in turn: the runs of one bank are side by side in time (and load)
    for bank in args.leave_out.split(",") if args.shipped else []:
        idx = [i for i, t in enumerate(every) if out_of(t, bank)]
        left = [every[i] for i in idx]
        shipped = np.array([threat_model.model().verdict(normalise(t.text)).blocked for t in left])
        langs = sorted({t.lang for t in left})
        rules = np.array([ruled(i) for i in idx])
        held = rates(left, shipped, rules, langs)
        held["by_bank"] = by_bank(left, shipped, rules, bank)
        a = held["all"]
        print(f"[shipped {threat_model.file_version()}] {bank}: blocked model/rules/gate {a['blocked']} of "
              f"{a['attacks']}; clean falsely blocked {a['false']} of {a['clean']}", flush=True)
        for name, r in [(lang, held[lang]) for lang in langs] + list(held["by_bank"].items()):
            print(f"    {name}: blocked {r['blocked']} ({r['attacks']}), false {r['false']} of {r['clean']}")
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps({"config": f"shipped {threat_model.file_version()}", "left_out": bank,
                                    "left_out_rates": held}, ensure_ascii=False) + "\n")
    for bank, cfg in [(bk, c) for bk in args.leave_out.split(",") for c in configs]:
        opts = tg.parser().parse_args(shlex.split(cfg) + ["--corpora", args.corpora])
        key = (not opts.no_mood, opts.structure, opts.skip_pairs, opts.background)
        if key not in seg_cache:
            seg_cache[key] = tg.segments(every, *key)
            print(f"segments read ({'moods' if key[0] else 'no moods'}, {'crosses' if key[1] else 'no crosses'}, "
                  f"{'skip pairs' if key[2] else 'no skip pairs'}, "
                  f"{'windows without background' if key[3] else 'whole windows'}); "
                  f"{time.time() - t0:.0f}s", flush=True)
        owner_all, trained_all, feats_all = seg_cache[key]
        langs_key = tg.lang_keys(opts)
        if langs_key not in keys_cache:  # each text's cut-off key: its script, or its language (--lang-thresholds)
            keys_cache[langs_key] = [tg.key_of(f, langs_key) for f in folded_all]
        scripts_all = keys_cache[langs_key]
        out_idx = [i for i, t in enumerate(every) if out_of(t, bank)]
        in_idx = [i for i, t in enumerate(every) if not out_of(t, bank) and not tg.dropped(t, opts.drop)
                  and (opts.recall_facts or t.corpus != tg.RECALL_FACTS)]
        if not out_idx:
            raise SystemExit(f"--leave-out {bank!r}: no dev text is in that bank")
        new_of = np.full(len(every), -1)
        new_of[in_idx] = np.arange(len(in_idx))
        dev = [every[i] for i in in_idx]
        rows = np.flatnonzero(new_of[owner_all] >= 0)
        owner = new_of[owner_all[rows]]
        trained = trained_all[rows]
        feats = [feats_all[r] for r in rows]
        vocab, X, y, _, sw, mult, size = tg.design(dev, owner, trained, feats, opts)
        scripts = [scripts_all[i] for i in in_idx]
        best = tg.out_of_fold(dev, X, y, sw, owner, trained, size, opts)
        one, cut = tg.calibrate(dev, best, scripts, opts)
        tr = np.flatnonzero(trained)
        w, b, _ = tg.train(X.take(tr), y[tr], sw[tr], size, opts)
        # the left-out bank, scored by the model that never saw it
        lrows = np.flatnonzero(np.isin(owner_all, out_idx))
        lpos = {i: k for k, i in enumerate(out_idx)}
        L = tg.Matrix([np.array(sorted(vocab[f] for f in feats_all[r] if f in vocab), dtype=np.int64)
                       for r in lrows], np.array([len(feats_all[r]) for r in lrows], dtype=np.float64),
                      opts.evidence_floor, mult)
        lbest = np.full(len(out_idx), -1e9)
        np.maximum.at(lbest, np.array([lpos[o] for o in owner_all[lrows]]), L.dot(w) + b)
        left = [every[i] for i in out_idx]
        lscripts = [scripts_all[i] for i in out_idx]
        lmodel = verdicts(range(len(left)), lbest, lscripts, one, cut)
        lrules = np.array([ruled(i) for i in out_idx])
        langs = sorted({t.lang for t in left})
        held = rates(left, lmodel, lrules, langs)
        held["by_bank"] = by_bank(left, lmodel, lrules, bank)
        # in training: the same model on the author banks it was trained on
        ins = np.full(len(dev), -1e9)
        np.maximum.at(ins, owner, X.dot(w) + b)
        auth = [k for k, t in enumerate(dev) if tg.bank_of(t) in tg.AUTHORS]
        imodel = verdicts(auth, ins, scripts, one, cut)
        irules = np.array([ruled(in_idx[k]) for k in auth])
        insample = rates([dev[k] for k in auth], imodel, irules, langs)
        oof_auth = verdicts(auth, best, scripts, one, cut)
        oof = rates([dev[k] for k in auth], oof_auth, irules, langs)
        also = {}
        for mf in filter(None, args.max_false_also.split(",")):
            value, _, per = mf.partition("/")
            alt = {**vars(opts), "max_false": float(value)} | ({"script_thresholds": per.replace("+", ",")} if per else {})
            o2, c2 = tg.calibrate(dev, best, scripts, argparse.Namespace(**alt))
            v2 = verdicts(range(len(left)), lbest, lscripts, o2, c2)
            also[mf] = {"threshold_margin": round(o2, 3), "script_margins": {k: round(v, 3) for k, v in c2.items()},
                        "left_out_rates": rates(left, v2, lrules, langs) | {"by_bank": by_bank(left, v2, lrules, bank)}}
            a2 = also[mf]["left_out_rates"]["all"]
            print(f"    at --max-false {mf}: blocked {a2['blocked']}, false {a2['false']} (margin {o2:.3f}, "
                  f"{also[mf]['script_margins']}); by bank "
                  f"{ {b: (r['blocked'][0], r['false'][0]) for b, r in also[mf]['left_out_rates']['by_bank'].items()} }",
                  flush=True)
        rec = {"config": cfg, "left_out": bank, "threshold_margin": round(one, 3), "max_false_also": also,
               "script_margins": {k: round(v, 3) for k, v in cut.items()},
               "left_out_rates": held, "in_training_author_rates": insample,
               "out_of_fold_author_rates": oof, "seconds": round(time.time() - t0)}
        a = held["all"]
        print(f"[{cfg or 'defaults'}] {bank} left out: blocked model/rules/gate {a['blocked']} of "
              f"{a['attacks']}; clean falsely blocked {a['false']} of {a['clean']} "
              f"(margin {one:.3f}, {rec['script_margins']})", flush=True)
        for name, r in [(lang, held[lang]) for lang in langs] + list(held["by_bank"].items()):
            print(f"    {name}: blocked {r['blocked']} ({r['attacks']}), false {r['false']} of {r['clean']}")
        print(f"    in training (author banks): blocked {insample['all']['blocked']}, false "
              f"{insample['all']['false']} of {insample['all']['clean']}; out of fold: blocked "
              f"{oof['all']['blocked']}, false {oof['all']['false']} of {oof['all']['clean']}; "
              f"{time.time() - t0:.0f}s", flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if args.dump_dir:
            dump(Path(args.dump_dir), cfg, bank, dev, best, left, lbest, lrules)
        if args.misses_dir:
            with open(Path(args.misses_dir) / run_file(cfg, bank), "w", encoding="utf-8") as f:
                for t, s_, g, r in zip(left, lbest, lmodel | lrules, lrules):
                    f.write(json.dumps({"lang": t.lang, "label": t.label, "margin": round(float(s_), 3),
                                        "rules": bool(r), "blocked": bool(g), "text": t.text},
                                       ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
