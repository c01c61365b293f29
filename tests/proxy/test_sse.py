"""The SSE decoder keeps every byte and finds every event at every split."""
import asyncio
import threading

import aiohttp
import orjson
from aiohttp import web
from hypothesis import given, settings, strategies as st

from ctxproxy.proxy.sse import SSEDecoder

STREAM = (b'event: message_start\ndata: {"type":"message_start"}\n\n'
          b': keep-alive comment\n\n'
          b'event: b\r\ndata: 2\r\ndata: 3\r\n\r\n'
          b'data: {"x": "caf\xc3\xa9"}\r\rdata: [DONE]\n\n')
EXPECTED = [("message_start", b'{"type":"message_start"}'), (None, None), ("b", b"2\n3"),
            (None, '{"x": "café"}'.encode()), (None, b"[DONE]")]


def decode_all(chunks):
    d = SSEDecoder()
    out = []
    for c in chunks:
        out += d.decode(c)
    rest = d.flush()
    if rest is not None:
        out.append(rest)
    return out


def test_every_two_way_split_keeps_bytes_and_events():
    for i in range(len(STREAM) + 1):
        events = decode_all([STREAM[:i], STREAM[i:]])
        assert b"".join(e.raw for e in events) == STREAM
        assert [(e.name, e.data) for e in events] == EXPECTED


def test_byte_by_byte():
    events = decode_all([STREAM[i:i + 1] for i in range(len(STREAM))])
    assert [(e.name, e.data) for e in events] == EXPECTED


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_random_splits(cuts):
    cuts = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *cuts], [*cuts, len(STREAM)])]
    events = decode_all(chunks)
    assert b"".join(e.raw for e in events) == STREAM
    assert [(e.name, e.data) for e in events] == EXPECTED


def test_unterminated_tail_is_flushed_verbatim():
    events = decode_all([b"data: 1\n\ndata: partial"])
    assert [e.raw for e in events] == [b"data: 1\n\n", b"data: partial"]
    assert events[1].data == b"partial"


LF_STREAM = (b'event: message_start\ndata: {"type":"message_start"}\n\n'
             b'\n'  # a stray blank line where an event would begin: an empty event of its own
             b': ping\n\ndata: 1\ndata: 2\n\n')


def test_lf_only_stream_every_split():
    expected = [("message_start", b'{"type":"message_start"}'), (None, None), (None, None), (None, b"1\n2")]
    for i in range(len(LF_STREAM) + 1):
        for j in range(i, len(LF_STREAM) + 1):
            events = decode_all([LF_STREAM[:i], LF_STREAM[i:j], LF_STREAM[j:]])
            assert [e.raw for e in events] == [b'event: message_start\ndata: {"type":"message_start"}\n\n',
                                              b"\n", b": ping\n\n", b"data: 1\ndata: 2\n\n"]
            assert [(e.name, e.data) for e in events] == expected


def reference_events(stream: bytes) -> list[bytes]:
    """Events cut at every empty line, any of the three line endings."""
    import re
    out, start = [], 0
    for m in re.finditer(rb"([^\r\n]*)(\r\n|\r|\n)", stream):
        if m.start() < start:
            continue
        if m.group(1) == b"" and m.start() >= start:
            line_start = m.start()
            prev_end = stream[start:line_start]
            if line_start == start or prev_end.endswith((b"\n", b"\r")):
                out.append(stream[start:m.end()])
                start = m.end()
    if start < len(stream):
        out.append(stream[start:])
    return out


