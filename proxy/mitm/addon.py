"""The mitmproxy addon of transparent mode: provider calls through the filters.

mitmproxy calls one method per hook (``request``, ``responseheaders``, …);
this class implements the ones the turn needs:

- ``tls_clienthello``: a host the config does not name (or names in ``[mitm]
  passthrough``), and a connection from a program named in ``[mitm]
  passthrough_programs``, is passed through as TLS, undecrypted
  (``ignore_connection``): its certificate and bytes reach the client untouched.
- ``tls_failed_client``: a client refused our certificate — it does not trust
  the CA, or pins its provider's certificate. One log line says which client
  and what to set. Nothing else changes: its next connections, and every
  other client's, are intercepted as before (fail closed; all local agents
  share 127.0.0.1, so an address cannot tell one from another).
- ``request``: a model call runs the request filters, as in ``serve``; a
  refused one is answered here in the caller's format.
- ``responseheaders``: an event stream is relayed through the response
  filters as it arrives (``flow.response.stream`` set to a callable); other
  bodies stream on as they come, except a model call's JSON answer, which the
  ``response`` hook filters whole.
- ``websocket_*``: the Responses WebSocket, each frame through the same
  lanes and turns as ``serve``'s (``proxy/ws_lanes.py``).

The turn ends (its manifest, records and span) once the client has its answer.
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any, Callable

from mitmproxy import ctx, http, tls

from ctxproxy.config import Config

from ..engine import BYTES, EVENTS, WHOLE, Engine, Exchange, Forward
from .ca import trust_hint
from .hosts import HostRouter
from .peers import Peer, find_peer
from ..auth import KeyRefusal
from ..replies import TURN_HEADER, ProxyError, Reply, error_reply, family_api, refusal_reply
from ..ws_lanes import WsLanes

log = logging.getLogger("ctxproxy.mitm")

META = "ctxproxy"  # our keys in flow.metadata


def _fail_closed(hook: Callable) -> Callable:
    """mitmproxy logs a hook that raises and goes on with the flow as it is: for
    us that would forward a request, or relay an answer, the filters never saw.
    A hook that fails ends its flow instead: answered here in the caller's
    format while nothing was sent yet, else cut."""
    def failed(flow: http.HTTPFlow) -> None:
        log.exception("%s hook failed; the exchange is ended, not passed on unfiltered", hook.__name__)
        ex = flow.metadata.get(META)
        if hook.__name__ == "request" or (hook.__name__ == "response" and not flow.response.stream):
            _answer(flow, error_reply(ex.error_api if ex is not None else "chat", 500,
                                      "ctxproxy failed on this exchange; it was not forwarded",
                                      ex.turn.turn_id if ex is not None else ""))
        else:
            flow.kill()

    if inspect.iscoroutinefunction(hook):
        @functools.wraps(hook)
        async def guarded_async(self: Any, flow: http.HTTPFlow) -> None:
            try:
                await hook(self, flow)
            except Exception:
                failed(flow)
        return guarded_async

    @functools.wraps(hook)
    def guarded(self: Any, flow: http.HTTPFlow) -> None:
        try:
            hook(self, flow)
        except Exception:
            failed(flow)
    return guarded


class CtxproxyAddon:
    def __init__(self, cfg: Config, engine: Engine, hosts: HostRouter):
        self.cfg = cfg
        self.engine = engine  # the turn engine, as serve's; mitmproxy is its transport
        self.hosts = hosts
        self.passthrough_programs = frozenset(cfg.mitm.passthrough_programs)
        self._passed: set[tuple[str, str]] = set()  # (executable, host) passed through, logged once each
        self._peers: dict[Any, Peer] = {}  # client address -> the program holding it, while connected
        self.ready = asyncio.Event()

    def running(self) -> None:
        self.ready.set()

    # -- TLS: decrypt only the providers --------------------------------------

    async def tls_clienthello(self, data: tls.ClientHelloData) -> None:
        host, port = _server_of(data.context)
        sni = data.client_hello.sni or host
        if not self.hosts.intercepts(sni, port):
            data.ignore_connection = True
            return
        # Which program this is, looked up before it sees our certificate: one that refuses
        # it has closed its socket by the time we hear of it. Local clients only (a few ms
        # per new provider connection, which the SDKs keep open); a remote one is an address.
        peer = data.context.client.peername
        if not (peer and _loopback(peer[0])):
            return
        found = self._peers[peer] = await asyncio.to_thread(find_peer, peer)
        if found.exe and found.exe in self.passthrough_programs:  # an unread executable never matches
            data.ignore_connection = True
            if (found.exe, sni) not in self._passed and len(self._passed) < 4096:
                self._passed.add((found.exe, sni))
                log.warning("passing %s's connections to %s through UNFILTERED, undecrypted "
                            "([mitm] passthrough_programs)", found, sni)

    def client_disconnected(self, client: Any) -> None:
        self._peers.pop(client.peername, None)

    def tls_failed_client(self, data: tls.TlsData) -> None:
        if not data.context.server.tls_established:
            return  # the provider's handshake failed first (mitmproxy logs it): not the client's doing
        host = data.conn.sni or _server_of(data.context)[0] or "?"
        peer = data.conn.peername
        who = self._peers.pop(peer, None) or find_peer(peer)
        program = f"its executable {who.exe} in [mitm] passthrough_programs, or " if who.exe else ""
        log.warning("client %s refused ctxproxy's certificate for %s (%s): it does not trust the CA. %s. "
                    "Its connections keep failing; nothing is passed through unfiltered. If it pins certificates "
                    "(unsupported), list %s%s in [mitm] passthrough to let it through undecrypted.",
                    who, host, data.conn.error or "handshake failed", trust_hint(self.cfg), program, host)

    # -- HTTP -----------------------------------------------------------------

    @_fail_closed
    async def request(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        match = self.hosts.match(req.host, req.port, req.path, req.method)
        if match is None:
            return  # not a provider host: mitmproxy forwards it as it came
        keyring = self.engine.services.keyring
        if keyring is not None and keyring.required:  # keys mode: before anything is read or forwarded
            principal = keyring.authenticate(req.headers, _client_ip(flow), match.route)
            if isinstance(principal, KeyRefusal):
                _answer(flow, refusal_reply(principal, family_api(match.api, match.route.family)))
                return
            match = match._replace(route=keyring.route_for(principal, match.route), principal=principal)
        flow.metadata[META + ".match"] = match  # the WebSocket session, if one follows, takes it
        if _is_upgrade(req):
            if not match.route.config.websocket or not match.upstream_path.endswith("/responses"):
                _answer(flow, error_reply("responses", 426, "ctxproxy: WebSocket transport is off for this route; "
                                                            "use HTTP"), upgrade=True)
            return
        if match.api is None:
            return  # models, files, count_tokens' siblings…: untouched, as in serve
        raw_path, _, query = req.path.partition("?")
        ex = self.engine.begin(match, req.method, raw_path, query, req.headers.copy())
        flow.metadata[META] = ex
        raw = req.raw_content or b""
        if len(raw) > self.engine.max_body:
            _answer(flow, ex.fail(ProxyError(413, "request body is larger than the proxy's limit "
                                                  "(server.max_body_bytes)", "body_too_large")))
            return
        out = await ex.request(raw)
        if isinstance(out, Reply):  # refused here, in the caller's format
            _answer(flow, out)
            return
        _forward(req, out)

    @_fail_closed
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        ex: Exchange | None = flow.metadata.get(META)
        if ex is None:
            return
        resp = flow.response
        answer = ex.answer(resp.status_code, resp.headers)
        # Only the turn id is added: the framing headers (transfer-encoding, content-length,
        # connection) stay mitmproxy's, which reads the provider's body and keeps its
        # connection by them and frames the client's side itself.
        resp.headers[TURN_HEADER] = answer.headers[TURN_HEADER]
        if answer.mode == EVENTS:
            resp.stream = _EventStream(ex)
            if "content-length" in resp.headers:  # the filters may change the events' length
                del resp.headers["content-length"]
                if flow.request.http_version == "HTTP/1.1":
                    resp.headers["transfer-encoding"] = "chunked"
        elif answer.mode == BYTES:
            resp.stream = True
        flow.metadata[META + ".mode"] = answer.mode

    @_fail_closed
    def response(self, flow: http.HTTPFlow) -> None:
        ex: Exchange | None = flow.metadata.pop(META, None)
        if ex is None:
            return
        if flow.metadata.pop(META + ".mode", None) == WHOLE:
            body = ex.whole(flow.response.raw_content or b"")
            if body is not flow.response.raw_content:
                flow.response.raw_content = body
            flow.response.headers["content-length"] = str(len(body))
        ex.upstream_done()
        self._finish_soon(ex)

    def error(self, flow: http.HTTPFlow) -> None:
        """The exchange failed (provider unreachable or cut, client gone)."""
        ex: Exchange | None = flow.metadata.pop(META, None)
        if ex is None:
            return
        msg = flow.error.msg if flow.error else "exchange failed"
        if ex.turn.error_type is None:
            ex.turn.error_type = "client_disconnected" if "client" in msg.lower() else "upstream_dropped"
        log.warning("turn %s: %s (%s)", ex.turn.turn_id, msg, flow.request.pretty_host)
        self._finish_soon(ex)

    @staticmethod
    def _finish_soon(ex: Exchange) -> None:
        """After the hook returns, so the client's last bytes go out first."""
        asyncio.get_running_loop().call_soon(_finish, ex)

    # -- WebSocket ------------------------------------------------------------

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        match = flow.metadata.get(META + ".match")  # its upgrade request's, keys checked
        if match is None or not match.upstream_path.endswith("/responses"):
            return
        try:  # mitmproxy holds the provider's socket: the lanes get no way to send there
            flow.metadata[META + ".ws"] = WsLanes(self.engine, match, req.path.split("?", 1)[0], req.headers,
                                                  _ClientSide(flow).send_str)
        except Exception:  # no session, no filters: the socket must not carry frames past them
            log.exception("websocket: the session could not start; the connection is closed")
            flow.kill()

    async def websocket_message(self, flow: http.HTTPFlow) -> None:
        session: WsLanes | None = flow.metadata.get(META + ".ws")
        messages = flow.websocket.messages
        msg = messages[-1]
        del messages[:-1]  # mitmproxy keeps every frame of a flow; a long session must not grow
        if session is None or msg.injected:
            return
        try:
            if msg.from_client:
                frames = await (session.client_frame(msg.text) if msg.is_text else session.client_binary(msg.content))
            else:
                frames = await (session.server_frame(msg.text) if msg.is_text else session.server_binary(msg.content))
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
        session: WsLanes | None = flow.metadata.pop(META + ".ws", None)
        if session is not None:
            session.end_all()


