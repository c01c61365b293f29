"""A turn whose model calls a tool the proxy answers itself.

``RoundsUpstream`` stands in for the provider's answer: it relays the first
answer, and when the model calls the proxy's tool it runs the calls (through
the turn's ``own_tool``, a filter's), appends call and result to the
conversation, asks the provider again and relays that answer as the
continuation of the first — one answer for the client, streamed as it
arrives. ``FrameRounds`` does the same for a turn of the Responses
WebSocket, frame by frame, continuing on the provider's socket. The wire
shapes are the adapters' (``adapters.tool_rounds``); this module only
drives the rounds (``Rounds``: what both share) and knows no API.

The bound: ``own_tool.max_rounds`` rounds are answered; a call after them
gets an error result that tells the model to answer; a call after that ends
the turn with the model's text so far. A response that also calls a tool of
the client's is not continued: the client gets its call, and ours is
answered beside it on the client's next request (``own_tool.defer``).
"""
from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Mapping

from multidict import CIMultiDict

from .adapters.base import dumps, loads
from .adapters.tool_rounds import Codec, FrameEvent, Round, codec_for, ws_frame
from .adapters.tool_rounds.common import sum_usage
from .replies import UpstreamError
from .sse import SSEDecoder

log = logging.getLogger("ctxproxy.proxy")


