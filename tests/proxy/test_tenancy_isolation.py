"""Tenant isolation in ``[auth] mode = "keys"`` : two tenants x two
users, concurrent sessions through the real SDKs (``tenancyworld``), then
every model and admin path probed with forged headers, the other tenant's
turn ids, effect keys, pruned refs and sessions, revoked, expired, unknown
and missing keys. Nothing of another tenant comes back, and "not yours"
answers exactly as "does not exist"."""
from __future__ import annotations

import json
import logging
import re
import secrets
import time
from pathlib import Path

import aiohttp
import anthropic
import openai
import pytest

from ctxproxy.proxy.auth import issue_key
from tenancyworld import OTHER, PROVIDER_KEYS, TOML, USERS, build

OPERATOR = "operator-token-123"


@pytest.fixture
async def world(make_proxy, fake, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG, logger="ctxproxy")
    for k, v in PROVIDER_KEYS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", OPERATOR)
    return await build(await make_proxy(TOML), fake)


def objects(w, tenant: str) -> dict[str, list[str]]:
    """Every id of ``tenant``'s records, as the operator sees them."""
    store = w.store
    pruned = [d.id for s in w.sessions[tenant] for d in store.pruned.list(tenant, session=s)]
    effects = store.effects.list(tenant)
    return {"turns": w.turns[tenant], "pruned": pruned, "effects": sorted({e.key for e in effects}),
            "sessions": w.sessions[tenant], "commands": [e.args_canonical for e in effects]}


def same(body: str, id_: str) -> str:
    """An answer with the probed id (and an effect key computed from it) blanked out."""
    return re.sub(r'"key":"[0-9a-f]{64}"', '"key":"<KEY>"', body.replace(id_, "<ID>").replace(id_[2:], "<ID>"))


async def answer(http, method: str, url: str, **kw) -> tuple[int, str]:
    async with http.request(method, url, **kw) as r:
        return r.status, await r.text()


async def test_sessions_land_in_the_principals_tenant_and_user(world):
    w = world
    store = w.store
    for tenant, users in USERS.items():
        o = objects(w, tenant)
        assert len(o["pruned"]) >= 4 and len(o["effects"]) >= 8 and len(o["turns"]) == 12, o
        for turn in o["turns"]:
            m = store.manifests.get(tenant, turn)
            assert m is not None and m.data["tenant"] == tenant  # forged X-Ctx-Tenant ignored
            assert m.data["key_id"] in {w.keys[u]["id"] for u in users}
            assert store.manifests.get(OTHER[tenant], turn) is None
        for session in o["sessions"]:
            user = session.split("/")[0]
            assert store.sessions.list(tenant, subject=user).count(session) == 1  # forged X-Ctx-User ignored
        assert all(tenant in c for c in o["commands"])


async def test_provider_gets_the_tenant_key_or_the_callers_never_a_proxy_key(world):
    w = world
    seen: dict[tuple[str, str], set[str]] = {}
    for rec in w.fake.model_requests:
        assert "ctxk_" not in str(dict(rec.headers)) and b"ctxk_" not in rec.body
        marker = rec.json["messages"][0]["content"].split()[-1]
        tenant, user, api = marker.split("-")
        cred = rec.headers.get("x-api-key") or rec.headers.get("authorization")
        seen.setdefault((user, api), set()).add(cred)
        assert "x-ctx-tenant" not in rec.headers and "x-ctx-key" not in rec.headers
    acme = PROVIDER_KEYS["ACME_PROVIDER_KEY"]
    assert seen[("alice", "anthropic")] == seen[("bob", "anthropic")] == {acme}  # the tenant's key wins
    assert seen[("alice", "chat")] == seen[("bob", "chat")] == {f"Bearer {acme}"}
    assert seen[("carol", "anthropic")] == {PROVIDER_KEYS["GLOBEX_ANTHROPIC_KEY"]}
    assert seen[("dave", "anthropic")] == {PROVIDER_KEYS["GLOBEX_ANTHROPIC_KEY"]}
    assert seen[("carol", "chat")] == {"Bearer sk-own-carol"}  # no provider key for it: the caller's own
    assert seen[("dave", "chat")] == {"Bearer sk-own-dave"}


