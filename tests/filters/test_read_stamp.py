"""A turn's reads of the store share one look at its last committed id
(``Turn.committed_at``: the session's read and the memories' revision), and only
while no request hook has waited since. A filter that waits (a write-ahead's
commit) lets other writers commit meanwhile; what recall reads after it must see
them. Through the real engine, filters and LMDB store (``tests/enginedriver.py``)."""
from __future__ import annotations

import asyncio

from memhelp import put_memory
from test_repeats import history, send

from apicalls import config
from enginedriver import EngineDriver

import ctxproxy.filters.effects.filter as effects
from ctxproxy.store.services.recall.services import recall_services


# What the chain's request (``history``) asks about: "Keep the default at 30 seconds."
FACT = "The CTX_TIMEOUT default is 30 seconds unless the config file sets timeout."


def waiting_effects(monkeypatch) -> dict:
    """The effects filter (before recall in the chain) decides in full while the returned
    dict holds ``during`` (it does not replay the chain's decision), and waits once, after
    its own work, for what ``during`` does on another thread (another writer)."""
    on_request, replay = effects.EffectsFilter.on_request, effects.EffectsFilter.replay
    hold: dict = {}

    async def waiting(self, turn):
        await on_request(self, turn)
        during = hold.pop("during", None)
        if during is not None:
            await asyncio.to_thread(during)

    monkeypatch.setattr(effects.EffectsFilter, "on_request", waiting)
    monkeypatch.setattr(effects.EffectsFilter, "replay",
                        lambda self, turn, memo: "during" not in hold and replay(self, turn, memo))
    return hold


async def test_a_memory_written_while_a_filter_before_recall_waits_is_recalled_by_that_request(
        tmp_path, monkeypatch):
    hold = waiting_effects(monkeypatch)
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):  # recalled nothing, decided in full, then that decision replayed
            got = await send(drive, history())
        assert "recall" in got.turn.replayed and FACT.encode() not in got.forwarded.body
        store = drive.services["store"]
        tenant = got.turn.identity.tenant
        # the feed's position kept at the store's id now, the one the next request's session read finds
        recall_services(drive.services).memories.revision(tenant)
        at = store.committed_id()
        hold["during"] = lambda: put_memory(store, tenant, FACT, kind="fact")
        got = await send(drive, history())
        assert "during" not in hold and "effects" not in got.turn.replayed  # it waited in this request
        assert store.committed_id() != at  # the memory's commit moved the store meanwhile
        assert "recall" not in got.turn.replayed and got.turn.state["recall"].status == "recalled"
        assert FACT.encode() in got.forwarded.body


async def test_a_turn_with_no_wait_reads_the_store_s_id_once(tmp_path, monkeypatch):
    import ctxproxy.store.lmdb_env as lmdb_env

    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(2):  # decided in full, then its decision kept: the chain replays from the third
            await send(drive, history())
        real, reads = lmdb_env.LMDBEnv.last_txnid, []

        def last_txnid(env):
            reads.append(env)
            return real(env)

        monkeypatch.setattr(lmdb_env.LMDBEnv, "last_txnid", last_txnid)
        got = await send(drive, history())  # the same request again: every filter replays, none waits
        assert "recall" in got.turn.replayed and got.turn.state["recall"].status == "reused"
        assert len(reads) == 1
        assert got.turn.committed_at(drive.services["store"]) is None  # never read after the request side
