"""Faults: provider down, 5xx, timeouts, drops, disconnects, bad input."""
import asyncio

import aiohttp
import anthropic
import openai
import pytest
from aiohttp import web
from ctxproxy.proxy.ports import free_port

from ctxproxy.proxy.scripted_provider import Reply

MSG = {"model": "claude-opus-4-8", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
CHAT = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}


async def post(url, **kw):
    async with aiohttp.ClientSession() as s:
        async with s.post(url, **kw) as r:
            return r.status, await r.json(content_type=None), r.headers


async def test_provider_down_is_502_in_each_format(make_proxy):
    proxy = await make_proxy(upstream=f"http://127.0.0.1:{free_port()}")
    status, body, headers = await post(proxy.url + "/v1/messages", json=MSG)
    assert status == 502 and body["type"] == "error" and body["error"]["type"] == "api_error"
    assert "unreachable" in body["error"]["message"] and headers["X-Ctx-Turn-Id"]
    status, body, _ = await post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert status == 502 and "unreachable" in body["error"]["message"]
    with pytest.raises(openai.APIStatusError) as exc:
        await proxy.openai().responses.create(model="gpt-5", input="x")
    assert exc.value.status_code == 502


async def test_provider_5xx_is_relayed_as_is(proxy, fake):
    fake.script(Reply.error(529, "Overloaded"))
    with pytest.raises(anthropic.APIStatusError) as exc:
        await proxy.anthropic().messages.create(**MSG)
    assert exc.value.status_code == 529 and "Overloaded" in str(exc.value)


async def test_upstream_timeout_is_504(make_proxy, fake):
    proxy = await make_proxy("[upstream]\nread_timeout = 0.3\n")
    fake.script(Reply.text("late", hang=True))
    status, body, _ = await post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert status == 504 and body["error"]["code"] == "gateway_timeout"


async def test_stream_read_timeout_is_per_event_not_per_response(make_proxy, fake):
    # 10 events 0.3 s apart take ~3 s in all, longer than the 2 s read timeout; each
    # gap stays 1.7 s under it, so a loaded machine does not turn the gap into a stall
    proxy = await make_proxy("[upstream]\nread_timeout = 2.0\n")
    fake.script(Reply.text("a b c d e f g h i j", delay_between_events=0.3))
    async with proxy.anthropic().messages.stream(**MSG) as stream:
        text = "".join([t async for t in stream.text_stream])
    assert text == "a b c d e f g h i j"


async def read_anthropic_stream(proxy) -> None:
    """A streamed Messages call read to its end (the SDK raises what ended it early)."""
    async with proxy.anthropic().messages.stream(**MSG) as stream:
        async for _ in stream.text_stream:
            pass


async def test_stall_mid_stream_becomes_an_error_event(make_proxy, fake):
    proxy = await make_proxy("[upstream]\nread_timeout = 0.3\n")
    fake.script(Reply.text("a b c d e f", delay_between_events=2.0))
    with pytest.raises(anthropic.APIStatusError, match="timed out"):
        await read_anthropic_stream(proxy)


async def test_drop_mid_stream_anthropic(proxy, fake):
    fake.script(Reply.text("one two three four five six", drop_after_events=4))
    with pytest.raises(anthropic.APIStatusError, match="upstream"):
        await read_anthropic_stream(proxy)


async def test_drop_mid_stream_chat(proxy, fake):
    fake.script(Reply.text("one two three four five six", drop_after_events=3))
    with pytest.raises(openai.APIError, match="upstream"):
        stream = await proxy.openai().chat.completions.create(**CHAT, stream=True)
        async for _ in stream:
            pass


async def test_drop_mid_stream_responses(proxy, fake):
    fake.script(Reply.text("one two three four five six", drop_after_events=5))
    with pytest.raises(openai.APIError, match="upstream"):
        async with proxy.openai().responses.stream(model="gpt-5", input="x") as stream:
            async for _ in stream:
                pass


