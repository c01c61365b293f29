"""The memory tool's actions: what the proxy does when the model calls it.

``search`` recalls within the caller's visibility (the recall filter's
authorization, before ranking); ``add``, ``replace`` and ``remove`` write
through the write gate into one of two targets, as Hermes' memory tool has
them: ``user`` (what the user prefers: a preference at the user's scope)
and ``memory`` (the agent's notes: a procedure at the project's scope, or
the user's without a project). Both are snapshot kinds, so the snapshot
caps bound them; over a cap the answer lists what is there to replace.

Provenance decides the status, never the model's say-so: text the user
wrote in this session is origin ``user``; text found in a tool result is
``tool_output`` (at most proposed, threat-scanned); anything else is the
model's inference, a hypothesis. No wire format and no turn here: the
filter hands in who is asking and what the conversation holds.
"""
from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, NamedTuple

from ctxproxy.store.memory_records import MemoryRecord

ACTIONS = ("search", "add", "replace", "remove")
TARGETS = {"user": "preference", "memory": "procedure"}
MAX_CONTENT = 1000  # characters of one entry
MAX_QUERY = 2000
MAX_K = 10
# The share of an entry's words that must appear, in order, in one user turn
# for it to count as the user's own words (a paraphrase is the model's).
_NEAR_VERBATIM = 0.85


@dataclass(frozen=True)
class Caller:
    """Who the model acts for: the turn's identity (tenant from the credentials)."""

    tenant: str
    user: str = ""
    project: str = ""
    session: str = ""
    purpose: str = ""
    parent_session: str = ""
    turn_id: str = ""


class Conversation(NamedTuple):
    """What the turn's history holds, to tell whose words an entry is."""

    user_texts: tuple[str, ...] = ()
    tool_texts: tuple[str, ...] = ()


class ToolOutcome(NamedTuple):
    action: str
    status: str  # ok | refused | error
    answer: dict  # what the model reads (JSON)
    memory_ids: tuple[str, ...] = ()


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"\w+", text))


def origin_of(content: str, conv: Conversation) -> str:
    """``tool_output`` when the entry is copied from a tool result (that wins:
    untrusted text stays untrusted even if a user pasted it too), ``user`` when
    it is the user's own words, else ``model_inference``."""
    words = _norm(content)
    if not words:
        return "model_inference"
    if any(_contains(_norm(t), words) for t in conv.tool_texts):
        return "tool_output"
    if any(_contains(_norm(t), words) for t in conv.user_texts):
        return "user"
    return "model_inference"


def _contains(haystack: str, words: str) -> bool:
    if words in haystack:
        return True
    wanted = words.split()
    if len(wanted) < 4:
        return False
    have = set(haystack.split())
    return sum(w in have for w in wanted) / len(wanted) >= _NEAR_VERBATIM and _in_order(haystack.split(), wanted)


def _in_order(hay: list[str], wanted: list[str]) -> bool:
    """Most of ``wanted`` appears in ``hay`` in the same order (a subsequence)."""
    it = iter(hay)
    found = sum(1 for w in wanted if any(h == w for h in it))
    return found / len(wanted) >= _NEAR_VERBATIM


_STATUS_NOTE = {
    "active": "saved; it enters the memory of later sessions",
    "proposed": "saved as a proposal: it came from a tool result or a page, so a person reviews it before it is used",
    "hypothesis": "saved as a hypothesis (your inference, not the user's words): a person approves it before it "
                  "is used as fact",
}


