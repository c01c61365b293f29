"""The request filters' keeping after the forward and the chain's replay, through
the real server: turns of one session id from two users at once (the same
request again and others), a memory forgotten through the admin API while a
round of them is at the provider (their deferred steps pending or running),
then the same requests again. What reached the provider never holds a memory
the caller may not see, nor one forgotten before the request came; every
request goes with the caller's own question. Official OpenAI SDK → ctxproxy →
the scripted provider, each answer held back a little so the turns overlap."""
from __future__ import annotations

import asyncio

import aiohttp
from adminapi import TOKEN, call

from ctxproxy.proxy.scripted_provider import Reply

FACT = "The CTX_TIMEOUT default is 30 seconds unless the config file sets timeout."
QUESTION = "What is the CTX_TIMEOUT default in seconds when the config file has no timeout?"
OTHER = "Which file holds the timeout setting of the deploy job?"
USERS = ("ana", "bob")  # ana's memory; bob shares her session id


async def _round(clients: dict, texts: list[tuple[str, str]]) -> None:
    got = await asyncio.gather(*(clients[user].chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": f"{text} [{user}]"}]) for user, text in texts))
    assert all(g.choices[0].message.content for g in got)


def _sent(fake, since: int) -> list[tuple[str, bytes]]:
    """(the asking user, the body the provider got) of each model request since ``since``."""
    out = []
    for rec in fake.requests[since:]:
        if rec.api:
            user = next(u for u in USERS if f"[{u}]".encode() in rec.body)
            out.append((user, rec.body))
    return out


async def test_one_session_id_two_users_at_once_and_a_forget_in_flight(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    fake.default_reply = Reply.text("Noted.", delay_before_headers=0.02)
    p = await make_proxy()
    clients = {u: p.openai(default_headers={"X-Ctx-User": u, "X-Ctx-Session": "s-shared"}) for u in USERS}
    texts = [("ana", QUESTION), ("ana", QUESTION), ("ana", OTHER), ("bob", QUESTION), ("bob", QUESTION),
             ("bob", OTHER)]
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        base = f"{p.url}/ctx/v1/memories"
        status, mem = await call(http, "POST", base, json={"statement": FACT, "user": "ana", "kind": "fact"})
        assert status in (200, 201), mem
        mark = len(fake.requests)
        for _ in range(2):
            await _round(clients, texts)
        sent = _sent(fake, mark)
        assert len(sent) == 2 * len(texts)
        assert not any(FACT.encode() in body for user, body in sent if user == "bob")  # never bob's
        assert all(FACT.encode() in body for user, body in sent if user == "ana" and QUESTION.encode() in body)

        # a round at the provider while the memory is forgotten, its deferred steps pending or running
        mark = len(fake.requests)
        flight = asyncio.ensure_future(_round(clients, texts))
        while len(fake.requests) == mark:
            await asyncio.sleep(0.001)
        status, deleted = await call(http, "DELETE", f"{base}/{mem['memory_id']}")
        assert status == 200 and deleted["receipt"]["counts"]["memories"] == 1
        await flight
        assert not any(FACT.encode() in body for user, body in _sent(fake, mark) if user == "bob")

        mark = len(fake.requests)
        for _ in range(3):  # the same requests again, some replayed: the forgotten memory never comes back
            await _round(clients, texts)
        sent = _sent(fake, mark)
        assert len(sent) == 3 * len(texts) and not any(FACT.encode() in body for _, body in sent)
        asked = sorted((u, q) for u, body in sent for q in (QUESTION, OTHER) if f"{q} [{u}]".encode() in body)
        assert asked == sorted(texts * 3)  # each caller's own question, each once a round
        rid = deleted["receipt"]["request_id"]
        status, checked = await call(http, "GET", f"{p.url}/ctx/v1/forget/{rid}")
        assert status == 200 and checked["clean"] is True
    for c in clients.values():
        await c.close()


def _history(last: str) -> dict:
    """A chat with a tool round trip and the model's answer, then ``last``: sent after one
    that ended otherwise, the session's task state quotes that earlier user turn."""
    call = {"id": "call_cfg_1", "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "src/config.py"}'}}
    return {"model": "gpt-test", "tools": [{"type": "function", "function": {
        "name": "read_file", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}], "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "The service ignores CTX_TIMEOUT. Find out why."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_cfg_1", "content": "def load():\n    return read('config.toml')\n"},
        {"role": "assistant", "content": "The loader reads config.toml first."},
        {"role": "user", "content": last}]}


async def test_keys_users_and_tenants_on_one_session_id_at_once_never_see_each_others(make_proxy, fake):
    """In keys mode, turns of three keys (two users of one tenant, one of another) with one session id,
    at once and again (the later ones replayed from the chain): alice's instruction, quoted by her
    session's task state, and her memory reach alice's requests only."""
    from ctxproxy.proxy.auth import issue_key

    fake.default_reply = Reply.text("Noted.", delay_before_headers=0.02)
    p = await make_proxy('[auth]\nmode = "keys"\n')
    store = p.state.services["store"]
    keys = {(t, u): issue_key(store, p.state.config, t, user=u)["key"]
            for t, u in (("acme", "alice"), ("acme", "bob"), ("globex", "alice"))}
    from memhelp import put_memory

    put_memory(store, "acme", FACT, kind="fact", user="alice")
    said = "Keep the default at 30 seconds, never 45."

    async with aiohttp.ClientSession() as http:
        async def turn(who, body):
            hdrs = {"X-Ctx-Key": keys[who], "Authorization": "Bearer sk-own", "X-Ctx-Session": "shared-1"}
            async with http.post(f"{p.url}/v1/chat/completions", json=body, headers=hdrs) as r:
                assert r.status == 200, await r.text()

        await turn(("acme", "alice"), _history(said))
        p.settled_store()
        for _ in range(3):
            mark = len(fake.requests)
            await asyncio.gather(*(turn(who, _history(f"{QUESTION} [{who[0]}/{who[1]}]")) for who in keys))
            p.settled_store()
            sent = {who: next(r.body for r in fake.requests[mark:] if f"[{who[0]}/{who[1]}]".encode() in r.body)
                    for who in keys}
            assert said.encode() in sent[("acme", "alice")] and FACT.encode() in sent[("acme", "alice")]
            for who in (("acme", "bob"), ("globex", "alice")):
                assert said.encode() not in sent[who] and FACT.encode() not in sent[who], who
