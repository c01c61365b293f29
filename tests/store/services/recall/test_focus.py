"""What a message asks (its focus): its questions and its requests, "have a look at…" as much as
"look at…" (real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store.services.recall import query
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer


def _wavecast() -> list[str]:
    """The eval's fresh development half (a podcast platform): its facts and distractors."""
    from ctxproxy.proxy.eval import turns_fresh

    return [st for st, _ in turns_fresh.FACTS.values()] + list(turns_fresh.DISTRACTORS)


ASKED = ("Angry email from the creator of show 3320: she says we didn't pay her anything for October although "
         "her dashboard shows €18.40 earned. Is this a bug in the payout run or expected? Have a look at the "
         "payout code and draft a reply I can send her, friendly but clear.")


def test_have_a_look_and_take_a_look_are_requests():
    for opener in ("Have a look at", "take a look at", "Please have a look at"):
        assert query.focus_of(f"The export broke last night. {opener} the cron job.") == f"{opener} the cron job."
    assert "draft a reply" in query.focus_of(ASKED) and "dashboard" not in query.focus_of(ASKED)


def test_a_memory_sharing_only_the_remarks_words_is_not_recalled(rs):
    store, services = rs
    memories = _wavecast()
    payouts = next(s for s in memories if s.startswith("Creator payouts run"))
    dashboard = next(s for s in memories if s.startswith("The creator dashboard"))
    for s in memories:
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")
    got = [s.cand.statement for s in services.recaller(RankConfig()).recall(dev, ASKED).items]
    # the dashboard is named in the complaint around the ask, the payout run in what is asked
    assert got == [payouts]
    focus_off = RankConfig(side_weight=1.0, relative_chance=0.0)
    everything = [s.cand.statement for s in services.recaller(focus_off).recall(dev, ASKED).items]
    assert dashboard in everything
