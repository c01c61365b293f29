"""Two floor options, off by default: a memory the side remarks alone name by many words far above
chance (``remark_words``), and a word most of the project's memories hold counting as none of a
memory's words (``broad_share``) — over a development half's memories in a real LMDB store and
SQLite index."""
from __future__ import annotations

import pytest
from memhelp import put_memory

from ctxproxy.config import ConfigError
from ctxproxy.store.services.recall import rank
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer


def _fleet_log() -> str:
    """A story told before an ask that names little of its own ("why …?"), its log pasted after it."""
    from ctxproxy.proxy.eval import turns_fresh5

    return next(p for key, shape, p, _ in turns_fresh5.TURNS if key == "heartbeat" and shape == "claude-log")


# "holds" and "patron" are in most of the library's memories: they name none of them.
HOLDS = "place_hold should reject when patron has too many holds, add check"


def _half(module) -> list[str]:
    return [st for st, _ in module.FACTS.values()] + list(module.DISTRACTORS)


def _recall(rs, module, text: str, **options) -> list[str]:
    store, services = rs
    for s in _half(module):
        put_memory(store, "acme", s, kind="fact", user="dev")
    recaller = services.recaller(RankConfig(**options))
    return [s.cand.statement for s in recaller.recall(Viewer("acme", user="dev"), text).items]


def test_the_memory_a_told_story_names_passes_with_remark_words(rs):
    from ctxproxy.proxy.eval import turns_fresh5

    heartbeat = turns_fresh5.FACTS["heartbeat"][0]
    assert heartbeat not in _recall(rs, turns_fresh5, _fleet_log())  # off: none of its words is of the ask
    store, services = rs
    on = services.recaller(RankConfig(remark_words=3)).recall(Viewer("acme", user="dev"), _fleet_log()).items
    assert heartbeat in [s.cand.statement for s in on]


def test_remark_words_needs_the_chance_too(rs):
    from ctxproxy.proxy.eval import turns_fresh5

    strict = _recall(rs, turns_fresh5, _fleet_log(), remark_words=3, remark_chance=50.0)
    assert turns_fresh5.FACTS["heartbeat"][0] not in strict


def test_a_word_most_memories_hold_singles_none_out(rs):
    from ctxproxy.proxy.eval import turns_fresh15

    barcode = next(s for s in _half(turns_fresh15) if s.startswith("Patron card barcodes"))
    assert barcode in _recall(rs, turns_fresh15, HOLDS)  # off: "patron" is one of its words
    store, services = rs
    on = services.recaller(RankConfig(broad_share=0.25)).recall(Viewer("acme", user="dev"), HOLDS).items
    assert barcode not in [s.cand.statement for s in on]


def test_broad_words_are_counted_against_the_visible_memories():
    cfg = RankConfig(broad_share=0.25)
    df = {"patron": 12, "hold": 9, "barcod": 2}
    assert rank.broad_words(df, df, 38, cfg) == {"patron"}  # 9 of 38 is no more than a quarter
    assert rank.broad_words(df, df, 4, cfg) == {"patron", "hold"}  # a few memories: against twenty
    assert rank.broad_words(df, df, 38, RankConfig()) == set()


def test_the_options_are_validated():
    for bad in (RankConfig(remark_words=-1), RankConfig(broad_share=1.5), RankConfig(remark_chance=float("nan"))):
        with pytest.raises(ConfigError):
            bad.validate("filters.recall.rank")
    RankConfig(remark_words=3, broad_share=0.25).validate("filters.recall.rank")
