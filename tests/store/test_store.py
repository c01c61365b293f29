"""ctxproxy.store on a real LMDB environment in tmp_path (one process).

Multi-process cases (workers, fork, kill -9) are in test_store_procs.py.
"""
from __future__ import annotations

import orjson
from memhelp import put_memory
import pytest
from fixedclock import Clock
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxproxy.store import (
    COMPLETED,
    FAILED,
    PENDING,
    RESOLVED,
    SCHEMA_VERSION,
    UNKNOWN,
    EffectStateError,
    StoreError,
    DeletionReceipt,
    WriteNeeded,
    open_store,
)
from ctxproxy.store import keys
from ctxproxy.store.lmdb_store import LMDBStore
from ctxproxy.store.writer import BackgroundWriter

T = "acme"


@pytest.fixture
def clock() -> Clock:
    return Clock(1_000_000.0)


@pytest.fixture
def store(tmp_path, clock):
    s = open_store(tmp_path / "db", clock=clock, pending_timeout=600)
    yield s
    s.close()


def pend(s, key="k1", call_id="c1", tenant=T, **kw):
    args = dict(tool="Bash", args_canonical='{"command":"gh pr create"}', session="s1",
                task="t1", side_effect=True, turn_id="turn-1")
    args.update(kw)
    return s.effects.put_pending(tenant, key=key, call_id=call_id, **args)


# -- effects -------------------------------------------------------------------


def test_effect_round_trip(store):
    rec = pend(store)
    assert (rec.state, rec.key, rec.call_id, rec.tool, rec.session, rec.task, rec.turn_id) == (
        PENDING, "k1", "c1", "Bash", "s1", "t1", "turn-1")
    assert rec.args_canonical == '{"command":"gh pr create"}' and rec.side_effect
    done = store.effects.complete(T, "k1", "c1", result_digest="sha256:ab", result_size=120,
                                  refs=["https://github.com/o/r/pull/4821", "PR #4821"],
                                  excerpt="Created PR #4821", turn_id="turn-2")
    assert done.state == COMPLETED and done.settled
    got = store.effects.get(T, "k1", "c1")
    assert got == done
    assert got.refs == ("https://github.com/o/r/pull/4821", "PR #4821")
    assert (got.result_digest, got.result_size, got.excerpt, got.result_turn_id) == (
        "sha256:ab", 120, "Created PR #4821", "turn-2")
    assert got.to_dict()["refs"] == list(got.refs)
    assert orjson.loads(orjson.dumps(got.to_dict()))["state"] == COMPLETED
    assert store.effects.get(T, "k1", "nope") is None
    assert store.effects.complete(T, "k1", "nope") is None


def test_put_pending_is_idempotent_and_never_regresses(store):
    first = pend(store)
    again = pend(store, tool="Other")  # replayed history: same key + call id
    assert again == first
    assert len(store.effects.list(T)) == 1
    store.effects.complete(T, "k1", "c1", refs=["PR #1"])
    assert pend(store).state == COMPLETED  # seen again in history: stays completed
    # first result wins: the same result replayed (or pruned to a stub) changes nothing
    again = store.effects.complete(T, "k1", "c1", state=FAILED, refs=["other"])
    assert again.state == COMPLETED and again.refs == ("PR #1",)


def test_same_key_new_call_is_a_second_record(store, clock):
    pend(store, call_id="c1")
    store.effects.complete(T, "k1", "c1")
    clock.t += 1
    pend(store, call_id="c2", turn_id="turn-9")
    occurrences = store.effects.by_key(T, "k1")
    assert [(r.call_id, r.state) for r in occurrences] == [("c1", COMPLETED), ("c2", PENDING)]
    assert store.effects.by_key(T, "k2") == []


def test_failed_result(store):
    pend(store)
    rec = store.effects.complete(T, "k1", "c1", state=FAILED, excerpt="permission denied")
    assert rec.state == FAILED and rec.settled
    with pytest.raises(StoreError):
        store.effects.complete(T, "k1", "c1", state=UNKNOWN)


def test_by_call_id_and_aliases(store, clock):
    pend(store, key="k1", call_id="call_ab12", aliases=["callab12"])
    clock.t += 1
    pend(store, key="k2", call_id="call_zz", session="s2")
    assert store.effects.by_call_id(T, "call_ab12").key == "k1"
    assert store.effects.by_call_id(T, "callab12").key == "k1"  # OpenClaw's rewritten id
    assert store.effects.by_call_id(T, "call_zz", session="s1") is None
    assert store.effects.by_call_id(T, "call_zz", session="s2").key == "k2"
    assert store.effects.by_call_id(T, "missing") is None
    # aliases learnt later are added, not duplicated
    pend(store, key="k1", call_id="call_ab12", aliases=["CALL-AB12", "callab12"])
    assert store.effects.get(T, "k1", "call_ab12").aliases == ("callab12", "CALL-AB12")
    assert store.effects.by_call_id(T, "CALL-AB12").call_id == "call_ab12"


def test_list_filters(store, clock):
    pend(store, key="a", call_id="1", session="s1", task="t1", side_effect=True)
    clock.t += 1
    pend(store, key="b", call_id="2", session="s1", task="t2", side_effect=False, tool="Read")
    clock.t += 1
    pend(store, key="c", call_id="3", session="s2", task="t1", side_effect=True)
    store.effects.complete(T, "a", "1")
    ids = lambda recs: [r.call_id for r in recs]  # noqa: E731
    assert ids(store.effects.list(T)) == ["1", "2", "3"]
    assert ids(store.effects.list(T, session="s1")) == ["1", "2"]
    assert ids(store.effects.list(T, task="t1")) == ["1", "3"]
    assert ids(store.effects.list(T, session="s1", task="t1")) == ["1"]
    assert ids(store.effects.list(T, state=COMPLETED)) == ["1"]
    assert ids(store.effects.list(T, state=[PENDING, COMPLETED], side_effect=True)) == ["1", "3"]
    assert ids(store.effects.list(T, side_effect=False)) == ["2"]
    assert store.effects.list(T, session="nope") == []
    with pytest.raises(StoreError):
        store.effects.list(T, state="done")


