"""Responses over WebSocket (Codex's first choice), and refusing it at once."""
import asyncio
import json
import re

import aiohttp
import pytest
from aiohttp import web

from wsturns import ws_turn

from ctxproxy.proxy.scripted_provider import Reply


async def test_websocket_turns_are_proxied(proxy, fake):
    fake.script(Reply.tool_call("exec", {"cmd": "ls"}), Reply.text("done"))
    url = proxy.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url, headers={"authorization": "Bearer sk-ws", "session-id": "codex-1"}) as ws:
            first = await ws_turn(ws, {"model": "gpt-5", "input": [{"role": "user", "content": "list"}]})
            assert first[-1]["type"] == "response.completed"
            (call,) = [o for o in first[-1]["response"]["output"] if o["type"] == "function_call"]
            second = await ws_turn(ws, {"model": "gpt-5", "previous_response_id": first[-1]["response"]["id"],
                                        "input": [{"type": "function_call_output", "call_id": call["call_id"],
                                                   "output": "a.txt"}]})
            assert second[-1]["type"] == "response.completed"
            text = "".join(e["delta"] for e in second if e["type"] == "response.output_text.delta")
            assert text == "done"
    frames = [r for r in fake.requests if r.method == "WS"]
    assert len(frames) == 2
    assert frames[1].json["previous_response_id"] == first[-1]["response"]["id"]
    assert frames[0].headers["authorization"] == "Bearer sk-ws"


async def test_websocket_off_is_refused_at_once(make_proxy):
    proxy = await make_proxy('[routes.openai]\napi = "openai"\nupstream = "http://127.0.0.1:9"\nwebsocket = false\n')
    url = proxy.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.WSServerHandshakeError) as exc:
            await s.ws_connect(url)
    assert exc.value.status == 426  # refused by the proxy: the upstream (a closed port) is never tried


# -- handshakes, close codes, turn ends and frame limits ------------------------

def ws_url(proxy) -> str:
    return proxy.url.replace("http://", "ws://") + "/v1/responses"


async def test_bad_client_handshake_is_refused_without_dialling_the_provider(make_proxy, fake):
    # Upgrade: websocket but no Sec-WebSocket-Key. Each such request used to open (and
    # keep) a provider WebSocket: with two pool slots the third request below waited
    # for a slot until the connect timeout.
    proxy = await make_proxy("[upstream]\npool_size = 2\nconnect_timeout = 1.0\n")
    host, port = proxy.url.removeprefix("http://").split(":")
    answers = []
    for _ in range(3):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"GET /v1/responses HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nConnection: close\r\n\r\n")
        answers.append(await asyncio.wait_for(reader.read(), 20))
        writer.close()
    fake.script(Reply.text("still here"))
    async with aiohttp.ClientSession() as s:
        async with s.post(proxy.url + "/v1/responses", json={"model": "gpt-5", "input": "hi"},
                          headers={"authorization": "Bearer sk-ws"}) as r:
            assert r.status == 200, await r.text()
    assert [r.method for r in fake.requests] == ["POST"]
    for answer in answers:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400")
        assert "Sec-WebSocket-Key" in json.loads(body)["error"]["message"]


