"""The effect ledger: hooks on canned exchanges for the three wire formats, and
scripted multi-turn sessions through the official SDKs (side effect -> result
-> compaction -> checkpoint; duplicates; OpenClaw id rewrites; write-ahead)."""
import asyncio
from contextlib import contextmanager

import aiohttp
import orjson
import pytest

from ctxproxy.proxy.scripted_provider import Reply
from storelock import write_lock_held

from multidict import CIMultiDict

from ctxproxy.config import load_config
from ctxproxy.filters import FilterError, Identity, Pipeline, Turn, build_pipeline, filter_configs
from ctxproxy.filters.base import Filter
from ctxproxy.filters.effects.filter import EffectsConfig, EffectsFilter
from ctxproxy.filters.effects.settle import Settler
from ctxproxy.filters.segments import offered
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.store import StoreError, open_store

TOML = """
[pipeline]
request = ["identify", "effects", "inject"]
"""
TOKENS = TokenCounter()
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}}
A_TOOLS = [{"name": n, "description": n, "input_schema": SCHEMA} for n in ("Bash", "Read", "Write")]
C_TOOLS = [{"type": "function", "function": {"name": n, "description": n, "parameters": SCHEMA}}
           for n in ("exec", "read")]
R_TOOLS = [{"type": "function", "name": "shell", "description": "run", "parameters": SCHEMA},
           {"type": "custom", "name": "apply_patch", "description": "patch"}]
PR_URL = "https://github.com/acme/app/pull/4821"


def checkpoint_texts(body: dict) -> list[str]:
    """Every injected checkpoint in an upstream request body: the ledger's alone
    (pipelines without the ``checkpoint`` filter), or folded into the task state."""
    raw = orjson.dumps(body).decode()
    out = []
    start = 0
    while (i := min((k for k in (raw.find(f'<ctx-context kind=\\"{kind}\\"', start)
                                  for kind in ("checkpoint", "task_state")) if k >= 0), default=-1)) >= 0:
        j = raw.find("</ctx-context>", i)
        out.append(orjson.loads(b'"' + raw[i:j].encode() + b'"'))
        start = j
    return out


# -- hooks on canned exchanges ------------------------------------------------------------------

def make_turn(api: str, body: dict, store, session="s1", tenant="default", headers=None) -> Turn:
    t = Turn(api=api, route="r", path="/", headers=headers or {},
             request=ADAPTERS[api].parse_request(orjson.dumps(body)), tokens=TOKENS, services={"store": store})
    t.identity = Identity(tenant=tenant, session=session, task=session)
    return t


def request(f: EffectsFilter, turn: Turn) -> None:
    """The request hook as the proxy runs it: a write-ahead is on disk when it returns."""
    Pipeline([f]).run_request(turn)


def respond(f: EffectsFilter, turn: Turn, body: dict) -> None:
    f.on_response(turn, ADAPTERS[turn.api].parse_response(orjson.dumps(body)))
    f.on_response_end(turn)
    f.flush()  # the records are written on the filter's writer thread


def stream_respond(f: EffectsFilter, turn: Turn, events: list[tuple[str | None, dict | str]]) -> None:
    state = ADAPTERS[turn.api].stream()
    for name, data in events:
        raw = data.encode() if isinstance(data, str) else orjson.dumps(data)
        f.on_response_event(turn, state.event(name, b"", raw))
    f.on_response_end(turn)
    f.flush()


CANNED = {
    "anthropic": dict(
        tools=A_TOOLS,
        first=[{"role": "user", "content": "open the PR"}],
        response={"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
                  "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                               "input": {"command": "gh pr create --fill"}},
                              {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "a"}}]},
        replay=lambda r: [{"role": "assistant", "content": r["content"]},
                          {"role": "user", "content": [
                              {"type": "tool_result", "tool_use_id": "toolu_1", "content": f"Created {PR_URL}"},
                              {"type": "tool_result", "tool_use_id": "toolu_2", "content": "text of a"}]}],
        bash=("toolu_1", "Bash")),
    "chat": dict(
        tools=C_TOOLS,
        first=[{"role": "user", "content": "open the PR"}],
        response={"id": "c1", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason":
                  "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1", "type": "function", "function": {"name": "exec",
                                                                      "arguments": '{"command":"gh pr create --fill"}'}},
                      {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": '{"path":"a"}'}}]}}]},
        replay=lambda r: [r["choices"][0]["message"],
                          {"role": "tool", "tool_call_id": "call_1", "content": f"Created {PR_URL}"},
                          {"role": "tool", "tool_call_id": "call_2", "content": "text of a"}],
        bash=("call_1", "exec")),
    "responses": dict(
        tools=R_TOOLS,
        first=[{"role": "user", "content": "open the PR"}],
        response={"id": "resp_1", "object": "response", "status": "completed", "model": "m", "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell",
             "arguments": '{"command":["bash","-lc","gh pr create --fill"]}'},
            {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "shell",
             "arguments": '{"command":["bash","-lc","git status"]}'}]},
        replay=lambda r: r["output"] + [
            {"type": "function_call_output", "call_id": "call_1", "output": f"Created {PR_URL}"},
            {"type": "function_call_output", "call_id": "call_2", "output": "clean"}],
        bash=("call_1", "shell")),
}


