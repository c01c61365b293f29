"""A scripted tool-heavy agent session, and how to measure what the provider
received: whether each turn kept the previous turn's cached prefix, and what
happened to every tool result. Used by the prune tests and ``bench/bench_prune.py``.

    outputs = tool_outputs(50, seed=7)
    sent = await run_session("anthropic", proxy, fake, outputs)    # official SDK, through the proxy
    bodies = [r.json for r in fake.model_requests]
    share, breaks = prefix_share("anthropic", bodies)

What a turn's cached prefix is, and when it is kept: ``ctxproxy.proxy.eval.prefix``.
"""
from __future__ import annotations

import copy
import random
from typing import Any

import orjson

from ctxproxy.proxy.eval.prefix import prefix_kept  # noqa: F401  (re-exported to the prune tests)

SYSTEM = "You are a coding agent. Use the tools to inspect the repository, then answer."
TASK = "Find why the config loader ignores CTX_TIMEOUT and fix it."
TOOLS = ("read_file", "grep", "run_tests", "list_dir")
ANTHROPIC_MODEL = "claude-opus-4-8"
OPENAI_MODEL = "gpt-5"


# -- the workload ----------------------------------------------------------------------

def prune_toml(trigger_tokens: int, keep_recent: int = 3, chain: bool = True) -> str:
    """An eager prune: past ``trigger_tokens``, down to half, the newest
    ``keep_recent`` results kept, results under 100 tokens never; ``chain``:
    a pipeline of identify and prune only (else the default one)."""
    return ('[pipeline]\nrequest = ["identify", "prune"]\n' if chain else "") + (
        f"[filters.prune]\ntrigger_tokens = {trigger_tokens}\ntarget_ratio = 0.5\nkeep_recent = {keep_recent}\n"
        "min_tokens = 100\n")


