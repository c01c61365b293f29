"""What streaming redaction sends, through the official SDKs: a delta the
redactor had to hold back whole is left out, never sent empty, and the text
streamed is the redacted text."""
import pytest

from ctxproxy.proxy.scripted_provider import Reply

PIPELINE = '[pipeline]\nrequest = ["identify", "redact"]\n'
# The defaults, but every delta its own event even when several come in one read
# (tests/proxy/test_stream_coalescing.py covers that): what is asserted is the redactor's hold-back.
UNCOALESCED = "[server]\ncoalesce_deltas = false\n"
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


# Seven characters a delta (delta_chars=7); 11 of the 16 deltas end in a word or part of one
# ("Here is", " the th", " make i"...), none of which can begin a secret of a default rule.
PROSE = "Here is the thing, here are the steps: run make install, then move it in your main unit; it works fine now."
TF = "QnbSxjjhVMHJgw.atlasv1.gxZnWIjI5j752DGqdwEUVLOFf0mtyaQ00H9bA1j90qWb254lEkQyOdfqqcq9zZL7Sm0"
AZ = "abc8Q~defghijklmnopqrstuvwxyz-_.~0123456"


@pytest.mark.parametrize("deltas", [anthropic_deltas, chat_deltas, responses_deltas],
                         ids=["anthropic", "chat", "responses"])
async def test_prose_deltas_reach_the_client_as_the_provider_cut_them(make_proxy, fake, deltas):
    """The embedded default configuration (its whole pipeline, the default redaction
    profile) with coalescing off: every delta of plain prose goes out with the event
    that brought it, none held for the next one or merged into it, the first included."""
    proxy = await make_proxy(UNCOALESCED)
    fake.script(Reply.text(PROSE, delta_chars=7))
    provider_deltas = [PROSE[i:i + 7] for i in range(0, len(PROSE), 7)]
    assert sum(d[-1].isalpha() for d in provider_deltas) == 11
    assert await deltas(proxy) == provider_deltas


@pytest.mark.parametrize("deltas", [anthropic_deltas, chat_deltas, responses_deltas],
                         ids=["anthropic", "chat", "responses"])
async def test_secrets_split_across_deltas_are_still_redacted(make_proxy, fake, deltas):
    """Terraform and Azure AD secrets, which the stream no longer waits for at every
    word, cut into 5-character deltas: the public part goes out, the secret never."""
    proxy = await make_proxy(UNCOALESCED)
    fake.script(Reply.text(f"Use {TF} or {AZ} now.", delta_chars=5))
    got = await deltas(proxy)
    assert "" not in got
    text = "".join(got)
    assert TF.split(".atlasv1.")[1] not in text and AZ.split("Q~")[1] not in text
    assert text.startswith("Use QnbSxjjhVMHJgw.atlasv1.[REDACTED:terraform-cloud-token:")
    assert " or abc8Q~[REDACTED:azure-ad-client-secret:" in text and text.endswith("] now.")
    assert got[:2] == ["Use Q", "nbSxj"]  # before the ".atlasv1." nothing waits
