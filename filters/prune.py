"""prune — replace old tool outputs with stubs; originals kept, retrievable.

Parameters follow Anthropic context editing (``trigger_tokens``,
``keep_recent``, ``clear_at_least``, ``exclude_tools``) and OpenClaw session
pruning (soft trim: head + tail with a size note; hard clear: a placeholder).
Every stub carries a ``ctx://pruned/<id>`` reference to the stored original
(``GET /ctx/v1/pruned/<id>``, ``ctxproxy pruned show <id>``); the store keeps
an id -> tenant pointer next to it (``REF_INDEX_TENANT``), so the reference
alone finds it.

How a turn goes:

1. Each tool result gets an id derived from tenant, session, call id and a
   hash of its content. Decisions made in earlier turns (kept per session in
   the store) are applied again, producing the *same* stub text, so the
   bytes the provider caches stay identical turn after turn.
2. The request's input tokens are estimated (cached counter; decisions
   already applied). Only when the estimate exceeds ``trigger_tokens`` does a
   batch run: oldest eligible results first, soft trim and/or hard clear
   until the estimate is at ``trigger_tokens * target_ratio`` — well below
   the trigger, so the next batch (the next break in the cached prefix)
   comes only after the conversation grew by the difference. A batch that
   frees less than ``clear_at_least`` or ``trigger_tokens * min_batch_ratio``
   is not applied (when the recent results alone exceed the trigger, this
   groups results instead of pruning one per turn). A long conversation no
   cache knows (``ESTIMATE_CHARS``) is estimated from a sampled
   tokens-per-byte ratio when that is clearly off the trigger, and counted
   exactly on a helper thread once the answer went.
3. New decisions and the originals are written in one store transaction
   *before* the request leaves (a stub never points at nothing); then the
   edits are applied, all at the end (fail open: an error before that
   forwards the request unmodified and marks the turn degraded). The
   transaction is staged (``Turn.commit_staged``): the filters after this one
   run during its fsync, and the request waits for the disk at their end; a
   commit that fails there undoes this filter's edits the same way.

Never pruned: the ``keep_recent`` most recent results, results the model
has not seen yet (after the last assistant turn), results of excluded tools,
results with any part that is not text (images, as OpenClaw does, and PDF
documents, search results...: a stub is text, and the stored original is the
result's text, so the rest would be lost), small results, and results
carrying a cache breakpoint inside their content. Only content is replaced:
every call/result pair stays where it was.

Monotonic: a decision is never undone; ``soft`` may later become ``hard``
(at a batch point). If the client sends different content for a call id that
was pruned, the new content is pruned the same way at once.

``turn.state["prune"]`` is a ``PruneState`` (``pruned``: ``{ref, tool,
tokens_before, tokens_after, mode, new}`` each; ``batch``,
``tokens_estimated``, ``tokens_after``, ``trigger_tokens``, ``saved_tokens``,
``skipped``); ``report`` gives the manifest the pruned list.
(``tokens_estimated`` is ``None`` when the request is too small to reach the
trigger and was not counted.) Originals are tagged with the session and, when
known, the user as subject, so a deletion request erases them. The decisions
grow with the conversation, so they live in the session's ``prune`` part
(``store.sessions.get(tenant, session, part="prune")``), not in the record
every filter reads on every turn; deleting the session deletes them.
"""
from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

import orjson

from ctxproxy.config import ConfigError

from ctxproxy.store import REF_POINTERS, surrogates
from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.lookups import REF_PREFIX  # the admin API and the CLI resolve references too

from .base import Filter, Turn
from .repeats import RequestFacts
from .report import ManifestField, as_dict, integer, items, text
from .services import Services
from .session_part import read_with_session
from .tokens import utf8_len
from ctxproxy.store.services.digest import memo_key, text_sha256


log = logging.getLogger("ctxproxy.filters.prune")

MEMO_BYTES = 1 << 20  # each of the four in-process memos (token counts, ids, stubs by content)
# A request bringing at least this much text no memo knows (a long conversation first
# seen) is decided from estimated counts when the estimate is clearly on one side of
# the trigger; the exact counts are made after the answer went.
ESTIMATE_CHARS = 262144
ESTIMATE_BAND = 0.2  # ... clearly: more than this fraction of trigger_tokens away from it
ESTIMATE_MARGIN = 1.05  # estimates lean high: a batch then clears at least down to its target
# ... and an item this small (a call, a short message) is estimated from the length of its JSON
# instead of walking its strings: they are all in it, so the estimate only leans higher.
# Larger ones are walked (a base64 image's JSON would read as text).
ESTIMATE_ITEM_BYTES = 4096