async def test_tenant_admin_cannot_tell_other_tenants_objects_from_missing_ones(world):
    w = world
    base = w.proxy.url + "/ctx/v1"
    for tenant in USERS:
        other = OTHER[tenant]
        theirs, mine = objects(w, other), objects(w, tenant)
        never = {"turns": "t-" + secrets.token_hex(12), "pruned": secrets.token_hex(8),
                 "effects": "e" + secrets.token_hex(15), "sessions": "s-never-" + secrets.token_hex(4)}
        probes = {  # (method, path template, json body); {id} is the probed id
            "turns": [("GET", "manifests/{id}", None), ("GET", "manifests/{id}?tenant=" + other, None)],
            "pruned": [("GET", "pruned/{id}", None), ("GET", "pruned/{id}?format=text", None),
                       ("GET", "pruned/ctx%3A%2F%2Fpruned%2F{id}?tenant=" + other, None)],
            "effects": [("GET", "effects/{id}", None), ("GET", "effects/{id}?tenant=" + other, None),
                        ("POST", "effects/{id}/resolve", {"resolution": "completed", "tenant": other})],
            "sessions": [("GET", "manifests?session={id}&tenant=" + other, None),
                         ("GET", "pruned?session={id}", None), ("GET", "effects?session={id}&tenant=" + other, None),
                         # the other tenant's real call: its key, computed in the caller's tenant, is not there
                         ("POST", "effects/lookup", {"tool": "Bash", "session": "{id}", "tenant": other,
                                                     "arguments": {"command": "run {marker} step 1"}})],
        }
        auth = {"Authorization": f"Bearer {w.key(f'{tenant}-admin')}"}
        async with aiohttp.ClientSession(headers=auth) as http:
            for kind, ids in theirs.items():
                for method, path, body in probes.get(kind, ()):
                    def call(id_: str, method=method, path=path, body=body):
                        js = None if body is None else json.loads(
                            json.dumps(body).replace("{id}", id_).replace("{marker}", id_[2:]))
                        return answer(http, method, f"{base}/{path.replace('{id}', id_)}", json=js)
                    missing = await call(never[kind])
                    for id_ in ids:
                        got = await call(id_)
                        assert (got[0], same(got[1], id_)) == (missing[0], same(missing[1], never[kind])), (kind, path)
                        assert other not in got[1].replace(id_, "<ID>")
            # listings: the caller's own tenant named or not; any other tenant named is one 403,
            # whether it exists or not
            for path in ("effects", "keys", f"manifests?session={mine['sessions'][0]}",
                         f"pruned?session={mine['sessions'][0]}"):
                own = await answer(http, "GET", f"{base}/{path}")
                sep = "&" if "?" in path else "?"
                assert await answer(http, "GET", f"{base}/{path}{sep}tenant={tenant}") == own
                refusals = {await answer(http, "GET", f"{base}/{path}{sep}tenant={named}")
                            for named in (other, "no-such-tenant", "bad tenant!")}
                assert len(refusals) == 1 and next(iter(refusals))[0] == 403
                assert own[0] == 200 and other not in own[1]
            status, text = await answer(http, "GET", f"{base}/status")
            assert status == 200 and other not in text and "routes" not in text
            # their key ids: revoking one is "no such key", and it still works afterwards
            their_key = w.keys[USERS[other][0]]["id"]
            got = await answer(http, "DELETE", f"{base}/keys/{their_key}")
            missing = await answer(http, "DELETE", f"{base}/keys/{'0' * 16}")
            assert (got[0], same(got[1], their_key)) == (missing[0], same(missing[1], "0" * 16))
            assert got[0] == 404
            # a key made by a tenant admin is of its own tenant; another tenant in the body: none made
            keys_before = len(w.store.proxy_keys.list(None))
            async with http.post(f"{base}/keys", json={"tenant": other, "user": "mallory"}) as r:
                assert r.status == 403
            assert len(w.store.proxy_keys.list(None)) == keys_before
            async with http.post(f"{base}/keys", json={"user": "mallory"}) as r:
                assert r.status == 201 and (await r.json())["tenant"] == tenant
        assert w.store.proxy_keys.get(their_key).revoked_at is None
    # the operator sees every tenant
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {OPERATOR}"}) as http:
        turn = w.turns["globex"][0]
        async with http.get(f"{base}/manifests/{turn}") as r:
            assert r.status == 200 and (await r.json())["tenant"] == "globex"
        async with http.get(f"{base}/keys") as r:
            assert {k["tenant"] for k in (await r.json())["keys"]} == {"acme", "globex"}


