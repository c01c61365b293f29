"""Edits the Responses adapter makes to a stream: the held-back tail of a
channel flushed before its end goes out as that channel's own delta event
(a refusal's as ``response.refusal.delta``...), numbered so the stream's
``sequence_number``s stay unique and increasing; and an ``output_text`` part
whose text an edit changed loses its ``logprobs``, which would otherwise spell
the original token by token. Then a refusal and logprobs through the proxy
with the official openai SDK."""
from __future__ import annotations

import json

import aiohttp
import orjson
import pytest
from aiohttp import web
from secretcorpus import hyperscan_cache_dir

from ctxproxy.filters import Identity, Pipeline, Turn
from ctxproxy.filters.redact import RedactConfig, RedactFilter
from ctxproxy.store.services.redaction import ProfileRegistry
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply, Text, ToolCall

GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
ITEM = "msg_7"
# delta type -> (done type, its whole-text field, the index key beside output_index)
CHANNELS = {
    "response.refusal.delta": ("response.refusal.done", "refusal", "content_index"),
    "response.output_text.delta": ("response.output_text.done", "text", "content_index"),
    "response.reasoning_summary_text.delta": ("response.reasoning_summary_text.done", "text", "summary_index"),
    "response.reasoning_text.delta": ("response.reasoning_text.done", "text", "content_index"),
    "response.function_call_arguments.delta": ("response.function_call_arguments.done", "arguments", None),
    "response.custom_tool_call_input.delta": ("response.custom_tool_call_input.done", "input", None),
    "response.mcp_call_arguments.delta": ("response.mcp_call_arguments.done", "arguments", None),
    "response.code_interpreter_call_code.delta": ("response.code_interpreter_call_code.done", "code", None),
    "response.shell_call_command.delta": ("response.shell_call_command.done", "command", "command_index"),
}
JSON_ARGS = ("response.function_call_arguments.delta", "response.mcp_call_arguments.delta")


def item_of(delta_type: str, full: str) -> tuple[dict, tuple]:
    """The finished output item holding ``full`` (as part 1 where it has parts), and the path to it."""
    other = {"type": "output_text", "text": "ok"}
    shapes = {
        "response.refusal.delta": ({"type": "message", "role": "assistant",
                                    "content": [other, {"type": "refusal", "refusal": full}]},
                                   ("content", 1, "refusal")),
        "response.output_text.delta": ({"type": "message", "role": "assistant",
                                        "content": [other, {"type": "output_text", "text": full}]},
                                       ("content", 1, "text")),
        "response.reasoning_summary_text.delta": ({"type": "reasoning", "summary": [
            {"type": "summary_text", "text": "ok"}, {"type": "summary_text", "text": full}]}, ("summary", 1, "text")),
        "response.reasoning_text.delta": ({"type": "reasoning", "summary": [], "content": [
            {"type": "reasoning_text", "text": "ok"}, {"type": "reasoning_text", "text": full}]},
            ("content", 1, "text")),
        "response.function_call_arguments.delta": ({"type": "function_call", "call_id": "call_1", "name": "sh",
                                                    "arguments": full}, ("arguments",)),
        "response.custom_tool_call_input.delta": ({"type": "custom_tool_call", "call_id": "call_1", "name": "sh",
                                                   "input": full}, ("input",)),
        "response.mcp_call_arguments.delta": ({"type": "mcp_call", "server_label": "ci", "name": "deploy",
                                               "arguments": full}, ("arguments",)),
        "response.code_interpreter_call_code.delta": ({"type": "code_interpreter_call", "container_id": "cntr_1",
                                                       "status": "completed", "outputs": [], "code": full},
                                                      ("code",)),
        "response.shell_call_command.delta": ({"type": "shell_call", "call_id": "call_1", "status": "completed",
                                               "action": {"commands": ["ls", full]}}, ("action", "commands", 1)),
    }
    item, path = shapes[delta_type]
    return {"id": ITEM, **item}, path


