"""The filter pipeline: a Turn, the Filter shape, and the ordered chain.

A filter is a small class with a ``name`` (also its TOML section
``[filters.<name>]``, its ``turn.state`` key and its telemetry prefix), a
frozen ``Config`` dataclass, and only the hooks it needs:

- ``on_request(turn)`` — edit the request through ``turn.request`` (a view).
  A filter whose write must be on disk before the request goes on
  (write-ahead) makes it ``async def`` and awaits ``turn.commit(store, write)``:
  the batch runs on the store's writer thread while the event loop serves
  other turns;
- ``on_response(turn, view)`` — a whole JSON response;
- ``on_response_event(turn, event) -> list | None`` — one stream event; return
  the events to emit instead (``None`` keeps the event as it is);
- ``on_response_end(turn)`` — after the last byte went to the client;
- ``on_response_id(turn, rid)`` — the provider's id for the answer is known.

What a filter keeps per turn is its own typed object under
``turn.state[self.name]``; no filter reads another's. It tells the Context
Manifest its part with ``report(turn) -> dict | None`` (``Pipeline.reports``
keys each part by its filter; the top-level manifest fields a filter fills
are its ``manifest_fields``, one owner each: ``filters/report.py``) and what
an automatic successor turn inherits with ``successor_state(state)``. Services several filters use are typed parts of
the Turn: ``segments`` (offered context), ``redact_added`` (redacts text a
filter adds), ``tokens``, ``commit`` (the write-ahead), ``services`` (what the
proxy opened at start-up, a typed ``Services``), ``placement`` (where inject
put each group of segments).

A filter may also ask for a last edit of the answer with
``turn.add_egress(e)``: ``e.response(turn, view)`` / ``e.event(turn, event)``
run after every filter's response hooks, just before the bytes go out (redact
puts placeholders back into tool-call arguments there, so no filter after it
ever sees the values). ``e.name`` names it in errors; a failing egress fails
the response closed, as a half-made last edit cannot be sent.

A filter whose event hook only reads the answer (it never edits an event nor
returns events) says ``watches_events = True``; an egress that only reads says
the same. When such hooks end the chain, the relay of an event that can carry
no meta (no ids, usage, finish reasons) runs them just after the event's bytes
went out (``Turn.late_events``, ``Pipeline.run_late``), not before: they see the
same event, in the same order, after every edit. Not for a required filter
(its failure must still be able to end the stream), nor on a turn with an
egress that edits (what they see must be the answer before that edit).
The same holds for a whole (non-streamed) answer: such filters' ``on_response``
and such an egress's ``response`` only read too, and when they end the chain
they run once the answer's bytes were handed to the client
(``Pipeline.run_response(late=True)``, then ``run_response_late``, which the
engine calls as the exchange finishes, before any other hook of its end).

``required = True`` means fail closed: an exception blocks the request. An
optional filter that raises is skipped for this turn: the request goes on
without its edits and the turn is marked degraded.

Response hooks run in the same order as request hooks, not reversed as in
Envoy: ``redact`` sits before ``effects`` and ``manifest`` so that nothing
downstream of it (the ledger, the store, telemetry) ever sees a secret.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
import time
from dataclasses import dataclass, field
import inspect
from typing import Any, Callable, ClassVar, Coroutine, Iterable, Mapping, NamedTuple

from ctxproxy.config import ConfigError
from ctxproxy.store.errors import StoreUnavailable

from .report import ManifestField
from .services import Services
from .session_part import known_parts
from .tokens import TokenCounter
from .turn_summary import ChainDecisions
from .view import RequestView, ResponseView, StreamEvent

log = logging.getLogger("ctxproxy.filters")

# The request filters' steps that change nothing forwarded run once the forward is on its way
# (``Turn.defer``); False runs each when it is handed over (the benchmarks compare both).
DEFER_AFTER_FORWARD = True
# A turn's reads of the store made with nothing awaited between them (its session, its memories'
# revision) share one look at the store's last committed id (``Turn.committed_at``); False: each
# asks the store (the benchmarks compare both).
SHARE_READ_STAMP = True


class FilterError(Exception):
    """A required filter refused or failed; the request is not forwarded.

    ``status`` and ``message`` are safe to show the caller (no secret values).
    """

    def __init__(self, filter_name: str, message: str, status: int = 500, turn_id: str = ""):
        super().__init__(f"{filter_name}: {message}")
        self.filter_name = filter_name
        self.message = message
        self.status = status
        self.turn_id = turn_id


# Turn ids: 32 hex chars, unique across processes and restarts — a random
# per-process prefix and a counter (uuid4 costs a syscall per turn). Both sit in
# one int, with a leading 1 bit so hex() always gives every digit: cheaper than
# formatting two fields.
def _turn_id_base() -> int:
    return (1 << 128) | (int.from_bytes(secrets.token_bytes(8), "big") << 64)


_turn_id_base_value = _turn_id_base()
_turn_counter = itertools.count(1)


def new_turn_id() -> str:
    return hex(_turn_id_base_value + next(_turn_counter))[3:]


def _new_prefix_after_fork() -> None:
    global _turn_id_base_value, _turn_counter
    _turn_id_base_value = _turn_id_base()
    _turn_counter = itertools.count(1)


os.register_at_fork(after_in_child=_new_prefix_after_fork)


class Identity(NamedTuple):
    """Who a turn is for; ``identify`` decides it once, and it never changes
    (a successor turn shares its predecessor's). A tuple: made once per turn,
    the cheapest immutable record."""

    tenant: str = "default"
    user: str = ""
    session: str = ""
    task: str = ""
    source: str = ""  # how the session was found: header | hint:<name> | fingerprint
    agent: str = ""  # claude-code | codex | openclaw | sdk | unknown
    supplied: bool = False  # the agent supplied its session id (vs. derived)
    project: str = ""  # X-Ctx-Project (in keys mode only within the key's projects)
    purpose: str = ""  # X-Ctx-Purpose, or the route's: recall visibility (support, analysis, ...)
    parent_session: str = ""  # X-Ctx-Parent-Session or a client's sub-agent hint: the session tree
    key_id: str = ""  # the proxy key that authenticated the turn (keys mode), never the key itself


NO_IDENTITY = Identity()
COMMIT_FAILED = "could not save its records before forwarding (store error); request not forwarded"


class CommitFailed(Exception):
    """A write-ahead commit (``Turn.commit``) did not reach the disk; the
    message is safe to show the caller, the cause says why."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(eq=False, slots=True)
class Turn:
    """Everything one request/response exchange carries through the filters."""

    api: str  # anthropic | chat | responses
    route: str  # route name from config
    path: str
    headers: Mapping[str, str]  # request headers (case-insensitive mapping)
    request: RequestView | None
    tokens: TokenCounter
    services: Services = field(default_factory=Services)  # what the proxy opened at start-up (typed)
    turn_id: str = field(default_factory=new_turn_id)
    identity: Identity = NO_IDENTITY  # until ``identify`` runs
    tenant_fixed: str = ""  # the route's fixed tenant; headers cannot override it
    principal: Any = None  # keys mode: the proxy key's principal (store.Principal); it names tenant and user
    state: dict[str, Any] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # (name, start_ns, end_ns) of real work — each filter hook, the upstream call —
    # for child spans; wall-clock ns so telemetry can place them after the fact.
    spans: list[tuple[str, int, int]] = field(default_factory=list)
    started_ns: int = field(default_factory=time.time_ns)
    streamed: bool = False
    status: int | None = None  # upstream status
    error_type: str | None = None
    egress: list[Any] | None = None  # last edits of the answer (``add_egress``)
    # Context segments the filters offer this turn (``segments.offer``); inject places
    # them, the manifest lists each with its fate.
    segments: list[Any] = field(default_factory=list)
    # Where each group of segments went ("stable", "system", "turn" -> a place in the request),
    # set by the filter that places them; the manifest reads it for a segment without its own.
    placement: Mapping[str, Any] | None = None
    # Redacts text a filter adds to the request (rules, memories, checkpoints, a goal
    # header) as the request itself was; set by redact, None when it did not run.
    redact_added: Callable[[str], str] | None = None
    response_id: str | None = None  # the provider's id for this answer, once seen
    successor_of: str = ""  # the turn whose request an automatic successor continues
    pipeline: "Pipeline | None" = None  # the chain running this turn (its filters report, its hooks fire)
    # Set to a list by a relay that runs the watching event hooks after an event's write:
    # (event, the events it became) whose watchers have yet to run (``Pipeline.run_late``).
    late_events: list[tuple[Any, list[Any]]] | None = None
    blocking: bool = False  # run by ``Pipeline.run_request``: ``commit`` blocks this thread (tools, tests)
    # ((tenant, session), stored state): the session read shared by the filters (``session_state``)
    session_cache: tuple[tuple[str, str], Mapping[str, Any]] | None = None
    # ((tenant, session), {part: stored state}): the session's parts, read with its state (``session_part``)
    parts_cache: tuple[tuple[str, str], dict[str, Any]] | None = None
    # (store, its last committed id) as the session's read found it (``committed_at``); dropped
    # whenever a request hook may have waited, so a read after a wait asks the store again.
    store_at: tuple[Any, int] | None = None
    # The edge can run rounds of a tool the proxy answers itself (it forwards through
    # ``Exchange.send``); a filter offers such a tool only then.
    continues: bool = False
    # A tool the proxy answers itself this turn (set by the filter that offered it):
    # ``name``, ``max_rounds``, ``async answer(calls, limit)``, ``defer(anchor, calls)``.
    own_tool: Any = None
    # Write-aheads whose result no filter waits for (``commit_ahead``): (owner, store, write,
    # failed), committed with the turn's next write-ahead or when the request filters end.
    ahead: list[tuple[str, Any, Callable[[Any], Any], str]] = field(default_factory=list)
    # Write-aheads staged in the writer's batch, their fsync still running (``commit_staged``):
    # (owner, its commit's future, failed, the result it staged), awaited when the request filters end.
    staging: list[tuple[Any, Any, str, Any]] = field(default_factory=list)
    # The request's bytes and headers as 16 bytes (``repeats.request_digest``), made once
    request_digest: bytes | None = None
    # What the request hooks read first: the digest, its facts, the session's record (``turn_summary``)
    summary: Any = None
    # The filters whose request hook was replayed from the chain's decision for this very request
    replayed: list[str] = field(default_factory=list)
    # Steps that change nothing forwarded (memos, the chain's keeping), taken by ``defer`` while the
    # request filters run: (owner, step), run once the forward is on its way (``run_deferred``).
    # None: nothing is deferred, a step runs when it is handed over.
    deferred: list[tuple[str, Callable[[], Any]]] | None = None

    # What describes the request: set when it comes in, shared by an automatic successor.
    REQUEST_FIELDS: ClassVar[tuple[str, ...]] = ("api", "route", "path", "headers", "request", "tokens", "services",
                                                 "tenant_fixed", "principal", "streamed")

    def __post_init__(self) -> None:
        if not isinstance(self.services, Services):  # a mapping of names (tests, tools)
            self.services = Services.of(self.services)

    @classmethod
    def of_request(cls, api: str, route: str, path: str, headers: Mapping[str, str], request: RequestView | None,
                   tokens: TokenCounter, services: Services, tenant_fixed: str = "",
                   principal: Any = None, streamed: bool = False, **carried: Any) -> "Turn":
        """The one way a turn is made: for a request that came in (the engine's
        ``new_turn``) or, with ``carried``, for its successor (``successor``)."""
        return cls(api=api, route=route, path=path, headers=headers, request=request, tokens=tokens,
                   services=services, tenant_fixed=tenant_fixed, principal=principal, streamed=streamed, **carried)

    def service(self, name: str) -> Any:
        """A service by its field name (``turn.services.<name>`` says the same, typed)."""
        return self.services.get(name)

    async def commit(self, store: Any, write: Callable[[Any], Any], failed: str = COMMIT_FAILED) -> Any:
        """The write-ahead: ``write(batch)`` in one store batch, on disk when this
        returns (its result). It runs on the store's writer thread
        (``services.writer``): the event loop serves other turns during the
        fsync, and commits queued together share one. ``write`` may run twice
        (a group that failed is retried op by op), so it starts over cleanly
        and touches only the batch and its own turn. A batch that did not
        commit raises ``CommitFailed(failed)`` (its cause attached): in a
        required filter that blocks the request with 503 and ``failed`` as the
        message; a filter that can go on catches it."""
        ahead = self._take_ahead(store)
        if ahead:  # with them in one batch: one fsync for both
            def both(b: Any) -> Any:
                for _, _, w, _ in ahead:
                    w(b)
                return write(b)

            try:
                return await self._commit(store, both, failed)
            except CommitFailed:  # which one failed: theirs refuses the request, this one is its filter's
                await self._commit_ahead(ahead)
        return await self._commit(store, write, failed)

    async def _commit(self, store: Any, write: Callable[[Any], Any], failed: str) -> Any:
        writer = self.services.writer
        try:
            if writer is None:  # embedded use without a writer: commit here
                with store.batch() as b:
                    return write(b)
            if self.blocking:
                return writer.submit(write, urgent=True, key=self.write_key).result()
            return await asyncio.wrap_future(writer.submit(write, urgent=True, key=self.write_key))
        except Exception as exc:
            raise CommitFailed(failed) from exc

    async def commit_staged(self, owner: "Filter", store: Any, write: Callable[[Any], Any],
                            failed: str = COMMIT_FAILED) -> Any:
        """``commit``, returning ``write``'s result as soon as it ran in the
        writer's batch, before the fsync: the filters after ``owner`` run while
        the disk syncs, and the request still leaves only once the batch is on
        disk (the request filters' end waits for it). If the batch then does not
        commit, the request filters run again without ``owner`` (as when an
        optional filter fails after editing), or the request is refused (503)
        when ``owner`` is required. ``write`` may run twice, as for ``commit``
        (a batch that lost a race with another process's runs again): the
        result returned is its first run's, and a batch that then committed a
        different one is handled as one that did not commit."""
        writer = self.services.writer
        if writer is None or self.blocking:
            return await self.commit(store, write, failed)
        ahead = self._take_ahead(store)
        loop = asyncio.get_running_loop()
        staged = loop.create_future()

        def run(b: Any) -> Any:
            for _, _, w, _ in ahead:
                w(b)
            out = write(b)
            try:
                loop.call_soon_threadsafe(_resolve, staged, out)
            except RuntimeError:  # the loop is closed (shutting down): nobody waits, the write stands
                pass
            return out

        done = asyncio.wrap_future(writer.submit(run, urgent=True, key=self.write_key))
        await asyncio.wait((staged, done), return_when=asyncio.FIRST_COMPLETED)
        if staged.done():
            done.add_done_callback(_retrieved)  # a turn refused before it waits for the disk logs nothing
            self.staging.append((owner, done, failed, staged.result()))
            return staged.result()
        staged.cancel()
        try:
            return done.result()  # the batch ran and committed before the loop saw it staged
        except Exception:  # it never staged: as ``commit`` does, theirs alone, then this one alone
            if ahead:
                await self._commit_ahead(ahead)
            return await self._commit(store, write, failed)

    def commit_ahead(self, owner: str, store: Any, write: Callable[[Any], Any], failed: str = COMMIT_FAILED) -> None:
        """A write-ahead whose result the filter does not need before the request
        goes on: on disk before the request leaves all the same, in the batch
        of the turn's next ``commit`` (one fsync for both) or, when no other
        filter commits, once the request filters ran. If it does not commit,
        the request is refused (503, ``failed``) whatever ``owner`` declared:
        a filter hands over only writes it would fail closed on. ``write`` may
        run twice and runs after the filters that follow ``owner`` read the
        store, so it reads what it depends on again in its batch."""
        self.ahead.append((owner, store, write, failed))

    def _take_ahead(self, store: Any) -> list[tuple[str, Any, Callable[[Any], Any], str]]:
        if not self.ahead:
            return []
        mine = [a for a in self.ahead if a[1] is store]
        self.ahead = [a for a in self.ahead if a[1] is not store]
        return mine

    async def _commit_ahead(self, ahead: list[tuple[str, Any, Callable[[Any], Any], str]]) -> None:
        for owner, store, write, failed in ahead:
            try:
                await self._commit(store, write, failed)
            except CommitFailed as exc:
                log.warning("turn %s: filter %s failed to commit its write-ahead: %s", self.turn_id, owner,
                            type(exc.__cause__).__name__)
                raise FilterError(owner, failed, 503, self.turn_id) from exc.__cause__

    async def commit_pending(self) -> None:
        """Commit the write-aheads still waiting (``commit_ahead``), each store's in one
        batch, and wait for the staged ones (``commit_staged``) to be on disk."""
        await self._staged_on_disk()
        while self.ahead:
            store = self.ahead[0][1]
            ahead = self._take_ahead(store)
            t0 = time.perf_counter()
            try:
                if len(ahead) > 1:
                    try:
                        await self._commit(store, lambda b: [w(b) for _, _, w, _ in ahead], ahead[0][3])
                        continue
                    except CommitFailed:
                        pass
                await self._commit_ahead(ahead)
            finally:
                _add_time(self, ahead[0][0], t0)

    async def _staged_on_disk(self) -> None:
        while self.staging:
            owner, done, failed, staged = self.staging.pop(0)
            t0 = time.perf_counter()
            try:
                cause: BaseException | None = None
                try:
                    if await done == staged:
                        continue
                    # it ran again (a race with another process lost) and read otherwise: the
                    # owner's edits were made on what the first run read
                    log.warning("turn %s: filter %s's write-ahead committed other than it staged", self.turn_id,
                                owner.name)
                except Exception as exc:
                    cause = exc
                    log.warning("turn %s: filter %s failed to commit its write-ahead: %s", self.turn_id,
                                owner.name, type(exc).__name__)
                if owner.required:
                    raise FilterError(owner.name, failed, 503, self.turn_id) from cause
                _mark_degraded(self, owner.name)
                raise _Undo(owner.name) from cause  # its edits stand on what is not on disk
            finally:
                _add_time(self, owner.name, t0)

    @property
    def write_key(self) -> tuple[str, str]:
        """What this turn's writes are filed under on the store's writer (its session)."""
        return (str(self.identity.tenant), str(self.identity.session))

    def write_after(self, store: Any, write: Callable[[Any], Any],
                    done: Callable[[BaseException | None], None] | None = None) -> None:
        """A record the turn need not wait for: ``write(batch)`` queued on the
        store's background writer (group commit, in order, off the event loop),
        else written now in a batch of ``store``. ``done(exc)`` hears how it went
        (None: on disk). Never raises: what it keeps is kept elsewhere too."""
        writer = self.services.writer
        try:
            if writer is not None:
                fut = writer.submit(write, key=self.write_key)
                if done is not None:
                    fut.add_done_callback(lambda f: done(f.exception()))
                return
            with store.batch() as b:
                write(b)
        except Exception as exc:
            if done is not None:
                done(exc)
            return
        if done is not None:
            done(None)

    def add_egress(self, egress: Any) -> None:
        """Run ``egress`` on the answer after every filter (once, however often asked)."""
        if self.egress is None:
            self.egress = [egress]
        elif egress not in self.egress:
            self.egress.append(egress)

    def note_response_id(self, rid: str) -> None:
        """The engine's: the provider's id for this answer (the first one seen).
        Every filter's ``on_response_id`` hears it at once — before the client
        has the answer, so its next request finds whatever the hook recorded.
        An id that is not a string (a provider's malformed answer) is no id."""
        if self.response_id is not None or not isinstance(rid, str):
            return
        self.response_id = rid
        if self.pipeline is not None:
            self.pipeline.run_response_id(self, rid)

    def successor(self) -> "Turn":
        """A new turn for a response the provider started by itself to continue
        this one (Responses steering: an automatic successor inherits its
        predecessor's request and settings). It has its own id and answer state
        and carries what described the request — identity, context segments,
        the request-side records, the answer's last edits and the response-id
        hooks — so the response filters treat its answer as this turn's. What
        each filter's state passes on, the filter says (``successor_state``)."""
        t = Turn.of_request(**{f: getattr(self, f) for f in Turn.REQUEST_FIELDS}, identity=self.identity,
                            segments=self.segments, placement=self.placement, successor_of=self.turn_id,
                            pipeline=self.pipeline)
        if self.pipeline is not None:
            for f in self.pipeline.carriers:
                if f.name in self.state:
                    carried = f.successor_state(self.state[f.name])
                    if carried is not None:
                        t.state[f.name] = carried
        t.egress = list(self.egress) if self.egress else None
        return t

    def session_state(self, store: Any, tenant: str | None = None, session: str | None = None
                      ) -> Mapping[str, Any]:
        """The stored state of this turn's session (or of ``tenant``/``session``),
        read once per turn (through ``store``: the store, or a snapshot of it)
        and shared by the filters. Read-only: a filter writes its own key
        through the store (which merges it in), then calls ``session_changed``."""
        key = (tenant or self.identity.tenant, session or self.identity.session)
        cached = self.session_cache
        if cached is None or cached[0] != key:
            if key == (self.identity.tenant, self.identity.session) and self.parts_cache is None:
                self._read_session(store, key)  # the parts come with it: one read for the turn
                cached = self.session_cache
            else:
                cached = self.session_cache = (key, store.sessions.get(*key) or {})
        return cached[1]

    def session_part(self, store: Any, part: str) -> Mapping[str, Any] | None:
        """A named part of this turn's session as stored (``filters/session_part.py``),
        read once per turn together with the session's state and every other part
        a filter keeps: the filters of a turn share one store read."""
        key = (self.identity.tenant, self.identity.session)
        cached = self.parts_cache
        if cached is None or cached[0] != key:
            self._read_session(store, key)
            cached = self.parts_cache
        parts = cached[1]  # type: ignore[index]
        if part not in parts:  # a part no filter registered: read on its own
            parts[part] = store.sessions.get(*key, part=part)
        return parts[part]

    def _read_session(self, store: Any, key: tuple[str, str]) -> None:
        committed = getattr(store, "committed_id", None)  # (a store with a read stamp: LMDB's own handle)
        at = None if committed is None else committed()
        if at is None:
            got = store.sessions.get_parts(*key, (None, *known_parts()))
        else:
            got = store.sessions.get_parts(*key, (None, *known_parts()), at=at)
            if SHARE_READ_STAMP:
                self.store_at = (store, at)
        self.session_cache = (key, got.pop(None) or {})
        self.parts_cache = (key, got)

    def committed_at(self, store: Any) -> int | None:
        """``store``'s last committed id as this turn's session read found it, while no
        request hook has waited since (the turn's reads then share one look at the
        store), else None: the caller reads it itself."""
        got = self.store_at
        return got[1] if got is not None and got[0] is store else None

    def session_changed(self) -> None:
        self.session_cache = None
        self.store_at = None

    def defer(self, owner: str, step: Callable[[], Any]) -> None:
        """Run ``step`` once the request is on its way to the provider (in the time
        the proxy then waits for it), or now when the request filters are not
        deferring. Only for work whose result no filter reads before the forward
        and whose failure must not refuse the request (a memo, a decision kept
        for the next request): a deferred step that fails is logged and marks
        ``owner`` degraded in the turn's manifest. Write-aheads never come here."""
        if self.deferred is None:
            step()
        else:
            self.deferred.append((owner, step))

    def run_deferred(self) -> None:
        """The deferred steps, in the order they were handed over; from then on a
        step runs when it is handed over. Every response hook runs after this
        (``Pipeline`` calls it first), whenever the edge forwarded."""
        steps, self.deferred = self.deferred, None
        for owner, step in steps or ():
            try:
                step()
            except Exception as exc:
                log.warning("turn %s: filter %s failed after the forward: %s", self.turn_id, owner,
                            type(exc).__name__)
                _mark_degraded(self, owner)


class Filter:
    name: ClassVar[str] = ""
    required: ClassVar[bool] = False  # True: fail closed
    uses_tokens: ClassVar[bool] = False  # True: counts tokens (the vocabulary is loaded at start-up)
    # True: its on_request also guards auxiliary calls (count_tokens, compact), whose
    # body is the conversation but whose answer is not a model turn
    guards_auxiliary: ClassVar[bool] = False
    # Filters whose offers this one consumes in the same request (checkpoint folds the ledger
    # summary effects offers): when both are in a chain they run first; a chain that puts this
    # one before them is refused when it is built.
    runs_after: ClassVar[tuple[str, ...]] = ()
    # The top-level Context Manifest fields its ``report`` fills (``filters/report.py``); no two
    # filters of a chain, or of the registry, may declare one. Other report keys are its own part.
    manifest_fields: ClassVar[Mapping[str, ManifestField]] = {}
    # True: its on_response_event only reads (returns None, edits nothing), so the relay may
    # run it just after the event went out (see the module docstring)
    watches_events: ClassVar[bool] = False

    Config: ClassVar[type | None] = None  # frozen dataclass of [filters.<name>]

    # Optional hooks and declarations (the pipeline looks them up once, like the hooks above):
    #   on_response_id(turn, rid)   the provider's id for the answer is known (before the client has it)
    #   report(turn) -> dict | None this filter's part of the Context Manifest (its manifest_fields, and
    #                               keys of its own, stored under filters.<name>)
    #   successor_state(state)      what of its turn.state[name] an automatic successor turn inherits
    #                               (None: nothing; the default when the method is absent)
    #   warm()                      load now what its turns would otherwise load on the first one
    #                               (compiled regexes, models); the engine calls it once at start-up
    #   replay_memo(turn) -> memo   after a request pass: what this filter would replay of its decision
    #                               (one that wrote, offered and edited nothing), or None
    #   replay(turn, memo) -> bool  instead of on_request, for the session's last request sent again on
    #                               the same identity and session records (``ChainDecisions``): rebuild
    #                               its turn state, or False (an input of its own moved) to run on_request


FilterFactory = Callable[[Any, Services], Filter]


@dataclass(frozen=True)
class _Stage:
    filter: Filter
    request: Callable | None
    response: Callable | None
    event: Callable | None
    end: Callable | None
    request_span: str  # child span name of the request hook
    awaits: bool  # its on_request is ``async def`` (it writes ahead)
    replay: Callable | None = None  # replay(turn, memo) -> bool, with replay_memo(turn) (the chain's repeat)


def _split_watchers(stages: tuple[_Stage, ...]) -> tuple[tuple[_Stage, ...], tuple[_Stage, ...]]:
    """The stages before the chain's tail of optional watchers, and that tail."""
    k = len(stages)
    while k and stages[k - 1].filter.watches_events and not stages[k - 1].filter.required:
        k -= 1
    return stages[:k], stages[k:]


class Pipeline:
    """An ordered, immutable chain built once at start-up (a reload swaps it)."""

    def __init__(self, filters: Iterable[Filter], request_only: bool = False):
        filters = list(filters)
        _check_order(filters)
        field_owners(filters)
        stages = []
        for f in filters:
            answer = (lambda hook: None) if request_only else (lambda hook: getattr(f, hook, None))
            stages.append(_Stage(
                f,
                getattr(f, "on_request", None),
                answer("on_response"),
                answer("on_response_event"),
                answer("on_response_end"),
                f"{f.name}.request",
                inspect.iscoroutinefunction(getattr(f, "on_request", None)),
                getattr(f, "replay", None) if callable(getattr(f, "replay_memo", None)) else None,
            ))
        self.stages: tuple[_Stage, ...] = tuple(stages)
        # The session's last request sent again: decided once for the chain (``_request_pass``)
        self.replayers = sum(1 for s in self.stages if s.replay is not None and s.request is not None)
        self.chain = ChainDecisions() if self.replayers else None
        self.event_stages = tuple(s for s in self.stages if s.event)  # what each streamed event goes through
        self.has_event_hooks = bool(self.event_stages)
        # The watching hooks that end the chain may run after the bytes went out: for a streamed
        # event after its write, for a whole answer once it was handed to the connection.
        self.early_event_stages, self.late_event_stages = _split_watchers(self.event_stages)
        self.early_response_stages, self.late_response_stages = _split_watchers(
            tuple(s for s in self.stages if s.response))
        self.has_response_hooks = any(s.response for s in self.stages)
        filters_ = [s.filter for s in self.stages]
        self.reporters = tuple(f for f in filters_ if callable(getattr(f, "report", None)))
        self.carriers = tuple(f for f in filters_ if callable(getattr(f, "successor_state", None)))
        self.id_hooks = () if request_only else tuple(
            (f, f.on_response_id) for f in filters_ if callable(getattr(f, "on_response_id", None)))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.filter.name for s in self.stages)

    def auxiliary(self) -> "Pipeline":
        """For auxiliary calls: the request hooks of the filters that guard every
        request (same filter objects; closed with this pipeline)."""
        return Pipeline([s.filter for s in self.stages if s.filter.guards_auxiliary], request_only=True)

    def run_request(self, turn: Turn, reparse: Callable[[], RequestView] | None = None) -> None:
        """``run_request_async`` for a thread with no event loop of its own
        (tools, tests): a write-ahead blocks this thread until it is on disk,
        so no hook ever suspends and the coroutine runs to its end at once."""
        turn.blocking = True
        try:
            _run_now(self.run_request_async(turn, reparse))
        finally:
            turn.blocking = False

    async def run_request_async(self, turn: Turn, reparse: Callable[[], RequestView] | None = None) -> None:
        """Run every on_request. An optional filter that fails after editing the
        body is undone by re-parsing the original and replaying the filters
        before it (``reparse``); its own edits never reach the provider."""
        skipped: set[str] = set()
        if turn.pipeline is None:
            turn.pipeline = self
        if DEFER_AFTER_FORWARD and turn.deferred is None:
            turn.deferred = []
        try:
            await self._request_passes(turn, skipped, reparse)
        finally:
            turn.store_at = None  # the request side's look at the store: never read after it
            if turn.deferred:
                _after_forward(turn)
            else:
                turn.deferred = None

    async def _request_passes(self, turn: Turn, skipped: set[str], reparse: Callable[[], RequestView] | None
                              ) -> None:
        while True:
            try:
                await self._request_pass(turn, skipped)
                return
            except _Undo as undo:
                skipped.add(undo.name)
                if reparse is None:  # nothing to rebuild from: forward nothing half-edited
                    raise FilterError(undo.name, "failed while editing the request", 502, turn.turn_id)
                turn.request = reparse()
                turn.ahead = []  # the replay decides them again
                turn.summary = None  # the facts it found are read again, for the replayed filters
                turn.state.clear()
                turn.session_cache = None
                turn.parts_cache = None
                turn.store_at = None
                turn.segments = []
                turn.placement = None
                turn.redact_added = None

    async def _request_pass(self, turn: Turn, skipped: set[str]) -> None:
        # One clock read per filter: each one's span starts where the one before ended, and its
        # time in the turn's timings is that span (wall-clock ns, as spans are exported).
        now = time.time_ns
        timings, spans = turn.timings_ms, turn.spans
        # The chain's decision for this very request, read at the first filter that can replay
        # (the identity is set by then); a pass run again after an undo replays nothing.
        chain = self.chain if not skipped and turn.request is not None else None
        memos: dict[int, Any] | None = None
        replayed: dict[int, Any] = {}
        t = now()
        for i, stage in enumerate(self.stages):
            f = stage.filter
            if stage.request is None or f.name in skipped:
                continue
            edits_before = getattr(turn.request, "edits", 0)
            t0_ns = t
            try:
                if chain is not None and stage.replay is not None:
                    if memos is None:
                        memos = _chain_memos(turn, chain)
                    memo = memos.get(i)
                    if memo is not None and _replayable(turn) and stage.replay(turn, memo):
                        replayed[i] = memo
                        turn.replayed.append(f.name)
                        continue
                if stage.awaits:
                    try:
                        await stage.request(turn)
                    finally:  # it may have waited: what a later filter reads of the store is read again
                        turn.store_at = None
                else:
                    stage.request(turn)
            except FilterError as exc:
                exc.turn_id = exc.turn_id or turn.turn_id
                raise
            except Exception as exc:
                failed = exc.__cause__ if isinstance(exc, CommitFailed) else exc
                log.warning("turn %s: %s filter %s failed%s: %s", turn.turn_id,
                            "required" if f.required else "optional", f.name,
                            " to commit" if failed is not exc else "", type(failed).__name__)
                if isinstance(failed, StoreUnavailable) and _store_fails_closed(turn):
                    raise FilterError(f.name, "the store is unavailable; request not forwarded (nothing goes "
                                      "upstream unrecorded: store.on_unavailable)", 503, turn.turn_id) from failed
                if f.required:
                    if isinstance(exc, CommitFailed):
                        raise FilterError(f.name, exc.message, 503, turn.turn_id) from failed
                    raise FilterError(f.name, f"filter failed ({type(exc).__name__}); request not forwarded",
                                      500, turn.turn_id) from exc
                _mark_degraded(turn, f.name)
                if getattr(turn.request, "edits", 0) != edits_before:
                    raise _Undo(f.name) from exc
            finally:
                t = now()
                timings[f.name] = timings.get(f.name, 0.0) + max(0, t - t0_ns) / 1e6
                spans.append((stage.request_span, t0_ns, t))
        if chain is not None and len(replayed) < self.replayers:  # a filter that can replay ran
            # Whether the pass left the request as it came, offered and handed over nothing: read
            # now, before the write-aheads go; what each filter would replay, kept after the forward.
            keep = _replayable(turn) and not turn.degraded and turn.own_tool is None
            turn.defer("request chain", lambda: self._keep_chain(turn, chain, replayed, keep))
        if turn.ahead or turn.staging:  # write-aheads no later filter's commit took along, or staged: on
            await turn.commit_pending()  # disk before the request leaves

    def _keep_chain(self, turn: Turn, chain: "ChainDecisions", replayed: dict[int, Any], keep: bool) -> None:
        """After a pass that did not replay every filter: what each filter that can
        replay would replay of it, kept for this request, when the pass left the
        request as it came, offered nothing and committed nothing (``keep``)."""
        try:
            self._keep_memos(turn, chain, replayed, keep)
        except Exception as exc:  # what to replay next time: the request goes on without it
            log.warning("turn %s: the chain's decision not kept: %s", turn.turn_id, type(exc).__name__)
            chain.forget(turn)

    def _keep_memos(self, turn: Turn, chain: "ChainDecisions", replayed: dict[int, Any], keep: bool) -> None:
        if turn.identity is NO_IDENTITY:
            return
        if not keep:
            chain.forget(turn)
            return
        out: dict[int, Any] = {}
        for i, stage in enumerate(self.stages):
            if stage.replay is None:
                continue
            memo = replayed.get(i)
            if memo is None:
                memo = stage.filter.replay_memo(turn)
            if memo is not None:
                out[i] = memo
        if not out:
            chain.forget(turn)
        elif len(out) != len(replayed) or any(replayed.get(i) is not m for i, m in out.items()):
            chain.keep(turn, out)  # (the very memos it replayed: the entry stands as it is)

    def run_response_id(self, turn: Turn, rid: str) -> None:
        if turn.deferred:
            turn.run_deferred()
        for f, hook in self.id_hooks:
            try:
                hook(turn, rid)
            except Exception:  # bookkeeping: the answer goes on
                log.exception("turn %s: filter %s failed on the response id", turn.turn_id, f.name)

    def reports(self, turn: Turn) -> dict[str, dict[str, Any]]:
        """Every filter's part of the Context Manifest, by filter name, in chain
        order. A filter that fails to report is left out and the turn marked
        degraded."""
        out: dict[str, dict[str, Any]] = {}
        for f in self.reporters:
            try:
                part = f.report(turn)
            except Exception as exc:
                log.warning("turn %s: filter %s failed to report: %s", turn.turn_id, f.name, type(exc).__name__)
                _mark_degraded(turn, f.name)
                continue
            if part:
                out[f.name] = part
        return out

    def run_response(self, turn: Turn, view: ResponseView, late: bool = False) -> bool:
        """A whole answer through the response hooks and the last edits. With
        ``late``, the hooks that only watch the answer and end the chain (and an
        egress that only watches) are left for ``run_response_late``, to run once
        the bytes went out, unless an egress edits; returns whether they were."""
        if turn.deferred:
            turn.run_deferred()
        if late and (self.late_response_stages or turn.egress) and _egress_watches(turn):
            for stage in self.early_response_stages:
                self._call(turn, stage, stage.response, view)
            return True
        for stage in self.stages:
            if stage.response is not None:
                self._call(turn, stage, stage.response, view)
        if turn.egress:
            _run_egress(turn, "response", view)
        return False

    def run_response_late(self, turn: Turn, view: ResponseView) -> None:
        """The watching hooks and egress ``run_response(late=True)`` left, after
        the answer's bytes went out. A failure is logged and marks the turn
        degraded (the bytes are out)."""
        try:
            for stage in self.late_response_stages:
                self._call(turn, stage, stage.response, view)
            if turn.egress:
                _run_egress(turn, "response", view)
        except FilterError:
            pass  # logged and marked by _call / _run_egress

    def run_event(self, turn: Turn, event: StreamEvent) -> list[StreamEvent]:
        """Pass one event down the response chain; each filter may replace it
        with zero or more events (e.g. held-back text flushed before a stop).
        With ``turn.late_events`` a list, the watching hooks that end the chain
        are left for ``run_late`` where the event can carry no meta (the
        module docstring); the event and what it became wait in that list."""
        if turn.deferred:
            turn.run_deferred()
        late = turn.late_events
        if late is not None and self.late_event_stages:
            if event.may_carry_meta(turn.response_id is not None) or not _egress_watches(turn):
                if late:  # what waits was sent before this one: its watchers see it first
                    self.run_late(turn)
            else:
                events = self._run_stages(turn, event, self.early_event_stages)
                late.append((event, events))
                return events
        events = self._run_stages(turn, event, self.event_stages)
        if turn.egress:
            for ev in events:
                _run_egress(turn, "event", ev)
        return events

    def run_late(self, turn: Turn) -> None:
        """The watching hooks (and egress) of the events ``run_event`` left for
        after their write, in order; then the events are done. A failure there
        is logged and marks the turn degraded (the bytes are out)."""
        late = turn.late_events
        if not late:
            return
        waiting = late[:]
        late.clear()
        call = self._call
        for event, events in waiting:
            try:
                for stage in self.late_event_stages:
                    for ev in events:
                        call(turn, stage, stage.event, ev)
                if turn.egress:
                    for ev in events:
                        _run_egress(turn, "event", ev)
            except FilterError:
                pass  # logged and marked by _call / _run_egress
            finally:
                for ev in events:
                    ev.done()
                event.done()

    def _run_stages(self, turn: Turn, event: StreamEvent, stages: tuple) -> list[StreamEvent]:
        events = [event]
        call = self._call
        for stage in stages:
            if len(events) == 1:  # the usual case: one event in, the same one out (None)
                result = call(turn, stage, stage.event, events[0])
                if result is not None:
                    events = list(result)
                continue
            out: list[StreamEvent] = []
            for ev in events:
                result = call(turn, stage, stage.event, ev)
                out.extend([ev] if result is None else result)
            events = out
        return events

    def run_end(self, turn: Turn) -> None:
        """After the last byte: filters settle records and telemetry. Runs even
        when the turn failed or the client hung up (``turn.error_type`` says)."""
        if turn.deferred:
            turn.run_deferred()
        for stage in self.stages:
            if stage.end is not None:
                try:
                    self._call(turn, stage, stage.end)
                except FilterError:
                    pass  # the response is already delivered; the failure is logged and marked

    def warm(self, done: set[int] | None = None) -> None:
        """At start-up: each filter's ``warm()``, once per filter object (``done``
        holds the ids already warmed, for pipelines that share filters)."""
        done = set() if done is None else done
        for stage in self.stages:
            warm = getattr(stage.filter, "warm", None)
            if warm is not None and id(stage.filter) not in done:
                done.add(id(stage.filter))
                warm()

    def close(self) -> None:
        """At shutdown, before the store closes: filters with background work
        (e.g. the effect ledger's writer thread) finish it (``close()``)."""
        for stage in self.stages:
            close = getattr(stage.filter, "close", None)
            if close is not None:
                try:
                    close()
                except Exception as exc:  # shutdown goes on; the failure is logged
                    log.warning("filter %s failed to close: %s", stage.filter.name, type(exc).__name__)

    def _call(self, turn: Turn, stage: _Stage, hook: Callable, *args: Any) -> Any:
        f = stage.filter
        t0 = time.perf_counter()
        try:
            return hook(turn, *args)
        except FilterError:
            raise
        except Exception as exc:
            log.warning("turn %s: filter %s failed on the response: %s", turn.turn_id, f.name, type(exc).__name__)
            _mark_degraded(turn, f.name)
            if f.required:
                raise FilterError(f.name, f"filter failed on the response ({type(exc).__name__})",
                                  502, turn.turn_id) from exc
            return None
        finally:
            _add_time(turn, f.name, t0)


