"""An upstream URL's own path, shared by the router and whatever else calls a
configured route's upstream (the learning job's model extractor): one rule
for where a client's path goes on a base URL that already has a path."""
from __future__ import annotations

from urllib.parse import urlsplit


def base_segments(url: str) -> tuple[str, ...]:
    """The segments of an upstream URL's own path (``https://api.openai.com/v1`` -> ``("v1",)``)."""
    path = urlsplit(url).path.strip("/")
    return tuple(path.split("/")) if path else ()


def beyond_base(base: tuple[str, ...], path: str) -> str:
    """``path`` without the leading segments the upstream's own path ends with,
    so neither form of base URL doubles them: with ``https://api.openai.com/v1``
    a client's ``/v1/chat/completions`` and ``/chat/completions`` both go to
    ``…/v1/chat/completions``; with ``https://openrouter.ai/api/v1``,
    ``/v1/models`` goes to ``…/api/v1/models``. Whole segments only, the
    longest overlap first."""
    if not base:
        return path
    segs = path.split("/")  # segs[0] is "" (the path starts with "/")
    for k in range(min(len(base), len(segs) - 1), 0, -1):
        if base[-k:] == tuple(segs[1:k + 1]):
            return "/" + "/".join(segs[k + 1:]) if len(segs) > k + 1 else ""
    return path
