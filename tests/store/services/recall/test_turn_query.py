"""Recall on real agent turns: the user's own words without the agents' wrappers,
a long message's salient terms, and a floor judged by what each memory matches
(real LMDB store, real SQLite index)."""
from __future__ import annotations

import contextlib

import pytest

from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.memory_terms import STOPWORDS, query_terms, terms
from ctxproxy.store.services.recall import query
from ctxproxy.store.services.recall.agent_text import own_words
from ctxproxy.store.services.recall.services import RecallServices
from ctxproxy.store.sqlite_index import Viewer

PORT = "Staging listens on port 8443, not 443."
OTHERS = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
          "Quarterly planning happens in the first week of each quarter.",
          "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
          "Session cookies expire after 12 hours of inactivity.")
LONG = ("Can you update the deploy script so that it uses the right port for staging? I think it is broken "
        "since yesterday and the CI keeps failing on the integration tests, please look at scripts/deploy.sh "
        "first.")


@contextlib.contextmanager
def recall_over(tmp_path, statements, **put):
    """A real store holding ``statements`` (each a text, or a text and its own put arguments; put
    as ``put`` says, a fact of dev's by default); yields ask(text, goal="", **rank) -> the
    statements recalled, in order."""
    from ctxproxy.store.services.recall.rank import RankConfig

    store = open_store(tmp_path / "store")
    for s in statements:
        text, own = (s, {}) if isinstance(s, str) else s
        put_memory(store, "acme", text, **{"kind": "fact", "user": "dev", **put, **own})
    rs = RecallServices(tmp_path, store)
    viewer = Viewer("acme", user="dev")

    def ask(text: str, goal: str = "", context: str = "", **rank) -> list[str]:
        return [s.cand.statement for s in rs.recaller(RankConfig(**rank)).recall(viewer, text, goal=goal,
                                                                                 context=context).items]

    try:
        yield ask
    finally:
        rs.close()
        store.close()


@pytest.fixture
def recall(tmp_path):
    with recall_over(tmp_path, (PORT, *OTHERS)) as ask:
        yield ask


def test_a_long_message_recalls_what_a_short_question_recalls(recall):
    assert recall("which port does staging use?")[:1] == [PORT]
    assert recall(LONG)[:1] == [PORT]  # the old floor (share of the whole message) dropped it
    assert PORT in recall(LONG + " Also " + " ".join(f"check item{i} in the backlog." for i in range(200)))
    # a pasted log in the middle of a 20 KB message: its start and end are read
    log = "\n".join(f"2026-11-30T23:{i % 60:02d}:00Z INFO worker processed batch {i}" for i in range(400))
    assert len(LONG + log) > 20000 and recall(LONG + "\n" + log + "\nThanks!")[:1] == [PORT]


def test_an_unrelated_message_recalls_nothing_whatever_its_length(recall):
    assert recall("Rename format_money to format_amount in libs/ and keep an alias for one release.") == []
    long = "Write a function that groups a list of dicts by a key, with type hints and doctests. " * 40
    assert recall(long) == []


def test_the_agents_wrappers_are_not_the_users_words(recall):
    reminder = ("<system-reminder>\nContents of /work/CLAUDE.md (project instructions):\n- Lunch is at noon on "
                "Fridays; the design team keeps icons in Figma.\n</system-reminder>\n")
    evidence = '<ctx-data kind="evidence" ref="recall:1">\n- Quarterly planning happens each quarter.\n</ctx-data>'
    assert own_words(reminder + "Which port does staging use?\n" + evidence) == "Which port does staging use?"
    for agent in ("# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\n- lunch at noon\n</INSTRUCTIONS>",
                  "<environment_context>\n  <cwd>/work</cwd>\n</environment_context>",
                  "This session is being continued from a previous conversation that ran out of context.",
                  "Another language model started to solve this problem and produced a summary",
                  "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."):
        assert own_words(agent) == ""
    assert recall(reminder + "Which port does staging use?")[:1] == [PORT]
    assert "Lunch is at noon on Fridays." not in recall(reminder + "Which port does staging use?")


