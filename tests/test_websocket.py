"""Responses over WebSocket (Codex's first choice), and refusing it at once."""
import json
import time

import aiohttp
import pytest

from ctxproxy.proxy.scripted_provider import Reply


async def ws_turn(ws, body):
    await ws.send_str(json.dumps({"type": "response.create", **body}))
    events = []
    async for msg in ws:
        assert msg.type == aiohttp.WSMsgType.TEXT
        ev = json.loads(msg.data)
        events.append(ev)
        if ev["type"] in ("response.completed", "response.failed", "error"):
            break
    return events


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
    t0 = time.monotonic()
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.WSServerHandshakeError) as exc:
            await s.ws_connect(url)
    assert exc.value.status == 426
    assert time.monotonic() - t0 < 1.0
