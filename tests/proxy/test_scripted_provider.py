"""The fake provider, driven directly by the official openai and anthropic SDKs."""

from __future__ import annotations

import json
import time
import urllib.request

import aiohttp
import anthropic
import httpx2
import openai
import pytest

from ctxproxy.proxy.scripted_provider import (CustomToolCall, FakeProvider, FakeProviderThread, Reply, Text,
                                              Thinking, ToolCall)

MSGS = [{"role": "user", "content": "hi"}]


@pytest.fixture
async def fp():
    async with FakeProvider() as provider:
        yield provider


class Clients:
    """SDK clients pointed at the fake (no retries), closed after the test."""

    def __init__(self, fp: FakeProvider):
        self.fp, self.made = fp, []

    def ant(self, **kw) -> anthropic.AsyncAnthropic:
        self.made.append(anthropic.AsyncAnthropic(base_url=self.fp.url, api_key="x", max_retries=0, **kw))
        return self.made[-1]

    def oai(self, **kw) -> openai.AsyncOpenAI:
        self.made.append(openai.AsyncOpenAI(base_url=self.fp.url + "/v1", api_key="x", max_retries=0, **kw))
        return self.made[-1]


def caused_by(exc: BaseException | None, cls: type[BaseException], text: str = "") -> bool:
    """``exc`` is, or was raised from, a ``cls`` whose message holds ``text``."""
    for _ in range(16):  # bounded: a chain is a few links long
        if exc is None:
            return False
        if isinstance(exc, cls) and text in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@pytest.fixture
async def sdk(fp):
    clients = Clients(fp)
    yield clients
    for c in clients.made:
        await c.close()


# ----------------------------------------------------------------------------- Anthropic


async def test_anthropic_text_nonstream_usage_and_record(fp, sdk):
    fp.script(Reply.text("hi there", input_tokens=11, output_tokens=3, cache_read_tokens=7,
                         cache_creation_tokens=5))
    msg = await sdk.ant().messages.create(model="claude-x", max_tokens=100, messages=MSGS,
                                        extra_headers={"X-Ctx-Session": "s1"})
    assert msg.id.startswith("msg_") and msg.type == "message" and msg.role == "assistant"
    assert msg.model == "claude-x"
    assert [b.type for b in msg.content] == ["text"] and msg.content[0].text == "hi there"
    assert msg.stop_reason == "end_turn" and msg.stop_sequence is None
    u = msg.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens) == (11, 3, 7, 5)
    rec = fp.last
    assert (rec.method, rec.path, rec.api) == ("POST", "/v1/messages", "anthropic")
    assert rec.headers["x-ctx-session"] == "s1"
    assert rec.headers.get("X-API-KEY") == "x" or rec.headers["AUTHORIZATION"] == "Bearer x"
    assert "anthropic-version" in rec.headers
    assert rec.json == {"model": "claude-x", "max_tokens": 100, "messages": MSGS}
    assert json.loads(rec.body) == rec.json and rec.reply is not None and not rec.stream


async def test_anthropic_stream_text_default_reply(fp, sdk):
    async with sdk.ant().messages.stream(model="claude-x", max_tokens=100, messages=MSGS) as stream:
        pieces = [t async for t in stream.text_stream]
        final = await stream.get_final_message()
    assert len(pieces) >= 3 and "".join(pieces) == "Hello from fake."
    assert final.content[0].text == "Hello from fake." and final.stop_reason == "end_turn"
    assert final.usage.output_tokens >= 1 and fp.last.stream


