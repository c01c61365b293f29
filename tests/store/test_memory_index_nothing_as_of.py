""""Nothing visible" kept for a viewer (``MemoryIndex.nothing_visible``) holds only from the time
it was found at onwards: an expiring memory leaves the view as time goes on, so a viewer that sees
nothing now may have seen that memory at an earlier time, and a recall "as the store stood then"
(the admin API's ``as_of``) must find it. Real LMDB store and SQLite index."""
from __future__ import annotations

import time

from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.memory_index import MemoryIndex, Viewer
from ctxproxy.store.services.recall.queries import recall_items
from ctxproxy.store.services.recall.services import RecallServices

FACT = "The CTX_TIMEOUT default is 30 seconds unless the config file sets timeout."


def test_nothing_visible_now_does_not_hide_what_an_earlier_time_saw(tmp_path):
    store = open_store(tmp_path / "store")
    try:
        index = MemoryIndex.open(tmp_path, store)
        now = time.time()
        put_memory(store, "acme", FACT, kind="fact", expires_at=now - 3600)  # expired an hour ago
        viewer = Viewer("acme")
        assert index.nothing_visible(viewer, now)  # found (and kept) now
        assert not index.nothing_visible(viewer, now - 7200)  # two hours ago it was live
        assert index.nothing_visible(viewer, now + 60)  # later: still nothing, kept
        assert index.nothing_visible(viewer, now)
    finally:
        store.close()


def test_a_recall_as_of_before_a_memory_expired_finds_it_after_a_turn_found_nothing(tmp_path):
    store = open_store(tmp_path / "store")
    try:
        rs = RecallServices(tmp_path, store)
        now = time.time()
        put_memory(store, "acme", FACT, kind="fact", user="ana", expires_at=now - 3600)
        params = {"query": "What is the CTX_TIMEOUT default?", "user": "ana"}
        assert recall_items(rs, "acme", params)["items"] == []  # now: expired, nothing visible
        then = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 7200))
        got = recall_items(rs, "acme", {**params, "as_of": then})["items"]
        assert [i["statement"] for i in got] == [FACT]
    finally:
        store.close()
