"""The turn engine: one model call through the filters, with no server framework.

An edge (the aiohttp server in ``relay``/``websocket``, a mitmproxy addon, the
plain-function driver in ``tests/enginedriver.py``) owns the sockets; the
engine owns the turn. One HTTP exchange, driven by any edge:

    engine = Engine(pipelines, tokens, services, transport)   # once, at start-up
    ex = engine.begin(match, method, raw_path, raw_query, headers)  # match: routing.Router.match(...)
    out = await ex.request(body)            # runs the request filters (write-ahead commits awaited)
    if isinstance(out, Reply): send out.status / out.headers / out.body    # local reply, caller's format
    else: forward out.method / out.url / out.headers / out.body            # original bytes if untouched
        # e.g. upstream = await engine.transport.send(out)
    answer = ex.answer(status, upstream_headers)   # -> Answer(mode, status, headers) for the client
        mode EVENTS: for each chunk: send ex.events(chunk), then ex.settle(); at the end send ex.events_end()
        mode WHOLE:  send ex.whole(body)            (response filters run when they hook answers;
                                                     those that only watch it run in ex.finish())
        mode BYTES:  send the chunks as they come   (pass-through, compressed or huge bodies)
        a failure mid-answer: send ex.cut(exc)      (an error event in the caller's format, or b"")
    ex.finish()                                     # always, once: records, manifest, telemetry

``ex.turn`` is the ``filters.Turn`` (``turn_id`` for the ``X-Ctx-Turn-Id``
header, ``error_type`` for the edge to note a client that hung up). Headers
in are any mapping with ``items()``/``get`` (case-insensitive); headers out
are a ``CIMultiDict``. Nothing here raises on client bytes: bad input is a
``Reply``. Only ``asyncio.CancelledError`` (the client went away) propagates.

Responses over WebSocket uses the same engine frame by frame:
``engine.frame_turn(match, raw_path, headers, data, raw, auxiliary)`` runs the
request filters over a ``response.create``/``response.steer`` event (a
``FrameTurn`` with the frame to send on, or an error frame), and
``FrameTurn.server_frame`` passes each provider event through its turn
(and, when the turn answers the proxy's own tool, says what to send the
provider to continue it).

Forwarding upstream sits behind a one-method transport (as httpx's):
``async def send(forward: Forward) -> Upstream``; ``proxy.transport`` has the
pooled aiohttp one, ``FunctionTransport`` wraps a plain async function (a
provider in a test). An ``Upstream`` has ``status``, ``headers``,
``buffered()`` (bytes already received), ``async chunks()``, ``async read()``
and ``release()``; transports raise ``UpstreamError`` when the provider fails.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, NamedTuple, Protocol

from multidict import CIMultiDict

from ctxproxy.filters import FilterError, Pipeline, Services, Turn
from ctxproxy.store import KEY_PREFIX

from .adapters import ADAPTERS, AdapterError
from .adapters.openai_responses import OPENS, ws_error_frame, ws_lane
from .content_coding import decode_body, is_identity
from .replies import TURN_HEADER, ProxyError, Reply, UpstreamError, describe, error_reply, family_api
from .routing import Match
from .sse import RawEvent, SSEDecoder
from .text_runs import Frame, frame

log = logging.getLogger("ctxproxy.proxy")

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "host", "content-length",
    "expect",  # the client's 100-continue was answered here; the provider gets the whole body at once
})
# A non-streamed answer up to this size with a Content-Length is relayed whole;
# larger or unsized ones are relayed chunk by chunk as they arrive.
WHOLE_BODY_MAX = 1 << 20

EVENTS, WHOLE, BYTES = "events", "whole", "bytes"  # Answer.mode


class Forward(NamedTuple):
    """What to send the provider. ``body``: bytes for a model call (the client's
    own bytes when no filter changed them), else whatever the edge passed in
    (a stream of a pass-through's body, or None)."""

    method: str
    url: str  # percent-encoded exactly as the client sent path and query
    headers: CIMultiDict
    body: Any


class Answer(NamedTuple):
    """How to answer the client once the provider's headers are in."""

    mode: str  # EVENTS | WHOLE | BYTES
    status: int
    headers: CIMultiDict


class Upstream(Protocol):
    status: int
    headers: Mapping[str, str]

    def buffered(self) -> bytes: ...
    def chunks(self) -> AsyncIterator[bytes]: ...
    async def read(self) -> bytes: ...
    def release(self) -> None: ...


class Transport(Protocol):
    async def send(self, forward: Forward) -> Upstream: ...


# -- headers -------------------------------------------------------------------

_CREDENTIALS = frozenset({"authorization", "x-api-key"})


def _hop_by_hop(headers: Any) -> frozenset[str]:
    """The standard hop-by-hop headers plus any the Connection header names."""
    named = headers.get("connection")
    if not named:
        return HOP_BY_HOP
    return HOP_BY_HOP | {t.strip().lower() for t in named.split(",") if t.strip()}


def upstream_headers(headers: Any, route: Any, parse_response: bool) -> CIMultiDict:
    drop = _hop_by_hop(headers) if "connection" in headers else HOP_BY_HOP
    out = CIMultiDict()
    for k, v in headers.items():
        lk = k.lower()
        if lk in drop or lk.startswith("x-ctx-"):
            continue
        if KEY_PREFIX in v and lk in _CREDENTIALS:  # a proxy key is never forwarded
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


def upstream_url(match: Match, raw_path_query: str) -> str:
    """The provider URL: the route's upstream, the path after the route prefix,
    and the query exactly as the client encoded them (``%2F`` stays ``%2F``)."""
    return match.route.upstream + match.upstream_path + raw_path_query


def client_headers(upstream: Any, turn_id: str) -> CIMultiDict:
    out = CIMultiDict(upstream)  # copied in C; then the few hop-by-hop names go
    for name in _hop_by_hop(upstream):
        if name in out:
            del out[name]
    out[TURN_HEADER] = turn_id
    return out


def content_length(headers: Mapping[str, str]) -> int:
    try:
        return int(headers.get("content-length", "-1"))
    except ValueError:
        return -1


_LEADING_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*"([A-Za-z0-9_.:-]{1,200})"')


def _leading_id(raw: bytes) -> str | None:
    """A JSON answer's ``id`` when it is the first member (as OpenAI writes a
    Responses object): the response id without parsing a body no filter reads."""
    m = _LEADING_ID.match(raw)
    return m.group(1).decode() if m else None


# -- the engine ----------------------------------------------------------------

class Engine:
    """What every turn needs, built once: the pipelines per route, the token
    counter, the services filters use, and the transport to the providers."""

    def __init__(self, pipelines: Mapping[str, Pipeline], tokens: Any, services: Services | Mapping[str, Any],
                 transport: Transport | None = None, max_body: int | None = None):
        self.pipelines = dict(pipelines)  # route name -> pipeline
        self.aux_pipelines = {name: p.auxiliary() for name, p in self.pipelines.items()}  # count_tokens, compact
        self.tokens = tokens
        self.services = services = Services.of(services)
        self.transport = transport
        config = services.config
        if max_body is None:
            max_body = config.server.max_body_bytes if config is not None else 32 << 20
        self.max_body = max_body  # decoded bodies too
        self.coalesce = config.server.coalesce_deltas if config is not None else True

    def new_turn(self, match: Match, raw_path: str, headers: Mapping[str, str], request: Any = None,
                 api: str | None = None, streamed: bool = False) -> Turn:
        """The one place a turn is made for a request that came in."""
        return Turn.of_request(api if api is not None else (match.api or ""), match.route.name, raw_path, headers,
                               request, self.tokens, self.services, tenant_fixed=match.route.config.tenant,
                               principal=match.principal, streamed=streamed)

    def pipeline_for(self, match: Match) -> Pipeline | None:
        if not match.api:
            return None
        return (self.aux_pipelines if match.auxiliary else self.pipelines)[match.route.name]

    def close(self) -> None:
        """At shutdown, before the store closes: filters finish their background work."""
        for pipeline in self.pipelines.values():
            pipeline.close()

    @staticmethod
    def finish_turn(turn: Turn, pipeline: Pipeline) -> None:
        """The filters settle a turn (records, manifest, telemetry)."""
        pipeline.run_end(turn)

    def begin(self, match: Match, method: str, raw_path: str, raw_query: str, headers: Mapping[str, str],
              continues: bool = False) -> "Exchange":
        """One HTTP exchange (``raw_query`` without its ``?``; "" when none).
        ``continues``: the edge forwards through ``Exchange.send``, so the turn
        may run rounds of a tool the proxy answers itself."""
        ex = Exchange(self, match, method, raw_path, raw_query, headers)
        ex.turn.continues = continues
        return ex

    async def frame_turn(self, match: Match, raw_path: str, headers: Mapping[str, str], data: dict, raw: bytes,
                         auxiliary: bool = False, continues: bool = False) -> "FrameTurn":
        """The request filters over one Responses WebSocket client event
        (``response.create``; ``auxiliary`` for ``response.steer``, which
        reaches the model too but starts no answer). ``continues``: the edge
        sends the provider the creates ``FrameTurn.server_frame`` asks for, so
        the turn may run rounds of a tool the proxy answers itself."""
        pipeline = (self.aux_pipelines if auxiliary else self.pipelines)[match.route.name]
        return await FrameTurn.start(self, pipeline, match, raw_path, headers, data, raw, continues)


def engine_for(cfg: Any, services: Services | Mapping[str, Any], transport: Transport | None = None,
               routes: Mapping[str, Any] | None = None) -> Engine:
    """The engine of a config: one pipeline per route (built once; a reload
    swaps the engine whole), and what turns need loaded now, not in the first
    turn: each filter's ``warm()`` (the redaction engine's stream regexes) and
    the token counter if a filter counts (a pipeline that never counts skips
    its ~70 MB). Every edge (the aiohttp server and its workers, the mitmproxy
    addon, the tests' driver) builds its engine here, at start-up."""
    from ctxproxy.filters import build_pipeline, filter_configs
    from ctxproxy.filters.tokens import TokenCounter

    from .routing import Router

    configs = filter_configs(cfg)
    services = Services.of(services)
    pipelines: dict[str, Pipeline] = {}
    try:
        for name, route in (routes if routes is not None else Router(cfg).routes).items():
            pipelines[name] = build_pipeline(route.config.filters or cfg.pipeline.request, configs, services)
        warmed: set[int] = set()
        for p in pipelines.values():
            p.warm(warmed)
    except BaseException:  # a filter with background work already started stops again
        for p in pipelines.values():
            p.close()
        raise
    tokens = TokenCounter(lazy=True)
    if any(s.filter.uses_tokens for p in pipelines.values() for s in p.stages):
        tokens.load()
    return Engine(pipelines, tokens, services, transport)


class Exchange:
    """One HTTP request/response through the engine (see the module docstring)."""

    __slots__ = ("engine", "match", "method", "raw_path", "raw_query", "headers", "turn", "pipeline",
                 "parse", "_relay", "_t0", "_t0_ns", "_finished", "error_api", "_sse", "_filter_whole",
                 "_watched")

    def __init__(self, engine: Engine, match: Match, method: str, raw_path: str, raw_query: str,
                 headers: Mapping[str, str]):
        self.engine = engine
        self.match = match
        self.method = method
        self.raw_path = raw_path
        self.raw_query = raw_query
        self.headers = headers
        self.pipeline = pipeline = engine.pipeline_for(match)
        self.turn = engine.new_turn(match, raw_path, headers)
        # Filters read the answer: the provider is asked for it uncompressed.
        self.parse = pipeline is not None and (pipeline.has_event_hooks or pipeline.has_response_hooks)
        self._relay: _EventRelay | None = None
        self._t0 = 0.0
        self._t0_ns = 0
        self._finished = False
        self._sse = False  # the answer is an event stream
        self._filter_whole = False  # the answer is JSON the response filters read whole
        self._watched: Any = None  # a whole answer whose watching hooks run once it went out (``finish``)
        self.error_api = family_api(match.api, match.route.family)  # the caller's error format

    @property
    def filtered(self) -> bool:
        """Whether this is a model call that goes through the filters."""
        return self.pipeline is not None

    async def request(self, body: Any, body_length: int | None = None) -> Forward | Reply:
        """Run the request filters over ``body`` (bytes) and say what to forward,
        or the local reply that answers the caller instead. A pass-through's
        ``body`` is forwarded as it is, unread (a stream, ``body_length`` long)."""
        turn = self.turn
        recoded = False
        if self.pipeline is not None:
            try:
                raw = body
                adapter = ADAPTERS[self.match.api]
                coding = self.headers.get("content-encoding")
                plain = raw if not coding or is_identity(coding) else decode_body(raw, coding, self.engine.max_body)
                turn.request = adapter.parse_request(plain)
                turn.streamed = turn.request.stream
                await self.pipeline.run_request_async(turn, reparse=lambda: adapter.parse_request(plain))
                body = turn.request.to_bytes()
                recoded = body is not plain and plain is not raw  # edited: sent as plain JSON
                if body is plain:  # untouched: the original bytes, compressed as they came
                    body = raw
            except (ProxyError, AdapterError, FilterError) as exc:
                return self.fail(exc)
            except Exception as exc:  # never a traceback to the client
                log.exception("turn %s: unexpected error", turn.turn_id)
                return self.fail(exc)
        headers = upstream_headers(self.headers, self.match.route, self.parse)
        if recoded:
            headers.pop("content-encoding", None)
        elif body is not None and not isinstance(body, bytes) and body_length is not None:
            headers["Content-Length"] = str(body_length)  # streamed on at its own length, not chunked
        q = self.raw_query
        url = upstream_url(self.match, f"?{q}" if q else "")
        self._t0 = time.perf_counter()
        self._t0_ns = time.time_ns()
        return Forward(self.method, url, headers, None if body == b"" else body)

    async def send(self, forward: Forward) -> Upstream:
        """Forward through the engine's transport; when a filter offered a tool
        the proxy answers itself, the answer is the rounds' (``rounds``)."""
        upstream = await self.engine.transport.send(forward)
        tool = self.turn.own_tool
        if tool is None or upstream.status >= 300:
            return upstream
        from .rounds import RoundsUpstream

        return RoundsUpstream(self.engine.transport, forward, upstream, self.turn, tool)

    def fail(self, exc: BaseException) -> Reply:
        """The local reply for a failure before the answer began (in the caller's format)."""
        status, message, error_type = describe(exc, self.turn.turn_id)
        self.turn.error_type = getattr(exc, "error_type", error_type)
        return error_reply(self.error_api, status, message, self.turn.turn_id)

    def upstream_failed(self, exc: UpstreamError) -> Reply:
        """The provider could not be reached: the reply, and the upstream span closed."""
        self.upstream_done()
        return self.fail(exc)

    def answer(self, status: int, headers: Mapping[str, str]) -> Answer:
        """The provider's status and headers are in: how to relay its body."""
        turn = self.turn
        turn.status = status
        if self._t0:
            turn.timings_ms["upstream_headers"] = (time.perf_counter() - self._t0) * 1000.0
        ctype = headers.get("content-type", "")
        is_sse = ctype.startswith("text/event-stream")
        plain = headers.get("content-encoding", "identity").lower() in ("", "identity")
        out = client_headers(headers, turn.turn_id)
        pipeline = self.pipeline
        self._sse = is_sse
        if pipeline is not None and is_sse and plain:
            self._relay = _EventRelay(turn, pipeline, ADAPTERS[turn.api], self.engine.coalesce)
            return Answer(EVENTS, status, out)
        if is_sse:
            return Answer(BYTES, status, out)
        if self.parse and plain and pipeline.has_response_hooks and status < 300 and "json" in ctype:
            self._filter_whole = True
            return Answer(WHOLE, status, out)
        if self.method != "HEAD" and status not in (204, 304) and 0 <= content_length(headers) <= WHOLE_BODY_MAX:
            return Answer(WHOLE, status, out)
        return Answer(BYTES, status, out)

    def whole(self, raw: bytes) -> bytes:
        """A whole answer body: through the response filters when they hook answers
        (a JSON answer that went well), and its response id noted."""
        turn = self.turn
        pipeline = self.pipeline
        if self._filter_whole:
            view = ADAPTERS[turn.api].parse_response(raw)
            if view is not None:
                # The hooks that only watch the answer (the manifest, recall, the relayed
                # answer) run once the bytes went out, in ``finish``: not on the client's wait.
                if pipeline.run_response(turn, view, late=True):
                    self._watched = view
                raw = view.to_bytes()
                rid = view.response_id()
                if rid:
                    turn.note_response_id(rid)
            return raw
        if turn.api == "responses" and turn.status is not None and turn.status < 300:
            rid = _leading_id(raw)
            if rid:
                turn.note_response_id(rid)
        return raw

    def events(self, chunk: bytes) -> bytes:
        """An SSE body chunk: the bytes to send on (``b""`` when all is held back)."""
        if self.turn.late_events:  # the edge did not settle the last chunk's
            self.settle()
        return self._relay.feed_chunk(chunk)

    def settle(self) -> None:
        """Just after the bytes of ``events`` were written: the filters that only
        watch the answer (the manifest, recall, the relayed answer) see those
        events now, off the way to the client's first token. An edge that does
        not call it has them run at the next chunk, the end or ``finish``."""
        if self.turn.late_events:
            self.pipeline.run_late(self.turn)

    def events_end(self) -> bytes:
        """The provider's SSE body ended: what trails, plus an error event if
        the stream stopped before its end-of-stream event."""
        relay = self._relay
        self.settle()
        out = relay.flush()
        if self.turn.status is not None and self.turn.status < 300 and not relay.terminated:
            return out + self.cut(UpstreamError(502, "upstream ended the stream early", "upstream_dropped"))
        return out

    def cut(self, exc: BaseException) -> bytes:
        """The answer failed after it began (the provider dropped, a required
        response filter failed, a bug of ours): the error event that ends an
        event stream in the caller's format, or b"" for a plain body (the edge
        then cuts the connection, so the client sees it short). A client that
        went away (``ConnectionError``) is re-raised."""
        turn = self.turn
        if isinstance(exc, ConnectionError):
            raise exc
        if isinstance(exc, FilterError):
            exc = ProxyError(exc.status, describe(exc)[1], "filter_failed")
        elif not isinstance(exc, ProxyError):
            log.exception("turn %s: failed while relaying the answer", turn.turn_id, exc_info=exc)
            exc = ProxyError(500, "ctxproxy failed while relaying the answer", "internal_error")
        turn.error_type = exc.error_type
        log.warning("turn %s: %s", turn.turn_id, exc.message)
        if not (self._sse and turn.api):
            return b""
        after = self._relay.sent if self._relay is not None else b""
        return ADAPTERS[turn.api].stream_error_bytes(exc.status, exc.message, turn.response_id, after)

    def upstream_done(self) -> None:
        """The provider's response is over (read or released): the upstream span ends."""
        if self._t0_ns:
            self.turn.spans.append(("upstream", self._t0_ns, time.time_ns()))
            self._t0_ns = 0

    def finish(self) -> None:
        """After the last byte went to the client (or it failed or hung up):
        the filters settle the turn. Once; a pass-through has nothing to settle."""
        if self._finished:
            return
        self._finished = True
        self.upstream_done()
        if self.turn.late_events:  # events already sent: their watchers still run, before the turn ends
            self.settle()
        if self._watched is not None:  # a whole answer already sent: its watchers, before the turn ends
            view, self._watched = self._watched, None
            self.pipeline.run_response_late(self.turn, view)
        if self.pipeline is not None and self.turn.request is not None:
            self.engine.finish_turn(self.turn, self.pipeline)


class _EventRelay:
    """Turns SSE body chunks into output bytes for one response: through the
    filters when any has an event hook, else as the original bytes. Notes the
    end-of-stream event, the response id and the last bytes sent (for an
    error event if cut)."""

    __slots__ = ("turn", "pipeline", "state", "adapter", "terminated", "hooks", "sent", "decoder", "coalesce",
                 "by_bytes", "frame", "late")

    def __init__(self, turn: Turn, pipeline: Pipeline, adapter: Any, coalesce: bool = True):
        self.turn = turn
        self.pipeline = pipeline
        self.adapter = adapter
        self.state = adapter.stream()
        self.terminated = False
        self.hooks = pipeline.has_event_hooks
        # Text deltas that came in one read become one event before the filters: the same
        # text at the same moment, and the per-event work (the redaction hold-back first of
        # all) done once per read. Under load a read holds several events (~5 in bench/run.py).
        self.coalesce = coalesce and self.hooks
        # The deltas after a run's first are recognised by their bytes (``text_runs``), not
        # parsed; not for an API whose events are numbered (no two have the same bytes).
        self.by_bytes = self.coalesce and adapter.counted_marker is None
        self.frame: Frame | None = None  # the last run's frame: the next read's runs mostly have it too
        self.sent = b""
        self.decoder = SSEDecoder()
        self.late: list | None = None  # the turn's ``late_events``: watchers run after each write (``Exchange.settle``)
        if self.hooks and getattr(pipeline, "late_event_stages", None):
            self.late = turn.late_events = []

    def feed_chunk(self, chunk: bytes) -> bytes:
        return self.feed(self.decoder.decode(chunk))

    def flush(self) -> bytes:
        rest = self.decoder.flush()
        return self.feed([rest]) if rest is not None else b""

    def _run(self, ev: Any, out: list) -> None:
        sent = self.pipeline.run_event(self.turn, ev)
        late = self.late
        if late and late[-1][0] is ev:  # its watchers run after the write; they end it (``run_late``)
            for e in self.state.outgoing(sent):
                out.append(e.to_bytes())
            return
        for e in self.state.outgoing(sent):
            out.append(e.to_bytes())
            e.done()
        ev.done()

    def _run_text(self, raw: bytes) -> str | None:
        """The text of ``raw`` if it is a lone text delta (``Frame``'s check)."""
        r = RawEvent(raw)
        run = self.state.event(r.name, raw, r.data).text_run()
        return None if run is None else run[1][run[2]]

    def feed(self, events: list) -> bytes:
        out = []
        pending = pending_run = None  # a text delta that the next events of this read may extend
        bytes_of: Frame | None | bool = False  # the pending run's frame (False: not looked for yet)
        adapter = self.adapter
        is_terminal = adapter.is_terminal
        coalesce = self.coalesce and len(events) > 1  # an event alone in its read has nothing to join
        for raw in events:
            if is_terminal(raw):
                self.terminated = True
            if not self.hooks:
                if adapter.opens_response(raw):
                    self._note_id(self.state.event(raw.name, raw.raw, raw.data))
                out.append(raw.raw)
                continue
            if pending is not None and self.by_bytes:
                if bytes_of is False:
                    holder, key = pending_run[1], pending_run[2]
                    bytes_of = self.frame
                    if bytes_of is None or bytes_of.text(pending.raw) != holder[key]:
                        bytes_of = self.frame = frame(pending.raw, key, holder[key], self._run_text)
                if bytes_of is not None:
                    text = bytes_of.text(raw.raw)
                    if text is not None:  # the same delta's shape around another string: no parse
                        pending_run[1][pending_run[2]] += text
                        pending.mark_changed()
                        continue
            ev = self.state.event(raw.name, raw.raw, raw.data)
            self._note_id(ev)
            if coalesce:
                run = ev.text_run()  # (shape, holder, key) of a lone text delta, else None
                if run is not None and pending is not None and run[0] == pending_run[0]:
                    pending_run[1][pending_run[2]] += run[1][run[2]]  # one event of what came in one read
                    pending.mark_changed()
                    continue
                if pending is not None:
                    self._run(pending, out)
                    pending = None
                if run is not None:
                    pending, pending_run, bytes_of = ev, run, False
                    continue
            self._run(ev, out)
        if pending is not None:
            self._run(pending, out)
        data = b"".join(out)
        if data and adapter.counted(data):  # not a keep-alive comment
            self.sent = data
        return data

    def _note_id(self, ev: Any) -> None:
        if self.turn.response_id is None:
            rid = ev.response_id()
            if rid:
                self.turn.note_response_id(rid)


# -- Responses over WebSocket ----------------------------------------------------

class FrameTurn:
    """One turn of the Responses WebSocket: a client event through the request
    filters, then (for a ``response.create``) the provider's events of its answer.

    ``passed``: the event goes on, as ``frame`` (its new bytes) or, when None,
    as it came. Else it was refused: ``error`` is the (status, message) to tell
    the client in an error frame."""

    __slots__ = ("engine", "pipeline", "turn", "frame", "passed", "error", "stream", "rounds")

    def __init__(self, engine: Engine, pipeline: Pipeline, turn: Turn | None):
        self.engine = engine
        self.pipeline = pipeline
        self.turn = turn
        self.frame: bytes | None = None
        self.passed = False
        self.error: tuple[int, str] | None = None
        self.stream = ADAPTERS["responses"].stream()
        self.rounds: Any = None  # ``rounds.FrameRounds`` when a filter offered a tool the proxy answers
        self._own_tool_rounds()

    def _own_tool_rounds(self) -> None:
        if self.turn is not None and self.turn.own_tool is not None:
            from .rounds import FrameRounds

            self.rounds = FrameRounds(self.turn, self.turn.own_tool)

    @classmethod
    async def start(cls, engine: Engine, pipeline: Pipeline, match: Match, raw_path: str,
                    headers: Mapping[str, str], data: dict, raw: bytes, continues: bool = False) -> "FrameTurn":
        adapter = ADAPTERS["responses"]
        ft = cls(engine, pipeline, None)
        try:
            view = adapter.request(data, raw)
            ft.turn = turn = engine.new_turn(match, raw_path, headers, view, api="responses", streamed=True)
            turn.continues = continues
            await pipeline.run_request_async(turn, reparse=lambda: adapter.parse_request(raw))
            ft.frame = turn.request.to_bytes() if turn.request.changed else None
            ft.passed = True
            ft._own_tool_rounds()
        except (FilterError, AdapterError) as exc:
            ft._refused(exc)
        except Exception as exc:  # never the session's end over one frame (HTTP answers such a body too)
            log.exception("websocket frame: unexpected error")
            ft._refused(exc, (500, f"ctxproxy could not process the frame ({type(exc).__name__})"))
        return ft

    def _refused(self, exc: BaseException, error: tuple[int, str] | None = None) -> None:
        """A turn the pipeline refused still ends (its manifest and records), as on HTTP."""
        status, message, _ = describe(exc)
        self.error = error or (status, message)
        if self.turn is not None:
            self.turn.error_type = self.turn.error_type or type(exc).__name__
            try:
                self.engine.finish_turn(self.turn, self.pipeline)
            except Exception:
                log.exception("websocket frame: ending a refused turn failed")

    def successor(self) -> "FrameTurn":
        """The turn of a response the provider started by itself to continue
        this one (steering's automatic successor); it answers the proxy's own
        tool too when this one did."""
        turn = self.turn.successor()
        own = self.turn.own_tool
        if own is not None:
            turn.own_tool = own.successor(turn)
        return FrameTurn(self.engine, self.pipeline, turn)

    async def server_frame(self, raw: bytes, parsed: dict | None) -> tuple[list[bytes | None], bytes | None, bool]:
        """A provider event of this turn's answer: the frames to send on (None:
        the event's own bytes), the ``response.create`` to send the provider
        when the proxy continues the turn after its own tool, and whether the
        turn ended (then it has been finished)."""
        if self.rounds is None:
            frames, ended = self.server_event(raw, parsed)
            return frames, None, ended
        try:
            spliced, create = await self.rounds.frame(raw)
        except Exception:  # never the session's end over one turn: the client is told, the turn ends
            log.exception("turn %s: continuing the turn after the proxy's tool failed", self.turn.turn_id)
            self.turn.error_type = "internal_error"
            self.finish()
            message = "ctxproxy failed while continuing the turn after its memory tool"
            return [ws_error_frame(500, message, ws_lane(self.turn.request.body))], None, True
        out: list[bytes | None] = []
        ended = False
        for f in spliced:
            frames, ended = self.server_event(f, parsed if f is raw else None)
            out.extend(None if g is None and f is raw else f if g is None else g for g in frames)
            if ended:
                break
        return out, create, ended

    def server_event(self, raw: bytes, parsed: dict | None) -> tuple[list[bytes | None], bool]:
        """A provider event of this turn's answer: the frames to send on (None:
        the event's own bytes, untouched) and whether it ended the turn (then
        the turn has been finished)."""
        turn = self.turn
        ev = self.stream.event(None, raw, raw)
        if parsed is not None:
            ev.parsed_as(parsed)
        out: list[bytes | None] = [None]
        if self.pipeline.has_event_hooks:
            sent = self.stream.outgoing(self.pipeline.run_event(turn, ev))
            out = [e.json_bytes() if e.changed else None for e in sent]
            for e in (*sent, ev):
                e.done()
        kind = ev.type
        if kind == OPENS:
            rid = ev.response_id()
            if rid:
                turn.note_response_id(rid)
        if kind in ADAPTERS["responses"].terminal_names:
            self.engine.finish_turn(turn, self.pipeline)
            return out, True
        return out, False

    def finish(self) -> None:
        self.engine.finish_turn(self.turn, self.pipeline)


# -- a provider as a function ----------------------------------------------------

@dataclass
class CannedUpstream:
    """A provider's answer held in memory: ``chunks`` are the body as it would
    arrive (one item per read)."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    chunks_: list[bytes] = field(default_factory=list)
    released: bool = False

    def __post_init__(self) -> None:
        self.headers = CIMultiDict(self.headers)

    def buffered(self) -> bytes:
        return b""

    async def chunks(self) -> AsyncIterator[bytes]:
        for c in self.chunks_:
            if isinstance(c, BaseException):  # the provider fails here
                raise c
            yield c

    async def read(self) -> bytes:
        return b"".join([c async for c in self.chunks()])

    def release(self) -> None:
        self.released = True


class FunctionTransport:
    """A transport that calls ``fn(forward)``: a provider written as a function
    (tests; an embedding that answers in-process)."""

    def __init__(self, fn: Callable[[Forward], Awaitable[Upstream]]):
        self.fn = fn

    async def send(self, forward: Forward) -> Upstream:
        return await self.fn(forward)


__all__ = ["Answer", "BYTES", "CannedUpstream", "EVENTS", "Engine", "Exchange", "Forward", "FrameTurn",
           "FunctionTransport", "HOP_BY_HOP", "Reply", "Transport", "Upstream", "WHOLE", "WHOLE_BODY_MAX",
           "client_headers", "content_length", "engine_for", "upstream_headers", "upstream_url"]
