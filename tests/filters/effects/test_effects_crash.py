"""Crash safety and concurrency of the effect ledger with real ``ctxproxy
serve`` subprocesses on 127.0.0.1.

- kill -9 at random points during streams of tool-result turns (50+ kills,
  four proxies sharing one data dir so traffic continues while one
  restarts); afterwards the store opens cleanly and every tool result the
  provider received has its effect record, completed (write-ahead holds);
- ``serve --workers 2``: two worker processes writing one ledger at once.
"""
from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import orjson
import pytest
from serveproc import until_healthy

from ctxproxy.proxy.ports import free_port

from ctxproxy.proxy.scripted_provider import FakeProviderThread, Reply

from ctxproxy.store import open_store

CONFIG = """
[pipeline]
request = ["identify", "effects", "inject"]
"""
TOOLS = [{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}]
KILLS = 50
TIME_LIMIT = 300.0  # a guard against a hang only: the loop ends at KILLS kills (~15 s on a quiet machine)


class ProxyProcess:
    """One ``ctxproxy serve`` process slot, restarted after each kill.

    ``zygote=None``: started as ``python -m ctxproxy.proxy.cli.main serve ...``.
    With a zygote: forked from a process that already imported ctxproxy and
    loaded the token vocabulary, then runs the same ``cli.main(["serve", ...])``
    — a cold Python start costs ~1 s of CPU, which 50 restarts on a small
    shared machine cannot afford within the test's time budget."""

    def __init__(self, data_dir: Path, upstream: str, config: Path, log: Path, workers: int = 1,
                 zygote: "Zygote | None" = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.argv = ["serve", "--port", str(self.port), "--data-dir", str(data_dir), "--config", str(config),
                     "--anthropic-upstream", upstream, "--openai-upstream", upstream, "--log-level", "WARNING"]
        if workers > 1:
            self.argv += ["--workers", str(workers)]
        self.log = log
        self.zygote = zygote
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.ready = False
        self.starts = 0

    @property
    def kind(self) -> str:
        return "fork" if self.zygote else "exec"

    def start(self) -> None:
        if self.zygote is not None:
            self.pid = self.zygote.spawn(self.argv, self.log)
        else:
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", *self.argv],
                                             stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
            self.pid = self.proc.pid
        self.starts += 1

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False

    async def wait_ready(self, http: aiohttp.ClientSession, timeout: float = 30.0) -> None:
        await until_healthy(http, self.url, self.alive, lambda: f"proxy {self.pid}, see {self.log}", timeout,
                            poll=0.02, request_timeout=0.5)
        self.ready = True

    def kill(self) -> None:
        """kill -9 this proxy (its own process group: the server and any workers)."""
        self.ready = False
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc is not None:
            self.proc.wait(10)
        else:
            for _ in range(500):  # the zygote reaps it
                if not self.alive():
                    break
                time.sleep(0.01)

    def stop(self) -> None:
        self.ready = False
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


ZYGOTE = r"""
import json, os, signal, sys
import ctxproxy.proxy.cli.main as cli
import ctxproxy.proxy.edge.server, ctxproxy.filters.identify, ctxproxy.filters.effects.filter, ctxproxy.filters.inject.filter
import ctxproxy.store.services.memory.tool, ctxproxy.store.services.redaction  # serve's start imports these: the
# memory gate compiles its threat rules as it loads (~2 s of a forked child's start otherwise)
from ctxproxy.filters.tokens import encoding
encoding()  # the vocabulary, shared copy-on-write by every child
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
print("ready", flush=True)
for line in sys.stdin:
    argv, log = json.loads(line)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), 2)
        code = 1
        try:
            code = cli.main(argv)
        finally:
            os._exit(code or 0)
    print(pid, flush=True)
"""


class Zygote:
    """A process that forks ``ctxproxy serve`` children on request (see ProxyProcess)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        assert self.proc.stdout.readline().strip() == "ready"

    def spawn(self, argv: list[str], log: Path) -> int:
        self.proc.stdin.write(orjson.dumps([argv, str(log)]).decode() + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


class Cut(Exception):
    """The stream ended before message_stop (the proxy died mid-turn)."""


async def tool_turn(http: aiohttp.ClientSession, url: str, session: str, messages: list) -> dict:
    """One streamed Anthropic turn; returns the tool_use block the model made."""
    body = {"model": "claude-test-1", "max_tokens": 100, "stream": True, "tools": TOOLS, "messages": messages}
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "X-Ctx-Session": session}
    call: dict = {}
    args = []
    done = False
    async with http.post(url + "/v1/messages", data=orjson.dumps(body), headers=headers,
                         timeout=aiohttp.ClientTimeout(total=10)) as r:
        if r.status != 200:
            raise Cut(f"status {r.status}")
        async for line in r.content:
            if not line.startswith(b"data: "):
                continue
            ev = orjson.loads(line[6:])
            t = ev.get("type")
            if t == "content_block_start" and ev["content_block"]["type"] == "tool_use":
                call = {"id": ev["content_block"]["id"], "name": ev["content_block"]["name"]}
            elif t == "content_block_delta" and ev["delta"].get("type") == "input_json_delta":
                args.append(ev["delta"]["partial_json"])
            elif t == "error":
                raise Cut(ev["error"]["message"])
            elif t == "message_stop":
                done = True
    if not done or not call:
        raise Cut("stream cut")
    call["input"] = orjson.loads("".join(args) or "{}")
    return call


def reply_for(record) -> Reply:
    n = len(record.json.get("messages", [])) if isinstance(record.json, dict) else 0
    return Reply.tool_call("Bash", {"command": f"deploy --step {n}"}, delay_between_events=0.003, delta_chars=6)


async def drive(sessions: list[str], proxies: list[ProxyProcess], stop: asyncio.Event,
                stats: dict) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
        async def one(session: str) -> None:
            messages = [{"role": "user", "content": f"{session}: deploy every step"}]
            while not stop.is_set():
                ups = [p for p in proxies if p.ready]
                if not ups:
                    await asyncio.sleep(0.02)
                    continue
                try:
                    call = await tool_turn(http, random.choice(ups).url, session, messages)
                except (aiohttp.ClientError, asyncio.TimeoutError, Cut, ConnectionError):
                    stats["cut"] += 1
                    await asyncio.sleep(0.005)
                    continue  # retry the same turn (same history), maybe on another proxy
                stats["turns"] += 1
                step = len(messages)
                messages += [{"role": "assistant", "content": [{"type": "tool_use", **call}]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"],
                                                           "content": f"deployed: https://deploy.example/{session}/{step}"}]}]
                if len(messages) > 120:  # keep bodies small: start a new session
                    stats["sessions"].append(session)
                    session = f"{session}+"
                    messages = [{"role": "user", "content": f"{session}: deploy every step"}]
            stats["sessions"].append(session)

        await asyncio.gather(*(one(s) for s in sessions))


def check_ledger(store, requests) -> int:
    """Every tool result in every request the provider received is recorded, completed (each
    distinct result once: a request carries its session's whole history)."""
    checked = 0
    seen: set[tuple[str, str, str]] = set()
    for rec in requests:
        body = rec.json
        if not isinstance(body, dict) or rec.api != "anthropic":
            continue
        session = rec.headers.get("X-Ctx-Session")
        assert session is None  # the proxy strips X-Ctx-* headers upstream
        first = body["messages"][0]["content"]
        session = first.split(":")[0]
        for msg in body["messages"]:
            if msg["role"] != "user" or not isinstance(msg["content"], list):
                continue
            for block in msg["content"]:
                if block.get("type") != "tool_result" or (session, block["tool_use_id"], block["content"]) in seen:
                    continue
                seen.add((session, block["tool_use_id"], block["content"]))
                effect = store.effects.by_call_id("default", block["tool_use_id"], session=session)
                assert effect is not None, f"no effect for {block['tool_use_id']} ({session})"
                assert effect.state == "completed", (effect, store.effects.by_key("default", effect.key))
                assert block["content"].split(": ", 1)[1] in effect.refs
                checked += 1
    return checked


async def test_kill_9_during_tool_result_turns_loses_no_effect(tmp_path):
    config = tmp_path / "ctxproxy.toml"
    config.write_text(CONFIG)
    data = tmp_path / "data"
    rng = random.Random(int(os.environ.get("CTX_CRASH_SEED", "0")) or None)
    zygote = Zygote()
    with FakeProviderThread(default_reply=reply_for) as fake:
        # one slot restarts with a cold `python -m ctxproxy.proxy.cli.main serve`, three fork from the zygote
        proxies = [ProxyProcess(data, fake.url, config, tmp_path / f"proxy{i}.log", zygote=zygote if i else None)
                   for i in range(4)]
        stop = asyncio.Event()
        stats = {"turns": 0, "cut": 0, "sessions": []}
        kills = {"exec": 0, "fork": 0}
        t0 = time.monotonic()
        async with aiohttp.ClientSession() as http:
            for p in proxies:  # the first start creates the store; the others join it
                p.start()
                await p.wait_ready(http)
            driver = asyncio.create_task(drive([f"crash-s{i}" for i in range(3)], proxies, stop, stats))
            restarts: set[asyncio.Task] = set()

            async def restart(p: ProxyProcess) -> None:
                await asyncio.sleep(rng.uniform(0.0, 0.05))
                p.start()
                await p.wait_ready(http)

            try:
                while sum(kills.values()) < KILLS and time.monotonic() - t0 < TIME_LIMIT:
                    await asyncio.sleep(rng.uniform(0.02, 0.25))
                    ups = [p for p in proxies if p.ready]
                    if len(ups) < 2:
                        continue
                    victim = rng.choice(ups)
                    victim.kill()
                    kills[victim.kind] += 1
                    task = asyncio.create_task(restart(victim))
                    restarts.add(task)
                    task.add_done_callback(restarts.discard)
                await asyncio.gather(*restarts)
            finally:
                stop.set()
                await asyncio.wait_for(driver, 20)
                for p in proxies:
                    p.kill()  # the last ones die by kill -9 too
                zygote.close()
        requests = list(fake.requests)
    elapsed = time.monotonic() - t0
    store = open_store(data / "store")  # opens cleanly after the kills
    try:
        checked = check_ledger(store, requests)
        pending = store.effects.list("default", state="pending")
    finally:
        store.close()
    print(f"\n{sum(kills.values())} kills ({kills['exec']} cold-started, {kills['fork']} forked) in {elapsed:.1f}s; "
          f"{stats['turns']} turns completed, {stats['cut']} cut; {len(requests)} provider requests, "
          f"{checked} tool results checked, {len(pending)} still pending")
    assert sum(kills.values()) >= KILLS, f"only {kills} kills in {TIME_LIMIT}s"
    assert kills["exec"] >= 1 and stats["cut"] > 0 and checked > 100


async def test_two_workers_write_one_ledger_concurrently(tmp_path):
    if not hasattr(socket, "SO_REUSEPORT"):
        pytest.skip("needs SO_REUSEPORT")
    config = tmp_path / "ctxproxy.toml"
    config.write_text(CONFIG)
    data = tmp_path / "data"
    sessions = [f"w-s{i}" for i in range(8)]
    turns = 8
    with FakeProviderThread(default_reply=reply_for) as fake:
        p = ProxyProcess(data, fake.url, config, tmp_path / "workers.log", workers=2)
        p.start()
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as http:
                await p.wait_ready(http)
                pids = set()
                deadline = time.monotonic() + 30  # both workers load the vocabulary; a busy machine is slow
                while time.monotonic() < deadline:  # wait until both workers answer
                    async with http.get(p.url + "/ctx/healthz") as r:
                        pids.add((await r.json())["pid"])
                    if len(pids) == 2:
                        break
                    await asyncio.sleep(0.02)
                assert len(pids) == 2, "both workers should be serving"

                async def one(session: str) -> None:
                    messages = [{"role": "user", "content": f"{session}: deploy every step"}]
                    for step in range(turns):
                        call = await tool_turn(http, p.url, session, messages)
                        messages += [{"role": "assistant", "content": [{"type": "tool_use", **call}]},
                                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"],
                                                                   "content": f"deployed: https://deploy.example/{session}/{step}"}]}]
                    await tool_turn(http, p.url, session, messages)  # carries the last result

                await asyncio.gather(*(one(s) for s in sessions))
                await asyncio.sleep(0.3)  # the last responses' pending writes run off the event loop
        finally:
            p.stop()
        requests = list(fake.requests)
    store = open_store(data / "store")
    try:
        assert check_ledger(store, requests) > 0
        for s in sessions:
            recs = store.effects.list("default", session=s)
            assert [r.state for r in recs].count("completed") == turns
            assert [r.state for r in recs].count("pending") == 1  # the last call, whose result never came
            threads = store.sessions.get("default", s)["effects"]["threads"]
            assert len(threads) == 1  # no lost update split the session's state
    finally:
        store.close()
