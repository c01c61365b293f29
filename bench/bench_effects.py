"""Effect ledger benchmark: write-ahead latency per turn, its share of the
proxy's added latency, ledger size and checkpoint tokens for a long session.

    python bench/bench_effects.py              # 200 tool calls, ~1 minute
    python bench/bench_effects.py --turns 50   # smoke run

Everything runs on 127.0.0.1; every loop is bounded by ``--turns``.

1. Filter level (in process, LMDB on disk under ``--data-dir``, fsync on):
   one agent session of N tool calls (a realistic mix: 60 % side-effecting
   Bash / Edit / Write, 40 % read-only Read / Grep / ``git status``), each
   result returned in the next request with the whole history, as agents
   do. Per turn: the effects request hook (match results, commit the
   write-ahead batch) and the response-end hook (record the new call), p50 /
   p99 / max, and whether it grows with the history. Then the client
   compacts: the checkpoint's size in tokens (raw, and as ``inject`` places
   it within the default budget), and the ledger's size (records, bytes,
   LMDB pages).

2. Over HTTP (real ``ctxproxy serve`` subprocesses in front of the fake
   provider): the same session sent directly, through ctxproxy with
   ``identify, inject`` and through ctxproxy with ``identify, effects,
   inject``, the three targets alternating turn by turn. Added latency =
   proxy - direct (p50 / p99); the effects share = (with - without) / with's
   added latency.

3. Under concurrency (``--sessions`` agents at once, ``--concurrent-turns``
   tool turns each, every turn a write-ahead): turns per second and turn
   latency through ctxproxy with ``identify, effects, inject``, while a probe
   asks ``/ctx/healthz`` every 2 ms. The probe's latency shows whether the
   event loop waits for the disk: write-aheads commit on the store's writer
   thread, and those queued together share one fsync.
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from common import start_serve, wait_up  # noqa: E402

from ctxproxy.proxy.scripted_provider import FakeProviderThread, Reply  # noqa: E402

from ctxproxy.filters import Identity, Pipeline, Turn  # noqa: E402
from ctxproxy.filters.effects.filter import EffectsConfig, EffectsFilter  # noqa: E402
from ctxproxy.filters.inject.filter import InjectConfig, allocate  # noqa: E402
from ctxproxy.filters.segments import offered  # noqa: E402
from ctxproxy.filters.tokens import TokenCounter  # noqa: E402
from ctxproxy.proxy.adapters import ADAPTERS  # noqa: E402
from ctxproxy.store import open_store  # noqa: E402

SYSTEM = ("You are a coding agent working in a Python repository. Use the tools to read and edit files, "
          "run the tests after every change, and open a pull request when done. ") * 4
TOOLS = [{"name": n, "description": f"The {n} tool.", "input_schema": {"type": "object"}}
         for n in ("Bash", "Read", "Edit", "Write", "Grep")]
FILE_TEXT = "\n".join(f"{i:4d}  def handler_{i}(request, ctx):  return ctx.get('k{i}')" for i in range(40))


def call_for(i: int) -> tuple[str, dict, str]:
    """(tool, arguments, result) of the i-th call of the session."""
    kind = i % 10
    if kind in (0, 5):
        return "Read", {"file_path": f"src/app/mod_{i}.py"}, FILE_TEXT
    if kind == 1:
        return "Grep", {"pattern": f"handler_{i}", "path": "src"}, f"src/app/mod_{i}.py:{i}: def handler_{i}"
    if kind == 2:
        return "Bash", {"command": "git status --short"}, " M src/app/config.py\n?? tests/test_new.py"
    if kind == 3:
        return "Edit", {"file_path": f"src/app/mod_{i}.py", "old_string": f"k{i}", "new_string": f"key_{i}"}, \
            f"The file src/app/mod_{i}.py has been updated."
    if kind == 4:
        return "Bash", {"command": f"pytest -q tests/test_mod_{i}.py"}, f"{i % 7 + 3} passed in 0.{i % 9}1s"
    if kind == 6:
        return "Write", {"file_path": f"tests/test_mod_{i}.py", "content": FILE_TEXT[: 300 + i]}, \
            f"File created successfully at: tests/test_mod_{i}.py"
    if kind == 7:
        return "Bash", {"command": f"git commit -am 'step {i}'"}, f"[fix-loader {i:07x}] step {i}\n 1 file changed"
    if kind == 8:
        return "Bash", {"command": f"gh pr comment 4821 --body 'progress {i}'"}, \
            f"https://github.com/acme/app/pull/4821#issuecomment-{900000 + i}"
    return "Bash", {"command": f"curl -X POST https://deploy.example/api/jobs -d step={i}"}, \
        f'{{"id": "job_{i:05d}", "status": "queued", "url": "https://deploy.example/jobs/{i}"}}'


def history(n: int) -> list:
    """The Anthropic messages after n completed calls, ending with the n-th result."""
    msgs: list = [{"role": "user", "content": "Fix the loader, test it, and open a PR."}]
    for i in range(n):
        tool, args, result = call_for(i)
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"Step {i}."},
                                                      {"type": "tool_use", "id": f"toolu_{i:04d}", "name": tool,
                                                       "input": args}]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i:04d}",
                                                  "content": result}]})
    return msgs


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


# -- 1. filter level ----------------------------------------------------------------------


def filter_bench(turns: int, data_dir: Path) -> dict:
    tokens = TokenCounter()
    store = open_store(data_dir / "store")
    f = EffectsFilter(EffectsConfig(), store)
    pipe = Pipeline([f])  # commits the filter's write-ahead, as the proxy does
    req_ms, req_cpu, end_ms, sizes = [], [], [], []
    adapter = ADAPTERS["anthropic"]
    try:
        for i in range(turns + 1):
            body = {"model": "m", "max_tokens": 100, "system": SYSTEM, "tools": TOOLS, "messages": history(i)}
            raw = orjson.dumps(body)
            sizes.append(len(raw))
            turn = Turn(api="anthropic", route="r", path="/v1/messages", headers={},
                        request=adapter.parse_request(raw), tokens=tokens, services={"store": store})
            turn.identity = Identity(tenant="bench", session="bench-session", task="bench-session")
            t0, c0 = time.perf_counter(), time.process_time()
            pipe.run_request(turn)
            req_ms.append((time.perf_counter() - t0) * 1000)
            req_cpu.append((time.process_time() - c0) * 1000)
            if i == turns:
                break
            tool, args, _ = call_for(i)
            resp = adapter.parse_response(orjson.dumps({"id": f"msg_{i}", "type": "message", "role": "assistant",
                                                        "content": [{"type": "tool_use", "id": f"toolu_{i:04d}",
                                                                     "name": tool, "input": args}]}))
            t0 = time.perf_counter()
            f.on_response(turn, resp)
            f.on_response_end(turn)
            end_ms.append((time.perf_counter() - t0) * 1000)
            f.flush()  # the write itself runs on the writer thread; do not overlap it with the next turn
        # the client compacts: one summary message
        body = {"model": "m", "max_tokens": 100, "system": SYSTEM, "tools": TOOLS, "messages": [
            {"role": "user", "content": "Summary of the work so far: loader fixed, tests added, PR 4821 open. "
                                        "Continue with the release."}]}
        turn = Turn(api="anthropic", route="r", path="/v1/messages", headers={},
                    request=adapter.parse_request(orjson.dumps(body)), tokens=tokens, services={"store": store})
        turn.identity = Identity(tenant="bench", session="bench-session", task="bench-session")
        t0 = time.perf_counter()
        pipe.run_request(turn)
        compact_ms = (time.perf_counter() - t0) * 1000
        after_ms = []  # the turns after it: the checkpoint is offered on every one
        for _ in range(30):
            again = Turn(api="anthropic", route="r", path="/v1/messages", headers={},
                         request=adapter.parse_request(orjson.dumps(body)), tokens=tokens, services={"store": store})
            again.identity = turn.identity
            t0 = time.perf_counter()
            pipe.run_request(again)
            after_ms.append((time.perf_counter() - t0) * 1000)
        (seg,) = [s for s in offered(turn) if s.kind == "checkpoint"]
        raw_tokens = tokens.count(seg.text)
        placed = allocate([seg], InjectConfig().token_budget, tokens.count)
        records = store.effects.list("bench")
        side = [r for r in records if r.side_effect]
        record_bytes = sum(len(orjson.dumps(r.to_dict())) for r in records)
        session_bytes = len(orjson.dumps(store.sessions.get("bench", "bench-session")))
        stats = store.stats()
        lines = seg.text.count("\n- ")
        bare = []  # the disk floor: one small write transaction, committed with fsync
        for i in range(100):
            t0 = time.perf_counter()
            with store.batch() as b:
                b.sessions.update("bench", "fsync-probe", {"i": i})
            bare.append((time.perf_counter() - t0) * 1000)
    finally:
        store.close()
    calls_side = sum(1 for i in range(turns) if EffectsFilter(EffectsConfig()).classes.side_effect_of(
        *call_for(i)[:2]))
    return {
        "turns": turns, "req_ms": req_ms[1:], "req_cpu": req_cpu[1:], "end_ms": end_ms, "bare_ms": bare, "first_body": sizes[1], "last_body": sizes[-1],
        "compact_ms": compact_ms, "after_ms": after_ms, "raw_tokens": raw_tokens, "placed_tokens": placed[0].tokens if placed else 0,
        "placed_status": seg.status, "listed": lines, "records": len(records), "side": len(side),
        "calls_side": calls_side, "record_bytes": record_bytes, "session_bytes": session_bytes,
        "lmdb_used": stats.used_bytes, "checkpoint_text": seg.text,
    }


# -- 2. over HTTP -----------------------------------------------------------------------------------


def start_proxy(tmp: Path, name: str, pipeline: list[str], upstream: str) -> tuple[subprocess.Popen, str]:
    return start_serve(tmp, name, upstream, f"[pipeline]\nrequest = {orjson.dumps(pipeline).decode()}\n")


def reply_for(record) -> Reply:
    msgs = record.json.get("messages", []) if isinstance(record.json, dict) else []
    i = (len(msgs) - 1) // 2
    tool, args, _ = call_for(i)
    return Reply.tool_call(tool, args, call_id=f"toolu_{i:04d}", text=f"Step {i}.")


def turn_body(i: int) -> bytes:
    """The session's request after ``i`` completed calls."""
    return orjson.dumps({"model": "claude-sonnet-4-5", "max_tokens": 100, "system": SYSTEM, "tools": TOOLS,
                         "messages": history(i)})