class MemoryTool:
    """The actions, given the gate, the recall services and a rank config."""

    def __init__(self, gate: Any, recall: Any, actions: Iterable[str] = ACTIONS, rank: Any = None,
                 clock: Callable[[], float] = time.time):
        self.gate = gate
        self.recall = recall
        self.actions = tuple(actions)
        self.rank = rank
        self.clock = clock

    def run(self, caller: Caller, action: Any, args: Any, conv: Conversation) -> ToolOutcome:
        if action not in self.actions or not isinstance(args, dict):
            return _error(str(action), f"unknown action {action!r}; use one of {', '.join(self.actions)}")
        try:
            return getattr(self, "_" + action)(caller, args, conv)
        except _BadArgs as exc:
            return _error(action, str(exc))

    # -- actions ---------------------------------------------------------------------

    def _search(self, caller: Caller, args: dict, conv: Conversation) -> ToolOutcome:
        from ctxproxy.store.services.recall.queries import QueryError, recall_items

        query = _arg(args, "query", MAX_QUERY)
        k = args.get("k", 5)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise _BadArgs(f"k: expected an integer 1..{MAX_K}")
        params = {"query": query, "k": k, "user": caller.user, "project": caller.project,
                  "session": caller.session, "purpose": caller.purpose, "parent_session": caller.parent_session}
        try:
            found = recall_items(self.recall, caller.tenant, {p: v for p, v in params.items() if v != ""},
                                 self.rank)
        except QueryError as exc:
            raise _BadArgs(str(exc)) from None
        items = [{"memory_id": i["memory_id"], "statement": i["statement"], "kind": i["kind"],
                  "scope": i["scope"], "observed_at": i["observed_at"]} for i in found["items"]]
        return ToolOutcome("search", "ok", {"results": items}, tuple(i["memory_id"] for i in items))

    def _add(self, caller: Caller, args: dict, conv: Conversation) -> ToolOutcome:
        target = _target(args)
        content = _arg(args, "content", MAX_CONTENT)
        return self._write(caller, "add", target, content, conv)

    def _replace(self, caller: Caller, args: dict, conv: Conversation) -> ToolOutcome:
        target = _target(args)
        old = self._unique(caller, target, _arg(args, "old_text", MAX_CONTENT))
        content = _arg(args, "content", MAX_CONTENT)
        return self._write(caller, "replace", target, content, conv, replaces=old)

    def _remove(self, caller: Caller, args: dict, conv: Conversation) -> ToolOutcome:
        target = _target(args)
        old = self._unique(caller, target, _arg(args, "old_text", MAX_CONTENT))
        store = self.gate.store
        with store.batch() as b:  # a new revision, not an erasure: a person can see and restore it
            b.memories.put(old.evolve(status="deleted", updated_at=self.clock()), expected_revision=old.revision)
        return ToolOutcome("remove", "ok", {"removed": old.memory_id, "statement": old.statement},
                           (old.memory_id,))

    # -- helpers -----------------------------------------------------------------------

    def _scope(self, caller: Caller, target: str) -> tuple[str, str]:
        """(project, user) a target's entries live at."""
        if target == "memory" and caller.project:
            return caller.project, ""
        return "", caller.user

    def _entries(self, caller: Caller, target: str) -> list[MemoryRecord]:
        project, user = self._scope(caller, target)
        kind = TARGETS[target]
        recs = self.gate.store.memories.scope_records(caller.tenant, project, user, "", snapshot=True)
        return [r for r in recs if r.kind == kind and r.status in ("active", "proposed", "hypothesis")]

    def _unique(self, caller: Caller, target: str, old_text: str) -> MemoryRecord:
        hits = [r for r in self._entries(caller, target) if old_text in r.statement]
        if not hits:
            raise _BadArgs(f"old_text: no {target} entry contains {old_text!r}")
        if len(hits) > 1:
            raise _BadArgs(f"old_text: {len(hits)} {target} entries contain it; quote more of the one you mean")
        return hits[0]

    def _write(self, caller: Caller, action: str, target: str, content: str, conv: Conversation,
               replaces: MemoryRecord | None = None) -> ToolOutcome:
        if not caller.user and not (target == "memory" and caller.project):
            return _refused(action, "no_identity", "this session has no user (or project) to remember for")
        project, user = self._scope(caller, target)
        origin = origin_of(content, conv)
        body: dict[str, Any] = {"statement": content, "kind": TARGETS[target], "origin": origin,
                                "evidence_ref": f"session:{caller.session}/turn:{caller.turn_id}"
                                if caller.session else f"turn:{caller.turn_id}"}
        if caller.session:
            body["evidence_sessions"] = [caller.session]
        if project:
            body["project"] = project
        if user:
            body["user"] = user
        if replaces is not None:
            body["replaces"] = replaces.memory_id
        out = self.gate.write(caller.tenant, body, created_by="memory_tool")
        if out.refused is not None:
            message = out.refused.message
            if out.refused.reason == "over_limit":
                entries = [r.statement for r in self._entries(caller, target) if r.status == "active"]
                message += ". Replace or remove one of these first: " + "; ".join(
                    f"{i + 1}. {s!r}" for i, s in enumerate(entries))
            return _refused(action, out.refused.reason, message)
        rec = out.record
        answer = {"memory_id": rec.memory_id, "status": rec.status, "origin": rec.origin,
                  "note": _STATUS_NOTE.get(rec.status, "saved")}
        if out.duplicate_of:
            answer["note"] = "already remembered (no new entry)"
        if out.supersedes:
            answer["supersedes"] = list(out.supersedes)
        return ToolOutcome(action, "ok", answer, (rec.memory_id,))


class _BadArgs(ValueError):
    pass


def _arg(args: dict, name: str, limit: int) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _BadArgs(f"{name}: required, a non-empty string")
    if len(value) > limit:
        raise _BadArgs(f"{name}: {len(value)} characters, at most {limit}")
    return value


def _target(args: dict) -> str:
    target = args.get("target")
    if target not in TARGETS:
        raise _BadArgs(f"target: expected one of {', '.join(TARGETS)}")
    return target


def _error(action: str, message: str) -> ToolOutcome:
    return ToolOutcome(action, "error", {"error": message})


def _refused(action: str, reason: str, message: str) -> ToolOutcome:
    return ToolOutcome(action, "refused", {"refused": reason, "message": message})


def tool_schema(actions: Iterable[str]) -> dict:
    """The JSON schema of the tool's one argument object (every API's tools take it)."""
    actions = list(actions)
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": actions},
            "query": {"type": "string", "description": "search: what to look for"},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "description": "search: how many results"},
            "target": {"type": "string", "enum": list(TARGETS),
                       "description": "user: the user's preferences; memory: notes on the work and environment"},
            "content": {"type": "string", "description": "add/replace: the entry, in the user's own words "
                                                         "where the user said it"},
            "old_text": {"type": "string", "description": "replace/remove: a unique part of the entry"},
        },
        "required": ["action"],
    }


def tool_description(actions: Iterable[str]) -> str:
    actions = list(actions)
    return ("Durable memory shared across this user's sessions and agents. Actions: "
            + ", ".join(actions) + ". Search before asking the user something they may have said before. "
            "Add what the user asks you to remember, in their words; entries you infer are kept as "
            "hypotheses until a person approves them. Never store secrets.")
