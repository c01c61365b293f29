"""Lone surrogates a client sent, made storable.

A client may send a lone surrogate (``"\\ud800"``: valid JSON, not valid
Unicode), and what the store keeps can carry it: a tool's name, a session's
text. UTF-8 cannot hold one, so orjson and SQLite refuse it; the store keeps
U+FFFD in its place (what any UTF-8 reader makes of it) instead of failing the
write and, with it, the turn. (The adapters' ``dumps`` keeps the escape instead:
what goes upstream is the client's own JSON, and JSON can carry it.)
"""
from __future__ import annotations

import re
from typing import Any

import orjson

_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, option: int | None = None) -> bytes:
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as exc:
        if "surrogates" not in str(exc):
            raise
        return orjson.dumps(replaced(value), option=option)


def text(value: str) -> str:
    """``value`` as UTF-8 can hold it."""
    return value if value.isascii() or not _SURROGATE.search(value) else _SURROGATE.sub("\ufffd", value)


def replaced(value: Any) -> Any:
    """``value`` with every string (keys too) as UTF-8 can hold it."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {replaced(k): replaced(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [replaced(v) for v in value]
    return value
