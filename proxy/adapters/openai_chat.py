"""OpenAI Chat Completions (``/v1/chat/completions``).

A message's tool calls come in three shapes: ``tool_calls[].function``
(arguments: JSON text), ``tool_calls[].custom`` (GPT-5 custom tools: free-form
``input`` text) and the legacy ``function_call`` (JSON arguments, no id; its
result is a ``role: "function"`` message naming the function). All three are
slots, tool calls and stream channels alike.

A choice whose text a filter rewrites loses its ``logprobs``: they spell the
original text token by token.
"""
from __future__ import annotations

from typing import Any, Iterator

from ctxproxy.filters.view import ARGS, TEXT, THINKING, Delta, Slot, ToolCall, ToolResult, Usage, Where

from .base import (
    ResponseViewBase,
    RequestViewBase,
    Event,
    StreamState,
    View,
    decode_args,
    has_binary,
    last_marked,
    make_result_replacer,
    part_markers,
    system_text_of,
    text_of,
    usage_int,
)

API = "chat"
SYSTEM_ROLES = ("system", "developer")
_EXTRA_TEXT = (("refusal", TEXT), ("reasoning_content", THINKING), ("reasoning", THINKING))
_TEXT_DELTA_KEYS = frozenset(["content", *(k for k, _ in _EXTRA_TEXT)])
_CHOICE_KEYS = frozenset({"index", "delta", "finish_reason", "logprobs"})


