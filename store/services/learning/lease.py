"""One consolidation at a time per tenant, across every process sharing the store.

    with Lease(store.learning, tenant, owner, ttl=300) as lease:   # Busy if another owner holds it
        ...
        lease.beat()          # heartbeat; LeaseLost if it lapsed and another owner took it

A lease that is not renewed lapses after ``ttl`` seconds and the next taker
takes it over (a worker that died mid-run blocks the tenant for at most
``ttl``). ``beat`` renews at most every third of ``ttl``, so a run that calls
it per item pays a write now and then, not per item.
"""
from __future__ import annotations

import os
import secrets
import socket
import time
from typing import Any, Callable


class Busy(RuntimeError):
    """Another worker holds the tenant's lease."""


class LeaseLost(RuntimeError):
    """The lease lapsed and another worker took it: stop writing."""


def owner_token() -> str:
    """Names this worker: host, process and a random part (a restarted process is another owner)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def backoff(failures: int, first: float, most: float) -> float:
    """Seconds before a retry after ``failures`` failed runs in a row: doubling from ``first``."""
    return min(most, first * (2 ** max(0, failures - 1)))


class Lease:
    def __init__(self, learning: Any, tenant: str, owner: str, ttl: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.learning, self.tenant, self.owner, self.ttl = learning, tenant, owner, ttl
        self.clock = clock
        self._renewed = 0.0
        self.held: dict[str, Any] | None = None

    def __enter__(self) -> "Lease":
        self.held = self.learning.take_lease(self.tenant, self.owner, self.ttl)
        if self.held is None:
            holder = (self.learning.lease(self.tenant) or {}).get("owner", "another worker")
            raise Busy(f"tenant {self.tenant!r}: a consolidation is running ({holder} holds the lease)")
        self._renewed = self.clock()
        return self

    def beat(self) -> None:
        if self.clock() - self._renewed < self.ttl / 3:
            return
        if not self.learning.renew_lease(self.tenant, self.owner, self.ttl):
            raise LeaseLost(f"tenant {self.tenant!r}: the lease lapsed and was taken over")
        self._renewed = self.clock()

    def __exit__(self, *exc: Any) -> None:
        if self.held is not None:
            self.learning.drop_lease(self.tenant, self.owner)