def tool_outputs(n: int, seed: int = 7, scale: float = 1.0) -> list[tuple[str, dict, str]]:
    """``n`` (tool, arguments, output) triples: file reads, grep hits, test logs
    and listings of varied sizes (a few hundred to ~10k characters)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        tool = TOOLS[rng.randrange(len(TOOLS))]
        size = int(rng.choice((400, 900, 1500, 2500, 4000, 6000, 9000)) * scale)
        if tool == "read_file":
            args = {"path": f"src/app/module_{i}.py"}
            lines = (f"{k:4d}  def handler_{i}_{k}(request, ctx):  # config entry {k}" if k % 3 == 0 else
                     f"{k:4d}      return ctx.config.get('section_{k}', {{}}).get('value', {k * i})"
                     for k in range(1, 10_000))
        elif tool == "grep":
            args = {"pattern": f"CTX_{i}", "path": "src"}
            lines = (f"src/app/module_{rng.randrange(200)}.py:{rng.randrange(1, 900)}:    timeout = "
                     f"env.get('CTX_TIMEOUT_{k}', {rng.randrange(100)})" for k in range(10_000))
        elif tool == "run_tests":
            args = {"target": f"tests/test_{i}.py"}
            lines = (f"tests/test_{i}.py::test_case_{k} {'PASSED' if rng.random() > 0.1 else 'FAILED'}"
                     f" [{k % 100:3d}%]" for k in range(10_000))
        else:
            args = {"path": f"src/pkg_{i}"}
            lines = (f"-rw-r--r--  1 dev dev {rng.randrange(100, 99999):6d} Mar {k % 28 + 1:2d} "
                     f"file_{i}_{k}.py" for k in range(10_000))
        text, total = [], 0
        for line in lines:
            if total + len(line) + 1 > size:
                break
            text.append(line)
            total += len(line) + 1
        out.append((tool, args, "\n".join(text)))
    return out


def call_id(api: str, i: int) -> str:
    return f"toolu_{i:04d}" if api == "anthropic" else f"call_{i:04d}"


def script(api: str, outputs: list[tuple[str, dict, str]]) -> list:
    """Fake-provider replies: one tool call per turn, then a final answer."""
    from ctxproxy.proxy.scripted_provider import Reply

    return [Reply.tool_call(tool, args, call_id(api, i)) for i, (tool, args, _) in enumerate(outputs)] + \
        [Reply.text("Fixed: load() now prefers CTX_TIMEOUT.")]


# -- the agent loop through the official SDKs --------------------------------------------

def _tool_defs(api: str) -> list[dict]:
    schema = {"type": "object", "properties": {"path": {"type": "string"}, "pattern": {"type": "string"},
                                               "target": {"type": "string"}}}
    if api == "anthropic":
        return [{"name": t, "description": f"{t} tool", "input_schema": schema} for t in TOOLS]
    if api == "chat":
        return [{"type": "function", "function": {"name": t, "description": f"{t} tool", "parameters": schema}}
                for t in TOOLS]
    return [{"type": "function", "name": t, "description": f"{t} tool", "parameters": schema} for t in TOOLS]


def _with_breakpoint(messages: list[dict]) -> list[dict]:
    """Claude Code style: a breakpoint on the last block of the last message."""
    msgs = copy.deepcopy(messages)
    last = msgs[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return msgs


async def _one_call(endpoint: Any, final: str, stream_every: int, turn: int, **kw: Any) -> Any:
    """``endpoint.create(**kw)``, or every ``stream_every``-th turn its ``stream``
    read to the end (``final``: the stream's method for the whole answer)."""
    if stream_every and turn % stream_every == 1:
        async with endpoint.stream(**kw) as s:
            return await getattr(s, final)()
    return await endpoint.create(**kw)


async def run_session(api: str, client: Any, outputs: list[tuple[str, dict, str]], *,
                      stream_every: int = 2, headers: dict | None = None) -> list[Any]:
    """Drive one session of ``len(outputs) + 1`` turns: the model calls a tool,
    the agent answers with the scripted output, until the final text. Every
    ``stream_every``-th turn is streamed. Returns what the agent sent each turn
    (messages / input lists)."""
    extra = {"extra_headers": headers} if headers else {}
    tools = _tool_defs(api)
    sent: list[Any] = []
    if api == "anthropic":
        system = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
        history: list[dict] = [{"role": "user", "content": TASK}]
        for turn in range(len(outputs) + 1):
            msgs = _with_breakpoint(history)
            sent.append(msgs)
            kw = dict(model=ANTHROPIC_MODEL, max_tokens=512, system=system, tools=tools, messages=msgs, **extra)
            msg = await _one_call(client.messages, "get_final_message", stream_every, turn, **kw)
            uses = [b for b in msg.content if b.type == "tool_use"]
            if not uses:
                break
            history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
            history.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u.id, "content": outputs[turn][2]} for u in uses]})
    elif api == "chat":
        history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
        for turn in range(len(outputs) + 1):
            msgs = copy.deepcopy(history)
            sent.append(msgs)
            kw = dict(model=OPENAI_MODEL, tools=tools, messages=msgs, **extra)
            done = await _one_call(client.chat.completions, "get_final_completion", stream_every, turn, **kw)
            m = done.choices[0].message
            if not m.tool_calls:
                break
            history.append({"role": "assistant", "content": m.content,
                            "tool_calls": [{"id": c.id, "type": "function",
                                            "function": {"name": c.function.name,
                                                         "arguments": c.function.arguments}}
                                           for c in m.tool_calls]})
            history += [{"role": "tool", "tool_call_id": c.id, "content": outputs[turn][2]} for c in m.tool_calls]
    else:
        history = [{"role": "user", "content": TASK}]
        for turn in range(len(outputs) + 1):
            items = copy.deepcopy(history)
            sent.append(items)
            kw = dict(model=OPENAI_MODEL, instructions=SYSTEM, tools=tools, input=items, **extra)
            resp = await _one_call(client.responses, "get_final_response", stream_every, turn, **kw)
            calls = [o for o in resp.output if o.type == "function_call"]
            if not calls:
                break
            history += [o.model_dump(exclude_none=True) for o in resp.output]
            history += [{"type": "function_call_output", "call_id": c.call_id, "output": outputs[turn][2]}
                        for c in calls]
    return sent


