"""compaction: the agents' recorded compaction shapes, and the continuity check for the rest."""
import orjson
import pytest
from multidict import CIMultiDict
from realclients import body_bytes, load

from ctxproxy.filters.compaction import REQUEST, RESUMED, detect, item_texts, track
from ctxproxy.proxy.adapters import ADAPTERS


def view_of(name):
    rec = load(name)
    api = "anthropic" if rec["path"].startswith("/v1/messages") else "responses"
    return ADAPTERS[api].parse_request(body_bytes(rec)), CIMultiDict(rec["headers"])


@pytest.mark.parametrize("name, expected", [
    ("claude-code-compact-request", ("claude-code", "summary", REQUEST, "")),
    ("claude-code-after-compact", ("claude-code", "summary", RESUMED, "manual")),
    ("claude-code-auto-compact-request", ("claude-code", "summary", REQUEST, "")),
    ("claude-code-after-auto-compact", ("claude-code", "summary", RESUMED, "auto")),
    ("codex-compact-request", ("codex", "local", REQUEST, "auto")),
    ("codex-after-compact", ("codex", "local", RESUMED, "")),
    ("codex-remote-compact-request", ("codex", "remote", REQUEST, "auto")),
    ("codex-remote-after-compact", ("codex", "remote", RESUMED, "")),
])
def test_recorded_compactions_are_recognised(name, expected):
    view, headers = view_of(name)
    c = detect(view, headers)
    assert c is not None and (c.agent, c.style, c.phase, c.trigger) == expected


@pytest.mark.parametrize("name", ["claude-code-1-first", "claude-code-2-tool-result", "claude-code-rules-first",
                                  "claude-code-rules-nested", "codex-rules-first", "codex-rules-nested",
                                  "codex-lite-2-tool-result", "codex-fn-2-tool-result"])
def test_ordinary_turns_are_not_compactions(name):
    assert detect(*view_of(name)) is None


def test_codex_local_compaction_marked_only_in_client_metadata():
    view, headers = view_of("codex-compact-request")
    del headers["x-codex-turn-metadata"]
    view.body["input"][-1]["content"][0]["text"] = "summarise please"  # the prompt alone does not decide it
    c = detect(view, headers)
    assert (c.agent, c.style, c.phase) == ("codex", "local", REQUEST)


@pytest.mark.parametrize("api, body, agent", [
    ("chat", {"model": "m", "messages": [
        {"role": "system", "content": "You are a personal assistant running inside OpenClaw."},
        {"role": "user", "content": "The conversation history before this point was compacted into the following "
                                    "summary:\n\n<summary>\nfixed the loader\n</summary>"},
        {"role": "user", "content": "go on"}]}, "openclaw"),
    ("chat", {"model": "m", "messages": [
        {"role": "system", "content": "You are Hermes Agent."},
        {"role": "assistant", "content": "[CONTEXT COMPACTION - REFERENCE ONLY] Earlier turns were compacted."},
        {"role": "user", "content": "next"}]}, "hermes"),
])
def test_openclaw_and_hermes_summaries(api, body, agent):
    c = detect(ADAPTERS[api].parse_request(orjson.dumps(body)))
    assert (c.agent, c.phase) == (agent, RESUMED)


def test_history_that_lost_its_last_items_is_a_compaction_for_an_unknown_client():
    def v(msgs):
        return ADAPTERS["chat"].parse_request(orjson.dumps({"model": "m", "messages": msgs}))
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    found, st = track(None, v(msgs))
    assert found is None and st["n"] == 3
    found, st2 = track(st, v(msgs + [{"role": "assistant", "content": "d"}, {"role": "user", "content": "e"}]))
    assert found is None
    found, _ = track(st2, v([{"role": "user", "content": "a"}, {"role": "user", "content": "summary: …"}]))
    assert found is not None and (found.agent, found.style, found.phase) == ("unknown", "history", RESUMED)
    found, _ = track(st2, v([{"role": "user", "content": "other start"}] + msgs[1:] * 3))
    assert found is not None  # the first item changed


def test_item_texts_reads_the_text_parts_of_messages_of_any_api_only():
    assert list(item_texts({"role": "user", "content": "plain"})) == ["plain"]
    assert list(item_texts({"role": "user", "content": [{"type": "text", "text": "a"},
                                                        {"type": "tool_result", "content": "not text"}]})) == ["a"]
    assert list(item_texts({"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": "b"}, {"type": "refusal", "refusal": "no"}]})) == ["b"]
    assert list(item_texts({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "c"}]})) == ["c"]
    # a reasoning item holds text parts too, but they are the model's thoughts, not a message
    assert list(item_texts({"type": "reasoning", "content": [{"type": "reasoning_text", "text": "decision: x"}]})) == []
