"""Routing: named upstreams under a prefix, key injection, several workers."""
import asyncio
import socket
import subprocess
import sys
import time

import aiohttp
from aiohttp import web
import pytest

from ctxproxy.proxy.scripted_provider import FakeProvider, Reply


async def test_named_upstream_under_a_prefix(make_proxy, fake, monkeypatch):
    async with FakeProvider() as other:
        other.script(Reply.text("from vllm"))
        monkeypatch.setenv("VLLM_KEY", "sk-injected-123")
        proxy = await make_proxy(f'''
[routes.vllm]
api = "openai"
prefix = "/vllm"
upstream = "{other.url}"
api_key_env = "VLLM_KEY"
''')
        client = proxy.openai(api_key="sk-caller")
        client = client.with_options(base_url=proxy.url + "/vllm/v1")
        res = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert res.choices[0].message.content == "from vllm"
        assert other.last.path == "/v1/chat/completions"
        assert other.last.headers["authorization"] == "Bearer sk-injected-123"
        assert not fake.requests  # the default route was not used


async def test_injected_anthropic_key_replaces_callers(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("ANTH_KEY", "sk-ant-injected")
    proxy = await make_proxy('[routes.anthropic]\napi = "anthropic"\nupstream = "http://unused"\n'
                             'api_key_env = "ANTH_KEY"\n')
    await proxy.anthropic(api_key="sk-ant-caller").messages.create(
        model="claude-opus-4-8", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    h = fake.last.headers
    assert h["x-api-key"] == "sk-ant-injected" and "authorization" not in h


async def test_missing_key_env_is_a_config_error(make_proxy):
    from ctxproxy.config import ConfigError

    with pytest.raises(ConfigError, match="NOPE_KEY is not set"):
        await make_proxy('[routes.x]\napi = "openai"\nprefix = "/x"\nupstream = "http://a"\napi_key_env = "NOPE_KEY"\n')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="needs SO_REUSEPORT")
async def test_workers_share_one_port(tmp_path, fake):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli", "serve", "--workers", "2", "--port",
                             str(port), "--data-dir", str(tmp_path / "d"), "--openai-upstream", fake.url],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        pids = set()
        deadline = time.monotonic() + 30
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
            while time.monotonic() < deadline and len(pids) < 2:
                try:
                    async with s.get(f"http://127.0.0.1:{port}/ctx/healthz") as r:
                        pids.add((await r.json())["pid"])
                    await asyncio.sleep(0.02)  # leave the CPU to the worker still starting
                except aiohttp.ClientError:
                    await asyncio.sleep(0.2)
            async with s.post(f"http://127.0.0.1:{port}/v1/chat/completions",
                              json={"model": "m", "messages": [{"role": "user", "content": "x"}]}) as r:
                assert r.status == 200
        assert len(pids) == 2 and proc.pid not in pids
    finally:
        proc.terminate()
        proc.wait(15)
    assert proc.returncode is not None


async def test_paths_name_their_api_exactly(make_proxy, serve_app):
    """OpenAI's Assistants API ends in ``/messages`` too: it stays OpenAI's, and
    its key never goes to Anthropic. The client's ``Expect: 100-continue`` was
    answered by the proxy; the provider gets the body without waiting for one."""
    seen = {"anthropic": [], "openai": []}

    def upstream(name):
        async def handler(request):
            seen[name].append((request.path, request.headers.get("Authorization"),
                               request.headers.get("Expect"), await request.read()))
            return web.json_response({"id": "x"})
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        return app

    proxy = await make_proxy(anthropic_upstream=await serve_app(upstream("anthropic")),
                             openai_upstream=await serve_app(upstream("openai")))
    body = {"role": "user", "content": "hello"}
    async with aiohttp.ClientSession() as s:
        for path in ("/v1/threads/thread_1/messages", "/v1/threads/thread_1/messages/"):
            async with s.post(proxy.url + path, json=body, headers={"Authorization": "Bearer sk-openai"}) as r:
                assert r.status == 200
        async with s.post(proxy.url + "/v1/messages", json={"model": "c", "max_tokens": 5, "messages": [body]},
                          headers={"x-api-key": "sk-ant", "Expect": "100-continue"}) as r:
            assert r.status == 200
    assert [p for p, *_ in seen["openai"]] == ["/v1/threads/thread_1/messages", "/v1/threads/thread_1/messages/"]
    assert all(auth == "Bearer sk-openai" for _, auth, _, _ in seen["openai"])
    ((path, auth, expect, got),) = seen["anthropic"]
    assert path == "/v1/messages" and auth is None and expect is None and b'"hello"' in got
