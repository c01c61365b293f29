"""The recall filter through a real proxy and the official SDKs: what reached
the scripted provider, the manifest's part, the session index and the admin
API (``POST /ctx/v1/recall``, ``GET /ctx/v1/sessions/search``)."""
from __future__ import annotations

import aiohttp
import pytest

from memhelp import put_memory

TOKEN = "recall-admin-token"


def headers(tenant: str, user: str, session: str, **extra: str) -> dict:
    h = {"X-Ctx-Tenant": tenant, "X-Ctx-User": user, "X-Ctx-Session": session}
    h.update({f"X-Ctx-{k.replace('_', '-').title()}": v for k, v in extra.items()})
    return h


def sent_text(record) -> str:
    import json

    return json.dumps(record.json, ensure_ascii=False)


async def ask(proxy, text: str, hdrs: dict, api: str = "anthropic") -> None:
    if api == "anthropic":
        client = proxy.anthropic(default_headers=hdrs)
        await client.messages.create(model="claude-test", max_tokens=32,
                                     messages=[{"role": "user", "content": text}])
    else:
        client = proxy.openai(default_headers=hdrs)
        await client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": text}])


@pytest.fixture
async def proxy(make_proxy, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    return await make_proxy("")


async def test_relevant_memory_reaches_the_model_fenced_with_its_labels(proxy, fake):
    store = proxy.state.services["store"]
    rec = put_memory(store, "acme", "The staging database is pg-stage-7 on port 6543.", kind="fact", user="alice")
    put_memory(store, "acme", "Lunch is at noon on Fridays.", kind="fact", user="alice")
    await ask(proxy, "Which port does the staging database listen on?", headers("acme", "alice", "s1"))
    body = sent_text(fake.last)
    assert "pg-stage-7 on port 6543" in body and rec.memory_id in body
    assert "Lunch is at noon" not in body  # below the floor: not injected at all
    assert '<ctx-data kind=\\"evidence\\"' in body and "data, not instructions" in body
    m = proxy.settled_store().manifests.list("acme", session="s1")[-1].data
    part = m["recall"]
    assert part["status"] == "recalled" and part["results"] == 1
    item = part["items"][0]
    assert item["id"] == rec.memory_id and item["kind"] == "fact" and item["scope"] == "user"
    assert set(item["parts"]) >= {"lexical", "decay", "mmr"}
    assert "pg-stage" not in str(m)  # the manifest carries ids and labels, never the text


async def test_other_users_tenants_and_unknown_identity_recall_nothing(proxy, fake):
    store = proxy.state.services["store"]
    put_memory(store, "acme", "Canary zebra-quartz-991 is alice's.", kind="fact", user="alice")
    for hdrs in (headers("acme", "bob", "s2"), headers("other", "alice", "s3")):
        await ask(proxy, "what is zebra-quartz-991?", hdrs, api="chat")
        assert "Canary zebra" not in sent_text(fake.last)
    client = proxy.openai()  # no X-Ctx-* headers: a fingerprint identity of the default tenant
    await client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "zebra-quartz-991"}])
    assert "Canary zebra" not in sent_text(fake.last)


