"""Recall's memory index in PostgreSQL: the same candidates, statistics and
ranking as the embedded SQLite index over the same memories; another
tenant's memories are neither candidates nor counted; an erasure or a new
revision takes the old rows with it; ``store upgrade`` indexes the memories
a database held before the index existed."""
from __future__ import annotations

import inspect
import random

import psycopg
import pytest
from memhelp import put_memory

from ctxproxy.store import open_store
from ctxproxy.store.forget import forget
from ctxproxy.store.memory_index import MemoryIndex, open_memory_index
from ctxproxy.store.memory_terms import terms
from ctxproxy.store.postgres import PGStore, upgrade
from ctxproxy.store.postgres.recall_index import PGMemoryIndex
from ctxproxy.store.services.recall.recaller import Recaller
from ctxproxy.store.sqlite_index import Viewer

NOW = 1_760_000_000.0
WORDS = ("staging cluster deploy kafka consumer lag alice bob paris tokyo budget invoice migration schema "
         "rollback canary pager oncall retro design review latency postgres index vacuum replica lease").split()
QUERIES = ["which cluster does alice deploy to", "kafka consumer lag on the replica", "paris budget invoice",
           "who is oncall for the pager", "postgres vacuum and index", "the KafkaConsumer loop", "tokyo retro"]


def corpus(seed: int = 7) -> list[dict]:
    """Facts of two users and the project, and events of three conversations
    (each turn of a session at one time: neighbours by written order), some expiring."""
    rnd = random.Random(seed)
    out = []
    for i in range(120):
        user = rnd.choice(("alice", "bob", ""))
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(4, 12)))
        out.append({"statement": f"{text} KafkaConsumerLoop{i % 3}" if i % 10 == 0 else text, "kind": "fact",
                    "user": user, "observed_at": NOW - rnd.randint(0, 400) * 86400.0,
                    "expires_at": NOW + 3600 if i % 17 == 0 else (NOW - 60 if i % 23 == 0 else None)})
    for s in range(3):
        when = NOW - (30 - s) * 86400.0
        for t in range(25):
            text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 9)))
            text += "?" if t % 4 == 1 else ""  # a question: its reply (the next turn) ranks with it
            out.append({"statement": f"{'Alice' if t % 2 else 'Bob'}: {text}", "kind": "event", "user": "alice",
                        "observed_at": when, "evidence_sessions": (f"conv-s{s}",), "external_id": f"D{s}:{t}"})
    return out


def fill(store, tenant: str, rows: list[dict]) -> dict[str, str]:
    """The rows as memories of ``tenant``; memory id -> the row's position (ids differ between stores)."""
    return {put_memory(store, tenant, r["statement"], **{k: v for k, v in r.items() if k != "statement"}).memory_id:
            str(i) for i, r in enumerate(rows)}


def viewers(tenant: str) -> list[Viewer]:
    return [Viewer(tenant, user="alice"), Viewer(tenant, user="bob"), Viewer(tenant)]


def assert_same_search(sqlite, pos_l, pgi, pos_p, viewer, words, subs, limit) -> int:
    """Both indexes find the same candidates (by the rows' places) and statistics; returns how many."""
    a, sa = sqlite.search(viewer, words, subs, now=NOW, limit=limit)
    b, sb = pgi.search(viewer, words, subs, now=NOW, limit=limit)
    assert (sa.docs, sa.avg_terms, sa.avg_ctx, sa.df) == (sb.docs, sb.avg_terms, sb.avg_ctx, sb.df)
    key = lambda cands, pos: sorted((pos[c.memory_id], c.statement, c.terms, c.ctx, c.nctx,  # noqa: E731
                                     c.scope, c.observed_at, c.evergreen, c.sensitivity, c.near != "") for c in cands)
    assert key(a, pos_l) == key(b, pos_p), (words, subs, limit)
    return len(a)