# Store tenant holding pruned id -> tenant pointers (as the manifests' "#turns"), so
# an operator finds an original from its ctx://pruned/<id> alone, which names no
# tenant: the model reads it, and a tenant name has no business in the prompt.
REF_INDEX_TENANT = REF_POINTERS  # the store erases them with their session
_LATER = "prune.count_later"  # turn.state: what this turn estimated, counted once the answer went
STATE_KEY = "prune"  # the session's part holding the decisions (earlier: a key of the session state)
read_with_session(STATE_KEY)
SOFT, HARD = "soft", "hard"
_RANK = {SOFT: 1, HARD: 2}


@dataclass(frozen=True)
class PruneConfig:
    trigger_tokens: int = 100_000  # prune when the request's estimated input tokens exceed this
    target_ratio: float = 0.5  # a batch clears down to trigger_tokens * target_ratio (0 < r <= 1)
    keep_recent: int = 3  # the N most recent tool results are never pruned
    clear_at_least: int = 0  # a batch that cannot free this many tokens is not applied
    min_batch_ratio: float = 0.2  # ... nor one freeing < trigger_tokens * this (no prune-every-turn)
    exclude_tools: tuple[str, ...] = ()  # tool names (globs, case-insensitive) never pruned
    min_tokens: int = 200  # results smaller than this are left alone
    mode: Literal["auto", "soft", "hard"] = "auto"  # auto: soft trim first, hard clear if not enough
    soft_min_chars: int = 4000  # only results longer than this are soft-trimmed
    soft_head_chars: int = 1500  # soft trim keeps this much of the start...
    soft_tail_chars: int = 1500  # ...and this much of the end

    def validate(self, path: str) -> None:
        for key in ("trigger_tokens", "keep_recent", "clear_at_least", "min_tokens", "soft_min_chars",
                    "soft_head_chars", "soft_tail_chars"):
            if getattr(self, key) < 0:
                raise ConfigError(f"{path}.{key}: must be >= 0, got {getattr(self, key)}")
        if self.trigger_tokens < 1:
            raise ConfigError(f"{path}.trigger_tokens: must be >= 1, got {self.trigger_tokens}")
        if not 0.0 < self.target_ratio <= 1.0:
            raise ConfigError(f"{path}.target_ratio: must be in (0, 1], got {self.target_ratio}")
        if not 0.0 <= self.min_batch_ratio <= 1.0:
            raise ConfigError(f"{path}.min_batch_ratio: must be in [0, 1], got {self.min_batch_ratio}")
        if self.soft_head_chars + self.soft_tail_chars < 1 and self.mode != HARD:
            raise ConfigError(f"{path}.soft_head_chars: soft trim needs head or tail characters "
                              "(or set mode = \"hard\")")


class _Result:
    """One tool result of this request, with what the filter decided for it."""

    __slots__ = ("index", "result", "digest", "id", "eligible", "decision", "new", "stub", "after",
                 "_tokens", "_tool", "_count")

    def __init__(self, index: int, result: Any, digest: str, rid: str, count: Callable[[str, str], int]):
        self.index = index  # order among the request's tool results
        self.result = result  # the view's ToolResult
        self.digest = digest  # content hash (hex)
        self.id = rid
        self.eligible = False  # may be newly pruned (or upgraded) in a batch
        self.decision: dict | None = None  # stored decision applied / planned
        self.new = False  # decision made in this turn
        self.stub = ""
        self.after = 0  # tokens of the stub
        self._tokens: int | None = None
        self._tool: str | None = None
        self._count = count

    def uncounted(self, memo: Any) -> bool:
        """Whether ``tokens`` would have to count the content (no decision, no memo knows it)."""
        d = self.decision
        return (self._tokens is None and bool(self.result.content) and not (d is not None and d.get("h") == self.digest)
                and memo.get(self.digest) is None)

    @property
    def tokens(self) -> int:
        """Tokens of the original (from the decision when there is one: same content, same count)."""
        if self._tokens is None:
            d = self.decision
            self._tokens = d["b"] if d is not None and d.get("h") == self.digest else \
                self._count(self.digest, self.result.content)
        return self._tokens

    @property
    def tool(self) -> str:
        if self._tool is None:
            self._tool = (self.decision or {}).get("t", "")
        return self._tool

    @property
    def saved(self) -> int:
        return self.tokens - self.after if self.decision else 0


