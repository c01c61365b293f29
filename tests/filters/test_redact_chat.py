"""Chat Completions corners where a secret used to slip past redaction: SSE
comments and other data-less events inside a stream (they closed every open
channel, releasing held-back text and tool arguments), custom tool calls and
legacy ``function_call``s (not exposed as slots nor as tool calls), and
``logprobs`` that spell the original text of a choice redaction changed.
Adapter and redact filter on canned events, then through the proxy with the
official openai SDK (the fake provider; a hand-written upstream for what the
fake does not send: comments, custom calls, logprobs)."""
from __future__ import annotations

import json

import orjson
import pytest
from aiohttp import web
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from secretcorpus import hyperscan_cache_dir
from toolsession import TOOLS, canned, tool_outputs

from ctxproxy.config import parse_section
from ctxproxy.filters import Identity, Pipeline, Services, Turn
from ctxproxy.filters.effects.filter import EffectsConfig, EffectsFilter
from ctxproxy.filters.prune import PruneConfig, PruneFilter
from ctxproxy.filters.redact import RedactConfig, RedactFilter
from ctxproxy.store.services.redaction import ProfileRegistry
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.filters.view import ARGS, TEXT
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.sse import SSEDecoder
from ctxproxy.store import open_store

TOKENS = TokenCounter()
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
HEAD, TAIL = GHP[:13], GHP[13:]  # "ghp_aB3dE5fG7" | "hJ9kL1mN3p..."
PIPELINE = '[pipeline]\nrequest = ["identify", "redact"]\n'
FILLERS = {  # events that carry no chunk: they must close nothing
    "comment": b": OPENROUTER PROCESSING\n\n",
    "blank": b"\n",
    "unparseable": b"data: {oops\n\n",
    "named-no-data": b"event: ping\n\n",
}


def assert_clean(text: str) -> None:
    """Neither the secret nor a piece of it that would identify it."""
    assert GHP not in text and HEAD[4:] not in text and TAIL[:9] not in text, text


@pytest.fixture(scope="module")
def filt():
    reg = ProfileRegistry.build({"default": {}}, cache_dir=hyperscan_cache_dir())
    return RedactFilter(RedactConfig(), b"server-secret-for-tests-0123456789", registry=reg)


def turn_for(body: dict | None = None) -> Turn:
    body = body or {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    t = Turn(api="chat", route="r", path="/", headers={}, request=ADAPTERS["chat"].parse_request(orjson.dumps(body)),
             tokens=TOKENS)
    t.identity = Identity(tenant="default", session="s1", task="s1")
    return t


def redacted(filt, turn, text: str) -> str:
    return filt.registry.get("default").redactor.redact(text, filt._key(turn)).text


def sse(delta: dict, finish: str | None = None, logprobs: dict | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
    return b"data: " + orjson.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                     "choices": [choice]}) + b"\n\n"


def feed(filt, turn, blob: bytes) -> list[list[bytes]]:
    """The redact filter over a decoded SSE byte stream: what each upstream event became."""
    state, pipeline = ADAPTERS["chat"].stream(), Pipeline([filt])
    out = [[e.to_bytes() for e in pipeline.run_event(turn, state.event(raw.name, raw.raw, raw.data))]
           for raw in SSEDecoder().decode(blob)]
    pipeline.run_end(turn)
    return out


def chunks_of(emitted: list[list[bytes]]) -> list[ChatCompletionChunk]:
    """Every emitted chunk, parsed as the openai SDK parses it (fillers skipped)."""
    out = []
    for raw in (r for group in emitted for r in group):
        for ev in SSEDecoder().decode(raw):
            if ev.data and ev.data != b"[DONE]" and ev.data != b"{oops":
                out.append(ChatCompletionChunk.model_validate_json(ev.data))
    return out


# -- 1. data-less events inside a stream --------------------------------------------------------

