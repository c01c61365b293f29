"""recall — on every turn, the visible memories relevant to the latest user text.

Runs after ``redact`` (so its query and what it indexes are redacted) and
before ``inject``, to which it offers one evidence segment: placed after the
last cache breakpoint next to the latest user message, fenced as data, one
line per item with its id, kind, scope, source, ``observed_at`` and
confidence, within the route's recall budget (default 1,500 tokens; inject
cuts it at a line). Preferences and procedures are not recalled here: they
are in the session's frozen memory snapshot (``memory_snapshot``).

- Query: the user's latest own words (``turn_words``: what the agents wrap
  into user messages — system reminders, rule files, command records,
  compaction summaries, our own injected evidence — left out), and when the
  newest item is a tool result, the task's goal too (the conversation's
  first own words); latest words that refer back ("sign off on this") with
  what they refer to (the words before them, or the compaction summary the
  conversation continues from); ``query.parse`` keeps a long message's salient terms. A
  turn whose latest own words are the ones already recalled for (a tool
  round trip, a retry) reuses that result — the same bytes, so the prompt
  cache holds — while the tenant's memories are as they were
  (``MemoryIndex.revision``: any write, edit or forget of them since
  searches again; another tenant's does not).
- Who: the authenticated identity. No tenant, no session or no identity
  source → nothing is recalled. The viewer is the tenant, user, project,
  purpose (the identity's, else the route's ``purpose``), the session tree
  (``store.session_index``; kept in memory per live session once recorded,
  read again after ``TREE_SECONDS`` or when this process records a
  sub-session), and the route's sensitivity ceiling; every index applies it
  in its WHERE clause before anything is ranked. A turn whose user text is
  the one last recalled for reuses that result under the same revision of
  the tenant's memories (a result that found nothing too: a memory added
  since may match), and of the session index's forget count when it gave
  an earlier turn.
- Candidates: active memories and the session index's hits in the tree
  (the current session's own turns excluded: the model already has them).
- After the answer, the turn's user and assistant text (tool outputs only
  with ``index_tool_outputs``) go into the session index through the
  background writer, never on the turn's path.

Manifest (``report``): counts and, per item, its id, kind, scope, source,
score parts and labels — never its text. A ``ctxproxy.recall`` child span
carries the candidate and result counts. Fails open.
"""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Mapping

import orjson

from ctxproxy.config import ConfigError
from ctxproxy.store.bounded import ByteLRU, entry_bytes
from ctxproxy.store.memory_records import SNAPSHOT_KINDS
from ctxproxy.store.session_index import MAX_TURN_CHARS, TurnTexts
from ctxproxy.store.sqlite_index import Viewer

from .base import Filter, Turn
from .report import ManifestField
from .repeats import RequestFacts, unedited_digest
from .compaction import item_texts
from ctxproxy.store.services.digest import memo_key, text_sha256
from .segments import SENSITIVITY_ORDER, Segment, offer, result_anchor
from .view import TEXT
from ctxproxy.store.services.recall.agent_text import own_words, summary_words
from ctxproxy.store.services.recall.query import refers_back
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.services.recall.services import recall_services
from ctxproxy.store.services.recall.tool_output import searched_for

log = logging.getLogger("ctxproxy.filters.recall")

REUSE_BYTES = 2 << 20  # the last recall result kept per caller, for a turn that asks the same
TREES_BYTES = 1 << 20  # each live session's tree, kept between its turns
INDEXED_BYTES = 256 << 10  # each live session's last indexed text per role (a digest), not indexed again
QUIET_BYTES = 128 << 10  # per caller, the request whose tool output recalled nothing (``_from_outputs``)
TREE_SECONDS = 2.0  # a kept tree is read again after this long (another process may record a sub-session)

Sensitivity = Literal["public", "internal", "confidential"]
SPAN = "recall"  # child span ctxproxy.recall
SPAN_ITEMS_CHARS = 4096  # of its ctxproxy.recall.items attribute
HEADER = ("Recalled for this turn: memories and earlier session turns this caller may see, most relevant "
          "first (id, kind, scope, source, observed, confidence):")
OUTPUT_HEADER = ("Recalled for the tool result above: memories this caller may see that name what it shows, most "
                 "relevant first (id, kind, scope, source, observed, confidence):")


