"""Recall options judged by author: how many authors gain and lose, and each option left out by author.

    python bench/bench_recall_authors.py --held-out fresh20 --held-out fresh21 \\
        --cand novelty:novelty=true --cand remarks:remark_words=3,broad_share=0.25

Every labelled half of the agent turns (``bench_recall_turns.halves``) was written by one author about
one project; the spread between authors is larger than any option found, so a pooled sum chosen on all
of them says little about the next author. For each candidate (``NAME:KEY=VALUE,KEY=VALUE``, rank
settings over ``--base``, and the filter's ``outputs`` — a tool output's own recall — and ``outweighed``),
each tuned author's hits and false-injection turns against the base:

- by author: how many gain hits and how many lose them, how many have fewer false-injection turns and
  how many more, and how many come out ahead (hits gained less false turns added) or behind;
- leave-one-author-out: each author scored with the candidate (or the base) that the other authors
  prefer — the most authors ahead less behind, then the pooled hits less false turns, then the base —
  so a candidate chosen on many authors is judged on one it was not chosen on.

Held-out halves (``--held-out``) are not run unless ``--read-held-out`` is given; then only their
pooled figures are printed, for the base, every candidate and the one all the tuned authors prefer.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recall_turns import OUTWEIGHED, halves, run_half  # noqa: E402


def parse_settings(text: str) -> dict[str, str]:
    return dict(s.partition("=")[::2] for s in text.split(",") if s)


FILTER_KEYS = ("outputs", "outweighed")  # the filter's, not the ranking's: a tool output's recall, ``outweighed``


def rank_config(settings: dict[str, str]):
    from ctxproxy.store.services.recall.rank import RankConfig

    def typed(key: str, value: str):
        kind = type(getattr(RankConfig(), key))
        return value.lower() in ("1", "true", "yes", "on") if kind is bool else kind(value)

    return RankConfig(**{k: typed(k, v) for k, v in settings.items() if k not in FILTER_KEYS})


def figures(settings: dict[str, str], names: list[str], by_name: dict) -> dict[str, tuple[int, int]]:
    """Per half: (hits, false-injection turns)."""
    cfg = rank_config(settings)
    outputs = settings.get("outputs", "true").lower() in ("1", "true", "yes", "on")
    outweighed = float(settings.get("outweighed", OUTWEIGHED))
    out = {}
    for name in names:
        hits, _wanted, false_turns, _items, _n = run_half(by_name[name], cfg, False, name, outputs,
                                                          outweighed=outweighed)
        out[name] = (hits, false_turns)
    return out


def compare(base: dict, cand: dict, authors: list[str]) -> dict[str, int]:
    """How many authors gain and lose, by hits, by false turns and on both (hits less false turns)."""
    c = dict.fromkeys(("hit+", "hit-", "false-", "false+", "ahead", "behind", "dhits", "dfalse"), 0)
    for a in authors:
        dh, df = cand[a][0] - base[a][0], cand[a][1] - base[a][1]
        c["hit+"] += dh > 0
        c["hit-"] += dh < 0
        c["false-"] += df < 0
        c["false+"] += df > 0
        c["ahead"] += dh - df > 0
        c["behind"] += dh - df < 0
        c["dhits"] += dh
        c["dfalse"] += df
    return c


def preference(c: dict[str, int]) -> tuple[int, int]:
    return c["ahead"] - c["behind"], c["dhits"] - c["dfalse"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="", metavar="KEY=VALUE,…", help="rank settings of the base")
    p.add_argument("--cand", action="append", default=[], metavar="NAME:KEY=VALUE,…",
                   help="a candidate: rank settings over the base (repeatable)")
    p.add_argument("--held-out", action="append", default=[], metavar="HALF",
                   help="an author never run unless --read-held-out (repeatable)")
    p.add_argument("--read-held-out", action="store_true", help="print the held-out halves' pooled figures")
    p.add_argument("--only", action="append", default=[], metavar="HALF", help="only these tuned halves")
    args = p.parse_args(argv)
    by_name = dict(halves())
    authors = [n for n in by_name if n not in args.held_out and (not args.only or n in args.only)]
    base_settings = parse_settings(args.base)
    cands = {}
    for spec in args.cand:
        name, _, settings = spec.partition(":")
        cands[name] = {**base_settings, **parse_settings(settings)}
    base = figures(base_settings, authors, by_name)
    runs = {name: figures(s, authors, by_name) for name, s in cands.items()}
    hits0, false0 = (sum(v[i] for v in base.values()) for i in (0, 1))
    print(f"{len(authors)} tuned authors; base {args.base or 'defaults'}: {hits0} hits, {false0} false turns")
    print(f"{'candidate':24} {'hits':>5} {'false':>5}  {'hit +/-':>8} {'false -/+':>9} {'ahead/behind':>12}")
    scores = {}
    for name, run in runs.items():
        c = scores[name] = compare(base, run, authors)
        print(f"{name:24} {c['dhits']:+5d} {c['dfalse']:+5d}  {c['hit+']:3d}/{c['hit-']:<4d} "
              f"{c['false-']:4d}/{c['false+']:<4d} {c['ahead']:6d}/{c['behind']:<5d}")
    if runs and authors:  # each author scored with what the others prefer (the base when none is preferred)
        chosen, out = {}, {}
        for a in authors:
            others = [o for o in authors if o != a]
            prefs = {name: preference(compare(base, run, others)) for name, run in runs.items()}
            best = max(prefs, key=lambda nm: prefs[nm])
            chosen[a] = best if prefs[best] > (0, 0) else None
            out[a] = runs[chosen[a]][a] if chosen[a] else base[a]
        c = compare(base, out, authors)
        picks = ", ".join(f"{a}: {chosen[a] or 'base'}" for a in authors if chosen[a] != chosen[authors[0]])
        print(f"{'leave-one-author-out':24} {c['dhits']:+5d} {c['dfalse']:+5d}  {c['hit+']:3d}/{c['hit-']:<4d} "
              f"{c['false-']:4d}/{c['false+']:<4d} {c['ahead']:6d}/{c['behind']:<5d}"
              f"   (mostly {chosen[authors[0]] or 'base'}{'; ' + picks if picks else ''})")
        print("per author (hits, false turns), base → each candidate:")
        for a in authors:
            print(f"  {a:14} {base[a][0]:3d} {base[a][1]:3d}  " + "  ".join(
                f"{name}: {run[a][0] - base[a][0]:+d} {run[a][1] - base[a][1]:+d}" for name, run in runs.items()
                if run[a] != base[a]))
    if args.read_held_out and args.held_out:
        held = [n for n in args.held_out if n in by_name]
        for name, settings in [("base", base_settings)] + list(cands.items()):
            run = figures(settings, held, by_name)
            print(f"held out, pooled, {name:16} {sum(v[0] for v in run.values()):4d} hits, "
                  f"{sum(v[1] for v in run.values()):4d} false turns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
