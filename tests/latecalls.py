"""A step of the proxy patched to run late (``fn`` ``delay`` seconds after each
call, on the running event loop), and a wait until those late runs are over.

A fixed sleep longer than ``delay`` is not enough on a loaded machine: the step
is scheduled when the proxy reaches it, which can be later than the client's
answer, so the wait is for the runs themselves."""
from __future__ import annotations

import asyncio
from typing import Any, Callable


class LateCalls:
    def __init__(self, fn: Callable[..., Any], delay: float) -> None:
        self.fn, self.delay, self.ran = fn, delay, 0

    def patch(self) -> Callable[..., Any]:
        """The replacement: a plain function, so it binds as a method where ``fn`` did."""
        def late(*args: Any) -> None:
            asyncio.get_running_loop().call_later(self.delay, self._run, args)
        return late

    def _run(self, args: tuple) -> None:
        try:
            self.fn(*args)
        finally:
            self.ran += 1

    async def until_ran(self, n: int, timeout: float = 60.0) -> None:
        """Until ``n`` late calls have run (``timeout`` seconds fail the test)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.ran < n:
            assert loop.time() < deadline, f"{self.ran} of {n} late calls ran in {timeout}s"
            await asyncio.sleep(0.01)
