"""The memory tool over the Responses WebSocket (as Codex speaks it): the
proxy answers the model's call and continues the turn on the same provider
socket; the client reads one response (one id, contiguous output indices and
sequence numbers, usage summed) and continues its chain from it."""
from __future__ import annotations

import json

import aiohttp
import pytest
from aiohttp import web

from wsturns import ws_turn

from ctxproxy.proxy.scripted_provider import Reply, Text, ToolCall

ON = '[filters.memory_tool]\nenabled = true\n'
TOOL = "ctx_memory"
HDRS = {"authorization": "Bearer sk-ws", "X-Ctx-Tenant": "acme", "X-Ctx-User": "alice", "X-Ctx-Session": "ws1"}


def ws_url(proxy) -> str:
    return proxy.url.replace("http://", "ws://") + "/v1/responses"


def creates(fake) -> list[dict]:
    return [r.json for r in fake.requests if r.method == "WS"]


def tools_of(frame: dict) -> list[str]:
    return [t.get("name") for t in frame.get("tools") or ()]


def text_of(events: list[dict]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")


def assert_one_response(events: list[dict]) -> dict:
    """The events read as one response: one id, sequence numbers 0..n-1, output
    indices contiguous from 0; the final response object."""
    final = events[-1]
    assert final["type"] == "response.completed"
    ids = {e["response"]["id"] for e in events if "response" in e}
    assert ids == {final["response"]["id"]}
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    assert added == list(range(len(added)))
    assert [o["type"] for o in final["response"]["output"]] == ["message"] * len(added)
    assert not any(e.get("item", {}).get("name") == TOOL for e in events)
    return final["response"]


async def test_a_round_over_the_websocket_reads_as_one_response_and_the_chain_goes_on(make_proxy, fake):
    proxy = await make_proxy(ON)
    fake.script(Reply.of(Text("Let me look. "), ToolCall(TOOL, {"action": "search", "query": "linter"}),
                         input_tokens=100, output_tokens=7),
                Reply.text("You prefer ruff.", input_tokens=130, output_tokens=5),
                Reply.text("Sure."))
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url(proxy), headers=HDRS) as ws:
        events = await ws_turn(ws, {"model": "gpt-5", "store": False, "stream_id": "main",
                                    "input": [{"role": "user", "content": "which linter do I like?"}]})
        final = assert_one_response(events)
        assert text_of(events) == "Let me look. You prefer ruff."
        assert all(e.get("stream_id") == "main" for e in events)
        assert final["usage"]["input_tokens"] == 230 and final["usage"]["output_tokens"] == 12
        seen = final["id"]
        nxt = await ws_turn(ws, {"model": "gpt-5", "store": False, "stream_id": "main", "previous_response_id": seen,
                                 "input": [{"role": "user", "content": "thanks"}]})
        assert text_of(nxt) == "Sure."
    first, cont, third = creates(fake)
    assert TOOL in tools_of(first) and tools_of(cont) == tools_of(first)
    # the continuation: on the same socket and lane, chained to the round's answer, our result its only input
    assert cont["type"] == "response.create" and cont["stream_id"] == "main" and cont["store"] is False
    assert cont["previous_response_id"] == seen
    (out,) = cont["input"]
    assert out["type"] == "function_call_output" and "results" in json.loads(out["output"])
    # the client's next turn continues from the last round, which the client never saw
    last = [r for r in fake.requests if r.method == "WS"][1].response_id
    assert third["previous_response_id"] == last != seen
    m = proxy.settled_store().manifests.list("acme", session="ws1")
    part = m[0].data["filters"]["memory_tool"]
    assert part["offered"] is True and [r["action"] for r in part["rounds"]] == ["search"]


async def test_the_bound_over_the_websocket(make_proxy, fake):
    proxy = await make_proxy(ON + "max_rounds = 1\n")
    call = Reply.tool_call(TOOL, {"action": "search", "query": "x"})
    fake.script(call, call, call)
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url(proxy), headers=HDRS) as ws:
        events = await ws_turn(ws, {"model": "gpt-5", "input": "loop please"})
    response = events[-1]["response"]
    assert events[-1]["type"] == "response.completed" and response["output"] == []
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    frames = creates(fake)
    assert len(frames) == 3
    assert "limit reached" in frames[-1]["input"][0]["output"]


