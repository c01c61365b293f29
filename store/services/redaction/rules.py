"""A redaction rule: a regex, which part of a match is the secret, and filters.

A match of ``regex`` becomes a finding when all of these hold:

- the secret (capture group ``secret_group``; when that is ``None``, the first
  capture group that matched something, else the whole match) is not empty;
- when ``keywords`` are given, one of them occurs on the match's line
  (case-insensitive; the line is clipped to ``LINE_CONTEXT`` characters on
  each side). Gitleaks checks keywords against the whole file; a bounded
  line keeps every decision local, so a stream redactor never has to wait
  for text far away;
- the secret's Shannon entropy is above ``entropy`` (when that is not 0);
- ``check`` (a named validator such as a Luhn check) accepts the secret;
- no allowlist of the rule, nor a global one, allows it.

Rule groups: ``llm``, ``cloud``, ``vcs``, ``saas``, ``crypto``, ``generic``,
``pii``; rules loaded from gitleaks files are ``custom``. Everything except
``pii`` is on by default.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

GROUPS = ("llm", "cloud", "vcs", "saas", "crypto", "generic", "pii", "custom")
BUILTIN_GROUPS = ("llm", "cloud", "vcs", "saas", "crypto", "generic", "pii")
DEFAULT_GROUPS = ("llm", "cloud", "vcs", "saas", "crypto", "generic")

# How far a "line" reaches on each side of a match for line-target allowlists.
# Bounded so that a decision never waits on an unbounded line in a stream.
LINE_CONTEXT = 256

RULE_FLAGS = re.ASCII


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0.0 for an empty string)."""
    n = len(text)
    if not n:
        return 0.0
    log2 = math.log2
    if n <= 64:
        counts = [text.count(ch) for ch in set(text)]
    else:
        counts = Counter(text).values()
    return log2(n) - sum(c * log2(c) for c in counts) / n


_LEADING_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


def _starts_anchored(pattern: str, flags: int) -> bool:
    """The pattern is ``^`` followed by the rest, with no top-level alternative around it."""
    from re import _constants as C, _parser as P

    if not pattern.startswith("^"):
        return False
    try:
        tree = P.parse(pattern, flags)
    except re.error:
        return False
    return len(tree) > 0 and tree[0] == (C.AT, C.AT_BEGINNING)


def _combine(regexes: tuple[re.Pattern, ...]) -> tuple[re.Pattern | None, re.Pattern | None] | None:
    """(anchored, floating) regexes equivalent to "any of these"; None if they cannot be merged.

    Patterns that start with ``^`` (and use no multi-line mode) are merged into
    one regex tried only at the start of the subject; the rest into another.
    """
    if len(regexes) < 2 or any(r.groups for r in regexes):
        return None
    anchored, floating = [], []
    for r in regexes:
        pattern = r.pattern
        m = _LEADING_FLAGS.match(pattern)
        if m:
            pattern = pattern[m.end():]
        letters = ""
        for bit, letter in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x")):
            if r.flags & bit:
                letters += letter
        if "m" not in letters and _starts_anchored(pattern, r.flags):
            body, bucket = pattern[1:], anchored
        else:
            body, bucket = pattern, floating
        bucket.append(f"(?{letters}:{body})" if letters else f"(?:{body})")
    try:
        return (re.compile("|".join(anchored), RULE_FLAGS) if anchored else None,
                re.compile("|".join(floating), RULE_FLAGS) if floating else None)
    except re.error:
        return None


