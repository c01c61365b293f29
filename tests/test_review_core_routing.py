"""Review: a model call spelled differently (escapes, dot segments, doubled
slashes) is still a model call and gets the filters; a route prefix cannot be
climbed out of; query strings and pass-through paths are kept."""
import aiohttp
import pytest
from yarl import URL

from ctxproxy.proxy.scripted_provider import FakeProvider, Reply

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
