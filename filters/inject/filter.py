"""inject — build the context envelope: gather segments, fit the budget, place them.

Sources, each producing labelled segments:

- the **project rules bundle** (``rules_bundle``): one stable system segment
  per layer (managed policy, task, project, local), with the bundle id and
  revision; ``instruction_conflict`` records go to the manifest;
- the **durable memory snapshot** (``memory_snapshot``): frozen at the
  session's first turn in the session store, stable for the whole session;
- **retrieved evidence** (``evidence``): the ``retriever`` service, asked
  with the latest user text; fenced as untrusted data, placed per turn;
- whatever other filters ``offer`` (the effect ledger's task checkpoint).

Allocation: stable segments first (their bytes must not depend on per-turn
content), then the rest; by priority within each group, ties in offer order.
A segment that does not fit is truncated at its declared boundary (line,
paragraph, item) when it allows it and at least ``min_truncated_tokens``
remain, else dropped; the segment records which and why. Tokens are counted
on the text as placed (fence included) with the cached counter, so a turn
costs O(new content); each segment is also charged the separator placed
before it, so ``used`` never exceeds the budget. A managed (policy) rules
segment that does not fit marks the turn degraded (logged once per bundle
revision).

Placement keeps the provider's prompt cache (see the adapters): stable
segments in the system slot, inside the caller's cached prefix (Anthropic:
before its last system breakpoint; OpenAI: the leading system/developer
message; Responses: ``instructions``); per-turn segments at the tail, next to
the latest user message. Non-stable system segments go at the end of the
system slot — on Anthropic only while no breakpoint covers the messages: with
a message breakpoint (Claude Code marks the last user block) or automatic
caching, the end of the system slot precedes it and a change there would
invalidate the cached conversation, so they join the per-turn tail. The
caller's breakpoints stay where they were, except automatic caching's (see
``AnthropicRequest.add_turn_segment``); at most four exist. A session whose
stable bytes change ``stable_max_changes`` times is demoted: its stable
segments are placed as non-stable ones from then on. (On OpenAI, whose cache
is the exact prefix, the end of the system slot still precedes the cached
conversation: there demotion only keeps the caller's own system text cached.)
When the provider keeps the conversation (Responses with
``previous_response_id``, ``conversation`` or ``store: true``), per-turn
segments go in ``instructions``, which it does not carry over, instead of the
input it stores.

Per turn, ``turn.state["inject"]`` is an ``InjectState``: ``budget``, ``used`` (separators
included), ``route``, ``conflicts`` (instruction_conflict records),
``rules``, ``policy_revision`` (the bundle revision, only when one of its
segments was placed), ``memory``, ``evidence`` and ``placement`` (where each
group went: ``stable``, ``system``, ``turn``, plus ``demoted``,
``breakpoints``...); ``turn.segments`` every segment with its fate
and, once placed, its ``where``. Fails open: on error the request goes on
without the envelope and the turn is marked degraded.

Config ``[filters.inject]`` (sub-tables ``rules``, ``memory``, ``evidence``,
``routes.<route name>``)::

    token_budget = 8000
    [filters.inject.rules]
    project = ["AGENTS.md", "CLAUDE.md"]
    [filters.inject.routes.openrouter]
    token_budget = 4000
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Literal, Mapping

from ctxproxy.config import ConfigError

from ..base import CommitFailed, Filter, Turn
from ..report import INTEGER, OPTIONAL, TEXT
from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.services.digest import memo_key, text_sha256
from .evidence import NullRetriever, Retriever, as_evidence
from .memory_snapshot import SCOPES, snapshot_segments
from .observed_rules import POLICIES, observed_segments
from .result_evidence import MAX_RECORDS, Repeat, ResultEvidence, place, positions, repeated_segment
from .rules_bundle import LAYERS, RulesBundle, RulesSources, bundle_report, validate_revoked
from ..segments import BOUNDARIES, Segment, offer, offered, overhead, render
from ..repeats import LastDecisions
from ..session_part import PartCache

log = logging.getLogger("ctxproxy.filters.inject")

SESSION_KEY = "inject"  # this filter's entry in the session state
SEP = "\n\n"  # between segments of one group, and before a group appended to the caller's text
_LAYER_LABELS = {  # layer -> (trust, scope, priority offset, truncatable)
    "managed": ("system", "tenant", 10, False),
    "task": ("reviewed", "task", 0, True),
    "project": ("reviewed", "project", 0, True),
    "local": ("curated", "user", -5, True),
}


@dataclass(frozen=True)
class RulesConfig(RulesSources):
    """``[filters.inject.rules]``: instruction files, resolved managed → task → project → local."""

    priority: int = 90  # the managed layer gets +10 and is never truncated; local gets -5

    def validate(self, path: str) -> None:
        error = validate_revoked(self.revoked, f"{path}.revoked")
        if error:
            raise ConfigError(error)
        if self.max_files < 1:
            raise ConfigError(f"{path}.max_files: expected at least 1, got {self.max_files}")
        if self.refresh_seconds < 0:
            raise ConfigError(f"{path}.refresh_seconds: expected 0 or more seconds")
        for layer in LAYERS:
            for i, pattern in enumerate(self.patterns(layer)):
                if not pattern.strip():
                    raise ConfigError(f"{path}.{layer}[{i}]: empty pattern")
                if "{task}" in pattern and layer != "task":
                    raise ConfigError(f"{path}.{layer}[{i}]: {{task}} is only allowed in task patterns")


def _default_chars() -> dict[str, int]:
    return {"tenant": 1000, "project": 3000, "user": 1500, "session": 1500}


@dataclass(frozen=True)
class MemoryConfig:
    """``[filters.inject.memory]``: the session's memory snapshot."""

    enabled: bool = True  # freeze and place a memory snapshot per session
    project: str = ""  # the project whose project-scoped memories are visible ("" = none)
    chars: Mapping[str, int] = field(default_factory=_default_chars)  # characters per scope
    max_sensitivity: Literal["public", "internal", "confidential"] = "internal"  # highest shown
    priority: int = 60

    def validate(self, path: str) -> None:
        for scope, n in self.chars.items():
            if scope not in SCOPES:
                raise ConfigError(f"{path}.chars.{scope}: unknown scope (known: {', '.join(SCOPES)})")
            if n < 0:
                raise ConfigError(f"{path}.chars.{scope}: expected 0 or more characters")