def test_a_tool_result_turn_asks_with_the_goal_and_the_latest_words(recall):
    assert recall("Go on.", goal=LONG)[:1] == [PORT]
    assert recall("Go on.") == []


def test_a_long_query_keeps_its_salient_terms_and_the_tokenizer_is_unchanged():
    q = query.parse(LONG)
    assert {"stag", "port", "deploy"} <= set(q.weights) and "deploy.sh" in q.substrings
    assert {"deploy", "script", "sh"} <= q.salient  # the path's parts (stemmed)
    many = LONG + " " + " ".join(f"word{i}x filler{i}y" for i in range(100))
    picked = query.select(query.parse(many), {"stag": 1, "port": 2, "deploy": 1, "word3x": 40, "filler3y": 40}, 50,
                          limit=3)
    assert set(picked.weights) == {"stag", "port", "deploy"}  # rare and present beat frequent, absent goes
    # one tokenizer: the query's terms are still the documents' (each distinct token analysed once)
    text = "Painted de-stress the getUserName 東京タワー, painting parse_body.\n" * 3
    assert query_terms(text) == [t for t in dict.fromkeys(terms(text, STOPWORDS)) if not (len(t) == 1 and t.isascii())]
    assert {"destress", "paint", "user", "parse_body", "東京"} <= set(query_terms(text))


def test_a_memory_sharing_only_common_words_with_a_request_is_not_recalled(recall):
    # "Quarterly planning happens in the first week…" shares "happens" and "week", the most common of
    # words; "Session cookies expire after 12 hours" shares "12" of a pasted line: neither is a subject.
    asked = ("The certificate expires in three weeks. Can you prepare what has to happen first? "
             "The renewal failed at 12:04.")
    assert recall(asked) == []
    # one salient word (a name, an identifier, a long number) or two specific ones are a subject
    assert recall("Does anything in the design team's Figma need updating?")[:1] == [OTHERS[1]]
    assert recall("which port does staging use?")[:1] == [PORT]


def test_min_terms_zero_keeps_the_old_floor(tmp_path):
    asked = "What has to happen in the first week?"
    with recall_over(tmp_path, (OTHERS[2],)) as ask:
        assert ask(asked) == []
        assert ask(asked, min_terms=0) == [OTHERS[2]]


def test_a_pasted_log_is_read_once_per_line_shape():
    log = "\n".join(f"2026-12-01T10:{m:02d}:03Z ERROR auth.session lookup miss for sid=s{m}f3 "
                    f"(cache host redis-cache-1.eu-west-1)" for m in range(60))
    read = query.read("Which cache cluster are sessions in?\n\n" + log, 2000)
    assert read.count("lookup miss") == 1 and "redis-cache-1.eu-west-1" in read
    # the terms of sixty lines of one form are the terms of their first
    one = query.parse("Which cache cluster are sessions in?\n\n" + log.split("\n")[0])
    assert query.parse("Which cache cluster are sessions in?\n\n" + log).weights == one.weights


def test_a_word_of_a_path_alone_is_not_a_subject_a_whole_identifier_is():
    q = query.parse("Add partial refunds to services/payments/refunds.py; the cache is redis-sessions-3, "
                    "ask Ana about parse_body.")
    assert "refund" in q.salient and "refund" not in q.strong  # a word of a path
    assert "follow" not in query.parse("Open a follow-up ticket.").strong  # a hyphened word is no identifier
    assert {"redissession", "parse_body", "ana"} <= q.strong  # an identifier as one term, a name


def test_a_short_question_needs_one_specific_word_a_long_request_two(tmp_path):
    with recall_over(tmp_path, ("Payments are settled nightly.", *OTHERS)) as ask:
        question = "Which Postgres instance backs payments?"  # its few words are its subject
        assert ask(question) == ["Payments are settled nightly."]
        assert ask(question, min_terms=0) == ask(question)
        request = ("Refactor the invoice renderer, add snapshot tests for the totals, check the currency "
                   "rounding in payments and bump the template engine.")  # one shared word of many
        # (a build it specifies whole: ``build_ask`` offers it no description either)
        assert ask(request) == [] and ask(request, min_terms=0, build_ask=False) == ["Payments are settled nightly."]


