"""The mitmproxy addon of transparent mode: provider calls through the filters.

mitmproxy calls one method per hook (``request``, ``responseheaders``, …);
this class implements the ones the turn needs:

- ``tls_clienthello``: a host the config does not name is passed through as
  TLS, undecrypted (``ignore_connection``): its certificate and bytes reach
  the client untouched.
- ``tls_failed_client``: a client refused our certificate — it does not trust
  the CA, or pins its provider's certificate. One log line says which client
  and what to set; with ``[mitm] pinned_passthrough`` its next connections to
  that host are passed through (unfiltered) instead of failing again.
- ``request``: a model call runs the request filters, as in ``serve``; a
  refused one is answered here in the caller's format.
- ``responseheaders``: an event stream is relayed through the response
  filters as it arrives (``flow.response.stream`` set to a callable); other
  bodies stream on as they come, except a model call's JSON answer, which the
  ``response`` hook filters whole.
- ``websocket_*``: the Responses WebSocket, each frame through the same
  session logic as ``serve``'s.

The turn ends (its manifest, records and span) once the client has its answer.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from mitmproxy import ctx, http, tls

from ctxproxy.config import Config
from ctxproxy.filters import FilterError, Pipeline, Turn

from .adapters import ADAPTERS, AdapterError
from .content_coding import decode_body, is_identity
from .errors import TURN_HEADER, ProxyError, UpstreamError, family_api, response_for
from .mitm_ca import trust_hint
from .mitm_hosts import HostRouter
from .peers import describe_peer
from .relay import Relay, _EventRelay
from .routing import Match
from .sse import SSEDecoder
from .websocket import _WsSession

log = logging.getLogger("ctxproxy.mitm")

META = "ctxproxy"  # our key in flow.metadata


@dataclass
class _Exchange:
    """One model call's turn, from the request hook to the end of its answer."""
    turn: Turn
    pipeline: Pipeline
    local: bool = False  # answered by ctxproxy (a refusal): no response filters
    t0_ns: int = 0  # when the request left for the provider (the upstream span)

    def upstream_done(self) -> None:
        if self.t0_ns:
            self.turn.spans.append(("upstream", self.t0_ns, time.time_ns()))
            self.t0_ns = 0