def body_for(api: str, items: list, tools: list) -> dict:
    key = "input" if api == "responses" else "messages"
    return {"model": "m", key: items, "tools": tools, **({"max_tokens": 10} if api == "anthropic" else {})}


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
def test_hooks_pending_then_completed_then_checkpoint(api, store):
    c = CANNED[api]
    f = EffectsFilter(EffectsConfig(), store)
    t1 = make_turn(api, body_for(api, c["first"], c["tools"]), store)
    request(f, t1)
    assert t1.state["effects"].effects == [] and not offered(t1)
    respond(f, t1, c["response"])
    call_id, tool = c["bash"]
    (entry,) = t1.state["effects"].effects  # the read-only call is not recorded
    assert entry["call_id"] == call_id and entry["state"] == "pending" and entry["side_effect"]
    assert entry["duplicate"] is False and entry["tool"] == tool
    assert [r.state for r in store.effects.list("default", session="s1")] == ["pending"]

    t2 = make_turn(api, body_for(api, c["first"] + c["replay"](c["response"]), c["tools"]), store)
    request(f, t2)
    assert [(e["call_id"], e["state"]) for e in t2.state["effects"].effects] == [(call_id, "completed")]
    (rec,) = store.effects.list("default", session="s1")
    assert rec.state == "completed" and PR_URL in rec.refs and rec.result_size == len(f"Created {PR_URL}")
    assert rec.result_digest.startswith("sha256:") and rec.excerpt == f"Created {PR_URL}"
    assert t2.state["effects"].compacted is False and not offered(t2)

    # the client drops its history: checkpoint offered, read-only call absent
    t3 = make_turn(api, body_for(api, [{"role": "user", "content": "Summary: PR opened. Go on."}], c["tools"]),
                   store)
    request(f, t3)
    st = t3.state["effects"]
    assert st.compacted is True and st.summary.startswith("checkpoint:s1@")
    (seg,) = offered(t3)
    assert seg.kind == "checkpoint" and seg.trust == "system" and seg.placement == "turn"
    assert "gh pr create --fill" in seg.text and PR_URL in seg.text and "Goal: open the PR" in seg.text
    assert "git status" not in seg.text and "Read" not in seg.text
    doc = store.checkpoints.get("default", "effects:s1")
    assert doc.data["ref"] == st.summary and doc.data["text"] == seg.text


def test_hooks_streamed_calls_split_into_small_deltas(store):
    f = EffectsFilter(EffectsConfig(), store)
    args = '{"command": "gh release create v1.2.0 --notes \\"x\\""}'
    t = make_turn("anthropic", body_for("anthropic", [{"role": "user", "content": "go"}], A_TOOLS), store)
    request(f, t)
    events = [("message_start", {"type": "message_start", "message": {"id": "msg_s", "model": "m", "usage": {}}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "tool_use", "id": "toolu_s", "name": "Bash",
                                                         "input": {}}})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "input_json_delta", "partial_json": args[i:i + 3]}})
               for i in range(0, len(args), 3)]
    events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_stop", {"type": "message_stop"})]
    stream_respond(f, t, events)
    (rec,) = store.effects.list("default")
    assert rec.args_canonical == '{"command":"gh release create v1.2.0 --notes \\"x\\""}'
    # the same call made without streaming has the same key
    t2 = make_turn("anthropic", body_for("anthropic", [{"role": "user", "content": "go"}], A_TOOLS), store,
                   session="s2")
    request(f, t2)
    respond(f, t2, {"content": [{"type": "tool_use", "id": "toolu_n", "name": "Bash",
                                 "input": orjson.loads(args)}]})
    assert store.effects.by_call_id("default", "toolu_n").args_canonical == rec.args_canonical


def test_hooks_chat_stream_and_responses_custom_tool(store):
    f = EffectsFilter(EffectsConfig(), store)
    t = make_turn("chat", body_for("chat", [{"role": "user", "content": "go"}], C_TOOLS), store)
    request(f, t)
    chunks = [(None, {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_s", "type": "function", "function": {"name": "exec", "arguments": ""}}]}}]})]
    for piece in ['{"comm', 'and": "npm pub', 'lish"}']:
        chunks.append((None, {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": piece}}]}}]}))
    chunks += [(None, {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
               (None, "[DONE]")]
    stream_respond(f, t, chunks)
    assert store.effects.by_call_id("default", "call_s").args_canonical == '{"command":"npm publish"}'

    t = make_turn("responses", body_for("responses", [{"role": "user", "content": "patch"}], R_TOOLS), store,
                  session="s3")
    request(f, t)
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    events = [("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": {
        "type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch", "input": ""}})]
    events += [("response.custom_tool_call_input.delta", {"type": "response.custom_tool_call_input.delta",
                                                          "output_index": 0, "delta": patch[i:i + 5]})
               for i in range(0, len(patch), 5)]
    events += [("response.custom_tool_call_input.done", {"type": "response.custom_tool_call_input.done",
                                                         "output_index": 0, "input": patch}),
               ("response.completed", {"type": "response.completed", "response": {"id": "r", "status": "completed"}})]
    stream_respond(f, t, events)
    rec = store.effects.by_call_id("default", "call_p")
    assert rec.tool == "apply_patch" and orjson.loads(rec.args_canonical) == patch and rec.side_effect


def test_hooks_cut_stream_records_only_complete_calls(store):
    f = EffectsFilter(EffectsConfig(), store)
    t = make_turn("anthropic", body_for("anthropic", [{"role": "user", "content": "go"}], A_TOOLS), store)
    request(f, t)
    events = [("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "toolu_cut", "name": "Bash", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta", "partial_json": '{"command": "rm'}})]
    t.error_type = "upstream_dropped"
    stream_respond(f, t, events)
    assert store.effects.list("default") == []


def test_hooks_duplicate_flagged_and_noted(store):
    f = EffectsFilter(EffectsConfig(), store)
    c = CANNED["anthropic"]
    t1 = make_turn("anthropic", body_for("anthropic", c["first"], A_TOOLS), store)
    request(f, t1)
    respond(f, t1, c["response"])
    t2 = make_turn("anthropic", body_for("anthropic", c["first"] + c["replay"](c["response"]), A_TOOLS), store)
    request(f, t2)
    # after a compaction the model opens the same PR again
    again = [{"role": "user", "content": "Summary. Go on."}]
    t3 = make_turn("anthropic", body_for("anthropic", again, A_TOOLS), store)
    request(f, t3)
    respond(f, t3, {"content": [{"type": "tool_use", "id": "toolu_9", "name": "Bash",
                                 "input": {"command": "gh pr create --fill"}}]})
    (e,) = t3.state["effects"].effects
    assert e["duplicate"] is True and t3.state["effects"].duplicates == 1
    t4 = make_turn("anthropic", body_for("anthropic", again + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9", "name": "Bash",
                                           "input": {"command": "gh pr create --fill"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9",
                                      "content": "a pull request already exists"}]}], A_TOOLS), store)
    request(f, t4)
    kinds = {s.kind: s for s in offered(t4)}
    assert "repeated side effects" in kinds["effects"].text and PR_URL in kinds["effects"].text
    assert "checkpoint" in kinds  # the first PR is still hidden by the compaction
    # noted once only
    t5 = make_turn("anthropic", body_for("anthropic", again + [{"role": "user", "content": "next"}], A_TOOLS), store)
    request(f, t5)
    assert "effects" not in {s.kind for s in offered(t5)}
    # "flag" policy: flagged on the turn, never noted
    f2 = EffectsFilter(EffectsConfig(duplicate_policy="flag"), store)
    t6 = make_turn("anthropic", body_for("anthropic", again, A_TOOLS), store)
    request(f2, t6)
    respond(f2, t6, {"content": [{"type": "tool_use", "id": "toolu_10", "name": "Bash",
                                  "input": {"command": "gh pr create --fill"}}]})
    assert t6.state["effects"].duplicates == 1
    t7 = make_turn("anthropic", body_for("anthropic", again + [{"role": "user", "content": "x"}], A_TOOLS), store)
    request(f2, t7)
    assert "effects" not in {s.kind for s in offered(t7)}


def test_hooks_failed_results(store):
    """Anthropic ``is_error`` and a shell result with a non-zero exit code settle as failed."""
    f = EffectsFilter(EffectsConfig(), store)
    t = make_turn("anthropic", body_for("anthropic", [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_e", "name": "Write",
                                           "input": {"file_path": "/etc/x", "content": "y"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_e", "is_error": True,
                                      "content": "EACCES: permission denied"}]}], A_TOOLS), store)
    request(f, t)
    t = make_turn("responses", body_for("responses", [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "call_x", "name": "shell",
         "arguments": '{"command": ["bash", "-lc", "npm publish"]}'},
        {"type": "function_call_output", "call_id": "call_x",
         "output": '{"output": "403 Forbidden", "metadata": {"exit_code": 1}}'}], R_TOOLS), store, session="s2")
    request(f, t)
    assert [(r.call_id, r.state) for r in store.effects.list("default")] == [("toolu_e", "failed"),
                                                                            ("call_x", "failed")]
    assert t.state["effects"].effects[0]["state"] == "failed"


