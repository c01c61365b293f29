"""The three wire adapters on what real clients send (recorded fixtures)."""
import json

import orjson
import pytest

from ctxproxy.filters.view import ARGS, SIGNED
from ctxproxy.proxy.adapters import ADAPTERS, api_for_path
from realclients import body_bytes, load, names

MODEL_FIXTURES = [n for n in names() if load(n).get("body") and api_for_path(load(n)["path"]) != (None, False)]


def view_of(name):
    rec = load(name)
    raw = body_bytes(rec)
    return rec, raw, ADAPTERS[api_for_path(rec["path"])[0]].parse_request(raw)


def test_fixture_set_is_complete():
    # every recorded model call, and count_tokens (the same request shape, guarded the same way):
    # each API and each agent is represented (the set grows as shared/ records more clients)
    apis = {api_for_path(load(n)["path"])[0] for n in MODEL_FIXTURES}
    assert apis == {"anthropic", "chat", "responses"}
    for agent in ("claude-code-", "codex-", "anthropic-sdk-", "openai-sdk-"):
        assert any(n.startswith(agent) for n in MODEL_FIXTURES), agent
    assert api_for_path("/v1/messages/count_tokens?beta=true".split("?")[0]) == ("anthropic", True)
    assert api_for_path("/v1/messages/") == ("anthropic", False)
    assert api_for_path("/v1/models") == (None, False)


@pytest.mark.parametrize("name", MODEL_FIXTURES)
def test_untouched_request_is_the_original_bytes(name):
    _, raw, view = view_of(name)
    list(view.text_slots()), view.tool_calls(), view.tool_results(), view.system_text()
    assert not view.changed
    assert view.to_bytes() is raw


@pytest.mark.parametrize("name", MODEL_FIXTURES)
def test_views_find_system_and_user_text(name):
    _, _, view = view_of(name)
    assert view.first_user_text()
    if not name.startswith(("openai-sdk", "anthropic-sdk-count")):
        assert len(view.system_text()) > 10


@pytest.mark.parametrize("name, calls", [
    ("claude-code-2-tool-result", [("Bash", {"command": "cat acc_marker.txt", "description": "Print the marker file"})]),
    ("anthropic-sdk-tool-result", [("read_marker", {"key": "gamma"})]),
    ("codex-fn-2-tool-result", [("exec_command", {"cmd": "cat acc_marker.txt"})]),
    ("openai-sdk-chat-tool-result", [("read_marker", {"key": "alpha"})]),
    ("openai-sdk-responses-tool-result", [("read_marker", {"key": "beta"})]),
])
def test_tool_calls_and_results_pair_up(name, calls):
    _, _, view = view_of(name)
    found = view.tool_calls()
    assert [(c.name, c.arguments) for c in found] == calls
    results = view.tool_results()
    assert [r.call_id for r in results] == [c.call_id for c in found]


def test_codex_lite_custom_tool_call_and_output():
    _, _, view = view_of("codex-lite-2-tool-result")
    (call,) = view.tool_calls()
    assert call.name == "exec" and isinstance(call.arguments, str)
    (result,) = view.tool_results()
    assert result.call_id == call.call_id
    # the additional_tools item (tool definitions) is not model text to scan
    assert not any(s.where.startswith("input[0]") for s in view.text_slots())


def test_claude_code_system_message_inside_messages_is_seen():
    _, _, view = view_of("claude-code-2-tool-result")
    wheres = [s.where for s in view.text_slots()]
    system_msg = next(i for i, m in enumerate(view.items()) if m["role"] == "system")
    assert f"messages[{system_msg}].content" in wheres