@dataclass
class _Plan:
    results: list[_Result] = field(default_factory=list)
    writes: list[_Result] = field(default_factory=list)  # new or changed decisions
    batch: bool = False
    skipped: str | None = None
    raw: int | None = None  # estimated input tokens as the client sent it (None: surely below the trigger)
    estimated: int = 0  # ... with the decisions of earlier turns applied
    counts_estimated: bool = False  # counts from a sampled ratio, not the vocabulary (see ESTIMATE_CHARS)
    later: list[tuple] = field(default_factory=list)  # ... (memo, key, value of count) to fill after the answer


@dataclass(frozen=True)
class PruneState:
    """The filter's per-turn state (``turn.state["prune"]``)."""

    pruned: list[dict]  # {ref, tool, tokens_before, tokens_after, mode, new} per pruned output
    batch: bool  # this turn pruned a new batch
    tokens_estimated: int | None  # the request as the client sent it (None: too small to matter)
    tokens_after: int | None  # as the model sees it
    trigger_tokens: int
    saved_tokens: int
    skipped: str | None  # why a batch was not pruned, if one was due
    counts_estimated: bool = False  # the token counts of this turn are estimates (a long conversation first seen)


def _below_trigger(view: Any, trigger_tokens: int) -> bool:
    """A token is at least a byte: a request of fewer bytes than the trigger, as
    the client sent it, cannot reach it."""
    raw = getattr(view, "raw", b"")
    return bool(raw) and not view.changed and len(raw) <= trigger_tokens


_UNTOUCHED = "untouched"  # ``replay_memo``: the request was none of this filter's to read