# -- measuring what the provider received -------------------------------------------------

def prefix_share(api: str, bodies: list[dict]) -> tuple[float, list[int]]:
    """Share of turns (after the first) that kept the previous turn's cached
    prefix, and the turns that did not."""
    breaks = [k for k in range(1, len(bodies)) if not prefix_kept(api, bodies[k - 1], bodies[k])]
    n = len(bodies) - 1
    return (1.0 - len(breaks) / n if n > 0 else 1.0), breaks


def results_of(api: str, body: dict) -> dict[str, str]:
    """call id -> tool result text, in order."""
    out: dict[str, str] = {}
    if api == "anthropic":
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else ():
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = _text(b.get("content"))
    elif api == "chat":
        for m in body.get("messages") or []:
            if m.get("role") == "tool":
                out[m["tool_call_id"]] = _text(m.get("content"))
    else:
        for it in body.get("input") or []:
            if isinstance(it, dict) and it.get("type") == "function_call_output":
                out[it["call_id"]] = _text(it.get("output"))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def without_results(api: str, items: list) -> list:
    """The conversation with every tool result's content blanked: what must be
    identical between what the agent sent and what the provider received."""
    items = copy.deepcopy(items)
    for m in items:
        if not isinstance(m, dict):
            continue
        if api == "anthropic" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    b["content"] = None
        elif api == "chat" and m.get("role") == "tool":
            m["content"] = None
        elif api == "responses" and m.get("type") == "function_call_output":
            m["output"] = None
    return items


def input_tokens(api: str, body: dict, count) -> int:
    """Model-visible tokens of a request (every string value but ids and markers)."""
    total = 0
    skip = {"type", "id", "role", "tool_use_id", "tool_call_id", "call_id", "cache_control", "status", "model",
            "max_tokens", "stream"}

    def walk(v: Any) -> None:
        nonlocal total
        if isinstance(v, str):
            total += count(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k not in skip:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for key in ("system", "instructions", "messages", "input"):
        walk(body.get(key))
    if body.get("tools"):
        total += count(orjson.dumps(body["tools"]).decode())
    return total


def canned(api: str, outputs: list[tuple[str, dict, str]], n: int | None = None, *,
           breakpoint: bool = True) -> dict:
    """The request body an agent sends after ``n`` tool round trips (no SDK)."""
    n = len(outputs) if n is None else n
    tools = _tool_defs(api)
    if api == "anthropic":
        msgs: list[dict] = [{"role": "user", "content": TASK}]
        for i, (tool, args, out) in enumerate(outputs[:n]):
            msgs.append({"role": "assistant", "content": [
                {"type": "text", "text": f"Calling {tool}."},
                {"type": "tool_use", "id": call_id(api, i), "name": tool, "input": args}]})
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id(api, i), "content": out}]})
        return {"model": ANTHROPIC_MODEL, "max_tokens": 512, "tools": tools,
                "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
                "messages": _with_breakpoint(msgs) if breakpoint else msgs}
    if api == "chat":
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
        for i, (tool, args, out) in enumerate(outputs[:n]):
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id(api, i), "type": "function",
                 "function": {"name": tool, "arguments": orjson.dumps(args).decode()}}]})
            msgs.append({"role": "tool", "tool_call_id": call_id(api, i), "content": out})
        return {"model": OPENAI_MODEL, "tools": tools, "messages": msgs}
    items: list[dict] = [{"role": "user", "content": TASK}]
    for i, (tool, args, out) in enumerate(outputs[:n]):
        items.append({"type": "function_call", "id": f"fc_{i:04d}", "call_id": call_id(api, i), "name": tool,
                      "arguments": orjson.dumps(args).decode(), "status": "completed"})
        items.append({"type": "function_call_output", "call_id": call_id(api, i), "output": out})
    return {"model": OPENAI_MODEL, "instructions": SYSTEM, "tools": tools, "input": items}
