"""The Responses WebSocket's turns, for every driver (serve's aiohttp edge, transparent mode).

The client sends ``{"type": "response.create", ...}`` events; each is one turn
and goes through the same request pipeline as ``POST /v1/responses``; every
provider event goes through the response-event hooks of its turn. A
``response.create`` may name a lane (``stream_id``): the provider answers a
lane's creates in order, lanes side by side, and echoes the lane in every
event, so the turns in flight are kept per lane and an event goes to the
oldest turn of its lane. A ``response.created`` no create asked for continues
the lane's last turn (steering's automatic successor). A binary frame holding
an event is filtered like a text one.

A driver owns the sockets and moves frames: it hands each frame here and sends
on what comes back (a refused create: nothing, and an error event goes to the
client through ``send_client``). A driver that owns the provider's socket
gives ``send_upstream`` too: a turn may then go on there after the proxy
answered a tool of its own.
"""
from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any, Awaitable, Callable, Mapping

from .adapters.base import loads
from .adapters.openai_responses import OPENS, WS_CREATE, WS_MODEL_EVENTS, ws_error_frame, ws_lane
from .engine import FrameTurn
from .routing import Match

Send = Callable[[str], Awaitable[None]]


class WsLanes:
    """One WebSocket session's turns in flight, by lane."""

    def __init__(self, engine: Any, match: Match, raw_path: str, headers: Mapping[str, str], send_client: Send,
                 send_upstream: Send | None = None):
        self.engine = engine
        self.match = match  # its upgrade request's, keys checked
        self.raw_path = raw_path
        self.headers = headers  # the upgrade request's
        self._send_client = send_client
        self._send_upstream = send_upstream
        # Turns in flight by lane (``stream_id``; None when a create names none), oldest
        # first. Only busy lanes have an entry.
        self.lanes: dict[str | None, deque[FrameTurn]] = {}
        # The last turn that ended on each lane lately, which a response the provider
        # starts by itself there (steering's automatic successor) continues. Steering may
        # name a response that has just completed, so every lane keeps its last one.
        self.ended: OrderedDict[str | None, FrameTurn] = OrderedDict()

    async def client_frame(self, text: str) -> list[str]:
        """Run the request filters on a frame that reaches the model; no frame if refused."""
        raw = text.encode("utf-8", "surrogatepass")
        try:
            data = loads(raw)  # a lone surrogate escape is still read, as on HTTP
        except (ValueError, RecursionError):  # RecursionError: the fallback parser on deep nesting
            await self.client_error(400, "frame is not valid JSON")
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
        if principal is not None and not self.engine.services.keyring.active(principal):
            await self.client_error(401, f"ctxproxy: proxy key {principal.key_id} is revoked or expired",
                                     _lane(data))
            return []
        # a driver that owns the provider's socket (serve's, not transparent mode's) lets a turn
        # go on there after the proxy answered its own tool
        ft = await self.engine.frame_turn(self.match, self.raw_path, self.headers, data, raw,
                                          auxiliary=not create, continues=self._send_upstream is not None)
        if not ft.passed:
            await self.client_error(*ft.error, _lane(data))
            return []
        if create:
            self.lanes.setdefault(_lane(data), deque()).append(ft)
        return [text if ft.frame is None else ft.frame.decode("utf-8", "surrogatepass")]

    async def client_binary(self, data: bytes) -> list[bytes]:
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

    async def server_binary(self, data: bytes) -> list[bytes]:
        """A provider's binary frame during a turn is an event like a text one
        (the response filters see it); one that is not UTF-8 JSON goes on as it came."""
        if not self.in_flight() or not _json_object(data):
            return [data]
        try:
            text = data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return [data]
        return [f.encode("utf-8", "surrogatepass") for f in await self.server_frame(text)]

    async def server_frame(self, text: str) -> list[str]:
        """A provider event: through the response filters of its lane's oldest turn."""
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
        if create is not None and self._send_upstream is not None:  # the proxy answered its own tool:
            await self._send_upstream(create.decode("utf-8", "surrogatepass"))  # the turn goes on, there
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

    def in_flight(self) -> bool:
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

    async def upstream_gone(self) -> None:
        """The provider closed its socket mid-turn: each lane in flight hears it."""
        for lane, turns in self.lanes.items():
            for ft in turns:
                ft.turn.error_type = "upstream_dropped"
            await self.client_error(502, "upstream closed the WebSocket mid-response", lane)

    async def client_error(self, status: int, message: str, lane: str | None = None) -> None:
        """An error event to the client, in the Responses format, on ``lane``."""
        try:
            await self._send_client(ws_error_frame(status, message, lane).decode())
        except ConnectionError:
            pass


_NO_LANE = object()  # an event that no busy lane is waiting for
ENDED_LANES = 16  # lanes whose last ended turn is kept for a successor


_lane = ws_lane


def _json_object(data: bytes) -> bool:
    """Whether a binary frame may hold a JSON object (its first non-blank byte
    is ``{``), looking at its head only: a large frame is not copied for it."""
    return data[:64].lstrip()[:1] == b"{"
