"""ctxproxy benchmark: direct vs. a no-op aiohttp proxy vs. ctxproxy, in one run.

    python bench/run.py            # full run, ~3-4 minutes on a quiet 2-core machine
    python bench/run.py --quick    # smoke run, < 1 minute
    python bench/run.py --pairs 5  # fresh process pairs per pipeline (default 3)
    python bench/run.py --pin      # pin processes to CPUs (see below)
    python bench/run.py --config core=bench/core-only.toml --config default   # other ctxproxy targets
    python bench/run.py --streams-only   # phases 3 and 4 alone (time to first token, streams/s)

What it does (everything on 127.0.0.1, every loop bounded):

* starts real subprocesses, each on its own free port: the scripted provider
  (``python -m ctxproxy.proxy.scripted_provider PORT``: Anthropic + OpenAI wire
  formats, a fixed text reply streamed in several SSE events); then, one
  pipeline after the other, pairs of the no-op proxy (``bench/noop_proxy.py``)
  and a ctxproxy process (``ctxproxy serve --port P --data-dir TMP
  --anthropic-upstream URL --openai-upstream URL``). By default the one
  pipeline is ``ctxproxy:default``, the embedded default pipeline (identify,
  redact, effects, checkpoint, prune, recall, inject, memory_tool, manifest);
  ``--config core=bench/core-only.toml`` adds the core pipeline (routing,
  adapters, relay, ``identify``). Only one ctxproxy runs at a time, so one
  never evicts the other's caches;
* for each pipeline, drives the three targets (direct, noop, that ctxproxy)
  with aiohttp (one ClientSession with a connection pool per target), always
  alternating them, in a fresh random order at every step (seeded, ``--seed``),
  so that drift — CPU frequency, page cache, other load — hits all three
  equally and each target follows each other one equally often (a fixed
  rotation favours whichever target follows direct; see ``shuffled``). The phases
  run once per process pair (``--pairs``, 3 by default), each pair fresh and
  each taking its share of the samples, which are pooled: two identical
  processes can differ by tens of microseconds per request for their whole
  life (an A/B of two no-op proxies in one rotation read 0.32 vs 0.37 ms), so
  one pair would report its luck as a difference between the proxies.
  The report gives the pooled ratios (the verdict) and each pair's alone:

  1. latency at concurrency 1, p50/p99, for a realistic non-stream Chat
     Completions request and an Anthropic Messages request (a few KB each,
     with a tool call and a tool result); added latency = proxy - direct and
     the ratio ctxproxy_added / noop_added (the targets: p50 <= 1.3,
     p99 <= 2);
  2. requests per second at concurrency 32 (a fixed number of requests per
     target, split into rounds that alternate the targets; the two request
     kinds mixed 50/50), and each proxy's CPU per request in that phase
     (utime+stime from /proc/<pid>/stat, counted only while that proxy was the
     target; targets: RPS >= 0.5x, CPU <= 2x the no-op's);
  3. streaming at concurrency 1: time to first byte (the first chunk holding an
     SSE ``data:`` line) and to the first content token (the first chunk holding
     the reply's first text delta), p50/p99; the time to first token each proxy
     adds to the direct call's, as the ratio ctxproxy_added / noop_added
     (target <= 1.3); the fake provider pauses ``--event-delay``
     between events so a proxy that buffered the stream would show it;
  4. streams per second with 32 concurrent streams of 50 text deltas each, no
     pause between events (target >= 0.5x the no-op's);
  5. a coding agent's ~200K-token conversation (``bench_growth``'s Claude
     Code-style session: ~140 tool calls and results, ~0.5 MB of JSON): its
     first send to a proxy that never saw it (target: <= 30 ms added), then
     ``--long-turns`` later turns that each add one small exchange (reported,
     no target), and each proxy's peak RSS over the run (VmHWM after it;
     target <= 150 MB).

  A last table lists every target (``TARGETS``) with this run's value and a
  verdict; the load average at the start and the end of the run, and the CPU
  other processes used meanwhile, are printed beside it.

* prints markdown tables and appends them, with the command, date and machine,
  as a new section of ``bench/RESULTS.md``.

CPU pinning: off by default (the kernel spreads the 3-4 busy processes over
the cores). ``--pin`` pins the fake provider and the load client to the first
CPU and both proxies to the last one (only when there are at least 2 CPUs).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Awaitable, Callable

import aiohttp

from ctxproxy.proxy.ports import free_port  # the other benches import it from here

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS.md"
CLK_TCK = os.sysconf("SC_CLK_TCK")

# The reply the fake provider gives to every request: ~150 characters, streamed in
# 12-character deltas, i.e. ~13 text events plus the API's framing events.
REPLY_TEXT = ("I read src/app/config.py. The loader ignores CTX_TIMEOUT when the file sets "
              "timeout explicitly; I will patch load() to prefer the environment variable.")
DELTA_CHARS = 12
# The first characters of the reply's first text delta: a chunk holding them holds the first
# content token (time to first token, beside time to first byte).
FIRST_CONTENT = REPLY_TEXT[:6].encode()
# A request with this header is answered with a text of that many deltas, streamed without
# pauses (phase 4: streams per second); one with NEXT_HEADER with that tool call (phase 5).
CHUNKS_HEADER = "X-Bench-Chunks"
STREAM_CHUNKS = 50
NEXT_HEADER = "X-Bench-Next-Call"

# The targets the last table checks: (limit, True when the value must reach it from below).
TARGETS = {
    "p50": (1.3, False),      # added latency p50, x the no-op's
    "p99": (2.0, False),      # added latency p99, x the no-op's
    "ttft": (1.3, False),     # added time to first content token p50, x the no-op's
    "rps": (0.5, True),       # requests/s at c=32, x the no-op's
    "streams": (0.5, True),   # 50-chunk streams/s at c=32, x the no-op's
    "cpu": (2.0, False),      # proxy CPU per request at c=32, x the no-op's
    "first": (30.0, False),   # first send of the ~200K-token conversation, ms added to direct
    "rss": (150.0, False),    # peak RSS over the run, MB
}

# --------------------------------------------------------------------------- workloads

_FILE = "\n".join(
    f"{i:4d}  def handler_{i}(request, ctx):  # returns the parsed config entry {i}\n"
    f"      return ctx.config.get('section_{i}', {{}}).get('value', {i})"
    for i in range(18))
_SYSTEM = ("You are a coding agent working in a Python repository. Use the tools to read and edit "
           "files. Keep answers short. Never print secrets. The repository uses pytest; run the tests "
           "after every change and report failures verbatim. ") * 3
# Each kind is its own conversation (a different first user turn): with the same start, a
# fingerprint-identified chat and anthropic conversation would be one session, and the
# effect ledger would read each as the other's compacted history.
_USER1 = "The service ignores CTX_TIMEOUT from the environment. Find out why and fix it."
_USER1_ANTHROPIC = "The worker ignores CTX_RETRIES from the environment. Find out why and fix it."
_USER2 = "Thanks. Also make sure the default stays 30 seconds when nothing is set, and add a test."
_ASSIST = "I'll look at the configuration loader first."


def chat_body(stream: bool = False) -> bytes:
    call_id = "call_Qm9vYmFyYmF6cXV4MTIz"
    body = {
        "model": "gpt-5",
        "messages": [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": _USER1},
            {"role": "assistant", "content": _ASSIST, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": "src/app/config.py"})}}]},
            {"role": "tool", "tool_call_id": call_id, "content": _FILE},
            {"role": "assistant", "content": "The loader reads the file first and never looks at the "
                                             "environment when `timeout` is present."},
            {"role": "user", "content": _USER2},
        ],
        "tools": [{"type": "function", "function": {
            "name": "read_file", "description": "Read a UTF-8 text file from the repository.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                           "required": ["path"]}}}],
        "temperature": 0.2,
        "max_completion_tokens": 1024,
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return json.dumps(body).encode()


def anthropic_body(stream: bool = False) -> bytes:
    tid = "toolu_01A09q90qw90lq917835lq9"
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": _SYSTEM, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": _USER1_ANTHROPIC}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": _ASSIST},
                {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": "src/app/config.py"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": _FILE},
                {"type": "text", "text": _USER2}]},
        ],
        "tools": [{"name": "read_file", "description": "Read a UTF-8 text file from the repository.",
                   "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                                    "required": ["path"]}}],
        "metadata": {"user_id": "user_bench_account__session_3f2a9c"},
    }
    if stream:
        body["stream"] = True
    return json.dumps(body).encode()


@dataclass(frozen=True)
class Kind:
    name: str
    path: str
    headers: dict
    body: bytes
    stream_body: bytes
    terminal: bytes


KINDS = [
    Kind("chat", "/v1/chat/completions",
         {"Authorization": "Bearer sk-bench-not-a-real-key", "Content-Type": "application/json"},
         chat_body(), chat_body(True), b"[DONE]"),
    Kind("anthropic", "/v1/messages",
         {"x-api-key": "sk-ant-bench-not-a-real-key", "anthropic-version": "2023-06-01",
          "Content-Type": "application/json"},
         anthropic_body(), anthropic_body(True), b"message_stop"),
]

# --------------------------------------------------------------------------- the provider


def provider_main(port: int, event_delay: float) -> None:
    """The scripted provider (``--serve-provider PORT``): ``REPLY_TEXT`` in
    ``DELTA_CHARS`` deltas ``event_delay`` apart; ``CHUNKS_HEADER: N`` asks for N
    deltas with no pause; ``NEXT_HEADER`` for a tool call (JSON id, name, input, text)."""
    from ctxproxy.proxy.scripted_provider import Reply, serve_forever

    base = Reply.text(REPLY_TEXT, delta_chars=DELTA_CHARS, delay_between_events=event_delay)
    long_texts: dict[int, Reply] = {}

    def reply_for(record) -> Reply:
        nxt = record.headers.get(NEXT_HEADER)
        if nxt:
            call = json.loads(nxt)
            return Reply.tool_call(call["name"], call["input"], call_id=call["id"], text=call.get("text"))
        n = record.headers.get(CHUNKS_HEADER)
        if n:
            k = max(3, min(int(n), 1000))
            if k not in long_texts:
                text = (REPLY_TEXT + " ") * (k * DELTA_CHARS // len(REPLY_TEXT) + 1)
                long_texts[k] = Reply.text(text[:k * DELTA_CHARS], delta_chars=DELTA_CHARS)
            return long_texts[k]
        return base

    serve_forever(reply_for, "127.0.0.1", port, record_limit=200, name="bench provider")


# --------------------------------------------------------------------------- processes


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of stat(5)


def system_cpu() -> tuple[float, float]:
    """(busy, steal) CPU seconds of the whole machine since boot, from /proc/stat."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = f[:7]
    steal = f[7] if len(f) > 7 else 0
    return (user + nice + system + irq + softirq) / CLK_TCK, steal / CLK_TCK


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


