"""Rounds of a tool the proxy answers itself, in each API's wire format.

When the model calls the proxy's own tool (the memory tool), the proxy runs
it, appends the call and its result to the conversation and asks again; the
client reads one answer as if the model had not needed the tool. This module
knows the three APIs' shapes for that: the tool's definition, the calls in a
whole answer and in a stream, the request that continues a round, and how
answers and streams of several rounds join into one (block and choice
indices, output indices and sequence numbers contiguous, usage summed).

A stream costs nothing extra until the proxy's tool shows up: events pass as
their own bytes, and only an event that names the tool is parsed. After
that, every event of the turn is parsed and re-encoded (indices shift).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson

from ..sse import RawEvent, encode_event
from .base import dumps, loads


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


def _sum_usage(into: dict, add: Any, keys: Iterable[str]) -> None:
    if not isinstance(add, dict):
        return
    for k in keys:
        v = add.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            into[k] = into.get(k, 0) + v


def _add(a: dict, b: dict) -> dict:
    return {k: (a.get(k) or 0) + (b.get(k) or 0) for k in {*a, *b}}


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


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
    def merged(self, kept: list[dict], usage: dict, answer: dict) -> dict: raise NotImplementedError
    def finish_forced(self, answer: dict) -> None: raise NotImplementedError

    def splicer(self) -> "Splicer": raise NotImplementedError

    def _ours(self, name: Any) -> bool:
        return name == self.name


class Splicer:
    """One streamed turn's events across rounds. ``feed`` returns the bytes to
    send on; ``end_round`` says what the round held; ``release`` sends what
    was held back when the turn stops with a call of ours unanswered."""

    def __init__(self, codec: Codec):
        self.codec = codec
        self.round = 0
        self.raw: list[RawEvent] = []  # this round's events (read again only when it has our call)
        self.slow = False  # parse every event from here on
        self.held: list[Any] = []
        self.usage: dict = {}

    def feed(self, ev: RawEvent) -> bytes: raise NotImplementedError
    def end_round(self) -> Round | None: raise NotImplementedError
    def release(self, forced: bool) -> bytes: raise NotImplementedError

    def next_round(self) -> None:
        self.round += 1
        self.raw = []
        self.slow = True


def _data(ev: RawEvent) -> Any:
    data = ev.data
    if data is None or data == b"[DONE]":
        return data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


# -- Anthropic Messages ----------------------------------------------------------------

class AnthropicCodec(Codec):
    usage_keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")

    def tool_def(self, description: str, schema: dict) -> dict:
        return {"name": self.name, "description": description, "input_schema": schema}

    def _result_block(self, c: Call) -> dict:
        block = {"type": "tool_result", "tool_use_id": c.call_id, "content": c.result}
        if c.is_error:
            block["is_error"] = True
        return block

    def continued(self, body: dict, rnd: Round) -> dict:
        out = dict(body)
        out["messages"] = [*body.get("messages", ()), {"role": "assistant", "content": rnd.assistant},
                           {"role": "user", "content": [self._result_block(c) for c in rnd.calls]}]
        return out

    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool:
        msgs = body.get("messages")
        if not isinstance(msgs, list):
            return False
        for i, m in enumerate(msgs):
            content = m.get("content") if isinstance(m, dict) and m.get("role") == "assistant" else None
            if not isinstance(content, list) or not any(
                    isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") == anchor for b in content):
                continue
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            if not (isinstance(nxt, dict) and nxt.get("role") == "user" and isinstance(nxt.get("content"), list)):
                return False
            m["content"] = [*content, *({"type": "tool_use", "id": c.call_id, "name": self.name,
                                         "input": c.args() if isinstance(c.args(), dict) else {}} for c in calls)]
            nxt["content"] = [*(self._result_block(c) for c in calls), *nxt["content"]]
            return True
        return False

    def whole_round(self, answer: dict) -> Round:
        content = answer.get("content") if isinstance(answer.get("content"), list) else []
        calls, client = [], []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                if self._ours(b.get("name")):
                    calls.append(Call(str(b.get("id", "")), orjson.dumps(b.get("input", {})).decode()))
                else:
                    client.append(str(b.get("id", "")))
        return Round(calls, client, content)

    def kept(self, answer: dict) -> list:
        return [b for b in answer.get("content") or () if not (
            isinstance(b, dict) and b.get("type") == "tool_use" and self._ours(b.get("name")))]

    def merged(self, kept: list, usage: dict, answer: dict) -> dict:
        out = dict(answer)
        out["content"] = [*kept, *self.kept(answer)]
        u = dict(answer.get("usage") or {})
        for k, v in usage.items():
            u[k] = (u.get(k) or 0) + v
        out["usage"] = u
        return out

    def finish_forced(self, answer: dict) -> None:
        if answer.get("stop_reason") == "tool_use" and not any(
                isinstance(b, dict) and b.get("type") == "tool_use" for b in answer.get("content") or ()):
            answer["stop_reason"] = "end_turn"

    def splicer(self) -> "Splicer":
        return _AnthropicSplicer(self)


class _AnthropicSplicer(Splicer):
    def __init__(self, codec: AnthropicCodec):
        super().__init__(codec)
        self.next_index = 0  # the client's next content block index
        self.index_map: dict[int, int | None] = {}  # this round's index -> the client's (None: ours)
        self.ours_this_round = False

    def feed(self, ev: RawEvent) -> bytes:
        self.raw.append(ev)
        name = ev.name
        if not self.slow:
            data = ev.data or b""
            if name == "content_block_start":
                if self.codec.name_bytes in data:
                    d = _data(ev)
                    block = d.get("content_block") if isinstance(d, dict) else None
                    if isinstance(block, dict) and block.get("type") == "tool_use" and self.codec._ours(block.get("name")):
                        self.slow = True
                        return self._slow(ev, d)
                self.next_index += 1
            return ev.raw
        return self._slow(ev, _data(ev))

    def _slow(self, ev: RawEvent, d: Any) -> bytes:
        name = ev.name
        if not isinstance(d, dict):
            return ev.raw
        kind = d.get("type", name)
        if kind == "message_start":
            if self.round == 0:
                return ev.raw
            return b""
        if kind in ("content_block_start", "content_block_delta", "content_block_stop"):
            idx = _int(d.get("index"))
            if idx is None:
                return ev.raw
            if kind == "content_block_start":
                block = d.get("content_block") if isinstance(d.get("content_block"), dict) else {}
                if block.get("type") == "tool_use" and self.codec._ours(block.get("name")):
                    self.index_map[idx] = None
                    self.ours_this_round = True
                    return b""
                self.index_map[idx] = self.next_index
                self.next_index += 1
            mapped = self.index_map.get(idx, idx)
            if mapped is None:
                return b""
            if mapped == idx:
                return ev.raw
            d["index"] = mapped
            return encode_event(name, dumps(d))
        if kind == "message_delta":
            if self.ours_this_round:
                self.held = [d]
                return b""
            if self.usage:  # the last round: every round's usage
                d["usage"] = _add(self.round_usage(), self.usage)
            return encode_event(name, dumps(d))
        if kind == "message_stop":
            return b"" if self.ours_this_round else ev.raw
        return ev.raw

    def round_usage(self) -> dict:
        """This round's usage: its message_start's, updated by its message_delta's."""
        u: dict = {}
        for ev in self.raw:
            if ev.name in ("message_start", "message_delta"):
                d = _data(ev)
                src = (d.get("message") or {}).get("usage") if ev.name == "message_start" else d.get("usage")
                if isinstance(src, dict):
                    u.update({k: v for k, v in src.items() if k in self.codec.usage_keys and _int(v) is not None})
        return u

    def end_round(self) -> Round | None:
        if not self.ours_this_round:
            return None
        self.usage = _add(self.usage, self.round_usage())
        blocks: dict[int, dict] = {}
        partial: dict[int, list[str]] = {}
        for ev in self.raw:
            d = _data(ev)
            if not isinstance(d, dict):
                continue
            idx = _int(d.get("index"))
            if d.get("type") == "content_block_start" and idx is not None and isinstance(d.get("content_block"), dict):
                blocks[idx] = copy.deepcopy(d["content_block"])
            elif d.get("type") == "content_block_delta" and idx in blocks and isinstance(d.get("delta"), dict):
                delta, b = d["delta"], blocks[idx]
                t = delta.get("type")
                if t == "text_delta":
                    b["text"] = b.get("text", "") + str(delta.get("text", ""))
                elif t == "thinking_delta":
                    b["thinking"] = b.get("thinking", "") + str(delta.get("thinking", ""))
                elif t == "signature_delta":
                    b["signature"] = b.get("signature", "") + str(delta.get("signature", ""))
                elif t == "input_json_delta":
                    partial.setdefault(idx, []).append(str(delta.get("partial_json", "")))
        calls, client, content = [], [], []
        for idx in sorted(blocks):
            b = blocks[idx]
            if b.get("type") in ("tool_use", "server_tool_use"):
                text = "".join(partial.get(idx, ())) or (orjson.dumps(b.get("input") or {}).decode())
                try:
                    b["input"] = orjson.loads(text)
                except orjson.JSONDecodeError:
                    b["input"] = {}
                if b.get("type") == "tool_use":
                    if self.codec._ours(b.get("name")):
                        calls.append(Call(str(b.get("id", "")), text))
                    else:
                        client.append(str(b.get("id", "")))
            content.append(b)
        return Round(calls, client, content)

    def next_round(self) -> None:
        super().next_round()
        self.index_map = {}
        self.ours_this_round = False

    def release(self, forced: bool) -> bytes:
        out = b""
        if self.held:
            d = self.held[0]
            d["usage"] = {**(d.get("usage") or {}), **self.usage}
            if forced and isinstance(d.get("delta"), dict):
                d["delta"] = {**d["delta"], "stop_reason": "end_turn"}
            out = encode_event("message_delta", dumps(d))
        self.held = []
        return out + encode_event("message_stop", b'{"type":"message_stop"}')


