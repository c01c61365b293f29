"""The store gives back the pages of data.mdb it has read (they count in its RSS)."""
from __future__ import annotations

import os
import sys
import threading

import pytest

from ctxproxy.store import lmdb_env, mapped_pages

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")


def resident_kb(path: str) -> int:
    """Resident kB of this process's mappings of ``path`` (from /proc/self/smaps)."""
    want, total, inside = os.path.realpath(path), 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if len(head) >= 5 and "-" in head[0] and not line.startswith(("Rss", "Size")) and ":" not in head[0]:
                inside = len(head) == 6 and head[5] == want
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total


@pytest.fixture
def env(tmp_path):
    e = lmdb_env.acquire(str(tmp_path / "store"), db_names=("t",), map_size=64 << 20, max_map_size=256 << 20,
                         readonly=False, max_readers=16)
    yield e
    lmdb_env.release(e)


@pytest.fixture
def measured_env(env):
    """``env`` out of the process's releaser: its thread releases every store once the process's
    file-backed memory grew 8 MiB, which anything else in the process can make happen between a
    read and the look at what it made resident."""
    mapped_pages.Releaser.shared().discard(env)
    yield env
    mapped_pages.Releaser.shared().add(env)


def fill(env, n: int = 4000) -> dict[bytes, bytes]:
    values = {b"k%06d" % i: os.urandom(700) for i in range(n)}
    env.write(lambda txn: [txn.put(k, v, db=env.dbs["t"]) for k, v in values.items()])
    return values


def read_all(env) -> dict[bytes, bytes]:
    return env.read(lambda txn: {bytes(k): bytes(v) for k, v in txn.cursor(db=env.dbs["t"])})


def test_release_drops_the_read_pages_and_reads_stay_the_same(measured_env):
    env = measured_env
    values = fill(env)
    assert read_all(env) == values
    data = os.path.join(env.path, "data.mdb")
    before = resident_kb(data)
    assert before > 2000  # ~2.8 MB of values were read through the map

    assert env.release_pages() > 0
    assert resident_kb(data) < before / 10

    assert read_all(env) == values  # refilled from the file (the page cache), unchanged
    assert resident_kb(data) > 2000


def test_writes_after_a_release_land_and_read_back(env):
    values = fill(env, 500)
    env.release_pages()
    env.write(lambda txn: txn.put(b"k000001", b"new", db=env.dbs["t"]))
    env.release_pages()
    values[b"k000001"] = b"new"
    assert read_all(env) == values


def test_a_closed_store_is_not_touched(tmp_path):
    e = lmdb_env.acquire(str(tmp_path / "store"), db_names=("t",), map_size=1 << 20, max_map_size=1 << 20,
                         readonly=False, max_readers=4)
    lmdb_env.release(e)
    assert e.closed
    assert e.release_pages() == 0  # its map is gone: advising that range could hit other memory
    assert mapped_pages.mappings(os.path.join(e.path, "data.mdb")) == []


class Target:
    def __init__(self, calls_to_wait_for: int = 0) -> None:
        self.calls = 0
        self.wanted = calls_to_wait_for
        self.done = threading.Event()

    def release_pages(self) -> int:
        self.calls += 1
        if self.calls >= self.wanted:
            self.done.set()
        return 0


def test_the_releaser_calls_every_registered_store_again_and_again():
    releaser = mapped_pages.Releaser(every=0.01, above=0)
    targets = [Target(2), Target(2)]
    for t in targets:
        releaser.add(t)
    assert all(t.done.wait(30) for t in targets)


def test_reading_past_the_budget_makes_a_release(measured_env):
    """The releaser looks at the process's file-backed resident memory and releases
    once reads have made more of it resident than it allows (not on a timer)."""
    env = measured_env
    values = fill(env)
    releaser = mapped_pages.Releaser(every=3600, above=1 << 20)  # looks only when told here
    releaser.add(env)
    assert not releaser.check()  # nothing read: nothing to give back
    assert read_all(env) == values  # ~2.8 MB through the map
    data = os.path.join(env.path, "data.mdb")
    assert resident_kb(data) > 2000
    assert releaser.check()
    assert resident_kb(data) < 100
    assert not releaser.check()  # nothing read since


def test_the_releaser_holds_stores_weakly():
    releaser = mapped_pages.Releaser(every=3600)
    target = Target()
    releaser.add(target)
    releaser.release_all()
    assert target.calls == 1
    del target  # a store that is gone is not kept alive by it
    assert len(releaser._targets) == 0


def test_an_open_store_is_registered_with_the_process_releaser(env):
    assert env in mapped_pages.Releaser.shared()._targets