def test_pending_reads_as_unknown_after_timeout(store, clock):
    pend(store, key="old", call_id="1")
    clock.t += 599
    pend(store, key="new", call_id="2")
    assert store.effects.get(T, "old", "1").state == PENDING
    clock.t += 2
    assert store.effects.get(T, "old", "1").state == UNKNOWN  # derived, never "completed"
    assert store.effects.get(T, "new", "2").state == PENDING
    assert [r.key for r in store.effects.list(T, state=UNKNOWN)] == ["old"]
    assert [r.key for r in store.effects.list(T, state=PENDING)] == ["new"]
    # the result arriving late still completes it: it was seen after all
    assert store.effects.complete(T, "old", "1").state == COMPLETED


def test_mark_unknown_is_stored(store):
    pend(store)
    rec = store.effects.mark_unknown(T, "k1", "c1", note="session moved on without a result")
    assert rec.state == UNKNOWN and rec.note.startswith("session moved on")
    assert store.effects.list(T, state=UNKNOWN) == [rec]
    store.effects.complete(T, "k1", "c1")
    assert store.effects.mark_unknown(T, "k1", "c1").state == COMPLETED  # no effect once settled


def test_no_timeout_means_pending_stays_pending(tmp_path, clock):
    with open_store(tmp_path / "db", clock=clock, pending_timeout=None) as s:
        pend(s)
        clock.t += 10**9
        assert s.effects.get(T, "k1", "c1").state == PENDING


def test_resolve_unknown(store, clock):
    pend(store, call_id="c1")
    pend(store, call_id="c2")
    clock.t += 3600
    out = store.effects.resolve(T, "k1", resolution="not_executed", note="checked GitHub: no PR",
                                by="alice")
    assert [(r.call_id, r.state, r.resolution, r.resolved_by) for r in out] == [
        ("c1", RESOLVED, "not_executed", "alice"), ("c2", RESOLVED, "not_executed", "alice")]
    assert store.effects.get(T, "k1", "c1").note == "checked GitHub: no PR"
    with pytest.raises(EffectStateError, match="resolved"):
        store.effects.resolve(T, "k1", resolution="completed")
    assert store.effects.resolve(T, "missing", resolution="completed") == []
    with pytest.raises(StoreError, match="resolution"):
        store.effects.resolve(T, "k1", resolution="maybe")


def test_resolve_one_call_and_refuse_completed(store):
    pend(store, call_id="c1")
    pend(store, call_id="c2")
    store.effects.complete(T, "k1", "c1")
    with pytest.raises(EffectStateError, match="completed"):
        store.effects.resolve(T, "k1", call_id="c1", resolution="failed")
    out = store.effects.resolve(T, "k1", resolution="completed")  # only the open one
    assert [r.call_id for r in out] == ["c2"]
    assert store.effects.get(T, "k1", "c1").resolution is None


def test_effect_input_validation(store):
    with pytest.raises(StoreError):
        pend(store, tool=None)
    with pytest.raises(StoreError):
        pend(store, key="")
    with pytest.raises(StoreError):
        store.effects.complete(T, "k1", "c1", refs="PR #1")  # a string, not a list
    with pytest.raises(StoreError):
        store.effects.complete(T, "k1", "c1", result_size=-1)


# -- batch ---------------------------------------------------------------------


def test_batch_commits_together(store):
    with store.batch() as b:
        for i in range(5):
            b.effects.put_pending(T, key=f"k{i}", call_id=f"c{i}", tool="Bash",
                                  args_canonical="{}", session="s1")
        b.effects.complete(T, "k0", "c0")
        assert b.effects.get(T, "k0", "c0").state == COMPLETED  # reads see the batch
        assert len(b.effects.list(T, session="s1")) == 5
        b.sessions.update(T, "s1", {"turns": 3})
    assert len(store.effects.list(T)) == 5
    assert store.sessions.get(T, "s1") == {"turns": 3}


def test_batch_rolls_back_on_error(store):
    pend(store, key="before", call_id="0")
    with pytest.raises(RuntimeError):
        with store.batch() as b:
            b.effects.put_pending(T, key="k1", call_id="c1", tool="Bash", args_canonical="{}")
            b.effects.complete(T, "before", "0")
            raise RuntimeError("forwarding aborted")
    assert store.effects.get(T, "k1", "c1") is None
    assert store.effects.get(T, "before", "0").state == PENDING
    with store.batch() as b:
        pass
    with pytest.raises(StoreError, match="not open"):
        b.effects.get(T, "k1", "c1")


def test_batch_store_error_inside_keeps_earlier_writes_on_commit(store):
    pend(store)
    store.effects.complete(T, "k1", "c1")
    with store.batch() as b:
        b.effects.put_pending(T, key="k2", call_id="c2", tool="Bash", args_canonical="{}")
        with pytest.raises(EffectStateError):
            b.effects.resolve(T, "k1", resolution="failed")
    assert store.effects.get(T, "k2", "c2") is not None


def test_writing_outside_the_batch_inside_it_is_an_error_not_a_deadlock(store):
    with store.batch() as b:
        b.effects.put_pending(T, key="k1", call_id="c1", tool="Bash", args_canonical="{}")
        assert store.effects.get(T, "k1", "c1") is None  # store reads see committed data only
        with pytest.raises(StoreError):
            store.effects.put_pending(T, key="k2", call_id="c2", tool="Bash", args_canonical="{}")
        with pytest.raises(StoreError):
            with store.batch():
                pass
    assert store.effects.get(T, "k1", "c1") is not None


def test_threads_share_one_store_while_the_map_grows(tmp_path):
    import threading

    errors = []
    with open_store(tmp_path / "db", map_size=64 << 10, max_map_size=256 << 20) as s:
        def work(n):
            try:
                for i in range(25):
                    with s.batch() as b:
                        b.effects.put_pending(T, key=f"t{n}-{i}", call_id="c", tool="Bash",
                                              args_canonical="{}", session=f"s{n}")
                        b.pruned.put(T, f"t{n}-{i}", {"content": "x" * 8000})
                    assert len(s.effects.list(T, session=f"s{n}")) == i + 1
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(s.effects.list(T)) == 100 and len(s.pruned.list(T)) == 100
        assert s.stats().map_size > 64 << 10