async def _prefixed(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk


class Rounds:
    """What every carrier of the rounds shares (an HTTP answer, whole or
    streamed, or a Responses WebSocket turn): the tool, the API's codec, the
    bound, and the client's call beside ours."""

    def __init__(self, turn: Any, tool: Any):
        self.tool = tool
        self.codec: Codec = codec_for(turn.api, tool.name)
        self.answered = 0  # rounds whose calls were run

    async def run(self, rnd: Round) -> bool:
        """Run this round's calls: True when the turn goes on upstream with
        their results; False when it ends here, because the client has calls of
        its own in the answer (then ours are answered beside the client's
        results on its next request) or the bound is past (the caller then ends
        the answer as the model's final one)."""
        if rnd.client_calls:
            await self.tool.answer(rnd.calls, limit=self.answered >= self.tool.max_rounds)
            self.tool.defer(rnd.client_calls[0], rnd.calls)
            return False
        if self.answered > self.tool.max_rounds:
            return False
        await self.tool.answer(rnd.calls, limit=self.answered == self.tool.max_rounds)
        self.answered += 1
        return True

    def alias(self, splicer: Any) -> None:
        """The client saw the first round's response id; the provider's chain
        goes on from the last round's (a Responses client continues from it)."""
        first, last = getattr(splicer, "first_id", None), getattr(splicer, "last_id", None)
        if first and last and first != last:
            self.tool.alias(first, last)


class RoundsUpstream:
    """An ``Upstream`` over the rounds of one turn (see the module docstring)."""

    def __init__(self, transport: Any, forward: Any, first: Any, turn: Any, tool: Any):
        self.transport = transport
        self.forward = forward
        self.up = first
        self.rounds = Rounds(turn, tool)
        self.codec = self.rounds.codec
        self.status = first.status
        headers = CIMultiDict(first.headers)
        headers.popall("content-length", None)  # the joined answer has its own length
        self.headers: Mapping[str, str] = headers
        self.body = turn.request.body

    def buffered(self) -> bytes:
        return b""

    def release(self) -> None:
        self.up.release()

    async def _next(self, rnd: Round, stream: bool) -> bool:
        """Run this round's calls and ask the provider again; False when the
        turn ends here instead (``Rounds.run``)."""
        if not await self.rounds.run(rnd):
            return False
        self.body = self.codec.continued(self.body, rnd)
        self.up.release()
        self.up = await self.transport.send(self.forward._replace(body=dumps(self.body)))
        ctype = self.up.headers.get("content-type", "")
        if self.up.status >= 300 or ctype.startswith("text/event-stream") != stream:
            raise UpstreamError(502, f"the provider answered {self.up.status} while the proxy continued the turn "
                                     "after its memory tool", "upstream_error")
        return True

    async def _first_round(self, splicer: Any, decoder: SSEDecoder) -> AsyncIterator[bytes]:
        """The first answer, which mostly does not call our tool: its complete
        events go on as they came, unparsed, until an event names the tool
        (then the events sent so far are read into the splicer's state, and the
        rest of the round goes through it)."""
        name = self.codec.name_bytes
        carry = b""
        sent: list[bytes] = []
        fast = True
        first = self.up.buffered()
        async for chunk in _prefixed(first, self.up.chunks()):
            if not fast:
                out = b"".join([splicer.feed(e) for e in decoder.decode(chunk)])
                if out:
                    yield out
                continue
            buf = carry + chunk if carry else chunk
            if name in buf or b"\r" in buf:
                fast = False
                for e in decoder.decode(b"".join(sent)):
                    splicer.feed(e)  # already sent: its state only
                out = b"".join([splicer.feed(e) for e in decoder.decode(buf)])
                if out:
                    yield out
                continue
            cut = buf.rfind(b"\n\n")
            if cut < 0:
                carry = buf
                continue
            done, carry = buf[:cut + 2], buf[cut + 2:]
            sent.append(done)
            yield done
        if fast:
            for e in decoder.decode(b"".join(sent) + carry):
                splicer.feed(e)
            if carry:
                yield carry

    async def chunks(self) -> AsyncIterator[bytes]:
        splicer = self.codec.splicer()
        while True:
            decoder = SSEDecoder()
            if splicer.round == 0:
                async for out in self._first_round(splicer, decoder):
                    yield out
            else:
                async for chunk in _prefixed(self.up.buffered(), self.up.chunks()):
                    out = b"".join([splicer.feed(e) for e in decoder.decode(chunk)])
                    if out:
                        yield out
            rest = decoder.flush()
            if rest is not None:
                out = splicer.feed(rest)
                if out:
                    yield out
            rnd = splicer.end_round()
            if rnd is not None and await self._next(rnd, stream=True):
                splicer.next_round()
                continue
            self.rounds.alias(splicer)
            if rnd is not None:
                yield b"".join(splicer.release(forced=not rnd.client_calls))
            return

    async def read(self) -> bytes:
        raw = await self.up.read()
        answer = loads(raw)
        if not isinstance(answer, dict):
            return raw
        kept: list = []
        usage: dict = {}
        forced = False
        while True:
            rnd = self.codec.whole_round(answer)
            if not rnd.calls:
                break
            if rnd.client_calls:
                await self.rounds.run(rnd)
                break
            kept.extend(self.codec.kept(answer))
            sum_usage(usage, answer.get("usage"), self.codec.usage_keys)
            if not await self._next(rnd, stream=False):
                forced = True
                break
            answer = loads(await self.up.read())
            if not isinstance(answer, dict):
                raise UpstreamError(502, "the provider's continued answer was not JSON", "upstream_error")
        if not self.rounds.answered and not rnd.calls:
            return raw
        merged = self.codec.merged(kept, usage, answer)
        if forced:
            self.codec.finish_forced(merged)
        return dumps(merged)


class FrameRounds:
    """The rounds of one Responses WebSocket turn. The provider's events come
    one frame at a time (``frame``) and go through the splicer; when an answer
    ends with a call of ours, the calls are run and the turn goes on with a
    ``response.create`` on the same provider socket, chained to that answer by
    ``previous_response_id`` with only our results as input (the socket keeps
    its last response, so this holds with ``store`` false too)."""

    def __init__(self, turn: Any, tool: Any):
        self.rounds = Rounds(turn, tool)
        self.splicer = self.rounds.codec.splicer(ws_frame)
        self.body = turn.request.body

    async def frame(self, raw: bytes) -> tuple[list[bytes], bytes | None]:
        """A provider frame of this turn: the frames that go on to the client's
        side of the turn (``raw`` itself when untouched), and the create to
        send the provider when the turn goes on."""
        splicer = self.splicer
        out = splicer.feed(FrameEvent(raw))
        frames = [out] if out else []
        if not splicer.round_over:
            if splicer.round:
                self.rounds.alias(splicer)
            return frames, None
        rnd = splicer.end_round()
        if await self.rounds.run(rnd):
            create = self.rounds.codec.chained(self.body, rnd, splicer.response_id)
            splicer.next_round()
            return frames, dumps(create)
        self.rounds.alias(splicer)
        return frames + splicer.release(forced=not rnd.client_calls), None
