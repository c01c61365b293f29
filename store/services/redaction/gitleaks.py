"""Load gitleaks-format TOML rule files (the rules a security team already keeps).

Supported: ``[[rules]]`` with ``id``, ``description``, ``regex``,
``secretGroup``, ``entropy``, ``keywords``; rule allowlists as
``[[rules.allowlists]]`` or the older ``[rules.allowlist]`` (``regexes``,
``stopwords``, ``regexTarget`` = secret | match | line, ``condition`` = OR |
AND; ``paths``/``commits`` cannot apply to model text); global allowlists as
``[allowlist]`` or ``[[allowlists]]`` (with optional ``targetRules``), which
apply to the rules of the same file; ``[extend] path`` (another file, at most
two levels) and ``disabledRules``.

Differences from gitleaks, by design:
- keywords are looked for on the match's line (at most ``LINE_CONTEXT``
  characters each side) rather than anywhere in the file, so a decision never
  waits for text a stream has not delivered yet;
- ``[extend] useDefault`` is noted and ignored: the gitleaks default rule set
  is not bundled (ctxproxy's built-in rules play that part).

Go's RE2 syntax is converted where Python's ``re`` differs. A rule that still
cannot be compiled is returned in ``errors`` as ``(rule id, reason)``; it is
never dropped silently. Problems that do not stop a rule from working (an
allowlist regex that does not compile, an unsupported field) go to ``notes``.
"""
from __future__ import annotations

import re
import tomllib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import RuleLoadError
from .patterns import analyze
from .rules import RULE_FLAGS, Allowlist, Rule

_MAX_EXTEND_DEPTH = 2

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


class GoRegexError(ValueError):
    """A Go (RE2) regex uses something Python cannot express."""


@dataclass(frozen=True)
class RuleFile:
    source: str
    rules: tuple[Rule, ...]
    errors: tuple[tuple[str, str], ...] = ()  # (rule id, reason): rules NOT loaded
    notes: tuple[tuple[str, str], ...] = ()  # (rule id or section, remark): loaded with a caveat
    disabled: tuple[str, ...] = ()  # extend.disabledRules


