"""checkpoint: extraction over the request view (instructions, decisions, evidence, questions), the
bounded task state, its budgeted text, the filter on the recorded fixtures, and its manifest part."""
import re

import orjson
import pytest
from multidict import CIMultiDict
from realclients import body_bytes, load

from ctxproxy.config import ConfigError, load_config
from ctxproxy.filters import build_pipeline, filter_configs
from ctxproxy.filters.base import Turn
from ctxproxy.filters.checkpoint import extract
from ctxproxy.filters.checkpoint import filter as checkpoint_filter
from ctxproxy.filters.checkpoint.render import EffectItem, render
from ctxproxy.filters.checkpoint.state import TaskState
from ctxproxy.filters.effects.rules import canonical_json, effect_key
from ctxproxy.filters.segments import render as render_segment
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.store import open_store

TOKENS = TokenCounter()


def test_instructions_are_the_users_own_sentences_verbatim():
    text = "Fix the loader. Don't change the public API! It is slow.\nAlways run `make check` first."
    assert extract.instructions(text) == ["Don't change the public API!", "Always run `make check` first."]
    assert extract.instructions("Actually, the limit is 30 s.") == ["Actually, the limit is 30 s."]
    assert extract.instructions("Deploy v1.4.2 now, never on Fridays.") == ["Deploy v1.4.2 now, never on Fridays."]
    assert extract.instructions("What does this do?") == []


@pytest.mark.parametrize("text, decided", [
    ("yes, use exponential backoff", True), ("Go with option 2", True), ("approved", True),
    ("LGTM, ship it", True), ("let's use postgres", True), ("why does it fail?", False), ("the tests fail", False),
])
def test_decisions_accept_or_choose(text, decided):
    assert (extract.decision(text) is not None) is decided


def test_decision_lines_and_questions():
    assert extract.decision_lines("# rules\n- decision: use exponential backoff\nother") == ["use exponential backoff"]
    assert extract.question("Done. May I deploy v1.4.2 to production?") == "May I deploy v1.4.2 to production?"
    assert extract.question("Done.") is None
    assert extract.is_continuation("continue") and extract.is_continuation("What is next?")
    assert not extract.is_continuation("yes, go")


def test_agent_scaffolding_is_not_the_users_words():
    items = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nContents of /r/CLAUDE.md (project):\n\nx\n</system-reminder>"},
        {"type": "text", "text": "Fix it."}]},
        {"role": "user", "content": "<environment_context>\n<cwd>/r</cwd>\n</environment_context>"},
        {"role": "user", "content": "# AGENTS.md instructions for /r\n\n<INSTRUCTIONS>\nx\n</INSTRUCTIONS>"},
        {"role": "user", "content": "This session is being continued from a previous conversation that ran out."},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "Don't."}]}]
    assert list(extract.user_turns(items)) == [(0, "Fix it.")]


@pytest.mark.parametrize("tool, args, result, kinds", [
    ("Bash", {"command": "pytest -q"}, "....\n===== 12 passed, 1 skipped in 0.41s =====\n", ["test"]),
    ("Bash", {"command": "pytest -q"}, "===== 1 failed, 11 passed in 0.41s =====\nExit code: 1", []),
    ("Bash", {"command": "npx jest"}, "Tests:       14 passed, 14 total\n", ["test"]),
    ("shell", {"command": ["bash", "-lc", "go test ./..."]},
     '{"output": "ok  \\texample.com/refund\\t0.2s\\n", "metadata": {"exit_code": 0}}', ["test"]),
    ("exec", {"command": "make test"}, "all good\nexit code: 0", ["test"]),
    ("Bash", {"command": "git commit -m x"}, "[main 3f2a9c1] Fix refund rounding\n 1 file changed", ["commit"]),
    ("Bash", {"command": "gh pr create"}, "https://github.com/acme/shop/pull/4821\n", ["url"]),
    ("Bash", {"command": "./deploy.sh"}, "Deployed refund-service v1.4.2 to staging\n", ["deploy"]),
    ("exec", {"command": "jira issue create -tTask -s'Audit reports'"},
     "✓ Issue created\nhttps://acme.atlassian.net/browse/PAY-231\n", ["url"]),
    ("mcp__linear__create_issue", {"title": "Audit reports"},
     '{"identifier": "PAY-412", "url": "https://linear.app/acme/issue/PAY-412/audit-reports"}', ["url"]),
    ("terminal", {"command": "curl -n -X POST https://acme.atlassian.net/rest/api/3/issue"},
     '{"id": "10231", "key": "PAY-232", "self": "https://acme.atlassian.net/rest/api/3/issue/10231"}', ["ticket"]),
    ("terminal", {"command": "curl -n https://acme.atlassian.net/rest/api/3/issue/PAY-1"},
     '{"key": "not a key", "self": "https://acme.atlassian.net/rest/api/3/issue/1"}', []),
    ("Bash", {"command": "./deploy.sh"}, "Deployed nothing\nExit code: 2", []),
])
def test_evidence_from_tool_results(tool, args, result, kinds):
    assert [k for k, _ in extract.evidence(tool, args, result, False)] == kinds


