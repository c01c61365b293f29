"""What streaming redaction sends, through the official SDKs: a delta the
redactor had to hold back whole is left out, never sent empty, and the text
streamed is the redacted text."""
import pytest

from ctxproxy.proxy.scripted_provider import Reply

PIPELINE = '[pipeline]\nrequest = ["identify", "redact"]\n'
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
TEXT = f"Deploy with {GHP} now, thanks."
MSG = [{"role": "user", "content": "how do I deploy?"}]


async def anthropic_deltas(proxy) -> list[str]:
    async with proxy.anthropic().messages.stream(model="claude-x", max_tokens=100, messages=MSG) as s:
        return [e.delta.text async for e in s if e.type == "content_block_delta" and e.delta.type == "text_delta"]


async def chat_deltas(proxy) -> list[str]:
    stream = await proxy.openai().chat.completions.create(model="gpt-x", messages=MSG, stream=True)
    out = []
    async for chunk in stream:
        for c in chunk.choices:
            if c.delta.content is not None and c.delta.role is None:
                out.append(c.delta.content)
    return out


async def responses_deltas(proxy) -> list[str]:
    async with proxy.openai().responses.stream(model="gpt-x", input="how do I deploy?") as s:
        return [e.delta async for e in s if e.type == "response.output_text.delta"]


@pytest.mark.parametrize("deltas", [anthropic_deltas, chat_deltas, responses_deltas],
                         ids=["anthropic", "chat", "responses"])
async def test_held_deltas_are_left_out_not_sent_empty(make_proxy, fake, deltas):
    proxy = await make_proxy(PIPELINE)
    fake.script(Reply.text(TEXT, delta_chars=3))  # many deltas fall inside the token
    got = await deltas(proxy)
    assert "" not in got
    text = "".join(got)
    assert GHP not in text and text.startswith("Deploy with [REDACTED:github-pat:") and text.endswith(" now, thanks.")
    assert len(got) < len(TEXT) // 3  # the token's deltas did not go out one by one
