"""What one LMDB commit costs the thread that makes it, by how it reaches the disk,
alternated in rounds on one directory's filesystem:

- ``meta-dsync``: LMDB's default (``metasync=True``): the data pages flushed, then the
  meta page written through a second, ``O_DSYNC`` descriptor (the store before lazy commits);
- ``durable``: ``metasync=False`` and ``env.sync(True)`` after the commit: the store's
  commit that returns on disk now (``LMDBEnv.commit``);
- ``lazy``: ``metasync=False`` alone: the data pages flushed, the meta page left for the
  next flush (``LMDBEnv.commit(durable=False)``: the writer's groups of manifests).

    python bench/bench_lmdb_commit.py [--commits 150] [--puts 20] [--rounds 4] [--dir /tmp]

Per commit: the thread's CPU (user + system, ``RUSAGE_THREAD``) and wall time, each
round and the medians. Writes only temporary directories under ``--dir``.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time

import lmdb

MODES = ("meta-dsync", "durable", "lazy")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return r.ru_utime + r.ru_stime


def run(mode: str, commits: int, puts: int, where: str) -> tuple[float, float]:
    d = tempfile.mkdtemp(dir=where, prefix="lmdb-commit-")
    try:
        env = lmdb.open(d, map_size=1 << 28, sync=True, metasync=mode == "meta-dsync")
        value, k = os.urandom(1500), 0  # about a manifest's record

        def one() -> None:
            nonlocal k
            with env.begin(write=True) as txn:
                for _ in range(puts):
                    txn.put(b"k%09d" % k, value)
                    k += 1
            if mode == "durable":
                env.sync(True)

        for _ in range(10):
            one()
        c0, w0 = cpu(), time.perf_counter()
        for _ in range(commits):
            one()
        out = (cpu() - c0) / commits * 1e6, (time.perf_counter() - w0) / commits * 1e6
        env.close()
        return out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, default=150)
    ap.add_argument("--puts", type=int, default=20, help="records a commit (1.5 KB each)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    res: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
    for r in range(args.rounds):
        for m in MODES:
            res[m].append(run(m, args.commits, args.puts, args.dir))
        print(f"round {r}: " + ", ".join(f"{m} {res[m][-1][0]:.0f} us CPU / {res[m][-1][1]:.0f} us wall"
                                         for m in MODES), flush=True)
    for m, v in res.items():
        print(f"median {m}: {statistics.median(c for c, _ in v):.0f} us CPU, "
              f"{statistics.median(w for _, w in v):.0f} us wall a commit")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
