"""Lossless forwarding: real-client requests and streamed answers, byte for byte."""
import asyncio
import json

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from realclients import body_bytes, load, names

from ctxproxy.proxy.engine import HOP_BY_HOP

SKIP_HEADERS = {"host", "content-length", "accept-encoding"}


@pytest.mark.parametrize("name", [n for n in names() if load(n).get("body")])
async def test_recorded_request_reaches_provider_byte_identical(proxy, fake, name):
    rec = load(name)
    raw = body_bytes(rec)
    headers = {k: v for k, v in rec["headers"].items() if k not in SKIP_HEADERS}
    url = proxy.url + rec["path"] + (f"?{rec['query']}" if rec.get("query") else "")
    async with aiohttp.ClientSession(auto_decompress=False) as s:
        async with s.request(rec["method"], url, data=raw, headers=headers) as resp:
            body = await resp.read()
            assert resp.status == 200, body[:300]
            assert resp.headers["X-Ctx-Turn-Id"]
    got = fake.last
    assert got.body == raw
    assert got.query == (rec.get("query") or "")
    for k, v in headers.items():
        if k.lower() in HOP_BY_HOP:  # a recording's "connection: keep-alive" stays on the client's hop
            assert k not in got.headers, k
        else:
            assert got.headers.get(k) == v, k


async def test_unknown_fields_and_odd_json_survive_byte_for_byte(proxy, fake):
    raw = ('{"model":"claude-opus-4-8" ,"max_tokens":10,"x_future_field":{"nested":[1,2.50,"\\u00e9"]},'
           '"system":[{"type":"text","text":"rules","cache_control":{"type":"ephemeral","ttl":"1h"}}],'
           '"messages":[{"role":"user","content":[{"type":"text","text":"hi \\ud83d\\ude00"}]},'
           '{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"EqQBCkgIARAB=="},'
           '{"type":"text","text":"ok"}]},{"role":"user","content":"go"}]}').encode()
    async with aiohttp.ClientSession() as s:
        async with s.post(proxy.url + "/v1/messages", data=raw,
                          headers={"content-type": "application/json", "anthropic-version": "2023-06-01"}) as r:
            assert r.status == 200
    assert fake.last.body == raw


async def test_head_root_probe_is_answered(proxy):
    async with aiohttp.ClientSession() as s:
        async with s.head(proxy.url + "/") as r:
            assert r.status == 200


@pytest.mark.parametrize("path", ["/healthz", "/ctx/healthz"])
async def test_the_health_endpoint_is_answered_here_under_both_paths(proxy, fake, path):
    async with aiohttp.ClientSession() as s:
        async with s.get(proxy.url + path) as r:
            assert r.status == 200 and (await r.json())["status"] == "ok"
    assert fake.requests == []  # not the provider's /healthz


async def test_any_other_path_passes_through_to_the_matching_provider(proxy, fake):
    async with aiohttp.ClientSession() as s:
        async with s.get(proxy.url + "/api/v1/models", headers={"authorization": "Bearer k"}) as r:
            assert r.status == 404  # the provider's answer, relayed
            assert fake.last.path == "/api/v1/models"
            assert fake.last.headers["authorization"] == "Bearer k"
        async with s.get(proxy.url + "/v1/models?limit=2", headers={"anthropic-version": "2023-06-01"}) as r:
            assert r.status == 200
            assert fake.last.query == "limit=2"


async def test_hop_by_hop_and_ctx_headers_are_not_forwarded(proxy, fake):
    async with aiohttp.ClientSession() as s:
        async with s.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": []},
                          headers={"Connection": "keep-alive, X-Secret-Hop", "X-Secret-Hop": "1",
                                   "Proxy-Authorization": "Basic x",
                                   "X-Ctx-Session": "s1", "X-Custom": "kept", "TE": "trailers"}) as r:
            assert r.status == 200
    h = fake.last.headers
    assert "proxy-authorization" not in h and "x-ctx-session" not in h and "te" not in h
    assert "x-secret-hop" not in h  # named by Connection: hop-by-hop too
    assert h["x-custom"] == "kept"


