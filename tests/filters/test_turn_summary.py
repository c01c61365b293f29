"""The turn summary: a request's facts and its session's record, found once a turn for every filter.

Through the real engine and filters (``tests/enginedriver.py``, the default
pipeline, a real LMDB store), the store's bounded caches counted by their own
``get``: the filters that decide a request sent again by its digest (identify,
redact, prune, recall) and by the session's last decision (effects,
checkpoint, inject's observed rules), and the session's parts kept decoded,
look up one record of each kind a turn, not one memo each; and what one filter learned is never another's nor another
pipeline's, nor read once a filter before it edited the request.
"""
from __future__ import annotations

import json

from apicalls import config
from enginedriver import EngineDriver

from ctxproxy.filters import turn_summary as ts
from ctxproxy.filters.base import Identity, Turn
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.store.bounded import ByteLRU

HEADERS = {"Authorization": "Bearer sk-test-not-a-real-key", "Content-Type": "application/json"}


def body(question: str = "Why does the loader ignore CTX_TIMEOUT?") -> bytes:
    call = "call_Qm9vYmFyYmF6cXV4MTIz"
    return json.dumps({"model": "gpt-5", "messages": [
        {"role": "system", "content": "You are a coding agent. Use the tools to read files."},
        {"role": "user", "content": "The service ignores CTX_TIMEOUT from the environment."},
        {"role": "assistant", "content": "I'll look at the loader.", "tool_calls": [
            {"id": call, "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]},
        {"role": "tool", "tool_call_id": call, "content": "def load():\n    return read('config.toml')"},
        {"role": "user", "content": question}],
        "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]}).encode()


def counted_gets(monkeypatch) -> dict[str, int]:
    """``ByteLRU.get`` calls by cache name."""
    calls: dict[str, int] = {}
    real = ByteLRU.get

    def get(self, key, default=None):
        calls[self.name] = calls.get(self.name, 0) + 1
        return real(self, key, default)

    monkeypatch.setattr(ByteLRU, "get", get)
    return calls


async def test_a_request_sent_again_looks_up_its_facts_and_its_session_record_once(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):  # decided in full, then its decisions kept
            got = await drive.call("POST", "/v1/chat/completions", HEADERS, body())
            assert got.status == 200
        calls = counted_gets(monkeypatch)
        again = await drive.call("POST", "/v1/chat/completions", HEADERS, body())
        assert again.status == 200
        assert again.forwarded.body == body()  # untouched: the client's own bytes go upstream
    assert calls.get(ts._FACTS.name) == 1 and calls.get(ts._RECORDS.name) == 1
    s = again.turn.summary
    facts, record = s.facts(), s.record((again.turn.identity.tenant, again.turn.identity.session))
    assert facts is not None and len(facts.entries) >= 4  # identify's identity and anchor, redact, prune, recall
    decisions = [hit for slot, hit in record.entries.items() if isinstance(slot, int)]
    assert len(decisions) >= 2  # effects and checkpoint decided it before
    assert all(hit[0][0] == s.digest for hit in decisions)
    assert len(record.entries) > len(decisions)  # and the session's parts kept decoded (the task state)
    assert not [name for name in calls if name.startswith("session part")]  # found with the record


async def test_a_new_request_of_the_session_finds_no_fact_and_takes_the_full_path(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        first = await drive.call("POST", "/v1/chat/completions", HEADERS, body())
        other = await drive.call("POST", "/v1/chat/completions", HEADERS, body("And the default of 30 s?"))
    assert first.turn.summary.digest != other.turn.summary.digest
    assert other.turn.summary.facts() is not None  # learned on this turn, nothing from the first
    assert other.turn.identity.session == first.turn.identity.session


def a_turn(raw: bytes) -> Turn:
    return Turn.of_request("chat", "openai", "/v1/chat/completions", HEADERS,
                           ADAPTERS["chat"].parse_request(raw), TokenCounter(lazy=True), {})


def test_facts_are_each_filters_own_and_read_only_on_unedited_bytes():
    mine, theirs = ts.RequestFacts("mine (test)"), ts.RequestFacts("theirs (test)")
    raw = body("A question no other test asks?")
    turn = a_turn(raw)
    mine.put(turn, "words", 10)
    mine.put(turn, "other words", 10, key="keyed")
    later = a_turn(raw)  # the same bytes on another turn: the facts again, each under its owner and key
    assert mine.get(later) == "words" and mine.get(later, "keyed") == "other words"
    assert theirs.get(later) is None  # another filter object (another pipeline, a reloaded config)
    edited = a_turn(raw)
    edited.request.edits += 1  # a filter before this one changed the bytes the digest names
    assert mine.get(edited) is None
    mine.put(edited, "from edited bytes", 10)
    assert mine.get(a_turn(raw)) == "words"
    huge = a_turn(body("x" * (ts.REPEAT_MAX_BYTES + 1)))  # too large to name: never a repeat
    mine.put(huge, "kept?", 10)
    assert ts.summary(huge).digest is None and mine.get(huge) is None


def test_a_sessions_record_holds_each_filters_last_decision_within_its_bound():
    first, second = ts.LastDecisions("first (test)"), ts.LastDecisions("second (test)")
    raw = body("Another question no other test asks?")
    turn = a_turn(raw)
    turn.identity = Identity(tenant="t-summary", session="s-summary", source="header")
    first.keep(turn, "decided", 16)
    second.keep(turn, "decided too", 16)
    again = a_turn(raw)
    again.identity = turn.identity
    assert first.get(again) == "decided" and second.get(again) == "decided too"
    other = a_turn(body("A later question?"))
    other.identity = turn.identity
    assert first.get(other) is None and first.peek(other) == "decided"  # for another request of the session
    first.forget(other)
    fresh = a_turn(raw)
    fresh.identity = turn.identity
    assert first.get(fresh) is None and second.get(fresh) == "decided too"
    second.forget(fresh)
    assert ts._RECORDS.peek(("t-summary", "s-summary")) is None  # an empty record is not kept
    assert ts._RECORDS.bytes <= ts._RECORDS.max_bytes and ts._FACTS.bytes <= ts._FACTS.max_bytes
