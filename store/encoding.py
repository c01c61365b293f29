"""The stored form of a record, shared by every backend: compact JSON bytes
(orjson) carrying ``"v"`` (the record version) and ``"tenant"``, checked
again on every read; a lone surrogate a client sent is kept as U+FFFD
(``surrogates``)."""
from __future__ import annotations

from typing import Any, Mapping

import orjson

from . import surrogates
from .errors import StoreError

RECORD_VERSION = 1  # effects, sessions, documents and postings as every backend stores them


def dump(kind: str, record: Mapping[str, Any]) -> bytes:
    try:
        return surrogates.dumps(record)
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise StoreError(f"cannot encode {kind} record as JSON: {exc}") from exc


def load(kind: str, raw: bytes, tenant: str) -> dict[str, Any]:
    """A stored JSON record, checked to belong to ``tenant``."""
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"corrupt {kind} record: {exc}") from exc
    if not isinstance(record, dict) or record.get("tenant") != tenant:
        raise StoreError(f"{kind} record under tenant {tenant!r} does not belong to it")
    return record


def canon(value: Any) -> bytes | None:
    """The stored form of a value, for equality (tuples and lists alike)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
