"""Anthropic Messages (``/v1/messages``): request, response and stream views."""
from __future__ import annotations

from typing import Any, Iterator

from ctxproxy.filters.view import ARGS, SIGNED, TEXT, THINKING, Delta, Slot, ToolCall, ToolResult, Usage, type_of

from .base import (
    ResponseViewBase,
    RequestViewBase,
    MAX_CACHE_BREAKPOINTS,
    Event,
    StreamState,
    count_markers,
    has_binary,
    last_marked,
    longest_ttl,
    make_result_replacer,
    part_markers,
    system_text_of,
    text_of,
    usage_int,
)

API = "anthropic"


def _kind(block: dict) -> str:
    """A request block's slot kind: thinking sent back with its signature is the
    provider's own signed text (SIGNED); unsigned thinking is THINKING."""
    if block.get("type") == "thinking":
        return SIGNED if block.get("signature") else THINKING
    return TEXT


class AnthropicRequest(RequestViewBase):
    api = API
    items_key = "messages"
    head_keys = ("system",)
    __slots__ = ()

    def result_has_breakpoint(self, res: ToolResult) -> bool:
        """A result whose content parts carry ``cache_control`` (inside its
        ``tool_result`` block) is not rewritten: the caller's breakpoints stay."""
        item = self._item_at(res.position)
        content = item.get("content") if item is not None else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result" \
                    and str(block.get("tool_use_id", "")) == res.call_id:
                inner = block.get("content")
                if isinstance(inner, list) and any(isinstance(p, dict) and "cache_control" in p for p in inner):
                    return True
        return False

    def beside_results(self, item: Any) -> Iterator[str]:
        if not isinstance(item, dict):
            return
        content = item.get("content")
        if isinstance(content, list):
            for b in content:
                if not (isinstance(b, dict) and b.get("type") == "tool_result"):
                    yield from self.visible_strings(b)
        else:
            yield from self.visible_strings(content)

    def head_slots(self) -> Iterator[Slot]:
        return self.field_slot(self.body, "system", "system")

    def item_slots(self, i: int, msg: dict) -> Iterator[Slot]:
        content = msg.get("content")
        where = (("messages", i), "content")  # formatted only if asked for
        if isinstance(content, str):
            yield Slot(msg, "content", where, TEXT, self.mark_changed)
        elif isinstance(content, list):
            for j, block in enumerate(content):
                if isinstance(block, dict):
                    yield from self.parts(block, (where, j), _kind(block))

    def system_text(self, opening: bool = False) -> str:
        return system_text_of(self.body.get("system"), self.items(), ("system",), opening)

    def first_user_text(self) -> str:
        for msg in self.items():
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, list):
                    content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
                return text_of(content)
        return ""

    def _find_tool_calls(self) -> list[ToolCall]:
        out = []
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
                for block in msg["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        out.append(ToolCall(str(block.get("id", "")), str(block.get("name", "")),
                                            block.get("input"), i))
        return out

    def _find_tool_results(self) -> list[ToolResult]:
        out = []
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict) and msg.get("role") == "user" and isinstance(msg.get("content"), list):
                for block in msg["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        content = block.get("content")
                        out.append(ToolResult(
                            str(block.get("tool_use_id", "")), text_of(content), block.get("is_error") is True,
                            i, has_binary(content), make_result_replacer(self, block, "content", "text")))
        return out

    def latest_user_text(self) -> str:
        for msg in reversed(self.items()):
            if type(msg) is dict and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, str):
                    if content:
                        return content
                elif isinstance(content, list):
                    texts = [b["text"] for b in content if type(b) is dict and b.get("type") == "text"
                             and isinstance(b.get("text"), str)]
                    if texts:
                        return "\n".join(texts)
        return ""

    def cache_breakpoints(self) -> list[str]:
        """Where every cache_control marker sits: top-level (automatic caching),
        tools, system blocks, message content blocks (and tool result content)."""
        return [where for where, _ in self._markers()]

    def count_cache_breakpoints(self) -> int:
        n = 1 if isinstance(self.body.get("cache_control"), dict) else 0
        n += count_markers(self.body.get("tools")) + count_markers(self.body.get("system"))
        for msg in self.items():
            if type(msg) is dict:
                n += count_markers(msg.get("content"))
        return n

    def _markers(self) -> list[tuple[str, dict]]:
        auto = self.body.get("cache_control")
        out = [("cache_control", auto)] if isinstance(auto, dict) else []
        out += part_markers(self.body.get("tools"), "tools")
        out += part_markers(self.body.get("system"), "system")
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict):
                out += part_markers(msg.get("content"), f"messages[{i}].content")
        return out

    def conversation_cached(self) -> bool:
        """Does a breakpoint cover the messages — a marker on a message block, or
        automatic caching (a top-level ``cache_control``: the provider puts it on
        the last block)? Then the end of the system slot sits inside the cached
        conversation's prefix, and inject sends text that may change to the tail."""
        return isinstance(self.body.get("cache_control"), dict) or any(
            type(m) is dict and count_markers(m.get("content")) for m in self.items())

    def add_system_segment(self, text: str, stable: bool = False, anchor: bool = False) -> str:
        """Stable text goes inside the caller's cached prefix: just before the
        system block that carries its last system cache breakpoint (the marker
        stays on the caller's block). Anything else goes at the end of the
        system slot, after the system's breakpoints (not after a message's:
        see ``conversation_cached``). With ``anchor``, a stable segment
        in a system slot without breakpoints gets one of its own, if the
        request has fewer than four (never more than the provider allows)."""
        block: dict = {"type": "text", "text": text}
        system = self.body.get("system")
        self.mark_changed()
        if isinstance(system, list):
            at = last_marked(system) if stable else None
            if at is not None:
                system.insert(at, block)
                return "system:before_breakpoint"
            system.append(block)
        elif stable and anchor and self.count_cache_breakpoints() < MAX_CACHE_BREAKPOINTS:
            # a string system cannot carry a marker: the same text as one block, then ours
            self.body["system"] = [{"type": "text", "text": system}, block] if isinstance(system, str) and system \
                else [block]
        elif isinstance(system, str) and system:
            self.body["system"] = f"{system}\n\n{text}"
            return "system:end"
        else:
            self.body["system"] = text
            return "system:end"
        if stable and anchor and last_marked(self.body["system"]) is None:
            markers = self._markers()
            if len(markers) < MAX_CACHE_BREAKPOINTS:
                block["cache_control"] = longest_ttl([m for _, m in markers])
                return "system:end+breakpoint"
        return "system:end"

    def add_turn_segment(self, text: str, anchor: bool = False) -> str:
        """After the last cache breakpoint: a text block at the end of the latest
        user message (after its tool results).

        Automatic caching (a top-level ``cache_control``) puts its breakpoint on
        the last cacheable block of the request, which would be this segment: a
        cache entry written every turn (at the cache-write price) and never read,
        since the next turn's segment differs. When that message ends the
        request, the caller's last block takes the breakpoint instead — where the
        provider would have put it without us: with ``anchor``, as a marker
        added next to the top-level one if the request has room
        (``turn+breakpoint``); otherwise the top-level marker moves onto it
        (``turn:auto_breakpoint_moved``, the count unchanged)."""
        block = {"type": "text", "text": text}
        items = self.items()
        for msg in reversed(items):
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, str):
                    msg["content"] = content = [{"type": "text", "text": content}]
                elif not isinstance(content, list):
                    continue
                where = "turn"
                auto = self.body.get("cache_control")
                last = content[-1] if content else None
                if isinstance(auto, dict) and msg is items[-1] and _markable(last) and not last.get("cache_control"):
                    if anchor and self.count_cache_breakpoints() < MAX_CACHE_BREAKPOINTS:
                        last["cache_control"] = dict(auto)
                        where = "turn+breakpoint"
                    else:
                        last["cache_control"] = self.body.pop("cache_control")
                        where = "turn:auto_breakpoint_moved"
                content.append(block)
                self.mark_changed()
                return where
        if not isinstance(self.body.get("messages"), list):
            self.body["messages"] = []
        self.body["messages"].append({"role": "user", "content": text})
        self.mark_changed()
        return "turn:new_message"

    def add_result_segment(self, position: int, text: str) -> str:
        """A text block right after the last ``tool_result`` of message ``position``
        (the API wants a message's results before its other blocks), before whatever
        the caller put after them (Claude Code's reminders and their breakpoint)."""
        items = self.items()
        msg = items[position] if 0 <= position < len(items) else None
        content = msg.get("content") if isinstance(msg, dict) and msg.get("role") == "user" else None
        if not isinstance(content, list):
            return ""
        last = max((j for j, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "tool_result"),
                   default=None)
        if last is None:
            return ""
        content.insert(last + 1, {"type": "text", "text": text})
        self.mark_changed()
        return "result"


