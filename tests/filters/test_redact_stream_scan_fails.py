"""The stream hold-back's Hyperscan scan failing in an answer, through the real proxy and the
official SDKs: the answer fails closed (the client gets an error, not the rest of the answer),
and no part of the secrets the redactor was holding back reaches the client."""
import anthropic
import openai
import pytest

from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store.services.redaction import engine, hold_scan

GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
PEM = ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oW5WgNeO7Z4EoAoGCCqGSM49\n"
       "AwEHoUQDQgAEWNAp0a3gV9bGfvsP3u8lAf5XfZnJv3fXb1Gx8kqZMF+gnXkhV2Q1\n-----END EC PRIVATE KEY-----")
TEXT = ("Résumé: the naïve café — 東京 😀 — then the deploy key is below, keep it safe:\n" + PEM
        + "\nand the token " + GHP + " goes in the vault.")
MSG = [{"role": "user", "content": "how do I deploy?"}]


async def anthropic_text(proxy, out: list[str]) -> None:
    async with proxy.anthropic().messages.stream(model="claude-x", max_tokens=100, messages=MSG) as s:
        async for e in s:
            if e.type == "content_block_delta" and e.delta.type == "text_delta":
                out.append(e.delta.text)


async def chat_text(proxy, out: list[str]) -> None:
    stream = await proxy.openai().chat.completions.create(model="gpt-x", messages=MSG, stream=True)
    async for chunk in stream:
        out.extend(c.delta.content or "" for c in chunk.choices)


@pytest.mark.parametrize("read", [anthropic_text, chat_text], ids=["anthropic", "chat"])
async def test_a_scan_that_raises_mid_stream_fails_it_closed(make_proxy, fake, monkeypatch, read):
    if not engine.prefilter.hyperscan_available():
        pytest.skip("needs hyperscan")
    proxy = await make_proxy("[server]\ncoalesce_deltas = false\n")
    monkeypatch.setattr(engine, "SCAN_MIN", 0)  # the scan at every search of the hold-back
    scans = []

    real = hold_scan.SpacedScan.first

    def broken(self, text, pos, tail, encode):  # fails from the first search that reaches the key
        scans.append(text)
        if "BEGIN" not in text:
            return real(self, text, pos, tail, encode)
        raise hold_scan._hs.error("scan failed")

    monkeypatch.setattr(hold_scan.SpacedScan, "first", broken)
    fake.script(Reply.text(TEXT, delta_chars=7))
    got: list[str] = []
    with pytest.raises((anthropic.APIError, openai.APIError)):
        await read(proxy, got)
    seen = "".join(got)
    assert any("BEGIN" in t for t in scans)  # the scan was reached at the key, and raised
    assert GHP[:8] not in seen and "MHcCAQ" not in seen and not seen.endswith("vault.")
