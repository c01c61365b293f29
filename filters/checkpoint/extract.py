"""What a request's history says about the task, as pure functions.

Nothing is paraphrased: instructions, corrections and decisions are the
user's own sentences; evidence is the line of a tool result that shows it
(a test summary, a commit line, a URL, a deployment line). No model call;
the same input always gives the same output.

- ``user_turns``: the user's own text turns, without what agents wrap into
  user messages (system reminders, AGENTS.md and environment blocks, command
  records, compaction summaries and prompts);
- ``instructions``: sentences that direct or correct (``don't``, ``never``,
  ``always``, ``make sure``, ``instead``, ``actually``…);
- ``decision``: a turn that accepts or chooses (``yes, use exponential
  backoff``, ``go with option 2``, ``approved``), and ``decision:`` lines a
  user or a rules file writes;
- ``evidence``: passed test runs (exit code 0 of a test command; pytest,
  jest, go test summaries), commits and their SHAs, PR / issue URLs (GitHub,
  GitLab, Jira, Linear), tickets named in an issue tracker's JSON answer,
  deployments — from tool results that did not fail;
- ``question``: an assistant text that ends asking something.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

import orjson

from ctxproxy.store.services.wording import MAX_QUOTE, clip, instructions, sentences  # noqa: F401  (this module's API)

from ..compaction import item_texts, summary_text
from ..effects.rules import command_text, result_failed, shell_output

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_WRAPPED = re.compile(r"^\s*<([A-Za-z_][\w-]*)[^>]*>.*</\1>\s*$", re.S)  # the whole text is one tag block
_AGENT_TEXT = ("# AGENTS.md instructions for", "<environment_context>", "<local-command-caveat>", "<command-name>",
               "<local-command-stdout>", "<user_instructions>", "Continue from where you left off.",
               "Caveat: The messages below were generated")
_ACCEPT = re.compile(
    r"(?i)^\s*(?:yes|yep|yeah|ok(?:ay)?|sure|agreed|approved?|lgtm|sounds good|go ahead|do it|"
    r"(?:let'?s |we'?ll |i'?ll )?(?:go with|use|pick|choose|take)\b|option\s+\w+|"
    r"i (?:choose|pick|prefer|accept|approve))\b")
_BARE_ACCEPT = re.compile(r"(?i)^\s*(?:yes|yep|yeah|ok(?:ay)?|sure|agreed|approved?|lgtm|sounds good|go ahead|"
                          r"do it)[\s.!,]*$")
_CONTINUE = re.compile(r"(?i)^\s*(?:continue|go on|keep going|carry on|proceed|next|what(?:'s| is) next\??|"
                       r"and now\??)[\s.!?]*$")
_DECISION_LINE = re.compile(r"(?im)^\s*(?:[-*+]\s+)?decision:\s*(.+?)\s*$")

# evidence
_TEST_CMD = re.compile(r"(?i)(?:^|[\s;&|(])(?:py\.?test|python3? -m (?:pytest|unittest)|jest|vitest|go test|"
                       r"cargo test|(?:npm|pnpm|yarn|bun)(?: run)? test|tox|nox|rspec|mvn(?:w)? test|"
                       r"gradle(?:w)? test|make test|ctest|phpunit|mix test|dotnet test)\b")
_PYTEST = re.compile(r"(?im)^=*\s*((?:\d+ (?:passed|skipped|xfailed|xpassed|deselected|warnings?)(?:, )?)+"
                     r" in [\d.]+s(?: \([^)]*\))?)\s*=*\s*$")
_PYTEST_BAD = re.compile(r"(?i)\b\d+ (?:failed|errors?)\b")
_JEST = re.compile(r"(?m)^Tests:\s+(.*\bpassed\b.*\btotal\b.*)$")
_GO_OK = re.compile(r"(?m)^ok\s+\S+.*$")
_GO_FAIL = re.compile(r"(?m)^(?:FAIL\b|--- FAIL)")
_EXIT_ZERO = re.compile(r"(?i)(?:exit(?:ed with)? (?:code|status)[:=]? ?0\b|\"exit_code\":\s*0\b|exit_code=0\b)")
_COMMIT = re.compile(r"(?m)^\[([\w./@-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.{1,160})$")
_SHA = re.compile(r"\b(?:commit|sha|revision)[:\s]+([0-9a-f]{7,40})\b", re.I)
_URL = re.compile(r"https?://[^\s\"'<>)\]]+/(?:pull|pulls|issues|merge_requests|-/merge_requests|-/issues)/\d+"
                  r"|https?://[^\s\"'<>)\]]+/(?:browse|issue)/[A-Z][A-Z0-9_]+-\d+")  # Jira, Linear tickets
_TICKET_KEY = re.compile(r"[A-Z][A-Z0-9_]{1,9}-\d{1,7}")  # PAY-232: a Jira / Linear issue key
# The first line naming a deployment: the word is searched, then widened to its line
# (``^.*\b(?:…)\b.*$`` backtracks over every line of a long output).
_DEPLOY = re.compile(r"(?i)\b(?:deployed|deployment (?:succeeded|complete|completed|successful|finished)|"
                     r"released|successfully rolled out|rollout (?:complete|status: success))\b")
# Words one of the patterns above needs (lower case): an output without them is not searched
# with it. Most tool outputs hold none, and a regex pass costs ~0.1 ms per 64 KB.
_PYTEST_WORDS = ("passed", "skipped", "xfailed", "xpassed", "deselected", "warning")
_SHA_WORDS = ("commit", "sha", "revision")
_DEPLOY_WORDS = ("deploy", "released", "rolled out", "rollout")


def own_text(text: str) -> str:
    """The user's own words in one text part ('' when the part is agent scaffolding)."""
    text = _REMINDER.sub(" ", text).strip()
    if not text or text.startswith(_AGENT_TEXT) or summary_text(text) or _WRAPPED.match(text):
        return ""
    return text