@dataclass(frozen=True)
class Allowlist:
    """Lets a would-be finding through (gitleaks ``[[rules.allowlists]]`` semantics).

    ``target`` is what ``regexes`` test: ``secret`` (default), ``match`` or
    ``line``. Stopwords are tested against the secret, case-insensitively.
    With ``condition = "and"`` every kind of criterion present must hold;
    criteria on paths or commits cannot hold for model text, so such an
    allowlist never applies (``unsatisfiable``).
    """

    regexes: tuple[re.Pattern, ...] = ()
    stopwords: tuple[str, ...] = ()
    target: str = "secret"
    condition: str = "or"
    unsatisfiable: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if self.target not in ("secret", "match", "line"):
            raise ValueError(f"allowlist target must be secret, match or line, not {self.target!r}")
        if self.condition not in ("or", "and"):
            raise ValueError(f"allowlist condition must be or / and, not {self.condition!r}")
        object.__setattr__(self, "stopwords", tuple(w.lower() for w in self.stopwords))
        object.__setattr__(self, "_any_regex", _combine(self.regexes))
        words = "|".join(re.escape(w) for w in sorted(set(self.stopwords), key=len, reverse=True))
        object.__setattr__(self, "_any_word", re.compile(words) if words else None)

    @property
    def needs_line(self) -> bool:
        return self.target == "line" and bool(self.regexes)

    def allows(self, secret: str, match: str, line: Callable[[], str]) -> bool:
        if self.unsatisfiable:
            return False
        checks: list[bool] = []
        if self.regexes:
            subject = secret if self.target == "secret" else match if self.target == "match" else line()
            combined = self._any_regex  # type: ignore[attr-defined]
            if combined is not None:
                anchored, floating = combined
                hit = (anchored is not None and anchored.match(subject) is not None) or (
                    floating is not None and floating.search(subject) is not None)
            else:
                hit = any(r.search(subject) for r in self.regexes)
            if hit and self.condition == "or":
                return True
            checks.append(hit)
        if self.stopwords:
            checks.append(self._any_word.search(secret.lower()) is not None)  # type: ignore[attr-defined]
        if not checks:
            return False
        return all(checks) if self.condition == "and" else any(checks)


def luhn_ok(value: str) -> bool:
    digits = [int(c) for c in value if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_ok(value: str) -> bool:
    s = value.replace(" ", "").upper()
    if not 15 <= len(s) <= 34:
        return False
    moved = s[4:] + s[:4]
    try:
        number = int("".join(str(int(ch, 36)) for ch in moved))
    except ValueError:
        return False
    return number % 97 == 1


CHECKS: dict[str, Callable[[str], bool]] = {"luhn": luhn_ok, "iban": iban_ok}


@dataclass(frozen=True)
class Rule:
    id: str
    regex: re.Pattern
    group: str = "generic"
    description: str = ""
    secret_group: int | None = None
    keywords: tuple[str, ...] = ()
    entropy: float = 0.0
    allowlists: tuple[Allowlist, ...] = ()
    check: str | None = None
    source: str = "builtin"

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a rule needs an id")
        if self.group not in GROUPS:
            raise ValueError(f"rule {self.id}: unknown group {self.group!r}")
        if self.check is not None and self.check not in CHECKS:
            raise ValueError(f"rule {self.id}: unknown check {self.check!r}")
        if self.secret_group is not None and not 0 <= self.secret_group <= self.regex.groups:
            raise ValueError(f"rule {self.id}: secretGroup {self.secret_group} but the regex has "
                             f"{self.regex.groups} groups")
        if self.regex.flags & re.UNICODE:
            raise ValueError(f"rule {self.id}: compile rule regexes with re.ASCII")
        object.__setattr__(self, "keywords", tuple(k.lower() for k in self.keywords))

    @property
    def needs_line(self) -> bool:
        """Whether a decision looks at the match's line (keywords, line allowlists)."""
        return bool(self.keywords) or any(a.needs_line for a in self.allowlists)


def make_rule(
    id: str,
    group: str,
    pattern: str,
    *,
    secret: int | None = 1,
    keywords: tuple[str, ...] | list[str] = (),
    entropy: float = 0.0,
    allow: tuple[str, ...] | list[str] = (),
    stopwords: tuple[str, ...] | list[str] = (),
    allow_target: str = "secret",
    match_allow: tuple[str, ...] | list[str] = (),
    check: str | None = None,
    description: str = "",
    flags: int = 0,
) -> Rule:
    """Convenience constructor for rules written in Python."""
    allowlists: tuple[Allowlist, ...] = ()
    if allow or stopwords:
        allowlists = (Allowlist(
            regexes=tuple(re.compile(a, RULE_FLAGS) for a in allow),
            stopwords=tuple(stopwords),
            target=allow_target,
        ),)
    if match_allow:
        allowlists += (Allowlist(regexes=tuple(re.compile(a, RULE_FLAGS) for a in match_allow), target="match"),)
    return Rule(
        id=id,
        regex=re.compile(pattern, RULE_FLAGS | flags),
        group=group,
        description=description,
        secret_group=secret,
        keywords=tuple(keywords),
        entropy=entropy,
        allowlists=allowlists,
        check=check,
    )
