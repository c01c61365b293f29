"""effects — the tool-effect ledger: idempotency keys, write-ahead, checkpoint.

Response side: every tool call the model makes (all three APIs, streamed or
not, assembled from the redacted deltas) is recorded ``pending`` when the
response ends, under an idempotency key (``rules``). A call whose key
already completed in this task is flagged ``duplicate`` (manifest and
telemetry) and, with ``duplicate_policy = "note"``, noted to the model in the
next request.

Request side: the tool results the client sends back are matched to their
calls — by call id, by normalised id (OpenClaw replays ``call_ab…`` as
``callab…``), by the key of the call in the history, then by position and
tool name — and settled ``completed`` or ``failed`` (``is_error``, or a shell
result with a non-zero exit code) with a digest, size, references and an
excerpt. Call ids are not trusted to be unique: some providers number calls
per response (Kimi K2's ``functions.exec:0``). Another session's record is
taken for a result only if it is the same call (same tool and arguments as
the call in the history; open, or settled by this same result), and a call
repeating a settled call's id is a new record (``<id>@<turn>.<n>``, the
provider's id kept as an alias). All of it is committed in one store batch
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
checkpoint's verified evidence.

Goal: the ``X-Ctx-Goal`` header when the agent sends one, else the first
user turn of the session's first conversation (reminder blocks removed). The
header is redacted (``turn.redact_added``, when redact runs) before anything keeps
it: it is stored in the session record and the checkpoint, and reaches the
model in the checkpoint.

Arguments nested deeper than ``rules.MAX_DEPTH`` are recorded and keyed
as a stand-in text: such a call is still on the ledger, never a 500.

Per turn, ``turn.state["effects"]`` is an ``EffectsState``: ``effects``
(``[{key, call_id, tool, state, side_effect, duplicate}]``), ``checkpoint``
(ref | None), ``compacted``, ``compaction_reason``, ``duplicates``, and the
``capture`` of the answer's tool calls; ``report`` gives the manifest its part.

Fails closed (``required``): no request goes out whose tool results are not on
disk. A failure at response end only marks the turn degraded: the next
request rebuilds a lost pending record from the history it carries.
"""
from __future__ import annotations

import logging
import re
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping

import orjson

from ctxproxy.config import ConfigError
from ctxproxy.store.bounded import ByteLRU, entry_bytes
from ctxproxy.store.errors import StoreError, WriteNeeded
from ctxproxy.store.records import COMPLETED, FAILED, OPEN_STATES, PENDING, SETTLED_STATES

from ..base import Filter, FilterError, Turn
from ..report import FLAG, TEXT, ManifestField, as_dict, items, text
from ..services import Services
from ..compaction import RESUMED, detect
from .history import check, clean_text, prune_threads
from .rules import (
    DEFAULT_EXTRACTORS,
    DEFAULT_READ_ONLY_COMMANDS,
    DEFAULT_READ_ONLY_TOOLS,
    DEFAULT_SHELL_TOOLS,
    DEFAULT_SIDE_EFFECT_TOOLS,
    DEFAULT_TEST_COMMANDS,
    MAX_DEPTH,
    ToolClasses,
    canonical_json,
    compile_patterns,
    digest,
    effect_key,
    excerpt,
    extract_refs,
    normalize_id,
    normalize_value,
    result_failed,
    shell_output,
    short_args,
)
from ctxproxy.store.services.digest import text_sha256
from ..goal import header_goal
from ..segments import Segment, offer
from .summary import LedgerSummary, compact_args, completed, listing, render_summary
from ..view import ARGS, ResponseView, StreamEvent

log = logging.getLogger("ctxproxy.filters.effects")

CALLED_BYTES = 1 << 20  # sessions whose latest answer made tool calls (~5K)
QUEUED_BYTES = 1 << 20  # sessions with a response-end write still queued
LEDGERS_BYTES = 2 << 20  # side-effect ledgers read, by scope and revision

UNKNOWN_TOOL = "(unknown)"
_READ_ONLY = object()  # a result of a read-only call that is not recorded
_TOO_DEEP = f"(arguments nested deeper than {MAX_DEPTH} levels)"  # what such a call is keyed and stored as

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