def test_what_a_message_asks_is_its_focus_and_the_rest_are_side_remarks():
    assert query.focus_of(LONG) == ("Can you update the deploy script so that it uses the right port for "
                                    "staging?\nplease look at scripts/deploy.sh first.")
    # a request goes on to the end of its sentence; a full stop inside a file name or a number ends none
    assert query.focus_of("The smoke check times out. Fix tools/smoke.py; it should use port 8443.") == \
        "Fix tools/smoke.py\nit should use port 8443."
    assert query.focus_of("Which port does staging use?") == ""  # all of it asks: all of it is the focus
    assert query.focus_of("Staging is down since the deploy at 12.30 today.") == ""  # nothing asks
    # an ask that names fewer than two specific words leans on the rest: no focus
    assert query.parse("The ledger schema change is ready. Who reviews it?").focus == frozenset()
    assert query.parse(LONG).focus >= {"port", "stag", "deploy"} and "integr" not in query.parse(LONG).focus
    assert query.parse(LONG).text == query.focus_of(LONG)  # what the embeddings extra embeds


def test_a_memory_matching_only_a_requests_side_remarks_is_not_recalled(tmp_path):
    suite = "The integration test suite takes about 14 minutes on CI."
    with recall_over(tmp_path, (PORT, suite, *OTHERS)) as ask:
        assert ask(LONG) == [PORT]  # "the CI keeps failing on the integration tests" is a side remark
        assert suite in ask(LONG, side_weight=1.0)  # the rule off: side remarks count like the rest
        assert ask("Why does the integration test suite on CI take so long?")[:1] == [suite]  # asked: found
        # a weekday is not a name, a path's last word not an identifier: neither alone is a subject
        assert ask("The Sunday refresh ran long on staging. Can you write a query listing the largest "
                   "tables by size?") == []
        assert "checkout" not in query.parse("POST /v1/checkout fails").substrings
        assert "sunday" not in query.parse("It ran long on Sunday, ask Ana.").strong >= {"ana"}


def test_a_question_asking_when_prefers_a_statement_that_says_when(tmp_path):
    from ctxproxy.store.services.recall.rank import asks_only, says_when

    said = "Caroline: I went to the LGBTQ support group yesterday and it was so powerful."
    plain = "Caroline: The LGBTQ support group is a great group."
    with recall_over(tmp_path, (said, plain, *OTHERS), kind="event") as ask:
        asked = "When did Caroline go to the LGBTQ support group?"
        assert query.parse(asked).temporal and not query.parse("Who runs the LGBTQ support group?").temporal
        assert ask(asked, time_weight=0.0)[:1] == [plain]  # BM25 alone: the shorter, denser statement
        assert ask(asked)[:1] == [said]  # asked when: the one that says when
        assert ask("Who runs the LGBTQ support group?")[:1] == [plain]  # not asked when: no edge
        assert says_when("We went camping last week.") and says_when("Back in May 2023.")
        assert not says_when("We love camping.")
        assert asks_only("Melanie: How long have you been married? [shares a picture: a cake]")
        assert not asks_only("Melanie: 5 years already! Can you believe it.")


def test_a_recalled_question_brings_its_reply_the_next_event_of_its_conversation(tmp_path):
    talk = ("Caroline: I finally finished my painting class this spring.",
            "Melanie: Which painting did you like best from the class?",
            "Caroline: A sunset over the lake, with purple clouds.",
            "Melanie: Lovely, the lake near your parents' house?",
            "Caroline: Yes, we go there every summer.")
    at = 1_700_000_000.0  # one session: one time, its turns in the order written
    said = [(s, {"evidence_sessions": ("conv-1",)}) for s in talk] + \
        [(s, {"evidence_sessions": ("conv-2",)}) for s in OTHERS]
    with recall_over(tmp_path, said, kind="event", observed_at=at) as ask:
        asked = "Which painting from the class did Caroline like best?"
        assert talk[2] not in ask(asked, answer_weight=0.0)[:2]  # the question ranks first; its reply shares no word
        assert ask(asked)[:2] == [talk[2], talk[1]]  # the reply, then the question it answers
        assert talk[4] not in ask(asked)[:2]  # a statement that does not ask brings nothing


