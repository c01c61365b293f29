"""One proxied exchange: read, filter, forward, relay the answer back.

Model calls (the three APIs) go through the filter pipeline; every other path
is passed through untouched. A streamed answer is relayed chunk by chunk as it
arrives: events are always split (so a cut stream is noticed), their JSON is
parsed only when a filter hooks them.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any

import aiohttp
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from ctxproxy.filters import FilterError, Pipeline, Turn

from .adapters import ADAPTERS, AdapterError
from .content_coding import decode_body, is_identity
from .errors import (TURN_HEADER, ProxyError, ProxyShuttingDown, UpstreamError, family_api, response_for,
                     translate_upstream)
from .routing import Match, Route
from .sse import SSEDecoder

log = logging.getLogger("ctxproxy.proxy")

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "host", "content-length",
    "expect",  # the client's 100-continue was answered here; the provider gets the whole body at once
})
# Events that end a well-formed stream, per API; a stream that stops before one was cut.
_TERMINAL_NAMES = {
    "anthropic": frozenset({"message_stop", "error"}),
    "responses": frozenset({"response.completed", "response.failed", "response.incomplete", "error"}),
}
# What a terminal event's bytes must hold, per API: an event without any of them
# is not one, and its fields need not be read to know it. (Every name of the
# Responses set but "error" holds "response.", and "error" is in both sets.)
_TERMINAL_HINTS = {"chat": (b"[DONE]", b'{"error"'), "anthropic": (b"message_stop", b"error"),
                   "responses": (b"response.", b"error")}


def is_terminal(api: str, raw: Any) -> bool:
    first, second = _TERMINAL_HINTS[api]
    if first not in raw.raw and second not in raw.raw:
        return False
    if api == "chat":
        return raw.data == b"[DONE]" or (raw.data is not None and raw.data.startswith(b'{"error"'))
    return raw.name in _TERMINAL_NAMES[api]


# A non-streamed answer up to this size with a Content-Length is relayed whole;
# larger or unsized ones are relayed chunk by chunk as they arrive.
WHOLE_BODY_MAX = 1 << 20


_LEADING_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*"([A-Za-z0-9_.:-]{1,200})"')


def _leading_id(raw: bytes) -> str | None:
    """A JSON answer's ``id`` when it is the first member (as OpenAI writes a
    Responses object): the response id without parsing a body no filter reads."""
    m = _LEADING_ID.match(raw)
    return m.group(1).decode() if m else None


def _content_length(upstream: aiohttp.ClientResponse) -> int:
    try:
        return int(upstream.headers.get("content-length", "-1"))
    except ValueError:
        return -1


async def _send(request: web.Request, resp: web.Response) -> web.Response:
    """Answer now: before the upstream connection is released and the turn's
    bookkeeping runs, so the client waits for neither."""
    await resp.prepare(request)
    await resp.write_eof()
    return resp


def _hop_by_hop(headers: Any) -> frozenset[str]:
    """The standard hop-by-hop headers plus any the Connection header names."""
    named = headers.get("connection")
    if not named:
        return HOP_BY_HOP
    return HOP_BY_HOP | {t.strip().lower() for t in named.split(",") if t.strip()}


def upstream_headers(headers: Any, route: Route, parse_response: bool) -> CIMultiDict:
    drop = _hop_by_hop(headers) if "connection" in headers else HOP_BY_HOP
    out = CIMultiDict()
    for k, v in headers.items():
        lk = k.lower()
        if lk in drop or lk.startswith("x-ctx-"):
            continue
        out.add(k, v)
    if parse_response:  # filters read the answer: ask for it uncompressed
        out["Accept-Encoding"] = "identity"
    if route.injected_key:
        out.pop("authorization", None)
        out.pop("x-api-key", None)
        header = route.key_header
        out[header] = f"Bearer {route.injected_key}" if header == "authorization" else route.injected_key
    return out


def upstream_url(request: web.Request, match: Match) -> URL:
    """The provider URL for this request: path and query exactly as the client
    encoded them (``%2F`` stays ``%2F``; a decoded path could even break the
    request line)."""
    qs = request.rel_url.raw_query_string
    return URL(match.route.upstream + match.upstream_path + (f"?{qs}" if qs else ""), encoded=True)


def client_headers(upstream: CIMultiDictProxy, turn_id: str) -> CIMultiDict:
    out = CIMultiDict(upstream)  # copied in C; then the few hop-by-hop names go
    for name in _hop_by_hop(upstream):
        if name in out:
            del out[name]
    out[TURN_HEADER] = turn_id
    return out


class _HeadersWithFirstWrite(web.StreamResponse):
    """A streamed response whose headers go out with its first body write.
    (aiohttp's own ``Response`` buffers them this way; on an aiohttp without
    this switch the headers simply go first, in a write of their own.)"""

    _send_headers_immediately = False


def _passed_body(request: web.Request) -> aiohttp.StreamReader | None:
    """A pass-through's body, to stream on as it arrives (None if it has none)."""
    return request.content if request.body_exists else None


