"""Rounds in OpenAI Chat Completions: ``tool_calls`` and ``tool`` messages;
a stream's tool call indices stay contiguous across rounds."""
from __future__ import annotations

import copy
from typing import Any

from ...sse import RawEvent
from ..base import dumps
from .common import (Call, Codec, Round, Splicer, assistant_holding, event_data, int_or_none, sum_usage,
                     with_messages, with_sums)


class _ChatSplicer(Splicer):
    def feed(self, ev: RawEvent) -> bytes:
        self.raw.append(ev)
        if not self.slow:
            data = ev.data or b""
            if b'"tool_calls"' in data:
                if self.codec.name_bytes in data:
                    self.slow = True
                    return self._slow(ev, event_data(ev))
                d = event_data(ev)
                self._count_client(d)
            return ev.raw
        return self._slow(ev, event_data(ev))

    def _count_client(self, d: Any) -> None:
        for tc in self._tool_deltas(d):
            idx = int_or_none(tc.get("index"))
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
                sum_usage(self.usage, d["usage"], self.codec.usage_keys)
                return b""
            self._summed(d)
            return self.encode(ev.name, dumps(d))
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
                    idx = int_or_none(t.get("index"))
                    fn = t.get("function") if isinstance(t.get("function"), dict) else {}
                    mapped = None if idx is None else self.index(idx, self.codec.ours(fn.get("name")))
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
                    sum_usage(self.usage, d["usage"], self.codec.usage_keys)
                return b""
        if not keep_chunk and all(not (isinstance(c, dict) and c.get("finish_reason")) for c in choices or ()):
            return b""
        if isinstance(d.get("usage"), dict) and self.usage:
            self._summed(d)
            changed = True
        return self.encode(ev.name, dumps(d)) if changed else ev.raw

    def _summed(self, d: dict) -> None:
        if self.usage and isinstance(d.get("usage"), dict):
            d["usage"] = with_sums(d["usage"], self.usage)

    def end_round(self) -> Round | None:
        if not self.ours_this_round:
            return None
        text: list[str] = []
        calls: dict[int, dict] = {}
        for ev in self.raw:
            d = event_data(ev)
            if not isinstance(d, dict):
                continue
            for ch in d.get("choices") or ():
                delta = ch.get("delta") if isinstance(ch, dict) else None
                if not isinstance(delta, dict):
                    continue
                if isinstance(delta.get("content"), str):
                    text.append(delta["content"])
                for t in delta.get("tool_calls") or ():
                    idx = int_or_none(t.get("index")) if isinstance(t, dict) else None
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
            (ours if self.codec.ours(c["name"]) else client).append(Call(c["id"], args))
        assistant = {"role": "assistant", "content": "".join(text) or None, "tool_calls": tool_calls}
        return Round(ours, [c.call_id for c in client], assistant)

    def release(self, forced: bool) -> list[bytes]:
        out = []
        for d in self.held:
            for ch in d.get("choices") or ():
                if forced and isinstance(ch, dict) and ch.get("finish_reason") == "tool_calls" and self.next_index == 0:
                    ch["finish_reason"] = "stop"
            out.append(self.encode(None, dumps(d)))
        self.held = []
        if self.usage:
            out.append(self.encode(None, dumps({"object": "chat.completion.chunk", "choices": [],
                                                "usage": dict(self.usage)})))
        return [*out, self.encode(None, b"[DONE]")]


class ChatCodec(Codec):
    usage_keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    splicer_class = _ChatSplicer

    def tool_def(self, description: str, schema: dict) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": description,
                                                 "parameters": schema}}

    def _tool_msg(self, c: Call) -> dict:
        return {"role": "tool", "tool_call_id": c.call_id, "content": c.result}

    def _call(self, c: Call) -> dict:
        return {"id": c.call_id, "type": "function", "function": {"name": self.name, "arguments": c.arguments}}

    def continued(self, body: dict, rnd: Round) -> dict:
        return with_messages(body, rnd.assistant, *(self._tool_msg(c) for c in rnd.calls))

    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool:
        found = assistant_holding(body, "tool_calls", anchor)
        if found is None:
            return False
        msgs, i, tcs = found
        msgs[i]["tool_calls"] = [*tcs, *(self._call(c) for c in calls)]
        msgs[i + 1:i + 1] = [self._tool_msg(c) for c in calls]
        return True

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
            if isinstance(fn, dict) and self.ours(fn.get("name")):
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
                isinstance(t, dict) and isinstance(t.get("function"), dict) and self.ours(t["function"].get("name")))]
            if tcs:
                msg["tool_calls"] = tcs
            else:
                msg.pop("tool_calls", None)
            text = "".join([*kept, *(self.kept(answer))])
            if text or msg.get("content") is not None:
                msg["content"] = text
        if usage and isinstance(out.get("usage"), dict):
            out["usage"] = with_sums(out["usage"], usage)
        return out

    def finish_forced(self, answer: dict) -> None:
        ch = self._choice(answer)
        msg = ch.get("message") if isinstance(ch.get("message"), dict) else {}
        if ch.get("finish_reason") == "tool_calls" and not msg.get("tool_calls"):
            ch["finish_reason"] = "stop"