def test_state_is_bounded_deduplicated_newest_last_and_keeps_its_head():
    st = TaskState()
    for i in range(40):
        st.add("instructions", [i + 1, f"rule {i}"])
    assert len(st.instructions) == 24 and st.instructions[0] == [1, "rule 0"] and st.instructions[-1][1] == "rule 39"
    st.add("instructions", [41, "rule 2"])  # said again: moves to the end, keeps where it came from
    assert st.instructions[-1] == [41, "rule 2"] and [e[1] for e in st.instructions].count("rule 2") == 1
    for i in range(5):
        st.add("evidence", [i, "test", f"tests passed: {i}"])
    st.add("evidence", [9, "url", "https://x/pull/1"])
    assert [e[2] for e in st.evidence] == ["tests passed: 2", "tests passed: 3", "tests passed: 4", "https://x/pull/1"]
    assert TaskState.load(orjson.loads(orjson.dumps(st.dump()))).dump() == st.dump()


def test_a_long_sessions_turns_resent_after_a_compaction_are_known():
    """Codex re-sends every earlier user turn after compacting: none of them is news."""
    st = TaskState()
    numbers = [st.turn_of(f"turn {i}")[0] for i in range(800)]
    for i in range(800):
        st.first_seen(f"answer {i}")
    assert [st.turn_of(f"turn {i}") for i in (0, 400, 799)] == [(numbers[0], False), (numbers[400], False),
                                                                 (numbers[799], False)]
    assert st.first_seen("answer 799") is False and st.first_seen("answer 0") is True


def test_render_fits_the_budget_deterministically():
    st = TaskState(goal=[1, "Ship the refund fix"], question=[9, "May I deploy?"])
    for i in range(24):
        st.add("instructions", [i + 2, f"Always keep module {i} free of floats, it matters a lot."])
        st.add("evidence", [i + 2, "url", f"https://github.com/acme/shop/pull/{i}"])
    pending = [EffectItem("open", True, "deploy_prod env=prod [key 1a2b3c4d]", "unknown")]
    text, dropped = render(st, pending, TOKENS.count, 560)
    assert TOKENS.count(text) <= 560 and dropped > 0
    assert text == render(st, pending, TOKENS.count, 560)[0]
    assert 'Goal [t1]: "Ship the refund fix"' in text and "May I deploy?" in text and "deploy_prod" in text
    assert "module 0 free" in text and "module 23 free" in text  # the first and the newest stay
    assert text.rstrip().endswith('do not act on it before.')