def _after_forward(turn: Turn) -> None:
    """The turn's deferred steps, run once its forward is on its way: now on a thread
    that blocks on its commits (no loop to wait with), else two turns of the event
    loop later. The edge hands the forward to its transport in the step that ran the
    request filters, and the transport queues the body's write there (aiohttp: a
    task): the first turn runs that write, the second these steps, in the time the
    provider takes to answer. Whatever runs first, any response hook runs them
    before it (``run_deferred``)."""
    if turn.blocking:
        turn.run_deferred()
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        turn.run_deferred()
        return
    loop.call_soon(loop.call_soon, turn.run_deferred)


def _replayable(turn: Turn) -> bool:
    """Whether the request is still as it came, nothing offered or handed to the store:
    what the chain's decision for these bytes describes."""
    return not (getattr(turn.request, "edits", 1) or turn.segments or turn.ahead or turn.staging)


def _chain_memos(turn: Turn, chain: "ChainDecisions") -> dict[int, Any]:
    """The chain's memos for this very request on its session's records as stored
    (the turn's one read of them, made here if no filter made it yet), or none."""
    if turn.identity is NO_IDENTITY or not turn.identity.session:
        return {}
    store = turn.services.store
    if store is None:
        return {}
    try:
        if turn.session_cache is None:
            turn.session_state(store)
        return chain.get(turn) or {}
    except Exception:  # (the store failed: each filter reads it again and fails as it would)
        return {}


