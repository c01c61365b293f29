"""The SSE decoder keeps every byte and finds every event at every split."""
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