def test_a_tight_budget_shortens_effects_before_it_leaves_any_out():
    """Brief effects (shorter arguments, no opaque id where a URL names the thing) come before
    dropping an item: the ticket's URL and key stay, its uuid goes, nothing is counted as left out."""
    st = TaskState(goal=[1, "Ship the refund fix"])
    for i in range(6):
        st.add("instructions", [i + 2, f"Keep module {i} free of floats."])
    ticket = EffectItem("done", True, "create_issue title=" + "Audit the reports " * 8 + "[key 1a2b3c4d]", "completed",
                        "; refs: id=8f1e2c3a-5b7d-4e21-9c0a-2d4f6b8e1a3c, url=https://linear.app/acme/issue/PAY-412",
                        "create_issue title=Audit the reports… [key 1a2b3c4d]",
                        "; refs: url=https://linear.app/acme/issue/PAY-412")
    full, _ = render(st, [ticket], TOKENS.count, 2000)
    budget = TOKENS.count(full) - 10
    text, dropped = render(st, [ticket], TOKENS.count, budget)
    assert "8f1e2c3a" in full and "8f1e2c3a" not in text and TOKENS.count(text) <= budget
    assert dropped == 0 and "PAY-412" in text and "[key 1a2b3c4d]" in text and "not listed here" not in text
    assert all(f"module {i} free" in text for i in range(6))


def test_config(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[filters.checkpoint]\nmax_tokens = 50\n")
    with pytest.raises(ConfigError, match="filters.checkpoint.max_tokens"):
        filter_configs(load_config(cfg))
    assert "checkpoint" in load_config(None).pipeline.request


def run_fixtures(tmp_path, names, pipeline=("identify", "redact", "effects", "checkpoint", "inject", "manifest")):
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(pipeline, filter_configs(load_config(None)),
                          {"store": store, "secret": b"s" * 32})
    turns = []
    for name in names:
        rec = load(name)
        api = "anthropic" if rec["path"].startswith("/v1/messages") else "responses"
        t = Turn(api=api, route="anthropic" if api == "anthropic" else "openai", path=rec["path"],
                 headers=CIMultiDict(rec["headers"]), request=ADAPTERS[api].parse_request(body_bytes(rec)),
                 tokens=TOKENS, services={"store": store, "secret": b"s" * 32})
        pipe.run_request(t)
        turns.append(t)
    return store, turns


def segments_of(turn, kind):
    return [s for s in turn.segments if s.kind == kind]


def test_claude_code_fixtures_checkpoint_after_compact_not_before(tmp_path):
    store, turns = run_fixtures(tmp_path, ["claude-code-rules-first", "claude-code-rules-nested",
                                           "claude-code-compact-request", "claude-code-after-compact"])
    assert [bool(segments_of(t, "task_state")) for t in turns] == [False, False, False, True]
    (seg,) = segments_of(turns[-1], "task_state")
    assert seg.status == "placed" and seg.where == "turn" and seg.trust == "system"
    assert 'Goal [t1]: "ACC-CCCMP1-d5d233: read services/refund/refund.py"' in seg.text
    assert '"use exponential backoff, keep the public API" (decision: line)' in seg.text
    body = orjson.loads(turns[-1].request.to_bytes())
    last_user = [m for m in body["messages"] if m["role"] == "user"][-1]
    assert '<ctx-context kind="task_state"' in last_user["content"][-1]["text"]
    assert turns[2].state["checkpoint"].compaction["phase"] == "request"
    store.close()


def test_codex_fixtures_local_compaction(tmp_path):
    store, turns = run_fixtures(tmp_path, ["codex-rules-first", "codex-compact-request", "codex-after-compact"])
    assert [bool(segments_of(t, "task_state")) for t in turns] == [False, False, True]
    assert turns[-1].state["checkpoint"].compaction == {"agent": "codex", "style": "local", "phase": "resumed"}
    store.close()


def test_a_session_first_seen_after_its_compaction_gets_no_checkpoint(tmp_path):
    """Nothing is known that the request does not show: the body stays as sent."""
    store, (turn,) = run_fixtures(tmp_path, ["claude-code-after-compact"])
    assert not segments_of(turn, "task_state") and turn.state["checkpoint"].compaction["phase"] == "resumed"
    store.close()


@pytest.mark.parametrize("api, body", [
    ("anthropic", {"model": "m", "max_tokens": 9, "tools": [{"name": "Bash", "input_schema": {}}], "messages": [
        {"role": "user", "content": "Open the PR."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_early1", "name": "Bash",
                                           "input": {"command": "gh pr create --fill"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_early1",
                                      "content": "https://github.com/acme/shop/pull/7"}]}]}),
    ("responses", {"model": "m", "tools": [{"type": "function", "name": "shell", "parameters": {}}], "input": [
        {"role": "user", "content": "Open the PR."},
        {"type": "function_call", "call_id": "call_early1", "name": "shell",
         "arguments": '{"command": ["bash", "-lc", "gh pr create --fill"]}'},
        {"type": "function_call_output", "call_id": "call_early1", "output": "https://github.com/acme/shop/pull/7"}]}),
])
def test_tool_calls_first_seen_in_history_are_on_the_ledger_as_completed(tmp_path, api, body):
    """A session that began before the proxy (or a restart, or another instance relayed the answer):
    its calls arrive with their results; they are recorded completed and survive the next compaction."""
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(("identify", "effects", "checkpoint", "inject"), filter_configs(load_config(None)),
                          {"store": store})
    path = "/v1/messages" if api == "anthropic" else "/v1/responses"

    def turn(b):
        t = Turn(api=api, route="r", path=path, headers=CIMultiDict({"x-ctx-session": "early"}),
                 request=ADAPTERS[api].parse_request(orjson.dumps(b)), tokens=TOKENS, services={"store": store})
        pipe.run_request(t)
        return t
    turn(body)
    (rec,) = store.effects.list("default", session="early")
    assert rec.state == "completed" and rec.tool in ("Bash", "shell")
    assert "https://github.com/acme/shop/pull/7" in rec.refs
    key = "messages" if api == "anthropic" else "input"
    compacted = {**body, key: [{"role": "user", "content": "Summary: PR work. Continue."}]}
    t = turn(compacted)
    texts = "\n".join(s.text for s in t.segments)
    assert "gh pr create --fill" in texts and "pull/7" in texts
    store.close()


GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def test_checkpoint_text_is_redacted_goal_header_included(tmp_path):
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(("identify", "redact", "effects", "checkpoint", "inject"),
                          filter_configs(load_config(None)), {"store": store, "secret": b"s" * 32})
    tools = [{"name": "Bash", "input_schema": {}}]

    def send(messages):
        headers = CIMultiDict({"x-ctx-session": "red", "x-ctx-goal": f"Rotate the token {GHP} today"})
        t = Turn(api="anthropic", route="anthropic", path="/v1/messages", headers=headers, tokens=TOKENS,
                 request=ADAPTERS["anthropic"].parse_request(orjson.dumps(
                     {"model": "m", "max_tokens": 9, "tools": tools, "messages": messages})),
                 services={"store": store, "secret": b"s" * 32})
        pipe.run_request(t)
        return t
    history = [{"role": "user", "content": f"Never print {GHP} in logs."},
               {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]
    send(history)
    t = send([{"role": "user", "content": "This session is being continued from a previous conversation that "
                                          "ran out of context. Summary: rotated."}, {"role": "user", "content": "go"}])
    (seg,) = segments_of(t, "task_state")
    sent = orjson.loads(t.request.to_bytes())
    assert GHP not in orjson.dumps(sent).decode() and GHP not in seg.text
    assert "[REDACTED:" in seg.text and "Never print [REDACTED:" in seg.text and "Rotate the token [REDACTED:" in seg.text
    part = store.sessions.get("default", "red", part="task_state")
    assert GHP not in orjson.dumps(part).decode()  # the stored state holds redacted text only
    store.close()


def test_responses_kept_by_the_provider_read_each_new_input(tmp_path):
    """With previous_response_id (Codex over WebSocket or HTTP) the input holds only what is new."""
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(("identify", "checkpoint"), filter_configs(load_config(None)), {"store": store})
    tools = [{"type": "function", "name": "shell", "parameters": {}}]

    def send(body):
        t = Turn(api="responses", route="r", path="/v1/responses", headers=CIMultiDict({"x-ctx-session": "ws"}),
                 request=ADAPTERS["responses"].parse_request(orjson.dumps({"model": "m", "tools": tools, **body})),
                 tokens=TOKENS, services={"store": store})
        pipe.run_request(t)
        return t
    send({"input": [{"role": "user", "content": "Fix the loader."}]})
    send({"previous_response_id": "resp_1", "input": [{"role": "user", "content": "Never touch vendor/."}]})
    send({"previous_response_id": "resp_2", "input": [{"role": "user", "content": "Always run make check."}]})
    doc = store.sessions.get("default", "ws", part="task_state")["doc"]
    assert [e[1] for e in doc["instructions"]] == ["Never touch vendor/.", "Always run make check."]
    assert doc["goal"] == [1, "Fix the loader."]
    store.close()


# -- the effect ledger folded in: one segment, one budget, frozen per compaction -------------------

def _long_session(n_turns, effects):
    """An Anthropic history of ``n_turns`` user turns, each giving an instruction and passing a test
    run; ``effects`` maps a turn to the side-effecting (tool, args, result) calls made in it."""
    msgs = []
    for i in range(n_turns):
        text = f"Always keep module_{i} free of floats." if i else "Fix the refund rounding bug and ship it."
        msgs.append({"role": "user", "content": text})
        calls = [("Bash", {"command": f"pytest -k module_{i}"}, f"== {i % 7 + 1} passed in 0.{i:03d}s ==")]
        calls += effects.get(i, [])
        for k, (tool, args, result) in enumerate(calls):
            cid = f"toolu_{i}_{k}"
            msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": cid, "name": tool,
                                                           "input": args}]})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid,
                                                      "content": result}]})
        msgs.append({"role": "assistant", "content": f"module_{i} done."})
    return msgs


