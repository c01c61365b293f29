"""Recall latency at scale, per-turn added latency, and memory (a benchmark, not a test).

    nice .venv/bin/python bench/bench_recall_perf.py [--memories 100000] [--queries 2000] [--turns 300] [--embeddings]

1. Build: ``--memories`` MemoryRecords spread over 50 tenants × 20 users
   (80% user-bound, 20% tenant-wide; a third are events in conversation
   threads) written to a real LMDB store in batches, then the recall index
   catches up from the change feed (timed: records/s).
2. Recall: ``--queries`` recalls as random (tenant, user, session) viewers —
   the whole path the filter takes: change-feed check, visibility in the
   WHERE clause, BM25, decay, floor, MMR. p50 / p95 / p99 in ms. Beside it,
   a tool-result turn: the same recall and the second one that reads a
   40-line log's rare identifiers (``recall_output``; a ``host:port`` whose
   number one memory of the caller's tenant holds, so it runs in full), and
   the same recall without word families (``family_weight = 0``) and with
   the learned judge (``judge = true``).
3. Per turn: the same Anthropic request through three proxies in this one
   process, in front of the scripted provider: the no-op aiohttp proxy,
   ctxproxy with its default pipeline minus recall, and ctxproxy with it
   (10K memories in the caller's tenant, over 20 users). Median wall time per request and
   the difference.
4. RSS of this process (VmRSS, VmHWM) after the build and the recalls.

``--embeddings``: the extra on (``embeddings = true``) in all of it — the
build also embeds every memory into the vector index (timed), every query
is recalled both lexical-only and with embeddings (in random order, same
process: a fair comparison on a busy machine), and the proxy with recall
runs with the extra on (its vectors caught up before the turns are timed).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import put_memories

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("deploy release staging database cluster node pipeline build cache token quota disk memory network "
         "latency timeout retry backup restore schema migration index query shard replica leader follower "
         "kafka redis postgres mysql nginx docker kubernetes helm terraform ansible grafana prometheus alert "
         "incident outage rollback canary blue green feature flag experiment metric dashboard budget invoice "
         "customer ticket refund support escalation onboarding contract renewal pricing discount vendor "
         "laptop monitor keyboard office travel visa hotel flight meeting standup retro planning roadmap "
         "design review approval security audit compliance gdpr password rotation certificate expiry").split()


# The named words first (the Zipf head), then made-up ones: a vocabulary of 3,000.
VOCAB = WORDS + [f"{a}{b}{c}" for a in ("ka", "lo", "mi", "nu", "pe", "ro", "su", "ti", "vo", "ze")
                 for b in ("ban", "cor", "dil", "fen", "gor", "hul", "jin", "kem", "lar", "mos")
                 for c in ("a", "e", "i", "o", "u", "an", "en", "in", "on", "un", "ar", "er", "ir", "or",
                           "ur", "as", "es", "is", "os", "us", "at", "et", "it", "ot", "ut", "ax", "ex",
                           "ix", "ox", "ux")][: 3000 - len(WORDS)]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def rss() -> tuple[float, float]:
    cur = peak = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            cur = int(line.split()[1]) / 1024
        elif line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return cur, peak


def records(n: int, rng: random.Random):
    from ctxproxy.store.memory_records import MemoryRecord, new_memory_id

    vocab = VOCAB
    weights = [1.0 / (i + 1) for i in range(len(vocab))]  # Zipf: a few words in many memories
    now = time.time()
    for i in range(n):
        tenant, user = f"t{i % 50}", f"u{(i // 50) % 20}"
        text = " ".join(rng.choices(vocab, weights, k=rng.randint(8, 16)))
        event = i % 3 == 0
        yield MemoryRecord(memory_id=new_memory_id(), tenant=tenant, statement=f"{text} #{i}.",
                           kind="event" if event else rng.choice(("fact", "failure")), origin="user",
                           status="active", user=user if i % 5 else "",
                           evidence_sessions=(f"s{(i // 1000) % 7}",) if event else (),
                           observed_at=now - rng.uniform(0, 200) * 86400, created_at=now)


def build(data: Path, n: int, rng: random.Random, embeddings: bool = False):
    from ctxproxy.store import open_store
    from ctxproxy.store.memory_index import MemoryIndex
    from ctxproxy.store.vector_index import VectorIndex

    store = open_store(data / "store", map_size=1 << 30)
    t0 = time.perf_counter()
    put_memories(store, records(n, rng))
    t_store = time.perf_counter() - t0
    index = MemoryIndex.open(data, store)
    t0 = time.perf_counter()
    index.catch_up()
    t_index = time.perf_counter() - t0
    vectors, t_vectors = None, 0.0
    if embeddings:
        from ctxproxy.store.services.recall.embeddings import shared_embedder

        vectors = VectorIndex.open(data, store)
        vectors.use(shared_embedder())
        t0 = time.perf_counter()
        vectors.catch_up()
        t_vectors = time.perf_counter() - t0
    return store, index, vectors, t_store, t_index, t_vectors


OUTPUT_TURN = "lexical, a tool-result turn (and its output's recall)"


def recall_latency(store, index, queries: int, rng: random.Random, vectors=None, also=None,
                   n_memories: int = 0) -> dict:
    """(wall ms, CPU ms) per recall for each recaller, all on the same queries in random order:
    "lexical" over ``index``, "embeddings" with ``vectors``, and one per name of ``also`` (another
    store's memory index); with ``n_memories`` (the store's count), a tool-result turn too."""
    from ctxproxy.store.services.recall.hybrid import VectorRecall
    from ctxproxy.store.services.recall.rank import RankConfig
    from ctxproxy.store.services.recall.recaller import Recaller
    from ctxproxy.store.sqlite_index import Viewer

    recallers = {"lexical": Recaller(index), **{name: Recaller(ix) for name, ix in (also or {}).items()}}
    # a word's other forms (``family_weight``) cost one more read of the index's counts: measured beside
    recallers["lexical, no word families"] = Recaller(index, config=RankConfig(family_weight=0.0))
    # the learned judge (``judge = true``): its features over the pool and a dot product each, measured beside
    recallers["lexical, judge"] = Recaller(index, config=RankConfig(judge=True))
    # the floor's options off by default (a told story's memory, the project's broad words), measured beside
    recallers["lexical, remarks+broad"] = Recaller(index, config=RankConfig(remark_words=3, broad_share=0.25))
    # ...and with the software requests that name nothing of the project (``software_asks``)
    recallers["lexical, software+remarks+broad"] = Recaller(
        index, config=RankConfig(software_asks=True, remark_words=3, broad_share=0.25))
    # ...and a memory adding no word of the message to a more distinct one's not offered (``novelty``)
    recallers["lexical, novelty"] = Recaller(index, config=RankConfig(novelty=True))
    # ...and the four by-author options with what a message goes back to (``resumed``), one recaller
    recallers["lexical, four options+resumed"] = Recaller(index, config=RankConfig(
        software_asks=True, remark_words=3, remark_chance=2.5, broad_share=0.25, novelty=True, resumed=True))
    if vectors is not None:
        cfg = RankConfig(embeddings=True)
        recallers["embeddings"] = Recaller(index, config=cfg, vectors=VectorRecall(vectors, index, vectors.embedder, cfg))
    # a tool-result turn: the same recall, then the second one that reads the tool's output (its rare
    # identifiers: here numbers that one memory of the caller's tenant holds, so it runs in full)
    if n_memories:
        recallers[OUTPUT_TURN] = recallers["lexical"]
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in recallers}
    for _ in range(queries):
        t = rng.randrange(50)
        viewer = Viewer(tenant=f"t{t}", user=f"u{rng.randrange(20)}",
                        sessions=(f"sess{rng.randrange(100)}",))
        query = "why did the " + " ".join(rng.sample(VOCAB[:600], rng.randint(2, 5))) + " fail?"
        output = "".join(f"2026-12-01T07:{m:02d}:11Z ERROR {rng.choice(VOCAB[:600])}_worker: connect to "
                         f"db:{rng.randrange(t, max(n_memories, 51), 50)} refused\n" for m in range(40))
        for name in rng.sample(sorted(recallers), len(recallers)):  # both on the same query, in random order
            t0, c0 = time.perf_counter(), time.thread_time()
            recallers[name].recall(viewer, query, k=8)
            if name == OUTPUT_TURN:
                recallers[name].recall_output(viewer, query, output)
            out[name][0].append((time.perf_counter() - t0) * 1000)
            out[name][1].append((time.thread_time() - c0) * 1000)  # this thread's CPU: what others cannot inflate
    return out


async def per_turn(turns: int, rng: random.Random, embeddings: bool = False) -> dict[str, float]:
    import aiohttp
    from aiohttp import web

    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "tests"))
    import noop_proxy
    from memhelp import put_memory

    from ctxproxy.config import load_config
    from ctxproxy.proxy.scripted_provider import FakeProvider
    from ctxproxy.proxy.edge.server import APP_STATE, make_app

    async def serve(app):
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"

    results: dict[str, float] = {}
    async with FakeProvider() as fake:
        with tempfile.TemporaryDirectory() as tmp:
            runners, urls = [], {}
            r, urls["noop"] = await serve(noop_proxy.make_app(fake.url))
            runners.append(r)
            default = load_config(None).pipeline.request  # "off": the default pipeline, recall taken out
            off = "request = [" + ", ".join(f'"{f}"' for f in default if f != "recall") + "]"
            for name, toml in (("ctxproxy, recall off", off), ("ctxproxy, recall on", "")):
                path = Path(tmp) / f"{len(runners)}.toml"
                text = f"[pipeline]\n{toml}\n" if toml else ""
                if embeddings:
                    text += "[filters.recall.rank]\nembeddings = true\n"
                path.write_text(text)
                cfg = load_config(path, port=0, data_dir=str(Path(tmp) / f"d{len(runners)}"),
                                  anthropic_upstream=fake.url, openai_upstream=fake.url)
                app = make_app(cfg)
                r, urls[name] = await serve(app)
                runners.append(r)
                store = app[APP_STATE].services["store"]
                with store.batch() as b:  # 10K memories in the caller's tenant
                    for rec in records(10_000, random.Random(3)):
                        b.memories.put(rec.evolve(tenant="acme", user=rec.user.replace("u0", "alice")))
                put_memory(store, "acme", "The staging database listens on port 6543.", kind="fact", user="alice")
                rs = app[APP_STATE].services.get("recall")
                if rs is not None and rs.vectors is not None:
                    rs.vectors.catch_up()  # the background indexer's work, done before timing

            async with aiohttp.ClientSession() as http:
                times: dict[str, list[float]] = {k: [] for k in urls}
                for i in range(turns + 20):
                    for name in rng.sample(sorted(urls), len(urls)):  # random order per round
                        # one session (its memory snapshot frozen once), new user text every turn
                        hdrs = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01",
                                "X-Ctx-Tenant": "acme", "X-Ctx-User": "alice", "X-Ctx-Session": "bench"}
                        body = {"model": "claude-test", "max_tokens": 16, "messages": [
                            {"role": "user", "content": f"which port does the staging database use? ({i})"}]}
                        t0 = time.perf_counter()
                        async with http.post(urls[name] + "/v1/messages", json=body, headers=hdrs) as resp:
                            await resp.read()
                            assert resp.status == 200, (name, resp.status)
                        if i >= 20:  # warm-up rounds not counted
                            times[name].append((time.perf_counter() - t0) * 1000)
            for name, ts in times.items():
                results[name] = statistics.median(ts)
            for r in runners:
                await r.cleanup()
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--embeddings", action="store_true", help="the embeddings extra on")
    args = ap.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        store, index, vectors, t_store, t_index, t_vectors = build(Path(tmp), args.memories, rng, args.embeddings)
        after_build = rss()
        load0 = os.getloadavg()[0]
        runs = recall_latency(store, index, args.queries, rng, vectors, n_memories=args.memories)
        load1 = os.getloadavg()[0]
        after = rss()
        index.close()
        if vectors is not None:
            vectors.close()
        store.close()
    print(f"build: {args.memories} memories into LMDB in {t_store:.1f} s; index caught up in {t_index:.1f} s "
          f"({args.memories / t_index:.0f} records/s)")
    if args.embeddings:
        print(f"embeddings on: vector index caught up in {t_vectors:.1f} s ({args.memories / t_vectors:.0f} records/s)")
    for name, (lat, cpu) in runs.items():
        print(f"recall ({name}) over {args.memories} memories, 50 tenants x 20 users, {args.queries} queries: "
              f"wall p50 {pct(lat, 0.5):.2f} ms  p95 {pct(lat, 0.95):.2f} ms  p99 {pct(lat, 0.99):.2f} ms; "
              f"CPU p50 {pct(cpu, 0.5):.2f} ms  p95 {pct(cpu, 0.95):.2f} ms  p99 {pct(cpu, 0.99):.2f} ms")
    print(f"(load average {load0:.1f} -> {load1:.1f} on {os.cpu_count()} CPUs)")
    print(f"RSS after build {after_build[0]:.0f} MB, after recalls {after[0]:.0f} MB (peak {after[1]:.0f} MB)")
    if args.turns <= 0:
        return 0
    turn = asyncio.run(per_turn(args.turns, rng, args.embeddings))
    for name, ms in turn.items():
        print(f"per turn, median of {args.turns}: {name:<22} {ms:.2f} ms")
    on, off = turn["ctxproxy, recall on"], turn["ctxproxy, recall off"]
    print(f"recall adds {on - off:.2f} ms per turn (10K memories in the tenant); noop {turn['noop']:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
