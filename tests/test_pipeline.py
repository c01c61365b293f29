"""The filter pipeline: order, timing, fail-open vs fail-closed, undo."""
import orjson
import pytest

from ctxproxy.filters import FilterError, Pipeline, Turn
from ctxproxy.filters.base import Filter
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS

RAW = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
TOKENS = TokenCounter()


def turn():
    return Turn(api="chat", route="openai", path="/v1/chat/completions", headers={},
                request=ADAPTERS["chat"].parse_request(RAW), tokens=TOKENS)


class Append(Filter):
    def __init__(self, name, text, required=False, fail=False):
        self.name, self.text, self.required, self.fail = name, text, required, fail

    def on_request(self, t):
        t.state.setdefault("order", []).append(self.name)
        t.request.add_turn_segment(self.text)
        if self.fail:
            raise RuntimeError("boom")


def test_request_filters_run_in_order_and_are_timed():
    t = turn()
    Pipeline([Append("a", "A"), Append("b", "B")]).run_request(t)
    assert t.state["order"] == ["a", "b"]
    assert set(t.timings_ms) == {"a", "b"}
    assert orjson.loads(t.request.to_bytes())["messages"][0]["content"].endswith("A\n\nB")


def test_failing_optional_filter_is_undone_and_marks_degraded():
    t = turn()
    p = Pipeline([Append("a", "A"), Append("bad", "HALF-EDIT", fail=True), Append("c", "C")])
    p.run_request(t, reparse=lambda: ADAPTERS["chat"].parse_request(RAW))
    content = orjson.loads(t.request.to_bytes())["messages"][0]["content"]
    assert "HALF-EDIT" not in content and "A" in content and "C" in content
    assert t.degraded == ["bad"]


def test_failing_required_filter_blocks():
    t = turn()
    with pytest.raises(FilterError) as exc:
        Pipeline([Append("guard", "X", required=True, fail=True)]).run_request(t)
    assert exc.value.filter_name == "guard" and exc.value.turn_id == t.turn_id
    assert "RuntimeError" in exc.value.message


class Splitter(Filter):
    name = "split"

    def on_response_event(self, t, ev):
        return [ev, ev]


class Counter(Filter):
    name = "count"

    def on_response_event(self, t, ev):
        t.state["seen"] = t.state.get("seen", 0) + 1


def test_response_events_flow_in_request_order():
    # split runs first, so count sees both copies: response hooks keep config order
    t = turn()
    p = Pipeline([Splitter(), Counter()])
    state = ADAPTERS["chat"].stream()
    out = p.run_event(t, state.event(None, b"data: {}\n\n", b"{}"))
    assert len(out) == 2 and t.state["seen"] == 2
