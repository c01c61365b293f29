"""The effect ledger's rules: canonical arguments, idempotency keys, tool
classes, reference extractors. Pure functions, no store, no I/O.

Idempotency key (what a tool gateway recomputes to ask "was this done?")::

    sha256("ctxproxy.effect.v1" \\0 tenant \\0 scope \\0 tool \\0 canonical_args).hexdigest()

``scope`` is the task id (or the session id, by config); ``canonical_args``
is ``canonical_json(arguments)``: compact JSON, keys sorted, numbers
normalised (``1.0`` -> ``1``, ``-0.0`` -> ``0``, floats in shortest
round-trip form), strings unchanged (not even Unicode-normalised: a different
string is a different call). A free-form (custom tool) input is the JSON
string of its text. The arguments are the ones the model sent, after
redaction: a call whose arguments held a secret has the placeholder in its key.
Arguments nested more than ``MAX_DEPTH`` (100) levels have no canonical form
(``ValueError``): the admin lookup answers 400, the ledger keys such a call
over a stand-in (``filters.effects``).

Tool classes: a tool is read-only or side-effecting. Shell tools (``Bash``,
``shell``, ``exec_command``, ...) are classed per call: a command line whose
every command matches the read-only allowlist (``git status``, ``ls``,
``grep`` ...) or runs tests (``pytest``, ``go test``, ``npm test`` ...:
repeating one harms nothing, and a passing run is the task-state
checkpoint's verified evidence, not a side effect to guard) and that writes
no file (no ``>`` redirection, no ``-delete``, ``sed -i``...) is read-only;
anything else, or anything we cannot parse, is side-effecting. Unknown tools
follow ``default_side_effect``.

A side effect is also classed *irreversible* or *local* (``ToolClasses.
irreversible``), to order the checkpoint when its budget is short: an edit
of the working tree (``Edit``, ``apply_patch``, ``sed -i``, ``git commit``)
can be seen and undone there; what leaves the machine (``git push``, ``gh pr
create``, a deployment, a message, an unknown tool) cannot. Same call, same
class: a pure function of the tool and its arguments.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import orjson

from ctxproxy.store.services.digest import text_sha256
from ctxproxy.store.services.recall.tool_output import output_text

KEY_VERSION = "ctxproxy.effect.v1"

# -- canonical JSON and keys ----------------------------------------------------


# No real tool call nests this deep. The bound keeps the recursive walk below (two
# frames a level) far from Python's recursion limit whatever a body nests (orjson
# decodes 1024 levels): too deep is a clear ValueError, never a RecursionError.
MAX_DEPTH = 100


def normalize_value(value: Any, depth: int = 0) -> Any:
    """Numbers in one form; containers walked; dict keys kept as strings.
    ``ValueError`` for containers nested more than ``MAX_DEPTH`` levels."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(value)  # not JSON; keep it distinguishable
        if value == 0:
            return 0
        if value.is_integer() and abs(value) < 2 ** 63:
            return int(value)
        return value
    if isinstance(value, (Mapping, list, tuple)):
        if depth >= MAX_DEPTH:
            raise ValueError(f"arguments nest deeper than {MAX_DEPTH} levels")
        if isinstance(value, Mapping):
            return {str(k): normalize_value(v, depth + 1) for k, v in value.items()}
        return [normalize_value(v, depth + 1) for v in value]
    return str(value)


