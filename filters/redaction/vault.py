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
from typing import Callable

PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9._-]{1,64}:[0-9a-f]{8}\]")

_AMBIGUOUS = object()


class Vault:
    def __init__(self, ttl_seconds: float = 3600.0, max_entries: int = 100_000,
                 clock: Callable[[], float] = time.monotonic):
        if ttl_seconds <= 0:
            raise ValueError("vault ttl must be positive")
        self.ttl = float(ttl_seconds)
        self.max_entries = int(max_entries)
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, tuple[object, float]] = {}

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
            old = self._items.get(placeholder)
            if old is not None and old[1] > now and old[0] is not _AMBIGUOUS and old[0] != value:
                self._items[placeholder] = (_AMBIGUOUS, now + self.ttl)
                return
            if old is not None and old[0] is _AMBIGUOUS and old[1] > now:
                self._items[placeholder] = (_AMBIGUOUS, now + self.ttl)
                return
            self._items[placeholder] = (value, now + self.ttl)
            if len(self._items) > self.max_entries:
                self._expire_locked(now)
                while len(self._items) > self.max_entries:
                    self._items.pop(next(iter(self._items)))

    def get(self, placeholder: str) -> str | None:
        now = self._clock()
        with self._lock:
            item = self._items.get(placeholder)
            if item is None:
                return None
            value, expires = item
            if expires <= now:
                del self._items[placeholder]
                return None
            return None if value is _AMBIGUOUS else value  # type: ignore[return-value]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

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
            self._expire_locked(self._clock())

    def _expire_locked(self, now: float) -> None:
        dead = [k for k, (_, exp) in self._items.items() if exp <= now]
        for k in dead:
            del self._items[k]
