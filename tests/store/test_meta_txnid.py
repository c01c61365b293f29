"""The last committed transaction id read from LMDB's meta pages (no ``env.info()``):
the same id as LMDB's at every point, another process's commits seen at once,
a compacted copy read from its own pages, and ``env.info()`` kept where the
pages are not laid out as expected. Real LMDB, real processes."""
from __future__ import annotations

import multiprocessing

import pytest

from ctxproxy.store import meta_txnid, open_store

T = "acme"


def _other_process(path: str, value: int) -> None:
    store = open_store(path)
    try:
        store.sessions.update(T, "s1", {"n": value})
    finally:
        store.close()


def _write_elsewhere(path: str, value: int) -> None:
    p = multiprocessing.get_context("spawn").Process(target=_other_process, args=(path, value))
    p.start()
    p.join(60)
    assert p.exitcode == 0


def _env(store):
    return store._env


def _agrees(env) -> int:
    at = env.last_txnid()
    assert at == env.env.info()["last_txnid"]
    return at


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "db")
    store = open_store(path)
    yield path, store
    store.close()


def test_the_id_is_lmdbs_own_through_commits_here_and_elsewhere(db):
    path, store = db
    env = _env(store)
    assert env._meta is not None  # the meta pages are read, not env.info()
    before = _agrees(env)
    for n in range(5):  # each commit alternates the meta page it writes
        store.sessions.update(T, "s1", {"n": n})
        assert _agrees(env) == before + n + 1
    assert store.sessions.get(T, "s1") == {"n": 4}
    _write_elsewhere(path, 99)
    assert _agrees(env) == before + 6
    assert store.sessions.get(T, "s1") == {"n": 99}  # the kept copy is not served past it


def test_a_compacted_copy_is_read_from_its_own_pages(db):
    path, store = db
    env = _env(store)
    for n in range(20):
        store.sessions.update(T, f"s{n}", {"n": n, "pad": "x" * 2000})
    for n in range(1, 20):
        store.delete_subject(T, session=f"s{n}")
    old = env._meta
    assert store.compact()
    assert env._meta is not None and env._meta is not old
    assert old.read() is None  # the old file's pages are let go
    _agrees(env)
    assert store.sessions.get(T, "s0") == {"n": 0, "pad": "x" * 2000}
    _write_elsewhere(path, 7)
    _agrees(env)
    assert store.sessions.get(T, "s1") == {"n": 7}


def test_pages_not_laid_out_as_expected_keep_env_info(tmp_path, monkeypatch):
    path = str(tmp_path / "db")
    monkeypatch.setattr(meta_txnid, "_MAGIC", 0x12345678)
    store = open_store(path)
    try:
        env = _env(store)
        assert env._meta is None
        store.sessions.update(T, "s1", {"n": 1})
        assert store.sessions.get(T, "s1") == {"n": 1}
        _write_elsewhere(path, 2)
        assert _agrees(env) is not None
        assert store.sessions.get(T, "s1") == {"n": 2}
    finally:
        store.close()


def test_a_closed_store_has_no_id(db):
    _, store = db
    env = _env(store)
    meta = env._meta
    store.close()
    assert env.last_txnid() is None and meta.read() is None