async def test_anthropic_stream_thinking_text_and_tool_calls_split_chunks(fp, sdk):
    args1 = {"path": "src/main.py", "lines": [1, 2, 3], "note": "ünïcode ✓"}
    fp.script(Reply.of(Thinking("let me think about it", signature="sig123"), Text("Reading files."),
                       ToolCall("read_file", args1, call_id="toolu_A"), ToolCall("list_dir", {"dir": "."}),
                       chunk_split=7, output_tokens=42))
    async with sdk.ant().messages.stream(model="claude-x", max_tokens=100, messages=MSGS) as stream:
        kinds = [ev.type async for ev in stream]
        final = await stream.get_final_message()
    assert "ping" not in kinds  # the SDK swallows pings
    types = [b.type for b in final.content]
    assert types == ["thinking", "text", "tool_use", "tool_use"]
    th, tx, t1, t2 = final.content
    assert th.thinking == "let me think about it" and th.signature == "sig123"
    assert tx.text == "Reading files."
    assert (t1.id, t1.name, t1.input) == ("toolu_A", "read_file", args1)
    assert t2.id.startswith("toolu_") and t2.input == {"dir": "."}
    assert final.stop_reason == "tool_use" and final.usage.output_tokens == 42


async def test_anthropic_raw_sse_shape(fp, sdk):
    fp.script(Reply.tool_call("f", {"a": "0123456789"}, chunk_split=3))
    async with aiohttp.ClientSession() as s:
        async with s.post(fp.url + "/v1/messages", json={"model": "m", "max_tokens": 5, "messages": MSGS,
                                                         "stream": True}) as r:
            assert r.headers["Content-Type"].startswith("text/event-stream")
            chunks = [c async for c, end in r.content.iter_chunks() if end]  # one per HTTP chunk
            raw = b"".join(chunks).decode()
    events = [blk.split("\n") for blk in raw.strip().split("\n\n")]
    assert len(chunks) == 3 * len(events)  # every event written in 3 pieces at arbitrary offsets
    names = [lines[0].removeprefix("event: ") for lines in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    for lines in events:
        assert lines[0].startswith("event: ") and lines[1].startswith("data: ")
        assert json.loads(lines[1][6:])["type"] == lines[0][7:]
    partial = [json.loads(l[1][6:])["delta"]["partial_json"] for l in events if "input_json_delta" in l[1]]
    assert len(partial) >= 3 and json.loads("".join(partial)) == {"a": "0123456789"}


async def test_anthropic_nonstream_tool_call_count_tokens_and_models(fp, sdk):
    fp.script(Reply.tool_call("bash", {"cmd": "ls"}, text="Let me look."), )
    c = sdk.ant()
    msg = await c.messages.create(model="claude-x", max_tokens=10, messages=MSGS)
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[1].input == {"cmd": "ls"} and msg.stop_reason == "tool_use"
    fp.count_tokens = 1234
    n = await c.messages.count_tokens(model="claude-x", messages=MSGS)
    assert n.input_tokens == 1234 and fp.last.path == "/v1/messages/count_tokens"
    models = await c.models.list()
    assert models.data[0].type == "model" and models.data[0].id.startswith("claude")
    assert fp.pending == 0


# ----------------------------------------------------------------------------- Chat Completions


async def test_chat_text_nonstream_and_stream_usage(fp, sdk):
    fp.script(Reply.text("one two three", input_tokens=20, output_tokens=4, cache_read_tokens=8),
              Reply.text("streamed text here", input_tokens=9, output_tokens=2))
    c = sdk.oai()
    r = await c.chat.completions.create(model="gpt-x", messages=MSGS)
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-") and r.model == "gpt-x"
    ch = r.choices[0]
    assert ch.message.content == "one two three" and ch.finish_reason == "stop" and ch.message.tool_calls is None
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (20, 4, 24)
    assert r.usage.prompt_tokens_details.cached_tokens == 8

    stream = await c.chat.completions.create(model="gpt-x", messages=MSGS, stream=True,
                                             stream_options={"include_usage": True})
    chunks = [ch async for ch in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == "streamed text here"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == 9
    assert fp.last.json["stream_options"] == {"include_usage": True}


async def test_chat_stream_tool_calls_accumulate(fp, sdk):
    args = {"query": "what is the meaning of life", "k": 5}
    fp.script(Reply.of(Text("Searching."), ToolCall("search", args, call_id="call_1"),
                       ToolCall("read", {"p": "x"}), chunk_split=5),
              Reply.of(ToolCall("a", {"x": 1}), ToolCall("b", {"y": 2})))
    c = sdk.oai()
    async with c.chat.completions.stream(model="gpt-x", messages=MSGS) as stream:
        async for _ in stream:
            pass
        final = await stream.get_final_completion()
    msg = final.choices[0].message
    assert msg.content == "Searching." and final.choices[0].finish_reason == "tool_calls"
    calls = msg.tool_calls
    assert [t.function.name for t in calls] == ["search", "read"] and calls[0].id == "call_1"
    assert json.loads(calls[0].function.arguments) == args and json.loads(calls[1].function.arguments) == {"p": "x"}

    # hand accumulation over the raw chunks, as most agents do it
    acc: dict[int, dict] = {}
    stream = await c.chat.completions.create(model="gpt-x", messages=MSGS, stream=True)
    async for chunk in stream:
        for tc in chunk.choices[0].delta.tool_calls or []:
            slot = acc.setdefault(tc.index, {"id": None, "name": None, "args": ""})
            slot["id"] = slot["id"] or tc.id
            slot["name"] = slot["name"] or tc.function.name
            slot["args"] += tc.function.arguments or ""
    assert [(v["name"], json.loads(v["args"])) for v in acc.values()] == [("a", {"x": 1}), ("b", {"y": 2})]
    assert all(v["id"].startswith("call_") for v in acc.values())


async def test_chat_nonstream_tool_call_and_raw_done(fp, sdk):
    fp.script(Reply.tool_call("f", {"a": 1}, call_id="call_z"), Reply.text("x"))
    r = await sdk.oai().chat.completions.create(model="gpt-x", messages=MSGS)
    tc = r.choices[0].message.tool_calls[0]
    assert (tc.id, tc.type, tc.function.name, json.loads(tc.function.arguments)) == ("call_z", "function", "f", {"a": 1})
    assert r.choices[0].finish_reason == "tool_calls"
    async with aiohttp.ClientSession() as s:
        async with s.post(fp.url + "/v1/chat/completions", json={"model": "m", "messages": MSGS, "stream": True}) as resp:
            raw = (await resp.read()).decode()
    blocks = raw.strip().split("\n\n")
    assert all(b.startswith("data: ") and "\n" not in b for b in blocks) and blocks[-1] == "data: [DONE]"


# ----------------------------------------------------------------------------- Responses


async def test_responses_nonstream_all_item_kinds(fp, sdk):
    fp.script(Reply.of(Thinking("pondering"), Text("Here goes."), ToolCall("shell", {"cmd": ["ls"]}),
                       CustomToolCall("apply_patch", "*** Begin Patch\n*** End Patch\n", call_id="call_p"),
                       input_tokens=100, output_tokens=30, cache_read_tokens=64, reasoning_tokens=12))
    r = await sdk.oai().responses.create(model="gpt-x", input="hi", include=["reasoning.encrypted_content"],
                                       instructions="be brief")
    assert r.id.startswith("resp_") and r.object == "response" and r.status == "completed"
    assert r.model == "gpt-x" and r.instructions == "be brief" and r.output_text == "Here goes."
    rs, msg, fc, ctc = r.output
    assert rs.type == "reasoning" and rs.summary[0].text == "pondering" and rs.encrypted_content
    assert msg.type == "message" and msg.content[0].type == "output_text"
    assert fc.type == "function_call" and fc.id.startswith("fc_") and fc.call_id.startswith("call_")
    assert json.loads(fc.arguments) == {"cmd": ["ls"]} and fc.status == "completed"
    assert (ctc.type, ctc.name, ctc.call_id, ctc.input) == ("custom_tool_call", "apply_patch", "call_p",
                                                           "*** Begin Patch\n*** End Patch\n")
    u = r.usage
    assert (u.input_tokens, u.output_tokens, u.total_tokens) == (100, 30, 130)
    assert u.input_tokens_details.cached_tokens == 64 and u.output_tokens_details.reasoning_tokens == 12
    assert fp.last.json["input"] == "hi"


async def test_responses_stream_helper_and_raw_events(fp, sdk):
    tools = [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}},
              "strict": False}]
    reply = Reply.of(Thinking("thinking hard"), Text("Running it now."), ToolCall("shell", {"cmd": "pytest -q"}),
                     CustomToolCall("apply_patch", "patch body text"), chunk_split=4, cache_read_tokens=3)
    fp.script(reply, reply)
    c = sdk.oai()
    async with c.responses.stream(model="gpt-x", input="hi", tools=tools) as stream:
        deltas = [ev.delta async for ev in stream if ev.type == "response.output_text.delta"]
        final = await stream.get_final_response()
    assert "".join(deltas) == "Running it now." and len(deltas) >= 3
    assert [o.type for o in final.output] == ["reasoning", "message", "function_call", "custom_tool_call"]
    fc = final.output[2]
    assert fc.name == "shell" and json.loads(fc.arguments) == {"cmd": "pytest -q"}
    assert final.output[3].input == "patch body text" and final.usage.input_tokens_details.cached_tokens == 3

    events = [ev async for ev in await c.responses.create(model="gpt-x", input="hi", stream=True)]
    types = [e.type for e in events]
    assert types[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert types[-1] == "response.completed"
    for t in ("response.reasoning_summary_text.delta", "response.content_part.added", "response.output_text.done",
              "response.content_part.done", "response.function_call_arguments.delta",
              "response.function_call_arguments.done", "response.custom_tool_call_input.delta",
              "response.custom_tool_call_input.done", "response.output_item.done"):
        assert t in types, t
    assert [e.sequence_number for e in events] == list(range(len(events)))
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(args) == {"cmd": "pytest -q"}


async def test_responses_websocket_round_trip(fp, sdk):
    fp.script(Reply.text("ws hello"), Reply.tool_call("shell", {"cmd": "ls"}),
              Reply.error(400, "bad model"), Reply.text("dropped", drop_after_events=3))
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(fp.ws_url, headers={"session-id": "abc"}) as ws:
            async def turn(**body):
                await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", **body}))
                out = []
                while True:
                    ev = json.loads((await ws.receive(timeout=5)).data)
                    out.append(ev)
                    if ev["type"] in ("response.completed", "response.failed", "error"):
                        return out
            first = await turn(input="hi", store=False)
            second = await turn(input=[{"type": "function_call_output", "call_id": "c", "output": "ok"}])
            third = await turn(input="x")
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", "input": "y"}))
            frames = [await ws.receive(timeout=5) for _ in range(4)]
    assert [f.type for f in frames[:3]] == [aiohttp.WSMsgType.TEXT] * 3
    assert frames[3].type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)
    assert first[0]["type"] == "response.created" and first[-1]["response"]["output"][0]["content"][0]["text"] == "ws hello"
    assert "".join(e["delta"] for e in first if e["type"] == "response.output_text.delta") == "ws hello"
    assert second[-1]["response"]["output"][0]["type"] == "function_call"
    assert third == [{"type": "error", "status": 400, "error": {"message": "bad model", "type": "invalid_request_error",
                                                              "param": None, "code": None}}]
    recs = fp.model_requests
    assert [r.api for r in recs] == ["responses_ws"] * 4 and recs[0].method == "WS"
    assert recs[0].headers["Session-Id"] == "abc" and recs[0].json["store"] is False
    assert recs[1].json["input"][0]["call_id"] == "c"