POD = "Proof-of-delivery photos go to the fleet-pod-eu bucket and are deleted after 180 days."
DELIVERY = ("Photos in the driver app are compressed to JPEG before upload.",
            "Delivery windows are stored in UTC and shown in the depot's local time zone.",
            "Customers get delivery updates by email from the notifications service.")
# A project's other memories, about none of it.
ELSEWHERE = ("The VPN certificate is renewed every spring.", "Standup is at 9:30 in the small meeting room.",
             "The staging cluster runs three worker nodes.", "Invoices are generated on the first of the month.",
             "The mobile team ships a release every second Thursday.", "Backups are restored once a quarter as a drill.",
             "New hires get their laptop from the IT desk.", "The marketing site is built with Hugo.")
DISPUTE = ("Support needs a proof-of-delivery photo from March for a dispute. Find where the photos are stored and "
           "whether one from March still exists.")


def test_a_match_is_judged_against_what_chance_would_match(tmp_path):
    with recall_over(tmp_path, (POD, *DELIVERY, PORT, *OTHERS, *ELSEWHERE)) as ask:
        # words of the request no other memory holds together (proof-of-delivery, counted once, and photo):
        # far above what a random memory would share, though the memory's own words (its bucket, its
        # 180 days) are mostly not asked
        assert ask(DISPUTE) == [POD]
        assert ask(DISPUTE, min_score=0.2, chance_min=float("-inf")) == []  # the share-of-the-memory floor
        # a word or two that several memories hold is what any of them would match by chance
        assert POD not in ask("Which photos does the app compress, and when?")
        assert ask("The customer email about the delivery went out late. Can you rename format_money to "
                   "format_amount in libs/?") == []


def test_a_path_in_a_request_says_where_not_what_it_asks():
    asked = ("A customer complained that the delivery window in the tracking email was an hour off. Which time "
             "zone are windows displayed in? Check services/notifications/templates/window.html and fix it.")
    q = query.parse(asked)
    assert {"zon", "window"} <= q.focus and "notification" not in q.focus  # a directory's name is no question
    assert "notification" in q.weights  # still a word of the message (side weight)


def test_few_memories_or_all_on_one_subject_still_recall_what_matches_all_that_is_asked(tmp_path):
    with recall_over(tmp_path / "one", (PORT,)) as ask:  # chance is judged against at least CHANCE_DOCS memories
        assert ask("which port does staging use?") == [PORT]
    note = "The rollout codename of acme is Kestrel-77."
    asked = "What is the rollout codename of acme?"
    with recall_over(tmp_path / "same", (note, *[f"{asked} (asked in session {i})" for i in range(8)])) as ask:
        # every memory holds every word asked: no better than chance, yet all of what could match does
        assert note in ask(asked)


def test_a_question_whose_only_known_word_is_common_recalls_what_holds_it(tmp_path):
    about = [f"The payments service {x}." for x in ("listens on port 8443", "keeps its data in pg-eu-3",
                                                     "is owned by Ana", "publishes to payments-events-v2")]
    others = [f"The {s} service listens on port {p}." for s, p in (("orders", 7001), ("search", 7002))]
    with recall_over(tmp_path, (*about, *others, *OTHERS)) as ask:
        # "payments" is in many memories: no better than chance, yet it is all the memories know of the
        # question, and each memory holding it is about what is asked
        got = ask("Which Postgres instance backs payments?")
        assert about[1] in got and not set(got) & set(others)


def _wavecast():
    """The eval's fresh development half (podcast platform): its facts and distractors."""
    from ctxproxy.proxy.eval import turns_fresh

    return [st for st, _ in turns_fresh.FACTS.values()] + list(turns_fresh.DISTRACTORS)


