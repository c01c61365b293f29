"""In-process caches bounded by the bytes they hold, not by their number of entries.

A cache sized by count grows with what its entries hold: 65,536 session
records of a few KB each is hundreds of MB, 65,536 token counts is a few MB.
``ByteLRU`` keeps a running total of its entries' sizes and drops the least
recently used ones once the total passes ``max_bytes``, so every cache's
share of the process is a number a reader can add up (the table in
docs/performance.md).

Sizes are estimates made once per ``put``: ``size_of`` walks containers and
objects a few levels deep with ``sys.getsizeof``, counting a shared object
once per reference (an over-estimate, so the bound holds). A cache whose
entries all have one shape passes a fixed ``nbytes`` instead, measured once
(``entry_bytes``), and pays nothing per entry for it.
"""
from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict
from typing import Any, Hashable, Iterator

# What an OrderedDict slot costs beside its key and value (hash table entry and
# the order's linked-list node; measured with tracemalloc on CPython 3.11).
SLOT_BYTES = 112

_SCALARS = (str, bytes, int, float, bool, type(None))


def size_of(obj: Any, depth: int = 6) -> int:
    """Approximate bytes ``obj`` holds: ``sys.getsizeof`` of it and, ``depth``
    levels down, of what it contains (containers, ``__dict__``, ``__slots__``)."""
    size = sys.getsizeof(obj)
    if depth <= 0 or isinstance(obj, _SCALARS):
        return size
    d = depth - 1
    if isinstance(obj, dict):
        for k, v in obj.items():
            size += size_of(k, d) + size_of(v, d)
        return size
    if isinstance(obj, (tuple, list, set, frozenset)):
        for v in obj:
            size += size_of(v, d)
        return size
    inner = getattr(obj, "__dict__", None)
    if isinstance(inner, dict):
        size += size_of(inner, d)
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            v = getattr(obj, name, None)
            if v is not None and not callable(v):
                size += size_of(v, d)
    return size


def entry_bytes(key: Any, value: Any) -> int:
    """The size of one entry of that shape: for ``nbytes`` of a fixed-shape cache."""
    return SLOT_BYTES + size_of(key) + size_of(value)


_ALL: "weakref.WeakSet[Any]" = weakref.WeakSet()  # every bounded cache of the process


def caches() -> list[tuple[str, int, int, int]]:
    """(name, bytes held, bound, entries) of every bounded cache in this process,
    largest first: what a soak or an operator reads to see where memory went."""
    out = [(c.name, c.bytes, c.max_bytes, len(c)) for c in list(_ALL)]
    return sorted(out, key=lambda c: -c[1])


class ByteLRU:
    """A least-recently-used map whose entries' sizes add up to at most ``max_bytes``.

    Thread-safe. An entry larger than ``max_bytes`` alone is not kept. ``nbytes``
    (per ``put``, or ``fixed`` for every entry) skips the size estimate.
    ``max_entries``, when a setting also caps the number, applies as well.
    """

    __slots__ = ("name", "max_bytes", "fixed", "max_entries", "_data", "_bytes", "_lock", "__weakref__")

    def __init__(self, max_bytes: int, name: str = "", fixed: int | None = None, max_entries: int | None = None):
        self.name = name
        self.max_bytes = int(max_bytes)
        self.fixed = fixed
        self.max_entries = max_entries
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        _ALL.add(self)

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value, made the most recent; ``default`` when absent."""
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                return default
            self._data.move_to_end(key)
            return hit[0]

    def peek(self, key: Hashable, default: Any = None) -> Any:
        """The value without touching its recency."""
        hit = self._data.get(key)
        return default if hit is None else hit[0]

    def put(self, key: Hashable, value: Any, nbytes: int | None = None) -> None:
        """Keep ``value`` under ``key`` as the most recent; the least recent go
        while the total is over ``max_bytes``."""
        n = nbytes if nbytes is not None else self.fixed if self.fixed is not None else entry_bytes(key, value)
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if n > self.max_bytes:
                return
            self._data[key] = (value, n)
            self._bytes += n
            data = self._data
            cap = self.max_entries
            while data and (self._bytes > self.max_bytes or (cap is not None and len(data) > cap)):
                _, (_, m) = data.popitem(last=False)
                self._bytes -= m

    def pop(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            hit = self._data.pop(key, None)
            if hit is None:
                return default
            self._bytes -= hit[1]
            return hit[0]

    def discard(self, key: Hashable, value: Any) -> None:
        """Drop ``key`` if it still holds ``value`` (the same object)."""
        with self._lock:
            hit = self._data.get(key)
            if hit is not None and hit[0] is value:
                del self._data[key]
                self._bytes -= hit[1]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0

    def keys(self) -> Iterator[Hashable]:
        with self._lock:
            return iter(list(self._data))

    def values(self) -> list[Any]:
        with self._lock:
            return [v for v, _ in self._data.values()]

