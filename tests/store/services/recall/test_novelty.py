"""``novelty`` (off by default): beside a memory the message names, one whose words of the message a
memory further above chance holds all of adds nothing and is not offered; two holding the same words
equally far above chance both stay — over development halves' memories in a real LMDB store and
SQLite index."""
from __future__ import annotations

import pytest
from memhelp import put_memory

from ctxproxy.config import ConfigError, load_config
from ctxproxy.filters import filter_configs
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer


def _ask(rs, module):
    store, services = rs
    for statement in [st for st, _ in module.FACTS.values()] + list(module.DISTRACTORS):
        put_memory(store, "acme", statement, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> list:
        return services.recaller(RankConfig(**rank)).recall(dev, text, k=8).items

    return ask


def test_a_memory_holding_fewer_of_the_same_words_is_not_offered_beside_the_more_distinct_one(rs):
    from ctxproxy.proxy.eval import turns_fresh10

    ask = _ask(rs, turns_fresh10)
    cap = turns_fresh10.FACTS["resale_price_cap"][1]
    asked = "where is listing price max checked"
    before = ask(asked)
    assert any(cap in s.cand.statement for s in before) and len(before) == 2
    best = max(before, key=lambda s: s.chance)
    other = next(s for s in before if s is not best)
    assert cap in best.cand.statement and other.words < best.words  # "list" only, beside "list" and "price"
    after = ask(asked, novelty=True)
    assert [s.cand.statement for s in after] == [best.cand.statement]


def test_memories_holding_the_same_words_equally_far_above_chance_both_stay(rs):
    from ctxproxy.proxy.eval import turns_fresh7

    ask = _ask(rs, turns_fresh7)
    asked = "who owns the lti integration"
    before = ask(asked)
    assert len(before) == 2 and before[0].words == before[1].words and before[0].chance == before[1].chance
    assert {s.cand.statement for s in ask(asked, novelty=True)} == {s.cand.statement for s in before}


def test_the_option_is_off_by_default_and_typed_at_load(tmp_path):
    assert RankConfig().novelty is False
    path = tmp_path / "ctxproxy.toml"
    path.write_text("[filters.recall.rank]\nnovelty = true\n")
    assert filter_configs(load_config(path))["recall"].rank.novelty is True
    path.write_text('[filters.recall.rank]\nnovelty = "yes"\n')
    with pytest.raises(ConfigError, match="filters.recall.rank.novelty: expected true or false"):
        filter_configs(load_config(path))