# -- sessions and documents ----------------------------------------------------


def test_sessions_round_trip(store, clock):
    assert store.sessions.get(T, "s1") is None
    store.sessions.put(T, "s1", {"fingerprints": ["a", "b"], "pruned": {"m3": True}}, subject="u1")
    assert store.sessions.get(T, "s1") == {"fingerprints": ["a", "b"], "pruned": {"m3": True}}
    new = store.sessions.update(T, "s1", {"fingerprints": ["a", "b", "c"], "memory": {"rev": 2}})
    assert new == {"fingerprints": ["a", "b", "c"], "pruned": {"m3": True}, "memory": {"rev": 2}}
    assert store.sessions.get(T, "s1") == new
    assert store.sessions.update(T, "s2", {"x": 1}) == {"x": 1}  # created
    assert sorted(store.sessions.list(T)) == ["s1", "s2"]
    assert store.sessions.list(T, subject="u1") == ["s1"]  # subject kept across update
    store.sessions.update(T, "s1", {}, subject="u2")  # still holds u1's data: listed under both
    assert store.sessions.list(T, subject="u1") == ["s1"] == store.sessions.list(T, subject="u2")
    assert store.sessions.delete(T, "s1") and not store.sessions.delete(T, "s1")
    assert store.sessions.get(T, "s1") is None
    assert store.sessions.list(T, subject="u1") == [] == store.sessions.list(T, subject="u2")


@pytest.mark.parametrize("kind", ["checkpoints", "manifests", "pruned", "receipts"])
def test_documents_round_trip(store, clock, kind):
    docs = getattr(store, kind)
    assert docs.kind == kind
    a = docs.put(T, "turn-2", {"n": 2, "text": "résumé ✓"}, session="s1", subject="u1")
    clock.t += 1
    docs.put(T, "turn-1", {"n": 1}, session="s1")
    clock.t += 1
    docs.put(T, "turn-3", {"n": 3}, session="s2")
    got = docs.get(T, "turn-2")
    assert got == a and got.data == {"n": 2, "text": "résumé ✓"} and got.kind == kind
    assert [d.id for d in docs.list(T, session="s1")] == ["turn-2", "turn-1"]  # oldest first
    assert [d.id for d in docs.list(T)] == ["turn-2", "turn-1", "turn-3"]
    assert [d.id for d in docs.list(T, subject="u1")] == ["turn-2"]
    clock.t += 1
    b = docs.put(T, "turn-2", {"n": 22}, session="s2")  # replace: keeps created_at, moves session
    assert b.created_at == a.created_at and b.updated_at > a.updated_at
    assert [d.id for d in docs.list(T, session="s1")] == ["turn-1"]
    assert [d.id for d in docs.list(T, session="s2")] == ["turn-2", "turn-3"]
    assert docs.list(T, subject="u1") == []
    assert docs.delete(T, "turn-2") and not docs.delete(T, "turn-2")
    assert docs.get(T, "turn-2") is None
    with pytest.raises(StoreError, match="JSON"):
        docs.put(T, "bad", {"x": object()})
    with pytest.raises(StoreError):
        docs.put(T, "bad", ["not", "a", "mapping"])


@pytest.mark.parametrize("kind", ["checkpoints", "manifests"])
def test_documents_put_many_writes_them_as_put_would_in_one_write(store, clock, kind):
    """A turn's manifest and its turn pointer (and every turn that ended within
    the writer's linger) are put at once: each is what ``put`` would have made."""
    docs = getattr(store, kind)
    docs.put(T, "turn-1", {"n": 0}, session="s0", subject="u0")
    created = docs.get(T, "turn-1").created_at
    clock.t += 1
    assert docs.put_many([(T, "turn-1", {"n": 1}, "s1", "u1"), ("#turns", "turn-1", {"tenant": T}, "s1", "u1"),
                          (T, "turn-2", {"n": 2, "text": "résumé ✓"}, None, None)]) == 3
    one = docs.get(T, "turn-1")
    assert one.data == {"n": 1} and one.session == "s1" and one.subject == "u1"
    assert one.created_at == created and one.updated_at > created  # a replace keeps created_at
    assert [d.id for d in docs.list(T, session="s1")] == ["turn-1"] and docs.list(T, session="s0") == []
    assert [d.id for d in docs.list(T, subject="u1")] == ["turn-1"] and docs.list(T, subject="u0") == []
    assert docs.get("#turns", "turn-1").data == {"tenant": T}
    assert [d.id for d in docs.list("#turns", session="s1")] == ["turn-1"]
    assert docs.get(T, "turn-2").data == {"n": 2, "text": "résumé ✓"} and docs.get(T, "turn-2").session is None
    assert docs.put_many([]) == 0
    # one bad document refuses them all, and none is written
    for bad in (("", "turn-4", {}, None, None), (T, "", {}, None, None), (T, "turn-4", {}, 7, None),
                (T, "turn-4", {}, "", None), (T, "turn-4", {}, None, ""), (T, "turn-4", ["x"], None, None),
                (T, "turn-4", {"x": object()}, None, None)):
        with pytest.raises(StoreError):
            docs.put_many([(T, "turn-3", {"n": 3}, "s1", None), bad])
        assert docs.get(T, "turn-3") is None and docs.get(T, "turn-4") is None


