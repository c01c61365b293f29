"""A request sent again as it was (a retry, a load test's repeated turn) is
decided from the filters' last decision for its session, without reading the
history again; anything that changed since (a ledger write, a link filed, a
task state another worker wrote) sends it down the full path."""
from __future__ import annotations

import json

from apicalls import AUTH, PATHS, config, whole_text
from callcount import counting
from enginedriver import EngineDriver

from ctxproxy.filters import continuity
from ctxproxy.filters.checkpoint.filter import CheckpointFilter
from ctxproxy.filters.effects.filter import EffectsFilter
from ctxproxy.proxy.scripted_provider import Reply

CALL = "call_Qm9vYmFyYmF6cXV4MTIz"
ANSWER = "The loader reads the file first and never looks at the environment when `timeout` is present."


def history(system: str = "You are a coding agent.", answered: bool = True) -> bytes:
    """A Chat conversation with a tool round trip and, ``answered``, the model's
    answer after it and a new user message (no session id: identify follows it)."""
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "The service ignores CTX_TIMEOUT. Find out why."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": CALL, "type": "function", "function": {"name": "read_file",
                                                          "arguments": json.dumps({"path": "src/config.py"})}}]},
        {"role": "tool", "tool_call_id": CALL, "content": "def load():\n    return read('config.toml')\n"},
    ]
    if answered:
        messages += [{"role": "assistant", "content": ANSWER},
                     {"role": "user", "content": "Thanks. Keep the default at 30 seconds."}]
    return json.dumps({"model": "gpt-5", "messages": messages, "tools": [{"type": "function", "function": {
        "name": "read_file", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]}).encode()


async def send(drive: EngineDriver, body: bytes):
    got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "content-type": "application/json"}, body)
    assert got.status == 200, got.body
    drive.services["writer"].flush()
    return got


def manifest(drive: EngineDriver, got) -> dict:
    return drive.services["store"].manifests.get(got.turn.identity.tenant, got.turn.turn_id).data


async def test_the_same_request_again_is_not_read_again(tmp_path, monkeypatch):
    ledgers = counting(monkeypatch, EffectsFilter, "_ledger")
    links = counting(monkeypatch, continuity, "run_links")
    async with EngineDriver(config(tmp_path)) as drive:
        turns = [await send(drive, history()) for _ in range(4)]
        # the first decides in full; the second finds nothing to write and keeps its decision
        assert len(ledgers) == 2 and len(links) <= 4
        for got in turns:
            assert got.forwarded.body == turns[0].forwarded.body
            assert got.turn.identity.session == turns[0].turn.identity.session
        first, last = manifest(drive, turns[0]), manifest(drive, turns[-1])
        for field in ("session_id", "identity_source", "effects", "task_state", "client_compacted", "segments"):
            assert last[field] == first[field], field