async def test_own_objects_are_visible_to_the_tenant_admin(world):
    w = world
    base = w.proxy.url + "/ctx/v1"
    o = objects(w, "acme")
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {w.key('acme-admin')}"}) as http:
        for turn in o["turns"]:
            async with http.get(f"{base}/manifests/{turn}") as r:
                assert r.status == 200 and (await r.json())["tenant"] == "acme"
        for pid in o["pruned"]:
            async with http.get(f"{base}/pruned/{pid}?format=text") as r:
                assert r.status == 200 and "acme-" in await r.text()
        for key in o["effects"]:
            async with http.get(f"{base}/effects/{key}?tenant=acme") as r:
                assert r.status == 200 and (await r.json())["tenant"] == "acme"
        async with http.get(f"{base}/keys") as r:
            listed = (await r.json())["keys"]
        assert {k["user"] for k in listed} == {"alice", "bob", ""} and all("key" not in k for k in listed)


async def refused(w, key_headers: dict, api_key: str = "sk-own", **extra) -> tuple[int, dict, dict]:
    """One call per SDK with these credentials: (status, Anthropic body, OpenAI body)."""
    a = w.proxy.anthropic(api_key=api_key, default_headers={**key_headers, **extra})
    c = w.proxy.openai(api_key=api_key, default_headers={**key_headers, **extra})
    with pytest.raises(anthropic.APIStatusError) as ea:
        await a.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.APIStatusError) as eo:
        await c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert ea.value.status_code == eo.value.status_code
    return ea.value.status_code, ea.value.response.json(), eo.value.response.json()


async def test_bad_keys_are_401_in_the_callers_format_and_leave_only_a_counter(world):
    w = world
    store, cfg = w.proxy.state.services["store"], w.proxy.state.config
    revoked = issue_key(store, cfg, "acme", user="alice")
    store.proxy_keys.revoke(revoked["id"])
    expired = store.proxy_keys.create("acme", user="alice", expires_at=time.time() - 1)[1]
    alice = w.key("alice")
    unknown = f"ctxk_{secrets.token_hex(8)}_{alice[-43:]}"
    forged_secret = alice[:-43] + ("A" if alice[-43] != "A" else "B") + alice[-42:]
    cases = {"revoked": {"X-Ctx-Key": revoked["key"]}, "expired": {"X-Ctx-Key": expired},
             "invalid": {"X-Ctx-Key": unknown}, "invalid2": {"X-Ctx-Key": forged_secret},
             "invalid3": {"X-Ctx-Key": "not-a-key"}, "missing": {}}
    before = (len(w.fake.requests), len(store.manifests.list("acme", session="s-probe")))
    counts = dict(w.proxy.state.keyring.refused)
    for name, headers in cases.items():
        status, ab, ob = await refused(w, headers, **{"X-Ctx-Tenant": "acme", "X-Ctx-Session": "s-probe"})
        assert status == 401, name
        assert ab["type"] == "error" and ab["error"]["type"] == "authentication_error"
        assert ob["error"]["type"] == "authentication_error" and "message" in ob["error"]
    # as the API key, too (no X-Ctx-Key)
    status, ab, _ = await refused(w, {}, api_key=revoked["key"])
    assert status == 401 and "revoked" in ab["error"]["message"]
    assert (len(w.fake.requests), len(w.store.manifests.list("acme", session="s-probe"))) == before  # nothing forwarded
    now = w.proxy.state.keyring.refused
    assert now["revoked"] - counts.get("revoked", 0) == 4 and now["expired"] - counts.get("expired", 0) == 2
    assert now["missing"] - counts.get("missing", 0) == 2 and now["invalid"] - counts.get("invalid", 0) == 6


