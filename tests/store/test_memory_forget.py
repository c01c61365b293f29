"""Forgetting: every layer, receipts in a chain, and nothing left on disk."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.errors import StoreError
from ctxproxy.store.forget import check, finish_erasure, forget, receipts, verify_chain

T = "acme"
CANARY = "zebra-canary-7f3a91"


def grep_dir(root: Path, needle: str) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and needle.encode() in path.read_bytes():
            hits.append(str(path.relative_to(root)))
    return hits


def fill_alice(store):
    rec = put_memory(store, T, f"Alice keeps her {CANARY} notes in vim.", user="alice")
    store.memories.put(rec.evolve(statement=f"Alice keeps her {CANARY} notes in neovim."))
    store.sessions.put(T, "s-alice", {"last": f"talked about {CANARY}"}, subject="alice")
    store.manifests.put(T, "turn-1", {"text": CANARY}, session="s-alice", subject="alice")
    store.pruned.put(T, "p-1", {"content": CANARY * 3}, session="s-alice")
    return rec


def test_forget_user_erases_every_layer_and_the_disk(store, tmp_path):
    fill_alice(store)
    bob = put_memory(store, T, "Bob prefers tabs.", user="bob")
    assert grep_dir(tmp_path, CANARY)  # the canary is on disk before
    receipt = forget(store, T, {"user": "alice"}, request_id="req-1")
    assert receipt.status == "erased" and receipt.seq == 1 and receipt.prev_hash == "" and receipt.hash
    c = receipt.counts
    assert c["memories"] == 1 and c["memory_revisions"] == 2 and c["memory_index"] >= 4
    assert c["sessions"] == 1 and c["manifests"] == 1 and c["pruned"] == 1
    assert receipt.completed_at and receipt.erased_at
    assert grep_dir(tmp_path, CANARY) == []  # not in free pages either
    assert store.memories.get(T, bob.memory_id) is not None  # another user's memory stays
    assert check(store, T, "req-1")["clean"] is True
    assert "alice" not in str(receipt.to_dict())  # the receipt keeps digests, not the subject
    # after a restart too
    store.close()
    with open_store(tmp_path / "store") as again:
        assert again.memories.list(T, user="alice") == [] and again.sessions.get(T, "s-alice") is None
    assert grep_dir(tmp_path, CANARY) == []


def test_receipts_chain_and_tampering_is_found(store):
    fill_alice(store)
    put_memory(store, T, "Project p deploys on Fridays.", project="p")
    first = forget(store, T, {"user": "alice"})
    second = forget(store, T, {"project": "p"})
    assert second.prev_hash == first.hash and second.seq == 2
    chain = [r.to_dict() for r in receipts(store, T)]
    assert verify_chain(chain) == []
    forged = [dict(chain[0], counts={"memories": 0}), chain[1]]
    assert any("altered" in p for p in verify_chain(forged))
    assert any("missing" in p for p in verify_chain([chain[1]]))
    # the same request id replays its receipt; it cannot be reused for another subject
    assert forget(store, T, {"project": "p"}, request_id=second.request_id).hash == second.hash
    with pytest.raises(StoreError):
        forget(store, T, {"user": "carol"}, request_id=second.request_id)


def test_deleting_a_session_expires_memories_whose_only_evidence_it_was(store):
    only = put_memory(store, T, "The build needs Java 21.", kind="fact", evidence_sessions=("s1",))
    both = put_memory(store, T, "The linter is ruff.", kind="fact", evidence_sessions=("s1", "s2"))
    own = put_memory(store, T, "Scratch note of s1.", kind="fact", session="s1")
    receipt = forget(store, T, {"session": "s1"})
    assert receipt.counts["memories"] == 1 and receipt.counts["memories_expired"] == 1
    assert store.memories.get(T, own.memory_id) is None
    gone = store.memories.get(T, only.memory_id)
    assert gone.status == "expired" and not gone.servable(gone.updated_at + 1)
    kept = store.memories.get(T, both.memory_id)
    assert kept.status == "active" and kept.evidence_sessions == ("s2",)


def test_forgetting_a_memory_drops_it_from_frozen_snapshots(store):
    rec = put_memory(store, T, f"Always answer in {CANARY} style.")
    line = f"- [tenant] Always answer in {CANARY} style. (mem:{rec.memory_id}, 2026-12-01)"
    store.sessions.put(T, "s-other", {"memory_snapshot": {"parts": [{"text": line}]}, "keep": 1})
    receipt = forget(store, T, {"memory": rec.memory_id})
    assert receipt.counts["snapshots"] == 1 and receipt.counts["memories"] == 1
    assert store.sessions.get(T, "s-other") == {"keep": 1}


def test_other_tenants_are_untouched(store):
    put_memory(store, T, "alice memo", user="alice")
    other = put_memory(store, "globex", "alice memo", user="alice")
    forget(store, T, {"user": "alice"})
    assert store.memories.get("globex", other.memory_id) is not None


def test_bad_subjects_are_refused(store):
    for subject in ({}, {"user": "a", "session": "b"}, {"user": ""}, {"nobody": "x"}, {"user": 7}):
        with pytest.raises(StoreError):
            forget(store, T, subject)


HOLD = """
import sys
from ctxproxy.store import open_store
s = open_store(sys.argv[1])
s.memories.list("acme")
print("open", flush=True)
sys.stdin.readline()
s.close()
"""


def test_pending_while_another_process_holds_the_store(store, tmp_path):
    fill_alice(store)
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "store")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "open"
        receipt = forget(store, T, {"user": "alice"})
        assert receipt.status == "pending" and receipt.hash  # sealed into the chain, not yet erased on disk
        assert store.memories.list(T, user="alice") == []  # but gone from every layer already
    finally:
        child.stdin.write("\n")
        child.stdin.flush()
        child.wait(timeout=30)
    assert finish_erasure(store) is True
    assert receipts(store, T)[0].status == "erased"
    assert grep_dir(tmp_path, CANARY) == []


def test_compaction_renews_every_repository_of_the_process(store, tmp_path):
    """Repositories built before the compacting copy was swapped in keep working
    after it (their database handles are renewed), and so do other handles."""
    other = open_store(tmp_path / "store")  # a second handle in this process: the same environment
    try:
        store.sessions.put(T, "s1", {"x": 1})
        fill_alice(store)
        assert forget(store, T, {"user": "alice"}).status == "erased"
        store.sessions.put(T, "s2", {"x": 2})
        assert other.sessions.get(T, "s1") == {"x": 1} and other.sessions.get(T, "s2") == {"x": 2}
        put_memory(other, T, "written through the other handle")
        assert [m.statement for m in store.memories.list(T)] == ["written through the other handle"]
    finally:
        other.close()