async def test_a_call_recorded_since_is_settled_in_full(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        await send(drive, history())
        await send(drive, history())  # decided with nothing to write: kept
        drive.script(Reply.tool_call("deploy", {"env": "prod"}, call_id="call_deploy_1"))
        got = await send(drive, history())  # the answer calls a tool: recorded pending
        ident = got.turn.identity
        store = drive.services["store"]
        (rec,) = [r for r in store.effects.list(ident.tenant, task=ident.task) if r.tool == "deploy"]
        assert rec.state == "pending"
        # The client sends the same request again, without the call's result: the ledger
        # state changed since the kept decision, so the full path runs and the call is unknown.
        await send(drive, history())
        (rec,) = [r for r in store.effects.list(ident.tenant, task=ident.task) if r.tool == "deploy"]
        assert rec.state == "unknown"


async def test_an_answer_filed_since_is_followed_at_once(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        first = await send(drive, history())
        again = await send(drive, history())
        assert again.turn.identity.session == first.turn.identity.session
        assert again.turn.identity.source == "fingerprint"
        # Another conversation (another opening) gets the very answer this one continues: filed now.
        drive.script(Reply.text(ANSWER))
        other = await send(drive, history(system="You are a careful coding agent.", answered=False))
        assert other.turn.identity.session != first.turn.identity.session
        followed = await send(drive, history())
        assert followed.turn.identity.session == other.turn.identity.session
        assert followed.turn.identity.source == "continuity"


async def test_a_task_state_written_elsewhere_is_read_in_full(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await send(drive, history())
        await send(drive, history())
        assert manifest(drive, got)["task_state"]["compacted"] is False
        # Another worker saw a compaction of this session and stored the task state it made.
        ident = got.turn.identity
        store = drive.services["store"]
        part = store.sessions.get(ident.tenant, ident.session, part="task_state")
        doc = {**part["doc"], "compactions": 1, "goal": [1, "Find out why CTX_TIMEOUT is ignored."]}
        store.sessions.put(ident.tenant, ident.session, {"rev": part["rev"] + 5, "doc": doc}, part="task_state")
        loads = counting(monkeypatch, CheckpointFilter, "_absorb")
        got = await send(drive, history())
        assert loads, "the checkpoint decided from its last decision over a task state changed since"
        m = manifest(drive, got)
        assert m["task_state"]["compacted"] is True
        assert any(s["kind"] == "task_state" for s in m["segments"])


async def test_rule_files_are_observed_once_and_put_back_when_the_session_lost_them(tmp_path, monkeypatch):
    from realclients import body_bytes, load

    from ctxproxy.filters.inject import observed_rules

    observes = counting(monkeypatch, observed_rules, "observe")
    rec = load("claude-code-rules-first")
    headers = {**AUTH["anthropic"], "content-type": "application/json"}
    async with EngineDriver(config(tmp_path)) as drive:
        turns = []
        for _ in range(3):
            got = await drive.call("POST", PATHS["anthropic"], headers, body_bytes(rec))
            assert got.status == 200, got.body
            drive.services["writer"].flush()
            turns.append(got)
        assert len(observes) == 2  # the third is the second again, on the copies it left
        rules = [manifest(drive, got)["observed_rules"] for got in turns]
        assert rules[0] and rules[1] == rules[0] and rules[2] == rules[0]
        # Another worker saw a file this request does not carry, and a compaction: put back.
        ident = turns[0].turn.identity
        store = drive.services["store"]
        part = store.sessions.get(ident.tenant, ident.session, part="observed_rules")
        files = {**part["doc"]["files"], "claude-code:project:/w/OTHER.md": {
            "agent": "claude-code", "path": "/w/OTHER.md", "kind": "project", "sha256": "0" * 64,
            "text": "marker: SEED-OTHER\n", "where": "messages[0].content[0]", "observed_at": 1.0}}
        store.sessions.put(ident.tenant, ident.session,
                           {"rev": part["rev"] + 5, "doc": {**part["doc"], "files": files, "compacted": True}},
                           part="observed_rules")
        got = await drive.call("POST", PATHS["anthropic"], headers, body_bytes(rec))
        assert len(observes) == 3
        assert b"SEED-OTHER" in got.forwarded.body


async def test_an_answer_filed_again_the_same_way_is_saved_once(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        store = drive.services["store"]
        docs = type(store.checkpoints)
        saved: list[str] = []
        original = docs.put

        def put(self, tenant, doc_id, *args, **kwargs):
            if doc_id.startswith(continuity.DOC_PREFIX):
                saved.append(doc_id)
            return original(self, tenant, doc_id, *args, **kwargs)

        monkeypatch.setattr(docs, "put", put)
        turns = []
        for _ in range(3):
            drive.script(Reply.text("Done: the default stays at 30 seconds and a test covers it."))
            turns.append(await send(drive, history()))
        assert len(saved) == len(set(saved)) and saved  # each link written once
        # and what was saved leads there: the next request continues that answer
        follow = json.loads(history())
        follow["messages"] += [{"role": "assistant", "content": "Done: the default stays at 30 seconds and a "
                                                                "test covers it."},
                               {"role": "user", "content": "Good."}]
        got = await send(drive, json.dumps(follow).encode())
        assert got.turn.identity.source == "continuity"
        assert got.turn.identity.session == turns[0].turn.identity.session


async def test_the_same_answer_again_is_indexed_once(tmp_path):
    from ctxproxy.store.services.recall.services import recall_services

    reply = "Done: the default stays at 30 seconds and a test covers it."
    async with EngineDriver(config(tmp_path)) as drive:
        turns = []
        for _ in range(3):
            drive.script(Reply.text(reply))
            turns.append(await send(drive, history()))
        drive.script(Reply.text("Now the loader prefers the environment variable."))
        turns.append(await send(drive, history()))
        drive.services["writer"].flush()
        ident = turns[0].turn.identity
        rows = recall_services(drive.services).sessions.session_turns(ident.tenant, ident.session)
        said = [text for _, role, text, _ in rows if role == "assistant"]
        assert said == [reply, "Now the loader prefers the environment variable."]


async def test_a_long_request_is_never_hashed(tmp_path):
    from ctxproxy.filters.repeats import REPEAT_MAX_BYTES

    long = json.loads(history())
    long["messages"][3]["content"] = "x = 1\n" * (REPEAT_MAX_BYTES // 6 + 1)
    async with EngineDriver(config(tmp_path)) as drive:
        for body in (history(), history(), json.dumps(long).encode(), json.dumps(long).encode()):
            got = await send(drive, body)
            assert (got.turn.request_digest is None) == (len(body) > REPEAT_MAX_BYTES)


async def test_recall_reads_the_words_of_a_request_sent_again_once(tmp_path, monkeypatch):
    from ctxproxy.filters import recall

    reads = counting(monkeypatch, recall, "turn_words")
    secret = "AKIA" + "QYLPMN5HHHFPZAM2"  # an AWS key id: redact edits the request before recall reads it
    leaked = json.loads(history())
    leaked["messages"][-1]["content"] = f"Thanks. The key is {secret}; keep the default at 30 seconds."
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):
            got = await send(drive, history())
        assert len(reads) == 1  # the same bytes and headers: the words kept by the request's digest
        assert got.turn.state["recall"].user_text == "Thanks. Keep the default at 30 seconds."
        for _ in range(2):
            got = await send(drive, json.dumps(leaked).encode())
            assert got.turn.request.edits  # redacted before recall: read from the edited request each time
            assert secret not in got.turn.state["recall"].user_text
        assert len(reads) == 3


async def test_a_request_found_clean_is_not_scanned_again_and_a_secret_always_is(tmp_path, monkeypatch):
    from ctxproxy.store.services.redaction.engine import Redactor

    scans = counting(monkeypatch, Redactor, "dirty")
    secret = "AKIA" + "QYLPMN5HHHFPZAM2"
    leaked = json.loads(history())
    leaked["messages"][-1]["content"] = f"Thanks. The key is {secret}."
    async with EngineDriver(config(tmp_path)) as drive:
        first = await send(drive, history())
        after_first = len(scans)
        again = await send(drive, history())
        # the request's text is not scanned again (the answer still is: one call, on_response)
        assert len(scans) - after_first == 1
        assert again.forwarded.body == first.forwarded.body == history()
        for _ in range(2):
            before = len(scans)
            got = await send(drive, json.dumps(leaked).encode())
            assert len(scans) - before == 2  # a request that held a secret is scanned every time
            assert secret.encode() not in got.forwarded.body
            assert manifest(drive, got)["redactions"]
        # other rules (a reload builds another redactor) scan the clean request again
        flt = next(s.filter for s in again.turn.pipeline.stages if s.filter.name == "redact")
        flt._clean_requests.put(again.turn, object())
        before = len(scans)
        await send(drive, history())
        assert len(scans) - before == 2


def test_memos_by_request_digest_count_what_the_generic_estimate_counts():
    """recall's words and identify's followed requests are sized from their strings, not walked,
    never below the generic estimate (non-ASCII text included): the caches' bounds still hold."""
    from ctxproxy.filters.identify import _decided_bytes
    from ctxproxy.filters.recall import TurnWords, _words_bytes
    from ctxproxy.store.bounded import entry_bytes

    for words in (TurnWords(), TurnWords("fix the DST test", "", True), TurnWords("ça marche? 東京", "goal", False,
                                                                                   "before" * 40)):
        assert entry_bytes(b"\x00" * 16, words) <= _words_bytes(words) <= entry_bytes(b"\x00" * 16, words) + 512
    for key, decided in (((("t", "", None, b"d" * 16)), ("cv-1", "continuity", "ans:1", ("ans:0",), 1.0)),
                         (("t", "u/", "resp_1", b"d" * 16), ("fp-2", "fingerprint", None, (), 2.0))):
        assert _decided_bytes(key, decided) == entry_bytes(key, decided)


def tool_round(output: str) -> bytes:
    """A Chat conversation whose newest item is a tool's output."""
    return json.dumps({"model": "gpt-5", "messages": [
        {"role": "user", "content": "Run the uploads suite and fix whatever breaks."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": CALL, "type": "function", "function": {"name": "Bash",
                                                          "arguments": json.dumps({"command": "make test"})}}]},
        {"role": "tool", "tool_call_id": CALL, "content": output}]}).encode()


async def test_a_tool_output_that_recalled_nothing_is_not_searched_again(tmp_path, monkeypatch):
    from memhelp import put_memory

    from ctxproxy.store.services.recall.recaller import Recaller

    fact = "The mock S3 for local runs is localstack.internal:4566; set LOCALSTACK_HOST to it."
    output = ("tests/test_uploads.py::test_put FAILED\nE   EndpointConnectionError: Could not connect to "
              "\"http://localhost:4566/\"\n=========== 1 failed, 41 passed in 12.31s ===========")
    asked = counting(monkeypatch, Recaller, "recall_output")
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):
            got = await send(drive, tool_round(output))
            assert got.turn.state["recall"].output_items == []
        assert len(asked) == 1  # the same request again: its output recalled nothing before
        await send(drive, tool_round(output + "\n"))  # another output is searched
        assert len(asked) == 2
        # an output that recalls something is searched every time, and its evidence placed every time
        put_memory(drive.services["store"], "default", fact, kind="fact")
        for n in range(3):
            got = await send(drive, tool_round(output + "\n\n"))
            assert len(asked) == 3 + n
            assert [i["id"] for i in got.turn.state["recall"].output_items]
            assert "localstack.internal:4566" in got.forwarded.body.decode()


