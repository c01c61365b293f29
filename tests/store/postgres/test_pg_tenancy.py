"""The tenancy isolation tests, run again with the store on PostgreSQL: the
same two tenants and their users, the same probes, the same answers."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "proxy"))

import test_tenancy_isolation as isolation  # noqa: E402
from tenancyworld import PROVIDER_KEYS, TOML, build  # noqa: E402

globals().update({name: fn for name, fn in vars(isolation).items() if name.startswith("test_") and callable(fn)})


@pytest.fixture
async def world(make_proxy, fake, monkeypatch, caplog, pg_dsn):
    caplog.set_level(logging.DEBUG, logger="ctxproxy")
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", isolation.OPERATOR)
    for name, value in PROVIDER_KEYS.items():
        monkeypatch.setenv(name, value)
    return await build(await make_proxy(TOML + f'\n[store]\nbackend = "postgres"\ndsn = "{pg_dsn}"\n'), fake)


async def test_these_run_on_the_database(world):
    assert world.store.backend == "postgres" and world.store.available()