class ChatRequest(RequestViewBase):
    api = API
    items_key = "messages"
    __slots__ = ()

    def item_slots(self, i: int, msg: dict) -> Iterator[Slot]:
        return message_slots(self, msg, ("messages", i))

    aside_keys = ("tools", "prediction")

    def aside_slots(self) -> Iterator[Slot]:
        yield from super().aside_slots()
        prediction = self.body.get("prediction")  # a predicted output: {"type": "content", "content": ...}
        if isinstance(prediction, dict):
            yield from self.field_slot(prediction, "content", "prediction")

    def system_text(self, opening: bool = False) -> str:
        return system_text_of(None, self.items(), SYSTEM_ROLES, opening)

    def first_user_text(self) -> str:
        for msg in self.items():
            if isinstance(msg, dict) and msg.get("role") == "user":
                return text_of(msg.get("content"))
        return ""

    def _find_tool_calls(self) -> list[ToolCall]:
        items = self.items()
        legacy = _legacy_ids(items)
        out = []
        for i, msg in enumerate(items):
            if isinstance(msg, dict) and msg.get("role") == "assistant":
                out += calls_of(msg, i, legacy.get(i, ""))
        return out

    def _find_tool_results(self) -> list[ToolResult]:
        items = self.items()
        legacy = _legacy_ids(items)
        latest: dict[str, str] = {}  # function name -> id of its latest legacy call so far
        out = []
        for i, msg in enumerate(items):
            if not isinstance(msg, dict):
                continue
            role = msg.get("role")
            if i in legacy:
                latest[str(msg["function_call"].get("name", ""))] = legacy[i]
            elif role in ("tool", "function"):
                call_id = msg.get("tool_call_id", "") if role == "tool" else latest.get(str(msg.get("name", "")), "")
                content = msg.get("content")
                out.append(ToolResult(str(call_id), text_of(content), False, i,
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

    def add_result_segment(self, position: int, text: str) -> str:
        """A user message right after the tool message ``position`` (the last of its
        round: a tool message must follow its call's message, another user message
        may follow them)."""
        items = self.items()
        msg = items[position] if 0 <= position < len(items) else None
        if not isinstance(msg, dict) or msg.get("role") not in ("tool", "function"):
            return ""
        items.insert(position + 1, {"role": "user", "content": text})
        self.mark_changed()
        return "result:new_message"


def _append_text(msg: dict, text: str) -> bool:
    content = msg.get("content")
    if isinstance(content, str):
        msg["content"] = f"{content}\n\n{text}" if content else text
    elif isinstance(content, list):
        content.append({"type": "text", "text": text})
    else:
        return False
    return True


def message_slots(view: Any, msg: dict, where: Where) -> Iterator[Slot]:
    """``view`` is the request view, or a ``_ChoiceEdit`` for a response choice."""
    yield from view.field_slot(msg, "content", (where, "content"))
    for key, kind in _EXTRA_TEXT:
        if key in msg:  # rare fields: skip the generator when absent (this runs per message per turn)
            yield from view.field_slot(msg, key, (where, key), kind)
    audio = msg.get("audio")  # a spoken answer: its transcript is text the client reads
    if isinstance(audio, dict) and "transcript" in audio:
        yield from view.field_slot(audio, "transcript", ((where, "audio"), "transcript"))
    for _call, body, key, kind, at in _calls(msg, where):
        if kind == ARGS:
            yield from view.args_slot(body, key, (at, key))
        else:
            yield from view.field_slot(body, key, (at, key))


def _calls(msg: dict, where: Where = None) -> Iterator[tuple[dict | None, dict, str, str, Where]]:
    """Each tool call of a message as ``(call, body, key, kind, where)``: its
    payload is ``body[key]``, JSON arguments (ARGS) or a custom tool's
    free-form input (TEXT, as Responses custom calls); ``call`` (which holds
    the id) is None for the legacy ``function_call``."""
    calls = msg.get("tool_calls")
    for j, call in enumerate(calls if isinstance(calls, list) else ()):
        if not isinstance(call, dict):
            continue
        if isinstance(call.get("custom"), dict):
            yield call, call["custom"], "input", TEXT, (((where, "tool_calls"), j), "custom")
        elif isinstance(call.get("function"), dict):
            yield call, call["function"], "arguments", ARGS, (((where, "tool_calls"), j), "function")
    if isinstance(msg.get("function_call"), dict):
        yield None, msg["function_call"], "arguments", ARGS, (where, "function_call")


def calls_of(msg: dict, position: int, legacy_id: str = "") -> list[ToolCall]:
    """``legacy_id``: the id given to a legacy ``function_call`` (none in a
    response: its place in the next request's history is not known yet)."""
    out = []
    for call, body, key, kind, _ in _calls(msg):
        raw = body.get(key)
        json_text = kind == ARGS and isinstance(raw, str)
        out.append(ToolCall(legacy_id if call is None else str(call.get("id", "")), str(body.get("name", "")),
                            decode_args(raw) if kind == ARGS else raw, position, raw if json_text else None))
    return out


def _legacy_ids(items: list) -> dict[int, str]:
    """Ids for the legacy ``function_call``s of a conversation (they have
    none), by position of their message: ``fn@k`` for the k-th, so a
    ``role: "function"`` result can be paired with its call, and a message
    inserted in front (a system prompt) does not renumber them. Short on
    purpose: effects looks ids of 12 characters or more up tenant-wide."""
    out: dict[int, str] = {}
    for i, msg in enumerate(items):
        if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("function_call"), dict):
            out[i] = f"fn@{len(out)}"
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
                yield from message_slots(_ChoiceEdit(choice, self), choice["message"], f"choices[{n}].message")

    def tool_calls(self) -> list[ToolCall]:
        out = []
        for n, choice in enumerate(self._choices()):
            if isinstance(choice.get("message"), dict):
                out += calls_of(choice["message"], n)
        return out

    def finish_reasons(self) -> list[str]:
        return [c["finish_reason"] for c in self._choices() if isinstance(c.get("finish_reason"), str)]


class _ChoiceEdit:
    """Writes into one choice (of a response or of a chunk) go through here:
    one that changes a string also drops the choice's ``logprobs``, which
    would still spell the original (a redacted secret) token by token. Any
    edit, tool arguments included: compatible servers give logprobs for every
    generated token. ``null`` is what the API sends when none were asked
    for, so every client accepts it."""

    __slots__ = ("choice", "owner")

    def __init__(self, choice: dict, owner: View | Event):
        self.choice = choice
        self.owner = owner

    def mark_changed(self) -> None:
        if self.choice.get("logprobs") is not None:
            self.choice["logprobs"] = None
        self.owner.mark_changed()

    # The view's slot helpers and the event's delta helper, touching through mark_changed above.
    field_slot = View.field_slot
    parts = View.parts
    args_slot = View.args_slot
    delta = Event.delta


class ChatStream(StreamState):
    """Per-response state: channels opened per choice, closed at its finish,
    and the envelope (id, created, model) of the latest chunk, for deltas
    made on an event that has none (``[DONE]``)."""

    __slots__ = ("open", "envelope")

    def __init__(self) -> None:
        self.open: dict[int, list[str]] = {}
        self.envelope: dict = {}

    def event(self, name: str | None, raw: bytes, data: bytes | None) -> "ChatEvent":
        return ChatEvent(name, raw, data, self)


def _carries(raw: bytes, key: bytes, null: bytes) -> bool:
    """Whether ``raw`` has ``key`` somewhere not followed by null (spaced out: read as
    carrying something)."""
    n = raw.count(key)
    return n > 0 and n > raw.count(null)


class ChatEvent(Event):
    # Found once per chunk, as several filters ask: its choices (the dicts of its list,
    # which edits change in place) and whether its bytes carry usage or a finish reason.
    __slots__ = ("_chosen", "_carried")

    def _unnamed_meta(self, id_known: bool) -> bool:
        # A key followed by null carries nothing: a provider asked for usage sends
        # ``"usage":null`` in every chunk, and every choice says ``"finish_reason":null``
        # until it ends. Counted, so one choice's null does not hide another's finish.
        if not id_known:
            return True
        try:
            return self._carried
        except AttributeError:
            raw = self.raw or b""
            self._carried = carried = (_carries(raw, b'"usage"', b'"usage":null')
                                       or _carries(raw, b'"finish_reason"', b'"finish_reason":null'))
            return carried

    def _choices(self) -> list[dict]:
        try:
            return self._chosen
        except AttributeError:
            d = self.data
            c = d.get("choices") if isinstance(d, dict) else None
            self._chosen = chosen = [x for x in c if isinstance(x, dict)] if isinstance(c, list) else []
            return chosen

    def _choice_deltas(self) -> Iterator[tuple[int, dict, dict]]:
        """(index, choice, delta) of each choice this chunk has a delta for."""
        for choice in self._choices():
            delta = choice.get("delta")
            if isinstance(delta, dict):
                yield _index(choice), choice, delta

    def _find_deltas(self) -> list[Delta]:
        d = self.data
        if isinstance(d, dict) and "id" in d:
            self.stream.envelope = {k: d[k] for k in ("id", "created", "model") if k in d}
        out = []
        for n, choice, delta in self._choice_deltas():
            edit = _ChoiceEdit(choice, self)
            opened = self.stream.open.setdefault(n, [])
            for obj, key, ch, kind in _delta_fields(n, delta):
                if ch not in opened:
                    opened.append(ch)
                out.append(edit.delta(obj, key, ch, kind))
        return out

    def text_run(self) -> tuple[Any, dict, str] | None:
        if not self.only_deltas():
            return None
        d = self.data
        choices = d["choices"]  # a list, its choices text deltas alone (only_deltas)
        if len(choices) != 1 or not isinstance(choices[0], dict):
            return None
        delta = choices[0]["delta"]
        if len(delta) != 1 or not isinstance(delta.get("content"), str):
            return None
        # The envelope (id, created, model, fingerprint, anything unknown) must be the same to join.
        return (choices[0].get("index"), [kv for kv in d.items() if kv[0] != "choices"]), delta, "content"

    def only_deltas(self) -> bool:
        """A chunk of text deltas only: no usage, and in each choice no finish,
        no logprobs (an edit nulls them), and a delta of text keys alone (the
        role chunk, tool calls and anything unknown are kept)."""
        d = self.data
        choices = self._choices()
        if not choices or not isinstance(d, dict) or d.get("usage") is not None:
            return False
        return all(set(c) <= _CHOICE_KEYS and c.get("finish_reason") is None and c.get("logprobs") is None
                   and isinstance(c.get("delta"), dict) and _text_only(c["delta"]) for c in choices)

    def _find_tool_call_starts(self) -> list[tuple[str, str, str]]:
        out = []
        for n, _, delta in self._choice_deltas():
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict) and call.get("id"):
                    body = call.get("custom") or call.get("function")
                    name = body.get("name", "") if isinstance(body, dict) else ""
                    out.append((f"{n}:tool{_index(call)}", str(call["id"]), str(name)))
            fc = delta.get("function_call")
            if isinstance(fc, dict) and isinstance(fc.get("name"), str):  # the name comes once, first
                out.append((f"{n}:function_call", "", fc["name"]))
        return out

    def _closing(self) -> list[str]:
        if self._data_bytes == b"[DONE]":  # closes whatever is still open
            return [ch for chans in self.stream.open.values() for ch in chans]
        # Comments (keep-alives such as ": OPENROUTER PROCESSING"), blank lines and
        # unparseable data have no choices: they close nothing.
        out = []
        for choice in self._choices():
            if choice.get("finish_reason"):
                out += self.stream.open.pop(_index(choice), [])
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
        base = self.data if isinstance(self.data, dict) else self.stream.envelope
        delta: dict
        if key.startswith("tool"):
            payload = {"function": {"arguments": text}} if kind == ARGS else {"custom": {"input": text}}
            delta = {"tool_calls": [{"index": int(key[4:]), **payload}]}
        elif key == "function_call":
            delta = {"function_call": {"arguments": text}}
        elif key == "audio":
            delta = {"audio": {"transcript": text}}
        else:
            delta = {key: text}
        ev = ChatEvent(None, b"", None, self.stream)
        ev._data = {"id": base.get("id", ""), "object": "chat.completion.chunk",
                    "created": base.get("created", 0), "model": base.get("model", ""),
                    "choices": [{"index": n, "delta": delta, "finish_reason": None}]}
        ev.edits = 1
        return ev


