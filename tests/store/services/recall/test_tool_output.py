"""What a tool's output adds to a turn's query: its rare identifiers a visible memory holds,
never its words (real LMDB store and SQLite index)."""
from __future__ import annotations

import itertools
import json

from memhelp import put_memory

from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.services.recall.tool_output import names_of, searched_for
from ctxproxy.store.sqlite_index import Viewer

LOG = ("tests/integration/test_uploads.py::test_put_object FAILED\n"
       "E   botocore.exceptions.EndpointConnectionError: Could not connect to \"http://localhost:4566/\"\n"
       + "".join(f"2026-12-01T07:{m:02d}:11Z WARN retry {m} queue depth {m * 7} in 12.31s\n" for m in range(40))
       + "TARGET = ('ingest.fleet.internal', 5000) via 127.0.0.1:9000; flags --max-depth=8 LOCALSTACK_HOST E731\n"
       "services/api.py:1088: in create_order\n==== 1 failed, 318 passed in 94.02s ====")


def test_only_identifiers_and_numbers_given_as_values_never_words_times_or_counts():
    found = names_of(LOG).identifiers
    assert {"4566", "9000", "localstack_host", "maxdepth", "e731", "test_put_object"} <= set(found)
    # plain words, a time's pieces, a year, a size, a count, a file's line, a number alone: none of them
    assert not {"could", "connect", "retry", "queue", "depth", "warn", "2026", "11z", "31s", "12", "318", "1088",
                "5000"} & set(found)
    assert names_of(LOG).dotted == ("botocore.exceptions.endpointconnectionerror", "ingest.fleet.internal")


def test_codex_json_wrapper_is_not_the_tools_output():
    wrapped = json.dumps({"output": "KEY_ID = 'whk-2026-08'\n", "metadata": {"exit_code": 0}})
    assert names_of(wrapped).identifiers == ("key_id",)


def test_recall_output_finds_what_the_output_names_and_only_what_few_memories_hold(rs):
    store, services = rs
    want = put_memory(store, "acme", "The mock S3 for local runs is localstack.internal:4566.", kind="fact", user="al")
    host = put_memory(store, "acme", "GPS trackers report to ingest.fleet.internal on port 5094.", kind="fact",
                      user="al")
    put_memory(store, "acme", "Bob's proxy listens on 9000.", kind="fact", user="bob")  # not visible to al
    for i in range(30):  # a number every memory holds tells none apart
        put_memory(store, "acme", f"Nightly job {i} runs on 5000 workers of pool {chr(97 + i % 26)}x.", kind="fact",
                   user="al")
    services.prepare(RankConfig(), sync=True)
    recaller = services.recaller(RankConfig())
    viewer = Viewer("acme", user="al")
    got = recaller.recall_output(viewer, "Run the uploads suite and fix whatever breaks.", LOG)
    ids = [s.cand.memory_id for s in got.items]
    assert want.memory_id in ids and host.memory_id in ids
    assert not any("Nightly job" in s.cand.statement or "Bob's" in s.cand.statement for s in got.items)
    # the words name the port already: the first recall weighed it, the output adds nothing of it
    again = recaller.recall_output(viewer, "what needs port 4566?", "connect to http://localhost:4566/ refused")
    assert again.items == []
    # an output naming nothing a visible memory holds recalls nothing
    assert recaller.recall_output(viewer, "fix it", "connection refused on 127.0.0.1:7777").items == []


def test_recall_output_reads_no_output_when_the_caller_may_see_no_memory(rs, monkeypatch):
    """Nothing visible is decided from the index's kept counts before the output is read;
    once a memory is visible the same output is read and recalls it."""
    from ctxproxy.store.services.recall import tool_output

    store, services = rs
    put_memory(store, "acme", "Bob's mock S3 for local runs is localstack.internal:4566.", kind="fact", user="bob")
    services.prepare(RankConfig(), sync=True)
    recaller = services.recaller(RankConfig())
    reads: list[str] = []
    real = tool_output.read
    monkeypatch.setattr(tool_output, "read", lambda text, *a: reads.append(text) or real(text, *a))
    al = Viewer("acme", user="al")
    assert recaller.recall_output(al, "Run the uploads suite.", LOG).items == []
    assert reads == []  # al may see no memory (bob's is bob's): the 40-line log was not read
    mine = put_memory(store, "acme", "The mock S3 for local runs is localstack.internal:4566.", kind="fact", user="al")
    services.prepare(RankConfig(), sync=True)
    got = recaller.recall_output(al, "Run the uploads suite.", LOG)
    assert [s.cand.memory_id for s in got.items] == [mine.memory_id]
    assert reads == [LOG]  # both judgments, every kind of name: the output was read once


