"""Anthropic Messages (``/v1/messages``): request, response and stream views."""
from __future__ import annotations

from typing import Any, Iterator

from ctxproxy.filters.view import ARGS, TEXT, THINKING, Delta, Slot, ToolCall, ToolResult, Usage, slot

from .base import Event, View, has_binary, make_result_replacer, text_of, usage_int

API = "anthropic"


class AnthropicRequest(View):
    api = API
    __slots__ = ()

    @property
    def model(self) -> str:
        m = self.body.get("model")
        return m if isinstance(m, str) else ""

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    def items(self) -> list:
        msgs = self.body.get("messages")
        return msgs if isinstance(msgs, list) else []

    @staticmethod
    def item_role(item: Any) -> str:
        return item.get("role", "") if isinstance(item, dict) else ""

    def text_slots(self) -> Iterator[Slot]:
        yield from self.field_slot(self.body, "system", "system")
        for i, msg in enumerate(self.items()):
            if not isinstance(msg, dict):
                continue
            content = msg.get("content")
            where = f"messages[{i}].content"
            if isinstance(content, str):
                yield slot(msg, "content", where, TEXT, self.mark_changed)
            elif isinstance(content, list):
                for j, block in enumerate(content):
                    if isinstance(block, dict):
                        kind = THINKING if block.get("type") == "thinking" else TEXT
                        yield from self.parts(block, f"{where}[{j}]", kind)

    def system_text(self) -> str:
        parts = [text_of(self.body.get("system"))]
        parts += [text_of(m.get("content")) for m in self.items()
                  if isinstance(m, dict) and m.get("role") == "system"]
        return "\n".join(p for p in parts if p)

    def first_user_text(self) -> str:
        for msg in self.items():
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, list):
                    content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
                return text_of(content)
        return ""

    def tool_calls(self) -> list[ToolCall]:
        out = []
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("content"), list):
                for block in msg["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        out.append(ToolCall(str(block.get("id", "")), str(block.get("name", "")),
                                            block.get("input"), i))
        return out

    def tool_results(self) -> list[ToolResult]:
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

    def add_system_segment(self, text: str) -> None:
        system = self.body.get("system")
        if isinstance(system, list):
            system.append({"type": "text", "text": text})
        elif isinstance(system, str) and system:
            self.body["system"] = f"{system}\n\n{text}"
        else:
            self.body["system"] = text
        self.mark_changed()

    def add_turn_segment(self, text: str) -> None:
        for msg in reversed(self.items()):
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, str):
                    msg["content"] = [{"type": "text", "text": content}, {"type": "text", "text": text}]
                elif isinstance(content, list):
                    content.append({"type": "text", "text": text})
                else:
                    continue
                self.mark_changed()
                return
        self.items().append({"role": "user", "content": text})
        self.mark_changed()


class AnthropicResponse(View):
    api = API
    __slots__ = ()

    def _blocks(self) -> list:
        c = self.body.get("content")
        return c if isinstance(c, list) else []

    def text_slots(self) -> Iterator[Slot]:
        for j, block in enumerate(self._blocks()):
            if isinstance(block, dict):
                kind = THINKING if block.get("type") == "thinking" else TEXT
                yield from self.parts(block, f"content[{j}]", kind)

    def tool_calls(self) -> list[ToolCall]:
        return [ToolCall(str(b.get("id", "")), str(b.get("name", "")), b.get("input"), j)
                for j, b in enumerate(self._blocks()) if isinstance(b, dict) and b.get("type") == "tool_use"]

    def usage(self) -> Usage:
        return usage_of(self.body.get("usage"))

    def response_id(self) -> str | None:
        return self.body.get("id")

    def response_model(self) -> str | None:
        return self.body.get("model")

    def finish_reasons(self) -> list[str]:
        r = self.body.get("stop_reason")
        return [r] if isinstance(r, str) else []


def usage_of(u: Any) -> Usage:
    return Usage(usage_int(u, "input_tokens"), usage_int(u, "output_tokens"),
                 usage_int(u, "cache_read_input_tokens"), usage_int(u, "cache_creation_input_tokens"))


class AnthropicStream:
    """Per-response state: blocks with deltas not yet stopped."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: dict[str, None] = {}

    def event(self, name: str | None, raw: bytes, data: bytes | None) -> "AnthropicEvent":
        return AnthropicEvent(name, raw, data, self)


_DELTA_FIELDS = {"text_delta": ("text", TEXT), "thinking_delta": ("thinking", THINKING),
                 "input_json_delta": ("partial_json", ARGS)}


class AnthropicEvent(Event):
    __slots__ = ()

    def _index(self) -> int:
        i = self.data.get("index") if isinstance(self.data, dict) else None
        return i if isinstance(i, int) else -1

    def deltas(self) -> list[Delta]:
        if self.type != "content_block_delta":
            return []
        delta = self.data.get("delta")
        spec = _DELTA_FIELDS.get(delta.get("type")) if isinstance(delta, dict) else None
        if spec is None or not isinstance(delta.get(spec[0]), str):
            return []
        channel = str(self._index())
        self.stream.open[channel] = None
        return [self.delta(delta, spec[0], channel, spec[1])]

    def text_slots(self) -> Iterator[Slot]:
        t = self.type
        if t == "content_block_start":
            block = self.data.get("content_block")
            if isinstance(block, dict) and block.get("type") in ("text", "thinking"):
                kind = THINKING if block.get("type") == "thinking" else TEXT
                key = "thinking" if kind == THINKING else "text"
                if isinstance(block.get(key), str) and block[key]:
                    yield slot(block, key, "content_block", kind, self.mark_changed)

    def tool_call_starts(self) -> list[tuple[str, str, str]]:
        if self.type != "content_block_start":
            return []
        block = self.data.get("content_block")
        if not isinstance(block, dict):
            return []
        if block.get("type") == "tool_use":
            return [(str(self._index()), str(block.get("id", "")), str(block.get("name", "")))]
        return []

    def closed_channels(self) -> list[str]:
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


def stream_error(status: int, message: str, response_id: str | None = None) -> tuple[str, dict]:
    return "error", error_body(status, message)
