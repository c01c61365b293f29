"""The default transport of the turn engine: the one pooled aiohttp ClientSession.

``SessionTransport.send(forward)`` is the engine's one-method transport
(``engine.Transport``); aiohttp's failures become ``UpstreamError`` here, at
the boundary, so the engine and the edges never name aiohttp's exceptions.
``cut()`` ends every exchange at shutdown.
"""
from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import aiohttp
from yarl import URL

from ..engine import Forward
from .errors import ProxyShuttingDown, translate_upstream


class SessionUpstream:
    """One provider response being read (``engine.Upstream``)."""

    __slots__ = ("resp", "status", "headers", "_owner")

    def __init__(self, resp: aiohttp.ClientResponse, owner: "SessionTransport"):
        self.resp = resp
        self.status = resp.status
        self.headers = resp.headers
        self._owner = owner

    def buffered(self) -> bytes:
        """Body bytes already read from the provider's socket (often the first
        event comes in the same read as the headers); b"" if none, or if the body
        already failed (reading reports that)."""
        try:
            return self.resp.content.read_nowait()
        except (aiohttp.ClientError, asyncio.TimeoutError, RuntimeError):
            return b""

    async def chunks(self) -> AsyncIterator[bytes]:
        """Body chunks as they arrive; errors become UpstreamError. The read
        timeout (the session's ``sock_read``) applies between two chunks."""
        content = self.resp.content
        while True:
            try:
                chunk = await content.readany()
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise translate_upstream(exc, "mid-stream") from None
            if not chunk:
                return
            yield chunk

    async def read(self) -> bytes:
        try:
            return await self.resp.read()
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise translate_upstream(exc, "reading the response") from None

    def release(self) -> None:
        self._owner.reading.discard(self.resp)
        self.resp.release()


class SessionTransport:
    def __init__(self, session: aiohttp.ClientSession):
        self.session = session
        self.reading: set[aiohttp.ClientResponse] = set()  # provider responses being relayed

    async def send(self, forward: Forward) -> SessionUpstream:
        try:
            resp = await self.session.request(forward.method, URL(forward.url, encoded=True), headers=forward.headers,
                                              data=forward.body, allow_redirects=False)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise translate_upstream(exc, "connecting") from None
        self.reading.add(resp)
        return SessionUpstream(resp, self)

    async def connect_ws(self, url: URL, headers: Any) -> aiohttp.ClientWebSocketResponse:
        """The provider's WebSocket (Responses over WebSocket), from the same pool.
        A refusal raises ``aiohttp.WSServerHandshakeError`` (the edge passes it
        on as it came); other failures ``UpstreamError``."""
        try:
            return await self.session.ws_connect(url, headers=headers, autoping=True, max_msg_size=0)
        except aiohttp.WSServerHandshakeError:
            raise
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            raise translate_upstream(exc, "connecting") from None

    async def cut(self) -> None:
        """At shutdown, end every upstream exchange now: a body being read fails
        with ``ProxyShuttingDown`` (its stream ends with an error event in the
        caller's format); closing the session fails the calls still waiting for
        headers and the WebSockets."""
        for resp in list(self.reading):
            if not resp.content.is_eof():
                resp.content.set_exception(ProxyShuttingDown("ctxproxy is shutting down"))
        await self.session.close()
