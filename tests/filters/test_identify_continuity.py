"""identify by continuity: with no session id, a conversation is what its history continues.

Two runs of the same one-line job (a scheduled "deploy the service to
staging") open alike. Each is its own session, whatever the API and the key:
the second is never told the first one's deploy is done, nor that its own
deploy repeats it. A continued conversation keeps its session across turns
and across a restart of the proxy on the same data dir. Driven through the
official SDKs against the scripted provider."""
from __future__ import annotations

import inspect
import json

import aiohttp
import pytest

from ctxproxy.proxy.scripted_provider import Reply

TOKEN = "admin-continuity-token"
JOB = "deploy the service to staging"
DEPLOY = {"command": "./deploy.sh staging"}
DEPLOYED = "Deployed refund-service v1.4.2 to staging\nhttps://deploy.example.com/runs/8841\n"
# What the effect ledger tells a model about done side effects, in any of its forms.
LEDGER_WORDS = ("do not repeat", "already done", "repeated side effects")


@pytest.fixture
def admin(monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)


async def manifest(proxy, turn_id: str) -> dict:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as s:
        async with s.get(f"{proxy.url}/ctx/v1/manifests/{turn_id}",
                         headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            assert r.status == 200
            return await r.json()


class Run:
    """One run of the job through one SDK: the deploy call, its result, the last answer."""

    def __init__(self, proxy, fake, api: str, key: str):
        self.proxy, self.fake, self.api, self.key = proxy, fake, api, key
        self.turns: list[str] = []  # turn ids
        self.sent: list[dict] = []  # what reached the provider, per turn

    async def _call(self, **kw):
        before = len(self.fake.model_requests)
        if self.api == "anthropic":
            client = self.proxy.anthropic(api_key=self.key)
            raw = await client.messages.with_raw_response.create(
                model="claude-test", max_tokens=256, tools=[{"name": "Bash", "description": "run a command",
                                                             "input_schema": {"type": "object"}}], **kw)
        elif self.api == "chat":
            client = self.proxy.openai(api_key=self.key)
            raw = await client.chat.completions.with_raw_response.create(
                model="gpt-test", tools=[{"type": "function", "function": {
                    "name": "Bash", "description": "run a command", "parameters": {"type": "object"}}}], **kw)
        else:
            client = self.proxy.openai(api_key=self.key)
            raw = await client.responses.with_raw_response.create(
                model="gpt-test", tools=[{"type": "function", "name": "Bash", "description": "run a command",
                                          "parameters": {"type": "object"}}], **kw)
        self.turns.append(raw.headers["x-ctx-turn-id"])
        self.sent.append(self.fake.model_requests[before].json)
        parsed = raw.parse()
        return await parsed if inspect.isawaitable(parsed) else parsed  # anthropic: a coroutine

    async def go(self) -> None:
        """The job: ask, run the deploy the model calls, read its answer."""
        self.fake.script(Reply.tool_call("Bash", DEPLOY), Reply.text("Deployed to staging."))
        if self.api == "anthropic":
            history: list = [{"role": "user", "content": JOB}]
            msg = await self._call(messages=history)
            (call,) = [b for b in msg.content if b.type == "tool_use"]
            history += [{"role": "assistant", "content": msg.content},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                      "content": DEPLOYED}]}]
            self.last = await self._call(messages=history)
        elif self.api == "chat":
            history = [{"role": "user", "content": JOB}]
            msg = (await self._call(messages=history)).choices[0].message
            history += [msg, {"role": "tool", "tool_call_id": msg.tool_calls[0].id, "content": DEPLOYED}]
            self.last = await self._call(messages=history)
        else:
            history = [{"role": "user", "content": JOB}]
            resp = await self._call(input=history)
            (call,) = [o for o in resp.output if o.type == "function_call"]
            history += [*resp.output, {"type": "function_call_output", "call_id": call.call_id, "output": DEPLOYED}]
            self.last = await self._call(input=history)
        self.history = history


def ledger_text(body: dict) -> list[str]:
    text = json.dumps(body)
    return [w for w in LEDGER_WORDS if w in text]


async def test_two_runs_of_one_job_are_two_sessions_whatever_the_api_and_key(make_proxy, fake, admin):
    proxy = await make_proxy()
    runs = [Run(proxy, fake, "anthropic", "sk-ant-first-run"), Run(proxy, fake, "chat", "sk-second-run"),
            Run(proxy, fake, "responses", "sk-third-run")]
    for run in runs:
        await run.go()
    sessions = []
    for run in runs:
        m = [await manifest(proxy, t) for t in run.turns]
        # nothing of an earlier run's deploy: no ledger, no note, no compaction
        for n, (body, x) in enumerate(zip(run.sent, m)):
            assert ledger_text(body) == [], run.api
            assert json.dumps(body).count("runs/8841") == n, run.api  # its own result only
            assert not x["compacted"] and not x["client_compacted"], run.api
            assert not any(e["duplicate"] for e in x["effects"]), run.api
            assert x["checkpoint"] is None and not (x.get("task_state") or {}).get("compacted"), run.api
        sessions.append([(x["session_id"], x["identity_source"]) for x in m])
    assert [len({s for s, _ in m}) for m in sessions] == [1, 1, 1], "a run's turns are one session"
    assert len({m[0][0] for m in sessions}) == 3
    assert [[source for _, source in m] for m in sessions] == [["new", "continuity"]] * 3


