"""A turn whose model calls a tool the proxy answers itself.

``RoundsUpstream`` stands in for the provider's answer: it relays the first
answer, and when the model calls the proxy's tool it runs the calls (through
the turn's ``own_tool``, a filter's), appends call and result to the
conversation, asks the provider again and relays that answer as the
continuation of the first — one answer for the client, streamed as it
arrives. The wire shapes are the adapters' (``adapters.tool_rounds``); this
module only drives the rounds and knows no API.

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
from .adapters.tool_rounds import Codec, Round, codec_for
from .replies import UpstreamError
from .sse import SSEDecoder

log = logging.getLogger("ctxproxy.proxy")

LIMIT_MESSAGE = "memory tool limit reached for this turn: answer the user now without calling it again"


async def _prefixed(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk


class RoundsUpstream:
    """An ``Upstream`` over the rounds of one turn (see the module docstring)."""

    def __init__(self, transport: Any, forward: Any, first: Any, turn: Any, tool: Any):
        self.transport = transport
        self.forward = forward
        self.up = first
        self.turn = turn
        self.tool = tool
        self.codec: Codec = codec_for(turn.api, tool.name)
        self.status = first.status
        headers = CIMultiDict(first.headers)
        headers.popall("content-length", None)  # the joined answer has its own length
        self.headers: Mapping[str, str] = headers
        self.body = turn.request.body
        self.answered = 0  # rounds whose calls were run

    def buffered(self) -> bytes:
        return b""

    def release(self) -> None:
        self.up.release()

    async def _next(self, rnd: Round, stream: bool) -> bool:
        """Run (or refuse) this round's calls and ask the provider again; False
        when the bound says the turn ends here."""
        if self.answered > self.tool.max_rounds:
            return False
        await self.tool.answer(rnd.calls, limit=self.answered == self.tool.max_rounds)
        self.answered += 1
        self.body = self.codec.continued(self.body, rnd)
        self.up.release()
        self.up = await self.transport.send(self.forward._replace(body=dumps(self.body)))
        ctype = self.up.headers.get("content-type", "")
        if self.up.status >= 300 or ctype.startswith("text/event-stream") != stream:
            raise UpstreamError(502, f"the provider answered {self.up.status} while the proxy continued the turn "
                                     "after its memory tool", "upstream_error")
        return True

    async def _defer(self, rnd: Round) -> None:
        """A response with the client's calls too: ours are run now and answered
        beside the client's results on its next request."""
        await self.tool.answer(rnd.calls, limit=self.answered >= self.tool.max_rounds)
        self.tool.defer(rnd.client_calls[0], rnd.calls)

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
            if rnd is None:
                self._alias(splicer)
                return
            if rnd.client_calls:
                await self._defer(rnd)
                yield splicer.release(forced=False)
                return
            if not await self._next(rnd, stream=True):
                yield splicer.release(forced=True)
                return
            splicer.next_round()

    def _alias(self, splicer: Any) -> None:
        """The client saw the first round's response id; the provider's chain
        goes on from the last round's (a Responses client continues from it)."""
        first, last = getattr(splicer, "first_id", None), getattr(splicer, "last_id", None)
        if first and last and first != last:
            self.tool.alias(first, last)

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
                await self._defer(rnd)
                break
            kept.extend(self.codec.kept(answer))
            u = answer.get("usage")
            for k in self.codec.usage_keys:
                v = u.get(k) if isinstance(u, dict) else None
                if isinstance(v, int) and not isinstance(v, bool):
                    usage[k] = usage.get(k, 0) + v
            if not await self._next(rnd, stream=False):
                forced = True
                break
            answer = loads(await self.up.read())
            if not isinstance(answer, dict):
                raise UpstreamError(502, "the provider's continued answer was not JSON", "upstream_error")
        if not self.answered and not rnd.calls:
            return raw
        merged = self.codec.merged(kept, usage, answer)
        if forced:
            self.codec.finish_forced(merged)
        return dumps(merged)