def test_erasure_takes_the_pointers_of_the_documents_it_erases(store):
    """A turn's pointer is written with its manifest and names no session or
    subject; erasing the manifest's session (or subject) takes it by the
    manifest's id. A pointer filed under the session (as written before) goes
    too; a pointer of the same id naming another tenant, and the pointer of a
    manifest not erased, stay."""
    docs = store.manifests
    docs.put_many([(T, "turn-1", {"n": 1}, "s1", "u1"), ("#turns", "turn-1", {"tenant": T}, None, None),
                   (T, "turn-2", {"n": 2}, "s2", "u1"), ("#turns", "turn-2", {"tenant": T}, None, None),
                   ("other", "turn-3", {"n": 3}, "s1", "u1"), ("#turns", "turn-3", {"tenant": "other"}, None, None)])
    docs.put(T, "turn-4", {"n": 4}, session="s1")
    docs.put("#turns", "turn-4", {"tenant": T}, session="s1")  # filed under the session, as pointers were
    docs.put("other", "turn-5", {"n": 5}, session="s1")
    docs.put("#turns", "turn-5", {"tenant": "other"}, session="s1")
    assert store.count_subject(T, session="s1")["pointers"] == 2
    receipt = store.delete_subject(T, session="s1")
    assert receipt.counts["manifests"] == 2 and receipt.counts["pointers"] == 2
    assert docs.get("#turns", "turn-1") is None and docs.get("#turns", "turn-4") is None
    assert docs.get("#turns", "turn-2").data == {"tenant": T}  # its manifest is in another session
    assert docs.get("#turns", "turn-3").data == {"tenant": "other"}  # another tenant's, as its manifest
    assert docs.get("#turns", "turn-5").data == {"tenant": "other"}
    assert store.delete_subject(T, subject="u1").counts["pointers"] == 1
    assert docs.get("#turns", "turn-2") is None and docs.get("other", "turn-3") is not None


def test_a_default_tenant_turn_is_found_without_a_pointer_and_erased_with_its_session(store):
    """A turn of the default tenant is written without its turn pointer (one record
    fewer a turn): a turn id with no pointer is looked up in that tenant. Turns
    stored with a pointer before still read and are erased with it; another
    tenant's turns keep theirs and are never found in the default tenant."""
    from ctxproxy.store import UNPOINTED_TENANT
    from ctxproxy.store.lookups import find_manifest

    d = UNPOINTED_TENANT
    docs = store.manifests
    docs.put_many([(d, "turn-1", {"n": 1}, "s1", None)])  # as the manifest filter writes one now
    docs.put_many([(d, "turn-2", {"n": 2}, "s1", None), ("#turns", "turn-2", {"tenant": d}, None, None)])  # before
    docs.put_many([(T, "turn-3", {"n": 3}, "s1", None), ("#turns", "turn-3", {"tenant": T}, None, None)])
    assert find_manifest(store, "turn-1").data == {"n": 1} and find_manifest(store, "turn-1").tenant == d
    assert find_manifest(store, "turn-2").data == {"n": 2}
    assert find_manifest(store, "turn-3").tenant == T
    assert find_manifest(store, "turn-1", T) is None and find_manifest(store, "turn-3", d) is None
    assert find_manifest(store, "missing") is None
    assert store.count_subject(d, session="s1")["pointers"] == 1
    receipt = store.delete_subject(d, session="s1")
    assert receipt.counts["manifests"] == 2 and receipt.counts["pointers"] == 1
    assert find_manifest(store, "turn-1") is None and find_manifest(store, "turn-2") is None
    assert docs.get("#turns", "turn-2") is None
    assert find_manifest(store, "turn-3").data == {"n": 3} and docs.get("#turns", "turn-3").data == {"tenant": T}


def test_pruned_original_large_text(store):
    original = "line of tool output\n" * 50_000  # ~1 MB, overflow pages
    store.pruned.put(T, "sha256:abc", {"content": original, "tool": "Bash"}, session="s1")
    assert store.pruned.get(T, "sha256:abc").data["content"] == original


def test_index_postings(store):
    store.index.put_doc(T, "m1", {"deploy": {"tf": 2}, "prod": {"tf": 1}})
    store.index.put_doc(T, "m2", {"deploy": {"tf": 1}})
    assert sorted(store.index.postings(T, "deploy")) == [("m1", {"tf": 2}), ("m2", {"tf": 1})]
    assert sorted(store.index.terms(T, "m1")) == ["deploy", "prod"]
    store.index.put_doc(T, "m1", {"staging": {"tf": 1}})  # replaces m1's postings
    assert store.index.postings(T, "deploy") == [("m2", {"tf": 1})]
    assert store.index.postings(T, "prod") == []
    assert store.index.remove_doc(T, "m2") == 1
    assert store.index.postings(T, "deploy") == []


def test_deleting_a_memory_drops_its_postings(store):
    put_memory(store, T, "deploy to prod on fridays", memory_id="m1")
    store.index.put_doc(T, "m1", {"deploy": {}, "prod": {}})
    assert store.memories.erase(T, "m1")["memories"] == 1
    assert store.index.terms(T, "m1") == [] and store.index.postings(T, "deploy") == []


# -- tenant isolation ------------------------------------------------------------

TENANTS = ["a", "ab", "b", "a b", "A", "a.b", "#a", "ü"]


def _fill(s, tenant):
    s.effects.put_pending(tenant, key="k", call_id="c", tool="Bash", args_canonical="{}",
                          session="s", task="t")
    s.effects.put_pending(tenant, key="k", call_id="c" + tenant, tool="Bash", args_canonical="{}",
                          session="s" + tenant, task="t")
    s.sessions.put(tenant, "s", {"owner": tenant}, subject="u")
    for kind in ("checkpoints", "manifests", "pruned", "receipts"):
        getattr(s, kind).put(tenant, "d", {"owner": tenant}, session="s", subject="u")
    put_memory(s, tenant, "owner " + tenant, memory_id="d", session="s", user="u", external_id="e")
    s.index.put_doc(tenant, "d", {"term": {"owner": tenant}})


def test_tenant_isolation(store):
    for t in TENANTS:
        _fill(store, t)
    for t in TENANTS:
        effects = store.effects.list(t)
        assert {e.tenant for e in effects} == {t} and len(effects) == 2
        assert {e.tenant for e in store.effects.list(t, session="s")} == {t}
        assert {e.tenant for e in store.effects.list(t, task="t")} == {t}
        assert {e.tenant for e in store.effects.by_key(t, "k")} == {t}
        assert store.effects.by_call_id(t, "c").tenant == t
        assert store.sessions.list(t) == ["s"] and store.sessions.get(t, "s") == {"owner": t}
        assert store.sessions.list(t, subject="u") == ["s"]
        for kind in ("checkpoints", "manifests", "pruned", "receipts"):
            docs = getattr(store, kind)
            for listing in (docs.list(t), docs.list(t, session="s"), docs.list(t, subject="u")):
                assert [(d.tenant, d.data["owner"]) for d in listing] == [(t, t)]
        for listing in (store.memories.list(t), store.memories.list(t, session="s"), store.memories.list(t, user="u"),
                        list(store.memories.iter_tenant(t))):
            assert [(m.tenant, m.statement) for m in listing] == [(t, "owner " + t)]
        assert store.memories.find_external(t, "", "u", "s", "e").tenant == t
        assert store.index.postings(t, "term") == [("d", {"owner": t})]
    # a tenant's own call id never matches another tenant's record
    assert store.effects.by_call_id("a", "cab") is None
    assert store.effects.list("a", session="sab") == []


