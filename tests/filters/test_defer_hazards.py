"""Ordering hazards of what the request filters keep for the next request after
the forward (``Turn.defer``) and of the chain's replay of a session's last
request: while a request's deferred steps are still pending (its answer not
come yet), other requests of the session, memory writes and forgets, other
tenants and users on the same session id, a changed byte, an upstream failure,
a client gone and a shutdown never make a later request replay or reuse what
no longer holds. Through the real engine, filters and LMDB store
(``tests/enginedriver.py``) with a provider that holds a chosen request."""
from __future__ import annotations

import asyncio
import dataclasses
import json

from memhelp import put_memory
from test_repeats import history, manifest, send

from apicalls import AUTH, PATHS, config
from enginedriver import EngineDriver

from ctxproxy.proxy.replies import UpstreamError
from ctxproxy.proxy.scripted_provider import Reply, render_answer
from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.store import forget as forgetting

FACT = "The CTX_TIMEOUT default is 30 seconds unless the config file sets timeout."
REPLAYING = ["redact", "effects", "checkpoint", "prune", "recall", "inject"]


class Gate:
    """A provider that holds the next request it gets until ``release``: its deferred
    steps are then still pending (they run at the latest with the answer's hooks)."""

    def __init__(self) -> None:
        self.armed = False
        self.fail: Exception | None = None
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    def arm(self) -> None:
        self.armed, self.fail = True, None
        self.arrived, self.released = asyncio.Event(), asyncio.Event()

    async def __call__(self, forward):
        if self.armed:
            self.armed = False
            self.arrived.set()
            await self.released.wait()
            if self.fail is not None:
                raise self.fail
        status, headers, chunks = render_answer("chat", Reply.text(), forward.body or b"")
        return CannedUpstream(status, headers, chunks)


def asking(text: str, body: bytes | None = None) -> bytes:
    doc = json.loads(body or history())
    doc["messages"][-1]["content"] = text
    return json.dumps(doc).encode()


QUESTION = b"What is the CTX_TIMEOUT default in seconds when the config file has no timeout?"
ASK = asking(QUESTION.decode())


async def held(drive: EngineDriver, gate: Gate, body: bytes, headers: dict | None = None):
    """``body`` sent and held at the provider: (task, the turn whose deferred steps are
    pending, or None when its request handed none over: a replayed one)."""
    gate.arm()
    task = asyncio.ensure_future(drive.call("POST", PATHS["chat"], headers or _headers(), body))
    await gate.arrived.wait()
    return task, next((t for t in _PENDING if t.deferred), None)


def last_user(got) -> str:
    """The newest user message as it reached the provider."""
    return json.loads(got.forwarded.body)["messages"][-1]["content"]


def _headers(**extra: str) -> dict:
    return {**AUTH["chat"], "content-type": "application/json", **extra}


_PENDING: list = []  # the turns handed to ``_after_forward``


def watching(monkeypatch) -> None:
    import ctxproxy.filters.base as base

    real = base._after_forward

    def after_forward(turn):
        _PENDING.append(turn)
        real(turn)

    _PENDING.clear()
    monkeypatch.setattr(base, "_after_forward", after_forward)


def pending_until_answer(monkeypatch) -> None:
    """The loop never gets round to the steps (a busy process): only the answer's hooks run them."""
    import ctxproxy.filters.base as base

    _PENDING.clear()
    monkeypatch.setattr(base, "_after_forward", _PENDING.append)


async def test_a_memory_written_while_the_steps_are_pending_is_recalled_next(tmp_path, monkeypatch):
    pending_until_answer(monkeypatch)
    gate = Gate()
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        await send(drive, history())
        task, turn = await held(drive, gate, ASK)
        assert turn.state["recall"].status == "recalled" and not turn.state["recall"].items
        put_memory(drive.services["store"], turn.identity.tenant, FACT, kind="fact")
        gate.released.set()
        first = await task
        assert first.status == 200 and first.turn.deferred is None
        drive.services["writer"].flush()
        # the result kept after the write was read before it: the same request recalls the memory
        again = await send(drive, ASK)
        assert again.turn.state["recall"].status == "recalled" and "recall" not in again.turn.replayed
        assert FACT.encode() in again.forwarded.body