def test_one_word_of_the_message_counts_once_however_the_tokenizer_splits_it(tmp_path, monkeypatch):
    # ClickHouse gives clickhous, click and hous; a memory naming it holds the word once, not three times
    assert query.units_of("Write a ClickHouse query on listening_sessions for the iOS app", ("ClickHouse",)) == {
        "clickhous": "clickhous", "click": "clickhous", "hous": "clickhous", "listening_sessions": "listening_sessions",
        "listen": "listening_sessions", "session": "listening_sessions", "ios": "ios", "i": "ios", "os": "ios",
        "\x00clickhouse": "clickhous"}
    # a hyphenated word is the words it joins: its joined spelling is not one more
    assert query.units_of("the ad-stitcher client") == {"stitcher": "stitcher", "adstitcher": "stitcher"}
    assert query.units_of("the ad plays; the ad-stitcher client")["adstitcher"] == "stitcher"
    warehouse = "The analytics warehouse is ClickHouse; its dashboards are built in Metabase."
    asked = ("Write a ClickHouse query for the 20 shows with the most listening hours in November from "
             "listening_sessions (columns show_id, started_at, seconds_played), with the show title joined from shows.")
    with recall_over(tmp_path, _wavecast()) as ask:
        assert ask(asked) == []  # a query in the warehouse's dialect, nothing the memory answers
        monkeypatch.setattr(query, "units_of", lambda text, subs=(): {})
        # (a new text: parsed queries are kept by their text) each piece of the name counted, far above chance
        assert ask(asked + " Thanks!", build_ask=False) == [warehouse]
        assert ask(asked + " Thanks again!") == []  # a build it specifies whole: no description of the warehouse


def test_an_acronyms_plural_is_the_acronym():
    q = query.parse("How many GPUs may our team ask for? I asked for 32 A100s.")
    assert {"gpu", "a100"} <= set(q.weights) and not {"gp", "us", "100"} & set(q.weights)
    assert q.units["gpu"] == q.units["gpus"] and "a100" in q.strong
    assert {"us", "gpu"} <= set(query.parse("Give us the GPUs.").weights)  # "us" written as a word stays


def test_an_acronyms_plural_finds_the_memory_naming_the_acronym(tmp_path):
    quota = "Each team's GPU quota is 16 A100s on the train-a100 Slurm partition."
    twins = ("Trained models are registered in MLflow under the name pattern team/model.",
             "Exports to partners are sent weekly by the data team.")
    with recall_over(tmp_path, (quota, *twins, *DELIVERY, PORT, *OTHERS, *ELSEWHERE)) as ask:
        assert ask("My training job has been pending for six hours. Can you check jobs/train.sbatch and tell me how "
                   "many GPUs our team is actually allowed to ask for?") == [quota]


SUMMARY = ("This session is being continued from a previous conversation that ran out of context. The summary "
           "below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary request: upgrade ffmpeg "
           "in the transcode worker image from 6.1 to 7.1.\n2. Done: bumped the base image.\n3. Pending: open the PR.")


def test_an_ask_that_refers_back_reads_what_it_refers_to(tmp_path):
    owner = ("Keiko Tanaka owns the transcoding pipeline; every change to the ffmpeg version or the encoder settings "
             "needs her sign-off.")
    asked = "nice, the image builds and make check is green. who has to sign off on this before I open the PR?"
    assert query.refers_back(asked) and not query.refers_back("Which port does staging use?")
    assert query.refers_back("Roll it out.") and not query.refers_back("I think it broke. Which port is right?")
    with recall_over(tmp_path, _wavecast()) as ask:
        assert ask(asked) == []  # "sign off" alone: audio links are signed too
        assert ask(asked, context=SUMMARY) == [owner]  # "this": the ffmpeg upgrade of the transcode image
        # the words before name no subject of their own: an ask holding none of the memories' words recalls nothing
        assert ask("Thanks. Now please write the PR description for this.", context=SUMMARY) == []


