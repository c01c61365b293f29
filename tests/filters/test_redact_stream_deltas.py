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


# Rules whose secret is their whole match with no literal prefix: while they are on, a word
# ending a delta may be the start of one (tests/filters/redaction/test_redaction_stream.py: WORD_RULES).
WORD_RULES = ("terraform-cloud-token", "azure-ad-client-secret", "mailchimp-api-key", "telegram-bot-token")
# Seven characters a delta (delta_chars=7), four of them ending in a word ("make", "our"...).
PROSE = "So make, then run our docs. Page 12 builds fine, no more words."


async def test_prose_deltas_reach_the_client_as_the_provider_cut_them(make_proxy, fake):
    """Redaction on, with the rules a plain word can begin disabled: every delta
    of plain prose goes out with the event that brought it, none merged into a
    later one, the first included."""
    quiet = ', '.join(f'"{r}"' for r in WORD_RULES)
    proxy = await make_proxy(PIPELINE + f"\n[filters.redact.profiles.default]\ndisabled_rules = [{quiet}]\n")
    plain = await make_proxy('[pipeline]\nrequest = ["identify"]\n')
    for deltas in (anthropic_deltas, chat_deltas, responses_deltas):
        fake.script(Reply.text(PROSE, delta_chars=7), Reply.text(PROSE, delta_chars=7))
        assert await deltas(proxy) == await deltas(plain), deltas.__name__