async def test_a_memory_forgotten_with_a_receipt_while_the_steps_are_pending_never_comes_back(tmp_path,
                                                                                               monkeypatch):
    pending_until_answer(monkeypatch)
    gate = Gate()
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        first = await send(drive, history())
        store = drive.services["store"]
        tenant = first.turn.identity.tenant
        mem = put_memory(store, tenant, FACT, kind="fact")
        task, turn = await held(drive, gate, ASK)
        assert FACT in json.dumps(turn.request.to_bytes().decode())  # offered to this request
        receipt = forgetting.forget(store, tenant, {"memory": mem.memory_id})  # the steps still pending
        assert receipt.status == "erased"
        gate.released.set()
        assert (await task).status == 200
        drive.services["writer"].flush()
        for _ in range(3):  # recall's result and the chain's decision kept after the forget are not reused
            got = await send(drive, ASK)
            assert FACT.encode() not in got.forwarded.body
            assert got.turn.state["recall"].status != "reused" or not got.turn.state["recall"].items
        assert forgetting.check(store, tenant, receipt.request_id)["clean"]


async def test_an_edited_memory_while_the_steps_are_pending_is_seen_as_edited(tmp_path, monkeypatch):
    pending_until_answer(monkeypatch)
    gate = Gate()
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        first = await send(drive, history())
        store = drive.services["store"]
        tenant = first.turn.identity.tenant
        mem = put_memory(store, tenant, FACT, kind="fact")
        task, turn = await held(drive, gate, ASK)
        edited = FACT.replace("30 seconds", "45 seconds")
        store.memories.put(dataclasses.replace(mem, statement=edited))
        gate.released.set()
        assert (await task).status == 200
        drive.services["writer"].flush()
        got = await send(drive, ASK)
        assert edited.encode() in got.forwarded.body and FACT.encode() not in got.forwarded.body


async def test_requests_of_the_session_while_the_first_ones_steps_are_pending(tmp_path, monkeypatch):
    """The same request and another one of the session go and come back while the first is
    held with its steps pending; the first's steps run last (a stale keep after newer ones):
    every later request still goes as the client sent it, decided as a computed one."""
    pending_until_answer(monkeypatch)
    gate = Gate()
    other = asking("Thanks. Keep the default at 45 seconds.")
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        await send(drive, history())
        task, turn = await held(drive, gate, ASK)
        same = await send(drive, ASK)
        # decided in full (its first's decision not kept yet), to the very bytes the held one got
        assert same.turn.replayed == [] and same.forwarded.body == drive.forwarded[-2].body
        assert (await send(drive, other)).turn.replayed == []
        mem = put_memory(drive.services["store"], turn.identity.tenant, FACT, kind="fact")
        gate.released.set()  # the held request's steps run now, after the newer requests' ones
        assert (await task).status == 200
        drive.services["writer"].flush()
        for _ in range(3):
            got = await send(drive, ASK)
            assert QUESTION in got.forwarded.body and FACT.encode() in got.forwarded.body
        assert mem.memory_id in json.dumps(manifest(drive, got)["recall"])


async def test_two_tenants_and_two_users_on_one_session_id_never_replay_each_others(tmp_path, monkeypatch):
    watching(monkeypatch)
    gate = Gate()
    callers = [("acme", "ana"), ("acme", "bob"), ("globex", "ana")]
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        store = drive.services["store"]
        put_memory(store, "acme", FACT, kind="fact", user="ana")
        seen = {}
        for _ in range(3):
            for tenant, user in callers:
                hdrs = _headers(**{"X-Ctx-Tenant": tenant, "X-Ctx-User": user, "X-Ctx-Session": "shared-1"})
                got = await drive.call("POST", PATHS["chat"], hdrs, ASK)
                assert got.status == 200
                drive.services["writer"].flush()
                assert (got.turn.identity.tenant, got.turn.identity.user) == (tenant, user)
                seen.setdefault((tenant, user), []).append(got)
        for (tenant, user), turns in seen.items():
            given = [FACT.encode() in g.forwarded.body for g in turns]
            assert given == [(tenant, user) == ("acme", "ana")] * 3, (tenant, user)
        # the chain replays each caller's own decision only (its stamp names the identity)
        assert any(g.turn.replayed for g in seen[("globex", "ana")])