# -- OpenAI Chat Completions -------------------------------------------------------------

class ChatCodec(Codec):
    usage_keys = ("prompt_tokens", "completion_tokens", "total_tokens")

    def tool_def(self, description: str, schema: dict) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": description,
                                                 "parameters": schema}}

    def _tool_msg(self, c: Call) -> dict:
        return {"role": "tool", "tool_call_id": c.call_id, "content": c.result}

    def _call(self, c: Call) -> dict:
        return {"id": c.call_id, "type": "function", "function": {"name": self.name, "arguments": c.arguments}}

    def continued(self, body: dict, rnd: Round) -> dict:
        out = dict(body)
        out["messages"] = [*body.get("messages", ()), rnd.assistant, *(self._tool_msg(c) for c in rnd.calls)]
        return out

    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool:
        msgs = body.get("messages")
        if not isinstance(msgs, list):
            return False
        for i, m in enumerate(msgs):
            tcs = m.get("tool_calls") if isinstance(m, dict) and m.get("role") == "assistant" else None
            if not isinstance(tcs, list) or not any(isinstance(t, dict) and t.get("id") == anchor for t in tcs):
                continue
            m["tool_calls"] = [*tcs, *(self._call(c) for c in calls)]
            msgs[i + 1:i + 1] = [self._tool_msg(c) for c in calls]
            return True
        return False

    @staticmethod
    def _choice(answer: dict) -> dict:
        ch = answer.get("choices")
        return ch[0] if isinstance(ch, list) and ch and isinstance(ch[0], dict) else {}

    def whole_round(self, answer: dict) -> Round:
        msg = self._choice(answer).get("message")
        msg = msg if isinstance(msg, dict) else {}
        calls, client = [], []
        for t in msg.get("tool_calls") or ():
            fn = t.get("function") if isinstance(t, dict) else None
            if isinstance(fn, dict) and self._ours(fn.get("name")):
                calls.append(Call(str(t.get("id", "")), str(fn.get("arguments") or "{}")))
            elif isinstance(t, dict):
                client.append(str(t.get("id", "")))
        assistant = {"role": "assistant", "content": msg.get("content"),
                     "tool_calls": [t for t in msg.get("tool_calls") or () if isinstance(t, dict)]}
        return Round(calls, client, assistant)

    def kept(self, answer: dict) -> list:
        msg = self._choice(answer).get("message")
        text = msg.get("content") if isinstance(msg, dict) else None
        return [text] if isinstance(text, str) and text else []

    def merged(self, kept: list, usage: dict, answer: dict) -> dict:
        out = copy.deepcopy(answer)
        ch = self._choice(out)
        msg = ch.get("message") if isinstance(ch.get("message"), dict) else None
        if msg is not None:
            tcs = [t for t in msg.get("tool_calls") or () if not (
                isinstance(t, dict) and isinstance(t.get("function"), dict) and self._ours(t["function"].get("name")))]
            if tcs:
                msg["tool_calls"] = tcs
            else:
                msg.pop("tool_calls", None)
            text = "".join([*kept, *(self.kept(answer))])
            if text or msg.get("content") is not None:
                msg["content"] = text
        if usage and isinstance(out.get("usage"), dict):
            for k, v in usage.items():
                out["usage"][k] = (out["usage"].get(k) or 0) + v
        return out

    def finish_forced(self, answer: dict) -> None:
        ch = self._choice(answer)
        msg = ch.get("message") if isinstance(ch.get("message"), dict) else {}
        if ch.get("finish_reason") == "tool_calls" and not msg.get("tool_calls"):
            ch["finish_reason"] = "stop"

    def splicer(self) -> "Splicer":
        return _ChatSplicer(self)


