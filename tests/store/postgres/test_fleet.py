"""Two replicas side by side on one PostgreSQL database: keys and their
revocation, a session alternating replicas, memory and forget seen by both,
the database going down (503 in the caller's format, healthz) and coming back,
the schema CLI and the migration from LMDB."""
from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from ctxproxy.proxy.auth import issue_key
from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store import open_store, split_key
from ctxproxy.store.forget import forget
from ctxproxy.store.postgres import PGStore, SCHEMA_VERSION

TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


def store_toml(dsn: str, extra: str = "") -> str:
    return f'[store]\nbackend = "postgres"\ndsn = "{dsn}"\n' + extra


async def wait_for(cond, what: str, timeout: float = 30.0) -> None:
    """Poll a condition (a notification crossing replicas), bounded."""
    for _ in range(int(timeout / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
async def replicas(make_proxy, pg_dsn, tmp_path):
    async def start(extra: str = ""):
        toml = store_toml(pg_dsn, extra)
        a = await make_proxy(toml, data_dir=str(tmp_path / "a"))
        b = await make_proxy(toml, data_dir=str(tmp_path / "b"))
        return a, b
    return start


async def test_a_key_revoked_on_one_replica_is_refused_by_the_other(replicas, fake):
    a, b = await replicas('[auth]\nmode = "keys"\n')
    key = issue_key(a.state.services["store"], a.state.config, "acme", user="alice")
    client_b = b.anthropic(api_key="sk-ant-own", default_headers={"X-Ctx-Key": key["key"]})
    msg = await client_b.messages.create(model="m", max_tokens=20, messages=[{"role": "user", "content": "hi"}])
    assert msg.content  # B knows a key created on A
    a.state.services["store"].proxy_keys.revoke(key["id"])
    inv_b = b.state.services["store"].invalidation
    gen_a = a.state.services["store"].proxy_keys.generation()
    await wait_for(lambda: inv_b.generation >= gen_a, "B to hear of the revocation")
    import anthropic

    with pytest.raises(anthropic.AuthenticationError) as err:
        await client_b.messages.create(model="m", max_tokens=20, messages=[{"role": "user", "content": "hi"}])
    assert err.value.body["type"] == "error" and "revoked" in err.value.body["error"]["message"]


async def test_the_version_check_catches_a_missed_notification(pg_dsn):
    a = PGStore.open(pg_dsn, listen=False)
    b = PGStore.open(pg_dsn)
    try:
        b.invalidation.close()  # its LISTEN connection is gone: notifications are missed
        before = b.proxy_keys.generation()
        a.proxy_keys.create("acme")
        assert b.proxy_keys.generation() > before
    finally:
        a.close()
        b.close()


async def pr_session(fake, a, b, session: str, answered=lambda turn: None) -> None:
    """Tenant acme's ``session`` asks to open a PR, its turns alternating between
    replicas ``a`` and ``b``: the provider calls ``gh pr create`` twice (toolu_1,
    toolu_2; each result is a PR's URL), then answers in text. ``answered(turn)``
    runs as each answer arrives."""
    calls = iter(["toolu_1", "toolu_2"])
    fake.default_reply = lambda rec: (Reply.tool_call("Bash", {"command": "gh pr create"}, next(calls))
                                      if len((rec.json or {}).get("messages", [])) < 5 else Reply.text("done"))
    headers = {"X-Ctx-Tenant": "acme", "X-Ctx-Session": session}
    clients = [a.anthropic(default_headers=headers), b.anthropic(default_headers=headers)]
    msgs = [{"role": "user", "content": "open the PR"}]
    for turn in range(3):
        msg = await clients[turn % 2].messages.create(model="m", max_tokens=50, tools=TOOLS, messages=msgs)
        answered(turn)
        uses = [x for x in msg.content if x.type == "tool_use"]
        if not uses:
            break
        msgs += [{"role": "assistant", "content": [x.model_dump(exclude_none=True) for x in msg.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                               "content": f"https://github.com/o/r/pull/{4821 + turn}"}]}]


async def test_a_session_alternating_replicas_keeps_its_ledger_and_checkpoint(replicas, fake):
    a, b = await replicas()
    await pr_session(fake, a, b, "s-fleet")
    a.settled_store(), b.settled_store()
    effects = a.state.services["store"].effects.list("acme", session="s-fleet")
    assert [e.call_id for e in effects] == ["toolu_1", "toolu_2"]
    assert all(e.state == "completed" for e in effects)  # each settled by the other replica's turn
    manifests = b.state.services["store"].manifests.list("acme", session="s-fleet")
    assert len(manifests) == 3  # every turn's manifest, whichever replica answered it


class _HeldWrites:
    """A replica's response-end ledger writes kept back until ``set()``."""

    def __init__(self, submit) -> None:
        self.submit, self.released, self.pending = submit, False, []

    def hold(self, turn, session, write, store) -> None:
        if self.released:
            self.submit(turn, session, write, store)
        else:
            self.pending.append((turn, session, write, store))

    def set(self) -> None:
        self.released = True
        pending, self.pending = self.pending, []
        for args in pending:
            self.submit(*args)


def hold_answer_writes(proxy):
    """Keep this replica's response-end ledger writes from its store writer until
    the returned holder's ``set()``: the answer reaches the client, its record
    lands late. Held before the writer, not inside its transaction, where the
    wait would keep the batch's row locks and stall the other replica's
    write-ahead until the hold timed out and the write was dropped."""
    (effects,) = [s.filter for p in proxy.state.relay.engine.pipelines.values() for s in p.stages
                  if s.filter.name == "effects"][:1]
    held = _HeldWrites(effects.writes.submit)
    effects.writes.submit = held.hold
    return held


async def test_a_result_reaching_a_replica_before_the_call_was_recorded_is_settled(replicas, fake):
    # Each replica's record of its answer's calls lands only after the next request, on the
    # other replica, has brought their results: identical calls must still settle one each.
    a, b = await replicas()
    release_a, release_b = hold_answer_writes(a), hold_answer_writes(b)

    def answered(turn: int) -> None:
        if turn:  # the other replica's answer record lands now, after this request settled its results
            (release_a if turn % 2 else release_b).set()

    await pr_session(fake, a, b, "s-late", answered)
    release_a.set(), release_b.set()
    a.settled_store(), b.settled_store()
    effects = a.state.services["store"].effects.list("acme", session="s-late")
    assert sorted((e.call_id, e.state) for e in effects) == [("toolu_1", "completed"), ("toolu_2", "completed")]
    assert {e.refs[0] for e in effects if e.refs} == {"https://github.com/o/r/pull/4821",
                                                      "https://github.com/o/r/pull/4822"}


async def test_memory_written_on_one_is_recalled_and_forgotten_on_both(replicas):
    from memhelp import put_memory

    a, b = await replicas()
    sa, sb = a.state.services["store"], b.state.services["store"]
    rec = put_memory(sa, "acme", "Alice deploys through the staging cluster first.", user="alice")
    assert sb.memories.get("acme", rec.memory_id).statement == rec.statement
    assert [m.memory_id for m in sb.memories.list("acme", user="alice")] == [rec.memory_id]
    receipt = forget(sb, "acme", {"user": "alice"})
    assert receipt.counts["memories"] == 1 and receipt.status == "pending"  # the tables are not rewritten yet
    assert sa.memories.get("acme", rec.memory_id) is None and sa.memories.list("acme", user="alice") == []


async def test_a_memory_written_on_one_replica_reaches_the_model_through_the_other(replicas, fake, caplog):
    """Through the recall filter, not only the store: what the other replica forwards carries the
    memory, then not once it is forgotten; the filter never fails (an optional filter that fails is
    skipped, and recall would go silent for the whole fleet)."""
    import json
    import re

    from memhelp import put_memory

    a, b = await replicas()
    sa = a.state.services["store"]
    put_memory(sa, "acme", "Note kcnryfleet: staging deploys go through the Frankfurt cluster first.",
               kind="fact", user="alice")
    evidence = re.compile(r'<ctx-data kind=\\"evidence\\".*?</ctx-data>', re.S)

    async def recalled_on_b(session: str) -> bool:
        client = b.openai(api_key="sk-own", default_headers={
            "X-Ctx-Tenant": "acme", "X-Ctx-User": "alice", "X-Ctx-Session": session})
        await client.chat.completions.create(model="m", messages=[
            {"role": "user", "content": "How do staging deploys go, which cluster first? (kcnryfleet)"}])
        return "kcnryfleet" in " ".join(evidence.findall(json.dumps(fake.last.json)))

    assert await recalled_on_b("s-rec-1")
    forget(sa, "acme", {"user": "alice"})
    assert not await recalled_on_b("s-rec-2")
    assert not [r for r in caplog.records if "filter recall failed" in r.getMessage()]


async def test_forget_finish_rewrites_the_tables_and_seals_the_receipt(pg_dsn, tmp_path):
    from memhelp import put_memory

    st = PGStore.open(pg_dsn, listen=False)
    try:
        put_memory(st, "acme", "Alice keeps zebra-canary-7f3a notes.", user="alice")
        st.sessions.put("acme", "s-alice", {"note": "zebra-canary-7f3a"}, subject="alice")
        receipt = forget(st, "acme", {"user": "alice"}, request_id="r1")
        assert receipt.status == "pending" and st.pending_receipts() == [("acme", "r1")]
    finally:
        st.close()
    cfg = tmp_path / "c.toml"
    cfg.write_text(store_toml(pg_dsn))
    done = subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "forget", "finish", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    st = PGStore.open(pg_dsn, listen=False)
    try:
        assert st.pending_receipts() == []
        assert st.receipts.get("acme", "r1").data["status"] == "erased"
    finally:
        st.close()


async def test_tenancy_holds_in_the_database_itself(pg_dsn):
    import psycopg

    st = PGStore.open(pg_dsn, listen=False)
    try:
        st.sessions.put("acme", "s1", {"secret": "acme only"})
        st.checkpoints.put("globex", "c1", {"x": 1}, session="s1")
    finally:
        st.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0  # no tenant set: no rows
        with conn.transaction():
            conn.execute("SELECT set_config('ctxproxy.tenant', 'globex', true)")
            assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 1
            with pytest.raises(psycopg.errors.InsufficientPrivilege):  # cannot write into another tenant
                conn.execute("INSERT INTO sessions (tenant, session, created_at, updated_at, doc) "
                             "VALUES ('acme', 's2', 0, 0, '')")


async def test_database_down_answers_503_in_each_format_and_recovers(replicas, pg_server, fake):
    if not pg_server.stop:
        pytest.skip("needs a cluster the tests started (CTXPROXY_TEST_DSN cannot be restarted)")
    a, _ = await replicas()
    headers = {"X-Ctx-Tenant": "acme", "X-Ctx-Session": "s-down"}
    await a.anthropic(default_headers=headers).messages.create(model="m", max_tokens=20,
                                                               messages=[{"role": "user", "content": "hi"}])
    a.settled_store()
    await asyncio.to_thread(pg_server.restart_stopped)  # the server goes away
    try:
        import anthropic
        import openai

        forwarded = len(fake.model_requests)
        with pytest.raises(anthropic.APIStatusError) as err:
            await a.anthropic(default_headers=headers).messages.create(
                model="m", max_tokens=20, messages=[{"role": "user", "content": "again"}])
        assert err.value.status_code == 503 and err.value.body["type"] == "error"
        with pytest.raises(openai.APIStatusError) as err2:
            await a.openai(default_headers=headers).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "again"}])
        assert err2.value.status_code == 503 and "store" in err2.value.body["message"]
        assert len(fake.model_requests) == forwarded  # nothing went upstream unrecorded
        import aiohttp

        async with aiohttp.ClientSession() as http:
            async with http.get(a.url + "/ctx/healthz") as r:
                body = await r.json()
                assert r.status == 503 and body["store"]["database"] == "down"
    finally:
        await asyncio.to_thread(pg_server.start_again)
    await wait_for(lambda: a.state.services["store"].available(), "the store to reconnect", timeout=30)
    msg = await a.anthropic(default_headers=headers).messages.create(model="m", max_tokens=20,
                                                                     messages=[{"role": "user", "content": "back"}])
    assert msg.content