def test_compound_names_written_apart_and_versioned_names_stems():
    out = ("ALTER TABLE accounts ADD COLUMN card_number varchar(19);\nR2_BUCKET=media-dev\n"
           "topic: orders.events.v2\nserviceDay a_b x-1")
    assert names_of(out).apart == ("card number", "r2 bucket", "media dev", "service day")  # a_b, x-1: no word
    assert names_of(out).stems == ("orders.events.v",)
    # a release's number, a format's, a host with a digit: no version to leave out
    assert names_of("pain.001.001.09 gs-euw-0412 python3.11").stems == ()


FACTS = ("Order status changes are published to the Kafka topic orders.status.v4, keyed by order_id.",
         "Card numbers are never stored: accounts keep the processor's token in accounts.token_ref.",
         "Checkout retries are capped on purpose (RETRY_CAP_SECONDS = 40) after the 2025 incident review.")
# memories about the same orders, sharing the requests' words and answering none of them
OTHERS = ("Order confirmation emails use the order-placed template.", "Orders over 500 EUR need a manual review.",
          "Order exports run nightly to the finance bucket.", "The order search page is built with Vue.",
          "Refunds of an order are issued by the payments team.", "The checkout page shows three payment options.",
          "Order events are kept for 400 days.", "The orders service is written in Go.",
          "Load tests for checkout run against the perf cluster.", "The capacity review happens every quarter.",
          "Support answers order questions in Zendesk.", "Order ids are shown to customers as 8 characters.")


def _orders(rs):
    store, services = rs
    facts = [put_memory(store, "acme", s, kind="fact", user="al") for s in FACTS]
    for s in OTHERS:
        put_memory(store, "acme", s, kind="fact", user="al")
    words = "capacity estimate cluster minute worker shift generated queue latency batch".split()
    for i, (a, b) in enumerate(itertools.combinations(words, 2)):  # a request's words, each in several memories
        put_memory(store, "acme", f"The {a} and {b} notes of team {i} are in the wiki.", kind="fact", user="al")
    services.prepare(RankConfig(), sync=True)
    return facts, services.recaller(RankConfig()), Viewer("acme", user="al")


def test_one_rare_identifier_of_the_output_is_recalled_however_long_the_request(rs):
    """The output recall is judged on what the output points at: beside a request of many
    words, one rare identifier it names was under the chance floor and never recalled (the
    memory shares one word of the request, "checkout": what the turn is about too)."""
    (_, _, cap), recaller, al = _orders(rs)
    ask = ("generate the capacity estimate for the new checkout cluster: how many orders per minute can one worker "
           "take in an 8h shift, at what queue latency and batch size? use whatever the service is configured with")
    got = recaller.recall_output(al, ask, '41:RETRY_CAP_SECONDS = env.int("RETRY_CAP_SECONDS", default=30)\n')
    assert [s.cand.memory_id for s in got.items] == [cap.memory_id]


def test_a_versioned_name_finds_the_memory_of_its_current_version(rs):
    (topic, _, _), recaller, al = _orders(rs)
    got = recaller.recall_output(al, "the new notifier consumer of order status changes receives nothing. check it",
                                 "bootstrap: kafka-orders:9092\ntopic: orders.status.v2\ngroup: notifier\n")
    assert [s.cand.memory_id for s in got.items] == [topic.memory_id]


def test_a_compound_name_finds_the_memory_that_writes_its_words_apart(rs):
    (_, card, _), recaller, al = _orders(rs)
    migration = ("ALTER TABLE accounts ADD COLUMN card_number varchar(19);\n"
                 "CREATE INDEX accounts_card_number_idx ON accounts (card_number);\n")
    got = recaller.recall_output(al, "Someone opened this migration for the card search, review it first.", migration)
    assert [s.cand.memory_id for s in got.items] == [card.memory_id]
    # the user's words name both of its words: the first recall weighed them, the output adds nothing
    again = recaller.recall_output(al, "does the card number column follow our rules?", migration)
    assert card.memory_id not in [s.cand.memory_id for s in again.items]