@pytest.fixture
async def closing_upstream(serve_handler):
    """A Responses WebSocket that closes with the code a frame asks for, and notes
    the code and reason the proxy closes it with."""
    seen = []

    async def handler(request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        while True:
            msg = await ws.receive()
            if msg.type == aiohttp.WSMsgType.TEXT:
                await ws.close(code=json.loads(msg.data)["close_with"], message=b"upstream says bye")
                break
            if msg.type == aiohttp.WSMsgType.CLOSE:
                seen.append((msg.data, msg.extra))
                break
        return ws

    return await serve_handler(handler, method="GET", path="/v1/responses"), seen


async def test_close_code_and_reason_pass_both_ways(make_proxy, closing_upstream):
    url, seen = closing_upstream
    proxy = await make_proxy(upstream=url)
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.send_str(json.dumps({"close_with": 4001}))
            msg = await ws.receive(timeout=20)
        assert (msg.type, msg.data, msg.extra) == (aiohttp.WSMsgType.CLOSE, 4001, "upstream says bye")

        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.close(code=4002, message=b"client says bye")
    for _ in range(1000):  # bounded (20 s): the proxy passes the close on
        if seen:
            break
        await asyncio.sleep(0.02)
    assert seen == [(4002, "client says bye")]


async def test_turn_without_event_hooks_reports_a_provider_drop(make_proxy, fake):
    # response.created carries "error": null; the turn used to end on it, so a drop
    # later in the turn went unreported.
    proxy = await make_proxy(f'[routes.openai]\napi = "openai"\nupstream = "{fake.url}"\nfilters = ["identify"]\n')
    fake.script(Reply.text("a reply long enough for several deltas", drop_after_events=4))
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            events = await ws_turn(ws, {"model": "gpt-5", "input": "hi"})
            assert events[0]["type"] == "response.created" and events[0]["response"]["error"] is None
            assert events[-1]["type"] == "error"
            assert "mid-response" in events[-1]["error"]["message"]
            msg = await ws.receive(timeout=20)
    assert msg.type == aiohttp.WSMsgType.CLOSE
    assert msg.data == 1011  # no close frame came from the provider: 1006 cannot be sent


async def test_client_frame_is_capped_at_max_body_bytes(make_proxy, fake):
    proxy = await make_proxy("[server]\nmax_body_bytes = 4096\n")
    fake.script(Reply.text("small is fine"))
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy), max_msg_size=0) as ws:
            assert (await ws_turn(ws, {"model": "gpt-5", "input": "hi"}))[-1]["type"] == "response.completed"
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": "x" * 8000}))
            msg = await ws.receive(timeout=20)
    assert (msg.type, msg.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.MESSAGE_TOO_BIG)
    assert len([r for r in fake.requests if r.method == "WS"]) == 1


async def test_provider_refusal_passes_status_and_headers(make_proxy, serve_handler):
    async def refuse(request):
        return web.json_response({"error": {"message": "slow down"}}, status=429,
                                 headers={"retry-after": "7", "x-ratelimit-remaining-requests": "0"})

    proxy = await make_proxy(upstream=await serve_handler(refuse, method="GET", path="/v1/responses"))
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.WSServerHandshakeError) as exc:
            await s.ws_connect(ws_url(proxy))
    assert exc.value.status == 429
    assert exc.value.headers["retry-after"] == "7"
    assert exc.value.headers["x-ratelimit-remaining-requests"] == "0"


