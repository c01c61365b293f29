"""How a turn's names reach the memory that writes them otherwise: two words of a long identifier
(``PARTY_SIZE_NOT_ALLOWED`` and ``MAX_PARTY_SIZE``), words joined by a slash ("which bucket/table
is it?") asked, not a path, an output's dotted pair written apart (``priya.raman``: "Priya Raman"),
and the ask after a summary pasted without its preface (real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store.services.recall import query
from ctxproxy.store.services.recall.agent_text import own_words, summary_words
from ctxproxy.store.services.recall.tool_output import names_of
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

PARTY = ("Maximum party size is 5 (MAX_PARTY_SIZE in shared/limits.py), but ranked queues also reject parties of 4 "
         "to stop stacked 4+1 lobbies.")
STATE = ("Terraform remote state lives in the S3 bucket gp-tfstate-euw1 with the DynamoDB lock table gp-tf-locks; "
         "force-unlock needs a second reviewer.")
OTHERS = ("Party invites expire after 2 minutes if nobody accepts them.",
          "Season rollovers run on the first Tuesday of each quarter at 09:00 UTC via tools/season/rollover.py.",
          "Players see rank tiers from Bronze to Apex; the raw rating number is hidden in the client.",
          "Leaderboards live in the Redis cluster lb-redis.riftline.internal:6390, one sorted set per region.",
          "The matchmaker never places a player in a region where their measured ping is above 120 ms.",
          "Terraform modules are organised per environment under infra/envs/{dev,stg,prod}.",
          "Firmware binaries for OTA are stored in the gp-firmware-artifacts bucket with versioning on.",
          "The staging fleet API is reachable at fleet-api.stg.gridpulse.internal, inside the VPN only.",
          "Chat messages are kept for 14 days for moderation review.",
          "The in-client replay viewer supports playback at up to 8x speed.")
OFF_BY_ONE = ("QA filed a bug: a 4-person party can't queue ranked, but a 5-stack can. error is "
              "PARTY_SIZE_NOT_ALLOWED. that's got to be an off-by-one somewhere right?")
STUCK = ("Terraform apply for fleet-api is stuck on a lock from a runner that died. Which bucket/table is it and "
         "what's the process to clear it?")


def test_two_words_of_a_long_identifier_are_looked_up_as_that_identifiers_word():
    q = query.parse(OFF_BY_ONE)
    assert "party_size" in q.substrings and "not_allowed" not in q.substrings  # a stop word names nothing
    assert q.units["\x00party_size"] == q.units["\x00party_size_not_allowed"]  # one word of the message


def test_words_joined_by_a_slash_are_asked_a_path_is_where():
    q = query.parse(STUCK)
    assert {"bucket", "tabl"} <= q.focus
    q = query.parse("The export broke overnight. Which timezone does it use? Check services/export/cron.py.")
    assert "export" not in q.focus  # a directory's name is no question


def _recall(rs, asked: str) -> list[str]:
    store, services = rs
    for s in (PARTY, STATE, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    return [s.cand.statement for s in services.recaller(RankConfig()).recall(Viewer("acme", user="dev"), asked).items]


def test_an_error_code_finds_the_memory_naming_its_constant(rs):
    assert _recall(rs, OFF_BY_ONE) == [PARTY]


def test_a_question_asking_which_bucket_or_table_finds_where_the_state_lives(rs):
    assert _recall(rs, STUCK) == [STATE]


BARE = ("Summary:\n1. Primary request: refactor the site list page to use the new SiteCard component.\n"
        "2. Done: SiteCard extracted, snapshot tests updated.\n   - storybook story added\n"
        "3. Pending: dark-mode colours for the skeleton loader.\n\n"
        "Next: the list should show an 'offline' badge. What's the backend rule for an inverter being offline?")


def test_a_summary_pasted_without_its_preface_is_not_the_users_words():
    assert own_words(BARE) == "Next: the list should show an 'offline' badge. What's the backend rule for an " \
                              "inverter being offline?"
    assert summary_words(BARE).startswith("Summary:\n1. Primary request") and "badge" not in summary_words(BARE)
    assert own_words(BARE.split("\n\nNext")[0]) == ""  # the summary alone: nothing of the user's
    assert own_words("Summary: the build is red since the merge.") == "Summary: the build is red since the merge."
    mine = "Summary:\n1. the export fails\n2. the report is empty\n\nCan you fix both?"
    assert own_words(mine) == mine  # a list of the user's own


def test_the_memory_of_the_ask_after_a_bare_summary_is_recalled(rs):
    offline = "An inverter is marked offline after 3 missed heartbeats; devices send a heartbeat every 90 seconds."
    about_summary = ("The dashboard's SiteCard component renders one site's tile.",
                     "Snapshot tests of the dashboard are updated with the -u flag.",
                     "Storybook stories of the dashboard live next to each component.",
                     "Dark-mode colours of the dashboard come from the slate palette.")
    store, services = rs
    for s in (offline, *about_summary, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    got = [s.cand.statement for s in services.recaller(RankConfig()).recall(Viewer("acme", user="dev"), BARE).items]
    assert got == [offline]


def test_two_words_joined_by_a_dot_are_a_name_written_apart_a_file_is_none():
    out = "4e1a9d2 priya.raman 2026-12-01 aim: tighten threshold\nsed -n 1,9p values.yaml\nlog(inverter.serial)"
    assert names_of(out).apart == ("priya raman", "inverter serial")


def test_an_authors_handle_in_a_log_finds_the_memory_naming_the_owner(rs):
    owner = ("The anti-cheat pipeline (services/sentinel) is owned by Priya Raman's integrity team; false-ban "
             "reports go to #integrity-oncall, not #backend.")
    store, services = rs
    for s in (owner, *OTHERS, "Ban appeals are rows in the Postgres table integrity.appeals.",
              "Player ratings use Glicko-2 with a system constant tau of 0.5."):
        put_memory(store, "acme", s, kind="fact", user="dev")
    log = ("4e1a9d2 priya.raman 2026-12-01 aim: tighten snap-angle threshold\n"
           "b77c013 j.okafor 2026-11-28 replay sampler: skip bot matches\n")
    got = services.recaller(RankConfig()).recall_output(
        Viewer("acme", user="dev"), "one of these commits is banning legit players since yesterday. who do I ping?",
        log)
    assert [s.cand.statement for s in got.items] == [owner]
