"""How much a streamed reply waits in the stream redactor, and what it costs.

    nice python bench/bench_stream_hold.py [--baseline main]

In this process, no sockets. Two texts fed to ``StreamRedactor`` in pieces
as a model streams them: prose in word tokens (`` thing``, ``,``), and 200 KB
of ``secretcorpus.realistic_megabyte`` (code, logs, JSON, 40 secrets) in
pieces of 2–8 characters. For each, with the default profile and with it
less the rules a plain word can begin (``WORD_RULES``): how many pieces go
out whole with themselves, how many release nothing, characters waiting
after a piece (mean), and CPU µs per piece (this thread, best of 5 rounds). Every run checks
that the stream equals redacting the whole text. ``--baseline REV`` also
runs ``filters/redaction/stream.py`` as it is at git revision REV (on this
tree's engine), its rounds interleaved with this one's, so both see the
same load.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from secretcorpus import TEST_KEY, hyperscan_cache_dir, realistic_megabyte  # noqa: E402

from ctxproxy.filters.redaction import DEFAULT_GROUPS, Redactor, StreamRedactor, builtin_rules  # noqa: E402

WORD_RULES = ("terraform-cloud-token", "azure-ad-client-secret", "mailchimp-api-key", "telegram-bot-token")
PROSE = ("Here is the thing, here are the steps: run make install, then open the docs page and check "
         "that every test passes. If one fails, read its log first; most failures come from a stale cache. ") * 40
ROUNDS = 5


def pieces() -> dict[str, list[str]]:
    words = PROSE.replace(" ", "\0 ").replace(",", "\0,").replace(".", "\0.").split("\0")
    text = realistic_megabyte()[:200_000]
    rng, code, i = random.Random(1), [], 0
    while i < len(text):
        n = rng.randint(2, 8)
        code.append(text[i:i + n])
        i += n
    return {"prose, word tokens": [w for w in words if w], "code/logs 200 KB, 2-8 chars": code}


def baseline(rev: str) -> type:
    """``StreamRedactor`` of ``filters/redaction/stream.py`` at ``rev``, on this tree's engine."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:filters/redaction/stream.py"],
                         check=True, capture_output=True, text=True).stdout
    module = types.ModuleType("baseline_stream")
    module.__package__ = "ctxproxy.filters.redaction"
    with tempfile.TemporaryDirectory():
        exec(compile(src, f"{rev}:filters/redaction/stream.py", "exec"), module.__dict__)
    return module.StreamRedactor


def once(cls: type, red: Redactor, chunks: list[str]) -> tuple[float, list[str]]:
    sr = cls(red, TEST_KEY)
    t0 = time.thread_time()
    outs = [sr.feed(c) for c in chunks]
    outs.append(sr.flush())
    return time.thread_time() - t0, outs


def stats(cls: type, red: Redactor, chunks: list[str], outs: list[str]) -> tuple[int, int, float]:
    assert "".join(outs) == red.redact("".join(chunks), TEST_KEY).text
    whole = sum(1 for c, o in zip(chunks, outs) if o == c)
    nothing = sum(1 for o in outs[:-1] if o == "")
    sr, waiting = cls(red, TEST_KEY), 0
    for c in chunks:
        sr.feed(c)
        waiting += sr.held
    return whole, nothing, waiting / len(chunks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", metavar="REV", help="also run stream.py of this git revision, interleaved")
    args = ap.parse_args()
    versions = {"this tree": StreamRedactor}
    if args.baseline:
        versions = {args.baseline: baseline(args.baseline), **versions}
    rules = [r for r in builtin_rules() if r.group in DEFAULT_GROUPS]
    profiles = {"default": Redactor(rules, cache_dir=hyperscan_cache_dir()),
                "default less WORD_RULES": Redactor([r for r in rules if r.id not in WORD_RULES],
                                                    cache_dir=hyperscan_cache_dir())}
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| text | profile | stream.py | pieces | out whole | release nothing | chars waiting, mean | CPU µs / piece |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for name, chunks in pieces().items():
        for pname, red in profiles.items():
            best: dict[str, float] = {}
            outs: dict[str, list[str]] = {}
            for _ in range(ROUNDS):
                for vname, cls in versions.items():
                    t, outs[vname] = once(cls, red, chunks)
                    best[vname] = min(best.get(vname, t), t)
            for vname, cls in versions.items():
                whole, nothing, waiting = stats(cls, red, chunks, outs[vname])
                print(f"| {name} | {pname} | {vname} | {len(chunks)} | {whole} | {nothing} | {waiting:.1f} | "
                      f"{best[vname] / len(chunks) * 1e6:.1f} |")


if __name__ == "__main__":
    main()