@pytest.mark.parametrize("filler", list(FILLERS))
def test_a_comment_inside_a_secret_releases_nothing(filt, filler):
    """Text held back at a secret's start and tool arguments being assembled
    stay held across a comment; the comment goes out alone, as received."""
    t = turn_for()
    args = json.dumps({"cmd": f"gh auth login --with-token {GHP}"})
    cut = args.index(GHP) + 9
    blob = b"".join([
        sse({"role": "assistant", "content": ""}),
        sse({"content": f"Your token is {HEAD}"}),
        FILLERS[filler],
        sse({"content": f"{TAIL}, keep it."}),
        sse({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                             "function": {"name": "sh", "arguments": args[:cut]}}]}),
        FILLERS[filler],
        sse({"tool_calls": [{"index": 0, "function": {"arguments": args[cut:]}}]}),
        sse({}, "tool_calls"), b"data: [DONE]\n\n"])
    emitted = feed(filt, t, blob)
    assert emitted[2] == [FILLERS[filler]] and emitted[5] == [FILLERS[filler]]
    assert_clean(b"".join(r for g in emitted for r in g).decode())
    chunks = chunks_of(emitted)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    got_args = "".join(tc.function.arguments or "" for c in chunks if c.choices
                       for tc in c.choices[0].delta.tool_calls or ())
    assert text == redacted(filt, t, f"Your token is {GHP}, keep it.")
    assert json.loads(got_args)["cmd"].startswith("gh auth login --with-token [REDACTED:github-pat:")


def test_done_still_flushes_and_the_flush_names_the_stream(filt):
    """A stream that never sends a finish_reason: ``[DONE]`` closes the held
    tail, in a chunk with the stream's own id and model."""
    t = turn_for()
    emitted = feed(filt, t, sse({"content": f"end {GHP[:20]}"}) + b": keep-alive\n\n" + b"data: [DONE]\n\n")
    assert emitted[1] == [b": keep-alive\n\n"]
    assert [c.choices[0].delta.content for c in chunks_of([emitted[0]])] == ["end "]  # the rest could be a secret
    flush = chunks_of([emitted[2]])
    assert [(c.id, c.model, c.choices[0].delta.content) for c in flush] == [("c", "m", GHP[:20])]
    assert emitted[2][-1] == b"data: [DONE]\n\n"


# -- 2. custom tool calls and legacy function calls -----------------------------------------------

HISTORY = {"model": "m", "messages": [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_c", "type": "custom", "custom": {"name": "apply_patch", "input": f"+TOKEN={GHP}\n"}},
        {"id": "call_f", "type": "function", "function": {"name": "sh", "arguments": json.dumps({"c": "ls"})}}]},
    {"role": "tool", "tool_call_id": "call_c", "content": "patched"},
    {"role": "tool", "tool_call_id": "call_f", "content": "a b"},
    {"role": "assistant", "content": None,
     "function_call": {"name": "login", "arguments": json.dumps({"token": GHP})}},
    {"role": "function", "name": "login", "content": "logged in"},
    {"role": "user", "content": "thanks"}]}


def test_request_exposes_custom_input_and_legacy_arguments(filt):
    view = ADAPTERS["chat"].parse_request(orjson.dumps(HISTORY))
    kinds = {s.where: s.kind for s in view.text_slots()}
    assert kinds["messages[1].tool_calls[0].custom.input"] == TEXT
    assert kinds["messages[4].function_call.arguments"] == ARGS
    calls = {c.call_id: c for c in view.tool_calls()}
    assert calls["call_c"].name == "apply_patch" and calls["call_c"].arguments == f"+TOKEN={GHP}\n"
    (legacy,) = [c for c in calls.values() if c.name == "login"]
    assert legacy.arguments == {"token": GHP} and legacy.position == 4
    # results pair with their calls: by tool_call_id, and a legacy result by its function's name
    results = {r.position: r.call_id for r in view.tool_results()}
    assert results == {2: "call_c", 3: "call_f", 5: legacy.call_id}

    t = turn_for(HISTORY)
    filt.on_request(t)
    sent = t.request.to_bytes().decode()
    assert_clean(sent)
    msgs = orjson.loads(sent)["messages"]
    assert msgs[1]["tool_calls"][0]["custom"]["input"].startswith("+TOKEN=[REDACTED:github-pat:")
    assert json.loads(msgs[4]["function_call"]["arguments"])["token"].startswith("[REDACTED:github-pat:")