STREAM = (b'event: message_start\r\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
          b'"role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":3,'
          b'"output_tokens":1},"x_unknown":true}}\r\n\r\n'
          b': provider comment\n\n'
          b'event: ping\ndata: {"type": "ping"}\n\n'
          b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
          b'"content_block":{"type":"text","text":""}}\n\n'
          b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
          b'"delta":{"type":"text_delta","text":"caf\xc3\xa9 \\u00e9"}}\n\n'
          b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
          b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
          b'"usage":{"output_tokens":2}}\n\n'
          b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


@pytest.fixture
async def raw_upstream(serve_handler):
    """An upstream that answers every POST with STREAM, written in odd-sized pieces."""

    async def handler(request):
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream", "x-provider": "raw"})
        await resp.prepare(request)
        for i in range(0, len(STREAM), 37):
            await resp.write(STREAM[i:i + 37])
            await asyncio.sleep(0)
        return resp

    return await serve_handler(handler, method="POST")


async def test_streamed_response_reaches_client_byte_identical(make_proxy, raw_upstream):
    proxy = await make_proxy(upstream=raw_upstream)
    async with aiohttp.ClientSession() as s:
        async with s.post(proxy.url + "/v1/messages", json={"model": "m", "max_tokens": 5, "stream": True,
                                                            "messages": [{"role": "user", "content": "x"}]}) as r:
            got = await r.read()
            assert r.headers["x-provider"] == "raw"
    assert got == STREAM


@pytest.fixture
async def sized_upstream(serve_handler):
    """An upstream that answers with a fixed JSON body of known length (or, for
    /big, a body without a length, written in pieces)."""
    body = b'{"id":"x","object":"chat.completion","choices":[],"x_unknown":[1,2.50]}'

    async def handler(request):
        await request.read()
        if request.path.endswith("/big"):
            resp = web.StreamResponse(headers={"content-type": "application/octet-stream"})
            await resp.prepare(request)
            for _ in range(3):
                await resp.write(b"x" * 1000)
            return resp
        return web.Response(body=body, content_type="application/json", headers={"x-provider": "sized"})

    return await serve_handler(handler), body


async def test_sized_answers_keep_their_length_and_unsized_ones_stream(make_proxy, sized_upstream):
    url, body = sized_upstream
    proxy = await make_proxy(upstream=url)
    async with aiohttp.ClientSession() as s:
        for path in ("/v1/chat/completions", "/v1/files"):  # a model call (pipeline) and a passthrough
            async with s.post(proxy.url + path, json={"model": "m", "messages": []}) as r:
                assert await r.read() == body
                assert r.headers["Content-Length"] == str(len(body)) and "Transfer-Encoding" not in r.headers
                assert r.headers["x-provider"] == "sized" and r.headers["X-Ctx-Turn-Id"]
        async with s.post(proxy.url + "/v1/big", data=b"{}") as r:
            assert await r.read() == b"x" * 3000
            assert r.headers.get("Transfer-Encoding") == "chunked"
        async with s.head(proxy.url + "/v1/files") as r:  # a HEAD answer has a length but no body
            assert r.status == 200 and r.headers["Content-Length"] == str(len(body))


@pytest.fixture
async def gated_upstream():
    """A raw HTTP/1.1 upstream that sends its headers and ``first`` in one
    write, then waits for ``gate`` before the rest of STREAM: what the client
    sees before the gate opens came with the provider's headers."""
    state = {"first": b"", "gate": asyncio.Event()}

    def chunk(data: bytes) -> bytes:
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        first = state["first"]
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                     b"x-provider: gated\r\n\r\n" + (chunk(first) if first else b""))
        await writer.drain()
        await asyncio.wait_for(state["gate"].wait(), 10)
        writer.write(chunk(STREAM[len(first):]) + b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    state["url"] = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    yield state
    server.close()
    await server.wait_closed()


FIRST_EVENT_END = STREAM.index(b"\r\n\r\n") + 4


@pytest.mark.parametrize("first_bytes, complete_bytes", [(FIRST_EVENT_END + 9, FIRST_EVENT_END), (10, 0), (0, 0)],
                         ids=["whole-first-event", "part-of-an-event", "headers-alone"])
async def test_headers_are_not_held_for_an_event_that_has_not_come(make_proxy, gated_upstream, first_bytes,
                                                                    complete_bytes):
    """The proxy sends its headers together with the provider's first bytes,
    but never waits for more: headers and any complete event reach the client
    before the provider sends anything else."""
    first = STREAM[:first_bytes]
    gated_upstream["first"] = first
    proxy = await make_proxy(upstream=gated_upstream["url"])
    body = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]}
    async with aiohttp.ClientSession() as s:
        async with asyncio.timeout(10):
            async with s.post(proxy.url + "/v1/messages", json=body) as r:  # headers, before the gate opens
                assert r.status == 200 and r.headers["x-provider"] == "gated"
                got = b""
                complete = first[:complete_bytes]
                while len(got) < len(complete):
                    got += await r.content.readany()
                assert got == complete
                gated_upstream["gate"].set()
                got += await r.content.read()
    assert got == STREAM


