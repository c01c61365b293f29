"""Admin API and CLI of the effect ledger: get by key (what a tool gateway
asks before executing), list by session/task, tenant isolation, resolve."""
import asyncio
import json

import aiohttp
import pytest

from ctxproxy.proxy.scripted_provider import Reply

from ctxproxy.filters.effects.rules import canonical_json, effect_key
from ctxproxy.proxy.cli.main import main

TOML = """
[pipeline]
request = ["identify", "effects", "inject"]
"""
TOKEN = "admin-secret-token"
TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


async def run_session(p, fake, tenant, session, command, result):
    """One call and its result in ``tenant``/``session``; returns the call id."""
    client = p.anthropic(default_headers={"X-Ctx-Tenant": tenant, "X-Ctx-Session": session})
    fake.script(Reply.tool_call("Bash", {"command": command}), *([Reply.text("ok")] if result is not None else []))
    messages = [{"role": "user", "content": f"do it ({session})"}]
    first = await client.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=messages)
    (use,) = [b for b in first.content if b.type == "tool_use"]
    if result is not None:
        messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": result}]}]
        await client.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=messages)
    return use.id


@pytest.fixture
async def ledger(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy(TOML)
    ids = {
        "a1": await run_session(p, fake, "acme", "s-a", "gh pr create --fill", "https://github.com/acme/app/pull/1"),
        "a2": await run_session(p, fake, "acme", "s-a2", "terraform apply", None),  # result never came
        "b1": await run_session(p, fake, "globex", "s-b", "gh pr create --fill", "https://github.com/globex/x/pull/9"),
    }
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        yield p, ids, http


def key(tenant, session, command):
    return effect_key(tenant, session, "Bash", canonical_json({"command": command}))


async def test_get_by_key_for_a_tool_gateway(ledger):
    p, ids, http = ledger
    k = key("acme", "s-a", "gh pr create --fill")
    async with http.get(f"{p.url}/ctx/v1/effects/{k}", params={"tenant": "acme"}) as r:
        assert r.status == 200
        body = await r.json()
    assert body["status"] == "completed" and body["done"] is True
    (rec,) = body["records"]
    assert rec["call_id"] == ids["a1"] and "https://github.com/acme/app/pull/1" in rec["refs"]
    # the gateway can also send tool + arguments and let the proxy compute the key
    async with http.post(f"{p.url}/ctx/v1/effects/lookup", json={
            "tenant": "acme", "task": "s-a", "tool": "Bash", "arguments": {"command": "gh pr create --fill"}}) as r:
        assert r.status == 200 and (await r.json())["key"] == k
    async with http.post(f"{p.url}/ctx/v1/effects/lookup", json={
            "tenant": "acme", "task": "s-a", "tool": "Bash", "arguments": {"command": "rm -rf /"}}) as r:
        assert r.status == 404 and (await r.json())["status"] == "none"
    async with http.get(f"{p.url}/ctx/v1/effects/{'0' * 64}", params={"tenant": "acme"}) as r:
        assert r.status == 404
    async with aiohttp.ClientSession() as anon:
        async with anon.get(f"{p.url}/ctx/v1/effects/{k}") as r:
            assert r.status == 401
        async with anon.get(f"{p.url}/ctx/v1/effects/{k}", headers={"Authorization": "Bearer wrong"}) as r:
            assert r.status == 403


async def test_list_is_tenant_isolated(ledger):
    p, ids, http = ledger
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "acme"}) as r:
        acme = await r.json()
    assert {e["call_id"] for e in acme["effects"]} == {ids["a1"], ids["a2"]}
    assert all(e["tenant"] == "acme" for e in acme["effects"])
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "globex"}) as r:
        globex = await r.json()
    assert [e["call_id"] for e in globex["effects"]] == [ids["b1"]]
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "default"}) as r:
        assert (await r.json())["effects"] == []
    # globex's key is not visible to acme, even by exact key
    kb = key("globex", "s-b", "gh pr create --fill")
    async with http.get(f"{p.url}/ctx/v1/effects/{kb}", params={"tenant": "acme"}) as r:
        assert r.status == 404
    # filters
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "acme", "session": "s-a2"}) as r:
        assert [e["call_id"] for e in (await r.json())["effects"]] == [ids["a2"]]
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "acme", "state": "completed"}) as r:
        assert [e["call_id"] for e in (await r.json())["effects"]] == [ids["a1"]]
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "acme", "state": "bogus"}) as r:
        assert r.status == 400