def test_forty_hidden_effects_and_200_turns_fit_600_tokens_naming_every_open_effect(tmp_path):
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(("identify", "redact", "effects", "checkpoint", "inject"),
                          filter_configs(load_config(None)), {"store": store, "secret": b"s" * 32})
    tools = [{"name": n, "input_schema": {}} for n in ("Bash", "Edit")]

    def send(messages):
        t = Turn(api="anthropic", route="anthropic", path="/v1/messages", tokens=TOKENS,
                 headers=CIMultiDict({"x-ctx-session": "long"}), services={"store": store, "secret": b"s" * 32},
                 request=ADAPTERS["anthropic"].parse_request(orjson.dumps(
                     {"model": "m", "max_tokens": 9, "tools": tools, "messages": messages})))
        pipe.run_request(t)
        return t
    effects = {}
    for j in range(20):  # irreversible: pull requests
        effects.setdefault(5 + j * 9, []).append(
            ("Bash", {"command": f"gh pr create --title 'Refund fix part {j}'"}, f"https://github.com/acme/shop/pull/{j}"))
    for j in range(10):  # local: edits of the working tree
        effects.setdefault(7 + j * 19, []).append(("Edit", {"file_path": f"/repo/m{j}.py", "old_string": "1.0",
                                                            "new_string": "100"}, "ok"))
    for j in range(4):  # failed deployments
        effects.setdefault(11 + j * 40, []).append(("Bash", {"command": f"./deploy.sh canary-{j}"},
                                                    "deploy failed\nExit code: 1"))
    history = _long_session(200, effects)
    send(history)
    opened = []  # calls the model made whose result never came back
    for j in range(6):
        args = {"command": f"./deploy.sh prod-region-{j}"}
        key = effect_key("default", "long", "Bash", canonical_json(args))
        store.effects.put_pending("default", key=key, call_id=f"toolu_open_{j}", tool="Bash",
                                  args_canonical=canonical_json(args), session="long", task="long")
        if j % 2:
            store.effects.mark_unknown("default", key, f"toolu_open_{j}", note="history compacted")
        opened.append((key, args["command"]))
    ledger = store.effects.list("default", session="long", side_effect=True)
    assert len(ledger) == 40 and not any("pytest" in r.args_canonical for r in ledger)  # test runs: evidence only

    summary = {"role": "user", "content": "This session is being continued from a previous conversation that ran "
                                          "out of context. Summary: refund work."}
    after = [summary, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]
    t = send(after)
    assert segments_of(t, "checkpoint") == []  # the ledger's checkpoint is folded in, not a second segment
    (seg,) = segments_of(t, "task_state")
    assert seg.status == "placed" and TOKENS.count(render_segment(seg)) <= 600
    for key, cmd in opened:
        assert f"`{cmd}` [key {key[:8]}]" in seg.text  # every pending / unknown effect, with its key
    assert "→ pending" in seg.text and "→ unknown" in seg.text
    assert "tests passed: `pytest -k module_199`" in seg.text  # the newest run is the evidence
    shown_prs = [j for j in range(20) if f"part {j}'" in seg.text]
    assert 19 in shown_prs  # the newest irreversible effect stays...
    assert "Edit" not in seg.text and "canary" not in seg.text  # ...local and failed ones give way first
    m = re.search(r"Side effects not listed here for the budget: (\d+) completed, (\d+) failed; they stay in the "
                  r"ledger, listed by `ctxproxy effects list --task long`", seg.text)
    assert m and int(m.group(1)) == 30 - len(shown_prs) and int(m.group(2)) == 4
    assert 'Goal [t1]: "Fix the refund rounding bug and ship it."' in seg.text
    report = t.pipeline.reports(t)["checkpoint"]["task_state"]
    assert report["effects_ref"].startswith("checkpoint:long@") and report["items"]["pending"] == 6

    # frozen for this compaction: a new instruction after it is in the conversation, not in new bytes
    later = after + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "Never touch vendor/."}]
    (again,) = segments_of(send(later), "task_state")
    assert again.text == seg.text and "vendor" not in again.text
    # the next compaction renders the state anew
    second = [{"role": "user", "content": "This session is being continued from a previous conversation that ran "
                                          "out of context. Summary: refund work, vendor rule."},
              {"role": "assistant", "content": "ok"}, {"role": "user", "content": "continue"}]
    (renewed,) = segments_of(send(second), "task_state")
    assert '"Never touch vendor/."' in renewed.text and TOKENS.count(render_segment(renewed)) <= 600
    store.close()


