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
