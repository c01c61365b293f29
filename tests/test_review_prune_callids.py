"""prune review: through the proxy (OpenAI SDK -> ctxproxy -> fake provider).

1. A client that reuses tool call ids (``call_0`` every turn, as some
   OpenAI-compatible servers emit) must not have its newest, unseen tool
   output replaced by a stub because an old output under the same id was
   pruned.
2. A ``cache_control`` breakpoint on a Chat ``tool`` message's text part
   (OpenRouter passes them on to Anthropic models) must survive: such a result
   is not rewritten, as on Anthropic.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from toolsession import canned, results_of, tool_outputs  # noqa: E402

from ctxproxy.filters.prune import REF_PREFIX  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply  # noqa: E402

PRUNE_TOML = """
[pipeline]
request = ["identify", "prune"]

[filters.prune]
trigger_tokens = 8000
target_ratio = 0.5
keep_recent = 3
min_tokens = 100
"""
OUTS = tool_outputs(40, seed=3, scale=0.5)
HEADERS = {"X-Ctx-Session": "review-prune"}


async def send(client, body):
    return await client.chat.completions.create(extra_headers=HEADERS, **body)


async def test_reused_call_id_does_not_stub_the_newest_result(make_proxy, fake):
    proxy = await make_proxy(PRUNE_TOML)
    fake.script(Reply.text("one"), Reply.text("two"))
    client = proxy.openai()
    first = canned("chat", OUTS, 30)
    await send(client, first)
    got = results_of("chat", fake.model_requests[-1].json)
    pruned = [c for c, t in got.items() if REF_PREFIX in t]
    assert pruned, "the first turn should prune a batch"
    # next turn: the model's new call reuses the id of a pruned call (its output is new, unseen)
    second = canned("chat", OUTS, 31)
    newest = list(results_of("chat", second))[-1]
    reused = pruned[0]
    for m in second["messages"]:
        if m.get("role") == "tool" and m.get("tool_call_id") == newest:
            m["tool_call_id"] = reused
        for tc in m.get("tool_calls") or ():
            if tc["id"] == newest:
                tc["id"] = reused
    sent_last = second["messages"][-1]
    assert sent_last["role"] == "tool" and sent_last["tool_call_id"] == reused
    await send(client, second)
    fwd_last = fake.model_requests[-1].json["messages"][-1]
    assert fwd_last["content"] == sent_last["content"], "the newest tool output was replaced by a stub"
    # the old output under that id is still pruned the same way
    old = [m for m in fake.model_requests[-1].json["messages"] if m.get("tool_call_id") == reused][0]
    assert old["content"] == got[reused]


async def test_chat_tool_part_cache_breakpoint_survives(make_proxy, fake):
    proxy = await make_proxy(PRUNE_TOML)
    fake.script(Reply.text("one"))
    body = canned("chat", OUTS, 30)
    tool_msgs = [m for m in body["messages"] if m.get("role") == "tool"]
    marked = tool_msgs[0]
    marked["content"] = [{"type": "text", "text": marked["content"], "cache_control": {"type": "ephemeral"}}]
    await send(proxy.openai(), body)
    fwd = fake.model_requests[-1].json["messages"]
    got = [m for m in fwd if m.get("tool_call_id") == marked["tool_call_id"]][0]
    assert got["content"] == marked["content"]  # breakpoint and text as sent
    assert any(REF_PREFIX in str(m.get("content")) for m in fwd if m.get("role") == "tool")  # others pruned