@pytest.fixture(scope="module")
def filt():
    registry = ProfileRegistry.build({"default": {}}, cache_dir=hyperscan_cache_dir())
    return RedactFilter(RedactConfig(), b"server-secret-for-tests-0123456789", registry=registry)


def make_turn() -> Turn:
    t = Turn(api="responses", route="r", path="/", headers={}, tokens=TokenCounter(),
             request=ADAPTERS["responses"].parse_request(orjson.dumps({"model": "m", "input": []})))
    t.identity = Identity(tenant="default", session="s", task="s")
    return t


def numbered(events: list[dict]) -> list[tuple[str, dict]]:
    return [(e["type"], {**e, "sequence_number": n}) for n, e in enumerate(events)]


def run(filt, events: list[tuple[str, dict]]) -> list[dict]:
    """The events as the filter lets them out, decoded."""
    turn, state, pipeline = make_turn(), ADAPTERS["responses"].stream(), Pipeline([filt])
    out = []
    for name, data in events:
        raw = orjson.dumps(data)
        out += state.outgoing(pipeline.run_event(
            turn, state.event(name, b"event: " + name.encode() + b"\ndata: " + raw + b"\n\n", raw)))
    pipeline.run_end(turn)
    return [orjson.loads(e.to_bytes().split(b"data: ", 1)[1]) for e in out]


