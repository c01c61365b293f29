"""Rounds in Anthropic Messages: ``tool_use`` / ``tool_result`` blocks; a
stream's content block indices stay contiguous across rounds."""
from __future__ import annotations

import copy
from typing import Any

import orjson

from ...sse import RawEvent
from ..base import dumps
from .common import (Call, Codec, Round, Splicer, assistant_holding, event_data, int_or_none, plus, sum_usage,
                     with_messages, with_sums)


class _AnthropicSplicer(Splicer):
    def feed(self, ev: RawEvent) -> bytes:
        self.raw.append(ev)
        name = ev.name
        if not self.slow:
            data = ev.data or b""
            if name == "content_block_start":
                if self.codec.name_bytes in data:
                    d = event_data(ev)
                    block = d.get("content_block") if isinstance(d, dict) else None
                    if (isinstance(block, dict) and block.get("type") == "tool_use"
                            and self.codec.ours(block.get("name"))):
                        self.slow = True
                        return self._slow(ev, d)
                self.next_index += 1
            return ev.raw
        return self._slow(ev, event_data(ev))

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
            idx = int_or_none(d.get("index"))
            if idx is None:
                return ev.raw
            opens = None
            if kind == "content_block_start":
                block = d.get("content_block") if isinstance(d.get("content_block"), dict) else {}
                opens = block.get("type") == "tool_use" and self.codec.ours(block.get("name"))
            mapped = self.index(idx, opens)
            if mapped is None:
                return b""
            if mapped == idx:
                return ev.raw
            d["index"] = mapped
            return self.encode(name, dumps(d))
        if kind == "message_delta":
            if self.ours_this_round:
                self.held = [d]
                return b""
            if self.usage:  # the last round: every round's usage
                d["usage"] = plus(self.round_usage(), self.usage)
            return self.encode(name, dumps(d))
        if kind == "message_stop":
            return b"" if self.ours_this_round else ev.raw
        return ev.raw

    def round_usage(self) -> dict:
        """This round's usage: its message_start's, updated by its message_delta's."""
        u: dict = {}
        for ev in self.raw:
            if ev.name in ("message_start", "message_delta"):
                d = event_data(ev)
                src = (d.get("message") or {}).get("usage") if ev.name == "message_start" else d.get("usage")
                u.update(sum_usage({}, src, self.codec.usage_keys))
        return u

    def end_round(self) -> Round | None:
        if not self.ours_this_round:
            return None
        self.usage = plus(self.usage, self.round_usage())
        blocks: dict[int, dict] = {}
        partial: dict[int, list[str]] = {}
        for ev in self.raw:
            d = event_data(ev)
            if not isinstance(d, dict):
                continue
            idx = int_or_none(d.get("index"))
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
                    if self.codec.ours(b.get("name")):
                        calls.append(Call(str(b.get("id", "")), text))
                    else:
                        client.append(str(b.get("id", "")))
            content.append(b)
        return Round(calls, client, content)

    def release(self, forced: bool) -> list[bytes]:
        out = []
        if self.held:
            d = self.held[0]
            d["usage"] = {**(d.get("usage") or {}), **self.usage}  # every round's, this one's included
            if forced and isinstance(d.get("delta"), dict):
                d["delta"] = {**d["delta"], "stop_reason": "end_turn"}
            out.append(self.encode("message_delta", dumps(d)))
        self.held = []
        return [*out, self.encode("message_stop", b'{"type":"message_stop"}')]


class AnthropicCodec(Codec):
    usage_keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    splicer_class = _AnthropicSplicer

    def tool_def(self, description: str, schema: dict) -> dict:
        return {"name": self.name, "description": description, "input_schema": schema}

    def _result_block(self, c: Call) -> dict:
        block = {"type": "tool_result", "tool_use_id": c.call_id, "content": c.result}
        if c.is_error:
            block["is_error"] = True
        return block

    def continued(self, body: dict, rnd: Round) -> dict:
        return with_messages(body, {"role": "assistant", "content": rnd.assistant},
                             {"role": "user", "content": [self._result_block(c) for c in rnd.calls]})

    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool:
        found = assistant_holding(body, "content", anchor)
        if found is None:
            return False
        msgs, i, content = found
        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
        if not (isinstance(nxt, dict) and nxt.get("role") == "user" and isinstance(nxt.get("content"), list)):
            return False
        msgs[i]["content"] = [*content, *({"type": "tool_use", "id": c.call_id, "name": self.name,
                                           "input": c.args() if isinstance(c.args(), dict) else {}} for c in calls)]
        nxt["content"] = [*(self._result_block(c) for c in calls), *nxt["content"]]
        return True

    def whole_round(self, answer: dict) -> Round:
        content = answer.get("content") if isinstance(answer.get("content"), list) else []
        calls, client = [], []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                if self.ours(b.get("name")):
                    calls.append(Call(str(b.get("id", "")), orjson.dumps(b.get("input", {})).decode()))
                else:
                    client.append(str(b.get("id", "")))
        return Round(calls, client, content)

    def kept(self, answer: dict) -> list:
        return [b for b in answer.get("content") or () if not (
            isinstance(b, dict) and b.get("type") == "tool_use" and self.ours(b.get("name")))]

    def merged(self, kept: list, usage: dict, answer: dict) -> dict:
        out = dict(answer)
        out["content"] = [*kept, *self.kept(answer)]
        out["usage"] = with_sums(answer.get("usage"), usage)
        return out

    def finish_forced(self, answer: dict) -> None:
        if answer.get("stop_reason") == "tool_use" and not any(
                isinstance(b, dict) and b.get("type") == "tool_use" for b in answer.get("content") or ()):
            answer["stop_reason"] = "end_turn"
