"""Whether the chain may keep a pass's decision is read when the request filters
end, before their write-aheads go: the deferred keeping runs after those commits
emptied the turn's queue of them, and a pass that handed a write over must still
never be replayed (the replay would skip the write). Here the write goes to a
record outside the session's own (another session's state), so the chain's stamp
of the session's records cannot catch it either: only that early reading does."""
from __future__ import annotations

import orjson

from ctxproxy.filters import Pipeline, Services, Turn
from ctxproxy.filters.base import Filter, Identity
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS

RAW = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
TOKENS = TokenCounter()
IDENT = Identity(tenant="default", session="s1", source="header")


def turn(store) -> Turn:
    t = Turn(api="chat", route="openai", path="/v1/chat/completions", headers={"x-ctx-session": "s1"},
             request=ADAPTERS["chat"].parse_request(RAW), tokens=TOKENS, services=Services.of({"store": store}))
    t.identity = IDENT
    return t


class Quiet(Filter):
    """Decides nothing, writes nothing: replayable."""

    name = "quiet"

    def on_request(self, t):
        t.state[self.name] = "computed"

    def replay_memo(self, t):
        return "nothing to do"

    def replay(self, t, memo):
        t.state[self.name] = "replayed"
        return True


class Tally(Quiet):
    """Counts each request in a record of its own, handed over as a write-ahead (on disk
    before the request leaves): a pass that wrote must run again next time."""

    name = "tally"

    def __init__(self, store, every: bool):
        self.store, self.every = store, every

    def on_request(self, t):
        t.state[self.name] = "computed"
        if self.every or not self.store.sessions.get("default", "tallies"):
            def write(b):
                n = (b.sessions.get("default", "tallies") or {}).get("n", 0)
                b.sessions.update("default", "tallies", {"n": n + 1})

            t.commit_ahead(self.name, self.store, write)


def tallies(store) -> int:
    return (store.sessions.get("default", "tallies") or {}).get("n", 0)


def test_a_pass_that_handed_a_write_over_is_never_replayed(store):
    pipeline = Pipeline([Quiet(), Tally(store, every=True)])
    for n in range(1, 4):
        t = turn(store)
        pipeline.run_request(t)
        assert t.deferred is None and t.replayed == [] and t.state["tally"] == "computed"
        assert tallies(store) == n  # every request's write went


def test_a_pass_that_wrote_nothing_is_replayed_next_time(store):
    """The same chain once its write is done: the stamp alone decides (the test above is no
    test of a chain that never replays)."""
    pipeline = Pipeline([Quiet(), Tally(store, every=False)])
    states = []
    for _ in range(4):
        t = turn(store)
        pipeline.run_request(t)
        states.append((t.state["quiet"], t.state["tally"]))
    assert tallies(store) == 1
    assert states[:2] == [("computed", "computed")] * 2 and states[-1] == ("replayed", "replayed")
