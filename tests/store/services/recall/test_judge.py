"""The learned judge of recall candidates (``judge = true``), through the real recall (real LMDB store,
real SQLite index, the shipped weights): a request that names only a subject several memories share
gets none of them, a one-sentence question keeps the rules' verdict, a turn that needs a fact keeps it,
each turn shape has its own cut-off, and weights that are missing or corrupt stop
the start-up with the file's name."""
from __future__ import annotations

import json

import pytest
from memhelp import put_memory

from ctxproxy.config import ConfigError
from ctxproxy.store.services.recall import judge
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.services.recall.recaller import Recaller
from ctxproxy.store.sqlite_index import Viewer

PORT = "Staging listens on port 8443, not 443; scripts/deploy.sh reads it from STAGING_PORT."
SAME_SUBJECT = ("The staging cluster is rebuilt from scratch every Sunday night.",
                "Staging uses the shared Postgres instance pg-stage-2.")
OTHERS = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
          "Quarterly planning happens in the first week of each quarter.",
          "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
          "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.",
          "Standup is at 9:30 in the small meeting room.", "Invoices are generated on the first of the month.",
          "Release notes are written in docs/releases/ as one Markdown file per version.",
          "The mobile app is built with Flutter and ships every second Tuesday.",
          "Feature flags live in LaunchDarkly; a flag older than 90 days must be removed.",
          "The search service indexes products into OpenSearch every 10 minutes.",
          "Support tickets are triaged in Zendesk by the on-call engineer.",
          "Customer exports are CSV files encoded in UTF-8 with a BOM.",
          "The data warehouse is Snowflake, loaded nightly by Airflow DAGs in dags/.",
          "Load tests run with k6 against the perf environment, never against staging.")


@pytest.fixture
def ask(rs):
    store, services = rs
    for s in (PORT, *SAME_SUBJECT, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    return ask


def test_a_request_naming_only_a_shared_subject_gets_none_of_its_memories(ask):
    # each shares "staging" far above chance and nothing else of the turn
    assert ask("Staging is down again. Can you check the logs and tell me what happened?", judge=True) == set()


def test_a_one_sentence_question_keeps_the_rules_verdict(ask):
    # no cut-off kept LoCoMo's answers as often as the rules without as many unrelated memories: the rules decide
    turn = "staging is down again, can you check the logs and tell me what happened?"
    assert judge.shipped().thresholds["question"] is None
    assert set(SAME_SUBJECT) <= ask(turn, judge=True) == ask(turn, judge=False)


def test_a_turn_that_needs_a_fact_keeps_it(ask):
    turn = ("Can you update the deploy script so that it uses the right port for staging? I think it is broken "
            "since yesterday and the CI keeps failing on the integration tests, please look at scripts/deploy.sh "
            "first.")
    assert ask(turn, judge=True) == {PORT}
    assert ask("deploy to staging keeps failing with connection refused on 443, what port should it use?",
               judge=True) == {PORT}


def test_a_one_sentence_questions_answer_is_kept(ask):
    # a plain question (LoCoMo's shape through POST /ctx/v1/recall) is held to its own cut-off
    assert PORT in ask("which port does staging listen on?", judge=True)
    assert PORT in ask("What port is used by staging?", judge=True)


def test_the_shipped_weights_are_this_versions(ask):
    j = judge.shipped()
    assert len(j.weights) == len(judge.FEATURES) and 0 < j.threshold < 1
    assert set(j.thresholds) == set(judge.SHAPES) and all(t is None or 0 < t < 1 for t in j.thresholds.values())
    assert RankConfig(judge=True).validate("filters.recall.rank") is None


def test_missing_weights_stop_the_start_up_with_the_files_name(monkeypatch, rs):
    monkeypatch.setattr(judge, "WEIGHTS_FILE", "absent_judge.json")
    judge.shipped.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"filters\.recall\.rank\.judge: .*absent_judge\.json are missing"):
            RankConfig(judge=True).validate("filters.recall.rank")
        with pytest.raises(judge.JudgeError, match="absent_judge.json"):
            Recaller(rs[1].memories, config=RankConfig(judge=True))
        RankConfig(judge=False).validate("filters.recall.rank")  # off: the file is never read
    finally:
        judge.shipped.cache_clear()