class _ChatSplicer(Splicer):
    def __init__(self, codec: ChatCodec):
        super().__init__(codec)
        self.next_index = 0  # the client's next tool call index
        self.index_map: dict[int, int | None] = {}
        self.ours_this_round = False

    def feed(self, ev: RawEvent) -> bytes:
        self.raw.append(ev)
        if not self.slow:
            data = ev.data or b""
            if b'"tool_calls"' in data:
                if self.codec.name_bytes in data:
                    self.slow = True
                    return self._slow(ev, _data(ev))
                d = _data(ev)
                self._count_client(d)
            return ev.raw
        return self._slow(ev, _data(ev))

    def _count_client(self, d: Any) -> None:
        for tc in self._tool_deltas(d):
            idx = _int(tc.get("index"))
            if idx is not None and idx not in self.index_map:
                self.index_map[idx] = idx
                self.next_index = max(self.next_index, idx + 1)

    @staticmethod
    def _tool_deltas(d: Any) -> list:
        if not isinstance(d, dict):
            return []
        out = []
        for ch in d.get("choices") or ():
            delta = ch.get("delta") if isinstance(ch, dict) else None
            tcs = delta.get("tool_calls") if isinstance(delta, dict) else None
            out.extend(t for t in tcs or () if isinstance(t, dict))
        return out

    def _slow(self, ev: RawEvent, d: Any) -> bytes:
        if d == b"[DONE]":
            return b"" if self.ours_this_round else ev.raw
        if not isinstance(d, dict):
            return ev.raw
        choices = d.get("choices")
        if isinstance(choices, list) and not choices and isinstance(d.get("usage"), dict):
            if self.ours_this_round:  # the usage chunk of a round that goes on
                _sum_usage(self.usage, d["usage"], self.codec.usage_keys)
                return b""
            self._summed(d)
            return encode_event(ev.name, dumps(d))
        changed = False
        keep_chunk = True
        for ch in choices if isinstance(choices, list) else ():
            if not isinstance(ch, dict):
                continue
            delta = ch.get("delta") if isinstance(ch.get("delta"), dict) else {}
            tcs = delta.get("tool_calls")
            if isinstance(tcs, list):
                kept = []
                for t in tcs:
                    if not isinstance(t, dict):
                        continue
                    idx = _int(t.get("index"))
                    fn = t.get("function") if isinstance(t.get("function"), dict) else {}
                    if idx is not None and idx not in self.index_map:
                        if self.codec._ours(fn.get("name")):
                            self.index_map[idx] = None
                            self.ours_this_round = True
                        else:
                            self.index_map[idx] = self.next_index
                            self.next_index += 1
                    mapped = self.index_map.get(idx, idx)
                    if mapped is None:
                        changed = True
                        continue
                    if mapped != idx:
                        t = {**t, "index": mapped}
                        changed = True
                    kept.append(t)
                if kept:
                    delta["tool_calls"] = kept
                else:
                    delta.pop("tool_calls", None)
                    changed = True
                    if not delta.get("content") and not ch.get("finish_reason") and not delta.get("role"):
                        keep_chunk = False
            if ch.get("finish_reason") and self.ours_this_round:
                self.held.append(d)
                if isinstance(d.get("usage"), dict):
                    _sum_usage(self.usage, d["usage"], self.codec.usage_keys)
                return b""
        if not keep_chunk and all(not (isinstance(c, dict) and c.get("finish_reason")) for c in choices or ()):
            return b""
        if isinstance(d.get("usage"), dict) and self.usage:
            self._summed(d)
            changed = True
        return encode_event(ev.name, dumps(d)) if changed else ev.raw

    def _summed(self, d: dict) -> None:
        if self.usage and isinstance(d.get("usage"), dict):
            for k, v in self.usage.items():
                d["usage"][k] = (d["usage"].get(k) or 0) + v

    def end_round(self) -> Round | None:
        if not self.ours_this_round:
            return None
        text: list[str] = []
        calls: dict[int, dict] = {}
        for ev in self.raw:
            d = _data(ev)
            if not isinstance(d, dict):
                continue
            for ch in d.get("choices") or ():
                delta = ch.get("delta") if isinstance(ch, dict) else None
                if not isinstance(delta, dict):
                    continue
                if isinstance(delta.get("content"), str):
                    text.append(delta["content"])
                for t in delta.get("tool_calls") or ():
                    idx = _int(t.get("index")) if isinstance(t, dict) else None
                    if idx is None:
                        continue
                    c = calls.setdefault(idx, {"id": "", "name": "", "arguments": []})
                    fn = t.get("function") if isinstance(t.get("function"), dict) else {}
                    c["id"] = t.get("id") or c["id"]
                    c["name"] = fn.get("name") or c["name"]
                    c["arguments"].append(str(fn.get("arguments") or ""))
        ours, client, tool_calls = [], [], []
        for idx in sorted(calls):
            c = calls[idx]
            args = "".join(c["arguments"]) or "{}"
            tool_calls.append({"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": args}})
            (ours if self.codec._ours(c["name"]) else client).append(Call(c["id"], args))
        assistant = {"role": "assistant", "content": "".join(text) or None, "tool_calls": tool_calls}
        return Round(ours, [c.call_id for c in client], assistant)

    def next_round(self) -> None:
        super().next_round()
        self.index_map = {}
        self.ours_this_round = False

    def release(self, forced: bool) -> bytes:
        out = []
        for d in self.held:
            for ch in d.get("choices") or ():
                if forced and isinstance(ch, dict) and ch.get("finish_reason") == "tool_calls" and self.next_index == 0:
                    ch["finish_reason"] = "stop"
            out.append(encode_event(None, dumps(d)))
        self.held = []
        if self.usage:
            out.append(encode_event(None, dumps({"object": "chat.completion.chunk", "choices": [],
                                                 "usage": dict(self.usage)})))
        return b"".join(out) + b"data: [DONE]\n\n"


