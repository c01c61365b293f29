"""``resumed`` (off by default): a message opening with what it goes back to ("Back to the routing work
from before the compaction: …") asks about that too — over development halves' memories in a real
LMDB store and SQLite index."""
from __future__ import annotations

import pytest
from memhelp import assert_rank_switch_typed, half_asker

from ctxproxy.store.services.recall.query import focus_of, resumed


@pytest.mark.parametrize("text, subject", [
    ("Back to the routing work from before the compaction: the solver now returns late routes.", "the routing work"),
    ("Going back to the seat-map perf issue we discussed: the map is slow. Why?", "the seat-map perf issue"),
    ("Ok, back to the refund screen we were working on. Can the receptionist push it?", "the refund screen"),
    ("Following up on the telehealth work: can a clinic get a copy?", "the telehealth work"),
    ("Back to EDI after that summary. I'd like to batch responses.", "EDI"),
    ("Re the UI tweaks from earlier: fans want a PDF option.", "the UI tweaks"),
    # what was said before, not what about: nothing resumed
    ("ok picking up from the summary. for hooking decay in, which job do I dry-run?", ""),
    ("Continuing from the summary: please add a README section.", ""),
    # "on", "re", "about" open a topic only before a colon
    ("On the tablet check-in screen (apps/tablet/src/screens/CheckIn.tsx), make the button wider.", ""),
    ("On the load test plan from the pending list: staging-east is busy.", "the load test plan"),
    ("Why does the back button go back to the login page?", ""),
])
def test_the_subject_a_message_goes_back_to(text, subject):
    assert resumed(text) == subject


def test_what_it_goes_back_to_is_of_what_it_asks_only_when_asked_for():
    text = ("Back to the routing work from before the compaction: the solver returns routes late. "
            "Just update the snapshot tests to match.")
    assert "routing" not in focus_of(text)
    assert "the routing work" in focus_of(text, resumes=True).split("\n")


def _statements(rs, module):
    ask = half_asker(rs, module)
    return lambda text, **rank: [s.cand.statement for s in ask(text, **rank)]


def test_a_fact_named_by_what_the_message_goes_back_to_is_recalled(rs):
    from ctxproxy.proxy.eval import turns_fresh13

    ask = _statements(rs, turns_fresh13)
    cutoff = turns_fresh13.FACTS["route_dock_cutoff"][1]
    text = next(p for key, shape, p, _ in turns_fresh13.TURNS
                if key == "route_dock_cutoff" and shape == "claude-after-compact")
    assert text.startswith("Back to the routing work")
    # the routes' words are the told story's, the ask names only the snapshot tests: nothing passes
    assert not any(cutoff in s for s in ask(text))
    assert any(cutoff in s for s in ask(text, resumed=True))


def test_a_message_opening_otherwise_recalls_the_same(rs):
    from ctxproxy.proxy.eval import turns_fresh13

    ask = _statements(rs, turns_fresh13)
    plain = [(key, text) for key, _shape, text, _tool in turns_fresh13.TURNS if not resumed(text)]
    assert len(plain) > 30
    for key, text in plain:
        assert ask(text, resumed=True) == ask(text), key


def test_the_option_is_off_by_default_and_typed_at_load(tmp_path):
    assert_rank_switch_typed(tmp_path, "resumed")