PIECES = [b"data: x", b"event: e", b":c", b"\n", b"\n", b"\r", b"\r\n", b"data: {}"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_matches_a_reference_on_any_line_endings(pieces, cuts):
    stream = b"".join(pieces)
    cuts = sorted({c for c in cuts if c <= len(stream)})
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    events = decode_all(chunks)
    assert b"".join(e.raw for e in events) == stream
    ref = reference_events(stream)
    assert dispatched(events) == dispatched(decode_all([r]) for r in ref)
    if not any(stream[c - 1:c + 1] == b"\r\n" for c in cuts if c):
        assert [e.raw for e in events] == ref
    # else an event whose blank line is a "\r" ending a chunk was returned at once;
    # the "\n" after the cut opens the next event's raw bytes


def dispatched(events) -> list:
    """(name, data) of the events a client would dispatch (data present)."""
    flat = []
    for e in events:
        flat += e if isinstance(e, list) else [e]
    return [(e.name, e.data) for e in flat if e.data is not None]


def test_stream_ends_are_recognised_in_every_spelling_and_only_there():
    """The adapter tells a stream's end from the event bytes before reading any field
    (an event without the end's name in it is not an end): every form SSE allows
    is still an end, and an event that merely mentions one is not."""
    from ctxproxy.proxy.adapters import ADAPTERS

    def is_terminal(api, ev):
        return ADAPTERS[api].is_terminal(ev)

    def events(raw: bytes):
        d = SSEDecoder()
        return d.decode(raw) + ([d.flush()] if d._buf else [])

    ends = {
        "chat": [b"data: [DONE]\n\n", b"data:[DONE]\n\n", b": keep-alive\ndata: [DONE]\r\n\r\n",
                 b'data: {"error": {"message": "overloaded"}}\n\n'],
        "anthropic": [b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
                      b'event:message_stop\r\ndata:{}\r\n\r\n', b'event: error\ndata: {"type":"error"}\n\n'],
        "responses": [b'event: response.completed\ndata: {}\n\n', b'event:response.failed\ndata: {}\n\n',
                      b'event: response.incomplete\ndata: {}\n\n', b'event: error\ndata: {}\n\n'],
    }
    not_ends = {
        "chat": [b'data: {"choices":[{"delta":{"content":"[DONE] is not the end, nor is error"}}]}\n\n',
                 b'data: {"id": "x", "error": null}\n\n', b": [DONE]\n\n"],
        "anthropic": [b'event: content_block_delta\ndata: {"delta":{"text":"message_stop error"}}\n\n',
                      b'event: ping\ndata: {"type": "ping"}\n\n'],
        "responses": [b'event: response.output_text.delta\ndata: {"delta":"response.completed error"}\n\n',
                      b'event: response.created\ndata: {"response": {"error": null}}\n\n'],
    }
    for api, raws in ends.items():
        for raw in raws:
            (ev,) = events(raw)
            assert is_terminal(api, ev), (api, raw)
    for api, raws in not_ends.items():
        for raw in raws:
            (ev,) = events(raw)
            assert not is_terminal(api, ev), (api, raw)


def test_a_byte_order_mark_stays_in_the_bytes_and_out_of_the_fields():
    (ev,) = SSEDecoder().decode(b"\xef\xbb\xbfevent: a\ndata: 1\ndata: 2\n\n")
    assert ev.raw == b"\xef\xbb\xbfevent: a\ndata: 1\ndata: 2\n\n"
    assert (ev.data, ev.name) == (b"1\n2", "a")  # either field first: both are read


# SSE decoding through the proxy: a BOM opening the stream, events ending on a
# lone CR at a chunk's end, and CR-only buffers scanned in linear time.
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def chunk(delta: dict, finish=None) -> bytes:
    return orjson.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def upstream_app(parts: list, gate: asyncio.Event | None = None) -> web.Application:
    """A provider that streams ``parts``; ``None`` in ``parts`` waits for ``gate``."""
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for p in parts:
            if p is None:
                await asyncio.wait_for(gate.wait(), 10)
            else:
                await resp.write(p)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    return app


async def test_bom_opening_the_stream_does_not_hide_the_first_event_from_the_filters(make_proxy, serve_app):
    first = b"\xef\xbb\xbfdata: " + chunk({"role": "assistant", "content": f"the token is {GHP} ok"}) + b"\n\n"
    rest = b"data: " + chunk({}, "stop") + b"\n\ndata: [DONE]\n\n"
    url = await serve_app(upstream_app([first, rest]))
    proxy = await make_proxy(upstream=url)
    client = proxy.openai()
    stream = await client.chat.completions.create(model="m", stream=True,
                                                  messages=[{"role": "user", "content": "hi"}])
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert GHP not in text and "REDACTED" in text


async def test_event_ending_on_a_lone_cr_reaches_the_client_before_the_next_chunk(make_proxy, serve_app):
    gate = asyncio.Event()
    first = b"data: " + chunk({"role": "assistant"}) + b"\r\r"  # no text: nothing for redaction to hold back
    rest = b"data: " + chunk({}, "stop") + b"\r\rdata: [DONE]\r\r"
    url = await serve_app(upstream_app([first, None, rest], gate))
    proxy = await make_proxy(upstream=url)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as s:
        async with s.post(proxy.url + "/v1/chat/completions",
                          json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as r:
            got = b""
            while b"assistant" not in got:  # the upstream holds the rest until the client has this
                got += await asyncio.wait_for(r.content.readany(), 20)
            gate.set()
            got += await r.content.read()
    assert got.endswith(b"data: [DONE]\r\r")


def test_bom_is_kept_in_raw_and_skipped_in_fields():
    for cut in range(0, 8):
        stream = b"\xef\xbb\xbfevent: a\ndata: 1\n\ndata: 2\n\n"
        d = SSEDecoder()
        events = d.decode(stream[:cut]) + d.decode(stream[cut:])
        assert [(e.name, e.data) for e in events] == [("a", b"1"), (None, b"2")]
        assert b"".join(e.raw for e in events) == stream
    d = SSEDecoder()
    assert [(e.name, e.data) for e in d.decode(b"\xef\xbb\xbfdata: x\r\n\r\n")] == [(None, b"x")]
    d = SSEDecoder()  # only at the start of the stream
    assert d.decode(b"data: 1\n\n\xef\xbb\xbfdata: 2\n\n")[1].data is None


def test_lone_cr_blank_line_at_chunk_end_completes_the_event():
    d = SSEDecoder()
    assert [(e.name, e.data) for e in d.decode(b"event: e\rdata: x\r\r")] == [("e", b"x")]
    rest = d.decode(b"\ndata: y\r\n\r\n")  # the "\n" finishes the "\r" above; no extra event data
    assert [e.data for e in rest] == [b"y"] and rest[0].raw == b"\ndata: y\r\n\r\n"
    d = SSEDecoder()
    assert d.decode(b"data: x\r") == []  # a data line's "\r" may still be half of "\r\n"
    assert [(e.data, e.raw) for e in d.decode(b"\n\r\n")] == [(b"x", b"data: x\r\n\r\n")]


def test_cr_only_buffer_is_scanned_in_linear_time():
    """A million CR-terminated lines in one buffer (each line once searched
    for both terminators to the buffer's end made this take minutes)."""
    stream = b"data: 0123456789\r" * 1_000_000 + b"\n\n"
    out = []
    t = threading.Thread(target=lambda: out.append(SSEDecoder().decode(stream)), daemon=True)
    t.start()
    t.join(30)
    assert out and len(out[0]) == 1 and out[0][0].data.count(b"\n") == 999_999
