"""OpenAI Responses (``/v1/responses``), over HTTP/SSE and over WebSocket."""
from __future__ import annotations

import re
import time
from typing import Any, Callable, Iterator

from ctxproxy.filters.view import ARGS, TEXT, THINKING, Delta, Slot, ToolCall, ToolResult, Usage, Where, iter_strings

from .base import (
    FREE_FORM_KEYS,
    OPAQUE_KEYS,
    ResponseViewBase,
    RequestViewBase,
    Event,
    StreamState,
    View,
    decode_args,
    dumps,
    has_binary,
    make_result_replacer,
    part_markers,
    system_text_of,
    text_of,
    usage_int,
)
from .openai_chat import error_body  # the same OpenAI error shape

API = "responses"
SYSTEM_ROLES = ("system", "developer")
CALL_TYPES = ("function_call", "custom_tool_call")
RESULT_TYPES = ("function_call_output", "custom_tool_call_output")
# Event types that end a response (its stream, or its turn on the WebSocket).
TURN_END = frozenset({"response.completed", "response.failed", "response.incomplete", "error"})
_NOT_TEXT_ITEMS = ("additional_tools", "compaction", "compaction_summary", "item_reference",
                   "image_generation_call", "web_search_call", "file_search_call")


def item_slots(view: View | Event, item: dict, where: Where) -> Iterator[Slot]:
    """Model-visible strings of one input/output item."""
    t = item.get("type", "message" if "role" in item else None)
    if t in _NOT_TEXT_ITEMS:
        return
    if t == "function_call":
        yield from _args(view, item, "arguments", (where, "arguments"))
    elif t == "custom_tool_call":
        yield from view.field_slot(item, "input", (where, "input"))
    elif t == "mcp_call":  # its arguments are JSON text, as a function call's; what the server said is text
        yield from _args(view, item, "arguments", (where, "arguments"))
        for key in ("output", "error"):
            if key in item:
                yield from view.field_slot(item, key, (where, key))
    elif t in RESULT_TYPES:
        yield from view.field_slot(item, "output", (where, "output"))
    elif t == "reasoning":
        yield from view.field_slot(item, "summary", (where, "summary"), THINKING)
        yield from view.field_slot(item, "content", (where, "content"), THINKING)
    else:  # messages and anything unknown: every string but ids and opaque blobs
        yield from text_parts(view, item, where)


def _logprobs_guard(view: Any, parts: list, key: str = "text") -> Callable[[], None] | None:
    """The write hook for slots inside ``parts`` when some carry ``logprobs``
    (None when none do): the view's ``mark_changed``, and a part whose ``key``
    an edit changed loses its logprobs (``top_logprobs`` with them). They spell
    the original text token by token, so a redacted secret would still reach
    the client; an empty list keeps the SDKs' models valid."""
    spelled = [(p, p.get(key)) for p in parts if isinstance(p, dict) and p.get("logprobs")]
    if not spelled:
        return None

    def touch() -> None:
        for part, before in spelled:
            if part.get(key) != before:
                part["logprobs"] = []
        view.mark_changed()

    return touch


def text_parts(view: Any, value: Any, where: Where, kind: str = TEXT) -> Iterator[Slot]:
    """``view.parts`` of a message item or of one content part, with any edit
    to an ``output_text`` part emptying its logprobs (``_logprobs_guard``)."""
    content = value.get("content") if isinstance(value, dict) else None
    guard = _logprobs_guard(view, content if isinstance(content, list) else [value])
    if guard is None:
        return view.parts(value, where, kind)
    # what View.parts does with a (never binary) dict, the guard as its touch
    return iter_strings(value, where, kind, OPAQUE_KEYS, guard, FREE_FORM_KEYS)


def _args(view: Any, obj: dict, key: str, where: Where) -> Iterator[Slot]:
    if isinstance(obj.get(key), str):
        yield Slot(obj, key, where, ARGS, view.mark_changed)


