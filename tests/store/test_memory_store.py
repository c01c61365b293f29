"""store.memories: records, revisions, indexes and the change feed, on a real LMDB store."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.errors import ExternalIdTaken, RevisionConflict, StoreError
from ctxproxy.store.lmdb_store import LMDBStore
from ctxproxy.store.memory_records import MemoryRecord


def test_put_get_history_and_revision_check(store):
    rec = put_memory(store, "t", "Deploys go through staging.", kind="procedure", project="p")
    assert rec.revision == 1 and rec.created_at > 0 and rec.memory_id.startswith("mem_") and len(rec.memory_id) == 30
    second = store.memories.put(rec.evolve(statement="Deploys go through staging first."), expected_revision=1)
    assert second.revision == 2 and second.created_at == rec.created_at
    with pytest.raises(RevisionConflict) as err:
        store.memories.put(rec.evolve(statement="stale writer"), expected_revision=1)
    assert err.value.current == 2
    assert [h.statement for h in store.memories.history("t", rec.memory_id)] == [
        "Deploys go through staging.", "Deploys go through staging first."]
    assert store.memories.get("t", rec.memory_id).statement == "Deploys go through staging first."
    assert store.memories.get("other", rec.memory_id) is None  # tenant-prefixed
    assert store.memories.history("other", rec.memory_id) == []


def test_lists_filter_and_indexes_follow_edits(store):
    a = put_memory(store, "t", "Alice likes tabs.", user="alice")
    put_memory(store, "t", "Bob likes spaces.", user="bob", kind="fact")
    put_memory(store, "t", "Project p uses Redis 6.", project="p", kind="fact", evidence_sessions=("s1", "s2"))
    assert [r.statement for r in store.memories.list("t", user="alice")] == ["Alice likes tabs."]
    assert [r.statement for r in store.memories.list("t", kind="fact", project="p")] == ["Project p uses Redis 6."]
    assert len(store.memories.list("t", session="s2")) == 1
    moved = store.memories.put(a.evolve(user="carol"))
    assert store.memories.list("t", user="alice") == [] and store.memories.list("t", user="carol") == [moved]
    assert store.memories.same_text("t", "", "carol", "", "alice LIKES tabs") == [moved]
    assert store.memories.same_text("t", "", "alice", "", "alice likes tabs") == []  # another scope


def test_external_id_is_unique_per_scope(store):
    a = put_memory(store, "t", "one", external_id="e1", project="p")
    assert store.memories.find_external("t", "p", "", "", "e1") == a
    assert store.memories.find_external("t", "q", "", "", "e1") is None
    put_memory(store, "t", "two", external_id="e1", project="q")  # another scope: fine
    with pytest.raises(ExternalIdTaken) as err:
        put_memory(store, "t", "three", external_id="e1", project="p")
    assert err.value.memory_id == a.memory_id


def test_change_feed_and_erase(store):
    start = store.memories.last_seq()
    a = put_memory(store, "t", "first")
    b = put_memory(store, "u", "second")
    store.memories.put(a.evolve(statement="first, edited"))
    counts = store.memories.erase("t", a.memory_id)
    assert counts["memories"] == 1 and counts["revisions"] == 2 and counts["memory_index"] >= 3
    feed = store.memories.changes(start)
    assert [(t, m) for _, t, m in feed] == [("t", a.memory_id), ("u", b.memory_id), ("t", a.memory_id),
                                            ("t", a.memory_id)]
    assert [s for s, _, _ in feed] == sorted(s for s, _, _ in feed) and feed[-1][0] == store.memories.last_seq()
    assert store.memories.changes(feed[1][0], limit=1) == [feed[2]]
    assert store.memories.get("t", a.memory_id) is None and store.memories.history("t", a.memory_id) == []
    assert store.memories.erase("t", a.memory_id)["memories"] == 0


def test_batch_writes_commit_together(store):
    with pytest.raises(RuntimeError):
        with store.batch() as b:
            put_memory(b, "t", "never committed")
            raise RuntimeError("abort")
    assert store.memories.list("t") == []
    with store.batch() as b:
        for i in range(3):
            put_memory(b, "t", f"n{i}")
    assert len(store.memories.list("t")) == 3


def test_invalid_records_are_refused(store):
    with pytest.raises(StoreError):
        put_memory(store, "t", "x", kind="opinion")
    with pytest.raises(StoreError):
        put_memory(store, "t", "   ")
    with pytest.raises(StoreError):
        put_memory(store, "t", "x", memory_id="#hash-like")


def test_iter_tenant_pages_through_everything(store):
    with store.batch() as b:
        for i in range(1200):
            put_memory(b, "t", f"statement {i}")
        put_memory(b, "t2", "other tenant")
    got = list(store.memories.iter_tenant("t"))
    assert len(got) == 1200 and len({r.memory_id for r in got}) == 1200
    assert sorted(store.memories.tenants()) == ["t", "t2"]


def test_schema_v1_memory_documents_are_migrated(tmp_path):
    path = str(tmp_path / "old")
    old = LMDBStore.open(path, schema_version=1, migrations={})
    old._env.write(lambda txn: txn.put(b"t\x00m1", orjson.dumps({
        "v": 1, "tenant": "t", "id": "m1", "session": None, "subject": None, "created_at": 5.0, "updated_at": 5.0,
        "data": {"text": "Prefers rebase.", "scope": "project", "project": "p", "trust": "curated"}}),
        db=old._env.dbs["memories"]))
    old.close()
    with open_store(path) as s:
        rec = s.memories.get("t", "m1")
        assert isinstance(rec, MemoryRecord) and rec.statement == "Prefers rebase." and rec.project == "p"
        assert rec.status == "active" and s.schema_version == 2 and len(s.memories.history("t", "m1")) == 1


def test_feed_position_follows_another_process_and_a_batch(tmp_path):
    """The feed position is kept by the environment's last committed transaction: a memory
    another process writes, or a batch of this one commits, is seen at once; a snapshot and
    an open batch read their own transaction."""
    import subprocess
    import sys

    store = open_store(tmp_path / "s")
    try:
        start = store.memories.last_seq()
        assert store.memories.last_seq() == start  # kept: no commit since
        child = ("import sys; sys.path.insert(0, sys.argv[2]); from memhelp import put_memory; "
                 "from ctxproxy.store import open_store; s = open_store(sys.argv[1]); "
                 "put_memory(s, 't', 'written by another process'); s.close()")
        subprocess.run([sys.executable, "-c", child, str(tmp_path / "s"), str(Path(__file__).parents[1])],
                       check=True, timeout=120)
        after_child = store.memories.last_seq()
        assert after_child > start
        with store.snapshot() as snap:
            with store.batch() as b:
                put_memory(b, "t", "in a batch")
                assert b.memories.last_seq() > after_child  # the batch reads its own write
                assert store.memories.last_seq() == after_child  # not committed yet
            assert snap.memories.last_seq() == after_child  # the snapshot's transaction
        assert store.memories.last_seq() > after_child
    finally:
        store.close()