def test_hooks_result_for_a_call_never_recorded_is_rebuilt_from_history(store):
    """A crash between the response and its pending write: the result's
    request still carries the call, so the effect is recorded, completed."""
    f = EffectsFilter(EffectsConfig(), store)
    c = CANNED["chat"]
    t = make_turn("chat", body_for("chat", c["first"] + c["replay"](c["response"]), C_TOOLS), store)
    request(f, t)
    (rec,) = store.effects.list("default")
    assert rec.call_id == "call_1" and rec.state == "completed" and rec.tool == "exec" and PR_URL in rec.refs


def test_hooks_unknown_when_history_dropped_before_the_result(store):
    f = EffectsFilter(EffectsConfig(), store)
    t1 = make_turn("anthropic", body_for("anthropic", [{"role": "user", "content": "deploy"}], A_TOOLS), store)
    request(f, t1)
    respond(f, t1, {"content": [{"type": "tool_use", "id": "toolu_d", "name": "Bash",
                                 "input": {"command": "terraform apply -auto-approve"}}]})
    t2 = make_turn("anthropic", body_for("anthropic", [{"role": "user", "content": "Summary: deploying."}], A_TOOLS),
                   store)
    request(f, t2)
    rec = store.effects.by_call_id("default", "toolu_d")
    assert rec.state == "unknown" and "compacted" in rec.note
    (seg,) = offered(t2)
    assert "Pending or unknown" in seg.text and "terraform apply" in seg.text
    assert "Next safe action: check whether Bash `terraform apply -auto-approve` took effect" in seg.text
    # a late result still settles it
    t3 = make_turn("anthropic", body_for("anthropic", [
        {"role": "user", "content": "Summary: deploying."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_d", "name": "Bash",
                                           "input": {"command": "terraform apply -auto-approve"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_d", "content": "Apply complete!"}]},
    ], A_TOOLS), store)
    request(f, t3)
    assert store.effects.by_call_id("default", "toolu_d").state == "completed"


def test_hooks_store_failure_blocks_with_503(store, monkeypatch):
    f = EffectsFilter(EffectsConfig(async_record=False), store)

    def broken():
        raise StoreError("disk full (test)")

    monkeypatch.setattr(store, "batch", broken)
    t = make_turn("chat", body_for("chat", CANNED["chat"]["first"], C_TOOLS), store)
    with pytest.raises(FilterError) as exc:
        request(f, t)
    assert exc.value.status == 503 and "not forwarded" in exc.value.message
    # at response end a store failure only degrades the turn
    t.state["effects"].capture.done.append(("call_z", "exec", {"command": "x"}))
    f.on_response_end(t)
    assert t.degraded == ["effects"]


def test_hooks_checkpoint_follows_the_ledger_without_rescanning_it(tmp_path):
    """After a compaction every turn shows the checkpoint: it is kept between
    turns, and still changes as soon as the ledger does (a record written by
    another worker) or a pending call starts reading as unknown."""
    now = [1000.0]
    store = open_store(tmp_path / "store", clock=lambda: now[0], pending_timeout=600)
    try:
        f = EffectsFilter(EffectsConfig(), store, clock=lambda: now[0])
        c = CANNED["chat"]
        first = body_for("chat", c["first"], C_TOOLS)
        request(f, make_turn("chat", first, store))
        respond(f, make_turn("chat", first, store), c["response"])
        request(f, make_turn("chat", body_for("chat", c["first"] + c["replay"](c["response"]), C_TOOLS), store))
        compacted = body_for("chat", [{"role": "user", "content": "Summary: PR opened. Go on."}], C_TOOLS)

        def checkpoint() -> str:
            t = make_turn("chat", compacted, store)
            request(f, t)
            (seg,) = [s for s in offered(t) if s.kind == "checkpoint"]
            return seg.text

        first_text = checkpoint()
        assert "gh pr create --fill" in first_text and "→ completed" in first_text
        rev = store.effects.revision("default", session="s1")
        assert rev is not None and checkpoint() == first_text  # unchanged ledger: same checkpoint
        # another worker records a call in this session: the next turn's checkpoint has it
        store.effects.put_pending("default", key="k-deploy", call_id="call_9", tool="exec",
                                  args_canonical='{"command":"make deploy"}', session="s1", task="s1")
        assert store.effects.revision("default", session="s1") != rev
        text = checkpoint()
        assert "make deploy" in text and "→ pending" in text
        now[0] += 601  # ... and once the pending call is past the timeout, it reads as unknown
        text = checkpoint()
        assert "make deploy" in text and "→ unknown" in text and "→ pending" not in text
    finally:
        store.close()


def test_hooks_a_request_that_brings_nothing_new_commits_nothing(store):
    """A resent or unchanged request settles on a read snapshot: no writer
    lock, no fsync; the thread's last-seen time moves only every 30 s."""
    now = [1000.0]
    f = EffectsFilter(EffectsConfig(), store, clock=lambda: now[0])
    c = CANNED["chat"]
    first = body_for("chat", c["first"], C_TOOLS)
    request(f, make_turn("chat", first, store))
    respond(f, make_turn("chat", first, store), c["response"])  # records the pending calls
    second = body_for("chat", c["first"] + c["replay"](c["response"]), C_TOOLS)
    request(f, make_turn("chat", second, store))  # settles them: a write
    state = store.sessions.get("default", "s1")
    txn = store._env.env.info()["last_txnid"]
    for step in (1.0, 10.0, 29.0):
        now[0] = 1000.0 + step
        t = make_turn("chat", second, store)
        request(f, t)
        assert t.state["effects"].compacted is False and t.state["effects"].effects == []
    assert store._env.env.info()["last_txnid"] == txn and store.sessions.get("default", "s1") == state
    now[0] = 1031.0  # past the resolution: the thread's last-seen time is written
    request(f, make_turn("chat", second, store))
    assert store._env.env.info()["last_txnid"] == txn + 1
    (thread,) = store.sessions.get("default", "s1")["effects"]["threads"].values()
    assert thread["t"] == 1031.0
    (rec,) = store.effects.list("default", session="s1")
    assert rec.state == "completed"


def _read_only_history(n: int) -> list:
    """A chat history of ``n`` read-only calls and their results (nothing for the ledger to record)."""
    items: list = [{"role": "user", "content": "read the files"}]
    for i in range(n):
        items += [{"role": "assistant", "content": None, "tool_calls": [
                      {"id": f"call_{i}", "type": "function", "function": {"name": "read",
                                                                          "arguments": f'{{"path":"f{i}"}}'}}]},
                  {"role": "tool", "tool_call_id": f"call_{i}", "content": f"text of f{i}"}]
    return items


def test_hooks_a_conversation_first_seen_is_settled_once_and_its_state_rides_with_the_next_write_ahead(
        store, monkeypatch):
    """A long conversation this process never saw, whose results need no ledger
    write: its results are settled once (on the snapshot), and only the
    session's ledger state is written, in the same commit as the next filter's
    write-ahead."""
    settled = []
    real = Settler.settle
    monkeypatch.setattr(Settler, "settle", lambda self, *a, **k: settled.append(1) or real(self, *a, **k))

    class After(Filter):
        name = "after"

        async def on_request(self, t):
            await t.commit(store, lambda b: b.sessions.update("default", "s1", {"after": True}))

    f = EffectsFilter(EffectsConfig(), store)
    t = make_turn("chat", body_for("chat", _read_only_history(12), C_TOOLS), store)
    before = store._env.env.info()["last_txnid"]
    Pipeline([f, After()]).run_request(t)
    assert len(settled) == 12 and store._env.env.info()["last_txnid"] == before + 1
    stored = store.sessions.get("default", "s1")
    (thread,) = stored["effects"]["threads"].values()
    assert stored["after"] is True and thread["n"] == 25 and thread["open"] == []
    assert store.effects.list("default", session="s1") == []


def test_hooks_a_state_changed_since_the_snapshot_is_settled_again_under_the_writer(store):
    """Another process wrote the session's ledger state between the snapshot and
    the write: the decision is not kept, the ledger is settled again on what is
    stored now, and both threads are kept."""
    class Other(Filter):  # another process's write of the same session, between the two
        name = "other"

        def on_request(self, t):
            with store.batch() as b:
                b.sessions.update("default", "s1", {"effects": {"threads": {"t-other": {
                    "p": "x", "n": 1, "s": [], "k": [], "c": False, "t": 1.0, "open": [], "r": None}}}})

    f = EffectsFilter(EffectsConfig(), store)
    t = make_turn("chat", body_for("chat", _read_only_history(3), C_TOOLS), store)
    Pipeline([f, Other()]).run_request(t)
    threads = store.sessions.get("default", "s1")["effects"]["threads"]
    assert set(threads) == {"t-other", t.state["effects"].capture.thread}


def test_hooks_aux_calls_without_tools_are_skipped(store):
    f = EffectsFilter(EffectsConfig(), store)
    t = make_turn("anthropic", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "title?"}]},
                  store)
    request(f, t)
    assert store.sessions.get("default", "s1") is None and ("effects" not in t.state or t.state["effects"].capture is None)


