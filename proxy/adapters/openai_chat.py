"""OpenAI Chat Completions (``/v1/chat/completions``)."""
from __future__ import annotations

from typing import Any, Iterator

from ctxproxy.filters.view import ARGS, TEXT, THINKING, Delta, Slot, ToolCall, ToolResult, Usage, Where

from .base import (
    ResponseViewBase,
    RequestViewBase,
    Event,
    View,
    decode_args,
    has_binary,
    last_marked,
    make_result_replacer,
    part_markers,
    text_of,
    usage_int,
)

API = "chat"
SYSTEM_ROLES = ("system", "developer")
_EXTRA_TEXT = (("refusal", TEXT), ("reasoning_content", THINKING), ("reasoning", THINKING))


class ChatRequest(RequestViewBase):
    api = API
    items_key = "messages"
    __slots__ = ()

    def item_slots(self, i: int, msg: dict) -> Iterator[Slot]:
        return message_slots(self, msg, ("messages", i))

    def system_text(self) -> str:
        return "\n".join(text_of(m.get("content")) for m in self.items()
                         if isinstance(m, dict) and m.get("role") in SYSTEM_ROLES)

    def first_user_text(self) -> str:
        for msg in self.items():
            if isinstance(msg, dict) and msg.get("role") == "user":
                return text_of(msg.get("content"))
        return ""

    def _find_tool_calls(self) -> list[ToolCall]:
        out = []
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict) and msg.get("role") == "assistant":
                out += calls_of(msg, i)
        return out

    def _find_tool_results(self) -> list[ToolResult]:
        out = []
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict) and msg.get("role") == "tool":
                content = msg.get("content")
                out.append(ToolResult(str(msg.get("tool_call_id", "")), text_of(content), False, i,
                                      has_binary(content), make_result_replacer(self, msg, "content", "text")))
        return out

    def cache_breakpoints(self) -> list[str]:
        """cache_control markers on content parts (OpenRouter passes them on to
        Anthropic models); OpenAI's own caching is automatic, by prefix."""
        out: list[str] = []
        for i, msg in enumerate(self.items()):
            if isinstance(msg, dict):
                out += [w for w, _ in part_markers(msg.get("content"), f"messages[{i}].content")]
        return out

    def add_system_segment(self, text: str, stable: bool = False, anchor: bool = False) -> str:
        """Into the leading system/developer message (a new one if there is
        none). OpenAI caches by exact prefix: stable segments are placed first
        (inject orders them), so they sit in the prefix; a marked part list
        (OpenRouter) keeps stable text before its last marker."""
        items = self.items()
        first = items[0] if items else None
        if isinstance(first, dict) and first.get("role") in SYSTEM_ROLES:
            content = first.get("content")
            at = last_marked(content) if stable and isinstance(content, list) else None
            if at is not None:
                content.insert(at, {"type": "text", "text": text})
                self.mark_changed()
                return "system:before_breakpoint"
            if _append_text(first, text):
                self.mark_changed()
                return "system:end"
        if "messages" not in self.body or not isinstance(self.body["messages"], list):
            self.body["messages"] = items = []
        items.insert(0, {"role": "system", "content": text})
        self.mark_changed()
        return "system:new_message"

    def add_turn_segment(self, text: str, anchor: bool = False) -> str:
        """At the tail, after everything the provider may have cached: appended
        to the last message when it is the user's; after trailing tool results
        as a new user message (appending to an older user message would change
        the middle of the conversation)."""
        items = self.items()
        for msg in reversed(items):
            if not isinstance(msg, dict):
                continue
            role = msg.get("role")
            if role == "tool":
                break
            if role == "user" and _append_text(msg, text):
                self.mark_changed()
                return "turn"
            if role == "assistant":  # a trailing assistant message: the user turn before it
                for older in reversed(items):
                    if isinstance(older, dict) and older.get("role") == "user" and _append_text(older, text):
                        self.mark_changed()
                        return "turn"
                break
        if "messages" not in self.body or not isinstance(self.body["messages"], list):
            self.body["messages"] = items = []
        items.append({"role": "user", "content": text})
        self.mark_changed()
        return "turn:new_message"


def _append_text(msg: dict, text: str) -> bool:
    content = msg.get("content")
    if isinstance(content, str):
        msg["content"] = f"{content}\n\n{text}" if content else text
    elif isinstance(content, list):
        content.append({"type": "text", "text": text})
    else:
        return False
    return True


def message_slots(view: View, msg: dict, where: Where) -> Iterator[Slot]:
    yield from view.field_slot(msg, "content", (where, "content"))
    for key, kind in _EXTRA_TEXT:
        if key in msg:  # rare fields: skip the generator when absent (this runs per message per turn)
            yield from view.field_slot(msg, key, (where, key), kind)
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        for j, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                yield from view.args_slot(fn, "arguments", ((((where, "tool_calls"), j), "function"), "arguments"))


