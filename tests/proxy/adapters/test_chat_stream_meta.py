"""Which Chat Completions chunks are read for usage, ids and finish reasons:
a provider asked for usage (``stream_options.include_usage``) sends
``"usage":null`` in every chunk, and such a chunk carries no meta; a chunk
with usage, or with one choice finishing beside another's null, does."""
from __future__ import annotations

import orjson

from ctxproxy.proxy.adapters.openai_chat import ChatStream

ENVELOPE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}


def _event(chunk: dict):
    data = orjson.dumps(chunk)
    return ChatStream().event(None, b"data: " + data + b"\n\n", data)


def _choice(i: int, delta: dict, finish: str | None = None) -> dict:
    return {"index": i, "delta": delta, "logprobs": None, "finish_reason": finish}


def test_a_text_chunk_with_null_usage_carries_no_meta():
    ev = _event({**ENVELOPE, "choices": [_choice(0, {"content": "hello"})], "usage": None})
    assert not ev.may_carry_meta(id_known=True)
    assert ev.usage() is None and ev.finish_reasons() == []


def test_the_first_chunk_is_read_for_the_id():
    ev = _event({**ENVELOPE, "choices": [_choice(0, {"content": "hello"})], "usage": None})
    assert ev.may_carry_meta(id_known=False)
    assert ev.response_id() == "chatcmpl-1"


def test_the_usage_chunk_carries_meta():
    ev = _event({**ENVELOPE, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2,
                                                        "total_tokens": 7}})
    assert ev.may_carry_meta(id_known=True)
    assert ev.usage().input_tokens == 5


def test_one_choice_finishing_beside_an_open_one_carries_meta():
    ev = _event({**ENVELOPE, "choices": [_choice(0, {"content": "a"}), _choice(1, {}, "stop")], "usage": None})
    assert ev.may_carry_meta(id_known=True)
    assert ev.finish_reasons() == ["stop"]


def test_spaced_json_is_read_as_carrying_meta():
    data = b'{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"a"},"finish_reason": null}],"usage": null}'
    assert ChatStream().event(None, b"data: " + data + b"\n\n", data).may_carry_meta(id_known=True)


def test_text_that_says_usage_is_read_conservatively():
    ev = _event({**ENVELOPE, "choices": [_choice(0, {"content": "usage"})], "usage": None})
    assert ev.may_carry_meta(id_known=True)
    assert ev.usage() is None