# -- end to end through the official SDKs ----------------------------------------------------------

async def anthropic_turn(client, messages, stream):
    kw = dict(model="claude-test-1", max_tokens=200, tools=A_TOOLS, messages=messages)
    if stream:
        async with client.messages.stream(**kw) as s:
            return await s.get_final_message()
    return await client.messages.create(**kw)


def flush(p) -> None:
    """Wait for the effects filters' response-end writes (they run off the event loop)."""
    for pipeline in p.state.relay.pipelines.values():
        for stage in pipeline.stages:
            getattr(stage.filter, "flush", lambda: None)()


def tool_use(msg):
    (use,) = [b for b in msg.content if b.type == "tool_use"]
    return use


def answered(msg, result, use_id=None):
    """The assistant's turn and the user's result for its tool call, as an agent sends them back."""
    return [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use_id or tool_use(msg).id,
                                          "content": result}]}]


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_session_checkpoint_after_compaction(make_proxy, fake, stream):
    p = await make_proxy(TOML)
    client = p.anthropic(default_headers={"X-Ctx-Session": "sess-a"})
    fake.script(Reply.tool_call("Bash", {"command": "gh pr create --title 'Fix loader'"}, chunk_split=3,
                                delta_chars=4),
                Reply.tool_call("Read", {"file_path": "README.md"}),
                Reply.text("The PR is open."),
                Reply.text("Writing the release notes."))
    messages = [{"role": "user", "content": "Open a PR for the loader fix."}]
    first = await anthropic_turn(client, messages, stream)
    pr = tool_use(first)
    messages += answered(first, f"Created pull request {PR_URL}", pr.id)
    second = await anthropic_turn(client, messages, stream)
    read = tool_use(second)
    messages += answered(second, "# Loader\nREADME text", read.id)
    await anthropic_turn(client, messages, stream)
    assert all(not checkpoint_texts(r.json) for r in fake.model_requests)
    # the client compacts: its history is now one summary message
    await anthropic_turn(client, [{"role": "user", "content": "Summary: we fixed the loader. Now the release notes."}],
                         stream)
    (cp,) = checkpoint_texts(fake.last.json)
    assert "gh pr create --title 'Fix loader'" in cp and PR_URL in cp and "→ completed" in cp
    assert "README.md" not in cp and "Read" not in cp
    store = p.state.services["store"]
    (rec,) = store.effects.list("default", session="sess-a")
    assert rec.call_id == pr.id and rec.state == "completed" and PR_URL in rec.refs


