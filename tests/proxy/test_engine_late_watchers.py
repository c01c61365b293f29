"""Through the turn engine: the hooks that only watch the answer see each event
after ``Exchange.events`` gave its bytes (at ``settle``), and, on an edge that
never settles, still every event before the turn's end."""
from __future__ import annotations

import pytest

from apicalls import AUTH, PATHS, config, request_body, streamed_text
from enginedriver import EngineDriver
from watchers import Shout, Watch

from ctxproxy.filters import Pipeline
from ctxproxy.proxy.engine import EVENTS, Engine
from ctxproxy.proxy.scripted_provider import Reply

TEXT = "one two three four five six seven"


@pytest.mark.parametrize("settles", [True, False], ids=["settled", "never-settled"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_watchers_see_each_event_after_its_bytes_and_all_before_the_turn_ends(tmp_path, api, settles):
    async with EngineDriver(config(tmp_path)) as drive:
        eng = drive.engine
        drive.engine = Engine({name: Pipeline([Shout(), Watch()]) for name in drive.router.routes},
                              eng.tokens, eng.services, eng.transport)
        drive.script(Reply.text(TEXT, delta_chars=4))
        headers = {**AUTH[api], "content-type": "application/json"}
        match = drive.router.match(PATHS[api], "POST", headers)
        ex = drive.engine.begin(match, "POST", PATHS[api], "", headers)
        upstream = await drive.engine.transport.send(await ex.request(request_body(api, "hi", True)))
        assert ex.answer(upstream.status, upstream.headers).mode == EVENTS
        body, waited = b"", 0
        async for chunk in upstream.chunks():
            body += ex.events(chunk)
            seen = list(ex.turn.state.get("watch", []))
            waiting = [d.text for _, evs in ex.turn.late_events or () for e in evs for d in e.deltas()]
            if waiting:  # text already in the bytes, not yet watched
                waited += 1
                assert all(w.upper() == w for w in waiting)  # the edits are done before the write
            if settles:
                ex.settle()
                assert not ex.turn.late_events
                assert ex.turn.state.get("watch", []) == seen + waiting  # watched now, in order
        body += ex.events_end()
        ex.finish()
        assert streamed_text(api, body) == TEXT.upper()
        assert waited > 0
        assert ex.turn.state["at_end"] == TEXT.upper()  # every event watched, edited, before the end hooks
