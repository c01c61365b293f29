"""A memory sharing one plain word with a message must share its subject — what it names first —
not a word of what it says of another subject (real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import UNRELATED, put_memory

from ctxproxy.store.services.recall import rank
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

DLQ = "Failed RabbitMQ messages are dead-lettered to exchange shop.dlx and kept for 72 hours."
IMPORT = "Soil lab results from Ward Labs arrive as CSV and are imported nightly into the samples table."
PROMOTER = "The waitlist promoter processes at most 250 promotions per tick, and ticks every 20 seconds."
OTHERS = UNRELATED


def _ask(rs):
    store, services = rs
    for s in (DLQ, IMPORT, PROMOTER, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **cfg) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**cfg)).recall(dev, text).items}

    return ask


def test_the_leading_share_of_a_statement_is_its_subject():
    lead = rank.leads(PROMOTER, 0.5)
    assert {"waitlist", "promoter", "process"} <= lead
    assert "tick" not in lead and "second" not in lead
    # its first two content words at least, however small the share
    assert rank.leads("Staging listens on port 8443.", 0.1) == rank.leads("Staging listens.", 1.0)


def test_one_plain_word_in_what_a_memory_says_of_another_subject_recalls_nothing(rs):
    ask = _ask(rs)
    # "table": the last word of the import memory, what it says of the lab results
    assert ask("autovacuum pegged on the big table again, why") == set()
    assert ask("autovacuum pegged on the big table again, why", lead_share=0.0) == {IMPORT}
    # the word the memory is about recalls it
    assert ask("is the promoter throttled?") == {PROMOTER}
    assert ask("how often does it tick?", lead_share=0.0) == {PROMOTER}
    assert ask("how often does it tick?") == set()


def test_how_the_work_stands_names_no_subject(rs):
    store, services = rs
    for s in ("Failed messages are dead-lettered to exchange shop.dlx and kept for 72 hours.", *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")
    # "failing" says how the work stands, not what it is about: the dead-letter memory is not what it asks
    assert services.recaller(RankConfig()).recall(dev, "lint is failing").items == []
    assert rank.STATE <= rank.GENERIC and not rank.specific_term("fail")
    # ...and it still counts among the words a request asks with: a long request needs two specific words
    assert rank.terms_needed(dict.fromkeys(["lint", "fail", "ci", "branch", "merg"], 1.0), RankConfig()) == 2