def channel_stream(delta_type: str, chunks: list[str], with_done: bool) -> list[tuple[str, dict]]:
    """One output item (at output_index 1, part 1) streaming ``chunks``; without
    ``.done`` events, as a compatible server may send it, the final event closes it."""
    done_type, field, index_key = CHANNELS[delta_type]
    ids = {"item_id": ITEM, "output_index": 1, **({index_key: 1} if index_key else {})}
    extra = {"logprobs": []} if delta_type == "response.output_text.delta" else {}
    full = "".join(chunks)
    item, _ = item_of(delta_type, full)
    events = [{"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
              {"type": "response.output_item.added", "output_index": 1, "item": {"id": ITEM, "type": item["type"]}}]
    events += [{"type": delta_type, **ids, "delta": c, **extra} for c in chunks]
    if with_done:
        events.append({"type": done_type, **ids, field: full, **extra})
        events.append({"type": "response.output_item.done", "output_index": 1, "item": item})
    events.append({"type": "response.completed", "response": {"id": "r", "status": "completed", "output": [item]}})
    return numbered(events)


@pytest.mark.parametrize("with_done", [True, False], ids=["done", "final-only"])
@pytest.mark.parametrize("delta_type", list(CHANNELS))
def test_flushed_tail_is_the_channels_own_delta(filt, delta_type, with_done):
    """A secret at the very end is held until the channel closes; what is
    flushed then is a delta of the channel's own type and ids, numbered between
    its neighbours."""
    full = (json.dumps({"command": f"gh auth login --with-token {GHP}"})
            if delta_type in JSON_ARGS else f"I can't help with {GHP}")
    cut = len(full) - 9
    emitted = run(filt, channel_stream(delta_type, [full[:cut], full[cut:]], with_done))
    assert GHP not in json.dumps(emitted)
    deltas = [e for e in emitted if e["type"].endswith(".delta")]
    assert {e["type"] for e in deltas} == {delta_type}
    index_key = CHANNELS[delta_type][2]
    for e in deltas:
        assert e["item_id"] == ITEM and e["output_index"] == 1
        assert index_key is None or e[index_key] == 1
        if delta_type == "response.output_text.delta":
            assert e["logprobs"] == []  # the openai SDK reads it on every text delta
    streamed = "".join(e["delta"] for e in deltas)
    assert "[REDACTED:github-pat:" in streamed
    final = emitted[-1]["response"]["output"][0]
    for key in item_of(delta_type, "")[1]:
        final = final[key]
    assert streamed == final
    seqs = [e["sequence_number"] for e in emitted]
    assert seqs == list(range(len(emitted))), seqs  # one by one from 0, the held-back arguments' events too


def test_a_spoken_transcript_and_a_hosted_shells_output_are_redacted_in_pieces(filt):
    """A spoken answer's transcript streams with no item named, a hosted shell's
    output as ``{"stdout", "stderr"}`` pieces: each is a channel of its own, held
    where a secret may begin and flushed as its own kind of delta; every event
    still reads as the SDK's event type, numbered one by one."""
    from openai.types import responses as sdk

    sdk_types = {"response.audio.transcript.delta": sdk.ResponseAudioTranscriptDeltaEvent,
                 "response.audio.transcript.done": sdk.ResponseAudioTranscriptDoneEvent,
                 "response.shell_call_command.added": sdk.ResponseShellCallCommandAddedEvent,
                 "response.shell_call_output_content.delta": sdk.ResponseShellCallOutputContentDeltaEvent,
                 "response.shell_call_output_content.done": sdk.ResponseShellCallOutputContentDoneEvent}
    shell = {"item_id": "sh_1", "output_index": 1, "command_index": 0}
    said = f"Your token is {GHP}."
    printed = f"GH_TOKEN={GHP}\n"
    emitted = run(filt, numbered([
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        *({"type": "response.audio.transcript.delta", "delta": p} for p in (said[:16], said[16:30], said[30:])),
        {"type": "response.audio.transcript.done"},
        {"type": "response.shell_call_command.added", "output_index": 1, "command_index": 0,
         "command": f"echo {GHP}"},
        {"type": "response.shell_call_output_content.delta", **shell, "delta": {"stdout": printed[:14]}},
        {"type": "response.shell_call_output_content.delta", **shell,
         "delta": {"stdout": printed[14:], "stderr": "warning: env printed"}},
        {"type": "response.shell_call_output_content.done", **shell, "output": [
            {"stdout": printed, "stderr": "warning: env printed", "outcome": {"type": "exit", "exit_code": 0}}]},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}},
    ]))
    assert GHP not in json.dumps(emitted)
    for e in emitted[1:-1]:  # the lifecycle events here are cut short; these are whole
        sdk_types[e["type"]].model_validate(e)
    assert [e["sequence_number"] for e in emitted] == list(range(len(emitted)))
    transcript = "".join(e["delta"] for e in emitted if e["type"] == "response.audio.transcript.delta")
    assert transcript.startswith("Your token is [REDACTED:github-pat:") and transcript.endswith("].")
    pieces = [e["delta"] for e in emitted if e["type"] == "response.shell_call_output_content.delta"]
    assert all(any(p.values()) for p in pieces), pieces  # a piece held whole is left out, not sent empty
    stdout = "".join(p.get("stdout", "") for p in pieces)
    assert stdout.startswith("GH_TOKEN=[REDACTED:github-pat:") and stdout.endswith("]\n")
    assert "".join(p.get("stderr", "") for p in pieces) == "warning: env printed"
    done = next(e for e in emitted if e["type"] == "response.shell_call_output_content.done")
    assert done["output"][0]["stdout"] == stdout
    added = next(e for e in emitted if e["type"] == "response.shell_call_command.added")
    assert added["command"].startswith("echo [REDACTED:github-pat:")


