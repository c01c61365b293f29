"""effects — the tool-effect ledger: idempotency keys, write-ahead, the ledger summary.

The filter's hooks are here; what they use is one module each: ``calls``
(an answer's tool calls, assembled as it streams), ``settle`` (which call a
result answers, and its record), ``summary`` (the ledger summary after a
compaction, the public interface other filters read), ``writes`` (what an
answer leaves, written after it), ``history`` (compaction and threads),
``rules`` (keys, tool classes, references).

Response side: every tool call the model makes (all three APIs, streamed or
not, assembled from the redacted deltas) is recorded ``pending`` when the
response ends, under an idempotency key (``rules``). A call whose key
already completed in this task is flagged ``duplicate`` (manifest and
telemetry) and, with ``duplicate_policy = "note"``, noted to the model in the
next request.

Request side: the tool results the client sends back are matched to their
calls and settled (``settle``). All of it is committed in one store batch
*before* the request is forwarded (write-ahead): if the commit fails the
request is refused (503 in the caller's format). The batch runs on the
store's writer thread (``await turn.commit(...)``), so the event loop
serves other turns during the fsync, and it runs behind any response-end
write still queued. Only
results in items new since the thread's last request are looked at, so a
turn costs O(new items).

``unknown``: a result that never came is never guessed. The store reads a
``pending`` record older than its ``pending_timeout`` as ``unknown``; this
filter stores ``unknown`` sooner when the session moves on without the
result (the client sent the call back without its result, or compacted its
history before the result came). A late result still completes it.

Compaction (``history``, and the agents' own recorded shapes in
``compaction.detect`` — Claude Code's ``--continue`` process sends another
system text, so its summary starts a thread of a new profile): once a
thread's history lost turns, every
request of it gets the ledger summary (``summary``: kind ``checkpoint``, trust
``system``) with the goal, the side effects the history no longer shows
(completed / failed with compact arguments and references or an excerpt;
pending / unknown ones), and the next safe action when there is one.
It is a ``LedgerSummary``, carrying the records it lists: the ``checkpoint``
filter, which runs after this one (it says so: ``runs_after``), folds them
into the task-state checkpoint's effects field (one segment, one budget);
without it ``inject`` places the summary as it is. The summary is also kept
in the store (``checkpoints``, id ``effects:<scope>``), filed under every
session whose effects it lists: erasing any of them (or its subject) erases
it, and the next turn renders it again without them.

Test runs (``pytest``, ``go test``, ``npm test``…: ``rules``) are not
side effects: repeating one harms nothing, and a passing run is the
task-state checkpoint's verified evidence.

Goal: the ``X-Ctx-Goal`` header when the agent sends one, else the first
user turn of the session's first conversation (reminder blocks removed). The
header is redacted (``turn.redact_added``, when redact runs) before anything keeps
it: it is stored in the session record and the summary, and reaches the
model in it.

Arguments nested deeper than ``rules.MAX_DEPTH`` are recorded and keyed
as a stand-in text: such a call is still on the ledger, never a 500.

Per turn, ``turn.state["effects"]`` is an ``EffectsState``: ``effects``
(``[{key, call_id, tool, state, side_effect, duplicate}]``), ``summary``
(the ledger summary's ref | None; the manifest's ``checkpoint``),
``compacted``, ``compaction_reason``, ``duplicates``, and the
``capture`` of the answer's tool calls; ``report`` gives the manifest its part.

Fails closed (``required``): no request goes out whose tool results are not on
disk. A failure at response end only marks the turn degraded: the next
request rebuilds a lost pending record from the history it carries.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping

from ctxproxy.config import ConfigError
from ctxproxy.store.errors import StoreError, WriteNeeded
from ctxproxy.store.records import PENDING, SETTLED_STATES
from ctxproxy.store.services.digest import text_sha256

from ..base import Filter, FilterError, Turn
from ..compaction import RESUMED, detect
from ..goal import header_goal
from ..report import FLAG, TEXT, ManifestField, as_dict, items, text
from ..segments import Segment, offer
from ..services import Services
from ..view import ResponseView, StreamEvent
from .calls import Capture
from ..repeats import LastDecisions
from .history import T_RESOLUTION, check, clean_text, prune_threads
from .rules import (
    DEFAULT_READ_ONLY_COMMANDS,
    DEFAULT_READ_ONLY_TOOLS,
    DEFAULT_SHELL_TOOLS,
    DEFAULT_SIDE_EFFECT_TOOLS,
    DEFAULT_TEST_COMMANDS,
    ToolClasses,
)
from .settle import READ_ONLY, History, Settler, aliases, occurrence_id
from .summary import SummaryBook, compact_args, completed
from .writes import ResponseWrites

log = logging.getLogger("ctxproxy.filters.effects")

COMMIT_MESSAGE = "could not record tool results in the effect ledger before forwarding (store error); request " \
                 "not forwarded"

DEFAULT_MARKERS = (
    "This session is being continued from a previous conversation",  # Claude Code after /compact
    "Another language model started to solve this problem",  # Codex compaction summary
)


@dataclass(frozen=True)
class EffectsConfig:
    key_scope: Literal["task", "session"] = "task"  # idempotency keys (and duplicates) are per task or per session
    record_read_only: bool = False  # also store read-only calls (never shown in the checkpoint)
    default_side_effect: bool = True  # tools in neither list below count as side-effecting
    read_only_tools: tuple[str, ...] = DEFAULT_READ_ONLY_TOOLS  # tools that only read
    side_effect_tools: tuple[str, ...] = DEFAULT_SIDE_EFFECT_TOOLS  # tools that change something
    shell_tools: Mapping[str, str] = field(  # shell tool -> argument holding its command line
        default_factory=lambda: MappingProxyType(dict(DEFAULT_SHELL_TOOLS)))
    read_only_commands: tuple[str, ...] = DEFAULT_READ_ONLY_COMMANDS  # shell command prefixes that only read
    test_commands: tuple[str, ...] = DEFAULT_TEST_COMMANDS  # test runners: not side effects (a passing run is evidence)
    builtin_extractors: bool = True  # find URLs, PR/issue numbers, commit shas and JSON ids in results
    extractors: Mapping[str, tuple[str, ...]] = field(  # tool name ("*" = every tool) -> extra ref regexes
        default_factory=lambda: MappingProxyType({}))
    max_refs: int = 8  # references kept per result
    excerpt_chars: int = 160  # result excerpt kept per effect
    max_arg_string: int = 512  # longer strings in stored arguments are cut (the key uses the full args)
    exit_code_failures: bool = True  # a shell result with a non-zero exit code settles as failed
    checkpoint: bool = True  # offer the task-state checkpoint after a compaction
    checkpoint_placement: Literal["turn", "system"] = "turn"  # next to the latest user turn, or system slot
    checkpoint_priority: int = 90  # inject priority (higher is placed first)
    checkpoint_max_tokens: int = 2000  # its own token cap when placed alone (folded: the task state's budget)
    checkpoint_max_effects: int = 40  # newest effects listed; older ones are counted
    args_chars: int = 160  # characters of arguments shown per effect in the checkpoint
    summary_markers: tuple[str, ...] = DEFAULT_MARKERS  # first-turn texts that mean "resumed from a summary"
    duplicate_policy: Literal["note", "flag"] = "note"  # note a repeated side effect to the model, or only flag it
    async_record: bool = True  # record a response's calls on a writer thread, off the event loop
    max_threads: int = 16  # conversations tracked per session (sub-agents, compacted histories)

    def validate(self, path: str) -> None:
        for name in ("max_refs", "excerpt_chars", "max_arg_string", "checkpoint_max_tokens",
                     "checkpoint_max_effects", "args_chars", "max_threads"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{path}.{name}: must be at least 1, got {getattr(self, name)}")
        for tool, patterns in self.extractors.items():
            for i, p in enumerate(patterns):
                try:
                    re.compile(p)
                except re.error as exc:
                    raise ConfigError(f"{path}.extractors.{tool}[{i}]: bad regex {p!r}: {exc}") from None
        for tool, arg in self.shell_tools.items():
            if not arg:
                raise ConfigError(f"{path}.shell_tools.{tool}: empty argument name")


@dataclass(eq=False)
class EffectsState:
    """The filter's per-turn state (``turn.state["effects"]``)."""

    effects: list[dict] = field(default_factory=list)  # the ledger entries this turn touched
    summary: str | None = None  # ref of the ledger summary offered (the manifest's "checkpoint")
    compacted: bool = False  # the client compacted its history
    compaction_reason: str | None = None
    duplicates: int = 0
    capture: Capture | None = None  # the answer's tool calls, assembled as they stream
    repeat: Any = None  # (ledger state, thread, scope): this request decided with nothing to do (``replay``)