def test_response_custom_and_legacy_calls_redacted_and_seen(filt):
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_c", "type": "custom", "custom": {"name": "apply_patch", "input": f"+T={GHP}\n"}}]}},
        {"index": 1, "finish_reason": "function_call", "logprobs": None, "message": {
            "role": "assistant", "content": None,
            "function_call": {"name": "login", "arguments": json.dumps({"token": GHP})}}}]}
    view = ADAPTERS["chat"].parse_response(orjson.dumps(body))
    assert [(c.call_id, c.name, c.arguments, c.position) for c in view.tool_calls()] == [
        ("call_c", "apply_patch", f"+T={GHP}\n", 0), ("", "login", {"token": GHP}, 1)]
    t = turn_for()
    Pipeline([filt]).run_response(t, view)
    out = view.to_bytes().decode()
    assert_clean(out)
    res = ChatCompletion.model_validate_json(out)
    assert res.choices[0].message.tool_calls[0].custom.input.startswith("+T=[REDACTED:github-pat:")
    assert json.loads(res.choices[1].message.function_call.arguments)["token"].startswith("[REDACTED:")


@pytest.mark.parametrize("cut", [3, 9, 17, 30])
def test_stream_legacy_function_call_and_custom_input(filt, cut):
    """``delta.function_call.arguments`` is assembled and redacted like tool
    arguments; a custom tool's streamed input like text (a tool channel)."""
    t = turn_for()
    args = json.dumps({"token": GHP})
    patch = f"+TOKEN={GHP}\n"
    blob = b"".join([
        sse({"role": "assistant", "content": None, "function_call": {"name": "login", "arguments": ""}}),
        sse({"function_call": {"arguments": args[:cut]}}),
        sse({"function_call": {"arguments": args[cut:]}}),
        sse({}, "function_call"), b"data: [DONE]\n\n"])
    stream = ADAPTERS["chat"].stream()
    first = SSEDecoder().decode(blob)[0]
    assert stream.event(first.name, first.raw, first.data).tool_call_starts() == [("0:function_call", "", "login")]
    chunks = chunks_of(feed(filt, t, blob))
    got = "".join(c.choices[0].delta.function_call.arguments or "" for c in chunks
                  if c.choices and c.choices[0].delta.function_call)
    assert_clean(got)
    assert json.loads(got)["token"].startswith("[REDACTED:github-pat:")

    t = turn_for()
    blob = b"".join([
        sse({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_c", "type": "custom",
                                                  "custom": {"name": "apply_patch", "input": ""}}]}),
        sse({"tool_calls": [{"index": 0, "custom": {"input": patch[:cut]}}]}),
        sse({"tool_calls": [{"index": 0, "custom": {"input": patch[cut:]}}]}),
        sse({}, "tool_calls"), b"data: [DONE]\n\n"])
    emitted = feed(filt, t, blob)
    raw = b"".join(r for g in emitted for r in g).decode()
    assert_clean(raw)
    got = "".join(c["custom"]["input"] for line in raw.split("\n\n") if line.startswith("data: {")
                  for ch in orjson.loads(line[6:])["choices"] for c in ch["delta"].get("tool_calls") or ())
    assert got == redacted(filt, t, patch)


def _as(form: str, body: dict) -> dict:
    """canned("chat") with its calls as custom tool calls, or as legacy function calls."""
    msgs = []
    for m in body["messages"]:
        if m.get("tool_calls"):
            call = m["tool_calls"][0]
            fn = call["function"]
            if form == "custom":
                m = {**m, "tool_calls": [{"id": call["id"], "type": "custom",
                                          "custom": {"name": fn["name"], "input": fn["arguments"]}}]}
            else:
                m = {"role": "assistant", "content": None, "function_call": fn}
            names = {call["id"]: fn["name"]}
        elif m.get("role") == "tool" and form == "legacy":
            m = {"role": "function", "name": names[m["tool_call_id"]], "content": m["content"]}
        msgs.append(m)
    return {**body, "messages": msgs}


