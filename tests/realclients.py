"""Load the recorded real-client requests from ../shared/fixtures/real-clients.

The directory sits beside the project (in CI too); ``CTXPROXY_SHARED`` names
another ``shared`` directory. When it is missing or empty, every test that uses
these recordings fails with a message naming the directory — never a silently
empty parametrisation or a bare FileNotFoundError."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("CTXPROXY_SHARED") or Path(__file__).resolve().parent.parent.parent / "shared")
FIXTURES = SHARED / "fixtures" / "real-clients"


def fixtures_dir() -> Path:
    """FIXTURES, or a test failure that says where it was looked for."""
    where = "$CTXPROXY_SHARED" if os.environ.get("CTXPROXY_SHARED") else "../shared beside the repository"
    if not FIXTURES.is_dir():
        pytest.fail(f"recorded real-client requests not found: {FIXTURES} is missing (expected from {where}; "
                    f"set CTXPROXY_SHARED to the directory that holds fixtures/real-clients)", pytrace=False)
    if not any(FIXTURES.glob("*.json")):
        pytest.fail(f"recorded real-client requests not found: {FIXTURES} holds no *.json "
                    f"(expected from {where})", pytrace=False)
    return FIXTURES


def load(name: str) -> dict:
    path = fixtures_dir() / f"{name}.json"
    if not path.is_file():
        pytest.fail(f"recorded real-client request {name!r} not found: {path} is missing", pytrace=False)
    return json.loads(path.read_text())


def names() -> list[str]:
    return sorted(p.stem for p in fixtures_dir().glob("*.json"))


def body_bytes(rec: dict) -> bytes:
    """The body as a client would put it on the wire (compact JSON)."""
    return json.dumps(rec["body"], separators=(",", ":"), ensure_ascii=False).encode()