def _buffered(upstream: aiohttp.ClientResponse) -> bytes:
    """Body bytes already read from the provider's socket (often the first
    event comes in the same read as the headers); b"" if none, or if the body
    already failed (the relay loop reports that)."""
    try:
        return upstream.content.read_nowait()
    except (aiohttp.ClientError, asyncio.TimeoutError, RuntimeError):
        return b""


class Relay:
    """Holds what every exchange needs; ``handle`` serves one request."""

    def __init__(self, session: aiohttp.ClientSession, pipelines: dict[str, Pipeline], tokens: Any,
                 services: dict):
        self.session = session
        self.pipelines = pipelines  # route name -> pipeline
        self.aux_pipelines = {name: p.auxiliary() for name, p in pipelines.items()}  # count_tokens, compact
        self.tokens = tokens
        self.services = services
        config = services.get("config")
        self.max_body = config.server.max_body_bytes if config is not None else 32 << 20  # decoded bodies too
        self._reading: set[aiohttp.ClientResponse] = set()  # provider responses being relayed

    async def cut_upstream(self) -> None:
        """At shutdown, end every upstream exchange now: a body being read fails
        with ``ProxyShuttingDown`` (its stream ends with an error event in the
        caller's format); closing the session fails the calls still waiting for
        headers and the WebSockets."""
        for resp in list(self._reading):
            if not resp.content.is_eof():
                resp.content.set_exception(ProxyShuttingDown("ctxproxy is shutting down"))
        await self.session.close()

    async def handle(self, request: web.Request, match: Match) -> web.StreamResponse:
        route = match.route
        api = match.api
        turn = Turn(api=api or "", route=route.name, path=request.rel_url.raw_path, headers=request.headers,
                    request=None, tokens=self.tokens, services=self.services,
                    tenant_fixed=route.config.tenant)
        pipeline = (self.aux_pipelines if match.auxiliary else self.pipelines)[route.name] if api else None
        try:
            if pipeline is None:  # pass-through: the body streams on, unread and unbounded (file uploads)
                body, recoded = _passed_body(request), False
            else:
                raw = await request.read()
                adapter = ADAPTERS[api]
                coding = request.headers.get("content-encoding")
                plain = raw if not coding or is_identity(coding) else decode_body(raw, coding, self.max_body)
                turn.request = adapter.parse_request(plain)
                turn.streamed = turn.request.stream
                await pipeline.run_request_async(turn, reparse=lambda: adapter.parse_request(plain))
                body = turn.request.to_bytes()
                recoded = body is not plain and plain is not raw  # edited: sent as plain JSON
                if body is plain:  # untouched: the original bytes, compressed as they came
                    body = raw
            resp = await self._forward(request, match, turn, pipeline, body, recoded)
        except (asyncio.CancelledError, ConnectionResetError):  # the client hung up: nothing to answer
            turn.error_type = "client_disconnected"
            self._end(turn, pipeline)
            raise
        except (ProxyError, AdapterError, FilterError, web.HTTPException) as exc:
            turn.error_type = getattr(exc, "error_type", type(exc).__name__)
            resp = response_for(exc, family_api(api, route.family), turn.turn_id)
        except Exception as exc:  # never a traceback to the client
            log.exception("turn %s: unexpected error", turn.turn_id)
            turn.error_type = type(exc).__name__
            resp = response_for(exc, family_api(api, route.family), turn.turn_id)
        if pipeline is None or turn.request is None:
            return resp
        try:  # the client has its whole answer before the turn's bookkeeping (manifest, records) runs
            if not resp.prepared:
                await _send(request, resp)
        except (asyncio.CancelledError, ConnectionResetError):
            turn.error_type = turn.error_type or "client_disconnected"
            raise
        finally:
            self._end(turn, pipeline)
        return resp

    @staticmethod
    def _end(turn: Turn, pipeline: Pipeline | None) -> None:
        if pipeline is not None and turn.request is not None:
            pipeline.run_end(turn)

    async def _forward(self, request: web.Request, match: Match, turn: Turn, pipeline: Pipeline | None,
                       body: bytes | aiohttp.StreamReader | None, recoded: bool = False) -> web.StreamResponse:
        route = match.route
        parse = pipeline is not None and (pipeline.has_event_hooks or pipeline.has_response_hooks)
        url = upstream_url(request, match)
        headers = upstream_headers(request.headers, route, parse)
        if recoded:
            headers.pop("content-encoding", None)
        elif body is not None and not isinstance(body, bytes) and request.content_length is not None:
            headers["Content-Length"] = str(request.content_length)  # streamed on at its own length, not chunked
        t0 = time.perf_counter()
        t0_ns = time.time_ns()
        try:
            upstream = await self.session.request(request.method, url, headers=headers, data=None if body == b"" else body,
                                                  allow_redirects=False)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            turn.spans.append(("upstream", t0_ns, time.time_ns()))
            raise translate_upstream(exc, "connecting") from None
        self._reading.add(upstream)
        try:
            turn.status = upstream.status
            turn.timings_ms["upstream_headers"] = (time.perf_counter() - t0) * 1000.0
            ctype = upstream.headers.get("content-type", "")
            is_sse = ctype.startswith("text/event-stream")
            plain = upstream.headers.get("content-encoding", "identity").lower() in ("", "identity")
            if pipeline is not None and is_sse and plain:
                return await self._relay_events(request, turn, pipeline, upstream)
            if parse and plain and not is_sse and pipeline.has_response_hooks and upstream.status < 300 \
                    and "json" in ctype:
                return await self._relay_whole(request, turn, upstream, pipeline)
            if not is_sse and request.method != "HEAD" and upstream.status not in (204, 304) \
                    and 0 <= _content_length(upstream) <= WHOLE_BODY_MAX:
                return await self._relay_whole(request, turn, upstream)
            return await self._relay_bytes(request, turn, upstream, is_sse)
        finally:
            self._reading.discard(upstream)
            upstream.release()
            turn.spans.append(("upstream", t0_ns, time.time_ns()))

    async def _relay_whole(self, request: web.Request, turn: Turn, upstream: aiohttp.ClientResponse,
                           pipeline: Pipeline | None = None) -> web.Response:
        """Read the whole body and answer in one write (the client sees a
        Content-Length rather than chunks). With ``pipeline``, a JSON answer
        goes through the response filters first."""
        try:
            raw = await upstream.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise translate_upstream(exc, "reading the response") from None
        if pipeline is not None:
            view = ADAPTERS[turn.api].parse_response(raw)
            if view is not None:
                pipeline.run_response(turn, view)
                raw = view.to_bytes()
                rid = view.response_id()
                if rid:
                    turn.note_response_id(rid)
        elif turn.api == "responses" and upstream.status < 300:
            rid = _leading_id(raw)
            if rid:
                turn.note_response_id(rid)
        return await _send(request, web.Response(status=upstream.status, body=raw,
                                                 headers=client_headers(upstream.headers, turn.turn_id)))

    async def _start_stream(self, request: web.Request, turn: Turn, upstream: aiohttp.ClientResponse
                            ) -> tuple[web.StreamResponse, bytes]:
        """The client's response, prepared, and the body bytes that arrived with
        the provider's headers. When there are some, our headers are held back
        to go out with them: one write to the client, not two, before its
        first byte. The caller writes them (or ``b""``) at once."""
        first = _buffered(upstream)
        cls = _HeadersWithFirstWrite if first else web.StreamResponse
        resp = cls(status=upstream.status, headers=client_headers(upstream.headers, turn.turn_id))
        if request.method == "HEAD" and _content_length(upstream) >= 0:
            resp.content_length = _content_length(upstream)  # what a GET would return; no body follows
        await resp.prepare(request)
        return resp, first

    async def _relay_bytes(self, request: web.Request, turn: Turn, upstream: aiohttp.ClientResponse,
                           is_sse: bool) -> web.StreamResponse:
        resp, first = await self._start_stream(request, turn, upstream)
        try:
            if first:
                await resp.write(first)
            async for chunk in self._chunks(upstream):
                await resp.write(chunk)
        except UpstreamError as exc:
            await self._stream_failed(resp, turn, exc, is_sse, request)
            return resp
        except Exception as exc:
            await self._stream_failed(resp, turn, _internal(exc, turn), is_sse, request)
            return resp
        await resp.write_eof()
        return resp

    async def _relay_events(self, request: web.Request, turn: Turn, pipeline: Pipeline,
                            upstream: aiohttp.ClientResponse) -> web.StreamResponse:
        resp, first = await self._start_stream(request, turn, upstream)
        relay = _EventRelay(turn, pipeline, ADAPTERS[turn.api].stream())
        decoder = SSEDecoder()
        try:
            if first:  # b"" still sends the held headers
                await resp.write(relay.feed(decoder.decode(first)))
            async for chunk in self._chunks(upstream):
                out = relay.feed(decoder.decode(chunk))
                if out:
                    await resp.write(out)
            rest = decoder.flush()
            if rest is not None:
                out = relay.feed([rest])
                if out:
                    await resp.write(out)
        except UpstreamError as exc:
            await self._stream_failed(resp, turn, exc, True, after=relay.sent)
            return resp
        except FilterError as exc:  # a required response filter failed: stop, say so
            await self._stream_failed(resp, turn, ProxyError(exc.status, f"ctxproxy {exc.filter_name}: {exc.message}",
                                                             "filter_failed"), True, after=relay.sent)
            return resp
        except Exception as exc:
            await self._stream_failed(resp, turn, _internal(exc, turn), True, after=relay.sent)
            return resp
        if upstream.status < 300 and not relay.terminated:
            await self._stream_failed(resp, turn, UpstreamError(502, "upstream ended the stream early",
                                                                "upstream_dropped"), True, after=relay.sent)
            return resp
        await resp.write_eof()
        return resp

    async def _chunks(self, upstream: aiohttp.ClientResponse):
        """Upstream body chunks as they arrive; errors become UpstreamError.
        The read timeout (the session's ``sock_read``) applies between two
        chunks, not to the whole body."""
        content = upstream.content
        while True:
            try:
                chunk = await content.readany()
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise translate_upstream(exc, "mid-stream") from None
            if not chunk:
                return
            yield chunk

    async def _stream_failed(self, resp: web.StreamResponse, turn: Turn, exc: ProxyError, is_sse: bool,
                             request: web.Request | None = None, after: bytes = b"") -> None:
        turn.error_type = exc.error_type
        log.warning("turn %s: %s", turn.turn_id, exc.message)
        if is_sse and turn.api:
            try:
                await resp.write(ADAPTERS[turn.api].stream_error_bytes(exc.status, exc.message,
                                                                       turn.state.get("response_id"), after))
                await resp.write_eof()
            except (ConnectionError, RuntimeError):
                pass
        elif request is not None and request.transport is not None:
            request.transport.close()  # a plain body cut short: no final chunk, so the client sees the cut


