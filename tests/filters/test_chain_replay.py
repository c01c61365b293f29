"""The session's last request sent again is decided once for the whole request
chain: each filter that can replays what it decided then (``replay``), while the
identity, the edge and the session's stored records are the very ones it was
decided on and the filter's own other inputs (the ledger's clock and queued
writes, the tenant's memories, the rules bundle, the copies this process holds)
are unchanged. Anything else runs the filter again."""
from __future__ import annotations

import json

import pytest
from memhelp import put_memory
from test_repeats import ANSWER, history, manifest, send

from apicalls import AUTH, PATHS, config
from enginedriver import EngineDriver

from ctxproxy.filters.effects.filter import EffectsFilter
from ctxproxy.filters.effects.history import T_RESOLUTION
from ctxproxy.filters.turn_summary import record_refs, same_records
from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store.frozen import freeze

REPLAYING = ["redact", "effects", "checkpoint", "prune", "recall", "inject"]


def pipeline_of(got):
    return got.turn.pipeline


def stage(got, name):
    return next(s.filter for s in pipeline_of(got).stages if s.filter.name == name)


def comparable(reports):
    """The filters' manifest parts (or a manifest's field), but the time recall took."""
    def drop_ms(v):
        if isinstance(v, dict):
            return {k: drop_ms(x) for k, x in v.items() if k != "ms"}
        return v

    return drop_ms(json.loads(json.dumps(reports, default=str)))


async def warmed(drive: EngineDriver, body: bytes | None = None):
    """The request sent until the chain kept its decision (the second computes and keeps it)."""
    body = body or history()
    for _ in range(2):
        got = await send(drive, body)
        assert got.turn.replayed == []
    got = await send(drive, body)
    assert got.turn.replayed == REPLAYING
    return got


