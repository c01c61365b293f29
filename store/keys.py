"""Key layout: every key starts with its tenant, and no scan can leave it.

A key is a ``\\x00``-joined list of parts, the tenant first::

    tenant \\x00 part \\x00 part ...

The tenant is validated, never rewritten: a non-empty printable string of at
most ``MAX_TENANT_BYTES`` UTF-8 bytes, no leading or trailing whitespace. That
rules out ``\\x00`` (and every other control character), so ``tenant\\x00`` is
an exact prefix: a scan for tenant ``"a"`` can never reach ``"ab"`` or ``"a\\x00b"``
(the latter is rejected outright).

Other parts (session, task, call ids, record ids) come from clients and are
never rejected for their content: a part that is short and printable and does
not start with ``#`` is stored as is; anything else (too long, control
characters, lone surrogates, a leading ``#``) is stored as ``#`` + its sha256
hex. Either way a part never contains ``\\x00``, so prefixes stay exact, and
keys stay far below LMDB's 511-byte limit.
"""
from __future__ import annotations

import hashlib

from .errors import StoreError

SEP = b"\x00"
MAX_TENANT_BYTES = 96
MAX_RAW_PART_BYTES = 96
HASH_MARK = "#"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# tenants already checked, with their key prefix (a key is made of one several times a write)
_VALID_TENANTS: dict[str, bytes] = {}
VALID_TENANTS_MAX = 1024  # at most this many, each at most MAX_TENANT_BYTES: ~0.3 MB
# short parts already encoded (a turn's writes make keys of its session, turn and call ids several times)
_PARTS: dict[str, bytes] = {}
PARTS_MAX = 1024  # at most this many, each at most MAX_RAW_PART_BYTES: ~0.4 MB


def check_tenant(tenant: object) -> str:
    """Return ``tenant`` if it is a valid tenant id, else raise ``StoreError``."""
    if type(tenant) is str and tenant in _VALID_TENANTS:
        return tenant
    if not isinstance(tenant, str):
        raise StoreError(f"tenant id must be a string, not {type(tenant).__name__}")
    if not tenant:
        raise StoreError("tenant id is empty")
    if not tenant.isprintable() or tenant != tenant.strip():
        raise StoreError(
            f"invalid tenant id {_short(tenant)}: control characters and "
            "leading/trailing whitespace are not allowed"
        )
    if len(tenant.encode("utf-8")) > MAX_TENANT_BYTES:
        raise StoreError(f"tenant id {_short(tenant)} is longer than {MAX_TENANT_BYTES} bytes")
    if len(_VALID_TENANTS) >= VALID_TENANTS_MAX:
        _VALID_TENANTS.clear()
    _VALID_TENANTS[tenant] = tenant.encode("utf-8") + SEP
    return tenant


def tenant_prefix(tenant: str) -> bytes:
    """``tenant \\x00``: the prefix every key of this tenant starts with."""
    known = _VALID_TENANTS.get(tenant) if type(tenant) is str else None  # noqa: E721
    return known if known is not None else check_tenant(tenant).encode("utf-8") + SEP


def part(value: object, what: str = "id") -> bytes:
    """Encode one key part (see the module docstring)."""
    if type(value) is str:  # noqa: E721
        known = _PARTS.get(value)
        if known is not None:
            return known
    elif not isinstance(value, str):
        raise StoreError(f"{what} must be a string, not {type(value).__name__}")
    if not value:
        raise StoreError(f"{what} is empty")
    raw = value.encode("utf-8", "surrogatepass")
    if len(raw) <= MAX_RAW_PART_BYTES and value.isprintable() and not value.startswith(HASH_MARK):
        if type(value) is str:  # noqa: E721  (a str subclass may hash and compare its own way)
            if len(_PARTS) >= PARTS_MAX:
                _PARTS.clear()
            _PARTS[value] = raw
        return raw
    return HASH_MARK.encode() + hashlib.sha256(raw).hexdigest().encode()


def key(tenant: str, *parts: bytes) -> bytes:
    """A full key from already-encoded parts."""
    return tenant_prefix(tenant) + SEP.join(parts)


def prefix(tenant: str, *parts: bytes) -> bytes:
    """The scan prefix for every key below ``parts`` (ends with a separator)."""
    if not parts:
        return tenant_prefix(tenant)
    return key(tenant, *parts) + SEP


def split(rest: bytes) -> list[bytes]:
    """The encoded parts of a key suffix."""
    return rest.split(SEP)