def assert_same_ranking(sqlite, pos_l, pgi, pos_p) -> None:
    """Every viewer and query of the corpus: the same candidates at every pool size, the same recall."""
    compared = 0
    for viewer in viewers("acme"):
        for query in QUERIES:
            words = [w for w in query.lower().split() if len(w) > 2]
            subs = ["KafkaConsumer"] if "Kafka" in query else []
            for limit in (300, 12, 3):  # a small pool: which rows and neighbours fit follows the same order
                assert_same_search(sqlite, pos_l, pgi, pos_p, viewer, words, subs, limit)
            ra = Recaller(sqlite).recall(viewer, query, k=5, as_of=NOW)
            rb = Recaller(pgi).recall(viewer, query, k=5, as_of=NOW)
            assert [(pos_l[s.cand.memory_id], round(s.score, 9)) for s in ra.items] == \
                   [(pos_p[s.cand.memory_id], round(s.score, 9)) for s in rb.items], query
            compared += len(ra.items)
    assert compared > 30  # the queries found things to compare


def statements_sent(monkeypatch) -> list[str]:
    """Every query the store sends from now on: one round trip each (simple queries, bound on the client)."""
    sent: list[str] = []
    real = psycopg.ClientCursor.execute

    def execute(self, query, params=None, **kw):
        sent.append(str(query))
        return real(self, query, params, **kw)

    monkeypatch.setattr(psycopg.ClientCursor, "execute", execute)
    return sent


@pytest.fixture
def both(pg_dsn, tmp_path):
    lm = open_store(tmp_path / "store")
    pg = PGStore.open(pg_dsn, listen=False)
    yield lm, pg
    lm.close()
    pg.close()


def test_the_database_index_ranks_exactly_as_the_embedded_index(both, tmp_path):
    lm, pg = both
    rows = corpus()
    pos_l, pos_p = fill(lm, "acme", rows), fill(pg, "acme", rows)
    sqlite, pgi = MemoryIndex.open(tmp_path, lm), open_memory_index(tmp_path, pg)
    assert isinstance(pgi, PGMemoryIndex) and pgi is pg.memory_index()  # one per store, none on disk
    sqlite.catch_up()
    assert_same_ranking(sqlite, pos_l, pgi, pos_p)
    docs, df = pgi.doc_freqs(Viewer("acme", user="alice"), ["kafka", "nowhere"], NOW)
    assert (docs, df) == sqlite.doc_freqs(Viewer("acme", user="alice"), ["kafka", "nowhere"], NOW)
    for viewer in viewers("acme"):  # a word's forms: the same completions (first in byte order) and counts
        for limit in (8, 1):
            args = (viewer, ["kafka", "nowhere"], ["roll", "post", "lat", "zzz"], NOW, (), limit)
            assert pgi.word_forms(*args) == sqlite.word_forms(*args) and sqlite.word_forms(*args)[2]
    assert pgi.rebuild() == sqlite.count("acme") == pgi.count("acme")  # the rebuilt index is the same index
    assert [c.memory_id for c in pgi.search(Viewer("acme", user="alice"), ["kafka"], now=NOW)[0]]


