"""Secret redaction benchmark: engine throughput on a ~1 MB request, and
streaming TTFB through ``ctxproxy serve`` with redaction on vs off.

    python bench/bench_redact.py              # full run, ~3 minutes
    python bench/bench_redact.py --quick      # smoke run, < 1 minute
    python bench/bench_redact.py --no-write   # print only, do not append to bench/RESULTS.md

Everything runs on 127.0.0.1; every loop is bounded by a repetition count.

1. Engine, in this process (``ctxproxy.store.services.redaction``; default profile
   groups: llm, cloud, vcs, saas, crypto, generic):

   * the text: ``tests/secretcorpus.realistic_megabyte`` — 1,000,000
     characters of Python and JS code, prose, log lines, JSON tool output, a
     ~160 KB base64 PNG (inside JSON, as a tool would print it) and 40
     secrets from the test corpus in .env files, configs, shell history;
     a secret-dense megabyte (corpus samples back to back, ~9000 of them)
     as the worst case;
   * one-time costs, each in a state where nothing is memoised: building the
     pure-Python ``Redactor`` (regex analysis), the Hyperscan database
     compiled from scratch (empty cache dir), and loaded from the on-disk
     cache (what every start after the first does), and reused from this
     process's memo (a second profile with the same rules);
   * ``redact(text, key)`` per engine: *first call* of a freshly built
     Redactor (empty result cache), *cold* (same Redactor after
     ``clear_cache()``), *warm* (the same text again: a content-hash hit);
     wall time (``perf_counter``) and this thread's CPU time, p50 of the
     repetitions, and ms per MB;
   * the same megabyte as an Anthropic request (~60 messages: tool results,
     assistant text, tool_use inputs) through the ``redact`` filter's
     request hook (JSON parse not timed): cold (cache cleared), warm (same
     request again) and *next turn* (the history again plus one new ~16 KB
     tool result, the steady state of an agent session).

2. Streaming through real subprocesses: the scripted provider
   (``python -m ctxproxy.proxy.scripted_provider``, the reply of
   ``bench/run.py`` in 12-character deltas, 1 ms between events) and two
   ``ctxproxy serve`` processes whose configs differ only in the pipeline:
   ``identify, redact, effects, prune, inject, manifest`` (the default) vs the
   same without ``redact``. The three targets (direct, redact on, redact off)
   alternate round-robin, rotating who goes first. Per stream: TTFB (first
   chunk holding an SSE ``data:`` line), time to the first reply text (the
   first chunk with a non-empty text delta, i.e. after any hold-back of the
   stream redactor), and the whole stream. Requests: the chat and anthropic
   bodies of ``bench/run.py`` (4 KB) and an anthropic request of ~100 KB of
   the mixed megabyte with a few secrets (the same body every time, so the
   redaction cache is warm as for an unchanged history).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT / "tests"))
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from common import LoadMeter, append_results, pct, section_head  # noqa: E402
from run import DELTA_CHARS, KINDS, REPLY_TEXT, Proc, ctxproxy_argv, free_port, wait_ready  # noqa: E402
from secretcorpus import TEST_KEY, build_corpus, realistic_megabyte  # noqa: E402

from ctxproxy.filters import Turn  # noqa: E402
from ctxproxy.filters.base import Identity  # noqa: E402
from ctxproxy.filters.redact import RedactConfig, RedactFilter  # noqa: E402
from ctxproxy.store.services.redaction import DEFAULT_GROUPS, Redactor, builtin_rules, prefilter  # noqa: E402
from ctxproxy.store.services.redaction.patterns import analyze  # noqa: E402
from ctxproxy.filters.tokens import TokenCounter  # noqa: E402
from ctxproxy.proxy.adapters import ADAPTERS  # noqa: E402

FULL_PIPELINE = ["identify", "redact", "effects", "prune", "inject", "manifest"]
NO_REDACT = [f for f in FULL_PIPELINE if f != "redact"]
# A streamed text delta with at least one character (chat "content", anthropic "text"), in any event.
FIRST_TEXT = re.compile(rb'"(?:text|content)"\s*:\s*"[^"]')


def now() -> tuple[float, float]:
    return time.perf_counter(), time.thread_time()


def since(t: tuple[float, float]) -> tuple[float, float]:
    """(wall ms, CPU ms) since ``t``."""
    return (time.perf_counter() - t[0]) * 1000.0, (time.thread_time() - t[1]) * 1000.0


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


# --------------------------------------------------------------------------- 1. engine


def dense_megabyte(seed: int = 9) -> str:
    import random

    rng = random.Random(seed)
    pool = build_corpus(seed=seed, positives_per_rule=3)
    return "\n".join(rng.choice(pool).text for _ in range(9000))[:1_000_000]


def setup_costs(rules, reps: int) -> list[tuple[str, float, float, str]]:
    """(what, p50 ms, min ms, note) of building a Redactor / its Hyperscan database."""
    rows = []
    gc.collect()
    t = []
    for _ in range(reps):
        t0 = now()
        Redactor(rules, use_hyperscan=False)
        t.append(since(t0)[0])
    rows.append(("Redactor, pure-Python path (regex analysis of every rule)", med(t), min(t), ""))

    infos = {i: analyze(r.regex) for i, r in enumerate(rules)}
    compile_ms, load_ms, memo_ms, ctor_compile, ctor_load = [], [], [], [], []
    db_bytes = 0
    covered = 0
    with tempfile.TemporaryDirectory(prefix="ctxbench-hs-") as tmp:
        for k in range(reps):
            empty = Path(tmp) / f"empty-{k}"
            prefilter._MEMO.clear()  # nothing compiled by this process yet
            t0 = now()
            idx = prefilter.HyperscanIndex(infos, empty)
            compile_ms.append(since(t0)[0])
            assert not idx.from_cache and not idx.from_memory
            covered = len(idx.covered)
            db_bytes = sum(p.stat().st_size for p in empty.glob("hs-*.db"))
            prefilter._MEMO.clear()
            t0 = now()
            idx = prefilter.HyperscanIndex(infos, empty)
            load_ms.append(since(t0)[0])
            assert idx.from_cache
            t0 = now()
            idx = prefilter.HyperscanIndex(infos, None)
            memo_ms.append(since(t0)[0])
            assert idx.from_memory
            # whole constructors, for scale
            prefilter._MEMO.clear()
            t0 = now()
            Redactor(rules, use_hyperscan=True, cache_dir=str(Path(tmp) / f"ctor-{k}"))
            ctor_compile.append(since(t0)[0])
            prefilter._MEMO.clear()
            t0 = now()
            Redactor(rules, use_hyperscan=True, cache_dir=str(Path(tmp) / f"ctor-{k}"))
            ctor_load.append(since(t0)[0])
    note = f"{covered} of {len(rules)} rules in the database; {db_bytes / 1024:.0f} KiB on disk"
    rows.append(("Hyperscan database: compile (empty cache dir, first start)", med(compile_ms), min(compile_ms), note))
    rows.append(("Hyperscan database: load from the disk cache (every later start)", med(load_ms), min(load_ms), ""))
    rows.append(("Hyperscan database: reuse this process's memo (2nd profile, same rules)", med(memo_ms),
                 min(memo_ms), ""))
    rows.append(("Redactor, Hyperscan path, compiling", med(ctor_compile), min(ctor_compile), "analysis + compile"))
    rows.append(("Redactor, Hyperscan path, disk cache", med(ctor_load), min(ctor_load), "analysis + load"))
    return rows


def throughput(rules, cache_dir: str, text: str, engine: str, fresh: int, reps: int) -> dict:
    hs = engine == "hyperscan"
    mb = len(text.encode()) / 1e6
    first, cold, warm = [], [], []
    findings = 0
    out = None
    for _ in range(fresh):
        red = Redactor(rules, use_hyperscan=hs, cache_dir=cache_dir)
        assert red.engine == engine
        gc.collect()
        t0 = now()
        res = red.redact(text, TEST_KEY)
        first.append(since(t0))
        findings, out = sum(res.counts.values()), res.text
    for _ in range(reps):
        red.clear_cache()
        t0 = now()
        red.redact(text, TEST_KEY)
        cold.append(since(t0))
    for _ in range(reps):
        t0 = now()
        red.redact(text, TEST_KEY)
        warm.append(since(t0))
    return {"mb": mb, "findings": findings, "out": out,
            "first": first, "cold": cold, "warm": warm}


def request_body(text: str, pieces: int = 60) -> tuple[dict, list[str]]:
    """An Anthropic request holding ``text`` cut at line ends into ~``pieces`` parts."""
    size = len(text) // pieces
    parts, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        parts.append(text[start:end])
        start = end
    msgs: list[dict] = [{"role": "user", "content": "Audit the service for leaked credentials and fix the config."}]
    for i, part in enumerate(parts):
        tid = f"toolu_{i:04d}"
        if i % 5 == 3:  # a Write tool call carrying the content in its input
            msgs.append({"role": "assistant", "content": [
                {"type": "text", "text": f"Writing notes_{i}.md."},
                {"type": "tool_use", "id": tid, "name": "Write",
                 "input": {"file_path": f"notes_{i}.md", "content": part}}]})
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": f"Wrote notes_{i}.md"}]})
        elif i % 5 == 4:  # the model's own long text
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": part}]})
            msgs.append({"role": "user", "content": [{"type": "text", "text": "Go on."}]})
        else:
            msgs.append({"role": "assistant", "content": [
                {"type": "text", "text": f"Reading part {i}."},
                {"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": f"src/part_{i}.txt"}}]})
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": part}]})
    body = {"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
            "messages": msgs}
    return body, parts


def filter_bench(text: str, extra_text: str, hs: bool, cache_dir: str, reps: int) -> dict:
    f = RedactFilter(RedactConfig(hyperscan=hs, cache_dir=cache_dir), secret=b"bench-server-secret-0123456789ab")
    red = f.registry.get().redactor
    assert red.engine == ("hyperscan" if hs else "python")
    adapter = ADAPTERS["anthropic"]
    tokens = TokenCounter()
    body, _ = request_body(text)
    raw = orjson.dumps(body)
    _, new_parts = request_body(extra_text)

    def turn_for(data: bytes) -> Turn:
        return Turn(api="anthropic", route="anthropic", path="/v1/messages", headers={},
                    request=adapter.parse_request(data), tokens=tokens,
                    identity=Identity(tenant="bench", session="bench-redact"))

    def hook(data: bytes) -> tuple[float, float, int]:
        t = turn_for(data)
        gc.collect()
        t0 = now()
        f.on_request(t)
        wall, cpu = since(t0)
        return wall, cpu, sum(t.state["redact"]["counts"].values())

    cold, warm, nxt = [], [], []
    found = 0
    for _ in range(reps):
        red.clear_cache()
        w, c, found = hook(raw)
        cold.append((w, c))
    for _ in range(reps):
        w, c, _ = hook(raw)
        warm.append((w, c))
    grown = body
    for j in range(reps):  # each turn: the previous history + one new tool exchange (only that is new)
        grown = dict(grown, messages=grown["messages"] + [
            {"role": "assistant", "content": [
                {"type": "text", "text": f"Reading new part {j}."},
                {"type": "tool_use", "id": f"toolu_new_{j}", "name": "Read", "input": {"file_path": f"new_{j}.txt"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_new_{j}", "content": new_parts[j % len(new_parts)]}]}])
        w, c, _ = hook(orjson.dumps(grown))
        nxt.append((w, c))
    slots = sum(1 for _ in turn_for(raw).request.text_slots())
    return {"bytes": len(raw), "messages": len(body["messages"]), "slots": slots, "found": found,
            "cold": cold, "warm": warm, "next": nxt,
            "new_bytes": sum(len(p) for p in new_parts) // len(new_parts)}


def engine_section(args) -> tuple[list[str], dict]:
    rules = [r for r in builtin_rules() if r.group in DEFAULT_GROUPS]
    mb_text = realistic_megabyte(5)
    dense = dense_megabyte(9)
    reps = 5 if args.quick else 20
    fresh = 3 if args.quick else 10
    out: list[str] = []
    w = out.append
    w(f"Rules: the default profile's {len(rules)} built-in rules (groups {', '.join(DEFAULT_GROUPS)}).\n")
    w("#### One-time costs (ms)\n")
    w("| what | p50 | min | note |")
    w("|---|---:|---:|---|")
    for what, p50, mn, note in setup_costs(rules, 3 if args.quick else 8):
        w(f"| {what} | {p50:.1f} | {mn:.1f} | {note} |")
    print("# engine: one-time costs done", file=sys.stderr, flush=True)

    results = {}
    with tempfile.TemporaryDirectory(prefix="ctxbench-hs-") as cache:
        for label, text in (("mixed 1 MB", mb_text), ("secret-dense 1 MB", dense)):
            for engine in ("hyperscan", "python"):
                r = throughput(rules, cache, text, engine, fresh if engine == "hyperscan" else max(2, fresh // 3),
                               reps if engine == "hyperscan" else max(3, reps // 4))
                results[(label, engine)] = r
                print(f"# engine: {label} {engine} done", file=sys.stderr, flush=True)
        same = all(results[(lb, "hyperscan")]["out"] == results[(lb, "python")]["out"]
                   for lb in ("mixed 1 MB", "secret-dense 1 MB"))
        w("\n#### `Redactor.redact(text, key)` on 1 MB of text (p50 of the repetitions)\n")
        w("| text | engine | findings | first call of a fresh Redactor ms | cold ms (cache cleared) | cold CPU ms "
          "| **cold ms / MB** | warm ms (cache hit) | warm ms / MB |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for (label, engine), r in results.items():
            first = med([x[0] for x in r["first"]])
            cold = med([x[0] for x in r["cold"]])
            cold_cpu = med([x[1] for x in r["cold"]])
            warm = med([x[0] for x in r["warm"]])
            target = ""
            if engine == "hyperscan" and label.startswith("mixed"):  # the target is for realistic content
                target = " ok" if cold / r["mb"] <= 10 else " **over**"
            w(f"| {label} | {engine} | {r['findings']} | {first:.1f} | {cold:.1f} | {cold_cpu:.1f} | "
              f"**{cold / r['mb']:.1f}**{target} | {warm:.2f} | {warm / r['mb']:.2f} |")
        w(f"\nTarget: ≤ 10 ms per MB cold on the Hyperscan path, for the mixed request; the "
          f"secret-dense megabyte is a stress case (every finding is confirmed by its rule's Python regex and "
          f"validators), no target. Both engines gave byte-identical output: "
          f"{'yes' if same else '**no**'}. Repetitions: fresh Redactors {fresh} (python {max(2, fresh // 3)}), "
          f"cold/warm {reps} (python {max(3, reps // 4)}). The mixed text holds "
          f"{mb_text.count('base64')} base64 image(s) and 40 planted secrets.")
        print("# engine: request hook ...", file=sys.stderr, flush=True)
        extra = realistic_megabyte(6, size=400_000)
        rows = []
        for hs in (True, False):
            rows.append((hs, filter_bench(mb_text, extra, hs, cache, reps if hs else max(3, reps // 4))))
    w("\n#### The same megabyte as an Anthropic request, `redact` filter request hook (JSON parse not timed; p50)\n")
    r0 = rows[0][1]
    w(f"Request: {r0['bytes'] / 1e6:.2f} MB of JSON, {r0['messages']} messages, {r0['slots']} text slots; "
      f"next turn = the previous turn's request + one new tool exchange with a result of "
      f"~{r0['new_bytes'] / 1024:.0f} KB (only that is new).\n")
    w("| engine | findings | cold ms | cold CPU ms | warm ms (same request again) | next turn ms | next turn CPU ms |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for hs, r in rows:
        w(f"| {'hyperscan' if hs else 'python'} | {r['found']} | {med([x[0] for x in r['cold']]):.1f} | "
          f"{med([x[1] for x in r['cold']]):.1f} | {med([x[0] for x in r['warm']]):.2f} | "
          f"{med([x[0] for x in r['next']]):.2f} | {med([x[1] for x in r['next']]):.2f} |")
    w("\n#### Streamed reply: the `redact` filter's event hook, in process (µs, p50)\n")
    w("The reply of section 2 (recorded once from the scripted provider) decoded into events and fed to "
      "`RedactFilter.on_response_event`, a fresh turn each time; the request hook on the same 4 KB request "
      "for comparison.\n")
    w("| stream | events | first event | whole stream | request hook (4 KB request) |")
    w("|---|---:|---:|---:|---:|")
    for name, n_ev, first, total, req in event_costs(200 if args.quick else 1000):
        w(f"| {name} | {n_ev} | {first:.1f} | {total:.1f} | {req:.1f} |")
    return out, {"mb": mb_text}


def event_costs(reps: int) -> list[tuple[str, int, float, float, float]]:
    from ctxproxy.proxy.scripted_provider import FakeProviderThread, Reply
    from ctxproxy.proxy.sse import SSEDecoder

    async def fetch(url: str, kind) -> bytes:
        async with aiohttp.ClientSession() as s:
            async with s.post(url + kind.path, data=kind.stream_body, headers=kind.headers) as r:
                return await r.read()

    with FakeProviderThread(default_reply=Reply.text(REPLY_TEXT, delta_chars=DELTA_CHARS)) as fp:
        raws = {k.name: asyncio.run(fetch(fp.url, k)) for k in KINDS}
    f = RedactFilter(RedactConfig(), secret=b"bench-server-secret-0123456789ab")
    tokens = TokenCounter()
    rows = []
    for k in KINDS:
        adapter = ADAPTERS[k.name]
        firsts, totals, reqs = [], [], []
        n_ev = 0
        for _ in range(reps):
            t = Turn(api=k.name, route=k.name, path=k.path, headers={}, request=adapter.parse_request(k.stream_body),
                     tokens=tokens, identity=Identity(tenant="bench", session="bench-stream"))
            t0 = time.perf_counter()
            f.on_request(t)
            reqs.append((time.perf_counter() - t0) * 1e6)
            state = adapter.stream()
            events = SSEDecoder().decode(raws[k.name])
            n_ev = len(events)
            total = 0.0
            for j, raw in enumerate(events):
                ev = state.event(raw.name, raw.raw, raw.data)
                t0 = time.perf_counter()
                f.on_response_event(t, ev)
                dt = (time.perf_counter() - t0) * 1e6
                total += dt
                if j == 0:
                    firsts.append(dt)
            f.on_response_end(t)
            totals.append(total)
        rows.append((k.name, n_ev, med(firsts), med(totals), med(reqs)))
    return rows


# --------------------------------------------------------------------------- 2. streaming


def secret_body(text: str) -> bytes:
    """~100 KB anthropic stream request cut from the mixed megabyte (with its secrets)."""
    start = text.find("\n", 200_000) + 1
    chunk = text[start:start + 100_000]
    body, _ = request_body(chunk, pieces=8)
    body["stream"] = True
    return json.dumps(body).encode()


async def one_stream(session: aiohttp.ClientSession, url: str, path: str, headers: dict, body: bytes,
                     terminal: bytes) -> tuple[float, float, float] | None:
    """(TTFB ms, first reply text ms, whole stream ms), or None on a bad stream."""
    t0 = time.perf_counter()
    first = text_at = None
    buf = b""
    async with session.post(url + path, data=body, headers=headers) as r:
        for _ in range(100_000):  # bounded: a stream is a few dozen chunks
            chunk = await r.content.readany()
            if not chunk:
                break
            now_ = time.perf_counter()
            if first is None or text_at is None:
                buf += chunk
                if first is None and b"data:" in buf:
                    first = now_
                if text_at is None and FIRST_TEXT.search(buf):
                    text_at = now_
            else:
                buf = (buf + chunk)[-512:]
        status = r.status
    end = time.perf_counter()
    if status != 200 or first is None or text_at is None or terminal not in buf[-2048:]:
        return None
    return (first - t0) * 1000.0, (text_at - t0) * 1000.0, (end - t0) * 1000.0


async def stream_section(args, mb_text: str) -> tuple[list[str], str]:
    n = args.stream_n or (60 if args.quick else 400)
    warm = 5 if args.quick else 20
    tdir = Path(tempfile.mkdtemp(prefix="ctxbench-redact-"))
    fp_port = free_port()
    fake = Proc("fakeprovider", [sys.executable, "-m", "ctxproxy.proxy.scripted_provider", str(fp_port),
                                 "--text", REPLY_TEXT, "--delta-chars", str(DELTA_CHARS),
                                 "--delay-between-events", str(args.event_delay), "--record-limit", "20"],
                fp_port, tdir / "fakeprovider.log")
    proxies = {}
    for name, pipeline in (("redact on", FULL_PIPELINE), ("redact off", NO_REDACT)):
        cfg = tdir / f"{name.replace(' ', '-')}.toml"
        cfg.write_text(f"[pipeline]\nrequest = {json.dumps(pipeline)}\n")
        port = free_port()
        proxies[name] = Proc(name, ctxproxy_argv() + ["serve", "--port", str(port), "--config", str(cfg),
                                                      "--data-dir", str(tdir / name.replace(" ", "-")),
                                                      "--anthropic-upstream", fake.url,
                                                      "--openai-upstream", fake.url, "--log-level", "WARNING"],
                             port, tdir / f"{name.replace(' ', '-')}.log")
    procs = [fake, *proxies.values()]
    kinds = [(k.name, k.path, k.headers, k.stream_body, k.terminal) for k in KINDS]
    big = secret_body(mb_text)
    kinds.append(("anthropic, 100 KB with secrets", KINDS[1].path, KINDS[1].headers, big, KINDS[1].terminal))
    targets = {"direct": fake.url}
    res: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
    errors: dict[str, int] = {}
    lines: list[str] = []
    meter = None
    try:
        fake.start(None)
        await wait_ready(fake, "/")
        for p in proxies.values():
            p.start(None)
        for name, p in proxies.items():
            await wait_ready(p, "/ctx/healthz")
            targets[name] = p.url
        meter = LoadMeter(lambda: [p.pid for p in procs if p.popen is not None])
        names = list(targets)
        res = {t: {k[0]: [] for k in kinds} for t in names}
        errors = {t: 0 for t in names}
        timeout = aiohttp.ClientTimeout(total=60)
        sessions = {t: aiohttp.ClientSession(timeout=timeout) for t in names}
        try:
            gc.collect()
            gc.freeze()
            for i in range(warm):
                for kname, path, headers, body, term in kinds:
                    for t in names:
                        await one_stream(sessions[t], targets[t], path, headers, body, term)
            meter.rebase()
            for i in range(n):
                order = names[i % len(names):] + names[:i % len(names)]
                for kname, path, headers, body, term in kinds:
                    for t in order:
                        r = await one_stream(sessions[t], targets[t], path, headers, body, term)
                        if r is None:
                            errors[t] += 1
                        else:
                            res[t][kname].append(r)
                if i % 100 == 99:
                    print(f"# streaming {i + 1}/{n}", file=sys.stderr, flush=True)
        finally:
            for s in sessions.values():
                await s.close()
        load = meter.summary()
        for p in procs:
            if p.popen is not None and p.popen.poll() is not None:
                raise SystemExit(f"{p.name} died during the run:\n{p.log_tail()}")
    finally:
        for p in reversed(procs):
            p.stop()
        shutil.rmtree(tdir, ignore_errors=True)
    w = lines.append
    w(f"Pipelines: redact on = `{', '.join(FULL_PIPELINE)}` (the default); redact off = "
      f"`{', '.join(NO_REDACT)}`; both through `--config`, everything else embedded defaults. {n} streams per "
      f"kind per target after {warm} warm-up rounds; fake provider pauses {args.event_delay * 1000:g} ms between "
      f"events; reply {len(REPLY_TEXT)} chars in {DELTA_CHARS}-char deltas. Request bodies: chat "
      f"{len(KINDS[0].stream_body)} B, anthropic {len(KINDS[1].stream_body)} B, anthropic with secrets "
      f"{len(big)} B.\n")
    w("| stream | target | TTFB p50 | TTFB p99 | first text p50 | first text p99 | whole stream p50 |")
    w("|---|---|---:|---:|---:|---:|---:|")
    for kname, *_ in kinds:
        for t in targets:
            xs = res[t][kname]
            w(f"| {kname} | {t} | {pct([x[0] for x in xs], 50):.3f} | {pct([x[0] for x in xs], 99):.3f} | "
              f"{pct([x[1] for x in xs], 50):.3f} | {pct([x[1] for x in xs], 99):.3f} | "
              f"{pct([x[2] for x in xs], 50):.2f} |")
    w("\n| stream | redact on − off, TTFB p50 ms | same, p99 | on / off TTFB p50 | on − off, first text p50 ms "
      "| same, p99 |")
    w("|---|---:|---:|---:|---:|---:|")
    for kname, *_ in kinds:
        on, off = res["redact on"][kname], res["redact off"][kname]
        d50 = pct([x[0] for x in on], 50) - pct([x[0] for x in off], 50)
        d99 = pct([x[0] for x in on], 99) - pct([x[0] for x in off], 99)
        r50 = pct([x[0] for x in on], 50) / pct([x[0] for x in off], 50)
        f50 = pct([x[1] for x in on], 50) - pct([x[1] for x in off], 50)
        f99 = pct([x[1] for x in on], 99) - pct([x[1] for x in off], 99)
        w(f"| {kname} | {d50:+.3f} | {d99:+.3f} | {r50:.2f} | {f50:+.3f} | {f99:+.3f} |")
    errs = "; ".join(f"{t}: {e}" for t, e in errors.items() if e)
    w("\nErrors (bad status, no text or no terminal event): " + (errs or "none"))
    return lines, load


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description="Redaction throughput and streaming TTFB with redaction on vs off.")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (< 1 minute)")
    ap.add_argument("--skip-stream", action="store_true", help="only the in-process engine part")
    ap.add_argument("--stream-n", type=int, default=0, help="override: streams per kind per target")
    ap.add_argument("--event-delay", type=float, default=0.001, help="seconds between streamed events (0.001)")
    ap.add_argument("--no-write", action="store_true", help="print only, do not append to bench/RESULTS.md")
    args = ap.parse_args()
    started = time.monotonic()

    meter = LoadMeter()
    lines, data = engine_section(args)
    engine_load = meter.summary()
    body = ["### 1. Redaction engine (in process)\n", *lines, "", engine_load]
    if not args.skip_stream:
        print("# streaming through ctxproxy serve ...", file=sys.stderr, flush=True)
        slines, sload = asyncio.run(stream_section(args, data["mb"]))
        body += ["", "### 2. Streaming through `ctxproxy serve`, redaction on vs off (ms)\n", *slines, "", sload]
    body.append(f"\nWall time of the run: {time.monotonic() - started:.0f} s.")
    section = section_head("secret redaction" + (", quick" if args.quick else "")) + "\n" + "\n".join(body) + "\n"
    print(section)
    if not args.no_write:
        append_results(section)


if __name__ == "__main__":
    main()
