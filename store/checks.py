"""Checks of what callers hand the store, the same in every backend: a
wrong type is a ``StoreError`` naming the argument, never a backend's own
error from deep inside a write."""
from __future__ import annotations

from typing import Sequence

from .errors import StoreError


def check_str(value: object, what: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise StoreError(f"{what} must be a string, not {type(value).__name__}")


def str_list(values: Sequence[str] | None, what: str) -> list[str]:
    """A list of strings (a lone string is refused: it would be read as its letters)."""
    if values is None:
        return []
    if isinstance(values, str):
        raise StoreError(f"{what} must be a list of strings, not a string")
    out = list(values)
    for v in out:
        check_str(v, what)
    return out
