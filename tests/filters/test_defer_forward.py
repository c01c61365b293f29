"""What the request filters keep for the next request (the facts of these bytes,
each filter's last decision, the chain's decision, recall's reusable result)
runs once the forward is on its way (``Turn.defer``), in the time the provider
takes to answer, and always before any hook of the answer. Through the real
engine, filters and LMDB store (``tests/enginedriver.py``): the provider gets
the client's own bytes before any deferred step ran; a deferred step that fails
leaves the request as it went and marks the turn degraded in its manifest; a
required filter that fails still refuses the request; a thread with no event
loop runs the steps before ``run_request`` returns."""
from __future__ import annotations

import asyncio

from test_repeats import history, manifest, send

from apicalls import AUTH, PATHS, config
from enginedriver import EngineDriver

import ctxproxy.filters.base as base
from ctxproxy.filters import turn_summary as ts
from ctxproxy.filters.base import Turn
from ctxproxy.filters.redact import RedactFilter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply, render_answer
from ctxproxy.proxy.engine import CannedUpstream

HEADERS = {**AUTH["chat"], "content-type": "application/json"}


def logging_steps(monkeypatch, log: list[str]) -> None:
    real = Turn.run_deferred

    def run_deferred(self):
        if self.deferred:
            log.append(f"deferred {len(self.deferred)}")
        real(self)

    monkeypatch.setattr(Turn, "run_deferred", run_deferred)


def provider(log: list[str], think: float):
    async def send_(forward):
        log.append("forwarded")
        await asyncio.sleep(think)  # the provider thinking: the loop is idle meanwhile
        log.append("answered")
        status, headers, chunks = render_answer("chat", Reply.text(), forward.body or b"")
        return CannedUpstream(status, headers, chunks)

    return send_


async def test_kept_for_the_next_request_once_the_forward_went_and_before_the_answer(tmp_path, monkeypatch):
    log: list[str] = []
    logging_steps(monkeypatch, log)
    async with EngineDriver(config(tmp_path), provider=provider(log, 0.005)) as drive:
        first = await send(drive, history())
        assert first.forwarded.body == history()  # the client's own bytes
        # a new request: its facts and decisions were kept in the provider's time, not before the send
        assert log[0] == "forwarded" and log[1].startswith("deferred") and log[2] == "answered"
        assert first.turn.deferred is None
        # and they were kept: the same request twice more, the third is replayed from the chain's decision
        await send(drive, history())
        again = await send(drive, history())
        assert again.turn.replayed and again.forwarded.body == history()


async def test_a_provider_that_answers_at_once_still_finds_them_run_first(tmp_path, monkeypatch):
    log: list[str] = []
    logging_steps(monkeypatch, log)
    async with EngineDriver(config(tmp_path), provider=provider(log, 0)) as drive:
        got = await drive.call("POST", PATHS["chat"], HEADERS, history())
        assert got.status == 200
        assert log.index("forwarded") < next(i for i, e in enumerate(log) if e.startswith("deferred"))
        drive.services["writer"].flush()
        # the answer's hooks ran on a turn whose steps had all run (the manifest saw them)
        assert got.turn.deferred is None and manifest(drive, got)["session_id"] == got.turn.identity.session


async def test_a_deferred_step_that_fails_is_recorded_and_the_request_went_as_it_came(tmp_path, monkeypatch):
    def broken(self, *args):
        raise MemoryError("no room for the fact")

    monkeypatch.setattr(ts.RequestFacts, "_put", broken)
    async with EngineDriver(config(tmp_path)) as drive:
        got = await send(drive, history())
        assert got.forwarded.body == history()
        # identify's fact (the identity of these bytes) failed after the forward: the turn says so
        assert "identify" in got.turn.degraded
        assert "identify" in manifest(drive, got)["degraded"]


async def test_the_old_order_gives_the_same_request_and_manifest(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        deferred = await send(drive, history())
        monkeypatch.setattr(base, "DEFER_AFTER_FORWARD", False)
        inline = await send(drive, history(system="You are another coding agent."))
        assert deferred.turn.deferred is None and inline.turn.deferred is None
        assert deferred.forwarded.body == history()
        for got in (deferred, inline):
            m = manifest(drive, got)
            assert not m.get("degraded") and m["identity_source"] == got.turn.identity.source


async def test_a_required_filter_that_fails_still_refuses_the_request(tmp_path, monkeypatch):
    def broken(self, turn):
        raise RuntimeError("redaction broke")

    async with EngineDriver(config(tmp_path)) as drive:
        monkeypatch.setattr(RedactFilter, "on_request", broken)
        for p in drive.engine.pipelines.values():  # the stages hold the bound hook
            p.stages = tuple(type(s)(**{**s.__dict__, "request": s.filter.on_request if s.request else None})
                             for s in p.stages)
        got = await drive.call("POST", PATHS["chat"], HEADERS, history())
        assert got.status == 500 and drive.forwarded == []  # nothing went upstream
        # what identify handed over before redact failed still ran, with the turn's end
        assert got.turn.deferred is None


def test_a_thread_without_a_loop_runs_them_before_run_request_returns(tmp_path):
    from ctxproxy.filters.identify import IdentifyConfig, IdentifyFilter
    from ctxproxy.filters.base import Pipeline
    from ctxproxy.filters.tokens import TokenCounter

    ident = IdentifyFilter(IdentifyConfig())
    pipeline = Pipeline([ident])
    turn = Turn.of_request("chat", "default", "/v1/chat/completions", {"x-ctx-session": "s1"},
                           ADAPTERS["chat"].parse_request(history()), TokenCounter(lazy=True), {})
    pipeline.run_request(turn)
    assert turn.deferred is None
    # identify's fact for these bytes is kept: the same bytes are given the same identity without reading
    again = Turn.of_request("chat", "default", "/v1/chat/completions", {"x-ctx-session": "s1"},
                            ADAPTERS["chat"].parse_request(history()), TokenCounter(lazy=True), {})
    assert ident._decided(again, None) == turn.identity