def _internal(exc: Exception, turn: Turn) -> ProxyError:
    """A failure of ours once the answer has begun: it is logged and the stream
    ends with an error in the caller's format (a second HTTP response cannot
    follow the first). A client that went away is not such a failure."""
    if isinstance(exc, ConnectionError):
        raise exc
    log.exception("turn %s: failed while relaying the answer", turn.turn_id)
    return ProxyError(500, "ctxproxy failed while relaying the answer", "internal_error")


class _EventRelay:
    """Turns decoded SSE events into output bytes for one response: through the
    filters when any has an event hook, else as the original bytes. Notes the
    end-of-stream event, the response id and the last bytes sent (for an
    error event if cut)."""

    __slots__ = ("turn", "pipeline", "state", "terminated", "hooks", "sent")

    def __init__(self, turn: Turn, pipeline: Pipeline, state: Any):
        self.turn = turn
        self.pipeline = pipeline
        self.state = state
        self.terminated = False
        self.hooks = pipeline.has_event_hooks
        self.sent = b""

    def feed(self, events: list) -> bytes:
        api = self.turn.api
        out = []
        for raw in events:
            if is_terminal(api, raw):
                self.terminated = True
            if not self.hooks:
                if api == "responses" and b"response.created" in raw.raw and raw.name == "response.created":
                    self._note_id(self.state.event(raw.name, raw.raw, raw.data))
                out.append(raw.raw)
                continue
            ev = self.state.event(raw.name, raw.raw, raw.data)
            self._note_id(ev)
            for e in self.state.outgoing(self.pipeline.run_event(self.turn, ev)):
                out.append(e.to_bytes())
        data = b"".join(out)
        if data and (api != "responses" or b'"sequence_number"' in data):  # not a keep-alive comment
            self.sent = data
        return data

    def _note_id(self, ev: Any) -> None:
        if "response_id" not in self.turn.state:
            rid = ev.response_id()
            if rid:
                self.turn.note_response_id(rid)