def calls_in(items: list) -> list[ToolCall]:
    out = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") in CALL_TYPES:
            if item["type"] == "function_call":
                raw = item.get("arguments")
                out.append(ToolCall(str(item.get("call_id", "")), str(item.get("name", "")), decode_args(raw), i,
                                    raw if isinstance(raw, str) else None))
            else:
                out.append(ToolCall(str(item.get("call_id", "")), str(item.get("name", "")), item.get("input"), i))
    return out


class ResponsesRequest(RequestViewBase):
    tool_list_items = ("additional_tools",)  # Codex lists deferred tools in an input item
    api = API
    items_key = "input"
    head_keys = ("instructions",)
    result_parts_key = "output"
    __slots__ = ()

    def head_strings(self) -> Iterator[str]:
        if isinstance(self.body.get("input"), str):  # the conversation as one string
            yield self.body["input"]
        yield from super().head_strings()

    @staticmethod
    def item_role(item: Any) -> str:
        if not isinstance(item, dict):
            return ""
        role = item.get("role") or item.get("type")
        return role if isinstance(role, str) else ""

    def head_slots(self) -> Iterator[Slot]:
        return (s for _, _, s in self.head_messages())

    def head_messages(self) -> Iterator[tuple[int | None, str, Slot]]:
        for s in self.field_slot(self.body, "instructions", "instructions"):
            yield None, "", s
        if isinstance(self.body.get("input"), str):  # the user's prompt given as one string
            yield -1, "user", Slot(self.body, "input", "input", TEXT, self.mark_changed)

    def item_slots(self, i: int, item: dict) -> Iterator[Slot]:
        return item_slots(self, item, ("input", i))

    def system_text(self, opening: bool = False) -> str:
        return system_text_of(self.body.get("instructions"), self.items(), SYSTEM_ROLES, opening)

    def first_user_text(self) -> str:
        if isinstance(self.body.get("input"), str):
            return self.body["input"]
        for item in self.items():
            if isinstance(item, dict) and item.get("role") == "user":
                return text_of(item.get("content"))
        return ""

    def _find_tool_calls(self) -> list[ToolCall]:
        return calls_in(self.items())

    def _find_tool_results(self) -> list[ToolResult]:
        out = []
        for i, item in enumerate(self.items()):
            if isinstance(item, dict) and item.get("type") in RESULT_TYPES:
                output = item.get("output")
                out.append(ToolResult(str(item.get("call_id", "")), text_of(output), False, i,
                                      has_binary(output), make_result_replacer(self, item, "output", "input_text")))
        return out

    def latest_user_text(self) -> str:
        if isinstance(self.body.get("input"), str):
            return self.body["input"]
        return super().latest_user_text()

    def cache_breakpoints(self) -> list[str]:
        """Responses has no cache markers (caching is by prefix, keyed by
        ``prompt_cache_key``); any a compatible server accepts are reported."""
        out: list[str] = []
        for i, item in enumerate(self.items()):
            if isinstance(item, dict):
                out += [w for w, _ in part_markers(item.get("content"), f"input[{i}].content")]
        return out

    def add_system_segment(self, text: str, stable: bool = False, anchor: bool = False) -> str:
        """Appended to ``instructions`` (which precede the input in the prompt);
        inject places stable segments first, so they stay in the cached prefix."""
        instructions = self.body.get("instructions")
        self.body["instructions"] = f"{instructions}\n\n{text}" if isinstance(instructions, str) and instructions \
            else text
        self.mark_changed()
        return "instructions"

    def server_history(self) -> str | None:
        previous = self.body.get("previous_response_id")
        return previous if isinstance(previous, str) and previous else None

    def continue_from(self, response_id: str) -> None:
        """Point ``previous_response_id`` at another answer of the provider's (the
        last round of a turn the proxy continued, whose id the client never saw)."""
        self.body["previous_response_id"] = response_id
        self.mark_changed()

    def kept_by_provider(self) -> bool:
        """Does the provider keep this conversation's input for later turns
        (``previous_response_id``, ``conversation``, or ``store: true``)?"""
        b = self.body
        return bool(b.get("previous_response_id")) or bool(b.get("conversation")) or b.get("store") is True

    def add_turn_segment(self, text: str, anchor: bool = False) -> str:
        """At the tail: appended to the last input item when it is the user's
        message; after trailing tool outputs (or anything else) as a new user
        message item.

        When the provider keeps the conversation (``kept_by_provider``) the
        input is stored with it and every later turn would carry this turn's
        segments again — growing without bound, unseen by the manifest. Then
        they go at the end of ``instructions``, which a response does not carry
        over to the next one (``turn:instructions``)."""
        if self.kept_by_provider():
            self.add_system_segment(text)
            return "turn:instructions"
        if isinstance(self.body.get("input"), str):
            self.body["input"] = f"{self.body['input']}\n\n{text}"
            self.mark_changed()
            return "turn"
        items = self.items()
        for item in reversed(items):
            if not isinstance(item, dict) or item.get("role") in SYSTEM_ROLES:
                continue
            if item.get("role") == "user" and item.get("type", "message") == "message":
                content = item.get("content")
                if isinstance(content, str):
                    item["content"] = f"{content}\n\n{text}"
                    self.mark_changed()
                    return "turn"
                if isinstance(content, list):
                    content.append({"type": "input_text", "text": text})
                    self.mark_changed()
                    return "turn"
            break
        if not isinstance(self.body.get("input"), list):
            self.body["input"] = []
        self.body["input"].append({"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})
        self.mark_changed()
        return "turn:new_message"

    def add_result_segment(self, position: int, text: str) -> str:
        """A user message item right after the tool output item ``position`` (the
        last of its round). When the provider keeps the conversation it stores that
        item with the output, so a later request, which no longer carries the output,
        needs it no more."""
        items = self.items()
        item = items[position] if 0 <= position < len(items) else None
        if not isinstance(item, dict) or item.get("type") not in RESULT_TYPES:
            return ""
        items.insert(position + 1, {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": text}]})
        self.mark_changed()
        return "result:new_message"


def usage_of(u: Any) -> Usage:
    return Usage(usage_int(u, "input_tokens"), usage_int(u, "output_tokens"),
                 usage_int(u, "input_tokens_details", "cached_tokens"), None)


class ResponsesResponse(ResponseViewBase):
    api = API
    usage_of = staticmethod(usage_of)
    __slots__ = ()

    def _output(self) -> list:
        o = self.body.get("output")
        return o if isinstance(o, list) else []

    def text_slots(self) -> Iterator[Slot]:
        for i, item in enumerate(self._output()):
            if isinstance(item, dict):
                yield from item_slots(self, item, f"output[{i}]")

    def tool_calls(self) -> list[ToolCall]:
        return calls_in(self._output())

    def finish_reasons(self) -> list[str]:
        s = self.body.get("status")
        return [s] if isinstance(s, str) else []


class ResponsesStream(StreamState):
    """Per-response state: channels still open (closed by .done events, or by
    the final event when a compatible server skips the .done events); each
    channel's delta shape (type and ids, and the key inside ``delta`` when it
    is an object), for the deltas ``make_delta`` adds; and the
    ``sequence_number`` the next event sent must carry."""

    __slots__ = ("open", "shapes", "next_seq")

    def __init__(self) -> None:
        self.open: dict[str, None] = {}
        self.shapes: dict[str, tuple[dict, str | None]] = {}
        self.next_seq: int | None = None  # None until the first numbered event went out

    def event(self, name: str | None, raw: bytes, data: bytes | None) -> "ResponsesEvent":
        return ResponsesEvent(name, raw, data, self)

    def outgoing(self, events: list) -> list:
        """Number what goes to the client one by one from the provider's first
        number: filters drop events (tool arguments held back to be scanned
        whole) and add some (a held tail flushed), and clients expect
        ``sequence_number`` to count up by one. An event whose number is
        already right keeps its bytes, so an untouched stream is unchanged.
        Only events the filters saw come here, and they have parsed each one."""
        for ev in events:
            d = ev.data
            seq = d.get("sequence_number") if isinstance(d, dict) else None
            if type(seq) is not int:
                continue
            if self.next_seq is None:
                self.next_seq = seq
            elif seq != self.next_seq:
                d["sequence_number"] = self.next_seq
                ev.mark_changed()
            self.next_seq += 1
        return events


# delta event type -> (channel suffix key, kind)
# A spoken answer's transcript names no output item: a channel of its own.
_TRANSCRIPT = "transcript"
_DELTAS = {
    "response.output_text.delta": ("content_index", TEXT),
    "response.refusal.delta": ("content_index", TEXT),
    "response.reasoning_summary_text.delta": ("summary_index", THINKING),
    "response.reasoning_text.delta": ("content_index", THINKING),
    "response.function_call_arguments.delta": (None, ARGS),
    "response.custom_tool_call_input.delta": (None, TEXT),
    "response.mcp_call_arguments.delta": (None, ARGS),
    "response.code_interpreter_call_code.delta": (None, TEXT),
    "response.shell_call_command.delta": ("command_index", TEXT),
    "response.audio.transcript.delta": (_TRANSCRIPT, TEXT),
}
# done event type -> (channel suffix key, key of the whole text (None: it carries none), kind)
_DONE = {
    "response.output_text.done": ("content_index", "text", TEXT),
    "response.refusal.done": ("content_index", "refusal", TEXT),
    "response.reasoning_summary_text.done": ("summary_index", "text", THINKING),
    "response.reasoning_text.done": ("content_index", "text", THINKING),
    "response.function_call_arguments.done": (None, "arguments", ARGS),
    "response.custom_tool_call_input.done": (None, "input", TEXT),
    "response.mcp_call_arguments.done": (None, "arguments", ARGS),
    "response.code_interpreter_call_code.done": (None, "code", TEXT),
    "response.shell_call_command.done": ("command_index", "command", TEXT),
    "response.audio.transcript.done": (_TRANSCRIPT, None, TEXT),
}
# A hosted shell's output streams as {"stdout": ..., "stderr": ...}: a channel for each.
_SHELL_OUTPUT = "response.shell_call_output_content.delta"
_SHELL_OUTPUT_DONE = "response.shell_call_output_content.done"
_SHELL_STREAMS = ("stdout", "stderr")
_FINAL = ("response.completed", "response.failed", "response.incomplete")
# A text delta with these keys alone may join the one before it (its number is renumbered on the way
# out); one with any other (``obfuscation`` padding, different on every event) keeps its event.
_RUN_KEYS = frozenset({"type", "item_id", "output_index", "content_index", "delta", "sequence_number", "logprobs"})


def _shell_channel(data: dict, stream: str) -> str:
    return f"{_channel(data, 'command_index')}:{stream}"


def _channel(data: dict, sub: str | None) -> str:
    if sub is _TRANSCRIPT:
        return _TRANSCRIPT
    oi = data.get("output_index", 0)
    return f"{oi}" if sub is None else f"{oi}:{sub[0]}{data.get(sub, 0)}"


class ResponsesEvent(Event):
    __slots__ = ()
    meta_events = frozenset({"response.created", "response.completed", "response.failed", "response.incomplete"})

    def _unnamed_meta(self, id_known: bool) -> bool:
        return b'"response"' in (self.raw or b"")  # WebSocket frames: lifecycle events hold a "response" object

    def _find_deltas(self) -> list[Delta]:
        spec = _DELTAS.get(self.type)
        d = self.data
        if spec is None:
            return self._shell_output_deltas() if self.type == _SHELL_OUTPUT else []
        if not isinstance(d.get("delta"), str):
            return []
        channel = _channel(d, spec[0])
        self._opened(channel, spec[0], None)
        slot = Slot(d, "delta", self.type, spec[1], _logprobs_guard(self, [d], "delta") or self.mark_changed)
        return [Delta(channel, spec[1], slot.get, slot.set)]

    def _shell_output_deltas(self) -> list[Delta]:
        d = self.data
        delta = d.get("delta")
        out = []
        for key in _SHELL_STREAMS if isinstance(delta, dict) else ():
            if isinstance(delta.get(key), str):
                channel = _shell_channel(d, key)
                self._opened(channel, "command_index", key)
                slot = Slot(delta, key, self.type, TEXT, self.mark_changed)
                out.append(Delta(channel, TEXT, slot.get, slot.set))
        return out

    def _opened(self, channel: str, index_key: str | None, inner: str | None) -> None:
        self.stream.open[channel] = None
        if channel not in self.stream.shapes:
            d = self.data
            # stream_id: the WebSocket lane (a delta a filter makes must name it too)
            shape = {k: d[k] for k in ("type", "item_id", "output_index", index_key, "stream_id") if k in d}
            self.stream.shapes[channel] = ({**shape, "logprobs": []} if "logprobs" in d else shape), inner

    def text_slots(self) -> Iterator[Slot]:
        t = self.type
        d = self.data
        done = _DONE.get(t)
        if done is not None:
            if done[1] is not None and isinstance(d.get(done[1]), str):
                yield Slot(d, done[1], t, done[2], _logprobs_guard(self, [d], done[1]) or self.mark_changed)
        elif t in ("response.output_item.done", "response.output_item.added") and isinstance(d.get("item"), dict):
            yield from item_slots(self, d["item"], "item")
        elif t in ("response.content_part.done", "response.content_part.added") and isinstance(d.get("part"), dict):
            yield from text_parts(self, d["part"], "part")
        elif t in ("response.reasoning_summary_part.done",) and isinstance(d.get("part"), dict):
            yield from self.parts(d["part"], "part", THINKING)
        elif t == "response.shell_call_command.added" and isinstance(d.get("command"), str):
            yield Slot(d, "command", t, TEXT, self.mark_changed)
        elif t == _SHELL_OUTPUT_DONE and isinstance(d.get("output"), list):
            yield from self.parts(d["output"], "output")  # stdout and stderr of a command run
        elif t in _FINAL + ("response.created", "response.in_progress") and isinstance(d.get("response"), dict):
            out = d["response"].get("output")
            for i, item in enumerate(out if isinstance(out, list) else ()):
                if isinstance(item, dict):
                    yield from item_slots(self, item, f"response.output[{i}]")

    def text_run(self) -> tuple[Any, dict, str] | None:
        d = self.data
        if not isinstance(d, dict) or d.get("type") != "response.output_text.delta" \
                or not set(d) <= _RUN_KEYS or d.get("logprobs") or not isinstance(d.get("delta"), str):
            return None
        return (d.get("item_id"), d.get("output_index"), d.get("content_index")), d, "delta"

    def only_deltas(self) -> bool:
        # its number goes with it: ResponsesStream.outgoing renumbers
        if self.type == _SHELL_OUTPUT:
            delta = self.data.get("delta")
            return isinstance(delta, dict) and delta.keys() <= set(_SHELL_STREAMS)
        return self.type in _DELTAS

    def _find_tool_call_starts(self) -> list[tuple[str, str, str]]:
        if self.type == "response.output_item.added":
            item = self.data.get("item")
            if isinstance(item, dict) and item.get("type") in CALL_TYPES:
                return [(str(self.data.get("output_index", 0)), str(item.get("call_id", "")),
                         str(item.get("name", "")))]
        return []

    def _closing(self) -> list[str]:
        t = self.type
        spec = _DONE.get(t)
        if spec is not None:
            channel = _channel(self.data, spec[0])
            self.stream.open.pop(channel, None)
            return [channel]
        if t == _SHELL_OUTPUT_DONE:
            closed = [ch for ch in (_shell_channel(self.data, k) for k in _SHELL_STREAMS) if ch in self.stream.open]
            for ch in closed:
                del self.stream.open[ch]
            return closed
        if t in _FINAL:
            rest = list(self.stream.open)
            self.stream.open.clear()
            return rest
        return []

    def usage(self) -> Usage | None:
        if self.type in _FINAL and isinstance(self.data.get("response"), dict):
            u = self.data["response"].get("usage")
            return usage_of(u) if isinstance(u, dict) else None
        return None

    def response_id(self) -> str | None:
        r = self.data.get("response") if isinstance(self.data, dict) else None
        return r.get("id") if isinstance(r, dict) else None

    def response_model(self) -> str | None:
        r = self.data.get("response") if isinstance(self.data, dict) else None
        return r.get("model") if isinstance(r, dict) else None

    def finish_reasons(self) -> list[str]:
        if self.type in _FINAL and isinstance(self.data.get("response"), dict):
            s = self.data["response"].get("status")
            return [s] if isinstance(s, str) else []
        return []

    def make_delta(self, channel: str, kind: str, text: str) -> "ResponsesEvent":
        """A delta of the channel's own type and ids (a refusal's tail is a
        ``response.refusal.delta``: the SDKs reject a text delta on a refusal
        part), sent before this event; ``ResponsesStream.outgoing`` gives it
        its number. A filter only knows channels from ``deltas()``, so the
        shape was recorded there."""
        shape, inner = self.stream.shapes[channel]
        data = {**shape, "delta": text if inner is None else {inner: text}}
        seq = self.data.get("sequence_number") if isinstance(self.data, dict) else None
        if type(seq) is int:
            data["sequence_number"] = seq  # a placeholder: renumbered on the way out
        ev = ResponsesEvent(data["type"], b"", None, self.stream)
        ev._data = data
        ev.edits = 1
        return ev


def stream_error(status: int, message: str, response_id: str | None = None, after: bytes = b"") -> tuple[str, dict]:
    """``response.failed`` for the response in flight, numbered after the last
    event the client got (``after``: its bytes). The top-level ``error``
    makes the official SDKs raise at once instead of ending quietly."""
    err = error_body(status, message)["error"]
    return "response.failed", {
        "type": "response.failed", "sequence_number": _next_sequence(after),
        "response": {"id": response_id or "", "object": "response", "created_at": int(time.time()),
                     "status": "failed", "error": {"code": err["code"] or "server_error", "message": message},
                     "output": [], "model": ""},
        "error": err}


_SEQ = re.compile(rb'"sequence_number"\s*:\s*(\d+)')


def _next_sequence(sent: bytes) -> int:
    """One past the last ``sequence_number`` in ``sent`` (0 when none): read
    from the bytes only when a stream fails, so a relayed stream is never
    parsed for it."""
    at = sent.rfind(b'"sequence_number"')
    m = _SEQ.match(sent, at) if at >= 0 else None
    return int(m.group(1)) + 1 if m else 0


# -- over WebSocket (what Codex speaks): the client's events and our error frame --

WS_CREATE = "response.create"  # a new turn (a response), on its lane
WS_STEER = "response.steer"  # input queued into a response in flight: reaches the model, starts no turn
WS_MODEL_EVENTS = (WS_CREATE, WS_STEER)  # client events the request filters guard
OPENS = "response.created"  # the provider's event that opens a response (and names its id)


def ws_lane(event: dict) -> str | None:
    """The lane (``stream_id``) an event names; None: the default lane."""
    lane = event.get("stream_id")
    return lane if isinstance(lane, str) else None


def ws_error_frame(status: int, message: str, lane: str | None = None) -> bytes:
    """The error frame the client reads for a refused event (on its lane)."""
    frame: dict[str, Any] = {"type": "error", "status": status, "error": error_body(status, message)["error"]}
    if lane is not None:
        frame["stream_id"] = lane
    return dumps(frame)  # the lane is the client's: it may hold a lone surrogate