async def test_route_project_and_purpose_outside_the_key_are_403(world):
    w = world
    store, cfg = w.proxy.state.services["store"], w.proxy.state.config
    narrow = issue_key(store, cfg, "acme", user="alice", projects=["p1"], purposes=["support"], routes=["openai"])
    c = w.proxy.openai(default_headers={"X-Ctx-Key": narrow["key"]})
    ok = await c.chat.completions.with_raw_response.create(model="m", messages=[{"role": "user", "content": "hi"}])
    m = w.store.manifests.get("acme", ok.headers["x-ctx-turn-id"])
    assert m.data["key_id"] == narrow["id"]
    n = len(w.fake.requests)
    for extra in ({"X-Ctx-Project": "p2"}, {"X-Ctx-Purpose": "marketing"}):
        with pytest.raises(openai.PermissionDeniedError) as e:
            await w.proxy.openai(default_headers={"X-Ctx-Key": narrow["key"], **extra}).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}])
        assert e.value.response.json()["error"]["type"] == "permission_error"
    a = w.proxy.anthropic(api_key="sk-own", default_headers={"X-Ctx-Key": narrow["key"]})
    with pytest.raises(anthropic.PermissionDeniedError) as e:
        await a.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert e.value.response.json()["error"]["type"] == "permission_error"
    assert len(w.fake.requests) == n
    # a non-admin key at the admin API: 403; a revoked admin key: 401
    async with aiohttp.ClientSession() as http:
        url = w.proxy.url + "/ctx/v1/effects"
        assert (await answer(http, "GET", url, headers={"Authorization": f"Bearer {w.key('alice')}"}))[0] == 403
        store.proxy_keys.revoke(w.keys["acme-admin"]["id"])
        assert (await answer(http, "GET", url, headers={"Authorization": f"Bearer {w.key('acme-admin')}"}))[0] == 401


async def test_no_key_in_logs_store_or_manifests(world, caplog):
    w = world
    secrets_seen = [k["key"] for k in w.keys.values()] + [k["key"][-43:] for k in w.keys.values()]
    logs = "\n".join(r.getMessage() for r in caplog.records)
    raw = b"".join(p.read_bytes() for p in Path(w.proxy.state.config.server.data_dir).rglob("*") if p.is_file())
    manifests = str([d.data for t in USERS for s in w.sessions[t] for d in w.store.manifests.list(t, session=s)])
    for s in secrets_seen:
        assert s not in logs and s.encode() not in raw and s not in manifests
    assert "ctxk_" not in manifests and b"ctxk_" not in raw


async def test_a_provider_key_is_required_when_the_proxy_key_is_the_api_key(world):
    w = world  # globex has no provider key for the openai route
    c = w.proxy.openai(api_key=w.key("dave"))
    n = len(w.fake.requests)
    with pytest.raises(openai.InternalServerError) as e:
        await c.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert "tenants.globex.api_key_env" in e.value.response.json()["error"]["message"]
    assert len(w.fake.requests) == n


async def test_other_tenants_session_ids_inject_nothing(world):
    w = world
    store = w.store
    carol_session = w.sessions["globex"][0].split("/", 1)[1]  # the id carol's agent sent
    before = len(store.effects.list("globex", session=carol_session))
    w.fake.clear()
    a = w.proxy.anthropic(api_key=w.key("alice"), default_headers={"X-Ctx-Session": carol_session,
                                                                   "X-Ctx-Task": carol_session})
    await a.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "task probe"}])
    (rec,) = w.fake.model_requests
    assert b"globex" not in rec.body
    store = w.store  # settled again: the turn's records landed
    assert len(store.effects.list("globex", session=carol_session)) == before
    assert store.effects.list("acme", session=f"alice/{carol_session}")  # alice's call: acme's, alice's own


async def test_users_of_one_tenant_never_share_a_session(world):
    w = world
    alice_session = w.sessions["acme"][0]  # "alice/s-acme-alice-anthropic"
    bob = w.proxy.anthropic(api_key=w.key("bob"), default_headers={"X-Ctx-Session": alice_session.split("/", 1)[1]})
    await bob.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "task acme-bob-x"}])
    store = w.store
    assert all("acme-bob-x" not in e.args_canonical for e in store.effects.list("acme", session=alice_session))
    assert any("acme-bob-x" in e.args_canonical
               for e in store.effects.list("acme", session="bob/" + alice_session.split("/", 1)[1]))
    # nor continue another user's Responses chain
    alice, bob = (w.proxy.openai(default_headers={"X-Ctx-Key": w.key(u)}) for u in ("alice", "bob"))
    first = await alice.responses.with_raw_response.create(model="m", input="task acme-alice-chain")
    rid = first.parse().id
    nxt = await bob.responses.with_raw_response.create(model="m", input="more", previous_response_id=rid)
    mine = await alice.responses.with_raw_response.create(model="m", input="more", previous_response_id=rid)
    store = w.store
    session_of = {k: store.manifests.get("acme", r.headers["x-ctx-turn-id"]).data["session_id"] for k, r in
                  (("first", first), ("bob", nxt), ("alice", mine))}
    assert session_of["alice"] == session_of["first"] and session_of["first"].startswith("alice/")
    assert session_of["bob"].startswith("bob/")