def test_a_message_saying_more_than_it_asks_keeps_only_the_distinct_candidates(tmp_path):
    from ctxproxy.proxy.eval import turns_fresh

    midroll, campaigns = turns_fresh.FACTS["midroll"][0], turns_fresh.DISTRACTORS[3]
    asked = ("On show 4471 the mid-roll ad plays right at the start of the episode instead of at 12:30 where the "
             "host put it. find the bug in the ad-stitcher and fix it")
    with recall_over(tmp_path, _wavecast()) as ask:
        # the ad-stitcher is named in the request, the mid-roll position all around it: the memory sharing the
        # remark's words lies far above chance, the one sharing the request's single name much less so
        assert ask(asked) == [midroll]
        assert set(ask(asked, relative_chance=0.0)) == {midroll, campaigns}
        # a one-sentence question keeps what passed near the best (several memories may each answer a part of
        # it); one far less distinct than the best shares a word, not the subject (``question_chance``)
        two = "Where do the ad-stitcher and the mid-roll positions live?"
        assert ask(two, relative_chance=1.0) == [midroll]
        assert set(ask(two, relative_chance=1.0, question_chance=0.0)) == {midroll, campaigns}


def test_a_words_family_is_its_derived_forms_and_a_long_words_clipping():
    from ctxproxy.store.memory_terms import stem
    from ctxproxy.store.services.recall.morphology import family

    assert stem("approve") in family(stem("approval"))  # approval: approv (approve, approved, approving)
    assert stem("approval") in family(stem("approved"))
    assert stem("configuration") in family(stem("configured"))
    assert {stem("validate"), stem("validator")} <= set(family(stem("validation")))
    assert stem("deployment") in family(stem("deploy"))
    assert "app" in family(stem("application"))  # a long word's clipping
    # a root keeps five letters: a portal is no port, a signal no sign
    assert "port" not in family("portal") and "sign" not in family("signal")
    assert family("cost") == () and family("parse_body") == ()


def test_a_word_finds_the_memory_writing_another_form_of_it(tmp_path):
    approve = "Dana Okoye must approve every change to the pricing tables."
    login = "Staff sign in through Okta only (app id 0oa7pricing); local passwords are disabled."
    with recall_over(tmp_path, (approve, login, *DELIVERY, PORT, *OTHERS, *ELSEWHERE)) as ask:
        asked = ("I raised the bulk discount in rules/pricing_tables.yaml from 5 to 7 percent as sales asked. "
                 "Open a PR with that, and tell me whose approval it needs before it can merge.")
        assert ask(asked) == [approve]
        assert ask(asked, family_weight=0.0) == []  # approval and approve: no term in common
        asked = ("Two new cashiers cannot log in. Should I reset their passwords, or which application in the "
                 "identity provider do we use?")
        assert ask(asked) == [login]
        assert ask(asked, family_weight=0.0) == []


def test_only_the_family_members_a_visible_memory_holds_join_the_query():
    from ctxproxy.store.services.recall import morphology

    q = query.parse("Whose approval does the pricing change need, in prod?")
    asked: list[tuple[list[str], list[str]]] = []

    def read(keys, prefixes):
        asked.append((keys, prefixes))
        return {"approv": 3, "production": 2, "productiv": 0}, {"prod": ["production", "productiv"]}

    out = morphology.extend(q, read, room=16, weight=0.8)
    assert len(asked) == 1 and "approv" in asked[0][0] and "prod" in asked[0][1]  # one read of the index
    assert set(out.weights) - set(q.weights) == {"approv", "production"}
    assert out.weights["approv"] == 0.8 * q.weights["approval"]
    assert out.units["approv"] == out.units["approval"]  # one word of the message: counted once
    assert out.units["production"] == out.units["prod"]
    assert morphology.extend(q, read, room=16, weight=0.0) is q


def test_a_quoted_plain_word_is_a_word_not_an_identifier(tmp_path):
    hours = "The harbour office opens at 08:00 on weekdays and at 10:00 on Saturdays."
    crash = ("The office hours import crashes on the new CSV, fix the importer so it tolerates this:\n\n```\n"
             "Traceback (most recent call last):\n  File \"importers/hours.py\", line 31, in load\n"
             "    opens = row[\"Opens\"]\nKeyError: 'Opens'\n```\nThe header row is: `office;opens_at;closes_at`")
    with recall_over(tmp_path, (hours, *DELIVERY, PORT, *OTHERS, *ELSEWHERE)) as ask:
        # 'Opens' is a dictionary key quoted in a trace: the word opens, not a name of the office's hours
        assert ask(crash) == []
        assert ask("When does the harbour office open on Saturdays?") == [hours]