def test_store_upgrade_and_a_replica_refuses_an_unknown_schema(pg_server, tmp_path):
    from ctxproxy.store import StoreError

    name = f"ctx_empty_{tmp_path.name[-8:].replace('-', '_')}"
    pg_server.admin(f"CREATE DATABASE {name} OWNER ctx")
    dsn = pg_server.dsn(name)
    try:
        with pytest.raises(StoreError, match="ctxproxy store upgrade"):
            PGStore.open(dsn, listen=False)
        cli = [sys.executable, "-m", "ctxproxy.proxy.cli.main", "store"]
        up = subprocess.run([*cli, "upgrade", "--dsn", dsn], capture_output=True, text=True, timeout=120)
        assert up.returncode == 0 and f"schema v{SCHEMA_VERSION}: upgraded" in up.stdout, up.stderr
        again = subprocess.run([*cli, "upgrade", "--dsn", dsn], capture_output=True, text=True, timeout=120)
        assert "already current" in again.stdout
        pg_server.admin(f"INSERT INTO ctx_schema (version, name) VALUES ({SCHEMA_VERSION + 1}, 'future')", db=name)
        with pytest.raises(StoreError, match="newer than this ctxproxy"):
            PGStore.open(dsn, listen=False)
    finally:
        pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def migrate_twice(source: str, target: str, data_dir, dsn: str) -> None:
    """``ctxproxy store migrate``, then again: the second run resumes over what is there and verifies the same."""
    cli = [sys.executable, "-m", "ctxproxy.proxy.cli.main", "store", "migrate", "--from", source, "--to", target,
           "--data-dir", str(data_dir), "--dsn", dsn]
    for _ in range(2):
        done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr


