"""The memory index's substring search runs within the viewer's tenant, and
an index made in an older layout is indexed again from the change feed."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.memory_index import FORMAT, MemoryIndex
from ctxproxy.store.memory_terms import fts_phrase
from ctxproxy.store.sqlite_index import Viewer, trigram_token


def test_a_substring_is_matched_within_the_viewers_tenant_and_an_older_layout_is_indexed_again(tmp_path):
    store = open_store(tmp_path / "store")
    try:
        for tenant in ("acme", "globex"):
            put_memory(store, tenant, "The consumer loop is KafkaConsumerLoop in ingest/.", kind="fact")
        index = MemoryIndex.open(tmp_path, store)
        index.catch_up()
        for tenant in ("acme", "globex"):
            found, _ = index.search(Viewer(tenant), [], ["ConsumerLoop"])
            assert [c.statement for c in found] == ["The consumer loop is KafkaConsumerLoop in ingest/."]
        assert index.search(Viewer("initech"), [], ["ConsumerLoop"])[0] == []
        con = index.file.db()
        match = f'tacl : {fts_phrase(trigram_token("acme"))} AND statement : {fts_phrase("ConsumerLoop")}'
        hits = con.execute("SELECT x.tenant FROM mem_tri t JOIN mem x ON x.rowid = t.rowid WHERE mem_tri MATCH ?",
                           (match,)).fetchall()
        assert hits == [("acme",)]  # the substring index itself answers with the tenant's rows only
        con.execute("UPDATE meta SET v = '5' WHERE k = 'format'")  # as an earlier release left it
        index.file.close()
        index = MemoryIndex(tmp_path / "recall" / "memories.db", store)  # the next process's open
        assert index.file.meta("format") == FORMAT
        index.catch_up()
        found, _ = index.search(Viewer("acme"), [], ["ConsumerLoop"])
        assert [c.statement for c in found] == ["The consumer loop is KafkaConsumerLoop in ingest/."]
    finally:
        store.close()


def test_events_of_one_session_written_at_one_time_are_each_others_context_in_written_order(tmp_path):
    # An importer writes every turn of a session with the session's date: the order they
    # were written in is their order, and each turn's context is the two turns on each side.
    store = open_store(tmp_path / "store")
    try:
        words = ["alpha", "bravo", "kilo", "delta", "oscar", "tango", "zulu"]
        recs = [put_memory(store, "acme", f"Turn {w}.", kind="event", user="u", observed_at=1_700_000_000.0,
                           evidence_sessions=("s1",)) for w in words]
        index = MemoryIndex.open(tmp_path, store)
        index.catch_up()

        def contexts() -> dict[str, set[str]]:
            rows = index.file.db().execute("SELECT statement, ctx FROM mem").fetchall()
            return {statement.split()[1].rstrip("."): set(c.split()) - {"turn", "november", "2023"} for statement, c in rows}

        def around(order: list[str], i: int) -> set[str]:
            return {x for j, x in enumerate(order) if j != i and abs(j - i) <= 2}

        got = contexts()
        for i, w in enumerate(words):
            assert got[w] == around(words, i), w
        store.memories.put(recs[3].evolve(status="deleted"))  # the middle turn leaves the index
        index.catch_up()
        rest = words[:3] + words[4:]
        got = contexts()
        assert "delta" not in got
        for i, w in enumerate(rest):
            assert got[w] == around(rest, i), w
    finally:
        store.close()


def test_a_catch_up_with_nothing_new_reads_no_sqlite_once_the_watermark_was_seen(tmp_path):
    # Recall asks for a catch-up on every turn: with the feed where the index already was,
    # only the store's feed position is read; a memory written later is still indexed.
    store = open_store(tmp_path / "store")
    try:
        put_memory(store, "acme", "The consumer loop lives in ingest/.", kind="fact")
        index = MemoryIndex.open(tmp_path, store)
        assert index.catch_up() == 1
        statements: list[str] = []
        con = index.file.db()
        con.set_trace_callback(statements.append)
        try:
            assert index.catch_up() == 0
            assert statements == []
            put_memory(store, "acme", "The producer loop lives in emit/.", kind="fact")
            assert index.catch_up() == 1
        finally:
            con.set_trace_callback(None)
        found, _ = index.search(Viewer("acme"), ["producer"])
        assert [c.statement for c in found] == ["The producer loop lives in emit/."]
    finally:
        store.close()


def test_a_tenants_revision_moves_when_another_process_indexed_its_change(tmp_path):
    # Two indexes of one file, as two workers' are: the one that did not apply a change
    # cannot tell whose it was, so every tenant's revision moves there.
    store = open_store(tmp_path / "store")
    try:
        mine, theirs = MemoryIndex.open(tmp_path, store), MemoryIndex(tmp_path / "recall" / "memories.db", store)
        before = (mine.revision("acme"), mine.revision("globex"))
        put_memory(store, "acme", "The consumer loop lives in ingest/.", kind="fact")
        assert theirs.catch_up() == 1
        after = (mine.revision("acme"), mine.revision("globex"))
        assert after[0] != before[0] and after[1] != before[1]
        assert (mine.revision("acme"), mine.revision("globex")) == after  # nothing since
        put_memory(store, "acme", "The producer loop lives in emit/.", kind="fact")
        assert mine.revision("acme") != after[0] and mine.revision("globex") == after[1]  # its own: that tenant
    finally:
        store.close()



def test_a_viewer_found_seeing_no_memory_sees_one_written_since_by_whichever_process(tmp_path, monkeypatch):
    # "Nothing visible" is kept under the tenant's revision, so a tenant without memories costs its
    # new turns no read of the index file; a memory written since ends it, whether this index applied
    # it or another worker's did (this one then only learns that the feed moved past it).
    import time

    import ctxproxy.store.memory_index as memory_index

    store = open_store(tmp_path / "store")
    try:
        mine, theirs = MemoryIndex.open(tmp_path, store), MemoryIndex(tmp_path / "recall" / "memories.db", store)
        now = time.time()
        acme, globex = Viewer("acme"), Viewer("globex")
        assert mine.nothing_visible(acme, now)
        reads = []
        version = memory_index._version
        monkeypatch.setattr(memory_index, "_version", lambda con: reads.append(con) or version(con))
        assert mine.nothing_visible(acme, now) and reads == []  # kept: the file not read
        put_memory(store, "acme", "The consumer loop lives in ingest/.", kind="fact")
        assert theirs.catch_up() == 1  # another worker indexed it first
        assert not mine.nothing_visible(acme, now) and not mine.nothing_visible(acme, now)
        assert mine.nothing_visible(globex, now)
        put_memory(store, "globex", "The producer loop lives in emit/.", kind="fact", user="ana")
        assert not mine.nothing_visible(Viewer("globex", user="ana"), now)  # applied by this index
        assert mine.nothing_visible(Viewer("globex", user="bob"), now)  # another user's memory stays out of view
    finally:
        store.close()


def test_indexed_text_gives_the_same_terms_and_analyses_a_word_seen_before_once():
    from ctxproxy.store.memory_terms import cached_token_terms, terms

    text = ("The parse_body helper of HTTPServerLoop re-reads 東京都の設定 and 2 stories; "
            "token " + "Zq9" * 20 + " camelCaseWord")
    uncached = terms(text, frozenset({"\x00none"}))  # a drop set that drops nothing: analysed word by word
    assert terms(text) == uncached
    before = cached_token_terms.cache_info()
    assert terms(text) == uncached
    after = cached_token_terms.cache_info()
    assert after.misses == before.misses and after.hits > before.hits  # every short word: a lookup