async def test_a_conversation_keeps_its_session_across_a_restart(make_proxy, fake, admin, tmp_path):
    first = await make_proxy(data_dir=str(tmp_path / "data"))
    run = Run(first, fake, "anthropic", "sk-ant-test")
    await run.go()
    before = [(await manifest(first, t))["session_id"] for t in run.turns]
    await first.runner.cleanup()  # the proxy stops; its store is closed

    second = await make_proxy(data_dir=str(tmp_path / "data"))
    run.proxy = second
    fake.script(Reply.text("The deploy is live."))
    history = [{"role": "user", "content": JOB}]
    msg = await run._call(messages=history)  # a new run of the job: a session of its own
    assert (await manifest(second, run.turns[-1]))["identity_source"] == "new"
    # the first run goes on: its history continues what the first proxy relayed
    rebuilt = run.history + [{"role": "assistant", "content": run.last.content},
                             {"role": "user", "content": "Is it live?"}]
    fake.script(Reply.text("Yes."))
    await run._call(messages=rebuilt)
    after = await manifest(second, run.turns[-1])
    assert after["identity_source"] == "continuity"
    assert after["session_id"] == before[0] == before[1]
    assert msg.content[0].text == "The deploy is live."


LONG_ANSWER = ("Deployed to staging: the health checks pass, the canary took 5% of the traffic for ten minutes "
               "without errors, and the dashboards show the latency back under 120 ms. Next I will write the "
               "release notes.")


@pytest.mark.parametrize("shape", ["hermes", "summary-then-answer"])
async def test_a_compacted_history_continues_its_session_and_its_ledger(make_proxy, fake, admin, shape):
    """A compaction keeps the conversation: Hermes keeps the head and the newest exchange around its summary;
    another client keeps only a summary and the newest answer (Claude Code's shape, without its session id).
    The session goes on, the manifest says the client compacted, and the model is told the deploy is done."""
    proxy = await make_proxy()
    client = proxy.openai()
    tools = [{"type": "function", "function": {"name": "Bash", "description": "run", "parameters": {"type": "object"}}}]
    history: list = [{"role": "system", "content": "You are the release agent."}, {"role": "user", "content": JOB}]
    fake.script(Reply.tool_call("Bash", DEPLOY), Reply.text(LONG_ANSWER), Reply.text("ok"))
    turns = []

    async def send(messages):
        before = len(fake.model_requests)
        raw = await client.chat.completions.with_raw_response.create(model="gpt-test", tools=tools, messages=messages)
        turns.append(raw.headers["x-ctx-turn-id"])
        return raw.parse().choices[0].message, fake.model_requests[before].json

    msg, _ = await send(history)
    history += [msg.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": msg.tool_calls[0].id, "content": DEPLOYED}]
    msg, _ = await send(history)
    history.append({"role": "assistant", "content": msg.content})
    summary = "The user asked to deploy the service to staging; it was deployed (run 8841)."
    if shape == "hermes":
        compacted = history[:2] + [
            {"role": "assistant", "content": f"[CONTEXT COMPACTION - REFERENCE ONLY] Earlier turns were compacted "
                                             f"into this summary.\n{summary}"},
            {"role": "user", "content": "status?"}, {"role": "assistant", "content": msg.content}]
    else:
        compacted = [history[0], {"role": "user", "content": "This session is being continued from a previous "
                                                             f"conversation that ran out of context.\n\n{summary}"},
                     {"role": "assistant", "content": msg.content}]
    _, sent = await send(compacted + [{"role": "user", "content": "continue"}])
    m = [await manifest(proxy, t) for t in turns]
    assert [x["identity_source"] for x in m] == ["new", "continuity", "continuity"]
    assert len({x["session_id"] for x in m}) == 1
    assert m[-1]["compacted"] and m[-1]["client_compacted"]
    text = json.dumps(sent)
    assert "do not repeat" in text and "deploy.sh staging" in text  # the deploy, told as done


def test_no_user_continues_another_users_conversation():
    """In keys mode a user's sessions are ``<user>/<id>``: a history that continues another user's answer (or
    a key without a user continuing a user's) is that caller's own conversation, not the other's."""
    from types import SimpleNamespace

    import orjson
    from multidict import CIMultiDict

    from ctxproxy.filters import continuity
    from ctxproxy.filters.identify import IdentifyConfig, identify
    from ctxproxy.proxy.adapters import ADAPTERS

    view = ADAPTERS["chat"].parse_request(orjson.dumps({"model": "m", "messages": [
        {"role": "user", "content": JOB}, {"role": "assistant", "content": "Deployed."},
        {"role": "user", "content": "thanks"}]}))
    links = continuity.Links()
    for link in continuity.run_links(view, 1, 1):
        links._remember("acme", link, "alice/cv-0123")

    def as_user(user):
        principal = SimpleNamespace(tenant="acme", user=user, projects=(), purposes=(), key_id="k1")
        return identify(CIMultiDict(), view, IdentifyConfig(), "", links, None, principal)

    assert (as_user("alice").session, as_user("alice").source) == ("alice/cv-0123", "continuity")
    assert as_user("bob").source == "fingerprint" and as_user("bob").session.startswith("bob/fp-")
    assert as_user("").source == "fingerprint"