@dataclass(frozen=True, eq=False)
class _Decided:
    """A request's ledger decided on a snapshot that needs no ledger write, only
    the session's ledger state stored: what the writer keeps if ``effects`` (the
    state it was decided on) is still the stored one."""

    effects: Any  # the session's ledger state the decision read
    es: dict  # the new one
    segments: list
    entries: list  # the turn's ledger entries it made
    flags: tuple  # (thread, compacted, compaction reason, summary ref)


class EffectsFilter(Filter):
    name = "effects"
    required = True  # write-ahead: a request whose results are not on disk is not forwarded
    Config = EffectsConfig
    manifest_fields = {"effects": ManifestField(items(lambda e: _manifest_effect(as_dict(e)))), "checkpoint": TEXT,
                       "client_compacted": FLAG}

    def __init__(self, config: EffectsConfig, store: Any = None, clock: Callable[[], float] = time.time):
        self.config = config
        self.store = store
        self.clock = clock
        self.classes = ToolClasses.build(config.read_only_tools, config.side_effect_tools, config.shell_tools,
                                         config.read_only_commands, config.default_side_effect,
                                         config.test_commands)
        self.settler = Settler(config, self.classes)  # which call a result answers, and its record
        self.summaries = SummaryBook(config, self.classes)  # the ledger summary after a compaction
        self.writes = ResponseWrites()  # what an answer leaves, written after it
        self.repeats = LastDecisions(self.name)  # a request sent again as it was: decided as before

    @classmethod
    def create(cls, config: EffectsConfig | None, services: Services) -> "EffectsFilter":
        return cls(config or EffectsConfig(), services.store)

    # -- helpers ---------------------------------------------------------------

    def _store(self, turn: Turn) -> Any:
        store = self.store if self.store is not None else turn.services.store
        if store is None:
            raise FilterError(self.name, "the effect ledger has no store; request not forwarded", 503,
                              turn.turn_id)
        return store

    def _state(self, turn: Turn) -> EffectsState:
        st = turn.state.get(self.name)
        if st is None:
            st = turn.state[self.name] = EffectsState()
        return st

    def report(self, turn: Turn) -> dict | None:
        st = turn.state.get(self.name)
        if not st:
            return None
        return {"effects": list(st.effects), "checkpoint": st.summary, "client_compacted": st.compacted}

    def _capture(self, turn: Turn) -> Capture:
        st = self._state(turn)
        if st.capture is None:
            st.capture = Capture()
        return st.capture

    def _scope(self, turn: Turn) -> tuple[str, str, str, str]:
        ident = turn.identity
        session = ident.session or "unidentified"
        task = ident.task or session
        return ident.tenant, session, task, task if self.config.key_scope == "task" else session

    @staticmethod
    def _entry(rec: Any, duplicate: bool = False) -> dict:
        return {"key": rec.key, "call_id": rec.call_id, "tool": rec.tool, "state": rec.state,
                "side_effect": rec.side_effect, "duplicate": duplicate}

    # -- request: settle results, detect compaction, offer the ledger summary ----

    async def on_request(self, turn: Turn) -> None:
        view = turn.request
        if view is None:
            return None
        st = self._state(turn)
        if self._decided_before(turn):
            st.repeat = self.repeats.get(turn)
            return None
        tools = view.tool_names()
        results = view.tool_results()
        if not tools and not results:
            return None  # an auxiliary call (title, quota, command-prefix check): nothing to record
        store = self._store(turn)
        tenant, session, task, scope = self._scope(turn)
        cap = self._capture(turn)
        cap.scope = (tenant, session, task, scope)
        cap.goal = header_goal(turn)  # once, here: _ledger may run twice, and on the writer thread
        lazy = History(view)
        mark = len(st.effects)
        # The model's last answer here made calls: this request brings their results (a write).
        expect_write = self.writes.brings_results(cap.scope[:2]) and bool(results)
        # This session's response-end write, if still queued, may hold what this request continues
        # (its calls, its response id): then the ledger is read behind it on the writer's thread.
        queued = self.writes.queued(cap.scope[:2])
        decided: _Decided | None = None

        def write(b: Any) -> list[Segment]:
            # On the store's writer thread, after any response-end write queued before it; a
            # batch that wrote nothing ends without an fsync.
            sess = b.sessions.get(tenant, session) or {}  # read again under the writer lock
            if decided is not None and sess.get("effects") == decided.effects:
                st.effects[mark:] = decided.entries  # (a retried group may have run the full path first)
                cap.thread, st.compacted, st.compaction_reason, st.summary = decided.flags
                self._keep(b, turn, tenant, session, decided.es, sess)
                return decided.segments
            # (Changed since the snapshot, by another process: settled again here. The request goes
            # with the snapshot's segments, as a turn decided on a snapshot that wrote nothing does.)
            del st.effects[mark:]  # a snapshot attempt or a retried group may have added entries
            segments, es = self._ledger(b, sess, turn, view, st, cap, tools, results, lazy)
            self._keep(b, turn, tenant, session, es, sess)
            return segments

        if not expect_write and (queued is None or queued.done()):
            # Most other turns bring nothing new: decide on a read snapshot, no writer lock, no fsync.
            try:
                # The request the session sent last, decided then: only the session's state says
                # so (one read, kept decoded in the store's session cache), no snapshot needed.
                if self._repeat(turn, turn.session_state(store, tenant, session), cap):
                    return None
                turn.session_changed()  # the ledger reads it again in its snapshot, with the records
                with store.snapshot() as r:
                    sess = turn.session_state(r, tenant, session)  # read in the snapshot
                    segments, es = self._ledger(r, sess, turn, view, st, cap, tools, results, lazy)
                    try:
                        self._keep(r, turn, tenant, session, es, sess)
                        if not segments and len(st.effects) == mark and not st.compacted and \
                                not (es.get("threads") or {}).get(cap.thread, {}).get("c"):
                            # Decided with nothing to write or offer, on a thread never compacted (whose
                            # summary would read the task's records): the same request again decides the same
                            st.repeat = (es, cap.thread, cap.scope)
                            self.repeats.keep(turn, st.repeat)
                    except WriteNeeded:
                        # The ledger needs no write, only the session's ledger state (a thread first
                        # seen: a conversation this process never saw). The writer keeps this
                        # decision if that state is still the one it was made on.
                        decided = _Decided(sess.get("effects"), es, segments, st.effects[mark:],
                                           (cap.thread, st.compacted, st.compaction_reason, st.summary))
            except WriteNeeded:
                pass
            except StoreError as exc:
                log.warning("turn %s: effect ledger read failed: %s", turn.turn_id, exc)
                raise FilterError(self.name, "could not read the effect ledger (store error); request not "
                                             "forwarded", 503, turn.turn_id) from exc
            else:
                if decided is not None:
                    # Only the session's ledger state to store: it needs no result, so it rides
                    # with the turn's next write-ahead (one fsync), on disk before the request leaves.
                    turn.commit_ahead(self.name, store, write, COMMIT_MESSAGE)
                for seg in segments:
                    offer(turn, seg)
                return None

        segments = await turn.commit(store, write, COMMIT_MESSAGE)
        turn.session_changed()
        for seg in segments:  # offered only once the batch is on disk
            offer(turn, seg)

    def _decided_before(self, turn: Turn) -> bool:
        """The request the session sent last, decided then with nothing to do
        (``_repeat``), told before its tools and results are read: a request kept
        as decided had some, and the same bytes have the same. Not when the
        session's last answer made calls (their results may come now) or its
        response-end write is still queued (the full path reads behind it)."""
        if self.repeats.peek(turn) is None:
            return False
        store = self.store if self.store is not None else turn.services.store
        if store is None:
            return False
        scope = self._scope(turn)
        if self.writes.awaits_results(scope[:2]):
            return False
        queued = self.writes.queued(scope[:2])
        if queued is not None and not queued.done():
            return False
        cap = self._capture(turn)
        cap.scope = scope
        cap.goal = header_goal(turn)
        if self._repeat(turn, turn.session_state(store, scope[0], scope[1]), cap):
            return True
        cap.scope = cap.goal = None  # decided in full below, as a request never seen
        return False

    def replay_memo(self, turn: Turn) -> Any:
        """What ``replay`` needs to decide this request again: the decision this
        turn made or confirmed with nothing to settle, write or offer, on the
        ledger state the session's record holds (None: none such)."""
        st = turn.state.get(self.name)
        memo = st.repeat if st is not None else None
        if memo is None:
            return None
        store = self.store if self.store is not None else turn.services.store
        stored = turn.session_state(store).get("effects")
        return memo if stored is memo[0] or stored == memo[0] else None

    def replay(self, turn: Turn, memo: Any) -> bool:
        """The chain's repeat (``Pipeline``): the session's records are the very ones
        ``memo`` was decided on, so its ledger state is; what else the decision
        read is checked here as ``_decided_before`` does (no answer's calls
        awaiting results, no response-end write queued, the thread's clock)."""
        es, thread, scope = memo
        if self.writes.awaits_results(scope[:2]):
            return False
        queued = self.writes.queued(scope[:2])
        if queued is not None and not queued.done():
            return False
        seen = (es.get("threads") or {}).get(thread) or {}
        if not 0 <= self.clock() - float(seen.get("t", -1e18)) < T_RESOLUTION:
            return False
        st = self._state(turn)
        cap = self._capture(turn)
        cap.scope, cap.goal, cap.thread = scope, header_goal(turn), thread
        st.repeat = memo
        return True

    def _repeat(self, turn: Turn, sess: Mapping[str, Any], cap: Capture) -> bool:
        """This request is the one the session sent last, decided then with nothing
        to settle, write or offer (``repeats``), and the ledger state it left is
        still the stored one: the same decision again, without reading the request.
        (Past ``T_RESOLUTION`` the thread's clock moves: decided in full.)"""
        last = self.repeats.get(turn)
        if last is None:
            return False
        es, thread, scope = last
        stored = sess.get("effects")
        if scope != cap.scope or stored is not es and stored != es:
            return False
        seen = (es.get("threads") or {}).get(thread) or {}
        if not 0 <= self.clock() - float(seen.get("t", -1e18)) < T_RESOLUTION:
            return False
        if stored is not es:  # the session cache's own copy from now on: the next repeat compares by identity
            self.repeats.keep(turn, (stored, thread, scope))
        cap.thread = thread
        return True

    def _ledger(self, b: Any, sess: Mapping[str, Any], turn: Turn, view: Any, st: EffectsState, cap: Capture,
                tools: list, results: list, lazy: History) -> tuple[list[Segment], dict]:
        """Settle this request's results in ``b`` (a batch, or a snapshot that
        raises ``WriteNeeded`` at the first write) given the session's stored
        state ``sess``; returns segments to offer and the session's new ledger
        state (``_keep`` stores it). ``sess`` is not changed."""
        tenant, session, task, scope = cap.scope
        items = view.items()
        previous = view.server_history()
        now = self.clock()
        segments: list[Segment] = []
        es = dict(sess.get("effects") or {})
        threads = dict(es.get("threads") or {})
        chk = check(threads, items, keys=view.history_keys, system=view.system_text(), tools=tools,
                    server_history=previous is not None, markers=self.config.summary_markers,
                    first_user=clean_text(view.first_user_text()) if not threads else "", now=now,
                    previous_response_id=previous,
                    encodings=view.item_encodings())
        if chk.reason is None and chk.thread not in threads:  # a new thread: started by a summary?
            _agent_compaction(chk, threads, view, turn.headers)
        cap.thread = chk.thread
        st.compacted = chk.reason is not None
        st.compaction_reason = chk.reason
        pool_owner = chk.predecessor or chk.thread
        pool = [list(e) for e in threads.get(pool_owner, {}).get("open", ())]
        new = [r for r in results if r.position >= chk.new_from]
        used: set[tuple[str, str]] = set()
        for r in new:
            rec = self.settler.settle(b, turn, r, pool, used, lazy, tenant, session, task, scope)
            if rec is not None and rec is not READ_ONLY:
                st.effects.append(self._entry(rec))
        self.settler.expire(b, pool, used, lazy, chk.reason, tenant)
        thread = chk.state
        thread["open"] = []  # every open call was settled or expired just now
        if chk.predecessor and chk.predecessor != chk.thread and chk.predecessor in threads:
            threads[chk.predecessor] = {**threads[chk.predecessor], "open": []}
        threads[chk.thread] = thread
        es["threads"] = prune_threads(threads, self.config.max_threads)
        if chk.reason:
            es["compactions"] = int(es.get("compactions", 0)) + 1
        if "goal" not in es and not chk.reason:
            goal = _goal(cap.goal, view)
            if goal:
                es["goal"] = goal
        dups = es.pop("dups", None)
        if dups and self.config.duplicate_policy == "note":
            segments.append(self._duplicate_segment(dups, session, now))
        if self.config.checkpoint and thread["c"]:
            seg = self.summaries.summary(b, es, lazy, tenant, session, task, scope, now)
            if seg is not None:
                segments.append(seg)
                st.summary = seg.ref
        return segments, es

    @staticmethod
    def _keep(b: Any, turn: Turn, tenant: str, session: str, es: dict, sess: Mapping[str, Any]) -> None:
        """Store the session's ledger state (``WriteNeeded`` in a snapshot when it changed)."""
        b.sessions.update(tenant, session, {"effects": es}, subject=turn.identity.user or None,
                          current=sess)  # writes nothing if unchanged

    # -- the duplicate note -------------------------------------------------------

    def _duplicate_segment(self, dups: list, session: str, now: float) -> Segment:
        lines = ["ctxproxy effect ledger: your previous response repeated side effects that had already "
                 "completed in this task. Check the earlier results before relying on the repeats, and do not "
                 "repeat completed side effects:"]
        for d in dups[:8]:
            refs = f"; refs: {', '.join(d['refs'])}" if d.get("refs") else ""
            lines.append(f"- {d['tool']} {d['args']} (first completed earlier{refs})")
        ref = "effects-duplicate:" + text_sha256("".join(d["call_id"] for d in dups))[:12]
        return Segment(kind="effects", ref=ref, text="\n".join(lines), origin="effects", scope="task",
                       trust="system", sensitivity="internal", freshness={"observed_at": now},
                       priority=self.config.checkpoint_priority + 5, max_tokens=400, placement="turn",
                       truncatable=True, boundary="item")

    # -- response: capture the calls --------------------------------------------

    def on_response(self, turn: Turn, view: ResponseView) -> None:
        self._capture(turn).whole(view)

    def on_response_event(self, turn: Turn, event: StreamEvent) -> list | None:
        cap = self._capture(turn)
        if cap.response_id is None and turn.api == "responses" and cap.thread is not None:
            cap.response_id = event.response_id()  # WebSocket turns: previous_response_id continues it
        cap.event(event)
        return None

    def on_response_end(self, turn: Turn) -> None:
        st: EffectsState | None = turn.state.get(self.name)
        cap = st.capture if st is not None else None
        if cap is None:
            return
        if cap.open and turn.error_type is None:  # a clean end closes what is still open
            cap.close()
        if not cap.done and not (turn.api == "responses" and cap.thread is not None
                                 and (cap.response_id or turn.response_id)):
            return  # nothing to record (a Responses answer is remembered for previous_response_id)
        st = self._state(turn)
        try:
            write = self._plan_calls(turn, cap, st)
        except Exception as exc:  # the answer is delivered; the next request rebuilds from history
            log.warning("turn %s: recording tool calls failed: %s: %s", turn.turn_id, type(exc).__name__, exc)
            if self.name not in turn.degraded:
                turn.degraded.append(self.name)
            return
        if self.config.async_record:
            self.writes.submit(turn, self._scope(turn)[:2], write, lambda: self._store(turn))
        else:
            try:
                with self._store(turn).batch() as b:
                    write(b)
            except Exception as exc:
                log.warning("turn %s: recording tool calls failed: %s: %s", turn.turn_id, type(exc).__name__, exc)
                if self.name not in turn.degraded:
                    turn.degraded.append(self.name)

    def _plan_calls(self, turn: Turn, cap: Capture, st: EffectsState) -> Callable[[Any], None]:
        """Classify and key the response's calls, flag duplicates (reads only),
        fill the turn's state; returns the write that records them."""
        store = self._store(turn)
        tenant, session, task, scope = cap.scope or self._scope(turn)
        entries = []
        notes = []
        recorded = []
        started = turn.started_ns / 1e9
        for i, (call_id, name, args) in enumerate(cap.done):
            wire = call_id or f"{turn.turn_id}:{i}"
            cid = wire
            side = self.classes.side_effect_of(name, args)
            key, stored = self.settler.key_of(tenant, scope, name, args)
            keep = side or self.config.record_read_only
            same = store.effects.by_key(tenant, key) if keep else []
            # Ids need not be unique: Kimi K2 numbers calls per response (``functions.exec:0``),
            # so a call repeated in a later turn can come with a settled call's id. It is a new
            # occurrence (its own result, a duplicate if the first completed), under an id of its own.
            # A record settled since this turn began, by another request, is this very call: a
            # quick client sent its result to another proxy (or worker) before this one got here.
            settled = next((r for r in same if r.call_id == wire and r.state in SETTLED_STATES), None)
            if settled is not None and (settled.updated_at < started or settled.result_turn_id == turn.turn_id):
                cid = occurrence_id(wire, turn.turn_id, i)
                settled = None
            if settled is None:
                entries.append((cid, wire, name, side, key))
            if not keep:
                continue
            prior = next((r for r in same if side and r.call_id != cid and completed(r)), None)
            recorded.append((cid, wire, name, side, key, stored))
            st.effects.append({"key": key, "call_id": cid, "tool": name,
                                  "state": PENDING if settled is None else settled.state,
                                  "side_effect": side, "duplicate": prior is not None})
            if prior is not None:
                st.duplicates += 1
                notes.append({"call_id": cid, "key": key, "tool": name, "refs": list(prior.refs)[:4],
                              "args": compact_args(name, stored, self.classes, self.config.args_chars)})
        rid = cap.response_id or turn.response_id
        subject = turn.identity.user or None
        if entries:
            self.writes.made_calls((tenant, session))
        turn_id = turn.turn_id

        def write(b: Any) -> None:
            settled = set()
            for cid, wire, name, side, key, stored in recorded:
                rec = b.effects.put_pending(tenant, key=key, call_id=cid, tool=name, args_canonical=stored,
                                            session=session, task=task, side_effect=side, turn_id=turn_id,
                                            aliases=aliases(cid, wire))
                if rec.state in SETTLED_STATES:
                    # its result reached another replica (or worker) before this write landed
                    settled.add((cid, key))
            sess = b.sessions.get(tenant, session) or {}
            es = dict(sess.get("effects") or {})
            threads = dict(es.get("threads") or {})
            if cap.thread is not None and cap.thread in threads:
                th = dict(threads[cap.thread])
                th["open"] = (list(th.get("open", ())) + [
                    [key, cid, name, bool(side)] + ([wire] if wire != cid else [])
                    for cid, wire, name, side, key in entries if (cid, key) not in settled])[-64:]
                if isinstance(rid, str):
                    th["r"] = rid  # a request with previous_response_id=rid continues this thread
                threads[cap.thread] = th
                es["threads"] = threads
            if notes and self.config.duplicate_policy == "note":
                es["dups"] = (list(es.get("dups") or ()) + notes)[-16:]
            b.sessions.update(tenant, session, {"effects": es}, subject=subject)

        return write

    # -- the write queue ---------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued response-end write is on disk (or failed)."""
        self.writes.flush(timeout)

    def close(self) -> None:
        """Shutdown: land the queued writes (the writer itself closes after)."""
        self.writes.flush()

