"""Review: SSE decoding — a BOM opening the stream, events ending on a lone
CR at a chunk's end, and CR-only buffers scanned in linear time."""
import asyncio
import threading

import aiohttp
import orjson
from aiohttp import web

from ctxproxy.proxy.sse import SSEDecoder

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
                got += await asyncio.wait_for(r.content.readany(), 5)
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