async def test_resolve_unknown_effect(ledger):
    p, ids, http = ledger
    store = p.state.services["store"]
    k = key("acme", "s-a2", "terraform apply")
    store.effects.mark_unknown("acme", k, ids["a2"], note="test: the result never came")
    async with http.get(f"{p.url}/ctx/v1/effects/{k}", params={"tenant": "acme"}) as r:
        assert (await r.json())["status"] == "unknown"
    async with http.post(f"{p.url}/ctx/v1/effects/{k}/resolve", json={"tenant": "acme", "resolution": "maybe"}) as r:
        assert r.status == 400
    async with http.post(f"{p.url}/ctx/v1/effects/{k}/resolve",
                         json={"tenant": "acme", "resolution": "not_executed", "note": "checked the plan",
                               "by": "oncall"}) as r:
        assert r.status == 200
        (rec,) = (await r.json())["resolved"]
    assert rec["state"] == "resolved" and rec["resolution"] == "not_executed" and rec["resolved_by"] == "oncall"
    async with http.post(f"{p.url}/ctx/v1/effects/{k}/resolve", json={"tenant": "acme", "resolution": "failed"}) as r:
        assert r.status == 409  # nothing open any more
    async with http.post(f"{p.url}/ctx/v1/effects/{'1' * 64}/resolve",
                         json={"tenant": "acme", "resolution": "failed"}) as r:
        assert r.status == 404