async def test_provider_bad_101_is_a_502(make_proxy):
    # A 101 without Sec-WebSocket-Accept: the handshake failed at the provider, and a
    # 101 must never be what the client gets for it.
    async def answer(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        proxy = await make_proxy(upstream=f"http://127.0.0.1:{port}")
        async with aiohttp.ClientSession() as s:
            async with s.get(proxy.url + "/v1/responses", headers={
                    "upgrade": "websocket", "connection": "upgrade", "sec-websocket-version": "13",
                    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ=="}) as r:
                assert r.status == 502
                assert "handshake failed" in (await r.json())["error"]["message"]
    finally:
        server.close()
        await server.wait_closed()


# -- several responses in flight: lanes (stream_id) and creates sent ahead ----------------

AWS = "AKIAZ3MXQ7RT5WVY2KLP"


async def frames_until(ws, completions: int) -> list[dict]:
    out = []
    while sum(e["type"] == "response.completed" for e in out) < completions:
        msg = await ws.receive(timeout=10)
        assert msg.type == aiohttp.WSMsgType.TEXT, (msg.type, msg.data)
        out.append(json.loads(msg.data))
    return out


def lane_text(events: list[dict], lane) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta"
                   and e.get("stream_id") == lane)


async def test_each_lane_keeps_its_own_turn(make_proxy, fake):
    """Two lanes answered side by side: every event is filtered in its own lane's turn.
    Before, the second create ended the first turn, the first response's end then ended
    the second, and the second response's later events went out unfiltered."""
    proxy = await make_proxy()
    fake.script(Reply.text("lane a says hello " * 3, delta_chars=6, delay_between_events=0.004),
                Reply.text(f"lane b holds {AWS} and {AWS} ok", delta_chars=6, delay_between_events=0.02))
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            for lane in ("a", "b"):
                await ws.send_str(json.dumps({"type": "response.create", "stream_id": lane, "model": "gpt-5",
                                              "input": f"speak, {lane}"}))
            events = await frames_until(ws, 2)
    assert AWS not in json.dumps(events), "a lane's events went out unfiltered"
    assert lane_text(events, "a") == "lane a says hello " * 3
    assert "[REDACTED:" in lane_text(events, "b")
    done = [e for e in events if e["type"] == "response.completed"]
    assert [e["stream_id"] for e in done] == ["a", "b"]  # a's end came first, while b was still streaming
    assert {r.json.get("stream_id") for r in fake.requests if r.method == "WS"} == {"a", "b"}


async def test_creates_sent_ahead_are_turns_in_order(make_proxy, fake):
    """A create sent before the previous response ended waits its turn on the lane:
    the provider answers them in order, and so are their events filtered."""
    proxy = await make_proxy()
    fake.script(Reply.text("first answer " * 3, delta_chars=5, delay_between_events=0.003),
                Reply.text(f"second holds {AWS} now", delta_chars=5, delay_between_events=0.003))
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            for n in (1, 2):
                await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": f"turn {n}"}))
            events = await frames_until(ws, 2)
    assert AWS not in json.dumps(events), "the second response went out unfiltered"
    first_end = next(i for i, e in enumerate(events) if e["type"] == "response.completed")
    assert lane_text(events[:first_end], None) == "first answer " * 3
    assert "[REDACTED:" in lane_text(events[first_end:], None)


async def test_steering_input_goes_through_the_filters_that_guard_requests(make_proxy, fake):
    """``response.steer`` queues input into a response in flight: it reaches the model,
    so a secret in it is redacted as in a response.create (it went on untouched)."""
    proxy = await make_proxy()
    steer = {"type": "response.steer", "previous_response_id": "resp_1",
             "input": [{"role": "user", "content": [{"type": "input_text", "text": f"also use {AWS}"}]}]}
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            await ws.send_str(json.dumps(steer))
            reply = json.loads((await ws.receive(timeout=10)).data)
    assert reply["type"] == "response.steer.accepted"
    (sent,) = [r for r in fake.requests if r.method == "WS"]
    assert sent.json["type"] == "response.steer" and sent.json["previous_response_id"] == "resp_1"
    assert AWS not in sent.body.decode(), "steering input reached the provider unredacted"
    assert "[REDACTED:" in sent.json["input"][0]["content"][0]["text"]


async def test_an_automatic_successor_is_a_turn_of_its_own(make_proxy, fake):
    """Steering ends the response in flight and the provider starts a successor by
    itself (a ``response.created`` no create asked for). Its answer goes through the
    response filters in a turn of its own, which continues its predecessor's request:
    before, it streamed back unfiltered, a secret in it included, with no record."""
    proxy = await make_proxy('[filters.identify]\ndefault_tenant = "acme"\n')
    fake.script(Reply.text("working on it " * 4, delta_chars=7, delay_between_events=0.01),
                Reply.text(f"steered: the key is {AWS} now", delta_chars=6))
    steer = {"type": "response.steer", "input": "use the staging key instead"}
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy), headers={"session-id": "steer-1"}) as ws:
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": "deploy"}))
            first = json.loads((await ws.receive(timeout=10)).data)
            assert first["type"] == "response.created"
            await ws.send_str(json.dumps({**steer, "previous_response_id": first["response"]["id"]}))
            events = [first] + await frames_until(ws, 2)
    assert AWS not in json.dumps(events), "the successor's answer went out unfiltered"
    created = [e for e in events if e["type"] == "response.created"]
    assert len(created) == 2 and created[0]["response"]["id"] != created[1]["response"]["id"]
    successor = events[events.index(created[1]):]
    assert "[REDACTED:" in lane_text(successor, None)

    store = proxy.settled_store()
    manifests = [d.data for d in store.manifests.list("acme", session="steer-1")]
    assert len(manifests) == 2, "the successor was not a turn"
    by_response = {m["response_id"]: m for m in manifests}
    before, after = by_response[created[0]["response"]["id"]], by_response[created[1]["response"]["id"]]
    assert after["continues_turn"] == before["turn_id"] and "continues_turn" not in before
    assert after["response_redactions"] and not before["response_redactions"]
    assert after["session_id"] == "steer-1" and after["stream"] is True



