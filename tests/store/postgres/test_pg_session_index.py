"""The session index in PostgreSQL: the same trees, candidates, statistics
and ranking as the embedded SQLite index over the same turns; two replicas
search every turn of a session whichever answered it; another tenant's turns
are never found nor counted; forget takes the rows; ``store upgrade`` makes
the tables and copies a host's own index in (not what an erasure took);
``store migrate`` carries it both ways, counted and digested."""
from __future__ import annotations

import asyncio
import random
import subprocess
import sys

import aiohttp
import psycopg
import pytest

from ctxproxy.store import open_store
from ctxproxy.store.forget import forget
from ctxproxy.store.memory_index import MemoryIndex
from ctxproxy.store.memory_terms import query_terms
from ctxproxy.store.postgres import PGStore
from ctxproxy.store.postgres.session_index import PGSessionIndex
from ctxproxy.store.services.recall.query import substrings_of
from ctxproxy.store.services.recall.recaller import Recaller
from ctxproxy.store.session_index import SESSION_TREE, SESSION_TURNS, SessionIndex, TurnTexts, open_session_index
from ctxproxy.store.sqlite_index import Viewer

NOW = 1_760_000_000.0
TOKEN = "session-index-admin-token"
WORDS = ("staging cluster deploy kafka consumer lag paris tokyo budget invoice migration schema rollback canary "
         "pager oncall retro review latency postgres vacuum replica lease kestrel").split()
QUERIES = ["which cluster do we deploy to", "kafka consumer lag on the replica", "paris budget invoice",
           "who is oncall for the pager", "postgres vacuum", "the KafkaConsumer loop", "ERR_CONN_RESET kestrel"]
# (session, parent, user, purpose): two trees of alice, one of bob, a support purpose
SESSIONS = [("root", "", "alice", ""), ("child", "root", "alice", ""), ("grandchild", "child", "alice", ""),
            ("side", "root", "alice", "support"), ("other", "", "alice", ""), ("bobs", "", "bob", ""),
            ("forged", "root", "bob", "")]


INSERTS = {  # a row of another tenant, as acme
    "session_tree": "INSERT INTO session_tree (tenant, session, parent, user_id, project, first_seen) "
                    "VALUES ('globex', 'x', '', 'alice', '', 0)",
    "session_turns": "INSERT INTO session_turns (tenant, session, turn_id, role, user_id, project, purpose, "
                     "observed_at, text, terms, nterms) VALUES ('globex', 's', 't', 'user', 'alice', '', '', 0, "
                     "'x', 'x', 1)"}


def turns(tenant: str, seed: int = 3) -> list[TurnTexts]:
    rnd = random.Random(seed)
    out = []
    for i in range(160):
        session, _, user, purpose = SESSIONS[i % len(SESSIONS)]
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 14)))
        if i % 9 == 0:
            text += f" KafkaConsumerLoop{i % 4} failed with ERR_CONN_RESET"
        if i == 50:
            text += " a NUL\x00byte"  # kept as U+FFFD by both
        answer = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 8)))
        out.append(TurnTexts(tenant, session, f"t{i}", (("user", text), ("assistant", answer)), user, "",
                             purpose, NOW - (160 - i) * 60.0 + (i % 3)))
    return out


def fill(index, tenant: str, seed: int = 3) -> None:
    for session, parent, user, _ in SESSIONS:
        index.note_session(tenant, session, user, "", parent, now=NOW)
    rows = turns(tenant, seed)
    index.add_turns(rows[:100])
    index.add_turns(rows[100:])
    index.add_turns(rows[5:7])  # replayed turns replace their rows


@pytest.fixture
def pg(pg_dsn):
    st = PGStore.open(pg_dsn, listen=False)
    yield st
    st.close()