def test_another_tenants_memories_never_rank_and_are_never_counted(both, tmp_path):
    _, pg = both
    index = pg.memory_index()
    fill(pg, "acme", corpus(1))
    viewer = Viewer("acme", user="alice")
    before = {q: index.search(viewer, q.split(), ["KafkaConsumer"], now=NOW) for q in QUERIES}
    freqs = index.doc_freqs(viewer, WORDS, NOW)
    # globex holds the same words, many times over, under the same user name
    fill(pg, "globex", corpus(2) + [{"statement": "kafka kafka alice KafkaConsumerLoop9 globex-secret",
                                     "kind": "fact", "user": "alice"}] * 5)
    assert index.doc_freqs(viewer, WORDS, NOW) == freqs
    for q in QUERIES:
        found, stats = index.search(viewer, q.split(), ["KafkaConsumer"], now=NOW)
        old_found, old_stats = before[q]
        assert stats == old_stats and [c.memory_id for c in found] == [c.memory_id for c in old_found]
        assert all("globex" not in c.statement for c in found)
    assert index.fetch(viewer, [m.memory_id for m in pg.memories.list("globex")], NOW) == []
    rec = Recaller(index).recall(viewer, "globex-secret kafka", k=5, as_of=NOW)
    assert all(pg.memories.get("acme", s.cand.memory_id) is not None for s in rec.items)
    # The database itself: a transaction of acme sees none of globex's index rows, none without a tenant.
    with psycopg.connect(index._store._pool.dsn, autocommit=True) as conn:
        for table in ("recall_memories", "recall_postings", "recall_df", "recall_parts"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
            with conn.transaction():
                conn.execute("SELECT set_config('ctxproxy.tenant', 'acme', true)")
                assert conn.execute(f"SELECT count(*) FROM {table} WHERE tenant <> 'acme'").fetchone()[0] == 0


def test_a_new_revision_and_an_erasure_take_their_index_rows_with_them(both):
    _, pg = both
    index = pg.memory_index()
    viewer = Viewer("acme", user="alice")
    rec = put_memory(pg, "acme", "Alice keeps the zebra runbook in the wiki.", user="alice", kind="fact")
    put_memory(pg, "acme", "Bob reviews the zebra budget.", user="alice", kind="fact")
    assert len(index.search(viewer, ["zebra"], now=NOW)[0]) == 2
    pg.memories.put(rec.evolve(statement="Alice keeps the okapi runbook in the wiki."), expected_revision=1)
    found, stats = index.search(viewer, ["zebra", "okapi"], now=NOW)
    assert stats.df == {"zebra": 1, "okapi": 1} and len(found) == 2
    pg.memories.put(pg.memories.get("acme", rec.memory_id).evolve(status="superseded"), expected_revision=2)
    assert index.search(viewer, ["okapi"], now=NOW)[0] == []  # not servable: not indexed
    forget(pg, "acme", {"user": "alice"})
    assert index.search(viewer, ["zebra"], now=NOW)[0] == [] and index.count("acme") == 0
    assert index.stats(viewer, NOW).docs == 0
    with psycopg.connect(index._store._pool.dsn, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('ctxproxy.tenant', 'acme', true)")
        for table in ("recall_memories", "recall_postings", "recall_df", "recall_parts"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


def test_store_upgrade_indexes_the_memories_a_database_held_before(pg_server, pg_dsn):
    st = PGStore.open(pg_dsn, listen=False)
    try:
        put_memory(st, "acme", "Alice deploys through the staging cluster first.", user="alice", kind="fact")
    finally:
        st.close()
    db = pg_dsn.rsplit("/", 1)[1]
    # The database as a release without the index left it: no index tables, none of their functions.
    pg_server.admin("DROP FUNCTION recall_search, recall_doc_freqs, recall_fetch, recall_visible, recall_counts; "
                    "DROP TABLE recall_memories, recall_postings, recall_df, recall_parts; "
                    "DELETE FROM ctx_schema WHERE version IN (3, 5)", db=db)
    with pytest.raises(Exception, match="store upgrade"):
        PGStore.open(pg_dsn, listen=False)
    assert upgrade(pg_dsn) == ["0003_recall_index.sql", "0005_recall_search.sql"]
    st = PGStore.open(pg_dsn, listen=False)
    try:
        found, stats = st.memory_index().search(Viewer("acme", user="alice"), terms("staging"), now=NOW)
        assert [c.statement for c in found] == ["Alice deploys through the staging cluster first."]
        assert stats.docs == 1
    finally:
        st.close()


def test_a_memory_written_on_one_replica_is_ranked_by_the_others_index_at_once(pg_dsn):
    a, b = PGStore.open(pg_dsn, listen=False), PGStore.open(pg_dsn, listen=False)
    try:
        viewer = Viewer("acme", user="alice")
        put_memory(a, "acme", "Alice deploys through the staging cluster first.", user="alice", kind="fact")
        found, stats = b.memory_index().search(viewer, terms("staging cluster"), now=NOW)  # b caches its counts
        assert len(found) == 1 and stats.docs == 1
        put_memory(a, "acme", "The staging cluster is in Frankfurt.", user="alice", kind="fact")
        put_memory(a, "acme", "Bob's notes.", user="bob", kind="fact")  # a partition b has not seen yet
        found, stats = b.memory_index().search(viewer, terms("staging cluster"), now=NOW)
        assert len(found) == 2 and stats.docs == 2 and stats.df[terms("staging")[0]] == 2  # not b's cached counts
        assert b.memory_index().stats(Viewer("acme", user="bob"), NOW).docs == 1
    finally:
        a.close()
        b.close()


def test_a_recall_is_at_most_three_round_trips(both, monkeypatch):
    _, pg = both
    fill(pg, "acme", corpus())
    index = pg.memory_index()
    sent = statements_sent(monkeypatch)
    found = 0
    for viewer in viewers("acme"):
        for query in QUERIES:
            sent.clear()
            found += len(Recaller(index).recall(viewer, query, k=5, as_of=NOW).items)
            # the other forms of its words the memories hold (word_forms), the search (partitions,
            # counts, frequencies, candidates, neighbours), then the frequencies of the best
            # candidates' own terms
            assert 1 <= len(sent) <= 3, (query, sent)
    assert found > 30
    for read in (lambda: index.search(Viewer("acme", user="alice"), ["kafka", "lag"], ["KafkaConsumer"], now=NOW),
                 lambda: index.doc_freqs(Viewer("acme", user="alice"), ["kafka", "lag"], NOW),
                 lambda: index.word_forms(Viewer("acme", user="alice"), ["kafka"], ["roll"], NOW),
                 lambda: index.stats(Viewer("acme", user="alice"), NOW)):
        sent.clear()
        assert read()
        assert len(sent) == 1
    # nothing visible: the search alone says so
    sent.clear()
    got = Recaller(index).recall(Viewer("globex", user="alice"), "kafka consumer lag", k=5, as_of=NOW)
    assert (got.items, got.candidates, len(sent)) == ([], 0, 1)


def test_a_batch_indexes_its_memories_with_its_commit_and_ranks_the_same(both, tmp_path, monkeypatch):
    lm, pg = both
    rows = corpus()
    random.Random(5).shuffle(rows)  # events between facts: an event is indexed after the facts before it
    pos_l = fill(lm, "acme", rows)
    sent = statements_sent(monkeypatch)
    with pg.batch() as b:
        pos_p = fill(b, "acme", rows)
    events = sum(r["kind"] == "event" for r in rows)
    runs = sum(1 for i, r in enumerate(rows) if r["kind"] != "event" and (i + 1 == len(rows)
                                                                          or rows[i + 1]["kind"] == "event"))
    assert sum(q.count("INSERT INTO recall_memories") for q in sent) == events + runs  # each run of facts: one
    sqlite = MemoryIndex.open(tmp_path, lm)
    sqlite.catch_up()
    assert_same_ranking(sqlite, pos_l, pg.memory_index(), pos_p)
    # facts alone: their index rows are one statement, sent with the COMMIT (no round trip of their own)
    sent.clear()
    with pg.batch() as b:
        for i in range(40):
            put_memory(b, "acme", f"The okapi note {i} for the pager.", user=("alice", "bob", "")[i % 3], kind="fact")
    carried = [q for q in sent if "INSERT INTO recall_memories" in q]
    assert len(carried) == 1 and carried[0].rstrip().endswith("COMMIT")
    assert pg.memory_index().doc_freqs(Viewer("acme", user="alice"), ["okapi"], NOW)[1] == {"okapi": 27}


def test_a_memory_revised_in_its_own_batch_is_indexed_as_it_ends(both):
    _, pg = both
    index = pg.memory_index()
    viewer = Viewer("acme", user="alice")
    with pg.batch() as b:
        rec = put_memory(b, "acme", "Alice keeps the zebra runbook in the wiki.", user="alice", kind="fact")
        put_memory(b, "acme", "Bob reviews the zebra budget.", user="alice", kind="fact")
        b.memories.put(rec.evolve(statement="Alice keeps the okapi runbook in the wiki."), expected_revision=1)
        put_memory(b, "acme", "The okapi pager rota.", user="alice", kind="fact")
    found, stats = index.search(viewer, ["zebra", "okapi", "runbook"], now=NOW)
    assert stats.docs == 3 and stats.df == {"zebra": 1, "okapi": 2, "runbook": 1}
    assert sorted(c.statement for c in found) == ["Alice keeps the okapi runbook in the wiki.",
                                                  "Bob reviews the zebra budget.", "The okapi pager rota."]
    forget(pg, "acme", {"user": "alice"})
    with psycopg.connect(index._store._pool.dsn, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('ctxproxy.tenant', 'acme', true)")
        for table in ("recall_memories", "recall_postings", "recall_df", "recall_parts"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


def test_frequent_words_only_score_the_candidates_on_both_indexes(both, tmp_path):
    lm, pg = both
    rows = [{"statement": f"common filler {WORDS[i % len(WORDS)]} marker{i % 7}", "kind": "fact", "user": "alice",
             "observed_at": NOW - i * 3600.0} for i in range(130)]
    pos_l, pos_p = fill(lm, "acme", rows), fill(pg, "acme", rows)
    sqlite = MemoryIndex.open(tmp_path, lm)
    sqlite.catch_up()
    viewer = Viewer("acme", user="alice")
    for words in (["common", "kafka", "marker3"], ["common", "filler"], ["marker1", "marker2", "common", "staging"]):
        for limit in (300, 40, 5):  # in more than a tenth and 100 of them; more than the pool; both
            assert assert_same_search(sqlite, pos_l, pg.memory_index(), pos_p, viewer, words, [], limit)


def test_a_tenants_revision_moves_with_every_change_of_its_memories_and_no_other(both, tmp_path):
    """What recall keys a repeated turn's result by: a write, a change of status and an
    erasure move it, on either index; another tenant's write does not."""
    lm, pg = both
    for store, index in ((lm, MemoryIndex.open(tmp_path, lm)), (pg, pg.memory_index())):
        seen = [index.revision("acme")]

        def moved() -> bool:
            seen.append(index.revision("acme"))
            return seen[-1] != seen[-2]

        put_memory(store, "globex", "Globex keeps the zebra runbook in the wiki.", user="alice", kind="fact")
        assert not moved()
        rec = put_memory(store, "acme", "Alice keeps the zebra runbook in the wiki.", user="alice", kind="fact")
        assert moved() and not moved()
        store.memories.put(rec.evolve(status="superseded"), expected_revision=1)
        assert moved()
        forget(store, "acme", {"memory": rec.memory_id})
        assert moved() and not moved()


def test_every_method_the_callers_use_takes_the_same_arguments_on_both_backends():
    """The filters call the memory index without knowing its backend: a parameter one backend's
    method lacks is a TypeError on every turn there (recall, an optional filter, would be skipped)."""
    differ = {}
    for name, method in inspect.getmembers(MemoryIndex, inspect.isfunction):
        other = getattr(PGMemoryIndex, name, None)
        if name.startswith("_") or other is None:
            continue
        mine, theirs = inspect.signature(method).parameters, inspect.signature(other).parameters
        if list(mine) != list(theirs):
            differ[name] = (list(mine), list(theirs))
    # catch_up(at) is the embedded index's own (called only inside it); PostgreSQL has no local feed
    assert differ == {"catch_up": (["self", "at"], ["self"])}
