"""websocket review: odd client frames never end the session, and a
response.create sent as a binary frame goes through the request filters."""
import asyncio
import json

import aiohttp
import pytest
from aiohttp import web

from ctxproxy.proxy.scripted_provider import Reply

AWS = "AKIAZ3MXQ7RT5WVY2KLP"


def ws_url(proxy) -> str:
    return proxy.url.replace("http://", "ws://") + "/v1/responses"


async def until_turn_end(ws) -> list:
    out = []
    while True:
        msg = await ws.receive(timeout=5)
        assert msg.type == aiohttp.WSMsgType.TEXT, (msg.type, msg.data, msg.extra)
        ev = json.loads(msg.data)
        out.append(ev)
        if ev["type"] in ("response.completed", "response.failed", "error"):
            return out


async def test_deeply_nested_frame_is_an_error_frame_not_the_sessions_end(make_proxy, fake):
    # orjson refuses > 1024 levels; the fallback parser (a \u escape) raised RecursionError,
    # which ended the session with 1011.
    proxy = await make_proxy()
    fake.script(Reply.text("still here"))
    deep = '{"type":"response.create","a":' + "[" * 3000 + '"\\u00e9"' + "]" * 3000 + "}"
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.send_str(deep)
            (err,) = await until_turn_end(ws)
            assert err["type"] == "error" and err["status"] == 400
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": "hi"}))
            assert (await until_turn_end(ws))[-1]["type"] == "response.completed"


@pytest.fixture
async def recording_upstream(serve_app):
    """A Responses WebSocket that notes every frame (text or binary) and answers an error."""
    frames = []

    async def handler(request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            if msg.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                frames.append((msg.type, msg.data))
                await ws.send_str(json.dumps({"type": "error", "status": 400, "error": {"message": "noted"}}))
        return ws

    app = web.Application()
    app.router.add_get("/v1/responses", handler)
    return await serve_app(app), frames


async def test_binary_response_create_goes_through_the_filters(make_proxy, recording_upstream):
    url, frames = recording_upstream
    proxy = await make_proxy(upstream=url)
    body = {"type": "response.create", "model": "gpt-5", "input": f"deploy with key {AWS} please"}
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.send_str(json.dumps(body))
            await until_turn_end(ws)
            await ws.send_bytes(json.dumps(body).encode())
            await until_turn_end(ws)
            await ws.send_bytes(b"\x00\xffnot json")  # other binary frames go on as they came
            for _ in range(100):
                if len(frames) == 3:
                    break
                await asyncio.sleep(0.02)
    assert [t for t, _ in frames] == [aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.BINARY]
    text, binary = frames[0][1], frames[1][1].decode()
    assert AWS not in text, "the text frame is redacted"
    assert AWS not in binary, "a binary response.create bypassed the request filters"
    assert json.loads(binary)["input"] == json.loads(text)["input"]
    assert frames[2][1] == b"\x00\xffnot json"


async def test_binary_steering_input_goes_through_the_filters(make_proxy, recording_upstream):
    url, frames = recording_upstream
    proxy = await make_proxy(upstream=url)
    steer = {"type": "response.steer", "previous_response_id": "resp_1", "input": f"and {AWS} too"}
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.send_bytes(json.dumps(steer).encode())
            await until_turn_end(ws)
    ((kind, data),) = frames
    assert kind == aiohttp.WSMsgType.BINARY and json.loads(data)["type"] == "response.steer"
    assert AWS not in data.decode(), "binary steering input bypassed the request filters"


@pytest.fixture
async def binary_upstream(serve_app):
    """A Responses WebSocket that answers every response.create in binary frames,
    with a secret in the text."""
    async def handler(request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            resp = {"id": "resp_bin", "object": "response", "status": "in_progress", "output": []}
            item = {"type": "message", "id": "msg_bin", "role": "assistant"}
            for i, ev in enumerate([
                {"type": "response.created", "response": resp},
                {"type": "response.output_text.delta", "item_id": "msg_bin", "output_index": 0,
                 "content_index": 0, "delta": f"your key is {AWS} ok"},
                {"type": "response.output_text.done", "item_id": "msg_bin", "output_index": 0,
                 "content_index": 0, "text": f"your key is {AWS} ok"},
                {"type": "response.output_item.done", "output_index": 0,
                 "item": {**item, "status": "completed",
                          "content": [{"type": "output_text", "text": f"your key is {AWS} ok"}]}},
                {"type": "response.completed", "response": {**resp, "status": "completed"}},
            ]):
                await ws.send_bytes(json.dumps({**ev, "sequence_number": i}).encode())
        return ws

    app = web.Application()
    app.router.add_get("/v1/responses", handler)
    return await serve_app(app)


async def test_binary_server_events_go_through_the_response_filters(make_proxy, binary_upstream):
    proxy = await make_proxy(upstream=binary_upstream)
    got = []
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": "my key?"}))
            while not got or got[-1]["type"] != "response.completed":
                msg = await ws.receive(timeout=5)
                assert msg.type == aiohttp.WSMsgType.BINARY, (msg.type, msg.data)
                got.append(json.loads(msg.data))
    text = json.dumps(got)
    assert AWS not in text, "a provider's binary frame bypassed the response filters"
    assert "REDACTED" in text and got[0]["type"] == "response.created"
