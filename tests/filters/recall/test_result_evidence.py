"""Evidence recalled from a tool's output, through a real proxy, the official SDKs and a real
LMDB store: placed right after that output, the same bytes at the same place on every later
request (the prompt up to and past it unchanged: the provider's cache holds), never a memory
the caller may not see, and never again once the memory is forgotten."""
from __future__ import annotations

import json

import aiohttp
import pytest

from memhelp import put_memory

from ctxproxy.config import ConfigError
from ctxproxy.proxy.eval.prefix import prefix_kept

TOKEN = "result-evidence-admin"
FACT = "The mock S3 for local runs is localstack.internal:4566; set LOCALSTACK_HOST to it."
HIDDEN = "Bob's sandbox proxy answers on port 7719 only."
WORDS = "Run the uploads suite and fix whatever breaks."
OUTPUT = ("tests/integration/test_uploads.py::test_put_object FAILED\n"
          "E   botocore.exceptions.EndpointConnectionError: Could not connect to the endpoint URL: "
          "\"http://localhost:4566/\" (via proxy :7719)\n"
          + "".join(f"2026-12-01T07:{m:02d}:11Z DEBUG retry {m} of 30\n" for m in range(30))
          + "=========== 1 failed, 41 passed in 12.31s ===========")


def hdrs(session: str, user: str = "alice") -> dict:
    return {"X-Ctx-Tenant": "acme", "X-Ctx-User": user, "X-Ctx-Session": session}


@pytest.fixture
async def proxy(make_proxy, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy("")
    store = p.state.services["store"]
    p.fact = put_memory(store, "acme", FACT, kind="fact", user="alice")
    put_memory(store, "acme", HIDDEN, kind="fact", user="bob")  # another user's: never a candidate
    # in the session's frozen snapshot: on Chat a system message inject puts first (the items move)
    put_memory(store, "acme", "Alice prefers answers in one short paragraph.", kind="preference", user="alice")
    for i, text in enumerate(("Lunch is at noon on Fridays.", "The design team keeps the icons in Figma.",
                              "Quarterly planning happens in the first week of the quarter.")):
        put_memory(store, "acme", text, kind="fact", user="alice")
    return p


async def forget(proxy, memory_id: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.delete(f"{proxy.url}/ctx/v1/memories/{memory_id}?tenant=acme",
                               headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            assert r.status == 200, await r.text()


class Anthropic:
    api = "anthropic"

    def __init__(self, proxy, session):
        self.client = proxy.anthropic(default_headers=hdrs(session))
        self.messages = [{"role": "user", "content": WORDS}]

    def add_round(self, n: int, output: str) -> None:
        self.messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                                               "input": {"command": f"make test-{n}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output},
                                         {"type": "text", "text": "<system-reminder>keep going</system-reminder>",
                                          "cache_control": {"type": "ephemeral"}}]}]

    async def send(self) -> None:
        await self.client.messages.create(model="claude-test", max_tokens=32, messages=self.messages)

    @staticmethod
    def evidence_after(body: dict, n: int) -> str | None:
        """The text block right after tool result ``n`` (its message's next block)."""
        for msg in body["messages"]:
            content = msg["content"] if isinstance(msg["content"], list) else []
            for j, block in enumerate(content):
                if block.get("type") == "tool_result" and block["tool_use_id"] == f"toolu_{n}":
                    nxt = content[j + 1] if j + 1 < len(content) else {}
                    return nxt.get("text") if "<ctx-data" in nxt.get("text", "") else None
        return None

    @staticmethod
    def prefix(body: dict, n: int) -> str:
        """The request up to and with tool result ``n``'s message."""
        msgs = body["messages"]
        at = next(i for i, m in enumerate(msgs) if isinstance(m["content"], list) and any(
            b.get("tool_use_id") == f"toolu_{n}" for b in m["content"] if b.get("type") == "tool_result"))
        last = dict(msgs[at])
        # the caller's breakpoint moves to the newest message: the blocks before it are the prefix
        last["content"] = [{k: v for k, v in b.items() if k != "cache_control"} for b in last["content"]]
        return json.dumps([body.get("system"), body.get("tools"), msgs[:at], last])


class Chat:
    api = "chat"

    def __init__(self, proxy, session):
        self.client = proxy.openai(default_headers=hdrs(session))
        self.messages = [{"role": "user", "content": WORDS}]

    def add_round(self, n: int, output: str) -> None:
        self.messages += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{n}", "type": "function",
                 "function": {"name": "shell", "arguments": json.dumps({"cmd": f"make test-{n}"})}}]},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": output}]

    async def send(self) -> None:
        await self.client.chat.completions.create(model="gpt-test", messages=self.messages)

    @staticmethod
    def _at(body: dict, n: int) -> int:
        return next(i for i, m in enumerate(body["messages"]) if m.get("tool_call_id") == f"call_{n}")

    @classmethod
    def evidence_after(cls, body: dict, n: int) -> str | None:
        msgs = body["messages"]
        nxt = msgs[cls._at(body, n) + 1] if cls._at(body, n) + 1 < len(msgs) else {}
        return nxt.get("content") if nxt.get("role") == "user" and "<ctx-data" in str(nxt.get("content")) else None

    @classmethod
    def prefix(cls, body: dict, n: int) -> str:
        return json.dumps([body.get("tools"), body["messages"][:cls._at(body, n) + 1]])


