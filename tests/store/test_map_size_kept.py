"""The map size a write checks against, kept by the environment instead of asked of
``env.info()`` on every write: it follows every resize (a full map grown here, a
map another process grew adopted), a full map still grows and loses no record,
and a map at ``max_map_size`` still refuses cleanly. Real LMDB, real processes."""
from __future__ import annotations

import multiprocessing

import pytest

from ctxproxy.store import open_store
from ctxproxy.store.errors import StoreError

T = "acme"
SMALL = 64 << 10


def _kept(store) -> int:
    env = store._env
    assert env.map_size() == env.env.info()["map_size"]
    return env.map_size()


def _grow_elsewhere(path: str) -> None:
    store = open_store(path, map_size=SMALL, max_map_size=64 << 20)
    try:
        for i in range(60):
            store.pruned.put(T, f"other{i}", {"content": f"{i:05d}" * 6000}, session="s2")
    finally:
        store.close()


def test_a_full_map_grows_and_keeps_every_record(tmp_path):
    path = str(tmp_path / "db")
    blobs = {f"p{i}": f"{i:04d}" * 7500 for i in range(60)}  # 60 x 30 KB
    with open_store(path, map_size=SMALL, max_map_size=64 << 20) as s:
        start = _kept(s)
        for ref, text in blobs.items():
            s.pruned.put(T, ref, {"content": text}, session="s1")
        assert _kept(s) > start
        p = multiprocessing.get_context("spawn").Process(target=_grow_elsewhere, args=(path,))
        p.start()
        p.join(120)
        assert p.exitcode == 0
        mine = _kept(s)
        s.pruned.put(T, "after", {"content": "y" * 30_000}, session="s1")  # adopts the other's size first
        assert _kept(s) >= mine
        got = {d.id: d.data["content"] for d in s.pruned.list(T, session="s1")}
        assert got == {**blobs, "after": "y" * 30_000}
        assert len(s.pruned.list(T, session="s2")) == 60


def test_a_map_at_its_bound_refuses_cleanly(tmp_path):
    with open_store(tmp_path / "db", map_size=SMALL, max_map_size=256 << 10) as s:
        written = []
        with pytest.raises(StoreError, match="max_map_size"):
            for i in range(100):
                s.pruned.put(T, f"p{i}", {"content": "x" * 20_000})
                written.append(f"p{i}")
        assert written and _kept(s) == 256 << 10
        assert sorted(d.id for d in s.pruned.list(T)) == sorted(written)  # every write that returned is there
