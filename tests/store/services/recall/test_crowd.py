"""``crowd`` (off by default): when that many memories or more hold the very same words of the message
equally far above chance, the words name a topic many memories are about, and none of them is offered —
over development halves' memories in a real LMDB store and SQLite index."""
from __future__ import annotations

import pytest
from memhelp import half_asker

from ctxproxy.config import ConfigError, load_config
from ctxproxy.filters import filter_configs
from ctxproxy.store.services.recall.rank import RankConfig


def test_memories_holding_only_the_same_topic_word_are_not_offered(rs):
    from ctxproxy.proxy.eval import turns_fresh15

    ask = half_asker(rs, turns_fresh15)
    asked = "mypy complaining in kiosk sync types, fix"
    before = ask(asked)
    assert len(before) == 3 and len({s.words for s in before}) == 1 and len({s.chance for s in before}) == 1
    assert all("kiosk" in s.cand.statement.lower() for s in before)
    assert ask(asked, crowd=3) == [] and ask(asked, crowd=2) == []
    assert len(ask(asked, crowd=4)) == 3  # fewer than that many: all stay


def test_two_holding_the_same_words_go_at_two_and_the_one_naming_more_stays(rs):
    from ctxproxy.proxy.eval import turns_fresh7

    ask = half_asker(rs, turns_fresh7)
    owner = "who owns the lti integration"
    before = ask(owner)
    assert len(before) == 2 and before[0].words == before[1].words
    assert ask(owner, crowd=2) == [] and len(ask(owner, crowd=3)) == 2  # the owner's memory is lost with its twin


def test_memories_holding_different_words_all_stay(rs):
    from ctxproxy.proxy.eval import turns_fresh10

    ask = half_asker(rs, turns_fresh10)
    asked = "where is listing price max checked"
    before = ask(asked)
    assert len(before) == 2 and before[0].words != before[1].words
    assert [s.cand.statement for s in ask(asked, crowd=2)] == [s.cand.statement for s in before]


def test_the_option_is_off_by_default_and_checked_at_load(tmp_path):
    assert RankConfig().crowd == 0
    path = tmp_path / "ctxproxy.toml"
    path.write_text("[filters.recall.rank]\ncrowd = 3\n")
    assert filter_configs(load_config(path))["recall"].rank.crowd == 3
    path.write_text("[filters.recall.rank]\ncrowd = -1\n")
    with pytest.raises(ConfigError, match="filters.recall.rank.crowd: out of range"):
        filter_configs(load_config(path))
