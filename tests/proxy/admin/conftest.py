"""The admin API tests' proxy: ``api`` is (proxy, a session that sends the admin
token), the proxy configured by ``admin_toml`` (a module overrides it)."""
from __future__ import annotations

import aiohttp
import pytest
from adminapi import TOKEN


@pytest.fixture
def admin_toml() -> str:
    return ""


@pytest.fixture
async def api(make_proxy, monkeypatch, admin_toml):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy(admin_toml)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        yield p, http