def canonical_json(value: Any) -> str:
    """Compact JSON text, sorted keys, normalised numbers; ``ValueError``
    beyond ``MAX_DEPTH``."""
    norm = normalize_value(value)
    try:
        return orjson.dumps(norm, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):  # ints beyond 64 bits, lone surrogates
        return json.dumps(norm, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def effect_key(tenant: str, scope: str, tool: str, args_canonical: str) -> str:
    h = hashlib.sha256()
    for part in (KEY_VERSION, tenant, scope, tool, args_canonical):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def normalize_id(call_id: str) -> str:
    """The form a call id takes after clients that sanitise ids (OpenClaw
    replays ``call_ab-12`` as ``callab12``): ASCII letters and digits only."""
    return _NOT_ALNUM.sub("", call_id)


def short_args(value: Any, max_string: int) -> Any:
    """``value`` with every string longer than ``max_string`` replaced by its
    head and a digest: what the ledger stores (a Write of a 100 KB file keeps
    its path, not its content). The key is computed on the full arguments."""
    if isinstance(value, str):
        if len(value) <= max_string:
            return value
        digest = text_sha256(value)[:12]
        return f"{value[:max_string // 2]}…[{len(value)} chars, sha256:{digest}]"
    if isinstance(value, Mapping):
        return {k: short_args(v, max_string) for k, v in value.items()}
    if isinstance(value, list):
        return [short_args(v, max_string) for v in value]
    return value


# -- tool classes ---------------------------------------------------------------

# Claude Code, Codex, OpenClaw and Hermes built-in tools that only read.
DEFAULT_READ_ONLY_TOOLS = (
    # Claude Code
    "Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoRead", "TodoWrite", "NotebookRead",
    "BashOutput", "ExitPlanMode", "ListMcpResourcesTool", "ReadMcpResourceTool",
    # Codex
    "read_file", "list_dir", "grep_files", "view_image", "update_plan", "web_search",
    # OpenClaw / Hermes
    "read", "web_fetch", "web_search", "memory_search", "memory_get", "session_status",
    "sessions_list", "sessions_history", "search_files", "read_file", "browser_snapshot",
)
# Listed for clarity (unknown tools are side-effecting by default anyway).
DEFAULT_SIDE_EFFECT_TOOLS = (
    "Bash", "Edit", "MultiEdit", "Write", "NotebookEdit", "KillShell", "Task",
    "apply_patch", "shell", "exec_command", "write_stdin", "local_shell",
    "exec", "process", "write", "edit", "message", "cron", "gateway", "sessions_send",
    "terminal", "patch", "write_file", "send_message",
)
# Shell tools: tool name -> argument holding the command line (a string, or an argv list).
DEFAULT_SHELL_TOOLS = {
    "Bash": "command", "shell": "command", "exec_command": "cmd", "local_shell": "command",
    "container.exec": "cmd", "exec": "command", "terminal": "command", "bash": "command",
}
# Command prefixes (whole words) that only read. A command line is read-only
# when every command in it (split at |, &&, ||, ;, newlines) starts with one.
DEFAULT_READ_ONLY_COMMANDS = (
    "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag",
    "find", "fd", "tree", "stat", "file", "du", "df", "which", "whereis", "type", "printenv",
    "date", "whoami", "id", "uname", "hostname", "ps", "diff", "cmp", "sort", "uniq", "cut", "tr",
    "column", "jq", "basename", "dirname", "realpath", "readlink", "md5sum", "sha1sum", "sha256sum",
    "nl", "od", "xxd", "hexdump", "true", "false", "test", "[", "cd", "sed -n", "less", "more",
    "git status", "git log", "git diff", "git show", "git rev-parse", "git ls-files", "git blame",
    "git describe", "git grep", "git remote -v", "git branch --show-current", "git branch --list",
    "git shortlog", "git reflog show", "git cat-file", "git ls-remote",
    "gh pr view", "gh pr list", "gh pr diff", "gh pr checks", "gh pr status", "gh issue view",
    "gh issue list", "gh repo view", "gh run list", "gh run view", "gh release list", "gh release view",
    "npm ls", "npm view", "npm outdated", "pip list", "pip show", "pip freeze", "cargo tree",
    "go list", "go env", "go version", "python --version", "python3 --version", "node --version",
    "kubectl get", "kubectl describe", "kubectl logs", "docker ps", "docker images", "docker logs",
    "docker inspect",
)
# Test runners and checks (whole-word prefixes, like the list above): not side effects.
DEFAULT_TEST_COMMANDS = (
    "pytest", "py.test", "python -m pytest", "python3 -m pytest", "python -m unittest", "python3 -m unittest",
    "uv run pytest", "poetry run pytest", "tox", "nox", "jest", "npx jest", "vitest", "npx vitest", "mocha",
    "npx mocha", "npm test", "npm run test", "yarn test", "pnpm test", "go test", "go vet", "cargo test",
    "cargo check", "make test", "make check", "mvn test", "gradle test", "./gradlew test", "dotnet test",
    "rspec", "bundle exec rspec", "phpunit", "ctest", "mypy",
)
# Side effects that are local to the working tree: an edit can be seen and undone there.
DEFAULT_LOCAL_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "edit", "write", "patch",
                       "write_file", "TodoWrite")