def test_deletion_does_not_cross_tenants(store):
    for t in TENANTS:
        _fill(store, t)
    receipt = store.delete_subject("a", subject="u")
    assert receipt.counts["sessions"] == 1 and receipt.counts["effects"] == 1
    for t in TENANTS:
        if t != "a":
            assert store.count_subject(t, subject="u")["sessions"] == 1
            assert len(store.effects.list(t)) == 2


@pytest.mark.parametrize("bad", ["", "a\x00", "a\x00b", "\x00", " a", "a ", "a\nb", "\u202e",
                                 "x" * 97, 7, None, b"a"])
def test_crafted_tenant_ids_are_rejected(store, bad):
    with pytest.raises(StoreError):
        store.effects.list(bad)
    with pytest.raises(StoreError):
        store.sessions.put(bad, "s", {})
    with pytest.raises(StoreError):
        put_memory(store, bad, "m")


def test_crafted_session_ids_stay_in_their_prefix(store):
    for session in ["s", "st", "s\x00t", "s\x00", "#s", "s" * 300]:
        store.effects.put_pending(T, key="k", call_id=session, tool="Bash", args_canonical="{}",
                                  session=session)
        store.manifests.put(T, "m" + session, {}, session=session)
    for session in ["s", "st", "s\x00t", "s\x00", "#s", "s" * 300]:
        assert [r.call_id for r in store.effects.list(T, session=session)] == [session]
        assert [d.id for d in store.manifests.list(T, session=session)] == ["m" + session]


@settings(max_examples=200, deadline=None)
@given(t1=st.text(min_size=1, max_size=20), t2=st.text(min_size=1, max_size=20),
       parts=st.lists(st.text(min_size=1, max_size=120), min_size=1, max_size=4))
def test_key_prefixes_never_cross(t1, t2, parts):
    try:
        p1 = keys.tenant_prefix(t1)
        keys.tenant_prefix(t2)  # both must be valid tenant ids
    except StoreError:
        return
    encoded = [keys.part(p) for p in parts]
    assert all(b"\x00" not in e and len(e) <= keys.MAX_RAW_PART_BYTES for e in encoded)
    full = keys.key(t2, *encoded)
    assert len(full) < 511  # LMDB's key limit, with room for the index layouts
    assert full.startswith(p1) == (t1 == t2)
    # a part prefix only matches the same part
    if len(parts) > 1 and parts[0] != parts[1]:
        assert not keys.key(t2, encoded[1], b"x").startswith(keys.prefix(t2, encoded[0]))


# -- deletion --------------------------------------------------------------------


def test_delete_session(store):
    pend(store, key="k1", call_id="c1", session="s1")
    pend(store, key="k2", call_id="c2", session="s2")
    store.sessions.put(T, "s1", {"x": 1})
    store.sessions.put(T, "s2", {"x": 2})
    store.checkpoints.put(T, "cp1", {"goal": "ship"}, session="s1")
    store.manifests.put(T, "turn-1", {}, session="s1")
    store.manifests.put(T, "turn-2", {}, session="s2")
    store.pruned.put(T, "p1", {"content": "x"}, session="s1")
    put_memory(store, T, "t", memory_id="m1", session="s1")
    store.index.put_doc(T, "m1", {"t": {}, "u": {}})
    before = store.count_subject(T, session="s1")
    assert before == {"sessions": 1, "effects": 1, "checkpoints": 1, "manifests": 1, "pruned": 1,
                      "memories": 1, "index": 2, "pointers": 0, "memories_expired": 0,
                      "memory_revisions": 1, "memory_index": 4, "snapshots": 0}
    receipt = store.delete_subject(T, session="s1", request_id="req-1")
    assert receipt.counts == before and receipt.total == 13 and not receipt.replayed
    assert store.count_subject(T, session="s1") == dict.fromkeys(before, 0)  # the second query
    assert store.effects.list(T, session="s1") == [] and store.effects.by_call_id(T, "c1") is None
    assert store.sessions.get(T, "s1") is None and store.manifests.list(T, session="s1") == []
    # the other session is untouched
    assert len(store.effects.list(T, session="s2")) == 1 and store.sessions.get(T, "s2") == {"x": 2}
    assert [d.id for d in store.manifests.list(T)] == ["turn-2"]
    # the receipt is stored, and keeps digests, not the ids
    stored = store.receipts.get(T, "req-1")
    assert stored.data["counts"] == before
    assert "s1" not in orjson.dumps(stored.data).decode()
    assert receipt.session_digest and receipt.subject_digest is None
    # the same request id replays its receipt
    again = store.delete_subject(T, session="s1", request_id="req-1")
    assert again.replayed and again.counts == before


def test_delete_subject_across_sessions(store):
    store.sessions.put(T, "s1", {}, subject="user-7")
    store.sessions.put(T, "s2", {}, subject="user-7")
    store.sessions.put(T, "s3", {}, subject="user-8")
    for s in ("s1", "s2", "s3"):
        pend(store, key="k", call_id="c-" + s, session=s)
        store.manifests.put(T, "turn-" + s, {}, session=s)
    put_memory(store, T, "prefers rebase", memory_id="m-global", user="user-7")
    put_memory(store, T, "x", memory_id="m-other", user="user-8")
    receipt = store.delete_subject(T, subject="user-7")
    assert receipt.counts["sessions"] == 2 and receipt.counts["effects"] == 2
    assert receipt.counts["manifests"] == 2 and receipt.counts["memories"] == 1
    assert sum(store.count_subject(T, subject="user-7").values()) == 0
    assert store.sessions.list(T) == ["s3"]
    assert [m.memory_id for m in store.memories.list(T)] == ["m-other"]
    with pytest.raises(StoreError):
        store.delete_subject(T)