async def test_a_cut_responses_stream_fails_with_the_next_sequence_number(proxy, fake):
    """The ``response.failed`` the proxy adds follows the provider's numbering:
    a client that orders or de-duplicates events by ``sequence_number`` does not
    drop it as a replay of event 0."""
    import orjson

    fake.script(Reply.text("one two three four five six", drop_after_events=5))
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.url + "/v1/responses", json={"model": "gpt-5", "input": "x", "stream": True},
                             headers={"Authorization": "Bearer sk-test"}) as r:
            body = await r.read()
    events = [orjson.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ")]
    numbers = [ev["sequence_number"] for ev in events]
    assert events[-1]["type"] == "response.failed" and len(events) == 6
    assert numbers == list(range(numbers[0], numbers[0] + 6)), numbers


@pytest.fixture
async def slow_upstream(serve_app):
    """Streams one event every 50 ms for ~5 s; records how the stream ended."""
    seen = {"events": 0, "ended": None}

    async def handler(request):
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        try:
            for i in range(100):
                await resp.write(b'event: ping\ndata: {"type": "ping"}\n\n')
                seen["events"] += 1
                await asyncio.sleep(0.05)
            seen["ended"] = "completed"
        except (ConnectionResetError, asyncio.CancelledError):
            seen["ended"] = "client gone"
            raise
        return resp

    app = web.Application()
    app.router.add_post("/{tail:.*}", handler)
    return await serve_app(app, handler_cancellation=True), seen


async def test_client_disconnect_cancels_upstream(make_proxy, slow_upstream):
    url, seen = slow_upstream
    proxy = await make_proxy(upstream=url)
    async with aiohttp.ClientSession() as s:
        resp = await s.post(proxy.url + "/v1/messages", json={**MSG, "stream": True})
        await resp.content.readany()
        resp.close()  # hang up mid-stream
    for _ in range(200):  # bounded: the upstream's own stream ends after ~5 s anyway
        if seen["ended"]:
            break
        await asyncio.sleep(0.05)
    assert seen["ended"] == "client gone"
    assert seen["events"] < 50


async def test_malformed_json_is_400(proxy):
    status, body, _ = await post(proxy.url + "/v1/messages", data=b'{"model": ', headers={
        "content-type": "application/json"})
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    assert "not valid JSON" in body["error"]["message"]


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/chat/completions", "/v1/responses"])
async def test_json_nested_past_any_parser_is_400(proxy, path):
    """Too deep for orjson, and (with a ``\\u`` escape, which sends it to the
    standard library's parser) too deep for that one: a 400, not a 500."""
    deep = b'{"model":"m","x":' + b"[" * 5000 + b'"\\u00e9"' + b"]" * 5000 + b"}"
    status, body, _ = await post(proxy.url + path, data=deep, headers={"content-type": "application/json"})
    assert status == 400 and "not valid JSON" in str(body), body


async def test_invalid_utf8_is_400(proxy):
    status, body, _ = await post(proxy.url + "/v1/chat/completions", data=b'{"model": "\xff\xfe"}')
    assert status == 400 and "not valid JSON" in body["error"]["message"]


async def test_oversized_body_is_413(make_proxy):
    proxy = await make_proxy("[server]\nmax_body_bytes = 2048\n")
    status, body, _ = await post(proxy.url + "/v1/messages", data=b'{"x":"' + b"a" * 5000 + b'"}')
    assert status == 413 and body["error"]["type"] == "request_too_large"
    status, body, _ = await post(proxy.url + "/v1/responses", data=b'{"x":"' + b"a" * 5000 + b'"}')
    assert status == 413 and "max_body_bytes" in body["error"]["message"]


async def test_admin_api_requires_token(make_proxy, monkeypatch):
    proxy = await make_proxy()
    async with aiohttp.ClientSession() as s:
        async with s.get(proxy.url + "/ctx/v1/status") as r:
            assert r.status == 403
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", "t0ken")
    async with aiohttp.ClientSession() as s:
        async with s.get(proxy.url + "/ctx/v1/status") as r:
            assert r.status == 401
        async with s.get(proxy.url + "/ctx/v1/status", headers={"authorization": "Bearer wrong"}) as r:
            assert r.status == 403
        async with s.get(proxy.url + "/ctx/v1/status", headers={"authorization": "Bearer t0ken"}) as r:
            assert r.status == 200
            assert "identify" in (await r.json())["routes"]["anthropic"]["filters"]
        async with s.get(proxy.url + "/ctx/healthz") as r:
            assert r.status == 200 and (await r.json())["status"] == "ok"


async def test_a_failure_of_ours_mid_stream_ends_the_stream_in_the_callers_format(proxy, fake, monkeypatch,
                                                                                 caplog):
    """A bug in a filter after the answer began: the stream ends with an error
    event, and the connection carries no second HTTP response."""
    from ctxproxy.filters import base

    real, calls = base.Pipeline.run_event, []

    def failing(self, turn, ev):
        calls.append(ev)
        if len(calls) == 3:
            raise KeyError("a bug")
        return real(self, turn, ev)

    monkeypatch.setattr(base.Pipeline, "run_event", failing)
    fake.script(Reply.text("one two three four five six", delta_chars=3))
    host, port = proxy.url[len("http://"):].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    body = b'{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
    writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    data = b""
    while not data.endswith(b"0\r\n\r\n"):  # the chunked body's end
        chunk = await asyncio.wait_for(reader.read(65536), 5)
        assert chunk, "the proxy closed the connection instead of ending the stream"
        data += chunk
    writer.close()
    head, stream = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200") and b"HTTP/1.1" not in stream
    assert b"event: error" in stream and b"ctxproxy failed while relaying the answer" in stream
    assert b"message_stop" not in stream
    assert "failed while relaying the answer" in caplog.text


async def test_a_keep_alive_before_the_cut_does_not_reset_the_numbering(make_proxy, serve_app):
    """A comment line (keep-alive) as the last thing before the provider drops
    the stream: the ``response.failed`` still follows the last numbered event."""
    import orjson

    async def handler(request):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i, kind in enumerate(["response.created", "response.in_progress"]):
            data = {"type": kind, "sequence_number": i, "response": {"id": "resp_ka", "output": []}}
            await resp.write(b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n")
            await asyncio.sleep(0.05)
        await resp.write(b": keep-alive\n\n")
        await asyncio.sleep(0.05)
        request.transport.close()  # dropped mid-stream
        return resp

    app = web.Application()
    app.router.add_post("/v1/responses", handler)
    proxy = await make_proxy(upstream=await serve_app(app))
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.url + "/v1/responses", json={"model": "gpt-5", "input": "x", "stream": True},
                             headers={"Authorization": "Bearer sk-test"}) as r:
            body = await r.read()
    events = [orjson.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ")]
    assert [(e["type"], e["sequence_number"]) for e in events] == [
        ("response.created", 0), ("response.in_progress", 1), ("response.failed", 2)]
