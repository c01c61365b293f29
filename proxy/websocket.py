"""Responses over WebSocket (what Codex's built-in OpenAI provider tries first).

The client sends ``{"type": "response.create", ...}`` frames; each is one turn
and goes through the same request pipeline as ``POST /v1/responses``; every
server event frame goes through the response-event hooks. A route with
``websocket = false`` refuses the upgrade at once with 426, so the client
falls back to HTTP immediately instead of retrying.
"""
from __future__ import annotations

import asyncio
import logging

import aiohttp
import orjson
from aiohttp import WSMsgType, web

from ctxproxy.filters import FilterError, Turn

from .adapters import ADAPTERS, AdapterError
from .errors import error_response, translate_upstream
from .relay import Relay, upstream_headers, upstream_url
from .routing import Match

log = logging.getLogger("ctxproxy.proxy")

_WS_HANDSHAKE = ("sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-accept")
_TURN_END = ("response.completed", "response.failed", "response.incomplete", "error")


def is_upgrade(request: web.Request) -> bool:
    return request.method == "GET" and request.headers.get("upgrade", "").lower() == "websocket"


async def handle_ws(request: web.Request, match: Match, relay: Relay) -> web.StreamResponse:
    route = match.route
    if not route.config.websocket or not match.upstream_path.endswith("/responses"):
        resp = error_response("responses", 426, "ctxproxy: WebSocket transport is off for this route; use HTTP")
        resp.headers["Upgrade"] = "websocket"
        return resp
    headers = upstream_headers(request.headers, route, parse_response=False)
    for h in _WS_HANDSHAKE:
        headers.pop(h, None)
    url = upstream_url(request, match)
    url = url.with_scheme("wss" if url.scheme == "https" else "ws")
    try:
        upstream = await relay.session.ws_connect(url, headers=headers, autoping=True, max_msg_size=0)
    except aiohttp.WSServerHandshakeError as exc:  # the provider said no: say the same, at once
        return error_response("responses", exc.status or 502, f"upstream refused the WebSocket ({exc.status})")
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        err = translate_upstream(exc, "connecting")
        return error_response("responses", err.status, err.message)

    client = web.WebSocketResponse(autoping=True, max_msg_size=0)
    await client.prepare(request)
    session = _WsSession(request, match, relay, client, upstream)
    try:
        await session.run()
    finally:
        await upstream.close()
        session.end_turn()
    return client


class _WsSession:
    def __init__(self, request, match, relay, client, upstream):
        self.request = request
        self.match = match
        self.relay = relay
        self.client = client
        self.upstream = upstream
        self.pipeline = relay.pipelines[match.route.name]
        self.turn: Turn | None = None
        self.state = None

    async def run(self) -> None:
        up = asyncio.ensure_future(self._pump_up())
        down = asyncio.ensure_future(self._pump_down())
        done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        for t in pending:
            t.cancel()
        for t in pending:
            try:
                await t
            except (asyncio.CancelledError, Exception):
                pass
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                log.warning("websocket session ended: %s", type(t.exception()).__name__)

    async def _pump_up(self) -> None:
        async for msg in self.client:
            if msg.type == WSMsgType.TEXT:
                frame = await self._on_client_frame(msg.data)
                if frame is None:
                    continue
                await self.upstream.send_str(frame)
            elif msg.type == WSMsgType.BINARY:
                await self.upstream.send_bytes(msg.data)
            else:
                break
        await self.upstream.close()

    async def _on_client_frame(self, text: str) -> str | None:
        """Run the request pipeline on a response.create; None if refused."""
        raw = text.encode("utf-8", "surrogatepass")
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            asyncio.ensure_future(self._client_error(400, "frame is not valid JSON"))
            return None
        if not isinstance(data, dict) or data.get("type") != "response.create":
            return text
        self.end_turn()
        adapter = ADAPTERS["responses"]
        view = adapter.request(data, raw)
        turn = Turn(api="responses", route=self.match.route.name, path=self.request.rel_url.raw_path,
                    headers=self.request.headers, request=view, tokens=self.relay.tokens,
                    services=self.relay.services, tenant_fixed=self.match.route.config.tenant, streamed=True)
        try:
            await self.pipeline.run_request_async(turn, reparse=lambda: adapter.parse_request(raw))
        except (FilterError, AdapterError) as exc:
            status = getattr(exc, "status", 400)
            message = f"ctxproxy {exc.filter_name}: {exc.message}" if isinstance(exc, FilterError) else str(exc)
            asyncio.ensure_future(self._client_error(status, message))
            return None
        self.turn = turn
        self.state = adapter.stream()
        return turn.request.to_bytes().decode("utf-8", "surrogatepass") if turn.request.changed else text

    async def _pump_down(self) -> None:
        async for msg in self.upstream:
            if msg.type == WSMsgType.TEXT:
                for frame in self._on_server_frame(msg.data):
                    await self.client.send_str(frame)
            elif msg.type == WSMsgType.BINARY:
                await self.client.send_bytes(msg.data)
            else:
                break
        if self.turn is not None:  # the provider went away mid-turn: tell the client
            await self._client_error(502, "upstream closed the WebSocket mid-response")
        await self.client.close()

    def _on_server_frame(self, text: str) -> list[str]:
        turn = self.turn
        if turn is None or not self.pipeline.has_event_hooks:
            if turn is not None and any(f'"{t}"' in text for t in _TURN_END):
                self.end_turn()
            return [text]
        raw = text.encode("utf-8", "surrogatepass")
        ev = self.state.event(None, raw, raw)
        out = [e.json_bytes().decode("utf-8", "surrogatepass") if e.changed else text
               for e in self.pipeline.run_event(turn, ev)]
        if ev.type in _TURN_END:
            self.end_turn()
        return out

    def end_turn(self) -> None:
        if self.turn is not None:
            self.pipeline.run_end(self.turn)
            self.turn = None

    async def _client_error(self, status: int, message: str) -> None:
        err = ADAPTERS["responses"].error_body(status, message)["error"]
        frame = {"type": "error", "status": status, "error": err}
        try:
            await self.client.send_str(orjson.dumps(frame).decode())
        except ConnectionError:
            pass


