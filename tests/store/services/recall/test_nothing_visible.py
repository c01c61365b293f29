"""A recall with nothing it could find — no memory the viewer may see, no other
session to search — is decided from the index's kept counts, before the query
is parsed; what the viewer may see is still found, whoever else has memories."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store.services.recall import query
from ctxproxy.store.sqlite_index import Viewer

PORT = "Staging listens on port 8443, not 443."


def test_nothing_visible_is_decided_without_parsing_the_query(rs, monkeypatch):
    store, services = rs
    put_memory(store, "acme", PORT, kind="fact", user="bob")  # bob's own: not dev's
    put_memory(store, "globex", PORT, kind="fact", user="dev")  # another tenant's
    parsed = []
    real = query.parse
    monkeypatch.setattr(query, "parse", lambda *a, **kw: parsed.append(a) or real(*a, **kw))
    dev = Viewer("acme", user="dev")
    got = services.recaller().recall(dev, "Which port does staging listen on?")
    assert (got.items, got.candidates) == ([], 0) and parsed == []
    # a memory dev may see: found, the query parsed as before
    put_memory(store, "acme", PORT, kind="fact", user="dev")
    got = services.recaller().recall(dev, "Which port does staging listen on?")
    assert [s.cand.statement for s in got.items] == [PORT] and len(parsed) == 1
    # bob sees his own
    got = services.recaller().recall(Viewer("acme", user="bob"), "Which port does staging listen on?")
    assert [s.cand.statement for s in got.items] == [PORT]


def test_other_sessions_to_search_are_searched_without_memories(rs, monkeypatch):
    store, services = rs
    parsed = []
    real = query.parse
    monkeypatch.setattr(query, "parse", lambda *a, **kw: parsed.append(a) or real(*a, **kw))
    services.recaller().recall(Viewer("acme", user="dev", sessions=("s1", "s2")), "Which port?",
                               sessions=("s2",))
    assert len(parsed) == 1  # a session of the tree may hold it: the query is made
