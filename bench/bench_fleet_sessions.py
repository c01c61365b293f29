"""Session index on PostgreSQL against the embedded SQLite index, in one run.

The same turns (``--turns`` of one tenant's users, in session trees of
``--depth`` sessions, beside another tenant's as many) go into both indexes;
then ``--queries`` searches of a tree, interleaved: each backend's wall time,
whether both returned the same candidates and statistics and the same top 5
through ``Recaller``, and the round trips a search and a writer group's
index rows cost on PostgreSQL. Needs a throwaway cluster (tests/pgserver.py).

    nice .venv/bin/python bench/bench_fleet_sessions.py [--turns 10000] [--queries 200]
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
from common import pct  # noqa: E402

WORDS = ("staging cluster deploy kafka consumer lag paris tokyo budget invoice migration schema rollback canary "
         "pager oncall retro review latency postgres vacuum replica lease kestrel runbook wiki alert disk quota "
         "tests failed merged branch release train frankfurt region").split()


def turns(tenant: str, n: int, depth: int, rnd: random.Random) -> tuple[list, list]:
    from ctxproxy.store.session_index import TurnTexts

    sessions, rows = [], []
    for i in range(max(1, n // 20)):  # 20 turns a session
        user = f"u{i % 50}"
        parent = sessions[-1][0] if i % depth and sessions and sessions[-1][2] == user else ""
        sessions.append((f"s{i}", parent, user))
    for t in range(n):
        s, _, user = sessions[t % len(sessions)]
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(4, 30)))
        if t % 11 == 0:
            text += f" ERR_CONN_RESET at KafkaConsumerLoop{t % 7}"
        rows.append(TurnTexts(tenant, s, f"t{t}", (("user", text), ("assistant", " ".join(rnd.sample(WORDS, 6)))),
                              user, "", "", 1_760_000_000.0 + t))
    return sessions, rows


def fill(index, sessions, rows) -> float:
    t0 = time.perf_counter()
    for s, parent, user in sessions:
        index.note_session(rows[0].tenant, s, user, "", parent, now=1_760_000_000.0)
    for i in range(0, len(rows), 500):
        index.add_turns(rows[i:i + 500])
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=4, help="sessions in one tree")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    from ctxproxy.store import open_store
    from ctxproxy.store.memory_index import MemoryIndex
    from ctxproxy.store.memory_terms import query_terms
    from ctxproxy.store.postgres import PGStore
    from ctxproxy.store.postgres.pool import Tx
    from ctxproxy.store.services.recall.query import substrings_of
    from ctxproxy.store.services.recall.recaller import Recaller
    from ctxproxy.store.session_index import SessionIndex, TurnTexts
    from ctxproxy.store.sqlite_index import Viewer

    server = pgserver.start()
    if server is None:
        raise SystemExit(pgserver.HOW)
    server.prepare()
    tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-fleet-sessions-"))
    lm = open_store(tmp / "store", map_size=1 << 28)
    pg = PGStore.open(server.new_database(), listen=False)
    trips = [0]
    run = Tx._run

    def counted(tx, statement):
        trips[0] += 1
        return run(tx, statement)

    Tx._run = counted
    try:
        sqlite, pgi = SessionIndex(tmp / "sessions.db"), pg.session_index()
        rnd = random.Random(1)
        sessions, rows = turns("acme", args.turns, args.depth, rnd)
        other = turns("globex", args.turns, args.depth, random.Random(2))
        for name, index in (("sqlite", sqlite), ("postgres", pgi)):
            took = fill(index, sessions, rows) + fill(index, *other)
            print(f"{name}: indexed {2 * args.turns} turns in {took:.1f} s (loadavg {_load()})", flush=True)
        # a writer group's records with and without a turn's index rows: the round trips it costs
        row = TurnTexts("acme", "s0", "extra", (("user", "one more turn about kafka"), ("assistant", "ok")), "u0")
        cost = []
        for with_index in (False, True):
            trips[0] = 0
            with pg.batch() as b:
                b.manifests.put("acme", f"m-{with_index}", {"m": 1}, session="s0")
                if with_index:
                    pgi.add_turns([row], batch=b)
            cost.append(trips[0])
        memories = MemoryIndex.open(tmp, lm)
        wall: dict[str, list[float]] = {"sqlite": [], "postgres": []}
        same = top_same = 0
        reads = 0
        load0 = _load()
        for q in range(args.queries):
            s, _, user = sessions[rnd.randrange(len(sessions))]
            text = " ".join(rnd.sample(WORDS, 3)) + (" ERR_CONN_RESET" if q % 5 == 0 else "")
            words, subs = query_terms(text), substrings_of(text)
            out = {}
            for name, index in (("sqlite", sqlite), ("postgres", pgi))[::1 if q % 2 else -1]:
                trips[0] = 0
                t0 = time.perf_counter()
                tree = index.tree("acme", s, user)
                found = index.search(Viewer("acme", user=user), words, subs, sessions=tree)
                wall[name].append((time.perf_counter() - t0) * 1000)
                if name == "postgres":
                    reads += trips[0]
                out[name] = (tree, found)
            same += out["sqlite"] == out["postgres"]
            tops = [[(x.cand.memory_id, round(x.score, 9)) for x in
                     Recaller(memories, index).recall(Viewer("acme", user=user, sessions=out["sqlite"][0]), text,
                                                      k=5, sessions=out["sqlite"][0], memories=False).items]
                    for index in (sqlite, pgi)]
            top_same += tops[0] == tops[1]
        load1 = _load()
        for name in ("sqlite", "postgres"):
            print(f"{name}: tree + search p50 {pct(wall[name], 50):.2f} ms, p95 {pct(wall[name], 95):.2f} ms",
                  flush=True)
        print(f"postgres: {reads / args.queries:.2f} round trips per tree + search; a writer group's records "
              f"{cost[0]} round trips, with a turn's index rows {cost[1]}")
        print(f"same tree, candidates and statistics: {same}/{args.queries}; same top 5 and scores: "
              f"{top_same}/{args.queries}; interleaved; loadavg {load0} at the start, {load1} at the end")
        sqlite.close()
    finally:
        Tx._run = run
        lm.close()
        pg.close()
        server.close()


def _load() -> list[str]:
    return open("/proc/loadavg").read().split()[:3]


if __name__ == "__main__":
    main()
