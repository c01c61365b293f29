"""What the three APIs' rounds share: a call and a round, the codec and
splicer interfaces, how an event reaches a splicer and how its output is
framed (an SSE event, or a WebSocket frame), and usage arithmetic."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import orjson

from ...sse import RawEvent, encode_event
from ..base import dumps

# How a splicer writes an event it changed: ``encode(name, data)`` -> the bytes
# to send. SSE (``encode_event``) by default; ``ws_frame`` on the WebSocket.
Encode = Callable[[str | None, bytes], bytes]


def ws_frame(name: str | None, data: bytes) -> bytes:
    """A WebSocket event is its JSON alone, one frame each."""
    return data


class FrameEvent:
    """A WebSocket frame as a splicer reads an event (``sse.RawEvent``'s
    fields): the frame's bytes are both the event and its data."""

    __slots__ = ("raw", "data")
    name = None

    def __init__(self, raw: bytes):
        self.raw = self.data = raw


@dataclass
class Call:
    """One call of the proxy's tool: its id, the arguments' JSON text, and
    (once run) the result text the model reads."""

    call_id: str
    arguments: str
    result: str = ""
    is_error: bool = False

    def args(self) -> Any:
        try:
            return orjson.loads(self.arguments or "{}")
        except orjson.JSONDecodeError:
            return None


@dataclass
class Round:
    """What one answer held: our calls, whether the client has calls of its own
    in it (then the turn cannot continue here), and what the continuation
    appends (the answer's own content, in the API's shape)."""

    calls: list[Call]
    client_calls: list[str]  # the client's own call ids in the same answer
    assistant: Any = None


def int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def sum_usage(into: dict, add: Any, keys: Iterable[str]) -> dict:
    """Add ``add``'s counts under ``keys`` into ``into`` (and return it)."""
    if isinstance(add, dict):
        for k in keys:
            v = int_or_none(add.get(k))
            if v is not None:
                into[k] = into.get(k, 0) + v
    return into


def plus(a: dict, b: dict) -> dict:
    """Two usages of counts only added key by key (a key missing on one side counts 0)."""
    return {k: (a.get(k) or 0) + (b.get(k) or 0) for k in {*a, *b}}


def with_sums(usage: Any, sums: dict) -> dict:
    """A copy of an answer's ``usage`` with ``sums`` (earlier rounds' counts)
    added; what is not a count (a tier, nested details) stays as it was."""
    u = dict(usage) if isinstance(usage, dict) else {}
    for k, v in sums.items():
        u[k] = (int_or_none(u.get(k)) or 0) + v
    return u


def with_messages(body: dict, *more: Any) -> dict:
    """A copy of a ``messages`` body with ``more`` appended (the client's list untouched)."""
    out = dict(body)
    out["messages"] = [*body.get("messages", ()), *more]
    return out


def assistant_holding(body: dict, key: str, anchor: str) -> tuple[list, int, list] | None:
    """In a ``messages`` body, the assistant message whose list under ``key``
    (content blocks, tool calls) holds the call ``anchor``: (the messages, its
    index, that list)."""
    msgs = body.get("messages")
    for i, m in enumerate(msgs if isinstance(msgs, list) else ()):
        held = m.get(key) if isinstance(m, dict) and m.get("role") == "assistant" else None
        if isinstance(held, list) and any(isinstance(c, dict) and c.get("id") == anchor for c in held):
            return msgs, i, held
    return None


def event_data(ev: RawEvent) -> Any:
    """An event's JSON data parsed (``b"[DONE]"`` and None as they are; None
    when it is not JSON)."""
    data = ev.data
    if data is None or data == b"[DONE]":
        return data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


class Codec:
    """One API's shapes (subclassed per API)."""

    usage_keys: tuple[str, ...] = ()

    def __init__(self, name: str):
        self.name = name
        self.name_bytes = dumps(name)  # '"ctx_memory"' as it appears in JSON

    # request side
    def tool_def(self, description: str, schema: dict) -> dict: raise NotImplementedError

    def add_tool(self, body: dict, tool: dict) -> None:
        tools = body.get("tools")
        body["tools"] = [*(tools if isinstance(tools, list) else ()), tool]

    def continued(self, body: dict, rnd: Round) -> dict: raise NotImplementedError
    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool: raise NotImplementedError

    # whole answers
    def whole_round(self, answer: dict) -> Round: raise NotImplementedError
    def kept(self, answer: dict) -> list: raise NotImplementedError
    def merged(self, kept: list, usage: dict, answer: dict) -> dict: raise NotImplementedError
    def finish_forced(self, answer: dict) -> None: raise NotImplementedError

    splicer_class: type["Splicer"]  # the API's splicer

    def splicer(self, encode: Encode = encode_event) -> "Splicer":
        return self.splicer_class(self, encode)

    def ours(self, name: Any) -> bool:
        return name == self.name


class Splicer:
    """One streamed turn's events across rounds. ``feed`` returns the bytes to
    send on for one event (``b""``: none); ``end_round`` says what the round
    held; ``release`` gives the events held back when the turn stops with a
    call of ours unanswered. Changed events are written with ``encode``."""

    def __init__(self, codec: Codec, encode: Encode = encode_event):
        self.codec = codec
        self.encode = encode
        self.round = 0
        self.raw: list[RawEvent] = []  # this round's events (read again only when it has our call)
        self.slow = False  # parse every event from here on
        self.held: list[Any] = []
        self.usage: dict = {}
        self.index_map: dict[int, int | None] = {}  # this round's index -> the client's (None: ours)
        self.next_index = 0  # the client's next index (content block, tool call, output item)
        self.ours_this_round = False

    def index(self, idx: int, opens_ours: bool | None = None) -> int | None:
        """The client's index for this round's ``idx`` (None: a call of ours,
        never shown). The event that opens an index says whether it is ours
        (``opens_ours``); the first to do so assigns it."""
        if opens_ours is not None and idx not in self.index_map:
            if opens_ours:
                self.index_map[idx] = None
                self.ours_this_round = True
            else:
                self.index_map[idx] = self.next_index
                self.next_index += 1
        return self.index_map.get(idx, idx)

    def feed(self, ev: RawEvent) -> bytes: raise NotImplementedError
    def end_round(self) -> Round | None: raise NotImplementedError
    def release(self, forced: bool) -> list[bytes]: raise NotImplementedError

    def next_round(self) -> None:
        self.round += 1
        self.raw = []
        self.slow = True
        self.held = []  # the round that went on was answered: its end is not the client's
        self.index_map = {}
        self.ours_this_round = False