@pytest.mark.parametrize("form", ["custom", "legacy"])
def test_prune_pairs_custom_and_legacy_calls_with_their_results(tmp_path, form):
    """prune finds the results and knows their tools: ``exclude_tools`` holds."""
    outs = tool_outputs(40, seed=3, scale=0.5)
    body = _as(form, canned("chat", outs, 30))
    store = open_store(tmp_path / "store")
    try:
        f = PruneFilter(parse_section(PruneConfig, {"trigger_tokens": 8000, "min_tokens": 100,
                                                   "exclude_tools": ["read_file"]}, "filters.prune"), store)
        t = turn_for(body)
        Pipeline([f]).run_request(t)
    finally:
        store.close()
    pruned = t.state["prune"].pruned
    assert pruned and {p["tool"] for p in pruned} <= set(TOOLS) - {"read_file"}
    out = orjson.loads(t.request.to_bytes())["messages"]
    tool_of = {3 + 2 * k: outs[k][0] for k in range(30)}  # system, user, then (call, result) pairs
    changed = [i for i in tool_of if out[i]["content"] != body["messages"][i]["content"]]
    assert len(changed) == len(pruned) and all(tool_of[i] != "read_file" for i in changed)


PR_URL = "https://github.com/acme/app/pull/4821"
EFFECT_CALLS = {  # an assistant message with one side-effecting call, and its result
    "custom": ({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_p", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch\n+x\n"}}]},
        {"role": "tool", "tool_call_id": "call_p", "content": f"Done. {PR_URL}"}, "apply_patch"),
    "legacy": ({"role": "assistant", "content": None,
                "function_call": {"name": "exec", "arguments": '{"command":"gh pr create --fill"}'}},
               {"role": "function", "name": "exec", "content": f"Created {PR_URL}"}, "exec"),
}


@pytest.mark.parametrize("form", list(EFFECT_CALLS))
def test_effects_records_and_settles_custom_and_legacy_calls(tmp_path, form):
    msg, result, tool = EFFECT_CALLS[form]
    tools = [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object"}}},
             {"type": "custom", "custom": {"name": "apply_patch"}}]
    first = [{"role": "user", "content": "open the PR"}]
    store = open_store(tmp_path / "store")
    try:
        f = EffectsFilter(EffectsConfig(), store)

        def turn(messages: list) -> Turn:
            t = turn_for({"model": "m", "tools": tools, "messages": messages})
            t.services = Services(store=store)
            Pipeline([f]).run_request(t)
            return t

        t1 = turn(first)
        f.on_response(t1, ADAPTERS["chat"].parse_response(orjson.dumps({"id": "c", "choices": [
            {"index": 0, "finish_reason": "tool_calls", "message": msg}]})))
        f.on_response_end(t1)
        f.flush()
        assert [(e["tool"], e["state"]) for e in t1.state["effects"].effects] == [(tool, "pending")]
        t2 = turn(first + [msg, result])
        assert [e["state"] for e in t2.state["effects"].effects] == ["completed"]
        (rec,) = store.effects.list("default", session="s1")
        assert rec.tool == tool and rec.state == "completed" and PR_URL in rec.refs
    finally:
        store.close()


# -- 3. logprobs of a changed choice ----------------------------------------------------------------

def _logprobs(*tokens: str) -> dict:
    return {"content": [{"token": s, "logprob": -0.5, "bytes": list(s.encode()),
                         "top_logprobs": [{"token": s, "logprob": -0.5, "bytes": list(s.encode())}]}
                        for s in tokens], "refusal": None}


def test_response_logprobs_dropped_only_where_text_changed(filt):
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "logprobs": _logprobs("key ", HEAD, TAIL),
         "message": {"role": "assistant", "content": f"key {GHP}"}},
        {"index": 1, "finish_reason": "stop", "logprobs": _logprobs("no", " key"),
         "message": {"role": "assistant", "content": "no key"}}]}
    view = ADAPTERS["chat"].parse_response(orjson.dumps(body))
    Pipeline([filt]).run_response(turn_for(), view)
    out = view.to_bytes().decode()
    assert_clean(out)
    res = ChatCompletion.model_validate_json(out)
    assert res.choices[0].logprobs is None
    assert [c.token for c in res.choices[1].logprobs.content] == ["no", " key"]


