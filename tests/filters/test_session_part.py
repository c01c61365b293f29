"""A session part kept in the process (``PartCache``): a copy the store erased
("forget me", from any process) is dropped, never written back; a copy whose
write failed is kept for the next write."""
from __future__ import annotations

import pytest

from ctxproxy.filters import Identity, Services, Turn
from ctxproxy.filters.session_part import PartCache
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.store.writer import BackgroundWriter

T = "acme"


def turn(writer=None):
    return Turn(api="chat", route="r", path="/", headers={}, request=None, tokens=TokenCounter(lazy=True),
                services=Services(writer=writer), identity=Identity(tenant=T, session="s1", user="alice"),
                turn_id="t1")


@pytest.mark.parametrize("on_writer", [True, False])
def test_an_erased_part_is_not_brought_back(store, on_writer):
    writer = BackgroundWriter(store) if on_writer else None
    parts = PartCache("checkpoint")
    rev, doc, _ = parts.load(store, T, "s1")
    parts.keep(turn(writer), store, (), rev, {"goal": "ship the alice-only secret plan"}, "extra", changed=True)
    if writer:
        writer.flush()
    assert store.sessions.get(T, "s1", part="checkpoint")["doc"] == {"goal": "ship the alice-only secret plan"}
    store.delete_subject(T, subject="alice")  # as another process would
    rev, doc, extra = parts.load(store, T, "s1")
    assert (rev, doc, extra) == (0, {}, None)
    parts.keep(turn(writer), store, (), rev, {"goal": "a new start"}, None, changed=True)
    if writer:
        writer.flush()
        writer.close()
    assert store.sessions.get(T, "s1", part="checkpoint") == {"rev": 1, "doc": {"goal": "a new start"}}


def test_a_copy_not_yet_saved_wins_over_the_store(store):
    class Failing:
        def submit(self, op):
            from concurrent.futures import Future

            f = Future()
            f.set_exception(OSError("disk full"))
            return f

    parts = PartCache("checkpoint")
    parts.keep(turn(Failing()), store, (), 0, {"goal": "kept"}, "extra", changed=True)
    assert parts.load(store, T, "s1") == (1, {"goal": "kept"}, "extra")
