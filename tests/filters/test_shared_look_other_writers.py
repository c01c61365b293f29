"""A turn's one look at the store (``Turn.committed_at``) and a tenant kept as seeing no
memory (``MemoryIndex.nothing_visible``) against writers outside the turn: another process
on the same data dir writes, edits or forgets a memory between two requests, and the very
next request sees it, on the chain's replay (where the session read's look is shared with
recall's revision) as on a full pass. Real engine, filters, LMDB store and a real second
process (``ctxproxy memory`` commands and the store's own API)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_read_stamp import FACT
from test_repeats import history, send

from apicalls import config
from enginedriver import EngineDriver
from memhelp import put_memory

from ctxproxy.store import memory_index

TESTS = str(Path(__file__).resolve().parents[1])
EDITED = "The CTX_TIMEOUT default is 45 seconds unless the config file sets timeout."
OTHER = "Episode audio is kept in the private R2 bucket wc-audio-prod."

# Another process on the same data dir: the store's own API (argv: data dir, tests dir, op, args...).
CHILD = r"""
import json, sys
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from memhelp import put_memory
from ctxproxy.store import open_store
data, op, args = Path(sys.argv[1]), sys.argv[3], json.loads(sys.argv[4])
store = open_store(data / "store")
try:
    if op == "put":
        indexed = args.pop("indexed", False)
        print(put_memory(store, args.pop("tenant"), args.pop("statement"), **args).memory_id)
        if indexed:  # as a second proxy does: it indexes its own write before this one looks
            from ctxproxy.store.memory_index import MemoryIndex
            MemoryIndex.open(data, store).catch_up()
    elif op == "edit":
        rec = store.memories.get(args["tenant"], args["id"])
        store.memories.put(replace(rec, statement=args["statement"]), expected_revision=rec.revision)
    elif op == "erase":
        store.memories.erase(args["tenant"], args["id"])
finally:
    store.close()
"""


def other_process(data: Path, op: str, **args) -> str:
    out = subprocess.run([sys.executable, "-c", CHILD, str(data), TESTS, op, json.dumps(args)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


class Looks:
    """What each memories' revision read of the turn was handed: the turn's shared look or None."""

    def __init__(self, monkeypatch):
        self.ats: list = []
        real = memory_index.MemoryIndex.revision

        def revision(index, tenant, at=None):
            self.ats.append(at)
            return real(index, tenant, at)

        monkeypatch.setattr(memory_index.MemoryIndex, "revision", revision)

    def shared(self) -> bool:
        got, self.ats = any(a is not None for a in self.ats), []
        return got


async def settled(drive, n: int = 3):
    """The same request ``n`` times: decided in full, then (when it offered nothing) the
    chain's decision replayed."""
    for _ in range(n):
        got = await send(drive, history())
    return got


async def test_a_memory_another_process_writes_between_requests_is_recalled_by_the_next(tmp_path, monkeypatch):
    looks = Looks(monkeypatch)
    async with EngineDriver(config(tmp_path)) as drive:
        got = await settled(drive)
        assert "recall" in got.turn.replayed and FACT.encode() not in got.forwarded.body
        assert looks.shared()  # the replay's revision was read at the session read's look
        tenant = got.turn.identity.tenant
        other_process(tmp_path / "data", "put", tenant=tenant, statement=FACT, kind="fact")
        got = await send(drive, history())
        assert got.turn.state["recall"].status == "recalled" and FACT.encode() in got.forwarded.body


async def test_a_memory_this_process_writes_or_forgets_between_requests_is_seen_by_the_replay(
        tmp_path, monkeypatch):
    # Written through the store this proxy holds (as its admin API and memory tool do): the session's
    # records stay the very objects, so the chain replays up to recall, whose revision is read at the
    # session read's look; it must be a look taken after the write, not one kept from before.
    looks = Looks(monkeypatch)
    async with EngineDriver(config(tmp_path)) as drive:
        got = await settled(drive)
        assert "recall" in got.turn.replayed and FACT.encode() not in got.forwarded.body
        store, tenant = drive.services["store"], got.turn.identity.tenant
        rec = put_memory(store, tenant, FACT, kind="fact")
        looks.shared()
        got = await send(drive, history())
        assert "effects" in got.turn.replayed and looks.shared()  # replayed to recall, on the turn's look
        assert "recall" not in got.turn.replayed and FACT.encode() in got.forwarded.body
        store.memories.erase(tenant, rec.memory_id)
        got = await send(drive, history())
        assert FACT.encode() not in got.forwarded.body


