"""store.learning over real LMDB: the lease across processes, the watermark,
the extraction feed, rejected proposals, evidence and what forgetting takes."""
from __future__ import annotations

import multiprocessing

import pytest
from fixedclock import Clock

from ctxproxy.store import open_store
from ctxproxy.store.learned import LEARNED_BY
from ctxproxy.store.memory_records import MemoryRecord, new_memory_id
from ctxproxy.store.forget import forget

T = "acme"


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(tmp_path, clock):
    s = open_store(tmp_path / "store", clock=clock)
    yield s
    s.close()


def test_lease_is_exclusive_until_it_lapses_then_taken_over(store, clock):
    a = store.learning.take_lease(T, "worker-a", 60)
    assert a["owner"] == "worker-a" and a["until"] == 1060
    assert store.learning.take_lease(T, "worker-b", 60) is None
    clock.t += 30
    assert store.learning.renew_lease(T, "worker-a", 60)  # heartbeat: until 1090
    clock.t += 45
    assert store.learning.take_lease(T, "worker-b", 60) is None  # still a's (1075 < 1090)
    clock.t += 20
    b = store.learning.take_lease(T, "worker-b", 60)
    assert b["owner"] == "worker-b" and b["took_over_from"] == "worker-a"
    assert not store.learning.renew_lease(T, "worker-a", 60)  # a learns it lost the lease
    assert not store.learning.drop_lease(T, "worker-a")
    assert store.learning.drop_lease(T, "worker-b")
    assert store.learning.lease(T) is None
    assert store.learning.take_lease("other", "worker-a", 60) is not None  # per tenant


def _contend(path: str, owner: str, start, results) -> None:
    start.wait(30)
    s = open_store(path)
    try:
        results.put((owner, s.learning.take_lease(T, owner, 600) is not None))
    finally:
        s.close()


def test_one_lease_holder_among_processes(tmp_path):
    path = str(tmp_path / "store")
    open_store(path).close()
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_contend, args=(path, f"w{i}", start, results)) for i in range(4)]
    for p in procs:
        p.start()
    start.set()
    got = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
    assert sum(won for _, won in got) == 1
    with open_store(path) as s:
        assert s.learning.lease(T)["owner"] == next(o for o, won in got if won)


def test_watermark_never_moves_back(store):
    assert store.learning.job(T) == {}
    store.learning.save_job(T, {"watermark": 7, "scopes": {"user:alice": 3}})
    job = store.learning.save_job(T, {"watermark": 4, "scopes": {"user:alice": 2, "project:shop": 1}, "runs": 2})
    assert job["watermark"] == 7 and job["scopes"] == {"user:alice": 3, "project:shop": 1} and job["runs"] == 2
    assert store.learning.job("other") == {}


def test_feed_numbers_sessions_and_trims(store):
    assert [store.learning.note_extracted(T, s, "alice") for s in ("s1", "s2", "s3")] == [1, 2, 3]
    assert store.learning.extracted(T, after=1) == [(2, "s2"), (3, "s3")]
    assert store.learning.last_extracted(T) == 3
    assert store.learning.trim_feed(T, 2) == 2
    assert store.learning.extracted(T) == [(3, "s3")]
    assert store.learning.note_extracted(T, "s4") == 4  # numbers never repeat
    assert store.learning.extracted("other") == []


def test_rejected_digests_are_per_tenant(store):
    store.learning.reject(T, "d" * 64, user="alice")
    assert store.learning.rejected(T, "d" * 64)
    assert not store.learning.rejected("other", "d" * 64)
    assert store.learning.rejected_count(T) == 1


def _learned(store, statement: str, sessions: tuple[str, ...], **kw) -> MemoryRecord:
    rec = MemoryRecord(memory_id=new_memory_id(), tenant=T, statement=statement, kind="preference", origin="user",
                       status="proposed", evidence_sessions=sessions, created_by=LEARNED_BY, **kw)
    store.memories.put(rec)
    store.learning.add_evidence(T, rec.memory_id, [{"session": s, "user": kw.get("user", "alice")}
                                                   for s in sessions])
    return rec


def test_forgetting_a_session_erases_what_only_it_supported(store):
    only = _learned(store, "Run the linter before committing.", ("s1",), user="alice")
    shared = _learned(store, "Never push to main directly.", ("s1", "s2"), user="alice")
    manual = store.memories.put(MemoryRecord(memory_id=new_memory_id(), tenant=T, statement="Uses tabs.",
                                             kind="preference", origin="user", status="active",
                                             evidence_sessions=("s1",), created_by="cli"))
    receipt = forget(store, T, {"session": "s1"})
    assert store.memories.get(T, only.memory_id) is None
    assert store.learning.evidence(T, only.memory_id) == []
    kept = store.memories.get(T, shared.memory_id)
    assert kept.status == "proposed" and kept.evidence_sessions == ("s2",)
    assert [e["session"] for e in store.learning.evidence(T, shared.memory_id)] == ["s2"]
    assert store.memories.get(T, manual.memory_id).status == "expired"  # not learned: the store's own rule
    assert receipt.counts["learn.memories"] == 1


def test_forgetting_a_user_takes_learned_records_from_their_sessions(store):
    project_rec = MemoryRecord(memory_id=new_memory_id(), tenant=T, statement="Deploy with make release.",
                               kind="procedure", origin="verified_tool_result", status="proposed", project="shop",
                               evidence_sessions=("a1", "b1"), created_by=LEARNED_BY)
    store.memories.put(project_rec)
    store.learning.add_evidence(T, project_rec.memory_id, [{"session": "a1", "user": "alice"},
                                                           {"session": "b1", "user": "bob"}])
    alone = MemoryRecord(memory_id=new_memory_id(), tenant=T, statement="Run make check first.",
                         kind="procedure", origin="verified_tool_result", status="proposed", project="shop",
                         evidence_sessions=("a2",), created_by=LEARNED_BY)
    store.memories.put(alone)
    store.learning.add_evidence(T, alone.memory_id, [{"session": "a2", "user": "alice"}])
    store.learning.note_extracted(T, "a1", "alice")
    store.learning.note_extracted(T, "b1", "bob")
    store.learning.reject(T, "e" * 64, user="alice")
    forget(store, T, {"user": "alice"})
    assert store.memories.get(T, alone.memory_id) is None
    assert store.memories.get(T, project_rec.memory_id).evidence_sessions == ("b1",)
    assert [s for _, s in store.learning.extracted(T)] == ["b1"]
    assert not store.learning.rejected(T, "e" * 64)
