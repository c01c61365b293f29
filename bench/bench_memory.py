"""Memory write side: gate throughput, a 100K-record import, forgetting a 10K-record user.

    nice python bench/bench_memory.py [--records 100000] [--user-records 10000] [--append]

1. Gate throughput, single process, on two corpora: engineering facts
   written here (generated, varied) and LoCoMo conversation turns
   (``../shared/datasets/locomo``, skipped when absent). Three rates: the
   screen alone (threat scan + secret scan), gated writes in batches of
   1,000 (one transaction each, the import and ``:batch`` path), and single
   gated writes (one fsync'd transaction each, the ``POST /memories`` path).
2. Import of ``--records`` generated records through the gate (batches of
   1,000): time, and the store's size on disk.
3. ``forget --user`` of a user holding ``--user-records`` of them: time of
   the erasure and of the compacting copy that removes old pages.

Each measurement uses a fresh store in a temporary directory.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LoadMeter, append_results, section_head  # noqa: E402

from ctxproxy.store.services.memory.gate import MemoryGate  # noqa: E402
from ctxproxy.store import open_store  # noqa: E402
from ctxproxy.store.forget import forget  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared" / "datasets" / "locomo" / "locomo10_dev.json"

_SERVICES = ["billing", "auth", "search", "checkout", "inventory", "notifications", "ledger", "gateway", "reports"]
_TOOLS = ["Redis", "Postgres", "Kafka", "NATS", "nginx", "Envoy", "ClickHouse", "SQLite", "RabbitMQ", "Vault"]
_TEMPLATES = [
    "The {s} service stores sessions in {t} {v}.",
    "Deploys of {s} go through the staging cluster in region eu-{n}.",
    "{s} exposes metrics on port {p}; dashboards live under /d/{s}.",
    "Run `make test-{s}` before pushing changes to {s}.",
    "{s} retries calls to {t} {n} times with exponential backoff.",
    "The {s} team prefers squash merges and small PRs for {t} changes.",
    "On-call for {s} rotates every {n} days; escalation goes to the {t} owners.",
    "A failed {s} migration in {t} is rolled back with `./bin/rollback {s} {n}`.",
    "{s} reads its feature flags from {t} at start-up, cached for {n} minutes.",
]


def engineering_facts(n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        t = rnd.choice(_TEMPLATES)
        out.append(t.format(s=rnd.choice(_SERVICES), t=rnd.choice(_TOOLS), v=rnd.randint(3, 17),
                            n=rnd.randint(1, 9), p=rnd.randint(1024, 65000)) + f" (ref {i})")
    return out


def locomo_turns() -> list[str]:
    if not LOCOMO.exists():
        return []
    out = []
    for conv in json.loads(LOCOMO.read_text()):
        c = conv["conversation"]
        for key, turns in c.items():
            if key.startswith("session_") and isinstance(turns, list):
                out += [t["text"] for t in turns if isinstance(t.get("text"), str) and t["text"].strip()]
    return out


class Fresh:
    """A store in a temporary directory, removed afterwards."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="ctxmem-")
        self.store = open_store(os.path.join(self.dir, "store"))
        return self

    def __exit__(self, *exc):
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def size(self) -> int:
        return sum(f.stat().st_size for f in Path(self.dir).rglob("*.mdb"))


def throughput(name: str, texts: list[str], singles: int) -> dict:
    gate_probe = MemoryGate(None)
    t0 = time.perf_counter()
    refused = sum(gate_probe.screen(t) is not None for t in texts)
    screen = len(texts) / (time.perf_counter() - t0)
    with Fresh() as f:
        gate = MemoryGate(f.store)
        bodies = [{"statement": t[:1000], "kind": "fact"} for t in texts]
        t0 = time.perf_counter()
        outs = gate.write_many("bench", bodies)
        batched = len(bodies) / (time.perf_counter() - t0)
        stored = sum(1 for o in outs if getattr(o, "record", None) is not None and not o.duplicate_of)
    with Fresh() as f:
        gate = MemoryGate(f.store)
        t0 = time.perf_counter()
        for t in texts[:singles]:
            gate.write("bench", {"statement": t[:1000], "kind": "fact"})
        single = singles / (time.perf_counter() - t0)
    return {"corpus": name, "statements": len(texts), "refused": refused, "stored": stored,
            "screen": screen, "batched": batched, "single": single}