@pytest.mark.parametrize("body, why", [
    (b"{not json", "unreadable"),
    (json.dumps({"format": 99}).encode(), "unknown format 99"),
    (json.dumps({"format": 1, "features": ["chance"], "weights": [1.0], "bias": 0, "threshold": 0.5}).encode(),
     "not this version's"),
    (json.dumps({"format": 1, "features": list(judge.FEATURES), "weights": [1.0], "bias": 0,
                 "threshold": 0.5}).encode(), "1 weights for"),
    (json.dumps({"format": 1, "features": list(judge.FEATURES), "weights": [0.0] * len(judge.FEATURES), "bias": 0,
                 "threshold": 0.5, "thresholds": {"question": 0.5, "essay": 0.1}}).encode(), "unknown shape 'essay'"),
    (json.dumps({"format": 1, "features": list(judge.FEATURES), "weights": [0.0] * len(judge.FEATURES), "bias": 0,
                 "threshold": 0.5, "thresholds": ["question"]}).encode(), "unreadable"),
])
def test_corrupt_weights_fail_clearly(tmp_path, body, why):
    path = tmp_path / "recall_judge.json"
    path.write_bytes(body)
    with pytest.raises(judge.JudgeError, match=f"recall_judge.json: .*{why}"):
        judge.load(path)


def test_a_judge_written_out_reads_back_the_same(tmp_path):
    j = judge.Judge([0.5] * len(judge.FEATURES), -1.0, 0.7, {"trained_on": ["dev"]}, {"question": None, "output": 0.9})
    path = tmp_path / "w.json"
    path.write_text(j.dumps())
    back = judge.load(path)
    assert (back.weights, back.bias, back.threshold, back.thresholds, back.meta) == \
        (j.weights, j.bias, j.threshold, j.thresholds, j.meta)


def test_the_shipped_monotone_weights_are_not_negative():
    # more of the match never counts against a memory
    j = judge.shipped()
    weights = dict(zip(judge.FEATURES, j.weights))
    assert set(judge.MONOTONE) <= set(judge.FEATURES)
    assert {f: weights[f] for f in judge.MONOTONE if weights[f] < 0} == {}


class _Cand:
    match = 1.0


def _row(**on: float) -> list[float]:
    return [on.get(f, 0.0) for f in judge.FEATURES]


def test_each_turn_shape_has_its_own_cut_off():
    # every row reads 0.5 (no weight, no bias): kept where its shape's cut-off is at or under it
    j = judge.Judge([0.0] * len(judge.FEATURES), 0.0, 0.6, thresholds={"question": 0.4, "request": 0.7})
    rows = {"question": _row(question=1), "request": _row(question=1, remarks=1), "plain request": _row(),
            "output": _row(output=1, question=1)}
    assert {k: judge.shape(r) for k, r in rows.items()} == {
        "question": "question", "request": "request", "plain request": "request", "output": "output"}
    pool = {k: _Cand() for k in rows}
    kept = j.keep(list(pool.values()), list(rows.values()))
    assert [k for k, c in pool.items() if c in kept] == ["question"]  # the output falls back on 0.6
    j.thresholds["output"] = 0.5
    assert pool["output"] in j.keep(list(pool.values()), list(rows.values()))
    # None: the rules' verdict (the ``rules`` feature) stands for that shape, whatever the probability
    j.thresholds["question"] = None
    ruled = {"kept": _row(question=1, rules=1), "dropped": _row(question=1)}
    pool = {k: _Cand() for k in ruled}
    assert [k for k, c in pool.items() if c in j.keep(list(pool.values()), list(ruled.values()))] == ["kept"]
