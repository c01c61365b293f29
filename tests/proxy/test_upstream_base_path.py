"""An upstream URL with a path of its own (``https://api.openai.com/v1``, the
form OpenAI, LiteLLM, Portkey and vLLM users write) and clients that carry the
same segments (``/v1/chat/completions``): the segments go upstream once."""
import json

import aiohttp
import pytest

from ctxproxy.proxy.routing import base_segments, beyond_base
from ctxproxy.proxy.scripted_provider import FakeProvider, Reply

MSG = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("client_base", ["/v1", ""], ids=["client-with-v1", "client-without"])
async def test_openai_upstream_with_v1_and_either_client_base(make_proxy, fake, client_base):
    proxy = await make_proxy(openai_upstream=fake.url + "/v1")  # what --openai-upstream sets
    client = proxy.openai().with_options(base_url=proxy.url + client_base)
    fake.script(Reply.text("chat ok"), Reply.text("responses ok"))
    res = await client.chat.completions.create(model="gpt-x", messages=MSG)
    assert res.choices[0].message.content == "chat ok"
    assert fake.last.path == "/v1/chat/completions"
    async with client.responses.stream(model="gpt-x", input="hi") as s:
        final = await s.get_final_response()
    assert final.output_text == "responses ok"
    assert fake.last.path == "/v1/responses"
    models = await client.models.list()  # a pass-through keeps one /v1 too
    assert fake.last.path == "/v1/models" and models.data
    assert [r.path for r in fake.requests] == ["/v1/chat/completions", "/v1/responses", "/v1/models"]


async def test_anthropic_upstream_with_v1(make_proxy, fake):
    proxy = await make_proxy(anthropic_upstream=fake.url + "/v1/")
    fake.script(Reply.text("anthropic ok"))
    msg = await proxy.anthropic().messages.create(model="claude-x", max_tokens=20, messages=MSG)
    assert msg.content[0].text == "anthropic ok"
    assert [r.path for r in fake.requests] == ["/v1/messages"]


async def test_upstream_without_a_path_is_unchanged(make_proxy, fake):
    proxy = await make_proxy(openai_upstream=fake.url)
    fake.script(Reply.text("ok"))
    await proxy.openai().chat.completions.create(model="gpt-x", messages=MSG)
    assert fake.last.path == "/v1/chat/completions"


async def test_route_upstream_with_a_path_under_a_prefix(make_proxy, fake):
    async with FakeProvider() as gateway:
        proxy = await make_proxy(f'[routes.gw]\napi = "openai"\nprefix = "/gw"\nupstream = "{gateway.url}/v1"\n')
        gateway.script(Reply.text("one"), Reply.text("two"))
        for base in ("/gw/v1", "/gw"):
            client = proxy.openai().with_options(base_url=proxy.url + base)
            await client.chat.completions.create(model="m", messages=MSG)
        assert [r.path for r in gateway.requests] == ["/v1/chat/completions"] * 2
        assert not fake.requests


async def test_websocket_to_an_upstream_with_v1(make_proxy, fake):
    proxy = await make_proxy(openai_upstream=fake.url + "/v1")
    fake.script(Reply.text("over ws"))
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(proxy.url.replace("http://", "ws://") + "/v1/responses",
                                   headers={"authorization": "Bearer sk-ws"}) as ws:
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", "input": "hi"}))
            async for msg in ws:
                if json.loads(msg.data)["type"] == "response.completed":
                    break
    assert [(r.method, r.path) for r in fake.requests] == [("WS", "/v1/responses")]


@pytest.mark.parametrize("upstream, path, sent", [
    ("https://api.openai.com/v1", "/v1/chat/completions", "/chat/completions"),
    ("https://api.openai.com/v1", "/chat/completions", "/chat/completions"),
    ("https://api.openai.com/v1/", "/v1", ""),
    ("https://api.openai.com/v1", "/v1/", "/"),
    ("https://openrouter.ai/api/v1", "/v1/models", "/models"),  # the base's tail meets the path's head
    ("https://openrouter.ai/api", "/v1/models", "/v1/models"),
    ("https://x.openai.azure.com/openai", "/openai/deployments/d/chat/completions",
     "/deployments/d/chat/completions"),
    ("https://gw.example/v10", "/v1/chat/completions", "/v1/chat/completions"),  # whole segments only
    ("https://gw.example/v1", "/v1x/chat/completions", "/v1x/chat/completions"),
    ("https://api.anthropic.com", "/v1/messages", "/v1/messages"),
])
def test_shared_segments_are_sent_once(upstream, path, sent):
    assert beyond_base(base_segments(upstream), path) == sent
