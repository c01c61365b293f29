"""checkpoint — the task-state checkpoint: what the model must still know after its client compacts.

Every request of a session adds what its new history items say (``extract``)
to the session's task state (``state``): the goal (``X-Ctx-Goal``, else the
first user turn), the user's instructions and corrections verbatim, the
decisions taken, the evidence tool results verified, the last assistant
question still unanswered. Only items new since the conversation's last
request are read (a turn costs O(new items)); after a compaction or when
this process has not seen the conversation, its whole history is read once
(entries are deduplicated, so reading twice changes nothing). A long history
first seen on a session never compacted, for which no checkpoint is due, is
read at the turn's end instead, from the request's bytes as they came: the
request does not wait for it, and the session's next request (or the
answer's read) runs it first if it still waits. What the proxy
relayed counts as history too: the model's answer, as the client received it
(``relayed``), is read when it completes, like an assistant item — a client
that compacts right after an answer (a provider-kept history, Codex's remote
compaction) never sends it back, and the question it asked stays open.

Once a compaction was detected (``compaction.track``: the four agents'
recorded shapes, or history that lost the items seen last), every following
request of the session gets the checkpoint — also when no side effect is
hidden — as a ``task_state`` segment (trust ``system``) that ``inject``
places next to the latest user message: after the caller's cache
breakpoints, so the cached prefix is kept. The compaction request itself (the
one asking the model for the summary) is left alone.

Its effects field is the effect ledger's summary, folded in: ``effects``
(which runs before: ``runs_after``) offers a ``LedgerSummary`` with the side
effects the compacted history no longer shows (``effects/summary.py``, its
public interface); this filter withdraws it (``withdraw_summaries``) and
renders its records — pending / unknown ones as the
pending approvals, completed and failed ones after the evidence, each with
its state and the first digits of its idempotency key — within the one
``max_tokens`` budget (``render``). Without such an offer (the ledger
summary switched off), the task's calls still ``pending`` or ``unknown``
in the store are the pending approvals.

The task state shown is frozen at the first request after each compaction
(``TaskState.as_of_compaction``): what follows is in the conversation, so the
text changes only with the next compaction or when an effect it lists does
(a late result, a resolution, an erasure) — stable bytes whatever the
placement (``instructions`` when the provider keeps the conversation, or the
system slot).

The task state lives in its own part of the session record
(``task_state``), written on the store's background writer only when it
changed; the newest copy is also kept in this process, so a write still
queued is never read stale. Texts come from the request after ``redact``
(this filter runs after it) and ``inject`` redacts the segment again.

Per turn, ``turn.state["checkpoint"]`` is a ``CheckpointTurn``; ``report``
gives the manifest its part (refs and counts, never text). Fails open.

Config ``[filters.checkpoint]``::

    enabled = true
    max_tokens = 600
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal, NamedTuple

import orjson

from ctxproxy.config import ConfigError
from ctxproxy.store import surrogates
from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.records import OPEN_STATES

from .. import compaction as cmp
from ..base import Filter, Turn
from ..report import OPTIONAL
from ..services import Services
from ctxproxy.store.services.digest import text_sha256
from ..effects.rules import (DEFAULT_READ_ONLY_COMMANDS, DEFAULT_READ_ONLY_TOOLS, DEFAULT_SHELL_TOOLS,
                            DEFAULT_SIDE_EFFECT_TOOLS, ToolClasses)
from ..effects.summary import (effect_call, effect_details, effect_group, effect_state, offered_summaries,
                               withdraw_summaries)
from ..goal import header_goal
from ..relayed import relayed
from ..repeats import LastDecisions
from ..segments import Segment, offer
from ..segments import render as render_segment
from ..session_part import PartCache
from . import extract
from .render import EffectItem, render
from .state import TaskState, digest

log = logging.getLogger("ctxproxy.filters.checkpoint")

PART = "task_state"  # the session record's part holding the task state
TEXTS_BYTES = 2 << 20  # rendered checkpoints, by the state and ledger they show
DEFER_ITEMS = 64  # a history this process never read, of at least this many items, is read after the answer
DEFERRED_MAX = 64  # such reads waiting for their turn's end, at most (each holds its request's bytes)



@dataclass(frozen=True)
class CheckpointConfig:
    enabled: bool = True  # accumulate the task state and offer the checkpoint after a compaction
    max_tokens: int = 600  # the whole checkpoint: effects field and fence included (items are left out, never cut)
    priority: int = 95  # inject priority (the effect ledger's checkpoint, when placed alone, has 90)
    placement: Literal["turn", "system"] = "turn"  # next to the latest user message (cache-friendly), or "system"
    max_pending: int = 3  # without the ledger's checkpoint to fold: pending / unknown calls listed from the store

    def validate(self, path: str) -> None:
        if self.max_tokens < 100:
            raise ConfigError(f"{path}.max_tokens: expected at least 100, got {self.max_tokens}")
        if self.max_pending < 0:
            raise ConfigError(f"{path}.max_pending: expected 0 or more, got {self.max_pending}")


_NOT_MINE = "not mine"  # ``replay_memo``: the request is no conversation turn of this filter's


class _Repeat(NamedTuple):
    """What a request decided with no change leaves for the same request sent again."""

    doc: dict  # the task state it left, the very object the part cache holds (``is``: nobody changed it)
    items: int  # history items read up to
    own: bool  # the session's main conversation (its answer is read as history)
    said: frozenset  # digests of the assistant texts already read


@dataclass
class CheckpointTurn:
    """This filter's record of one turn."""

    compaction: dict | None = None  # what compaction the request shows (agent, style, phase, trigger)
    compacted: bool = False  # the session has compacted before (the checkpoint is due)
    ref: str | None = None  # the offered segment's ref
    counts: dict = field(default_factory=dict)
    dropped: int = 0  # items left out for the budget
    read_from: int = 0  # first history item read this turn
    effects: str | None = None  # ref of the effect ledger's checkpoint folded in
    repeat: Any = None  # the decision this request repeats, or leaves for its repeat (``replay``)