def test_an_identifier_of_common_words_only_names_no_one_memory(rs):
    """``order_id`` where most memories are about orders is a field every record has: the one
    memory that happens to name it is not what the output points at."""
    _, recaller, al = _orders(rs)
    got = recaller.recall_output(al, "why does this line fail?", 'log.info("placed", order_id=o.id)\n')
    assert got.items == []


def test_a_compound_name_the_output_points_at_needs_a_word_of_the_turn(rs):
    """A memory that writes apart a compound the output names, and shares no word of the turn, is
    about the thing the output names, not what the turn asks ("test is failing, fix it")."""
    store, _ = rs
    budget = put_memory(store, "acme", "The retry budget of a checkout grows with the cart's size.", kind="fact",
                        user="al")
    _, recaller, al = _orders(rs)
    out = "E   assert retry_budget(cart) == 3\nE    +  where 2 = retry_budget(cart)\n1 failed in 0.2s\n"
    assert recaller.recall_output(al, "test is failing, fix it", out).items == []
    got = recaller.recall_output(al, "the checkout test is failing, fix it", out)
    assert [s.cand.memory_id for s in got.items] == [budget.memory_id]


def test_what_the_agent_searched_the_output_for_is_a_word_of_the_turn(rs):
    """"make these log lines compliant" shares no word with the memory the output points at, but
    the agent grepped the output for what the turn needs: the pattern counts as a turn's word, the
    command's paths do not."""
    store, _ = rs
    budget = put_memory(store, "acme", "The retry budget of a checkout grows with the cart's size.", kind="fact",
                        user="al")
    _, recaller, al = _orders(rs)
    out = "41:    log.info(\"retrying %s\", retry_budget(cart))\n"
    assert recaller.recall_output(al, "make these log lines compliant", out).items == []
    searched = searched_for([{"command": "grep -n 'checkout' services/orders/retry.py"}])
    got = recaller.recall_output(al, "make these log lines compliant", out, searched=searched)
    assert [s.cand.memory_id for s in got.items] == [budget.memory_id]
    # a path the command names is where it looked, not what it looked for
    elsewhere = searched_for([{"command": "cat services/checkout/retry.py"}])
    assert elsewhere == "" and recaller.recall_output(al, "make these log lines compliant", out,
                                                      searched=elsewhere).items == []


def test_the_patterns_a_call_searched_for():
    calls = [{"command": 'rg -n "SLOT" scheduler/settings.py'},
             {"command": ["bash", "-lc", "grep -n 'serial' fleet_api_py/handlers/claims.py"]},
             {"pattern": "redact_", "path": "src/"},  # a search tool's pattern
             {"command": "cat x.yaml | grep -A 3 -e topic"}, {"command": "git grep -n --include=*.py retry_cap"},
             {"command": "pytest tests/test_travel.py -x"},
             {"command": "grep 'unclosed"},  # an unclosed quote: its word
             "not a mapping"]
    assert searched_for(calls).split("\n") == ["SLOT", "serial", "redact_", "topic", "retry_cap", "unclosed"]
    assert searched_for([{"command": "ls -la && cat README.md"}]) == ""


def test_a_compound_name_is_looked_up_beside_many_dotted_and_versioned_names(rs):
    """An output naming many dotted and versioned names still has its compound name written
    apart looked up: the bound on substrings of one lookup takes each kind of name in turn,
    not the first kinds until it is full."""
    (_, card, _), recaller, al = _orders(rs)
    hosts = "".join(f"-- replica {h}.eu.internal\n" for h in ("cache", "mq", "search", "ledger"))
    tables = "".join(f"-- copied from {t}_rows_v2\n" for t in ("audit", "billing", "payout", "refund"))
    migration = ("ALTER TABLE accounts ADD COLUMN card_number varchar(19);\n" + hosts + tables)
    got = recaller.recall_output(al, "Someone opened this migration for the card search, review it first.", migration)
    assert [s.cand.memory_id for s in got.items] == [card.memory_id]


def test_substrings_of_each_kind_keep_a_place_within_the_bound():
    from ctxproxy.store.services.recall.query import MAX_SUBSTRINGS, interleave

    dotted = tuple(f"host{i}.eu.internal" for i in range(MAX_SUBSTRINGS))
    got = interleave(dotted, ("accounts.token_ref",))  # an output's many names beside the turn's one identifier
    assert len(got) == MAX_SUBSTRINGS and got[:3] == (dotted[0], "accounts.token_ref", dotted[1])
    assert interleave(("a", "b", "c"), ("x",), ("y", "b"), limit=None) == ("a", "x", "y", "b", "c")
