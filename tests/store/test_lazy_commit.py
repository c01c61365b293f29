"""Commits nothing waits for (the background writer's groups of gathered items:
a turn's manifest) flush their data but leave their meta page to the next
flush; everything else is on disk when it returns, as before.

Real LMDB in tmp_path and a real writer thread; a thin recorder around the
store notes which batches the writer asked to be lazy. A child process that
dies by SIGKILL right after a lazy commit leaves it whole and readable.
"""
from __future__ import annotations

import os
import signal

from ctxproxy.store import open_store
from ctxproxy.store.writer import BackgroundWriter

T = "t1"


def put_all(batch, items):
    for turn_id, data in items:
        batch.manifests.put(T, turn_id, data, session="s1")


class Recorder:
    """The store as it is, noting each batch's ``durable`` and each ``sync_lazy``
    (whether it found a lazy commit to flush)."""

    def __init__(self, store):
        self._store = store
        self.batches: list[bool] = []
        self.syncs: list[bool] = []
        self.lazy_commits = store.lazy_commits

    def batch(self, durable=True):
        self.batches.append(durable)
        return self._store.batch(durable=durable)

    def sync_lazy(self):
        self.syncs.append(self._store._env.unsynced)
        self._store.sync_lazy()

    def __getattr__(self, name):
        return getattr(self._store, name)


def test_a_lazy_batch_is_read_at_once_and_flushed_by_the_next_durable_commit(store):
    env = store._env
    with store.batch(durable=False) as b:
        b.manifests.put(T, "turn1", {"n": 1}, session="s1")
    assert env.unsynced
    assert store.manifests.get(T, "turn1").data == {"n": 1}  # committed: every reader sees it
    store.manifests.put(T, "turn2", {"n": 2}, session="s1")  # a durable write flushes it too
    assert not env.unsynced
    with store.batch(durable=False) as b:
        b.manifests.put(T, "turn3", {"n": 3}, session="s1")
    assert env.unsynced
    store.sync_lazy()
    assert not env.unsynced
    assert {d.id for d in store.manifests.list(T, session="s1")} == {"turn1", "turn2", "turn3"}


def test_a_batch_is_durable_unless_asked_not_to_be(store):
    with store.batch() as b:
        b.manifests.put(T, "turn1", {"n": 1}, session="s1")
    assert not store._env.unsynced


def test_gathered_items_alone_commit_lazily(store):
    rec = Recorder(store)
    writer = BackgroundWriter(rec, linger=0.001)
    writer.gather(put_all, ("turn1", {"n": 1})).result(10)
    writer.close()
    assert rec.batches == [False]
    assert store.manifests.get(T, "turn1").data == {"n": 1}


def test_a_group_with_any_other_write_commits_durably(store):
    rec = Recorder(store)
    writer = BackgroundWriter(rec, linger=1.0)  # both below queue within it: one group
    plain = writer.submit(lambda b: b.manifests.put(T, "plain", {"n": 0}, session="s1"))
    gathered = writer.gather(put_all, ("turn1", {"n": 1}))
    plain.result(10)
    gathered.result(10)
    assert rec.batches == [True]
    writer.submit(lambda b: b.manifests.put(T, "urgent", {"n": 2}, session="s1"), urgent=True).result(10)
    assert rec.batches == [True, True]  # a write-ahead's commit is durable
    writer.close()


def test_a_flush_returns_with_gathered_items_on_disk(store):
    rec = Recorder(store)
    writer = BackgroundWriter(rec, linger=5.0)  # long: the flush ends it
    for i in range(5):
        writer.gather(put_all, (f"turn{i}", {"n": i}))
    writer.flush()
    assert rec.batches == [True]  # they rode with the flush: a durable commit
    assert not store._env.unsynced
    writer.close()
    assert len(store.manifests.list(T, session="s1")) == 5


def test_the_writer_flushes_a_lazy_commit_when_nothing_is_queued(store):
    rec = Recorder(store)
    writer = BackgroundWriter(rec, linger=0.001)
    fut = writer.gather(put_all, ("turn1", {"n": 1}))
    fut.result(10)
    assert rec.batches == [False]
    # nothing else queued: the thread flushes it before it waits for work (awaited through a flush,
    # which itself flushes only what is still unflushed)
    writer.flush()
    writer.close()
    assert not store._env.unsynced
    assert rec.syncs.count(True) == 1  # flushed once, by whichever came first


def _lazy_then_killed(path: str, w: int) -> None:  # pragma: no cover - child
    try:
        s = open_store(path)
        with s.batch(durable=False) as b:
            for i in range(20):
                b.manifests.put(T, f"turn{i}", {"n": i, "pad": "x" * 500}, session="s1")
        os.write(w, b"C")
    finally:
        os.kill(os.getpid(), signal.SIGKILL)  # no close, no flush: the process dies here


def test_a_lazy_commit_survives_its_process_killed_at_once(tmp_path):
    path = str(tmp_path / "db")
    with open_store(path):  # created beforehand: the child only writes
        pass
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(r)
        _lazy_then_killed(path, w)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL
    assert os.read(r, 1) == b"C"
    os.close(r)
    with open_store(path) as store:
        docs = {d.id: d.data["n"] for d in store.manifests.list(T, session="s1")}
    assert docs == {f"turn{i}": i for i in range(20)}
