"""Count the calls a method receives while it still does its work (a spy on the class)."""
from __future__ import annotations

from typing import Any


def counting(monkeypatch: Any, cls: type, name: str) -> list:
    """One entry appended per call of ``cls.name`` from now on; the original still runs."""
    calls: list = []
    original = getattr(cls, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(cls, name, spy)
    return calls
