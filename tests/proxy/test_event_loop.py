"""``[server] loop``: which event loop a server process runs on, and a clear stop
when the configured one is not installed."""
from __future__ import annotations

import asyncio
import sys

import pytest

from ctxproxy.config import load_config
from ctxproxy.config.schema import apply_overrides
from ctxproxy.proxy.edge.server import ServeError, run
from ctxproxy.proxy.event_loop import LoopUnavailable, loop_factory, loop_name, run_on


async def running_loop() -> str:
    return loop_name(asyncio.get_running_loop())


@pytest.fixture
def without_uvloop(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError


def test_each_choice_runs_on_its_loop():
    pytest.importorskip("uvloop")
    assert run_on("uvloop", running_loop()) == "uvloop"
    assert run_on("auto", running_loop()) == "uvloop"
    assert run_on("asyncio", running_loop()) == "asyncio"


def test_auto_falls_back_to_asyncio_without_uvloop(without_uvloop):
    assert loop_factory("auto") is None
    assert run_on("auto", running_loop()) == "asyncio"


def test_uvloop_asked_for_but_missing_stops_before_serving(without_uvloop, tmp_path):
    with pytest.raises(LoopUnavailable, match="uvloop is not installed"):
        run_on("uvloop", running_loop())
    (tmp_path / "c.toml").write_text('[server]\nloop = "uvloop"\n')
    cfg = apply_overrides(load_config(tmp_path / "c.toml"), data_dir=str(tmp_path / "d"), workers=2)
    with pytest.raises(ServeError, match='server.loop = "uvloop", but uvloop is not installed'):
        run(cfg)
    assert not (tmp_path / "d").exists()  # stopped before any worker or store started
