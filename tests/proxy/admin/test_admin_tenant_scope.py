"""A tenant admin key that names another tenant at the admin API: refused with
403 at every endpoint that takes a tenant, with the same answer whether that
tenant exists or not, and nothing done (no receipt, no key, no memory, no
resolved effect). The operator's body and query naming two tenants: a 400."""
from __future__ import annotations

import importlib

import aiohttp
import pytest

from memhelp import put_memory

from ctxproxy.proxy.admin.app import ADMIN_PREFIX, _routes
from ctxproxy.proxy.auth import issue_key
from ctxproxy.proxy.edge.server import ADMIN_MODULES

TOKEN = "operator-token-for-scope-tests"
MID = "mem_" + "0" * 26  # the probed ids: refused before any lookup, so they need not exist

# Every admin endpoint, with where it takes a tenant: (method, path, "query" | "body").
PROBES = [
    ("GET", "status", "query"),
    ("GET", "manifests", "query"),
    ("GET", "manifests/{turn_id}", "query"),
    ("GET", "effects", "query"),
    ("GET", "effects/{key}", "query"),
    ("POST", "effects/lookup", "body"),
    ("POST", "effects/{key}/resolve", "body"),
    ("GET", "pruned", "query"),
    ("GET", "pruned/{id}", "query"),
    ("POST", "memories", "body"),
    ("POST", "memories", "query"),
    ("POST", "memories:batch", "query"),
    ("GET", "memories", "query"),
    ("GET", "memories/{id}", "query"),
    ("PATCH", "memories/{id}", "body"),
    ("DELETE", "memories/{id}", "query"),
    ("POST", "memories/{id}/approve", "body"),
    ("POST", "memories/{id}/reject", "body"),
    ("POST", "forget", "body"),
    ("POST", "forget", "query"),
    ("GET", "forget/{request_id}", "query"),
    ("GET", "keys", "query"),
    ("POST", "keys", "body"),
    ("DELETE", "keys/{id}", "query"),
    ("POST", "recall", "body"),
    ("GET", "sessions/search", "query"),
    ("GET", "learn/status", "query"),
    ("POST", "learn/run", "body"),
    ("GET", "learn/proposals", "query"),
    ("POST", "learn/proposals:review", "body"),
    ("POST", "learn/proposals/{id}/approve", "body"),
    ("POST", "learn/proposals/{id}/reject", "body"),
    ("PATCH", "learn/proposals/{id}", "body"),
    ("GET", "learn/insights", "query"),
    ("GET", "learn/export", "query"),
]
BODIES = {  # what each call would do in the caller's tenant, were it allowed
    "effects/lookup": {"tool": "Bash", "session": "s1", "arguments": {"command": "deploy"}},
    "effects/{key}/resolve": {"resolution": "completed"},
    "memories": {"statement": "Globex deploys on Fridays."},
    "memories:batch": [{"statement": "Globex deploys on Mondays."}],
    "memories/{id}": {"statement": "Globex deploys on Tuesdays."},
    "forget": {"user": "bob"},
    "keys": {"user": "mallory", "admin": True},
    "recall": {"query": "deploys"},
    "learn/proposals:review": {"approve": [MID]},
    "learn/proposals/{id}": {"statement": "Globex deploys on Wednesdays."},
}


QUERIES = {"learn/export": {"format": "codex"}}  # what each call needs besides the tenant


def _url(base: str, path: str, ids: dict) -> str:
    return base + ADMIN_PREFIX + path.format(turn_id="t-1", key="e" * 32, id=ids.get(path, MID),
                                             request_id="r-1")


def _body(method: str, path: str, where: str, other: str):
    body = BODIES.get(path, {} if method != "GET" and method != "DELETE" else None)
    return {**(body or {}), "tenant": other} if where == "body" else body


def _state(store) -> tuple:
    """Everything a refused call must leave as it was."""
    return (sorted((k.id, k.principal.tenant, k.revoked_at) for k in store.proxy_keys.list(None)),
            {t: sorted(r.memory_id for r in store.memories.list(t)) for t in ("acme", "globex")},
            {t: len(store.receipts.list(t)) for t in ("acme", "globex")},
            {t: [r.state for r in store.effects.list(t)] for t in ("acme", "globex")})


@pytest.fixture
async def world(make_proxy, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy("")
    store, cfg = p.state.services["store"], p.state.config
    put_memory(store, "globex", "Globex ships from the Berlin warehouse.", kind="fact", user="bob")
    mine = put_memory(store, "acme", "Acme ships from the Lyon warehouse.", kind="fact", user="bob")
    admin = issue_key(store, cfg, "acme", admin=True)
    theirs = issue_key(store, cfg, "globex", user="bob")
    return p, admin, {"memories/{id}": mine.memory_id, "memories/{id}/approve": mine.memory_id,
                      "memories/{id}/reject": mine.memory_id, "keys/{id}": theirs["id"]}


def test_every_admin_endpoint_is_probed():
    for name in ADMIN_MODULES:  # each registers its endpoints on import
        importlib.import_module(name)
    registered = {(m, path[len(ADMIN_PREFIX):]) for m, path, _ in _routes}
    assert registered == {(m, path) for m, path, _ in PROBES}


@pytest.mark.parametrize("method,path,where", PROBES, ids=[f"{m} {p} ({w})" for m, p, w in PROBES])
async def test_a_tenant_admin_naming_another_tenant_is_refused_and_nothing_happens(world, method, path, where):
    p, admin, ids = world
    store = p.state.services["store"]
    before = _state(store)
    answers = []
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {admin['key']}"}) as http:
        for other in ("globex", "no-such-tenant"):  # an existing tenant and one that is not: one answer
            params = {**QUERIES.get(path, {}), **({"tenant": other} if where == "query" else {})}
            async with http.request(method, _url(p.url, path, ids), params=params,
                                    json=_body(method, path, where, other)) as r:
                answers.append((r.status, await r.json()))
    assert answers[0] == answers[1]
    status, doc = answers[0]
    assert status == 403 and "own tenant only" in doc["error"]["message"] and "nothing was done" in doc["error"]["message"]
    assert "globex" not in str(doc)
    assert _state(p.settled_store()) == before


async def test_naming_its_own_tenant_is_served(world):
    p, admin, _ = world
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {admin['key']}"}) as http:
        async with http.post(f"{p.url}/ctx/v1/forget", params={"tenant": "acme"}, json={"user": "bob"}) as r:
            receipt = await r.json()
        assert r.status == 200 and receipt["tenant"] == "acme" and receipt["counts"]["memories"] == 1
        async with http.post(f"{p.url}/ctx/v1/keys", json={"tenant": "acme", "user": "carol"}) as r:
            assert r.status == 201 and (await r.json())["tenant"] == "acme"
    assert len(p.settled_store().memories.list("globex")) == 1  # globex's memory of bob is untouched


async def test_the_operator_naming_two_tenants_is_a_400(world):
    p, _, _ = world
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.post(f"{p.url}/ctx/v1/forget", params={"tenant": "acme"},
                             json={"user": "bob", "tenant": "globex"}) as r:
            assert r.status == 400 and "different tenants" in (await r.json())["error"]["message"]
        async with http.post(f"{p.url}/ctx/v1/keys", params={"tenant": "globex"},
                             json={"tenant": "globex", "user": "dave"}) as r:
            assert r.status == 201 and (await r.json())["tenant"] == "globex"  # the same one twice is fine
    store = p.settled_store()
    assert len(store.memories.list("acme")) == 1 and len(store.memories.list("globex")) == 1
