"""What the recall filter reads of a request: the user's latest own words, a tool-result turn's
goal, and what latest words that refer back refer to (the words before them, or the summary a
compacted conversation continues from), from the request shapes Claude Code and Codex send."""
from __future__ import annotations

import orjson

from ctxproxy.filters.recall import turn_words
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.eval import turns

ASK = "nice, the image builds and make check is green. who has to sign off on this before I open the PR?"


def words(shape: str, prompt: str, tool=None):
    api, body = turns.body_of(shape, prompt, tool)
    return turn_words(ADAPTERS[api].parse_request(orjson.dumps(body)))


def test_an_ask_that_refers_back_after_a_compaction_reads_the_summary():
    w = words("claude-after-compact", ASK)
    assert w.latest == ASK and w.goal == ""
    assert "Primary request: fix the Kafka consumer lag alerts" in w.context  # the summary it continues from
    # an ask naming its own subject reads nothing before it
    assert words("claude-after-compact", "Which port does staging listen on?").context == ""


def test_an_ask_that_refers_back_reads_the_users_words_before_it():
    api, body = turns.body_of("claude", "Upgrade ffmpeg in the transcode worker image to 7.1.", None)
    body["messages"] += [{"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
                         {"role": "user", "content": [{"type": "text", "text": ASK}]}]
    w = turn_words(ADAPTERS[api].parse_request(orjson.dumps(body)))
    assert w.latest == ASK and w.context == "Upgrade ffmpeg in the transcode worker image to 7.1."


def test_a_tool_result_turn_keeps_its_goal_and_reads_no_context():
    w = words("claude-tool", "Roll it out and tell me when it is done.", ("ls", "a\nb\n"))
    assert w.latest == "Roll it out and tell me when it is done." and w.context == ""