async def test_a_call_beside_the_client_s_is_answered_on_its_next_create(make_proxy, fake):
    proxy = await make_proxy(ON)
    said = "Keep answers short."
    fake.script(Reply.of(ToolCall(TOOL, {"action": "add", "target": "user", "content": said}),
                         ToolCall("read_file", {"path": "a.txt"}, call_id="call_client1")),
                Reply.text("done"))
    tools = [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}]
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url(proxy), headers=HDRS) as ws:
        first = await ws_turn(ws, {"model": "gpt-5", "tools": tools, "input": said})
        calls = [o for o in first[-1]["response"]["output"] if o["type"] == "function_call"]
        assert [c["name"] for c in calls] == ["read_file"]
        await ws_turn(ws, {"model": "gpt-5", "tools": tools, "previous_response_id": first[-1]["response"]["id"],
                           "input": [{"type": "function_call_output", "call_id": "call_client1",
                                      "output": "file text"}]})
    second = creates(fake)[-1]
    # the provider keeps the answer with both calls: both results go in, ours beside the client's
    outputs = [i for i in second["input"] if i["type"] == "function_call_output"]
    assert [o["call_id"] for o in outputs][0] == "call_client1" and len(outputs) == 2
    assert json.loads(outputs[1]["output"])["status"] == "active"


async def test_the_provider_failing_during_a_round_ends_the_turn_with_an_error(make_proxy, fake):
    proxy = await make_proxy(ON)
    fake.script(Reply.of(Text("Looking. "), ToolCall(TOOL, {"action": "search", "query": "x"})),
                Reply.error(500, "the model is overloaded"), Reply.text("back"))
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url(proxy), headers=HDRS) as ws:
        events = await ws_turn(ws, {"model": "gpt-5", "input": "hi"})
        assert events[-1]["type"] == "error" and "overloaded" in events[-1]["error"]["message"]
        assert text_of(events) == "Looking. "
        again = await ws_turn(ws, {"model": "gpt-5", "input": "again"})  # the session goes on
        assert text_of(again) == "back"


async def test_a_steered_successor_answers_the_tool_too(make_proxy, fake):
    """The provider's automatic successor (steering) may call the tool: it is a
    turn of its own that runs its own rounds."""
    proxy = await make_proxy(ON)
    fake.script(Reply.text("working on it"),
                Reply.of(Text("Checking. "), ToolCall(TOOL, {"action": "search", "query": "staging"})),
                Reply.text("Staging it is."))
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url(proxy), headers=HDRS) as ws:
        await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": "deploy"}))
        first = json.loads((await ws.receive(timeout=10)).data)
        await ws.send_str(json.dumps({"type": "response.steer", "previous_response_id": first["response"]["id"],
                                      "input": "use staging"}))
        events = [first]
        while sum(e["type"] == "response.completed" for e in events) < 2:
            events.append(json.loads((await ws.receive(timeout=10)).data))
    created = [i for i, e in enumerate(events) if e["type"] == "response.created"]
    successor = [e for e in events[created[1]:] if e["type"] != "response.steer.accepted"]
    assert_one_response(successor)
    assert text_of(successor) == "Checking. Staging it is."
    cont = creates(fake)[-1]
    assert cont["previous_response_id"] == successor[0]["response"]["id"] and cont["input"][0]["call_id"]
    manifests = proxy.settled_store().manifests.list("acme", session="ws1")
    rounds = [r for m in manifests for r in m.data["filters"]["memory_tool"].get("rounds", ())]
    assert [(r["action"], r["status"]) for r in rounds] == [("search", "ok")]  # in the successor's manifest


@pytest.fixture
async def canned_upstream(serve_app):
    """A Responses WebSocket that answers every create with fixed frames whose
    JSON has spacing no encoder writes, and notes the creates it got."""
    got: list[dict] = []
    frames = ['{"type" : "response.created", "sequence_number" : 0, "response" : {"id" : "resp_canned", '
              '"status" : "in_progress", "output" : []}}',
              '{"type" : "response.output_item.added", "sequence_number" : 1, "output_index" : 0, '
              '"item" : {"id" : "msg_1", "type" : "message", "role" : "assistant", "content" : []}}',
              '{"type" : "response.output_text.delta", "sequence_number" : 2, "item_id" : "msg_1", '
              '"output_index" : 0, "content_index" : 0, "delta" : "plain"}',
              '{"type" : "response.completed", "sequence_number" : 3, "response" : {"id" : "resp_canned", '
              '"status" : "completed", "output" : [{"id" : "msg_1", "type" : "message", "role" : "assistant", '
              '"content" : [{"type" : "output_text", "text" : "plain"}]}]}}']

    async def handler(request):
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            got.append(json.loads(msg.data))
            for f in frames:
                await ws.send_str(f)
        return ws

    app = web.Application()
    app.router.add_get("/v1/responses", handler)
    return await serve_app(app), frames, got


async def test_a_turn_without_a_call_goes_on_untouched(make_proxy, canned_upstream):
    url, frames, got = canned_upstream
    proxy = await make_proxy(ON, upstream=url)
    async with aiohttp.ClientSession() as s, s.ws_connect(ws_url(proxy), headers=HDRS) as ws:
        await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5", "input": "hi"}))
        received = [(await ws.receive(timeout=5)).data for _ in frames]
    assert TOOL in tools_of(got[0])  # offered
    assert received == frames  # every frame as the provider wrote it