# -- OpenAI Responses ---------------------------------------------------------------------

_ENDS = ("response.completed", "response.incomplete", "response.failed")


class ResponsesCodec(Codec):
    usage_keys = ("input_tokens", "output_tokens", "total_tokens")

    def tool_def(self, description: str, schema: dict) -> dict:
        return {"type": "function", "name": self.name, "description": description, "parameters": schema,
                "strict": False}

    def _output(self, c: Call) -> dict:
        return {"type": "function_call_output", "call_id": c.call_id, "output": c.result}

    def _input(self, body: dict) -> list:
        inp = body.get("input")
        if isinstance(inp, str):
            return [{"role": "user", "content": inp}]
        return list(inp) if isinstance(inp, list) else []

    def continued(self, body: dict, rnd: Round) -> dict:
        out = dict(body)
        items = [{k: v for k, v in it.items() if k != "status" or it.get("type") != "message"}
                 if isinstance(it, dict) else it for it in rnd.assistant]
        out["input"] = [*self._input(body), *items, *(self._output(c) for c in rnd.calls)]
        return out

    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool:
        items = body.get("input")
        if not isinstance(items, list):
            return False
        at = next((i for i, it in enumerate(items) if isinstance(it, dict) and it.get("type") == "function_call"
                   and it.get("call_id") == anchor), None)
        if at is None:
            return False
        ours = [{"type": "function_call", "call_id": c.call_id, "name": self.name, "arguments": c.arguments}
                for c in calls]
        items[at + 1:at + 1] = ours
        out_at = next((i for i, it in enumerate(items) if isinstance(it, dict)
                       and it.get("type") == "function_call_output" and it.get("call_id") == anchor), None)
        results = [self._output(c) for c in calls]
        if out_at is None:
            items.extend(results)
        else:
            items[out_at + 1:out_at + 1] = results
        return True

    def _is_ours(self, it: Any) -> bool:
        return isinstance(it, dict) and it.get("type") == "function_call" and self._ours(it.get("name"))

    def whole_round(self, answer: dict) -> Round:
        output = [it for it in answer.get("output") or () if isinstance(it, dict)]
        calls = [Call(str(it.get("call_id", "")), str(it.get("arguments") or "{}")) for it in output if self._is_ours(it)]
        client = [str(it.get("call_id", "")) for it in output
                  if it.get("type") in ("function_call", "custom_tool_call") and not self._is_ours(it)]
        return Round(calls, client, output)

    def kept(self, answer: dict) -> list:
        return [it for it in answer.get("output") or () if not self._is_ours(it)]

    def merged(self, kept: list, usage: dict, answer: dict) -> dict:
        out = dict(answer)
        out["output"] = [*kept, *self.kept(answer)]
        if usage and isinstance(answer.get("usage"), dict):
            u = dict(answer["usage"])
            for k, v in usage.items():
                u[k] = (u.get(k) or 0) + v
            out["usage"] = u
        return out

    def finish_forced(self, answer: dict) -> None:
        pass  # a Responses answer has no stop reason naming tool calls

    def splicer(self) -> "Splicer":
        return _ResponsesSplicer(self)


