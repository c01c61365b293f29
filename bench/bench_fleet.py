"""The store on PostgreSQL against LMDB, side by side in one run (a benchmark, not a test).

    nice .venv/bin/python bench/bench_fleet.py                      # ~3 minutes, recall at 10K
    nice .venv/bin/python bench/bench_fleet.py --memories 100000    # recall at the target's 100K (~15 min)
    nice .venv/bin/python bench/bench_fleet.py --turns 200 --gate 20000 --agents 16 --agent-turns 50

PostgreSQL is a throwaway cluster started as tests/pgserver.py does (or the
server of ``CTXPROXY_TEST_DSN``); LMDB lives in a temp dir. Everything on
127.0.0.1, every loop bounded by the flags.

a. Added latency per turn: ``ctxproxy serve`` (default pipeline) on each
   backend in front of the scripted provider (its own process, answering
   each turn with the session's next tool call), one streamed Anthropic
   session whose every request carries the previous call's result, so the
   effect ledger writes ahead before forwarding. Direct, LMDB and
   PostgreSQL alternate turn by turn; added = proxy - direct, p50 / p95.
b. Memory gate writes/s: ``MemoryGate.write_many`` of clean statements
   (screening + one transaction per 1,000) on each backend.
c. Recall at ``--memories``: records spread over 50 tenants x 20 users,
   written to each backend, then ``--queries`` recalls (the filter's whole
   path). LMDB's index is recall's SQLite file, caught up from the change
   feed; PostgreSQL's is tables of the database, written with the memories.
d. Turns/s with two replicas on PostgreSQL: two ``ctxproxy serve``
   processes on one database, ``--agents`` concurrent sessions whose turns
   alternate between the replicas (each turn's ledger and checkpoint written
   by one, read by the other); one replica on the same database, and one on
   LMDB, for reference.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from bench_effects import SYSTEM, TOOLS, history, reply_for  # noqa: E402
from bench_recall_perf import VOCAB, recall_latency, records  # noqa: E402
from common import LoadMeter, append_results, pct, put_memories, section_head, start_serve, wait_up  # noqa: E402

from ctxproxy.proxy.ports import free_port  # noqa: E402

BACKENDS = ("lmdb", "postgres")


# -- processes ------------------------------------------------------------------------------------------


def start_provider(tmp: Path) -> tuple[subprocess.Popen, str]:
    """The scripted provider in a process of its own (this file with ``--provider PORT``)."""
    port = free_port()
    log = open(tmp / "provider.log", "wb")
    p = subprocess.Popen([sys.executable, __file__, "--provider", str(port)], stdout=subprocess.DEVNULL, stderr=log)
    return p, f"http://127.0.0.1:{port}"


def run_provider(port: int) -> None:
    from ctxproxy.proxy.scripted_provider import serve_forever

    serve_forever(reply_for, "127.0.0.1", port, record_limit=10)


def _store_toml(dsn: str | None) -> str:
    return f'[store]\nbackend = "postgres"\ndsn = "{dsn}"\n' if dsn else ""


def stop(procs) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


HEADERS = {"x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01", "content-type": "application/json"}


async def stream_turn(http: aiohttp.ClientSession, url: str, i: int, session: str) -> float:
    """Turn ``i`` of a session (its history holds i calls and their results), streamed; ms to the last byte."""
    body = orjson.dumps({"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True, "system": SYSTEM,
                         "tools": TOOLS, "messages": history(i)})
    t0 = time.perf_counter()
    async with http.post(url + "/v1/messages", data=body, headers={**HEADERS, "X-Ctx-Session": session}) as r:
        data = await r.read()
        if r.status != 200 or b"message_stop" not in data:
            raise SystemExit(f"{url}: turn {i} answered {r.status}: {data[:300]!r}")
    return (time.perf_counter() - t0) * 1000


# -- a. added latency per turn ------------------------------------------------------------------------------


async def added_latency(tmp: Path, upstream: str, dsn: str, turns: int, sessions: int) -> dict[str, list[float]]:
    procs, targets = [], {"direct": upstream}
    for name in BACKENDS:
        p, targets[name] = start_serve(tmp / "a", name, upstream, _store_toml(dsn if name == "postgres" else None))
        procs.append(p)
    try:
        async with aiohttp.ClientSession() as http:
            for p, name in zip(procs, BACKENDS):
                await wait_up(http, targets[name], p)
            lat: dict[str, list[float]] = {k: [] for k in targets}
            order = list(targets)
            for s in range(sessions):
                for i in range(turns + 1):
                    order = order[1:] + order[:1]  # rotate who goes first
                    for name in order:
                        ms = await stream_turn(http, targets[name], i, f"a-{s}-{name}")
                        if i >= 2:  # from the third turn on: a result to write ahead, the session warm
                            lat[name].append(ms)
    finally:
        stop(procs)
    return lat


# -- b. gate writes/s ----------------------------------------------------------------------------------------


def statements(n: int, rng: random.Random):
    head = VOCAB[:600]
    for i in range(n):
        yield {"statement": f"The {' '.join(rng.sample(head, rng.randint(4, 9)))} note number {i} holds.",
               "kind": "fact", "user": f"u{i % 20}"}


def gate_rate(store, n: int) -> tuple[float, int, str]:
    """(writes/s, stored, which screening): the default gate, rules only if its learned model will not load."""
    from ctxproxy.store.services.memory.gate import GateConfig, MemoryGate

    screening = "rules + learned model"
    gate = MemoryGate(store)
    try:
        gate.screen("probe statement for the learned model")
    except ValueError:  # a model file this code cannot read (e.g. being retrained in the work tree)
        screening = "rules only (the learned model would not load)"
        gate = MemoryGate(store, GateConfig(learned_signal=False))
    bodies = list(statements(n, random.Random(7)))
    t0 = time.perf_counter()
    out = gate.write_many("gate", bodies)
    wall = time.perf_counter() - t0
    stored = sum(1 for o in out if getattr(o, "refused", "x") is None)
    return n / wall, stored, screening


# -- c. recall at scale ------------------------------------------------------------------------------------------


def recall_at(store, data: Path, n: int, queries: int) -> dict:
    from ctxproxy.store.memory_index import open_memory_index

    t0 = time.perf_counter()
    put_memories(store, records(n, random.Random(1)))
    t_store = time.perf_counter() - t0
    index = open_memory_index(data, store)
    t0 = time.perf_counter()
    index.catch_up()
    t_index = time.perf_counter() - t0
    wall, cpu = recall_latency(store, index, queries, random.Random(5))["lexical"]
    return {"store_s": t_store, "index_s": t_index, "wall": wall, "cpu": cpu}


# -- d. turns/s with replicas --------------------------------------------------------------------------------------


async def throughput(tmp: Path, upstream: str, dsns: list[str | None], agents: int, turns: int) -> tuple[float, list]:
    procs, urls = [], []
    for k, dsn in enumerate(dsns):
        p, u = start_serve(tmp, f"r{k}", upstream, _store_toml(dsn))
        procs.append(p)
        urls.append(u)
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=agents + 4)) as http:
            for k, (p, u) in enumerate(zip(procs, urls)):
                await wait_up(http, u, p)
                await stream_turn(http, u, 0, f"warm-{k}")  # first-request costs (imports, pools) untimed
            ms: list[float] = []

            async def agent(a: int) -> None:
                for i in range(turns + 1):
                    ms.append(await stream_turn(http, urls[(a + i) % len(urls)], i, f"d-{a}"))

            t0 = time.perf_counter()
            await asyncio.gather(*(agent(a) for a in range(agents)))
            wall = time.perf_counter() - t0
    finally:
        stop(procs)
    return len(ms) / wall, ms


# -- main ---------------------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--provider", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--turns", type=int, default=60, help="turns per session in (a) (default 60)")
    ap.add_argument("--sessions", type=int, default=2, help="sessions in (a), one after another (default 2)")
    ap.add_argument("--gate", type=int, default=2000, help="statements through the gate per backend (default 2000)")
    ap.add_argument("--memories", type=int, default=10_000, help="memories per backend in (c) (default 10000; the targets are at 100000)")
    ap.add_argument("--queries", type=int, default=500, help="recalls per backend in (c) (default 500)")
    ap.add_argument("--agents", type=int, default=8, help="concurrent sessions in (d) (default 8)")
    ap.add_argument("--agent-turns", type=int, default=20, help="turns per session in (d) (default 20)")
    ap.add_argument("--no-append", action="store_true", help="print only, do not append to bench/RESULTS.md")
    args = ap.parse_args()
    if args.provider:
        return run_provider(args.provider)

    import pgserver

    from ctxproxy.store import open_store
    from ctxproxy.store.postgres import PGStore

    server = pgserver.start()
    if server is None:
        raise SystemExit(pgserver.HOW)
    server.prepare()
    tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-fleet-"))
    provider, upstream = start_provider(tmp)
    meter = LoadMeter(lambda: [provider.pid])
    out: list[str] = []
    try:
        asyncio.run(_wait_provider(upstream, provider))
        t_all = time.perf_counter()
        # a.
        lat = asyncio.run(added_latency(tmp, upstream, server.new_database(), args.turns, args.sessions))
        d = lat["direct"]
        added = {b: (pct(lat[b], 50) - pct(d, 50), pct(lat[b], 95) - pct(d, 95)) for b in BACKENDS}
        print("a done", added, file=sys.stderr)
        # b. and c.
        gate, rec = {}, {}
        for b in BACKENDS:
            data = tmp / f"mem-{b}"
            data.mkdir()
            store = (open_store(data / "store", map_size=1 << 30) if b == "lmdb"
                     else PGStore.open(server.new_database(), listen=False))
            try:
                gate[b] = gate_rate(store, args.gate)
                print("b", b, gate[b], file=sys.stderr)
                rec[b] = recall_at(store, data, args.memories, args.queries)
                print("c", b, pct(rec[b]["wall"], 50), file=sys.stderr)
            finally:
                store.close()
        # d.
        dsn = server.new_database()
        tput = {}
        for label, dsns in (("PostgreSQL, two replicas (turns alternate)", [dsn, dsn]),
                            ("PostgreSQL, one replica", [server.new_database()]),
                            ("LMDB, one replica", [None])):
            tput[label] = asyncio.run(throughput(tmp / f"d{len(tput)}", upstream, dsns, args.agents,
                                                 args.agent_turns))
            print("d", label, tput[label][0], file=sys.stderr)
        total = time.perf_counter() - t_all

        n_a = len(d)
        out.append(section_head("fleet: PostgreSQL against LMDB"))
        out.append(f"Throwaway PostgreSQL 15 cluster on 127.0.0.1 (tests/pgserver.py: fsync off, synchronous_commit "
                   f"on), LMDB in /tmp with fsync. {total:.0f} s in all. {meter.summary()}\n")
        out.append(f"**a. Added latency per turn** (`ctxproxy serve`, default pipeline, in front of the scripted "
                   f"provider in its own process; {args.sessions} streamed Anthropic sessions of {args.turns} tool "
                   f"calls, each request carrying the previous call's result so the effect ledger writes ahead; "
                   f"direct / LMDB / PostgreSQL alternating; {n_a} turns each):\n")
        out.append("| target | p50 ms | p95 ms | added p50 ms | added p95 ms |")
        out.append("|---|---:|---:|---:|---:|")
        out.append(f"| direct | {pct(d, 50):.2f} | {pct(d, 95):.2f} | | |")
        for b in BACKENDS:
            v = lat[b]
            out.append(f"| ctxproxy on {b} | {pct(v, 50):.2f} | {pct(v, 95):.2f} | {added[b][0]:.2f} | "
                       f"{added[b][1]:.2f} |")
        ratio = added["postgres"][0] / added["lmdb"][0] if added["lmdb"][0] > 0 else float("nan")
        out.append(f"\nPostgreSQL / LMDB added p50: **{ratio:.2f}x** (target <= 2x: "
                   f"{'met' if ratio <= 2 else 'not met'}).\n")
        out.append(f"**b. Memory gate** (`MemoryGate.write_many`, {args.gate} clean statements, one transaction "
                   f"per 1,000; screening: {gate['lmdb'][2]}): LMDB {gate['lmdb'][0]:,.0f} writes/s ({gate['lmdb'][1]} stored), PostgreSQL "
                   f"{gate['postgres'][0]:,.0f} writes/s ({gate['postgres'][1]} stored).\n")
        out.append(f"**c. Recall at {args.memories:,} memories** ({args.queries} recalls, k=8, the filter's whole "
                   f"path; LMDB: recall's SQLite index on the host, caught up from the change feed; PostgreSQL: "
                   f"the index in the database, written with the memories, so its catch-up is nothing):\n")
        out.append("| backend | write all, s | index catch-up, s | recall p50 ms | p95 ms | p50 CPU ms |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for b in BACKENDS:
            r = rec[b]
            out.append(f"| {b} | {r['store_s']:.1f} | {r['index_s']:.1f} | {pct(r['wall'], 50):.2f} | "
                       f"{pct(r['wall'], 95):.2f} | {pct(r['cpu'], 50):.2f} |")
        out.append(f"\nTarget recall p50 <= 10 ms: LMDB {'met' if pct(rec['lmdb']['wall'], 50) <= 10 else 'not met'}, "
                   f"PostgreSQL {'met' if pct(rec['postgres']['wall'], 50) <= 10 else 'not met'}.\n")
        out.append(f"**d. Throughput** ({args.agents} concurrent streamed sessions of {args.agent_turns + 1} turns, "
                   f"default pipeline, one scripted provider process):\n")
        out.append("| setup | turns/s | turn p50 ms | turn p95 ms |")
        out.append("|---|---:|---:|---:|")
        for label, (rate, ms) in tput.items():
            out.append(f"| {label} | {rate:.1f} | {pct(ms, 50):.2f} | {pct(ms, 95):.2f} |")
        text = "\n".join(out) + "\n"
        print(text)
        if not args.no_append:
            append_results(text)
    finally:
        stop([provider])
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)


async def _wait_provider(url: str, proc: subprocess.Popen) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(400):
            if proc.poll() is not None:
                raise SystemExit("the scripted provider exited")
            try:
                async with http.get(url + "/nothing") as r:
                    await r.read()
                    return
            except aiohttp.ClientError:
                await asyncio.sleep(0.05)
    raise SystemExit("the scripted provider did not come up")


if __name__ == "__main__":
    main()
