"""The team's own cases: a JSONL file, one object per line, ``type`` first (docs/eval.md).

    {"type": "rule", "path": "AGENTS.md", "text": "- Amounts are integer cents\\n"}
    {"type": "memory", "statement": "The cache uses Redis 7.", "tenant": "acme", "project": "shop",
     "kind": "fact", "evidence_ref": "commit:4f2a9c1", "reusable": true, "stale": false}
    {"type": "turn", "text": "Remember: the codename is Falcon.", "tenant": "acme", "user": "ana", "session": "s1"}
    {"type": "question", "text": "Which Redis does the cache use?", "tenant": "acme", "user": "ana",
     "project": "shop", "expect": ["Redis 7"], "forbid": ["Redis 6"], "ranked": true}
    {"type": "session", "name": "refund-fix", "api": "anthropic", "headers": {"X-Ctx-Session": "r1"},
     "requests": [{...request body...}, ...], "expect": ["PR #4821"], "forbid": ["sk-live-"]}

Rules, memories, turns and questions form the ``cases`` probe set (the facts and
isolation metrics); recorded sessions are replayed request by request, with and
without the proxy.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spec import APIS, WHO, Memory, Prime, ProbeSet, Question


class CaseError(ValueError):
    """A line of the cases file that is not a case (message names the line)."""


@dataclass
class Session:
    name: str
    api: str
    requests: list[dict]
    headers: dict[str, str] = field(default_factory=dict)
    expect: list[str] = field(default_factory=list)
    forbid: list[str] = field(default_factory=list)


@dataclass
class Cases:
    probes: ProbeSet
    sessions: list[Session]


_MEMORY_META = {"type", "statement", "tenant", "reusable", "stale"}
_ALLOWED = {
    "rule": {"type", "path", "text"},
    "turn": {"type", "text", "api", *WHO},
    "question": {"type", "text", "api", "expect", "forbid", "ranked", "variant", *WHO},
    "session": {"type", "name", "api", "headers", "requests", "expect", "forbid"},
}


def load(path: str | Path) -> Cases:
    ps, sessions = ProbeSet("cases"), []
    try:
        lines = Path(path).read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"{path}: cannot read ({exc})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise CaseError(f"{where}: not JSON ({exc})") from None
        if not isinstance(obj, dict) or obj.get("type") not in (*_ALLOWED, "memory"):
            raise CaseError(f"{where}: expected an object with type rule|memory|turn|question|session")
        kind = obj["type"]
        if kind != "memory":
            extra = sorted(set(obj) - _ALLOWED[kind])
            if extra:
                raise CaseError(f"{where}: unknown field {extra[0]!r} for a {kind}")
        _need(obj, where, "statement" if kind == "memory" else "requests" if kind == "session" else "text")
        api = obj.get("api", "anthropic")
        if api not in APIS:
            raise CaseError(f"{where}: api must be one of {', '.join(APIS)}")
        who = {k: str(obj[k]) for k in WHO if obj.get(k)}
        who.setdefault("tenant", "default")
        who.setdefault("user", "eval")
        if kind == "rule":
            rel = str(obj.get("path") or "AGENTS.md")
            if rel.startswith("/") or ".." in Path(rel).parts:
                raise CaseError(f"{where}: a rule path is relative, inside the project")
            ps.rules[rel] = str(obj["text"])
        elif kind == "memory":
            fields = {k: v for k, v in obj.items() if k not in _MEMORY_META}
            ps.memories.append(Memory(str(obj["statement"]), str(obj.get("tenant") or "default"), fields,
                                      bool(obj.get("reusable", True)), bool(obj.get("stale", False))))
        elif kind == "turn":
            who.setdefault("session", f"case-turn-{n}")
            ps.primes.append(Prime(str(obj["text"]), who, api))
        elif kind == "question":
            who.setdefault("session", f"case-q-{n}")
            ps.questions.append(Question(str(obj["text"]), who, api, _strings(obj, "expect", where),
                                         _strings(obj, "forbid", where), bool(obj.get("ranked", False)),
                                         str(obj.get("variant") or "")))
        else:
            reqs = obj["requests"]
            if not isinstance(reqs, list) or not reqs or not all(isinstance(r, dict) for r in reqs):
                raise CaseError(f"{where}: requests must be a non-empty list of request bodies")
            hdrs = obj.get("headers") or {}
            if not isinstance(hdrs, dict):
                raise CaseError(f"{where}: headers must be an object")
            sessions.append(Session(str(obj.get("name") or f"session-{n}"), api, reqs,
                                    {str(k): str(v) for k, v in hdrs.items()},
                                    _strings(obj, "expect", where), _strings(obj, "forbid", where)))
    return Cases(ps, sessions)


def _need(obj: dict, where: str, key: str) -> None:
    if obj.get(key) in (None, "", []):
        raise CaseError(f"{where}: {key!r} is required")


def _strings(obj: dict, key: str, where: str) -> list[str]:
    v = obj.get(key) or []
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(s, str) and s for s in v):
        raise CaseError(f"{where}: {key} must be a string or a list of non-empty strings")
    return list(v)


async def replay(t: Any, sessions: list[Session], step: Any) -> dict:
    """Send each recorded session's requests in order; what the provider received."""
    from . import received
    from .agents import cache_kept
    from .spec import PATHS

    raw = {"visible": [], "leaks": 0, "kept": [], "input_tokens": 0, "injected_tokens": 0}
    for s in sessions:
        start = len(t.fake.model_requests)
        hdrs = dict(s.headers)
        if t.keys_mode:  # the session's tenant and user hints become that principal's proxy key
            lower = {k.lower(): v for k, v in hdrs.items()}
            hdrs = {k: v for k, v in hdrs.items() if k.lower() not in ("x-ctx-tenant", "x-ctx-user")}
            hdrs.update(await t.identity_headers({"tenant": lower.get("x-ctx-tenant", "default"),
                                                  "user": lower.get("x-ctx-user", "eval")}))
        for body in s.requests:
            status, answer = await t.post(PATHS[s.api], body, hdrs)
            if status != 200:
                raise CaseError(f"session {s.name}: {status} {str(answer)[:200]}")
        recs = t.fake.model_requests[start:]
        texts = [received.body_text(r) for r in recs]
        if s.expect:
            raw["visible"].append(sum(e in texts[-1] for e in s.expect) / len(s.expect))
        raw["leaks"] += sum(any(f in x for f in s.forbid) for x in texts)
        raw["kept"] += [cache_kept(s.api, a.json, b.json) for a, b in zip(recs, recs[1:])]
        raw["input_tokens"] += sum(received.body_tokens(r.json) for r in recs)
        raw["injected_tokens"] += sum(received.injected_tokens(x) for x in texts)
        step()
    raw["requests"] = sum(len(s.requests) for s in sessions)
    return raw
