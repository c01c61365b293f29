"""What the provider's prompt cache keeps between two requests, judged from the request bodies.

Shared by the eval command (``ctxproxy eval``), the tests and the benchmarks.
The cached prefix of a turn:

- Anthropic: tools, system and messages up to and including the block that
  carries the last ``cache_control`` breakpoint (breakpoints themselves are not
  part of the prompt and move every turn, so they are stripped before comparing);
- OpenAI Chat / Responses (automatic prefix caching): the previous turn's whole
  ``messages`` / ``input`` (plus instructions and tools).

A turn *kept* the prefix when that part of the previous request is identical,
compared as canonical JSON (the provider caches tokens, not JSON whitespace).
"""
from __future__ import annotations

from typing import Any

import orjson


def canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _strip_cc(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cc(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cc(v) for v in value]
    return value


def last_breakpoint(body: dict) -> tuple[str, int, int] | None:
    """Where the last cache_control is: ("messages", i, j), ("system", j, -1) or ("tools", j, -1)."""
    found = None
    for j, t in enumerate(body.get("tools") or []):
        if isinstance(t, dict) and "cache_control" in t:
            found = ("tools", j, -1)
    system = body.get("system")
    for j, b in enumerate(system if isinstance(system, list) else []):
        if isinstance(b, dict) and "cache_control" in b:
            found = ("system", j, -1)
    for i, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        for j, b in enumerate(content if isinstance(content, list) else []):
            if isinstance(b, dict) and "cache_control" in b:
                found = ("messages", i, j)
    return found


def anthropic_prefix(body: dict, where: tuple[str, int, int]) -> bytes | None:
    """Canonical bytes of everything up to and including the breakpoint block."""
    kind, i, j = where
    tools = body.get("tools") or []
    system = body.get("system")
    system = system if isinstance(system, list) else ([{"type": "text", "text": system}] if system else [])
    msgs = body.get("messages") or []
    try:
        if kind == "tools":
            part = [tools[:i + 1]]
        elif kind == "system":
            part = [tools, system[:i + 1]]
        else:
            last = msgs[i]
            content = last["content"]
            content = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if j >= len(content):
                return None
            part = [tools, system, msgs[:i], {"role": last["role"], "content": content[:j + 1]}]
    except (IndexError, KeyError, TypeError):
        return None
    return canon(_strip_cc(part))


def prefix_kept(api: str, prev: dict, cur: dict) -> bool:
    """Did ``cur`` reuse the prefix ``prev`` left in the provider's cache?"""
    if api == "anthropic":
        where = last_breakpoint(prev)
        if where is None:
            return False
        a = anthropic_prefix(prev, where)
        return a is not None and a == anthropic_prefix(cur, where)
    key = "messages" if api == "chat" else "input"
    head = ("tools", "instructions")
    if any(canon(prev.get(k)) != canon(cur.get(k)) for k in head):
        return False
    p, c = prev.get(key) or [], cur.get(key) or []
    if len(c) < len(p):
        return False
    return all(canon(a) == canon(b) for a, b in zip(p, c))
