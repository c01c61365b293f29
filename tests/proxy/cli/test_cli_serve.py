"""``ctxproxy serve`` as an operator runs it (real subprocesses on 127.0.0.1):
start-up failures are one line on stderr and a non-zero exit, in one process
or with ``--workers``; the workers log at ``--log-level``; a worker that dies
takes the others down and the parent exits non-zero."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import orjson
import pytest
from serveproc import kill_group

from ctxproxy.proxy.ports import free_port

ENV = {**os.environ, "OTEL_SDK_DISABLED": "true"}


def serve(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", *argv], env=ENV,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def busy_port():
    """A port some other program listens on (without SO_REUSEPORT)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


class Running:
    def __init__(self, *argv: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", *argv], env=ENV,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)

    def pids(self, port: int, want: int, timeout: float = 40) -> set[int]:
        """The pids answering /ctx/healthz on ``port``, once ``want`` of them did."""
        pids: set[int] = set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(pids) < want:
            assert self.proc.poll() is None, self.stderr()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ctx/healthz", timeout=1) as r:
                    pids.add(orjson.loads(r.read())["pid"])
            except OSError:
                time.sleep(0.1)
        assert len(pids) >= want, f"only {pids} answered"
        return pids

    def stderr(self, timeout: float = 30) -> str:
        return self.proc.communicate(timeout=timeout)[1]

    def kill(self) -> None:
        kill_group(self.proc)


@pytest.fixture
def running():
    started: list[Running] = []

    def start(*argv: str) -> Running:
        r = Running(*argv)
        started.append(r)
        return r

    yield start
    for r in started:
        r.kill()


def one_line_error(p: subprocess.CompletedProcess) -> str:
    assert p.returncode != 0, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    return p.stderr


def test_port_in_use_is_one_line(tmp_path, busy_port):
    p = serve("--port", str(busy_port), "--data-dir", str(tmp_path / "d"))
    err = one_line_error(p)
    assert p.returncode == 1
    assert err.strip().splitlines()[-1] == f"ctxproxy: cannot listen on 127.0.0.1:{busy_port}: Address already in use"


def test_workers_that_cannot_start_fail_the_parent(tmp_path, busy_port):
    p = serve("--workers", "2", "--port", str(busy_port), "--data-dir", str(tmp_path / "d"), "--log-level", "WARNING")
    err = one_line_error(p)
    assert p.returncode == 1
    assert "Address already in use" in err
    assert err.strip().splitlines()[-1].startswith("ctxproxy: worker ")
    assert "before it was ready" in err


def test_invalid_log_level(tmp_path):
    p = serve("--log-level", "LOUD", "--data-dir", str(tmp_path / "d"), "--port", str(free_port()))
    err = one_line_error(p)
    assert p.returncode == 2
    assert "--log-level: expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'LOUD'" in err


def test_data_dir_that_is_a_file(tmp_path):
    f = tmp_path / "not-a-dir"
    f.write_text("x")
    for data_dir in (f, f / "below"):
        p = serve("--data-dir", str(data_dir), "--port", str(free_port()))
        err = one_line_error(p)
        assert p.returncode == 1
        assert str(data_dir) in err and len(err.strip().splitlines()) == 1, err


def test_workers_log_at_the_given_level(tmp_path, running):
    port = free_port()
    r = running("--workers", "2", "--port", str(port), "--data-dir", str(tmp_path / "d"), "--log-level", "WARNING")
    r.pids(port, 2)
    r.proc.send_signal(signal.SIGTERM)
    err = r.stderr()
    assert r.proc.returncode == 0, err
    assert " INFO " not in err, err  # neither "listening on" nor "stopping" from the workers

    port = free_port()
    r = running("--workers", "2", "--port", str(port), "--data-dir", str(tmp_path / "d2"), "--log-level", "info")
    pids = r.pids(port, 2)
    r.proc.send_signal(signal.SIGTERM)
    err = r.stderr()
    assert r.proc.returncode == 0, err
    for pid in pids:
        assert f"ctxproxy[{pid}] ctxproxy" in err and f"(pid {pid})" in err, err


def test_a_worker_that_dies_stops_the_parent_non_zero(tmp_path, running):
    port = free_port()
    r = running("--workers", "2", "--port", str(port), "--data-dir", str(tmp_path / "d"), "--log-level", "WARNING")
    pid = next(iter(r.pids(port, 2)))
    os.kill(pid, signal.SIGKILL)
    err = r.stderr()
    assert r.proc.returncode == 1, err
    assert f"(pid {pid}) exited while serving with code signal 9" in err
    assert "Traceback" not in err


def test_workers_starting_together_share_one_whole_secret(tmp_path):
    """``--workers`` ask for the server secret at the same moment. One used to find the
    file another had just created and read it still empty ("redact: the server secret
    is empty", the worker died). Now every one gets the same 32 bytes."""
    import threading
    from types import SimpleNamespace

    from ctxproxy.proxy.services import server_secret

    for n in range(50):
        cfg = SimpleNamespace(server=SimpleNamespace(secret_file="", data_dir=str(tmp_path / f"d{n}")))
        got, start = [], threading.Barrier(8)

        def ask():
            start.wait()
            got.append(server_secret(cfg))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert len(got) == 8 and len(set(got)) == 1 and len(got[0]) == 32
        assert [p.name for p in (tmp_path / f"d{n}").iterdir()] == ["secret"]  # no temporary file left
        assert (tmp_path / f"d{n}" / "secret").stat().st_mode & 0o777 == 0o600


def test_serve_runs_on_the_configured_event_loop(tmp_path, running):
    """``[server] loop``: "auto" takes uvloop where it is installed (a dependency on every
    platform it builds for), "asyncio" keeps asyncio's own loop; the start-up line says which."""
    try:
        import uvloop  # noqa: F401
        auto = "uvloop"
    except ImportError:
        auto = "asyncio"
    forced = tmp_path / "asyncio.toml"
    forced.write_text('[server]\nloop = "asyncio"\n')
    for extra, want in (((), auto), (("--config", str(forced)), "asyncio")):
        port = free_port()
        r = running("--port", str(port), "--data-dir", str(tmp_path / want), "--log-level", "info", *extra)
        pid = next(iter(r.pids(port, 1)))
        r.proc.send_signal(signal.SIGTERM)
        err = r.stderr()
        assert r.proc.returncode == 0, err
        assert f"(pid {pid}), event loop {want}" in err, err
