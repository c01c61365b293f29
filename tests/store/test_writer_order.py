"""The background writer runs a group's writes ordered by what they are filed
under (a session), each session's in the order submitted: two processes
sharing a database then lock several sessions' rows in one order."""
from __future__ import annotations

from contextlib import contextmanager

from ctxproxy.store.writer import BackgroundWriter


class Recording:
    """A store whose batch only records the order its writes ran in."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @contextmanager
    def batch(self):
        yield self


def test_a_group_runs_its_writes_by_session_each_in_submitted_order(tmp_path):
    store = Recording()
    writer = BackgroundWriter(store, linger=5.0)  # long: everything below lands in one group

    def write(name):
        return lambda b: b.ran.append(name) or name

    futures = [writer.submit(write("b1"), key=("t", "b")), writer.submit(write("none1")),
               writer.submit(write("a1"), key=("t", "a")), writer.submit(write("b2"), key=("t", "b")),
               writer.submit(write("a2"), key=("t", "a")), writer.submit(write("none2"))]
    writer.flush()
    assert store.ran == ["a1", "a2", "b1", "b2", "none1", "none2"]
    assert [f.result(5) for f in futures] == ["b1", "none1", "a1", "b2", "a2", "none2"]  # each its own result
    writer.close()


class PerSession(Recording):
    """A store that wants each session's writes in a transaction of their own."""

    commit_per_key = True

    @contextmanager
    def batch(self):
        self.ran.append("BEGIN")
        yield self


def test_a_store_that_asks_for_it_gets_one_transaction_per_session():
    store = PerSession()
    writer = BackgroundWriter(store, linger=5.0)
    futures = [writer.submit(lambda b: b.ran.append("b1"), key=("t", "b")), writer.submit(lambda b: b.ran.append("n")),
               writer.submit(lambda b: b.ran.append("a1"), key=("t", "a")),
               writer.submit(lambda b: b.ran.append("b2"), key=("t", "b"))]
    writer.flush()
    assert store.ran == ["BEGIN", "a1", "BEGIN", "b1", "b2", "BEGIN", "n"]
    assert all(f.done() and f.exception() is None for f in futures)
    writer.close()