def calls_of(msg: dict, position: int) -> list[ToolCall]:
    out = []
    calls = msg.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            raw = fn.get("arguments")
            out.append(ToolCall(str(call.get("id", "")), str(fn.get("name", "")), decode_args(raw), position,
                                raw if isinstance(raw, str) else None))
    return out


def usage_of(u: Any) -> Usage:
    return Usage(usage_int(u, "prompt_tokens"), usage_int(u, "completion_tokens"),
                 usage_int(u, "prompt_tokens_details", "cached_tokens"), None)


class ChatResponse(ResponseViewBase):
    api = API
    usage_of = staticmethod(usage_of)
    __slots__ = ()

    def _choices(self) -> list:
        c = self.body.get("choices")
        return [x for x in c if isinstance(x, dict)] if isinstance(c, list) else []

    def text_slots(self) -> Iterator[Slot]:
        for n, choice in enumerate(self._choices()):
            if isinstance(choice.get("message"), dict):
                yield from message_slots(self, choice["message"], f"choices[{n}].message")

    def tool_calls(self) -> list[ToolCall]:
        out = []
        for n, choice in enumerate(self._choices()):
            if isinstance(choice.get("message"), dict):
                out += calls_of(choice["message"], n)
        return out

    def finish_reasons(self) -> list[str]:
        return [c["finish_reason"] for c in self._choices() if isinstance(c.get("finish_reason"), str)]


class ChatStream:
    """Per-response state: channels opened per choice, closed at its finish."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open: dict[int, list[str]] = {}

    def event(self, name: str | None, raw: bytes, data: bytes | None) -> "ChatEvent":
        return ChatEvent(name, raw, data, self)


class ChatEvent(Event):
    __slots__ = ()

    def _choices(self) -> list[dict]:
        d = self.data
        c = d.get("choices") if isinstance(d, dict) else None
        return [x for x in c if isinstance(x, dict)] if isinstance(c, list) else []

    def deltas(self) -> list[Delta]:
        out = []
        for choice in self._choices():
            n = choice.get("index", 0)
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            opened = self.stream.open.setdefault(n, [])
            for key, kind in (("content", TEXT),) + _EXTRA_TEXT:
                if isinstance(delta.get(key), str):
                    ch = f"{n}:{key}"
                    if ch not in opened:
                        opened.append(ch)
                    out.append(self.delta(delta, key, ch, kind))
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    ch = f"{n}:tool{call.get('index', 0)}"
                    if ch not in opened:
                        opened.append(ch)
                    out.append(self.delta(fn, "arguments", ch, ARGS))
        return out

    def tool_call_starts(self) -> list[tuple[str, str, str]]:
        out = []
        for choice in self._choices():
            delta = choice.get("delta")
            calls = delta.get("tool_calls") if isinstance(delta, dict) else None
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict) and call.get("id"):
                    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
                    out.append((f"{choice.get('index', 0)}:tool{call.get('index', 0)}", str(call["id"]),
                                str(fn.get("name", ""))))
        return out

    def _closing(self) -> list[str]:
        if self.data is None:  # "[DONE]" closes whatever is still open
            return [ch for chans in self.stream.open.values() for ch in chans]
        out = []
        for choice in self._choices():
            if choice.get("finish_reason"):
                out += self.stream.open.pop(choice.get("index", 0), [])
        return out

    def usage(self) -> Usage | None:
        d = self.data
        return usage_of(d["usage"]) if isinstance(d, dict) and isinstance(d.get("usage"), dict) else None

    def response_id(self) -> str | None:
        return self.data.get("id") if isinstance(self.data, dict) else None

    def response_model(self) -> str | None:
        return self.data.get("model") if isinstance(self.data, dict) else None

    def finish_reasons(self) -> list[str]:
        return [c["finish_reason"] for c in self._choices() if isinstance(c.get("finish_reason"), str)]

    def make_delta(self, channel: str, kind: str, text: str) -> "ChatEvent":
        n_text, _, key = channel.partition(":")
        n = int(n_text)
        base = self.data if isinstance(self.data, dict) else {}
        if key.startswith("tool"):
            delta: dict = {"tool_calls": [{"index": int(key[4:]), "function": {"arguments": text}}]}
        else:
            delta = {key: text}
        ev = ChatEvent(None, b"", None, self.stream)
        ev._data = {"id": base.get("id", ""), "object": "chat.completion.chunk",
                    "created": base.get("created", 0), "model": base.get("model", ""),
                    "choices": [{"index": n, "delta": delta, "finish_reason": None}]}
        ev.edits = 1
        return ev


def error_body(status: int, message: str) -> dict:
    etype = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
             404: "not_found_error", 413: "invalid_request_error", 429: "rate_limit_error",
             502: "upstream_error", 504: "timeout"}.get(status, "server_error")
    code = {413: "request_too_large", 502: "bad_gateway", 504: "gateway_timeout"}.get(status)
    return {"error": {"message": message, "type": etype, "param": None, "code": code}}


def stream_error(status: int, message: str, response_id: str | None = None) -> tuple[str | None, dict]:
    return None, error_body(status, message)