@dataclass
class Proc:
    name: str
    argv: list[str]
    port: int
    log: Path
    popen: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, cpus: set[int] | None) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.popen = subprocess.Popen(self.argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                      stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        if cpus:
            os.sched_setaffinity(self.popen.pid, cpus)

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=10)

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


async def wait_ready(proc: Proc, path: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as s:
        for _ in range(int(timeout / 0.05) + 1):  # bounded
            if proc.popen is not None and proc.popen.poll() is not None:
                raise SystemExit(f"{proc.name} exited with {proc.popen.returncode}:\n{proc.log_tail()}")
            try:
                async with s.get(proc.url + path, timeout=aiohttp.ClientTimeout(total=2)) as r:
                    await r.read()
                    if r.status < 500:
                        return
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
    raise SystemExit(f"{proc.name} did not become ready on {proc.url}:\n{proc.log_tail()}")


def ctxproxy_argv() -> list[str]:
    exe = Path(sys.executable).parent / "ctxproxy"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ctxproxy")
    return [found] if found else [sys.executable, "-m", "ctxproxy.proxy.cli.main"]


# --------------------------------------------------------------------------- measurement


@dataclass
class Target:
    name: str
    url: str
    proc: Proc | None  # the proxy process (None for direct)
    session: aiohttp.ClientSession | None = None
    errors: int = 0
    # phase results
    lat: dict[str, list[float]] = field(default_factory=dict)  # kind -> ms
    load_lat: list[float] = field(default_factory=list)
    load_time: float = 0.0
    load_n: int = 0
    load_cpu: float = 0.0
    load_client_cpu: float = 0.0
    load_fake_cpu: float = 0.0
    ttfb: dict[str, list[float]] = field(default_factory=dict)
    ttft: dict[str, list[float]] = field(default_factory=dict)  # to the first content token
    stream_total: dict[str, list[float]] = field(default_factory=dict)
    stream_cpu: float = 0.0
    stream_n: int = 0
    error_samples: list[str] = field(default_factory=list)
    rss_kb: int = 0  # peak RSS over this target's process instances
    # phase 4: concurrent long streams
    sload_time: float = 0.0
    sload_n: int = 0
    sload_cpu: float = 0.0
    # phase 5: a long conversation (ms per turn, the first send apart)
    long_first: list[float] = field(default_factory=list)
    long_later: list[float] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 3:
            self.error_samples.append(what[:300])

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc else 0.0


# The order of the targets in each step of a phase: a fresh random permutation, from a
# seeded generator (``--seed``). A fixed rotation is biased: in (direct, noop, ctxproxy)
# rotations the noop follows direct two times in three, and a proxy whose request comes
# right after a direct call (no other proxy ran in between) is measurably faster — an
# A/A test of four identical no-op proxies in rotation read the one after direct 0.06 ms
# quicker. With random permutations each target follows each other one equally often.
ORDER = random.Random(1)


def shuffled(targets: list[Target]) -> list[Target]:
    return ORDER.sample(targets, len(targets))


async def one_request(t: Target, kind: Kind) -> float:
    assert t.session is not None
    t0 = time.perf_counter()
    async with t.session.post(t.url + kind.path, data=kind.body, headers=kind.headers) as r:
        data = await r.read()
    dt = (time.perf_counter() - t0) * 1000.0
    if r.status != 200 or b"CTX_TIMEOUT" not in data:
        t.error(f"{kind.name} {r.status}: {data[:200]!r}")
    return dt


async def one_stream(t: Target, kind: Kind, headers: dict | None = None) -> tuple[float, float, float]:
    """(ms to the first chunk holding an SSE data line, ms to the end of the stream,
    ms to the first chunk holding the first content token)."""
    assert t.session is not None
    t0 = time.perf_counter()
    first = content = None
    buf = b""
    tail = b""
    async with t.session.post(t.url + kind.path, data=kind.stream_body, headers=headers or kind.headers) as r:
        for _ in range(100_000):  # bounded: a stream is a few dozen chunks
            chunk = await r.content.readany()
            if not chunk:
                break
            if content is None:
                buf += chunk
                if first is None and b"data:" in buf:
                    first = time.perf_counter()
                if FIRST_CONTENT in buf:
                    content = time.perf_counter()
            tail = (tail + chunk)[-512:]
    end = time.perf_counter()
    if r.status != 200 or first is None or content is None or kind.terminal not in tail:
        t.error(f"stream {kind.name} {r.status}: {tail[-200:]!r}")
        first = first or end
        content = content or end
    return (first - t0) * 1000.0, (end - t0) * 1000.0, (content - t0) * 1000.0


class _WarmUp:
    """Errors during a warm-up are not counted (the counts from earlier phases stay)."""

    def __init__(self, targets: list[Target]):
        self.targets = targets

    def __enter__(self) -> None:
        self.saved = [(t.errors, list(t.error_samples)) for t in self.targets]

    def __exit__(self, *exc: object) -> None:
        for t, (n, samples) in zip(self.targets, self.saved):
            t.errors, t.error_samples = n, samples


async def phase_latency(targets: list[Target], n: int, warmup: int) -> None:
    with _WarmUp(targets):
        for i in range(warmup):
            for t in shuffled(targets):
                for kind in KINDS:
                    await one_request(t, kind)
    for i in range(n * len(KINDS)):
        kind = KINDS[i % len(KINDS)]
        for t in shuffled(targets):
            t.lat.setdefault(kind.name, []).append(await one_request(t, kind))


def self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


async def load_round(t: Target, n: int, conc: int, fake_pid: int) -> None:
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:  # shared iterator: exactly n requests in total
            t.load_lat.append(await one_request(t, KINDS[i % len(KINDS)]))

    cpu0, ccpu0, fcpu0 = t.cpu(), self_cpu(), cpu_seconds(fake_pid)
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    t.load_time += time.perf_counter() - t0
    t.load_cpu += t.cpu() - cpu0
    t.load_client_cpu += self_cpu() - ccpu0
    t.load_fake_cpu += cpu_seconds(fake_pid) - fcpu0
    t.load_n += n


async def phase_load(targets: list[Target], total: int, rounds: int, conc: int, fake_pid: int) -> None:
    for t in targets:  # warm the pools to full width; not counted
        kept = (list(t.load_lat), t.load_time, t.load_cpu, t.load_n, t.load_client_cpu, t.load_fake_cpu)
        with _WarmUp([t]):
            await load_round(t, conc * 2, conc, fake_pid)
        t.load_lat, t.load_time, t.load_cpu, t.load_n, t.load_client_cpu, t.load_fake_cpu = kept
    per_round = total // rounds
    for r in range(rounds):
        for t in shuffled(targets):
            await load_round(t, per_round, conc, fake_pid)


async def phase_stream(targets: list[Target], n: int, warmup: int) -> None:
    with _WarmUp(targets):
        for i in range(warmup):
            for t in shuffled(targets):
                for kind in KINDS:
                    await one_stream(t, kind)
    for t in targets:
        for k in KINDS:
            t.ttfb.setdefault(k.name, [])
            t.ttft.setdefault(k.name, [])
            t.stream_total.setdefault(k.name, [])
    for i in range(n * len(KINDS)):
        kind = KINDS[i % len(KINDS)]
        for t in shuffled(targets):
            cpu0 = t.cpu()
            first, total, content = await one_stream(t, kind)
            t.stream_cpu += t.cpu() - cpu0
            t.stream_n += 1
            t.ttfb[kind.name].append(first)
            t.ttft[kind.name].append(content)
            t.stream_total[kind.name].append(total)


async def stream_round(t: Target, n: int, conc: int) -> None:
    """``n`` streams of ``STREAM_CHUNKS`` text deltas, ``conc`` at a time."""
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:  # shared iterator: exactly n streams in total
            kind = KINDS[i % len(KINDS)]
            await one_stream(t, kind, {**kind.headers, CHUNKS_HEADER: str(STREAM_CHUNKS)})

    cpu0 = t.cpu()
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conc)))
    t.sload_time += time.perf_counter() - t0
    t.sload_cpu += t.cpu() - cpu0
    t.sload_n += n