def _text_only(delta: dict) -> bool:
    """Whether a delta holds text alone: text keys, or a spoken answer's bare
    transcript piece (one carrying the audio's id or data is kept)."""
    for key, value in delta.items():
        if key not in _TEXT_DELTA_KEYS and not (key == "audio" and isinstance(value, dict)
                                                and value.keys() <= {"transcript"}):
            return False
    return True


def _index(obj: dict) -> int:
    """A choice's or a streamed tool call's ``index`` (0 when absent); -1 for one
    that is not an integer, so a malformed chunk has a channel of its own."""
    i = obj.get("index", 0)
    return i if type(i) is int else -1


def _delta_fields(n: int, delta: dict) -> Iterator[tuple[dict, str, str, str]]:
    """``(obj, key, channel, kind)`` for each streamed string of choice ``n``'s
    delta. A custom tool's input (if a server streams one) is text on its
    tool's channel; the legacy ``function_call`` has a channel of its own."""
    for key, kind in (("content", TEXT),) + _EXTRA_TEXT:
        if isinstance(delta.get(key), str):
            yield delta, key, f"{n}:{key}", kind
    calls = delta.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if not isinstance(call, dict):
            continue
        for body, key, kind in ((call.get("function"), "arguments", ARGS), (call.get("custom"), "input", TEXT)):
            if isinstance(body, dict) and isinstance(body.get(key), str):
                yield body, key, f"{n}:tool{_index(call)}", kind
    fc = delta.get("function_call")
    if isinstance(fc, dict) and isinstance(fc.get("arguments"), str):
        yield fc, "arguments", f"{n}:function_call", ARGS
    audio = delta.get("audio")
    if isinstance(audio, dict) and isinstance(audio.get("transcript"), str):
        yield audio, "transcript", f"{n}:audio", TEXT


def error_body(status: int, message: str) -> dict:
    etype = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
             404: "not_found_error", 413: "invalid_request_error", 429: "rate_limit_error",
             502: "upstream_error", 504: "timeout"}.get(status, "server_error")
    code = {413: "request_too_large", 502: "bad_gateway", 504: "gateway_timeout"}.get(status)
    return {"error": {"message": message, "type": etype, "param": None, "code": code}}


def stream_error(status: int, message: str, response_id: str | None = None,
                 after: bytes = b"") -> tuple[str | None, dict]:
    return None, error_body(status, message)

