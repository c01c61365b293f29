"""A scriptable model provider for tests, benchmarks and ``ctxproxy demo``.

Shipped in the package (not only in tests/) because ``ctxproxy demo`` runs an
agent session against it on a machine with no provider at all.

It speaks the real wire formats of the Anthropic Messages API, OpenAI Chat
Completions and OpenAI Responses (HTTP+SSE, and Responses over WebSocket as
Codex uses it), records every request, and answers each model request with the
next scripted :class:`Reply`.

    async with FakeProvider() as fp:
        fp.script(Reply.tool_call("read_file", {"path": "a.txt"}),
                  Reply.text("done", drop_after_events=3))
        ...  # point a client at fp.url
        assert fp.last.json["model"] == "claude-test-1"

One reply model is rendered by three small renderers (``_AnthropicRender``,
``_ChatRender``, ``_ResponsesRender``); one pump (``FakeProvider._pump``)
writes any renderer's events to an SSE body or a WebSocket and applies the
fault knobs.

Standalone (benchmarks):  ``python -m ctxproxy.proxy.scripted_provider 8089 [--text ...]``,
or ``FakeProviderThread`` to run one in a background thread.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import random
import secrets
import string
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Union

from aiohttp import WSMsgType, web
from multidict import CIMultiDict

from .sse import encode_event

DEFAULT_TEXT = "Hello from fake."
ANTHROPIC_MODEL = "claude-test-1"
OPENAI_MODEL = "gpt-5"

# --------------------------------------------------------------------------- reply model


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    """Anthropic thinking block (with signature) / Responses reasoning item (summary).
    Not rendered by Chat Completions, which has no reasoning output."""

    text: str
    signature: str = "fake-signature-EqQBCkYIBRgCIkA="


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True)
class CustomToolCall:
    """Responses ``custom_tool_call`` (free-form input, e.g. Codex apply_patch).
    Anthropic / Chat render it as an ordinary tool call with ``{"input": <text>}``."""

    name: str
    input: str
    call_id: str | None = None


Part = Union[Text, Thinking, ToolCall, CustomToolCall]


@dataclass(frozen=True)
class Usage:
    """Token counts, reported literally in each API's own fields (no arithmetic
    besides totals). ``None`` means: estimate from the request / output size."""

    input_tokens: int | None = None  # anthropic input_tokens / chat prompt_tokens / responses input_tokens
    output_tokens: int | None = None
    cache_read_tokens: int = 0  # anthropic cache_read_input_tokens / openai cached_tokens
    cache_creation_tokens: int = 0  # anthropic cache_creation_input_tokens / responses cache_write_tokens
    reasoning_tokens: int = 0  # openai reasoning_tokens


@dataclass(frozen=True)
class ErrorSpec:
    status: int
    message: str
    type: str | None = None  # default derived from status, per API
    code: str | None = None  # OpenAI "code"


_USAGE_FIELDS = {f.name for f in dataclasses.fields(Usage)}


def _fold_usage(knobs: dict, base: Usage) -> dict:
    """Move Usage fields given as knobs (input_tokens=...) into knobs["usage"]."""
    usage_kw = {k: knobs.pop(k) for k in list(knobs) if k in _USAGE_FIELDS}
    if usage_kw:
        knobs["usage"] = dataclasses.replace(knobs.get("usage", base), **usage_kw)
    return knobs


@dataclass(frozen=True)
class Reply:
    parts: tuple[Part, ...] = ()
    usage: Usage = Usage()
    error_spec: ErrorSpec | None = None  # set by Reply.error(...)
    stop_reason: str | None = None  # e.g. "max_tokens" -> chat "length", responses "incomplete"
    model: str | None = None  # default: echo the request's model
    headers: Mapping[str, str] = field(default_factory=dict)  # extra response headers
    # fault knobs (the *_after_events / chunk knobs apply to streams; on a non-stream request
    # drop/stall_after_events send half the announced body, then drop / stall; WS ignores chunk_*)
    delay_before_headers: float = 0.0
    delay_between_events: float = 0.0
    drop_after_events: int | None = None  # close TCP after N events (or at the end, if fewer)
    stall_after_events: int | None = None  # send N events, then never another byte
    fail_after_events: int | None = None  # after N events send the API's mid-stream error event
    fail_message: str = "Internal server error"
    hang: bool = False  # never answer at all
    chunk_split: int = 1  # write each SSE event in this many pieces (HTTP chunks), cut at random byte offsets
    chunk_delay: float = 0.0005  # pause between the pieces of a split event
    delta_chars: int = 12  # max characters per text / argument delta (at least 3 deltas when possible)

    # -- constructors
    @classmethod
    def of(cls, *parts: Part, **knobs: Any) -> "Reply":
        """Any mix of Text / Thinking / ToolCall / CustomToolCall, in output order.
        Knobs: any Reply field, or Usage fields (input_tokens=..., cache_read_tokens=...)."""
        return cls(parts=tuple(parts), **_fold_usage(knobs, Usage()))

    @classmethod
    def text(cls, text: str = DEFAULT_TEXT, **knobs: Any) -> "Reply":
        return cls.of(Text(text), **knobs)

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any] | None = None, call_id: str | None = None,
                  *, text: str | None = None, **knobs: Any) -> "Reply":
        parts: list[Part] = [Text(text)] if text else []
        return cls.of(*parts, ToolCall(name, dict(arguments or {}), call_id), **knobs)

    @classmethod
    def custom_tool_call(cls, name: str, input_text: str, call_id: str | None = None, **knobs: Any) -> "Reply":
        return cls.of(CustomToolCall(name, input_text, call_id), **knobs)

    @classmethod
    def thinking(cls, thinking: str, text: str = DEFAULT_TEXT, signature: str | None = None, **knobs: Any) -> "Reply":
        th = Thinking(thinking, signature) if signature else Thinking(thinking)
        return cls.of(th, Text(text), **knobs)

    @classmethod
    def error(cls, status: int, message: str, type: str | None = None, code: str | None = None,
              **knobs: Any) -> "Reply":
        return cls.of(error_spec=ErrorSpec(status, message, type, code), **knobs)

    # -- derived copies
    def plus(self, *parts: Part) -> "Reply":
        return dataclasses.replace(self, parts=self.parts + tuple(parts))

    def with_(self, **knobs: Any) -> "Reply":
        return dataclasses.replace(self, **_fold_usage(knobs, self.usage))


ReplySource = Union[Reply, str, Callable[["Record"], Union[Reply, str]]]

# --------------------------------------------------------------------------- recording


@dataclass
class Record:
    method: str  # "WS" for a frame received on the Responses WebSocket
    path: str
    query: str
    headers: CIMultiDict  # case-insensitive copy (of the handshake, for WS frames)
    body: bytes
    json: Any  # parsed body, or None
    api: str | None = None  # "anthropic" | "chat" | "responses" | "responses_ws" | None
    time: float = field(default_factory=time.time)
    reply: Reply | None = None  # the reply that answered it (model requests)
    response_id: str | None = None  # the Responses id of the answer (a test checks what continues it)

    @property
    def stream(self) -> bool:
        return isinstance(self.json, dict) and bool(self.json.get("stream"))


# --------------------------------------------------------------------------- helpers

_ALNUM = string.ascii_letters + string.digits


def _rid(prefix: str, n: int = 24) -> str:
    return prefix + "".join(secrets.choice(_ALNUM) for _ in range(n))


def _dumps(obj: Any) -> str:
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate the request carried, echoed: escaped, as JSON allows
        s = json.dumps(obj, separators=(",", ":"))
    return s


def _pieces(s: str, max_chars: int) -> list[str]:
    """Split into deltas of at most max_chars, and into at least 3 when possible."""
    if not s:
        return []
    size = max(1, min(max_chars, math.ceil(len(s) / 3)))
    return [s[i:i + size] for i in range(0, len(s), size)]


def _split_bytes(data: bytes, k: int, rng: random.Random) -> list[bytes]:
    if k <= 1 or len(data) < 2:
        return [data]
    cuts = sorted(rng.sample(range(1, len(data)), min(k - 1, len(data) - 1)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]


def _tool_args(p: ToolCall | CustomToolCall) -> dict:
    return dict(p.arguments) if isinstance(p, ToolCall) else {"input": p.input}


_ANTHROPIC_ERR = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                  404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                  500: "api_error", 529: "overloaded_error"}
_OPENAI_ERR = {400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
               403: ("permission_error", None), 404: ("invalid_request_error", "not_found"),
               429: ("rate_limit_error", "rate_limit_exceeded"), 500: ("server_error", None),
               503: ("server_error", None)}

Event = tuple[Union[str, None], Any]  # (SSE event name or None, JSON payload or raw data string)


# --------------------------------------------------------------------------- renderers


class _Render:
    """Renders one Reply for one request of one API: a full body, or a stream of events."""

    api = ""
    default_model = OPENAI_MODEL
    named_events = True  # SSE "event:" lines

    def __init__(self, reply: Reply, req: dict, record: Record):
        self.reply, self.req = reply, req
        self.model = reply.model or req.get("model") or self.default_model
        self.created = int(time.time())
        u = reply.usage
        out_chars = sum(len(p.text) if isinstance(p, (Text, Thinking)) else len(_dumps(_tool_args(p)))
                        for p in reply.parts)
        self.u = dataclasses.replace(
            u,
            input_tokens=u.input_tokens if u.input_tokens is not None else max(1, len(record.body) // 4),
            output_tokens=u.output_tokens if u.output_tokens is not None else max(1, out_chars // 4),
        )

    def deltas(self, s: str) -> list[str]:
        return _pieces(s, self.reply.delta_chars)

    def body(self) -> dict: raise NotImplementedError
    def events(self) -> Iterator[Event]: raise NotImplementedError
    def failure(self, message: str) -> Event: raise NotImplementedError
    @staticmethod
    def error_body(err: ErrorSpec) -> dict: raise NotImplementedError


class _AnthropicRender(_Render):
    api = "anthropic"
    default_model = ANTHROPIC_MODEL

    def __init__(self, reply: Reply, req: dict, record: Record):
        super().__init__(reply, req, record)
        self.id = _rid("msg_01")
        self.blocks: list[dict] = []
        for p in reply.parts:
            if isinstance(p, Text):
                self.blocks.append({"type": "text", "text": p.text})
            elif isinstance(p, Thinking):
                self.blocks.append({"type": "thinking", "thinking": p.text, "signature": p.signature})
            else:
                self.blocks.append({"type": "tool_use", "id": p.call_id or _rid("toolu_01"),
                                    "name": p.name, "input": _tool_args(p)})
        has_tool = any(b["type"] == "tool_use" for b in self.blocks)
        self.stop_reason = reply.stop_reason or ("tool_use" if has_tool else "end_turn")

    def usage(self, output_tokens: int) -> dict:
        return {"input_tokens": self.u.input_tokens, "cache_creation_input_tokens": self.u.cache_creation_tokens,
                "cache_read_input_tokens": self.u.cache_read_tokens, "output_tokens": output_tokens,
                "service_tier": "standard"}

    def message(self, content: list, stop_reason: str | None, output_tokens: int) -> dict:
        return {"id": self.id, "type": "message", "role": "assistant", "model": self.model, "content": content,
                "stop_reason": stop_reason, "stop_sequence": None, "usage": self.usage(output_tokens)}

    def body(self) -> dict:
        return self.message(self.blocks, self.stop_reason, self.u.output_tokens)

    def events(self) -> Iterator[Event]:
        yield "message_start", {"type": "message_start", "message": self.message([], None, 1)}
        if not self.blocks:
            yield "ping", {"type": "ping"}
        for i, b in enumerate(self.blocks):
            kind = b["type"]
            start = {"text": {"type": "text", "text": ""},
                     "thinking": {"type": "thinking", "thinking": "", "signature": ""},
                     "tool_use": {**b, "input": {}}}[kind]
            yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
            if i == 0:
                yield "ping", {"type": "ping"}
            if kind == "text":
                deltas = [{"type": "text_delta", "text": s} for s in self.deltas(b["text"])]
            elif kind == "thinking":
                deltas = [{"type": "thinking_delta", "thinking": s} for s in self.deltas(b["thinking"])]
                deltas.append({"type": "signature_delta", "signature": b["signature"]})
            else:
                deltas = [{"type": "input_json_delta", "partial_json": s} for s in self.deltas(_dumps(b["input"]))]
            for d in deltas:
                yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}
            yield "content_block_stop", {"type": "content_block_stop", "index": i}
        yield "message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": self.stop_reason, "stop_sequence": None},
                                "usage": self.usage(self.u.output_tokens)}
        yield "message_stop", {"type": "message_stop"}

    def failure(self, message: str) -> Event:
        return "error", {"type": "error", "error": {"type": "overloaded_error", "message": message}}

    @staticmethod
    def error_body(err: ErrorSpec) -> dict:
        etype = err.type or _ANTHROPIC_ERR.get(err.status, "api_error" if err.status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": etype, "message": err.message}, "request_id": _rid("req_011")}


class _OpenAIRender(_Render):
    def failure_error(self, message: str) -> dict:
        return {"message": message, "type": "server_error", "param": None, "code": "server_error"}

    @staticmethod
    def error_body(err: ErrorSpec) -> dict:
        etype, code = _OPENAI_ERR.get(err.status, ("server_error" if err.status >= 500 else "invalid_request_error",
                                                   None))
        return {"error": {"message": err.message, "type": err.type or etype, "param": None, "code": err.code or code}}


class _ChatRender(_OpenAIRender):
    api = "chat"
    named_events = False
    _FINISH = {"max_tokens": "length", "end_turn": "stop", "tool_use": "tool_calls"}

    def __init__(self, reply: Reply, req: dict, record: Record):
        super().__init__(reply, req, record)
        self.id = _rid("chatcmpl-", 29)
        texts = [p.text for p in reply.parts if isinstance(p, Text)]
        self.content = "".join(texts) if texts else None
        self.calls = [{"id": p.call_id or _rid("call_"), "type": "function",
                       "function": {"name": p.name, "arguments": _dumps(_tool_args(p))}}
                      for p in reply.parts if isinstance(p, (ToolCall, CustomToolCall))]
        sr = reply.stop_reason
        self.finish = self._FINISH.get(sr, sr) if sr else ("tool_calls" if self.calls else "stop")
        self.include_usage = bool((req.get("stream_options") or {}).get("include_usage"))

    def usage(self) -> dict:
        u = self.u
        return {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
                "total_tokens": u.input_tokens + u.output_tokens,
                "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}

    def envelope(self, obj: str, choices: list) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model,
                "service_tier": "default", "system_fingerprint": "fp_fake", "choices": choices}

    def body(self) -> dict:
        msg: dict = {"role": "assistant", "content": self.content, "refusal": None, "annotations": []}
        if self.calls:
            msg["tool_calls"] = self.calls
        body = self.envelope("chat.completion", [{"index": 0, "message": msg, "logprobs": None,
                                                  "finish_reason": self.finish}])
        body["usage"] = self.usage()
        return body

    def chunk(self, delta: dict, finish: str | None = None) -> Event:
        c = self.envelope("chat.completion.chunk", [{"index": 0, "delta": delta, "logprobs": None,
                                                     "finish_reason": finish}])
        if self.include_usage:
            c["usage"] = None
        return None, c

    def events(self) -> Iterator[Event]:
        yield self.chunk({"role": "assistant", "content": "", "refusal": None})
        for s in self.deltas(self.content or ""):
            yield self.chunk({"content": s})
        for j, call in enumerate(self.calls):
            fn = call["function"]
            yield self.chunk({"tool_calls": [{"index": j, "id": call["id"], "type": "function",
                                              "function": {"name": fn["name"], "arguments": ""}}]})
            for s in self.deltas(fn["arguments"]):
                yield self.chunk({"tool_calls": [{"index": j, "function": {"arguments": s}}]})
        yield self.chunk({}, self.finish)
        if self.include_usage:
            yield None, {**self.envelope("chat.completion.chunk", []), "usage": self.usage()}
        yield None, "[DONE]"

    def failure(self, message: str) -> Event:
        return None, {"error": self.failure_error(message)}


class _ResponsesRender(_OpenAIRender):
    api = "responses"

    def __init__(self, reply: Reply, req: dict, record: Record):
        super().__init__(reply, req, record)
        self.id = record.response_id = _rid("resp_", 32)
        self.seq = 0
        want_encrypted = "reasoning.encrypted_content" in (req.get("include") or [])
        self.items: list[dict] = []
        for p in reply.parts:
            if isinstance(p, Text):
                self.items.append({"id": _rid("msg_", 32), "type": "message", "status": "completed",
                                   "role": "assistant",
                                   "content": [{"type": "output_text", "text": p.text, "annotations": [],
                                                "logprobs": []}]})
            elif isinstance(p, Thinking):
                item = {"id": _rid("rs_", 32), "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": p.text}]}
                if want_encrypted:
                    item["encrypted_content"] = p.signature
                self.items.append(item)
            elif isinstance(p, ToolCall):
                self.items.append({"id": _rid("fc_", 32), "type": "function_call", "status": "completed",
                                   "arguments": _dumps(dict(p.arguments)), "call_id": p.call_id or _rid("call_"),
                                   "name": p.name})
            else:
                self.items.append({"id": _rid("ctc_", 32), "type": "custom_tool_call",
                                   "call_id": p.call_id or _rid("call_"), "name": p.name, "input": p.input})
        self.incomplete = reply.stop_reason in ("max_tokens", "max_output_tokens", "incomplete")

    def usage(self) -> dict:
        u = self.u
        return {"input_tokens": u.input_tokens,
                "input_tokens_details": {"cached_tokens": u.cache_read_tokens,
                                         "cache_write_tokens": u.cache_creation_tokens},
                "output_tokens": u.output_tokens,
                "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
                "total_tokens": u.input_tokens + u.output_tokens}

    def response(self, status: str, output: list, usage: dict | None = None, error: dict | None = None) -> dict:
        r = self.req
        return {
            "id": self.id, "object": "response", "created_at": self.created, "status": status,
            "background": False, "error": error,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "instructions": r.get("instructions"), "max_output_tokens": r.get("max_output_tokens"),
            "model": self.model, "output": output, "parallel_tool_calls": r.get("parallel_tool_calls", True),
            "previous_response_id": r.get("previous_response_id"),
            "prompt_cache_key": r.get("prompt_cache_key"),
            "reasoning": {"effort": None, "summary": None, **(r.get("reasoning") or {})},
            "store": r.get("store", True), "temperature": r.get("temperature", 1.0),
            "text": r.get("text") or {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": r.get("tool_choice", "auto"), "tools": r.get("tools") or [],
            "top_p": r.get("top_p", 1.0), "truncation": r.get("truncation") or "disabled",
            "usage": usage, "user": None, "metadata": r.get("metadata") or {},
            **({"completed_at": int(time.time())} if status == "completed" else {}),
        }

    def final_status(self) -> str:
        return "incomplete" if self.incomplete else "completed"

    def body(self) -> dict:
        return self.response(self.final_status(), self.items, self.usage())

    def ev(self, type_: str, **fields: Any) -> Event:
        e = (type_, {"type": type_, **fields, "sequence_number": self.seq})
        self.seq += 1
        return e

    def events(self) -> Iterator[Event]:
        yield self.ev("response.created", response=self.response("in_progress", []))
        yield self.ev("response.in_progress", response=self.response("in_progress", []))
        for oi, item in enumerate(self.items):
            kind, ids = item["type"], {"item_id": item["id"], "output_index": oi}
            if kind == "message":
                part = item["content"][0]
                yield self.ev("response.output_item.added", output_index=oi,
                              item={**item, "status": "in_progress", "content": []})
                yield self.ev("response.content_part.added", **ids, content_index=0, part={**part, "text": ""})
                for s in self.deltas(part["text"]):
                    yield self.ev("response.output_text.delta", **ids, content_index=0, delta=s, logprobs=[])
                yield self.ev("response.output_text.done", **ids, content_index=0, text=part["text"], logprobs=[])
                yield self.ev("response.content_part.done", **ids, content_index=0, part=part)
            elif kind == "reasoning":
                yield self.ev("response.output_item.added", output_index=oi, item={**item, "summary": []})
                for si, summ in enumerate(item["summary"]):
                    yield self.ev("response.reasoning_summary_part.added", **ids, summary_index=si,
                                  part={**summ, "text": ""})
                    for s in self.deltas(summ["text"]):
                        yield self.ev("response.reasoning_summary_text.delta", **ids, summary_index=si, delta=s)
                    yield self.ev("response.reasoning_summary_text.done", **ids, summary_index=si, text=summ["text"])
                    yield self.ev("response.reasoning_summary_part.done", **ids, summary_index=si, part=summ)
            else:
                field_, prefix = (("arguments", "response.function_call_arguments") if kind == "function_call"
                                  else ("input", "response.custom_tool_call_input"))
                skeleton = {**item, field_: ""}
                if "status" in item:
                    skeleton["status"] = "in_progress"
                yield self.ev("response.output_item.added", output_index=oi, item=skeleton)
                for s in self.deltas(item[field_]):
                    yield self.ev(prefix + ".delta", **ids, delta=s)
                yield self.ev(prefix + ".done", **ids, **{field_: item[field_]})
            yield self.ev("response.output_item.done", output_index=oi, item=item)
        status = self.final_status()
        yield self.ev("response." + status, response=self.response(status, self.items, self.usage()))

    def failure(self, message: str) -> Event:
        return self.ev("response.failed", response=self.response(
            "failed", [], error={"code": "server_error", "message": message}))

    def ws_error(self, err: ErrorSpec) -> dict:
        return {"type": "error", "status": err.status, **self.error_body(err)}


_RENDERERS: dict[str, type[_Render]] = {"anthropic": _AnthropicRender, "chat": _ChatRender,
                                        "responses": _ResponsesRender}


def _sse(ev: Event, named: bool) -> bytes:
    name, data = ev
    payload = data if isinstance(data, str) else _dumps(data)
    return encode_event(name if named else None, payload.encode())


def render_answer(api: str, reply: Reply, body: bytes) -> tuple[int, dict[str, str], list[bytes]]:
    """What the provider answers a model request of ``api`` with, in memory:
    (status, headers, body chunks as they would arrive) — the same bytes the
    server writes, for a provider written as a function (the turn engine's
    transport in tests). ``fail_after_events`` and ``chunk_split`` apply; a
    dropped stream simply ends early."""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    rec = Record("POST", "", "", CIMultiDict(), body, parsed, api, reply=reply)
    render_cls = _RENDERERS[api]
    if not isinstance(parsed, dict):
        return 400, {"Content-Type": "application/json"}, [
            _dumps(render_cls.error_body(ErrorSpec(400, "Could not parse the JSON body of your request."))).encode()]
    render = render_cls(reply, parsed, rec)
    headers = {"request-id": _rid("req_011"), **reply.headers}
    if reply.error_spec:
        return reply.error_spec.status, {**headers, "Content-Type": "application/json"}, [
            _dumps(render.error_body(reply.error_spec)).encode()]
    if not rec.stream:
        return 200, {**headers, "Content-Type": "application/json"}, [_dumps(render.body()).encode()]
    rng = random.Random(0)
    chunks: list[bytes] = []
    for n, ev in enumerate(render.events()):
        if reply.fail_after_events is not None and n >= reply.fail_after_events:
            chunks.append(_sse(render.failure(reply.fail_message), render.named_events))
            break
        if reply.drop_after_events is not None and n >= reply.drop_after_events:
            break
        chunks.extend(_split_bytes(_sse(ev, render.named_events), reply.chunk_split, rng))
    return 200, {**headers, "Content-Type": "text/event-stream; charset=utf-8"}, chunks


# --------------------------------------------------------------------------- the server


class FakeProvider:
    def __init__(self, *, default_reply: ReplySource | None = None, record_limit: int | None = None,
                 count_tokens: int | None = None):
        self.requests: list[Record] = []
        self.default_reply: ReplySource = default_reply or Reply.text(DEFAULT_TEXT)
        self.record_limit = record_limit  # keep only the newest N records (long benchmarks)
        self.count_tokens = count_tokens  # fixed count_tokens answer; None = estimate
        self.url = ""
        self._queue: deque[ReplySource] = deque()
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._ws_transports: set[Any] = set()
        self.app = self._make_app()

    # -- lifecycle
    async def start(self, host: str = "127.0.0.1", port: int = 0, ssl_context: Any = None,
                    url_host: str | None = None) -> "FakeProvider":
        """Listen on ``host:port``; with ``ssl_context``, over TLS (``url`` is then
        https, naming ``url_host`` — the name its certificate holds — if given)."""
        self._stopping = asyncio.Event()
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
        await site.start()
        h, p = self._runner.addresses[0][:2]
        self.url = f"{'https' if ssl_context is not None else 'http'}://{url_host or h}:{p}"
        return self

    async def stop(self) -> None:
        if self._runner is None:
            return
        assert self._stopping is not None
        self._stopping.set()  # releases hung / stalled handlers
        for t in list(self._ws_transports):
            t.close()
        runner, self._runner = self._runner, None
        await runner.cleanup()

    async def __aenter__(self) -> "FakeProvider":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    @property
    def ws_url(self) -> str:
        return self.url.replace("http", "ws", 1) + "/v1/responses"

    # -- scripting and records
    def script(self, *replies: ReplySource) -> "FakeProvider":
        """Queue replies, consumed one per model request (any API). A reply may be a Reply,
        a str (text reply) or a callable(Record) -> Reply."""
        self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    @property
    def last(self) -> Record | None:
        return self.requests[-1] if self.requests else None

    @property
    def model_requests(self) -> list[Record]:
        return [r for r in self.requests if r.api]

    def clear(self) -> None:
        """Forget recorded requests (the script queue is kept; see reset())."""
        self.requests.clear()

    def reset(self) -> None:
        self.requests.clear()
        self._queue.clear()

    def _next_reply(self, rec: Record) -> Reply:
        src = self._queue.popleft() if self._queue else self.default_reply
        if callable(src) and not isinstance(src, Reply):
            src = src(rec)
        reply = Reply.text(src) if isinstance(src, str) else src
        rec.reply = reply
        return reply

    def _add(self, rec: Record) -> Record:
        self.requests.append(rec)
        if self.record_limit is not None and len(self.requests) > 2 * self.record_limit:
            del self.requests[:-self.record_limit]
        return rec

    async def _record(self, request: web.Request, api: str | None) -> Record:
        body = await request.read()
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        return self._add(Record(request.method, request.path, request.query_string,
                                CIMultiDict(request.headers), body, parsed, api))

    # -- app
    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        r = app.router
        r.add_post("/v1/messages", self._model_handler("anthropic"))
        r.add_post("/v1/messages/count_tokens", self._count_tokens)
        r.add_post("/v1/chat/completions", self._model_handler("chat"))
        r.add_post("/v1/responses", self._model_handler("responses"))
        r.add_get("/v1/responses", self._websocket)
        r.add_get("/v1/models", self._models)
        r.add_get("/", self._root)
        r.add_route("*", "/{tail:.*}", self._not_found)
        return app

    def _model_handler(self, api: str) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await self._model(request, api)
        return handler

    async def _root(self, request: web.Request) -> web.Response:
        await self._record(request, None)
        return web.Response(text="ok")

    async def _not_found(self, request: web.Request) -> web.Response:
        await self._record(request, None)
        err = ErrorSpec(404, f"Not found: {request.method} {request.path}")
        render = _AnthropicRender if "anthropic-version" in request.headers else _OpenAIRender
        return web.json_response(render.error_body(err), status=404)

    async def _models(self, request: web.Request) -> web.Response:
        await self._record(request, None)
        if "anthropic-version" in request.headers:
            names = {ANTHROPIC_MODEL: "Claude Sonnet 4.5", "claude-opus-4-1": "Claude Opus 4.1",
                     "claude-haiku-4-5": "Claude Haiku 4.5"}
            ids = list(names)
            data = [{"type": "model", "id": m, "display_name": name, "created_at": "2025-09-29T00:00:00Z",
                     "lifecycle": "active"} for m, name in names.items()]
            return web.json_response({"data": data, "has_more": False, "first_id": ids[0], "last_id": ids[-1]})
        ids = [OPENAI_MODEL, "gpt-5-codex", "gpt-4.1"]
        return web.json_response({"object": "list", "data": [
            {"id": m, "object": "model", "created": 1754000000, "owned_by": "openai"} for m in ids]})

    async def _count_tokens(self, request: web.Request) -> web.Response:
        rec = await self._record(request, None)
        if not isinstance(rec.json, dict):
            return web.json_response(_AnthropicRender.error_body(ErrorSpec(400, "invalid JSON body")), status=400)
        n = self.count_tokens
        if n is None:
            n = max(1, len(_dumps([rec.json.get(k) for k in ("system", "messages", "tools")])) // 4)
        return web.json_response({"input_tokens": n})

    async def _hang(self, transport: Any) -> None:
        assert self._stopping is not None
        await self._stopping.wait()
        if transport is not None:
            transport.close()

    async def _pump(self, reply: Reply, render: _Render, send: Callable[[Event], Any]) -> str:
        """Send the renderer's events through `send`, applying the fault knobs.
        Returns "done", "drop" (caller must close the connection) or "stall"."""
        n = 0
        for ev in render.events():
            if reply.fail_after_events is not None and n >= reply.fail_after_events:
                await send(render.failure(reply.fail_message))
                return "done"
            if reply.drop_after_events is not None and n >= reply.drop_after_events:
                return "drop"
            if reply.stall_after_events is not None and n >= reply.stall_after_events:
                return "stall"
            if n and reply.delay_between_events:
                await asyncio.sleep(reply.delay_between_events)
            await send(ev)
            n += 1
        return "drop" if reply.drop_after_events is not None else "done"

    async def _model(self, request: web.Request, api: str) -> web.StreamResponse:
        rec = await self._record(request, api)
        render_cls = _RENDERERS[api]
        if not isinstance(rec.json, dict):
            err = ErrorSpec(400, "Could not parse the JSON body of your request.")
            return web.json_response(render_cls.error_body(err), status=400)
        reply = self._next_reply(rec)
        if reply.hang:
            await self._hang(request.transport)
            return web.Response(status=504)  # never reaches a client: the connection is closed
        if reply.delay_before_headers:
            await asyncio.sleep(reply.delay_before_headers)
        render = render_cls(reply, rec.json, rec)
        headers = {"request-id": _rid("req_011"), "x-request-id": _rid("req_"), **reply.headers}
        if reply.error_spec:
            err = reply.error_spec
            return web.json_response(render.error_body(err), status=err.status, headers=headers)

        if not rec.stream:
            data = _dumps(render.body()).encode()
            if reply.drop_after_events is None and reply.stall_after_events is None:
                return web.Response(body=data, content_type="application/json", headers=headers)
            # truncated body: announce the full length, send half of it, then drop / stall
            resp = web.StreamResponse(headers={**headers, "Content-Type": "application/json"})
            resp.content_length = len(data)
            await resp.prepare(request)
            await resp.write(data[: len(data) // 2])
            if reply.stall_after_events is not None:
                await self._hang(request.transport)
            elif request.transport is not None:
                request.transport.close()
            return resp

        resp = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream; charset=utf-8",
                                           "Cache-Control": "no-cache"})
        await resp.prepare(request)
        rng = random.Random(0)

        async def send(ev: Event) -> None:
            pieces = _split_bytes(_sse(ev, render.named_events), reply.chunk_split, rng)
            for i, piece in enumerate(pieces):
                if i and reply.chunk_delay:
                    await asyncio.sleep(reply.chunk_delay)
                await resp.write(piece)  # one HTTP chunk (and TCP write) per piece

        try:
            outcome = await self._pump(reply, render, send)
        except ConnectionError:  # client went away
            return resp
        if outcome == "stall":
            await self._hang(request.transport)
        elif outcome == "drop":
            if request.transport is not None:
                request.transport.close()  # flushes what was written, then FIN: a truncated chunked body
        else:
            await resp.write_eof()
        return resp

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        """Responses over WebSocket. Each ``response.create`` joins its lane (its
        ``stream_id``; none is a lane too): a lane answers its creates in order, lanes
        run side by side, and every event of a response echoes its ``stream_id``.
        A ``response.steer`` is acknowledged (``response.steer.accepted``) and
        answered, once its lane's response in flight is done, by an automatic
        successor: the next scripted reply, streamed with no create asking for it
        (the lane: the steer's ``stream_id``, where the real API takes the lane of
        the response it steers)."""
        ws = web.WebSocketResponse(max_msg_size=256 * 1024 * 1024)
        if not ws.can_prepare(request).ok:
            return await self._not_found(request)
        await ws.prepare(request)
        transport = request.transport
        self._ws_transports.add(transport)
        headers = CIMultiDict(request.headers)
        lanes: dict[Any, asyncio.Queue] = {}
        pumps: set[asyncio.Task] = set()
        sending = asyncio.Lock()  # frames of two lanes never interleave mid-frame

        async def send(obj: dict) -> None:
            async with sending:
                await ws.send_str(_dumps(obj))

        async def lane(queue: asyncio.Queue) -> None:
            while True:
                sid, reply, req, rec = await queue.get()
                if reply.hang:
                    await self._hang(transport)
                    return
                if reply.delay_before_headers:
                    await asyncio.sleep(reply.delay_before_headers)
                render = _ResponsesRender(reply, req, rec)
                tag = (lambda obj: obj) if sid is None else (lambda obj: {**obj, "stream_id": sid})
                if reply.error_spec:
                    await send(tag(render.ws_error(reply.error_spec)))
                    continue
                outcome = await self._pump(reply, render, lambda ev: send(tag(ev[1])))
                if outcome == "stall":
                    await self._hang(transport)
                    return
                if outcome == "drop":
                    transport.close()  # no close frame: an abrupt TCP close
                    return

        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                body = msg.data.encode()
                try:
                    parsed = json.loads(body)
                except ValueError:
                    parsed = None
                rec = self._add(Record("WS", request.path, request.query_string, headers, body, parsed,
                                       "responses_ws"))
                kind = parsed.get("type") if isinstance(parsed, dict) else None
                if kind not in ("response.create", "response.steer"):
                    err = ErrorSpec(400, "Expected a response.create or response.steer event.")
                    await send({"type": "error", "status": 400, **_OpenAIRender.error_body(err)})
                    continue
                sid = parsed.get("stream_id")
                if sid is not None and not isinstance(sid, str):
                    err = ErrorSpec(400, "Invalid type for 'stream_id': expected a string.")
                    await send({"type": "error", "status": 400, **_OpenAIRender.error_body(err)})
                    continue
                req = {k: v for k, v in parsed.items() if k not in ("type", "stream_id")}
                if kind == "response.steer":
                    # Accepted, then answered by an automatic successor: the lane's next
                    # response, which no create asked for, continuing the steered one.
                    ack = {"type": "response.steer.accepted", "sequence_number": 0,
                           "steer": {"id": _rid("steer_"), "previous_response_id": parsed.get("previous_response_id")}}
                    await send(ack if sid is None else {**ack, "stream_id": sid})
                if sid not in lanes:
                    lanes[sid] = asyncio.Queue()
                    pumps.add(asyncio.ensure_future(lane(lanes[sid])))
                lanes[sid].put_nowait((sid, self._next_reply(rec), req, rec))
        except ConnectionError:
            pass
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            self._ws_transports.discard(transport)
        return ws


# --------------------------------------------------------------------------- running outside pytest


class FakeProviderThread:
    """Run a FakeProvider on its own event loop in a daemon thread (benchmarks, sync code).

        with FakeProviderThread(default_reply=Reply.text("x" * 1000)) as fp:
            fp.url; fp.script(...); fp.requests
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **kwargs: Any):
        self.fp = FakeProvider(**kwargs)
        self._host, self._port = host, port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fakeprovider", daemon=True)

    def start(self) -> FakeProvider:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.fp.start(self._host, self._port), self._loop).result(10)
        return self.fp

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.fp.stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve_forever(reply: ReplySource, host: str, port: int, record_limit: int | None = None,
                  name: str = "fakeprovider") -> None:
    """Run a provider answering every request with ``reply`` until interrupted
    (benchmarks start it as a subprocess)."""

    async def serve() -> None:
        fp = FakeProvider(default_reply=reply, record_limit=record_limit)
        await fp.start(host, port)
        print(f"{name} listening on {fp.url}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await fp.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Fake Anthropic/OpenAI provider (fixed text reply).")
    ap.add_argument("port", nargs="?", type=int, default=8089)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--text", default=DEFAULT_TEXT, help="text of every reply")
    ap.add_argument("--delta-chars", type=int, default=12)
    ap.add_argument("--delay-between-events", type=float, default=0.0)
    ap.add_argument("--record-limit", type=int, default=1000)
    args = ap.parse_args(argv)
    reply = Reply.text(args.text, delta_chars=args.delta_chars, delay_between_events=args.delay_between_events)

    serve_forever(reply, args.host, args.port, record_limit=args.record_limit)


if __name__ == "__main__":
    main()