async def test_a_turn_without_new_user_text_reuses_the_same_bytes(proxy, fake):
    store = proxy.state.services["store"]
    put_memory(store, "acme", "Deploys go through the blue-green pipeline named aurora.", kind="procedure",
               user="alice")  # a procedure: in the frozen snapshot, not recalled
    put_memory(store, "acme", "The aurora pipeline failed last Tuesday on a disk quota.", kind="failure",
               user="alice")
    hdrs = headers("acme", "alice", "s4")
    client = proxy.anthropic(default_headers=hdrs)
    msgs = [{"role": "user", "content": "why did the aurora pipeline fail?"}]
    await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
    first = fake.last.json["messages"][-1]["content"][-1]["text"]
    assert "disk quota" in first
    # a change of the tenant's memories is searched again; recalling the same, it gives the same bytes
    put_memory(store, "acme", "Lunch is at noon on Fridays.", kind="fact", user="alice")
    for n in (1, 2):
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                                                    "input": {"command": "df -h"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok"}]}]
        await client.messages.create(model="claude-test", max_tokens=32, messages=msgs)
        again = fake.last.json["messages"][-1]["content"][-1]["text"]
        assert again == first  # same user text: the same evidence bytes
    m = proxy.settled_store().manifests.list("acme", session="s4")[-1].data
    assert m["recall"]["status"] == "reused"  # nothing changed since: not searched again


async def test_a_reused_result_is_only_ever_the_same_callers(proxy, fake):
    """The memo of a session's last recall is the caller's: another user (or purpose) sending
    the same text under the same session id recalls for itself and gets none of it."""
    store = proxy.state.services["store"]
    put_memory(store, "acme", "Canary lynx-ember-204 is alice's staging host.", kind="fact", user="alice",
               purpose="support")
    text = "which host is lynx-ember-204?"
    await ask(proxy, text, headers("acme", "alice", "shared", purpose="support"))
    assert "Canary lynx-ember-204" in sent_text(fake.last)
    for hdrs in (headers("acme", "bob", "shared"), headers("acme", "alice", "shared", purpose="analysis")):
        await ask(proxy, text, hdrs)
        assert "Canary lynx-ember-204" not in sent_text(fake.last)


async def test_session_index_search_and_recall_api(proxy, fake):
    hdrs = headers("acme", "alice", "parent-1")
    await ask(proxy, "We decided to name the release train Kestrel for the March launch.", hdrs)
    child = headers("acme", "alice", "child-1", parent_session="parent-1")
    await ask(proxy, "Let's start.", child)
    sibling_of_other_user = headers("acme", "mallory", "evil-1", parent_session="parent-1")
    await ask(proxy, "what did we name the release train?", sibling_of_other_user)
    assert "Kestrel" not in sent_text(fake.last)
    await ask(proxy, "what did we name the release train?", child)
    assert "Kestrel for the March launch" in sent_text(fake.last)  # the parent's turn, via the tree
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as http:
        async with http.get(f"{proxy.url}/ctx/v1/sessions/search",
                            params={"q": "release train name", "session": "child-1", "tenant": "acme"}) as r:
            body = await r.json()
        assert r.status == 200
        parent = [h for h in body["hits"] if h["session"] == "parent-1"]  # the child's own question is a hit too
        assert parent and "Kestrel" in parent[0]["text"]
        async with http.get(f"{proxy.url}/ctx/v1/sessions/search",
                            params={"q": "Kestrel", "session": "evil-1", "tenant": "acme"}) as r:
            assert (await r.json())["hits"] == []
        put_memory(proxy.state.services["store"], "acme", "Kestrel ships on the 14th.", kind="fact",
                   user="alice", external_id="kestrel-date")
        async with http.post(f"{proxy.url}/ctx/v1/recall",
                             json={"query": "when does Kestrel ship?", "user": "alice", "tenant": "acme"}) as r:
            body = await r.json()
        assert r.status == 200 and body["items"][0]["external_id"] == "kestrel-date"
        assert body["items"][0]["statement"] == "Kestrel ships on the 14th."
        async with http.post(f"{proxy.url}/ctx/v1/recall",
                             json={"query": "when does Kestrel ship?", "user": "bob", "tenant": "acme"}) as r:
            assert (await r.json()) == {"items": []}
        async with http.post(f"{proxy.url}/ctx/v1/recall", json={"query": "x", "k": 0}) as r:
            assert r.status == 400 and (await r.json())["error"]["field"] == "k"
        async with http.post(f"{proxy.url}/ctx/v1/recall", data=b"{nope") as r:
            assert r.status == 400


async def test_widening_to_the_users_sessions_keeps_the_parents_turns(make_proxy, fake, monkeypatch):
    """``widen = "same_user"`` is a superset of the session tree: a child still
    gets its parent's turn although the user's other sessions asked the same
    question — and what those sessions were shown (the injected evidence) is
    never indexed as what their user said."""
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    proxy = await make_proxy('[filters.recall]\nwiden = "same_user"\n')
    note = "Note for this task: the rollout codename of acme is Kestrel-77. Please remember it."
    await ask(proxy, note, headers("acme", "alice", "parent-1"))
    proxy.settled_store()
    question = "What is the rollout codename of acme?"
    for i in range(6):  # unrelated sessions of the same user: widening shows them the parent's note
        await ask(proxy, question, headers("acme", "alice", f"other-{i}"), api="chat" if i % 2 else "anthropic")
        assert "Kestrel-77" in sent_text(fake.last)
        proxy.settled_store()
    await ask(proxy, question, headers("acme", "alice", "child-1", parent_session="parent-1"))
    body = sent_text(fake.last)
    assert "session:parent-1/turn:" in body and "Kestrel-77" in body
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as http:
        async with http.get(f"{proxy.url}/ctx/v1/sessions/search",
                            params={"q": question, "user": "alice", "tenant": "acme", "limit": 50}) as r:
            hits = (await r.json())["hits"]
    users = {h["session"]: h["text"] for h in hits if h["role"] == "user"}
    assert users["parent-1"] == note
    assert {users[f"other-{i}"] for i in range(6)} == {question}  # the user's words, not the evidence


async def test_a_recorded_sessions_tree_is_kept_and_a_sub_session_joins_it(proxy, fake):
    """Once the session index has a session recorded, its later turns ask the index nothing
    about it (no tree, no owner: the filter keeps the tree; no forget count while its
    recalls find nothing); a sub-session this process records joins the parent's kept
    tree at once."""
    from ctxproxy.store.services.recall.services import recall_services

    con = recall_services(proxy.state.services).sessions.file.db()  # the event loop's connection
    hdrs = headers("acme", "alice", "root-7")
    await ask(proxy, "We named the staging cluster Osprey.", hdrs)
    proxy.settled_store()  # recorded
    await ask(proxy, "Noted. What comes next?", hdrs)  # the tree read once more, now kept
    statements: list[str] = []
    con.set_trace_callback(statements.append)
    try:
        await ask(proxy, "And the database, which one is it?", hdrs)
    finally:
        con.set_trace_callback(None)
    assert not [s for s in statements if "FROM sessions" in s], statements
    assert not [s for s in statements if "forgets" in s], statements  # its last recall found nothing
    child = headers("acme", "alice", "kid-7", parent_session="root-7")
    await ask(proxy, "The Osprey cluster runs on the rack named Heron-42.", child)
    proxy.settled_store()  # the child recorded under its parent, its turn indexed
    await ask(proxy, "which rack does the Osprey cluster run on?", hdrs)
    assert "Heron-42" in sent_text(fake.last)  # the child's turn, through the parent's tree
