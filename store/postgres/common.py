"""What the PostgreSQL repositories share: the shape of an id in a column,
the record encoding (the embedded store's), and the runner protocol."""
from __future__ import annotations

from typing import Any, Callable, Protocol, TypeVar

from .. import keys
from ..encoding import dump, load  # noqa: F401  (the one record encoding, shared with LMDB)
from .pool import Tx

T = TypeVar("T")


def ident(value: Any, what: str = "id") -> str:
    """An id as its column holds it: the embedded store's key part (long or
    unprintable ids by their digest), as text."""
    raw = keys.part(value, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # a lone surrogate: its digest, as a long id gets
        return keys.HASH_MARK + __import__("hashlib").sha256(raw).hexdigest()


def opt_ident(value: Any, what: str) -> str | None:
    return None if value is None else ident(value, what)


def tenant_of(tenant: Any) -> str:
    keys.check_tenant(tenant)
    return tenant


class Runner(Protocol):
    """Runs ``op(tx)``: in a transaction of its own (the store), or in the open
    one of a batch or a snapshot."""

    def read(self, op: Callable[[Tx], T]) -> T: ...
    def write(self, op: Callable[[Tx], T]) -> T: ...


class Ctx:
    """What every repository shares: the clock and the rules."""

    def __init__(self, clock: Callable[[], float], pending_timeout: float | None) -> None:
        self.clock = clock
        self.pending_timeout = pending_timeout