class PruneFilter(Filter):
    name = "prune"
    required = False  # fails open: the request goes on unpruned, the turn is marked degraded
    uses_tokens = True
    Config = PruneConfig
    manifest_fields = {"pruned": ManifestField(items(lambda p: _manifest_pruned(as_dict(p))))}

    def __init__(self, config: PruneConfig | None = None, store: Any = None, memo_bytes: int = MEMO_BYTES):
        self.config = config or PruneConfig()
        self.store = store
        self._excluded = tuple(p.lower() for p in self.config.exclude_tools)
        # In-process memos (content-addressed, so always valid): tokens per conversation
        # item, and stub text + tokens per decision. A turn costs O(new content).
        self._items = ByteLRU(memo_bytes, "prune item tokens")
        self._ids = ByteLRU(memo_bytes, "prune ids")  # (tenant, session, call, memo_key(content)) -> (digest, pruned id)
        self._stubs = ByteLRU(memo_bytes, "prune stubs")
        self._result_tokens = ByteLRU(memo_bytes, "prune result tokens")
        # whether a request holds tool results (the turn's facts): the same request again
        # is not walked for them when nothing was pruned before and it is below the trigger
        self._with_results = RequestFacts(self.name)
        # a turn with nothing pruned before and below the trigger: one state, read-only, shared
        self._nothing = PruneState((), False, None, None, self.config.trigger_tokens, 0, None)  # type: ignore[arg-type]
        if store is None:
            log.warning("prune: no store available; tool outputs will not be pruned")

    @classmethod
    def create(cls, config: PruneConfig | None, services: Services) -> "PruneFilter":
        return cls(config, services.store)

    # -- the hook --------------------------------------------------------------

    async def on_request(self, turn: Turn) -> None:
        view = turn.request
        if view is None or self.store is None or not turn.identity.session:
            return None
        results = None
        has = self._with_results.get(turn)
        if has is None:
            results = view.tool_results()
            has = bool(results)
            self._with_results.put(turn, has, 0)  # True and False are shared
        if not has:
            return None
        mine = turn.session_part(self.store, STATE_KEY)  # in the turn's one read of its session
        if mine is None:  # none yet, or a session from before the part: its state holds them
            mine = turn.session_state(self.store).get(STATE_KEY) or {}
        decisions: Mapping[str, dict] = mine.get("d") or {}
        if not decisions and _below_trigger(view, self.config.trigger_tokens):
            # nothing pruned before to apply again, nothing new to prune: its results are not read
            turn.state[self.name] = self._nothing
            return None
        if results is None:
            results = view.tool_results()

        plan = self.plan(turn, results, decisions)
        if not plan.writes:
            self._edit(turn, plan)
            return None

        # staged: the filters after this one run during the fsync; the request leaves once it is on disk
        taken = await turn.commit_staged(self, self.store, lambda b: self._write(b, turn, plan),
                                         "could not store the pruned tool outputs")
        turn.session_changed()
        for r, old in taken:  # another worker decided first: keep its decision (same bytes for everyone)
            self._apply(r, old, turn.tokens.count, new=True)
        self._edit(turn, plan)

    def replay_memo(self, turn: Turn) -> Any:
        """What ``replay`` needs: this request left as it came, decided from its bytes
        and the session's stored decisions alone (no results, or nothing pruned
        before and below the trigger); None when its results were planned."""
        st = turn.state.get(self.name)
        return _UNTOUCHED if st is None else st if st is self._nothing else None

    def replay(self, turn: Turn, memo: Any) -> bool:
        """The chain's repeat (``Pipeline``): the same bytes and the session's same
        stored part, so the same decision."""
        if memo is not _UNTOUCHED:
            turn.state[self.name] = memo
        return True

    def report(self, turn: Turn) -> dict | None:
        st: PruneState | None = turn.state.get(self.name)
        if st is None:
            return None
        later = turn.state.pop(_LATER, None)
        if later:  # the turn's end, after the answer: count what this turn estimated, on the helper thread
            turn.tokens.count_later(lambda count: [memo.put(key, value(count)) for memo, key, value in later])
        return {"pruned": list(st.pruned)}

    @staticmethod
    def successor_state(st: PruneState) -> PruneState:
        return st  # what it pruned describes the request, which a successor shares

    def _edit(self, turn: Turn, plan: _Plan) -> None:
        """Every edit happens here, after everything that could fail."""
        for r in plan.results:
            if r.decision is not None and r.result.content != r.stub:
                r.result.replace(r.stub)
        pruned = [r for r in plan.results if r.decision is not None]
        saved = sum(r.saved for r in pruned)
        est = {"tokens_estimated": True} if plan.counts_estimated else {}
        turn.state[self.name] = PruneState(
            [{"ref": REF_PREFIX + r.id, "tool": r.tool, "tokens_before": r.tokens, "tokens_after": r.after,
              "mode": r.decision["m"], "new": r.new, **est} for r in pruned],
            plan.batch, plan.raw, None if plan.raw is None else plan.raw - saved, self.config.trigger_tokens,
            saved, plan.skipped, plan.counts_estimated)
        if plan.later:
            turn.state[_LATER] = plan.later

    # -- deciding (no side effects) -----------------------------------------------

    def plan(self, turn: Turn, results: list, decisions: Mapping[str, dict]) -> _Plan:
        cfg = self.config
        view = turn.request
        count = turn.tokens.count
        tenant, session = turn.identity.tenant, turn.identity.session
        by_call: dict[str, dict] | None = None
        shape: _Shape | None = None
        memo = self._result_tokens
        turn.tokens.wait_later()  # the last turn's estimates, counted after its answer: fills the memos read here
        guess: list[Callable[[str], int]] = []  # the estimator, while the plan runs on estimates
        later: list[tuple] = []  # the plan's, held here: a closure over the plan would be a cycle through its results

        def tokens_of(digest: str, content: str) -> int:
            n = memo.get(digest)
            if n is None:
                if guess:  # not remembered: counted exactly after the answer
                    later.append((memo, digest, lambda c: c(content)))
                    return guess[0](content)
                n = count(content)
                memo.put(digest, n)
            return n

        plan = _Plan(later=later)
        ids = self._ids
        encodings = view.item_encodings()
        for n, res in enumerate(results):
            content = res.content
            # The stored id needs a stable digest; an unchanged result finds it in the
            # memo by a cheap in-process key instead of rehashing: the key of the item
            # that holds it, whose encoding every filter hashes anyway (an item holds
            # the result, so an unchanged item has an unchanged result).
            enc = encodings[res.position] if 0 <= res.position < len(encodings) else None
            id_key = (tenant, session, res.call_id, memo_key(enc if enc is not None else content))
            known = ids.get(id_key)
            if known is None:
                digest = _digest(content)
                known = (digest, pruned_id(tenant, session, res.call_id, digest))
                ids.put(id_key, known)
            r = _Result(n, res, known[0], known[1], tokens_of)
            plan.results.append(r)
            if res.has_images or not content:
                continue
            d = decisions.get(r.id)
            if d is not None:
                if not view.result_has_breakpoint(res):
                    self._apply(r, d, count, new=False)
                continue
            if not decisions:
                continue
            if by_call is None:
                by_call = _strongest_per_call(decisions)
            prev = by_call.get(res.call_id)
            if prev is not None and shape is None:
                shape = _Shape(view, results)  # once per request: a check per result stays O(1)
            if prev is not None and not view.result_has_breakpoint(res) and shape.carries(n, cfg.keep_recent):
                # same call, different content: prune it the same way at once (monotonic per call)
                r._tool = prev.get("t", "")
                d = self._decision(r, prev["m"], prev.get("hc", cfg.soft_head_chars),
                                   prev.get("tc", cfg.soft_tail_chars))
                if self._apply(r, d, count, new=True) and r.after < r.tokens:
                    plan.writes.append(r)
                else:
                    r.decision, r.new, r.stub, r.after = None, False, "", 0

        if _below_trigger(view, cfg.trigger_tokens):
            return plan
        uncounted = turn.tokens.unknown([r.result.content for r in plan.results if r.uncounted(memo)])
        if sum(map(len, uncounted)) >= ESTIMATE_CHARS and self._decide_estimated(turn, view, plan, uncounted, guess):
            return plan
        # A result no memo knows (a conversation first seen) is counted here; many at once
        # are counted on two threads first.
        turn.tokens.prefetch(uncounted)
        plan.raw = self._estimate(view, plan, count)
        plan.estimated = plan.raw - sum(r.saved for r in plan.results)
        if plan.estimated > cfg.trigger_tokens:
            self._mark_eligible(view, plan)
            self._batch(plan, count)
        return plan

    def _decide_estimated(self, turn: Turn, view: Any, plan: _Plan, uncounted: list[str],
                          guess: list[Callable[[str], int]]) -> bool:
        """Plan a long conversation first seen from estimated counts: tokens per
        byte from an exact count of a sample of its new text, a little high.
        Only when the estimate is clearly above or below the trigger (near it,
        returns False having changed nothing, and the caller counts exactly).
        A uniform overestimate is the safe side: a batch then clears at least
        down to its target."""
        cfg = self.config
        exact = turn.tokens.count
        per_byte = turn.tokens.tokens_per_byte(uncounted) * ESTIMATE_MARGIN
        if per_byte <= 0:
            return False

        def estimate(text: str) -> int:
            if len(text) < 64:
                return exact(text)  # short: as cheap to count as to estimate
            return max(1, int(utf8_len(text) * per_byte + 0.5))

        guess.append(estimate)
        raw = self._estimate(view, plan, estimate, remember=False, per_byte=per_byte)
        estimated = raw - sum(r.saved for r in plan.results)
        if abs(estimated - cfg.trigger_tokens) <= cfg.trigger_tokens * ESTIMATE_BAND:
            guess.clear()
            plan.later.clear()
            for r in plan.results:
                r._tokens = None  # forget the estimates: the caller counts exactly
            return False
        plan.raw, plan.estimated, plan.counts_estimated = raw, estimated, True
        if estimated > cfg.trigger_tokens:
            self._mark_eligible(view, plan)
            self._batch(plan, estimate, later=plan.later)
        return True

    def _estimate(self, view: Any, plan: _Plan, count: Callable[[str], int], remember: bool = True,
                  per_byte: float = 0.0) -> int:
        """Input tokens of the request as the client sent it: tool results from
        their content-hash memo, every other conversation item from a memo keyed
        by a hash of its JSON — an unchanged history costs a hash per item.
        Estimating (``remember`` false), an item no memo knows is counted after
        the answer; a small one is estimated from its JSON's length at
        ``per_byte`` (its strings are not walked before the request leaves)."""
        total = _head_tokens(view, count) + sum(r.tokens for r in plan.results)
        holders = {r.result.position for r in plan.results}
        encodings = view.item_encodings()
        for i, item in enumerate(view.items()):
            if i in holders:
                total += sum(count(s) for s in view.beside_results(item))
                continue
            key = memo_key(encodings[i] if encodings[i] is not None else surrogates.dumps(item))
            n = self._items.get(key)
            if n is None:
                if remember:
                    n = _strings_tokens(view, item, count)
                    self._items.put(key, n)
                elif per_byte > 0 and encodings[i] is not None and len(encodings[i]) <= ESTIMATE_ITEM_BYTES:
                    # an estimate from its JSON; counted exactly after the answer, from that JSON
                    n = max(1, int(len(encodings[i]) * per_byte + 0.5))
                    plan.later.append((self._items, key, lambda c, enc=encodings[i], strings=view.visible_strings:
                                       sum(c(s) for s in strings(_loads(enc)))))
                else:  # an estimate: counted exactly after the answer (its strings as they are now)
                    strings = list(view.visible_strings(item))
                    n = sum(count(s) for s in strings)
                    plan.later.append((self._items, key, lambda c, ss=strings: sum(c(s) for s in ss)))
            total += n
        return total

    def _mark_eligible(self, view: Any, plan: _Plan) -> None:
        cfg = self.config
        names = {c.call_id: c.name for c in view.tool_calls()}
        last_model = -1
        for i, item in enumerate(view.items()):
            if view.from_model(item):
                last_model = i
        keep_from = len(plan.results) - cfg.keep_recent  # results at this index or later are kept
        for r in plan.results:
            res = r.result
            if not r._tool:
                r._tool = names.get(res.call_id) or (r.decision or {}).get("t", "")
            if r.decision is not None and r.decision["m"] == HARD:
                continue
            r.eligible = (r.index < keep_from and res.position < last_model and not res.has_images
                          and bool(res.content) and not self._is_excluded(r.tool)
                          and r.tokens >= cfg.min_tokens and not view.result_has_breakpoint(res))

    def _batch(self, plan: _Plan, count: Callable[[str], int], later: list | None = None) -> None:
        cfg = self.config
        # The smallest batch worth breaking the cached prefix for. It matters when what cannot
        # be pruned (recent results, conversation text) already exceeds the target: without
        # it every turn would prune the one result that just became eligible.
        floor = max(cfg.clear_at_least, int(cfg.trigger_tokens * cfg.min_batch_ratio))
        need = max(plan.estimated - int(cfg.trigger_tokens * cfg.target_ratio), floor, 1)
        cands = [r for r in plan.results if r.eligible]
        if not cands:
            plan.skipped = "nothing eligible"
            return
        proposal: dict[int, tuple[dict, str, int]] = {}  # index -> (decision, stub, tokens after)
        saved = 0
        if cfg.mode in (SOFT, "auto"):
            for r in cands:
                if r.decision is not None or not self._soft_ok(r):
                    continue
                d = self._decision(r, SOFT, cfg.soft_head_chars, cfg.soft_tail_chars)
                stub, after = self._stub(d, r.result.content, count, later)
                if stub is not None and after < r.tokens:
                    proposal[r.index] = (d, stub, after)
                    saved += r.tokens - after
                    if saved >= need:
                        break
        if saved < need and cfg.mode in (HARD, "auto"):
            for r in cands:
                current = proposal[r.index][2] if r.index in proposal else (r.after if r.decision else r.tokens)
                d = self._decision(r, HARD, 0, 0)
                stub, after = self._stub(d, r.result.content, count, later)
                if stub is None or after >= current:
                    continue
                proposal[r.index] = (d, stub, after)
                saved += current - after
                if saved >= need:
                    break
        if not proposal:
            plan.skipped = "nothing eligible"
            return
        if saved < floor:
            plan.skipped = f"{'clear_at_least' if floor == cfg.clear_at_least else 'min_batch_ratio'}: " \
                           f"only {saved} tokens clearable, {floor} needed"
            return
        plan.batch = True
        for r in plan.results:
            if r.index in proposal:
                r.decision, r.stub, r.after = proposal[r.index]
                r.new = True
                plan.writes.append(r)

    def _stub(self, d: Mapping[str, Any], content: str, count: Callable[[str], int],
              later: list | None = None) -> tuple[str | None, int]:
        # Every field the stub is rendered from: a decision read back from another
        # worker (its own token count, say) must not get this worker's stub.
        key = (d["id"], d["m"], d.get("hc"), d.get("tc"), d.get("t"), d.get("b"), d.get("n"))
        hit = self._stubs.get(key)
        if hit is None:
            stub = render_stub(d, content)
            hit = (stub, count(stub) if stub is not None else 0)
            if later is None:
                self._stubs.put(key, hit)
            elif stub is not None:  # an estimate: counted exactly after the answer
                later.append((self._stubs, key, lambda c, stub=stub: (stub, c(stub))))
        return hit

    def _apply(self, r: _Result, d: dict, count: Callable[[str], int], new: bool) -> bool:
        stub, after = self._stub(d, r.result.content, count)
        if stub is None:
            return False
        r.decision, r.stub, r.after, r.new = d, stub, after, new
        return True

    def _decision(self, r: _Result, mode: str, head: int, tail: int) -> dict:
        d = {"c": r.result.call_id, "h": r.digest, "m": mode, "t": r.tool, "b": r.tokens,
             "n": len(r.result.content)}
        if mode == SOFT:
            d["hc"], d["tc"] = head, tail
        d["id"] = r.id
        return d

    def _soft_ok(self, r: _Result) -> bool:
        cfg = self.config
        n = len(r.result.content)
        return n > cfg.soft_min_chars and n > cfg.soft_head_chars + cfg.soft_tail_chars + 200

    def _is_excluded(self, tool: str) -> bool:
        t = tool.lower()
        return any(fnmatch.fnmatchcase(t, p) for p in self._excluded)

    # -- writing -------------------------------------------------------------------

    def _write(self, b: Any, turn: Turn, plan: _Plan) -> list[tuple[_Result, dict]]:
        """Originals and decisions in one batch, before the request leaves (on
        the store's writer thread: store work only). Returns the results
        another worker already decided, with its decision."""
        tenant, session = turn.identity.tenant, turn.identity.session
        subject = turn.identity.user or None
        part = b.sessions.get(tenant, session, part=STATE_KEY)
        main: Mapping[str, Any] = {}
        if part is None:
            main = b.sessions.get(tenant, session) or {}
        mine = dict(part if part is not None else main.get(STATE_KEY) or {})
        stored = dict(mine.get("d") or {})
        taken = []
        originals = []
        for r in plan.writes:
            old = stored.get(r.id)
            if old is not None and _RANK.get(old.get("m"), 0) >= _RANK[r.decision["m"]]:
                taken.append((r, old))
                continue
            stored[r.id] = r.decision
            if old is None and b.pruned.get(tenant, r.id) is None:
                originals.append((tenant, r.id, original_doc(turn, r), session, subject))
                # the id hashes the tenant in, so no other tenant's write can claim this pointer
                originals.append((REF_INDEX_TENANT, r.id, {"tenant": tenant}, session, subject))
        b.pruned.put_many(originals)  # a first send's hundred originals: their ids and session checked once
        mine["d"] = stored
        mine["v"] = 1
        b.sessions.update(tenant, session, mine, subject=subject, part=STATE_KEY)
        if main.get(STATE_KEY) is not None:
            b.sessions.update(tenant, session, {STATE_KEY: None}, current=main)  # moved to the part
        return taken