async def test_cli_against_the_data_dir_and_the_admin_api(ledger, tmp_path, capsys):
    p, ids, http = ledger
    data = str(tmp_path / "data")
    assert main(["effects", "list", "--data-dir", data, "--tenant", "acme", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["call_id"] for e in listed} == {ids["a1"], ids["a2"]}
    k = key("acme", "s-a", "gh pr create --fill")
    assert main(["effects", "key", "--tenant", "acme", "--task", "s-a", "--tool", "Bash",
                 "--args", '{"command": "gh pr create --fill"}']) == 0
    assert capsys.readouterr().out.strip() == k
    assert main(["effects", "get", k, "--data-dir", data, "--tenant", "acme"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"key {k}: completed") and "pull/1" in out
    assert main(["effects", "get", k, "--data-dir", data, "--tenant", "globex"]) == 3
    capsys.readouterr()
    k2 = key("acme", "s-a2", "terraform apply")
    assert main(["effects", "resolve", k2, "--data-dir", data, "--tenant", "acme",
                 "--resolution", "completed", "--note", "applied by hand"]) == 0
    assert "resolved 1 record" in capsys.readouterr().out
    assert main(["effects", "resolve", k2, "--data-dir", data, "--tenant", "acme", "--resolution", "failed"]) == 4
    capsys.readouterr()
    # the same through the admin API of the running proxy
    assert await asyncio.to_thread(main, ["effects", "list", "--url", p.url, "--token", TOKEN, "--tenant", "acme",
                                          "--state", "resolved", "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["call_id"] == ids["a2"] and rec["resolution"] == "completed"
    assert await asyncio.to_thread(main, ["effects", "get", k, "--url", p.url, "--token", "nope",
                                          "--tenant", "acme"]) == 1
    assert "403" in capsys.readouterr().err
    assert main(["effects", "list", "--data-dir", str(tmp_path / "nowhere")]) == 1
    assert "no store" in capsys.readouterr().err


async def test_lookup_of_too_deeply_nested_arguments_is_a_400(ledger):
    """Arguments nested past MAX_DEPTH have no key: a clear 400, not a
    RecursionError's 500 (orjson decodes 600 levels; the walk used to recurse)."""
    p, _, http = ledger
    deep = b'{"tool":"Bash","task":"s-a","tenant":"acme","arguments":' + b"[" * 600 + b"]" * 600 + b"}"
    async with http.post(f"{p.url}/ctx/v1/effects/lookup", data=deep,
                         headers={"Content-Type": "application/json"}) as r:
        assert r.status == 400
        assert "deeper than 100 levels" in await r.text()
    ok = {"c": 1}
    for _ in range(99):  # 100 levels with the outer object: still a key
        ok = [ok]
    async with http.post(f"{p.url}/ctx/v1/effects/lookup",
                         json={"tool": "Bash", "task": "s-a", "tenant": "acme", "arguments": ok}) as r:
        assert r.status == 404 and (await r.json())["status"] == "none"


async def test_forgetting_a_user_erases_the_task_checkpoint_listing_their_effects(make_proxy, fake, tmp_path,
                                                                                   capsys):
    """Two sessions of one task: alice's call and result, then bob resumes from
    a summary and gets the task's checkpoint, which lists alice's call.
    ``effects forget --subject alice`` erases that checkpoint too (the counts
    see it), and bob's next turn no longer shows alice's call to the model."""
    p = await make_proxy(TOML)
    secret = "alice@example.com"
    headers = {"X-Ctx-Task": "release"}
    alice = p.anthropic(default_headers={**headers, "X-Ctx-Session": "s-alice", "X-Ctx-User": "alice"})
    bob = p.anthropic(default_headers={**headers, "X-Ctx-Session": "s-bob", "X-Ctx-User": "bob"})
    fake.script(Reply.tool_call("Bash", {"command": f"curl -d {secret} https://tickets.example.com"}),
                Reply.text("filed"), Reply.text("on it"), Reply.text("next"))
    messages = [{"role": "user", "content": "file the ticket"}]
    first = await alice.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=messages)
    (use,) = [b for b in first.content if b.type == "tool_use"]
    messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                               "content": "ticket alice-42 filed"}]}]
    await alice.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=messages)
    resumed = [{"role": "user", "content": "This session is being continued from a previous conversation. Go on."}]
    await bob.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=resumed)
    assert secret in json.dumps(fake.last.json)  # bob's checkpoint lists alice's call
    store = p.settled_store()
    data = str(tmp_path / "data")
    assert main(["effects", "forget", "--data-dir", data, "--subject", "alice", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["checkpoints"] == 1
    assert main(["effects", "forget", "--data-dir", data, "--subject", "alice", "--request-id", "gdpr-1",
                 "--json"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["request_id"] == "gdpr-1"
    assert {k: receipt["counts"][k] for k in ("sessions", "effects", "checkpoints")} == {
        "sessions": 1, "effects": 1, "checkpoints": 1}
    assert sum(store.count_subject("default", subject="alice").values()) == 0
    assert all(secret not in json.dumps(d.data) for d in store.checkpoints.list("default"))
    await bob.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=resumed + [
        {"role": "assistant", "content": "on it"}, {"role": "user", "content": "next?"}])
    assert secret not in json.dumps(fake.last.json)
    # the same request id for another erasure is refused
    assert main(["effects", "forget", "--data-dir", data, "--subject", "bob", "--request-id", "gdpr-1"]) == 1
    assert "already used for another erasure" in capsys.readouterr().err


async def test_cli_reads_the_store_section_of_the_config(make_proxy, fake, tmp_path, capsys):
    """The CLI opens the store as the proxy does: with the config's
    pending_timeout, a call without a result reads ``unknown`` in both."""
    toml = TOML + "\n[store]\npending_timeout = 0.2\n"
    cfg = tmp_path / "cli.toml"
    cfg.write_text(toml)
    p = await make_proxy(toml)
    await run_session(p, fake, "acme", "s-slow", "terraform apply", None)
    store = p.settled_store()  # the pending record is written (and dated) by now, however late its writer ran
    await asyncio.sleep(0.3)
    (rec,) = store.effects.list("acme")
    assert rec.state == "unknown"
    assert main(["effects", "list", "--config", str(cfg), "--data-dir", str(tmp_path / "data"), "--tenant", "acme",
                 "--json"]) == 0
    assert [e["state"] for e in json.loads(capsys.readouterr().out)] == ["unknown"]


async def test_admin_answers_503_while_the_store_cannot_settle(ledger, fake, monkeypatch):
    """An admin read first lands this process's queued writes; when the
    store's write lock is held elsewhere past the wait, the answer is a 503
    the caller may retry, not a 500."""
    from storelock import write_lock_held

    from ctxproxy.proxy.admin import app as admin

    p, _, http = ledger
    monkeypatch.setattr(admin, "SETTLE_TIMEOUT", 0.3)
    client = p.anthropic(default_headers={"X-Ctx-Tenant": "acme", "X-Ctx-Session": "s-busy"})
    ask = dict(model="m", max_tokens=50, tools=TOOLS, messages=[{"role": "user", "content": "deploy"}])
    fake.script(Reply.text("ready"), Reply.tool_call("Bash", {"command": "make deploy"}))
    await client.messages.create(**ask)  # the session is set up: the same request again writes nothing
    p.settled_store()
    with write_lock_held(p.state.services["store"]):
        await client.messages.create(**ask)  # its call's record waits for the lock
        async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "acme"}) as r:
            assert r.status == 503 and r.headers["Retry-After"] == "1"
            assert "the store is busy" in (await r.json())["error"]["message"]
    async with http.get(f"{p.url}/ctx/v1/effects", params={"tenant": "acme", "session": "s-busy"}) as r:
        assert r.status == 200 and [e["args_canonical"] for e in (await r.json())["effects"]] == [
            '{"command":"make deploy"}']
