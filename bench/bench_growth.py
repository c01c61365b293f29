"""Per-turn added latency on a growing conversation: does a turn cost
O(new content) or O(conversation)?

    python bench/bench_growth.py              # sizes 1K..200K tokens, 5 sessions, ~1 minute
    python bench/bench_growth.py --profile    # ... and a cProfile of the 200K-token turns
    python bench/bench_growth.py --quick      # fewer turns per size
    python bench/bench_growth.py --no-write   # print only, do not append to bench/RESULTS.md

Everything runs on 127.0.0.1; every loop is bounded (sizes x turns).

* One Anthropic Messages session, Claude Code style (system blocks with a
  cache breakpoint, five tools, a breakpoint on the last block of the last
  message), tool-heavy: every exchange is an assistant ``tool_use`` and the
  user's ``tool_result``. Tokens are counted with
  ``ctxproxy.filters.tokens.TokenCounter`` (o200k_base) over every
  model-visible string plus the tool definitions.
* Several such sessions (``--sessions``, default 5, each with its own
  content) run interleaved turn by turn, for more samples at each size
  without letting the conversation outgrow it.
* Each session grows through the sizes (1K, 10K, 50K, 100K, 200K tokens by
  default). To reach a size, one *catch-up* turn adds file reads, grep hits,
  test logs and listings (``tests/toolsession.tool_outputs``, 400-9000
  characters each) up to the size; then ``--warm`` + ``--turns`` turns each add
  one small new exchange (a git status, grep hits, an edit, a test run: 40-150
  tokens) to the previous history, as an agent does. Only those last
  ``--turns`` turns are measured: caches are warm as in real use, and the new
  content per turn is the same at every size.
* The model answers each turn with the tool call the next exchange starts
  with (the client names it in an ``X-Bench-Next-Call`` header), so the
  effect ledger sees the calls it later settles, as with a real model. The
  provider is this script in ``--provider PORT`` mode: the scripted provider
  (``ctxproxy.proxy.scripted_provider.FakeProvider``) with that reply, in its
  own process; it reports the body size it received in a response header.
* Targets, each a separate process, alternating turn by turn (rotating who
  goes first): direct; the no-op proxy (``bench/noop_proxy.py``, the cost
  of any proxy hop for a body of that size); ``ctxproxy serve`` on its
  embedded defaults (the full default pipeline: identify, redact, effects,
  prune, inject, manifest); and the same with pruning never triggered
  (``[filters.prune] trigger_tokens = 1000000000``) — a control: from 100K
  tokens on, the default prune forwards a smaller body, which the provider
  parses faster than the one sent directly, so "added" would otherwise
  understate what the proxy does at that size.
* Added latency = target - direct on the same turn; p50 / p99 over the
  measured turns per size; the ratio of the 200K-token p50 to the 1K-token
  p50 (target <= 3). ctxproxy's per-filter timings come from the stored
  Context Manifests (``GET /ctx/v1/manifests/{turn_id}``, fetched after the
  run) and its CPU time from /proc.

``--profile`` additionally runs the largest size's measured turns once more
in process (``make_app`` on an ephemeral port, the provider still a
subprocess) under cProfile, and prints the top functions of the proxy's own
code by cumulative and by self time.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT / "tests"))
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from common import LoadMeter, append_results, cpu_seconds, pct, section_head  # noqa: E402
from run import Proc, ctxproxy_argv, free_port, wait_ready  # noqa: E402
from toolsession import tool_outputs  # noqa: E402

from ctxproxy.filters.tokens import TokenCounter  # noqa: E402

COUNT = TokenCounter()
MODEL = "claude-sonnet-4-5"
NEXT_HEADER = "X-Bench-Next-Call"
RECEIVED_HEADER = "X-Bench-Received"
SESSION = "growth-bench-session"

SYSTEM = [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {"type": "text", "text": (
        "You are an interactive CLI tool that helps users with software engineering tasks. Use the tools "
        "to read, search and edit the repository; run the tests after every change and report failures "
        "verbatim. Keep answers short and never print secrets. When a command fails, read the error and "
        "fix the cause rather than retrying blindly. Prefer small, reviewable edits. ") * 4,
     "cache_control": {"type": "ephemeral"}},
]
_SCHEMA = {"type": "object", "properties": {"file_path": {"type": "string"}, "command": {"type": "string"},
                                            "pattern": {"type": "string"}, "path": {"type": "string"},
                                            "old_string": {"type": "string"}, "new_string": {"type": "string"}}}
TOOLS = [{"name": n, "description": d, "input_schema": _SCHEMA} for n, d in (
    ("Bash", "Run a shell command in the repository and return its output."),
    ("Read", "Read a file from the local filesystem."),
    ("Grep", "Search file contents with a regular expression."),
    ("Edit", "Replace an exact string in a file."),
    ("Write", "Write a file to the local filesystem."))]
TASK = "The service ignores CTX_TIMEOUT from the environment. Find out why, fix it, and add a test."


# --------------------------------------------------------------------------- the session


@dataclass
class Exchange:
    call_id: str
    tool: str
    args: dict
    result: str
    text: str

    def messages(self) -> list[dict]:
        return [{"role": "assistant", "content": [
                    {"type": "text", "text": self.text},
                    {"type": "tool_use", "id": self.call_id, "name": self.tool, "input": self.args}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": self.call_id, "content": self.result}]}]

    def call(self) -> str:
        return json.dumps({"id": self.call_id, "name": self.tool, "input": self.args, "text": self.text})


def tokens_of(value) -> int:
    """Model-visible tokens: every string value except ids and markers (as tests/toolsession.input_tokens)."""
    skip = {"type", "id", "tool_use_id", "cache_control", "role"}
    if isinstance(value, str):
        return COUNT.count(value)
    if isinstance(value, dict):
        return sum(tokens_of(v) for k, v in value.items() if k not in skip)
    if isinstance(value, list):
        return sum(tokens_of(v) for v in value)
    return 0


BASE_TOKENS = tokens_of(SYSTEM) + COUNT.count(orjson.dumps(TOOLS).decode()) + COUNT.count(TASK)


def small_exchange(k: int, tag: str = "") -> Exchange:
    """A small new exchange (40-150 tokens), different every time."""
    cid = f"toolu_{tag}s{k:05d}"
    kind = k % 4
    if kind == 0:
        return Exchange(cid, "Bash", {"command": "git status --short"},
                        f" M src/app/config_{k}.py\n M src/app/loader.py\n?? tests/test_timeout_{k}.py",
                        f"Checking the working tree ({k}).")
    if kind == 1:
        return Exchange(cid, "Grep", {"pattern": f"CTX_TIMEOUT_{k}", "path": "src"},
                        "\n".join(f"src/app/mod_{(k * 7 + j) % 97}.py:{(k * 13 + j * 31) % 900 + 1}:    timeout = "
                                  f"env.get('CTX_TIMEOUT_{k}', {30 + j})" for j in range(3)),
                        f"Searching for CTX_TIMEOUT_{k}.")
    if kind == 2:
        return Exchange(cid, "Edit", {"file_path": f"src/app/mod_{k}.py", "old_string": f"timeout = {k}",
                                      "new_string": f"timeout = env_timeout(default={k})"},
                        f"The file src/app/mod_{k}.py has been updated. Here's the result of running `cat -n` on "
                        f"a snippet:\n    {k + 10}\tdef load(path):\n    {k + 11}\t    timeout = "
                        f"env_timeout(default={k})\n    {k + 12}\t    return Config(path, timeout)",
                        "Patching the loader.")
    return Exchange(cid, "Bash", {"command": f"pytest -q tests/test_mod_{k}.py"},
                    f"{'.' * (k % 9 + 3)}{'F' if k % 5 == 0 else '.'}   [100%]\n"
                    f"{k % 9 + 4} passed{', 1 failed' if k % 5 == 0 else ''} in 0.{k % 90 + 10}s",
                    "Running the tests.")


_BIG_TOOL = {"read_file": "Read", "grep": "Grep", "run_tests": "Bash", "list_dir": "Bash"}


def big_exchange(i: int, tool: str, args: dict, output: str, tag: str = "") -> Exchange:
    name = _BIG_TOOL[tool]
    if tool == "read_file":
        a = {"file_path": args["path"]}
    elif tool == "grep":
        a = {"pattern": args["pattern"], "path": args["path"]}
    elif tool == "run_tests":
        a = {"command": f"pytest -q {args['target']}"}
    else:
        a = {"command": f"ls -l {args['path']}"}
    return Exchange(f"toolu_{tag}b{i:05d}", name, a, output, f"Looking at {next(iter(a.values()))}.")


@dataclass
class Plan:
    session: str = SESSION
    exchanges: list[Exchange] = field(default_factory=list)
    # (size label, target tokens, phase "catch-up" | "warm" | "measure", number of exchanges in the request)
    turns: list[tuple[str, int, str, int]] = field(default_factory=list)


def make_plan(sizes: list[int], warm: int, turns: int, index: int = 0) -> Plan:
    """Session ``index``: its own tool outputs (seed), ids and small exchanges, so that no two
    sessions share content (the proxy's caches are per content hash)."""
    tag = f"{index}x"
    plan = Plan(session=f"{SESSION}-{index}")
    outputs = iter(tool_outputs(2000, seed=7 + index))
    tokens = BASE_TOKENS
    small = 10_000 * index
    for size in sizes:
        label = f"{size // 1000}K" if size % 1000 == 0 else str(size)
        while tokens < size * 0.98:
            tool, args, out = next(outputs)
            ex = big_exchange(len(plan.exchanges), tool, args, out, tag)
            t = tokens_of(ex.messages())
            room = size - tokens
            if t > room:  # cut the output at a line end so the history lands on the size
                keep = max(40, int(len(out) * max(room - 40, 10) / t))
                cut = out.rfind("\n", 0, keep)
                ex.result = out[:cut if cut > 0 else keep]
                t = tokens_of(ex.messages())
            plan.exchanges.append(ex)
            tokens += t
        plan.turns.append((label, size, "catch-up", len(plan.exchanges)))
        for j in range(warm + turns):
            ex = small_exchange(small, tag)
            small += 1
            plan.exchanges.append(ex)
            tokens += tokens_of(ex.messages())
            plan.turns.append((label, size, "warm" if j < warm else "measure", len(plan.exchanges)))
    plan.exchanges.append(small_exchange(small, tag))  # what the model calls after the last turn
    return plan


def body_for(plan: Plan, n: int) -> dict:
    msgs: list[dict] = [{"role": "user", "content": TASK}]
    for ex in plan.exchanges[:n]:
        msgs += ex.messages()
    last = msgs[-1]["content"][-1]
    msgs[-1]["content"][-1] = dict(last, cache_control={"type": "ephemeral"})
    return {"model": MODEL, "max_tokens": 4096, "system": SYSTEM, "tools": TOOLS, "messages": msgs}


# --------------------------------------------------------------------------- the provider (subprocess)


def provider_main(port: int) -> None:
    from ctxproxy.proxy.scripted_provider import Reply, serve_forever

    def reply_for(record) -> Reply:
        call = json.loads(record.headers.get(NEXT_HEADER) or '{"id": "toolu_x", "name": "Bash", "input": {}}')
        return Reply.tool_call(call["name"], call["input"], call_id=call["id"], text=call.get("text"),
                               headers={RECEIVED_HEADER: str(len(record.body))})

    serve_forever(reply_for, "127.0.0.1", port, record_limit=2, name="growth provider")


# --------------------------------------------------------------------------- driving


@dataclass
class Sample:
    ms: float
    received: int
    sent: int = 0
    turn_id: str = ""
    cpu: float = 0.0


HEADERS = {"x-api-key": "sk-ant-bench-not-a-real-key", "anthropic-version": "2023-06-01",
           "content-type": "application/json"}
ADMIN_TOKEN = "growth-bench-admin-token"


async def post(session: aiohttp.ClientSession, url: str, data: bytes, nxt: str, sid: str) -> Sample:
    t0 = time.perf_counter()
    async with session.post(url + "/v1/messages", data=data,
                            headers={**HEADERS, NEXT_HEADER: nxt, "X-Ctx-Session": sid}) as r:
        raw = await r.read()
    ms = (time.perf_counter() - t0) * 1000.0
    if r.status != 200 or b'"tool_use"' not in raw:
        raise SystemExit(f"{url}: status {r.status}: {raw[:300]!r}")
    return Sample(ms, int(r.headers.get(RECEIVED_HEADER, "0")), len(data), r.headers.get("X-Ctx-Turn-Id", ""))


async def run_plan(plans: list[Plan], targets: dict[str, str], pids: dict[str, int]
                   ) -> dict[tuple[str, str], list[Sample]]:
    """Every turn of every session to every target, the sessions interleaved turn by turn.
    Samples by (size label, target) for the measured turns, and by (size label,
    "catch-up:" + target) for the catch-up turns."""
    out: dict[tuple[str, str], list[Sample]] = {}
    names = list(targets)
    timeout = aiohttp.ClientTimeout(total=120)
    sessions = {t: aiohttp.ClientSession(timeout=timeout) for t in names}
    step = 0
    try:
        for i, (label, _size, phase, _n) in enumerate(plans[0].turns):
            for plan in plans:
                n = plan.turns[i][3]
                data = orjson.dumps(body_for(plan, n))
                nxt = plan.exchanges[n].call()
                order = names[step % len(names):] + names[:step % len(names)]
                step += 1
                gc.collect()
                for t in order:
                    pid = pids.get(t)
                    c0 = cpu_seconds(pid) if pid else 0.0
                    s = await post(sessions[t], targets[t], data, nxt, plan.session)
                    s.cpu = (cpu_seconds(pid) - c0) * 1000.0 if pid else 0.0
                    if phase == "measure":
                        out.setdefault((label, t), []).append(s)
                    elif phase == "catch-up":
                        out.setdefault((label, "catch-up:" + t), []).append(s)
            if phase == "catch-up":
                print(f"# {label}: {len(data) / 1024:.0f} KiB request", file=sys.stderr, flush=True)
    finally:
        for s in sessions.values():
            await s.close()
    return out


async def manifests(url: str, ids: list[str]) -> list[dict]:
    out = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as s:
        for tid in ids:
            for _ in range(50):  # the manifest is written after the response: bounded wait
                async with s.get(f"{url}/ctx/v1/manifests/{tid}") as r:
                    if r.status == 200:
                        out.append(await r.json())
                        break
                    if r.status != 404:
                        print(f"# manifests: {r.status} {(await r.text())[:200]}", file=sys.stderr)
                        return out
                await asyncio.sleep(0.05)
    return out


# --------------------------------------------------------------------------- profiling (in process)


async def profile_largest(plan: Plan, fake_url: str, top: int) -> tuple[list[str], str]:
    """Replay one session through an in-process ctxproxy (embedded defaults, so the full default
    pipeline) and cProfile the measured turns of the largest size. The client shares the event
    loop, so the table keeps only the proxy's own code (ctxproxy's files); the raw dump after it
    has everything."""
    from aiohttp import web

    from ctxproxy.config import load_config
    from ctxproxy.proxy.edge.server import make_app

    last = plan.turns[-1][0]
    with tempfile.TemporaryDirectory(prefix="ctxbench-growth-prof-") as tmp:
        cfg = load_config(None, anthropic_upstream=fake_url, openai_upstream=fake_url, port=0, data_dir=tmp)
        runner = web.AppRunner(make_app(cfg), handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        url = f"http://{host}:{port}"
        prof = cProfile.Profile()
        n_prof = 0
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as s:
                for label, _size, phase, n in plan.turns:
                    data = orjson.dumps(body_for(plan, n))
                    nxt = plan.exchanges[n].call()
                    if label == last and phase == "measure":
                        prof.enable()
                        await post(s, url, data, nxt, plan.session)
                        prof.disable()
                        n_prof += 1
                    else:
                        await post(s, url, data, nxt, plan.session)
        finally:
            await runner.cleanup()
    import ctxproxy.filters as _filters

    code_root = str(Path(_filters.__file__).resolve().parent.parent)  # the checkout holding filters/, proxy/...
    st = pstats.Stats(prof)
    rows = []
    for (fname, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        if fname.startswith(code_root) and "/bench/" not in fname and "/tests/" not in fname:
            rows.append((ct, tt, nc, f"{os.path.relpath(fname, code_root)}:{line} `{func}`"))
    lines = [f"cProfile of {n_prof} measured {last}-token turns of one session through an in-process ctxproxy "
             f"(embedded defaults; `make_app`), ms per turn, the proxy's own functions (profiler overhead "
             f"inflates Python-heavy code):\n",
             "| function (file:line) | cumulative ms / turn | self ms / turn | calls / turn |",
             "|---|---:|---:|---:|"]
    for ct, tt, nc, where in sorted(rows, reverse=True)[:top]:
        lines.append(f"| {where} | {ct * 1000 / n_prof:.2f} | {tt * 1000 / n_prof:.2f} | {nc / n_prof:.0f} |")
    lines += ["", "Top self time, proxy code only:", "",
              "| function (file:line) | self ms / turn | calls / turn |", "|---|---:|---:|"]
    for ct, tt, nc, where in sorted(rows, key=lambda r: -r[1])[:top // 2]:
        lines.append(f"| {where} | {tt * 1000 / n_prof:.2f} | {nc / n_prof:.0f} |")
    buf = io.StringIO()
    st2 = pstats.Stats(prof, stream=buf)
    st2.sort_stats("tottime").print_stats(top)
    return lines, buf.getvalue()


# --------------------------------------------------------------------------- report


def request_tokens(plan: Plan, n: int) -> int:
    b = body_for(plan, n)
    return tokens_of([b["system"], b["messages"]]) + COUNT.count(orjson.dumps(TOOLS).decode())


def report(plans: list[Plan], res: dict, mans: dict[str, list[dict]], sizes: list[str], names: list[str],
           args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    w = out.append
    plan = plans[0]
    first_last: dict[str, tuple[int, int]] = {}  # fewest tokens of a first measured turn, most of a last one
    for label in sizes:
        firsts, lasts = [], []
        for pl in plans:
            ns = [n for lb, _s, ph, n in pl.turns if lb == label and ph == "measure"]
            firsts.append(request_tokens(pl, ns[0]))
            lasts.append(request_tokens(pl, ns[-1]))
        first_last[label] = (min(firsts), max(lasts))

    def added(label: str, t: str) -> list[float]:
        d = res[(label, "direct")]
        return [x.ms - y.ms for x, y in zip(res[(label, t)], d)]

    w(f"Sessions: {args.sessions} Anthropic Messages sessions with different content, interleaved turn by turn, "
      f"tool-heavy (one tool_use + tool_result per exchange); per size and session one catch-up turn, "
      f"{args.warm} warm-up turns and {args.turns} measured turns, each adding one small new exchange (40-150 "
      f"tokens) to the previous history ({args.sessions * args.turns} measured turns per size and target). "
      f"Tokens: o200k_base over every model-visible string + tool definitions (all sessions). Added = "
      f"target − direct on the same turn (p50 / p99 of the per-turn differences). Non-stream requests; the "
      f"provider answers with a tool call.\n")
    w("| size | tokens (first → last measured turn) | request KiB p50 | direct p50 ms | noop added p50 | "
      "**ctxproxy added p50** | ctxproxy added p99 | ctxproxy CPU ms / turn | provider received KiB (ctxproxy) | "
      "no-prune added p50 | no-prune CPU ms / turn |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    p50s: dict[str, dict[str, float]] = {t: {} for t in names}
    for label in sizes:
        t0, t1 = first_last[label]
        d = res[(label, "direct")]
        for t in names[1:]:
            p50s[t][label] = pct(added(label, t), 50)
        ctx = res[(label, "ctxproxy")]
        nop = res[(label, "ctxproxy no-prune")]
        w(f"| {label} | {t0:,} → {t1:,} | {pct([x.sent for x in d], 50) / 1024:.0f} | "
          f"{pct([x.ms for x in d], 50):.2f} | "
          f"{p50s['noop'][label]:+.2f} | **{p50s['ctxproxy'][label]:+.2f}** | "
          f"{pct(added(label, 'ctxproxy'), 99):+.2f} | {sum(x.cpu for x in ctx) / len(ctx):.1f} | "
          f"{pct([x.received for x in ctx], 50) / 1024:.0f} | {p50s['ctxproxy no-prune'][label]:+.2f} | "
          f"{sum(x.cpu for x in nop) / len(nop):.1f} |")
    lo, hi = sizes[0], sizes[-1]
    w("")
    w(f"| target | added p50 at {hi} / at {lo} (target ≤ 3 for ctxproxy) |")
    w("|---|---:|")
    for t in names[1:]:
        a, b = p50s[t][hi], p50s[t][lo]
        r = f"{a / b:.2f}" if b > 0 else "n/a"
        v = ""
        if t == "ctxproxy" and b > 0:
            v = " ok" if a / b <= 3 else " **over**"
        w(f"| {t} | {r}{v} |")
    w("\nCatch-up turns (the whole jump to the size is new content: redaction scan, token counts, effects "
      "matching of every new result), added ms, p50 over the sessions:\n")
    w("| size | new tokens in the turn (session 0) | ctxproxy | no-prune | noop |")
    w("|---|---:|---:|---:|---:|")
    prev_tokens = 0
    for label in sizes:
        n = next(n for lb, _s, ph, n in plan.turns if lb == label and ph == "catch-up")
        tk = request_tokens(plan, n)
        d = res[(label, "catch-up:direct")]

        def cu(t: str) -> float:
            return pct([x.ms - y.ms for x, y in zip(res[(label, "catch-up:" + t)], d)], 50)

        w(f"| {label} | {tk - prev_tokens:,} | {cu('ctxproxy'):+.1f} | {cu('ctxproxy no-prune'):+.1f} | "
          f"{cu('noop'):+.1f} |")
        ns = [n for lb, _s, ph, n in plan.turns if lb == label and ph == "measure"]
        prev_tokens = request_tokens(plan, ns[-1])

    for t in ("ctxproxy", "ctxproxy no-prune"):
        ms = mans.get(t) or []
        if not ms:
            continue
        keys: list[str] = []
        for m in ms:
            for k in (m.get("timings_ms") or {}):
                if k not in keys:
                    keys.append(k)
        w(f"\nPer-filter time inside {t} (ms, p50 over the measured turns, from the Context Manifests' "
          "`timings_ms`):\n")
        w("| size | " + " | ".join(keys) + " | tokens in (manifest) | pruned results |")
        w("|---|" + "---:|" * (len(keys) + 2))
        for label in sizes:
            sel = [m for m in ms if m.get("_size") == label]
            cells = [f"{pct([float((m.get('timings_ms') or {}).get(k, 0.0)) for m in sel], 50):.2f}" for k in keys]
            tin = pct([float(((m.get("tokens") or {}).get("input") or 0)) for m in sel], 50)
            pruned = pct([float(len(m.get("pruned") or ())) for m in sel], 50)
            w(f"| {label} | " + " | ".join(cells) + f" | {tin:,.0f} | {pruned:.0f} |")
    return out


async def amain(args: argparse.Namespace) -> None:
    started = time.monotonic()
    sizes = [int(s) for s in args.sizes.split(",")]
    plans = [make_plan(sizes, args.warm, args.turns, k) for k in range(args.sessions)]
    plan = plans[0]
    labels = list(dict.fromkeys(lb for lb, *_ in plan.turns))
    os.environ["CTXPROXY_ADMIN_TOKEN"] = ADMIN_TOKEN  # the proxies inherit it: manifests are read after the run
    tdir = Path(tempfile.mkdtemp(prefix="ctxbench-growth-"))
    fp_port, noop_port, ctx_port, np_port = free_port(), free_port(), free_port(), free_port()
    fake = Proc("provider", [sys.executable, str(Path(__file__).resolve()), "--provider", str(fp_port)], fp_port,
                tdir / "provider.log")
    noop = Proc("noop", [sys.executable, str(HERE / "noop_proxy.py"), "--port", str(noop_port),
                         "--upstream", fake.url], noop_port, tdir / "noop.log")
    common_args = ["--anthropic-upstream", fake.url, "--openai-upstream", fake.url, "--log-level", "WARNING"]
    ctx = Proc("ctxproxy", ctxproxy_argv() + ["serve", "--port", str(ctx_port), "--data-dir", str(tdir / "ctx"),
                                              *common_args], ctx_port, tdir / "ctxproxy.log")
    (tdir / "noprune.toml").write_text("[filters.prune]\ntrigger_tokens = 1000000000\n")
    noprune = Proc("ctxproxy no-prune", ctxproxy_argv() + ["serve", "--port", str(np_port), "--config",
                                                           str(tdir / "noprune.toml"), "--data-dir",
                                                           str(tdir / "noprune"), *common_args],
                   np_port, tdir / "noprune.log")
    procs = [fake, noop, ctx, noprune]
    prof_lines: list[str] = []
    prof_text = ""
    try:
        for p in procs:
            p.start(None)
        await wait_ready(fake, "/")
        await wait_ready(noop, "/")
        await wait_ready(ctx, "/ctx/healthz")
        await wait_ready(noprune, "/ctx/healthz")
        targets = {"direct": fake.url, "noop": noop.url, "ctxproxy": ctx.url, "ctxproxy no-prune": noprune.url}
        pids = {"noop": noop.pid, "ctxproxy": ctx.pid, "ctxproxy no-prune": noprune.pid}
        meter = LoadMeter(lambda: [p.pid for p in procs if p.popen is not None])
        gc.collect()
        gc.freeze()
        res = await run_plan(plans, targets, pids)
        load = meter.summary()
        mans: dict[str, list[dict]] = {}
        for t in ("ctxproxy", "ctxproxy no-prune"):
            ids = [(lb, s.turn_id) for lb in labels for s in res[(lb, t)]]
            got = await manifests(targets[t], [i for _, i in ids])
            by_id = {m.get("turn_id"): m for m in got}
            mans[t] = [dict(by_id[i], _size=lb) for lb, i in ids if i in by_id]
        for p in procs:
            if p.popen is not None and p.popen.poll() is not None:
                raise SystemExit(f"{p.name} died during the run:\n{p.log_tail()}")
        if args.profile:
            print("# profiling the largest size in process ...", file=sys.stderr, flush=True)
            prof_lines, prof_text = await profile_largest(plan, fake.url, args.profile_top)
    finally:
        for p in reversed(procs):
            p.stop()
        shutil.rmtree(tdir, ignore_errors=True)
    names = list(targets)
    body = report(plans, res, mans, labels, names, args)
    body += ["", load]
    if prof_lines:
        body += ["", *prof_lines]
    body.append(f"\nWall time of the run: {time.monotonic() - started:.0f} s.")
    section = section_head("per-turn added latency on a growing conversation" + (", quick" if args.quick else "")) \
        + "\n" + "\n".join(body) + "\n"
    print(section)
    if prof_text:
        print("# raw cProfile, all code, by self time:\n" + prof_text, file=sys.stderr)
    if not args.no_write:
        append_results(section)


def main() -> None:
    ap = argparse.ArgumentParser(description="Per-turn added latency of ctxproxy on a growing conversation.")
    ap.add_argument("--provider", type=int, metavar="PORT", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="6 measured turns per size and session")
    ap.add_argument("--sizes", default="1000,10000,50000,100000,200000", help="conversation sizes in tokens")
    ap.add_argument("--turns", type=int, default=0, help="measured turns per size and session (default 12, quick 6)")
    ap.add_argument("--sessions", type=int, default=5, help="sessions, interleaved turn by turn (default 5)")
    ap.add_argument("--warm", type=int, default=2, help="unmeasured turns per size after the catch-up turn")
    ap.add_argument("--profile", action="store_true", help="also cProfile the largest size in process")
    ap.add_argument("--profile-top", type=int, default=30, help="functions listed per profile table")
    ap.add_argument("--no-write", action="store_true", help="print only, do not append to bench/RESULTS.md")
    args = ap.parse_args()
    if args.provider:
        provider_main(args.provider)
        return
    args.turns = args.turns or (6 if args.quick else 12)
    args.turns = max(2, min(args.turns, 500))
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
