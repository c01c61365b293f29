"""A turn leaves nothing for the garbage collector: every object it makes is
freed by reference counting when the turn ends. A reference cycle through a
request view keeps the whole parsed body alive until a collection finds it —
megabytes for a long conversation, and collections that scan it."""
import asyncio
import gc

import aiohttp
import orjson
import pytest

from ctxproxy.proxy.scripted_provider import Reply

TOOL_TURN = {  # the default pipeline's every filter has work: a tool result, a secret, history
    "model": "claude-test-1", "max_tokens": 100,
    "system": [{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "deploy it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_g1", "name": "Bash",
                                           "input": {"command": "make deploy"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_g1",
                                      "content": "deployed with AKIAIOSFODNN7EXAMPLE"}]},
    ],
}


def _ours(objects: list) -> list:
    """The garbage objects that ctxproxy's own code made (not the test's or a library's)."""
    out = []
    for o in objects:
        module = getattr(o, "__module__", None) if callable(o) else type(o).__module__
        if isinstance(module, str) and module.startswith("ctxproxy"):
            out.append(o)
    return out


@pytest.mark.parametrize("stream", [False, True])
async def test_a_turn_leaves_no_reference_cycles(make_proxy, fake, stream):
    p = await make_proxy()  # the embedded defaults: all six filters
    body = orjson.dumps(dict(TOOL_TURN, stream=stream))
    headers = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json",
               "X-Ctx-Session": "sess-gc"}
    async with aiohttp.ClientSession() as http:
        async def turn():
            fake.script(Reply.tool_call("Bash", {"command": "make status"}))
            async with http.post(p.url + "/v1/messages", data=body, headers=headers) as r:
                assert r.status == 200
                await r.read()

        for _ in range(3):  # warm: caches, pools and lazily made objects are in place
            await turn()
        p.state.services["writer"].flush()
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(3):
                await turn()
            p.state.services["writer"].flush()
            await asyncio.sleep(0.05)  # the turns' bookkeeping after the answer
            gc.collect()
            leaked = _ours(gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert leaked == [], sorted({type(o).__qualname__ if not callable(o) else o.__qualname__ for o in leaked})