async def test_one_byte_changed_while_the_steps_are_pending_is_decided_again(tmp_path, monkeypatch):
    pending_until_answer(monkeypatch)
    gate = Gate()
    secret = "AKIA" + "QYLPMN5HHHFPZAM2"
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        for _ in range(2):
            await send(drive, history())
        task, _ = await held(drive, gate, history())
        changed = history().replace(b"30 seconds", b"31 seconds")
        assert len(changed) == len(history())
        got = await send(drive, changed)
        assert got.turn.replayed == [] and last_user(got).startswith("Thanks. Keep the default at 31 seconds.")
        leaked = history().replace(b"Keep the default at 30 seconds.", f"Key {secret} please.".encode()[:31])
        got = await send(drive, leaked)
        assert got.turn.replayed == [] and secret.encode() not in got.forwarded.body
        gate.released.set()
        await task
        drive.services["writer"].flush()
        got = await send(drive, leaked)
        assert secret.encode() not in got.forwarded.body


async def test_an_upstream_failure_or_a_client_gone_with_the_steps_pending_loses_nothing(tmp_path, monkeypatch):
    pending_until_answer(monkeypatch)
    gate = Gate()
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        await send(drive, history())
        # the provider fails: the turn ends with its steps run, its manifest says what went
        task, turn = await held(drive, gate, ASK)
        gate.fail = UpstreamError(502, "upstream down")
        gate.released.set()
        failed = await task
        assert failed.status >= 500 and turn.deferred is None
        drive.services["writer"].flush()
        assert not manifest(drive, failed).get("degraded")
        # the client hangs up while the request is at the provider
        task, turn = await held(drive, gate, ASK)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert turn.deferred is None  # the turn's end ran them
        gate.armed = False
        drive.services["writer"].flush()
        put_memory(drive.services["store"], turn.identity.tenant, FACT, kind="fact")
        got = await send(drive, ASK)
        assert QUESTION in got.forwarded.body and FACT.encode() in got.forwarded.body


async def test_a_shutdown_with_steps_pending_leaves_the_store_whole(tmp_path, monkeypatch):
    """A request still at the provider when the server stops (its handler cancelled, then the
    services closed): the turn's end runs its steps, its manifest is stored, and what the steps
    kept lived in the process only: the reopened store serves the session as before."""
    pending_until_answer(monkeypatch)
    gate = Gate()
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        first = await send(drive, history())
        task, turn = await held(drive, gate, ASK)
        assert turn.deferred
        task.cancel()  # the server's shutdown cancels the handlers before closing the services
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert turn.deferred is None and "recall" not in turn.degraded
        drive.services["writer"].flush()
    async with EngineDriver(config(tmp_path)) as drive:
        assert manifest(drive, first)["session_id"] == first.turn.identity.session
        kept = drive.services["store"].manifests.get(turn.identity.tenant, turn.turn_id)
        assert kept is not None and kept.data["session_id"] == turn.identity.session
        put_memory(drive.services["store"], turn.identity.tenant, FACT, kind="fact")
        got = await send(drive, ASK)
        assert got.turn.identity.session == first.turn.identity.session
        assert got.turn.replayed == [] and FACT.encode() in got.forwarded.body


async def test_a_session_forgotten_while_the_steps_are_pending_gives_nothing_of_it_back(tmp_path, monkeypatch):
    """The task state built from the session's earlier turns (its user's words quoted) is
    erased with the session; the chain's decision and the facts kept after the forget
    bring none of it back, replayed or computed."""
    pending_until_answer(monkeypatch)
    gate = Gate()
    quote = b"Keep the default at 30 seconds"
    async with EngineDriver(config(tmp_path), provider=gate) as drive:
        first = await send(drive, history())
        store, ident = drive.services["store"], first.turn.identity
        assert quote in (await send(drive, ASK)).forwarded.body  # the task state quotes the earlier turn
        task, turn = await held(drive, gate, ASK)
        receipt = forgetting.forget(store, ident.tenant, {"session": ident.session})
        gate.released.set()
        await task
        drive.services["writer"].flush()
        replayed = []
        for _ in range(3):
            got = await send(drive, ASK)
            assert got.turn.identity.session == ident.session and quote not in got.forwarded.body
            replayed.append(got.turn.replayed)
        assert replayed[-1] == REPLAYING  # the chain kept again, on the session as it is now
        assert receipt.status == "erased" and forgetting.check(store, ident.tenant, receipt.request_id)
