"""Responses over WebSocket (what Codex's built-in OpenAI provider tries first): serve's sockets.

The turns, their lanes and the filters each frame goes through are every
driver's (``proxy/ws_lanes.py``); this module owns the two sockets: the
client's upgrade, the provider's connection, and the frames between them. A
route with ``websocket = false`` refuses the upgrade at once with 426, so the
client falls back to HTTP immediately instead of retrying.

The client's handshake is checked before the provider is dialled, and the
provider's socket is closed however the session ends. A client frame may be
as large as an HTTP body (``[server] max_body_bytes``). When one side closes,
the other is closed with the same code and reason.
"""
from __future__ import annotations

import asyncio
import logging

import aiohttp
from aiohttp import WSMsgType, web
from yarl import URL

from ..engine import HOP_BY_HOP, upstream_headers, upstream_url
from .errors import UpstreamError, error_response
from .relay import Relay
from ..routing import Match
from ..ws_lanes import WsLanes

log = logging.getLogger("ctxproxy.proxy")

_WS_HANDSHAKE = ("sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-accept")
# Running sessions. Each is a task of its own, so aiohttp cancelling the handler
# (it does once the client's connection is gone) cannot cut the close short that
# passes the client's close code on to the provider; the set keeps them referenced.
_SESSIONS: set[asyncio.Task] = set()
_BAD_HANDSHAKE = ("ctxproxy: not a valid WebSocket handshake (needs Connection: Upgrade, "
                  "Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key)")


def is_upgrade(request: web.Request) -> bool:
    return request.method == "GET" and request.headers.get("upgrade", "").lower() == "websocket"


async def handle_ws(request: web.Request, match: Match, relay: Relay) -> web.StreamResponse:
    route = match.route
    if not route.config.websocket or not match.upstream_path.endswith("/responses"):
        resp = error_response("responses", 426, "ctxproxy: WebSocket transport is off for this route; use HTTP")
        resp.headers["Upgrade"] = "websocket"
        return resp
    # A client frame may be as large as an HTTP body. Provider frames are not capped:
    # the HTTP relay reads provider bodies whole too, and the final frame repeats the
    # whole answer, so a cap would only cut a long answer at its end.
    client = web.WebSocketResponse(autoping=True, max_msg_size=request.client_max_size)
    if not client.can_prepare(request).ok:  # before dialling: a bad handshake costs the provider nothing
        return error_response("responses", 400, _BAD_HANDSHAKE)
    headers = upstream_headers(request.headers, route, parse_response=False)
    for h in _WS_HANDSHAKE:
        headers.pop(h, None)
    qs = request.rel_url.raw_query_string
    url = URL(upstream_url(match, f"?{qs}" if qs else ""), encoded=True)
    url = url.with_scheme("wss" if url.scheme == "https" else "ws")
    try:
        upstream = await relay.transport.connect_ws(url, headers)
    except aiohttp.WSServerHandshakeError as exc:  # the provider said no: say the same, at once
        return _refusal(exc)
    except UpstreamError as err:
        return error_response("responses", err.status, err.message)
    try:
        await client.prepare(request)
    except BaseException:  # the provider's socket holds a pool slot: never leave it open
        await upstream.close()
        raise
    task = asyncio.ensure_future(_WsSession(request, match, relay, client, upstream).run())
    _SESSIONS.add(task)
    task.add_done_callback(_SESSIONS.discard)
    await asyncio.shield(task)
    return client


def _refusal(exc: aiohttp.WSServerHandshakeError) -> web.Response:
    """The provider's refusal, passed on: its status and headers (retry-after,
    rate limits, request id). aiohttp drops the refusal's body, so the body is
    ours, in the Responses error format."""
    if exc.status and exc.status >= 400:
        resp = error_response("responses", exc.status, f"upstream refused the WebSocket ({exc.status})")
    else:  # it said 101 but the handshake was wrong: the provider's fault, never a 101 to the client
        resp = error_response("responses", 502, f"upstream WebSocket handshake failed ({exc.message})")
    for k, v in (exc.headers or {}).items():
        lk = k.lower()
        if lk not in HOP_BY_HOP and not lk.startswith(("content-", "sec-websocket-")):
            resp.headers.add(k, v)
    return resp


def _close_code(ws: aiohttp.ClientWebSocketResponse | web.WebSocketResponse) -> int:
    """The code to close the other side with, from this side's close code.
    1005 (no code given; aiohttp says 0) and 1006 (the connection dropped with no
    close frame) only ever describe a close locally and must not be sent
    (RFC 6455 7.4.1): an orderly close without a code is passed on as 1000, a drop
    as 1011 (the session ended on an error)."""
    code = ws.close_code
    if not code or code == 1005:
        return 1000
    return 1011 if code == 1006 else code


class _WsSession:
    """The client's socket and the provider's, frames between them through ``WsLanes``."""

    def __init__(self, request, match, relay, client, upstream):
        self.client = client
        self.upstream = upstream
        # the provider's socket is ours: a turn may go on there after the proxy's own tool
        self.lanes = WsLanes(relay.engine, match, request.rel_url.raw_path, request.headers, client.send_str,
                             upstream.send_str)

    async def run(self) -> None:
        """Relay both ways until one side closes, then close the other with its
        code and reason. Both sockets are closed however it ends."""
        lanes = self.lanes
        up = asyncio.ensure_future(self._relay(self.client, self.upstream, lanes.client_frame, lanes.client_binary))
        down = asyncio.ensure_future(self._relay(self.upstream, self.client, lanes.server_frame,
                                                 lanes.server_binary))
        try:
            done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            # Stop the other direction before closing: a close racing its receive()
            # would end it too, as if that side had closed.
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            first = up if up in done else down
            if first.exception() is not None:  # a send or a hook failed: the finally closes both
                log.warning("websocket session ended: %s", type(first.exception()).__name__)
            elif first is up:
                await self.upstream.close(code=_close_code(self.client), message=first.result().encode())
            else:
                await lanes.upstream_gone()  # the provider went away mid-turn: tell the client
                await self.client.close(code=_close_code(self.upstream), message=first.result().encode())
        finally:
            up.cancel()  # a no-op once they are done; not so if this task was cancelled (shutdown)
            down.cancel()
            await self.upstream.close()  # its pool slot comes back
            await self.client.close(code=aiohttp.WSCloseCode.INTERNAL_ERROR)  # no-op unless a send failed
            lanes.end_all()

    @staticmethod
    async def _relay(src, dst, on_text, on_binary=None) -> str:
        """Send src's frames on to dst (text through ``on_text``, binary
        through ``on_binary`` if given) until src closes; the close reason src
        gave, if any."""
        while True:
            msg = await src.receive()
            if msg.type == WSMsgType.TEXT:
                for frame in await on_text(msg.data):
                    await dst.send_str(frame)
            elif msg.type == WSMsgType.BINARY:
                for data in (await on_binary(msg.data)) if on_binary is not None else (msg.data,):
                    await dst.send_bytes(data)
            else:  # CLOSE (with code and reason), or the connection ended or failed
                return msg.extra if msg.type == WSMsgType.CLOSE else ""