class _EventStream:
    """``flow.response.stream`` for an event stream: each chunk through the
    engine's response filters as it arrives; ``b""`` is the end of the body.
    A failure ends the stream with the engine's error event (nothing after it
    is relayed)."""

    __slots__ = ("ex", "failed")

    def __init__(self, ex: Exchange):
        self.ex = ex
        self.failed = False

    def __call__(self, chunk: bytes) -> bytes | list:
        # Nothing to send is [] and never b"": mitmproxy would write b"" to an
        # HTTP/1.1 client as an empty chunk, the chunked body's terminator.
        if self.failed:
            return []
        try:
            out = self.ex.events(chunk) if chunk else self.ex.events_end()
        except Exception as exc:
            self.failed = True
            out = self.ex.cut(exc)
        return out or []


class _ClientSide:
    """What the WebSocket session sends its own frames to the client through
    (an error for a refused create): injected into the mitmproxy flow."""

    def __init__(self, flow: http.HTTPFlow):
        self.flow = flow

    async def send_str(self, text: str) -> None:
        ctx.master.commands.call("inject.websocket", self.flow, True, text.encode("utf-8", "surrogatepass"), True)


def _finish(ex: Exchange) -> None:
    try:
        ex.finish()
    except Exception:
        log.exception("turn %s: ending the turn failed", ex.turn.turn_id)