async def test_prune_reads_no_result_of_a_request_below_its_trigger(tmp_path, monkeypatch):
    from ctxproxy.filters.prune import PruneFilter

    plans = counting(monkeypatch, PruneFilter, "plan")
    async with EngineDriver(config(tmp_path)) as drive:
        got = await send(drive, history(answered=False))  # a tool result, ~700 bytes: under 100,000 tokens
        assert plans == [] and manifest(drive, got)["pruned"] == []
    # a request of more bytes than the trigger is planned (its results counted)
    async with EngineDriver(config(tmp_path, "[filters.prune]\ntrigger_tokens = 200\n")) as drive:
        got = await send(drive, history(answered=False))
        assert len(plans) == 1 and got.forwarded.body == history(answered=False)


async def test_identify_reads_the_answer_anchor_of_a_request_sent_again_once(tmp_path, monkeypatch):
    from ctxproxy.filters.identify import _ANCHOR_BYTES
    from ctxproxy.store.bounded import size_of

    anchors = counting(monkeypatch, continuity, "request_anchor")
    async with EngineDriver(config(tmp_path)) as drive:
        drive.script(*[Reply.text(ANSWER)] * 3)
        turns = [await send(drive, history(answered=False)) for _ in range(3)]
        assert len(anchors) == 1  # the same bytes and headers: the anchor kept by the request's digest
        assert whole_text("chat", turns[-1].body) == ANSWER
        # the answer was filed under the kept anchor: the conversation that continues it is followed
        followed = await send(drive, history())
        assert len(anchors) == 2
        assert followed.turn.identity.session == turns[0].turn.identity.session
        assert followed.turn.identity.source == "continuity"
    anchor = "t:" + "0" * 64
    assert _ANCHOR_BYTES + len(anchor) == size_of(anchor)  # the fact counts its string (the digest once a request)