# -- pure helpers (tests and the bench use them) ------------------------------------

def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _loads(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # a lone surrogate the client sent, kept escaped in its JSON
        return json.loads(raw)


def pruned_id(tenant: str, session: str, call_id: str, digest: str) -> str:
    """Stable id of one tool output: same tenant, session, call and content => same id."""
    key = f"{tenant}\0{session}\0{call_id}\0{digest}".encode("utf-8", "surrogatepass")
    return "pr_" + hashlib.blake2b(key, digest_size=12).hexdigest()


def render_stub(d: Mapping[str, Any], content: str) -> str | None:
    """The replacement text for a decision: a function of the decision and the
    original only, so every turn produces the same bytes."""
    ref = REF_PREFIX + d["id"]
    tool = f"`{d['t']}` " if d.get("t") else ""
    if d["m"] == HARD:
        return (f"[ctxproxy: this old {tool}tool output was cleared to save context "
                f"({d['b']} tokens, {d['n']} characters). Run the tool again if you need it. "
                f"Original: {ref}]")
    head, tail = _head(content, d.get("hc", 0)), _tail(content, d.get("tc", 0))
    omitted = len(content) - len(head) - len(tail)
    if omitted <= 0:
        return None
    return (f"{head}\n[... ctxproxy: {omitted} of {len(content)} characters of this old {tool}tool output "
            f"trimmed to save context. Original: {ref} ...]\n{tail}")


def _head(text: str, n: int) -> str:
    if n <= 0:
        return ""
    head = text[:n]
    cut = head.rfind("\n")
    return head[:cut] if cut >= n // 2 else head


def _tail(text: str, n: int) -> str:
    if n <= 0:
        return ""
    tail = text[-n:]
    cut = tail.find("\n")
    return tail[cut + 1:] if 0 <= cut <= n // 2 else tail


def original_doc(turn: Turn, r: _Result) -> dict[str, Any]:
    content = r.result.content
    return {
        "call_id": r.result.call_id,
        "tool": r.tool,
        "content": content,
        "tokens": r.tokens,
        "chars": len(content),
        "sha256": text_sha256(content),
        "is_error": bool(r.result.is_error),
        "api": turn.api,
        "turn_id": turn.turn_id,
        "session": turn.identity.session,
    }


def estimate_tokens(view: Any, count: Callable[[str], int]) -> int:
    """Input tokens of a request (no memo): every string the model reads plus
    the tool definitions (what is model-visible, the adapter's view says)."""
    return _head_tokens(view, count) + sum(_strings_tokens(view, item, count) for item in view.items())


def _head_tokens(view: Any, count: Callable[[str], int]) -> int:
    return sum(count(s) for s in view.head_strings())


def _strings_tokens(view: Any, value: Any, count: Callable[[str], int]) -> int:
    return sum(count(s) for s in view.visible_strings(value))


def _strongest_per_call(decisions: Mapping[str, dict]) -> dict[str, dict]:
    """call id -> its strongest decision (hard over soft)."""
    out: dict[str, dict] = {}
    for d in decisions.values():
        c = d.get("c")
        if c is not None and _RANK.get(d.get("m"), 0) > _RANK.get(out.get(c, {}).get("m"), 0):
            out[c] = d
    return out


class _Shape:
    """What ``carries`` needs of the whole request, worked out once: the call
    ids on more than one result, and the position of the last model item."""

    __slots__ = ("results", "reused", "last_model")

    def __init__(self, view: Any, results: list):
        self.results = results
        seen: set[str] = set()
        self.reused = {r.call_id for r in results if r.call_id in seen or seen.add(r.call_id)}
        items = view.items()
        self.last_model = next((i for i in range(len(items) - 1, -1, -1)
                                if view.from_model(items[i])), -1)

    def carries(self, n: int, keep_recent: int) -> bool:
        """May result ``n`` take over the decision of an earlier content under its
        call id? Only when it is that result sent again with other bytes: its call
        id is on no other result of the request (a client that reuses call ids,
        such as ``call_0`` every turn or none at all, sends *new* results under an
        old id), and it is not one that is never pruned (among the ``keep_recent``
        newest, or not yet seen by the model)."""
        res = self.results[n]
        return (n < len(self.results) - keep_recent and res.call_id not in self.reused
                and res.position < self.last_model)


def _manifest_pruned(p: dict) -> dict[str, Any]:
    """A pruned output as the manifest keeps it: its ref and token counts, never its text."""
    return {"ref": text(p.get("ref")), "tool": text(p.get("tool")), "tokens_before": integer(p.get("tokens_before")),
            "tokens_after": integer(p.get("tokens_after"))}


__all__ = ["PruneConfig", "PruneFilter", "REF_INDEX_TENANT", "REF_PREFIX", "estimate_tokens", "pruned_id",
           "render_stub"]
