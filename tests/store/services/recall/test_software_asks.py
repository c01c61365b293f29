"""``software_asks`` (off by default): "test" is a word of any request about software, like "bug" or
"fix" — a failing or flaky test names no memory about load or soak tests (real LMDB store, real SQLite
index). The wider mechanical edits and the unit test said whole are in test_edit_ask and test_build_ask."""
from __future__ import annotations

from memhelp import UNRELATED, put_memory

from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

LOAD = "Load tests run against the perf-1 environment with 2000 simulated clients per runner."
SOAK = "Soak tests must pass at three times the expected peak before a launch."


def _ask(rs):
    store, services = rs
    for s in (LOAD, SOAK, *UNRELATED):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    return ask


def test_a_failing_test_names_no_memory_about_tests(rs):
    ask = _ask(rs)
    flaky = "why is this test flaky?"
    assert ask(flaky) == {LOAD, SOAK}  # off: "test" is the one word they share, and it passes
    assert ask(flaky, software_asks=True) == set()
    assert ask("tests are failing after my change, can you fix it?", software_asks=True) == set()


def test_the_kind_of_test_still_names_it(rs):
    ask = _ask(rs)
    assert ask("which environment do the load tests run against?", software_asks=True) == {LOAD}