async def test_a_responses_websocket_lane_that_is_not_a_string_is_an_error_event(fp):
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(fp.ws_url) as ws:
            for lane in ({"a": 1}, ["x"], 5):
                await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", "input": "hi",
                                              "stream_id": lane}))
                ev = json.loads((await ws.receive(timeout=5)).data)
                assert ev["type"] == "error" and ev["status"] == 400 and "stream_id" in ev["error"]["message"]
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", "input": "hi"}))
            while (ev := json.loads((await ws.receive(timeout=5)).data))["type"] != "response.completed":
                assert ev["type"] != "error"


# ----------------------------------------------------------------------------- errors and faults


async def test_error_replies_raise_matching_sdk_exceptions(fp, sdk):
    fp.script(Reply.error(400, "prompt is too long"), Reply.error(429, "slow down"),
              Reply.error(401, "bad key"), Reply.error(500, "boom"), Reply.error(404, "no such model"))
    a, o = sdk.ant(), sdk.oai()
    with pytest.raises(anthropic.BadRequestError) as e:
        await a.messages.create(model="m", max_tokens=5, messages=MSGS)
    assert e.value.body["error"] == {"type": "invalid_request_error", "message": "prompt is too long"}
    with pytest.raises(anthropic.RateLimitError):
        await a.messages.create(model="m", max_tokens=5, messages=MSGS, stream=True)
    with pytest.raises(openai.AuthenticationError) as e2:
        await o.chat.completions.create(model="m", messages=MSGS)
    assert e2.value.code == "invalid_api_key"
    with pytest.raises(openai.InternalServerError):
        await o.responses.create(model="m", input="x")
    with pytest.raises(openai.NotFoundError):
        await o.responses.create(model="m", input="x", stream=True)


