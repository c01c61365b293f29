"""What a tool's output adds to a turn's query: its rare identifiers a visible memory holds,
never its words (real LMDB store and SQLite index)."""
from __future__ import annotations

import json

from memhelp import put_memory

from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.services.recall.tool_output import dotted_names, identifiers
from ctxproxy.store.sqlite_index import Viewer

LOG = ("tests/integration/test_uploads.py::test_put_object FAILED\n"
       "E   botocore.exceptions.EndpointConnectionError: Could not connect to \"http://localhost:4566/\"\n"
       + "".join(f"2026-12-01T07:{m:02d}:11Z WARN retry {m} queue depth {m * 7} in 12.31s\n" for m in range(40))
       + "TARGET = ('ingest.fleet.internal', 5000) via 127.0.0.1:9000; flags --max-depth=8 LOCALSTACK_HOST E731\n"
       "services/api.py:1088: in create_order\n==== 1 failed, 318 passed in 94.02s ====")


def test_only_identifiers_and_numbers_given_as_values_never_words_times_or_counts():
    found = identifiers(LOG)
    assert {"4566", "9000", "localstack_host", "maxdepth", "e731", "test_put_object"} <= set(found)
    # plain words, a time's pieces, a year, a size, a count, a file's line, a number alone: none of them
    assert not {"could", "connect", "retry", "queue", "depth", "warn", "2026", "11z", "31s", "12", "318", "1088",
                "5000"} & set(found)
    assert dotted_names(LOG) == ("botocore.exceptions.endpointconnectionerror", "ingest.fleet.internal")


def test_codex_json_wrapper_is_not_the_tools_output():
    wrapped = json.dumps({"output": "KEY_ID = 'whk-2026-08'\n", "metadata": {"exit_code": 0}})
    assert identifiers(wrapped) == ("key_id",)


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
    real = tool_output.identifiers
    monkeypatch.setattr(tool_output, "identifiers", lambda text, *a: reads.append(text) or real(text, *a))
    al = Viewer("acme", user="al")
    assert recaller.recall_output(al, "Run the uploads suite.", LOG).items == []
    assert reads == []  # al may see no memory (bob's is bob's): the 40-line log was not read
    mine = put_memory(store, "acme", "The mock S3 for local runs is localstack.internal:4566.", kind="fact", user="al")
    services.prepare(RankConfig(), sync=True)
    got = recaller.recall_output(al, "Run the uploads suite.", LOG)
    assert reads and [s.cand.memory_id for s in got.items] == [mine.memory_id]
