"""A message asking for general knowledge — what a concept is, how two differ — recalls no memory:
the answer is the same in every project. One speaking of the project, or asking why something
happened, recalls as any (real LMDB store, real SQLite index)."""
from __future__ import annotations

import pytest
from memhelp import UNRELATED, put_memory

from ctxproxy.store.services.recall.general_ask import general
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

AGGREGATE = ("A Timescale continuous aggregate `readings_hourly` precomputes hourly energy totals per site; "
             "it refreshes every 15 minutes.")
OTHERS = UNRELATED[:7]


@pytest.mark.parametrize("text", [
    "Explain what a Timescale continuous aggregate is vs a normal materialized view, in two paragraphs.",
    "Can you explain the difference between a gVCF and a regular VCF in a couple of sentences?",
    "quick one: whats the difference between CBR and VBR mp3?",
    "Explain what MLLP framing is, with the start and end bytes.",
    # a library's warning pasted: its words are the library's
    "what does this Django warning mean?\n\nRemovedInDjango51Warning: The USE_L10N setting is deprecated.",
    "What is this warning about and is it dangerous?\n\nInsecureRequestWarning: Unverified HTTPS request",
])
def test_what_a_concept_is_or_how_two_differ_is_general(text):
    assert general(text)


@pytest.mark.parametrize("text", [
    "Explain how we round feed-in credits so I can answer the customer.",  # the project's own way
    "pls explain why journey 88213 got charged twice",  # why something happened here
    "what's the difference between our staging and production pools?",  # the project's
    "How often does the continuous aggregate refresh?",
    # a thing named with a definite article, or asked after as what it does, is the project's setting
    "Tell me what the staging port is.",
    "Describe what the deploy freeze window is before registration opens.",
    "Explain what the `CHUB_FF_DROPADD_V2` flag does.",
    "Can you explain what this query does? SELECT zone, COUNT(*) FROM pick_tasks GROUP BY zone",
    "what does this warning mean for our rollout?",  # the project's
    "what does the turnaround warning mean for urgent samples?",  # the project's own warning
])
def test_an_ask_about_the_project_is_not_general(text):
    assert not general(text)


def test_a_general_ask_recalls_no_memory_holding_its_words(rs):
    store, services = rs
    for s in (AGGREGATE, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    asked = "Explain what a Timescale continuous aggregate is vs a normal materialized view, in two paragraphs."
    assert ask(asked) == set()
    assert ask(asked, general_ask=False) == {AGGREGATE}
    assert ask("how often does the readings_hourly continuous aggregate refresh?") == {AGGREGATE}
