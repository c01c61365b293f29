"""Text deltas of one stream that arrive in one read go on as one event
(``[server] coalesce_deltas``, on by default): the same text at the same
moment, the filters' per-event work done once per read. Driven through the
turn engine with the provider's reads laid out exactly (no sockets, so no
timing decides what a read holds)."""
from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from apicalls import AUTH, PATHS, config, request_body
from enginedriver import EngineDriver

from ctxproxy.proxy.adapters import ADAPTERS, api_for_path
from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.proxy.scripted_provider import Reply, render_answer
from ctxproxy.proxy.sse import SSEDecoder

PROSE = "Here is the thing, here are the steps: run make install, then move it in your main unit."
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
OFF = "[server]\ncoalesce_deltas = false\n"


def provider(reply: Reply, one_read: bool):
    """The scripted provider's real stream, each event its own read, or all of them in one."""
    async def send(forward):
        api, _ = api_for_path(urlsplit(forward.url).path)
        status, headers, chunks = render_answer(api, reply, forward.body or b"")
        return CannedUpstream(status, headers, [b"".join(chunks)] if one_read else chunks)
    return send


def events(body: bytes) -> list[dict]:
    return [json.loads(e.data) for e in SSEDecoder().decode(body + b"\n\n") if e.data and e.data != b"[DONE]"]


def text_deltas(api: str, body: bytes) -> list[str]:
    out = []
    for d in events(body):
        if api == "anthropic" and d.get("type") == "content_block_delta" and d["delta"]["type"] == "text_delta":
            out.append(d["delta"]["text"])
        elif api == "chat" and d.get("choices") and isinstance(d["choices"][0]["delta"].get("content"), str) \
                and "role" not in d["choices"][0]["delta"]:
            out.append(d["choices"][0]["delta"]["content"])
        elif api == "responses" and d.get("type") == "response.output_text.delta":
            out.append(d["delta"])
    return out


async def stream(tmp_path, api: str, reply: Reply, one_read: bool, toml: str = "") -> bytes:
    async with EngineDriver(config(tmp_path, toml), provider=provider(reply, one_read)) as drive:
        got = await drive.call("POST", PATHS[api], AUTH[api], request_body(api, "how do I deploy?", True))
        assert got.status == 200, got.body
        return got.body


APIS = ["anthropic", "chat", "responses"]


@pytest.mark.parametrize("api", APIS)
async def test_the_deltas_of_one_read_go_on_as_one_event(tmp_path, api):
    body = await stream(tmp_path, api, Reply.text(PROSE, delta_chars=7), one_read=True)
    assert text_deltas(api, body) == [PROSE]
    if api == "responses":  # the numbers still count up by one from 0
        seqs = [d["sequence_number"] for d in events(body)]
        assert seqs == list(range(len(seqs)))


@pytest.mark.parametrize("api", APIS)
async def test_deltas_that_came_in_their_own_reads_keep_their_events(tmp_path, api):
    body = await stream(tmp_path, api, Reply.text(PROSE, delta_chars=7), one_read=False)
    assert text_deltas(api, body) == [PROSE[i:i + 7] for i in range(0, len(PROSE), 7)]


@pytest.mark.parametrize("api", APIS)
async def test_switched_off_every_delta_keeps_its_event(tmp_path, api):
    body = await stream(tmp_path, api, Reply.text(PROSE, delta_chars=7), one_read=True, toml=OFF)
    assert text_deltas(api, body) == [PROSE[i:i + 7] for i in range(0, len(PROSE), 7)]


@pytest.mark.parametrize("api", APIS)
async def test_a_secret_split_over_the_deltas_of_one_read_is_redacted(tmp_path, api):
    body = await stream(tmp_path, api, Reply.text(f"Deploy with {GHP} now.", delta_chars=3), one_read=True)
    text = "".join(text_deltas(api, body))
    assert GHP.encode() not in body and GHP[4:20] not in text
    assert text.startswith("Deploy with [REDACTED:github-pat:") and text.endswith(" now.")


def run(api: str, data: dict, name: str | None = None):
    ev = ADAPTERS[api].stream().event(name, b"", json.dumps(data).encode())
    return ev.text_run()


def test_only_an_event_of_one_text_delta_and_nothing_else_may_join_a_run():
    text = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}
    assert run("anthropic", text, "content_block_delta")[0] == 0
    assert run("anthropic", {**text, "index": 1}, "content_block_delta")[0] == 1  # another block: another run
    assert run("anthropic", {**text, "delta": {"type": "input_json_delta", "partial_json": "{"}},
               "content_block_delta") is None
    assert run("anthropic", {**text, "extra": 1}, "content_block_delta") is None  # unknown fields stay as they came
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}
    assert run("chat", chunk) is not None
    assert run("chat", {**chunk, "model": "n"})[0] != run("chat", chunk)[0]  # another envelope: no run
    for choice in ({"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"},
                   {"index": 0, "delta": {"content": "a"}, "logprobs": {"content": []}},
                   {"index": 0, "delta": {"content": "a", "role": "assistant"}}):
        assert run("chat", {**chunk, "choices": [choice]}) is None
    assert run("chat", {**chunk, "usage": {"total_tokens": 1}}) is None
    delta = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0,
             "delta": "a", "sequence_number": 4}
    assert run("responses", delta) is not None
    assert run("responses", {**delta, "obfuscation": "xyz"}) is None
    assert run("responses", {**delta, "type": "response.function_call_arguments.delta"}) is None