class _ResponsesSplicer(Splicer):
    def __init__(self, codec: ResponsesCodec):
        super().__init__(codec)
        self.seq = 0  # the client's next sequence number
        self.next_index = 0  # the client's next output index
        self.index_map: dict[int, int | None] = {}
        self.ours_this_round = False
        self.kept: list = []  # items of earlier rounds the client has
        self.final: dict | None = None
        self.first_id: str | None = None  # the answer's id as the client saw it first
        self.last_id: str | None = None  # the provider's id of the last round (the client's next turn continues it)

    def feed(self, ev: RawEvent) -> bytes:
        self.raw.append(ev)
        if not self.slow:
            data = ev.data or b""
            if self.first_id is None and b"response.created" in data:
                d = _data(ev)
                resp = d.get("response") if isinstance(d, dict) else None
                if isinstance(resp, dict) and isinstance(resp.get("id"), str):
                    self.first_id = resp["id"]
            if b"output_item.added" in data and self.codec.name_bytes in data:
                self.slow = True
                return self._slow(ev, _data(ev))
            if b"output_item.added" in data:
                self.next_index += 1
            self.seq += 1
            return ev.raw
        return self._slow(ev, _data(ev))

    def _slow(self, ev: RawEvent, d: Any) -> bytes:
        if not isinstance(d, dict):
            return ev.raw
        kind = d.get("type")
        if kind in ("response.created", "response.in_progress", "response.queued") and self.round > 0:
            return b""
        resp = d.get("response")
        if isinstance(resp, dict) and self.round > 0 and self.first_id and resp.get("id") != self.first_id:
            self.last_id = resp.get("id") if isinstance(resp.get("id"), str) else self.last_id
            d["response"] = resp = {**resp, "id": self.first_id}  # one answer, one id (the SDKs check)
        if kind in _ENDS:
            resp = resp if isinstance(resp, dict) else {}
            self.final = resp
            if self.ours_this_round:
                _sum_usage(self.usage, resp.get("usage"), self.codec.usage_keys)
                self.held = [d]
                return b""
            resp = self.codec.merged(self.kept, self.usage, resp)
            d["response"] = resp
            return self._emit(ev, d)
        idx = _int(d.get("output_index"))
        if idx is not None:
            if kind == "response.output_item.added" and idx not in self.index_map:
                if self.codec._is_ours(d.get("item")):
                    self.index_map[idx] = None
                    self.ours_this_round = True
                else:
                    self.index_map[idx] = self.next_index
                    self.next_index += 1
            mapped = self.index_map.get(idx, idx)
            if mapped is None:
                return b""
            d["output_index"] = mapped
        return self._emit(ev, d)

    def _emit(self, ev: RawEvent, d: dict) -> bytes:
        if "sequence_number" in d:
            d["sequence_number"] = self.seq
        self.seq += 1
        return encode_event(ev.name, dumps(d))

    def end_round(self) -> Round | None:
        if not self.ours_this_round:
            return None
        output = [it for it in (self.final or {}).get("output") or () if isinstance(it, dict)]
        calls = [Call(str(it.get("call_id", "")), str(it.get("arguments") or "{}")) for it in output
                 if self.codec._is_ours(it)]
        client = [str(it.get("call_id", "")) for it in output
                  if it.get("type") in ("function_call", "custom_tool_call") and not self.codec._is_ours(it)]
        self.kept.extend(self.codec.kept(self.final or {}))
        return Round(calls, client, output)

    def next_round(self) -> None:
        super().next_round()
        self.index_map = {}
        self.ours_this_round = False
        self.final = None

    def release(self, forced: bool) -> bytes:
        out = b""
        for d in self.held:
            resp = d.get("response") if isinstance(d.get("response"), dict) else {}
            d["response"] = {**resp, "output": list(self.kept), "usage": {**(resp.get("usage") or {}), **self.usage}}
            d["sequence_number"] = self.seq
            self.seq += 1
            out += encode_event(d.get("type"), dumps(d))
        self.held = []
        return out


CODECS = {"anthropic": AnthropicCodec, "chat": ChatCodec, "responses": ResponsesCodec}


def codec_for(api: str, name: str) -> Codec:
    return CODECS[api](name)


__all__ = ["CODECS", "Call", "Codec", "Round", "Splicer", "codec_for", "loads"]
