"""A message that is more than one question (a request, a question with the task around it)
recalls what its words single out: among the memories that pass the floor, one whose words of the
message another holds too is not offered, and only those near the most distinct one are. A
one-sentence question keeps all that passed (real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import UNRELATED, put_memory

from ctxproxy.store.services.recall import query
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

TESTS = ("Tests that need a fasting patient are booked before 10:00.",
         "Tests and local debugging use only the synthetic patients in fixtures/.",
         "Each test of the lab panel maps to one LOINC code in mappings/loinc.csv.")
TARGET = "The iOS app's deployment target is iOS 16.0; listeners on older devices are sent to the web player."
SWIFTUI = "The Android app is written in Kotlin with Jetpack Compose; the iOS app uses SwiftUI."
OTHERS = UNRELATED


def _ask(rs):
    store, services = rs
    for s in (*TESTS, TARGET, SWIFTUI, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    return ask


def test_one_question_is_one_sentence_that_asks():
    assert query.one_question("Which port does staging use?")
    assert query.one_question("Thanks! Which port does staging use?")  # "Thanks!" says nothing
    assert not query.one_question("why is this test suite so slow? suggest what to fix first")
    assert not query.one_question("fix the failing DST test, don't just change the assertion")  # a request
    assert query.parse("Which port does staging use?").question
    assert not query.parse("why is this test suite so slow? suggest what to fix first").question


def test_memories_holding_the_same_words_of_a_request_are_none_of_them_named(rs):
    ask = _ask(rs)
    asked = "why is this test suite so slow? suggest what to fix first"
    # three memories hold "test", and nothing else of the request: it names none of them
    assert ask(asked) == set()
    assert ask(asked, single_out=False) == set(TESTS)
    # a request of one sentence is about one thing to do too
    assert ask("fix the failing DST test, don't just change the assertion") == set()
    assert ask("fix the failing DST test, don't just change the assertion", single_out=False) == set(TESTS)
    # a one-sentence question keeps what passed: several memories may each answer a part of it
    assert ask("which tests need a fasting patient or synthetic patients?") >= set(TESTS[:2])


def test_a_search_of_one_line_keeps_every_memory_that_passed(rs):
    ask = _ask(rs)
    # a search asks nothing and requests nothing: every memory it names answers it, tied or not
    assert query.one_search("iOS app") and query.parse("iOS app").question
    assert not query.one_search("fix the iOS app") and not query.one_search("iOS app.\nAndroid app")
    assert ask("iOS app") == {TARGET, SWIFTUI}
    assert ask("fix the iOS app") == set()  # a request naming what two memories hold alike names neither


def test_a_request_recalls_the_memory_its_words_single_out(rs):
    ask = _ask(rs)
    asked = ("Can we use @Observable in the iOS app or is our minimum version too old? Check before I start "
             "rewriting PlayerViewModel.")
    # both name the iOS app; only the deployment target also names the player: the other is far less distinct
    assert ask(asked) == {TARGET}
    assert ask(asked, relative_chance=0.0, single_out=False) == {TARGET, SWIFTUI}
