"""The live sessions' records kept decoded between turns (``store/session_cache.py``).

Real LMDB in tmp_path; another process is a real spawned process opening the
same directory (as ``serve --workers N`` does). Each test first shows the
copy is kept (the same read-only objects come back) and then that what
another writer did is seen.
"""
from __future__ import annotations

import copy
import multiprocessing
import threading

import orjson
import pytest

from ctxproxy.store import open_store
from ctxproxy.store.bounded import size_of
from ctxproxy.store.frozen import FrozenDict, decoded_bytes, freeze, thaw
from ctxproxy.store.session_cache import SessionCache

T = "acme"
PARTS = (None, "task", "prune")


def _kept(store, session="s1"):
    """Two reads of the session hand back the very same objects: served from the cache."""
    a = store.sessions.get_parts(T, session, PARTS)
    b = store.sessions.get_parts(T, session, PARTS)
    return a, all(a[p] is b[p] for p in PARTS if a[p] is not None)


def _other_process(path: str, action: str, session: str, value: int) -> None:
    store = open_store(path)
    try:
        if action == "put":
            store.sessions.update(T, session, {"effects": {"n": value, "open": [1, 2]}})
        elif action == "part":
            store.sessions.put(T, session, {"rev": value, "doc": {"goal": "other"}}, part="task")
        elif action == "forget":
            store.delete_subject(T, session=session)
    finally:
        store.close()


def _run_other(path: str, action: str, session: str = "s1", value: int = 0) -> None:
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=_other_process, args=(path, action, session, value))
    p.start()
    p.join(60)
    assert p.exitcode == 0


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "db")
    store = open_store(path)
    store.sessions.update(T, "s1", {"effects": {"n": 1, "open": [1]}}, subject="u1")
    store.sessions.put(T, "s1", {"rev": 1, "doc": {"goal": "mine", "steps": [["a", 1]]}}, part="task")
    yield path, store
    store.close()


def test_a_session_read_twice_is_decoded_once_and_read_only(db):
    _, store = db
    got, kept = _kept(store)
    assert kept
    assert got[None] == {"effects": {"n": 1, "open": [1]}} and got["prune"] is None
    assert isinstance(got[None], FrozenDict) and orjson.loads(orjson.dumps(got[None])) == got[None]
    with pytest.raises(TypeError):
        got[None]["effects"]["open"].append(2)  # would leak into the next turn's copy
    with pytest.raises(TypeError):
        got["task"]["doc"]["goal"] = "changed"
    mine = dict(got[None])  # a reader copies what it changes
    mine["effects"] = {**got[None]["effects"], "n": 2}
    deep = copy.deepcopy(got["task"])
    deep["doc"]["steps"][0].append(2)
    assert thaw(got["task"]) == {"rev": 1, "doc": {"goal": "mine", "steps": [["a", 1]]}}
    assert store.sessions.get_parts(T, "s1", PARTS) == got
    with store.snapshot() as r:  # a snapshot at the same transaction reads the same objects
        assert r.sessions.get(T, "s1") is got[None]


def test_another_process_write_is_seen(db):
    path, store = db
    _, kept = _kept(store)
    assert kept
    _run_other(path, "put", value=7)
    assert store.sessions.get_parts(T, "s1", PARTS)[None] == {"effects": {"n": 7, "open": [1, 2]}}
    _, kept = _kept(store)
    assert kept  # and kept again from there
    _run_other(path, "part", value=9)  # only a part changed
    with store.snapshot() as r:
        assert r.sessions.get(T, "s1", part="task") == {"rev": 9, "doc": {"goal": "other"}}
    assert store.sessions.get(T, "s1", part="task")["rev"] == 9


def test_another_process_forgetting_the_session_is_seen(db):
    path, store = db
    _, kept = _kept(store)
    assert kept
    _run_other(path, "forget")
    assert store.sessions.get_parts(T, "s1", PARTS) == {None: None, "task": None, "prune": None}


def test_this_process_writes_through(db):
    _, store = db
    cache = store._env.session_cache
    before = store.sessions.get_parts(T, "s1", PARTS)
    with store.batch() as b:  # a turn's write-ahead on the writer's thread
        b.sessions.update(T, "s1", {"effects": {"n": 2, "open": []}})
        assert b.sessions.get(T, "s1") == {"effects": {"n": 2, "open": []}}  # the batch reads its own write
    assert cache.at == store._env.last_txnid()  # applied, not emptied
    got = store.sessions.get_parts(T, "s1", PARTS)
    assert got[None] == {"effects": {"n": 2, "open": []}}
    assert got["task"] is before["task"]  # the part it did not write is the same kept object
    t = threading.Thread(target=lambda: store.sessions.put(T, "s1", {"rev": 2, "doc": {}}, part="task"))
    t.start()
    t.join(30)
    assert store.sessions.get(T, "s1", part="task") == {"rev": 2, "doc": {}}
    assert store.sessions.get(T, "s1") is got[None]