def test_the_database_index_finds_counts_and_ranks_as_the_embedded_index(pg, tmp_path):
    lm = open_store(tmp_path / "store")
    sqlite = SessionIndex(tmp_path / "sessions.db")
    pgi = open_session_index(tmp_path, pg)
    assert isinstance(pgi, PGSessionIndex) and pgi is pg.session_index()  # the database's, none on disk
    fill(sqlite, "acme")
    fill(pgi, "acme")
    compared = 0
    for session, parent, user, purpose in SESSIONS + [("new", "root", "alice", ""), ("new", "bobs", "alice", "")]:
        for who in ("alice", "bob"):
            assert pgi.tree_of("acme", session, who, parent) == sqlite.tree_of("acme", session, who, parent)
        tree = sqlite.tree("acme", session, user, parent)
        for widen in ("tree", "same_user"):
            viewer = Viewer("acme", user=user, purpose=purpose)
            wide = sqlite.visible_sessions(viewer, session, widen, parent)
            assert pgi.visible_sessions(viewer, session, widen, parent) == wide
            for query in QUERIES:
                words, subs = query_terms(query), substrings_of(query)
                for limit in (2000, 7):
                    a, sa = sqlite.search(viewer, words, subs, sessions=wide, limit=limit)
                    b, sb = pgi.search(viewer, words, subs, sessions=wide, limit=limit)
                    assert sa == sb and a == b, (session, query, limit)
                ra = Recaller(MemoryIndex.open(tmp_path, lm), sqlite).recall(
                    Viewer("acme", user=user, purpose=purpose, sessions=tree), query, k=5, as_of=NOW,
                    sessions=wide, memories=False)
                rb = Recaller(MemoryIndex.open(tmp_path, lm), pgi).recall(
                    Viewer("acme", user=user, purpose=purpose, sessions=tree), query, k=5, as_of=NOW,
                    sessions=wide, memories=False)
                assert [(s.cand.memory_id, round(s.score, 9)) for s in ra.items] == \
                       [(s.cand.memory_id, round(s.score, 9)) for s in rb.items], query
                compared += len(ra.items)
    assert compared > 100  # the queries found things to compare
    assert pgi.quiet_sessions("acme", after=0, until=NOW * 2) == sqlite.quiet_sessions("acme", after=0, until=NOW * 2)
    assert pgi.session_turns("acme", "child") == sqlite.session_turns("acme", "child")
    assert pgi.session_info("acme", "child") == sqlite.session_info("acme", "child")
    assert pgi.tenants() == sqlite.tenants() == ["acme"]
    for kind in (SESSION_TREE, SESSION_TURNS):
        assert sorted(map(repr, pgi.records(kind))) == sorted(map(repr, sqlite.records(kind)))
    sqlite.close()
    lm.close()


