"""Reversible mode: a per-session, in-memory map from placeholder to value.

Kept only in process memory, with a time-to-live per entry; it refuses to be
pickled or printed with its values, so it cannot end up in a store, a log or
a span by accident. Two different values that would share a placeholder (an
8-hex-digit collision) make that placeholder ambiguous: it is then never
restored.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict, deque
from typing import Callable

PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9._-]{1,64}:[0-9a-f]{8}\]")

_AMBIGUOUS = object()


class Vault:
    """Placeholder -> value, least recently used first; each entry lives ``ttl_seconds``
    from when it was (last) stored.

    Expired entries are dropped as the vault is used: every ``put`` and ``get``
    first removes up to ``SWEEP`` entries whose time is up (oldest first, from
    a queue in expiry order), so a session that stops growing still empties
    and no call pays for the whole map. A hit moves the entry to the recent
    end; past ``max_entries`` the least recently used go first.
    """

    SWEEP = 16  # expired entries removed per call, at most

    def __init__(self, ttl_seconds: float = 3600.0, max_entries: int = 100_000,
                 clock: Callable[[], float] = time.monotonic):
        if ttl_seconds <= 0:
            raise ValueError("vault ttl must be positive")
        self.ttl = float(ttl_seconds)
        self.max_entries = int(max_entries)
        self._clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[str, tuple[object, float]] = OrderedDict()  # LRU order
        self._expiry: deque[tuple[float, str]] = deque()  # (expires, placeholder) in store order = expiry order

    def __len__(self) -> int:
        self._expire()
        return len(self._items)

    def __repr__(self) -> str:
        return f"<Vault entries={len(self._items)} ttl={self.ttl:g}s>"

    def __reduce__(self):
        raise TypeError("a redaction Vault is memory-only and cannot be serialized")

    def put(self, placeholder: str, value: str) -> None:
        now = self._clock()
        with self._lock:
            self._sweep_locked(now, self.SWEEP)
            old = self._items.get(placeholder)
            if old is not None and old[1] > now and (old[0] is _AMBIGUOUS or old[0] != value):
                value = _AMBIGUOUS  # type: ignore[assignment]  # two values, one placeholder: never restored
            self._store_locked(placeholder, value, now)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def get(self, placeholder: str) -> str | None:
        now = self._clock()
        with self._lock:
            self._sweep_locked(now, self.SWEEP)
            item = self._items.get(placeholder)
            if item is None:
                return None
            value, expires = item
            if expires <= now:
                del self._items[placeholder]
                return None
            self._items.move_to_end(placeholder)
            return None if value is _AMBIGUOUS else value  # type: ignore[return-value]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._expiry.clear()

    def restore(self, text: str) -> str:
        """Put the real values back for every known placeholder in ``text``."""
        if "[REDACTED:" not in text:
            return text
        return PLACEHOLDER_RE.sub(lambda m: self.get(m.group(0)) or m.group(0), text)

    def restore_json_text(self, text: str) -> str:
        """Like ``restore`` for placeholders inside JSON string literals (values are escaped)."""
        if "[REDACTED:" not in text:
            return text

        def repl(m: re.Match) -> str:
            value = self.get(m.group(0))
            return m.group(0) if value is None else json.dumps(value, ensure_ascii=False)[1:-1]

        return PLACEHOLDER_RE.sub(repl, text)

    def _expire(self) -> None:
        with self._lock:
            self._sweep_locked(self._clock(), None)

    def _store_locked(self, placeholder: str, value: object, now: float) -> None:
        expires = now + self.ttl
        self._items[placeholder] = (value, expires)
        self._items.move_to_end(placeholder)
        self._expiry.append((expires, placeholder))
        if len(self._expiry) > 2 * len(self._items) + 2 * self.SWEEP:
            # Mostly stale records (entries stored again or evicted): rebuild, paid for by as many stores.
            self._expiry = deque(sorted((exp, k) for k, (_, exp) in self._items.items()))

    def _sweep_locked(self, now: float, limit: int | None) -> None:
        """Drop up to ``limit`` (None: all) entries whose time is up, earliest first."""
        queue, items = self._expiry, self._items
        done = 0
        while queue and queue[0][0] <= now and (limit is None or done < limit):
            expires, key = queue.popleft()
            done += 1
            item = items.get(key)
            if item is not None and item[1] == expires:  # not stored again since
                del items[key]
