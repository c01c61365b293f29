"""A provider's stream with events no real provider sends (an index that is
not an integer, a response id that is not a string): the answer goes on
whole, redacted, with every filter running, instead of failing the stream."""
import json
import logging

import pytest

from apicalls import AUTH, PATHS, config, request_body, streamed_text
from enginedriver import EngineDriver

from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.proxy.sse import encode_event

SECRET = "ghp_Zq8vR2mL5tX9wK3pN7bY4cF6hJ1dG0sA8eQu"
SSE = {"content-type": "text/event-stream"}


def _sse(events: list[tuple[str | None, dict | str]]) -> bytes:
    return b"".join(encode_event(name, (data if isinstance(data, str) else json.dumps(data)).encode())
                    for name, data in events)


def _chat(odd_index, odd_id) -> bytes:
    def chunk(delta, index=0, finish=None, rid="chatcmpl-1"):
        return None, {"id": rid, "object": "chat.completion.chunk", "created": 1, "model": "m",
                      "choices": [{"index": index, "delta": delta, "finish_reason": finish}]}
    return _sse([chunk({"role": "assistant", "content": ""}, rid=odd_id),
                 chunk({"content": "the key " + SECRET[:15]}), chunk({"content": SECRET[15:] + " is set"}),
                 chunk({"content": "and gh"}, index=odd_index),  # held (a token may begin) until the end
                 chunk({}, finish="stop"), (None, "[DONE]")])


def _anthropic(odd_index, odd_id) -> bytes:
    def delta(text, index=0):
        return "content_block_delta", {"type": "content_block_delta", "index": index,
                                       "delta": {"type": "text_delta", "text": text}}
    return _sse([
        ("message_start", {"type": "message_start", "message": {
            "id": odd_id, "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        delta("the key " + SECRET[:15]), delta(SECRET[15:] + " is set"),
        delta("and gh", odd_index),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 9}}),
        ("message_stop", {"type": "message_stop"})])


@pytest.mark.parametrize("odd_index, odd_id", [({"n": 1}, {"id": "x"}), (False, ["x"]), ("1", 7), (None, None)],
                         ids=["object", "false", "string", "null"])
@pytest.mark.parametrize("api", ["chat", "anthropic"])
async def test_an_odd_event_in_a_stream_leaves_it_whole_and_redacted(tmp_path, caplog, api, odd_index, odd_id):
    stream = (_chat if api == "chat" else _anthropic)(odd_index, odd_id)

    async def provider(forward):
        return CannedUpstream(200, SSE, [stream])

    caplog.set_level(logging.WARNING, logger="ctxproxy")
    async with EngineDriver(config(tmp_path), provider=provider) as drive:
        got = await drive.call("POST", PATHS[api], {**AUTH[api], "x-ctx-session": "odd"},
                               request_body(api, "hello", stream=True))
    assert got.status == 200
    text = streamed_text(api, got.body)
    assert SECRET not in text and "the key [REDACTED:github-pat:" in text and " is set" in text
    assert "and gh" in text  # the odd event's held text came out at the end
    # the first id that is a string: chat repeats it on every chunk, Anthropic sends it once
    assert got.turn.degraded == [] and got.turn.response_id == ("chatcmpl-1" if api == "chat" else None)
    assert not [r for r in caplog.records if "failed" in r.getMessage()], caplog.text
