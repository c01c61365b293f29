"""The app-wide state of a running proxy, under one typed aiohttp ``AppKey``.

The server creates it at start-up; the admin API and the commands read it
through ``APP_STATE``. A module of its own so that neither imports the other
(the admin API never imports the server).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ctxproxy.config import Config
from ctxproxy.filters.services import Services

from ..routing import Route, Router
from ..version import version


class InFlight:
    """How many proxied requests are being served: shutdown waits until none is."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def __enter__(self) -> "InFlight":
        self.count += 1
        self._idle.clear()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def wait_idle(self, timeout: float) -> bool:
        """True if no request is left in flight within ``timeout`` seconds."""
        if self.count and timeout > 0:
            try:
                await asyncio.wait_for(self._idle.wait(), timeout)
            except TimeoutError:
                pass
        return self.count == 0


@dataclass
class AppState:
    config: Config
    router: Router
    relay: Any  # relay.Relay: the HTTP edge and its engine
    routes: dict[str, Route]
    services: Services = field(default_factory=Services)
    inflight: InFlight = field(default_factory=InFlight)
    # the learning job's count of model calls in flight (its background pass gives way to them)
    turns: Any = field(default_factory=contextlib.nullcontext)
    keyring: Any = None  # auth.Keyring in keys mode (admin keys, per-request key checks)
    version: str = field(default_factory=version)
    pid: int = field(default_factory=os.getpid)


APP_STATE = web.AppKey("ctxproxy_state", AppState)