async def post_turn(http: aiohttp.ClientSession, url: str, body: bytes, session: str) -> float:
    """One non-stream Anthropic turn; its latency in ms."""
    headers = {"x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01",
               "content-type": "application/json", "X-Ctx-Session": session}
    t0 = time.perf_counter()
    async with http.post(url + "/v1/messages", data=body, headers=headers) as r:
        await r.read()
        assert r.status == 200, (url, r.status)
    return (time.perf_counter() - t0) * 1000


async def http_bench(turns: int, tmp: Path) -> dict:
    with FakeProviderThread(default_reply=reply_for) as fake:
        procs = {}
        targets = {"direct": fake.url}
        for name, pipeline in (("without", ["identify", "inject"]), ("with", ["identify", "effects", "inject"])):
            procs[name], targets[name] = start_proxy(tmp, name, pipeline, fake.url)
        try:
            async with aiohttp.ClientSession() as http:
                for name in ("without", "with"):
                    await wait_up(http, targets[name])
                lat: dict[str, list[float]] = {k: [] for k in targets}
                order = list(targets)
                for i in range(turns + 1):
                    body = turn_body(i)
                    order = order[1:] + order[:1]  # rotate who goes first
                    for name in order:
                        lat[name].append(await post_turn(http, targets[name], body, f"http-{name}"))
        finally:
            for p in procs.values():
                p.terminate()
                p.wait(10)
    return lat