@dataclass(frozen=True)
class RecallRouteConfig:
    """``[filters.recall.routes.<route>]``: per-route overrides."""

    enabled: bool | None = None
    budget_tokens: int | None = None
    max_sensitivity: Sensitivity | None = None
    purpose: str | None = None  # the purpose of this route's turns when the identity names none


@dataclass(frozen=True)
class RecallConfig:
    enabled: bool = True  # recall on every turn of routes that list the filter
    k: int = 8  # items at most per turn
    budget_tokens: int = 1500  # tokens the evidence segment may use (fence included)
    max_sensitivity: Sensitivity = "internal"  # highest sensitivity recalled (per route: routes.<name>)
    purpose: str = ""  # purpose of turns whose identity names none
    memories: bool = True  # recall memory records
    sessions: bool = True  # recall session-index hits of the session tree
    index_sessions: bool = True  # write each turn's user/assistant text into the session index
    index_tool_outputs: bool = False  # ...and its tool outputs
    widen: Literal["tree", "same_user", "same_project"] = "tree"  # session search beyond the tree (same tenant+user)
    exclude_kinds: tuple[str, ...] = SNAPSHOT_KINDS  # kinds the frozen snapshot already shows
    max_query_chars: int = 2000  # characters of a message's words read for its query (its start and end)
    priority: int = 45
    reuse_sessions: int = 4096  # sessions whose last result is remembered for reuse
    tool_outputs: bool = True  # a tool-result turn also recalls what its output's rare identifiers name
    output_k: int = 3  # items at most recalled from one round of tool results
    output_budget_tokens: int = 400  # tokens that evidence may use (placed whole or not at all)
    outweighed: float = 0.5  # a tool-result turn: a memory of the words below this share of the output's best is not given (0: off)
    rank: RankConfig = field(default_factory=RankConfig)
    routes: Mapping[str, RecallRouteConfig] = field(default_factory=dict)

    def validate(self, path: str) -> None:
        if self.k < 1:
            raise ConfigError(f"{path}.k: expected at least 1")
        if self.budget_tokens < 0:
            raise ConfigError(f"{path}.budget_tokens: expected 0 or more tokens")
        if self.output_k < 1:
            raise ConfigError(f"{path}.output_k: expected at least 1")
        if self.output_budget_tokens < 0:
            raise ConfigError(f"{path}.output_budget_tokens: expected 0 or more tokens")
        if not 0 <= self.outweighed <= 1:
            raise ConfigError(f"{path}.outweighed: expected a share from 0 to 1")
        for name, r in self.routes.items():
            if r.budget_tokens is not None and r.budget_tokens < 0:
                raise ConfigError(f"{path}.routes.{name}.budget_tokens: expected 0 or more tokens")
        self.rank.validate(f"{path}.rank")

    def route(self, name: str) -> RecallRouteConfig:
        return self.routes.get(name) or RecallRouteConfig()


@dataclass
class RecallState:
    """``turn.state["recall"]``."""

    status: str = "skipped"  # recalled | reused | skipped | error
    reason: str = ""
    candidates: int = 0
    items: list[dict] = field(default_factory=list)  # ids, labels, score parts: never text
    output_items: list[dict] = field(default_factory=list)  # recalled from the newest tool output (after it)
    query_chars: int = 0
    ms: float = 0.0
    user_text: str = ""  # the latest user text as the caller sent it (redacted), before inject adds to it
    assistant: dict[str, list[str]] = field(default_factory=dict)  # channel -> text (for the session index)
    assistant_chars: int = 0
    reused: Any = None  # (caller, the result it reused): what the chain's repeat checks (``replay``)


@dataclass(frozen=True)
class _Last:
    key: str  # digest of the user text it answered
    text: str
    sensitivity: str
    observed_at: str
    items: list[dict]
    candidates: int
    revision: int  # the tenant's memories' revision (``MemoryIndex.revision``): any change since makes it stale
    forgets: int | None  # the session index's forget count, read when it gave an item (None: it gave none)


@dataclass(frozen=True, slots=True)
class _Tree:
    sessions: tuple[str, ...]  # the session tree as the session index gave it
    until: float  # time.monotonic() after which it is read again
    epoch: int  # the filter's count of recorded sub-sessions when it was read


