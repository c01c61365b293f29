"""What recall costs on a long user turn against a short one (a benchmark, not a test).

    nice .venv/bin/python bench/bench_recall_turn.py [--memories 5000] [--rounds 200]

A real LMDB store and recall index with ``--memories`` facts of one user;
then ``--rounds`` recalls of each kind of turn,
each text new (a counter in it, so no cached query is reused): a one-line
question, the long request of the issue (~210 characters), and turns of 2,
20 and 200 KB (that request, then a pasted log). Median and p95 wall time per recall, in
this process. A query is built from at most ``max_query_chars`` (2,000) of a
message — its start and its end —, so a turn costs the same past that size,
however long it is.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("deploy release staging database cluster node pipeline build cache token quota disk memory network "
         "latency timeout retry backup restore schema migration index query shard replica leader kafka redis "
         "postgres nginx docker helm terraform grafana alert incident rollback canary flag metric budget invoice "
         "customer ticket refund support contract pricing vendor laptop office travel meeting roadmap review "
         "security audit password certificate").split()
SHORT = "which port does staging use? ({n})"
LONG = ("Can you update the deploy script so that it uses the right port for staging? I think it is broken since "
        "yesterday and the CI keeps failing on the integration tests, please look at scripts/deploy.sh first. ({n})")


def turn_with_log(n: int, size: int) -> str:
    """The long request, then a pasted log, ``size`` characters in all."""
    lines = size // 50 + 1
    log = "\n".join(f"2026-11-30T23:{i % 60:02d}:{i % 57:02d}Z INFO worker-{i % 4} processed batch {n * lines + i} "
                    f"in {40 + i % 90} ms" for i in range(lines))
    return (LONG.format(n=n) + "\n\n" + log)[:size]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--memories", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=200)
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from ctxproxy.store import open_store
    from ctxproxy.store.memory_records import MemoryRecord, new_memory_id
    from ctxproxy.store.services.recall.services import RecallServices
    from ctxproxy.store.sqlite_index import Viewer

    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="bench-recall-turn-") as tmp:
        store = open_store(Path(tmp) / "store")
        texts = ["Staging listens on port 8443, not 443."]
        texts += [" ".join(rng.choices(WORDS, k=10)) + " (" + "".join(rng.choices("bcdfgklmnprstvz", k=6)) + ")."
                  for _ in range(args.memories - 1)]
        with store.batch() as b:
            for text in texts:
                b.memories.put(MemoryRecord(memory_id=new_memory_id(), tenant="acme", statement=text, kind="fact",
                                            origin="user", status="active", user="dev"))
        rs = RecallServices(tmp, store)
        recaller = rs.recaller()
        viewer = Viewer("acme", user="dev")
        recaller.recall(viewer, "warm up the index")
        kinds = {"short question": lambda n: SHORT.format(n=n), "long request": lambda n: LONG.format(n=n),
                 "2 KB turn": lambda n: turn_with_log(n, 2048), "20 KB turn": lambda n: turn_with_log(n, 20480),
                 "200 KB turn": lambda n: turn_with_log(n, 204800)}
        times: dict[str, list[float]] = {k: [] for k in kinds}
        found: dict[str, int] = dict.fromkeys(kinds, 0)
        for n in range(args.rounds):
            for name, make in kinds.items():  # interleaved: the machine's load falls on all alike
                text = make(n)
                t0 = time.perf_counter()
                items = recaller.recall(viewer, text).items
                times[name].append((time.perf_counter() - t0) * 1000)
                found[name] += any("port 8443" in s.cand.statement for s in items)
        rs.close()
        store.close()
    print(f"{args.memories} memories, {args.rounds} recalls each (ms, wall):")
    print(f"{'turn':<16} {'chars':>6} {'p50':>7} {'p95':>7}  found the port fact")
    for name, make in kinds.items():
        ts = sorted(times[name])
        print(f"{name:<16} {len(make(0)):>6} {statistics.median(ts):>7.2f} {ts[int(len(ts) * 0.95)]:>7.2f}  "
              f"{found[name]}/{args.rounds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
