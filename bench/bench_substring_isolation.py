"""Substring search beside a large tenant: the session index and the memory
index, each holding a large tenant whose every row contains the substring
another tenant looks for, plus that small tenant's own few rows.

    python bench/bench_substring_isolation.py [--turns 100000] [--memories 20000]

Prints the p50 / max of 30 searches for the small tenant (its cost should not
depend on the large one) and for the large tenant itself. A benchmark, not a
test; everything lives in a temporary directory.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from memhelp import put_memory  # noqa: E402

from ctxproxy.store import open_store  # noqa: E402
from ctxproxy.store.memory_index import MemoryIndex  # noqa: E402
from ctxproxy.store.session_index import SessionIndex, TurnTexts  # noqa: E402
from ctxproxy.store.sqlite_index import Viewer  # noqa: E402


def timed(search, n: int = 30) -> tuple[int, float, float]:
    times, found = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        found = len(search())
        times.append((time.perf_counter() - t0) * 1e3)
    return found, statistics.median(times), max(times)


def sessions(d: Path, turns: int) -> None:
    index = SessionIndex(d / "sessions.db")
    rows = [TurnTexts("bigcorp", f"s{i % 500}", f"t{i}", (("user", f"request {i} failed with ERR_CONN_RESET at hop "
                                                                   f"{i % 97}"),), "u0") for i in range(turns)]
    for k in range(0, len(rows), 5000):
        index.add_turns(rows[k:k + 5000])
    index.add_turns([TurnTexts("small", "s1", f"t{i}", (("user", f"small tenant note {i} ERR_CONN_RESET"),), "u0")
                     for i in range(10)])
    small = Viewer("small", "u0", sessions=("s1",))
    big = Viewer("bigcorp", "u0", sessions=tuple(f"s{i}" for i in range(200)))
    for name, v in (("small tenant", small), ("large tenant", big)):
        found, p50, top = timed(lambda: index.search(v, [], ["CONN_RES"], sessions=v.sessions)[0])
        print(f"session index, {turns} turns of the large tenant, {name}: {found} found, p50 {p50:.2f} ms, "
              f"max {top:.2f} ms")
    index.close()


def memories(d: Path, n: int) -> None:
    store = open_store(d / "store")
    try:
        for i in range(n):
            put_memory(store, "bigcorp", f"Service {i} retries in KafkaConsumerLoop after {i % 97} ms.", kind="fact",
                       user="u0")
        for i in range(10):
            put_memory(store, "small", f"Our worker {i} wraps KafkaConsumerLoop too.", kind="fact", user="u0")
        index = MemoryIndex.open(d, store)
        index.catch_up()
        for name, tenant in (("small tenant", "small"), ("large tenant", "bigcorp")):
            found, p50, top = timed(lambda: index.search(Viewer(tenant, "u0"), [], ["ConsumerLoop"])[0])
            print(f"memory index, {n} memories of the large tenant, {name}: {found} found, p50 {p50:.2f} ms, "
                  f"max {top:.2f} ms")
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--memories", type=int, default=20_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        sessions(Path(d), args.turns)
        memories(Path(d), args.memories)


if __name__ == "__main__":
    main()
