"""A filter's part of the Context Manifest: the fields it fills, and how.

A filter's ``report(turn)`` returns a dict. The keys it declares in its
``manifest_fields`` (field name -> ``ManifestField``) are top-level fields of
the stored manifest (``redactions``, ``pruned``, ``effects``, ...): each is
formatted by the field's ``format``, which also gives the field's value when
the filter is off or did not report. Any other key is the filter's own part,
stored under ``filters.<name>`` as reported. ``Pipeline.reports`` keys every
part by its filter, and no two filters may declare one field (the pipeline
and the registry refuse it), so one filter can never overwrite another's.

The helpers below read a value defensively: a manifest is written after the
answer went out, from whatever a filter left, and must not fail on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

MAX_TEXT = 256


@dataclass(frozen=True)
class ManifestField:
    """A top-level manifest field one filter fills."""

    format: Callable[[Any], Any]  # the reported value (None when not reported) -> what is stored: refs,
    # labels, counts, never text
    optional: bool = False  # left out of the manifest when ``format`` gives None


def as_dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list:
    return v if isinstance(v, list) else []


def text(v: Any, n: int = MAX_TEXT) -> str:
    """``v`` as a string of at most ``n`` characters ('' for None)."""
    if v is None:
        return ""
    s = v if isinstance(v, str) else str(v)
    return s[:n]


def text_or_none(v: Any) -> str | None:
    return text(v) or None


def integer(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def scalar(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return v
    return text(v)


def counts(v: Any) -> dict[str, int]:
    """``{name: count}`` with positive integer counts only."""
    out: dict[str, int] = {}
    for name, n in as_dict(v).items():
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            key = text(name, 128)
            out[key] = out.get(key, 0) + n
    return out


def items(each: Callable[[Any], Any]) -> Callable[[Any], list]:
    """A list field: every item formatted by ``each``."""
    return lambda v: [each(x) for x in as_list(v)]


def present(v: Any) -> Any:
    """A field stored as reported, left out when not reported."""
    return v


FLAG = ManifestField(bool)
COUNTS = ManifestField(counts)
INTEGER = ManifestField(integer)
TEXT = ManifestField(text_or_none)
OPTIONAL = ManifestField(present, optional=True)
