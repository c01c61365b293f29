"""Scripted agent sessions that compact in their agent's own style, and what the model saw after.

Used by ``ctxproxy eval --set compaction``, tests/proxy/eval/test_fidelity.py and
bench/bench_compaction.py. Each agent class
speaks the request shape recorded from the real client
(``shared/fixtures/real-clients``): Claude Code (Messages, rule files in the
first user message's system reminder, an on-demand nested CLAUDE.md after a
read there, ``/compact``), Codex (Responses, the AGENTS.md block, local
compaction marked in ``x-codex-turn-metadata`` or remote compaction v2),
OpenClaw and Hermes (Chat Completions, ``# Project Context`` in the system
prompt, their summary messages). The session gives instructions, takes
decisions, runs tests, commits, opens a PR, deploys to staging, files a
follow-up ticket in the agent's own way (Claude Code: a Linear MCP tool;
Codex: ``gh issue create``; OpenClaw: the Jira CLI; Hermes: Jira's REST API
through curl) and ends asking for an approval; then the client compacts
with a summary that keeps none of it, and the session goes on.

The "model" after the compaction is a function of what it is sent: if the
PR or the ticket it created is not visible, it creates it again (a
duplicate side effect).

    from ctxproxy.proxy.eval.agents import AGENTS, run
    agent = AGENTS["claude-code"]()
    result = await run(agent, proxy_url, fake, filler=8, after=5)
    result.visible   # {item: seen in the first request after the compaction}
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from .prefix import canon, prefix_kept

GOAL = "Fix the refund rounding bug in services/refund and ship it. Don't change the public API."
INSTRUCTIONS = ("Never edit files under vendor/.", "Actually, keep amounts as integer cents in the database.",
                "Always run pytest -k refund before committing.")
DECISIONS = ("yes, use exponential backoff with a 30 second cap",
             "go with option 2: keep the old endpoint as an alias")
PR_URL = "https://github.com/acme/shop/pull/4821"
EVIDENCE = ("12 passed in 0.41s", "3f2a9c1", PR_URL, "Deployed refund-service v1.4.2 to staging")
EFFECTS = ("gh pr create --fill", "./deploy.sh staging")
PENDING = "May I deploy v1.4.2 to production?"
TICKET_ASK = "File a ticket for the follow-up: audit services/reports for float amounts."
TICKET_TITLE = "Audit services/reports for float amounts"
SUMMARY = "Summary: we worked on the refund service; continue with the task."
RULE_ROOT = "- Prefer small diffs; explain each change in one sentence\n"
RULE_NESTED = "- Amounts are integer cents, never floats\n"
# ctxproxy with the checkpoint, the effect ledger's checkpoint and rule re-injection switched off
OFF = """
[filters.checkpoint]
enabled = false
[filters.effects]
checkpoint = false
[filters.inject]
reinject_observed_rules = "never"
"""
MODEL = {"anthropic": "claude-test-1", "chat": "gpt-test", "responses": "gpt-test"}
CALL_ID_PREFIX = {"anthropic": "toolu_01", "chat": "call_", "responses": "call_"}


@dataclass
class Action:
    kind: str  # "tool" (shell command), "read" (file), "ticket" (the agent's own way to file one), "text"
    arg: str
    result: str = ""


@dataclass
class UserTurn:
    text: str
    actions: list[Action]


def script(filler: int, busy: bool = False, read_lines: int = 29) -> list[UserTurn]:
    """The session before its compaction: the items to keep, ``filler`` ordinary turns, the open question.
    ``busy``: every ordinary turn also gives an instruction and passes a test run (the task state
    grows past what the checkpoint's budget holds). ``read_lines``: the length of each file read (long
    tool outputs make the proxy prune)."""
    turns = [
        UserTurn(GOAL, [Action("read", "services/refund/refund.py", "1\tdef refund(order_id, amount):\n"
                                                                     "2\t    return round(amount * 100) / 100\n"),
                        Action("text", "The float division loses cents. Should I use exponential backoff for "
                                       "the retries?")]),
        UserTurn(DECISIONS[0], [Action("tool", "sed -i 's/retry(3)/backoff(cap=30)/' services/refund/client.py", ""),
                                Action("text", "Done. Option 1 renames the endpoint; option 2 keeps the old endpoint "
                                               "as an alias. Which one?")]),
        UserTurn(DECISIONS[1], [Action("text", "Keeping the alias.")]),
        UserTurn(INSTRUCTIONS[0], [Action("text", "Understood.")]),
        UserTurn(INSTRUCTIONS[1], [Action("text", "Understood, the schema stays in cents.")]),
        UserTurn(INSTRUCTIONS[2] + " Then commit and open a PR.", [
            Action("tool", "pytest -k refund", "..........\n============ 12 passed in 0.41s ============\n"),
            Action("tool", "git commit -am 'Fix refund rounding'",
                   "[fix/refund 3f2a9c1] Fix refund rounding\n 2 files changed, 14 insertions(+)\n"),
            Action("tool", "gh pr create --fill", f"Creating pull request for fix/refund\n{PR_URL}\n"),
            Action("text", "Tests pass, committed and the PR is open.")]),
        UserTurn("Deploy it to staging.", [
            Action("tool", "./deploy.sh staging", "Deployed refund-service v1.4.2 to staging (build 88)\n"),
            Action("text", "Staging is updated.")]),
        UserTurn(TICKET_ASK, [Action("ticket", TICKET_TITLE), Action("text", "Filed the follow-up ticket.")]),
    ]
    for i in range(filler):
        path = f"services/refund/module_{i}.py"
        actions = [Action("read", path, "".join(f"{k}\tdef f_{i}_{k}(cents: int) -> int:\n{k}\t    return cents\n"
                                                for k in range(1, read_lines + 1)))]
        text = f"Check {path} for other float uses."
        if busy:
            text += f" Please keep module_{i} free of floats."
            actions.append(Action("tool", f"pytest -k module_{i}", f"== {i % 7 + 1} passed in 0.{i:03d}s ==\n"))
        turns.append(UserTurn(text, actions + [Action("text", f"module_{i} only uses integer cents.")]))
    turns.append(UserTurn("What is left?", [Action("text", f"Staging looks good. {PENDING}")]))
    return turns


def expected(agent: "Agent") -> dict[str, str]:
    """What must be visible to the model after the compaction: name -> a string it must contain."""
    out = {"goal": "Fix the refund rounding bug in services/refund"}
    out.update({f"instruction {i + 1}": t for i, t in enumerate(INSTRUCTIONS)})
    out.update({f"decision {i + 1}": t for i, t in enumerate(DECISIONS)})
    out.update({f"evidence {i + 1}": t for i, t in enumerate(EVIDENCE)})
    out.update({f"effect {i + 1}": t for i, t in enumerate(EFFECTS)})
    out["ticket"] = agent.ticket_ref
    out["pending approval"] = PENDING
    out.update({f"rule {i + 1}": r.strip("- \n") for i, r in enumerate(agent.rules)})
    return out


# -- the agents ------------------------------------------------------------------------------

class Agent:
    name = ""
    api = ""
    path = ""
    rules: tuple[str, ...] = (RULE_ROOT,)
    # the follow-up ticket: the tool call that files it, what the tracker answers, and the
    # reference the model must still see after the compaction (or it files the ticket again)
    ticket_result = ""
    ticket_ref = ""

    def __init__(self, session: str = "sess-fidelity"):
        self.session = session
        self.items: list = []
        self.n = 0

    def headers(self) -> dict[str, str]:
        return {"content-type": "application/json"}

    def body(self) -> dict:
        raise NotImplementedError

    def user(self, text: str) -> None:
        raise NotImplementedError

    def reply(self, resp: dict) -> tuple[list[tuple[str, str, dict]], str]:
        """(tool calls [(id, name, args)], text) of a JSON answer, added to the history."""
        raise NotImplementedError

    def result(self, call_id: str, text: str) -> None:
        raise NotImplementedError

    def after_read(self, path: str) -> None:
        """What the agent adds after a read (Claude Code: the rules of that directory)."""

    def compaction_request(self) -> tuple[dict, dict]:
        """(body, extra headers) of the summarization request."""
        raise NotImplementedError

    def compact(self, summary: str) -> None:
        raise NotImplementedError

    def call(self, action: Action) -> tuple[str, dict]:
        """The tool name and arguments the model uses for ``action``."""
        raise NotImplementedError

    def ticket_call(self, title: str) -> tuple[str, dict]:
        """The tool name and arguments this agent files a ticket with."""
        raise NotImplementedError


def _shell(cmd: str) -> dict:
    return {"command": cmd}


class ClaudeCode(Agent):
    name, api, path = "claude-code", "anthropic", "/v1/messages?beta=true"
    rules = (RULE_ROOT, RULE_NESTED)
    TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}}
             for n in ("Bash", "Read", "Edit", "mcp__linear__create_issue")]
    ticket_ref = "PAY-412"
    ticket_result = json.dumps({"id": "8f1e2c3a-5b7d-4e21-9c0a-2d4f6b8e1a3c", "identifier": "PAY-412",
                                "title": TICKET_TITLE, "url": "https://linear.app/acme/issue/PAY-412/"
                                                              "audit-servicesreports-for-float-amounts"})

    def __init__(self, session: str = "7c8cf4a5-f16b-4b54-a3d9-b7f1aed3a28d"):
        super().__init__(session)
        self.reminder = ("<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
                         "# claudeMd\nCodebase and user instructions are shown below.\n\n"
                         "Contents of /repo/CLAUDE.md (project instructions, checked into the codebase):\n\n"
                         f"# Refund service\n{RULE_ROOT}\n# currentDate\nToday's date is 2026-12-01.\n"
                         "</system-reminder>\n\n")
        self.first = True
        self.process = 1  # `claude -p /compact --continue` is a new process: its system text differs

    def headers(self) -> dict[str, str]:
        return {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test",
                "x-claude-code-session-id": self.session, "user-agent": "claude-cli/2.1.197 (external, cli)"}

    def body(self, messages: list | None = None) -> dict:
        msgs = copy.deepcopy(self.items if messages is None else messages)
        for m in msgs:  # Claude Code moves its breakpoint to the newest user block
            for b in m["content"] if isinstance(m["content"], list) else ():
                b.pop("cache_control", None)
        last = next(m for m in reversed(msgs) if m["role"] == "user" and isinstance(m["content"], list))
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
        return {"model": MODEL["anthropic"], "max_tokens": 512, "stream": False, "tools": self.TOOLS,
                "system": [{"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1.197.{self.process}"},
                           {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
                           {"type": "text", "text": "# Environment\n - Primary working directory: /repo"
                                                    + "\n - Resumed: yes" * (self.process > 1),
                            "cache_control": {"type": "ephemeral"}}],
                "messages": msgs}

    def user(self, text: str) -> None:
        blocks = [{"type": "text", "text": text}]
        if self.first:
            blocks.insert(0, {"type": "text", "text": self.reminder})
            self.first = False
        self.items.append({"role": "user", "content": blocks})

    def reply(self, resp: dict) -> tuple[list, str]:
        content = resp.get("content") or []
        self.items.append({"role": "assistant", "content": content})
        calls = [(b["id"], b["name"], b.get("input") or {}) for b in content if b.get("type") == "tool_use"]
        return calls, "".join(b.get("text", "") for b in content if b.get("type") == "text")

    def result(self, call_id: str, text: str) -> None:
        self.items.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                        "content": text}]})

    def after_read(self, path: str) -> None:
        if path.startswith("services/refund/") and not any(m["role"] == "system" for m in self.items):
            self.items.append({"role": "system", "content": "Contents of /repo/services/refund/CLAUDE.md:\n\n"
                                                            f"# services/refund\n{RULE_NESTED}"})

    def call(self, action: Action) -> tuple[str, dict]:
        if action.kind == "ticket":
            return self.ticket_call(action.arg)
        return ("Read", {"file_path": f"/repo/{action.arg}"}) if action.kind == "read" else \
            ("Bash", _shell(action.arg))

    def ticket_call(self, title: str) -> tuple[str, dict]:  # the Linear MCP server's tool
        return "mcp__linear__create_issue", {"teamId": "PAY", "title": title}

    def compaction_request(self) -> tuple[dict, dict]:
        self.process += 1
        msgs = copy.deepcopy(self.items)
        newest = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
        self.newest = msgs.pop(newest)  # the newest assistant text is left out of the request
        last = next(m for m in reversed(msgs) if m["role"] == "user")
        last["content"].append({"type": "text", "text": "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n"
                                                        "Your task is to create a detailed summary of the "
                                                        "conversation so far."})
        return self.body(msgs), {}

    def compact(self, summary: str) -> None:
        self.items = [
            {"role": "user", "content": [
                {"type": "text", "text": self.reminder},
                {"type": "text", "text": "This session is being continued from a previous conversation that ran out "
                                         f"of context. The summary below covers the earlier portion of the "
                                         f"conversation.\n\nSummary:\n{summary}\n\nContinue the conversation."}]},
            self.newest,
            {"role": "user", "content": [
                {"type": "text", "text": "<local-command-caveat>Caveat: The messages below were generated by the "
                                         "user while running local commands.</local-command-caveat>\n"},
                {"type": "text", "text": "<command-name>/compact</command-name>\n"},
                {"type": "text", "text": "<local-command-stdout>Compacted</local-command-stdout>\n"},
                {"type": "text", "text": "Continue from where you left off."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "No response requested."}]}]


class Codex(Agent):
    name, api, path = "codex", "responses", "/v1/responses"
    rules = (RULE_ROOT, RULE_NESTED)
    TOOLS = [{"type": "function", "name": "shell", "description": "run", "parameters": {"type": "object"}}]
    remote = False
    ticket_ref = "https://github.com/acme/shop/issues/977"
    ticket_result = ticket_ref + "\n"

    def __init__(self, session: str = "01a232e6-0c3f-7393-a708-0c13647e2075"):
        super().__init__(session)
        self.window = 0
        self.kind = "turn"
        self.items = self.initial()
        self.users: list = []

    def initial(self) -> list:
        agents = ("# AGENTS.md instructions for /repo/services/refund\n\n<INSTRUCTIONS>\n# Global Codex rules\n"
                  f"- Answer in English\n\n--- project-doc ---\n\n# Refund service\n{RULE_ROOT}\n"
                  f"# services/refund\n{RULE_NESTED}\n</INSTRUCTIONS>")
        return [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox"}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": agents},
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>/repo/services/refund</cwd>\n"
                                                   "</environment_context>"}]}]

    def headers(self) -> dict[str, str]:
        meta = {"session_id": self.session, "thread_id": self.session, "window_id": f"{self.session}:{self.window}",
                "request_kind": self.kind}
        if self.kind == "compaction":
            meta["compaction"] = {"trigger": "auto", "reason": "context_limit", "phase": "pre_turn",
                                  "implementation": "responses_compaction_v2" if self.remote else "responses"}
        return {"content-type": "application/json", "authorization": "Bearer sk-test", "originator": "codex_exec",
                "session-id": self.session, "x-codex-turn-metadata": json.dumps(meta, separators=(",", ":"))}

    def body(self, items: list | None = None) -> dict:
        return {"model": MODEL["responses"], "stream": False, "store": False, "tools": self.TOOLS,
                "prompt_cache_key": self.session, "input": copy.deepcopy(self.items if items is None else items)}

    def user(self, text: str) -> None:
        msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        self.items.append(msg)
        self.users.append(msg)

    def reply(self, resp: dict) -> tuple[list, str]:
        calls, text = [], ""
        for o in resp.get("output") or []:
            if o.get("type") == "function_call":
                self.items.append({k: o[k] for k in ("type", "call_id", "name", "arguments")})
                calls.append((o["call_id"], o["name"], json.loads(o.get("arguments") or "{}")))
            elif o.get("type") == "message":
                text += "".join(c.get("text", "") for c in o.get("content") or [])
                self.items.append({"type": "message", "role": "assistant", "content": o.get("content") or []})
        return calls, text

    def result(self, call_id: str, text: str) -> None:
        out = json.dumps({"output": text, "metadata": {"exit_code": 0}})
        self.items.append({"type": "function_call_output", "call_id": call_id, "output": out})

    def call(self, action: Action) -> tuple[str, dict]:
        if action.kind == "ticket":
            return self.ticket_call(action.arg)
        cmd = f"cat {action.arg}" if action.kind == "read" else action.arg
        return "shell", {"command": ["bash", "-lc", cmd]}

    def ticket_call(self, title: str) -> tuple[str, dict]:
        return "shell", {"command": ["bash", "-lc", f"gh issue create --title '{title}' --label follow-up"]}

    def compaction_request(self) -> tuple[dict, dict]:
        self.kind = "compaction"
        if self.remote:
            items = self.items + [{"type": "compaction_trigger"}]
        else:
            items = self.items + [{"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a "
                                               "handoff summary for another LLM that will resume the task."}]}]
        return self.body(items), {}

    def compact(self, summary: str) -> None:
        self.kind, self.window = "turn", self.window + 1
        if self.remote:
            tail = [{"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque-" + summary[:16]}]
        else:
            tail = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text":
                    "Another language model started to solve this problem and produced a summary of its thinking "
                    f"process. Here is the summary produced by the other language model:\n{summary}"}]}]
        self.items = self.initial() + copy.deepcopy(self.users) + tail


class CodexRemote(Codex):
    name = "codex-remote"
    remote = True

    def __init__(self, session: str = "01a232e6-1141-74d0-9186-c82ea5f732ab"):
        super().__init__(session)


class _ChatAgent(Agent):
    api, path = "chat", "/v1/chat/completions"
    SHELL, READ = "exec", "read"

    def __init__(self, session: str):
        super().__init__(session)
        self.items = [{"role": "system", "content": self.system()}]

    def system(self) -> str:
        raise NotImplementedError

    def body(self, items: list | None = None) -> dict:
        tools = [{"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object"}}}
                 for n in (self.SHELL, self.READ)]
        return {"model": MODEL["chat"], "stream": False, "tools": tools,
                "messages": copy.deepcopy(self.items if items is None else items)}

    def user(self, text: str) -> None:
        self.items.append({"role": "user", "content": text})

    def reply(self, resp: dict) -> tuple[list, str]:
        msg = resp["choices"][0]["message"]
        self.items.append({k: v for k, v in msg.items() if k in ("role", "content", "tool_calls") and v is not None})
        calls = [(c["id"], c["function"]["name"], json.loads(c["function"].get("arguments") or "{}"))
                 for c in msg.get("tool_calls") or []]
        return calls, msg.get("content") or ""

    def result(self, call_id: str, text: str) -> None:
        self.items.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def call(self, action: Action) -> tuple[str, dict]:
        if action.kind == "ticket":
            return self.ticket_call(action.arg)
        return (self.READ, {"path": action.arg}) if action.kind == "read" else (self.SHELL, _shell(action.arg))

    def compaction_request(self) -> tuple[dict, dict]:
        # a separate summarization call without tools (an auxiliary call for the proxy)
        text = "\n".join(str(m.get("content")) for m in self.items[1:])[-4000:]
        return {"model": MODEL["chat"], "stream": False, "messages": [
            {"role": "system", "content": "Summarize the conversation."}, {"role": "user", "content": text}]}, {}


class OpenClaw(_ChatAgent):
    name = "openclaw"
    ticket_ref = "PAY-231"
    ticket_result = "✓ Issue created\nhttps://acme.atlassian.net/browse/PAY-231\n"

    def ticket_call(self, title: str) -> tuple[str, dict]:  # the Jira CLI
        return self.SHELL, _shell(f"jira issue create -tTask -s'{title}' --no-input")

    def __init__(self, session: str = "oc-5b1f0c"):
        super().__init__(session)

    def system(self) -> str:
        return ("You are a personal assistant running inside OpenClaw.\n\n## Tooling\n- exec\n- read\n\n"
                "# Project Context\n\nThe following project context files have been loaded:\n\n"
                f"## /repo/AGENTS.md\n\n# Refund service\n{RULE_ROOT}\n"
                f"## Runtime\nRuntime: agent=main | sessionId={self.session} | model=gpt-test")

    def compact(self, summary: str) -> None:
        keep = self.items[-2:]  # the newest exchange stays
        self.items = [self.items[0], {"role": "user", "content": "The conversation history before this point was "
                                      f"compacted into the following summary:\n\n<summary>\n{summary}\n</summary>"}] \
            + keep


class Hermes(_ChatAgent):
    name = "hermes"
    SHELL, READ = "terminal", "read_file"
    ticket_ref = "PAY-232"
    ticket_result = '{"id":"10231","key":"PAY-232","self":"https://acme.atlassian.net/rest/api/3/issue/10231"}'

    def ticket_call(self, title: str) -> tuple[str, dict]:  # Jira's REST API
        fields = json.dumps({"fields": {"project": {"key": "PAY"}, "summary": title, "issuetype": {"name": "Task"}}})
        return self.SHELL, _shell("curl -sn -X POST https://acme.atlassian.net/rest/api/3/issue "
                                  f"-H 'Content-Type: application/json' -d '{fields}'")

    def __init__(self, session: str = ""):
        super().__init__(session)

    def headers(self) -> dict[str, str]:
        return {"content-type": "application/json", "authorization": "Bearer sk-test", "user-agent": "hermes-agent"}

    def system(self) -> str:
        return ("You are Hermes Agent, an intelligent AI assistant created by Nous Research.\n\n# Project Context\n\n"
                "The following project context files have been loaded and should be followed:\n\n"
                f"## AGENTS.md\n\n# Refund service\n{RULE_ROOT}\n\nConversation started: Tuesday, December 01, 2026")

    def compact(self, summary: str) -> None:
        head, tail = self.items[:3], self.items[-2:]  # Hermes keeps the head and the tail
        self.items = head + [{"role": "assistant", "content": "[CONTEXT COMPACTION - REFERENCE ONLY] Earlier turns "
                                                              f"were compacted into this summary.\n{summary}"}] + tail


AGENTS = {a.name: a for a in (ClaudeCode, Codex, CodexRemote, OpenClaw, Hermes)}


# -- running a session -------------------------------------------------------------------------

@dataclass
class Result:
    agent: str
    visible: dict[str, bool]  # in the first request after the compaction
    visible_all: dict[str, bool]  # in every request after it
    duplicates: int  # side effects the model repeated after the compaction (it did not see they were done)
    cache_kept: float  # share of post-compaction turns that kept the previous turn's cached prefix
    checkpoint_tokens: list[int] = field(default_factory=list)  # the task state, per post-compaction request
    ledger_tokens: list[int] = field(default_factory=list)  # the effect ledger's checkpoint, likewise
    requests: int = 0
    turn_ids: list[str] = field(default_factory=list)
    start: int = 0  # index in fake.model_requests of the session's first request
    compaction_at: int = 0  # ...and of its summarization request


def sent_text(body: Any) -> str:
    """Every string of a request body, joined: what the model reads."""
    from ctxproxy.filters.view import TEXT, iter_strings

    return "\n".join(s.get() for s in iter_strings(body, "body", TEXT, frozenset(), lambda: None))


def cache_kept(api: str, prev: dict, cur: dict) -> bool:
    """Did ``cur`` reuse the prefix ``prev`` left in the provider's cache? Anthropic: up to its
    last breakpoint. OpenAI (exact prefix caching): ``prev`` up to the first per-turn text ctxproxy
    added (the client never has it, so the next request cannot repeat it)."""
    if api == "anthropic":
        return prefix_kept(api, prev, cur)
    key = "messages" if api == "chat" else "input"
    if canon(prev.get("tools")) != canon(cur.get("tools")) or canon(prev.get("instructions")) != \
            canon(cur.get("instructions")):
        return False
    p, c = prev.get(key) or [], cur.get(key) or []
    cut = next((i for i, m in enumerate(p) if i and "<ctx-context" in sent_text(m)), len(p))
    return len(c) >= cut and all(canon(a) == canon(b) for a, b in zip(p[:cut], c[:cut]))


def repeated(records: list) -> int:
    """Side effects the model repeated: its tool calls that open the PR or file the ticket again."""
    return sum(1 for r in records if r.reply is not None for p in r.reply.parts
               if any(mark in json.dumps(getattr(p, "arguments", None), default=str)
                      for mark in ("gh pr create", TICKET_TITLE)))


def _call_ids(agent: Agent) -> Any:
    """The session's tool call ids, the same every run (the provider's would be random, and
    a report is the same for the same seed down to its token counts)."""
    n = itertools.count()
    return lambda: CALL_ID_PREFIX[agent.api] + hashlib.sha256(f"{agent.session}:{next(n)}".encode()).hexdigest()[:24]


def _model_after(agent: Agent, call_id: Any):
    """The model after the compaction: opens the PR and files the ticket again (in one
    answer, as parallel tool calls) unless it can see that it did."""
    from ctxproxy.proxy.scripted_provider import Reply, ToolCall

    def reply(rec: Any) -> Any:
        text = sent_text(rec.json)
        calls = []
        if PR_URL not in text:
            calls.append(ToolCall(*agent.call(Action("tool", "gh pr create --fill")), call_id()))
        if agent.ticket_ref not in text:
            calls.append(ToolCall(*agent.ticket_call(TICKET_TITLE), call_id()))
        if calls:
            return Reply.of(*calls)
        return Reply.text("Waiting for your approval before deploying to production.")
    return reply


async def run(agent: Agent, url: str, fake: Any, filler: int = 8, after: int = 5, count: Any = None,
              busy: bool = False, read_lines: int = 29, headers: dict[str, str] | None = None) -> Result:
    """Drive ``agent`` through the proxy at ``url`` (``fake`` answers): the script, its
    compaction, ``after`` more turns. ``count``: a token counter for the checkpoint size;
    ``headers``: sent with every request besides the agent's own (a proxy key, say)."""
    from ctxproxy.proxy.scripted_provider import Reply

    turn_ids: list[str] = []
    start = len(fake.model_requests)
    call_id = _call_ids(agent)
    async with aiohttp.ClientSession() as http:
        async def send(body: dict, extra: dict | None = None) -> dict:
            sent = {**agent.headers(), **(headers or {}), **(extra or {})}
            async with http.post(url + agent.path, data=orjson.dumps(body), headers=sent) as resp:
                raw = await resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"{agent.name}: {resp.status} {raw[:300]!r}")
                turn_ids.append(resp.headers.get("X-Ctx-Turn-Id", ""))  # none when sent to the provider directly
                return orjson.loads(raw)

        async def turn(text: str, actions: list[Action] | None) -> None:
            agent.user(text)
            results: dict[str, str] = {}
            if actions is not None:
                for a in actions:
                    if a.kind == "text":
                        fake.script(Reply.text(a.arg))
                    else:
                        name, args = agent.call(a)
                        fake.script(Reply.tool_call(name, args, call_id()))
                        results[canon(args).decode()] = agent.ticket_result if a.kind == "ticket" else a.result
            for _ in range(len(actions or ()) + 4):
                calls, _text = agent.reply(await send(agent.body()))
                if not calls:
                    return
                for cid, _name, args in calls:
                    agent.result(cid, results.get(canon(args).decode(), "done\n"))
                    if "services/refund/" in str(args.get("file_path") if isinstance(args, dict) else ""):
                        agent.after_read("services/refund/")

        for t in script(filler, busy, read_lines):
            await turn(t.text, t.actions)
        before = len(fake.model_requests)
        body, extra = agent.compaction_request()
        fake.script(Reply.text(SUMMARY))
        await send(body, extra)
        agent.compact(SUMMARY)
        fake.default_reply = _model_after(agent, call_id)
        first = len(fake.model_requests)
        for k in range(after):  # the user has not answered the approval yet: they only say go on
            await turn(("continue", "what is next?", "go on", "and now?")[k % 4], None)
        fake.default_reply = Reply.text("ok")
    bodies = [r.json for r in fake.model_requests[first:]]
    want = expected(agent)
    texts = [sent_text(b) for b in bodies]
    visible = {k: v in texts[0] for k, v in want.items()}
    visible_all = {k: all(v in t for t in texts) for k, v in want.items()}
    kept = [cache_kept(agent.api, bodies[i - 1], bodies[i]) for i in range(1, len(bodies))]
    tokens, ledger = [], []
    if count is not None:
        for t in texts:
            tokens.append(_segment_tokens(t, "task_state", count))
            ledger.append(_segment_tokens(t, "checkpoint", count))
    return Result(agent.name, visible, visible_all, repeated(fake.model_requests[first:]),
                  sum(kept) / len(kept) if kept else 1.0, tokens, ledger, len(fake.model_requests) - before, turn_ids,
                  start, before)


def _segment_tokens(text: str, kind: str, count: Any) -> int:
    """Tokens of the injected segment of ``kind`` in a request's text (0 if none)."""
    i = text.find(f'<ctx-context kind="{kind}"')
    return count(text[i:text.index("</ctx-context>", i) + 14]) if i >= 0 else 0