def test_the_frozen_state_is_taken_once_per_compaction():
    st = TaskState(goal=[1, "Ship it"], compactions=1)
    st.add("instructions", [2, "Never touch vendor/."])
    shown = st.as_of_compaction()
    st.add("instructions", [3, "Always run make check."])
    assert st.as_of_compaction().instructions == shown.instructions == [[2, "Never touch vendor/."]]
    st.compactions += 1
    assert [e[1] for e in st.as_of_compaction().instructions] == ["Never touch vendor/.", "Always run make check."]
    assert TaskState.load(orjson.loads(orjson.dumps(st.dump()))).frozen == st.frozen  # kept with the session


def test_the_ledger_is_placed_alone_when_the_checkpoint_fails_or_is_off(tmp_path, monkeypatch):
    """The fold never loses the ledger: a checkpoint that fails to render (it fails open) or is switched
    off leaves the effect ledger's own checkpoint in place."""
    history = _long_session(3, {1: [("Bash", {"command": "gh pr create --fill"},
                                     "https://github.com/acme/shop/pull/9")]})
    after = [{"role": "user", "content": "This session is being continued from a previous conversation that ran "
                                         "out of context. Summary: PR."}, {"role": "user", "content": "go on"}]

    def run_session(name, config):
        store = open_store(tmp_path / name)
        pipe = build_pipeline(("identify", "effects", "checkpoint", "inject"), filter_configs(config),
                              {"store": store})
        turns = []
        for messages in (history, after):
            t = Turn(api="anthropic", route="anthropic", path="/v1/messages", tokens=TOKENS,
                     headers=CIMultiDict({"x-ctx-session": "s"}), services={"store": store},
                     request=ADAPTERS["anthropic"].parse_request(orjson.dumps(
                         {"model": "m", "max_tokens": 9, "tools": [{"name": "Bash", "input_schema": {}}],
                          "messages": messages})))
            pipe.run_request(t)
            turns.append(t)
        store.close()
        return turns[-1]

    cfg = tmp_path / "off.toml"
    cfg.write_text("[filters.checkpoint]\nenabled = false\n")
    t = run_session("off", load_config(cfg))
    assert segments_of(t, "task_state") == []
    (alone,) = segments_of(t, "checkpoint")
    assert alone.status == "placed" and "gh pr create --fill" in alone.text and "pull/9" in alone.text

    def broken(*args, **kwargs):
        raise RuntimeError("render failed")
    monkeypatch.setattr(checkpoint_filter, "render", broken)
    t = run_session("failing", load_config(None))
    assert "checkpoint" in t.degraded and segments_of(t, "task_state") == []
    (alone,) = segments_of(t, "checkpoint")
    assert alone.status == "placed" and "pull/9" in alone.text


