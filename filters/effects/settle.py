"""Settling the tool results a request brings: which recorded call each answers.

A result is matched to its call by call id, by normalised id (OpenClaw
replays ``call_ab…`` as ``callab…``), by the key of the call in the history,
then by position and tool name, and settled ``completed`` or ``failed``
(``is_error``, or a shell result with a non-zero exit code) with a digest,
size, references and an excerpt. Call ids are not trusted to be unique: some
providers number calls per response (Kimi K2's ``functions.exec:0``).
Another session's record is taken for a result only if it is the same call,
and a call repeating a settled call's id is a new record
(``<id>@<turn>.<n>``, the provider's id kept as an alias). Open calls whose
result never came are marked ``unknown``, never guessed.

Everything here writes into the batch it is given (the effects filter's
write-ahead); nothing here knows a turn's state.
"""
from __future__ import annotations

from typing import Any, Callable

from ctxproxy.store.records import COMPLETED, FAILED, OPEN_STATES

from ..base import Turn
from .rules import (
    DEFAULT_EXTRACTORS,
    MAX_DEPTH,
    ToolClasses,
    canonical_json,
    compile_patterns,
    digest,
    effect_key,
    excerpt,
    extract_refs,
    normalize_id,
    result_failed,
    shell_output,
    short_args,
)

UNKNOWN_TOOL = "(unknown)"
READ_ONLY = object()  # a result of a read-only call that is not recorded
TOO_DEEP = f"(arguments nested deeper than {MAX_DEPTH} levels)"  # what such a call is keyed and stored as