async def phase_stream_load(targets: list[Target], total: int, rounds: int, conc: int) -> None:
    for t in targets:  # warm-up, not counted
        kept = (t.sload_time, t.sload_n, t.sload_cpu)
        with _WarmUp([t]):
            await stream_round(t, conc, conc)
        t.sload_time, t.sload_n, t.sload_cpu = kept
    for r in range(rounds):
        for t in shuffled(targets):
            await stream_round(t, max(1, total // rounds), conc)


class LongConversation:
    """Phase 5: a coding agent's conversation of ~200K tokens (``bench_growth``'s
    Claude Code-style session: tool calls and their results), sent first whole to a
    proxy that never saw it, then ``later`` turns that each add one small exchange."""

    def __init__(self, later: int):
        otel = os.environ.get("OTEL_SDK_DISABLED")
        import bench_growth  # imported here: it loads the token vocabulary to size the session

        if otel is None:  # it turns OTel off for its own in-process runs; the proxies here keep theirs
            os.environ.pop("OTEL_SDK_DISABLED", None)

        self.g = bench_growth
        self.plan = bench_growth.make_plan([200_000], 0, later)
        self.turns = [n for _, _, _, n in self.plan.turns]
        self.bodies = [json.dumps(bench_growth.body_for(self.plan, n)).encode() for n in self.turns]
        first = bench_growth.body_for(self.plan, self.turns[0])
        self.tool_calls = sum(1 for m in first["messages"] if m["role"] == "assistant")
        self.tokens = bench_growth.request_tokens(self.plan, self.turns[0])

    async def send(self, t: Target, i: int, session: str) -> float:
        assert t.session is not None
        nxt = self.plan.exchanges[self.turns[i]].call()
        headers = {**self.g.HEADERS, NEXT_HEADER: nxt, "X-Ctx-Session": session}
        t0 = time.perf_counter()
        async with t.session.post(t.url + "/v1/messages", data=self.bodies[i], headers=headers) as r:
            raw = await r.read()
        ms = (time.perf_counter() - t0) * 1000.0
        if r.status != 200 or b'"tool_use"' not in raw:
            t.error(f"long conversation {r.status}: {raw[:200]!r}")
        return ms


async def phase_long(targets: list[Target], conv: LongConversation, session: str) -> None:
    """Every turn to every target in a fresh random order; the first is each proxy's first sight of it."""
    for i in range(len(conv.bodies)):
        for t in shuffled(targets):
            ms = await conv.send(t, i, session)
            (t.long_first if i == 0 else t.long_later).append(ms)


# --------------------------------------------------------------------------- report


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * len(s) + 0.5)) - 1))  # nearest rank
    return s[k]