def test_session_parts_are_read_alone_and_deleted_with_their_session(store):
    store.sessions.update(T, "s1", {"d": {"pr_1": {"m": "soft"}}}, part="prune", subject="user-7")
    assert store.sessions.get(T, "s1") == {}  # the session record exists, small, with the subject
    assert store.sessions.get(T, "s1", part="prune") == {"d": {"pr_1": {"m": "soft"}}}
    store.sessions.update(T, "s1", {"goal": "ship"})
    assert store.sessions.get(T, "s1") == {"goal": "ship"}
    assert store.sessions.list(T) == ["s1"] and store.sessions.list(T, subject="user-7") == ["s1"]
    store.sessions.put(T, "s2", {"x": 1})
    store.sessions.put(T, "s2", {"d": {}}, part="prune")
    assert store.sessions.delete(T, "s2")
    assert store.sessions.get(T, "s2", part="prune") is None and store.sessions.list(T) == ["s1"]
    receipt = store.delete_subject(T, subject="user-7")
    assert receipt.counts["sessions"] == 1  # a part is part of its session
    assert store.sessions.get(T, "s1") is None and store.sessions.get(T, "s1", part="prune") is None


def test_a_document_holding_other_sessions_data_is_erased_with_any_of_them(store):
    """A task's checkpoint, last written by session s2, lists s1's effects too:
    erasing s1's subject erases it, and both counts see it."""
    store.sessions.put(T, "s1", {}, subject="alice")
    store.sessions.put(T, "s2", {}, subject="bob")
    pend(store, key="k1", call_id="c1", session="s1", task="t")
    store.checkpoints.put(T, "effects:t", {"text": "- Bash curl -d alice@example.com"}, session="s2",
                          sessions=["s1", "s2"])
    doc = store.checkpoints.get(T, "effects:t")
    assert doc.session == "s2" and doc.sessions == ("s1",)
    assert [d.id for d in store.checkpoints.list(T, session="s1")] == ["effects:t"]
    assert store.count_subject(T, subject="alice")["checkpoints"] == 1
    receipt = store.delete_subject(T, subject="alice")
    assert receipt.counts["checkpoints"] == 1 and receipt.counts["effects"] == 1
    assert store.checkpoints.get(T, "effects:t") is None
    assert store.count_subject(T, subject="alice") == dict.fromkeys(receipt.counts, 0)
    assert store.checkpoints.list(T, session="s2") == []  # no index entry left behind
    assert store.sessions.get(T, "s2") == {}  # bob's session itself stays


def test_a_session_whose_subject_changed_is_erased_with_the_earlier_subject(store):
    store.sessions.put(T, "s1", {"x": "alice data"}, subject="alice")
    store.sessions.put(T, "s1", {"note": "x"}, subject="alice", part="big")
    store.sessions.update(T, "s1", {"y": 1}, subject="bob")  # the identity's user changed mid-session
    assert store.sessions.list(T, subject="alice") == ["s1"] == store.sessions.list(T, subject="bob")
    assert store.count_subject(T, subject="alice")["sessions"] == 1
    assert store.delete_subject(T, subject="alice").counts["sessions"] == 1
    assert store.sessions.get(T, "s1") is None and store.sessions.get(T, "s1", part="big") is None
    assert store.sessions.list(T, subject="bob") == []  # every subject's index entry went with it


def test_a_request_id_reused_for_another_erasure_is_refused(store):
    store.sessions.put(T, "s1", {"x": "alice data"}, subject="alice")
    store.sessions.put(T, "s2", {"x": "bob data"}, subject="bob")
    first = store.delete_subject(T, subject="alice", request_id="req-1")
    assert store.delete_subject(T, subject="alice", request_id="req-1") == \
        DeletionReceipt.from_dict(first.to_dict(), replayed=True)  # a retry replays the receipt
    for other in ({"subject": "bob"}, {"session": "s1"}, {"session": "s1", "subject": "alice"}):
        with pytest.raises(StoreError, match="already used for another erasure"):
            store.delete_subject(T, request_id="req-1", **other)
    assert store.sessions.get(T, "s2") == {"x": "bob data"}


# -- schema and migrations -------------------------------------------------------


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "db"
    LMDBStore.open(str(path), schema_version=SCHEMA_VERSION + 1,
                   migrations={SCHEMA_VERSION: lambda ctx: None}).close()
    with pytest.raises(StoreError) as err:
        open_store(path)
    assert str(err.value) == (f"store schema v{SCHEMA_VERSION + 1} is newer than this ctxproxy "
                              f"(v{SCHEMA_VERSION}); upgrade ctxproxy")
    with pytest.raises(StoreError, match="newer"):
        open_store(path, readonly=True)
    open_store(tmp_path / "fresh").close()  # a failed open left nothing behind in the process


def test_migration_runs_forward(tmp_path, clock):
    path = tmp_path / "db"
    with open_store(path, clock=clock) as s:
        assert s.schema_version == SCHEMA_VERSION
        pend(s, key="k1", call_id="c1")
        pend(s, key="k2", call_id="c2", tenant="other")
    seen = []

    def add_channel(ctx):  # v -> v+1: every effect gains a field
        for key, rec in ctx.items("effects"):
            rec["channel"] = "default"
            ctx.put("effects", key, rec)
        seen.append(len(ctx.items("effects")))

    def noop(ctx):
        seen.append("second step")

    target = SCHEMA_VERSION + 2
    migrations = {SCHEMA_VERSION: add_channel, SCHEMA_VERSION + 1: noop}
    with LMDBStore.open(str(path), clock=clock, schema_version=target, migrations=migrations) as s:
        assert s.schema_version == target
        assert seen == [2, "second step"]
        assert s.effects.get(T, "k1", "c1").state == PENDING
    # already migrated: opening again runs nothing
    with LMDBStore.open(str(path), clock=clock, schema_version=target, migrations=migrations):
        assert seen == [2, "second step"]
    with pytest.raises(StoreError, match="upgrade ctxproxy"):
        open_store(path)