def test_a_write_that_did_not_commit_changes_nothing(db):
    _, store = db
    before = store.sessions.get_parts(T, "s1", PARTS)
    with pytest.raises(RuntimeError):
        with store.batch() as b:
            b.sessions.update(T, "s1", {"effects": {"n": 99}})
            raise RuntimeError("the turn's write failed")
    assert store.sessions.get_parts(T, "s1", PARTS)[None] is before[None]
    store.sessions.update(T, "s1", {"effects": {"n": 3}})  # the next write is applied as usual
    assert store.sessions.get(T, "s1") == {"effects": {"n": 3}}


def test_forgetting_in_this_process_drops_the_copy(db):
    _, store = db
    _, kept = _kept(store)
    assert kept
    store.delete_subject(T, subject="u1")
    assert store.sessions.get_parts(T, "s1", PARTS) == {None: None, "task": None, "prune": None}


def test_an_older_snapshot_never_sees_a_newer_copy(db):
    _, store = db
    store.sessions.get_parts(T, "s1", PARTS)
    with store.snapshot() as r:
        store.sessions.update(T, "s1", {"effects": {"n": 5}})  # committed after the snapshot began
        assert r.sessions.get(T, "s1") == {"effects": {"n": 1, "open": [1]}}
    assert store.sessions.get(T, "s1") == {"effects": {"n": 5}}


def test_the_cache_is_bounded_in_bytes(tmp_path):
    store = open_store(str(tmp_path / "db"))
    try:
        bound = 64 << 10
        store._env.session_cache = cache = SessionCache(bound)
        for i in range(400):
            store.sessions.update(T, f"s{i}", {"effects": {"threads": {"t": {"s": [[0, "x" * 40]] * 8}}}})
            store.sessions.get_parts(T, f"s{i}", PARTS)
            assert cache.bytes <= bound
        assert 0 < len(cache) < 400
        # what an entry is counted at is at least what its decoded records hold
        raw = orjson.dumps({"threads": {"t": {"s": [[0, "x" * 40]] * 8, "k": [], "c": False, "t": 1.5}}})
        assert decoded_bytes(raw) >= size_of(freeze(orjson.loads(raw)), depth=50)
        assert store.sessions.get(T, "s399") == {"effects": {"threads": {"t": {"s": [[0, "x" * 40]] * 8}}}}
    finally:
        store.close()


def test_a_read_while_this_process_commit_lands_applies_it(db, monkeypatch):
    """The writer thread committed but has not come back to apply its commit (it waits
    for the interpreter after its fsync): a read that finds the environment at that
    commit's id applies it itself, opening no transaction and decoding only what it wrote."""
    from callcount import counting

    from ctxproxy.store.lmdb_env import LMDBEnv

    _, store = db
    before = store.sessions.get_parts(T, "s1", PARTS)
    reads = counting(monkeypatch, LMDBEnv, "read")
    seen = []
    original = SessionCache.committed

    def late(self, txnid):
        n = len(reads)
        seen.append((store._env.last_txnid() == txnid, store.sessions.get_parts(T, "s1", PARTS), len(reads) - n))
        original(self, txnid)

    monkeypatch.setattr(SessionCache, "committed", late)
    store.sessions.update(T, "s1", {"effects": {"n": 5, "open": []}})
    ((landed, got, opened),) = seen
    assert landed and opened == 0
    assert got[None] == {"effects": {"n": 5, "open": []}} and got["task"] is before["task"]
    assert store.sessions.get_parts(T, "s1", PARTS)[None] is got[None]  # and the commit's own return is a no-op
    assert store._env.session_cache.at == store._env.last_txnid()


def test_a_commit_a_read_applied_that_then_failed_empties_the_cache():
    """Should the commit a read applied fail after all (the id then another process's),
    what the read applied is dropped with everything else kept."""
    cache = SessionCache()
    cache.at = 10
    decode = orjson.loads
    cache.fill(("t", "s"), 10, {None: b'{"n": 1}'}, decode)
    txn = object()
    cache.note(txn, ("t", "s"), None, b'{"n": 2}')
    cache.committing(txn, 11)
    assert cache.lookup(("t", "s"), (None,), 11, decode) == {None: {"n": 2}}  # applied by the read
    cache.aborted()
    assert len(cache) == 0 and cache.lookup(("t", "s"), (None,), 11, decode) is None
