"""Recall at scale on both backends, the same run: part (c) of bench_fleet.py alone.

    nice .venv/bin/python bench/bench_fleet_recall.py --memories 100000 --queries 300

``--memories`` records (50 tenants x 20 users, a third of them events of
seven conversations) written to LMDB and to a throwaway PostgreSQL cluster
(tests/pgserver.py), then ``--queries`` recalls through ``Recaller``, each
query on both backends in random order (so both see the same load): LMDB's
index is recall's SQLite file caught up from the change feed, PostgreSQL's
the tables written with the memories. Prints a line per backend with the
load average beside it; for PostgreSQL also the statements a recall sent
(one round trip each) and what a round trip costs meanwhile.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import pgserver  # noqa: E402
from bench_recall_perf import recall_latency, records  # noqa: E402
from common import pct, put_memories  # noqa: E402


def _count_reads() -> list[int]:
    """Count the PostgreSQL index's reads (each one round trip) from now on."""
    from ctxproxy.store.postgres import recall_index

    n = [0]
    read = recall_index._Reads.all

    def counted(self, sql, params=()):
        n[0] += 1
        return read(self, sql, params)

    recall_index._Reads.all = counted
    return n


def _round_trips(store, n: int = 300) -> list[float]:
    """Milliseconds of ``SELECT 1`` on a pooled connection: what one round trip costs on this machine now."""
    out = []
    with store._pool.connection() as conn:
        for _ in range(n):
            t0 = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()
    from ctxproxy.store import open_store
    from ctxproxy.store.memory_index import open_memory_index
    from ctxproxy.store.postgres import PGStore

    server = pgserver.start()
    if server is None:
        raise SystemExit(pgserver.HOW)
    server.prepare()
    tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-fleet-recall-"))
    stores = {}
    try:
        for b in ("lmdb", "postgres"):
            data = tmp / b
            data.mkdir()
            store = stores[b] = (open_store(data / "store", map_size=1 << 31) if b == "lmdb"
                                 else PGStore.open(server.new_database(), listen=False))
            t0 = time.perf_counter()
            put_memories(store, records(args.memories, random.Random(1)))
            t_store = time.perf_counter() - t0
            index = open_memory_index(data, store)
            t0 = time.perf_counter()
            index.catch_up()
            print(f"{b}: write all {t_store:.1f} s, index catch-up {time.perf_counter() - t0:.1f} s "
                  f"(loadavg {_load()})", flush=True)
        indexes = {b: open_memory_index(tmp / b, st) for b, st in stores.items()}
        load0 = _load()
        reads = _count_reads()
        out = recall_latency(stores["lmdb"], indexes["lmdb"], args.queries, random.Random(5),
                             also={"postgres": indexes["postgres"]})
        load1 = _load()
        for b, (wall, cpu) in (("lmdb", out["lexical"]), ("postgres", out["postgres"])):
            extra = (f"; {reads[0] / args.queries:.2f} round trips per recall, a round trip (SELECT 1) p50 "
                     f"{pct(_round_trips(stores[b]), 50):.2f} ms") if b == "postgres" else ""
            print(f"{b}: recall p50 {pct(wall, 50):.2f} ms, p95 {pct(wall, 95):.2f} ms, p50 CPU {pct(cpu, 50):.2f} ms"
                  f"{extra}", flush=True)
        print(f"interleaved, {args.queries} queries each; loadavg {load0} at the start, {load1} at the end")
    finally:
        for st in stores.values():
            st.close()
        server.close()


def _load() -> list[str]:
    return open("/proc/loadavg").read().split()[:3]


if __name__ == "__main__":
    main()
