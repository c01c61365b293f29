"""A ``ctxproxy serve`` child process in a test: waiting until it answers its
health check, and killing its whole process group (the server and its workers)."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from typing import Callable

import aiohttp


async def until_healthy(http: aiohttp.ClientSession, url: str, alive: Callable[[], bool], about: Callable[[], str],
                        timeout: float = 30.0, *, poll: float = 0.05, request_timeout: float = 1.0) -> None:
    """Until ``url`` answers ``/ctx/healthz`` with 200; a process that is no
    longer ``alive()``, or ``timeout`` seconds, fail the test with ``about()``
    (its log, or where it is)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise AssertionError(f"{url} exited: {about()}")
        try:
            async with http.get(url + "/ctx/healthz", timeout=aiohttp.ClientTimeout(total=request_timeout)) as r:
                if r.status == 200:
                    return
        except (aiohttp.ClientError, asyncio.TimeoutError):
            pass
        await asyncio.sleep(poll)
    raise AssertionError(f"{url} not ready after {timeout}s: {about()}")


def kill_group(proc: subprocess.Popen) -> None:
    """kill -9 a child started with ``start_new_session`` (its group: the server
    and any workers), and reap it; nothing if it already exited."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
