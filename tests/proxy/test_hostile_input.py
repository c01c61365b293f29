"""Hostile input: arbitrary bodies, headers and paths never get a 500 of ours."""
import asyncio

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ctxproxy.proxy.scripted_provider import FakeProvider

PATHS = ["/v1/messages", "/v1/messages?beta=true", "/v1/chat/completions", "/v1/responses",
         "/v1/messages/count_tokens", "/v1/models", "/api/v1/models", "/", "/ctx/healthz", "/ctx/v1/status",
         "/%ff%fe", "/v1/../../etc/passwd", "/openrouter/v1/chat/completions"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)
shaped = st.fixed_dictionaries({
    "model": st.one_of(st.text(max_size=10), st.integers(), st.none()),
    "messages": st.lists(st.fixed_dictionaries({
        "role": st.sampled_from(["user", "assistant", "system", "tool", "developer", "x"]),
        "content": st.one_of(st.text(max_size=20), st.lists(st.fixed_dictionaries({
            "type": st.sampled_from(["text", "tool_use", "tool_result", "image", "thinking", "input_text", "zz"]),
            "text": json_values, "content": json_values, "input": json_values}), max_size=3), json_values),
        "tool_calls": st.lists(st.fixed_dictionaries({"id": json_values, "function": json_values}), max_size=2),
    }), max_size=4),
    "input": json_values, "stream": st.sampled_from([False, None, "yes", 1]), "system": json_values,
    "metadata": json_values,
})


def encode(value) -> bytes:
    import json
    return json.dumps(value).encode()  # big ints and lone surrogates included, as hostile clients send


bodies = st.one_of(st.binary(max_size=300), json_values.map(encode), shaped.map(encode))
header_values = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
headers = st.dictionaries(
    st.sampled_from(["x-ctx-tenant", "x-ctx-session", "x-claude-code-session-id", "session-id", "anthropic-version",
                     "x-api-key", "authorization", "content-type", "x-codex-turn-metadata", "user-agent",
                     "accept-encoding", "upgrade", "x-ctx-task"]), header_values, max_size=5)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """One fake provider + proxy for the whole module, on a private loop thread."""
    import threading

    from aiohttp import web

    from ctxproxy.config import load_config
    from ctxproxy.proxy.edge.server import make_app

    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box = {}

    async def start():
        fp = await FakeProvider().start()
        cfg = load_config(None, anthropic_upstream=fp.url, openai_upstream=fp.url,
                          data_dir=str(tmp_path_factory.mktemp("fuzz")))
        runner = web.AppRunner(make_app(cfg), handler_cancellation=True)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        box.update(fp=fp, runner=runner, url=f"http://{host}:{port}", session=aiohttp.ClientSession())

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        ready.set()
        loop.run_forever()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    ready.wait(30)
    box["loop"] = loop
    yield box

    async def stop():
        await box["session"].close()
        await box["runner"].cleanup()
        await box["fp"].stop()

    asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    t.join(10)


def send(stack, method, path, body, hdrs):
    async def go():
        async with stack["session"].request(method, stack["url"] + path, data=body, headers=hdrs) as r:
            data = await r.read()
            return r.status, data, r.headers

    return asyncio.run_coroutine_threadsafe(go(), stack["loop"]).result(30)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(method=st.sampled_from(["POST", "GET", "PUT", "DELETE", "PATCH"]), path=st.sampled_from(PATHS),
       body=bodies, hdrs=headers)
def test_never_a_500_of_our_own(stack, method, path, body, hdrs):
    status, data, resp_headers = send(stack, method, path, body, hdrs)
    # 5xx may only come from the provider (the fake never sends one unprompted) or
    # name a cause (502/504); 500 would be a crash of ours.
    assert status != 500, data[:300]
    assert b"Traceback" not in data
    if status >= 400 and path.startswith(("/v1/messages", "/v1/chat", "/v1/responses")) and method == "POST":
        assert data[:1] == b"{"  # a JSON error in the caller's format


# -- lone surrogates: valid JSON, not valid Unicode, and a whole turn must still work ---------------

def _surrogate_bodies(api: str) -> dict:
    """A conversation whose user text, tool call, tool result and tool definition
    hold lone surrogates."""
    text, tool = "fix the build \ud800 please", "Bash\udfff"
    schema = {"type": "object", "properties": {"command": {"type": "string", "description": "a shell line \udfff"}}}
    if api == "anthropic":
        return {"model": "claude-test-1", "max_tokens": 64, "tools": [
            {"name": tool, "description": "runs \ud800", "input_schema": schema}], "messages": [
            {"role": "user", "content": text},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_\ud800", "name": tool,
                                               "input": {"command": "make \ud800"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_\ud800",
                                          "content": "error: \ud800 not found"}, {"type": "text", "text": text}]}]}
    if api == "chat":
        return {"model": "gpt-5", "tools": [{"type": "function", "function": {
            "name": tool, "description": "runs \ud800", "parameters": schema}}], "messages": [
            {"role": "user", "content": text},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_\ud800", "type": "function", "function": {
                "name": tool, "arguments": '{"command": "make \\ud800"}'}}]},
            {"role": "tool", "tool_call_id": "call_\ud800", "content": "error: \ud800 not found"},
            {"role": "user", "content": text}]}
    return {"model": "gpt-5", "tools": [{"type": "function", "name": tool, "description": "runs \ud800",
                                         "parameters": schema}], "input": [
        {"role": "user", "content": [{"type": "input_text", "text": text}]},
        {"type": "function_call", "call_id": "call_\ud800", "name": tool, "arguments": '{"command": "make \\ud800"}'},
        {"type": "function_call_output", "call_id": "call_\ud800", "output": "error: \ud800 not found"},
        {"role": "user", "content": [{"type": "input_text", "text": text}]}]}


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_lone_surrogates_go_through_every_filter_and_into_the_store(tmp_path, api):
    """Every filter of the default pipeline runs (none degraded, none failing the
    turn; prune's trigger is low enough that it counts the whole request, tool
    definitions included), and what the store keeps holds U+FFFD where UTF-8
    cannot hold them."""
    import json
    import sqlite3

    from apicalls import AUTH, PATHS, config
    from enginedriver import EngineDriver

    from ctxproxy.proxy.scripted_provider import Reply

    cfg = config(tmp_path, "[filters.prune]\ntrigger_tokens = 20\n")
    async with EngineDriver(cfg) as drive:
        for turn in range(2):  # the second finds the first's records
            drive.script(Reply.text("Done."))
            got = await drive.call("POST", PATHS[api], {**AUTH[api], "x-ctx-session": "odd-text"},
                                   json.dumps(_surrogate_bodies(api)).encode())
            assert got.status == 200, got.body
            assert got.turn.degraded == [], (turn, got.turn.degraded)
        drive.services["writer"].flush()
    with sqlite3.connect(tmp_path / "data" / "recall" / "sessions.db") as con:
        texts = [t for (t,) in con.execute("SELECT text FROM turns")]
    assert any("fix the build \ufffd please" in t for t in texts), texts
