"""A source file's extension (``.py``, ``.ts``) names the language of the whole repository, not a
subject: a request about one script recalls no memory that only shares its folder and extension
(real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store.services.recall import rank
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

ROLLOVER = ("Season rollovers run on the first Tuesday of each quarter at 09:00 UTC via tools/season_rollover.py, "
            "and ranked queues are frozen for 45 minutes while it runs.")
OTHERS = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
          "Quarterly planning happens in the first week of each quarter.",
          "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
          "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.",
          "Player ratings use Glicko-2 with a system constant tau of 0.5, not Elo.",
          "Leaderboard pages in the launcher are cached by the CDN for 60 seconds.")


def test_a_shared_extension_and_folder_name_no_subject(rs, monkeypatch):
    store, services = rs
    for s in (ROLLOVER, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str) -> set[str]:
        # a request for type hints is a mechanical edit too (``edit_ask``): off, the extension alone is tested
        return {s.cand.statement for s in services.recaller(RankConfig(edit_ask=False)).recall(dev, text).items}

    assert ask("Add type hints to tools/reports/format.py and make mypy --strict pass on it.") == set()
    assert ask("when does tools/season_rollover.py run?") == {ROLLOVER}  # its own name still does
    assert not rank.specific_term("py") and rank.specific_term("yaml")
    monkeypatch.setattr(rank, "GENERIC", rank.GENERIC - {"py"})  # an extension as specific as a subject word
    assert ask("Add type hints to tools/reports/format.py and make mypy --strict pass on it.") == {ROLLOVER}