class CheckpointFilter(Filter):
    name = "checkpoint"
    required = False  # fails open: the request goes on without the checkpoint
    uses_tokens = True
    runs_after = ("effects",)  # it folds the ledger summary effects offers in the same request
    Config = CheckpointConfig
    manifest_fields = {"compaction": OPTIONAL, "task_state": OPTIONAL}

    def __init__(self, config: CheckpointConfig, store: Any = None):
        self.config = config
        self.store = store
        self.parts = PartCache(PART)  # the task state per conversation (session, tool profile)
        self._texts = ByteLRU(TEXTS_BYTES, "rendered checkpoints")
        self.repeats = LastDecisions(self.name)  # a request sent again as it was: decided as before
        # (tenant, session) -> a long history's read left for its turn's end (at most one a session)
        self._deferred: dict[tuple, Callable[[], None]] = {}

    @classmethod
    def create(cls, config: CheckpointConfig | None, services: Services) -> "CheckpointFilter":
        return cls(config or CheckpointConfig(), services.store)

    @staticmethod
    def successor_state(st: CheckpointTurn) -> CheckpointTurn:
        return st  # what it offered describes the request, which a successor shares

    def on_request(self, turn: Turn) -> None:
        view = turn.request
        store = self.store if self.store is not None else turn.services.store
        ident = turn.identity
        if view is None or not self.config.enabled or store is None or not ident.session:
            return None
        if not _agentic(view) and cmp.detect(view, turn.headers) is None:
            return None  # an auxiliary call (title, quota check): not the conversation
        rec = turn.state[self.name] = CheckpointTurn()
        if self._deferred:  # this session's last history read, if still waiting for its turn's end
            self._run_deferred((ident.tenant, ident.session))
        rev, doc, conts = self.parts.load(store, ident.tenant, ident.session, turn=turn)
        last = self.repeats.get(turn)
        if last is not None and last.doc is doc:
            # The session's last request again, on the task state it left (no other turn or
            # worker changed it since): it adds nothing and, never compacted, offers nothing.
            self._repeated(turn, store, rec, last)
            return None
        thread = _thread(view)
        st = TaskState.load(doc)
        # A sub-agent offers fewer tools than the session's main conversation; its "user" is the agent.
        n_tools = len(view.tool_names())
        main = max(int(doc.get("main_tools") or 0), n_tools)
        conts = dict(conts or {})
        cont = conts.get(thread)
        found, conts[thread] = cmp.track(cont, view, turn.headers)
        items = view.items()
        reread = not cont or found is not None  # this process has not seen it, or it compacted
        server_history = view.server_history() is not None
        start = 0 if reread or server_history else int(cont.get("n", 0))  # server-kept: the input is all new
        rec.read_from = start = min(start, len(items))
        if found is not None:
            rec.compaction = found.record()
            if found.phase == cmp.RESUMED:
                mark = _summary_mark(view, found)
                if mark not in st.seen:
                    st.seen = (st.seen + [mark])[-8:]
                    # A session first seen after its compaction has nothing this request does not show.
                    st.compactions += 1 if doc else 0
        own = n_tools >= main
        rec.compacted = st.compacted
        if not st.compacted and self._defer(turn, view, len(items) - start):
            # A long history this process never read, on a session never compacted: reading it
            # changes nothing in this request (no checkpoint is due), so it is read after the
            # answer went, from the request's bytes as they came (no later filter's edits).
            key, kind, raw = (ident.tenant, ident.session), type(view), view.raw
            self._run_deferred(key)  # one per session, the older one first
            while len(self._deferred) >= DEFERRED_MAX:  # bounded: the oldest is read now
                self._run_deferred(next(iter(self._deferred)))
            self._deferred[key] = lambda: self._deferred_read(turn, store, kind(orjson.loads(raw), raw), st, start,
                                                             own, reread, found, rev, doc, conts, main)
            if own:
                relayed(turn).when_complete(lambda answer: self._answered(turn, store, answer))
            return None
        self._absorb(turn, st, items, start, view, own=own, reread=reread)
        if own:  # the answer counts as history as soon as it went out: a compaction may follow at once
            relayed(turn).when_complete(lambda answer: self._answered(turn, store, answer))
        if st.compacted and (found is None or found.phase != cmp.REQUEST):
            seg = self._segment(turn, store, st, rec)
            if seg is not None:
                withdraw_summaries(turn)  # folded into ``seg``
                offer(turn, seg)
        self._keep_state(turn, store, st, items, own, found, rev, doc, conts, main)
        return None

    def _keep_state(self, turn: Turn, store: Any, st: TaskState, items: list, own: bool, found: Any, rev: int,
                    doc: dict, conts: dict, main: int) -> None:
        dumped = {**st.dump(), "main_tools": main}
        if len(conts) > 8:
            conts = dict(list(conts.items())[-8:])
        changed = dumped != doc
        self.parts.keep(turn, store, (), rev, dumped, conts, changed=changed)
        if changed or found is not None or st.compacted:
            self.repeats.forget(turn)
        else:  # read everything, changed nothing, offered nothing: the same request again does the same
            said = frozenset(st.said)  # the task state itself is the part cache's, counted there
            rec = turn.state.get(self.name)
            last = _Repeat(dumped, len(items), own, said)
            if self.repeats.keep(turn, last, 256 + 120 * len(said)) and isinstance(rec, CheckpointTurn) \
                    and rec.repeat is None:
                rec.repeat = last

    def _repeated(self, turn: Turn, store: Any, rec: CheckpointTurn, last: _Repeat) -> None:
        rec.read_from = last.items
        rec.repeat = last
        if last.own:
            relayed(turn).when_complete(lambda answer: self._answered(turn, store, answer))

    def replay_memo(self, turn: Turn) -> Any:
        """What ``replay`` needs: the decision this turn repeated or left unchanged,
        or that the request is none of this filter's (read from its bytes, the
        identity and the config alone); None after any other decision."""
        rec = turn.state.get(self.name)
        if rec is None:
            return _NOT_MINE
        return rec.repeat if isinstance(rec, CheckpointTurn) else None

    def replay(self, turn: Turn, memo: Any) -> bool:
        """The chain's repeat (``Pipeline``): the same bytes, identity and config, so
        the same early answer; else the repeat path's own check, on the task state
        this process holds (a copy newer than the stored one included)."""
        if memo is _NOT_MINE:
            return True
        ident = turn.identity
        if (ident.tenant, ident.session) in self._deferred:  # its read changes the task state first
            return False
        store = self.store if self.store is not None else turn.services.store
        _, doc, _ = self.parts.load(store, ident.tenant, ident.session, turn=turn)
        if memo.doc is not doc:
            return False
        rec = turn.state[self.name] = CheckpointTurn()
        self._repeated(turn, store, rec, memo)
        return True

    # -- a long history first seen, read after the answer ----------------------------------

    @staticmethod
    def _defer(turn: Turn, view: Any, new_items: int) -> bool:
        """Read the history after the answer: a long one, the request as it came (no filter
        before this one changed it), and a turn whose end runs this filter's hook."""
        pipeline = turn.pipeline
        return (new_items >= DEFER_ITEMS and not view.edits and bool(view.raw) and not turn.blocking
                and pipeline is not None and any(s.end is not None and s.filter.name == "checkpoint"
                                                 for s in pipeline.stages))

    def _deferred_read(self, turn: Turn, store: Any, view: Any, st: TaskState, start: int, own: bool, reread: bool,
                       found: Any, rev: int, doc: dict, conts: dict, main: int) -> None:
        items = view.items()  # ``view``: the request parsed again from its bytes, as it came
        self._absorb(turn, st, items, start, view, own=own, reread=reread)
        self._keep_state(turn, store, st, items, own, found, rev, doc, conts, main)

    def _run_deferred(self, key: tuple) -> None:
        read = self._deferred.pop(key, None)
        if read is None:
            return
        try:
            read()
        except Exception as exc:  # fails open, as on the request's path
            log.warning("checkpoint: a deferred history read failed: %s", type(exc).__name__)

    def on_response_end(self, turn: Turn) -> None:
        ident = turn.identity
        if self._deferred and ident.session:
            self._run_deferred((ident.tenant, ident.session))

    # -- reading the history ---------------------------------------------------------

    def _absorb(self, turn: Turn, st: TaskState, items: list, start: int, view: Any, own: bool,
                reread: bool) -> None:
        """Add what items ``start:`` say to ``st``; ``own``: the session's main
        conversation, whose user turns are the user's (elsewhere: evidence only)."""
        if st.goal is None:
            goal = header_goal(turn)
            if goal:
                st.goal = [1, extract.clip(goal, 300)]
        tool_calls = {c.call_id: c for c in view.tool_calls()}
        results = sorted((r for r in view.tool_results() if r.position >= start), key=lambda r: r.position)
        users = dict(extract.user_turns(items, start)) if own else {}
        ri = 0
        current = st.turns or 1
        for pos in range(start, len(items)):
            while ri < len(results) and results[ri].position < pos:
                self._evidence(st, results[ri], tool_calls, current)
                ri += 1
            item = items[pos]
            role = item.get("role") if isinstance(item, dict) else None
            if not own:
                continue
            if role == "assistant":
                said = extract.assistant_text(item)
                if said and not extract.scaffolding(said) and st.first_seen(said):
                    # a text seen before (re-sent after a compaction) is not news; a question stays open
                    # until the user answers it, whatever the assistant says meanwhile
                    q = extract.question(said)
                    if q:
                        st.question = [current, q]
                continue
            for text in extract.texts_of([item]):  # decision: lines of rules files and users alike
                for line in extract.decision_lines(text):
                    st.add("decisions", [current, f'"{line}" (decision: line)'], move=False)
            user = users.get(pos)
            if user is None:
                continue
            n, new = st.turn_of(user)
            current = n
            if st.goal is None:
                st.goal = [n, extract.clip(user, 300)]
            if not new:  # re-sent after a compaction: read before, in its place
                continue
            asked = st.question
            if not extract.is_continuation(user):
                st.question = None  # answered (or moved on from)
            choice = extract.decision(user)
            if choice is not None:
                context = f' (answering "{asked[1]}")' if asked and extract.bare_accept(user) else ""
                st.add("decisions", [n, f'"{choice}"{context}'])
                continue
            goal = st.goal[1] if st.goal else ""
            for sentence in extract.instructions(user):
                if sentence not in goal:
                    st.add("instructions", [n, sentence])
        while ri < len(results):
            self._evidence(st, results[ri], tool_calls, current)
            ri += 1
        if reread and own:  # Hermes / OpenClaw put their context files in the system prompt
            for line in extract.decision_lines(view.system_text()):
                st.add("decisions", [1, f'"{line}" (decision: line)'], move=False)

    def _answered(self, turn: Turn, store: Any, answer: Any) -> None:
        """The model's answer, as the client received it, read like an assistant
        item of the history: a question it ends with stays open until the user
        answers. The next request shows the same text again (then it is known);
        a client that compacts right after the answer may never show it."""
        if turn.status is not None and turn.status >= 300:
            return
        said = answer.text
        if not said or extract.scaffolding(said):
            return
        ident = turn.identity
        key = (ident.tenant, ident.session)
        read = self._deferred.get(key)
        if read is not None:
            # The history before the answer is still waiting for the turn's end: the answer is
            # read after it there, not here, where the client is still waiting for the answer.
            self._deferred[key] = lambda: (read(), self._answered(turn, store, answer))
            return
        rev, doc, conts = self.parts.load(store, ident.tenant, ident.session, turn=turn)
        last = self.repeats.peek(turn)
        if last is not None and last.doc is doc and digest(said) in last.said:
            return  # read before, on the state this process last decided on (not loaded again)
        st = TaskState.load(doc)
        if not st.first_seen(said):
            return
        q = extract.question(said)
        if q:
            st.question = [st.turns or 1, q]
        dumped = {**doc, **st.dump()}
        self.parts.keep(turn, store, (), rev, dumped, conts, changed=dumped != doc)

    @staticmethod
    def _evidence(st: TaskState, result: Any, calls: dict, turn_no: int) -> None:
        call = calls.get(result.call_id)
        for kind, text in extract.evidence(call.name if call else "tool", call.arguments if call else None,
                                           result.content, result.is_error):
            st.add("evidence", [turn_no, kind, text])

    # -- the segment -------------------------------------------------------------------

    def _segment(self, turn: Turn, store: Any, st: TaskState, rec: CheckpointTurn) -> Segment | None:
        # The ledger summary (offered by ``effects``, which runs before) becomes the effects
        # field: one segment, one budget. Without it, the store's open calls are the pending approvals.
        # (Withdrawn from the offers only once this segment is offered: if rendering fails, it stays.)
        folded = offered_summaries(turn)
        if folded:
            records = [r for seg in folded for r in seg.records]
            classes, chars, listing = folded[0].classes or _CLASSES, folded[0].args_chars, folded[0].listing
            rec.effects = folded[0].ref
        else:
            records, classes, chars, listing = self._pending(turn, store), _CLASSES, 100, ""
        shown = st.as_of_compaction()
        ident = turn.identity
        seg = Segment(kind="task_state", ref=f"task_state:{ident.task or ident.session}@{'0' * 12}", text="",
                      origin="checkpoint", scope="task", trust="system", sensitivity="internal",
                      priority=self.config.priority, max_tokens=self.config.max_tokens,
                      placement=self.config.placement, truncatable=True, boundary="item")
        fence = turn.tokens.count(render_segment(seg)) + 2  # what inject puts around the text
        items = effect_items(records, classes, chars)
        state_key = hashlib.sha256(surrogates.dumps(st.frozen, option=orjson.OPT_SORT_KEYS)).digest()
        budget = self.config.max_tokens - fence
        for _ in range(3):  # the ref names the text's revision: refit if its digits cost more than the zeros
            key = (state_key, tuple(items), listing, budget)
            done = self._texts.get(key)
            if done is None:
                done = render(shown, items, turn.tokens.count, budget, listing)
                self._texts.put(key, done)
            seg.text, rec.dropped = done
            rev = text_sha256(seg.text)[:12]
            seg.ref = rec.ref = seg.ref[:-12] + rev
            seg.freshness = {"revision": rev}
            over = turn.tokens.count(render_segment(seg)) - self.config.max_tokens
            if over <= 0:
                break
            budget -= over
        rec.counts = {**shown.counts(), "pending": sum(e.group == "open" for e in items), "effects": len(items)}
        return seg

    def _pending(self, turn: Turn, store: Any) -> list:
        if not self.config.max_pending:
            return []
        ident = turn.identity
        try:
            records = store.effects.list(ident.tenant, task=ident.task or ident.session, state=OPEN_STATES,
                                         side_effect=True)
        except Exception as exc:  # the checkpoint goes on without them
            log.warning("turn %s: pending effects unreadable: %s", turn.turn_id, type(exc).__name__)
            return []
        return records[-self.config.max_pending:]

    def report(self, turn: Turn) -> dict | None:
        rec = turn.state.get(self.name)
        if not isinstance(rec, CheckpointTurn):
            return None
        return {"compaction": rec.compaction, "task_state": {
            "compacted": rec.compacted, "ref": rec.ref, "items": rec.counts, "dropped": rec.dropped,
            "effects_ref": rec.effects}}