def ratio(a: float, b: float) -> str:
    if b <= 0:
        return "n/a (noop added <= 0)"
    return f"{a / b:.2f}"


def added_ttft(t: Target, noop: Target, direct: Target, kind: str) -> str:
    """The time to first content token a proxy adds to the direct call's, over the no-op's (p50)."""
    d = pct(direct.ttft[kind], 50)
    return ratio(pct(t.ttft[kind], 50) - d, pct(noop.ttft[kind], 50) - d)


def verdict(r: str, limit: float) -> str:
    try:
        return "ok" if float(r) <= limit else "**over**"
    except ValueError:
        return "?"


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True,
                               timeout=10).stdout.strip()
        commit = (commit or "?") + (" (+ uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    return {"nproc": str(os.cpu_count()), "cpu": model, "python": platform.python_version(),
            "aiohttp": aiohttp.__version__, "kernel": platform.release(), "commit": commit}


def report(targets: list[Target], args: argparse.Namespace, cfg: dict, m: dict, started: float,
           fake: Proc, other: str, pairs: list[dict[str, str]], conv: "LongConversation | None") -> str:
    by = {t.name: t for t in targets}
    d, noop = by["direct"], by["noop"]
    ours = [t for t in targets if t.name not in ("direct", "noop")]
    out: list[str] = []
    w = out.append

    npairs = len(pairs)
    spread = (f", over {npairs} fresh noop + ctxproxy process pairs" if npairs > 1 else "")

    def per_pair(key: str) -> str:
        return " · ".join(pair[key] for pair in pairs)

    streams_only = conv is None  # --streams-only: phases 3 and 4 alone
    if streams_only:
        w("(`--streams-only`: phases 3 and 4 alone.)\n")
    ratios_lat = []
    if not streams_only:
        w(f"#### 1. Latency at concurrency 1 ({cfg['lat_n']} requests per kind per target{spread}, ms)\n")
        w("| request | target | p50 | p99 | added p50 | added p99 |")
        w("|---|---|---:|---:|---:|---:|")
        ratios_lat = []
        for k in KINDS:
            dp50, dp99 = pct(d.lat[k.name], 50), pct(d.lat[k.name], 99)
            for t in targets:
                p50, p99 = pct(t.lat[k.name], 50), pct(t.lat[k.name], 99)
                add = "—" if t is d else f"{p50 - dp50:+.3f}"
                add99 = "—" if t is d else f"{p99 - dp99:+.3f}"
                w(f"| {k.name} ({len(k.body) / 1024:.1f} KB) | {t.name} | {p50:.3f} | {p99:.3f} | {add} | {add99} |")
            for t in ours:
                r50 = ratio(pct(t.lat[k.name], 50) - dp50, pct(noop.lat[k.name], 50) - dp50)
                r99 = ratio(pct(t.lat[k.name], 99) - dp99, pct(noop.lat[k.name], 99) - dp99)
                ratios_lat.append((t.name, k.name, r50, r99))
        w("")
        w(f"| target | request | added p50 / noop added p50 (target ≤ {TARGETS['p50'][0]:g}) | "
          f"same, p99 (target ≤ {TARGETS['p99'][0]:g}) |")
        w("|---|---|---:|---:|")
        for name, kname, r50, r99 in ratios_lat:
            w(f"| {name} | {kname} | {r50} {verdict(r50, TARGETS['p50'][0])} | {r99} {verdict(r99, TARGETS['p99'][0])} |")
        if npairs > 1:
            w("\nThe p50 ratio of each process pair alone: " + "; ".join(
                f"{k.name} {per_pair('lat:' + k.name)}" for k in KINDS) + ".")

        w(f"\n#### 2. Throughput at concurrency {cfg['conc']} ({cfg['load_n']} requests per target in "
          f"{cfg['rounds']} alternating rounds, chat/anthropic 50/50)\n")
        w("| target | RPS | p50 ms | p99 ms | proxy CPU s / 1000 req | fake provider CPU s / 1000 | "
          "load client CPU s / 1000 |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        for t in targets:
            rps = t.load_n / t.load_time if t.load_time else float("nan")
            per = 1000.0 / max(1, t.load_n)
            cpu = f"{t.load_cpu * per:.2f}" if t.proc else "—"
            w(f"| {t.name} | {rps:.0f} | {pct(t.load_lat, 50):.2f} | {pct(t.load_lat, 99):.2f} | {cpu} | "
              f"{t.load_fake_cpu * per:.2f} | {t.load_client_cpu * per:.2f} |")
        w(f"\n({os.cpu_count()} CPUs are shared by the load client, the fake provider and the proxy: RPS is "
          "what the whole chain reaches, the CPU columns say where the time went.)")

    w(f"\n#### 3. Streaming at concurrency 1 ({cfg['stream_n']} streams per kind per target{spread}; "
      f"fake provider pauses {cfg['event_delay'] * 1000:g} ms between events, ms)\n")
    w("| stream | target | TTFB p50 | TTFB p99 | first token p50 | first token p99 | whole stream p50 | "
      "TTFB ratio to noop, p50 | first-token ratio to noop, p50 | "
      f"added first token / noop added, p50 (target ≤ {TARGETS['ttft'][0]:g}) |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in KINDS:
        for t in targets:
            rc = rt = ra = ""
            if t in ours:
                rc = ratio(pct(t.ttfb[k.name], 50), pct(noop.ttfb[k.name], 50))
                rt = ratio(pct(t.ttft[k.name], 50), pct(noop.ttft[k.name], 50))
                r = added_ttft(t, noop, d, k.name)
                ra = f"{r} {verdict(r, TARGETS['ttft'][0])}"
            w(f"| {k.name} | {t.name} | {pct(t.ttfb[k.name], 50):.3f} | {pct(t.ttfb[k.name], 99):.3f} | "
              f"{pct(t.ttft[k.name], 50):.3f} | {pct(t.ttft[k.name], 99):.3f} | "
              f"{pct(t.stream_total[k.name], 50):.2f} | {rc} | {rt} | {ra} |")
    if npairs > 1:
        w("\nThe TTFB ratio of each process pair alone: " + "; ".join(
            f"{k.name} {per_pair('ttfb:' + k.name)}" for k in KINDS) + ".")

    def sps(t: Target) -> float:
        return t.sload_n / t.sload_time if t.sload_time else float("nan")

    w(f"\n#### 4. {cfg['conc']} concurrent streams of {STREAM_CHUNKS} text deltas ({cfg['sload_n']} streams "
      f"per target in {cfg['rounds']} alternating rounds, no pause between events)\n")
    w("| target | streams / s | proxy CPU ms / stream |")
    w("|---|---:|---:|")
    for t in targets:
        cpu = f"{t.sload_cpu / max(1, t.sload_n) * 1000:.2f}" if t.proc else "—"
        w(f"| {t.name} | {sps(t):.1f} | {cpu} |")

    d_first = 0.0
    if not streams_only:
        w(f"\n#### 5. A coding conversation of {conv.tokens:,} tokens ({conv.tool_calls} tool calls, "
          f"{len(conv.bodies[0]) / 1024:.0f} KB of JSON): first send to a proxy that never saw it, then "
          f"{len(conv.bodies) - 1} later turns each adding one small exchange ({npairs} process pair(s), ms)\n")
        w("| target | first send | first send added | later turns p50 | later turns added p50 |")
        w("|---|---:|---:|---:|---:|")
        d_first, d_later = pct(d.long_first, 50), pct(d.long_later, 50)
        for t in targets:
            f50, l50 = pct(t.long_first, 50), pct(t.long_later, 50)
            w(f"| {t.name} | {f50:.1f} | {'—' if t is d else f'{f50 - d_first:+.1f}'} | {l50:.1f} | "
              f"{'—' if t is d else f'{l50 - d_later:+.1f}'} |")
        w("\n(ctxproxy's prune shortens a request over 100K tokens, so the provider parses less of what "
          "it forwards than of the direct call: \"added\" is what the client waited for more, not all the "
          "proxy spent.)")

    w("\n#### 6. Proxy processes\n")
    w(f"| process | CPU s / 1000 req (c={cfg['conc']} phase) | CPU s / 1000 streams | "
      "peak RSS (VmHWM, after phase 5) MB |")
    w("|---|---:|---:|---:|")
    for t in (noop, *ours):
        assert t.proc is not None
        w(f"| {t.name} | {t.load_cpu / max(1, t.load_n) * 1000:.2f} | "
          f"{t.stream_cpu / max(1, t.stream_n) * 1000:.2f} | {t.rss_kb / 1024:.1f} |")
    w(f"| fake provider (for scale) | — | — | {status_kb(fake.pid, 'VmHWM') / 1024:.1f} |")

    w("\n#### Targets, ratios against the no-op proxy in this run\n")
    w("| target | measure | this run | target | verdict |")
    w("|---|---|---:|---:|---|")

    def row(t: Target, what: str, value: float, key: str, fmt: str = "{:.2f}") -> None:
        limit, higher = TARGETS[key]
        ok = value == value and (value >= limit if higher else value <= limit)
        w(f"| {t.name} | {what} | {fmt.format(value)} | {'≥' if higher else '≤'} {fmt.format(limit)} | "
          f"{'ok' if ok else '**over**' if not higher else '**under**'} |")

    def fl(r: str) -> float:
        try:
            return float(r)
        except ValueError:
            return float("nan")

    for t in ours:
        for name, kname, r50, r99 in ratios_lat:
            if name == t.name:
                row(t, f"added latency p50 (× no-op), {kname}", fl(r50), "p50")
                row(t, f"added latency p99 (× no-op), {kname}", fl(r99), "p99")
        for k in KINDS:
            row(t, f"added time to first token p50 (× no-op), {k.name}",
                fl(added_ttft(t, noop, d, k.name)), "ttft")
        row(t, f"{STREAM_CHUNKS}-chunk streams/s at c={cfg['conc']} (× no-op)", sps(t) / sps(noop), "streams")
        if streams_only:
            continue
        row(t, f"requests/s at c={cfg['conc']} (× no-op)",
            (t.load_n / t.load_time) / (noop.load_n / noop.load_time), "rps")
        row(t, f"CPU per request at c={cfg['conc']} (× no-op)",
            (t.load_cpu / max(1, t.load_n)) / max(1e-9, noop.load_cpu / max(1, noop.load_n)), "cpu")
        assert conv is not None
        row(t, f"first send of a {conv.tokens // 1000}K-token conversation, added ms",
            pct(t.long_first, 50) - d_first, "first", fmt="{:.1f}")
        row(t, "peak RSS over the run, MB", t.rss_kb / 1024, "rss", fmt="{:.0f}")

    errs = [f"{t.name}: {t.errors}" + (f" e.g. {t.error_samples[0]}" if t.error_samples else "")
            for t in targets if t.errors]
    w("\nErrors (wrong status or body, all phases after warm-up): " + ("; ".join(errs) if errs else "none"))
    w(f"\nWall time of the run: {time.monotonic() - started:.0f} s. CPU pinning: {cfg['pinning']}. "
      f"Target order: random per step, seed {args.seed}. {other}")
    return "\n".join(out)


INTRO = """# ctxproxy benchmark results

Produced by `bench/run.py` (see its docstring). Reproduce from the repository root with
the project installed (`pip install -e .`):

    python bench/run.py            # full run (~3-4 min)
    python bench/run.py --quick    # smoke run (< 1 min)

Each run starts the scripted provider, then for each pipeline (ctxproxy:default on the embedded
defaults; older runs also ctxproxy:core with `bench/core-only.toml`) three fresh pairs of the
no-op aiohttp proxy (`bench/noop_proxy.py`, the baseline) and a `ctxproxy serve` process, all
on 127.0.0.1, and alternates direct, noop and ctxproxy in a seeded random order in every phase; the
samples of the pairs are pooled. "Added" latency is proxy minus direct. The targets are
`TARGETS` in `bench/run.py`; each run's last table gives them with a verdict.
Numbers are machine-specific; compare ratios, not milliseconds. Each run appends one section.
"""


# --------------------------------------------------------------------------- main


def ctx_configs(specs: list[str] | None) -> list[tuple[str, str | None]]:
    """(target name, config path or None for the embedded defaults) per ctxproxy target."""
    if not specs:
        specs = ["default=default"]
    out = []
    for spec in specs:
        name, _, path = spec.rpartition("=")
        name = name or Path(path).stem
        out.append((f"ctxproxy:{name}", None if path == "default" else str(Path(path).resolve())))
    return out


def _added_ratio(t: Target, noop: Target, direct: Target, kind: str, since: dict[str, int]) -> str:
    """Added-latency p50 ratio over the samples taken since ``since`` (one process pair)."""
    d = pct(direct.lat[kind][since["direct"]:], 50)
    return ratio(pct(t.lat[kind][since[t.name]:], 50) - d, pct(noop.lat[kind][since["noop"]:], 50) - d)


async def measure(name: str, start_pair: Callable[[int], Awaitable[tuple[Proc, Proc]]], fake: Proc, cfg: dict,
                  args: argparse.Namespace, m: dict, started: float, conv: "LongConversation | None"
                  ) -> tuple[str, str]:
    """Phases 1-3 for direct, noop and one ctxproxy pipeline, alternating; (report, log tail).

    The phases run ``cfg["instances"]`` times, each with a fresh noop and a fresh
    ctxproxy process (``start_pair``), and the samples are pooled: two identical
    processes can differ by tens of microseconds for the whole of their life
    (where they landed in memory and on the CPUs), which a single pair would
    report as a difference between the proxies. Within each step of a phase the
    three targets go in a random order (``shuffled``).
    """
    direct, noop, ours = Target("direct", fake.url, None), Target("noop", "", None), Target(name, "", None)
    targets = [direct, noop, ours]
    k = cfg["instances"]
    timeout = aiohttp.ClientTimeout(total=60)

    def session() -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=cfg["conc"] * 2), timeout=timeout)

    def phase(what: str) -> None:
        print(f"# {time.monotonic() - started:6.1f}s  {name}: {what}", file=sys.stderr, flush=True)

    pairs: list[dict[str, str]] = []  # per process pair: ratios by "lat:<kind>" / "ttfb:<kind>"
    foreign = steal = wall = 0.0
    load0 = os.getloadavg()[0]
    log_tail = ""
    direct.session = session()
    try:
        for inst in range(k):
            noop_p, ctx_p = await start_pair(inst)
            procs = [fake, noop_p, ctx_p]
            try:
                noop.url, noop.proc, ours.url, ours.proc = noop_p.url, noop_p, ctx_p.url, ctx_p
                noop.session, ours.session = session(), session()
                order = [direct, noop, ours]
                since_lat = {t.name: {kn.name: len(t.lat.get(kn.name, [])) for kn in KINDS} for t in targets}
                since_ttfb = {t.name: {kn.name: len(t.ttfb.get(kn.name, [])) for kn in KINDS} for t in targets}

                def ours_cpu() -> float:  # CPU seconds of this benchmark's own processes
                    return self_cpu() + sum(cpu_seconds(p.pid) for p in procs)

                sys0, ours0, wall0 = system_cpu(), ours_cpu(), time.monotonic()
                tag = f"pair {inst + 1}/{k}"
                if not args.streams_only:
                    phase(f"{tag}, 1/5 latency at concurrency 1")
                    await phase_latency(order, -(-cfg["lat_n"] // k), cfg["lat_warm"])
                    phase(f"{tag}, 2/5 throughput at concurrency {cfg['conc']}")
                    await phase_load(order, -(-cfg["load_n"] // k), cfg["rounds"], cfg["conc"], fake.pid)
                phase(f"{tag}, 3/5 streaming time to first byte / token")
                await phase_stream(order, -(-cfg["stream_n"] // k), cfg["stream_warm"])
                phase(f"{tag}, 4/5 {cfg['conc']} concurrent {STREAM_CHUNKS}-chunk streams")
                await phase_stream_load(order, -(-cfg["sload_n"] // k), cfg["rounds"], cfg["conc"])
                if not args.streams_only:
                    phase(f"{tag}, 5/5 a {conv.tokens // 1000}K-token conversation, first send and later turns")
                    await phase_long(order, conv, f"bench-long-{inst}")
                (busy1, steal1), ours1 = system_cpu(), ours_cpu()
                wall += time.monotonic() - wall0
                foreign += max(0.0, (busy1 - sys0[0]) - (ours1 - ours0))
                steal += steal1 - sys0[1]
                for p in procs:
                    if p.popen is not None and p.popen.poll() is not None:
                        raise SystemExit(f"{p.name} died during the run:\n{p.log_tail()}")
                for t in (noop, ours):
                    t.rss_kb = max(t.rss_kb, status_kb(t.proc.pid, "VmHWM"))
                pair: dict[str, str] = {}
                for kn in KINDS:
                    since = {t.name: since_lat[t.name][kn.name] for t in targets}
                    pair[f"lat:{kn.name}"] = ("—" if args.streams_only
                                              else _added_ratio(ours, noop, direct, kn.name, since))
                    pair[f"ttfb:{kn.name}"] = ratio(pct(ours.ttfb[kn.name][since_ttfb[name][kn.name]:], 50),
                                                    pct(noop.ttfb[kn.name][since_ttfb["noop"][kn.name]:], 50))
                pairs.append(pair)
            finally:
                for t in (noop, ours):
                    if t.session is not None:
                        await t.session.close()
                for p in (ctx_p, noop_p):
                    p.stop()
                log_tail = ctx_p.log_tail(5)
        phase("done")
    finally:
        await direct.session.close()
    load1 = os.getloadavg()
    other = (f"Other processes on the machine used {foreign:.1f} CPU-s during the {wall:.0f} s of "
             f"measurement ({100 * foreign / max(wall, 1e-9):.0f}% of one CPU; steal {steal:.1f} s; "
             f"load average at start {load0:.2f}, at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}).")
    if foreign / max(wall, 1e-9) > 0.1:
        other += " **The machine was not idle: absolute numbers are pessimistic, ratios less affected.**"
    argv = ours.proc.argv
    conf = (f"`--config {os.path.relpath(argv[argv.index('--config') + 1], ROOT)}`" if "--config" in argv
            else "the embedded defaults")
    return f"### {name} ({conf})\n\n" + report(targets, args, cfg, m, started, fake, other, pairs, conv), log_tail


async def amain(args: argparse.Namespace) -> None:
    started = time.monotonic()
    quick = args.quick
    cfg = {
        "lat_n": args.lat_n or (500 if quick else 3000),
        "lat_warm": 20 if quick else 50,
        "load_n": args.load_n or (3000 if quick else 10000),
        "rounds": 3 if quick else 5,
        "conc": 32,
        "stream_n": args.stream_n or (100 if quick else 500),
        "stream_warm": 5 if quick else 20,
        "sload_n": args.sload_n or (300 if quick else 1200),
        "instances": args.pairs or (1 if quick else 3),
        "event_delay": args.event_delay,
    }
    ncpu = len(os.sched_getaffinity(0))
    pin = args.pin and ncpu >= 2
    cpus = sorted(os.sched_getaffinity(0))
    cfg["pinning"] = (f"fake provider + load client on CPU {cpus[0]}, both proxies on CPU {cpus[-1]}"
                      if pin else "none (kernel scheduling)")
    m = machine()

    tmp = tempfile.TemporaryDirectory(prefix="ctxbench-")
    tdir = Path(tmp.name)
    fp_port = free_port()
    fake = Proc("fakeprovider", [sys.executable, __file__, "--serve-provider", str(fp_port),
                                 "--event-delay", str(args.event_delay)], fp_port, tdir / "fakeprovider.log")
    conv = None if args.streams_only else LongConversation(later=args.long_turns or (4 if quick else 8))
    proxy_cpus = {cpus[-1]} if pin else None
    bodies: list[str] = []
    ctx_log = ""
    try:
        fake.start({cpus[0]} if pin else None)
        await wait_ready(fake, "/")
        if pin:
            os.sched_setaffinity(0, {cpus[0]})
        print(f"# fake provider {fake.pid} {fake.url}", file=sys.stderr)
        gc.collect()
        gc.freeze()  # keep the client's GC pauses small and equal for all targets
        # One three-target measurement (direct, noop, this ctxproxy) per pipeline, in turn:
        # the ctxproxy processes never run side by side, so one does not evict the other's caches.
        for j, (name, conf) in enumerate(ctx_configs(args.config)):
            async def start_pair(inst: int, name: str = name, conf: str | None = conf) -> tuple[Proc, Proc]:
                noop_port, port = free_port(), free_port()
                noop_p = Proc("noop", [sys.executable, str(HERE / "noop_proxy.py"), "--port", str(noop_port),
                                       "--upstream", fake.url], noop_port, tdir / f"noop-{j}-{inst}.log")
                ctx_p = Proc(name, ctxproxy_argv() + ["serve", "--port", str(port), "--data-dir",
                                                      str(tdir / f"data-{j}-{inst}"), "--anthropic-upstream",
                                                      fake.url, "--openai-upstream", fake.url]
                             + (["--config", conf] if conf else []), port, tdir / f"ctx-{j}-{inst}.log")
                noop_p.start(proxy_cpus)
                ctx_p.start(proxy_cpus)
                try:
                    await wait_ready(noop_p, "/")
                    # start-up loads the vocabulary and compiles the redaction rules: slow on a busy machine
                    await wait_ready(ctx_p, "/ctx/healthz", timeout=180.0)
                except BaseException:
                    ctx_p.stop()
                    noop_p.stop()
                    raise
                print(f"# pair {inst + 1}: noop {noop_p.pid}, {name} {ctx_p.pid}: " + shlex.join(ctx_p.argv),
                      file=sys.stderr)
                return noop_p, ctx_p

            body, tail = await measure(name, start_pair, fake, cfg, args, m, started, conv)
            bodies.append(body)
            ctx_log += tail
    finally:
        fake.stop()
        tmp.cleanup()
    body = "\n\n".join(bodies)

    cmd = "python " + shlex.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
    head = (f"## {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} — `{cmd}`"
            f"{' (quick)' if quick else ''}\n\n"
            f"Machine: {m['nproc']} CPUs ({m['cpu']}), Linux {m['kernel']}, Python {m['python']}, "
            f"aiohttp {m['aiohttp']}. Code: {m['commit']}.\n"
            f"Workload: fake provider reply {len(REPLY_TEXT)} chars in {DELTA_CHARS}-char deltas; request "
            f"bodies chat {len(KINDS[0].body)} B, anthropic {len(KINDS[1].body)} B.\n")
    section = head + "\n" + body + "\n"
    print(section)
    if ctx_log.strip():
        print("# last ctxproxy log lines:\n" + ctx_log, file=sys.stderr)
    if not args.no_write:
        new = not RESULTS.exists() or not RESULTS.read_text().strip()
        with RESULTS.open("a") as f:
            if new:
                f.write(INTRO)
            f.write("\n" + section)
        print(f"# appended to {RESULTS}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description="Benchmark ctxproxy against direct calls and a no-op aiohttp proxy.")
    ap.add_argument("--quick", action="store_true", help="smaller sample sizes (< 40 s)")
    ap.add_argument("--pin", action="store_true", help="pin processes to CPUs (see the module docstring)")
    ap.add_argument("--event-delay", type=float, default=0.001, help="seconds between streamed events (0.001)")
    ap.add_argument("--lat-n", type=int, default=0, help="override: latency samples per kind per target")
    ap.add_argument("--load-n", type=int, default=0, help="override: requests per target at concurrency 64")
    ap.add_argument("--stream-n", type=int, default=0, help="override: streams per kind per target")
    ap.add_argument("--sload-n", type=int, default=0,
                    help=f"override: {STREAM_CHUNKS}-chunk streams per target at concurrency 32")
    ap.add_argument("--long-turns", type=int, default=0,
                    help="later turns of the long conversation after its first send (8; --quick 4)")
    ap.add_argument("--serve-provider", type=int, default=0, metavar="PORT", help=argparse.SUPPRESS)
    ap.add_argument("--pairs", type=int, default=0,
                    help="fresh noop + ctxproxy process pairs per pipeline, samples pooled (3; --quick 1)")
    ap.add_argument("--no-write", action="store_true", help="print only, do not append to bench/RESULTS.md")
    ap.add_argument("--config", metavar="[NAME=]FILE", action="append",
                    help="a ctxproxy target with this config file (repeatable; 'default' = the embedded "
                         "defaults). Without it: ctxproxy:default only; core=bench/core-only.toml adds "
                         "the core pipeline")
    ap.add_argument("--seed", type=int, default=1, help="seed of the targets' random order (1)")
    ap.add_argument("--streams-only", action="store_true",
                    help="only the streaming phases (3: time to first token, 4: concurrent streams)")
    args = ap.parse_args()
    if args.serve_provider:
        provider_main(args.serve_provider, args.event_delay)
        return
    ORDER.seed(args.seed)
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
