"""A read's text deltas after the first are recognised by their bytes
(``proxy/text_runs.py``): only an event that is the first one's bytes around
another JSON string joins the run that way; anything else is parsed."""
from __future__ import annotations

import json

from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.sse import RawEvent, SSEDecoder
from ctxproxy.proxy.text_runs import frame


def read(api: str):
    def text_of(raw: bytes) -> str | None:
        r = RawEvent(raw)
        run = ADAPTERS[api].stream().event(r.name, raw, r.data).text_run()
        return None if run is None else run[1][run[2]]
    return text_of


def chat_event(text: str, created: int = 1, extra: str = "") -> bytes:
    return (b'data: {"id":"c1","object":"chat.completion.chunk","created":%d,"model":"m"%s,'
            b'"choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}\n\n'
            % (created, extra.encode(), json.dumps(text).encode()))


def anthropic_event(text: str) -> bytes:
    return (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":%s}}\n\n' % json.dumps(text).encode())


def test_a_delta_of_the_same_shape_is_read_from_its_string():
    for api, make, key in (("chat", chat_event, "content"), ("anthropic", anthropic_event, "text")):
        f = frame(make("Hello"), key, "Hello", read(api))
        assert f is not None
        for text in (" world", 'a "quoted" \\ line\n', "é—ü 🚀", ""):
            assert f.text(make(text)) == text


def test_anything_but_one_string_in_the_frame_is_no_run_by_bytes():
    f = frame(chat_event("a"), "content", "a", read("chat"))
    smuggled = chat_event("a").replace(b'"content":"a"', b'"content":"a","role":"x"')
    assert f.text(smuggled) is None  # a quote inside: not one string
    assert f.text(chat_event("a", created=2)) is None  # another envelope
    assert f.text(chat_event("a", extra=',"system_fingerprint":"fp"')) is None
    assert f.text(chat_event("a").replace(b"\n\n", b"\r\n\r\n")) is None
    assert f.text(chat_event("a").replace(b'"content":"a"', b'"content":"\\x"')) is None  # not JSON


def test_no_frame_unless_the_string_found_is_the_field_itself():
    # the key twice (an unknown envelope field holds one): not told apart by bytes
    twice = chat_event("hi", extra=',"x":{"content":"hi"}')
    assert frame(twice, "content", "hi", read("chat")) is None
    # the only '"content":"' is not the delta's (written with a space there)
    spaced = (b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","x":{"content":"hi"},'
              b'"choices":[{"index":0,"delta":{"content": "hi"},"finish_reason":null}]}\n\n')
    assert read("chat")(spaced) == "hi" and frame(spaced, "content", "hi", read("chat")) is None


def test_a_read_of_deltas_joined_by_bytes_is_the_same_stream():
    """Through the relay: the texts of one read's deltas, joined, and nothing else changed."""
    from ctxproxy.proxy.engine import _EventRelay

    class Nothing:
        has_event_hooks = True

        def run_event(self, turn, ev):
            return [ev]

    class T:
        response_id = "c1"

    raw = b"".join(chat_event(t) for t in ("He", "llo", ", w", "orld")) + chat_event("!", created=2)
    relay = _EventRelay(T(), Nothing(), ADAPTERS["chat"])
    out = relay.feed(SSEDecoder().decode(raw))
    got = [json.loads(e.data) for e in SSEDecoder().decode(out)]
    assert [g["choices"][0]["delta"]["content"] for g in got] == ["Hello, world", "!"]
    assert [g["created"] for g in got] == [1, 2]
    # the next read: the frame kept from the last run serves a run of the same shape
    raw = chat_event("Bye", created=2) + chat_event(' "now"', created=2) + chat_event("?", created=3)
    got = [json.loads(e.data) for e in SSEDecoder().decode(relay.feed(SSEDecoder().decode(raw)))]
    assert [(g["created"], g["choices"][0]["delta"]["content"]) for g in got] == [(2, 'Bye "now"'), (3, "?")]
