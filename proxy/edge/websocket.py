"""Responses over WebSocket (what Codex's built-in OpenAI provider tries first).

The client sends ``{"type": "response.create", ...}`` frames; each is one turn
and goes through the same request pipeline as ``POST /v1/responses``; every
server event frame goes through the response-event hooks of its turn. A
``response.create`` may name a lane (``stream_id``): the provider answers a
lane's creates in order, lanes side by side, and echoes the lane in every
event, so the turns in flight are kept per lane and an event goes to the
oldest turn of its lane. A route with
``websocket = false`` refuses the upgrade at once with 426, so the client
falls back to HTTP immediately instead of retrying.

The client's handshake is checked before the provider is dialled, and the
provider's socket is closed however the session ends. A client frame may be
as large as an HTTP body (``[server] max_body_bytes``). When one side closes,
the other is closed with the same code and reason.
"""
from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web
from yarl import URL

from ..adapters.base import loads
from ..adapters.openai_responses import OPENS, WS_CREATE, WS_MODEL_EVENTS, ws_error_frame, ws_lane
from ..engine import HOP_BY_HOP, FrameTurn, upstream_headers, upstream_url
from .errors import UpstreamError, error_response
from .relay import Relay
from ..routing import Match

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
    def __init__(self, request, match, relay, client, upstream):
        self.request = request
        self.match = match
        self.relay = relay
        self.client = client
        self.upstream = upstream
        self.engine = relay.engine
        # Turns in flight by lane (``stream_id``; None when a create names none), oldest
        # first. Only busy lanes have an entry.
        self.lanes: dict[str | None, deque[FrameTurn]] = {}
        # The last turn that ended on each lane lately, which a response the provider
        # starts by itself there (steering's automatic successor) continues. Steering may
        # name a response that has just completed, so every lane keeps its last one.
        self.ended: OrderedDict[str | None, FrameTurn] = OrderedDict()

    async def run(self) -> None:
        """Relay both ways until one side closes, then close the other with its
        code and reason. Both sockets are closed however it ends."""
        up = asyncio.ensure_future(self._relay(self.client, self.upstream, self._on_client_frame,
                                               self._on_client_binary))
        down = asyncio.ensure_future(self._relay(self.upstream, self.client, self._on_server_frame,
                                                 self._on_server_binary))
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
                for lane, turns in self.lanes.items():  # the provider went away mid-turn: tell the client
                    for ft in turns:
                        ft.turn.error_type = "upstream_dropped"
                    await self._client_error(502, "upstream closed the WebSocket mid-response", lane)
                await self.client.close(code=_close_code(self.upstream), message=first.result().encode())
        finally:
            up.cancel()  # a no-op once they are done; not so if this task was cancelled (shutdown)
            down.cancel()
            await self.upstream.close()  # its pool slot comes back
            await self.client.close(code=aiohttp.WSCloseCode.INTERNAL_ERROR)  # no-op unless a send failed
            self.end_all()

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

    async def _on_client_frame(self, text: str) -> list[str]:
        """Run the request filters on a frame that reaches the model; no frame if refused."""
        raw = text.encode("utf-8", "surrogatepass")
        try:
            data = loads(raw)  # a lone surrogate escape is still read, as on HTTP
        except (ValueError, RecursionError):  # RecursionError: the fallback parser on deep nesting
            await self._client_error(400, "frame is not valid JSON")
            return []
        return await self._on_event(data, raw, text) if isinstance(data, dict) else [text]

    async def _on_event(self, data: dict, raw: bytes, text: str) -> list[str]:
        """A client event. ``response.create`` is a new turn through the request
        pipeline, queued behind the turns already in flight on its lane;
        ``response.steer`` (input queued into a response in flight) reaches the
        model too, so it goes through the filters that guard every request, as a
        token count does, and starts no turn; anything else goes on as it came."""
        kind = data.get("type")
        if kind not in WS_MODEL_EVENTS:
            return [text]
        create = kind == WS_CREATE
        principal = self.match.principal  # keys mode: checked again per turn, so a revocation ends the next one
        if principal is not None and not self.relay.services["keyring"].active(principal):
            await self._client_error(401, f"ctxproxy: proxy key {principal.key_id} is revoked or expired",
                                     _lane(data))
            return []
        # the provider's socket is ours (not transparent mode's): a turn may go on there after our tool
        ft = await self.engine.frame_turn(self.match, self.request.rel_url.raw_path, self.request.headers, data, raw,
                                          auxiliary=not create, continues=self.upstream is not None)
        if not ft.passed:
            await self._client_error(*ft.error, _lane(data))
            return []
        if create:
            self.lanes.setdefault(_lane(data), deque()).append(ft)
        return [text if ft.frame is None else ft.frame.decode("utf-8", "surrogatepass")]

    async def _on_client_binary(self, data: bytes) -> list[bytes]:
        """A binary frame holding a client event is filtered like a text one (a
        secret in it must not pass unredacted); any other binary frame goes on
        as it came."""
        if not _json_object(data):
            return [data]
        try:
            parsed = loads(data)
            text = data.decode("utf-8", "surrogatepass")
        except (ValueError, RecursionError):
            return [data]
        if not isinstance(parsed, dict) or parsed.get("type") not in WS_MODEL_EVENTS:
            return [data]
        return [f.encode("utf-8", "surrogatepass") for f in await self._on_event(parsed, data, text)]

    async def _on_server_binary(self, data: bytes) -> list[bytes]:
        """A provider's binary frame during a turn is an event like a text one
        (the response filters see it); one that is not UTF-8 JSON goes on as it came."""
        if not self._in_flight() or not _json_object(data):
            return [data]
        try:
            text = data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return [data]
        return [f.encode("utf-8", "surrogatepass") for f in await self._on_server_frame(text)]

    async def _on_server_frame(self, text: str) -> list[str]:
        raw = text.encode("utf-8", "surrogatepass")
        lane, parsed = self._lane_of(raw)
        turns = self.lanes.get(lane) if lane is not _NO_LANE else None
        if not turns:  # no turn of ours is waiting for it: unless it starts a successor, it goes on as it came
            turns = self._successor(lane, parsed)
            if not turns:
                return [text]
        ft = turns[0]
        # The turn ends on the event's parsed type (a substring test would match
        # "error": null inside response.created); the event hooks reuse the parse.
        frames, create, ended = await ft.server_frame(raw, parsed)
        if create is not None:  # the proxy answered its own tool: the turn goes on, on this socket
            await self.upstream.send_str(create.decode("utf-8", "surrogatepass"))
        if ended:
            turns.popleft()
            if not turns:  # lanes come and go: only busy ones are kept
                del self.lanes[lane]
            self.ended[lane] = ft
            self.ended.move_to_end(lane)
            if len(self.ended) > ENDED_LANES:
                self.ended.popitem(last=False)
        return [text if f is None else f.decode("utf-8", "surrogatepass") for f in frames]

    def _successor(self, lane: Any, event: dict | None) -> deque | None:
        """A ``response.created`` that no create asked for, on a lane whose last
        turn ended: the provider continues that turn by itself (steering's
        automatic successor). It gets a turn of its own, carrying its
        predecessor's request, so its answer goes through the response filters
        like any other. Its lane's turns, or None. (``event`` is parsed whenever
        a lane has ended, see ``_lane_of``.)"""
        if event is None or event.get("type") != OPENS:
            return None
        before = self.ended.pop(lane, None)
        if before is None:
            return None
        turns = self.lanes[lane] = deque([before.successor()])
        return turns

    def _in_flight(self) -> bool:
        return bool(self.lanes)

    def _lane_of(self, raw: bytes) -> tuple[Any, dict | None]:
        """The lane a provider event belongs to (``_NO_LANE`` if none is busy), and
        the event parsed if it had to be. Before any turn ended, with one lane busy
        it is that one; otherwise the event's ``stream_id`` says (a lane whose turn
        ended may be starting a successor)."""
        if len(self.lanes) <= 1 and not self.ended:
            return next(iter(self.lanes), _NO_LANE), None
        try:
            event = loads(raw)  # a lone surrogate escape is still read, as the event hooks read it
        except (ValueError, RecursionError):
            return _NO_LANE, None
        if not isinstance(event, dict):
            return _NO_LANE, None
        return _lane(event), event

    def end_all(self) -> None:
        """At the session's end: every turn still in flight ends (its records, its manifest)."""
        lanes, self.lanes = self.lanes, {}
        for turns in lanes.values():
            for ft in turns:
                ft.finish()

    async def _client_error(self, status: int, message: str, lane: str | None = None) -> None:
        try:
            await self.client.send_str(ws_error_frame(status, message, lane).decode())
        except ConnectionError:
            pass


_NO_LANE = object()  # an event that no busy lane is waiting for
ENDED_LANES = 16  # lanes whose last ended turn is kept for a successor


_lane = ws_lane


def _json_object(data: bytes) -> bool:
    """Whether a binary frame may hold a JSON object (its first non-blank byte
    is ``{``), looking at its head only: a large frame is not copied for it."""
    return data[:64].lstrip()[:1] == b"{"