_CLASSES = ToolClasses.build(DEFAULT_READ_ONLY_TOOLS, DEFAULT_SIDE_EFFECT_TOOLS, DEFAULT_SHELL_TOOLS,
                             DEFAULT_READ_ONLY_COMMANDS, True)


def effect_items(records: list, classes: ToolClasses, args_chars: int) -> list[EffectItem]:
    """The effects field's items, newest first, from ledger records (oldest first)."""
    return [EffectItem(effect_group(r), classes.irreversible(r.tool, _args(r)),
                       effect_call(r, classes, args_chars, key=True), effect_state(r), effect_details(r),
                       effect_call(r, classes, min(args_chars, BRIEF_ARGS_CHARS), key=True), _brief_details(r))
            for r in reversed(records)]


BRIEF_ARGS_CHARS = 60


def _brief_details(r: Any) -> str:
    """The references without opaque ``id=`` ones when a URL or key names the thing too."""
    named = [x for x in r.refs if not x.startswith("id=")]
    return effect_details(replace(r, refs=named)) if r.refs and named and len(named) < len(r.refs) else \
        effect_details(r)


def _args(r: Any) -> Any:
    try:
        return orjson.loads(r.args_canonical)
    except orjson.JSONDecodeError:
        return r.args_canonical


def _agentic(view: Any) -> bool:
    """A request of the agent's conversation (it offers tools or returns results)."""
    return view.offers_tools() or bool(view.tool_results())


def _thread(view: Any) -> str:
    """One task state per conversation profile (a sub-agent has other tools)."""
    return text_sha256("\x01".join(view.tool_names()))[:12]


def _summary_mark(view: Any, found: cmp.Compaction) -> str:
    """Which compaction this is: the first summary text or compaction item of the history."""
    for item in view.items():
        if isinstance(item, dict) and item.get("type") in view.history_keys.compaction_items:
            return digest(view.item_state(item))
        for text in cmp.item_texts(item):
            if cmp.summary_text(text):
                return digest(text)
    return f"{found.style}:{len(view.items())}"