def test_stream_logprobs_dropped_where_a_delta_changed(filt):
    t = turn_for()
    blob = b"".join([
        sse({"content": "ok "}, logprobs=_logprobs("ok ")),
        sse({"content": f"key {HEAD}"}, logprobs=_logprobs("key ", HEAD)),
        sse({"content": f"{TAIL} done"}, logprobs=_logprobs(TAIL, " done")),
        sse({}, "stop"), b"data: [DONE]\n\n"])
    emitted = feed(filt, t, blob)
    assert_clean(b"".join(r for g in emitted for r in g).decode())
    chunks = chunks_of(emitted)
    assert [c.choices[0].logprobs is None for c in chunks[:3]] == [False, True, True]
    assert [x.token for x in chunks[0].choices[0].logprobs.content] == ["ok "]


# -- through the proxy, official openai SDK ---------------------------------------------------------

async def test_sdk_request_history_with_custom_and_legacy_calls(make_proxy, fake):
    proxy = await make_proxy(PIPELINE)
    res = await proxy.openai().chat.completions.create(model="gpt-x", messages=HISTORY["messages"])
    assert res.choices[0].message.content
    (rec,) = fake.model_requests
    assert_clean(rec.body.decode())
    msgs = rec.json["messages"]
    assert msgs[1]["tool_calls"][0]["custom"]["input"].startswith("+TOKEN=[REDACTED:github-pat:")
    assert "[REDACTED:github-pat:" in msgs[4]["function_call"]["arguments"]


@pytest.fixture
async def upstream(serve_app):
    """A Chat provider that streams a comment inside a secret, sends custom and
    legacy calls, and logprobs on every choice."""
    stream = b"".join([
        sse({"role": "assistant", "content": ""}),
        sse({"content": f"Your token is {HEAD}"}, logprobs=_logprobs("Your token is ", HEAD)),
        FILLERS["comment"],
        sse({"content": f"{TAIL}, keep it."}, logprobs=_logprobs(TAIL, ", keep it.")),
        sse({}, "stop"), b"data: [DONE]\n\n"])
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "logprobs": _logprobs("key ", HEAD, TAIL), "message": {
            "role": "assistant", "content": f"key {GHP}", "tool_calls": [
                {"id": "call_c", "type": "custom", "custom": {"name": "apply_patch", "input": f"+T={GHP}\n"}}]}},
        {"index": 1, "finish_reason": "function_call", "logprobs": None, "message": {
            "role": "assistant", "content": None,
            "function_call": {"name": "login", "arguments": json.dumps({"token": GHP})}}}]}

    async def handler(request):
        req = await request.json()
        if not req.get("stream"):
            return web.json_response(body)
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for i in range(0, len(stream), 29):
            await resp.write(stream[i:i + 29])
        return resp

    app = web.Application()
    app.router.add_post("/{tail:.*}", handler)
    return await serve_app(app)


async def test_sdk_stream_with_comment_and_logprobs(make_proxy, upstream):
    proxy = await make_proxy(PIPELINE, upstream=upstream)
    chunks = [c async for c in await proxy.openai().chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True, logprobs=True)]
    assert_clean("".join(c.model_dump_json() for c in chunks))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Your token is [REDACTED:github-pat:") and text.endswith("], keep it.")


async def test_sdk_whole_response_custom_legacy_and_logprobs(make_proxy, upstream):
    proxy = await make_proxy(PIPELINE, upstream=upstream)
    res = await proxy.openai().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                        logprobs=True)
    assert_clean(res.model_dump_json())
    assert res.choices[0].logprobs is None and res.choices[0].message.content.startswith("key [REDACTED:")
    assert res.choices[0].message.tool_calls[0].custom.input.startswith("+T=[REDACTED:github-pat:")
    assert "[REDACTED:github-pat:" in res.choices[1].message.function_call.arguments
