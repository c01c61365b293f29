"""Shared fixtures: a fake provider and a ctxproxy in front of it, both real
aiohttp servers on 127.0.0.1, started and stopped by each test."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from aiohttp import web
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from otlpreceiver import OTLPReceiver  # noqa: E402
from proxyhandle import Proxy  # noqa: E402
from redactioncache import shared_redaction as _shared_redaction  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.scripted_provider import FakeProvider  # noqa: E402
from ctxproxy.proxy.edge.server import make_app  # noqa: E402
from ctxproxy.store import open_store  # noqa: E402

# Property tests give the same examples on every run (derandomize): a CI run never fails on a case
# the previous one did not draw. No per-example deadline and no too-slow check: on a loaded 2-core
# machine both measure the machine, not the code. HYPOTHESIS_PROFILE=explore draws new examples.
settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Each app a test starts builds its redaction registry anew (the registry is keyed by the test's own data
# dir) and compiles ~1,000 regexes, more than re's 512-entry cache holds: every start compiled them all
# again (~4 s a proxy on a loaded 2-core machine, most of a typical test). Compiled patterns are immutable,
# so a cache that holds them all shares them across tests as re's own cache does within one app.
re._MAXCACHE = max(re._MAXCACHE, 16384)


@pytest.fixture
def store(tmp_path):
    """A real LMDB store in this test's folder (``tmp_path / "store"``), closed after it."""
    s = open_store(tmp_path / "store")
    yield s
    s.close()


@pytest.fixture
async def fake():
    async with FakeProvider() as fp:
        yield fp


@pytest.fixture
async def make_proxy(tmp_path, fake):
    """``await make_proxy(toml_text="", **overrides)`` -> Proxy in front of ``fake`` (its redaction
    engine shared with the run's other proxies of the same redaction config: tests/redactioncache.py)."""
    runners = []

    async def start(toml_text: str = "", upstream: str | None = None, *, shared_redaction: bool = True,
                    **overrides) -> Proxy:
        cfg_path = None
        if toml_text:
            cfg_path = tmp_path / f"ctxproxy-{len(runners)}.toml"
            cfg_path.write_text(toml_text)
        url = upstream or fake.url
        overrides.setdefault("data_dir", str(tmp_path / "data"))
        overrides.setdefault("anthropic_upstream", url)
        overrides.setdefault("openai_upstream", url)
        overrides.setdefault("shutdown_timeout", 1.0)  # a test that leaves a stream open stops quickly
        cfg = load_config(cfg_path, port=0, **overrides)
        if shared_redaction:
            cfg = _shared_redaction(cfg)
        app = make_app(cfg)
        runner, base = await _serve(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
        runners.append(runner)
        return Proxy(base, app, runner)

    yield start
    for r in runners:
        await r.cleanup()


async def _serve(app: web.Application, **runner_args) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, **runner_args)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    host, port = runner.addresses[0][:2]
    return runner, f"http://{host}:{port}"


@pytest.fixture
async def serve_app():
    """``await serve_app(app, **runner_args)`` -> base URL of ``app`` on 127.0.0.1
    (a hand-written upstream for one test); stopped after the test."""
    runners = []

    async def start(app: web.Application, **runner_args) -> str:
        runner, base = await _serve(app, **runner_args)
        runners.append(runner)
        return base

    yield start
    for r in runners:
        await r.cleanup()


@pytest.fixture
def serve_handler(serve_app):
    """``await serve_handler(handler, method="*", path="/{tail:.*}", **runner_args)``
    -> base URL of a hand-written upstream that is one handler; stopped after the test."""

    async def start(handler, method: str = "*", path: str = "/{tail:.*}", **runner_args) -> str:
        app = web.Application()
        app.router.add_route(method, path, handler)
        return await serve_app(app, **runner_args)

    return start


@pytest.fixture
async def proxy(make_proxy):
    return await make_proxy()


@pytest.fixture
async def otlp(monkeypatch):
    """A real OTLP/HTTP receiver on 127.0.0.1, with the OTEL_* variables pointing at it."""
    async with OTLPReceiver() as rx:
        monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.url)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "60000")
        for k in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
                  "OTEL_TRACES_SAMPLER"):
            monkeypatch.delenv(k, raising=False)
        yield rx


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch):
    for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.delenv("CTXPROXY_ADMIN_TOKEN", raising=False)
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")


@pytest.fixture(autouse=True)
def _no_outbound_proxy(monkeypatch):
    """The SDK clients honour HTTP(S)_PROXY even for 127.0.0.1: on a machine that sets one, every
    request to the test's own servers would go to that proxy. A test that wants one sets it."""
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(k, raising=False)
        monkeypatch.delenv(k.lower(), raising=False)