async def concurrency_bench(sessions: int, turns: int, tmp: Path) -> dict:
    with FakeProviderThread(default_reply=reply_for) as fake:
        proc, url = start_proxy(tmp, "concurrent", ["identify", "effects", "inject"], fake.url)
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=sessions + 4)) as http:
                await wait_up(http, url)
                turn_ms: list[float] = []
                probe_ms: list[float] = []
                done = asyncio.Event()

                async def agent(k: int) -> None:
                    for i in range(turns + 1):
                        ms = await post_turn(http, url, turn_body(i), f"agent-{k}")
                        if i:  # turn 0 brings no result: nothing to write ahead
                            turn_ms.append(ms)

                async def probe() -> None:
                    while not done.is_set():
                        t0 = time.perf_counter()
                        async with http.get(url + "/ctx/healthz") as r:
                            await r.read()
                        probe_ms.append((time.perf_counter() - t0) * 1000)
                        await asyncio.sleep(0.002)

                prober = asyncio.ensure_future(probe())
                t0 = time.perf_counter()
                await asyncio.gather(*(agent(k) for k in range(sessions)))
                wall = time.perf_counter() - t0
                done.set()
                await prober
        finally:
            proc.terminate()
            proc.wait(10)
    return {"turn_ms": turn_ms, "probe_ms": probe_ms, "turns_per_s": len(turn_ms) / wall}


