"""Times as the APIs take and give them: unix seconds or RFC 3339 / ISO 8601 text.

``epoch(value)`` reads either (a time without an offset is UTC) and raises
``ValueError`` saying what it expected; ``rfc3339(ts)`` writes one back.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

EXPECTED = "expected unix seconds (a non-negative number) or an RFC 3339 time such as 2026-03-01T12:00:00Z"


def epoch(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or value < 0:
            raise ValueError(EXPECTED)
        return float(value)
    if isinstance(value, str) and value.strip():
        try:
            dt = datetime.fromisoformat(value.strip().replace("z", "Z").replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(EXPECTED) from None
        ts = (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
        if ts < 0:
            raise ValueError(EXPECTED)
        return ts
    raise ValueError(EXPECTED)


def rfc3339(ts: float) -> str:
    """``2026-03-01T12:00:00Z`` ("" for no time)."""
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else ""
