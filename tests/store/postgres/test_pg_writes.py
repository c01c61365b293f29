"""The write path on PostgreSQL when two replicas write the same rows, and
the transaction that sends its writes together with the next statement:

- a group commit that waits on another replica's row lock gives up after
  its lock timeout (``StoreConflict``, the database still up), and the
  background writer commits each session's writes on their own, so a
  session locked elsewhere holds up only its own writes;
- a deadlock between two replicas is a ``StoreConflict`` for the one the
  server rolls back, not "the database is down";
- a queued write that fails takes its whole batch with it (nothing of the
  batch commits), and reads in a batch see the batch's own writes;
- closing the writer while the database is down does not wait out the
  pool's timeout: the write waiting for a connection fails (never taken as
  written) and the writer's thread ends.
"""
from __future__ import annotations

import threading

import pytest

from ctxproxy.store import StoreError
from ctxproxy.store.errors import StoreConflict, StoreUnavailable
from ctxproxy.store.postgres import PGStore
from ctxproxy.store.writer import BackgroundWriter


@pytest.fixture
def two(pg_dsn):
    a = PGStore.open(pg_dsn, listen=False)
    b = PGStore.open(pg_dsn, listen=False)
    yield a, b
    a.close()
    b.close()


def hold_row(store: PGStore, session: str, held: threading.Event, release: threading.Event) -> threading.Thread:
    """A thread whose batch holds the session's row lock until ``release``."""
    def run() -> None:
        with store.batch() as b:
            b.sessions.update("acme", session, {"holder": True})
            held.set()
            release.wait(30)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert held.wait(30)
    return t


def test_a_session_locked_by_another_replica_holds_up_only_its_own_writes(two):
    a, b = two
    a.sessions.put("acme", "s1", {"n": 0})
    held, release = threading.Event(), threading.Event()
    t = hold_row(b, "s1", held, release)
    try:
        with pytest.raises(StoreConflict, match="lock"):
            with a.group_batch() as g:
                g.sessions.update("acme", "s1", {"n": 1})
        assert a.available()  # a lost race is not the database down

        writer = BackgroundWriter(a)
        # queued together: the writer commits each session's writes on their own,
        # so the other session's write is committed (another replica reads it)
        # while this one waits for the lock
        f0 = writer.submit(lambda batch: batch.sessions.update("acme", "s0", {"n": 3}), key=("acme", "s0"))
        f1 = writer.submit(lambda batch: batch.sessions.update("acme", "s1", {"n": 2}), key=("acme", "s1"))
        assert f0.result(30)["n"] == 3 and b.sessions.get("acme", "s0") == {"n": 3}
        release.set()
        assert f1.result(30)["n"] == 2
        writer.close()
    finally:
        release.set()
        t.join(30)
    assert a.sessions.get("acme", "s1") == {"n": 2, "holder": True}


def test_a_deadlock_between_replicas_is_a_conflict_not_the_database_down(two):
    a, b = two
    a.sessions.put("acme", "x", {"n": 0})
    a.sessions.put("acme", "y", {"n": 0})
    both_locked = threading.Barrier(2, timeout=30)
    outcome: dict[str, BaseException | None] = {}

    def cross(store: PGStore, first: str, second: str, name: str) -> None:
        try:
            with store.batch() as bt:
                bt.sessions.update("acme", first, {name: 1})
                both_locked.wait()
                bt.sessions.update("acme", second, {name: 1})
            outcome[name] = None
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome[name] = exc

    threads = [threading.Thread(target=cross, args=(a, "x", "y", "a")),
               threading.Thread(target=cross, args=(b, "y", "x", "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    failed = [e for e in outcome.values() if e is not None]
    assert len(outcome) == 2 and len(failed) == 1, outcome
    assert isinstance(failed[0], StoreConflict) and "deadlock" in str(failed[0])
    assert a.available() and b.available()


def test_a_queued_write_that_fails_takes_its_batch_with_it(pg_dsn):
    store = PGStore.open(pg_dsn, listen=False)
    try:
        with pytest.raises(StoreError):
            with store.batch() as b:
                b.sessions.put("acme", "s1", {"n": 1})
                assert b.sessions.get("acme", "s1") == {"n": 1}  # the batch reads its own write
                # refused by row-level security (another tenant's row), sent with the COMMIT
                b.sessions._x.write(lambda tx: tx.tenant("acme").send(
                    "INSERT INTO store_meta (tenant, name, value) VALUES ('other', 'x', '')"))
        assert store.sessions.get("acme", "s1") is None
        assert store.available()
    finally:
        store.close()


def test_the_gate_writing_many_in_one_batch_keeps_the_scopes_cap(pg_dsn):
    # the count of a scope's recalled memories is read once per batch and kept
    # by the batch's own writes: the cap holds within one write_many
    from ctxproxy.store.services.memory.gate import GateConfig, MemoryGate

    store = PGStore.open(pg_dsn, listen=False)
    try:
        gate = MemoryGate(store, GateConfig(learned_signal=False, recalled_max_records=5))
        words = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor"]
        bodies = [{"statement": f"The {w} build cache lives on volume {i}.", "kind": "fact", "user": "u1"}
                  for i, w in enumerate(words)]
        out = gate.write_many("acme", bodies)
        stored = [o for o in out if o.refused is None]
        refused = [o.refused.reason for o in out if o.refused is not None]
        assert len(stored) == 5 and refused == ["over_limit"] * 3
        assert store.memories.recalled_count("acme", "", "u1", "") == 5
        again = gate.write_many("acme", [{"statement": "The ivory build cache is gone.", "kind": "fact",
                                          "user": "u1"}])
        assert again[0].refused is not None and again[0].refused.reason == "over_limit"
    finally:
        store.close()


def test_closing_the_writer_while_the_database_is_down_gives_up_the_wait_for_a_connection(pg_server, pg_dsn):
    if not pg_server.stop:
        pytest.skip("needs a cluster the tests started (CTXPROXY_TEST_DSN cannot be restarted)")
    # the pool would wait 30 s for a connection: far past the bound below
    store = PGStore.open(pg_dsn, listen=False, timeout=30.0)
    writer = BackgroundWriter(store)
    assert writer.submit(lambda b: b.sessions.put("acme", "s0", {"n": 0})).exception(30) is None
    pg_server.restart_stopped()
    try:
        lost = writer.submit(lambda b: b.sessions.put("acme", "s1", {"n": 1}))
        assert isinstance(lost.exception(30), StoreUnavailable)  # its connection was gone
        assert not store.available()
        waiting = writer.submit(lambda b: b.sessions.put("acme", "s2", {"n": 2}))
        for _ in range(3000):  # until the writer took it: it waits for a connection the pool cannot make
            if waiting.running():
                break
            threading.Event().wait(0.01)
        assert waiting.running()
        closer = threading.Thread(target=writer.close, daemon=True)
        closer.start()
        closer.join(timeout=5)  # a bound, not a measure: the old wait lasted the pool's 30 s
        assert not closer.is_alive() and not writer._thread.is_alive()
        assert isinstance(waiting.exception(0), StoreUnavailable)  # reported as failed, never as written
    finally:
        pg_server.start_again()
        store.close()
    check = PGStore.open(pg_dsn, listen=False)
    try:
        assert check.sessions.get("acme", "s0") == {"n": 0}
        assert check.sessions.get("acme", "s1") is None and check.sessions.get("acme", "s2") is None
    finally:
        check.close()