async def test_chat_session_checkpoint_after_compaction(make_proxy, fake):
    p = await make_proxy(TOML)
    client = p.openai(default_headers={"X-Ctx-Session": "sess-c"})
    fake.script(Reply.tool_call("exec", {"command": "git push origin fix && gh pr create --fill"}, chunk_split=4,
                                delta_chars=3),
                Reply.tool_call("read", {"path": "CHANGELOG.md"}),
                Reply.text("done"), Reply.text("ok"))
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Ship the fix."}]

    async def turn():
        stream = await client.chat.completions.create(model="gpt-5", messages=messages, tools=C_TOOLS, stream=True)
        calls = {}
        async for chunk in stream:
            for tc in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                c = calls.setdefault(tc.index, {"id": tc.id, "name": "", "args": ""})
                c["name"] += tc.function.name or ""
                c["args"] += tc.function.arguments or ""
        return list(calls.values())

    for result in (f"remote: {PR_URL}", "## 1.2.0"):
        (call,) = await turn()
        messages += [{"role": "assistant", "content": None, "tool_calls": [
            {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": call["args"]}}]},
            {"role": "tool", "tool_call_id": call["id"], "content": result}]
    await turn()
    messages[:] = [{"role": "system", "content": "You are an agent."},
                   {"role": "user", "content": "Summary of earlier work: fix shipped. Continue."}]
    await turn()
    (cp,) = checkpoint_texts(fake.last.json)
    assert "gh pr create --fill" in cp and PR_URL in cp and "CHANGELOG" not in cp


async def test_responses_codex_session_checkpoint_after_compaction(make_proxy, fake):
    p = await make_proxy(TOML)
    client = p.openai(default_headers={"X-Ctx-Session": "sess-r"})
    patch = "*** Begin Patch\n*** Update File: src/loader.py\n@@\n-a\n+b\n*** End Patch"
    fake.script(Reply.tool_call("shell", {"command": ["bash", "-lc", "gh pr create --fill"]}),
                Reply.custom_tool_call("apply_patch", patch),
                Reply.tool_call("shell", {"command": ["bash", "-lc", "git status --short"]}),
                Reply.text("all done"), Reply.text("continuing"))
    items = [{"role": "user", "content": "Fix the loader and open a PR."}]
    outputs = ['{"output": "https://github.com/acme/app/pull/4822\\n", "metadata": {"exit_code": 0}}',
               "Success. Updated the following files:\nM src/loader.py", "M src/loader.py"]
    for i, out in enumerate(outputs):
        if i % 2 == 0:
            async with client.responses.stream(model="gpt-5", input=items, tools=R_TOOLS) as s:
                res = await s.get_final_response()
        else:
            res = await client.responses.create(model="gpt-5", input=items, tools=R_TOOLS)
        (call,) = [o for o in res.output if o.type in ("function_call", "custom_tool_call")]
        items += [call.model_dump(exclude_none=True),
                  {"type": "custom_tool_call_output" if call.type == "custom_tool_call" else "function_call_output",
                   "call_id": call.call_id, "output": out}]
    await client.responses.create(model="gpt-5", input=items, tools=R_TOOLS)
    assert all(not checkpoint_texts(r.json) for r in fake.model_requests)
    # Codex compaction: history replaced by a compaction item and the user messages
    compacted = [{"type": "compaction", "encrypted_content": "gAAAA-opaque"},
                 {"role": "user", "content": "Fix the loader and open a PR."}]
    await client.responses.create(model="gpt-5", input=compacted, tools=R_TOOLS)
    (cp,) = checkpoint_texts(fake.last.json)
    assert "gh pr create --fill" in cp and "pull/4822" in cp and "apply_patch" in cp and "src/loader.py" in cp
    assert "git status" not in cp
    store = p.state.services["store"]
    states = {r.tool: r.state for r in store.effects.list("default", session="sess-r")}
    assert states == {"shell": "completed", "apply_patch": "completed"}


async def test_duplicate_after_compaction_is_noted_to_the_model(make_proxy, fake):
    p = await make_proxy(TOML)
    client = p.anthropic(default_headers={"X-Ctx-Session": "sess-d"})
    cmd = {"command": "gh pr create --title 'Fix loader'"}
    fake.script(Reply.tool_call("Bash", cmd), Reply.text("opened"),
                Reply.tool_call("Bash", cmd), Reply.text("hm"))
    messages = [{"role": "user", "content": "Open the PR."}]
    first = await anthropic_turn(client, messages, True)
    messages += answered(first, f"Created {PR_URL}")
    await anthropic_turn(client, messages, True)
    messages = [{"role": "user", "content": "Summary: working on the loader. Continue."}]
    again = await anthropic_turn(client, messages, True)  # the model repeats the call despite the checkpoint
    flush(p)
    store = p.state.services["store"]
    recs = store.effects.by_key("default", store.effects.by_call_id("default", tool_use(first).id).key)
    assert [r.call_id for r in recs] == [tool_use(first).id, tool_use(again).id]
    messages += answered(again, "a pull request for branch fix already exists")
    await anthropic_turn(client, messages, True)
    body = orjson.dumps(fake.last.json).decode()
    assert "repeated side effects that had already completed" in body and "gh pr create" in body


async def test_openclaw_rewritten_ids_match(make_proxy, fake):
    """OpenClaw replays ``call_ab…`` as ``callab…``; and a fully rewritten id
    still matches through the call's key in the history."""
    p = await make_proxy(TOML)
    client = p.openai(default_headers={"X-Ctx-Session": "sess-o"})
    fake.script(Reply.tool_call("exec", {"command": "gh issue create -t bug"}, call_id="call_ab12-x9"),
                Reply.tool_call("exec", {"command": "gh issue close 77"}, call_id="call_zz_1"),
                Reply.text("ok"))
    messages = [{"role": "user", "content": "file the bug"}]
    await client.chat.completions.create(model="gpt-5", messages=messages, tools=C_TOOLS)
    messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": "callab12x9", "type": "function",
                  "function": {"name": "exec", "arguments": '{"command": "gh issue create -t bug"}'}}]},
                 {"role": "tool", "tool_call_id": "callab12x9", "content": "https://github.com/acme/app/issues/77"}]
    await client.chat.completions.create(model="gpt-5", messages=messages, tools=C_TOOLS)
    messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": "tool000002", "type": "function",
                  "function": {"name": "exec", "arguments": '{"command":"gh issue close 77"}'}}]},
                 {"role": "tool", "tool_call_id": "tool000002", "content": "Closed issue #77"}]
    await client.chat.completions.create(model="gpt-5", messages=messages, tools=C_TOOLS)
    store = p.state.services["store"]
    recs = store.effects.list("default", session="sess-o")
    assert [(r.call_id, r.state) for r in recs] == [("call_ab12-x9", "completed"), ("call_zz_1", "completed")]
    assert "https://github.com/acme/app/issues/77" in recs[0].refs
    assert "tool000002" in recs[1].aliases


