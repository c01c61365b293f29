"""identify: headers, client hints, OpenClaw runtime line, fingerprint fallback."""
import hashlib

import aiohttp
import orjson
import pytest
from multidict import CIMultiDict

from ctxproxy.store.services.digest import sha256
from ctxproxy.filters.continuity import response_link
from ctxproxy.filters.identify import IdentifyConfig, identify
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply
from realclients import body_bytes, load

CFG = IdentifyConfig()


def ident(name=None, headers=None, body=None, api="anthropic", fixed=""):
    if name:
        rec = load(name)
        headers = {**rec["headers"], **(headers or {})}
        raw = body_bytes(rec)
    else:
        raw = orjson.dumps(body)
    view = ADAPTERS[api].parse_request(raw)
    return identify(CIMultiDict(headers or {}), view, CFG, fixed)


def test_claude_code_session_header():
    i = ident("claude-code-1-first")
    assert (i.session, i.source, i.agent, i.supplied) == (
        "91c73d81-0f31-48b2-8682-c4f4438bae79", "hint:x-claude-code-session-id", "claude-code", True)


def test_claude_code_metadata_user_id_when_header_missing():
    rec = load("claude-code-2-tool-result")
    headers = {k: v for k, v in rec["headers"].items() if k != "x-claude-code-session-id"}
    i = identify(CIMultiDict(headers), ADAPTERS["anthropic"].parse_request(body_bytes(rec)), CFG)
    assert i.session == "91c73d81-0f31-48b2-8682-c4f4438bae79" and i.source == "hint:metadata.user_id"


def test_claude_code_earlier_user_id_string():
    """Earlier Claude Code versions send ``user_<device hash>_account_<uuid>_session_<uuid>``."""
    device = "5dd07c33da27e6d2968d94ea20bf47a7b090b6b158b82328d54da2909a108e84"
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "metadata": {"user_id": f"user_{device}_account__session_d2e70091-3007-41a3-a916-cb8b0d3098de"}}
    i = ident(body=body)
    assert (i.session, i.source, i.supplied, i.user) == (
        "d2e70091-3007-41a3-a916-cb8b0d3098de", "hint:metadata.user_id", True, device)
    body["metadata"]["user_id"] = (f"user_{device}_account_0b5f2d6e-93a4-4c1e-8f0a-7d1c2b3a4e5f"
                                   "_session_d2e70091-3007-41a3-a916-cb8b0d3098de")
    assert ident(body=body).user == "0b5f2d6e-93a4-4c1e-8f0a-7d1c2b3a4e5f"  # the account, when there is one
    body["metadata"]["user_id"] = "someone@example.com"  # any other user id: not a session hint
    assert ident(body=body).source == "new"


def test_codex_session_headers():
    i = ident("codex-lite-1-first", api="responses")
    assert i.session == "01a22b90-ccdc-7b03-8a4a-14c2e3ae33dd" and i.agent == "codex"


def test_x_ctx_headers_win_but_tenant_header_cannot_override_fixed_tenant():
    h = {"X-Ctx-Tenant": "acme", "X-Ctx-Session": "s1", "X-Ctx-Task": "t9", "X-Ctx-User": "ana"}
    i = ident("claude-code-1-first", headers=h)
    assert (i.tenant, i.session, i.task, i.user, i.source) == ("acme", "s1", "t9", "ana", "header")
    assert ident("claude-code-1-first", headers=h, fixed="bound").tenant == "bound"


def test_openclaw_runtime_line():
    body = {"model": "m", "messages": [
        {"role": "system", "content": "You are helpful.\nRuntime: agent=main | sessionId=oc-7f3a91 | host=x"},
        {"role": "user", "content": "hi"}]}
    i = ident(body=body, api="chat", headers={"user-agent": "openclaw/1.0"})
    assert (i.session, i.source) == ("oc-7f3a91", "hint:openclaw-runtime")


