"""A plain-function driver of the turn engine: no sockets, no server framework.

    async with EngineDriver(cfg) as drive:
        drive.script(Reply.text("hi"))                 # the scripted provider, as a function
        got = await drive.call("POST", "/v1/messages", {"x-api-key": "k"}, body)
        got.status, got.headers, got.body, got.turn    # what the client would receive

It is the third edge beside the aiohttp server and the mitmproxy addon, and
walks the same steps (``proxy.engine``'s docstring): begin, request, the
transport (here a function that renders the scripted provider's real wire
bytes), answer, events/whole, finish. The store and services are real (the
data dir of ``cfg``).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

from multidict import CIMultiDict

from ctxproxy.proxy.adapters import api_for_path
from ctxproxy.proxy.engine import (BYTES, EVENTS, CannedUpstream, Engine, Forward, FunctionTransport, Reply,
                                   engine_for)
from ctxproxy.proxy.replies import UpstreamError
from ctxproxy.proxy.routing import Router
from ctxproxy.proxy.scripted_provider import Reply as Scripted, render_answer
from ctxproxy.proxy.services import open_services


@dataclass
class Got:
    status: int
    headers: CIMultiDict
    body: bytes
    turn: Any
    forwarded: Forward | None = None  # what reached the provider (None: answered locally)
    writes: list[bytes] = field(default_factory=list)  # the body as it went out, write by write


class EngineDriver:
    def __init__(self, cfg: Any, provider: Callable[[Forward], Any] | None = None):
        self.cfg = cfg
        self.provider = provider  # async fn(forward) -> Upstream; default: the scripted replies
        self.replies: deque[Scripted] = deque()
        self.forwarded: list[Forward] = []
        self.services: dict[str, Any] = {}
        self.engine: Engine | None = None
        self.router = Router(cfg)

    async def __aenter__(self) -> "EngineDriver":
        self.services = open_services(self.cfg)
        self.engine = engine_for(self.cfg, self.services, FunctionTransport(self._send), routes=self.router.routes)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.engine.close()
        self.services["writer"].close()
        self.services["store"].close()

    def script(self, *replies: Scripted) -> "EngineDriver":
        self.replies.extend(replies)
        return self

    async def _send(self, forward: Forward) -> Any:
        self.forwarded.append(forward)
        if self.provider is not None:
            return await self.provider(forward)
        api, _ = api_for_path(urlsplit(forward.url).path)
        reply = self.replies.popleft() if self.replies else Scripted.text()
        status, headers, chunks = render_answer(api, reply, forward.body or b"")
        return CannedUpstream(status, headers, chunks)

    async def call(self, method: str, target: str, headers: dict[str, str], body: bytes = b"") -> Got:
        """One exchange, as an edge drives it; ``target`` is path and query, raw."""
        path, _, query = target.partition("?")
        headers = CIMultiDict(headers)
        match = self.router.match(path, method, headers)
        ex = self.engine.begin(match, method, path, query, headers)
        try:
            out = await ex.request(body)
            if isinstance(out, Reply):
                return Got(out.status, CIMultiDict(out.headers), out.body, ex.turn)
            try:
                upstream = await self.engine.transport.send(out)
            except UpstreamError as exc:
                r = ex.upstream_failed(exc)
                return Got(r.status, CIMultiDict(r.headers), r.body, ex.turn, out)
            answer = ex.answer(upstream.status, upstream.headers)
            writes: list[bytes] = []
            try:
                if answer.mode == EVENTS:
                    async for chunk in upstream.chunks():
                        writes.append(ex.events(chunk))
                        ex.settle()  # as the server's relay: the watching hooks after the write
                    writes.append(ex.events_end())
                elif answer.mode == BYTES:
                    async for chunk in upstream.chunks():
                        writes.append(chunk)
                else:
                    writes.append(ex.whole(await upstream.read()))
            except Exception as exc:  # the answer began: it ends with the engine's error event
                writes.append(ex.cut(exc))
            finally:
                upstream.release()
                ex.upstream_done()
            writes = [w for w in writes if w]
            return Got(answer.status, answer.headers, b"".join(writes), ex.turn, out, writes)
        finally:
            ex.finish()
