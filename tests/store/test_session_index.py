"""The session index on disk: turns added together land together, one bad turn
keeps none of the others out, and a replayed turn replaces its rows."""
from __future__ import annotations

import pytest

from ctxproxy.store.session_index import SessionIndex, TurnTexts, substring_match
from ctxproxy.store.sqlite_index import Viewer

VIEWER = Viewer("acme", "u0", sessions=("s1",))


def found(index: SessionIndex, word: str) -> list[str]:
    rows, _ = index.search(VIEWER, [word], sessions=("s1",))
    return sorted(c.memory_id for c in rows)


def test_turns_added_together_are_each_searchable(tmp_path):
    index = SessionIndex(tmp_path / "sessions.db")
    n = index.add_turns([TurnTexts("acme", "s1", f"t{i}", (("user", f"deploy zebra{i}"), ("assistant", "quokka landed")),
                                   "u0", observed_at=float(i)) for i in range(3)])
    assert n == 6
    assert found(index, "zebra1") == ["turn:t1:user"]
    assert found(index, "quokka") == ["turn:t0:assistant", "turn:t1:assistant", "turn:t2:assistant"]
    index.close()


def test_one_bad_turn_keeps_the_others_in(tmp_path):
    index = SessionIndex(tmp_path / "sessions.db")
    bad = TurnTexts("acme", "s1", "t-bad", (("user", None),), "u0")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        index.add_turns([bad])
    with pytest.raises(TypeError):
        index.add_turns([TurnTexts("acme", "s1", "t1", (("user", "walrus one"),), "u0"), bad,
                         TurnTexts("acme", "s1", "t2", (("user", "walrus two"),), "u0")])
    assert found(index, "walrus") == ["turn:t1:user", "turn:t2:user"]
    index.close()


def test_a_replayed_turn_replaces_its_rows(tmp_path):
    index = SessionIndex(tmp_path / "sessions.db")
    index.add_turn("acme", "s1", "t1", [("user", "otter first")], user="u0")
    index.add_turns([TurnTexts("acme", "s1", "t1", (("user", "otter second"),), "u0")])
    assert found(index, "second") == ["turn:t1:user"]
    assert found(index, "first") == []
    index.close()


def substring_found(index: SessionIndex, viewer: Viewer, sub: str) -> list[str]:
    rows, _ = index.search(viewer, [], [sub], sessions=viewer.sessions)
    return sorted(f"{c.session}/{c.memory_id}" for c in rows)


def test_a_substring_is_matched_within_the_viewers_tenant(tmp_path):
    index = SessionIndex(tmp_path / "sessions.db")
    for tenant in ("acme", "globex"):
        index.add_turn(tenant, "s1", "t1", [("user", "it failed with ERR_CONN_RESET twice")], user="u0")
    assert substring_found(index, VIEWER, "CONN_RES") == ["s1/turn:t1:user"]
    assert substring_found(index, Viewer("globex", "u0", sessions=("s1",)), "CONN_RES") == ["s1/turn:t1:user"]
    assert substring_found(index, Viewer("initech", "u0", sessions=("s1",)), "CONN_RES") == []
    # the trigram index itself answers with the tenant's rows only
    con = index.file.db()
    hits = con.execute("SELECT t.tenant FROM turns_tri f JOIN turns t ON t.rowid = f.rowid WHERE turns_tri MATCH ?",
                       (substring_match("acme", ["CONN_RES"]),)).fetchall()
    assert hits == [("acme",)]
    # the tenant's tokens are not text: searched for, they match nothing
    acl, tacl = con.execute("SELECT acl, tacl FROM turns WHERE tenant = 'acme'").fetchone()
    assert substring_found(index, VIEWER, acl[3:12]) == [] and substring_found(index, VIEWER, tacl) == []
    index.close()


OLD_SUBSTRING_INDEX = """
CREATE VIRTUAL TABLE turns_tri USING fts5(text, content='turns', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER turns_ai AFTER INSERT ON turns BEGIN
    INSERT INTO turns_terms(rowid, terms, acl) VALUES (new.rowid, new.terms, new.acl);
    INSERT INTO turns_tri(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
    INSERT INTO turns_terms(turns_terms, rowid, terms, acl) VALUES ('delete', old.rowid, old.terms, old.acl);
    INSERT INTO turns_tri(turns_tri, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
"""


def test_a_substring_index_made_before_it_held_the_tenant_is_rebuilt_at_open(tmp_path):
    import sqlite3

    path = tmp_path / "sessions.db"
    index = SessionIndex(path)
    index.add_turn("acme", "s1", "t1", [("user", "stack trace in KafkaConsumerLoop")], user="u0")
    index.close()
    with sqlite3.connect(path) as con:  # the layout of an earlier release, holding that turn
        con.executescript("DROP TRIGGER turns_ai; DROP TRIGGER turns_ad; DROP TABLE turns_tri;" + OLD_SUBSTRING_INDEX
                          + "INSERT INTO turns_tri(turns_tri) VALUES ('rebuild');")
        assert con.execute("SELECT count(*) FROM turns_tri WHERE turns_tri MATCH '\"ConsumerLoop\"'").fetchone() == (1,)
    index = SessionIndex(path)  # the old index goes, and is rebuilt from the turns
    index.add_turn("acme", "s1", "t2", [("user", "and again in KafkaConsumerLoop")], user="u0")
    assert substring_found(index, VIEWER, "ConsumerLoop") == ["s1/turn:t1:user", "s1/turn:t2:user"]
    index.forget("acme", {"session": "s1"})
    assert substring_found(index, VIEWER, "ConsumerLoop") == []
    index.close()