@dataclass
class _Capture:
    """Tool calls of one response, assembled as it streams."""

    open: dict[str, list] = field(default_factory=dict)  # channel -> [call_id, name, [text], free_form]
    done: list[tuple[str, str, Any]] = field(default_factory=list)  # (call_id, name, arguments)
    thread: str | None = None  # the request's thread (set by on_request)
    response_id: str | None = None  # of a whole JSON response (streams: turn.response_id)
    scope: tuple[str, str, str, str] | None = None  # tenant, session, task, key scope
    goal: str | None = None  # the X-Ctx-Goal header, redacted (set by on_request)


@dataclass(eq=False)
class EffectsState:
    """The filter's per-turn state (``turn.state["effects"]``)."""

    effects: list[dict] = field(default_factory=list)  # the ledger entries this turn touched
    checkpoint: str | None = None  # ref of the task-state checkpoint offered
    compacted: bool = False  # the client compacted its history
    compaction_reason: str | None = None
    duplicates: int = 0
    capture: _Capture | None = None  # the answer's tool calls, assembled as they stream


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
        self.global_patterns = compile_patterns(
            (DEFAULT_EXTRACTORS if config.builtin_extractors else ()) + tuple(config.extractors.get("*", ())))
        self.tool_patterns = {t: self.global_patterns + compile_patterns(p)
                              for t, p in config.extractors.items() if t != "*"}
        self._last: Future | None = None  # the newest queued response-end write
        # (tenant, session) whose latest answer in this process made tool calls (bounded)
        self._called = ByteLRU(CALLED_BYTES, "sessions whose answer made calls",
                               fixed=entry_bytes(("tenant", "s" * 40), True))
        # (tenant, session) -> its newest queued response-end write (bounded)
        # (only while queued: a done Future, with its Condition, is ~1 KB)
        self._queued = ByteLRU(QUEUED_BYTES, "queued response-end writes", fixed=entry_bytes(("t", "s" * 40), 0) + 1024)
        self._ledgers = ByteLRU(LEDGERS_BYTES, "effect ledgers read")  # see _side_effects
        self._writer: Any = None  # the background writer that holds it

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
        return {"effects": list(st.effects), "checkpoint": st.checkpoint, "client_compacted": st.compacted}

    def _capture(self, turn: Turn) -> _Capture:
        st = self._state(turn)
        if st.capture is None:
            st.capture = _Capture()
        return st.capture

    def _scope(self, turn: Turn) -> tuple[str, str, str, str]:
        ident = turn.identity
        session = ident.session or "unidentified"
        task = ident.task or session
        return ident.tenant, session, task, task if self.config.key_scope == "task" else session

    def _key_of(self, tenant: str, scope: str, tool: str, args: Any) -> tuple[str, str]:
        """(idempotency key, stored args): the key over the full canonical
        arguments, the stored form with long strings cut."""
        try:
            full = canonical_json(args)
        except ValueError:  # nested past MAX_DEPTH: no canonical form, the call is still recorded
            args = _TOO_DEEP
            full = canonical_json(args)
        key = effect_key(tenant, scope, tool, full)
        stored = full if len(full) <= self.config.max_arg_string else canonical_json(
            short_args(args, self.config.max_arg_string))
        return key, stored

    def _settle_fields(self, tool: str, result: Any) -> dict:
        text = result.content
        shell = tool in self.classes.shell
        failed = result.is_error or (self.config.exit_code_failures and shell and result_failed(text))
        shown = shell_output(text) if shell else text  # references and excerpt from what the command printed
        return {
            "state": FAILED if failed else COMPLETED,
            "result_digest": digest(text),
            "result_size": len(text.encode("utf-8", "surrogatepass")),
            "refs": extract_refs(shown, self.tool_patterns.get(tool, self.global_patterns), self.config.max_refs),
            "excerpt": excerpt(shown, self.config.excerpt_chars) or None,
        }

    @staticmethod
    def _entry(rec: Any, duplicate: bool = False) -> dict:
        return {"key": rec.key, "call_id": rec.call_id, "tool": rec.tool, "state": rec.state,
                "side_effect": rec.side_effect, "duplicate": duplicate}

    # -- request: settle results, detect compaction, offer the checkpoint -------

    async def on_request(self, turn: Turn) -> None:
        view = turn.request
        if view is None:
            return None
        st = self._state(turn)
        tools = view.tool_names()
        results = view.tool_results()
        if not tools and not results:
            return None  # an auxiliary call (title, quota, command-prefix check): nothing to record
        store = self._store(turn)
        tenant, session, task, scope = self._scope(turn)
        cap = self._capture(turn)
        cap.scope = (tenant, session, task, scope)
        cap.goal = header_goal(turn)  # once, here: _ledger may run twice, and on the writer thread
        lazy = _History(view)
        mark = len(st.effects)
        # The model's last answer here made calls: this request brings their results (a write).
        expect_write = self._called.pop(cap.scope[:2], False) and bool(results)
        # This session's response-end write, if still queued, may hold what this request continues
        # (its calls, its response id): then the ledger is read behind it on the writer's thread.
        queued = self._queued.get(cap.scope[:2])
        if not expect_write and (queued is None or queued.done()):
            # Most other turns bring nothing new: decide on a read snapshot, no writer lock, no fsync.
            try:
                with store.snapshot() as r:
                    sess = turn.session_state(r, tenant, session)  # read in the snapshot
                    segments = self._ledger(r, sess, turn, view, st, cap, tools, results, lazy)
            except WriteNeeded:
                pass
            except StoreError as exc:
                log.warning("turn %s: effect ledger read failed: %s", turn.turn_id, exc)
                raise FilterError(self.name, "could not read the effect ledger (store error); request not "
                                             "forwarded", 503, turn.turn_id) from exc
            else:
                for seg in segments:
                    offer(turn, seg)
                return None

        def write(b: Any) -> list[Segment]:
            # On the store's writer thread, after any response-end write queued before it; a
            # batch that wrote nothing ends without an fsync.
            del st.effects[mark:]  # a snapshot attempt or a retried group may have added entries
            sess = b.sessions.get(tenant, session) or {}  # read again under the writer lock
            return self._ledger(b, sess, turn, view, st, cap, tools, results, lazy)

        segments = await turn.commit(store, write, "could not record tool results in the effect ledger before "
                                                   "forwarding (store error); request not forwarded")
        turn.session_changed()
        for seg in segments:  # offered only once the batch is on disk
            offer(turn, seg)

    def _ledger(self, b: Any, sess: Mapping[str, Any], turn: Turn, view: Any, st: EffectsState, cap: "_Capture",
                tools: list, results: list, lazy: "_History") -> list[Segment]:
        """Settle this request's results in ``b`` (a batch, or a snapshot that
        raises ``WriteNeeded`` at the first write) given the session's stored
        state ``sess``; returns segments to offer."""
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
            rec = self._settle(b, turn, r, pool, used, lazy, tenant, session, task, scope)
            if rec is not None and rec is not _READ_ONLY:
                st.effects.append(self._entry(rec))
        self._expire(b, pool, used, lazy, chk.reason, tenant)
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
            seg = self._checkpoint(b, es, lazy, tenant, session, task, scope, now)
            if seg is not None:
                segments.append(seg)
                st.checkpoint = seg.ref
        b.sessions.update(tenant, session, {"effects": es}, subject=turn.identity.user or None,
                          current=sess)  # writes nothing if unchanged
        return segments

    def _settle(self, b: Any, turn: Turn, r: Any, pool: list, used: set, lazy: "_History",
                tenant: str, session: str, task: str, scope: str) -> Any:
        """Settle one tool result; returns the record, or None for a result of
        a read-only call that is not recorded."""
        rid = r.call_id or ""
        nid = normalize_id(rid)
        # 1. the thread's open calls, by id or normalised id (no store read needed)
        for e in pool:
            wire = _wire_id(e)
            if (e[1], e[0]) not in used and (wire == rid or (nid and normalize_id(wire) == nid)):
                used.add((e[1], e[0]))
                if not e[3]:
                    return self._complete_read_only(b, turn, r, e[0], e[1], e[2]) or _READ_ONLY
                rec = self._complete(b, turn, r, e[0], e[1], e[2])
                if rec is not None:
                    return rec
                break  # record gone (erased?): rebuild it from the history below
        # 2. the store, by id, by normalised id, then tenant-wide for long ids (a session whose
        #    id changed, e.g. resumed) if the record found there is this very call
        rec = None
        if rid:
            rec = b.effects.by_call_id(tenant, rid, session=session)
            if rec is None and nid and nid != rid:
                rec = b.effects.by_call_id(tenant, nid, session=session)
            if rec is None and len(rid) >= 12:
                rec = b.effects.by_call_id(tenant, rid)
                if rec is not None and not self._same_call(rec, lazy.call(rid, r.position), r, tenant, task):
                    rec = None
        if rec is not None and (rec.call_id, rec.key) not in used:
            used.add((rec.call_id, rec.key))
            return self._complete(b, turn, r, rec.key, rec.call_id, rec.tool) or rec
        call = lazy.call(rid, r.position)
        # 3. the id was rewritten beyond recognition: among the open calls of the
        #    thread's latest response, the one with the same key (tool and
        #    arguments), else by position and tool name (a call whose own id is
        #    not in the history); with no history (server-side), by position
        if call is not None:
            key, _ = self._key_of(tenant, scope, call.name, call.arguments)
            rec = (self._from_pool(b, turn, r, pool, used, rid, lambda e: e[0] == key)
                   or self._from_pool(b, turn, r, pool, used, rid,
                                      lambda e: e[2] == call.name and not lazy.has_call(_wire_id(e))))
        else:
            rec = self._from_pool(b, turn, r, pool, used, rid, lambda e: True)
        if rec is not None:
            return rec
        # 4. never recorded (pending write lost, proxy added mid-session): record it now
        if call is not None:
            tool, args = call.name, call.arguments
        else:
            tool, args = UNKNOWN_TOOL, {"call_id": rid}
        side = self.classes.side_effect_of(tool, args) if call is not None else True
        if not side and not self.config.record_read_only:
            return None
        key, stored = self._key_of(tenant, scope, tool, args)
        wire = rid or f"{turn.turn_id}:{r.position}"
        cid = wire
        taken = b.effects.get(tenant, key, cid)
        if taken is not None and taken.session != session:  # another session's call (not ours: step 2)
            cid = _occurrence_id(wire, turn.turn_id, r.position)
        b.effects.put_pending(tenant, key=key, call_id=cid, tool=tool, args_canonical=stored, session=session,
                              task=task, side_effect=side, turn_id=None, aliases=_aliases(cid, wire))
        used.add((cid, key))
        return self._complete(b, turn, r, key, cid, tool)

    def _same_call(self, rec: Any, call: Any, r: Any, tenant: str, task: str) -> bool:
        """Whether ``rec``, another session's record found by the result's call
        id alone, is the call ``r`` answers. Ids are not unique across sessions
        (Kimi K2 numbers calls per response: ``functions.exec:0``), so it must be
        the same tool with the same arguments as the call in this request's
        history (with no such call: a record of this task), and either still
        open or settled by this very result (history replayed under a new
        session id). Otherwise the result is this session's own call (step 4)."""
        if call is not None:
            scope = rec.task if self.config.key_scope == "task" else rec.session
            if rec.tool != call.name or scope is None or rec.key != self._key_of(
                    tenant, scope, call.name, call.arguments)[0]:
                return False
        elif rec.task != task:
            return False
        return rec.state in OPEN_STATES or rec.result_digest == digest(r.content)

    def _complete(self, b: Any, turn: Turn, r: Any, key: str, call_id: str, tool: str) -> Any:
        return b.effects.complete(turn.identity.tenant, key, call_id, turn_id=turn.turn_id,
                                  **self._settle_fields(tool, r))

    def _complete_read_only(self, b: Any, turn: Turn, r: Any, key: str, call_id: str, tool: str) -> Any:
        if not self.config.record_read_only:
            return None
        return self._complete(b, turn, r, key, call_id, tool)

    @staticmethod
    def _alias(b: Any, tenant: str, rec: Any, call_id: str) -> None:
        """Remember the form the call id came back in (a no-op if known)."""
        if call_id and call_id != rec.call_id and call_id not in rec.aliases:
            b.effects.put_pending(tenant, key=rec.key, call_id=rec.call_id, tool=rec.tool,
                                  args_canonical=rec.args_canonical, session=rec.session, task=rec.task,
                                  side_effect=rec.side_effect, aliases=[call_id])

    def _from_pool(self, b: Any, turn: Turn, r: Any, pool: list, used: set, rid: str,
                   match: Callable[[list], bool]) -> Any:
        """The first unused open call of the pool that ``match`` accepts, settled
        by result ``r`` (its id remembered as an alias); None if there is none."""
        tenant = turn.identity.tenant
        for e in pool:
            if (e[1], e[0]) in used or not match(e):
                continue
            used.add((e[1], e[0]))
            if not e[3]:
                return self._complete_read_only(b, turn, r, e[0], e[1], e[2]) or _READ_ONLY
            cand = b.effects.get(tenant, e[0], e[1])
            if cand is not None:
                self._alias(b, tenant, cand, rid)
                return self._complete(b, turn, r, cand.key, cand.call_id, cand.tool) or cand
        return None

    def _expire(self, b: Any, pool: list, used: set, lazy: "_History", reason: str | None,
                tenant: str) -> None:
        """The open calls of the latest response whose result this request did
        not bring will not get one: the client sent the call back without its
        result, compacted its history first, or continued without the call (it
        discarded or retried that response). They become ``unknown``: whether
        they ran is not known, and it is never guessed."""
        for e in pool:
            if (e[1], e[0]) in used or not e[3]:
                continue
            if lazy.has_call(_wire_id(e)):
                note = "the client sent the call back without its result"
            elif reason:
                note = f"history compacted before its result came back ({reason})"
            else:
                note = "the client continued without this call (its response was discarded or retried)"
            b.effects.mark_unknown(tenant, e[0], e[1], note=note)

    # -- the checkpoint and the duplicate note ------------------------------------

    def _checkpoint(self, b: Any, es: dict, lazy: "_History", tenant: str, session: str, task: str,
                    scope: str, now: float) -> Segment | None:
        cfg = self.config
        memo = self._side_effects(b, tenant, {"task": task} if cfg.key_scope == "task" else {"session": session},
                                  now)
        hidden = [r for r in memo.records if not lazy.visible(r)]
        if not hidden:
            return None
        sig = (tuple(id(r) for r in hidden), es.get("goal"))
        rendered = memo.rendered  # (read once: the writer thread may render it too)
        if rendered is None or rendered[0] != sig:
            text = render_summary(hidden, es.get("goal"), self.classes, cfg.args_chars, cfg.checkpoint_max_effects)
            rendered = memo.rendered = (sig, text, text_sha256(text)[:12])
        _, text, rev = rendered
        ref = f"checkpoint:{scope}@{rev}"
        if es.get("cp") != rev:
            # A task's checkpoint lists the effects of each of its sessions: erasing any of
            # them (or its subject) must erase it too, so it is filed under all of them.
            b.checkpoints.put(tenant, f"effects:{scope}", {
                "ref": ref, "revision": rev, "text": text, "keys": [[r.key, r.call_id] for r in hidden],
                "observed_at": now}, session=session,
                sessions=sorted({r.session for r in hidden if r.session is not None}))
            es["cp"] = rev
        return LedgerSummary(kind="checkpoint", ref=ref, text=text, origin="effects",
                             scope="task" if cfg.key_scope == "task" else "session", trust="system",
                             sensitivity="internal", freshness={"observed_at": now, "revision": rev},
                             priority=cfg.checkpoint_priority, max_tokens=cfg.checkpoint_max_tokens,
                             placement=cfg.checkpoint_placement, truncatable=True, boundary="item",
                             records=tuple(hidden), classes=self.classes, args_chars=cfg.args_chars,
                             listing=listing(cfg.key_scope, task if cfg.key_scope == "task" else session))

    def _side_effects(self, b: Any, tenant: str, where: dict, now: float) -> "_Ledger":
        """The scope's side-effecting records, kept in this process until the
        ledger's revision for the scope changes or a pending record would start
        reading as unknown: after a compaction every turn shows the checkpoint,
        and it should not cost a scan of the whole ledger each time."""
        rev = b.effects.revision(tenant, **where)
        key = (tenant, *where.items())
        memo = self._ledgers.get(key)  # write-aheads run this on the store's writer thread
        if memo is not None and memo.rev == rev and now < memo.until:
            return memo
        records = b.effects.list(tenant, side_effect=True, **where)
        timeout = b.pending_timeout
        until = min((r.created_at + timeout for r in records if r.state == PENDING and timeout is not None),
                    default=float("inf"))
        memo = _Ledger(rev, until, records)
        if rev is not None or not records:  # (records without a revision predate it: read them each time)
            self._ledgers.put(key, memo)
        return memo

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
        cap = self._capture(turn)
        cap.response_id = view.response_id()
        for c in view.tool_calls():
            # a copy: the view is edited after this hook (reversible redaction's last edit puts
            # values back into these very dicts), and the ledger keeps what the filters saw.
            # normalize_value builds new containers and, unlike an orjson round trip, takes any
            # int and stops at MAX_DEPTH with a ValueError instead of failing the response.
            try:
                args = normalize_value(c.arguments)
            except ValueError:
                args = _TOO_DEEP
            cap.done.append((c.call_id, c.name, args))

    def on_response_event(self, turn: Turn, event: StreamEvent) -> list | None:
        cap = self._capture(turn)
        if cap.response_id is None and turn.api == "responses" and cap.thread is not None:
            cap.response_id = event.response_id()  # WebSocket turns: previous_response_id continues it
        for ch, cid, name in event.tool_call_starts():
            cap.open[ch] = [cid, name, [], False]
        if cap.open:
            for d in event.deltas():
                entry = cap.open.get(d.channel)
                if entry is not None:
                    entry[2].append(d.text)
                    if d.kind != ARGS:
                        entry[3] = True  # free-form (custom tool) input, not JSON
            for ch in event.closed_channels():
                entry = cap.open.pop(ch, None)
                if entry is not None:
                    cap.done.append((entry[0], entry[1], _decode(entry[2], entry[3])))
        return None

    def on_response_end(self, turn: Turn) -> None:
        st: EffectsState | None = turn.state.get(self.name)
        cap = st.capture if st is not None else None
        if cap is None:
            return
        if cap.open and turn.error_type is None:  # a clean end closes what is still open
            for entry in cap.open.values():
                cap.done.append((entry[0], entry[1], _decode(entry[2], entry[3])))
            cap.open.clear()
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
            self._submit(turn, write)
        else:
            try:
                with self._store(turn).batch() as b:
                    write(b)
            except Exception as exc:
                log.warning("turn %s: recording tool calls failed: %s: %s", turn.turn_id, type(exc).__name__, exc)
                if self.name not in turn.degraded:
                    turn.degraded.append(self.name)

    def _plan_calls(self, turn: Turn, cap: _Capture, st: EffectsState) -> Callable[[Any], None]:
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
            key, stored = self._key_of(tenant, scope, name, args)
            keep = side or self.config.record_read_only
            same = store.effects.by_key(tenant, key) if keep else []
            # Ids need not be unique: Kimi K2 numbers calls per response (``functions.exec:0``),
            # so a call repeated in a later turn can come with a settled call's id. It is a new
            # occurrence (its own result, a duplicate if the first completed), under an id of its own.
            # A record settled since this turn began, by another request, is this very call: a
            # quick client sent its result to another proxy (or worker) before this one got here.
            settled = next((r for r in same if r.call_id == wire and r.state in SETTLED_STATES), None)
            if settled is not None and (settled.updated_at < started or settled.result_turn_id == turn.turn_id):
                cid = _occurrence_id(wire, turn.turn_id, i)
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
            self._called.put((tenant, session), True)
        turn_id = turn.turn_id

        def write(b: Any) -> None:
            for cid, wire, name, side, key, stored in recorded:
                b.effects.put_pending(tenant, key=key, call_id=cid, tool=name, args_canonical=stored,
                                      session=session, task=task, side_effect=side, turn_id=turn_id,
                                      aliases=_aliases(cid, wire))
            sess = b.sessions.get(tenant, session) or {}
            es = dict(sess.get("effects") or {})
            threads = dict(es.get("threads") or {})
            if cap.thread is not None and cap.thread in threads:
                th = dict(threads[cap.thread])
                th["open"] = (list(th.get("open", ())) + [
                    [key, cid, name, bool(side)] + ([wire] if wire != cid else [])
                    for cid, wire, name, side, key in entries])[-64:]
                if isinstance(rid, str):
                    th["r"] = rid  # a request with previous_response_id=rid continues this thread
                threads[cap.thread] = th
                es["threads"] = threads
            if notes and self.config.duplicate_policy == "note":
                es["dups"] = (list(es.get("dups") or ()) + notes)[-16:]
            b.sessions.update(tenant, session, {"effects": es}, subject=subject)

        return write

    # -- the background writer ---------------------------------------------------

    def _submit(self, turn: Turn, write: Callable[[Any], None]) -> None:
        """Queue ``write`` on the store's background writer (group commit, in
        order); the event loop does not wait for the fsync."""
        writer = turn.services.writer
        if writer is None:  # no shared writer (embedded use): write now
            with self._store(turn).batch() as b:
                write(b)
            return
        turn_id = turn.turn_id
        fut = writer.submit(write)
        self._last = fut
        self._writer = writer
        scope = self._scope(turn)[:2]
        self._queued.put(scope, fut)

        def done(f: Future) -> None:
            self._queued.discard(scope, f)
            exc = f.exception()
            if exc is not None:
                log.warning("turn %s: recording tool calls failed: %s: %s; the next request rebuilds them "
                            "from its history", turn_id, type(exc).__name__, exc)

        fut.add_done_callback(done)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued response-end write is on disk (or failed)."""
        last = self._last
        if last is not None and not last.done():
            try:
                self._writer.flush(timeout)  # commit now rather than after the writer's linger
                last.result(timeout)
            except Exception:  # logged by the done callback
                pass

    def close(self) -> None:
        """Shutdown: land the queued writes (the writer itself closes after)."""
        self.flush()

# -- helpers ----------------------------------------------------------------------


@dataclass(eq=False)
class _Ledger:
    """A scope's side-effecting records as read at revision ``rev`` (valid
    until ``until``), and the checkpoint last rendered from them."""

    rev: bytes | None
    until: float
    records: list
    rendered: tuple | None = None  # (signature, text, digest)


class _History:
    """The request's own tool calls and result ids, walked only if needed."""

    def __init__(self, view: Any):
        self.view = view
        self._calls: dict[str, list] | None = None  # id and normalised id -> the calls with it
        self._ids: set[str] | None = None

    def _load(self) -> None:
        if self._calls is None:
            self._calls = {}
            for c in self.view.tool_calls():
                for k in dict.fromkeys((c.call_id, normalize_id(c.call_id))):
                    self._calls.setdefault(k, []).append(c)
            self._ids = {normalize_id(r.call_id) for r in self.view.tool_results()}
            self._ids.update(normalize_id(c) for c in self._calls)

    def call(self, call_id: str, position: int | None = None) -> Any:
        """The call with this id; for the result at ``position``, the latest one
        before it (a provider may reuse an id in every response)."""
        self._load()
        calls = self._calls.get(call_id) or self._calls.get(normalize_id(call_id))
        if not calls:
            return None
        before = [c for c in calls if position is None or c.position <= position]
        return max(before, key=lambda c: c.position) if before else calls[0]

    def has_call(self, call_id: str) -> bool:
        self._load()
        return call_id in self._calls or normalize_id(call_id) in self._calls

    def visible(self, rec: Any) -> bool:
        self._load()
        return any(normalize_id(c) in self._ids for c in (rec.call_id, *rec.aliases))


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