# -- helpers ----------------------------------------------------------------------


def _agent_compaction(chk: Any, threads: dict, view: Any, headers: Any) -> None:
    """A compaction in an agent's own recorded shape (``compaction.detect``) that
    the history comparison missed: Claude Code's ``--continue`` process sends
    another system text, so its summary starts a thread of a new profile. It
    continues the session's most recently seen conversation."""
    found = detect(view, headers)
    if found is None or found.phase != RESUMED:
        return
    chk.reason = f"{found.agent} compaction ({found.style})"
    chk.state["c"] = True
    others = sorted(((t.get("t", 0.0), tid) for tid, t in threads.items() if tid != chk.thread), reverse=True)
    if chk.predecessor is None and others:
        chk.predecessor = others[0][1]


def _manifest_effect(e: dict) -> dict[str, Any]:
    """A ledger entry as the manifest keeps it: the key and state, never the arguments."""
    return {"key": text(e.get("key")), "call_id": text(e.get("call_id")), "tool": text(e.get("tool")),
            "state": text(e.get("state"), 32), "side_effect": bool(e.get("side_effect")),
            "duplicate": bool(e.get("duplicate"))}


def _goal(header: str | None, view: Any) -> str:
    # the first user turn is body text, which redact has already been through
    text = header if header else clean_text(view.first_user_text())
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›")
    return text if len(text) <= 300 else text[:299] + "…"
