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


class CountingSessions:
    """The store's sessions, counting the reads that reach it."""

    def __init__(self, sessions):
        self.inner, self.reads = sessions, 0

    def get(self, *a, **kw):
        self.reads += 1
        return self.inner.get(*a, **kw)

    def get_parts(self, *a, **kw):
        self.reads += 1
        return self.inner.get_parts(*a, **kw)


class Counted:
    def __init__(self, store):
        self.sessions = CountingSessions(store.sessions)


def test_a_turn_reads_its_session_and_every_part_once(store):
    store.sessions.put(T, "s1", {"inject": {"stable_sha256": "ab"}}, subject="alice")
    store.sessions.put(T, "s1", {"rev": 2, "doc": {"goal": "ship it"}}, part="checkpoint")
    store.sessions.put(T, "s1", {"rev": 5, "doc": {"files": 1}}, part="observed_rules")
    a, b = PartCache("checkpoint"), PartCache("observed_rules")
    counted, t = Counted(store), turn()
    assert t.session_state(counted) == {"inject": {"stable_sha256": "ab"}}
    assert a.load(counted, T, "s1", turn=t) == (2, {"goal": "ship it"}, None)
    assert b.load(counted, T, "s1", turn=t) == (5, {"files": 1}, None)
    assert a.load(counted, T, "s1", turn=t)[0] == 2
    assert counted.sessions.reads == 1  # one transaction for the state and both parts
    # another session's part is read on its own, not from this turn's read
    store.sessions.put(T, "s2", {"rev": 1, "doc": {"goal": "other"}}, part="checkpoint")
    assert a.load(counted, T, "s2", turn=t) == (1, {"goal": "other"}, None)
    assert counted.sessions.reads == 2


def test_a_write_confirmed_during_the_turn_is_not_taken_for_an_erasure(store):
    writer = BackgroundWriter(store)
    parts, t = PartCache("checkpoint"), turn(writer)
    rev, doc, _ = parts.load(store, T, "s1", turn=t)  # the turn reads the session: no part yet
    parts.keep(t, store, (), rev, {"question": "staging or production?"}, "extra", changed=True)
    writer.flush()  # confirmed: newer than what the turn read at its start
    assert parts.load(store, T, "s1", turn=t) == (1, {"question": "staging or production?"}, "extra")
    store.delete_subject(T, subject="alice")  # erased by another process: a new turn sees it
    assert parts.load(store, T, "s1", turn=turn(writer)) == (0, {}, None)
    writer.close()


def test_an_unchanged_part_is_not_measured_again(store, monkeypatch):
    from ctxproxy.filters import session_part, turn_summary
    from ctxproxy.store import bounded

    parts, t = PartCache("checkpoint"), turn()
    parts.keep(t, store, (), 0, {"goal": "kept"}, 1, changed=False)
    record = turn_summary._RECORDS.peek((T, "s1"))  # the session's record holds the copy
    size = record.nbytes

    def measured(*a):
        raise AssertionError("an unchanged part was measured again")

    for module in (bounded, session_part, turn_summary):
        monkeypatch.setattr(module, "entry_bytes", measured)
    for n in range(50):  # the same document, turn after turn: kept in place
        parts.keep(t, store, (), 0, {"goal": "kept"}, n, changed=False)
    mine = [k for k in record.entries if isinstance(k, tuple) and k[0] == parts._memo.token]
    assert record.nbytes == size and len(mine) == 1
    assert parts.load(store, T, "s1") == (0, {"goal": "kept"}, 49)
