"""Items gathered for the background writer (``BackgroundWriter.gather``: the
turns' manifests, the session index's rows) are written by one op per batch,
every one of them, before a flush that comes after them returns; an item the
store refuses fails alone, and an op run again writes the same items."""
from __future__ import annotations

from ctxproxy.store.errors import StoreConflict, StoreError
from ctxproxy.store.writer import BackgroundWriter


def put_all(batch, items):
    calls.append(list(items))
    for turn_id, data in items:
        batch.manifests.put("t1", turn_id, data, session="s1")


calls: list[list] = []


def stored(store) -> dict[str, dict]:
    return {d.id: d.data for d in store.manifests.list("t1", session="s1")}


def test_items_gathered_while_an_op_is_queued_ride_with_it(store):
    calls.clear()
    writer = BackgroundWriter(store, linger=5.0)  # long: the flush below ends it
    futures = [writer.gather(put_all, (f"turn{i}", {"n": i})) for i in range(50)]
    assert futures[0] is not None and futures[1:] == [None] * 49  # one op for all fifty
    writer.flush()
    assert calls == [[(f"turn{i}", {"n": i}) for i in range(50)]]
    assert stored(store) == {f"turn{i}": {"n": i} for i in range(50)}
    # after the op took its items, the next item gets an op of its own
    assert writer.gather(put_all, ("turn50", {"n": 50})) is not None
    writer.flush()
    assert len(stored(store)) == 51
    writer.close()


def test_an_item_the_store_refuses_fails_alone(store):
    calls.clear()
    writer = BackgroundWriter(store, linger=5.0)
    first = writer.gather(put_all, ("good1", {"n": 1}))
    writer.gather(put_all, ("bad", {"n": object()}))  # not JSON: the store refuses the write
    writer.gather(put_all, ("good2", {"n": 2}))
    writer.flush()
    assert stored(store) == {"good1": {"n": 1}, "good2": {"n": 2}}
    assert isinstance(first.exception(5), StoreError)  # the op says one of its items failed
    writer.close()


def test_an_op_run_again_writes_the_items_it_took(store):
    """A group that lost a race runs again: the op writes the same items, not
    an empty list (the gathered ones were taken at its first run)."""
    writer = BackgroundWriter(store, linger=5.0)
    lost = []

    def once_conflicting(batch, items):
        put_all(batch, items)
        if not lost:
            lost.append(1)
            raise StoreConflict("lost a race")

    calls.clear()
    fut = writer.gather(once_conflicting, ("turn1", {"n": 1}))
    writer.gather(once_conflicting, ("turn2", {"n": 2}))
    writer.flush()
    assert fut.exception(5) is None
    assert calls == [[("turn1", {"n": 1}), ("turn2", {"n": 2})]] * 2
    assert stored(store) == {"turn1": {"n": 1}, "turn2": {"n": 2}}
    writer.close()


def test_a_closed_writer_refuses_at_once_and_keeps_nothing(store):
    writer = BackgroundWriter(store, linger=5.0)
    writer.close()
    for i in range(2):
        fut = writer.gather(put_all, (f"turn{i}", {"n": i}))
        assert fut is not None and isinstance(fut.exception(5), RuntimeError)
    assert writer._gathered == {}


def test_items_queued_before_close_are_written_though_a_gather_comes_after_it(store):
    """close() drains what was queued; an item gathered after it is refused, but the
    ones already riding a queued op must still be written, not dropped with it."""
    import threading

    calls.clear()
    writer = BackgroundWriter(store, linger=5.0)
    started, release = threading.Event(), threading.Event()
    writer.submit(lambda b: started.set() or release.wait(10), urgent=True)  # holds the writer thread
    assert started.wait(10)
    assert writer.gather(put_all, ("turn1", {"n": 1})) is not None  # queued behind the held op
    assert writer.gather(put_all, ("turn2", {"n": 2})) is None
    closing = threading.Thread(target=writer.close)
    closing.start()
    for _ in range(1000):
        if writer._closed:
            break
        threading.Event().wait(0.01)
    assert writer._closed
    late = writer.gather(put_all, ("turn3", {"n": 3}))
    assert late is not None and isinstance(late.exception(5), RuntimeError)
    release.set()
    closing.join(10)
    assert stored(store) == {"turn1": {"n": 1}, "turn2": {"n": 2}}