def test_migrate_from_lmdb_is_resumable_and_verified(pg_dsn, tmp_path):
    from memhelp import put_memory

    src = open_store(tmp_path / "data" / "store")
    rec = put_memory(src, "acme", "Deploys go through staging.", user="alice")
    src.memories.put(rec.evolve(statement="Deploys go through staging first."))
    src.effects.put_pending("acme", key="k1", call_id="c1", tool="Bash", args_canonical="{}", session="s1")
    src.sessions.put("acme", "s1", {"a": 1}, subject="alice")
    src.sessions.put("acme", "s1", {"tail": [1, 2]}, part="prune")
    src.manifests.put("acme", "turn-1", {"m": 1}, session="s1", subject="alice")
    src.index.put_doc("acme", "d1", {"deploy": {"tf": 1}})
    key, secret = src.proxy_keys.create("acme", user="alice")
    src.close()
    migrate_twice("lmdb", "postgres", tmp_path / "data", pg_dsn)
    st = PGStore.open(pg_dsn, listen=False)
    try:
        assert [h.statement for h in st.memories.history("acme", rec.memory_id)] == [
            "Deploys go through staging.", "Deploys go through staging first."]
        assert st.effects.get("acme", "k1", "c1").state == "pending"
        assert st.sessions.get("acme", "s1", part="prune") == {"tail": [1, 2]}
        assert st.sessions.list("acme", subject="alice") == ["s1"]
        assert st.proxy_keys.get(key.id).matches(split_key(secret)[1])
        assert st.index.postings("acme", "deploy") == [("d1", {"tf": 1})]
    finally:
        st.close()


