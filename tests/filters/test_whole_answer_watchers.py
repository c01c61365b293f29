"""A whole (non-streamed) answer: the response hooks that only watch it, and an
egress that only watches, run once its bytes went out (``Pipeline.run_response``
with ``late``, then ``run_response_late``; the engine's ``Exchange.finish``),
seeing what they saw before."""
import orjson
from urllib.parse import urlsplit

from apicalls import AUTH, PATHS, config, request_body
from enginedriver import EngineDriver
from watchers import Shout, Watch

from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.relayed import relayed
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply

RAW = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
TOKENS = TokenCounter()
ANSWER = orjson.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "all done"}}]})


def turn():
    return Turn(api="chat", route="openai", path="/v1/chat/completions", headers={},
                request=ADAPTERS["chat"].parse_request(RAW), tokens=TOKENS)


def answer():
    return ADAPTERS["chat"].parse_response(ANSWER)


class Restore:
    """An egress that edits the answer (as redact's restoring of placeholders)."""
    name = "restore"

    def response(self, t, view):
        t.state.setdefault("order", []).append("restore")


def test_watchers_that_end_the_chain_run_after_the_bytes_and_see_the_edits():
    t = turn()
    p = Pipeline([Shout(), Watch()])
    assert [s.filter.name for s in p.late_response_stages] == ["watch"]
    view = answer()
    done = []
    relayed(t).when_complete(lambda a: done.append(a.text))  # a watching egress
    assert p.run_response(t, view, late=True) is True
    assert b"ALL DONE" in view.to_bytes()  # the bytes are edited now
    assert "watch" not in t.state and done == []  # the watchers have not run yet
    p.run_response_late(t, view)
    assert t.state["watch"] == ["ALL DONE"] and done == ["ALL DONE"]


def test_without_late_every_hook_runs_now():
    t = turn()
    p = Pipeline([Shout(), Watch()])
    done = []
    relayed(t).when_complete(lambda a: done.append(a.text))
    assert p.run_response(t, answer()) is False
    assert t.state["watch"] == ["ALL DONE"] and done == ["ALL DONE"]


def test_an_egress_that_edits_keeps_every_hook_before_the_bytes():
    t = turn()
    p = Pipeline([Shout(), Watch()])
    t.add_egress(Restore())
    assert p.run_response(t, answer(), late=True) is False
    assert t.state["watch"] == ["ALL DONE"] and t.state["order"] == ["restore"]


def test_a_required_watcher_or_one_before_an_editor_is_not_late():
    assert Pipeline([Watch(required=True)]).late_response_stages == ()
    p = Pipeline([Watch("first"), Shout(), Watch("last")])
    assert [s.filter.name for s in p.late_response_stages] == ["last"]
    t = turn()
    view = answer()
    assert p.run_response(t, view, late=True) is True
    assert t.state["first"] == ["all done"] and "last" not in t.state  # the first saw it before the edit
    p.run_response_late(t, view)
    assert t.state["last"] == ["ALL DONE"]


def test_a_failing_late_watcher_marks_the_turn_degraded_and_the_others_still_run():
    class Broken(Watch):
        def on_response(self, t, view):
            raise RuntimeError("boom")

    t = turn()
    p = Pipeline([Shout(), Broken("broken"), Watch()])
    view = answer()
    assert p.run_response(t, view, late=True) is True
    p.run_response_late(t, view)
    assert t.degraded == ["broken"] and t.state["watch"] == ["ALL DONE"]


async def test_the_engine_sends_the_answer_before_its_watchers_and_finishes_them(tmp_path):
    """Through the default pipeline: ``whole`` gives the bytes with the relayed answer
    (which files the answer for the next request) not yet complete; ``finish`` completes
    it before the turn's end, whose manifest then has the answer's usage and id."""
    async with EngineDriver(config(tmp_path)) as drive:
        api = "chat"
        drive.script(Reply.text("The loader reads the file first."))
        headers = {**AUTH[api], "content-type": "application/json"}
        match = drive.router.match(PATHS[api], "POST", headers)
        ex = drive.engine.begin(match, "POST", PATHS[api], "", headers)
        out = await ex.request(request_body(api, "what does the loader read first?", False))
        upstream = await drive.engine.transport.send(out)
        assert urlsplit(out.url).path == PATHS[api]
        ex.answer(upstream.status, upstream.headers)
        body = ex.whole(await upstream.read())
        assert b"choices" in body
        answer_ = relayed(ex.turn)
        assert not answer_.complete  # the client's bytes first
        ex.finish()
        assert answer_.complete and answer_.text == "The loader reads the file first."
        drive.services["writer"].flush()
        doc = drive.services["store"].manifests.get(ex.turn.identity.tenant, ex.turn.turn_id)
        assert doc.data["finish_reasons"] == ["stop"] and doc.data["response_id"]