async def test_mid_stream_errors(fp, sdk):
    fp.script(Reply.text("a long text that keeps going", fail_after_events=4, fail_message="Overloaded"),
              Reply.text("a long text that keeps going", fail_after_events=3),
              Reply.text("a long text that keeps going", fail_after_events=5))
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        async with sdk.ant().messages.stream(model="m", max_tokens=5, messages=MSGS) as stream:
            await stream.get_final_message()
    with pytest.raises(openai.APIError, match="Internal server error"):
        async for _ in await sdk.oai().chat.completions.create(model="m", messages=MSGS, stream=True):
            pass
    events = [ev async for ev in await sdk.oai().responses.create(model="m", input="x", stream=True)]
    assert events[-1].type == "response.failed" and events[-1].response.error.code == "server_error"


async def test_drop_after_events_makes_sdks_raise(fp, sdk):
    fp.script(Reply.text("some text to truncate", drop_after_events=4),
              Reply.tool_call("f", {"a": "b" * 40}, drop_after_events=6),
              Reply.text("resp text", drop_after_events=5),
              Reply.text("headers only", drop_after_events=0),
              Reply.text("non-stream body", drop_after_events=0))
    # Each client sees its call fail because the body was cut: what matters is the cause, not the class an SDK
    # release wraps it in (anthropic let the transport error through mid-stream before 2.17; openai wraps it).
    with pytest.raises(Exception) as cut:
        async with sdk.ant().messages.stream(model="m", max_tokens=5, messages=MSGS) as stream:
            await stream.get_final_message()
    assert caused_by(cut.value, httpx2.RemoteProtocolError, "incomplete chunked read")
    with pytest.raises(Exception) as cut:
        async with sdk.oai().chat.completions.stream(model="m", messages=MSGS) as stream:
            await stream.get_final_completion()
    assert caused_by(cut.value, httpx2.RemoteProtocolError, "incomplete chunked read")
    with pytest.raises(Exception) as cut:
        async with sdk.oai().responses.stream(model="m", input="x") as stream:
            await stream.get_final_response()
    assert caused_by(cut.value, httpx2.RemoteProtocolError, "incomplete chunked read")
    with pytest.raises(Exception) as cut:
        async for _ in await sdk.oai().chat.completions.create(model="m", messages=MSGS, stream=True):
            pass
    assert caused_by(cut.value, httpx2.RemoteProtocolError, "incomplete chunked read")
    with pytest.raises(Exception) as cut:  # non-stream: Content-Length announced, half the body sent
        await sdk.ant().messages.create(model="m", max_tokens=5, messages=MSGS)
    assert caused_by(cut.value, httpx2.RemoteProtocolError)
    # raw view: the client sees a truncated chunked body
    fp.script(Reply.text("abcdefghijkl", drop_after_events=3))
    async with aiohttp.ClientSession() as s:
        async with s.post(fp.url + "/v1/messages", json={"model": "m", "messages": MSGS, "stream": True}) as r:
            got = b""
            with pytest.raises(aiohttp.ClientPayloadError):
                async for chunk in r.content.iter_any():
                    got += chunk
    assert got.count(b"\n\n") == 3 and got.startswith(b"event: message_start")


