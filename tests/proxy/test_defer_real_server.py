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
