"""The session index on disk: turns added together land together, one bad turn
keeps none of the others out, and a replayed turn replaces its rows."""
from __future__ import annotations

import pytest

from ctxproxy.store.session_index import SessionIndex, TurnTexts
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