class Responses:
    api = "responses"

    def __init__(self, proxy, session):
        self.client = proxy.openai(default_headers=hdrs(session))
        self.items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": WORDS}]}]

    def add_round(self, n: int, output: str) -> None:
        self.items += [{"type": "function_call", "call_id": f"call_{n}", "name": "shell",
                        "arguments": json.dumps({"cmd": f"make test-{n}"})},
                       {"type": "function_call_output", "call_id": f"call_{n}", "output": output}]

    async def send(self) -> None:
        await self.client.responses.create(model="gpt-test", input=self.items, store=False)

    @staticmethod
    def _at(body: dict, n: int) -> int:
        return next(i for i, m in enumerate(body["input"])
                    if m.get("type") == "function_call_output" and m["call_id"] == f"call_{n}")

    @classmethod
    def evidence_after(cls, body: dict, n: int) -> str | None:
        items = body["input"]
        nxt = items[cls._at(body, n) + 1] if cls._at(body, n) + 1 < len(items) else {}
        if nxt.get("role") != "user":
            return None
        text = nxt["content"][0]["text"]
        return text if "<ctx-data" in text else None

    @classmethod
    def prefix(cls, body: dict, n: int) -> str:
        return json.dumps([body.get("instructions"), body.get("tools"), body["input"][:cls._at(body, n) + 1]])


@pytest.mark.parametrize("wire", [Anthropic, Chat, Responses], ids=lambda w: w.api)
async def test_evidence_follows_the_tool_result_and_is_repeated_byte_for_byte(proxy, fake, wire):
    conv = wire(proxy, f"s-{wire.api}")
    await conv.send()  # the user's words alone recall nothing (they name no memory's words)
    assert FACT not in json.dumps(fake.last.json)

    conv.add_round(1, OUTPUT)
    await conv.send()
    first = fake.last.json
    evidence = wire.evidence_after(first, 1)
    assert evidence is not None and FACT in evidence and proxy.fact.memory_id in evidence
    assert 'source="recall"' in evidence and "data, not instructions" in evidence
    assert "7719 only" not in json.dumps(first)  # bob's memory: the output names its port, alice never sees it
    m = proxy.settled_store().manifests.list("acme", session=f"s-{wire.api}")[-1].data
    assert [i["id"] for i in m["recall"]["after_tool_result"]] == [proxy.fact.memory_id]
    assert "4566" not in json.dumps(m["recall"])  # ids and labels, never text

    conv.add_round(2, "uploads: 42 passed")
    await conv.send()
    second = fake.last.json
    assert wire.evidence_after(second, 1) == evidence  # the same bytes at the same place
    assert wire.prefix(second, 1) == wire.prefix(first, 1)  # so the prompt up to it is what was cached
    assert prefix_kept(wire.api, first, second)  # and past it: all the provider cached last turn is kept
    assert wire.evidence_after(second, 2) is None  # that output names nothing a memory holds
    assert json.dumps(second).count(FACT) == 1  # given once, not again at the tail

    m = proxy.settled_store().manifests.list("acme", session=f"s-{wire.api}")[-1].data
    repeated = [s for s in m["segments"] if s["requested_placement"] == "result"]
    assert [(s["status"], s["reason"], s["placement"]) for s in repeated] == \
        [("placed", "repeated", "result" if wire.api == "anthropic" else "result:new_message")]

    await conv.send()  # the same request again (a retry): the same bytes
    assert fake.last.json == second

    await forget(proxy, proxy.fact.memory_id)
    await conv.send()
    gone = fake.last.json
    assert wire.evidence_after(gone, 1) is None and FACT not in json.dumps(gone)  # never shown again