def user_turns(items: list, start: int = 0) -> Iterator[tuple[int, str]]:
    """(position, text) of each user item at or after ``start`` that holds the user's own words."""
    for pos in range(start, len(items)):
        item = items[pos]
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        parts = [own_text(t) for t in item_texts(item)]
        text = "\n".join(p for p in parts if p)
        if text:
            yield pos, text


def is_continuation(text: str) -> bool:
    """A turn that only asks to go on: it does not answer a question."""
    return bool(_CONTINUE.match(text))


def decision(text: str) -> str | None:
    """The turn, verbatim (clipped), when it accepts or chooses; else None."""
    first = text.strip()
    return clip(first) if _ACCEPT.match(first) else None


def bare_accept(text: str) -> bool:
    """'yes', 'ok', 'approved'…: an acceptance that needs the question it answers."""
    return bool(_BARE_ACCEPT.match(text))


def decision_lines(text: str) -> list[str]:
    """``decision: …`` lines (a user's or a rules file's), their text verbatim (clipped)."""
    return [clip(m.group(1)) for m in _DECISION_LINE.finditer(text)]


def question(text: str) -> str | None:
    """The last sentence of an assistant text when it asks something."""
    body = text.strip()
    if not body.endswith("?"):
        return None
    last = list(sentences(body))
    return clip(last[-1]) if last else None


def scaffolding(text: str) -> bool:
    """An assistant text the agent wrote itself (Claude Code's placeholder after a command)."""
    return text in ("No response requested.",)


def assistant_text(item: Any) -> str:
    if not isinstance(item, dict) or item.get("role") != "assistant":
        return ""
    return "\n".join(item_texts(item)).strip()


def test_command(args: Any) -> str | None:
    """The command line of a call's arguments when it runs tests."""
    cmd = None
    if isinstance(args, dict):
        for key in ("command", "cmd", "script", "input"):
            cmd = command_text(args.get(key))
            if cmd:
                break
    elif isinstance(args, str):
        cmd = args
    return cmd if cmd and _TEST_CMD.search(cmd) else None


def evidence(tool: str, args: Any, result: str, is_error: bool) -> list[tuple[str, str]]:
    """(kind, text) of what a tool result verifies: ``test``, ``commit``,
    ``url``, ``ticket``, ``deploy``. Nothing from a result that failed."""
    if is_error or result_failed(result):
        return []
    head = shell_output(result[:65536])
    low = head.lower()
    out: list[tuple[str, str]] = []
    cmd = test_command(args)
    summary = _test_summary(head, low)
    if summary or (cmd and "exit" in low and _EXIT_ZERO.search(head)):
        what = f"`{clip(cmd, 80)}`" if cmd else tool
        out.append(("test", f"tests passed: {what}" + (f" — {summary}" if summary else " (exit code 0)")))
    if "] " in head:
        for m in _COMMIT.finditer(head):
            out.append(("commit", f"commit {m.group(2)} on {m.group(1)}: {clip(m.group(3), 100)}"))
    if not any(k == "commit" for k, _ in out) and any(w in low for w in _SHA_WORDS):
        for m in _SHA.finditer(head):
            out.append(("commit", f"commit {m.group(1)}"))
            break
    for url in dict.fromkeys(_URL.findall(head) if "http" in low else ()):
        out.append(("url", url))
    ticket = _ticket_of(head)
    if ticket and not any(ticket[0] in text for _, text in out):
        out.append(("ticket", f"ticket {ticket[0]}: {ticket[1]}"))
    m = _DEPLOY.search(head) if any(w in low for w in _DEPLOY_WORDS) else None
    if m is not None:
        end = head.find("\n", m.end())
        out.append(("deploy", clip(head[head.rfind("\n", 0, m.start()) + 1:end if end >= 0 else len(head)], 160)))
    return out


def _test_summary(text: str, low: str) -> str | None:
    m = _PYTEST.search(text) if " in " in low and any(w in low for w in _PYTEST_WORDS) else None
    if m and not _PYTEST_BAD.search(m.group(1)):
        return m.group(1)
    m = _JEST.search(text) if "Tests:" in text else None
    if m and "failed" not in m.group(1):
        return "Tests: " + clip(m.group(1), 100)
    oks = _GO_OK.findall(text) if text.startswith("ok") or "\nok" in text else ()
    if oks and not _GO_FAIL.search(text):
        return clip("; ".join(oks[:3]), 120)
    return None


def _ticket_of(text: str) -> tuple[str, str] | None:
    """(key, link) of an issue tracker's JSON answer about one ticket (Jira REST create:
    ``{"id", "key", "self"}``; Linear and MCP tools: ``identifier`` and ``url``)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    key = next((v for k in ("key", "identifier") if isinstance(v := obj.get(k), str)
                and _TICKET_KEY.fullmatch(v)), None)
    link = next((v for k in ("url", "self") if isinstance(v := obj.get(k), str) and v.startswith("http")), None)
    return (key, clip(link, 160)) if key and link else None


def texts_of(items: Iterable[Any]) -> Iterator[str]:
    """Every text part of the items, any role."""
    for item in items:
        yield from item_texts(item)
