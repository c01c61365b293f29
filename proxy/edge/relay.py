"""The aiohttp edge of one proxied exchange: read, hand to the turn engine,
forward through its transport, relay the answer back.

The engine (``proxy.engine``) decides everything about the turn — filters,
what to forward, how to relay the answer, the error events; this module only
moves bytes between aiohttp's request/response objects and the engine. A
streamed answer is relayed chunk by chunk as it arrives.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp
from aiohttp import web

from ctxproxy.filters import Pipeline

from ..engine import BYTES, EVENTS, HOP_BY_HOP, Engine, Exchange, Reply, content_length, upstream_headers
from .errors import UpstreamError, response_for, web_response
from ..routing import Match
from .transport import SessionTransport

log = logging.getLogger("ctxproxy.proxy")

__all__ = ["HOP_BY_HOP", "Relay", "upstream_headers"]


async def _send(request: web.Request, resp: web.Response) -> web.Response:
    """Answer now: before the upstream connection is released and the turn's
    bookkeeping runs, so the client waits for neither."""
    await resp.prepare(request)
    await resp.write_eof()
    return resp


class _HeadersWithFirstWrite(web.StreamResponse):
    """A streamed response whose headers go out with its first body write.
    (aiohttp's own ``Response`` buffers them this way; on an aiohttp without
    this switch the headers simply go first, in a write of their own.)"""

    _send_headers_immediately = False


# An event stream's headers wait this long for the provider's first body bytes, so that
# both reach the client in one write; a provider still silent then gets its headers
# relayed alone, as they came.
HEADERS_WAIT = 0.02


_HEADER_TASKS: set[asyncio.Task] = set()  # the loop keeps only weak references to tasks


def _send_held_headers(resp: web.StreamResponse) -> None:
    """A timer's callback: the held headers go out alone now (an empty write sends them;
    once they were sent, it writes nothing)."""
    task = asyncio.get_running_loop().create_task(resp.write(b""))
    _HEADER_TASKS.add(task)
    task.add_done_callback(_done_writing)


def _done_writing(task: asyncio.Task) -> None:
    _HEADER_TASKS.discard(task)
    if not task.cancelled():
        task.exception()  # a client already gone: the relay itself hears of it at its next write


def _passed_body(request: web.Request) -> aiohttp.StreamReader | None:
    """A pass-through's body, to stream on as it arrives (None if it has none)."""
    return request.content if request.body_exists else None


