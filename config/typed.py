"""Parse plain TOML tables into frozen dataclasses, once, with exact errors.

Every section of ``ctxproxy.toml`` is a frozen dataclass; an unknown key or a
wrong type raises ``ConfigError`` naming the key's full path and what was
expected, so a typo stops start-up instead of being ignored.
"""
from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

T = TypeVar("T")


class ConfigError(ValueError):
    """Bad configuration: the message names the key path and what was expected."""


def parse_section(cls: type[T], raw: Any, path: str) -> T:
    """Build dataclass ``cls`` from the TOML table ``raw`` found at ``path``."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a table, got {_kind(raw)}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    removed = getattr(cls, "REMOVED", {})  # a key a section no longer has: why, and what replaces it
    gone = sorted(set(raw) & set(removed))
    if gone:
        raise ConfigError(f"{_join(path, gone[0])}: {removed[gone[0]]}")
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        allowed = ", ".join(sorted(fields)) or "(none)"
        raise ConfigError(f"{_join(path, unknown[0])}: unknown key (allowed here: {allowed})")
    values = {name: _coerce(hints[name], raw[name], _join(path, name)) for name in raw}
    try:
        obj = cls(**values)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path}: {exc}") from None
    check = getattr(obj, "validate", None)
    if check is not None:
        check(path)
    return obj


def overlay(cls: type, base: Any, user: Any) -> Any:
    """The TOML table ``user`` laid over ``base``, guided by dataclass ``cls``:
    a table that is a section (a dataclass, or an entry of a table of sections
    such as ``[routes.<name>]``) keeps the keys ``user`` does not name; any
    other value, a table of values such as ``ttl_days`` included, replaces
    ``base``'s whole. An entry typed ``Any`` (a filter's own section) has its
    first-level keys laid over."""
    if not (isinstance(base, dict) and isinstance(user, dict)):
        return user
    hints = get_type_hints(cls)
    out = dict(base)
    for key, value in user.items():
        tp = _section_type(hints.get(key))
        if tp is not None:
            out[key] = overlay(tp, base.get(key), value)
            continue
        entry = _entry_type(hints.get(key))
        if entry is not None and isinstance(base.get(key), dict) and isinstance(value, dict):
            lay = (lambda b, u, tp=entry: overlay(tp, b, u)) if entry is not Any else _lay_keys
            out[key] = {**base[key], **{name: lay(base[key].get(name), v) for name, v in value.items()}}
        else:
            out[key] = value
    return out


def _lay_keys(base: Any, user: Any) -> Any:
    return {**base, **user} if isinstance(base, dict) and isinstance(user, dict) else user


def _section_type(tp: Any) -> type | None:
    """The dataclass a field holds (``X`` or ``X | None``), else None."""
    if tp is None:
        return None
    options = get_args(tp) if get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    found = [o for o in options if dataclasses.is_dataclass(o)]
    return found[0] if len(found) == 1 else None


def _entry_type(tp: Any) -> Any:
    """For a table of sections (``Mapping[str, X]`` with X a dataclass or Any): X, else None."""
    if get_origin(tp) not in (dict, collections.abc.Mapping):
        return None
    args = get_args(tp)
    value = args[1] if len(args) == 2 else None
    return value if value is Any or dataclasses.is_dataclass(value) else None


def _coerce(tp: Any, value: Any, path: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(option, value, path)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{path}: expected {_name(tp)}, got {_kind(value)}")
    if dataclasses.is_dataclass(tp):
        return parse_section(tp, value, path)
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise ConfigError(f"{path}: expected a list, got {_kind(value)}")
        (item,) = get_args(tp)[:1] or (Any,)
        return tuple(_coerce(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin in (dict, collections.abc.Mapping) or tp is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: expected a table, got {_kind(value)}")
        args = get_args(tp)
        vt = args[1] if len(args) == 2 else Any
        return {k: _coerce(vt, v, _join(path, k)) for k, v in value.items()}
    if origin is typing.Literal:
        if value not in get_args(tp):
            allowed = " | ".join(repr(a) for a in get_args(tp))
            raise ConfigError(f"{path}: expected one of {allowed}, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{path}: expected a number, got {_kind(value)}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path}: expected an integer, got {_kind(value)}")
        return value
    if tp in (str, bool):
        if type(value) is not tp:
            raise ConfigError(f"{path}: expected {'a string' if tp is str else 'true or false'}, got {_kind(value)}")
        return value
    raise ConfigError(f"{path}: unsupported type {tp!r}")  # a bug in a schema, not in the file


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))