async def test_a_streams_headers_go_out_with_its_first_event(make_proxy, gated_upstream, monkeypatch):
    """When the provider's headers come alone, the proxy's wait for the first event and
    then sends headers and event in one write: one send before the client's first byte."""
    from ctxproxy.proxy.edge import relay

    monkeypatch.setattr(relay, "HEADERS_WAIT", 30.0)  # the test opens the gate; the timer never decides
    writes: list[bytes] = []
    real_start = relay.Relay._start_stream

    async def start_stream(self, request, *args):
        got = await real_start(self, request, *args)
        transport = request.transport
        real_write = transport.write

        def write(data):
            writes.append(bytes(data))
            return real_write(data)

        monkeypatch.setattr(transport, "write", write)
        monkeypatch.setattr(transport, "writelines", lambda parts: write(b"".join(parts)))
        gated_upstream["gate"].set()  # the provider's first event comes only now
        return got

    monkeypatch.setattr(relay.Relay, "_start_stream", start_stream)
    gated_upstream["first"] = b""
    proxy = await make_proxy(upstream=gated_upstream["url"])
    body = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "x"}]}
    async with aiohttp.ClientSession() as s:
        async with asyncio.timeout(10):
            async with s.post(proxy.url + "/v1/messages", json=body) as r:
                assert r.status == 200
                got = await r.content.read()
    assert got == STREAM
    assert writes and writes[0].startswith(b"HTTP/1.1 200") and b"event: message_start" in writes[0]


async def test_percent_encoded_paths_and_queries_go_upstream_as_sent(make_proxy, serve_handler):
    """A path is forwarded still encoded: %20 decoded would break the request
    line, %2F would name another resource, %3F would start the query."""
    seen = []

    async def handler(request):
        seen.append(request.raw_path)
        return web.Response(text="ok")

    proxy = await make_proxy(upstream=await serve_handler(handler))
    sent = ["/v1/files/abc%20def/content", "/v1/models/a%2Fb", "/v1/x%3Fy?q=1%202&plus=%2B&s=a+b"]
    async with aiohttp.ClientSession() as s:
        for path in sent:
            async with s.get(URL(proxy.url + path, encoded=True)) as r:
                assert r.status == 200, await r.text()
    assert seen == sent


async def test_provider_cookies_reach_the_caller_and_are_never_kept_for_another(make_proxy, serve_handler):
    """One pooled upstream session serves every caller: a cookie the provider sets
    (load balancers do) is the caller's, not the proxy's to replay for someone else."""
    seen = []

    async def handler(request):
        await request.read()
        seen.append(request.headers.get("Cookie"))
        return web.json_response({"id": "x", "object": "chat.completion", "choices": []},
                                 headers={"Set-Cookie": "__cf_bm=tenant-a-affinity; Path=/; HttpOnly"})

    # by name: aiohttp's jar ignores cookies from a bare IP address, but a provider has a name
    upstream = (await serve_handler(handler)).replace("127.0.0.1", "localhost")
    proxy = await make_proxy(upstream=upstream)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as a:
        async with a.post(proxy.url + "/v1/chat/completions", json=body, headers={"X-Ctx-Tenant": "a"}) as r:
            assert r.status == 200
            assert "__cf_bm=tenant-a-affinity" in r.headers.getall("Set-Cookie")[0]
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as b:
        for path in ("/v1/chat/completions", "/v1/models"):  # a model call and a pass-through
            async with b.request("POST" if "chat" in path else "GET", proxy.url + path, headers={
                    "X-Ctx-Tenant": "b"}, **({"json": body} if "chat" in path else {})) as r:
                assert r.status == 200
        async with b.post(proxy.url + "/v1/chat/completions", json=body,
                          headers={"Cookie": "own=1"}) as r:  # a caller's own cookie goes as sent
            assert r.status == 200
    assert seen == [None, None, None, "own=1"]