# Decided from the route, the identity and the services alone (``replay_memo``)
_SKIPPED_BEFORE_READING = frozenset({"off", "unknown identity", "no store"})


def _current(last: "_Last", rs: Any, revision: int) -> bool:
    """Whether a remembered result still holds: the tenant's memories as they were (a memory
    written, changed or forgotten since may change it, found nothing or not), and no earlier
    turn it gave forgotten."""
    return last.revision == revision and (last.forgets is None or last.forgets == rs.sessions.generation())


_EMPTY_BYTES: list[int] = []


def _empty_bytes(caller: tuple, last: _Last) -> int:
    """The size of a remembered result that found nothing, measured on the first
    one, with room for longer ids in the caller's key."""
    if not _EMPTY_BYTES:
        _EMPTY_BYTES.append(entry_bytes(caller, last) + 512)
    return _EMPTY_BYTES[0]


_QUIET_BYTES: list[int] = []


def _quiet_bytes(caller: tuple) -> int:
    """The size of a caller's quiet-output entry (a 16-byte digest and a revision), measured on the first one."""
    if not _QUIET_BYTES:
        _QUIET_BYTES.append(entry_bytes(caller, (b"0" * 16, 1 << 40)) + 512)
    return _QUIET_BYTES[0]


class RecallFilter(Filter):
    name = "recall"
    required = False  # fails open: the turn goes on without recalled evidence
    watches_events = True  # collects the answer's text; may run just after an event went out
    Config = RecallConfig
    manifest_fields = {"recall": ManifestField(lambda v: v if isinstance(v, dict) else None, optional=True)}

    def __init__(self, config: RecallConfig, services: Mapping[str, Any] | None = None):
        self.config = config
        self.services = services or {}
        # per caller (see on_request)
        self._last = ByteLRU(REUSE_BYTES, "recall reuse", max_entries=max(1, self.config.reuse_sessions))
        self._trees = ByteLRU(TREES_BYTES, "recall session trees")  # per live session (see _tree)
        # per session and role, the last text queued for the session index (its memo key)
        self._indexed = ByteLRU(INDEXED_BYTES, "session index: last texts")
        self._words = RequestFacts(self.name)  # a request's words, by its digest (``_words_of``)
        self._quiet = ByteLRU(QUIET_BYTES, "recall: outputs that recalled nothing")  # per caller (``_from_outputs``)
        self._epoch = 0  # sub-sessions this process recorded: a tree kept from before may lack one

    @classmethod
    def create(cls, config: RecallConfig, services: Mapping[str, Any]) -> "RecallFilter":
        rs = recall_services(services)  # open the indexes at start-up (and register them for forget)
        if rs is not None:
            rs.prepare(config.rank)  # the embeddings extra: loaded now, or a ConfigError at start-up
        return cls(config, services)

    def warm(self) -> None:
        rs = recall_services(self.services)
        if rs is not None and self.config.memories:
            rs.warm(self.config.rank)

    # -- request ---------------------------------------------------------------------
    def on_request(self, turn: Turn) -> None:
        state = turn.state[self.name] = RecallState()
        cfg = self.config
        words = self._words_of(turn)
        if words.new and self._indexing(turn):
            # What the session index keeps as the user's words: read now, since
            # inject later appends this turn's evidence and checkpoint to the same
            # message (indexed, they would be recalled again as "what was said").
            state.user_text = words.latest
        route = cfg.route(turn.route)
        if not (route.enabled if route.enabled is not None else cfg.enabled) or turn.request is None:
            state.reason = "off"
            return
        ident = turn.identity
        if not (ident.tenant and ident.session and ident.source):
            state.reason = "unknown identity"
            return
        rs = recall_services(self.services)
        if rs is None:
            state.reason = "no store"
            return
        t0, t0_ns = time.perf_counter(), time.time_ns()
        key = text_sha256(words.latest)
        # the memo is the caller's: everything the viewer is made of, not the session id alone
        caller = (ident.tenant, ident.session, ident.user, ident.project, ident.parent_session,
                  self.viewer_purpose(turn), route.max_sensitivity or cfg.max_sensitivity)
        last = self._remembered(caller)
        # The tenant's memories' revision, read before the search (a change after it makes its
        # result stale): one integer, moved by every write, change and forget of its memories.
        revision = rs.memories.revision(ident.tenant, turn.committed_at(rs.memories.store))
        # The same user text as this session's last recall, and nothing changed since: its
        # result again, with no index read (the session was recorded at its first turn).
        if last is not None and last.key == key and _current(last, rs, revision):
            state.status, state.candidates, state.items = "reused", last.candidates, last.items
            state.reused = (caller, last)
            self._offer(turn, last, route)
            self._from_outputs(turn, state, rs, words, last.items, caller, revision)
            self._finish(turn, state, t0, t0_ns)
            return
        tree = self._tree(turn, rs)
        viewer = self.viewer(turn, tree)
        if not words.latest.strip():
            state.reason = "no query"
            self._finish(turn, state, t0, t0_ns)
            return
        state.query_chars = len(words.latest)
        others = ()
        if cfg.sessions:
            wide = rs.sessions.visible_sessions(viewer, ident.session, cfg.widen, ident.parent_session) \
                if cfg.widen != "tree" else tree
            others = tuple(s for s in wide if s != ident.session)
        forgets = rs.sessions.generation() if others else None  # (read before the search, as the revision)
        found = rs.recaller(cfg.rank).recall(viewer, words.latest, k=cfg.k, sessions=others, memories=cfg.memories,
                                             exclude_kinds=cfg.exclude_kinds, goal=words.goal,
                                             context=words.context,
                                             max_chars=cfg.max_query_chars)
        # The output's recall first: what the words recalled far below what the output points
        # at is not given beside it. The kept result is what later turns of these words reuse.
        from_output = self._output_recall(turn, rs, words, caller, revision)
        items = outweigh(found.items, from_output[1].items, cfg.outweighed) if from_output else found.items
        state.status, state.candidates = "recalled", found.candidates
        state.items = [item_report(s) for s in items]
        last = _Last(key, render_items(items), _max_sens(items), _newest(items), state.items, found.candidates,
                     revision, forgets if any(s.cand.source == "session" for s in items) else None)
        turn.defer(self.name, lambda: self._remember(caller, last))  # what the caller's next turn reuses
        if items:
            self._offer(turn, last, route)
        if from_output:
            self._offer_outputs(turn, state, *from_output, state.items)
        self._finish(turn, state, t0, t0_ns)

    def replay_memo(self, turn: Turn) -> Any:
        """What ``replay`` needs: a request skipped for its route, identity or store,
        or one whose words reused the caller's last result and whose output (if
        read) recalled nothing; None after any other decision."""
        state = turn.state.get(self.name)
        if not isinstance(state, RecallState):
            return None
        if state.status == "skipped" and state.reason in _SKIPPED_BEFORE_READING:
            return (None, state.reason, state.user_text)
        if state.status == "reused" and state.reused is not None and not state.reused[1].text \
                and not state.output_items:  # (it offered nothing)
            return (state.reused, "", state.user_text)
        return None

    def replay(self, turn: Turn, memo: Any) -> bool:
        """The chain's repeat (``Pipeline``): the same bytes, identity and config give
        the same words and caller; the result is reused again only while it is
        still the caller's, current at the tenant's memories' revision, and the
        output recalled nothing at that revision (``_output_recall``'s memo)."""
        reused, reason, user_text = memo
        state = turn.state[self.name] = RecallState(user_text=user_text)
        if reused is None:
            state.reason = reason
            return True
        caller, last = reused
        rs = recall_services(self.services)
        if rs is None:
            return False
        t0, t0_ns = time.perf_counter(), time.time_ns()
        revision = rs.memories.revision(turn.identity.tenant, turn.committed_at(rs.memories.store))
        if self._last.get(caller) is not last or not _current(last, rs, revision):
            return False
        cfg = self.config
        if cfg.tool_outputs and cfg.memories:
            digest = unedited_digest(turn)
            if digest is None or self._quiet.get(caller) != (digest, revision):
                return False
        state.status, state.candidates, state.items, state.reused = "reused", last.candidates, last.items, reused
        self._finish(turn, state, t0, t0_ns)
        return True

    def _from_outputs(self, turn: Turn, state: RecallState, rs: Any, words: "TurnWords", shown: list[dict],
                      caller: tuple, revision: int) -> None:
        """``_output_recall``, its memories offered (``_offer_outputs``)."""
        from_output = self._output_recall(turn, rs, words, caller, revision)
        if from_output:
            self._offer_outputs(turn, state, *from_output, shown)

    def _output_recall(self, turn: Turn, rs: Any, words: "TurnWords", caller: tuple, revision: int
                       ) -> tuple[list, Any] | None:
        """A turn whose newest items are a tool's results: those results and the memories
        their rare identifiers point at (``Recaller.recall_output``), or None. The
        caller's last request sent again (a retry: the same bytes, so the same words and
        output), whose output recalled nothing under the same ``revision`` of the tenant's
        memories, recalls nothing again without asking the index, as a reused recall of
        the same words does."""
        cfg = self.config
        view = turn.request
        if not cfg.tool_outputs or view is None or not cfg.memories:
            return None
        digest = unedited_digest(turn)
        quiet = None if digest is None else (digest, revision)
        if quiet is not None and self._quiet.get(caller) == quiet:
            return None
        results = newest_round(view)
        output = "\n".join(r.content for r in results if r.content)
        if not output.strip():  # no output to search: the same bytes again have none either
            if quiet is not None:
                self._quiet.put(caller, quiet, _quiet_bytes(caller))
            return None
        viewer = self.viewer(turn, self._tree(turn, rs))
        ids = {r.call_id for r in results}
        searched = searched_for([c.arguments for c in view.tool_calls() if c.call_id in ids])
        found = rs.recaller(cfg.rank).recall_output(viewer, words.latest, output, k=cfg.output_k, goal=words.goal,
                                                    context=words.context, exclude_kinds=cfg.exclude_kinds,
                                                    max_chars=cfg.max_query_chars, searched=searched)
        if quiet is not None:
            if found.items:
                self._quiet.pop(caller)
            else:
                self._quiet.put(caller, quiet, _quiet_bytes(caller))
        return results, found

    def _offer_outputs(self, turn: Turn, state: RecallState, results: list, found: Any, shown: list[dict]) -> None:
        """The output's memories the latest words did not recall already, offered to be
        placed right after the results and given again with the same bytes on the later
        turns (``inject/result_evidence.py``)."""
        cfg = self.config
        ids = {i.get("id") for i in shown}
        items = [s for s in found.items if s.cand.memory_id not in ids]
        state.output_items = [item_report(s) for s in items]
        if not items:
            return
        text = render_items(items, OUTPUT_HEADER)
        last = results[-1]
        offer(turn, Segment(kind="evidence", ref="recall:" + text_sha256(text)[:12], text=text, origin="recall",
                            scope="user", trust="evidence", sensitivity=_max_sens(items),  # type: ignore[arg-type]
                            freshness={"observed_at": _newest(items)}, priority=self.config.priority,
                            max_tokens=cfg.output_budget_tokens, placement="result", truncatable=False,
                            boundary="line", after=result_anchor(last.call_id, last.content),
                            items=tuple(s.cand.memory_id for s in items)))

    def _words_of(self, turn: Turn) -> TurnWords:
        """``turn_words`` of the request, kept by the request's digest: the same
        bytes and headers, unedited by an earlier filter, hold the same words."""
        view = turn.request
        if view is None:
            return TurnWords()
        words = self._words.get(turn)
        if words is None:
            words = turn_words(view)
            self._words.put(turn, words, _words_bytes(words))
        return words

    def _tree(self, turn: Turn, rs: Any) -> tuple[str, ...]:
        """The session's tree, read from the session index once per live session
        (kept ``TREE_SECONDS``, or until this process records a sub-session, whose
        ancestors' trees grow), not on every turn. Its first read asks for the
        session to be recorded, off the path; a session naming a parent is read
        again until it is recorded (a parent recorded meanwhile joins its tree)."""
        ident = turn.identity
        key = (ident.tenant, ident.session, ident.user, ident.parent_session)
        now = time.monotonic()
        known = self._trees.get(key)
        if known is not None and now < known.until and known.epoch == self._epoch:
            return known.sessions
        epoch = self._epoch
        # the tree and whether the session is recorded, in one read (one statement on PostgreSQL)
        tree, owner = rs.sessions.tree_of(ident.tenant, ident.session, ident.user, ident.parent_session)
        recorded = owner is not None
        if not recorded:  # its first turn: record it, off the path
            self._write(turn, lambda batch: self._note(rs.sessions, ident, batch))
        # Kept once recorded, or at once without a parent (its tree then only grows by a
        # sub-session recorded after it); with a parent the record may still add that parent.
        if recorded or not ident.parent_session:
            self._trees.put(key, _Tree(tree, now + TREE_SECONDS, epoch))
        return tree

    def _note(self, sessions: Any, ident: Any, batch: Any = None) -> None:
        sessions.note_session(ident.tenant, ident.session, ident.user, ident.project, ident.parent_session,
                              batch=batch)
        if ident.parent_session:  # a sub-session: the trees of its ancestors (kept above) grow
            self._epoch += 1

    def viewer(self, turn: Turn, tree: tuple[str, ...]) -> Viewer:
        """Who recalls, from the authenticated identity and the route."""
        ident = turn.identity
        cfg = self.config
        route = cfg.route(turn.route)
        purpose = self.viewer_purpose(turn)
        ceiling = route.max_sensitivity or cfg.max_sensitivity
        return Viewer(tenant=ident.tenant, user=ident.user, project=ident.project, purpose=purpose,
                      sessions=tree, ceiling=ceiling)  # () when the session is someone else's

    def _offer(self, turn: Turn, last: _Last, route: RecallRouteConfig) -> None:
        if not last.text:
            return
        budget = route.budget_tokens if route.budget_tokens is not None else self.config.budget_tokens
        ref = "recall:" + text_sha256(last.text)[:12]
        offer(turn, Segment(kind="evidence", ref=ref, text=last.text, origin="recall", scope="user",
                            trust="evidence", sensitivity=last.sensitivity,  # type: ignore[arg-type]
                            freshness={"observed_at": last.observed_at}, priority=self.config.priority,
                            max_tokens=budget, placement="turn", boundary="line"))

    def _finish(self, turn: Turn, state: RecallState, t0: float, t0_ns: int) -> None:
        state.ms = (time.perf_counter() - t0) * 1000.0
        turn.spans.append((SPAN, t0_ns, time.time_ns(), {  # type: ignore[arg-type]
            "ctxproxy.recall.candidates": state.candidates, "ctxproxy.recall.results": len(state.items),
            "ctxproxy.recall.status": state.status, "ctxproxy.recall.items": _items_json(state.items)}))

    def _remembered(self, caller: tuple) -> _Last | None:
        return self._last.get(caller)

    def _remember(self, caller: tuple, last: _Last) -> None:
        # A result that found nothing has one shape: its size is measured once, not per turn.
        self._last.put(caller, last, _empty_bytes(caller, last) if not last.items else None)

    # -- response: what the session index keeps ------------------------------------------
    def on_response(self, turn: Turn, view: Any) -> None:
        state = turn.state.get(self.name)
        if isinstance(state, RecallState) and self._indexing(turn):
            for s in view.text_slots():
                if s.kind == TEXT:
                    state.assistant.setdefault("0", []).append(s.get())

    def on_response_event(self, turn: Turn, event: Any) -> None:
        state = turn.state.get(self.name)
        if isinstance(state, RecallState) and self._indexing(turn):
            for d in event.deltas():
                if d.kind == TEXT and state.assistant_chars < MAX_TURN_CHARS:
                    state.assistant.setdefault(d.channel, []).append(d.text)
                    state.assistant_chars += len(d.text)
        return None

    def on_response_end(self, turn: Turn) -> None:
        state = turn.state.get(self.name)
        if not isinstance(state, RecallState) or not self._indexing(turn) or turn.request is None:
            return
        if turn.error_type or (turn.status is not None and turn.status >= 400):
            return
        ident = turn.identity
        view = turn.request
        texts = []
        if state.status != "reused":  # a reused result means this user text is already indexed
            if state.user_text.strip():
                texts.append(("user", state.user_text))
        if self.config.index_tool_outputs:
            results = view.tool_results()
            newest = max((r.position for r in results), default=-1)
            tool_text = "\n".join(r.content for r in results if r.position == newest and r.content)
            if tool_text.strip():
                texts.append(("tool", tool_text))
        answer = "\n".join("".join(parts) for parts in state.assistant.values())
        if answer.strip():
            texts.append(("assistant", answer))
        # A text the session's last indexed turn had under the same role (the same answer to a
        # request sent again) is in the index already: not written again.
        marks = [((ident.tenant, ident.session, role), memo_key(text)) for role, text in texts]
        texts = [t for t, (k, d) in zip(texts, marks) if self._indexed.get(k) != d]
        if not texts:
            return
        rs = recall_services(self.services)
        if rs is None:
            return
        self._index(turn, rs.sessions, TurnTexts(ident.tenant, ident.session, turn.turn_id, tuple(texts), ident.user,
                                                 ident.project, self.viewer_purpose(turn), time.time()))
        for k, d in marks:
            self._indexed.put(k, d)

    def _index(self, turn: Turn, sessions: Any, row: TurnTexts) -> None:
        """Queue a turn's texts for the session index: the writer adds every turn
        queued by the time it runs in one transaction (a commit per turn cost
        more than the rows), its batch's when the index is in the store's
        database (sent with the batch's other writes: no round trip of its own)."""
        writer = turn.service("writer")
        if writer is None:
            sessions.add_turns([row])
            return
        writer.gather(_add_rows, (sessions, row))

    @staticmethod
    def _write(turn: Turn, op: Any) -> None:
        """Run ``op(batch)`` on the store's background writer, in its batch (an
        index in the store's database writes with the batch's other writes),
        or inline without one (``batch`` None)."""
        writer = turn.service("writer")
        if writer is None:
            op(None)
        else:
            writer.submit(op)

    def viewer_purpose(self, turn: Turn) -> str:
        route = self.config.route(turn.route)
        return turn.identity.purpose or (route.purpose if route.purpose is not None else self.config.purpose)

    def _indexing(self, turn: Turn) -> bool:
        ident = turn.identity
        return self.config.index_sessions and bool(ident.tenant and ident.session and ident.source)

    # -- manifest -------------------------------------------------------------------------
    def report(self, turn: Turn) -> dict | None:
        state = turn.state.get(self.name)
        if not isinstance(state, RecallState):
            return None
        out: dict[str, Any] = {"status": state.status, "candidates": state.candidates,
                               "results": len(state.items), "items": state.items, "ms": round(state.ms, 3)}
        if state.output_items:
            out["after_tool_result"] = state.output_items
        if state.reason:
            out["reason"] = state.reason
        return {"recall": out}


