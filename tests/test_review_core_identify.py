"""Review: identify through the proxy — a ``sessionId=`` that is not OpenClaw's
runtime line joins no sessions, long first turns that differ only at the end
are two sessions, a Responses ``conversation`` is the session."""
import aiohttp
import pytest

from ctxproxy.proxy.scripted_provider import Reply

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
    a2 = await chat_turn(idproxy, first_a + [{"role": "assistant", "content": "A keep-alive timeout."},
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
    fingerprint is of the conversation's opening, which later turns keep."""
    opening = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "list the files"}]
    first = await chat_turn(idproxy, opening)
    later = await chat_turn(idproxy, opening + [{"role": "assistant", "content": "a.py b.py"},
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
    (session,) = {s for (tenant, rid), s in identify._chains.items() if rid == first.id}
    await client.responses.create(model="m", input="and then?", previous_response_id=first.id)
    assert list(identify._chains.values()) == [session, session]


@pytest.mark.parametrize("stream", [False, True])
async def test_the_chain_is_known_before_the_client_has_the_answer(idproxy, monkeypatch, stream):
    """A client that sends its next turn the moment it has the answer — while
    the proxy is still at the turn's bookkeeping — still continues its session:
    the response id is remembered when it is seen, not at the turn's end."""
    import asyncio

    from ctxproxy.proxy.engine import Engine

    original = Engine.finish_turn
    late = []

    def end_later(turn, pipeline):  # the bookkeeping of every turn runs 0.3 s late
        late.append(asyncio.get_running_loop().call_later(0.3, original, turn, pipeline))

    monkeypatch.setattr(Engine, "finish_turn", staticmethod(end_later))
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
    await asyncio.sleep(0.5)  # both turns' bookkeeping (and manifests) done
    first, second = [await session_of(idproxy, t) for t in turn_ids]
    assert second["identity_source"] == "chain:previous_response_id"
    assert second["session_id"] == first["session_id"]
