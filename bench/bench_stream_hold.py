"""How much a streamed reply waits in the stream redactor, and what it costs.

    nice python bench/bench_stream_hold.py [--baseline REV] [--interval-ms 25]

In this process, no sockets. Texts fed to ``StreamRedactor`` in pieces as a
model streams them, through the default profile: prose in word tokens
(`` thing``, ``,``) and in pieces of 60 characters; 200 KB of
``secretcorpus.realistic_megabyte`` (code, logs, JSON, 40 secrets) in word
tokens, in pieces of 2–8 characters and of 60 (what the relay makes of five
12-character deltas that came in one read). For each:
how many pieces go out whole with themselves, how many are held (some of
their text waits for a later piece), how many release nothing; how many
pieces late a character goes out (mean: the lag in token intervals); at which
piece the first character goes out (1: with the first); and CPU µs per piece
(this thread, best of 5 rounds). Added time to the first token is the first
piece's CPU time plus, at ``--interval-ms`` between pieces (a real model:
tens of ms), the intervals it waited. Every run checks that the stream equals
redacting the whole text.

``--words`` instead counts, for every distinct word and number of ``docs/``
and ``proxy/`` (code identifiers and prose), whether it waits when it ends a
piece (fed alone after ``see ``), and how many of those are hex digits.

``--held-out`` instead streams texts no round of the hold-back was tuned on: LoCoMo's
dialogues (``/work/shared/datasets/locomo``, read in place) and the gate's commits bank.

``--walk-only`` also runs this tree's hold-back without its Hyperscan scan before
the held text's last run (``hold_scan.py``), interleaved the same way.

``--baseline REV`` also runs the redaction package (``store/services/redaction/``:
rules, engine, stream) as it is at git revision REV, imported beside this
tree's, its rounds interleaved with this one's, so both see the same load.
"""
from __future__ import annotations

import argparse
import importlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from secretcorpus import TEST_KEY, hyperscan_cache_dir, realistic_megabyte  # noqa: E402

import ctxproxy.store.services  # noqa: E402
from ctxproxy.store.services import redaction  # noqa: E402

PROSE = ("Here is the thing, here are the steps: run make install, then open the docs page and check "
         "that every test passes. If one fails, read its log first; most failures come from a stale cache. ") * 40
ROUNDS = 5


def word_tokens(text: str) -> list[str]:
    """As a tokenizer cuts: a word with the space before it, or one other character."""
    return re.findall(r" ?\w+|\s|[^\w\s]", text)


def pieces() -> dict[str, list[str]]:
    text = realistic_megabyte()[:200_000]
    rng, code, i = random.Random(1), [], 0
    while i < len(text):
        n = rng.randint(2, 8)
        code.append(text[i:i + n])
        i += n
    joined = [text[i:i + 60] for i in range(0, len(text), 60)]  # five 12-character deltas a read, as the relay joins them
    return {"prose, word tokens": word_tokens(PROSE),
            "prose, 60 chars": [PROSE[i:i + 60] for i in range(0, len(PROSE), 60)],
            "code/logs 200 KB, word tokens": word_tokens(text),
            "code/logs 200 KB, 2-8 chars": code, "code/logs 200 KB, 60 chars": joined}


LOCOMO = Path("/work/shared/datasets/locomo/locomo10_dev.json")