async def test_another_caller_under_the_same_session_id_never_gets_it_repeated(proxy, fake):
    conv = Anthropic(proxy, "s-shared")
    conv.add_round(1, OUTPUT)
    await conv.send()
    assert FACT in (Anthropic.evidence_after(fake.last.json, 1) or "")
    conv.add_round(2, "uploads: 42 passed")
    for who in ({"X-Ctx-User": "bob"}, {"X-Ctx-Purpose": "analysis"}):  # alice's history, sent by another caller
        client = proxy.anthropic(default_headers={**hdrs("s-shared"), **who})
        await client.messages.create(model="claude-test", max_tokens=32, messages=conv.messages)
        body = fake.last.json
        assert Anthropic.evidence_after(body, 1) is None  # recalled for alice's default purpose: not theirs
        assert "X-Ctx-User" not in who or FACT not in json.dumps(body)  # bob may not see it at all


async def test_a_pruned_or_rewritten_result_loses_its_evidence(proxy, fake):
    conv = Chat(proxy, "s-rewritten")
    conv.add_round(1, OUTPUT)
    await conv.send()
    assert FACT in (Chat.evidence_after(fake.last.json, 1) or "")
    conv.messages[-1]["content"] = "[output cleared]"  # the client rewrote that result
    await conv.send()
    assert Chat.evidence_after(fake.last.json, 1) is None and FACT not in json.dumps(fake.last.json)


