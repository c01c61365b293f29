"""A port for a server started in another process (``ctxproxy eval``'s child, tests, benchmarks).

Binding port 0 and closing the socket leaves a race: until the child binds
it, the kernel may hand the same port to any outgoing connection as its
local port (port 0 and outgoing connections draw from the same ephemeral
range), and the child then fails with "Address already in use". A load run
opens thousands of connections, so it happens. A port below that range is
never given to an outgoing connection; only another listener could take it.
"""
from __future__ import annotations

import random
import socket

_EPHEMERAL_LOW = 32768  # Linux's default when the range cannot be read


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return _EPHEMERAL_LOW


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port nothing listens on now, outside the ephemeral range when it can be."""
    low = _ephemeral_low()
    if low > 12000:
        rng = random.SystemRandom()
        for _ in range(64):
            port = rng.randrange(10000, low)
            if _bindable(port):
                return port
    with socket.socket() as s:  # no room below the range: the kernel's pick
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