async def test_position_and_tool_name_match_without_history(make_proxy, fake):
    """Responses with previous_response_id: no history to match against, ids
    rewritten; the result matches the thread's open call of the same tool."""
    p = await make_proxy(TOML)
    client = p.openai(default_headers={"X-Ctx-Session": "sess-p"})
    fake.script(Reply.tool_call("shell", {"command": ["bash", "-lc", "make deploy"]}, call_id="call_Q_1"),
                Reply.text("deployed"))
    res = await client.responses.create(model="gpt-5", input=[{"role": "user", "content": "deploy"}], tools=R_TOOLS)
    await client.responses.create(model="gpt-5", previous_response_id=res.id, tools=R_TOOLS, input=[
        {"type": "function_call_output", "call_id": "rewritten-1", "output": "deployed v7"}])
    rec = p.state.services["store"].effects.by_call_id("default", "call_Q_1")
    assert rec.state == "completed" and rec.excerpt == "deployed v7" and "rewritten-1" in rec.aliases


@contextmanager
def failing_commit(real_batch):
    with real_batch() as b:
        yield b
        raise StoreError("commit failed: disk full (test)")  # aborts the real transaction


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_failed_commit_blocks_the_request(make_proxy, fake, monkeypatch, api):
    import anthropic
    import openai

    p = await make_proxy(TOML)
    store = p.state.services["store"]
    real = store.batch
    c = CANNED[api]
    body = body_for(api, c["first"] + c["replay"](c["response"]), c["tools"])
    monkeypatch.setattr(store, "batch", lambda: failing_commit(real))
    before = len(fake.model_requests)
    if api == "anthropic":
        with pytest.raises(anthropic.APIStatusError) as exc:
            await p.anthropic().messages.create(**body)
        assert exc.value.body["type"] == "error" if isinstance(exc.value.body, dict) and "type" in exc.value.body \
            else exc.value.response.json()["type"] == "error"
    else:
        client = p.openai()
        with pytest.raises(openai.APIStatusError) as exc:
            if api == "chat":
                await client.chat.completions.create(**body)
            else:
                await client.responses.create(**body)
        assert "error" in exc.value.response.json()
    assert exc.value.status_code == 503
    assert "effect ledger" in exc.value.response.text
    assert len(fake.model_requests) == before  # the provider received nothing
    assert store.effects.list("default") == []  # and nothing half-written


async def test_a_retry_sent_at_once_reads_behind_the_answers_queued_record(make_proxy, fake):
    """The answer's calls are recorded after it went out (queued on the store's
    writer). A client that discards the answer and sends the same request again
    at once still has the call settled as ``unknown`` (it never ran): the
    request's ledger check runs behind the queued record, not on a snapshot
    from before it."""
    p = await make_proxy(TOML)
    client = p.anthropic(default_headers={"X-Ctx-Session": "sess-retry"})
    fake.script(Reply.tool_call("Bash", {"command": "make release"}, call_id="toolu_retry1"), Reply.text("ok"))
    messages = [{"role": "user", "content": "release it"}]
    await anthropic_turn(client, messages, False)
    await anthropic_turn(client, messages, False)  # the same request again, before the record landed
    p.state.services["writer"].flush()
    rec = p.state.services["store"].effects.by_call_id("default", "toolu_retry1")
    assert rec.state == "unknown" and "continued without this call" in rec.note


