"""Agent sessions with corrections, failures and fixes, driven through a proxy
with the official SDKs and the scripted provider; what the learning tests and
``bench/bench_learn.py`` feed the learning job.

    steps = [Say("Fix the config test. Never push to main directly.", Call("Bash", {"command": "pytest -q"})),
             Result("1 failed in 0.1s", error=True, then=Call("Edit", {"file_path": "src/config.py"})),
             Result("ok", then=Call("Bash", {"command": "pytest -q"})),
             Result("3 passed in 0.12s", then="Fixed.")]
    await run_agent(proxy, fake, "claude-code", steps, session="s1", user="alice", project="shop")

Each step is one model call: the user says something (``Say``) or the
agent sends the previous call's result (``Result``); the scripted model
answers with a tool call (``Call``) or a text. ``agent`` picks the SDK and
the headers an agent of that kind sends (``claude-code`` and ``openclaw``:
Anthropic Messages; ``codex`` and ``hermes``: OpenAI Chat Completions).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

from ctxproxy.proxy.scripted_provider import Reply


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict


Then = Union[Call, str]


@dataclass(frozen=True)
class Say:
    text: str
    then: Then = "OK."


@dataclass(frozen=True)
class Result:
    output: str
    then: Then = "Done."
    error: bool = False


AGENT_HEADERS = {
    "claude-code": {"user-agent": "claude-cli/2.0.1 (external, cli)"},
    "openclaw": {"user-agent": "openclaw/1.4"},
    "codex": {"user-agent": "codex_cli_rs/0.50.0", "originator": "codex_cli_rs"},
    "hermes": {"user-agent": "hermes-agent/0.9"},
}
ANTHROPIC_AGENTS = ("claude-code", "openclaw")


def _reply(then: Then, n: int) -> Reply:
    if isinstance(then, Call):
        return Reply.tool_call(then.tool, then.args, f"call_{n:03d}")
    return Reply.text(then)


async def run_agent(proxy: Any, fake: Any, agent: str, steps: list, *, session: str, user: str = "",
                    project: str = "", tenant: str = "") -> None:
    headers = {**AGENT_HEADERS[agent], "x-ctx-session": session}
    for name, value in (("x-ctx-user", user), ("x-ctx-project", project), ("x-ctx-tenant", tenant)):
        if value:
            headers[name] = value
    fake.script(*(_reply(s.then, i) for i, s in enumerate(steps)))
    if agent in ANTHROPIC_AGENTS:
        await _anthropic(proxy.anthropic(default_headers=headers), steps)
    else:
        await _chat(proxy.openai(default_headers=headers), steps)


async def _anthropic(client: Any, steps: list) -> None:
    history: list[dict] = []
    last_call = None
    for step in steps:
        if isinstance(step, Say):
            history.append({"role": "user", "content": step.text})
        else:
            history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": last_call,
                                                         "content": step.output, "is_error": step.error}]})
        msg = await client.messages.create(model="claude-test-1", max_tokens=256, messages=history,
                                           tools=_anthropic_tools(steps))
        history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
        uses = [b for b in msg.content if b.type == "tool_use"]
        last_call = uses[-1].id if uses else None
    await client.close()


async def _chat(client: Any, steps: list) -> None:
    history: list[dict] = [{"role": "system", "content": "You are a coding agent."}]
    last_call = None
    for step in steps:
        if isinstance(step, Say):
            history.append({"role": "user", "content": step.text})
        else:
            output = step.output if not step.error else f"{step.output}\nexit code 1"
            history.append({"role": "tool", "tool_call_id": last_call, "content": output})
        done = await client.chat.completions.create(model="gpt-5", messages=history, tools=_chat_tools(steps))
        m = done.choices[0].message
        entry: dict[str, Any] = {"role": "assistant", "content": m.content}
        if m.tool_calls:
            entry["tool_calls"] = [{"id": c.id, "type": "function",
                                    "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                   for c in m.tool_calls]
            last_call = m.tool_calls[-1].id
        history.append(entry)
    await client.close()


def _tools(steps: list) -> list[str]:
    return sorted({s.then.tool for s in steps if isinstance(s.then, Call)}) or ["Bash"]


def _anthropic_tools(steps: list) -> list[dict]:
    return [{"name": t, "description": t, "input_schema": {"type": "object"}} for t in _tools(steps)]


def _chat_tools(steps: list) -> list[dict]:
    return [{"type": "function", "function": {"name": t, "description": t, "parameters": {"type": "object"}}}
            for t in _tools(steps)]


def fix_session(cmd: str = "pytest -q tests/test_config.py", *, opening: str, correction: str = "") -> list:
    """A session that fails a test, edits, passes, then (after the user's say-so) opens a PR."""
    steps: list = [
        Say(opening, Call("Bash", {"command": cmd})),
        Result("FAILED tests/test_config.py::test_timeout - AssertionError\n1 failed in 0.31s", error=True,
               then=Call("Edit", {"file_path": "src/config.py", "old_string": "30", "new_string": "60"})),
        Result("The file src/config.py has been updated.", then=Call("Bash", {"command": cmd})),
        Result("3 passed in 0.12s", then="Fixed: the timeout default is read from CTX_TIMEOUT. Shall I open a PR?"),
    ]
    if correction:
        steps.append(Say(correction, Call("Bash", {"command": "git push -u origin fix-timeout"})))
    else:
        steps.append(Say("yes", Call("Bash", {"command": "git push -u origin fix-timeout"})))
    steps += [
        Result("branch 'fix-timeout' set up to track 'origin/fix-timeout'.",
               then=Call("Bash", {"command": "gh pr create --fill"})),
        Result("https://github.com/acme/shop/pull/42", then="PR opened: https://github.com/acme/shop/pull/42"),
    ]
    return steps


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=1, default=str)
