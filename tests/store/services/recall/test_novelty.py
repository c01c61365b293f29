"""``novelty`` (off by default): beside a memory the message names, one whose words of the message a
memory further above chance holds all of adds nothing and is not offered; two holding the same words
equally far above chance both stay — over development halves' memories in a real LMDB store and
SQLite index."""
from __future__ import annotations

from memhelp import assert_rank_switch_typed, half_asker


def test_a_memory_holding_fewer_of_the_same_words_is_not_offered_beside_the_more_distinct_one(rs):
    from ctxproxy.proxy.eval import turns_fresh10

    ask = half_asker(rs, turns_fresh10)
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

    ask = half_asker(rs, turns_fresh7)
    asked = "who owns the lti integration"
    before = ask(asked)
    assert len(before) == 2 and before[0].words == before[1].words and before[0].chance == before[1].chance
    assert {s.cand.statement for s in ask(asked, novelty=True)} == {s.cand.statement for s in before}


def test_the_option_is_off_by_default_and_typed_at_load(tmp_path):
    assert_rank_switch_typed(tmp_path, "novelty")