def _forward(req: http.Request, out: Forward) -> None:
    """The request as the engine forwards it, onto the flow: its headers (ours
    dropped, a route's key injected, hop-by-hop ones handled by mitmproxy) and
    body. The URL stays the client's: mitmproxy sends it to the host it named."""
    host = req.headers.get("host")
    _set_headers(req.headers, out.headers)
    if host is not None:  # the engine drops Host (its own client sets it); HTTP/1.1 needs it here
        req.headers["host"] = host
    body = out.body or b""
    if body is not req.raw_content:
        req.raw_content = body
    if body or req.method in ("POST", "PUT", "PATCH"):
        req.headers["content-length"] = str(len(body))


def _set_headers(headers: http.Headers, new: Any) -> None:
    """Replace every field of mitmproxy's ``headers`` with ``new``'s (a CIMultiDict)."""
    headers.fields = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in new.items())


def _answer(flow: http.HTTPFlow, reply: Reply, upgrade: bool = False) -> None:
    """Answer ``flow`` here with the engine's local ``Reply``."""
    fields = list(reply.headers) + ([("upgrade", "websocket")] if upgrade else [])
    flow.response = http.Response.make(reply.status, reply.body,
                                       http.Headers([(k.encode("latin-1"), v.encode("latin-1")) for k, v in fields]))




def _is_upgrade(req: http.Request) -> bool:
    return req.method == "GET" and req.headers.get("upgrade", "").lower() == "websocket"


def _server_of(context: Any) -> tuple[str, int]:
    addr = context.server.address
    return (addr[0], addr[1]) if addr else ("", 443)


def _loopback(ip: str) -> bool:
    return ip.startswith("127.") or ip in ("::1", "localhost") or ip.startswith("::ffff:127.")


def _client_ip(holder: Any) -> str:
    """The client's address, from a flow or a connection context."""
    peer = holder.client_conn.peername if hasattr(holder, "client_conn") else holder.client.peername
    return peer[0] if peer else ""