@pytest.mark.parametrize("name", MODEL_FIXTURES)
def test_edit_keeps_unknown_fields(name):
    rec, raw, view = view_of(name)
    slots = list(view.text_slots())
    slots[-1].set(slots[-1].get() + " [edited]")
    assert view.changed
    out = orjson.loads(view.to_bytes())
    before = rec["body"]
    # every top-level key survives with its value, except the edited text
    assert set(out) == set(before)
    for key in before:
        if key not in ("messages", "input", "system", "instructions"):
            assert out[key] == before[key], key
    assert json.dumps(out).count("[edited]") == 1


def test_cache_control_and_signatures_survive_an_edit():
    _, _, view = view_of("claude-code-3-continue")
    view.add_system_segment("ctx: checkpoint")
    out = orjson.loads(view.to_bytes())
    assert [b.get("cache_control") for b in out["system"][:3]] == \
        [b.get("cache_control") for b in load("claude-code-3-continue")["body"]["system"]]
    assert out["system"][-1] == {"type": "text", "text": "ctx: checkpoint"}
    assert out["metadata"] == load("claude-code-3-continue")["body"]["metadata"]


def test_args_slots_are_json_text():
    _, _, view = view_of("codex-fn-2-tool-result")
    args = [s for s in view.text_slots() if s.kind == ARGS]
    assert args and json.loads(args[0].get()) == {"cmd": "cat acc_marker.txt"}


def test_binary_parts_are_not_text():
    body = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "text", "text": "look"},
        {"type": "thinking", "thinking": "hmm", "signature": "sig=="}]}]}
    view = ADAPTERS["anthropic"].parse_request(orjson.dumps(body))
    slots = list(view.text_slots())
    assert [(s.get(), s.kind) for s in slots] == [("look", "text"), ("hmm", SIGNED)]  # signed: read-only


def test_prune_replacement_keeps_images_and_the_pair():
    body = {"model": "m", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "long output"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]}]}
    view = ADAPTERS["anthropic"].parse_request(orjson.dumps(body))
    (res,) = view.tool_results()
    assert res.has_images and res.content == "long output"
    res.replace("[pruned]")
    block = orjson.loads(view.to_bytes())["messages"][1]["content"][0]
    assert block["tool_use_id"] == "t1"
    assert block["content"][0] == {"type": "text", "text": "[pruned]"}
    assert block["content"][1]["type"] == "image"


@pytest.mark.parametrize("api, body, where", [
    ("anthropic", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "messages"),
    ("chat", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "messages"),
    ("responses", {"model": "m", "input": "hi"}, "input"),
    ("responses", {"model": "m", "input": [{"role": "user", "content": "hi"}]}, "input"),
])
def test_segments_land_in_system_slot_and_latest_user_turn(api, body, where):
    view = ADAPTERS[api].parse_request(orjson.dumps(body))
    view.add_system_segment("STABLE")
    view.add_turn_segment("PERTURN")
    assert "STABLE" in view.system_text()
    out = orjson.dumps(view.body).decode()
    assert out.index("PERTURN") > out.index("hi")


@pytest.mark.parametrize("api, body, expected", [
    ("anthropic", {"model": "m", "max_tokens": 5, "system": "Be terse.",
                   "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                                {"role": "assistant", "content": "hello"}]},
     [(None, "", "Be terse."), (0, "user", "hi"), (1, "assistant", "hello")]),
    ("chat", {"model": "m", "messages": [{"role": "system", "content": "Be terse."},
                                         {"role": "user", "content": "hi"}]},
     [(0, "system", "Be terse."), (1, "user", "hi")]),
    ("responses", {"model": "m", "instructions": "Be terse.", "input": "hi"},
     [(None, "", "Be terse."), (-1, "user", "hi")]),
    ("responses", {"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]},
     [(0, "user", "hi")]),
])
def test_message_slots_say_which_message_holds_each_text(api, body, expected):
    view = ADAPTERS[api].parse_request(orjson.dumps(body))
    assert [(m, role, s.get()) for m, role, s in view.message_slots()] == expected
    assert [s.get() for _, _, s in view.message_slots()] == [s.get() for s in view.text_slots()]