async def test_identify_decides_a_request_sent_again_from_its_digest(tmp_path, monkeypatch):
    from ctxproxy.filters import identify as identify_module

    decided = counting(monkeypatch, identify_module, "identify")
    async with EngineDriver(config(tmp_path)) as drive:
        turns = [await send(drive, history()) for _ in range(3)]
        assert len(decided) == 1  # followed once; the same bytes and headers again: the same identity
        assert {t.turn.identity for t in turns} == {turns[0].turn.identity}
        assert turns[0].turn.identity.source == "fingerprint"
        # a session the request names (another header, so another digest) is decided, then kept too
        headers = {**AUTH["chat"], "content-type": "application/json", "X-Ctx-Session": "named-1"}
        named = [await drive.call("POST", PATHS["chat"], headers, history()) for _ in range(2)]
        assert len(decided) == 2
        assert [g.turn.identity.session for g in named] == ["named-1", "named-1"]
        # an answer filed since that the request continues: decided again, and followed
        drive.script(Reply.text(ANSWER))
        other = await send(drive, history(system="You are a careful coding agent.", answered=False))
        followed = await send(drive, history())
        assert followed.turn.identity.session == other.turn.identity.session != turns[0].turn.identity.session
        assert followed.turn.identity.source == "continuity"


async def test_identify_looks_up_a_previous_response_on_every_request(tmp_path, monkeypatch):
    """A request continuing a response id is never decided from its digest: the link
    to that response may be filed after the request was first seen."""
    from ctxproxy.filters import identify as identify_module

    decided = counting(monkeypatch, identify_module, "identify")
    body = json.dumps({"model": "gpt-5", "previous_response_id": "resp_unknown_1",
                       "input": [{"role": "user", "content": "And the default?"}]}).encode()
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(2):
            got = await drive.call("POST", PATHS["responses"], {**AUTH["responses"],
                                                                "content-type": "application/json"}, body)
            assert got.status == 200, got.body
        assert len(decided) == 2