def test_later_events_move_up_past_every_inserted_delta(filt):
    """One channel flushed before its ``.done``, two more before the final
    event that closes them both: every flushed delta comes just before the
    event that closed its channel, and the numbers after count on from there."""
    a, b, c = f"first {GHP}", f"second {GHP}", f"third {GHP}"
    emitted = run(filt, numbered([
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.refusal.delta", "item_id": "m0", "output_index": 0, "content_index": 0, "delta": a},
        {"type": "response.reasoning_text.delta", "item_id": "rs1", "output_index": 1, "content_index": 0,
         "delta": b},
        {"type": "response.custom_tool_call_input.delta", "item_id": "ct2", "output_index": 2, "delta": c},
        {"type": "response.refusal.done", "item_id": "m0", "output_index": 0, "content_index": 0, "refusal": a},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": "m0", "type": "message"}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}},
    ]))
    assert [e["type"] for e in emitted] == [
        "response.created", "response.refusal.delta", "response.reasoning_text.delta",
        "response.custom_tool_call_input.delta", "response.refusal.delta", "response.refusal.done",
        "response.output_item.done", "response.reasoning_text.delta", "response.custom_tool_call_input.delta",
        "response.completed"]
    assert [e["sequence_number"] for e in emitted] == list(range(10))
    for delta_type, want in (("refusal", a), ("reasoning_text", b), ("custom_tool_call_input", c)):
        got = "".join(e["delta"] for e in emitted if e["type"] == f"response.{delta_type}.delta")
        assert got.startswith(want.split()[0] + " [REDACTED:github-pat:"), got


# -- logprobs ---------------------------------------------------------------------------------------


def logprobs(tokens: list[str]) -> list[dict]:
    """Token-by-token logprobs, each with a top alternative that is the token itself."""
    return [{"token": t, "logprob": -0.1, "bytes": list(t.encode()),
             "top_logprobs": [{"token": t, "logprob": -0.1, "bytes": list(t.encode())}]} for t in tokens]


