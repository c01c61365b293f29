"""A word of a message finds a memory writing it in another form — derived (approval: approve),
clipped (prod: production, application: app) — through the real index's counts, and only
among what the caller may see (real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

BACKUP = "The production database is backed up every night to the vault-7 bucket."
OTHERS = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
          "Quarterly planning happens in the first week of each quarter.",
          "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
          "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.",
          "Standup is at 9:30 in the small meeting room.", "Invoices are generated on the first of the month.")


def ask(services, viewer, text, **rank):
    return [s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(viewer, text).items]


def test_a_clipped_word_finds_the_memory_writing_it_in_full(rs):
    store, services = rs
    for s in (BACKUP, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")
    assert ask(services, dev, "how often is the prod db backed up?") == [BACKUP]
    assert ask(services, dev, "how often is the prod db backed up?", family_weight=0.0) == []
    # the index completes a word from the terms of what the caller may see
    docs, df, completed = services.memories.word_forms(dev, ["approv"], ["prod"])
    assert (docs, df, completed) == (10, {"approv": 0, "production": 1}, {"prod": ["production"]})


def test_a_word_is_completed_only_from_what_the_caller_may_see(rs):
    store, services = rs
    put_memory(store, "acme", "The productivity report of the sales team is due on Mondays.", kind="fact",
               user="alice")
    put_memory(store, "globex", "Productised onboarding ships in March.", kind="fact", user="dev")
    put_memory(store, "acme", "The design team keeps the icon set in Figma.", kind="fact", user="dev")
    dev = Viewer("acme", user="dev")
    forms = services.memories.word_forms
    assert forms(dev, [], ["prod"]) == (1, {}, {})  # alice's and another tenant's words: not dev's
    assert forms(Viewer("acme", user="alice"), [], ["prod"]) == (1, {"productiviti": 1}, {"prod": ["productiviti"]})
    assert forms(Viewer("", user="dev"), ["prod"], ["prod"]) == (0, {"prod": 0}, {})  # unknown identity: nothing