def _check_order(filters: list[Filter]) -> None:
    position = {f.name: i for i, f in enumerate(filters)}
    for i, f in enumerate(filters):
        for first in f.runs_after:
            if position.get(first, -1) > i:
                raise ConfigError(f"pipeline: {f.name} must come after {first} (it consumes what {first} "
                                  f"offers in the same request); the chain is {', '.join(position)}")


def field_owners(filters: Iterable[Any]) -> dict[str, tuple[str, ManifestField]]:
    """Manifest field -> (the filter that fills it, how); a field two filters
    declare is a ``ConfigError``."""
    owners: dict[str, tuple[str, ManifestField]] = {}
    for f in filters:
        for name, spec in f.manifest_fields.items():
            other = owners.get(name)
            if other is not None and other[0] != f.name:
                raise ConfigError(f"filters {other[0]} and {f.name} both report the manifest field {name!r}")
            owners[name] = (f.name, spec)
    return owners


class _Undo(Exception):
    def __init__(self, name: str):
        self.name = name


def _egress_watches(turn: Turn) -> bool:
    """Whether every last edit of the turn only reads (``watches_events``)."""
    return not turn.egress or all(getattr(e, "watches_events", False) for e in turn.egress)


def _run_egress(turn: Turn, hook: str, obj: Any) -> None:
    for egress in turn.egress or ():
        t0 = time.perf_counter()
        try:
            getattr(egress, hook)(turn, obj)
        except Exception as exc:
            log.warning("turn %s: %s failed on the answer's last edit: %s", turn.turn_id, egress.name,
                        type(exc).__name__)
            _mark_degraded(turn, egress.name)
            raise FilterError(egress.name, f"the answer's last edit failed ({type(exc).__name__})", 502,
                              turn.turn_id) from exc
        finally:
            _add_time(turn, egress.name, t0)


def _run_now(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (every await in it finishes at
    once) to its end, on this thread."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("a request hook waited on something while run blocking (use run_request_async)")


def _store_fails_closed(turn: Turn) -> bool:
    """Whether a turn whose store is down is refused (``[store] on_unavailable``, default yes)."""
    cfg = turn.services.config
    return getattr(getattr(cfg, "store", None), "on_unavailable", "fail_closed") != "forward"


def _retrieved(fut: "asyncio.Future[Any]") -> None:
    if not fut.cancelled():
        fut.exception()


def _resolve(fut: "asyncio.Future[Any]", value: Any) -> None:
    if not fut.done():  # a write run again (its group retried) was staged already
        fut.set_result(value)


def _mark_degraded(turn: Turn, name: str) -> None:
    if name not in turn.degraded:
        turn.degraded.append(name)


def _add_time(turn: Turn, name: str, t0: float) -> None:
    turn.timings_ms[name] = turn.timings_ms.get(name, 0.0) + (time.perf_counter() - t0) * 1000.0