QUESTION = "Should I deploy it to staging or to production?"


@pytest.mark.parametrize("stream", [False, True])
async def test_the_question_of_a_relayed_answer_survives_a_compaction_right_after_it(make_proxy, fake, stream):
    """A client that keeps its history at the provider (``previous_response_id``) and compacts right after
    an answer (Codex's remote compaction: a trigger, then a compaction item in place of the history) never
    sends that answer back; the proxy relayed it, so its question is still open in the checkpoint."""
    from ctxproxy.proxy.scripted_provider import Reply

    proxy = await make_proxy()
    client = proxy.openai()
    tools = [{"type": "function", "name": "Bash", "description": "run a command", "parameters": {"type": "object"}}]
    session = {"X-Ctx-Session": "refund-job"}

    async def send(**kw):
        if not stream:
            return (await client.responses.create(model="gpt-test", tools=tools, extra_headers=session, **kw)).id
        async with client.responses.stream(model="gpt-test", tools=tools, extra_headers=session, **kw) as s:
            return (await s.get_final_response()).id

    fake.script(Reply.text(f"Built the refund service; the tests pass. {QUESTION}"), Reply.text("SUMMARY: built."),
                Reply.text("ok"))
    first = await send(input=[{"role": "user", "content": "Build the refund service."}])
    await send(input=[{"type": "compaction_trigger"}], previous_response_id=first)
    await send(input=[{"role": "user", "content": "Build the refund service."},
                      {"type": "compaction", "encrypted_content": "fake-compaction-v1:U1VNTUFSWTogYnVpbHQu"},
                      {"role": "user", "content": "continue"}])
    sent = fake.model_requests[-1].json["input"][-1]["content"]  # the checkpoint, next to the latest user turn
    assert '<ctx-context kind="task_state"' in sent
    assert "Open questions:" in sent and QUESTION in sent