def test_another_tenants_turns_are_never_found_nor_counted(pg):
    index = pg.session_index()
    fill(index, "acme")
    viewer = Viewer("acme", user="alice")
    wide = index.visible_sessions(viewer, "root", "same_user")
    before = {q: index.search(viewer, query_terms(q), substrings_of(q), sessions=wide) for q in QUERIES}
    fill(index, "globex", seed=4)  # the same session ids, users and words, in another tenant
    index.add_turn("globex", "root", "g1", [("user", "kafka kafka kestrel ERR_CONN_RESET globex-secret")],
                   user="alice", observed_at=NOW)
    assert index.visible_sessions(viewer, "root", "same_user") == wide
    for q in QUERIES:
        assert index.search(viewer, query_terms(q), substrings_of(q), sessions=wide) == before[q]
    assert index.search(viewer, ["globex"], ["globex-secret"], sessions=wide)[0] == []
    # The database itself: no tenant set, no row; acme's transaction sees none of globex's.
    with psycopg.connect(pg._pool.dsn, autocommit=True) as conn:
        for table in ("session_tree", "session_turns"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
            with conn.transaction():
                conn.execute("SELECT set_config('ctxproxy.tenant', 'acme', true)")
                assert conn.execute(f"SELECT count(*) FROM {table} WHERE tenant <> 'acme'").fetchone()[0] == 0
                with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                    conn.execute(INSERTS[table])


def test_a_turn_indexed_in_the_writers_batch_adds_no_round_trip(pg, monkeypatch):
    from ctxproxy.store.postgres.pool import Tx

    trips: list[str] = []
    run = Tx._run
    monkeypatch.setattr(Tx, "_run", lambda tx, statement: (trips.append(statement), run(tx, statement))[1])

    def group(turn: str, index: bool) -> int:
        trips.clear()
        with pg.batch() as b:  # what the background writer's group does with a turn's records
            b.manifests.put("acme", turn, {"m": 1}, session="s1")
            if index:
                pg.session_index().add_turns([TurnTexts("acme", "s1", turn, (("user", "the okapi runbook"),
                                                                             ("assistant", "noted")), "alice")],
                                             batch=b)
        return len(trips)

    assert group("t1", index=True) == group("t2", index=False)
    found, _ = pg.session_index().search(Viewer("acme", "alice"), ["okapi"], sessions=("s1",))
    assert [c.memory_id for c in found] == ["turn:t1:user"]


def ask(proxy, text: str, session: str, tenant: str = "acme", **extra: str):
    headers = {"X-Ctx-Tenant": tenant, "X-Ctx-User": "alice", "X-Ctx-Session": session,
               **{f"X-Ctx-{k.replace('_', '-').title()}": v for k, v in extra.items()}}
    return proxy.anthropic(default_headers=headers).messages.create(
        model="m", max_tokens=20, messages=[{"role": "user", "content": text}])


async def search(proxy, q: str, session: str, tenant: str = "acme") -> list[dict]:
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.get(f"{proxy.url}/ctx/v1/sessions/search",
                            params={"q": q, "session": session, "tenant": tenant}) as r:
            assert r.status == 200
            return (await r.json())["hits"]


async def test_two_replicas_search_every_turn_of_a_session_and_forget_on_one_is_seen_by_both(
        make_proxy, pg_dsn, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    toml = f'[store]\nbackend = "postgres"\ndsn = "{pg_dsn}"\n'
    a = await make_proxy(toml, data_dir=str(tmp_path / "a"))
    b = await make_proxy(toml, data_dir=str(tmp_path / "b"))
    note = "Note: the rollout codename is Kestrel-77, it ships from the Frankfurt cluster."
    await ask(a, note, "s-alt")  # the session's turns alternate replicas
    a.settled_store()
    await ask(b, "Now check the canary budget in Tokyo.", "s-alt")
    b.settled_store()
    await ask(b, note, "s-alt", tenant="globex")  # another tenant's session of the same name
    b.settled_store()
    for proxy in (a, b):  # each replica finds the turns the other answered
        hits = await search(proxy, "Kestrel-77 codename", "s-alt")
        assert [h["text"] for h in hits if h["role"] == "user"][:1] == [note]
        assert any("Tokyo" in h["text"] for h in await search(proxy, "canary budget Tokyo", "s-alt"))
    # A sub-session answered by the other replica gets the parent's turn as evidence.
    await ask(a, "What is the rollout codename?", "s-child", parent_session="s-alt")
    assert "Kestrel-77" in str(fake.last.json) and "session:s-alt/turn:" in str(fake.last.json)
    sa, sb = a.settled_store(), b.settled_store()
    before = sa.session_index().generation()
    receipt = forget(sb, "acme", {"session": "s-alt"})
    assert receipt.counts["recall.sessions.session_index_turns"] >= 3  # two user turns and answers
    assert receipt.counts["recall.sessions.session_index_sessions"] == 1
    for proxy in (a, b):
        assert await search(proxy, "Kestrel-77 codename", "s-alt") == []
    assert await search(b, "Kestrel-77 codename", "s-alt", tenant="globex")  # globex's own session stays
    for _ in range(500):  # the erasure moved the security generation: A drops what it remembered
        if sa.session_index().generation() > before:
            break
        await asyncio.sleep(0.02)
    assert sa.session_index().generation() > before
    await ask(a, "What is the rollout codename?", "s-child", parent_session="s-alt")
    assert "Kestrel-77" not in str(fake.last.json)
    with psycopg.connect(pg_dsn, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT set_config('ctxproxy.tenant', 'acme', true)")
        assert conn.execute("SELECT count(*) FROM session_turns WHERE session = 's-alt'").fetchone()[0] == 0
        assert conn.execute("SELECT parent FROM session_tree WHERE session = 's-child'").fetchone()[0] == ""


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "store", *args],
                          capture_output=True, text=True, timeout=120)


def embedded(data_dir) -> SessionIndex:
    index = SessionIndex(data_dir / "recall" / "sessions.db")
    index.note_session("acme", "s1", "alice", now=NOW)
    index.note_session("acme", "s2", "bob", now=NOW)
    index.add_turns([TurnTexts("acme", "s1", "t1", (("user", "the okapi runbook lives in the wiki"),), "alice",
                               observed_at=NOW),
                     TurnTexts("acme", "s2", "t1", (("user", "bob's okapi budget is secret"),), "bob",
                               observed_at=NOW + 1)])
    return index


def test_store_upgrade_makes_the_tables_and_copies_a_hosts_index_without_what_was_erased(pg_server, pg_dsn,
                                                                                         tmp_path):
    st = PGStore.open(pg_dsn, listen=False)
    try:
        st.sessions.put("acme", "s2", {"a": 1}, subject="bob")
        forget(st, "acme", {"session": "s2"})  # erased on another host: this host's file still has it
    finally:
        st.close()
    embedded(tmp_path / "data").close()
    db = pg_dsn.rsplit("/", 1)[1]
    # The database as the release before the index left it (a replica refusing it: test_fleet).
    pg_server.admin("DROP TABLE session_tree, session_turns; DELETE FROM ctx_schema WHERE version = 4", db=db)
    for run in range(2):  # again: nothing new, nothing doubled
        up = cli("upgrade", "--dsn", pg_dsn, "--data-dir", str(tmp_path / "data"))
        assert up.returncode == 0, up.stderr
        assert ("applied 0004_session_index.sql" in up.stdout) == (run == 0)
        assert f"{1 - run} session_turns rows copied" in up.stdout, up.stdout
    st = PGStore.open(pg_dsn, listen=False)
    try:
        index = st.session_index()
        assert [c.statement for c in index.search(Viewer("acme", "alice"), ["okapi"], sessions=("s1",))[0]] == [
            "the okapi runbook lives in the wiki"]
        assert index.search(Viewer("acme", "bob"), ["okapi"], sessions=("s2",))[0] == []
        assert index.owner("acme", "s2") is None
    finally:
        st.close()


def test_migrate_carries_the_session_index_both_ways(pg_dsn, tmp_path):
    open_store(tmp_path / "data" / "store").close()
    embedded(tmp_path / "data").close()
    for _ in range(2):  # resumable: a second run skips what is there and verifies the same
        done = cli("migrate", "--from", "lmdb", "--to", "postgres", "--data-dir", str(tmp_path / "data"),
                   "--dsn", pg_dsn)
        assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr
        assert "session_turns        2 ->        2  same" in done.stdout, done.stdout
    st = PGStore.open(pg_dsn, listen=False)
    try:
        found, stats = st.session_index().search(Viewer("acme", "alice"), ["okapi"], sessions=("s1",))
        assert [c.memory_id for c in found] == ["turn:t1:user"] and stats.docs == 1
    finally:
        st.close()
    back = tmp_path / "back"
    open_store(back / "store").close()
    for _ in range(2):
        done = cli("migrate", "--from", "postgres", "--to", "lmdb", "--data-dir", str(back), "--dsn", pg_dsn)
        assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr
    a, b = SessionIndex(tmp_path / "data" / "recall" / "sessions.db"), SessionIndex(back / "recall" / "sessions.db")
    assert [list(b.records(k)) for k in (SESSION_TREE, SESSION_TURNS)] == \
           [list(a.records(k)) for k in (SESSION_TREE, SESSION_TURNS)]
    a.close()
    b.close()
