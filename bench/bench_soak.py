"""Soak: many distinct sessions through one ctxproxy, its RSS sampled as it goes.

    python bench/bench_soak.py                      # 10 minutes, 32 clients, default pipeline
    python bench/bench_soak.py --minutes 2          # a shorter soak
    python bench/bench_soak.py --config bench/core-only.toml --no-write

What it does (everything on 127.0.0.1, every loop bounded by the clock):

* starts the scripted provider (``bench/run.py --serve-provider``) and one
  ``ctxproxy serve`` on a fresh data directory;
* runs ``--clients`` (32) clients at once, each opening a new session every
  ``--per-session`` (5) requests: small tool turns, half Chat Completions
  (a session known by its opening, no id sent), half Anthropic Messages
  (Claude Code's ``metadata.user_id`` names the session). The provider answers
  each turn with a tool call, which the next request carries back with its
  result, so the effect ledger, the checkpoint and the session index all see
  every session;
* samples the proxy's memory every ``--every`` seconds from ``/proc/<pid>/status``
  (VmRSS, and its anonymous and file-backed parts: ``RssAnon`` is the
  process's own heap, ``RssFile`` the store's mapped pages) and prints the series.

The verdict compares the median RSS of the run's second tenth (after start-up and
the first sessions filled the caches) with the median of its last tenth: flat is
within ±10 %. It also fits anonymous memory against sessions over that span: KB per
session (a cache that grows with sessions shows here first).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LoadMeter, append_results, section_head  # noqa: E402
from run import (HERE, NEXT_HEADER, Proc, ctxproxy_argv, free_port, status_kb,  # noqa: E402
                 wait_ready)

_SYSTEM = ("You are a coding agent working in a Python repository. Use the tools to read and edit "
           "files. Keep answers short and run the tests after every change.")
_FILE = "\n".join(f"{i:3d}  value_{i} = config.get('key_{i}', {i})" for i in range(12))


class Client:
    """One agent: a new session every ``per_session`` requests, each a small tool turn."""

    def __init__(self, n: int, base: str, per_session: int, rng: random.Random):
        self.n, self.base, self.per_session, self.rng = n, base, per_session, rng
        self.requests = self.sessions = self.errors = 0
        self.last_error = ""

    def _body(self, api: str, sid: str, task: str, calls: list[tuple[str, str]]) -> bytes:
        if api == "chat":
            msgs: list[dict] = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": task}]
            for cid, path in calls:
                msgs.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": cid, "type": "function",
                     "function": {"name": "read_file", "arguments": json.dumps({"path": path})}}]})
                msgs.append({"role": "tool", "tool_call_id": cid, "content": f"# {path}\n{_FILE}"})
            return json.dumps({"model": "gpt-5", "messages": msgs, "tools": [{"type": "function", "function": {
                "name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}],
                "max_completion_tokens": 512}).encode()
        content: list[dict] = [{"type": "text", "text": task}]
        msgs = [{"role": "user", "content": content}]
        for cid, path in calls:
            msgs.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": cid, "name": "read_file", "input": {"path": path}}]})
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": cid, "content": f"# {path}\n{_FILE}"}]})
        return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 512, "system": _SYSTEM, "messages": msgs,
                           "tools": [{"name": "read_file", "input_schema": {"type": "object"}}],
                           "metadata": {"user_id": f"user_soak_account__session_{sid}"}}).encode()

    async def run(self, http: aiohttp.ClientSession, until: float) -> None:
        while time.monotonic() < until:  # bounded by the clock
            await self.session(http, until)

    async def session(self, http: aiohttp.ClientSession, until: float = float("inf")) -> None:
        """One session of ``per_session`` requests (fewer when ``until`` comes first)."""
        self.sessions += 1
        s = self.sessions
        api = "chat" if (self.n + s) % 2 else "anthropic"
        sid = f"{self.n:02d}{s:06d}{self.rng.getrandbits(40):010x}"
        task = f"Session {sid}: the service ignores CTX_TIMEOUT_{self.rng.getrandbits(24)}. Find out why."
        calls: list[tuple[str, str]] = []
        for k in range(self.per_session):
            if time.monotonic() >= until:
                return
            cid = (f"call_{sid}{k}" if api == "chat" else f"toolu_{sid}{k}")
            path = f"src/mod_{self.rng.randrange(1000)}.py"
            nxt = json.dumps({"id": cid, "name": "read_file", "input": {"path": path}})
            url = self.base + ("/v1/chat/completions" if api == "chat" else "/v1/messages")
            headers = {"Content-Type": "application/json", NEXT_HEADER: nxt}
            headers.update({"Authorization": "Bearer sk-soak-not-a-real-key"} if api == "chat" else
                           {"x-api-key": "sk-ant-soak-not-a-real-key", "anthropic-version": "2023-06-01"})
            try:
                async with http.post(url, data=self._body(api, sid, task, calls), headers=headers) as r:
                    raw = await r.read()
                if r.status != 200:
                    self.errors += 1
                    self.last_error = f"{r.status}: {raw[:200]!r}"
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                self.errors += 1
                self.last_error = repr(exc)
            self.requests += 1
            calls.append((cid, path))


def mem(pid: int) -> dict[str, float]:
    return {k: status_kb(pid, k) / 1024 for k in ("VmRSS", "RssAnon", "RssFile", "VmHWM")}


async def amain(args: argparse.Namespace) -> None:
    tmp = tempfile.TemporaryDirectory(prefix="ctxsoak-")
    tdir = Path(tmp.name)
    fp_port, port = free_port(), free_port()
    fake = Proc("fakeprovider", [sys.executable, str(HERE / "run.py"), "--serve-provider", str(fp_port),
                                 "--event-delay", "0"], fp_port, tdir / "fake.log")
    ctx = Proc("ctxproxy", ctxproxy_argv() + ["serve", "--port", str(port), "--data-dir", str(tdir / "data"),
                                              "--anthropic-upstream", f"http://127.0.0.1:{fp_port}",
                                              "--openai-upstream", f"http://127.0.0.1:{fp_port}"]
               + (["--config", args.config] if args.config else []), port, tdir / "ctx.log")
    rows: list[tuple[float, int, int, dict[str, float]]] = []
    clients: list[Client] = []
    try:
        fake.start(None)
        await wait_ready(fake, "/")
        ctx.start(None)
        await wait_ready(ctx, "/ctx/healthz", timeout=120)
        meter = LoadMeter(lambda: [p.pid for p in (fake, ctx) if p.popen is not None])
        rng = random.Random(args.seed)
        clients = [Client(i, ctx.url, args.per_session, random.Random(rng.getrandbits(64)))
                   for i in range(args.clients)]
        t0 = time.monotonic()
        until = t0 + args.minutes * 60
        conn = aiohttp.TCPConnector(limit=args.clients * 2)
        async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=60)) as http:
            tasks = [asyncio.create_task(c.run(http, until)) for c in clients]

            async def sample() -> None:
                rows.append((time.monotonic() - t0, sum(c.requests for c in clients),
                             sum(c.sessions for c in clients), mem(ctx.pid)))
                t, n, s, m = rows[-1]
                print(f"# {t:6.0f}s  {n:7d} req  {s:6d} sessions  RSS {m['VmRSS']:6.1f} MB "
                      f"(anon {m['RssAnon']:6.1f}, file {m['RssFile']:6.1f})", file=sys.stderr, flush=True)

            await sample()
            while not all(t.done() for t in tasks):  # bounded: every client stops at `until`
                await asyncio.wait(tasks, timeout=args.every)
                if ctx.popen is not None and ctx.popen.poll() is not None:
                    raise SystemExit(f"ctxproxy died:\n{ctx.log_tail()}")
                await sample()
            for t in tasks:
                t.result()
        load = meter.summary()
    finally:
        ctx.stop()
        fake.stop()
        log_tail = ctx.log_tail(5)
        tmp.cleanup()

    report = render(args, rows, clients, load)
    print(report)
    if log_tail.strip():
        print("# last ctxproxy log lines:\n" + log_tail, file=sys.stderr)
    if not args.no_write:
        append_results(section_head("RSS over a soak of distinct sessions") + "\n" + report)


def render(args: argparse.Namespace, rows: list, clients: list[Client], load: str) -> str:
    reqs = sum(c.requests for c in clients)
    sessions = sum(c.sessions for c in clients)
    errors = sum(c.errors for c in clients)
    dur = rows[-1][0] if rows else 0.0
    lines = [f"Workload: {args.clients} clients, a new session every {args.per_session} requests (small tool "
             f"turns, Chat and Anthropic alternating), {args.minutes:g} min; pipeline: "
             f"{('`--config ' + args.config + '`') if args.config else 'the embedded defaults'}. "
             f"{reqs} requests ({reqs / max(dur, 1e-9):.0f}/s), {sessions} sessions, {errors} errors"
             + (f" (last: {next(c.last_error for c in clients if c.last_error)})" if errors else "") + ".", "",
             "| s | requests | sessions | RSS MB | anon MB | file MB |", "|---:|---:|---:|---:|---:|---:|"]
    for t, n, s, m in rows:
        lines.append(f"| {t:.0f} | {n} | {s} | {m['VmRSS']:.1f} | {m['RssAnon']:.1f} | {m['RssFile']:.1f} |")
    k = max(1, len(rows) // 10)
    early, late = rows[k:2 * k] or rows[:1], rows[-k:]
    base = statistics.median(r[3]["VmRSS"] for r in early)
    end = statistics.median(r[3]["VmRSS"] for r in late)
    growth = (end - base) / base * 100
    span = rows[k:]
    slope = ""
    if len(span) >= 3 and span[-1][2] > span[0][2]:
        xs = [r[2] for r in span]
        ys = [r[3]["RssAnon"] * 1024 for r in span]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        kb = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        slope = f" Anonymous memory against sessions after the first tenth: {kb:+.2f} KB per session."
    lines += ["", f"RSS: {base:.1f} MB (median of the second tenth) → {end:.1f} MB (median of the last tenth): "
              f"{growth:+.1f} % ({'flat' if abs(growth) <= 10 else '**not flat**'}, target ±10 %); peak "
              f"{max(r[3]['VmHWM'] for r in rows):.1f} MB.{slope}", "", load]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description="RSS of ctxproxy over a soak of many distinct sessions.")
    ap.add_argument("--minutes", type=float, default=10.0, help="how long the clients send (10)")
    ap.add_argument("--clients", type=int, default=32, help="clients sending at once (32)")
    ap.add_argument("--per-session", type=int, default=5, help="requests per session (5)")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between RSS samples (5)")
    ap.add_argument("--config", default=None, help="a ctxproxy config file (default: the embedded defaults)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true", help="do not append to bench/RESULTS.md")
    args = ap.parse_args()
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
