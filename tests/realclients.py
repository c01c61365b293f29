"""Load the recorded real-client requests from ../shared/fixtures/real-clients."""
from __future__ import annotations

import json
import os
from pathlib import Path

# ../shared sits beside the project (in CI too); CTXPROXY_SHARED overrides it.
SHARED = Path(os.environ.get("CTXPROXY_SHARED") or Path(__file__).resolve().parent.parent.parent / "shared")
FIXTURES = SHARED / "fixtures" / "real-clients"


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def names() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.json"))


def body_bytes(rec: dict) -> bytes:
    """The body as a client would put it on the wire (compact JSON)."""
    return json.dumps(rec["body"], separators=(",", ":"), ensure_ascii=False).encode()