async def test_write_ahead_waits_off_the_event_loop(make_proxy, fake):
    """A turn whose tool results must be on disk first waits for its commit
    without holding the event loop: while another holder keeps the store's
    write lock, the health check and another session's turn are answered, the
    waiting request is not forwarded, and it goes on once its results are
    recorded."""
    p = await make_proxy(TOML)
    store = p.state.services["store"]
    client = p.anthropic(default_headers={"X-Ctx-Session": "sess-wait"})
    fake.script(Reply.tool_call("Bash", {"command": "make deploy"}, call_id="toolu_wait1"))
    messages = [{"role": "user", "content": "deploy it"}]
    first = await anthropic_turn(client, messages, False)
    messages += answered(first, "deployed v9", "toolu_wait1")
    other = p.anthropic(default_headers={"X-Ctx-Session": "sess-other"})
    hello = dict(model="claude-test-1", max_tokens=50, messages=[{"role": "user", "content": "hello"}])
    await other.messages.create(**hello)  # its session is set up: a later turn writes nothing
    p.state.services["writer"].flush()  # the call is recorded (pending) before the lock is taken

    with write_lock_held(store):
        before = len(fake.model_requests)
        waiting = asyncio.ensure_future(anthropic_turn(client, messages, False))
        await asyncio.sleep(0.3)
        assert not waiting.done() and len(fake.model_requests) == before  # not forwarded yet
        async with aiohttp.ClientSession() as http:  # the loop answers meanwhile
            async with http.get(p.url + "/ctx/healthz") as r:
                assert r.status == 200
        assert (await other.messages.create(**hello)).content[0].text  # another session's turn goes through
        assert not waiting.done() and store.effects.by_call_id("default", "toolu_wait1").state == "pending"
    await asyncio.wait_for(waiting, 10)
    rec = store.effects.by_call_id("default", "toolu_wait1")
    assert rec.state == "completed" and rec.excerpt == "deployed v9"
    sent = [r for r in fake.model_requests if b"deployed v9" in r.body]
    assert len(sent) == 1  # forwarded once, after the commit


async def test_concurrent_tool_loops_record_every_result_before_forwarding(make_proxy, fake):
    """Eight agents in tool loops at once: their write-aheads share the store
    writer's commits, and none is lost, crossed with another session's, or
    late: when the provider receives a request, the result it carries is
    already recorded."""
    p = await make_proxy(TOML)
    store = p.state.services["store"]
    late: list[str] = []

    def reply(record):
        first = record.json["messages"][0]["content"]  # (the proxy keeps its X-Ctx-* headers to itself)
        sid = "agent" + (first if isinstance(first, str) else first[0]["text"]).rsplit(" ", 1)[1]
        i = (len(record.json["messages"]) - 1) // 2  # turns done so far
        if i:  # this request carries the result of call i-1: it must be on disk already
            rec = store.effects.by_call_id("default", f"toolu_{sid}_{i - 1}")
            if rec is None or rec.state != "completed":
                late.append(f"{sid}:{i - 1}")
        return Reply.tool_call("Bash", {"command": f"make step-{i}"}, call_id=f"toolu_{sid}_{i}")

    fake.default_reply = reply
    turns = 5

    async def agent(k: int) -> None:
        sid = f"agent{k}"
        client = p.anthropic(default_headers={"X-Ctx-Session": sid})
        messages = [{"role": "user", "content": f"release component {k}"}]
        for i in range(turns):
            msg = await anthropic_turn(client, messages, False)
            messages += answered(msg, f"{sid} step {i} done")

    await asyncio.wait_for(asyncio.gather(*(agent(k) for k in range(8))), 60)
    assert late == []
    store = p.settled_store()
    for k in range(8):
        recs = store.effects.list("default", session=f"agent{k}")
        done = {r.call_id: r for r in recs if r.state == "completed"}
        assert sorted(done) == [f"toolu_agent{k}_{i}" for i in range(turns - 1)]  # the last has no result yet
        assert all(done[f"toolu_agent{k}_{i}"].excerpt == f"agent{k} step {i} done" for i in range(turns - 1))


async def test_codex_over_websocket_previous_response_id(make_proxy, fake):
    """Codex over WebSocket: results come with previous_response_id and no
    history; they settle the thread's calls, and a later compaction item
    brings the checkpoint."""
    import json

    import aiohttp

    async def ws_turn(ws, body):
        await ws.send_str(json.dumps({"type": "response.create", **body}))
        events = []
        async for msg in ws:
            ev = json.loads(msg.data)
            events.append(ev)
            if ev["type"] in ("response.completed", "response.failed", "error"):
                return events
        return events

    p = await make_proxy(TOML)
    fake.script(Reply.tool_call("shell", {"command": ["bash", "-lc", "gh pr merge 4821 --squash"]}),
                Reply.text("merged"), Reply.text("next"))
    url = p.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url, headers={"authorization": "Bearer sk-ws", "session-id": "codex-ws"}) as ws:
            first = await ws_turn(ws, {"model": "gpt-5", "tools": R_TOOLS,
                                       "input": [{"role": "user", "content": "merge the PR"}]})
            (call,) = [o for o in first[-1]["response"]["output"] if o["type"] == "function_call"]
            second = await ws_turn(ws, {"model": "gpt-5", "tools": R_TOOLS,
                                        "previous_response_id": first[-1]["response"]["id"],
                                        "input": [{"type": "function_call_output", "call_id": call["call_id"],
                                                   "output": "Merged https://github.com/acme/app/pull/4821"}]})
            assert second[-1]["type"] == "response.completed"
            rec = p.state.services["store"].effects.by_call_id("default", call["call_id"])
            assert rec.state == "completed" and PR_URL in rec.refs
            await ws_turn(ws, {"model": "gpt-5", "tools": R_TOOLS, "previous_response_id": second[-1]["response"]["id"],
                               "input": [{"type": "compaction", "encrypted_content": "opaque"},
                                         {"role": "user", "content": "go on"}]})
    (cp,) = checkpoint_texts([r for r in fake.requests if r.method == "WS"][-1].json)
    assert "gh pr merge 4821 --squash" in cp and PR_URL in cp


