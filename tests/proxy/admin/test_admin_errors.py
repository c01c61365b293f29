"""Every admin error is JSON ``{"error": {"type", "message", ...}}``: a refused
token, an unknown path, a method the path does not take (405 with ``Allow``),
a body over ``server.max_body_bytes`` (413) and an endpoint's own 400/404."""
from __future__ import annotations

import aiohttp
import pytest


@pytest.fixture
def admin_toml() -> str:
    return "[server]\nmax_body_bytes = 2048\n"


async def error_of(r: aiohttp.ClientResponse) -> dict:
    assert r.content_type == "application/json", (r.status, await r.text())
    error = (await r.json())["error"]
    assert isinstance(error["type"], str) and error["type"] and error["message"], error
    assert error["status"] == r.status
    return error


@pytest.mark.parametrize("headers, status, etype", [
    ({}, 401, "unauthenticated"),
    ({"Authorization": "Bearer wrong"}, 403, "forbidden"),
])
async def test_a_refused_bearer(api, headers, status, etype):
    p, _ = api
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.get(f"{p.url}/ctx/v1/status") as r:
            assert r.status == status and (await error_of(r))["type"] == etype


async def test_an_unknown_endpoint_is_404_and_a_method_the_path_does_not_take_is_405(api):
    p, http = api
    async with http.get(f"{p.url}/ctx/v1/nosuch") as r:
        assert r.status == 404 and (await error_of(r))["type"] == "not_found"
    async with http.put(f"{p.url}/ctx/v1/memories", json={}) as r:
        error = await error_of(r)
        assert r.status == 405 and error["type"] == "method_not_allowed"
        assert r.headers["Allow"] == "GET, POST" and "GET, POST" in error["message"]
    async with http.put(f"{p.url}/ctx/v1/keys/ck_x") as r:
        assert r.status == 405 and r.headers["Allow"] == "DELETE"


async def test_an_oversized_body_is_a_json_413(api):
    p, http = api
    async with http.post(f"{p.url}/ctx/v1/memories", json={"statement": "x" * 4096}) as r:
        error = await error_of(r)
        assert r.status == 413 and error["type"] == "request_too_large"
        assert "server.max_body_bytes (2048 bytes)" in error["message"]


async def test_an_endpoints_own_errors_carry_a_type(api):
    p, http = api
    async with http.post(f"{p.url}/ctx/v1/memories", data=b"{not json") as r:
        assert r.status == 400 and (await error_of(r))["type"] == "invalid_request"
    async with http.get(f"{p.url}/ctx/v1/manifests/nosuchturn") as r:
        assert r.status == 404 and (await error_of(r))["type"] == "not_found"
    async with http.get(f"{p.url}/ctx/v1/effects", params={"limit": "many"}) as r:
        assert r.status == 400 and (await error_of(r))["type"] == "invalid_request"
