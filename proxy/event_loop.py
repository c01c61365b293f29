"""The event loop a server process runs on (``[server] loop``).

``"auto"`` (the default) takes uvloop when it is installed (a dependency on
every platform it has wheels for) and asyncio's own loop otherwise;
``"asyncio"`` and ``"uvloop"`` choose one, and ``"uvloop"`` without uvloop
installed stops start-up rather than silently running on the other loop.
uvloop spends less of the process's CPU on sockets and callbacks (measured in
``bench/RESULTS.md``); the rest of the code does not depend on which loop runs.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable, Coroutine, TypeVar

T = TypeVar("T")
LOOPS = ("auto", "asyncio", "uvloop")


class LoopUnavailable(RuntimeError):
    """The configured loop cannot be had here."""


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """A factory for ``choice``'s loop, or None for asyncio's default."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise LoopUnavailable("server.loop = \"uvloop\", but uvloop is not installed "
                                  "(pip install uvloop; it has no Windows build)") from None
        return None
    return uvloop.new_event_loop


def run_on(choice: str, main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop ``choice`` names."""
    try:
        factory = loop_factory(choice)
    except LoopUnavailable:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """"uvloop" or "asyncio", for the start-up log line."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
