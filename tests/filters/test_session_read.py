"""A turn's one read of its session, served from the store's kept copy of the
live session (``store/session_cache.py``) through the real pipeline: a request
sent again reads nothing from LMDB for it, and what another process wrote to
the session meanwhile is what the next turn reads."""
from __future__ import annotations

import json
import multiprocessing

from apicalls import AUTH, PATHS, config
from callcount import counting
from enginedriver import EngineDriver

from ctxproxy.filters.checkpoint.filter import CheckpointFilter
from ctxproxy.store import open_store
from ctxproxy.store.lmdb_env import LMDBEnv
from ctxproxy.store.session_cache import SessionCache

CALL = "call_c2Vzc2lvbnJlYWQ0Mg"


def history() -> bytes:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "The build fails on a clean checkout. Find out why."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": CALL, "type": "function", "function": {"name": "read_file",
                                                          "arguments": json.dumps({"path": "Makefile"})}}]},
        {"role": "tool", "tool_call_id": CALL, "content": "all:\n\tcc -o app main.c util.c\n"},
        {"role": "assistant", "content": "util.c is not in the repository; the Makefile still lists it."},
        {"role": "user", "content": "Remove it from the Makefile."},
    ]
    return json.dumps({"model": "gpt-5", "messages": messages, "tools": [{"type": "function", "function": {
        "name": "read_file", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]}).encode()


async def send(drive: EngineDriver):
    got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "content-type": "application/json"}, history())
    assert got.status == 200, got.body
    drive.services["writer"].flush()
    return got


async def test_a_request_sent_again_reads_its_session_from_the_kept_copy(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        for _ in range(3):
            await send(drive)
        fills = counting(monkeypatch, SessionCache, "fill")  # a session read that went to LMDB
        snapshots = counting(monkeypatch, LMDBEnv, "begin_read")
        got = await send(drive)
        assert got.turn.identity.session
        assert fills == [], "the session's records were read from LMDB again"
        assert snapshots == [], "a snapshot was opened to decide a request sent again"


def _write_task_state(path: str, tenant: str, session: str) -> None:
    store = open_store(path)
    try:
        part = store.sessions.get(tenant, session, part="task_state")
        doc = {**part["doc"], "compactions": 1, "goal": [1, "Make the clean build pass."]}
        store.sessions.put(tenant, session, {"rev": part["rev"] + 5, "doc": doc}, part="task_state")
    finally:
        store.close()


async def test_a_session_another_process_wrote_is_read_anew(tmp_path, monkeypatch):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await send(drive)
        await send(drive)
        ident = got.turn.identity
        store = drive.services["store"]
        kept = store.sessions.get(ident.tenant, ident.session, part="task_state")
        assert store.sessions.get(ident.tenant, ident.session, part="task_state") is kept  # the kept copy
        # another worker (a process of its own, as with serve --workers 2) saw a compaction
        ctx = multiprocessing.get_context("spawn")
        p = ctx.Process(target=_write_task_state, args=(store.path, ident.tenant, ident.session))
        p.start()
        p.join(60)
        assert p.exitcode == 0
        absorbed = counting(monkeypatch, CheckpointFilter, "_absorb")
        got = await send(drive)
        assert absorbed, "the turn decided from a task state another process had replaced"
        m = store.manifests.get(ident.tenant, got.turn.turn_id).data
        assert m["task_state"]["compacted"] is True