async def test_hang_stall_and_delays(fp, sdk):
    # Each request picks its reply by its model name, not by arrival order: a request
    # that times out on a slow machine before it reaches the fake cannot shift the script.
    replies = {"hang": Reply.text(hang=True), "stall": Reply.text("abc", stall_after_events=2),
               "late": Reply.text(delay_before_headers=0.3), "slow": Reply.text("x" * 10, delay_between_events=0.05)}
    fp.default_reply = lambda rec: replies[rec.json["model"]]
    with pytest.raises(openai.APITimeoutError):
        await sdk.oai(timeout=0.3).chat.completions.create(model="hang", messages=MSGS)
    with pytest.raises(Exception) as e:  # whether the SDK wraps a read timeout mid-stream depends on its release
        async with sdk.ant(timeout=0.3).messages.stream(model="stall", max_tokens=5, messages=MSGS) as stream:
            await stream.get_final_message()
    assert caused_by(e.value, httpx2.TimeoutException)
    t = time.monotonic()
    await sdk.oai(timeout=10).responses.create(model="late", input="x")
    assert time.monotonic() - t >= 0.3
    t = time.monotonic()
    async for _ in await sdk.oai(timeout=10).chat.completions.create(model="slow", messages=MSGS, stream=True):
        pass
    assert time.monotonic() - t >= 0.05 * 5