class Settler:
    """The effects filter's rules for keying calls and settling their results."""

    def __init__(self, config: Any, classes: ToolClasses):
        self.config = config
        self.classes = classes
        self.global_patterns = compile_patterns(
            (DEFAULT_EXTRACTORS if config.builtin_extractors else ()) + tuple(config.extractors.get("*", ())))
        self.tool_patterns = {t: self.global_patterns + compile_patterns(p)
                              for t, p in config.extractors.items() if t != "*"}

    def key_of(self, tenant: str, scope: str, tool: str, args: Any) -> tuple[str, str]:
        """(idempotency key, stored args): the key over the full canonical
        arguments, the stored form with long strings cut."""
        try:
            full = canonical_json(args)
        except ValueError:  # nested past MAX_DEPTH: no canonical form, the call is still recorded
            args = TOO_DEEP
            full = canonical_json(args)
        key = effect_key(tenant, scope, tool, full)
        stored = full if len(full) <= self.config.max_arg_string else canonical_json(
            short_args(args, self.config.max_arg_string))
        return key, stored

    def settle_fields(self, tool: str, result: Any) -> dict:
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

    def settle(self, b: Any, turn: Turn, r: Any, pool: list, used: set, lazy: "History",
                tenant: str, session: str, task: str, scope: str) -> Any:
        """Settle one tool result; returns the record, or None for a result of
        a read-only call that is not recorded."""
        rid = r.call_id or ""
        nid = normalize_id(rid)
        # 1. the thread's open calls, by id or normalised id (no store read needed)
        for e in pool:
            wire = wire_id(e)
            if (e[1], e[0]) not in used and (wire == rid or (nid and normalize_id(wire) == nid)):
                used.add((e[1], e[0]))
                if not e[3]:
                    return self._complete_read_only(b, turn, r, e[0], e[1], e[2]) or READ_ONLY
                rec = self._complete(b, turn, r, e[0], e[1], e[2])
                if rec is not None:
                    return rec
                break  # record gone (erased?): rebuild it from the history below
        # 2. the store, by id, by normalised id, then tenant-wide for long ids (a session whose
        #    id changed, e.g. resumed) if the record found there is this very call
        rec = None
        if rid:
            # The tenant's newest record of the id first: none at all (a call never recorded, every
            # result of a conversation first seen) answers the session's lookup too, and one of this
            # session is the session's newest as well: one index read where there were two.
            anywhere = b.effects.by_call_id(tenant, rid)
            if anywhere is not None:
                rec = anywhere if anywhere.session == session else b.effects.by_call_id(tenant, rid, session=session)
            if rec is None and nid and nid != rid:
                rec = b.effects.by_call_id(tenant, nid, session=session)
            if rec is None and len(rid) >= 12:
                rec = anywhere
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
        if not pool:  # no open call to match (a thread first seen): no key needed yet
            rec = None
        elif call is not None:
            key, _ = self.key_of(tenant, scope, call.name, call.arguments)
            # a pool entry whose own id is in this history is another call (same arguments, its own
            # result): only an entry whose id the client rewrote can be this one
            rec = (self._from_pool(b, turn, r, pool, used, rid,
                                   lambda e: e[0] == key and not lazy.has_call(wire_id(e)))
                   or self._from_pool(b, turn, r, pool, used, rid,
                                      lambda e: e[2] == call.name and not lazy.has_call(wire_id(e))))
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
        key, stored = self.key_of(tenant, scope, tool, args)
        wire = rid or f"{turn.turn_id}:{r.position}"
        cid = wire
        taken = b.effects.get(tenant, key, cid)
        if taken is not None and taken.session != session:  # another session's call (not ours: step 2)
            cid = occurrence_id(wire, turn.turn_id, r.position)
        b.effects.put_pending(tenant, key=key, call_id=cid, tool=tool, args_canonical=stored, session=session,
                              task=task, side_effect=side, turn_id=None, aliases=aliases(cid, wire))
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
            if rec.tool != call.name or scope is None or rec.key != self.key_of(
                    tenant, scope, call.name, call.arguments)[0]:
                return False
        elif rec.task != task:
            return False
        return rec.state in OPEN_STATES or rec.result_digest == digest(r.content)

    def _complete(self, b: Any, turn: Turn, r: Any, key: str, call_id: str, tool: str) -> Any:
        return b.effects.complete(turn.identity.tenant, key, call_id, turn_id=turn.turn_id,
                                  **self.settle_fields(tool, r))

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
                return self._complete_read_only(b, turn, r, e[0], e[1], e[2]) or READ_ONLY
            cand = b.effects.get(tenant, e[0], e[1])
            # settled already (another replica took its result while this pool was being
            # written): not a call this result can answer
            if cand is not None and cand.state in OPEN_STATES:
                self._alias(b, tenant, cand, rid)
                return self._complete(b, turn, r, cand.key, cand.call_id, cand.tool) or cand
        return None

    def expire(self, b: Any, pool: list, used: set, lazy: "History", reason: str | None,
                tenant: str) -> None:
        """The open calls of the latest response whose result this request did
        not bring will not get one: the client sent the call back without its
        result, compacted its history first, or continued without the call (it
        discarded or retried that response). They become ``unknown``: whether
        they ran is not known, and it is never guessed."""
        for e in pool:
            if (e[1], e[0]) in used or not e[3]:
                continue
            if lazy.has_call(wire_id(e)):
                note = "the client sent the call back without its result"
            elif reason:
                note = f"history compacted before its result came back ({reason})"
            else:
                note = "the client continued without this call (its response was discarded or retried)"
            b.effects.mark_unknown(tenant, e[0], e[1], note=note)


class History:
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


def aliases(call_id: str, wire: str | None = None) -> list[str]:
    """The other ids a record answers to: the provider's id when the record's
    own was made unique (``occurrence_id``), and its normalised form."""
    wire = wire or call_id
    return [a for a in dict.fromkeys((wire, normalize_id(wire))) if a and a != call_id]


def occurrence_id(wire: str, turn_id: str, n: int) -> str:
    """A record id for a call whose provider id is already taken under its key
    (an id reused across turns or sessions): unique per turn; the provider's id
    stays an alias, so lookups by it find the newest occurrence."""
    return f"{wire}@{turn_id}.{n}"


def wire_id(entry: list) -> str:
    """The provider's id of a thread's open call ``[key, record id, tool, side, wire id?]``."""
    return entry[4] if len(entry) > 4 else entry[1]
