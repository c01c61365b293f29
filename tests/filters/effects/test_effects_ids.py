"""Call ids that are not unique, through the proxy with the OpenAI SDK: Kimi K2
numbers tool calls per response (``functions.exec:0`` in every turn of every
session). A reused id must neither settle another session's call nor merge a
repeated side effect into the first."""
import orjson

from ctxproxy.proxy.scripted_provider import Reply

TOML = """
[pipeline]
request = ["identify", "effects", "inject"]
"""
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "exec", "description": "run", "parameters": SCHEMA}}]
KIMI = "functions.exec:0"
PR = {"command": "gh pr create --fill"}
PULL = "https://github.com/acme/app/pull/{}"


def call_message(call_id: str, args: dict) -> dict:
    """An assistant turn holding one exec call, as a chat client sends it back."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "exec", "arguments": orjson.dumps(args).decode()}}]}


def result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


async def turn(client, messages):
    """One model call; returns the assistant message as the client keeps it."""
    resp = await client.chat.completions.create(model="kimi-k2", messages=messages, tools=TOOLS)
    return resp.choices[0].message.model_dump(exclude_none=True)


async def test_a_repeated_call_with_a_reused_id_is_a_second_effect_and_a_duplicate(make_proxy, fake):
    p = await make_proxy(TOML)
    client = p.openai(default_headers={"X-Ctx-Session": "kimi-1"})
    fake.script(Reply.tool_call("exec", PR, call_id=KIMI), Reply.tool_call("exec", PR, call_id=KIMI),
                Reply.text("two PRs, oops"), Reply.text("ok"))
    messages = [{"role": "user", "content": "open the PR"}]
    messages += [await turn(client, messages), result(KIMI, "Created " + PULL.format(1))]
    again = await turn(client, messages)  # the model opens the PR again, under the same id
    assert again["tool_calls"][0]["id"] == KIMI
    messages += [again, result(KIMI, "Created " + PULL.format(2))]
    await turn(client, messages)
    # the repeat was noted to the model with the first one's reference
    body = orjson.dumps(fake.last.json).decode()
    assert "repeated side effects that had already completed" in body and PULL.format(1) in body
    store = p.settled_store()
    first, second = store.effects.list("default", session="kimi-1")
    assert (first.call_id, first.state, first.refs) == (KIMI, "completed", (PULL.format(1),))
    assert (second.state, second.refs) == ("completed", (PULL.format(2),))
    assert second.key == first.key and second.call_id != KIMI and KIMI in second.aliases
    assert store.effects.by_call_id("default", KIMI).refs == (PULL.format(2),)  # the newest occurrence
    # after a compaction the checkpoint lists both PRs
    await turn(client, [{"role": "user", "content": "Summary of earlier work: PR opened. Go on."}])
    body = orjson.dumps(fake.last.json).decode()
    assert PULL.format(1) in body and PULL.format(2) in body


async def test_another_sessions_result_under_the_same_id_is_its_own_effect(make_proxy, fake):
    """Session A's call waits for its result; session B (whose call the proxy
    never saw: it was put in front of B mid-session) sends a result under the
    same id. B's call is recorded in B, and A's result still settles A's."""
    p = await make_proxy(TOML)
    a = p.openai(default_headers={"X-Ctx-Session": "kimi-a"})
    b = p.openai(default_headers={"X-Ctx-Session": "kimi-b"})
    fake.script(Reply.tool_call("exec", PR, call_id=KIMI), Reply.text("ok"), Reply.text("ok"))
    ask = [{"role": "user", "content": "open the PR"}]
    call_a = await turn(a, ask)
    p.settled_store()
    rm = {"command": "rm -rf build"}
    await turn(b, ask + [call_message(KIMI, rm), result(KIMI, "removed build/")])
    await turn(a, ask + [call_a, result(KIMI, "Created " + PULL.format(1))])
    store = p.settled_store()
    (rec_a,) = store.effects.list("default", session="kimi-a")
    (rec_b,) = store.effects.list("default", session="kimi-b")
    assert (rec_a.args_canonical, rec_a.state, rec_a.refs) == (orjson.dumps(PR).decode(), "completed",
                                                               (PULL.format(1),))
    assert (rec_b.args_canonical, rec_b.state, rec_b.excerpt) == (orjson.dumps(rm).decode(), "completed",
                                                                  "removed build/")