@dataclass(frozen=True)
class TurnWords:
    """What the user said, as recall reads a request."""

    latest: str = ""  # the user's latest own words
    goal: str = ""  # a tool-result turn: the task's goal (the conversation's first own words)
    new: bool = False  # the latest words are in this request's newest item (not a tool round trip)
    context: str = ""  # latest words that refer back ("this", "it"): the words before them (``refers_back``)


_WORDS_BASE: list[int] = []


def _words_bytes(words: TurnWords) -> int:
    """``entry_bytes`` of a request's words under its 16-byte digest, from its three
    strings' sizes: the entry's shape is fixed, so it is not walked on every new turn
    (with room for the instance's dict, whose layout CPython varies)."""
    if not _WORDS_BASE:
        _WORDS_BASE.append(entry_bytes(b"0" * 16, TurnWords()) + 256 - 3 * sys.getsizeof(""))
    return _WORDS_BASE[0] + sys.getsizeof(words.latest) + sys.getsizeof(words.goal) + sys.getsizeof(words.context)


def _said_before(items: list, at: int) -> str:
    """What the user said before item ``at``: the nearest earlier own words, or the summary a
    compacted conversation continues from."""
    for item in reversed(items[:at]):
        words = _own(item)
        if words:
            return words
        if isinstance(item, dict) and item.get("role") == "user":
            summary = "\n".join(w for w in map(summary_words, item_texts(item)) if w)
            if summary:
                return summary
    return ""