async def test_a_memory_another_process_edits_or_forgets_is_not_recalled_by_the_next_request(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        tenant = (await send(drive, history())).turn.identity.tenant
        mid = other_process(tmp_path / "data", "put", tenant=tenant, statement=FACT, kind="fact")
        got = await settled(drive)
        assert got.turn.state["recall"].status == "reused" and FACT.encode() in got.forwarded.body
        other_process(tmp_path / "data", "edit", tenant=tenant, id=mid, statement=EDITED)
        got = await send(drive, history())
        assert FACT.encode() not in got.forwarded.body and EDITED.encode() in got.forwarded.body
        got = await settled(drive, 2)
        assert got.turn.state["recall"].status == "reused" and EDITED.encode() in got.forwarded.body
        other_process(tmp_path / "data", "erase", tenant=tenant, id=mid)
        got = await send(drive, history())
        assert EDITED.encode() not in got.forwarded.body and FACT.encode() not in got.forwarded.body


async def test_a_tenant_seen_without_memories_recalls_one_written_by_another_process_next(tmp_path, monkeypatch):
    # The tenant has no memory at all (kept so under its revision); another user's memory, then another
    # tenant's, are written and indexed by another process (a second proxy on the data dir): neither is
    # offered; then one of its user's is, at once.
    async with EngineDriver(config(tmp_path)) as drive:
        got = await settled(drive)
        tenant, user = got.turn.identity.tenant, got.turn.identity.user
        assert "recall" in got.turn.replayed and got.turn.state["recall"].status != "recalled"
        other_process(tmp_path / "data", "put", tenant=tenant, statement=FACT, kind="fact", user="someone-else",
                      indexed=True)
        other_process(tmp_path / "data", "put", tenant="globex", statement=FACT, kind="fact", indexed=True)
        got = await send(drive, history())
        assert FACT.encode() not in got.forwarded.body
        got = await settled(drive, 2)
        assert "recall" in got.turn.replayed and FACT.encode() not in got.forwarded.body
        other_process(tmp_path / "data", "put", tenant=tenant, statement=FACT, kind="fact", user=user, indexed=True)
        got = await send(drive, history())
        assert FACT.encode() in got.forwarded.body


async def test_a_tenant_seen_without_memories_recalls_one_the_memory_cli_adds_next(tmp_path):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await settled(drive)
        tenant = got.turn.identity.tenant
        code = ("import sys; from ctxproxy.proxy.cli.main import main; sys.exit(main(sys.argv[1:]))")
        out = subprocess.run([sys.executable, "-c", code, "memory", "add", FACT, "--kind", "fact", "--tenant",
                              tenant, "--data-dir", str(tmp_path / "data")], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr + out.stdout
        got = await send(drive, history())
        assert FACT.encode() in got.forwarded.body



async def test_two_tenants_sending_the_same_requests_in_turn_never_share_a_memory_or_a_replay(
        tmp_path, monkeypatch):
    # The same bytes from two tenants (and the same session id), interleaved: each turn's look at the
    # store is the whole store's, but what it reads under it (the session's records, the chain's
    # decision, recall's memo) is its tenant's alone, on the replay as on a full pass.
    from apicalls import AUTH, PATHS

    looks = Looks(monkeypatch)
    async with EngineDriver(config(tmp_path)) as drive:
        store = drive.services["store"]
        put_memory(store, "acme", FACT, kind="fact")
        replays = {"acme": 0, "globex": 0}
        for _ in range(4):
            for tenant in replays:
                headers = {**AUTH["chat"], "content-type": "application/json", "x-ctx-tenant": tenant,
                           "x-ctx-user": "u1", "x-ctx-session": "s1"}
                got = await drive.call("POST", PATHS["chat"], headers, history())
                assert got.status == 200, got.body
                drive.services["writer"].flush()
                assert got.turn.identity.tenant == tenant
                assert (FACT.encode() in got.forwarded.body) == (tenant == "acme"), tenant
                replays[tenant] += "recall" in got.turn.replayed
        assert replays["globex"] >= 2 and looks.shared()  # globex's replays read at the shared look