async def test_a_session_resumed_under_a_new_id_settles_its_open_call(make_proxy, fake):
    """What the tenant-wide match is for: the same call (id, tool, arguments)
    answered after the client's session id changed settles the open record,
    and is not recorded a second time."""
    p = await make_proxy(TOML)
    fake.script(Reply.tool_call("exec", {"command": "make deploy"}, call_id="call_resume_0123456789"),
                Reply.text("deployed"))
    ask = [{"role": "user", "content": "deploy"}]
    call = await turn(p.openai(default_headers={"X-Ctx-Session": "before"}), ask)
    p.settled_store()
    resumed = p.openai(default_headers={"X-Ctx-Session": "after"})
    await turn(resumed, ask + [call, result("call_resume_0123456789", "deployed v7")])
    store = p.settled_store()
    (rec,) = store.effects.list("default")
    assert (rec.session, rec.state, rec.excerpt) == ("before", "completed", "deployed v7")


async def test_a_settled_call_of_another_session_of_the_task_keeps_its_result(make_proxy, fake):
    """Two sessions of one task (one key for one command) both open a PR under
    the same id; the proxy never saw B's call. B's result is B's own record,
    and A's completed record keeps its reference."""
    p = await make_proxy(TOML)
    a = p.openai(default_headers={"X-Ctx-Session": "kimi-a", "X-Ctx-Task": "release"})
    b = p.openai(default_headers={"X-Ctx-Session": "kimi-b", "X-Ctx-Task": "release"})
    fake.script(Reply.tool_call("exec", PR, call_id=KIMI), Reply.text("ok"), Reply.text("ok"))
    ask = [{"role": "user", "content": "open the PR"}]
    await turn(a, ask + [await turn(a, ask), result(KIMI, "Created " + PULL.format(1))])
    await turn(b, ask + [call_message(KIMI, PR), result(KIMI, "Created " + PULL.format(2))])
    store = p.settled_store()
    (rec_a,) = store.effects.list("default", session="kimi-a")
    (rec_b,) = store.effects.list("default", session="kimi-b")
    assert rec_a.key == rec_b.key and rec_a.call_id == KIMI and KIMI in rec_b.aliases
    assert (rec_a.refs, rec_b.refs) == ((PULL.format(1),), (PULL.format(2),))
    assert rec_b.state == "completed" and rec_b.task == "release"


async def test_a_call_settled_before_its_response_is_recorded_stays_completed(make_proxy, fake, monkeypatch):
    """The client can send a call's result before the proxy that served the
    call has recorded it: another proxy on the same data dir (or ``--workers``)
    takes the next request while this one is still at its response end. The
    late record is the same call, not a repeat of a settled one: it neither
    becomes a second (pending, then ``unknown``) record nor hides the result."""
    from latecalls import LateCalls

    from ctxproxy.filters.effects.filter import EffectsFilter

    original = EffectsFilter.on_response_end
    late = LateCalls(original, 0.3)  # this proxy reaches its response end after the next request is settled
    monkeypatch.setattr(EffectsFilter, "on_response_end", late.patch())
    p = await make_proxy(TOML)
    client = p.openai(default_headers={"X-Ctx-Session": "quick-client"})
    fake.script(Reply.tool_call("exec", PR, call_id="call_quick_0123456789"),
                Reply.tool_call("exec", {"command": "gh pr merge"}, call_id="call_merge_0123456789"),
                Reply.text("done"))
    messages = [{"role": "user", "content": "open the PR and merge it"}]
    messages += [await turn(client, messages), result("call_quick_0123456789", "Created " + PULL.format(7))]
    messages += [await turn(client, messages), result("call_merge_0123456789", "Merged " + PULL.format(7))]
    await late.until_ran(2)  # both late response ends ran
    monkeypatch.setattr(EffectsFilter, "on_response_end", original)
    await turn(client, messages)
    store = p.settled_store()
    recs = store.effects.list("default", session="quick-client")
    assert sorted((r.call_id, r.state) for r in recs) == [("call_merge_0123456789", "completed"),
                                                          ("call_quick_0123456789", "completed")]
    assert store.effects.by_call_id("default", "call_quick_0123456789").refs == (PULL.format(7),)