def _own(item: Any) -> str:
    if not isinstance(item, dict) or item.get("role") != "user":
        return ""
    return "\n".join(w for w in map(own_words, item_texts(item)) if w)


def _add_rows(batch: Any, items: list[tuple[Any, TurnTexts]]) -> None:
    """The session-index rows the writer gathered (``_index``), in one transaction per index."""
    by_index: dict[int, tuple[Any, list[TurnTexts]]] = {}
    for sessions, row in items:
        by_index.setdefault(id(sessions), (sessions, []))[1].append(row)
    for sessions, rows in by_index.values():
        sessions.add_turns(rows, batch=batch)


def turn_words(view: Any) -> TurnWords:
    """The user's latest own words and, when the newest item is a tool result, the
    task's goal: read from the newest user item with words of the user's back, and
    from the first forward (agents' wrappers are not the user's: ``agent_text``)."""
    items = view.items()
    latest, at = "", -1
    for pos in range(len(items) - 1, -1, -1):
        latest = _own(items[pos])
        if latest:
            at = pos
            break
    if not latest:  # a bare string input has no items
        return TurnWords(own_words(view.latest_user_text() or ""), "", True)
    newest = max((r.position for r in view.tool_results()), default=-1)
    goal = next((w for w in map(_own, items[:at]) if w), "") if newest == len(items) - 1 else ""
    context = _said_before(items, at) if not goal and refers_back(latest) else ""
    return TurnWords(latest, goal, at == len(items) - 1, context)  # words beside the results are new words too


