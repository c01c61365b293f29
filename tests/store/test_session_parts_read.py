"""A session and its parts read in one transaction (``get_parts``) are what
reading each alone gives, on a real LMDB environment: parts that exist, one
that does not, a session id the keys hash, another session's parts never."""
from __future__ import annotations

from ctxproxy.store import open_store


def test_get_parts_reads_what_get_reads(tmp_path):
    store = open_store(str(tmp_path / "data"))
    try:
        long_id = "s" * 300  # longer than a key part: hashed in the key
        for session in ("s1", long_id):
            store.sessions.put("acme", session, {"effects": {"n": 1}}, subject="u1")
            store.sessions.put("acme", session, {"rev": 2, "doc": {"goal": session[:8]}}, part="task_state")
            store.sessions.put("acme", session, {"d": {"x": 1}}, part="prune")
        store.sessions.put("acme", "s1x", {"rev": 9}, part="observed_rules")  # a neighbour's part
        for session in ("s1", long_id, "absent"):
            parts = (None, "task_state", "prune", "observed_rules")
            got = store.sessions.get_parts("acme", session, parts)
            assert got == {p: store.sessions.get("acme", session, part=p) for p in parts}
        assert store.sessions.get_parts("acme", "s1", ("observed_rules",)) == {"observed_rules": None}
        assert store.sessions.get_parts("other", "s1", (None, "prune")) == {None: None, "prune": None}
    finally:
        store.close()