def bulk_import(n: int) -> dict:
    with Fresh() as f:
        gate = MemoryGate(f.store)
        texts = engineering_facts(n, seed=2)
        t0 = time.perf_counter()
        for start in range(0, n, 10000):
            gate.write_many("bench", [{"statement": t, "kind": "fact", "user": f"u{i % 50}"}
                                      for i, t in enumerate(texts[start:start + 10000], start)])
        took = time.perf_counter() - t0
        return {"records": len(f.store.memories.list("bench")), "seconds": took, "size": f.size()}


def forget_user(n: int) -> dict:
    with Fresh() as f:
        gate = MemoryGate(f.store)
        for start in range(0, n, 5000):
            gate.write_many("bench", [{"statement": t, "kind": "fact", "user": "alice"}
                                      for t in engineering_facts(min(5000, n - start), seed=3 + start)])
        gate.write_many("bench", [{"statement": t, "kind": "fact", "user": "bob"} for t in engineering_facts(2000, 9)])
        before = f.size()
        t0 = time.perf_counter()
        receipt = forget(f.store, "bench", {"user": "alice"}, finish=False)
        erase = time.perf_counter() - t0
        t1 = time.perf_counter()
        from ctxproxy.store.forget import finish_erasure

        assert finish_erasure(f.store)
        compact = time.perf_counter() - t1
        return {"records": receipt.counts["memories"], "revisions": receipt.counts["memory_revisions"],
                "erase": erase, "compact": compact, "before": before, "after": f.size()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--user-records", type=int, default=10_000)
    ap.add_argument("--statements", type=int, default=5000, help="per corpus, for the throughput rows")
    ap.add_argument("--singles", type=int, default=1000, help="single (fsync'd) writes per corpus")
    ap.add_argument("--append", action="store_true", help="append the section to bench/RESULTS.md")
    args = ap.parse_args()
    meter = LoadMeter()
    MemoryGate(None).screen("warm up the secret rules")
    rows = [throughput("engineering facts (generated)", engineering_facts(args.statements), args.singles)]
    turns = locomo_turns()
    if turns:
        rows.append(throughput("LoCoMo turns", (turns * (args.statements // len(turns) + 1))[:args.statements],
                               args.singles))
    imp = bulk_import(args.records)
    fg = forget_user(args.user_records)
    lines = [section_head("memory: gate, import, forget"), "",
             "| corpus | statements | refused | screen /s | gated writes /s, batches of 1,000 | "
             "gated single writes /s (fsync each) |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['corpus']} | {r['statements']} | {r['refused']} | {r['screen']:,.0f} | "
                     f"{r['batched']:,.0f} | {r['single']:,.0f} |")
    lines += ["", "| workload | result |", "|---|---|",
              f"| import {imp['records']:,} records through the gate (batches of 1,000) | "
              f"{imp['seconds']:.1f} s ({imp['records'] / imp['seconds']:,.0f} records/s), store "
              f"{imp['size'] / 2**20:.0f} MiB on disk |",
              f"| forget a user with {fg['records']:,} records ({fg['revisions']:,} revisions) | "
              f"erase {fg['erase']:.2f} s + compacting copy {fg['compact']:.2f} s; store "
              f"{fg['before'] / 2**20:.0f} → {fg['after'] / 2**20:.0f} MiB |",
              "", "LoCoMo refusals are false blocks of the threat or secret scan on clean chat text "
              "(measured properly by the gate's own corpus benchmark)." if turns else "", meter.summary()]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.append:
        append_results(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
