"""What a caller may say about a memory it writes, checked before anything else.

Shared by every write path (admin API, CLI, imports) so a bad field gets the
same answer everywhere: ``FieldError(field, message)``, nothing stored.
"""
from __future__ import annotations

from typing import Any, Mapping

from ctxproxy.store.memory_records import KINDS, ORIGINS, SENSITIVITIES, STATUSES

from ..times import epoch

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
# What a record shows (GET) beside the writable fields. The store and the gate set them, so a
# create takes a record's own shape back without taking them as instructions: ``scope`` is
# read as project/user/session, ``memory_id`` becomes the ``external_id`` (posting it again
# adds nothing), ``status`` may only ask for less trust than the origin gives (``proposed``,
# ``hypothesis``), the rest is checked for its type and left to the store.
SHOWN = frozenset({"scope", "memory_id", "tenant", "status", "revision", "created_by", "created_at", "updated_at",
                   "supersedes", "superseded_by", "quarantine"})
SCOPE_FIELDS = ("project", "user", "session")
LIVE_STATUSES = ("active", "proposed", "hypothesis")


class FieldError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def parse_fields(body: Any, *, allowed: frozenset[str] = WRITABLE, required: tuple[str, ...] = ("statement",),
                 ignore: tuple[str, ...] = (), as_shown: bool = False) -> dict[str, Any]:
    """The checked fields of a memory write (``FieldError`` on the first bad one).
    ``as_shown``: a create, which also takes a record as GET shows it (``SHOWN``)."""
    if not isinstance(body, Mapping):
        raise FieldError("body", f"expected a JSON object, got {_kind(body)}")
    out: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    for name, value in body.items():
        if name in ignore:
            continue
        if as_shown and name in SHOWN:
            shown[name] = _check_shown(name, value)
            continue
        if not isinstance(name, str) or name not in allowed:
            raise FieldError(str(name), "unknown field" + (" (it cannot be changed by an edit)"
                                                          if name in WRITABLE else ""))
        out[name] = _check(name, value)
    for name, value in (shown.get("scope") or {}).items():
        if out.get(name, value) != value:
            raise FieldError(f"scope.{name}", f"differs from {name} ({out[name]!r})")
        if value:
            out[name] = value
    if shown.get("memory_id") and not out.get("external_id"):
        out["external_id"] = shown["memory_id"]
    if shown.get("status") in ("proposed", "hypothesis"):
        out["status"] = shown["status"]
    for name in required:
        if name not in out:
            raise FieldError(name, "required")
    return out


def _check_shown(name: str, value: Any) -> Any:
    if name == "scope":
        if not isinstance(value, Mapping):
            raise FieldError(name, f"expected an object of {', '.join(SCOPE_FIELDS)}, got {_kind(value)}")
        for k, v in value.items():
            if k not in SCOPE_FIELDS:
                raise FieldError(f"scope.{k}", f"unknown scope field; expected {', '.join(SCOPE_FIELDS)}")
            try:
                _check(k, v)
            except FieldError as exc:
                raise FieldError(f"scope.{k}", exc.message) from None
        return dict(value)
    if name == "status":
        if value not in STATUSES:
            raise FieldError(name, f"expected one of {', '.join(STATUSES)}")
        if value not in LIVE_STATUSES:
            raise FieldError(name, f"a {value} record is history, not a memory to write; write a live one "
                                   f"({', '.join(LIVE_STATUSES)})")
        return value
    if name == "revision":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise FieldError(name, "expected a revision number")
        return value
    if name in ("created_at", "updated_at"):
        return _time(name, value)
    if value is not None and not isinstance(value, str):
        raise FieldError(name, f"expected a string, got {_kind(value)}")
    if name == "memory_id" and value:
        _check("external_id", value)
    return value


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
        return _time(name, value)
    if name == "evergreen":
        if not isinstance(value, bool):
            raise FieldError(name, f"expected true or false, got {_kind(value)}")
        return value
    raise FieldError(name, "unknown field")


def _time(name: str, value: Any) -> float:
    try:
        return epoch(value)
    except ValueError as exc:
        raise FieldError(name, str(exc)) from None


def _text(name: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldError(name, "is not valid UTF-8 (lone surrogate)") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)
