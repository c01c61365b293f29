"""A clock that stands still until a test moves it: ``clock.t += 60``."""
from __future__ import annotations


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t
