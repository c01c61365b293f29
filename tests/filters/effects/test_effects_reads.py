"""How many ledger reads settling a conversation first seen costs: results
whose calls were never recorded are looked up by id once each (the tenant's
lookup answers the session's), and are still recorded as completed."""
from __future__ import annotations

import json

from apicalls import AUTH, PATHS, config
from enginedriver import EngineDriver


def conversation(n: int) -> bytes:
    messages: list[dict] = [{"role": "user", "content": "Deploy every service."}]
    for i in range(n):
        cid = f"call_{i:02d}_deploy_service_x"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": "deploy", "arguments": json.dumps({"service": f"svc{i}"})}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "content": f"deployed svc{i}: ok"})
    messages.append({"role": "user", "content": "Thanks."})
    return json.dumps({"model": "gpt-5", "messages": messages, "tools": [{"type": "function", "function": {
        "name": "deploy", "description": "Deploy a service.", "parameters": {"type": "object"}}}]}).encode()


async def test_results_never_recorded_are_looked_up_once_each(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        store = drive.services["store"]
        ledger = type(store.effects)
        lookups: list[tuple] = []
        original = ledger.by_call_id

        def by_call_id(self, tenant, call_id, *, session=None):
            lookups.append((call_id, session))
            return original(self, tenant, call_id, session=session)

        monkeypatch.setattr(ledger, "by_call_id", by_call_id)
        got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "content-type": "application/json"},
                               conversation(5))
        assert got.status == 200, got.body
        ident = got.turn.identity
        recs = store.effects.list(ident.tenant, task=ident.task)
        assert sorted(r.call_id for r in recs) == [f"call_{i:02d}_deploy_service_x" for i in range(5)]
        assert {r.state for r in recs} == {"completed"}
        per_id: dict[str, int] = {}
        for call_id, _ in lookups:
            per_id[call_id] = per_id.get(call_id, 0) + 1
        # each pass over the results (a snapshot, the write-ahead's batch) reads an id once and its
        # normalised form once: the tenant's lookup of the id answered the session's
        for r in recs:
            assert per_id[r.call_id] == per_id[r.call_id.replace("_", "")], per_id


def read_only_conversation(n: int) -> bytes:
    messages: list[dict] = [{"role": "user", "content": "What is in the repository?"}]
    for i in range(n):
        cid = f"call_{i:02d}_read"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                {"command": f"cat src/mod_{i}.py"})}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "content": f"def f{i}(): pass"})
    messages.append({"role": "user", "content": "Thanks."})
    return json.dumps({"model": "gpt-5", "messages": messages, "tools": [{"type": "function", "function": {
        "name": "bash", "description": "Run a command.", "parameters": {"type": "object"}}}]}).encode()


async def test_read_only_results_of_a_thread_first_seen_make_no_effect_key(tmp_path, monkeypatch):
    """A result of a read-only call never recorded is not recorded; with no open call to match
    it against (a thread first seen), its call's key (canonical JSON and a digest) is never made."""
    from ctxproxy.filters.effects.settle import Settler

    async with EngineDriver(config(tmp_path)) as drive:
        keys: list[str] = []
        original = Settler.key_of

        def key_of(self, tenant, scope, tool, args):
            keys.append(tool)
            return original(self, tenant, scope, tool, args)

        monkeypatch.setattr(Settler, "key_of", key_of)
        got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "content-type": "application/json"},
                               read_only_conversation(6))
        assert got.status == 200, got.body
        ident = got.turn.identity
        assert drive.services["store"].effects.list(ident.tenant, task=ident.task) == []
        assert keys == []