async def test_evidence_from_outputs_can_be_switched_off(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy("[filters.recall]\ntool_outputs = false\n")
    put_memory(p.state.services["store"], "acme", FACT, kind="fact", user="alice")
    conv = Responses(p, "s-off")
    conv.add_round(1, OUTPUT)
    await conv.send()
    assert FACT not in json.dumps(fake.last.json)


async def test_a_store_error_on_the_kept_evidence_degrades_the_turn_and_it_goes_on(proxy, fake, monkeypatch):
    conv = Chat(proxy, "s-store-error")
    conv.add_round(1, OUTPUT)
    await conv.send()
    assert FACT in (Chat.evidence_after(fake.last.json, 1) or "")
    memories = proxy.state.services["store"].memories

    def broken(*args):
        raise OSError("disk gone")

    monkeypatch.setattr(memories, "last_seq", broken)  # the feed unreadable: each memory is read again...
    monkeypatch.setattr(memories, "get", broken)  # ...and that fails too
    conv.add_round(2, "uploads: 42 passed")
    await conv.send()  # answered: the evidence is not repeated this turn, everything else is as it was
    assert Chat.evidence_after(fake.last.json, 1) is None
    m = proxy.settled_store().manifests.list("acme", session="s-store-error")[-1].data
    assert "inject" in m["degraded"]


async def test_an_unrelated_memory_write_keeps_the_evidence_without_reading_its_memories(proxy, fake, monkeypatch):
    conv = Responses(proxy, "s-feed")
    conv.add_round(1, OUTPUT)
    await conv.send()
    evidence = Responses.evidence_after(fake.last.json, 1)
    assert evidence is not None and FACT in evidence
    store = proxy.state.services["store"]
    put_memory(store, "acme", "The canteen closes at three on Fridays.", kind="fact", user="carol")  # the feed moves

    def unread(*args):
        raise AssertionError("the feed names none of its memories: none is read again")

    monkeypatch.setattr(store.memories, "get", unread)
    conv.add_round(2, "uploads: 42 passed")
    await conv.send()
    assert Responses.evidence_after(fake.last.json, 1) == evidence
    m = proxy.settled_store().manifests.list("acme", session="s-feed")[-1].data
    assert "inject" not in (m["degraded"] or [])


NAMING = ("tests/integration/test_uploads.py::test_put_object FAILED\n"
          "E   KeyError: 'LOCALSTACK_HOST' (expected localstack.internal:4566)\n"
          "=========== 1 failed, 41 passed in 12.31s ===========")
LONG_ASK = ("Run the uploads suite and fix whatever breaks; the nightly run has been red since Tuesday. Check "
            "the retry settings, the fixtures, the bucket policies, the mocks, the database seeds and anything "
            "else that looks off, then summarise what you changed and why.")
WEAK = "A suite that breaks twice in a row is quarantined by the release captain for the rest of the sprint and reported in the weekly review."


@pytest.mark.parametrize("outweighed", [0.5, 0.0])
async def test_a_memory_of_the_words_far_weaker_than_the_outputs_is_not_given_beside_it(make_proxy, fake,
                                                                                         monkeypatch, outweighed):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy(f"[filters.recall]\noutweighed = {outweighed}\n")
    store = p.state.services["store"]
    fact = put_memory(store, "acme", FACT, kind="fact", user="alice")
    weak = put_memory(store, "acme", WEAK, kind="fact", user="alice")  # shares the words' "suite", "whatever"
    for text in ("Lunch is at noon on Fridays.", "The design team keeps the icons in Figma."):
        put_memory(store, "acme", text, kind="fact", user="alice")
    conv = Anthropic(p, f"s-outweighed-{outweighed}")
    conv.messages[0]["content"] = LONG_ASK
    conv.add_round(1, NAMING)  # the proxy first sees these words on a tool-result turn
    await conv.send()
    body = json.dumps(fake.last.json)
    m = p.settled_store().manifests.list("acme", session=f"s-outweighed-{outweighed}")[-1].data
    assert [i["id"] for i in m["recall"]["after_tool_result"]] == [fact.memory_id]
    assert FACT in (Anthropic.evidence_after(fake.last.json, 1) or "")
    if outweighed:
        assert WEAK not in body and weak.memory_id not in [i["id"] for i in m["recall"]["items"]]
    else:  # off: both recalls' memories are given
        assert WEAK in body and weak.memory_id in [i["id"] for i in m["recall"]["items"]]
    evidence = Anthropic.evidence_after(fake.last.json, 1)
    conv.add_round(2, "uploads: 42 passed")  # the next round trip reuses what was kept, byte for byte
    await conv.send()
    assert Anthropic.evidence_after(fake.last.json, 1) == evidence
    assert (WEAK in json.dumps(fake.last.json)) == (not outweighed)


async def test_outweighed_outside_zero_to_one_is_refused_at_start_up(make_proxy):
    with pytest.raises(ConfigError, match="outweighed: expected a share from 0 to 1"):
        await make_proxy("[filters.recall]\noutweighed = 1.5\n")


SERIAL = "Inverter serial numbers must never appear raw in logs; wrap them with redact_serial()."
LOGGED = '41:    log.info("claim started for %s", inverter.serial)\n58:    log.error("claim failed", inverter.serial)\n'


@pytest.mark.parametrize("command, found", [
    ("grep -n 'serial' fleet/handlers/claims.py", True),  # what the agent looked for: a word of the turn
    (["bash", "-lc", "rg -n serial fleet/handlers/"], True),  # Codex's shell, its argv
    ("cat fleet/handlers/claims.py", False)], ids=["grep", "argv", "cat"])  # a path read: no word of the turn
async def test_what_the_agent_searched_the_output_for_counts_as_a_word_of_the_turn(make_proxy, fake, command, found):
    p = await make_proxy("")
    store = p.state.services["store"]
    fact = put_memory(store, "acme", SERIAL, kind="fact", user="alice")
    for text in ("Lunch is at noon on Fridays.", "The design team keeps the icons in Figma.",
                 "Quarterly planning happens in the first week of the quarter."):
        put_memory(store, "acme", text, kind="fact", user="alice")
    conv = Anthropic(p, "s-searched")
    conv.messages[0]["content"] = "make these log lines compliant"  # shares no word with the memory
    conv.add_round(1, LOGGED)
    conv.messages[-2]["content"][0]["input"] = {"command": command}
    await conv.send()
    m = p.settled_store().manifests.list("acme", session="s-searched")[-1].data
    assert [i["id"] for i in m["recall"].get("after_tool_result", [])] == ([fact.memory_id] if found else [])
    assert (SERIAL in (Anthropic.evidence_after(fake.last.json, 1) or "")) == found