@pytest.fixture
async def raw_body_upstream(serve_handler):
    """An upstream that records each request's body exactly as it came over the wire."""
    seen, lengths = [], []

    async def handler(request):
        seen.append((request.path, request.headers.get("Content-Encoding"), await request.read()))
        lengths.append(request.headers.get("Content-Length"))
        return web.json_response({"id": "x", "type": "message", "content": []})

    return await serve_handler(handler, auto_decompress=False), seen, lengths


async def test_compressed_request_bodies(make_proxy, raw_body_upstream):
    """A pass-through or an untouched model call goes upstream compressed, byte for
    byte; a model call the filters edited goes as plain JSON; a coding the filters
    cannot read is refused rather than forwarded unscanned; a bomb is 413."""
    import gzip
    import zlib

    url, seen, _ = raw_body_upstream
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "redact"]\n[server]\nmax_body_bytes = 65536\n',
                             upstream=url)
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    clean = json.dumps({"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}).encode()
    dirty = clean.replace(b'"hi"', f'"use {secret}"'.encode())
    hdrs = {"Content-Type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01"}
    async with aiohttp.ClientSession(auto_decompress=False) as s:
        async def post(path, data, coding):
            async with s.post(proxy.url + path, data=data, headers={**hdrs, "Content-Encoding": coding}) as r:
                return r.status, await r.json(content_type=None)

        assert (await post("/v1/files", gzip.compress(dirty), "gzip"))[0] == 200
        assert seen[-1] == ("/v1/files", "gzip", seen[-1][2]) and gzip.decompress(seen[-1][2]) == dirty
        for coding, packed in (("gzip", gzip.compress(clean)), ("deflate", zlib.compress(clean))):
            assert (await post("/v1/messages", packed, coding))[0] == 200
            assert seen[-1] == ("/v1/messages", coding, packed)  # untouched: the original bytes
        assert (await post("/v1/messages", gzip.compress(dirty), "gzip"))[0] == 200
        path, coding, got = seen[-1]
        assert coding is None and secret.encode() not in got and b"[REDACTED:github-pat:" in got
        n = len(seen)
        status, err = await post("/v1/messages", b"(\xb5/\xfd...", "zstd")
        assert status == 415 and err["type"] == "error" and "zstd" in err["error"]["message"]
        status, err = await post("/v1/messages", gzip.compress(b" " * 200_000), "gzip")
        assert status == 413 and "decompressed" in err["error"]["message"]
        status, err = await post("/v1/messages", gzip.compress(clean)[:-8], "gzip")
        assert status == 400 and err["type"] == "error"
        assert len(seen) == n  # none of those reached the provider


async def test_pass_through_bodies_stream_on_past_the_model_call_limit(make_proxy, raw_body_upstream):
    """File uploads are not model calls: their bodies are not read by the proxy,
    so the body limit for model calls does not apply; the length goes with them."""
    import os

    url, seen, lengths = raw_body_upstream
    proxy = await make_proxy("[server]\nmax_body_bytes = 65536\n", upstream=url)
    upload = os.urandom(1 << 20)

    async def pieces():
        for i in range(0, len(upload), 100_000):
            yield upload[i:i + 100_000]

    async with aiohttp.ClientSession() as s:
        for data in (upload, pieces()):  # with a Content-Length, then chunked
            async with s.post(proxy.url + "/v1/files", data=data,
                              headers={"Authorization": "Bearer k", "Content-Type": "application/octet-stream"}) as r:
                assert r.status == 200
        async with s.post(proxy.url + "/v1/messages", data=upload[:70_000], headers={"x-api-key": "k"}) as r:
            assert r.status == 413  # a model call is read, and bounded
    assert [b for _, _, b in seen] == [upload, upload]
    assert lengths == [str(len(upload)), None]  # a sized upload keeps its length; a chunked one stays chunked
