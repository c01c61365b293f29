"""Routing: named upstreams under a prefix, key injection, several workers."""
import asyncio
import socket
import subprocess
import sys
import time

import aiohttp
from aiohttp import web
import pytest
from ctxproxy.proxy.ports import free_port

from ctxproxy.proxy.scripted_provider import FakeProvider, Reply
from yarl import URL


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


@pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="needs SO_REUSEPORT")
async def test_workers_share_one_port(tmp_path, fake):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", "--workers", "2", "--port",
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


# A model call spelled differently (escapes, dot segments, doubled slashes) is
# still a model call and gets the filters; a route prefix cannot be climbed out
# of; query strings and pass-through paths are kept.
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a GitHub token shape the redact filter knows
CHAT = ('{"model":"m","messages":[{"role":"user","content":"my token is %s"}]}' % GHP).encode()
MESSAGES = ('{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"my token is %s"}]}' % GHP).encode()


async def _post(url: str, path: str, body: bytes, **headers) -> aiohttp.ClientResponse:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as s:
        async with s.post(URL(url + path, encoded=True), data=body,
                          headers={"content-type": "application/json", **headers}) as r:
            await r.read()
            return r


@pytest.mark.parametrize("path", ["/v1/%63hat/completions", "/v1/chat%2Fcompletions", "/v1/./chat/completions",
                                  "/v1//chat/completions", "/v1/%2E/chat/completions"])
async def test_escaped_chat_path_is_filtered(make_proxy, fake, path):
    proxy = await make_proxy()
    r = await _post(proxy.url, path, CHAT, authorization="Bearer sk-x")
    assert "x-ctx-turn-id" in r.headers  # a turn: the pipeline ran
    assert fake.requests and GHP.encode() not in fake.last.body


@pytest.mark.parametrize("path", ["/v1/./messages", "//v1/messages", "/v1//messages", "/v1/%6Dessages",
                                  "/v1/messages%2F"])
async def test_escaped_anthropic_path_is_filtered(make_proxy, fake, path):
    proxy = await make_proxy()
    r = await _post(proxy.url, path, MESSAGES, **{"x-api-key": "sk-ant-x", "anthropic-version": "2023-06-01"})
    assert "x-ctx-turn-id" in r.headers
    assert fake.requests and GHP.encode() not in fake.last.body


async def test_prefix_cannot_be_climbed_out_of(make_proxy, fake):
    async with FakeProvider() as other:
        other.script(Reply.text("from vllm"))
        proxy = await make_proxy(f'[routes.vllm]\napi = "openai"\nprefix = "/vllm"\nupstream = "{other.url}/base"\n')
        r = await _post(proxy.url, "/vllm/v1/chat/completions?q=1&x=%2F", CHAT)
        assert r.status == 404  # the fake has no /base/...; what matters is what it was asked
        assert (other.last.path, other.last.query) == ("/base/v1/chat/completions", "q=1&x=/")
        await _post(proxy.url, "/vllm/../vllm/v1/../v1/chat/completions", CHAT)
        assert other.last.path == "/base/v1/chat/completions"
        await _post(proxy.url, "/vllm/%2E%2E/v1/chat/completions", CHAT)  # resolves outside the prefix
        assert other.last.path == "/base/v1/chat/completions"  # unchanged: not sent to the vllm route
        assert fake.last.path == "/v1/chat/completions" and GHP.encode() not in fake.last.body


async def test_pass_through_paths_keep_their_spelling(make_proxy, fake):
    proxy = await make_proxy()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as s:
        async with s.get(URL(proxy.url + "/api/v1/models?limit=5&after=a%2Fb", encoded=True)) as r:
            await r.read()
        assert (fake.last.method, fake.last.path, fake.last.query) == ("GET", "/api/v1/models", "limit=5&after=a/b")
        async with s.get(URL(proxy.url + "/v1/files/a%2Fb/content", encoded=True)) as r:
            await r.read()
    assert fake.last.path == "/v1/files/a/b/content"  # the fake decodes; the proxy sent %2F as it came


def test_canonical_path_and_model_path():
    from ctxproxy.proxy.routing import canonical_path, model_path

    assert canonical_path("/v1/chat/completions") == "/v1/chat/completions"
    assert canonical_path("/v1/%63hat/completions") == "/v1/chat/completions"
    assert canonical_path("/v1/a%2Fb") == "/v1/a%2Fb"  # a reserved escape stays
    assert canonical_path("/x/../../v1/./messages") == "/v1/messages"
    assert canonical_path("/a/b/..") == "/a/"
    assert canonical_path("/x%") == "/x%" and canonical_path("/x%4") == "/x%4" and canonical_path("/%zz") == "/%zz"
    assert model_path("/v1//chat%2Fcompletions") == "/v1/chat/completions"


def test_model_call_matches_are_kept_bounded_and_pass_throughs_are_not(monkeypatch):
    """Routing a model call is a dict lookup once its path was seen; the memo
    holds only model calls and never more than its bound (clients choose paths)."""
    from ctxproxy.config import load_config
    from ctxproxy.proxy import routing

    monkeypatch.setattr(routing, "MODEL_CALL_CACHE", 4)
    router = routing.Router(load_config(None, port=0))
    first = router.match("/v1/chat/completions", "POST", {})
    assert router.match("/v1/chat/completions", "POST", {}) is first and first.api == "chat"
    assert router.match("/v1/%63hat/completions", "POST", {}).api == "chat"  # canonical form, own entry
    assert router.match("/v1/models", "POST", {}).api is None  # a pass-through is not kept
    passes = {k for k, m in router._model_calls.items() if m.api is None}
    assert not passes
    for i in range(10):
        assert router.match(f"/p{i}/v1/chat/completions", "POST", {}).api == "chat"
        assert len(router._model_calls) <= 4
    # a GET is never a model call, whatever its path
    assert router.match("/v1/chat/completions", "GET", {}).api is None
