"""Request bodies a client compressed (``Content-Encoding``).

The server leaves bodies as they came (pass-through paths forward them
byte for byte). A model call is decoded here so its filters can read it: gzip
and deflate, within the body limit (a small body must not inflate to gigabytes);
any other coding is refused, since a body the filters cannot read must not
reach the provider unredacted.
"""
from __future__ import annotations

import zlib

from .replies import ProxyError

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def is_identity(coding: str | None) -> bool:
    return not coding or coding.strip().lower() == "identity"


def decode_body(raw: bytes, coding: str, limit: int) -> bytes:
    """``raw`` decoded from ``coding`` (one coding or a list, applied in order);
    ProxyError 415 for a coding we cannot read, 400 for a broken stream, 413
    past ``limit`` bytes."""
    body = raw
    for name in reversed([c.strip().lower() for c in coding.split(",") if c.strip()]):
        if name == "identity":
            continue
        wbits = _WBITS.get(name)
        if wbits is None:
            raise ProxyError(415, f"request Content-Encoding {name!r} is not supported for model calls "
                                  "(gzip, deflate or none)", "unsupported_content_encoding")
        if name == "deflate" and body[:1] and body[0] & 0x0F != 8:  # raw deflate, as some clients send
            wbits = -zlib.MAX_WBITS
        d = zlib.decompressobj(wbits)
        try:
            out = d.decompress(body, limit + 1)
        except zlib.error as exc:
            raise ProxyError(400, f"request body is not valid {name}: {exc}", "invalid_content_encoding") from None
        if len(out) > limit or d.unconsumed_tail:
            raise ProxyError(413, "request body is larger than the proxy's limit (server.max_body_bytes) "
                                  "once decompressed", "body_too_large")
        if not d.eof:
            raise ProxyError(400, f"request body is a truncated {name} stream", "invalid_content_encoding")
        body = out
    return body