def _markable(block: Any) -> bool:
    """May carry ``cache_control``: not thinking, not an empty text block."""
    return isinstance(block, dict) and block.get("type") not in ("thinking", "redacted_thinking") \
        and not (block.get("type") == "text" and not block.get("text"))


def usage_of(u: Any) -> Usage:
    return Usage(usage_int(u, "input_tokens"), usage_int(u, "output_tokens"),
                 usage_int(u, "cache_read_input_tokens"), usage_int(u, "cache_creation_input_tokens"),
                 cache_apart=True)


class AnthropicResponse(ResponseViewBase):
    api = API
    usage_of = staticmethod(usage_of)
    __slots__ = ()

    def _blocks(self) -> list:
        c = self.body.get("content")
        return c if isinstance(c, list) else []

    def text_slots(self) -> Iterator[Slot]:
        for j, block in enumerate(self._blocks()):
            if isinstance(block, dict):
                yield from self.parts(block, f"content[{j}]", SIGNED if block.get("type") == "thinking" else TEXT)
                if isinstance(block.get("citations"), list):  # the text each quotes (sent back, they stay as is)
                    yield from self.parts(block["citations"], f"content[{j}].citations")

    def tool_calls(self) -> list[ToolCall]:
        return [ToolCall(str(b.get("id", "")), str(b.get("name", "")), b.get("input"), j)
                for j, b in enumerate(self._blocks()) if isinstance(b, dict) and b.get("type") == "tool_use"]

    def finish_reasons(self) -> list[str]:
        r = self.body.get("stop_reason")
        return [r] if isinstance(r, str) else []