def test_migrate_back_to_lmdb_is_resumable_and_verified(pg_dsn, tmp_path):
    from memhelp import put_memory

    src = PGStore.open(pg_dsn, listen=False)
    try:
        rec = put_memory(src, "acme", "Deploys go through staging.", user="alice")
        src.memories.put(rec.evolve(statement="Deploys go through staging first."))
        src.effects.put_pending("acme", key="k1", call_id="c1", tool="Bash", args_canonical="{}", session="s1",
                                aliases=["alias-1"])
        src.sessions.put("acme", "s1", {"a": 1}, subject="alice")
        src.sessions.put("acme", "s1", {"b": 2}, subject="bob")
        src.sessions.put("acme", "s1", {"tail": [1, 2]}, part="prune")
        src.manifests.put("acme", "turn-1", {"m": 1}, session="s1", subject="alice")
        src.index.put_doc("acme", "d1", {"deploy": {"tf": 1}})
        src.learning.save_job("acme", {"watermark": 5})
        src.learning.note_extracted("acme", "s1", "alice")
        key, secret = src.proxy_keys.create("acme", user="alice")
        generation = src.proxy_keys.generation()
    finally:
        src.close()
    migrate_twice("postgres", "lmdb", tmp_path / "data", pg_dsn)
    st = open_store(tmp_path / "data" / "store")
    try:
        assert [h.statement for h in st.memories.history("acme", rec.memory_id)] == [
            "Deploys go through staging.", "Deploys go through staging first."]
        assert st.memories.ids_for("acme", user="alice") == [rec.memory_id]
        assert st.effects.by_call_id("acme", "alias-1").key == "k1"
        assert st.effects.list("acme", session="s1")[0].state == "pending"
        assert st.sessions.get("acme", "s1", part="prune") == {"tail": [1, 2]}
        assert st.sessions.list("acme", subject="alice") == ["s1"] == st.sessions.list("acme", subject="bob")
        assert [d.id for d in st.manifests.list("acme", subject="alice")] == ["turn-1"]
        assert st.index.postings("acme", "deploy") == [("d1", {"tf": 1})]
        assert st.learning.job("acme")["watermark"] == 5 and st.learning.extracted("acme") == [(1, "s1")]
        assert st.proxy_keys.get(key.id).matches(split_key(secret)[1])
        assert st.proxy_keys.generation() >= generation
        receipt = forget(st, "acme", {"user": "alice"})  # the indexes it rebuilt find the subject
        assert receipt.counts["memories"] == 1 and receipt.counts["sessions"] == 1
    finally:
        st.close()