# -- report ---------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=200, help="tool calls in the session (default 200)")
    ap.add_argument("--data-dir", help="where the LMDB files go (default: a temp dir on /tmp)")
    ap.add_argument("--skip-http", action="store_true", help="only the in-process part")
    ap.add_argument("--sessions", type=int, default=16, help="agents at once in part 3 (default 16)")
    ap.add_argument("--concurrent-turns", type=int, default=30, help="tool turns per agent in part 3 (default 30)")
    ap.add_argument("--show-checkpoint", action="store_true", help="print the checkpoint text")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ctx-bench-effects-", dir=args.data_dir))
    try:
        r = filter_bench(args.turns, tmp / "filter")
        q, e = r["req_ms"], r["end_ms"]
        early, late = q[: len(q) // 10 or 1], q[-(len(q) // 10 or 1):]
        print(f"## Effect ledger, {r['turns']}-tool-call session (LMDB on disk, fsync per commit)\n")
        print("| hook (per turn) | p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|")
        print(f"| request: match results + write-ahead commit | {pct(q, 50):.2f} | {pct(q, 99):.2f} | {max(q):.2f} |")
        c, bare = r["req_cpu"], r["bare_ms"]
        print(f"| request hook, CPU time only (no fsync wait) | {pct(c, 50):.2f} | {pct(c, 99):.2f} | {max(c):.2f} |")
        print(f"| response end: record the call (write on the writer thread) | {pct(e, 50):.2f} | {pct(e, 99):.2f} "
              f"| {max(e):.2f} |")
        print(f"| disk floor: one small write transaction + fsync | {pct(bare, 50):.2f} | {pct(bare, 99):.2f} "
              f"| {max(bare):.2f} |")
        ce, cl = c[: len(c) // 10 or 1], c[-(len(c) // 10 or 1):]
        print(f"\nrequest hook p50, first 10% of turns vs last 10%: {statistics.median(early):.2f} ms vs "
              f"{statistics.median(late):.2f} ms; CPU {statistics.median(ce):.2f} ms vs {statistics.median(cl):.2f} ms "
              f"(request body {r['first_body'] / 1024:.1f} KiB -> {r['last_body'] / 1024:.1f} KiB)")
        print(f"compaction turn (detect + build checkpoint + commit): {r['compact_ms']:.2f} ms")
        print(f"each later turn (checkpoint offered again, ledger unchanged), p50: "
              f"{statistics.median(r['after_ms']):.2f} ms\n")
        print("| ledger after the session | value |")
        print("|---|---|")
        print(f"| tool calls / side-effecting | {r['turns']} / {r['calls_side']} |")
        print(f"| effect records stored | {r['records']} ({r['side']} side-effecting) |")
        print(f"| record bytes (JSON) | {r['record_bytes']:,} ({r['record_bytes'] / max(1, r['records']):.0f} per record) |")
        print(f"| session state bytes | {r['session_bytes']:,} |")
        print(f"| LMDB used bytes (all kinds, incl. indexes) | {r['lmdb_used']:,} |")
        print(f"| checkpoint after compaction: effects listed | {r['listed']} |")
        print(f"| checkpoint tokens, raw / placed (budget 8000, cap 2000) | {r['raw_tokens']} / {r['placed_tokens']} "
              f"({r['placed_status']}) |")
        if args.show_checkpoint:
            print("\n```\n" + r["checkpoint_text"] + "\n```")
        if not args.skip_http:
            lat = asyncio.run(http_bench(args.turns, tmp / "http"))
            d, wo, w = lat["direct"], lat["without"], lat["with"]
            print(f"\n## Over HTTP, {args.turns + 1} non-stream Anthropic turns, history growing to "
                  f"{r['last_body'] / 1024:.0f} KiB\n")
            print("| target | p50 ms | p99 ms | added p50 ms | added p99 ms |")
            print("|---|---|---|---|---|")
            for name, v in (("direct", d), ("ctxproxy identify+inject", wo), ("ctxproxy identify+effects+inject", w)):
                add50 = pct(v, 50) - pct(d, 50)
                add99 = pct(v, 99) - pct(d, 99)
                print(f"| {name} | {pct(v, 50):.2f} | {pct(v, 99):.2f} | {add50:.2f} | {add99:.2f} |")
            added = pct(w, 50) - pct(d, 50)
            effects = pct(w, 50) - pct(wo, 50)
            print(f"\neffects share of ctxproxy's added latency (p50): {effects:.2f} of {added:.2f} ms = "
                  f"{100 * effects / added if added > 0 else float('nan'):.0f} %; in-process request-hook p50 "
                  f"{pct(q, 50):.2f} ms = {100 * pct(q, 50) / added if added > 0 else float('nan'):.0f} % of it")
            c = asyncio.run(concurrency_bench(args.sessions, args.concurrent_turns, tmp / "concurrent"))
            t, pr = c["turn_ms"], c["probe_ms"]
            print(f"\n## Under concurrency: {args.sessions} agents at once, {args.concurrent_turns} tool turns each "
                  f"(every turn a write-ahead)\n")
            print("| measure | p50 ms | p99 ms | max ms |")
            print("|---|---|---|---|")
            print(f"| tool turn through ctxproxy (identify, effects, inject) | {pct(t, 50):.2f} | {pct(t, 99):.2f} "
                  f"| {max(t):.2f} |")
            print(f"| `/ctx/healthz` probe meanwhile (event loop responsiveness) | {pct(pr, 50):.2f} | "
                  f"{pct(pr, 99):.2f} | {max(pr):.2f} |")
            print(f"\n{c['turns_per_s']:.0f} tool turns/s over all agents; {len(pr)} probes.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