def test_missing_migration_and_readonly_older(tmp_path):
    path = tmp_path / "db"
    open_store(path).close()
    with pytest.raises(StoreError, match=f"no migration from store schema v{SCHEMA_VERSION}"):
        LMDBStore.open(str(path), schema_version=SCHEMA_VERSION + 1, migrations={})
    with pytest.raises(StoreError, match="open it read-write once to migrate"):
        LMDBStore.open(str(path), readonly=True, schema_version=SCHEMA_VERSION + 1)


def test_records_carry_a_version(tmp_path):
    with open_store(tmp_path / "db") as s:
        pend(s)
        put_memory(s, T, "m")
        seen = []
        s._env.read(lambda txn: seen.extend(  # peek at the raw bytes
            orjson.loads(v) for name in ("effects", "memories")
            for _, v in txn.cursor(s._env.dbs[name]).iternext()))
    assert [r["v"] for r in seen] == [1, 2] and all(r["tenant"] == T for r in seen)


# -- map growth ------------------------------------------------------------------


def test_map_grows_instead_of_failing(tmp_path):
    path = tmp_path / "db"
    blobs = {f"p{i}": (f"{i:04d}" * 7500) for i in range(100)}  # 100 x 30 KB = 3 MB
    with open_store(path, map_size=64 << 10, max_map_size=64 << 20) as s:
        start = s.stats().map_size
        for i, (ref, text) in enumerate(blobs.items()):
            if i < 50:
                s.pruned.put(T, ref, {"content": text}, session="s1")
        with s.batch() as b:  # a batch that overflows the map mid-way is replayed
            for i, (ref, text) in enumerate(blobs.items()):
                if i >= 50:
                    b.pruned.put(T, ref, {"content": text}, session="s1")
            b.effects.put_pending(T, key="k", call_id="c", tool="Bash", args_canonical="{}")
        grown = s.stats()
        assert grown.map_size > start and grown.used_bytes > 3_000_000
    with open_store(path, map_size=64 << 10, max_map_size=64 << 20) as s:
        assert {d.id: d.data["content"] for d in s.pruned.list(T, session="s1")} == blobs
        assert s.effects.get(T, "k", "c") is not None


def test_map_full_at_max_is_a_clear_error(tmp_path):
    with open_store(tmp_path / "db", map_size=64 << 10, max_map_size=256 << 10) as s:
        with pytest.raises(StoreError, match="max_map_size"):
            for i in range(100):
                s.pruned.put(T, f"p{i}", {"content": "x" * 20_000})
        s.sessions.put(T, "s", {"still": "writable"})  # smaller writes fit once freed
        assert s.sessions.get(T, "s") == {"still": "writable"}


# -- opening, closing, read-only ---------------------------------------------------


def test_readonly_store(tmp_path):
    path = tmp_path / "db"
    with open_store(path) as s:
        pend(s)
    with open_store(path, readonly=True) as ro:
        assert ro.effects.get(T, "k1", "c1").state == PENDING
        with pytest.raises(StoreError, match="read-only"):
            pend(ro, key="k2")
    with pytest.raises(StoreError, match="does not exist"):
        open_store(tmp_path / "missing", readonly=True)


def test_open_twice_in_one_process_shares_the_environment(tmp_path):
    path = tmp_path / "db"
    a = open_store(path)
    b = open_store(path)
    pend(a)
    assert b.effects.get(T, "k1", "c1") is not None
    with pytest.raises(StoreError, match="already open read-write"):
        open_store(path, readonly=True)
    a.close()
    a.close()  # idempotent
    assert b.effects.get(T, "k1", "c1") is not None  # still open through b
    with pytest.raises(StoreError, match="closed"):
        a.effects.get(T, "k1", "c1")  # a's handle is released; b keeps the env
    b.close()
    with pytest.raises(StoreError, match="closed"):
        b.effects.get(T, "k1", "c1")