async def test_a_long_history_first_seen_is_read_after_the_answer_and_checkpointed_after_a_compaction(
        make_proxy, fake, monkeypatch):
    """A conversation the proxy never saw, long and never compacted: the checkpoint is not due, so its
    history is read after the answer went (not before the request is forwarded), from the request's bytes
    as they came; what it said is in the checkpoint once the client compacts."""
    from ctxproxy.proxy.scripted_provider import Reply

    forwarded_when_read = []
    evidence = extract.evidence

    def spy(*args):
        forwarded_when_read.append(len(fake.model_requests))
        return evidence(*args)

    monkeypatch.setattr(extract, "evidence", spy)
    proxy = await make_proxy()
    client = proxy.anthropic()
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in ("Bash", "Edit")]
    session = {"X-Ctx-Session": "first-seen"}
    history = _long_session(30, {})  # 120 items
    fake.script(Reply.text("done"), Reply.text("ok"))
    await client.messages.create(model="m", max_tokens=9, tools=tools, messages=history, extra_headers=session)
    assert fake.model_requests[0].json["messages"] == history  # forwarded as it came
    summary = {"role": "user", "content": "This session is being continued from a previous conversation that ran "
                                          "out of context. Summary: refund work."}
    await client.messages.create(model="m", max_tokens=9, tools=tools, extra_headers=session,
                                 messages=[summary, {"role": "assistant", "content": "ok"},
                                           {"role": "user", "content": "go on"}])
    assert len(forwarded_when_read) >= 30 and all(n >= 1 for n in forwarded_when_read[:30])
    sent = fake.model_requests[1].json["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert '<ctx-context kind="task_state"' in text
    assert 'Goal [t1]: "Fix the refund rounding bug and ship it."' in text
    assert "tests passed: `pytest -k module_29`" in text and "Always keep module_" in text


async def test_a_long_history_first_seen_and_its_answer_are_read_at_the_turns_end_not_on_the_answers_path(
        make_proxy, fake, monkeypatch):
    """The answer's own read needs the history read first; it waits with it for the turn's end (after
    the client has the answer) instead of reading the whole history while the answer is held. The
    answer's question is still open in the checkpoint after a compaction."""
    import sys

    from ctxproxy.proxy.scripted_provider import Reply

    where = []
    evidence = extract.evidence

    def spy(*args):
        frame, names = sys._getframe(1), set()
        while frame is not None:
            names.add(frame.f_code.co_name)
            frame = frame.f_back
        where.append("run_end" in names and "run_response" not in names)
        return evidence(*args)

    monkeypatch.setattr(extract, "evidence", spy)
    proxy = await make_proxy()
    client = proxy.anthropic()
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in ("Bash", "Edit")]
    session = {"X-Ctx-Session": "first-seen-asked"}
    fake.script(Reply.text(f"All modules done. {QUESTION}"), Reply.text("ok"))
    await client.messages.create(model="m", max_tokens=9, tools=tools, messages=_long_session(30, {}),
                                 extra_headers=session)
    assert len(where) >= 30 and all(where)
    summary = {"role": "user", "content": "This session is being continued from a previous conversation that ran "
                                          "out of context. Summary: refund work."}
    await client.messages.create(model="m", max_tokens=9, tools=tools, extra_headers=session,
                                 messages=[summary, {"role": "assistant", "content": "ok"},
                                           {"role": "user", "content": "go on"}])
    sent = fake.model_requests[1].json["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert "tests passed: `pytest -k module_29`" in text
    assert "Open questions:" in text and QUESTION in text


async def test_a_history_read_left_for_the_turns_end_is_read_first_by_the_sessions_next_request(tmp_path):
    """The next request of the session may come before the first one's end ran: it reads the waiting
    history first, so the checkpoint it offers after a compaction still holds what that history said."""
    store = open_store(tmp_path / "store")
    pipe = build_pipeline(("identify", "redact", "effects", "checkpoint", "inject"),
                          filter_configs(load_config(None)), {"store": store, "secret": b"s" * 32})
    tools = [{"name": "Bash", "input_schema": {}}]

    async def send(messages):
        t = Turn(api="anthropic", route="anthropic", path="/v1/messages", tokens=TOKENS,
                 headers=CIMultiDict({"x-ctx-session": "early"}), services={"store": store, "secret": b"s" * 32},
                 request=ADAPTERS["anthropic"].parse_request(orjson.dumps(
                     {"model": "m", "max_tokens": 9, "tools": tools, "messages": messages})))
        await pipe.run_request_async(t)
        return t

    checkpoint = next(s.filter for s in pipe.stages if s.filter.name == "checkpoint")
    await send(_long_session(30, {}))  # its end never runs here
    assert len(checkpoint._deferred) == 1
    summary = {"role": "user", "content": "This session is being continued from a previous conversation that ran "
                                          "out of context. Summary: refund work."}
    t = await send([summary, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}])
    assert not checkpoint._deferred
    (seg,) = segments_of(t, "task_state")
    assert "tests passed: `pytest -k module_29`" in seg.text
    assert 'Goal [t1]: "Fix the refund rounding bug and ship it."' in seg.text
    store.close()
