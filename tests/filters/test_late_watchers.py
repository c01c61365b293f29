"""Event hooks that only watch the answer run after the event's write
(``Turn.late_events``, ``Pipeline.run_late``), seeing what they saw before."""
import orjson

from watchers import Shout, Watch

from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.relayed import relayed
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS

RAW = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
TOKENS = TokenCounter()


def turn(late=True):
    t = Turn(api="chat", route="openai", path="/v1/chat/completions", headers={},
             request=ADAPTERS["chat"].parse_request(RAW), tokens=TOKENS)
    t.response_id = "c1"  # noted by the relay from the first chunk
    if late:
        t.late_events = []
    return t


def chunk(state, text=None, finish=None):
    delta = {} if text is None else {"content": text}
    data = orjson.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    return state.event(None, b"data: " + data + b"\n\n", data)


def test_watchers_that_end_the_chain_run_after_the_write_in_order_and_see_the_edits():
    t = turn()
    p = Pipeline([Shout(), Watch()])
    assert [s.filter.name for s in p.late_event_stages] == ["watch"]
    state = ADAPTERS["chat"].stream()
    out = p.run_event(t, chunk(state, "one "))
    assert out[0].to_bytes().count(b"ONE ") == 1  # the bytes are edited now
    assert "watch" not in t.state and len(t.late_events) == 1  # the watcher has not run yet
    p.run_event(t, chunk(state, "two"))
    p.run_late(t)
    assert t.state["watch"] == ["ONE ", "TWO"] and t.late_events == []
    p.run_late(t)  # nothing twice
    assert t.state["watch"] == ["ONE ", "TWO"]


def test_an_event_that_may_carry_meta_runs_every_hook_now_after_what_waits():
    t = turn()
    p = Pipeline([Shout(), Watch()])
    state = ADAPTERS["chat"].stream()
    p.run_event(t, chunk(state, "a"))
    p.run_event(t, chunk(state, "b", finish="stop"))  # a finish reason: nothing waits for it
    assert t.state["watch"] == ["A", "B"] and t.late_events == []


def test_the_relayed_answer_completes_before_the_last_event_goes_out():
    t = turn()
    p = Pipeline([Shout(), Watch()])
    answer = relayed(t)  # a watching egress
    done = []
    answer.when_complete(lambda a: done.append(a.text))
    state = ADAPTERS["chat"].stream()
    p.run_event(t, chunk(state, "hi "))
    assert answer.text == ""  # waits for the write
    p.run_event(t, chunk(state, None, finish="stop"))
    assert done == ["HI"] and answer.complete


def test_nothing_waits_without_a_relay_that_settles_nor_with_an_egress_that_edits():
    p = Pipeline([Shout(), Watch()])
    t = turn(late=False)  # the WebSocket turns, a test driving the pipeline
    p.run_event(t, chunk(ADAPTERS["chat"].stream(), "x"))
    assert t.state["watch"] == ["X"]

    class Restore:  # an egress that edits (reversible redaction): the watchers must see the answer before it
        name = "restore"

        def event(self, t, ev):
            for d in ev.deltas():
                d.text = d.text.lower()

    t = turn()
    t.add_egress(Restore())
    out = p.run_event(t, chunk(ADAPTERS["chat"].stream(), "y"))
    assert t.state["watch"] == ["Y"] and t.late_events == []
    assert [d.text for d in out[0].deltas()] == ["y"]


def test_only_optional_watchers_after_the_last_editor_wait():
    assert Pipeline([Watch("w1"), Shout(), Watch("w2")]).late_event_stages[0].filter.name == "w2"
    assert len(Pipeline([Watch("w1"), Shout(), Watch("w2")]).late_event_stages) == 1
    assert Pipeline([Shout(), Watch("w", required=True)]).late_event_stages == ()
    assert [s.filter.name for s in Pipeline([Shout(), Watch("r", required=True), Watch("w")]).late_event_stages] \
        == ["w"]


def test_a_failing_watcher_after_the_write_marks_the_turn_degraded():
    class Broken(Watch):
        def on_response_event(self, t, ev):
            raise RuntimeError("boom")

    t = turn()
    p = Pipeline([Shout(), Broken("broken")])
    p.run_event(t, chunk(ADAPTERS["chat"].stream(), "z"))
    p.run_late(t)
    assert t.degraded == ["broken"] and t.late_events == []
