"""What a probe set is made of (built-in generators and the team's JSONL cases alike):
rule files, memories written through the gate, turns that prime the session index,
and questions with what the model must see (``expect``) and must not (``forbid``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

APIS = ("anthropic", "chat", "responses")
PATHS = {"anthropic": "/v1/messages", "chat": "/v1/chat/completions", "responses": "/v1/responses"}
MODELS = {"anthropic": "claude-test-1", "chat": "gpt-test", "responses": "gpt-test"}
WHO = ("tenant", "user", "session", "project", "purpose", "parent_session", "task")


@dataclass
class Memory:
    statement: str
    tenant: str = "default"
    fields: dict[str, Any] = field(default_factory=dict)  # the POST /ctx/v1/memories body besides statement
    reusable: bool = True  # a write the gate should keep (false: an injection, a secret, a duplicate, a transient)
    stale: bool = False  # superseded or expired by the time of the questions: must never be injected


@dataclass
class Prime:
    """A turn sent before the questions (its text goes into the session index)."""

    text: str
    who: dict[str, str]
    api: str = "anthropic"


@dataclass
class Question:
    text: str
    who: dict[str, str]
    api: str = "anthropic"
    expect: list[str] = field(default_factory=list)  # the model must see one of these (an item holding it)
    forbid: list[str] = field(default_factory=list)  # canaries: none may reach the model
    ranked: bool = False  # the answer is retrieved (recall): counted in Recall@k and MRR
    variant: str = ""  # how it is asked (facts: close | partial | synonym | rule ...): Recall@k per variant
    body: dict | None = None  # the whole request as an agent sends it (default: ``text`` as one user message)
    exclusive: bool = False  # recall may bring back only what ``expect`` names: any other recalled item is a
    # false injection (``expect`` empty: nothing may be recalled)
    split: str = ""  # which half of a set it is in (turns: dev | held-out | held-out (fresh)): metrics per half in
    # details.by_split
    sealed: bool = False  # a sealed held-out text: the report counts it, never quotes it (missed, leaked, ... lists)


@dataclass
class ProbeSet:
    name: str
    rules: dict[str, str] = field(default_factory=dict)  # relative path -> text (AGENTS.md ...)
    memories: list[Memory] = field(default_factory=list)
    primes: list[Prime] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def extend(self, other: "ProbeSet") -> None:
        self.rules.update(other.rules)
        self.memories += other.memories
        self.primes += other.primes
        self.questions += other.questions


def headers(who: dict[str, str]) -> dict[str, str]:
    """X-Ctx-* identity headers of a probe (the proxy trusts them in open mode)."""
    return {"X-Ctx-" + "-".join(p.title() for p in k.split("_")): v for k, v in who.items() if v}


def request_body(api: str, text: str) -> dict:
    if api == "anthropic":
        return {"model": MODELS[api], "max_tokens": 64, "messages": [{"role": "user", "content": text}]}
    if api == "chat":
        return {"model": MODELS[api], "messages": [{"role": "user", "content": text}]}
    return {"model": MODELS[api], "input": [{"type": "message", "role": "user",
                                             "content": [{"type": "input_text", "text": text}]}]}