async def test_a_replayed_request_is_decided_as_the_chain_computes_it(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        replayed = await warmed(drive)
        chain = pipeline_of(replayed).chain
        pipeline_of(replayed).chain = None  # the same request, every filter deciding it
        computed = await send(drive, history())
        pipeline_of(replayed).chain = chain
        again = await send(drive, history())
        assert computed.turn.replayed == [] and again.turn.replayed == REPLAYING
        # the same report from every filter, the same manifest, and the client's own bytes upstream
        assert comparable(pipeline_of(again).reports(again.turn)) == \
            comparable(pipeline_of(computed).reports(computed.turn))
        assert again.forwarded.body == computed.forwarded.body == history()
        first, last = manifest(drive, computed), manifest(drive, again)
        for field in ("session_id", "identity_source", "effects", "task_state", "client_compacted", "segments",
                      "recall", "pruned", "observed_rules", "token_budget", "tokens_injected"):
            assert comparable(last.get(field)) == comparable(first.get(field)), field
        # what the answer's hooks read from the request side is there: the answer is filed and indexed
        assert again.turn.state["effects"].capture.thread == computed.turn.state["effects"].capture.thread
        assert again.turn.state["recall"].user_text == computed.turn.state["recall"].user_text


async def test_another_request_of_the_session_runs_every_filter(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        await warmed(drive)
        other = json.loads(history())
        other["messages"][-1]["content"] = "Thanks. Keep the default at 45 seconds."
        got = await send(drive, json.dumps(other).encode())
        assert got.turn.replayed == []
        got = await send(drive, history())  # the chain keeps the session's last request only
        assert got.turn.replayed == []


async def test_a_session_record_written_since_runs_every_filter(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await warmed(drive)
        ident = got.turn.identity
        # another worker (or this one, on another path) wrote the session's state
        drive.services["store"].sessions.update(ident.tenant, ident.session, {"seen_elsewhere": 1})
        got = await send(drive, history())
        assert got.turn.replayed == []
        got = await send(drive, history())  # decided again on the new records, then replayed on them
        assert got.turn.replayed == REPLAYING


async def test_a_memory_written_since_runs_recall_again(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await warmed(drive)
        put_memory(drive.services["store"], got.turn.identity.tenant,
                   "The CTX_TIMEOUT default is 30 seconds unless the config file sets timeout.", kind="fact")
        got = await send(drive, history())
        assert "recall" not in got.turn.replayed
        assert got.turn.state["recall"].status == "recalled"


async def test_the_ledger_clock_moving_on_runs_effects_again(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await warmed(drive)
        effects = stage(got, "effects")
        clock = effects.clock
        effects.clock = lambda: clock() + T_RESOLUTION + 1
        try:
            got = await send(drive, history())
        finally:
            effects.clock = clock
        assert "effects" not in got.turn.replayed


async def test_replaying_never_skips_what_the_ledger_must_record(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        await warmed(drive)
        drive.script(Reply.tool_call("deploy", {"env": "prod"}, call_id="call_deploy_1"))
        got = await send(drive, history())  # replayed; its answer calls a tool: recorded pending
        assert got.turn.replayed == REPLAYING
        ident = got.turn.identity
        store = drive.services["store"]
        (rec,) = [r for r in store.effects.list(ident.tenant, task=ident.task) if r.tool == "deploy"]
        assert rec.state == "pending"
        # the same request again, without the call's result: the ledger settles it in full
        got = await send(drive, history())
        assert "effects" not in got.turn.replayed
        (rec,) = [r for r in store.effects.list(ident.tenant, task=ident.task) if r.tool == "deploy"]
        assert rec.state == "unknown"


async def test_a_copy_this_process_changed_runs_its_filter_again(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await warmed(drive)
        checkpoint = stage(got, "checkpoint")
        ident = got.turn.identity
        store = drive.services["store"]
        rev, doc, extra = checkpoint.parts.load(store, ident.tenant, ident.session)
        # this process's copy of the task state moved on (its write still queued): not the one decided on
        checkpoint.parts.keep(got.turn, store, (), rev, {**doc, "goal": [1, "Find the timeout bug."]}, extra,
                              changed=False)
        got = await send(drive, history())
        assert "checkpoint" not in got.turn.replayed and "effects" in got.turn.replayed


async def test_a_failing_replay_of_a_required_filter_refuses_the_request(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        await warmed(drive)

        def broken(self, turn, memo):
            raise RuntimeError("replay broke")

        monkeypatch.setattr(EffectsFilter, "replay", broken)
        for p in drive.engine.pipelines.values():  # the stages hold the bound hook
            p.stages = tuple(type(s)(**{**s.__dict__, "replay": s.filter.replay if s.replay else None})
                             for s in p.stages)
        sent = len(drive.forwarded)
        got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "content-type": "application/json"},
                               history())
        assert got.status >= 500 and len(drive.forwarded) == sent  # nothing went upstream


async def test_an_edited_request_is_never_replayed(tmp_path):
    secret = "AKIA" + "QYLPMN5HHHFPZAM2"
    leaked = json.loads(history())
    leaked["messages"][-1]["content"] = f"Thanks. The key is {secret}."
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):
            got = await send(drive, json.dumps(leaked).encode())
            assert got.turn.request.edits and got.turn.replayed == []
            assert secret.encode() not in got.forwarded.body


def test_records_are_told_by_their_identity_and_kept_weakly():
    rec = freeze({"effects": {"threads": {}}})
    part = freeze({"rev": 1, "doc": {}})
    kept = record_refs((rec, part, None, {}))
    assert same_records(kept, (rec, part, {}, None))  # no record then, none now
    assert not same_records(kept, (freeze(dict(rec)), part, None, {}))  # equal, but another read
    assert not same_records(kept, (rec, part, freeze({"rev": 2}), {}))  # a part stored since
    assert record_refs(({"effects": 1},)) is None  # not the session cache's read-only record: never replayed
    del rec
    assert not same_records(kept, (freeze({"effects": {"threads": {}}}), part, None, {}))


@pytest.mark.parametrize("answered", [True, False])
async def test_the_answer_of_a_replayed_request_is_filed_as_computed(tmp_path, answered):
    async with EngineDriver(config(tmp_path)) as drive:
        body = history(answered=answered)
        for _ in range(2):
            await send(drive, body)
        drive.script(Reply.text(ANSWER))
        got = await send(drive, body)
        assert got.turn.replayed == REPLAYING
        # identify filed the answer as it always does: the conversation continuing it is followed
        follow = json.loads(body)
        follow["messages"] += [{"role": "assistant", "content": ANSWER}, {"role": "user", "content": "Good."}]
        nxt = await send(drive, json.dumps(follow).encode())
        assert nxt.turn.identity.session == got.turn.identity.session


async def test_the_tenants_memories_moving_on_alone_runs_recall_again(tmp_path, monkeypatch):
    """The memories' revision checked by recall itself (another store may hold them: no
    session record moves with them)."""
    from ctxproxy.store.services.recall.services import recall_services

    async with EngineDriver(config(tmp_path)) as drive:
        await warmed(drive)
        memories = recall_services(drive.services).memories
        revision = memories.revision
        monkeypatch.setattr(memories, "revision", lambda tenant: revision(tenant) + 1)
        got = await send(drive, history())
        assert "recall" not in got.turn.replayed and "effects" in got.turn.replayed


async def test_an_answer_awaiting_results_or_a_queued_write_runs_effects_again(tmp_path, monkeypatch):
    """Checked by effects itself: the session's records do not show a write still queued."""
    async with EngineDriver(config(tmp_path)) as drive:
        got = await warmed(drive)
        writes = stage(got, "effects").writes
        monkeypatch.setattr(writes, "awaits_results", lambda key: True)
        got = await send(drive, history())
        assert "effects" not in got.turn.replayed and "checkpoint" in got.turn.replayed
        monkeypatch.undo()

        class Queued:
            def done(self):
                return False

        monkeypatch.setattr(writes, "queued", lambda key: Queued())
        got = await send(drive, history())
        assert "effects" not in got.turn.replayed


async def test_other_redaction_rules_scan_the_request_again(tmp_path, monkeypatch):
    import dataclasses

    from ctxproxy.store.services.redaction.engine import Redactor
    from callcount import counting

    async with EngineDriver(config(tmp_path)) as drive:
        got = await warmed(drive)
        redact = stage(got, "redact")
        profile = redact._profile(got.turn)
        reloaded = dataclasses.replace(profile)  # the same profile built again (a reload)
        monkeypatch.setattr(redact, "_profile", lambda turn: reloaded)
        scans = counting(monkeypatch, Redactor, "dirty")
        got = await send(drive, history())
        assert "redact" not in got.turn.replayed and "effects" in got.turn.replayed
        assert got.turn.state["redact"].profile is reloaded
        assert len(scans) == 1  # the answer's scan; the request was found clean with the very same rules


async def test_a_store_failing_on_the_chains_read_leaves_each_filter_to_fail_as_it_would(tmp_path, monkeypatch):
    """The chain's own read of the session failing replays nothing: effects reads the
    session itself and refuses the request as it always did (the store is down: 503)."""
    from ctxproxy.store.errors import StoreUnavailable

    async with EngineDriver(config(tmp_path)) as drive:
        await warmed(drive)
        store = drive.services["store"]

        def down(*args, **kwargs):
            raise StoreUnavailable("the disk went away")

        monkeypatch.setattr(type(store.sessions), "get_parts", down)
        sent = len(drive.forwarded)
        got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "content-type": "application/json"},
                               history())
        assert got.status == 503 and len(drive.forwarded) == sent
        assert got.turn.replayed == [] and b"effects" in got.body, got.body
