"""store.lookups, the reads the admin API and the CLI share, on a real LMDB store:
ids found through their tenant pointers, never across tenants, and an effect
key's answer."""
from __future__ import annotations

from ctxproxy.store import REF_POINTERS, TURN_POINTERS
from ctxproxy.store.lookups import (REF_PREFIX, describe_pruned, find_manifest, find_pruned, key_answer,
                                    list_manifests)


def test_a_turn_id_is_found_through_its_pointer_and_only_in_its_tenant(store):
    store.manifests.put("acme", "t-1", {"turn_id": "t-1"}, session="s")
    store.manifests.put(TURN_POINTERS, "t-1", {"tenant": "acme"}, session="s")
    store.manifests.put("acme", "t-2", {"turn_id": "t-2"}, session="s")
    assert find_manifest(store, "t-1").data["turn_id"] == "t-1"
    assert find_manifest(store, "t-1", "other") is None  # a tenant given: that tenant's only
    assert find_manifest(store, "t-2") is None  # no pointer: not found without its tenant
    assert find_manifest(store, "t-2", "acme").data["turn_id"] == "t-2"
    assert [m["turn_id"] for m in list_manifests(store, "acme", "s")] == ["t-1", "t-2"]
    assert [m["turn_id"] for m in list_manifests(store, "acme", "s", limit=1)] == ["t-2"]
    assert list_manifests(store, "other", "s") == []


def test_a_pointer_naming_an_index_tenant_is_ignored(store):
    store.manifests.put(TURN_POINTERS, "t-9", {"tenant": REF_POINTERS}, session="s")
    store.manifests.put(REF_POINTERS, "t-9", {"turn_id": "t-9"}, session="s")
    assert find_manifest(store, "t-9") is None


def test_a_pruned_reference_resolves_by_pointer_then_fallback(store):
    store.pruned.put("team-a", "p1", {"content": "original", "tool": "Bash", "call_id": "c1"}, session="s")
    store.pruned.put(REF_POINTERS, "p1", {"tenant": "team-a"}, session="s")
    store.pruned.put("default", "p2", {"content": "old"}, session="s")
    doc = find_pruned(store, REF_PREFIX + "p1", None, fallback="default")
    assert describe_pruned(doc) | {"created_at": None} == {
        "id": "p1", "ref": REF_PREFIX + "p1", "tenant": "team-a", "session": "s", "created_at": None,
        "call_id": "c1", "tool": "Bash", "tokens": None, "chars": None, "sha256": None, "is_error": None,
        "api": None, "turn_id": None, "content": "original"}
    assert "content" not in describe_pruned(doc, content=False)
    assert find_pruned(store, "p1", "team-b", fallback="default") is None
    assert find_pruned(store, "p2", None, fallback="default").data["content"] == "old"


def test_an_effect_key_answers_what_was_done(store):
    assert key_answer("acme", "k1", []) == {"tenant": "acme", "key": "k1", "status": "none", "done": False,
                                            "records": []}
    store.effects.put_pending("acme", key="k1", call_id="c1", tool="Bash", args_canonical="{}")
    pending = key_answer("acme", "k1", store.effects.by_key("acme", "k1"))
    assert (pending["status"], pending["done"], len(pending["records"])) == ("pending", False, 1)
    store.effects.complete("acme", "k1", "c1")
    done = key_answer("acme", "k1", store.effects.by_key("acme", "k1"))
    assert (done["status"], done["done"]) == ("completed", True)