def compile_go_regex(pattern: str) -> re.Pattern:
    """Compile a gitleaks (Go RE2) regex as a Python regex with the same meaning."""
    converted = convert_go_regex(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return re.compile(converted, RULE_FLAGS)
        except re.error as exc:
            raise GoRegexError(f"does not compile as Python regex: {exc}") from None


def convert_go_regex(pattern: str) -> str:
    """Rewrite RE2 syntax that Python's ``re`` reads differently or rejects.

    - ``(?i)`` and other flag groups in mid-pattern (Python allows them only at
      the very start) become scoped groups ``(?i:...)`` up to the end of the
      enclosing group, reopened after each ``|`` of that group;
    - ``\\z`` -> ``\\Z``; ``$`` outside multi-line mode -> ``\\Z`` (RE2's ``$``
      does not match before a final newline);
    - ``\\Q...\\E`` -> escaped literal; ``\\x{HHHH}`` -> a Python escape;
    - POSIX classes ``[[:alpha:]]`` -> explicit ranges;
    - ``(?<name>`` -> ``(?P<name>``; ``{,n}`` (a literal in RE2) -> ``\\{,n}``;
    - ``\\p{...}`` / ``\\pL`` Unicode classes, ``\\C`` and ``(?U)`` are refused.
    """
    return _GoConverter(pattern).run()


class _Frame:
    __slots__ = ("scoped", "multiline")

    def __init__(self, multiline: bool):
        self.scoped: list[str] = []  # flag specs of scoped groups opened by mid-pattern flags
        self.multiline = multiline


class _GoConverter:
    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        self.stack = [_Frame(False)]

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                self.escape(in_class=False)
            elif c == "[":
                self.klass()
            elif c == "(":
                self.open_group()
            elif c == ")":
                self.close_group()
            elif c == "|":
                frame = self.stack[-1]
                self.out.append(")" * len(frame.scoped) + "|" + "".join(f"(?{f}:" for f in frame.scoped))
                self.i += 1
            elif c == "$":
                self.out.append("$" if self.stack[-1].multiline else r"\Z")
                self.i += 1
            elif c == "{" and re.match(r"\{,\d+\}", p[self.i:]):
                self.out.append("\\{")
                self.i += 1
            else:
                self.out.append(c)
                self.i += 1
        if len(self.stack) != 1:
            raise GoRegexError("unbalanced parentheses")
        self.out.append(")" * len(self.stack[0].scoped))
        return "".join(self.out)

    def escape(self, in_class: bool) -> None:
        p = self.p
        if self.i + 1 >= len(p):
            raise GoRegexError("trailing backslash")
        c = p[self.i + 1]
        if c == "Q":
            end = p.find("\\E", self.i + 2)
            literal = p[self.i + 2:] if end < 0 else p[self.i + 2:end]
            self.out.append("".join("\\" + ch if not ch.isalnum() else ch for ch in literal))
            self.i = len(p) if end < 0 else end + 2
            return
        if c == "z":
            if in_class:
                raise GoRegexError("\\z inside a character class")
            self.out.append(r"\Z")
        elif c == "x" and p[self.i + 2:self.i + 3] == "{":
            end = p.find("}", self.i + 3)
            if end < 0:
                raise GoRegexError("unterminated \\x{...}")
            code = int(p[self.i + 3:end], 16)
            self.out.append(f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
            self.i = end + 1
            return
        elif c in "pP":
            raise GoRegexError("Unicode classes (\\p{...}) are not supported")
        elif c == "C":
            raise GoRegexError("\\C (any byte) is not supported")
        else:
            self.out.append("\\" + c)
        self.i += 2

    def klass(self) -> None:
        p = self.p
        self.out.append("[")
        self.i += 1
        if p[self.i:self.i + 1] == "^":
            self.out.append("^")
            self.i += 1
        first = True
        while self.i < len(p):
            c = p[self.i]
            if c == "]" and not first:
                self.out.append("]")
                self.i += 1
                return
            first = False
            if c == "\\":
                self.escape(in_class=True)
            elif c == "[" and p[self.i + 1:self.i + 2] == ":":
                end = p.find(":]", self.i + 2)
                if end < 0:
                    raise GoRegexError("unterminated POSIX class")
                name = p[self.i + 2:end]
                if name.startswith("^"):
                    raise GoRegexError(f"negated POSIX class [:{name}:] inside a set is not supported")
                if name not in _POSIX:
                    raise GoRegexError(f"unknown POSIX class [:{name}:]")
                self.out.append(_POSIX[name])
                self.i = end + 2
            elif c in "[&~|":
                self.out.append("\\" + c)
                self.i += 1
            elif c == "]":
                self.out.append("\\]")
                self.i += 1
            else:
                self.out.append(c)
                self.i += 1
        raise GoRegexError("unterminated character class")

    def open_group(self) -> None:
        p = self.p
        rest = p[self.i:]
        frame = self.stack[-1]
        m = re.match(r"\(\?([imsU]*)(?:-([imsU]*))?\)", rest)
        if m and (m.group(1) or m.group(2)):
            on, off = m.group(1), m.group(2) or ""
            if "U" in on + off:
                raise GoRegexError("the ungreedy flag (?U) is not supported")
            spec = on + (f"-{off}" if off else "")
            if not self.out and len(self.stack) == 1 and not off:
                self.out.append(f"(?{on})")  # leading flags stay global
                frame.multiline = frame.multiline or "m" in on
            else:
                self.out.append(f"(?{spec}:")
                frame.scoped.append(spec)
                if "m" in on:
                    frame.multiline = True
                if "m" in off:
                    frame.multiline = False
            self.i += len(m.group(0))
            return
        m = re.match(r"\(\?([imsU]*)(?:-([imsU]*))?:", rest)
        if m and (m.group(1) or m.group(2)):
            on, off = m.group(1), m.group(2) or ""
            if "U" in on + off:
                raise GoRegexError("the ungreedy flag (?U) is not supported")
            child = _Frame(("m" in on) or (frame.multiline and "m" not in off))
            self.stack.append(child)
            self.out.append(m.group(0))
            self.i += len(m.group(0))
            return
        m = re.match(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>", rest)
        if m:
            self.stack.append(_Frame(frame.multiline))
            self.out.append(f"(?P<{m.group(1)}>")
            self.i += len(m.group(0))
            return
        m = re.match(r"\((?:\?(?:P<[A-Za-z_][A-Za-z0-9_]*>|:|=|!|<=|<!))?", rest)
        self.stack.append(_Frame(frame.multiline))
        self.out.append(m.group(0))
        self.i += len(m.group(0))

    def close_group(self) -> None:
        if len(self.stack) == 1:
            raise GoRegexError("unbalanced parentheses")
        frame = self.stack.pop()
        self.out.append(")" * len(frame.scoped) + ")")
        self.i += 1


def _lower_keys(value: Any) -> Any:
    """gitleaks reads its TOML case-insensitively (viper)."""
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def _allowlist(raw: dict, owner: str, notes: list) -> Allowlist | None:
    condition = str(raw.get("condition", "or") or "or").lower()
    condition = {"&&": "and", "||": "or"}.get(condition, condition)
    if condition not in ("or", "and"):
        raise GoRegexError(f"unknown allowlist condition {raw.get('condition')!r}")
    target = str(raw.get("regextarget", "secret") or "secret").lower()
    if target not in ("secret", "match", "line"):
        raise GoRegexError(f"unknown allowlist regexTarget {raw.get('regextarget')!r}")
    regexes = []
    for src in raw.get("regexes", []) or []:
        try:
            regexes.append(compile_go_regex(str(src)))
        except GoRegexError as exc:
            notes.append((owner, f"allowlist regex skipped ({exc})"))
    stopwords = tuple(str(w) for w in raw.get("stopwords", []) or [])
    has_other = bool(raw.get("paths") or raw.get("commits"))
    if not regexes and not stopwords:
        if has_other:
            notes.append((owner, "allowlist with only paths/commits does not apply to model text"))
        return None
    return Allowlist(
        regexes=tuple(regexes),
        stopwords=stopwords,
        target=target,
        condition=condition,
        unsatisfiable=condition == "and" and has_other,
        description=str(raw.get("description", "")),
    )


def load_gitleaks_text(text: str, source: str = "<string>", *, _base: Path | None = None,
                       _depth: int = 0) -> RuleFile:
    try:
        doc = _lower_keys(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise RuleLoadError(f"{source}: not valid TOML ({exc})") from None
    errors: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []

    # Global allowlists of this file (apply to this file's rules).
    global_raw = []
    if isinstance(doc.get("allowlist"), dict):
        global_raw.append(doc["allowlist"])
    for item in doc.get("allowlists", []) or []:
        if isinstance(item, dict):
            global_raw.append(item)
    global_lists: list[tuple[Allowlist, frozenset[str]]] = []
    for raw in global_raw:
        try:
            al = _allowlist(raw, "allowlist", notes)
        except GoRegexError as exc:
            notes.append(("allowlist", f"global allowlist skipped ({exc})"))
            continue
        if al is not None:
            targets = frozenset(str(t) for t in raw.get("targetrules", []) or [])
            global_lists.append((al, targets))

    # [extend]
    base_rules: list[Rule] = []
    extend = doc.get("extend") or {}
    disabled = tuple(str(x) for x in extend.get("disabledrules", []) or [])
    if extend.get("usedefault"):
        notes.append(("extend", "useDefault ignored: the gitleaks default rules are not bundled; "
                                "ctxproxy's built-in rules apply instead"))
    if extend.get("path"):
        if _depth >= _MAX_EXTEND_DEPTH:
            errors.append(("extend", f"extend.path nested deeper than {_MAX_EXTEND_DEPTH} levels"))
        else:
            target = Path(str(extend["path"]))
            if not target.is_absolute() and _base is not None:
                target = _base / target
            try:
                parent = load_gitleaks_file(target, _depth=_depth + 1)
            except RuleLoadError as exc:
                errors.append(("extend", str(exc)))
            else:
                base_rules = [r for r in parent.rules if r.id not in disabled]
                errors.extend(parent.errors)
                notes.extend(parent.notes)

    rules: list[Rule] = []
    for n, raw in enumerate(doc.get("rules", []) or []):
        if not isinstance(raw, dict):
            errors.append((f"rules[{n}]", "not a table"))
            continue
        rid = str(raw.get("id") or "").strip()
        if not rid:
            errors.append((f"rules[{n}]", "rule has no id"))
            continue
        try:
            rules.append(_rule(raw, rid, source, global_lists, notes))
        except GoRegexError as exc:
            errors.append((rid, str(exc)))
        except ValueError as exc:
            errors.append((rid, str(exc)))

    own = {r.id for r in rules}
    merged = [r for r in base_rules if r.id not in own] + rules
    return RuleFile(source, tuple(merged), tuple(errors), tuple(notes), disabled)


def _rule(raw: dict, rid: str, source: str, global_lists, notes: list) -> Rule:
    pattern = raw.get("regex")
    if not pattern:
        raise GoRegexError("path-only rule (no regex) does not apply to model text")
    regex = compile_go_regex(str(pattern))
    info = analyze(regex)
    if info.min_len == 0:
        raise GoRegexError("the regex can match an empty string")
    secret_group = raw.get("secretgroup")
    if secret_group is not None:
        if not isinstance(secret_group, int) or secret_group < 0:
            raise GoRegexError(f"secretGroup must be a non-negative integer, got {secret_group!r}")
        if secret_group > regex.groups:
            raise GoRegexError(f"secretGroup {secret_group} but the regex has {regex.groups} groups")
        if secret_group == 0:
            secret_group = None
    entropy = raw.get("entropy", 0.0) or 0.0
    if not isinstance(entropy, (int, float)) or entropy < 0:
        raise GoRegexError(f"entropy must be a non-negative number, got {entropy!r}")
    allow_raw = []
    if isinstance(raw.get("allowlist"), dict):
        allow_raw.append(raw["allowlist"])
    for item in raw.get("allowlists", []) or []:
        if isinstance(item, dict):
            allow_raw.append(item)
    allowlists = []
    for a in allow_raw:
        al = _allowlist(a, rid, notes)
        if al is not None:
            allowlists.append(al)
    for al, targets in global_lists:
        if not targets or rid in targets:
            allowlists.append(al)
    if raw.get("required"):
        notes.append((rid, "composite rule ([[rules.required]]) used on its own: it may redact more, never less"))
    if raw.get("skipreport"):
        notes.append((rid, "skipReport rule is redacted like any other"))
    return Rule(
        id=rid,
        regex=regex,
        group="custom",
        description=str(raw.get("description", "")),
        secret_group=secret_group,
        keywords=tuple(str(k) for k in raw.get("keywords", []) or []),
        entropy=float(entropy),
        allowlists=tuple(allowlists),
        source=source,
    )


def load_gitleaks_file(path: str | Path, *, _depth: int = 0) -> RuleFile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleLoadError(f"{path}: cannot read rule file ({exc.strerror or type(exc).__name__})") from None
    return load_gitleaks_text(text, str(path), _base=path.parent, _depth=_depth)
