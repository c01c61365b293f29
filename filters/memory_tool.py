"""memory_tool — a memory tool the proxy offers the model and answers itself.

On a session's first turn the filter decides whether the session gets the
tool (enabled for this route and tenant, an edge that can run the rounds,
no client tool of the same name) and keeps that decision for the session:
the tool is never added or changed mid-session, so the provider's cached
prefix holds. When offered, the tool goes last among the request's tools
and ``turn.own_tool`` tells the engine to answer its calls: the engine runs
the rounds (``proxy/rounds.py``), this filter runs each call through the
memory tool service (search within the caller's visibility; writes through
the write gate, status by provenance) and reports every round.

A response that calls our tool beside a client tool leaves ours for the
client's next request: the calls and their results are kept in the session
state and put back beside the client's own call and result then, so the
provider never reads a call without its result.
"""
from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ctxproxy.config import ConfigError
from ctxproxy.store.services.memory.tool import (ACTIONS, Caller, Conversation, MemoryTool, tool_description,
                                                 tool_schema)

from .base import Filter, Turn
from .session_part import PartCache

log = logging.getLogger("ctxproxy.filters.memory_tool")

STATE_KEY = "memory_tool"  # its part of the session's state
EVENT = "ctxproxy.memory_tool"
MAX_ALIASES = 8  # continued Responses answers remembered per session
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class MemoryToolOverride:
    """``[filters.memory_tool.routes.<route>]`` / ``[filters.memory_tool.tenants.<tenant>]``."""

    enabled: bool | None = None


@dataclass(frozen=True)
class MemoryToolConfig:
    enabled: bool = False  # off unless a deployment turns it on (here, per route or per tenant)
    name: str = "ctx_memory"  # the tool's name as the model sees it
    actions: tuple[str, ...] = ACTIONS  # search, add, replace, remove
    max_rounds: int = 3  # rounds answered per turn; a call after them gets an error result
    routes: Mapping[str, MemoryToolOverride] = field(default_factory=dict)
    tenants: Mapping[str, MemoryToolOverride] = field(default_factory=dict)

    def validate(self, path: str) -> None:
        if not _NAME.match(self.name):
            raise ConfigError(f"{path}.name: 1 to 64 letters, digits, '_' or '-'")
        unknown = [a for a in self.actions if a not in ACTIONS]
        if unknown or not self.actions:
            raise ConfigError(f"{path}.actions: expected some of {', '.join(ACTIONS)}")
        if not 0 <= self.max_rounds <= 10:
            raise ConfigError(f"{path}.max_rounds: expected 0..10")

    def enabled_for(self, route: str, tenant: str) -> bool:
        on = self.enabled
        for override in (self.routes.get(route), self.tenants.get(tenant)):
            if override is not None and override.enabled is not None:
                on = override.enabled
        return on


@dataclass
class MemoryToolState:
    """``turn.state["memory_tool"]``."""

    offered: bool = False
    reason: str = ""
    rounds: list[dict] = field(default_factory=list)  # action, status, memory ids, tokens: never content
    restored: int = 0  # deferred calls put back into this request
    deferred: list[dict] = field(default_factory=list)  # calls to answer on the client's next request
    aliases: dict[str, str] = field(default_factory=dict)  # response id the client saw -> the last round's


class _Answerer:
    """``turn.own_tool``: what the engine calls during the rounds."""

    def __init__(self, f: "MemoryToolFilter", turn: Turn, state: MemoryToolState):
        self.f, self.turn, self.state = f, turn, state
        self.name = f.config.name
        self.max_rounds = f.config.max_rounds

    async def answer(self, calls: list, limit: bool) -> None:
        for call in calls:
            if limit:
                call.result, call.is_error = _dumps({"error": "memory tool limit reached for this turn: answer the "
                                                               "user now without calling it again"}), True
                self.state.rounds.append({"action": "", "status": "limit", "memory_ids": []})
                continue
            args = call.args()
            action = args.get("action") if isinstance(args, dict) else None
            params = {k: v for k, v in args.items() if k != "action"} if isinstance(args, dict) else None
            try:
                out = await asyncio.to_thread(self.f.run, self.turn, action, params)
            except Exception as exc:  # a store failure: the model is told, the turn goes on
                log.warning("turn %s: memory tool %s failed: %s", self.turn.turn_id, action, type(exc).__name__)
                call.result, call.is_error = _dumps({"error": "the memory store failed; try again later"}), True
                self.state.rounds.append({"action": str(action), "status": "error", "memory_ids": []})
                continue
            text = _dumps(out.answer)
            if self.turn.redact_added is not None:  # what our round adds is redacted as the request was
                text = self.turn.redact_added(text)
            call.result, call.is_error = text, out.status == "error"
            self.state.rounds.append({"action": out.action, "status": out.status,
                                      "memory_ids": list(out.memory_ids),
                                      "tokens": self.turn.tokens.count(text) if self.turn.tokens.loaded else None})

    def alias(self, seen: str, last: str) -> None:
        self.state.aliases[seen] = last

    def successor(self, turn: Turn) -> "_Answerer":
        """The same tool for an automatic successor turn (its own rounds and report)."""
        return _Answerer(self.f, turn, turn.state.setdefault(self.f.name, MemoryToolState(offered=True)))

    def defer(self, anchor: str, calls: list) -> None:
        self.state.deferred.append({"anchor": anchor, "calls": [[c.call_id, c.arguments, c.result, c.is_error]
                                                                for c in calls]})


def _dumps(obj: Any) -> str:
    import orjson

    return orjson.dumps(obj).decode()