# ----------------------------------------------------------------------------- misc routes, scripting


async def test_misc_routes_and_scripting(fp, sdk):
    fp.script("plain string reply", lambda rec: Reply.text(f"echo {rec.json['model']}"))
    c = sdk.oai()
    assert (await c.chat.completions.create(model="m1", messages=MSGS)).choices[0].message.content == "plain string reply"
    assert (await c.chat.completions.create(model="m2", messages=MSGS)).choices[0].message.content == "echo m2"
    assert (await c.chat.completions.create(model="m3", messages=MSGS)).choices[0].message.content == "Hello from fake."
    models = await c.models.list()
    assert models.data[0].object == "model"
    async with aiohttp.ClientSession() as s:
        for method in ("GET", "HEAD"):
            async with s.request(method, fp.url + "/") as r:
                assert r.status == 200
        async with s.post(fp.url + "/v1/unknown?x=1", data=b"\x00raw") as r:
            assert r.status == 404 and "error" in await r.json()
        assert (fp.last.path, fp.last.query, fp.last.body, fp.last.json) == ("/v1/unknown", "x=1", b"\x00raw", None)
        fp.script(Reply.text("kept"))
        async with s.post(fp.url + "/v1/messages", data=b"{not json") as r:
            assert r.status == 400 and (await r.json())["type"] == "error"
        assert fp.pending == 1  # invalid JSON does not consume a scripted reply
    fp.clear()
    assert fp.requests == [] and fp.last is None and fp.pending == 1
    fp.reset()
    assert fp.pending == 0


def test_threaded_provider():
    with FakeProviderThread(default_reply=Reply.text("from thread")) as fp:
        req = urllib.request.Request(fp.url + "/v1/chat/completions", method="POST",
                                     data=json.dumps({"model": "m", "messages": MSGS}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            assert json.load(r)["choices"][0]["message"]["content"] == "from thread"
        assert fp.requests[0].api == "chat"