async def test_effects_decides_a_request_sent_again_before_reading_its_tools(tmp_path, monkeypatch):
    from ctxproxy.filters.effects import filter as effects_filter

    histories = counting(monkeypatch, effects_filter, "History")
    async with EngineDriver(config(tmp_path)) as drive:
        turns = [await send(drive, history()) for _ in range(4)]
        # the first decides in full, the second keeps its decision; the later ones read no history
        assert len(histories) == 2
        assert [t.turn.state["effects"].effects for t in turns[2:]] == [turns[1].turn.state["effects"].effects] * 2
        assert manifest(drive, turns[-1])["effects"] == manifest(drive, turns[0])["effects"]


async def test_prune_walks_a_request_sent_again_for_its_tool_results_once(tmp_path, monkeypatch):
    import sys

    from ctxproxy.proxy.adapters.base import RequestViewBase

    walks: list[str] = []
    original = RequestViewBase.tool_results

    def spy(self):
        if sys._getframe(1).f_code.co_filename.endswith("prune.py"):
            walks.append(self.raw)
        return original(self)

    monkeypatch.setattr(RequestViewBase, "tool_results", spy)
    async with EngineDriver(config(tmp_path)) as drive:
        turns = [await send(drive, history(answered=False)) for _ in range(3)]
        assert len(walks) == 1  # the same bytes and headers: known to hold results, below the trigger
        assert all(t.turn.state["prune"].pruned == () for t in turns)
        assert manifest(drive, turns[-1])["pruned"] == manifest(drive, turns[0])["pruned"] == []
        await send(drive, history(answered=True))  # another request is walked
        assert len(walks) == 2
    # above the trigger, the results are read whatever the memo says, and planned
    async with EngineDriver(config(tmp_path, "[filters.prune]\ntrigger_tokens = 200\n")) as drive:
        for _ in range(2):
            got = await send(drive, history(answered=False))
            assert got.forwarded.body == history(answered=False)
        assert len(walks) == 4


async def test_recall_looks_for_the_tool_output_of_a_request_sent_again_once(tmp_path, monkeypatch):
    from ctxproxy.filters import recall

    rounds = counting(monkeypatch, recall, "newest_round")
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):  # it ends with the user's message: no output to search, the same bytes again neither
            got = await send(drive, history())
            assert got.turn.state["recall"].output_items == []
        assert len(rounds) == 1
        await send(drive, history(answered=False))  # ends with a tool's output: read
        assert len(rounds) == 2


async def test_identify_keeps_no_identity_across_tenants_or_api_keys(tmp_path, monkeypatch):
    """The same body under another tenant header, user header or provider key is another
    request: each is decided on its own, and none is given another's identity."""
    from ctxproxy.filters import identify as identify_module

    decided = counting(monkeypatch, identify_module, "identify")
    base = {**AUTH["chat"], "content-type": "application/json", "X-Ctx-Session": "shared-1"}
    variants = [base, {**base, "X-Ctx-Tenant": "globex"}, {**base, "X-Ctx-User": "bob"},
                {**base, "authorization": "Bearer sk-another-key-0000000000"}]
    async with EngineDriver(config(tmp_path)) as drive:
        got = [await drive.call("POST", PATHS["chat"], headers, history()) for headers in variants * 2]
        assert all(g.status == 200 for g in got)
        assert len(decided) == len(variants)  # each decided once, then from its own digest
        idents = [g.turn.identity for g in got]
        assert idents[len(variants):] == idents[:len(variants)]
        assert idents[1].tenant == "globex" != idents[0].tenant and idents[2].user == "bob" != idents[0].user
