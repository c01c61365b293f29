"""Recall at scale on both backends, the same run: part (c) of bench_fleet.py alone.

    nice .venv/bin/python bench/bench_fleet_recall.py --memories 100000 --queries 300

``--memories`` records (50 tenants x 20 users, a third of them events of
seven conversations) written to LMDB and to a throwaway PostgreSQL cluster
(tests/pgserver.py), then ``--queries`` recalls through ``Recaller`` on
each: LMDB's index is recall's SQLite file caught up from the change feed,
PostgreSQL's the tables written with the memories. Prints a line per
backend with the load average beside it; for PostgreSQL also the reads a
recall made (one round trip each) and what a round trip costs meanwhile.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import bench_fleet  # noqa: E402
import pgserver  # noqa: E402
from common import pct  # noqa: E402


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
    from ctxproxy.store.postgres import PGStore

    server = pgserver.start()
    if server is None:
        raise SystemExit(pgserver.HOW)
    server.prepare()
    tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-fleet-recall-"))
    try:
        for b in ("lmdb", "postgres"):
            data = tmp / b
            data.mkdir()
            store = (open_store(data / "store", map_size=1 << 31) if b == "lmdb"
                     else PGStore.open(server.new_database(), listen=False))
            try:
                reads = _count_reads() if b == "postgres" else None
                r = bench_fleet.recall_at(store, data, args.memories, args.queries)
                extra = (f"; {reads[0] / args.queries:.1f} round trips per recall, a round trip (SELECT 1) p50 "
                         f"{pct(_round_trips(store), 50):.2f} ms") if reads else ""
            finally:
                store.close()
            print(f"{b}: write all {r['store_s']:.1f} s, index catch-up {r['index_s']:.1f} s, recall p50 "
                  f"{pct(r['wall'], 50):.2f} ms, p95 {pct(r['wall'], 95):.2f} ms, p50 CPU {pct(r['cpu'], 50):.2f} ms"
                  f"{extra} (loadavg {open('/proc/loadavg').read().split()[:3]})", flush=True)
    finally:
        server.close()


if __name__ == "__main__":
    main()
