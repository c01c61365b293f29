"""Rounds in OpenAI Responses: ``function_call`` / ``function_call_output``
items; a stream keeps one response id, contiguous output indices and
sequence numbers across rounds (over HTTP and over the WebSocket)."""
from __future__ import annotations

from typing import Any

from ...sse import RawEvent
from ..base import dumps
from .common import Call, Codec, Encode, Round, Splicer, event_data, int_or_none, sum_usage, with_sums


_ENDS = ("response.completed", "response.incomplete", "response.failed")


class _ResponsesSplicer(Splicer):
    def __init__(self, codec: ResponsesCodec, encode: Encode):
        super().__init__(codec, encode)
        self.seq = 0  # the client's next sequence number
        self.kept: list = []  # items of earlier rounds the client has
        self.final: dict | None = None
        self.first_id: str | None = None  # the answer's id as the client saw it first
        self.first_previous: Any = None  # the previous_response_id the client's answer names
        self.last_id: str | None = None  # the provider's id of the last round (the client's next turn continues it)

    @property
    def response_id(self) -> str | None:
        """The provider's id of this round's answer (what a continuation chains from)."""
        return self.last_id or self.first_id

    @property
    def round_over(self) -> bool:
        """This round's answer ended with a call of ours: its end is held back."""
        return bool(self.held)

    def feed(self, ev: RawEvent) -> bytes:
        self.raw.append(ev)
        if not self.slow:
            data = ev.data or b""
            if self.first_id is None and b"response.created" in data:
                d = event_data(ev)
                resp = d.get("response") if isinstance(d, dict) else None
                if isinstance(resp, dict) and isinstance(resp.get("id"), str):
                    self.first_id = resp["id"]
                    self.first_previous = resp.get("previous_response_id")
            if b"output_item.added" in data and self.codec.name_bytes in data:
                self.slow = True
                return self._slow(ev, event_data(ev))
            if b"output_item.added" in data:
                self.next_index += 1
            self.seq += 1
            return ev.raw
        return self._slow(ev, event_data(ev))

    def _slow(self, ev: RawEvent, d: Any) -> bytes:
        if not isinstance(d, dict):
            return ev.raw
        kind = d.get("type")
        if kind in ("response.created", "response.in_progress", "response.queued") and self.round > 0:
            return b""
        resp = d.get("response")
        if isinstance(resp, dict) and self.round > 0 and self.first_id and resp.get("id") != self.first_id:
            self.last_id = resp.get("id") if isinstance(resp.get("id"), str) else self.last_id
            resp = {**resp, "id": self.first_id}  # one answer, one id (the SDKs check)
            if "previous_response_id" in resp:  # a round chained from the last: the client's own chain
                resp["previous_response_id"] = self.first_previous
            d["response"] = resp
        if kind in _ENDS:
            resp = resp if isinstance(resp, dict) else {}
            self.final = resp
            if self.ours_this_round:
                sum_usage(self.usage, resp.get("usage"), self.codec.usage_keys)
                self.held = [d]
                return b""
            resp = self.codec.merged(self.kept, self.usage, resp)
            d["response"] = resp
            return self._emit(ev, d)
        idx = int_or_none(d.get("output_index"))
        if idx is not None:
            opens = self.codec.is_ours_item(d.get("item")) if kind == "response.output_item.added" else None
            mapped = self.index(idx, opens)
            if mapped is None:
                return b""
            d["output_index"] = mapped
        return self._emit(ev, d)

    def _emit(self, ev: RawEvent, d: dict) -> bytes:
        if "sequence_number" in d:
            d["sequence_number"] = self.seq
        self.seq += 1
        return self.encode(ev.name, dumps(d))

    def end_round(self) -> Round | None:
        if not self.ours_this_round:
            return None
        final = self.final or {}
        self.kept.extend(self.codec.kept(final))
        return self.codec.whole_round(final)

    def next_round(self) -> None:
        super().next_round()
        self.final = None

    def release(self, forced: bool) -> list[bytes]:
        out = []
        for d in self.held:
            resp = d.get("response") if isinstance(d.get("response"), dict) else {}
            d["response"] = {**resp, "output": list(self.kept), "usage": {**(resp.get("usage") or {}), **self.usage}}
            d["sequence_number"] = self.seq
            self.seq += 1
            out.append(self.encode(d.get("type"), dumps(d)))
        self.held = []
        return out


class ResponsesCodec(Codec):
    usage_keys = ("input_tokens", "output_tokens", "total_tokens")
    splicer_class = _ResponsesSplicer

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

    def chained(self, body: dict, rnd: Round, response_id: str) -> dict:
        """The continuation over a connection that keeps the round's response
        (the Responses WebSocket keeps the last one, ``store`` false or not):
        our results after it, by ``previous_response_id``."""
        out = dict(body)
        out["previous_response_id"] = response_id
        out["input"] = [self._output(c) for c in rnd.calls]
        return out

    def reinsert(self, body: dict, anchor: str, calls: list[Call]) -> bool:
        items = body.get("input")
        if not isinstance(items, list):
            return False

        def find(kind: str) -> int | None:
            return next((i for i, it in enumerate(items) if isinstance(it, dict) and it.get("type") == kind
                         and it.get("call_id") == anchor), None)

        at = find("function_call")
        if at is not None:
            items[at + 1:at + 1] = [{"type": "function_call", "call_id": c.call_id, "name": self.name,
                                     "arguments": c.arguments} for c in calls]
        elif not body.get("previous_response_id"):
            return False
        # else the provider keeps the answer that held the calls: only the results go in
        out_at = find("function_call_output")
        results = [self._output(c) for c in calls]
        if out_at is not None:
            items[out_at + 1:out_at + 1] = results
        elif at is not None:
            items.extend(results)
        else:
            return False
        return True

    def is_ours_item(self, it: Any) -> bool:
        return isinstance(it, dict) and it.get("type") == "function_call" and self.ours(it.get("name"))

    def whole_round(self, answer: dict) -> Round:
        output = [it for it in answer.get("output") or () if isinstance(it, dict)]
        calls = [Call(str(it.get("call_id", "")), str(it.get("arguments") or "{}")) for it in output
                 if self.is_ours_item(it)]
        client = [str(it.get("call_id", "")) for it in output
                  if it.get("type") in ("function_call", "custom_tool_call") and not self.is_ours_item(it)]
        return Round(calls, client, output)

    def kept(self, answer: dict) -> list:
        return [it for it in answer.get("output") or () if not self.is_ours_item(it)]

    def merged(self, kept: list, usage: dict, answer: dict) -> dict:
        out = dict(answer)
        out["output"] = [*kept, *self.kept(answer)]
        if usage and isinstance(answer.get("usage"), dict):
            out["usage"] = with_sums(answer["usage"], usage)
        return out

    def finish_forced(self, answer: dict) -> None:
        pass  # a Responses answer has no stop reason naming tool calls
