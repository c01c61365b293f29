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


PIPELINE = ("The firmware pipeline failed on my branch:\n\n"
            "+ docker pull hl/tbx3-cross:gcc12\n"
            "gcc12: Pulling from hl/tbx3-cross\n"
            "failed to register layer: write /usr/lib/gcc-cross/aarch64-linux-gnu/12/cc1plus: no space left on device\n"
            "Build teardown\n\n"
            "I added a new step to bitbucket-pipelines.yml for it. What did I miss?")
RUNNER = ("The firmware build step in Bitbucket Pipelines must run on the self-hosted runner labelled hl-arm64: "
          "the cross-compiler image overflows the cloud runners' disk.")


def test_a_pasted_logs_lines_are_not_requests():
    # "write /usr/lib/…" and "Build teardown" open with a verb, but a paste's lines end as no sentence does
    assert query.focus_of(PIPELINE) == "What did I miss?"
    assert not {"teardown", "spac", "devic"} & query.parse(PIPELINE).focus
    # a paragraph of prose lines is still read for its asks
    assert query.focus_of("The export broke.\n\nFix the cron job.\nThen rerun it.") == "Fix the cron job.\nThen rerun it."


def test_a_question_asks_about_the_file_its_path_names_a_request_does_not():
    remark = "The yield map has a stripe of near-zero yield at the start of every pass. "
    asked = query.parse(remark + "Which filters does agronomy-py/yield/clean.py apply?").focus
    assert "clean" in asked and "agronomi" not in asked
    assert "clean" not in query.parse(remark + "Fix the stripe in agronomy-py/yield/clean.py please.").focus


def test_the_fact_a_pasted_log_and_a_short_ask_need_is_recalled(rs):
    store, services = rs
    others = ("Lunch is at noon on Fridays.", "Pull requests need two approvals in Bitbucket, one of them from a "
              "code owner.", "The design team keeps the icon set in Figma.",
              "agronomy-py pins rasterio to 1.3.x and GDAL 3.8 in its Docker image.",
              "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.")
    for s in (RUNNER, *others):
        put_memory(store, "acme", s, kind="fact", user="dev")
    got = [s.cand.statement for s in services.recaller(RankConfig()).recall(Viewer("acme", user="dev"), PIPELINE).items]
    assert got == [RUNNER]
