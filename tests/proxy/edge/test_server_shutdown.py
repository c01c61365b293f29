"""Stopping ``ctxproxy serve`` (a real subprocess on 127.0.0.1) with requests
in flight: SIGTERM ends it within a bound, with exit code 0; requests that
finish within ``server.shutdown_timeout`` finish normally, the others are cut
with an error in the caller's format; records of finished turns reach the
store (the background writer commits before the store closes)."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import orjson
import pytest
from serveproc import kill_group, until_healthy

from ctxproxy.proxy.ports import free_port

from ctxproxy.proxy.scripted_provider import FakeProviderThread, Reply
from ctxproxy.store import open_store

HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json"}
CONFIG = """
[pipeline]
request = ["identify", "effects"]
"""
TOOLS = [{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}]


class Serve:
    """``python -m ctxproxy.proxy.cli.main serve`` in its own process group, killed if a test leaves it."""

    def __init__(self, tmp: Path, upstream: str, *extra: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = tmp / "data"
        config = tmp / "ctxproxy.toml"
        config.write_text(CONFIG)
        self.log = tmp / "serve.log"
        argv = ["serve", "--port", str(self.port), "--data-dir", str(self.data), "--config", str(config),
                "--anthropic-upstream", upstream, "--openai-upstream", upstream, *extra]
        env = {**os.environ, "OTEL_SDK_DISABLED": "true"}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", *argv], env=env,
                                         stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)

    async def ready(self, http: aiohttp.ClientSession, timeout: float = 30.0) -> None:
        await until_healthy(http, self.url, lambda: self.proc.poll() is None,
                            lambda: f"exit {self.proc.returncode}, {self.log.read_text()}", timeout)

    def terminate(self) -> None:
        self.proc.send_signal(signal.SIGTERM)

    async def exited(self, timeout: float) -> int:
        """The exit code, waiting at most ``timeout`` seconds (without blocking the loop):
        a process still running then fails the test (``TimeoutExpired``)."""
        return await asyncio.to_thread(self.proc.wait, timeout)

    def kill(self) -> None:
        kill_group(self.proc)


@pytest.fixture
def provider():
    with FakeProviderThread() as fp:
        yield fp


@pytest.fixture
def serve(tmp_path, provider):
    started: list[Serve] = []

    def start(*extra: str) -> Serve:
        s = Serve(tmp_path, provider.url, *extra)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


def body(stream: bool = True, tools: bool = False) -> bytes:
    b = {"model": "claude-test-1", "max_tokens": 100, "stream": stream,
         "messages": [{"role": "user", "content": "deploy it"}]}
    if tools:
        b["tools"] = TOOLS
    return orjson.dumps(b)


async def read_events(resp: aiohttp.ClientResponse, timeout: float) -> list[dict]:
    """Every SSE data payload until the stream ends (bounded)."""
    events = []

    async def go() -> None:
        async for line in resp.content:
            if line.startswith(b"data: "):
                events.append(orjson.loads(line[6:]))

    await asyncio.wait_for(go(), timeout)
    return events


async def test_sigterm_with_an_open_stream_exits_in_bounded_time(serve, provider):
    """The provider holds the stream open; SIGTERM: the client gets an error event
    and the end of the stream, the process exits 0 within the default grace
    (5 s) plus a little — not after aiohttp's default minutes."""
    provider.script(Reply.tool_call("Bash", {"command": "gh pr create"}, call_id="toolu_shutdown_1"),
                    Reply.text("this stream never ends", stall_after_events=2))
    proxy = serve("--log-level", "INFO")
    async with aiohttp.ClientSession() as http:
        await proxy.ready(http)
        h = {**HEADERS, "X-Ctx-Session": "shutdown-s1"}
        async with http.post(proxy.url + "/v1/messages", data=body(tools=True), headers=h) as r:
            done = await read_events(r, 10)
        assert done[-1]["type"] == "message_stop"
        async with http.post(proxy.url + "/v1/messages", data=body(), headers=h,
                             timeout=aiohttp.ClientTimeout(total=30)) as r:
            assert r.status == 200
            first = await asyncio.wait_for(r.content.readline(), 10)
            assert first.startswith(b"event: message_start")
            proxy.terminate()
            events = await read_events(r, 20)
        code = await proxy.exited(15)  # the grace and a margin; aiohttp alone would wait minutes
    log = proxy.log.read_text()
    assert code == 0, log
    assert events and events[-1]["type"] == "error", events
    assert "ctxproxy is shutting down" in events[-1]["error"]["message"]
    assert "Traceback" not in log, log
    # the finished turn's tool call reached the store (the writer committed before the store closed)
    store = open_store(str(proxy.data / "store"))
    try:
        effect = store.effects.by_call_id("default", "toolu_shutdown_1", session="shutdown-s1")
        assert effect is not None and effect.tool == "Bash"
    finally:
        store.close()


async def test_sigterm_lets_a_stream_finish_within_the_grace(serve, provider):
    """A stream that ends within server.shutdown_timeout is not cut."""
    provider.script(Reply.text("slow but finishing " * 4, delay_between_events=0.1, delta_chars=8))
    proxy = serve("--shutdown-timeout", "10", "--log-level", "WARNING")
    async with aiohttp.ClientSession() as http:
        await proxy.ready(http)
        async with http.post(proxy.url + "/v1/messages", data=body(), headers=HEADERS) as r:
            await asyncio.wait_for(r.content.readline(), 10)
            proxy.terminate()
            events = await read_events(r, 15)
        assert await proxy.exited(15) == 0
    assert events[-1]["type"] == "message_stop"
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text == "slow but finishing " * 4


async def test_sigterm_while_the_provider_sends_no_headers(serve, provider):
    """A call still waiting for the provider's headers is answered with an error
    in its API format when cut (a non-streaming call here)."""
    provider.script(Reply.text("never", hang=True))
    proxy = serve("--shutdown-timeout", "0.5", "--log-level", "WARNING")
    async with aiohttp.ClientSession() as http:
        await proxy.ready(http)
        call = asyncio.create_task(http.post(proxy.url + "/v1/messages", data=body(stream=False), headers=HEADERS,
                                             timeout=aiohttp.ClientTimeout(total=20)))
        for _ in range(1000):  # until the provider has the request (bounded: 20 s)
            if provider.requests:
                break
            await asyncio.sleep(0.02)
        assert provider.requests
        proxy.terminate()
        r = await call
        payload = await r.json()
        code = await proxy.exited(10)
    assert code == 0
    assert r.status == 502
    assert payload["type"] == "error" and payload["error"]["message"].startswith("upstream")


async def test_sigterm_when_idle_exits_at_once(serve):
    proxy = serve("--log-level", "WARNING")
    async with aiohttp.ClientSession() as http:
        await proxy.ready(http)
    proxy.terminate()
    assert await proxy.exited(10) == 0