def tokens_of(value) -> str:
    """Every token (and top alternative) anywhere in ``value``, in order, joined."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            if isinstance(v.get("token"), str):
                out.append(v["token"])
            for child in v.values():
                walk(child)
        elif isinstance(v, list):
            for child in v:
                walk(child)

    walk(value)
    return "".join(out)


SAID = f"Your token is {GHP}."
PIECES = ["Your", " token", " is", " ghp_", GHP[4:20], GHP[20:], "."]  # as a model's tokens spell it
CLEAN = "Nothing secret here."


def test_whole_response_edit_empties_that_parts_logprobs(filt):
    body = {"id": "r", "object": "response", "status": "completed", "model": "m", "output": [
        {"type": "message", "id": ITEM, "role": "assistant", "content": [
            {"type": "output_text", "text": SAID, "annotations": [], "logprobs": logprobs(PIECES)},
            {"type": "output_text", "text": CLEAN, "annotations": [], "logprobs": logprobs([CLEAN])}]}]}
    view = ADAPTERS["responses"].parse_response(orjson.dumps(body))
    Pipeline([filt]).run_response(make_turn(), view)
    out = orjson.loads(view.to_bytes())
    assert GHP not in tokens_of(out)
    edited, untouched = out["output"][0]["content"]
    assert edited["text"].startswith("Your token is [REDACTED:github-pat:") and edited["logprobs"] == []
    assert untouched == body["output"][0]["content"][1]


def test_any_slot_write_empties_logprobs_but_an_unchanged_write_does_not():
    body = {"output": [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "hello", "logprobs": logprobs(["hello"])}]}]}
    view = ADAPTERS["responses"].parse_response(orjson.dumps(body))
    (slot,) = view.text_slots()
    slot.set("hello")
    assert view.body["output"][0]["content"][0]["logprobs"] and not view.changed
    slot.set("goodbye")
    assert view.body["output"][0]["content"][0]["logprobs"] == [] and view.changed


def test_streamed_edits_empty_the_logprobs_of_what_they_changed(filt):
    part = {"type": "output_text", "text": SAID, "annotations": [], "logprobs": logprobs(PIECES)}
    clean = {"type": "output_text", "text": CLEAN, "annotations": [], "logprobs": logprobs([CLEAN])}
    item = {"id": ITEM, "type": "message", "role": "assistant", "status": "completed", "content": [part, clean]}
    ids = {"item_id": ITEM, "output_index": 0}
    emitted = run(filt, numbered([
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {"type": "response.content_part.added", **ids, "content_index": 0, "part": {**part, "text": "",
                                                                                      "logprobs": []}},
        *({"type": "response.output_text.delta", **ids, "content_index": 0, "delta": t,
           "logprobs": logprobs([t])} for t in PIECES),
        {"type": "response.output_text.done", **ids, "content_index": 0, "text": SAID,
         "logprobs": logprobs(PIECES)},
        {"type": "response.content_part.done", **ids, "content_index": 0, "part": part},
        {"type": "response.output_text.delta", **ids, "content_index": 1, "delta": CLEAN,
         "logprobs": logprobs([CLEAN])},
        {"type": "response.output_text.done", **ids, "content_index": 1, "text": CLEAN,
         "logprobs": logprobs([CLEAN])},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": [item]}},
    ]))
    assert GHP not in json.dumps(emitted)
    streamed = [e for e in emitted if e["type"] == "response.output_text.delta" and e["content_index"] == 0]
    assert GHP not in tokens_of(streamed)  # the secret is split over several deltas' tokens
    for e in emitted:
        assert GHP not in tokens_of(e), e["type"]
    # whole texts no edit changed keep their logprobs (a clean delta may still
    # lose its own: the redactor can hold back its tail, which changes it)
    assert [tokens_of(e) for e in emitted if e["type"] == "response.output_text.done"] == ["", CLEAN * 2]
    assert tokens_of(emitted[-1]["response"]["output"][0]["content"][1]) == CLEAN + CLEAN


# -- through the proxy, with the official SDK ---------------------------------------------------------

PIPELINE = """
[pipeline]
request = ["identify", "redact"]
"""


def sdk_stream(content: list[tuple[str, list[str], list | None]]) -> bytes:
    """A Responses SSE body in the shape OpenAI sends: one assistant message
    whose parts are ``(type, chunks, logprobs per chunk or None)``."""
    resp = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-x", "status": "in_progress",
            "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    field = {"refusal": "refusal", "output_text": "text"}
    parts = []
    for kind, chunks, lps in content:
        p = {"type": kind, field[kind]: "".join(chunks)}
        if kind == "output_text":
            p |= {"annotations": [], "logprobs": [x for lp in lps for x in lp]}
        parts.append(p)
    item = {"id": ITEM, "type": "message", "role": "assistant", "status": "completed", "content": parts}
    ids = {"item_id": ITEM, "output_index": 0}
    events = [{"type": "response.created", "response": resp},
              {"type": "response.output_item.added", "output_index": 0,
               "item": {**item, "status": "in_progress", "content": []}}]
    for ci, ((kind, chunks, lps), p) in enumerate(zip(content, parts)):
        lp = {"logprobs": []} if kind == "output_text" else {}
        events.append({"type": "response.content_part.added", **ids, "content_index": ci,
                       "part": {**p, field[kind]: "", **lp}})
        for n, c in enumerate(chunks):
            events.append({"type": f"response.{kind}.delta", **ids, "content_index": ci, "delta": c,
                           **({"logprobs": lps[n]} if lps else {})})
        events.append({"type": f"response.{kind}.done", **ids, "content_index": ci, field[kind]: p[field[kind]],
                       **({"logprobs": p["logprobs"]} if lps else {})})
        events.append({"type": "response.content_part.done", **ids, "content_index": ci, "part": p})
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append({"type": "response.completed", "response": {**resp, "status": "completed", "output": [item],
                                                              "usage": {"input_tokens": 3, "output_tokens": 9}}})
    return b"".join(b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
                    for name, data in numbered(events))


async def upstream(serve_app, body: bytes) -> str:
    async def handler(request):
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(body)
        return resp

    app = web.Application()
    app.router.add_post("/{tail:.*}", handler)
    return await serve_app(app)


async def test_sdk_parses_a_refusal_whose_secret_was_held_to_its_end(make_proxy, serve_app):
    refusal = f"I won't run anything with {GHP}"
    url = await upstream(serve_app, sdk_stream([("refusal", [refusal[:20], refusal[20:-6], refusal[-6:]], None)]))
    proxy = await make_proxy(PIPELINE, upstream=url)
    async with proxy.openai().responses.stream(model="gpt-x", input="deploy it") as s:
        events = [ev async for ev in s]
        final = await s.get_final_response()
    streamed = "".join(e.delta for e in events if e.type == "response.refusal.delta")
    assert GHP not in streamed and streamed.startswith("I won't run anything with [REDACTED:github-pat:")
    assert final.output[0].content[0].refusal == streamed
    assert [e.sequence_number for e in events] == list(range(len(events)))


async def test_sdk_gets_no_logprobs_of_a_redacted_text(make_proxy, serve_app):
    lps = [logprobs([p]) for p in PIECES]
    url = await upstream(serve_app, sdk_stream([("output_text", PIECES, lps)]))
    proxy = await make_proxy(PIPELINE, upstream=url)
    async with proxy.openai().responses.stream(model="gpt-x", input="my token?") as s:
        events = [ev async for ev in s]
        final = await s.get_final_response()
    text = final.output[0].content[0]
    assert text.text.startswith("Your token is [REDACTED:github-pat:") and text.logprobs == []
    assert GHP not in tokens_of([e.model_dump(warnings=False) for e in events])
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == text.text


# -- sequence numbers of a stream the filters reshaped ----------------------------------------------

CALL_ARGS = [{"command": "ls -la /srv/app && cat README.md"},  # clean: held back all the same, scanned whole
             {"command": f"gh auth login --with-token {GHP}", "cwd": "/srv"}]  # a secret in the arguments


def reshaped_reply() -> Reply:
    """Text, two function calls whose arguments arrive in many deltas (redact
    drops each of them and sends the whole, scanned, at ``.done``), then text
    ending in a secret (its tail is held and flushed as an added delta)."""
    return Reply.of(Text("Let me look."), ToolCall("sh", CALL_ARGS[0]), ToolCall("sh", CALL_ARGS[1]),
                    Text(f"Your token: {GHP}"), delta_chars=5)


def assert_reshaped(events: list[dict]) -> None:
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert GHP not in json.dumps(events)
    args = [e for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert len(args) == 2  # each call's arguments in one delta: the provider's many were merged
    assert json.loads(args[0]["delta"]) == CALL_ARGS[0]
    assert "[REDACTED:github-pat:" in args[1]["delta"]


async def test_sdk_sees_consecutive_sequence_numbers_through_held_back_arguments(make_proxy, fake):
    proxy = await make_proxy(PIPELINE)
    fake.script(reshaped_reply())
    tools = [{"type": "function", "name": "sh", "parameters": {"type": "object"}}]
    async with proxy.openai().responses.stream(model="gpt-x", input="look around", tools=tools) as s:
        events = [ev async for ev in s if hasattr(ev, "sequence_number")]  # the raw events, not the helper's own
        final = await s.get_final_response()
    assert_reshaped([e.model_dump(warnings=False) for e in events])
    calls = [o for o in final.output if o.type == "function_call"]
    assert json.loads(calls[0].arguments) == CALL_ARGS[0]
    assert final.output[-1].content[0].text.startswith("Your token: [REDACTED:github-pat:")


async def test_websocket_events_count_up_one_by_one_too(make_proxy, fake):
    proxy = await make_proxy(PIPELINE)
    fake.script(reshaped_reply())
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(proxy.url.replace("http://", "ws://") + "/v1/responses",
                                   headers={"authorization": "Bearer sk-ws"}) as ws:
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x", "input": "look around"}))
            events = []
            async for msg in ws:
                events.append(json.loads(msg.data))
                if events[-1]["type"] in ("response.completed", "response.failed", "error"):
                    break
    assert events[-1]["type"] == "response.completed"
    assert_reshaped(events)