def held_out_pieces() -> dict[str, list[str]]:
    """Texts no round of the hold-back was tuned on: LoCoMo's dialogues (English chat) and
    the gate's commits bank (commit messages in seven languages, ja/zh/ru among them)."""
    import json
    import tomllib

    turns = [t["text"] for conv in json.loads(LOCOMO.read_text()) for key, session in conv["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    dialogue = "\n".join(turns)[:120_000]
    commits = "\n".join(text for f in sorted((ROOT / "bench/gate_corpus/commits").glob("*.toml"))
                         for group in tomllib.loads(f.read_text()).values() if isinstance(group, dict)
                         for texts in group.values() if isinstance(texts, list) for text in texts)
    return {"dialogue (LoCoMo), word tokens": word_tokens(dialogue),
            "dialogue (LoCoMo), 12 chars": [dialogue[i:i + 12] for i in range(0, len(dialogue), 12)],
            "dialogue (LoCoMo), 60 chars": [dialogue[i:i + 60] for i in range(0, len(dialogue), 60)],
            "commits bank, 7 languages, 12 chars": [commits[i:i + 12] for i in range(0, len(commits), 12)]}


def package_at(rev: str) -> types.ModuleType:
    """``store/services/redaction/`` at ``rev``, imported as ``ctxproxy.store.services.redaction_<rev>``
    (its relative imports of the rest of ``ctxproxy.store.services`` get this tree's)."""
    tmp = Path(tempfile.mkdtemp(prefix="ctxproxy-bench-redaction-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "store/services/redaction"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    name = "redaction_" + re.sub(r"\W", "_", rev)
    where = tmp / "store/services/redaction"
    spec = importlib.util.spec_from_file_location(f"ctxproxy.store.services.{name}", where / "__init__.py",
                                                  submodule_search_locations=[str(where)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    setattr(ctxproxy.store.services, name, module)
    return module


def default_redactor(pkg: types.ModuleType):
    rules = [r for r in pkg.builtin_rules() if r.group in pkg.DEFAULT_GROUPS]
    return pkg.Redactor(rules, cache_dir=hyperscan_cache_dir())


def once(pkg: types.ModuleType, red, chunks: list[str]) -> tuple[float, float, list[str]]:
    sr = pkg.StreamRedactor(red, TEST_KEY)
    t0 = time.thread_time()
    outs = [sr.feed(chunks[0])]
    first = time.thread_time() - t0
    outs += [sr.feed(c) for c in chunks[1:]]
    outs.append(sr.flush())
    return time.thread_time() - t0, first, outs


def stats(pkg: types.ModuleType, red, chunks: list[str], outs: list[str]) -> dict[str, float]:
    assert "".join(outs) == red.redact("".join(chunks), TEST_KEY).text
    whole = sum(1 for c, o in zip(chunks, outs) if o == c)
    nothing = sum(1 for o in outs[:-1] if o == "")
    # Lag: for each character, how many pieces after its own it went out (``held`` counts
    # the characters received and not yet released; the flush releases the rest).
    sr, arrived, j, done, lag, ends = pkg.StreamRedactor(red, TEST_KEY), 0, 0, 0, 0, []
    for k, c in enumerate(chunks + [None]):
        if c is None:
            sr.flush()
            released = arrived
        else:
            sr.feed(c)
            arrived += len(c)
            ends.append(arrived)
            released = arrived - sr.held
        while done < released:
            step = min(released, ends[j]) - done
            lag += step * (k - j)
            done += step
            if done == ends[j]:
                j += 1
    first = next((k + 1 for k, o in enumerate(outs) if o), len(outs))
    return {"whole": whole, "held": len(chunks) - whole - nothing, "nothing": nothing,
            "lag": lag / max(1, arrived), "first": first}


def held_words(versions: dict[str, types.ModuleType], reds: dict) -> None:
    files = sorted(ROOT.glob("docs/**/*.md")) + sorted(ROOT.glob("proxy/**/*.py"))
    words = sorted({w for f in files for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+", f.read_text())})
    print("| redaction | words | held when ending a piece | of which hex digits |")
    print("|---|---:|---:|---:|")
    for v, pkg in versions.items():
        held = [w for w in words if pkg.StreamRedactor(reds[v], TEST_KEY).feed("see " + w) != "see " + w]
        hexes = sum(1 for w in held if re.fullmatch(r"[0-9a-f]+", w))
        print(f"| {v} | {len(words)} | {len(held)} ({len(held) / len(words):.1%}) | {hexes} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", metavar="REV", help="also run store/services/redaction/ of this git revision, interleaved")
    ap.add_argument("--interval-ms", type=float, default=25.0, help="time between pieces, for the added TTFT")
    ap.add_argument("--words", action="store_true", help="only count the words that wait when they end a piece")
    ap.add_argument("--held-out", action="store_true", help="texts no round was tuned on (LoCoMo, the commits bank)")
    ap.add_argument("--walk-only", action="store_true",
                    help="also run this tree with the hold-back's Hyperscan scan off (it walks every position)")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    args = ap.parse_args()
    versions = {"this tree": redaction}
    if args.baseline:
        versions = {args.baseline: package_at(args.baseline), **versions}
    reds = {v: default_redactor(pkg) for v, pkg in versions.items()}
    if args.walk_only:
        versions = {"walk only": redaction, **versions}
        reds["walk only"] = walker = default_redactor(redaction)
        redaction.engine.SPACED_SCAN = False
        walker._spaced_scans()  # made now, without a scan: this redactor walks every position
        redaction.engine.SPACED_SCAN = True
        versions = {"walk only": versions.pop("walk only"), **versions}
    if args.words:
        return held_words(versions, reds)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| text | redaction | pieces | out whole | held (part waits) | release nothing | lag, pieces (mean) "
          "| first output at piece | CPU µs / piece | added TTFT ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, chunks in (held_out_pieces() if args.held_out else pieces()).items():
        best: dict[str, float] = {}
        first_cpu: dict[str, float] = {}
        outs: dict[str, list[str]] = {}
        for _ in range(args.rounds):
            for v, pkg in versions.items():
                t, f, outs[v] = once(pkg, reds[v], chunks)
                best[v] = min(best.get(v, t), t)
                first_cpu[v] = min(first_cpu.get(v, f), f)
        for v in versions:
            s = stats(versions[v], reds[v], chunks, outs[v])
            ttft = first_cpu[v] * 1e3 + (s["first"] - 1) * args.interval_ms
            print(f"| {name} | {v} | {len(chunks)} | {s['whole']} ({s['whole'] / len(chunks):.1%}) | "
                  f"{s['held']} ({s['held'] / len(chunks):.1%}) | {s['nothing']} ({s['nothing'] / len(chunks):.1%}) | "
                  f"{s['lag']:.3f} | {s['first']} | {best[v] / len(chunks) * 1e6:.1f} | {ttft:.2f} |")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