def newest_round(view: Any) -> list:
    """The tool results the request ends with — its newest item's (Anthropic: one user
    message holds them all), or the run of result items at its end (Chat's ``tool``
    messages, Responses' outputs) — or [] when the newest item is no tool result."""
    results = view.tool_results()
    last = len(view.items()) - 1
    if not results or results[-1].position != last:
        return []
    out, at = [], last
    for r in reversed(results):
        if r.position < at - 1:
            break
        if r.position == at - 1:
            if view.api == "anthropic":
                break
            at -= 1
        out.append(r)
    return out[::-1]


def outweigh(first: list, output: list, share: float) -> list:
    """The first recall's items (the turn's words) to give beside what the tool output's
    recall found: one the output recall found too stays; another scoring below ``share``
    of the output recall's best is left out (the output names what the turn is about, a
    memory far weaker than it is what the words happened to share). Nothing found from
    the output, or ``share`` 0: all of them."""
    if not output or share <= 0:
        return first
    best = max(s.score for s in output)
    ids = {s.cand.memory_id for s in output}
    return [s for s in first if s.cand.memory_id in ids or s.score >= share * best]


def item_report(s: Any) -> dict:
    c = s.cand
    return {"id": c.memory_id, "kind": c.kind, "scope": c.scope, "source": c.source, "score": round(s.score, 4),
            "parts": s.parts(), "labels": {"sensitivity": SENSITIVITY_ORDER[min(c.sensitivity, 3)],
                                           "origin": c.origin, "observed_at": _iso(c.observed_at)}}


def _items_json(items: list[dict]) -> str:
    """The span's copy of the manifest items (ids, labels, score parts — no
    text), at most ``SPAN_ITEMS_CHARS``: the lowest-ranked go first."""
    items = list(items)
    text = orjson.dumps(items).decode()
    while len(text) > SPAN_ITEMS_CHARS and items:
        items.pop()
        text = orjson.dumps(items).decode()
    return text


def render_items(items: list, header: str = HEADER) -> str:
    """One line per item; the statement last, on one line."""
    if not items:
        return ""
    lines = [header]
    for s in items:
        c = s.cand
        source = c.evidence_ref if c.source == "session" else f"memory{':' + c.evidence_ref if c.evidence_ref else ''}"
        text = " ".join(c.statement.split())
        lines.append(f"- [{c.memory_id}] {c.kind} · {c.scope} · {source} · observed {_iso(c.observed_at)} · "
                     f"confidence {c.confidence:.2f}: {text}")
    return "\n".join(lines)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else "unknown"


def _max_sens(items: list) -> str:
    return SENSITIVITY_ORDER[max((min(s.cand.sensitivity, 3) for s in items), default=0)]


def _newest(items: list) -> str:
    return _iso(max((s.cand.observed_at for s in items), default=0.0))