# Shell commands (prefixes) whose effect stays in the working tree; any other command is irreversible.
DEFAULT_LOCAL_COMMANDS = (
    "sed", "mkdir", "touch", "cp", "mv", "ln", "chmod", "patch", "git add", "git commit", "git switch",
    "git stash", "git branch", "git mv", "git apply", "git tag", "npm install", "npm ci", "pip install",
    "uv sync", "poetry install", "cargo build", "go build", "black", "ruff", "prettier", "gofmt",
)
# Flags that make an otherwise read-only command write (checked per command).
_WRITE_FLAGS = {
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sed": ("-i", "--in-place"),
    "sort": ("-o", "--output"),
    "fd": ("-x", "--exec", "-X", "--exec-batch"),
    "rg": ("--pre",),
}
_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", ";;", "|&", "\n"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})


def command_text(value: Any) -> str | None:
    """The command line of a shell tool's argument (a string, or an argv list
    such as Codex's ``["bash", "-lc", "git status"]``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[0] in _SHELLS and value[1] in ("-c", "-lc", "-lic", "-ic"):
            return value[-1]
        return shlex.join(value)
    return None


def _dig(args: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(args, Mapping):
            return None
        args = args.get(part)
    return args


_PLAIN = re.compile(r"[^'\"\\<>&|();`$#\n\x0b\x0c]*")  # shlex splits these on whitespace alone (it is slow)


def _commands(command: str, redirect_ok: bool) -> list[list[str]] | None:
    """The words of each command of a command line (assignments in front
    removed); None when it cannot be told: substitutions, subshells, and with
    ``redirect_ok`` false any output redirection but to ``/dev/null`` or
    another descriptor."""
    if "`" in command or "$(" in command or "<(" in command or ">(" in command:
        return None  # substitutions run commands we would have to classify too
    if command.isascii() and _PLAIN.fullmatch(command):
        tokens = command.split()  # what shlex gives for words without quotes, escapes or operators
    else:
        try:
            lex = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
            lex.whitespace_split = True
            tokens = list(lex)
        except ValueError:
            return None
    segments: list[list[str]] = [[]]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _SEPARATORS:
            segments.append([])
        elif tok and set(tok) <= set("<>&|();"):
            if tok in ("(", ")"):
                return None  # subshells: keep it simple
            if ">" in tok:  # a redirection: only to /dev/null or another descriptor
                target = tokens[i + 1] if i + 1 < len(tokens) else ""
                if not (redirect_ok or target == "/dev/null" or (tok.endswith("&") and target.isdigit())
                        or tok in (">&", "<&") and target.isdigit()):
                    return None
                i += 1
            elif tok in ("<", "<<", "<<<"):
                i += 1  # reading input is fine
            else:
                return None
        else:
            segments[-1].append(tok)
        i += 1
    out = []
    for words in segments:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if words:
            out.append(words)
    return out


class Prefixes(tuple):
    """Command prefixes (tuples of words), indexed by their first word: a command
    is tried against the few that begin like it, not against a few hundred."""

    def __new__(cls, prefixes: Iterable[tuple[str, ...]]) -> "Prefixes":
        self = super().__new__(cls, prefixes)
        by: dict[str, list[tuple[str, ...]]] = {}
        for p in self:
            by.setdefault(p[0], []).append(p)
        self.by_first = {k: tuple(v) for k, v in by.items()}
        return self


def _starts(words: list[str], prefixes: Sequence[tuple[str, ...]]) -> bool:
    if not words:
        return False
    candidates = prefixes.by_first.get(words[0], ()) if isinstance(prefixes, Prefixes) else prefixes
    return any(tuple(words[:len(p)]) == p for p in candidates)


def is_read_only_command(command: str, allow: Sequence[tuple[str, ...]]) -> bool:
    commands = _commands(command, redirect_ok=False)
    if not commands:
        return False
    for words in commands:
        if not _starts(words, allow):
            return False
        flags = _WRITE_FLAGS.get(words[0])
        if flags and any(w == f or (f.startswith("-") and len(f) == 2 and w.startswith(f) and not w.startswith("--"))
                         for w in words[1:] for f in flags):
            return False
    return True


def _prefixes(commands: Iterable[str]) -> Prefixes:
    return Prefixes(tuple(c.split()) for c in commands if c.split())


_LOCAL_COMMANDS = _prefixes(DEFAULT_LOCAL_COMMANDS)


@dataclass(frozen=True)
class ToolClasses:
    read_only: frozenset[str]
    side_effect: frozenset[str]
    shell: Mapping[str, str]
    allow: tuple[tuple[str, ...], ...]  # read-only and test command prefixes
    default_side_effect: bool = True
    local: frozenset[str] = frozenset(DEFAULT_LOCAL_TOOLS)

    @classmethod
    def build(cls, read_only: Iterable[str], side_effect: Iterable[str], shell: Mapping[str, str],
              commands: Iterable[str], default_side_effect: bool = True,
              test_commands: Iterable[str] = DEFAULT_TEST_COMMANDS) -> "ToolClasses":
        allow = _prefixes((*commands, *test_commands))
        return cls(frozenset(read_only), frozenset(side_effect), dict(shell), allow, default_side_effect)

    def irreversible(self, tool: str, args: Any) -> bool:
        """Whether a side effect of ``tool`` may have left the working tree (a
        push, a PR, a deployment, a message; any tool or command not known to
        stay local): repeating it is what the checkpoint must prevent first."""
        field = self.shell.get(tool)
        if field is None:
            return tool not in self.local
        cmd = command_text(_dig(args, field))
        commands = _commands(cmd, redirect_ok=True) if cmd is not None else None
        if not commands:
            return True
        return not all(_starts(words, _LOCAL_COMMANDS) or _starts(words, self.allow) for words in commands)

    def side_effect_of(self, tool: str, args: Any) -> bool:
        field = self.shell.get(tool)
        if field is not None:
            cmd = command_text(_dig(args, field))
            return cmd is None or not is_read_only_command(cmd, self.allow)
        if tool in self.side_effect:
            return True
        if tool in self.read_only:
            return False
        return self.default_side_effect

    def command_of(self, tool: str, args: Any) -> str | None:
        field = self.shell.get(tool)
        return None if field is None else command_text(_dig(args, field))


# -- results: references, excerpt, failure ---------------------------------------

_URL = r"https?://[^\s<>\"'`)\]}]+"
DEFAULT_EXTRACTORS = (
    _URL,
    r"(?i)\b(?:PR|pull request|issue|MR|merge request)\s*#?\d{1,8}\b",
    r"\[[\w./-]+ (?:\(root-commit\) )?([0-9a-f]{7,40})\]",  # git commit: "[main 1a2b3c4] message"
)
_REF_FIELDS = ("id", "number", "key", "uuid", "url", "html_url", "sha", "ref", "name", "message_id")
_EXIT_CODE = re.compile(r"(?im)^(?:exit code|process exited with code)[:\s]+(-?\d+)")


def compile_patterns(patterns: Iterable[str]) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(p) for p in patterns)


def extract_refs(text: str, patterns: Sequence[re.Pattern], limit: int, scan_chars: int = 65536) -> list[str]:
    """External references in a tool result: regex matches (group 1 when the
    pattern has a group) and, for a JSON object result, its top-level id-like
    fields. Deduplicated, at most ``limit``."""
    out: dict[str, None] = {}
    head = text[:scan_chars]
    stripped = head.lstrip()
    if stripped.startswith("{") and len(text) <= scan_chars:
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            for f in _REF_FIELDS:
                v = obj.get(f)
                if isinstance(v, (str, int)) and not isinstance(v, bool) and len(str(v)) <= 200:
                    out[f"{f}={v}"] = None
    values = {r.split("=", 1)[1] for r in out}
    for pat in patterns:
        for m in pat.finditer(head):
            ref = m.group(1) if pat.groups and m.group(1) else m.group(0)
            ref = " ".join(ref.split()).rstrip(".,;:!?")
            if ref and len(ref) <= 200 and ref not in values:
                out[ref] = None
            if len(out) >= limit * 4:
                break
    return list(out)[:limit]


def excerpt(text: str, chars: int) -> str:
    """The result's start, whitespace collapsed, angle brackets neutralised so
    it can never close the fence it is placed in."""
    flat = " ".join(text[: chars * 4].split())
    flat = flat.replace("<", "‹").replace(">", "›")
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


shell_output = output_text  # a shell tool's output: Codex returns {"output": "...", "metadata": {...}}


def result_failed(text: str) -> bool:
    """A shell result that reports a non-zero exit code (Codex / OpenClaw
    formats: ``{"metadata": {"exit_code": 1}}``, ``Exit code: 1``,
    ``Process exited with code 1``)."""
    head = text[:4096]
    if head.lstrip().startswith("{"):
        try:
            obj = orjson.loads(text) if len(text) < 1 << 20 else None
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            meta = obj.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else obj.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                return code != 0
    # Both phrasings end in "code", whose letters no other character matches case-blind:
    # a text without it is skipped without the regex, which tries every position (2 us/KB).
    m = _EXIT_CODE.search(head) if "code" in head.lower() else None
    return bool(m) and int(m.group(1)) != 0


def digest(text: str) -> str:
    return "sha256:" + text_sha256(text)