def nested(levels: int):
    value = "x"
    for _ in range(levels):
        value = [value]
    return value


async def test_deeply_nested_tool_arguments_fail_no_turn(make_proxy, fake):
    """Tool arguments nested past MAX_DEPTH, from the provider (whole and
    streamed) or from a client's history, go through the default pipeline:
    the call is on the ledger under a stand-in, never a 500 or a 502."""
    p = await make_proxy()
    stand_in = '"(arguments nested deeper than 100 levels)"'
    deep = {"a": nested(600)}
    fake.script(Reply.tool_call("Bash", deep), Reply.tool_call("Bash", deep), Reply.text("ok"))
    ant = {"x-api-key": "k", "anthropic-version": "2023-06-01", "X-Ctx-Session": "deep-a"}
    messages = [{"role": "user", "content": "go"}]
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{p.url}/v1/messages", headers=ant, json=body_for("anthropic", messages, A_TOOLS)) as r:
            assert r.status == 200
            answer = orjson.loads(await r.read())
        (use,) = [b for b in answer["content"] if b["type"] == "tool_use"]
        messages += [{"role": "assistant", "content": answer["content"]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "ok"}]}]
        async with http.post(f"{p.url}/v1/messages", headers=ant,
                             json={**body_for("anthropic", messages, A_TOOLS), "stream": True}) as r:
            assert r.status == 200 and b"message_stop" in await r.read()
        # a client's history holding such a call (never seen by the proxy) and its result
        chat = [{"role": "user", "content": "go"},
                {"role": "assistant", "tool_calls": [{"id": "call_deep", "type": "function", "function": {
                    "name": "exec", "arguments": '{"command":' + "[" * 600 + "]" * 600 + "}"}}]},
                {"role": "tool", "tool_call_id": "call_deep", "content": "done"}]
        async with http.post(f"{p.url}/v1/chat/completions", json=body_for("chat", chat, C_TOOLS),
                             headers={"authorization": "Bearer k", "X-Ctx-Session": "deep-c"}) as r:
            assert r.status == 200
    flush(p)
    store = p.settled_store()
    done, streamed = store.effects.list("default", session="deep-a")
    assert (done.call_id, done.state, done.args_canonical) == (use["id"], "completed", stand_in)
    assert streamed.state == "pending" and streamed.args_canonical == stand_in
    (rebuilt,) = store.effects.list("default", session="deep-c")
    assert (rebuilt.call_id, rebuilt.state, rebuilt.args_canonical) == ("call_deep", "completed", stand_in)


async def test_goal_header_is_redacted_before_it_is_kept(make_proxy, fake, tmp_path):
    """A secret in X-Ctx-Goal (default pipeline) reaches neither the provider
    (the checkpoint's Goal line) nor the data directory (the session record,
    the stored checkpoint): the goal is redacted before it is used."""
    secret = "ghp_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2Xc4Vb6N"
    p = await make_proxy()
    client = p.anthropic(default_headers={"X-Ctx-Session": "goal-s",
                                          "X-Ctx-Goal": f"Ship the release; the CI token is {secret}"})
    fake.script(Reply.tool_call("Bash", {"command": "gh pr create --fill"}), Reply.text("done"), Reply.text("next"))
    messages = [{"role": "user", "content": "open the PR"}]
    first = await anthropic_turn(client, messages, False)
    messages += answered(first, f"Created {PR_URL}")
    await anthropic_turn(client, messages, False)
    await anthropic_turn(client, [{"role": "user", "content": "Summary: PR opened. Go on."}], False)
    (cp,) = checkpoint_texts(fake.last.json)
    assert 'Goal [t1]: "Ship the release; the CI token is [REDACTED:' in cp  # the ledger folded in the task state
    assert "gh pr create --fill" in cp and PR_URL in cp
    flush(p)
    p.settled_store()
    sent = b"".join(r.body + str(r.headers).encode() for r in fake.requests)
    assert secret.encode() not in sent
    disk = b"".join(f.read_bytes() for f in (tmp_path / "data").rglob("*") if f.is_file())
    assert b"Ship the release" in disk  # the goal is kept (the session record, the checkpoint)
    assert secret.encode() not in disk


def test_a_ledger_checkpoint_over_its_cap_is_cut_between_effects(tmp_path):
    """Placed alone (no checkpoint filter), the ledger's checkpoint is cut at an effect boundary when
    it outgrows ``checkpoint_max_tokens``, the request still goes out with it."""
    cfg = tmp_path / "c.toml"
    cfg.write_text("[filters.effects]\ncheckpoint_max_tokens = 250\n")
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(("identify", "effects", "inject"), filter_configs(load_config(cfg)), {"store": store})

    def send(messages):
        t = Turn(api="anthropic", route="anthropic", path="/v1/messages", tokens=TOKENS,
                 headers=CIMultiDict({"x-ctx-session": "cut"}), services={"store": store},
                 request=ADAPTERS["anthropic"].parse_request(orjson.dumps(
                     {"model": "m", "max_tokens": 9, "tools": A_TOOLS, "messages": messages})))
        pipe.run_request(t)
        return t
    history = [{"role": "user", "content": "Open the PRs."}]
    for i in range(12):
        history += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                                                       "input": {"command": f"gh pr create --title 'Part {i}'"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                                  "content": f"https://github.com/acme/app/pull/{i}"}]}]
    send(history)
    t = send([{"role": "user", "content": "Summary: PRs opened. Continue."}])
    assert not t.degraded
    (seg,) = [s for s in offered(t) if s.kind == "checkpoint"]
    assert seg.status == "truncated" and seg.tokens <= 250 and "Part 11'" in seg.text and "Part 0'" not in seg.text
    store.close()