class CtxproxyAddon:
    def __init__(self, cfg: Config, relay: Relay, hosts: HostRouter):
        self.cfg = cfg
        self.relay = relay  # the pipelines, token counter and services (its session is unused here)
        self.hosts = hosts
        self.max_body = cfg.server.max_body_bytes
        self.pinned: set[tuple[str, str]] = set()  # (client ip, host) that refused our certificate
        self._peers: dict[Any, str] = {}  # client address -> "program (pid) at address", while connected
        self.ready = asyncio.Event()

    def running(self) -> None:
        self.ready.set()

    # -- TLS: decrypt only the providers --------------------------------------

    async def tls_clienthello(self, data: tls.ClientHelloData) -> None:
        host, port = _server_of(data.context)
        sni = data.client_hello.sni or host
        if not self.hosts.intercepts(sni, port) or (_client_ip(data.context), sni) in self.pinned:
            data.ignore_connection = True
            return
        # Which program this is, looked up before it sees our certificate: one that refuses
        # it has closed its socket by the time we hear of it. Local clients only (a few ms
        # per new provider connection, which the SDKs keep open); a remote one is an address.
        peer = data.context.client.peername
        if peer and _loopback(peer[0]):
            self._peers[peer] = await asyncio.to_thread(describe_peer, peer)

    def client_disconnected(self, client: Any) -> None:
        self._peers.pop(client.peername, None)

    def tls_failed_client(self, data: tls.TlsData) -> None:
        host = data.conn.sni or _server_of(data.context)[0] or "?"
        peer = data.conn.peername
        who = self._peers.pop(peer, None) or describe_peer(peer)
        action = ""
        if self.cfg.mitm.pinned_passthrough:
            self.pinned.add((_client_ip(data.context), host))
            action = (f" If it pins certificates (unsupported), its next connections to {host} are passed "
                      f"through UNFILTERED ([mitm] pinned_passthrough).")
        log.warning("client %s refused ctxproxy's certificate for %s (%s): it does not trust the CA. %s.%s",
                    who, host, data.conn.error or "handshake failed", trust_hint(self.cfg), action)

    # -- HTTP -----------------------------------------------------------------

    async def request(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        match = self.hosts.match(req.host, req.port, req.path, req.method)
        if match is None:
            return  # not a provider host: mitmproxy forwards it as it came
        if _is_upgrade(req):
            if not match.route.config.websocket or not match.upstream_path.endswith("/responses"):
                _answer(flow, response_for(ProxyError(426, "ctxproxy: WebSocket transport is off for this route; "
                                                           "use HTTP"), "responses"), upgrade=True)
            return
        if match.api is None:
            return  # count_tokens' sibling paths, models, files…: untouched, as in serve
        pipeline = (self.relay.aux_pipelines if match.auxiliary else self.relay.pipelines)[match.route.name]
        route = match.route
        turn = Turn(api=match.api, route=route.name, path=req.path.split("?", 1)[0], headers=req.headers.copy(),
                    request=None, tokens=self.relay.tokens, services=self.relay.services,
                    tenant_fixed=route.config.tenant)
        ex = flow.metadata[META] = _Exchange(turn, pipeline)
        try:
            raw = req.raw_content or b""
            coding = req.headers.get("content-encoding")
            if len(raw) > self.max_body:
                raise ProxyError(413, "request body is larger than the proxy's limit (server.max_body_bytes)",
                                 "body_too_large")
            plain = raw if not coding or is_identity(coding) else decode_body(raw, coding, self.max_body)
            adapter = ADAPTERS[match.api]
            turn.request = adapter.parse_request(plain)
            turn.streamed = turn.request.stream
            await pipeline.run_request_async(turn, reparse=lambda: adapter.parse_request(plain))
            body = turn.request.to_bytes()
        except (ProxyError, AdapterError, FilterError) as exc:
            self._refuse(flow, ex, exc, match)
            return
        except Exception as exc:  # never a traceback to the client
            log.exception("turn %s: unexpected error", turn.turn_id)
            self._refuse(flow, ex, exc, match)
            return
        _upstream_headers(req.headers, match, pipeline)
        if body is not plain:  # edited: sent as plain JSON
            if coding:
                del req.headers["content-encoding"]
            req.raw_content = body
            req.headers["content-length"] = str(len(body))
        ex.t0_ns = time.time_ns()

    def _refuse(self, flow: http.HTTPFlow, ex: _Exchange, exc: BaseException, match: Match) -> None:
        turn = ex.turn
        turn.error_type = getattr(exc, "error_type", type(exc).__name__)
        ex.local = True
        _answer(flow, response_for(exc, family_api(match.api, match.route.family), turn.turn_id))

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        ex: _Exchange | None = flow.metadata.get(META)
        if ex is None or ex.local:
            return
        resp = flow.response
        turn = ex.turn
        turn.status = resp.status_code
        if ex.t0_ns:
            turn.timings_ms["upstream_headers"] = (time.time_ns() - ex.t0_ns) / 1e6
        resp.headers[TURN_HEADER] = turn.turn_id
        ctype = resp.headers.get("content-type", "")
        plain = is_identity(resp.headers.get("content-encoding", "identity") or "identity")
        if ctype.startswith("text/event-stream") and plain:
            resp.stream = _EventStream(turn, ex.pipeline)
            if "content-length" in resp.headers:  # the filters may change the events' length
                del resp.headers["content-length"]
            if flow.request.http_version == "HTTP/1.1" and "transfer-encoding" not in resp.headers:
                resp.headers["transfer-encoding"] = "chunked"
        elif not (plain and resp.status_code < 300 and "json" in ctype and ex.pipeline.has_response_hooks):
            resp.stream = True  # bytes on as they come; only a filtered JSON answer is read whole

    def response(self, flow: http.HTTPFlow) -> None:
        ex: _Exchange | None = flow.metadata.pop(META, None)
        if ex is None:
            return
        ex.upstream_done()
        if not ex.local and not flow.response.stream:
            self._filter_whole(ex, flow.response)
        self._end_soon(ex)

    def _filter_whole(self, ex: _Exchange, resp: http.Response) -> None:
        turn = ex.turn
        try:
            view = ADAPTERS[turn.api].parse_response(resp.raw_content or b"")
            if view is None:
                return
            ex.pipeline.run_response(turn, view)
            body = view.to_bytes()
            if body is not resp.raw_content:
                resp.raw_content = body
                resp.headers["content-length"] = str(len(body))
            rid = view.response_id()
            if rid:
                turn.note_response_id(rid)
        except Exception as exc:  # a required response filter failed: the answer does not leave
            turn.error_type = getattr(exc, "error_type", type(exc).__name__)
            if not isinstance(exc, FilterError):
                log.exception("turn %s: failed while filtering the answer", turn.turn_id)
            err = response_for(exc, turn.api, turn.turn_id)
            resp.status_code = err.status
            resp.headers["content-type"] = "application/json"
            resp.raw_content = err.body
            resp.headers["content-length"] = str(len(err.body))

    def error(self, flow: http.HTTPFlow) -> None:
        """The exchange failed (provider unreachable or cut, client gone)."""
        ex: _Exchange | None = flow.metadata.pop(META, None)
        if ex is None:
            return
        msg = flow.error.msg if flow.error else "exchange failed"
        if ex.turn.error_type is None:
            ex.turn.error_type = "client_disconnected" if "client" in msg.lower() else "upstream_error"
        log.warning("turn %s: %s (%s)", ex.turn.turn_id, msg, flow.request.pretty_host)
        ex.upstream_done()
        self._end_soon(ex)

    def _end_soon(self, ex: _Exchange) -> None:
        """After the hook returns, so the client's last bytes go out first."""
        asyncio.get_running_loop().call_soon(_end, ex)

    # -- WebSocket ------------------------------------------------------------

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        match = self.hosts.match(req.host, req.port, req.path, "POST")  # route and path, as a model call
        if match is None or match.api != "responses":
            return
        shim = SimpleNamespace(rel_url=SimpleNamespace(raw_path=req.path.split("?", 1)[0]), headers=req.headers)
        flow.metadata[META + ".ws"] = _WsSession(shim, match, self.relay, _ClientSide(flow), None)

    async def websocket_message(self, flow: http.HTTPFlow) -> None:
        session: _WsSession | None = flow.metadata.get(META + ".ws")
        messages = flow.websocket.messages
        msg = messages[-1]
        del messages[:-1]  # mitmproxy keeps every frame of a flow; a long session must not grow
        if session is None or msg.injected:
            return
        try:
            if msg.from_client:
                frames = await (session._on_client_frame(msg.text) if msg.is_text
                                else session._on_client_binary(msg.content))
            else:
                frames = await (session._on_server_frame(msg.text) if msg.is_text
                                else session._on_server_binary(msg.content))
        except Exception:
            log.exception("websocket frame: the filters failed; the frame is dropped")
            msg.drop()
            return
        if not frames:
            msg.drop()
            return
        first, *rest = frames
        msg.content = first.encode("utf-8", "surrogatepass") if isinstance(first, str) else first
        for frame in rest:  # a filter added events (redaction's flushed tail): after this one
            data = frame.encode("utf-8", "surrogatepass") if isinstance(frame, str) else frame
            ctx.master.commands.call("inject.websocket", flow, not msg.from_client, data, msg.is_text)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        session: _WsSession | None = flow.metadata.pop(META + ".ws", None)
        if session is not None:
            session.end_all()


class _EventStream:
    """``flow.response.stream`` for an event stream: each chunk through the
    response filters as it arrives; ``b""`` is the end of the body. A stream
    that stops before its terminal event, or a filter that fails, ends with an
    error event in the caller's format (nothing after it is relayed)."""

    def __init__(self, turn: Turn, pipeline: Pipeline):
        self.turn = turn
        self.relay = _EventRelay(turn, pipeline, ADAPTERS[turn.api].stream())
        self.decoder = SSEDecoder()
        self.failed = False

    def __call__(self, chunk: bytes) -> bytes | list:
        # Nothing to send is [] and never b"": mitmproxy would write b"" to an
        # HTTP/1.1 client as an empty chunk, the chunked body's terminator.
        if self.failed:
            return []
        try:
            if chunk:
                return self.relay.feed(self.decoder.decode(chunk)) or []
            rest = self.decoder.flush()
            out = self.relay.feed([rest]) if rest is not None else b""
            if (self.turn.status or 0) < 300 and not self.relay.terminated:
                return out + self._failed(UpstreamError(502, "upstream ended the stream early", "upstream_dropped"))
            return out or []
        except FilterError as exc:
            return self._failed(ProxyError(exc.status, f"ctxproxy {exc.filter_name}: {exc.message}", "filter_failed"))
        except Exception:
            log.exception("turn %s: failed while relaying the answer", self.turn.turn_id)
            return self._failed(ProxyError(500, "ctxproxy failed while relaying the answer", "internal_error"))

    def _failed(self, exc: ProxyError) -> bytes:
        self.failed = True
        self.turn.error_type = exc.error_type
        log.warning("turn %s: %s", self.turn.turn_id, exc.message)
        return ADAPTERS[self.turn.api].stream_error_bytes(exc.status, exc.message, self.turn.state.get("response_id"),
                                                         self.relay.sent)


class _ClientSide:
    """What the WebSocket session sends its own frames to the client through
    (an error for a refused create): injected into the mitmproxy flow."""

    def __init__(self, flow: http.HTTPFlow):
        self.flow = flow

    async def send_str(self, text: str) -> None:
        ctx.master.commands.call("inject.websocket", self.flow, True, text.encode("utf-8", "surrogatepass"), True)


def _end(ex: _Exchange) -> None:
    try:
        ex.pipeline.run_end(ex.turn)
    except Exception:
        log.exception("turn %s: ending the turn failed", ex.turn.turn_id)


def _upstream_headers(headers: http.Headers, match: Match, pipeline: Pipeline) -> None:
    """The request's headers as the provider gets them, edited in place: our
    ``X-Ctx-*`` hints go, the answer is asked for uncompressed when filters
    read it, and the route's key replaces the caller's where it injects one."""
    for name in [k for k in headers.keys() if k.lower().startswith("x-ctx-")]:
        del headers[name]
    if pipeline.has_event_hooks or pipeline.has_response_hooks:
        headers["accept-encoding"] = "identity"
    route = match.route
    if route.injected_key:
        for name in ("authorization", "x-api-key"):
            if name in headers:
                del headers[name]
        header = route.key_header
        headers[header] = f"Bearer {route.injected_key}" if header == "authorization" else route.injected_key


def _answer(flow: http.HTTPFlow, resp: Any, upgrade: bool = False) -> None:
    """Answer ``flow`` here with an aiohttp ``web.Response`` built by ``response_for``."""
    headers = {k: v for k, v in resp.headers.items()}
    headers["content-type"] = "application/json"
    if upgrade:
        headers["upgrade"] = "websocket"
    flow.response = http.Response.make(resp.status, resp.body, headers)


def _is_upgrade(req: http.Request) -> bool:
    return req.method == "GET" and req.headers.get("upgrade", "").lower() == "websocket"


def _server_of(context: Any) -> tuple[str, int]:
    addr = context.server.address
    return (addr[0], addr[1]) if addr else ("", 443)


def _loopback(ip: str) -> bool:
    return ip.startswith("127.") or ip in ("::1", "localhost") or ip.startswith("::ffff:127.")


def _client_ip(context: Any) -> str:
    peer = context.client.peername
    return peer[0] if peer else ""