def test_open_errors_are_store_errors(tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(StoreError):
        open_store(not_a_dir)
    with pytest.raises(StoreError, match="max_map_size"):
        open_store(tmp_path / "db", map_size=1 << 30, max_map_size=1 << 20)


# -- turns that change nothing write nothing ------------------------------------------


def _last_txn(s) -> int:
    """The id of the environment's last committed write transaction."""
    return s._env.env.info()["last_txnid"]


def test_update_that_changes_nothing_commits_nothing(store, clock):
    store.sessions.update(T, "s1", {"effects": {"threads": {"a": {"n": 3, "s": [[0, "x"]]}}}}, subject="u1")
    before = _last_txn(store)
    # same value (tuples and lists alike, other key order): no transaction at all
    same = store.sessions.update(T, "s1", {"effects": {"threads": {"a": {"s": ((0, "x"),), "n": 3}}}})
    assert same == {"effects": {"threads": {"a": {"n": 3, "s": [[0, "x"]]}}}}
    store.sessions.update(T, "s1", {"effects": {"threads": {"a": {"n": 3, "s": [[0, "x"]]}}}}, subject="u1")
    assert _last_txn(store) == before
    # a real change, or a new subject, does write
    store.sessions.update(T, "s1", {"effects": {"threads": {}}})
    assert _last_txn(store) == before + 1
    store.sessions.update(T, "s1", {"effects": {"threads": {}}}, subject="u2")
    assert _last_txn(store) == before + 2
    assert store.sessions.list(T, subject="u2") == ["s1"]
    # the caller's copy of the state spares the read: equal -> nothing, different -> written
    state = store.sessions.get(T, "s1")
    assert store.sessions.update(T, "s1", {"effects": {"threads": {}}}, current=state) == state
    assert _last_txn(store) == before + 2
    store.sessions.update(T, "s1", {"effects": {"n": 1}}, current=state)
    assert _last_txn(store) == before + 3 and store.sessions.get(T, "s1")["effects"] == {"n": 1}


def test_batch_without_writes_commits_nothing(store):
    store.sessions.update(T, "s1", {"x": 1})
    before = _last_txn(store)
    with store.batch() as b:
        assert b.sessions.get(T, "s1") == {"x": 1}
        b.sessions.update(T, "s1", {"x": 1})  # unchanged
    assert _last_txn(store) == before
    with store.batch() as b:
        b.sessions.update(T, "s1", {"x": 2})
    assert _last_txn(store) == before + 1 and store.sessions.get(T, "s1") == {"x": 2}


def test_snapshot_reads_one_view_and_refuses_writes(store):
    pend(store)
    store.sessions.update(T, "s1", {"x": 1})
    with store.snapshot() as r:
        assert r.effects.get(T, "k1", "c1").state == PENDING
        store.sessions.update(T, "s1", {"x": 2})  # committed meanwhile by someone else
        assert r.sessions.get(T, "s1") == {"x": 1}  # the snapshot does not move
        assert r.sessions.update(T, "s1", {"x": 1}) == {"x": 1}  # unchanged: no write needed
        with pytest.raises(WriteNeeded) as info:
            r.effects.complete(T, "k1", "c1")
        assert not isinstance(info.value, StoreError)  # a signal to redo in a batch, not a failure
    assert store.effects.get(T, "k1", "c1").state == PENDING  # nothing was written
    assert store.sessions.get(T, "s1") == {"x": 2}
    with pytest.raises(StoreError, match="not open"):
        r.sessions.get(T, "s1")


def test_revision_of_a_scope_changes_with_every_write_and_goes_with_the_records(store, clock):
    assert store.effects.revision(T, session="s1") is None
    seen = set()
    pend(store)
    seen.add(store.effects.revision(T, session="s1"))
    assert store.effects.revision(T, task="t1") == store.effects.revision(T, session="s1")
    store.effects.complete(T, "k1", "c1")
    seen.add(store.effects.revision(T, session="s1"))
    pend(store, key="k2", call_id="c2")
    store.effects.mark_unknown(T, "k2", "c2", note="lost")
    seen.add(store.effects.revision(T, session="s1"))
    store.effects.resolve(T, "k2", resolution="completed", call_id="c2", by="ops")
    seen.add(store.effects.revision(T, session="s1"))
    assert len(seen) == 4 and None not in seen
    assert store.effects.revision(T, session="other") is None
    before = store.effects.revision(T, session="s1")
    store.sessions.update(T, "s1", {"x": 1})  # not an effect record
    assert store.effects.revision(T, session="s1") == before
    store.delete_subject(T, session="s1")
    assert store.effects.revision(T, session="s1") is None  # nothing of the session is left behind
    with pytest.raises(StoreError):
        store.effects.revision(T)


# -- the background writer ------------------------------------------------------------------


class _Abort(BaseException):
    """Escapes ``except Exception``, as a KeyboardInterrupt would."""


def test_writer_groups_urgent_writes_and_isolates_a_bad_one(store):
    writer = BackgroundWriter(store, linger=120.0)  # only an urgent write ends the linger (results come in 30 s)
    try:
        slow = writer.submit(lambda b: b.sessions.update("t", "s1", {"a": 1}))
        bad = writer.submit(lambda b: b.sessions.update("t", "", {"a": 2}))  # an empty session id
        fast = writer.submit(lambda b: b.sessions.update("t", "s2", {"b": 3}) and "done", urgent=True)
        assert fast.result(30) == "done" and slow.result(30) is not None
        with pytest.raises(StoreError):
            bad.result(30)
        assert store.sessions.get("t", "s1") == {"a": 1} and store.sessions.get("t", "s2") == {"b": 3}
    finally:
        writer.close()


def test_writer_survives_an_op_that_escapes_and_fails_its_future(store):
    writer = BackgroundWriter(store, linger=0.0)
    try:
        def escape(b):
            raise _Abort()

        doomed = writer.submit(escape, urgent=True)
        with pytest.raises(RuntimeError):
            doomed.result(30)  # the waiting caller hears of it, it does not hang
        later = writer.submit(lambda b: b.sessions.update("t", "s3", {"c": 4}), urgent=True)
        assert later.result(30) is not None and store.sessions.get("t", "s3") == {"c": 4}
    finally:
        writer.close()


def test_a_lone_surrogate_a_client_sent_is_stored_as_the_replacement_character(store):
    """UTF-8 cannot hold "\\ud800" (valid JSON, not valid Unicode): the record is
    written with U+FFFD in its place, keys included, instead of failing the turn."""
    store.sessions.update(T, "s1", {"tool": "Bash\ud800", "calls": {"call_\udfff": ["ls \ud800x"]}})
    assert store.sessions.get(T, "s1") == {"tool": "Bash\ufffd", "calls": {"call_\ufffd": ["ls \ufffdx"]}}


def test_a_tenant_checked_before_is_not_checked_again_and_a_bad_one_is_still_refused():
    assert keys.check_tenant("acme-kept") == "acme-kept"
    assert "acme-kept" in keys._VALID_TENANTS  # a key of it is made several times a write
    for bad in ("", " acme", "ac\x00me", "x" * (keys.MAX_TENANT_BYTES + 1), ["acme"], None, 7):
        with pytest.raises(StoreError):
            keys.check_tenant(bad)
    assert keys.check_tenant("acme-kept") == "acme-kept"


def test_a_short_part_is_encoded_once_and_an_odd_one_is_still_hashed():
    assert keys.part("sess-kept") == b"sess-kept"
    assert "sess-kept" in keys._PARTS  # a turn's writes make keys of one id several times
    assert keys.part("sess-kept", "session") == b"sess-kept"
    for odd in ("#sess", "x" * (keys.MAX_RAW_PART_BYTES + 1), "tab\there"):
        assert keys.part(odd).startswith(b"#") and odd not in keys._PARTS
    for bad in ("", None, 7):
        with pytest.raises(StoreError):
            keys.part(bad)
    for i in range(keys.PARTS_MAX + 5):
        assert keys.part(f"p{i}") == f"p{i}".encode()
    assert len(keys._PARTS) <= keys.PARTS_MAX  # bounded
    assert keys.tenant_prefix("acme-kept") == b"acme-kept\x00" == keys.tenant_prefix("acme-kept")
