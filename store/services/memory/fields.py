"""What a caller may say about a memory it writes, checked before anything else.

Shared by every write path (admin API, CLI, imports) so a bad field gets the
same answer everywhere: ``FieldError(field, message)``, nothing stored.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ctxproxy.store.memory_records import KINDS, ORIGINS, SENSITIVITIES

MAX_STATEMENT_CHARS = 8000  # a hard input bound; the gate's per-kind limits are lower (config)
MAX_ID_CHARS = 200
MAX_REF_CHARS = 2000
MAX_EVIDENCE_SESSIONS = 64

_STR = ("statement", "kind", "origin", "project", "user", "session", "purpose", "evidence_ref", "sensitivity",
        "external_id", "subject_key", "replaces")
_SHORT = {"project", "user", "session", "purpose", "external_id", "replaces"}
WRITABLE = frozenset((*_STR, "evidence_sessions", "confidence", "observed_at", "expires_at", "evergreen"))
# What an edit (PATCH) may change; scope, origin and external id stay (write a new memory instead).
EDITABLE = frozenset({"statement", "kind", "evidence_ref", "evidence_sessions", "confidence", "sensitivity",
                      "observed_at", "expires_at", "evergreen", "subject_key", "purpose"})


class FieldError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def parse_fields(body: Any, *, allowed: frozenset[str] = WRITABLE, required: tuple[str, ...] = ("statement",),
                 ignore: tuple[str, ...] = ()) -> dict[str, Any]:
    """The checked fields of a memory write (``FieldError`` on the first bad one)."""
    if not isinstance(body, Mapping):
        raise FieldError("body", f"expected a JSON object, got {_kind(body)}")
    out: dict[str, Any] = {}
    for name, value in body.items():
        if name in ignore:
            continue
        if not isinstance(name, str) or name not in allowed:
            raise FieldError(str(name), "unknown field" + (" (it cannot be changed by an edit)"
                                                          if name in WRITABLE else ""))
        out[name] = _check(name, value)
    for name in required:
        if name not in out:
            raise FieldError(name, "required")
    return out


def _check(name: str, value: Any) -> Any:
    if name in _STR:
        if not isinstance(value, str):
            raise FieldError(name, f"expected a string, got {_kind(value)}")
        _text(name, value)
        if name == "statement":
            if not value.strip():
                raise FieldError(name, "is empty")
            if len(value) > MAX_STATEMENT_CHARS:
                raise FieldError(name, f"{len(value)} characters, more than the {MAX_STATEMENT_CHARS} allowed")
        elif name == "kind" and value not in KINDS:
            raise FieldError(name, f"expected one of {', '.join(KINDS)}")
        elif name == "origin" and value not in ORIGINS:
            raise FieldError(name, f"expected one of {', '.join(ORIGINS)}")
        elif name == "sensitivity" and value not in SENSITIVITIES:
            raise FieldError(name, f"expected one of {', '.join(SENSITIVITIES)}")
        elif name in _SHORT and (len(value) > MAX_ID_CHARS or not value.isprintable() or value != value.strip()):
            raise FieldError(name, f"expected printable text of at most {MAX_ID_CHARS} characters, "
                                   "no surrounding spaces")
        elif len(value) > MAX_REF_CHARS:
            raise FieldError(name, f"longer than {MAX_REF_CHARS} characters")
        return value
    if name == "evidence_sessions":
        if not isinstance(value, list) or len(value) > MAX_EVIDENCE_SESSIONS:
            raise FieldError(name, f"expected a list of at most {MAX_EVIDENCE_SESSIONS} session ids")
        for s in value:
            if not isinstance(s, str) or not s or len(s) > MAX_ID_CHARS or not s.isprintable():
                raise FieldError(name, "expected non-empty printable session ids")
        return tuple(dict.fromkeys(value))
    if name == "confidence":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise FieldError(name, "expected a number from 0 to 1")
        return float(value)
    if name in ("observed_at", "expires_at"):
        if value is None and name == "expires_at":
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise FieldError(name, "expected unix seconds (a non-negative number)")
        return float(value)
    if name == "evergreen":
        if not isinstance(value, bool):
            raise FieldError(name, f"expected true or false, got {_kind(value)}")
        return value
    raise FieldError(name, "unknown field")


def _text(name: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldError(name, "is not valid UTF-8 (lone surrogate)") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)
