"""A repeated turn reuses recall's last result only while the tenant's memories are as they
were: through a real proxy, the official SDK and the admin API, a memory added after a turn
that recalled nothing is given on the same turn sent again, one edited gives its new text
only, and one forgotten is not given again."""
from __future__ import annotations

import json

import aiohttp
import pytest

TOKEN = "memo-revision-admin"
FACT = "The staging database is pg-stage-7 on port 6543."
ASK = "Which port does the staging database listen on?"
TOOL_ASK = "Run the uploads suite and fix whatever breaks."
OUTPUT = "E   EndpointConnectionError: could not reach kestrel-gw-4411 (connection refused)"
TOOL_FACT = "kestrel-gw-4411 is the uploads gateway; it only answers inside the VPN."


def hdrs(session: str, tenant: str = "acme") -> dict:
    return {"X-Ctx-Tenant": tenant, "X-Ctx-User": "alice", "X-Ctx-Session": session}


@pytest.fixture
async def proxy(make_proxy, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    return await make_proxy("")


async def admin(proxy, method: str, path: str, tenant: str = "acme", **body) -> dict:
    async with aiohttp.ClientSession() as http:
        async with http.request(method, f"{proxy.url}/ctx/v1/{path}?tenant={tenant}", json=body or None,
                                headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            assert r.status in (200, 201), await r.text()
            return await r.json()


async def add(proxy, statement: str, tenant: str = "acme") -> str:
    out = await admin(proxy, "POST", "memories", tenant, statement=statement, kind="fact", user="alice")
    assert out["status"] == "active", out
    return out["memory_id"]


def status(proxy, session: str) -> str:
    return proxy.settled_store().manifests.list("acme", session=session)[-1].data["recall"]["status"]


async def test_a_turn_that_recalled_nothing_gives_a_memory_added_since(proxy, fake):
    client = proxy.anthropic(default_headers=hdrs("s1"))
    msgs = [{"role": "user", "content": ASK}]
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    assert "pg-stage-7" not in json.dumps(fake.last.json)
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    assert status(proxy, "s1") == "reused"  # nothing changed: the memo holds
    await add(proxy, FACT, tenant="other")  # another tenant's write leaves this tenant's memo alone
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    assert status(proxy, "s1") == "reused" and "pg-stage-7" not in json.dumps(fake.last.json)
    mid = await add(proxy, FACT)
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    body = json.dumps(fake.last.json)
    assert "pg-stage-7 on port 6543" in body and mid in body
    assert status(proxy, "s1") == "recalled"


async def test_a_tool_output_that_recalled_nothing_gives_a_memory_added_since(proxy, fake):
    client = proxy.anthropic(default_headers=hdrs("s2"))
    msgs = [{"role": "user", "content": TOOL_ASK},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                               "input": {"command": "make test-uploads"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": OUTPUT}]}]
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    assert "uploads gateway" not in json.dumps(fake.last.json)
    await add(proxy, TOOL_FACT)
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)  # the same request again
    assert "uploads gateway; it only answers inside the VPN" in json.dumps(fake.last.json)


async def test_a_memory_edited_or_forgotten_is_not_given_again_by_a_repeated_turn(proxy, fake):
    mid = await add(proxy, FACT)
    client = proxy.anthropic(default_headers=hdrs("s3"))
    msgs = [{"role": "user", "content": ASK}]
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    assert "pg-stage-7 on port 6543" in json.dumps(fake.last.json)
    await admin(proxy, "PATCH", f"memories/{mid}", statement="The staging database is pg-stage-9 on port 6544.")
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    body = json.dumps(fake.last.json)
    assert "pg-stage-9 on port 6544" in body and "pg-stage-7" not in body
    await admin(proxy, "DELETE", f"memories/{mid}")
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    body = json.dumps(fake.last.json)
    assert "pg-stage" not in body and mid not in body
