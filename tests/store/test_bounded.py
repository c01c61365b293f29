"""ByteLRU: an in-process cache bounded by the bytes of its entries."""
from __future__ import annotations

import threading

from ctxproxy.store.bounded import ByteLRU, caches, entry_bytes, size_of


def test_the_least_recent_entries_go_once_the_bytes_are_over():
    lru = ByteLRU(1000, "t")
    for i in range(5):
        lru.put(i, "v", nbytes=300)
    assert sorted(lru.keys()) == [2, 3, 4] and lru.bytes == 900
    assert lru.get(2) == "v"  # now the most recent
    lru.put(5, "v", nbytes=300)
    assert sorted(lru.keys()) == [2, 4, 5]


def test_entries_are_sized_by_what_they_hold():
    lru = ByteLRU(64 << 10, "t")
    lru.put("small", "x")
    lru.put("big", "x" * 20000)
    assert lru.bytes >= 20000 + 2 * 112
    lru.put("big", "y")  # replaced: its old size is given back
    assert lru.bytes < 2000
    lru.put("huge", "z" * (100 << 10))  # larger than the whole bound alone: not kept
    assert "huge" not in lru and lru.bytes < 2000


def test_size_of_counts_nested_containers_and_objects():
    class Slotted:
        __slots__ = ("a",)

        def __init__(self, a):
            self.a = a

    assert size_of({"k": ["x" * 1000, ("y" * 1000,)]}) > 2000
    assert size_of(Slotted("x" * 5000)) > 5000
    assert entry_bytes(("t", "s"), 1) > 112


def test_a_fixed_size_cache_holds_its_bytes_worth_of_entries():
    lru = ByteLRU(10 * 200, "t", fixed=200)
    for i in range(100):
        lru.put(i, i)
    assert len(lru) == 10 and lru.bytes == 2000


def test_pop_and_clear_give_the_bytes_back():
    lru = ByteLRU(10_000, "t")
    lru.put("a", "x" * 100)
    assert lru.pop("a") == "x" * 100 and lru.bytes == 0 and lru.pop("a", 7) == 7
    lru.put("b", 1)
    lru.clear()
    assert len(lru) == 0 and lru.bytes == 0


def test_threads_keep_the_total_exact():
    lru = ByteLRU(50 * 100, "t", fixed=100)

    def work(base):
        for i in range(2000):
            lru.put((base, i % 80), i)
            lru.get((base, (i * 7) % 80))

    threads = [threading.Thread(target=work, args=(b,)) for b in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert lru.bytes == 100 * len(lru) <= 5000


def test_a_count_from_a_setting_caps_it_too():
    lru = ByteLRU(1 << 20, "t", max_entries=3)
    for i in range(10):
        lru.put(i, i)
    assert sorted(lru.keys()) == [7, 8, 9]


def test_every_cache_of_the_process_is_listed_with_its_bytes_and_bound():
    lru = ByteLRU(4096, "listed (test)")
    lru.put("k", "v" * 100)
    (mine,) = [c for c in caches() if c[0] == "listed (test)"]
    assert mine == ("listed (test)", lru.bytes, 4096, 1)
    del lru, mine
    assert not [c for c in caches() if c[0] == "listed (test)"]  # held weakly: gone with the cache


def test_the_per_word_memos_keep_only_short_ascii_words():
    """The word memos are bounded by their entries' size: a long word (a hash,
    a blob) or one of other letters (a CJK run gives a bigram per character)
    is analysed each time, not kept."""
    from ctxproxy.store import memory_terms as mt

    mt.cached_token_terms.cache_clear()
    mt._stem_memo.cache_clear()
    long_word = "x" + "abcdefgh" * 8
    text = f"{long_word} 東京都の設定ファイルを読み込む naïvely rewritten parse_body"
    assert mt.terms(text) == mt.terms(text, frozenset({"\x00none"}))  # the same terms either way
    mt.token_terms(long_word)
    kept = mt.cached_token_terms.cache_info()
    assert kept.currsize == 2 and kept.maxsize == mt.TOKEN_TERMS_ENTRIES  # "rewritten", "parse_body"
    assert mt._stem_memo.cache_info().maxsize == mt.STEM_ENTRIES
    assert mt.stem("naïvely") == mt._stem("naïvely") and mt._stem_memo.cache_info().currsize <= 3