def test_a_first_request_is_a_new_session_and_a_history_no_link_names_is_derived():
    """No id at all (Hermes; its prompt_cache_key is shared by every session):
    a request with no answer in its history opens a new session, even with an
    opening seen before; a history that continues an answer the proxy never
    relayed gets a session derived from its opening and first answer, the
    same on each of its turns."""
    first = {"model": "m", "prompt_cache_key": "hermes", "input": [{"role": "user", "content": "fix bug 12"}]}
    a, b = (ident(body=first, api="responses") for _ in range(2))
    assert (a.source, b.source) == ("new", "new") and not a.supplied
    assert a.session != b.session and a.session.startswith("cv-")
    turn2 = {**first, "input": first["input"] + [{"role": "assistant", "content": "ok"},
                                                 {"role": "user", "content": "next"}]}
    turn3 = {**turn2, "input": turn2["input"] + [{"role": "assistant", "content": "done"},
                                                 {"role": "user", "content": "thanks"}]}
    c, d = (ident(body=x, api="responses") for x in (turn2, turn3))
    assert (c.source, d.source) == ("fingerprint", "fingerprint")
    assert c.session == d.session  # the opening and the first answer: the same on every turn
    other = {**turn2, "input": first["input"] + [{"role": "assistant", "content": "on it"},
                                                 {"role": "user", "content": "next"}]}
    assert ident(body=other, api="responses").session != c.session  # another first answer