class MemoryToolFilter(Filter):
    name = "memory_tool"
    Config = MemoryToolConfig

    def __init__(self, config: MemoryToolConfig | None = None, store: Any = None, services: Mapping[str, Any] = None):
        self.config = config or MemoryToolConfig()
        self.store = store
        self.services = services or {}
        self._tool: MemoryTool | None = None
        # The session's decision, deferred calls and aliases, newest in this process: what a
        # turn's end writes may land after the client's next request is read.
        self.parts = PartCache(STATE_KEY)

    @classmethod
    def create(cls, config: MemoryToolConfig | None, services: Mapping[str, Any]) -> "MemoryToolFilter":
        return cls(config, services.get("store"), services)

    # -- the service, made on first use (the recall indexes open once per process) --
    def tool(self) -> MemoryTool:
        if self._tool is None:
            from ctxproxy.store.services.memory.gate import GateConfig, MemoryGate
            from ctxproxy.store.services.recall.services import recall_services

            cfg = self.services.get("config")
            gate = MemoryGate(self.store, GateConfig.from_config(cfg) if cfg is not None else None)
            self._tool = MemoryTool(gate, recall_services(self.services), self.config.actions)
        return self._tool

    def run(self, turn: Turn, action: Any, params: Any):
        ident = turn.identity
        caller = Caller(tenant=ident.tenant, user=ident.user, project=ident.project, session=ident.session,
                        purpose=ident.purpose, parent_session=ident.parent_session, turn_id=turn.turn_id)
        return self.tool().run(caller, action, params, _conversation(turn))

    # -- the turn -------------------------------------------------------------------------
    async def on_request(self, turn: Turn) -> None:
        state = turn.state[self.name] = MemoryToolState()
        cfg = self.config
        ident = turn.identity
        if not cfg.enabled_for(turn.route, ident.tenant):
            state.reason = "disabled"
            return
        if self.store is None or not ident.session or turn.request is None:
            state.reason = "no session"
            return
        rev, mine, _ = self.parts.load(self.store, ident.tenant, ident.session, turn=turn)
        view = turn.request
        changed = False
        if not mine:
            mine, changed = self._decide(turn), True
        if mine.get("deferred"):
            state.restored = self._restore(turn, mine["deferred"])
            mine, changed = {**mine, "deferred": []}, True
        continued = (mine.get("aliases") or {}).get(view.server_history() or "")
        if continued and hasattr(view, "continue_from"):
            view.continue_from(continued)
        self.parts.keep(turn, self.store, (), rev, mine, None, changed)
        if not mine.get("offered"):
            state.reason = mine.get("reason", "")
            return
        if cfg.name in view.tool_names():
            state.reason = "a client tool has this name"
            return
        if not turn.continues:
            state.reason = "this edge cannot answer the tool"
            return
        view.offer_tool(cfg.name, tool_description(cfg.actions), tool_schema(cfg.actions))
        state.offered = True
        turn.own_tool = _Answerer(self, turn, state)

    def _decide(self, turn: Turn) -> dict:
        """The session's one decision, at its first turn."""
        view = turn.request
        if any(view.from_model(item) for item in view.items()) or view.server_history():
            return {"offered": False, "reason": "enabled mid-session"}
        if self.config.name in view.tool_names():
            return {"offered": False, "reason": "a client tool has this name"}
        if not turn.continues:
            return {"offered": False, "reason": "this edge cannot answer the tool"}
        return {"offered": True}

    def _restore(self, turn: Turn, deferred: list) -> int:
        n = 0
        for d in deferred:
            calls = [tuple(c) for c in d.get("calls") or () if isinstance(c, list) and len(c) == 4]
            if calls and turn.request.restore_tool_round(self.config.name, str(d.get("anchor", "")), calls):
                n += len(calls)
        return n

    def on_response_end(self, turn: Turn) -> None:
        state = turn.state.get(self.name)
        if state is None or not (state.deferred or state.aliases) or self.store is None:
            return
        ident = turn.identity
        rev, mine, _ = self.parts.load(self.store, ident.tenant, ident.session, turn=turn)
        aliases = {**(mine.get("aliases") or {}), **state.aliases}
        value = {**mine, "offered": True, "deferred": state.deferred,
                 "aliases": dict(list(aliases.items())[-MAX_ALIASES:])}
        self.parts.keep(turn, self.store, (), rev, value, None, True)

    def report(self, turn: Turn) -> dict | None:
        state = turn.state.get(self.name)
        if state is None or (not state.offered and state.reason == "disabled"):
            return None
        part: dict[str, Any] = {"offered": state.offered, "name": self.config.name}
        if state.reason:
            part["reason"] = state.reason
        if state.rounds:
            part["rounds"] = state.rounds
            part["events"] = [{"name": EVENT, "attributes": {
                "ctxproxy.memory_tool.round": i + 1, "ctxproxy.memory_tool.action": r["action"],
                "ctxproxy.memory_tool.status": r["status"],
                "ctxproxy.memory_tool.memory_ids": ",".join(r["memory_ids"]) or None}}
                for i, r in enumerate(state.rounds)]
        if state.restored:
            part["restored_calls"] = state.restored
        if state.deferred:
            part["deferred_calls"] = sum(len(d["calls"]) for d in state.deferred)
        return part  # its own part: the manifest keeps it under filters.memory_tool


def _conversation(turn: Turn) -> Conversation:
    view = turn.request
    texts = [" ".join(view.visible_strings(item)) for item in view.items() if view.item_role(item) == "user"]
    texts.append(view.latest_user_text())  # also a Responses ``input`` given as one string
    users = tuple(t for t in texts if t)
    tools = tuple(r.content for r in view.tool_results() if r.content)
    return Conversation(users, tools)