async def test_a_successor_on_one_lane_while_another_streams(make_proxy, fake):
    """A steered lane's successor arrives while another lane is still answering: each
    event goes to its own lane's turn (the one busy lane is not taken for every
    event), the successor is filtered, and the other lane's answer is untouched."""
    proxy = await make_proxy()
    fake.script(Reply.text("lane a says hello " * 6, delta_chars=6, delay_between_events=0.02),
                Reply.text("lane b is done", delta_chars=5),
                Reply.text(f"lane b again with {AWS} here", delta_chars=5))
    events = []
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy), headers={"session-id": "multi"}) as ws:
            for lane in ("a", "b"):
                await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": lane,
                                              "stream_id": lane}))
            while not any(e["type"] == "response.completed" and e.get("stream_id") == "b" for e in events):
                events.append(json.loads((await ws.receive(timeout=10)).data))
            assert not any(e["type"] == "response.completed" and e.get("stream_id") == "a" for e in events)
            rid = next(e["response"]["id"] for e in events if e["type"] == "response.created"
                       and e.get("stream_id") == "b")
            await ws.send_str(json.dumps({"type": "response.steer", "stream_id": "b", "previous_response_id": rid,
                                          "input": "once more"}))
            while sum(e["type"] == "response.completed" for e in events) < 3:
                events.append(json.loads((await ws.receive(timeout=10)).data))
    assert AWS not in json.dumps(events), "the successor's answer went out unfiltered"
    assert lane_text(events, "a") == "lane a says hello " * 6
    b_text = lane_text(events, "b")
    assert b_text.startswith("lane b is done") and "[REDACTED:" in b_text
    created = {e.get("stream_id"): e["response"]["id"] for e in events if e["type"] == "response.created"}
    successor_id = [e["response"]["id"] for e in events if e["type"] == "response.created"
                    and e.get("stream_id") == "b"][-1]
    listed = [d.data for d in proxy.settled_store().manifests.list("default", session="multi")]
    by_response = {m["response_id"]: m for m in listed}
    assert set(by_response) == {created["a"], rid, successor_id}, "a lane's events went to another lane's turn"
    assert by_response[successor_id]["continues_turn"] == by_response[rid]["turn_id"]
    assert "continues_turn" not in by_response[created["a"]]


# Odd client frames never end the session, and a response.create sent as a
# binary frame goes through the request filters.
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
async def recording_upstream(serve_handler):
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

    return await serve_handler(handler, method="GET", path="/v1/responses"), frames


@pytest.fixture
async def recorded_ws(make_proxy, recording_upstream):
    """A client's WebSocket through the proxy to ``recording_upstream``, and the frames it received."""
    url, frames = recording_upstream
    proxy = await make_proxy(upstream=url)
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(ws_url(proxy)) as ws:
            yield ws, frames


async def test_binary_response_create_goes_through_the_filters(recorded_ws):
    ws, frames = recorded_ws
    body = {"type": "response.create", "model": "gpt-5", "input": f"deploy with key {AWS} please"}
    await ws.send_str(json.dumps(body))
    await until_turn_end(ws)
    await ws.send_bytes(json.dumps(body).encode())
    await until_turn_end(ws)
    await ws.send_bytes(b"\x00\xffnot json")  # other binary frames go on as they came
    for _ in range(1000):  # bounded (20 s): the last frame reaches the upstream
        if len(frames) == 3:
            break
        await asyncio.sleep(0.02)
    assert [t for t, _ in frames] == [aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.BINARY]
    text, binary = frames[0][1], frames[1][1].decode()
    assert AWS not in text, "the text frame is redacted"
    assert AWS not in binary, "a binary response.create bypassed the request filters"
    # redacted alike; two requests that continue no answer are two conversations, whose placeholders differ
    same = re.compile(r":[0-9a-f]{8}\]")
    assert same.sub(":…]", json.loads(binary)["input"]) == same.sub(":…]", json.loads(text)["input"])
    assert frames[2][1] == b"\x00\xffnot json"


async def test_binary_steering_input_goes_through_the_filters(recorded_ws):
    ws, frames = recorded_ws
    steer = {"type": "response.steer", "previous_response_id": "resp_1", "input": f"and {AWS} too"}
    await ws.send_bytes(json.dumps(steer).encode())
    await until_turn_end(ws)
    ((kind, data),) = frames
    assert kind == aiohttp.WSMsgType.BINARY and json.loads(data)["type"] == "response.steer"
    assert AWS not in data.decode(), "binary steering input bypassed the request filters"


@pytest.fixture
async def binary_upstream(serve_handler):
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

    return await serve_handler(handler, method="GET", path="/v1/responses")


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
