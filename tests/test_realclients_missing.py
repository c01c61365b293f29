"""Without the recorded real-client requests (../shared/fixtures/real-clients,
or $CTXPROXY_SHARED) the tests that use them fail, naming the directory — not
a silently empty parametrisation, not a bare FileNotFoundError."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def run_pytest(shared: Path, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CTXPROXY_SHARED": str(shared), "OTEL_SDK_DISABLED": "true"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *files], cwd=TESTS.parent,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("layout", ["missing", "empty"])
def test_missing_fixtures_fail_naming_the_directory(tmp_path, layout):
    shared = tmp_path / "shared"
    if layout == "empty":
        (shared / "fixtures" / "real-clients").mkdir(parents=True)
    # test_passthrough parametrises over the recordings (collection); test_identify loads them in tests
    p = run_pytest(shared, "tests/proxy/test_passthrough.py", "tests/filters/test_identify.py::test_codex_session_headers")
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert f"recorded real-client requests not found: {shared / 'fixtures' / 'real-clients'}" in out, out
    assert "FileNotFoundError" not in out


def test_a_missing_recording_is_named(tmp_path):
    shared = tmp_path / "shared"
    (shared / "fixtures" / "real-clients").mkdir(parents=True)
    (shared / "fixtures" / "real-clients" / "other.json").write_text('{"path": "/v1/models"}')
    p = run_pytest(shared, "tests/filters/test_identify.py::test_codex_session_headers")
    out = p.stdout + p.stderr
    assert p.returncode != 0
    assert "recorded real-client request 'codex-" in out and "is missing" in out, out