@dataclass(frozen=True)
class EvidenceConfig:
    """``[filters.inject.evidence]``: the retriever (the ``retriever`` service)."""

    enabled: bool = True  # ask the retriever each turn (a no-op until one is installed)
    max_items: int = 8  # segments kept from one retrieval
    max_query_chars: int = 2000  # the latest user text, cut to this


@dataclass(frozen=True)
class InjectRouteConfig:
    """``[filters.inject.routes.<route>]``: per-route overrides."""

    token_budget: int | None = None
    project: str | None = None  # memory project for this route


@dataclass(frozen=True)
class InjectConfig:
    token_budget: int = 8000  # tokens all injected segments may use together (per route: routes.<name>)
    min_truncated_tokens: int = 64  # below this a truncated segment is dropped instead
    stable_first: bool = True  # allocate stable segments before per-turn ones (keeps their bytes stable)
    stable_max_changes: int = 3  # stable bytes changing this often in a session: placed after the breakpoint
    anthropic_cache_anchor: bool = False  # add one breakpoint after stable segments when the caller set none
    # the agent's own rule files seen in a request: put back after a compaction dropped them
    # ("after_compaction"), whenever a request lacks one seen before ("always"), or not ("never")
    reinject_observed_rules: Literal["after_compaction", "always", "never"] = "after_compaction"
    rules: RulesConfig = field(default_factory=RulesConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    evidence: EvidenceConfig = field(default_factory=EvidenceConfig)
    routes: Mapping[str, InjectRouteConfig] = field(default_factory=dict)

    def validate(self, path: str) -> None:
        if self.token_budget < 0:
            raise ConfigError(f"{path}.token_budget: expected 0 or more tokens")
        if self.reinject_observed_rules not in POLICIES:
            raise ConfigError(f"{path}.reinject_observed_rules: expected one of {', '.join(POLICIES)}")
        for name, route in self.routes.items():
            if route.token_budget is not None and route.token_budget < 0:
                raise ConfigError(f"{path}.routes.{name}.token_budget: expected 0 or more tokens")

    def budget_for(self, route: str) -> int:
        r = self.routes.get(route)
        return r.token_budget if r is not None and r.token_budget is not None else self.token_budget

    def project_for(self, route: str) -> str:
        r = self.routes.get(route)
        return r.project if r is not None and r.project is not None else self.memory.project


@dataclass(eq=False)
class InjectState:
    """The filter's per-turn state (``turn.state["inject"]``)."""

    budget: int  # tokens this route may add
    used: int = 0  # tokens added, separators included
    route: str = ""
    conflicts: list = field(default_factory=list)  # instruction_conflict records of the rules bundle
    rules: dict | None = None  # the bundle's info, when one is configured
    policy_revision: str | None = None  # the bundle revision, once one of its segments was placed
    placement: dict | None = None  # where each group went: stable, system, turn, demoted, breakpoints...
    memory: dict | None = None  # the memory snapshot's status
    evidence: dict | None = None  # the retriever's items
    session_error: str | None = None  # the session's state could not be read or saved
    observed_rules: list | None = None  # the rule files the agent put in the request (filters/inject/observed_rules.py)
    repeat: Any = None  # what the chain's repeat of this request checks and gives again (``replay``)


class InjectFilter(Filter):
    name = "inject"
    required = False  # fails open: the request goes on without the envelope
    uses_tokens = True
    Config = InjectConfig
    # policy_revision: the bundle's full revision; the manifest keeps it only if the model saw its rules
    manifest_fields = {"token_budget": INTEGER, "tokens_injected": INTEGER, "policy_revision": TEXT,
                       "rules": OPTIONAL, "observed_rules": OPTIONAL}

    def __init__(self, config: InjectConfig, store: Any = None, retriever: Retriever | None = None,
                 learned_signal: bool = True):
        self.config = config
        self.store = store
        self.learned_signal = learned_signal  # [memory.gate]: the snapshot re-scans records as the gate does
        self.retriever = retriever or NullRetriever()
        self.rules = RulesBundle(config.rules) if not config.rules.empty else None
        self._policy_warned: set[str] = set()  # bundle revisions whose dropped policy was logged
        self._observed = PartCache("observed_rules")  # the agents' own rule files, per session
        self._observed_repeats = LastDecisions("observed rules")  # a request sent again as it was
        self._results = ResultEvidence()  # evidence placed after tool results, per session
        if self.rules is not None:
            try:  # the first load walks the file system: here, at start-up, not on a turn
                self.rules.get()
            except Exception as exc:  # a turn retries it
                log.warning("rules bundle %s: first load failed: %s", self.rules.bundle_id, type(exc).__name__)

    @classmethod
    def create(cls, config: InjectConfig, services: Mapping[str, Any]) -> "InjectFilter":
        app = services.get("config")
        return cls(config, services.get("store"), services.get("retriever"),
                   app.memory.gate.learned_signal if app is not None else True)

    def report(self, turn: Turn) -> dict | None:
        st: InjectState | None = turn.state.get(self.name)
        if st is None:
            return None
        out = {"token_budget": st.budget, "tokens_injected": st.used, "policy_revision": st.policy_revision}
        blocked = (st.memory or {}).get("blocked")
        if blocked:  # memories a re-scan blocked: named here, never shown to the model
            out["memory_blocked"] = blocked
        out["observed_rules"] = st.observed_rules or None  # the agent's own rule files (observed segments)
        out.update(bundle_report(st.rules, st.conflicts))  # the bundle's files in resolved order, conflicts, refused
        return out

    @staticmethod
    def successor_state(st: "InjectState") -> "InjectState":
        return st  # what it placed describes the request, which a successor shares

    async def on_request(self, turn: Turn) -> None:
        view = turn.request
        if view is None:
            return None
        cfg = self.config
        budget = cfg.budget_for(turn.route)
        state = InjectState(budget, route=turn.route)
        turn.state[self.name] = state
        ident = turn.identity
        known = bool(ident.session and ident.source)
        session_state, session_writes = self._session_state(turn, state, known)

        # 1. gather (no edits yet)
        own: list[Segment] = []
        bundle, rules = None, []
        if self.rules is not None:
            bundle = self.rules.get(ident.task, wait=False)  # never the file system on a turn, once loaded
            if bundle is not None:
                state.rules = bundle.info()
                state.policy_revision = None  # named once one of its segments is placed
                state.conflicts = list(bundle.conflicts)
                rules = rules_segments(bundle, cfg.rules.priority)
                own += rules
        if cfg.memory.enabled:
            own += self._memory(turn, state, session_state, session_writes, known)
        if cfg.evidence.enabled:
            own += self._evidence(turn, state, known)
        # the agent's own rule files (filters/inject/observed_rules.py): recorded, re-injected when dropped
        own += observed_segments(turn, self.store if known else None, self._observed, state,
                                 cfg.reinject_observed_rules, cfg.rules.priority - 2, self._observed_repeats)
        for seg in own:
            offer(turn, seg)
        segments = offered(turn)
        # evidence placed after earlier tool results: the same bytes after the same results
        results = self._result_records(turn, known)
        if not segments and not (results and results.repeats):
            if results is not None and results.changed:
                self._results.keep(turn, self.store, results.rev, results.records, True)
            elif known and not session_writes and results is not None and not results.records and \
                    isinstance(self.retriever, NullRetriever):
                self._note_repeat(turn, state, bundle)
            return await self._write_session(turn, state, session_writes, lambda: None)
        # What we add is text the model reads too: rules files, memories and
        # checkpoints pass through the same redaction as the request did.
        redact = turn.redact_added
        if redact is not None:
            for seg in segments:
                seg.text = redact(seg.text)

        # 2. allocate: repeated result evidence is history now (its bytes are in the cached
        #    prefix): placed as it was, first, and what it takes is not the others'
        sep = turn.tokens.count(SEP)
        repeated = [repeated_segment(r.record) for r in results.repeats] if results else []
        left = max(0, budget - sum(s.tokens + sep for s in repeated))
        if results is not None:
            _drop_shown(segments, results)
        placed = allocate([s for s in segments if s.status != "dropped"], left, turn.tokens.count,
                          cfg.min_truncated_tokens, cfg.stable_first, sep)
        if bundle is not None:
            state.policy_revision = self._policy_revision(turn, bundle, rules)
        stable = sorted((s for s in placed if s.placement == "system" and s.stable), key=_stable_order)
        floating = [s for s in placed if s.placement == "system" and not s.stable]
        per_turn = [s for s in placed if s.placement == "turn"]
        after = [s for s in placed if s.placement == "result"]
        placement = self._stability(SEP.join(render(s) for s in stable), session_state, session_writes, known)

        # 3. place: all edits at the end (a failure above leaves the body untouched),
        #    once the session's state is saved
        def place() -> None:
            self._place(view, turn.tokens.count, state, placement, placed, stable, floating, per_turn)
            if results is not None and (after or repeated):
                self._place_results(turn, state, results, after, repeated)

        done = await self._write_session(turn, state, session_writes, place)
        turn.placement = state.placement  # where each group went (the manifest places segments by it)
        return done

    def _note_repeat(self, turn: Turn, state: "InjectState", bundle: Any) -> None:
        """A request that added nothing, wrote nothing and kept no result evidence,
        whose rule files the observed-rules repeat decided: what ``replay`` checks
        (the bundle, the session's observed copies and result evidence, the very
        objects) and the report it gives again."""
        observed = self._observed_repeats.get(turn)
        if observed is None:
            return
        ident = turn.identity
        _, results_doc, _ = self._results.parts.load(self.store, ident.tenant, ident.session, turn=turn)
        state.repeat = (bundle, observed, results_doc, state.rules, list(state.conflicts), state.memory,
                        state.evidence, state.session_error)

    def replay_memo(self, turn: Turn) -> Any:
        """What ``replay`` needs (``_note_repeat``), or None after any other decision."""
        state = turn.state.get(self.name)
        return state.repeat if isinstance(state, InjectState) and not state.used else None

    def replay(self, turn: Turn, memo: Any) -> bool:
        """The chain's repeat (``Pipeline``): the session's stored state (its memory
        snapshot, its stable prefix) is the very one read then; the rules bundle,
        the observed rule files' copies and the result evidence this process holds
        are checked here to be the very objects the decision read."""
        bundle, observed, results_doc, rules, conflicts, memory, evidence, session_error = memo
        ident = turn.identity
        if self.rules is not None and self.rules.get(ident.task, wait=False) is not bundle:
            return False
        if not _same_doc(self._observed.load(self.store, ident.tenant, ident.session, turn=turn)[1], observed[0]):
            return False
        if not _same_doc(self._results.parts.load(self.store, ident.tenant, ident.session, turn=turn)[1],
                         results_doc):
            return False
        state = turn.state[self.name] = InjectState(self.config.budget_for(turn.route), route=turn.route)
        state.rules, state.conflicts, state.session_error = rules and dict(rules), list(conflicts), session_error
        state.memory = None if memory is None else dict(memory)
        state.evidence = None if evidence is None else dict(evidence)
        state.observed_rules = [dict(r) for r in observed[1]]
        state.repeat = memo
        return True

    def _result_records(self, turn: Turn, known: bool) -> "_Results | None":
        """The session's result evidence and which of it this request carries again."""
        if not known or self.store is None or turn.request is None:
            return None
        try:
            rev, records = self._results.load(turn, self.store)
            repeats, kept, changed = self._results.repeats(turn, self.store, records)
        except Exception as exc:  # the store failed: no result evidence this turn, the rest goes on
            log.warning("turn %s: result evidence unreadable: %s", turn.turn_id, type(exc).__name__)
            _degrade(turn, self.name)
            return None
        return _Results(rev, kept, repeats, changed)

    def _place_results(self, turn: Turn, state: "InjectState", results: "_Results", new: list[Segment],
                       repeated: list[Segment]) -> None:
        """New result evidence after its result (then kept for the next turns), and the
        repeated records' bytes after theirs."""
        view, count = turn.request, turn.tokens.count
        # where each result is now: the groups placed before may have moved the items (Chat: a
        # system message put first)
        where = positions(view, {s.after for s in new + repeated})
        items: list[tuple[int, str, Segment]] = []
        texts: dict[int, str] = {}
        kept = {id(s) for s in repeated}
        for seg in new + repeated:
            at = where.get(seg.after)
            if at is None:
                seg.status, seg.reason, seg.tokens = "dropped", "its tool result is not in the request", 0
                continue
            texts[id(seg)] = text = seg.text if id(seg) in kept else render(seg)  # a repeat's bytes as placed
            items.append((at, text, seg))
        used = place(view, items, count)
        order = itertools.count(sum(1 for s in offered(turn) if s.position is not None))
        for seg in new + repeated:
            if seg.where:
                seg.position = next(order)
        for seg in repeated:
            offer(turn, seg)  # the manifest lists what the model saw
        changed = results.changed
        try:
            for seg in new:
                if seg.where:
                    rec = self._results.record(turn, self.store, seg, texts[id(seg)], seg.tokens)
                    if rec is not None:
                        results.records.append(rec)
                        changed = True
            self._results.keep(turn, self.store, results.rev, results.records, changed)
        except Exception as exc:  # placed, not kept: a later turn lacks it (its cache breaks there), no more
            log.warning("turn %s: result evidence not kept: %s", turn.turn_id, type(exc).__name__)
            _degrade(turn, self.name)
        state.used += used + count(SEP) * len(items)
        if state.placement is not None:
            state.placement["result"] = {"new": sum(1 for s in new if s.where),
                                         "repeated": sum(1 for s in repeated if s.where)}

    def _place(self, view: Any, count: Callable[[str], int], state: "InjectState", placement: dict, placed: list[Segment],
               stable: list[Segment], floating: list[Segment], per_turn: list[Segment]) -> None:
        anchor = self.config.anthropic_cache_anchor and view.api == "anthropic"
        # counting walks the whole conversation: only when this filter may add a marker
        before = view.count_cache_breakpoints() if anchor else None
        demoted = stable if placement["demoted"] else []
        if demoted:  # its stable bytes keep changing: placed like any text that may change
            stable, floating = [], demoted + floating
        if floating and view.api == "anthropic" and view.conversation_cached():
            # The end of the system slot precedes the breakpoint on the messages, so a change
            # there would invalidate the cached conversation: after every breakpoint there is
            # only the tail. In offer order (nothing after it is cached).
            tail = {id(s) for s in floating + per_turn}
            floating, per_turn = [], [s for s in placed if id(s) in tail]
        used = 0
        order = itertools.count()  # groups go in this order; the manifest reports each segment's place
        for group, segs, add in (
                ("stable", stable, lambda text: view.add_system_segment(text, stable=True, anchor=anchor)),
                ("system", floating, view.add_system_segment),
                ("turn", per_turn, lambda text: view.add_turn_segment(text, anchor=anchor))):
            if segs:
                text = SEP.join(render(s) for s in segs)
                where = add(text) or group
                for s in segs:
                    s.where, s.position = where, next(order)
                placement[group] = where
                used += count(text) + count(SEP)  # the group's text, and the separator before it
        state.used = used
        if demoted:
            placement["stable"] = demoted[0].where
        added = sum(1 for k in ("stable", "system", "turn") if "+breakpoint" in str(placement.get(k, "")))
        placement["breakpoints"] = {"added": added} if before is None else \
            {"added": added, "before": before, "after": before + added}
        state.placement = placement

    def _policy_revision(self, turn: Turn, bundle: Any, rules: list[Segment]) -> str | None:
        """The bundle revision, when one of its segments was placed (the model saw
        that revision). A managed (policy) segment that did not fit marks the turn
        degraded: an oversized policy must not vanish silently."""
        managed = [s for s in rules if "/managed@" in s.ref and s.status == "dropped"]
        if managed:
            _degrade(turn, self.name)
            if bundle.revision not in self._policy_warned:
                if len(self._policy_warned) > 256:
                    self._policy_warned.clear()
                self._policy_warned.add(bundle.revision)
                log.warning("rules bundle %s revision %s: managed policy dropped (%s)", bundle.bundle_id,
                            bundle.revision[:12], managed[0].reason)
        return bundle.revision if any(s.status != "dropped" for s in rules) else None

    # -- sources --------------------------------------------------------------
    def _memory(self, turn: Turn, state: dict, session_state: dict | None, writes: dict,
                known: bool) -> list[Segment]:
        mc = self.config.memory
        if not known:
            state.memory = {"status": "skipped", "reason": "unknown identity"}
            return []
        if session_state is None:
            state.memory = {"status": "skipped", "reason": "no store" if self.store is None else "store error"}
            return []
        try:
            segs, info, snapshot = snapshot_segments(turn, self.store, session_state, mc.chars,
                                                     self.config.project_for(turn.route), mc.max_sensitivity,
                                                     mc.priority, learned_signal=self.learned_signal)
        except Exception as exc:  # the store failed: no memory this turn, the rest goes on
            log.warning("turn %s: memory snapshot failed: %s", turn.turn_id, type(exc).__name__)
            _degrade(turn, self.name)
            state.memory = {"status": "error", "reason": type(exc).__name__}
            return []
        if snapshot is not None:
            writes.update(snapshot)
        state.memory = info
        return segs

    def _evidence(self, turn: Turn, state: "InjectState", known: bool) -> list[Segment]:
        name = getattr(self.retriever, "name", type(self.retriever).__name__)
        if isinstance(self.retriever, NullRetriever):
            state.evidence = {"retriever": name, "items": 0}
            return []
        if not known:
            state.evidence = {"retriever": name, "items": 0, "reason": "unknown identity"}
            return []
        query = (turn.request.latest_user_text() or "")[: self.config.evidence.max_query_chars]
        if not query.strip():
            state.evidence = {"retriever": name, "items": 0}
            return []
        try:
            found = list(self.retriever.retrieve(turn, query))[: self.config.evidence.max_items]
        except Exception as exc:  # recall is optional: the turn goes on without it
            log.warning("turn %s: retriever %s failed: %s", turn.turn_id, name, type(exc).__name__)
            _degrade(turn, self.name)
            state.evidence = {"retriever": name, "items": 0, "error": type(exc).__name__}
            return []
        segs = [as_evidence(s) for s in found if isinstance(s, Segment)]
        state.evidence = {"retriever": name, "items": len(segs)}
        return segs

    # -- session state (one read per turn; a write only when something changed) --
    def _session_state(self, turn: Turn, state: dict, known: bool) -> tuple[dict | None, dict]:
        if not known or self.store is None:
            return None, {}
        try:
            return dict(turn.session_state(self.store)), {}
        except Exception as exc:
            log.warning("turn %s: session state unreadable: %s", turn.turn_id, type(exc).__name__)
            _degrade(turn, self.name)
            state.session_error = type(exc).__name__
            return None, {}

    def _stability(self, stable_text: str, session_state: dict | None, writes: dict, known: bool) -> dict:
        """Is the stable text byte-identical to the previous turn's? Count changes per session."""
        sha = text_sha256(stable_text) if stable_text else ""
        out = {"stable_sha256": sha, "prefix_changed": False, "demoted": False}
        if session_state is None or not known or not sha:
            return out
        prev = session_state.get(SESSION_KEY) if isinstance(session_state.get(SESSION_KEY), dict) else {}
        changes = int(prev.get("stable_changes", 0))
        if prev.get("stable_sha256") != sha:
            if prev.get("stable_sha256"):
                changes += 1
                out["prefix_changed"] = True
            writes[SESSION_KEY] = {"stable_sha256": sha, "stable_changes": changes}
        out["stable_changes"] = changes
        out["demoted"] = changes >= self.config.stable_max_changes > 0
        return out

    async def _write_session(self, turn: Turn, state: "InjectState", writes: dict, then: Callable[[], None]) -> None:
        """Save the session's writes (frozen memory snapshot, stable-prefix
        count) write-ahead, then ``then()``."""
        if not writes or self.store is None:
            then()
            return
        ident = turn.identity
        try:
            await turn.commit(self.store, lambda b: b.sessions.update(ident.tenant, ident.session, writes,
                                                                       subject=ident.user or None))
        except CommitFailed as exc:  # a lost write only costs a re-freeze / a recount
            why = type(exc.__cause__).__name__
            log.warning("turn %s: session state not saved: %s", turn.turn_id, why)
            _degrade(turn, self.name)
            state.session_error = why
        else:
            turn.session_changed()
        then()


def _same_doc(doc: Any, then: Any) -> bool:
    """A part as this process holds it is the one a decision read: the very object,
    or none kept then and none now (each load gives a new empty one)."""
    return doc is then or (not doc and not then)


@dataclass
class _Results:
    rev: int  # the part's revision as read
    records: list[dict]  # what is kept (checked ones updated, dropped ones gone)
    repeats: list[Repeat]  # those this request carries the result of
    changed: bool  # records differs from what was stored


def _drop_shown(segments: list[Segment], results: _Results) -> None:
    """A new result segment for a result already given evidence (a request sent
    again), or showing only memories the repeated evidence shows, is not placed."""
    anchors = {r.record.get("after") for r in results.repeats}
    shown = {i[0] for r in results.repeats for i in r.record.get("ids") or () if i}
    full = len(results.records) >= MAX_RECORDS
    for seg in segments:
        if seg.placement != "result":
            continue
        if seg.after in anchors or seg.items and set(seg.items) <= shown:
            seg.status, seg.reason, seg.tokens = "dropped", "shown after this tool result before", 0
        elif full:  # dropping an old record would change the prompt where the cache begins
            seg.status, seg.reason, seg.tokens = "dropped", "the session's result evidence is full", 0


def rules_segments(bundle: Any, priority: int) -> list[Segment]:
    """One stable system segment per layer of a loaded bundle."""
    if not bundle.loaded:
        return []
    observed = datetime.fromtimestamp(bundle.observed_at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") \
        if bundle.observed_at else ""
    out = []
    for layer in LAYERS:
        text = bundle.layers.get(layer)
        if not text:
            continue
        trust, scope, bump, truncatable = _LAYER_LABELS[layer]
        paths = [f.path for f in bundle.files if f.layer == layer]
        out.append(Segment(
            kind="rules", ref=f"rules:{bundle.bundle_id}/{layer}@{bundle.revision[:12]}", text=text,
            origin=",".join(paths), scope=scope, trust=trust,  # type: ignore[arg-type]
            freshness={"revision": bundle.revision[:12], "observed_at": observed},
            priority=priority + bump, placement="system", truncatable=truncatable, stable=True,
            boundary="paragraph"))
    return out


def allocate(segments: list[Segment], budget: int, count: Callable[[str], int], min_tokens: int = 64,
             stable_first: bool = True, sep_tokens: int = 0) -> list[Segment]:
    """Decide each segment's fate; returns the placed ones in offer order.

    Stable segments are allocated first when ``stable_first`` (so their bytes
    never depend on this turn's per-turn segments), then by priority, ties in
    offer order. Tokens are those of the rendered text (fence included); each
    placed segment also costs ``sep_tokens`` of the budget, for the separator
    placed before it (not in its ``tokens``).
    """
    order = sorted(range(len(segments)),
                   key=lambda i: (not (stable_first and segments[i].stable), -segments[i].priority, i))
    left = budget
    for i in order:
        seg = segments[i]
        room = max(0, left - sep_tokens)
        cap = min(room, seg.max_tokens) if seg.max_tokens else room
        n = count(render(seg))
        if n <= cap:
            seg.tokens, seg.status, seg.reason = n, "placed", ""
        elif seg.truncatable and cap >= min_tokens:
            cut = truncate_to(seg, cap, count)
            if cut is None:
                seg.tokens, seg.status = 0, "dropped"
                seg.reason = f"{n} tokens > {cap} available; no {seg.boundary} fits"
                continue
            seg.text = cut
            seg.tokens, seg.status, seg.reason = count(render(seg)), "truncated", f"{n} tokens > {cap} available"
        else:
            why = "not truncatable" if not seg.truncatable else f"under {min_tokens} tokens left"
            seg.tokens, seg.status, seg.reason = 0, "dropped", f"{n} tokens > {cap} available ({why})"
            continue
        left -= seg.tokens + sep_tokens
    return [s for s in segments if s.status in ("placed", "truncated")]


MARKER = "\n[… truncated by ctxproxy to fit the context budget]"
CUTS_BYTES = 2 << 20  # truncated segments, by (memo_key(text), cap, boundary, fence): (cut text,)
_cuts = ByteLRU(CUTS_BYTES, "truncated segments")


def truncate_to(seg: Segment, cap: int, count: Callable[[str], int]) -> str | None:
    """The longest prefix of whole units (at the segment's boundary) whose
    rendered form fits ``cap`` tokens, with a marker; ``None`` if not even one
    unit fits. Memoised: a segment truncated every turn is cut once."""
    fence = render(overhead(seg))
    key = (memo_key(seg.text), cap, seg.boundary, fence)
    hit = _cuts.get(key)
    if hit is not None:
        return hit[0]
    sep = BOUNDARIES.get(seg.boundary, "\n")
    units = seg.text.split(sep)
    probe = replace(seg)  # same labels (and type), trial text

    def fits(k: int) -> bool:
        probe.text = sep.join(units[:k]) + MARKER
        return count(render(probe)) <= cap

    lo, hi = 0, len(units) - 1  # keeping every unit is not a truncation
    while lo < hi:  # binary search on the number of units kept
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    cut = sep.join(units[:lo]) + MARKER if lo > 0 and fits(lo) else None
    _cuts.put(key, (cut,))
    return cut


def truncate_lines(text: str, cap: int, count: Callable[[str], int]) -> str:
    """The longest prefix of whole lines within ``cap`` tokens, with a marker."""
    lines = text.split("\n")
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count("\n".join(lines[:mid]) + MARKER) <= cap:
            lo = mid
        else:
            hi = mid - 1
    return "\n".join(lines[:lo]) + MARKER


_STABLE_ORDER = {"rules": 0, "memory": 2}  # everything else: 1


def _stable_order(seg: Segment) -> int:
    """Rules (shared by every session of the project) first, then other stable
    segments, the per-session memory snapshot last: the longest common prefix."""
    return _STABLE_ORDER.get(seg.kind, 1)


def _degrade(turn: Turn, name: str) -> None:
    if name not in turn.degraded:
        turn.degraded.append(name)