def test_items_are_prepared_on_the_writer_thread_while_it_lingers(store):
    """``prepare`` runs on the writer's thread before the op that writes its item,
    while the writer waits for more, each item once; the op does not wait for it.
    The thread looks at once when it starts lingering, and an idle one is woken
    again when ``PREPARE_WAKE`` items wait unprepared."""
    import threading
    import time

    from ctxproxy.store.writer import PREPARE_WAKE

    prepared: list[tuple[str, str]] = []
    first, rest = threading.Event(), threading.Event()
    n = 3 + PREPARE_WAKE

    def prepare(item):
        prepared.append((item[0], threading.current_thread().name))
        if len(prepared) == 3:
            first.set()
        if len(prepared) == n:
            rest.set()

    calls.clear()
    writer = BackgroundWriter(store, linger=5.0)
    try:
        busy, hold = threading.Event(), threading.Event()
        writer.submit(lambda batch: (busy.set(), hold.wait(5.0)), urgent=True)
        assert busy.wait(5.0)  # the thread is in that op's commit: the items below queue meanwhile
        for i in range(3):
            writer.gather(put_all, (f"turn{i}", {"n": i}), prepare)
        hold.set()
        assert first.wait(5.0)  # found at the linger's first look
        deadline = time.monotonic() + 5.0
        while not writer._idle:  # it looks again, finds none and waits
            assert time.monotonic() < deadline
            time.sleep(0.001)
        for i in range(3, n):  # idle: the PREPARE_WAKE-th item waiting wakes it
            writer.gather(put_all, (f"turn{i}", {"n": i}), prepare)
        assert rest.wait(5.0)
        assert prepared == [(f"turn{i}", "ctxproxy-store-writer") for i in range(n)]
        assert stored(store) == {}  # still lingering: prepared, not yet written
        writer.flush()
        assert stored(store) == {f"turn{i}": {"n": i} for i in range(n)}
        writer.gather(put_all, ("turnX", {"n": -1}), prepare)
        writer.flush()  # cuts the linger short: turnX may go unprepared, and is written all the same
        assert stored(store)["turnX"] == {"n": -1}
        assert [p[0] for p in prepared][:n] == [f"turn{i}" for i in range(n)]
    finally:
        writer.close()


def test_an_item_flushed_before_it_was_prepared_is_written_all_the_same(store):
    prepared: list[str] = []
    calls.clear()
    writer = BackgroundWriter(store, linger=5.0)
    try:
        writer.submit(lambda batch: None, urgent=True)  # cuts every linger short: no time to prepare
        writer.gather(put_all, ("turn0", {"n": 0}), lambda item: prepared.append(item[0]))
        writer.flush()
        assert stored(store) == {"turn0": {"n": 0}}
    finally:
        writer.close()


def test_many_items_gathered_at_once_are_each_prepared_once_in_order(store):
    """More items than one go prepares (``PREPARE_MAX``) gathered while the writer
    waits: every one is prepared, once, in the order gathered, before it is written."""
    import threading

    from ctxproxy.store.writer import PREPARE_MAX

    n = 2 * PREPARE_MAX + 3
    prepared: list[str] = []
    ready = threading.Event()

    def prepare(item):
        prepared.append(item[0])
        if len(prepared) == n:
            ready.set()

    calls.clear()
    writer = BackgroundWriter(store, linger=5.0)
    try:
        for i in range(n):
            writer.gather(put_all, (f"turn{i:02d}", {"n": i}), prepare)
        assert ready.wait(5.0)
        assert prepared == [f"turn{i:02d}" for i in range(n)]
        assert stored(store) == {}
        writer.flush()
        assert stored(store) == {f"turn{i:02d}": {"n": i} for i in range(n)}
    finally:
        writer.close()


def test_an_unavailable_store_fails_the_op_once_without_trying_each_item_alone(store):
    from ctxproxy.store.errors import StoreUnavailable

    tries: list[int] = []

    def down(batch, items):
        tries.append(len(items))
        raise StoreUnavailable("the database is down")

    writer = BackgroundWriter(store, linger=5.0)
    op = writer.gather(down, ("turn0", {"n": 0}))
    for i in range(1, 5):
        writer.gather(down, (f"turn{i}", {"n": i}))
    writer.flush()
    assert isinstance(op.exception(5), StoreUnavailable)
    assert tries == [5]  # one try of the whole op: item by item would only wait on the store again
    writer.close()