def test_remembered_fingerprints_are_the_fingerprints_and_stay_bounded(monkeypatch):
    """The filter remembers each derived session id (every turn of a session
    derives it from the same opening and first answer): a remembered one is
    the one computed afresh, two histories never share an entry, and the memo
    is bounded."""
    from ctxproxy.store.bounded import ByteLRU, entry_bytes
    from ctxproxy.store.services.digest import memo_key

    one = entry_bytes(memo_key("seed"), "fp-" + "0" * 24)
    memo = ByteLRU(3 * one + one // 2, "fingerprints")

    def history(opening):
        return {"model": "m", "input": [{"role": "user", "content": opening}, {"role": "assistant", "content": "ok"},
                                        {"role": "user", "content": "go on"}]}

    bodies = [history(f"task {i}") for i in range(5)]

    def fp(body, memo):
        view = ADAPTERS["responses"].parse_request(orjson.dumps(body))
        return identify(CIMultiDict(), view, CFG, "", None, memo).session

    fresh = [fp(b, None) for b in bodies]
    assert len(set(fresh)) == 5
    assert [fp(b, memo) for b in bodies] == fresh  # computed, then remembered
    assert 0 < len(memo) <= 3 and memo.bytes <= memo.max_bytes
    assert [fp(b, memo) for b in bodies[-2:]] == fresh[-2:]  # and read back
    long_a, long_b = history("x" * 5000 + " question a"), history("x" * 5000 + " question b")
    assert fp(long_a, memo) == fp(long_a, None) != fp(long_b, memo) == fp(long_b, None)


def test_primed_sha256_objects_are_independent_and_exact():
    a, b = sha256(b"one"), sha256()
    b.update(b"two")
    assert a.hexdigest() == hashlib.sha256(b"one").hexdigest()
    assert b.hexdigest() == hashlib.sha256(b"two").hexdigest()
    assert sha256().hexdigest() == hashlib.sha256().hexdigest()


def test_bad_header_ids_are_ignored():
    i = ident(body={"model": "m", "messages": [{"role": "user", "content": "x"}]},
              headers={"X-Ctx-Session": "a b\u0000c", "X-Ctx-Tenant": "../../etc"})
    assert i.source == "new" and i.tenant == "default"


def test_shared_proxy_remedies_for_the_tenant_header():
    """By default X-Ctx-Tenant picks the tenant on a route without one; the two
    remedies the README gives an operator of a shared proxy both stop it."""
    h = CIMultiDict({"X-Ctx-Tenant": "globex", "X-Ctx-Session": "s1"})
    view = ADAPTERS["anthropic"].parse_request(orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    assert identify(h, view, CFG).tenant == "globex"
    assert identify(h, view, CFG, "acme").tenant == "acme"  # the route's fixed tenant
    closed = identify(h, view, IdentifyConfig(trust_headers=False))
    assert closed.tenant == "default" and closed.session != "s1"


# Identify through the proxy: a ``sessionId=`` that is not OpenClaw's runtime
# line joins no sessions, long first turns that differ only at the end are two
# sessions, a Responses ``conversation`` is the session.
TOKEN = "admin-review-token"


async def session_of(proxy, turn_id: str) -> dict:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as s:
        async with s.get(f"{proxy.url}/ctx/v1/manifests/{turn_id}", headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            assert r.status == 200
            return await r.json()


async def chat_turn(proxy, messages, **headers) -> dict:
    client = proxy.openai()
    raw = await client.chat.completions.with_raw_response.create(model="m", messages=messages, extra_headers=headers)
    return await session_of(proxy, raw.headers["x-ctx-turn-id"])


@pytest.fixture
async def idproxy(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    fake.script(*[Reply.text("ok")] * 10)
    return await make_proxy()


SYSTEM_WITH_COOKIE = ("You are a web helper. To call the staging API send the header\n"
                      "Cookie: sessionId=staging0001; Path=/\nand nothing else.")


async def test_a_session_id_in_ordinary_text_joins_no_sessions(idproxy):
    a = await chat_turn(idproxy, [{"role": "system", "content": SYSTEM_WITH_COOKIE},
                                  {"role": "user", "content": "fix the login page"}])
    b = await chat_turn(idproxy, [{"role": "system", "content": SYSTEM_WITH_COOKIE},
                                  {"role": "user", "content": "write the release notes"}])
    assert a["session_id"] != b["session_id"]
    assert "staging0001" not in (a["session_id"], b["session_id"])


RUNTIME_DOC = ("# Project Context\nAGENTS.md says the prompt ends with a line like\n"
               "Runtime: agent=main | session=agent:main:x | sessionId=abc... | host=...\n")


@pytest.mark.parametrize("sid", ["e2b1ba08-1ed3-48cb-b311-afdbf9ab319b", "0f4c2d1e-aaaa-bbbb-cccc-123456789abc"])
async def test_openclaw_id_comes_from_its_own_runtime_line(idproxy, sid):
    system = (RUNTIME_DOC + "## Runtime\nRuntime: agent=main | session=agent:main:main | "
              f"sessionId={sid} | host=runner | os=Linux\nReasoning: off")
    m = await chat_turn(idproxy, [{"role": "system", "content": system}, {"role": "user", "content": "hi"}],
                        **{"user-agent": "openclaw/2026.1"})
    assert m["session_id"] == sid


async def test_long_first_turns_differing_at_the_end_are_two_sessions(idproxy):
    paste = "log line 42: connection reset by peer\n" * 300  # well past the fingerprinted head
    first_a = [{"role": "user", "content": paste + "Why does the API server drop connections?"}]
    first_b = [{"role": "user", "content": paste + "Summarise this log for the weekly report."}]
    a1 = await chat_turn(idproxy, first_a)
    b1 = await chat_turn(idproxy, first_b)
    a2 = await chat_turn(idproxy, first_a + [{"role": "assistant", "content": "ok"},  # the answer a1 got
                                             {"role": "user", "content": "fix it"}])
    assert a1["session_id"] != b1["session_id"]
    assert a1["session_id"] == a2["session_id"]  # stable across the turns of one session


async def test_responses_conversation_is_the_session(idproxy):
    client = idproxy.openai()
    for conv, new_input in (("conv_68a1b2c3d4e5f6", "first question"), ({"id": "conv_68a1b2c3d4e5f6"}, "follow-up")):
        raw = await client.responses.with_raw_response.create(model="m", input=new_input, conversation=conv)
        m = await session_of(idproxy, raw.headers["x-ctx-turn-id"])
        assert m["session_id"] == "conv_68a1b2c3d4e5f6"


async def test_a_system_message_added_mid_session_keeps_the_session(idproxy):
    """Agents add system messages as they go (a reminder, a mode switch): the
    history still continues the answer the first turn got."""
    opening = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "list the files"}]
    first = await chat_turn(idproxy, opening)
    later = await chat_turn(idproxy, opening + [{"role": "assistant", "content": "ok"},
                                                {"role": "system", "content": "Plan mode is now on."},
                                                {"role": "user", "content": "now delete b.py"}])
    assert first["session_id"] == later["session_id"]
    other = await chat_turn(idproxy, [{"role": "system", "content": "You are verbose."},
                                      {"role": "user", "content": "list the files"}])
    assert other["session_id"] != first["session_id"]


async def responses_turn(proxy, stream: bool, **kw) -> tuple[str, dict]:
    """One Responses call with the openai SDK; (response id, the turn's manifest)."""
    client = proxy.openai()
    if stream:
        async with client.responses.with_streaming_response.create(model="m", stream=True, **kw) as raw:
            rid = None
            async for line in raw.iter_lines():
                if '"response.completed"' in line and line.startswith("data: "):
                    import json
                    rid = json.loads(line[6:])["response"]["id"]
            turn_id = raw.headers["x-ctx-turn-id"]
    else:
        raw = await client.responses.with_raw_response.create(model="m", **kw)
        rid, turn_id = raw.parse().id, raw.headers["x-ctx-turn-id"]
    return rid, await session_of(proxy, turn_id)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_previous_response_id_chain_is_one_session(idproxy, stream):
    """The SDK's own way to continue a conversation sends only the new input
    and ``previous_response_id``: every turn of the chain is one session, and
    two chains are two sessions."""
    seen = {}
    for chain in ("a", "b"):
        rid, m = await responses_turn(idproxy, stream, instructions="Be brief.", input=f"start chain {chain}")
        sessions = {m["session_id"]}
        for step in range(2):
            rid, m = await responses_turn(idproxy, stream, instructions="Be brief.", input=f"step {step}",
                                          previous_response_id=rid)
            sessions.add(m["session_id"])
            assert m["identity_source"] == "chain:previous_response_id"
        assert len(sessions) == 1, sessions
        seen[chain] = sessions.pop()
    assert seen["a"] != seen["b"]


async def test_the_chain_is_followed_without_response_filters(make_proxy, fake):
    """With no filter reading answers (the core pipeline), the response id of a
    whole Responses answer is still noted for the chain, from its first bytes."""
    p = await make_proxy('[pipeline]\nrequest = ["identify"]\n')
    fake.script(Reply.text("ok"), Reply.text("ok"))
    client = p.openai()
    first = await client.responses.create(model="m", input="hello")
    (identify,) = [s.filter for s in p.state.relay.pipelines["openai"].stages]
    session = identify.links.find("default", response_link(first.id))
    assert session is not None
    second = await client.responses.create(model="m", input="and then?", previous_response_id=first.id)
    assert identify.links.find("default", response_link(second.id)) == session


@pytest.mark.parametrize("stream", [False, True])
async def test_the_chain_is_known_before_the_client_has_the_answer(idproxy, monkeypatch, stream):
    """A client that sends its next turn the moment it has the answer — while
    the proxy is still at the turn's bookkeeping — still continues its session:
    the response id is remembered when it is seen, not at the turn's end."""
    from latecalls import LateCalls

    from ctxproxy.proxy.engine import Engine

    late = LateCalls(Engine.finish_turn, 0.3)  # the bookkeeping of every turn runs 0.3 s late
    monkeypatch.setattr(Engine, "finish_turn", staticmethod(late.patch()))
    client = idproxy.openai()
    kw = {"stream": True} if stream else {}
    turn_ids = []
    rid = None
    for text in ("start the chain", "next step"):
        extra = {"previous_response_id": rid} if rid else {}
        if stream:
            async with client.responses.with_streaming_response.create(
                    model="m", instructions="Be brief.", input=text, **kw, **extra) as raw:
                async for line in raw.iter_lines():
                    if line.startswith("data: ") and '"response.created"' in line:
                        import json
                        rid = json.loads(line[6:])["response"]["id"]
                turn_ids.append(raw.headers["x-ctx-turn-id"])
        else:
            raw = await client.responses.with_raw_response.create(model="m", instructions="Be brief.", input=text,
                                                                  **extra)
            rid = raw.parse().id
            turn_ids.append(raw.headers["x-ctx-turn-id"])
    await late.until_ran(2)  # both turns' bookkeeping (and manifests) done
    first, second = [await session_of(idproxy, t) for t in turn_ids]
    assert second["identity_source"] == "chain:previous_response_id"
    assert second["session_id"] == first["session_id"]