class Relay:
    """The HTTP edge: holds the engine and its transport; ``handle`` serves one request."""

    def __init__(self, session: aiohttp.ClientSession, engine: Engine):
        self.session = session
        self.transport = SessionTransport(session)
        if engine.transport is None:  # the default: the pooled session (a test may give its own)
            engine.transport = self.transport
        self.engine = engine

    @property
    def pipelines(self) -> dict[str, Pipeline]:
        return self.engine.pipelines

    @property
    def aux_pipelines(self) -> dict[str, Pipeline]:
        return self.engine.aux_pipelines

    @property
    def tokens(self) -> Any:
        return self.engine.tokens

    @property
    def services(self) -> Any:
        return self.engine.services

    async def cut_upstream(self) -> None:
        """At shutdown, end every upstream exchange now (see ``SessionTransport.cut``)."""
        await self.transport.cut()

    async def handle(self, request: web.Request, match: Match) -> web.StreamResponse:
        rel = request.rel_url
        ex = self.engine.begin(match, request.method, rel.raw_path, rel.raw_query_string, request.headers,
                               continues=True)
        turn = ex.turn
        try:
            if not ex.filtered:  # pass-through: the body streams on, unread and unbounded (file uploads)
                out = await ex.request(_passed_body(request), request.content_length)
            else:
                out = await ex.request(await request.read())
            if isinstance(out, Reply):
                resp = web_response(out)
            else:
                resp = await self._forward(request, ex, out)
        except (asyncio.CancelledError, ConnectionResetError):  # the client hung up: nothing to answer
            turn.error_type = "client_disconnected"
            ex.finish()
            raise
        except web.HTTPException as exc:  # reading the body: too large, and the like
            turn.error_type = type(exc).__name__
            resp = response_for(exc, ex.error_api, turn.turn_id)
        except Exception as exc:  # never a traceback to the client
            log.exception("turn %s: unexpected error", turn.turn_id)
            resp = web_response(ex.fail(exc))
        if not ex.filtered or turn.request is None:
            ex.finish()  # nothing to settle but the upstream span
            return resp
        try:  # the client has its whole answer before the turn's bookkeeping (manifest, records) runs
            if not resp.prepared:
                await _send(request, resp)
        except (asyncio.CancelledError, ConnectionResetError):
            turn.error_type = turn.error_type or "client_disconnected"
            raise
        finally:
            ex.finish()
        return resp

    async def _forward(self, request: web.Request, ex: Exchange, forward: Any) -> web.StreamResponse:
        try:
            upstream = await ex.send(forward)
        except UpstreamError as exc:
            return web_response(ex.upstream_failed(exc))
        try:
            answer = ex.answer(upstream.status, upstream.headers)
            if answer.mode == EVENTS:
                return await self._relay_stream(request, ex, answer, upstream, events=True)
            if answer.mode == BYTES:
                return await self._relay_stream(request, ex, answer, upstream, events=False)
            try:
                body = ex.whole(await upstream.read())
            except UpstreamError as exc:
                return web_response(ex.fail(exc))
            return await _send(request, web.Response(status=answer.status, body=body, headers=answer.headers))
        finally:
            upstream.release()
            ex.upstream_done()

    async def _start_stream(self, request: web.Request, answer: Any, upstream: Any, events: bool
                            ) -> tuple[web.StreamResponse, bytes, asyncio.TimerHandle | None]:
        """The client's response, prepared, the body bytes that arrived with the
        provider's headers, and the timer that sends our headers alone if the
        provider's first body bytes are late. Our headers are held back to go out
        with the first body bytes: one write to the client, not two, before its
        first byte. When some came with the provider's headers, the caller writes
        them (or ``b""``) at once; else an event stream waits up to
        ``HEADERS_WAIT`` for them (the timer), a pass-through not at all."""
        first = upstream.buffered()
        held = bool(first) or (events and request.method != "HEAD")
        cls = _HeadersWithFirstWrite if held else web.StreamResponse
        resp = cls(status=answer.status, headers=answer.headers)
        if request.method == "HEAD" and content_length(upstream.headers) >= 0:
            resp.content_length = content_length(upstream.headers)  # what a GET would return; no body follows
        await resp.prepare(request)
        timer = None
        if held and not first and HEADERS_WAIT > 0:
            timer = asyncio.get_running_loop().call_later(HEADERS_WAIT, _send_held_headers, resp)
        return resp, first, timer

    async def _relay_stream(self, request: web.Request, ex: Exchange, answer: Any, upstream: Any, events: bool
                            ) -> web.StreamResponse:
        """The provider's chunks to the client as they come: through the response
        filters (``events``), or as they are (a pass-through)."""
        resp, first, timer = await self._start_stream(request, answer, upstream, events)
        try:
            if first:  # b"" from the filters still sends the held headers
                await resp.write(ex.events(first) if events else first)
                if events:
                    ex.settle()
            async for chunk in upstream.chunks():
                out = ex.events(chunk) if events else chunk
                if timer is not None:  # the provider's first body bytes: the held headers go with them
                    timer.cancel()
                    timer = None
                    await resp.write(out)  # b"" too: the headers go now
                elif out:
                    await resp.write(out)
                if events:  # the filters that only watch the answer: after the write, not before
                    ex.settle()
            out = ex.events_end() if events else b""
            if out:
                await resp.write(out)
        except Exception as exc:
            await self._cut(request, resp, ex, exc)
            return resp
        finally:
            if timer is not None:
                timer.cancel()
        await resp.write_eof()
        return resp

    @staticmethod
    async def _cut(request: web.Request, resp: web.StreamResponse, ex: Exchange, exc: Exception) -> None:
        """The answer failed after it began: end it with the engine's error event,
        or, for a plain body, cut the connection (no final chunk: the client sees the cut)."""
        tail = ex.cut(exc)
        if tail:
            try:
                await resp.write(tail)
                await resp.write_eof()
            except (ConnectionError, RuntimeError):
                pass
        elif request.transport is not None:
            request.transport.close()