def _aliases(call_id: str, wire: str | None = None) -> list[str]:
    """The other ids a record answers to: the provider's id when the record's
    own was made unique (``_occurrence_id``), and its normalised form."""
    wire = wire or call_id
    return [a for a in dict.fromkeys((wire, normalize_id(wire))) if a and a != call_id]


def _occurrence_id(wire: str, turn_id: str, n: int) -> str:
    """A record id for a call whose provider id is already taken under its key
    (an id reused across turns or sessions): unique per turn; the provider's id
    stays an alias, so lookups by it find the newest occurrence."""
    return f"{wire}@{turn_id}.{n}"


def _wire_id(entry: list) -> str:
    """The provider's id of a thread's open call ``[key, record id, tool, side, wire id?]``."""
    return entry[4] if len(entry) > 4 else entry[1]


def _manifest_effect(e: dict) -> dict[str, Any]:
    """A ledger entry as the manifest keeps it: the key and state, never the arguments."""
    return {"key": text(e.get("key")), "call_id": text(e.get("call_id")), "tool": text(e.get("tool")),
            "state": text(e.get("state"), 32), "side_effect": bool(e.get("side_effect")),
            "duplicate": bool(e.get("duplicate"))}


def _decode(parts: list[str], free_form: bool) -> Any:
    text = "".join(parts)
    if free_form:
        return text
    if not text.strip():
        return {}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _goal(header: str | None, view: Any) -> str:
    # the first user turn is body text, which redact has already been through
    text = header if header else clean_text(view.first_user_text())
    text = " ".join(text.split()).replace("<", "‹").replace(">", "›")
    return text if len(text) <= 300 else text[:299] + "…"