class AnthropicStream(StreamState):
    """Per-response state: blocks with deltas not yet stopped."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: dict[str, None] = {}

    def event(self, name: str | None, raw: bytes, data: bytes | None) -> "AnthropicEvent":
        return AnthropicEvent(name, raw, data, self)


# Thinking is SIGNED: the block's signature comes at its end and covers every delta.
_DELTA_FIELDS = {"text_delta": ("text", TEXT), "thinking_delta": ("thinking", SIGNED),
                 "input_json_delta": ("partial_json", ARGS)}


class AnthropicEvent(Event):
    __slots__ = ()
    repeats_streamed = False  # no done events: a block that comes whole, a citation, say it first
    meta_events = frozenset({"message_start", "message_delta"})

    def _index(self) -> int:
        i = self.data.get("index") if isinstance(self.data, dict) else None
        return i if type(i) is int else -1  # not a bool: True is an int

    def _find_deltas(self) -> list[Delta]:
        if self.type != "content_block_delta":
            return []
        delta = self.data.get("delta")
        spec = _DELTA_FIELDS.get(type_of(delta)) if isinstance(delta, dict) else None
        if spec is None or not isinstance(delta.get(spec[0]), str):
            return []
        channel = str(self._index())
        self.stream.open[channel] = None
        return [self.delta(delta, spec[0], channel, spec[1])]

    def text_slots(self) -> Iterator[Slot]:
        t = self.type
        if t == "content_block_start":
            block = self.data.get("content_block")
            if not isinstance(block, dict):
                return
            if block.get("type") in ("text", "thinking"):
                kind = SIGNED if block.get("type") == "thinking" else TEXT
                key = "thinking" if kind == SIGNED else "text"
                if isinstance(block.get(key), str) and block[key]:
                    yield Slot(block, key, "content_block", kind, self.mark_changed)
            else:  # a server tool's result comes whole here (a fetched page, a command's output)
                yield from self.parts(block, "content_block")
        elif t == "content_block_delta":
            delta = self.data.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "citations_delta":
                yield from self.parts(delta.get("citation"), "citation")  # the text it quotes, whole

    def only_deltas(self) -> bool:
        return self.type == "content_block_delta"

    def text_run(self) -> tuple[Any, dict, str] | None:
        d = self.data
        if self.name != "content_block_delta" or not isinstance(d, dict) or len(d) != 3:
            return None
        delta = d.get("delta")
        if not isinstance(delta, dict) or len(delta) != 2 or delta.get("type") != "text_delta" \
                or not isinstance(delta.get("text"), str) or d.get("type") != "content_block_delta":
            return None
        index = d.get("index")
        return (index, delta, "text") if type(index) is int else None

    def _find_tool_call_starts(self) -> list[tuple[str, str, str]]:
        if self.type != "content_block_start":
            return []
        block = self.data.get("content_block")
        if not isinstance(block, dict):
            return []
        if block.get("type") == "tool_use":
            return [(str(self._index()), str(block.get("id", "")), str(block.get("name", "")))]
        return []

    def _closing(self) -> list[str]:
        t = self.type
        if t == "content_block_stop":
            self.stream.open.pop(str(self._index()), None)
            return [str(self._index())]
        if t == "message_stop":
            rest = list(self.stream.open)
            self.stream.open.clear()
            return rest
        return []

    def usage(self) -> Usage | None:
        t = self.type
        if t == "message_start":
            msg = self.data.get("message")
            return usage_of(msg.get("usage")) if isinstance(msg, dict) else None
        if t == "message_delta":
            return usage_of(self.data.get("usage"))
        return None

    def response_id(self) -> str | None:
        if self.type == "message_start" and isinstance(self.data.get("message"), dict):
            return self.data["message"].get("id")
        return None

    def response_model(self) -> str | None:
        if self.type == "message_start" and isinstance(self.data.get("message"), dict):
            return self.data["message"].get("model")
        return None

    def finish_reasons(self) -> list[str]:
        if self.type == "message_delta" and isinstance(self.data.get("delta"), dict):
            r = self.data["delta"].get("stop_reason")
            return [r] if isinstance(r, str) else []
        return []

    def make_delta(self, channel: str, kind: str, text: str) -> "AnthropicEvent":
        field = {TEXT: ("text_delta", "text"), THINKING: ("thinking_delta", "thinking"),
                 SIGNED: ("thinking_delta", "thinking"),
                 ARGS: ("input_json_delta", "partial_json")}[kind]
        ev = AnthropicEvent("content_block_delta", b"", None, self.stream)
        ev._data = {"type": "content_block_delta", "index": int(channel),
                    "delta": {"type": field[0], field[1]: text}}
        ev.edits = 1
        return ev


def error_body(status: int, message: str) -> dict:
    etype = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
             404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
             529: "overloaded_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": etype, "message": message}}


def stream_error(status: int, message: str, response_id: str | None = None, after: bytes = b"") -> tuple[str, dict]:
    return "error", error_body(status, message)

