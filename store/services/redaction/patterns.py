"""What the engine needs to know about a rule's regex, read once from its parse tree.

A rule is written as a Python regex. From Python's own parse of it we derive:

- ``min_len`` / ``max_len``: bounds on a match's length (``None`` = unbounded);
- ``behind`` / ``ahead``: how many characters the regex may look at before a
  match's start or after its end (lookarounds, ``\\b``, ``$``);
- ``hs_pattern``: a *relaxed prefix* form for Hyperscan: lookarounds dropped,
  atomic and possessive constructs made plain, back-references replaced by
  the group they refer to, and the pattern cut short at its first large
  repeat (``X{80,250}`` becomes ``X{64}`` and what follows is dropped). For
  every match of the Python regex it matches a prefix of that match starting
  at the same offset, so Hyperscan can only add candidate starts, never lose
  one; ``hs_min`` / ``hs_max`` bound its own match length. Large repeats are
  what makes Hyperscan compile slowly, and a prefix is as selective as the
  whole for the formats we look for. ``None`` when the pattern cannot be
  written for Hyperscan (non-ASCII literals) or its prefix can be empty.
- ``prefix``: a Python regex (to be anchored with ``\\Z``) that matches every
  string that could still grow into a match, or a match whose verdict depends
  on characters not yet seen. The stream redactor holds text back only from
  the leftmost position where this can match. Assertions whose answer is
  already known are kept (lookbehinds, ``^``, ``\\b`` between two seen
  characters); those that need unseen text are relaxed (``\\b`` at the end
  of the seen text, lookaheads).
- ``full``: the whole pattern in the same dialect as ``prefix``.
- ``literals``: lower-case strings such that every match contains at least
  one of them (``None`` when no useful set exists). The pure-Python path uses
  them to skip text cheaply.

All rule regexes are compiled with ``re.ASCII`` so that ``\\w``, ``\\d``,
``\\s``, ``\\b`` and case folding mean the same for Python and Hyperscan.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from re import _constants as C  # the parse-tree vocabulary of the stdlib regex engine
from re import _parser as P

# A repeat bound at or above this is treated as unbounded.
_BIG = 1 << 20
# Widest context assumed for a lookaround that is itself unbounded.
_ASSERT_CAP = 256


class PatternError(ValueError):
    """The regex uses something this analysis cannot represent."""


@dataclass(frozen=True)
class PatternInfo:
    min_len: int
    max_len: int | None
    behind: int
    ahead: int
    hs_pattern: bytes | None
    hs_min: int
    hs_max: int | None
    hs_caseless: bool
    hs_dotall: bool
    hs_multiline: bool
    prefix: str
    full: str
    literals: tuple[str, ...] | None


def analyze(regex: re.Pattern) -> PatternInfo:
    """Read ``regex`` (compiled with ``re.ASCII``) once."""
    flags = regex.flags
    tree = _parsed(regex.pattern, flags)
    groups = _group_table(tree)
    lo, hi = tree.getwidth()
    max_len = None if hi >= _BIG else int(hi)
    behind, ahead = _context(tree)
    hs, hs_min, hs_max = _hyperscan_form(tree, groups, flags)
    scoped = _flag_prefix(flags)
    prefix, full = _forms(tree, groups, flags, scoped) or _forms(tree, groups, flags, scoped, compiles=False)
    literals = usable_literals(_literals(tree))
    return PatternInfo(
        min_len=int(lo),
        max_len=max_len,
        behind=behind,
        ahead=ahead,
        hs_pattern=hs,
        hs_min=hs_min,
        hs_max=hs_max,
        hs_caseless=bool(flags & re.IGNORECASE),
        hs_dotall=bool(flags & re.DOTALL),
        hs_multiline=bool(flags & re.MULTILINE),
        prefix=prefix,
        full=full,
        literals=literals,
    )


@functools.lru_cache(maxsize=512)
def _parsed(pattern: str, flags: int) -> P.SubPattern:
    """Python's parse of a rule's regex, once for ``analyze``, ``secret_heads`` and
    ``alternatives`` (read only: none of them changes the tree)."""
    return P.parse(pattern, flags)


def _hyperscan_form(tree, groups, flags: int) -> tuple[bytes | None, int, int | None]:
    try:
        text, _ = _Emitter("hs", groups, truncate=True).seq_cut(tree)
        # The same text in Python's dialect, parsed to learn its match widths.
        py, _ = _Emitter("py", groups, truncate=True).seq_cut(tree)
        lo, hi = P.parse(py, flags & ~re.VERBOSE).getwidth()
    except (PatternError, re.error):
        return None, 0, None
    if lo == 0:
        return None, 0, None  # Hyperscan refuses patterns that can match the empty string
    return text.encode("ascii"), int(lo), None if hi >= _BIG else int(hi)


def _flag_prefix(flags: int) -> str:
    out = ""
    if flags & re.IGNORECASE:
        out += "i"
    if flags & re.DOTALL:
        out += "s"
    return out


def _children(op, av) -> list:
    """The sub-sequences of one parsed regex node (what a tree walk descends into)."""
    if op is C.SUBPATTERN:
        return [av[3]]
    if op is C.BRANCH:
        return list(av[1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        return [av[2]]
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [av[1]]
    if op is C.ATOMIC_GROUP:
        return [av]
    if op is C.GROUPREF_EXISTS:
        return [av[1]] if av[2] is None else [av[1], av[2]]
    return []


def _group_table(tree: P.SubPattern) -> dict[int, P.SubPattern]:
    table: dict[int, P.SubPattern] = {}

    def walk(items) -> None:
        for op, av in items:
            if op is C.SUBPATTERN and av[0] is not None:
                table[av[0]] = av[3]
            for child in _children(op, av):
                walk(child)

    walk(tree)
    return table


def _width_hi(items) -> int:
    hi = items.getwidth()[1] if isinstance(items, P.SubPattern) else P.SubPattern(None, list(items)).getwidth()[1]
    return _ASSERT_CAP if hi >= _BIG else int(hi)


def _context(tree) -> tuple[int, int]:
    """(chars looked at before a match's start, chars looked at after its end)."""
    behind = ahead = 0

    def walk(items) -> None:
        nonlocal behind, ahead
        for op, av in items:
            if op is C.AT:
                if av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
                    behind, ahead = max(behind, 1), max(ahead, 1)
                elif av in (C.AT_BEGINNING, C.AT_BEGINNING_LINE):
                    behind = max(behind, 1)
                elif av in (C.AT_END, C.AT_END_LINE):
                    ahead = max(ahead, 2)
            elif op in (C.ASSERT, C.ASSERT_NOT):
                width = _width_hi(av[1])
                if av[0] < 0:
                    behind = max(behind, width)
                else:
                    ahead = max(ahead, width)
            for child in _children(op, av):
                walk(child)

    walk(tree)
    return behind, ahead


# -- emitting regex text from the tree ---------------------------------------------

_CATEGORY = {
    C.CATEGORY_DIGIT: r"\d",
    C.CATEGORY_NOT_DIGIT: r"\D",
    C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S",
    C.CATEGORY_WORD: r"\w",
    C.CATEGORY_NOT_WORD: r"\W",
}


def _char(code: int, dialect: str) -> str:
    if code < 128:
        ch = chr(code)
        return ch if ch.isalnum() else f"\\x{code:02x}"
    if dialect == "hs":
        raise PatternError("non-ASCII literal")
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _flags_text(flags: int) -> str:
    out = ""
    for bit, letter in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s")):
        if flags & bit:
            out += letter
    return out


# Repeats wider than this are cut short in the Hyperscan form.
HS_REPEAT_CAP = 64


class _Emitter:
    """Regex text for a parse tree.

    ``hs``: Hyperscan/PCRE dialect, relaxed (lookarounds dropped, atomic and
    possessive made plain, back-references inlined); ``py``: the same in
    Python's dialect. With ``truncate`` the text stops after the first repeat
    wider than ``HS_REPEAT_CAP``, keeping ``min(lo, cap)`` copies of it.
    ``loose``: Python dialect for prefix regexes, evaluated on text whose
    left part is known and whose right part may not have arrived: lookaheads
    are dropped, ``\\b`` also holds at the end of the text, lookbehinds and
    ``^`` are checked as they are (``strict``) or dropped too.
    """

    def __init__(self, dialect: str, groups: dict[int, P.SubPattern], truncate: bool = False,
                 flags: int = 0, strict: bool = False):
        self.dialect = dialect
        self.groups = groups
        self.truncate = truncate
        self.flags = flags
        self.strict = strict

    def seq(self, items) -> str:
        return self.seq_cut(items)[0]

    def seq_cut(self, items) -> tuple[str, bool]:
        out = []
        for op, av in items:
            text, cut = self.item_cut(op, av)
            out.append(text)
            if cut:
                return "".join(out), True
        return "".join(out), False

    def item_cut(self, op, av) -> tuple[str, bool]:
        if not self.truncate:
            return self.item(op, av), False
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            inner, cut = self.seq_cut(sub)
            if cut:
                return (f"(?:{inner})" if lo >= 1 else f"(?:{inner})?"), True
            if hi > HS_REPEAT_CAP:
                keep = min(lo, HS_REPEAT_CAP)
                return (f"(?:{inner}){{{keep}}}" if keep else ""), True
            return f"(?:{inner}){_quant(lo, hi)}", False
        if op is C.SUBPATTERN:
            _group, add, dele, sub = av
            inner, cut = self.seq_cut(sub)
            return self._scoped(add, dele, inner), cut
        if op is C.ATOMIC_GROUP:
            inner, cut = self.seq_cut(av)
            return f"(?:{inner})", cut
        if op is C.BRANCH:
            parts = [self.seq_cut(alt) for alt in av[1]]
            return "(?:" + "|".join(t for t, _ in parts) + ")", any(c for _, c in parts)
        return self.item(op, av), False

    def _scoped(self, add: int, dele: int, inner: str) -> str:
        flags = _flags_text(add)
        off = _flags_text(dele)
        if flags or off:
            spec = flags + (f"-{off}" if off else "")
            return f"(?{spec}:{inner})"
        return f"(?:{inner})"

    def klass(self, av) -> str:
        parts = []
        negate = ""
        for op, a in av:
            if op is C.NEGATE:
                negate = "^"
            elif op is C.LITERAL:
                parts.append(_char(a, self.dialect))
            elif op is C.RANGE:
                parts.append(f"{_char(a[0], self.dialect)}-{_char(a[1], self.dialect)}")
            elif op is C.CATEGORY:
                if a not in _CATEGORY:
                    raise PatternError(f"unsupported category {a}")
                parts.append(_CATEGORY[a])
            else:
                raise PatternError(f"unsupported class item {op}")
        return f"[{negate}{''.join(parts)}]"

    def item(self, op, av) -> str:
        d = self.dialect
        if op is C.LITERAL:
            return _char(av, d)
        if op is C.NOT_LITERAL:
            return f"[^{_char(av, d)}]"
        if op is C.ANY:
            return "."
        if op is C.IN:
            return self.klass(av)
        if op is C.BRANCH:
            return "(?:" + "|".join(self.seq(alt) for alt in av[1]) + ")"
        if op is C.SUBPATTERN:
            _group, add, dele, sub = av
            saved = self.flags
            self.flags = (saved | add) & ~dele
            try:
                return self._scoped(add, dele, self.seq(sub))
            finally:
                self.flags = saved
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            return f"(?:{self.seq(sub)}){_quant(lo, hi)}"
        if op is C.AT:
            if d == "loose":
                return self._loose_at(av)
            return {
                C.AT_BEGINNING: "^",
                C.AT_BEGINNING_LINE: "^",
                C.AT_BEGINNING_STRING: r"\A",
                C.AT_END: "$",
                C.AT_END_LINE: "$",
                C.AT_END_STRING: r"\z" if d == "hs" else r"\Z",
                C.AT_BOUNDARY: r"\b",
                C.AT_NON_BOUNDARY: r"\B",
            }[av]
        if op in (C.ASSERT, C.ASSERT_NOT):
            if d == "loose" and self.strict and _plain(av[1]):
                inner = _Emitter("py", self.groups, flags=self.flags).seq(av[1])
                if av[0] < 0:
                    return f"(?<={inner})" if op is C.ASSERT else f"(?<!{inner})"
                # A lookahead is decided by the text already seen, unless that text ends within its reach.
                near_end = rf"(?=[\s\S]{{0,{max(_width_hi(av[1]) - 1, 0)}}}\Z)"
                return f"(?:(?={inner})|{near_end})" if op is C.ASSERT else f"(?:(?!{inner})|{near_end})"
            return ""
        if op is C.ATOMIC_GROUP:
            return f"(?:{self.seq(av)})"
        if op is C.GROUPREF:
            return f"(?:{self.seq(self.groups[av])})"
        if op is C.GROUPREF_EXISTS:
            yes = self.seq(av[1])
            no = self.seq(av[2]) if av[2] is not None else ""
            return f"(?:{yes}|{no})"
        raise PatternError(f"unsupported regex construct {op}")


    def _loose_at(self, code) -> str:
        if not self.strict:
            return ""
        if code in (C.AT_BEGINNING, C.AT_BEGINNING_LINE):
            return r"(?:\A|(?<=\n))" if self.flags & re.MULTILINE or code is C.AT_BEGINNING_LINE else r"\A"
        if code is C.AT_BEGINNING_STRING:
            return r"\A"
        if code is C.AT_BOUNDARY:
            return r"(?:\b|\Z)"
        if code is C.AT_NON_BOUNDARY:
            return r"(?:\B|\Z)"
        if code in (C.AT_END, C.AT_END_LINE):
            return r"(?=\n|\Z)"
        if code is C.AT_END_STRING:
            return r"\Z"
        return ""


def _plain(items) -> bool:
    """No assertions nested inside (so the lookbehind can be checked exactly)."""
    for op, av in items:
        if op in (C.ASSERT, C.ASSERT_NOT, C.AT, C.GROUPREF, C.GROUPREF_EXISTS):
            return False
        if op is C.SUBPATTERN and not _plain(av[3]):
            return False
        if op is C.BRANCH and not all(_plain(alt) for alt in av[1]):
            return False
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and not _plain(av[2]):
            return False
        if op is C.ATOMIC_GROUP and not _plain(av):
            return False
    return True


def _quant(lo: int, hi: int) -> str:
    if hi >= _BIG:
        return "*" if lo == 0 else ("+" if lo == 1 else f"{{{lo},}}")
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


_SINGLE = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN)


class _Prefixer:
    """A Python regex matching every prefix of every match (assertions relaxed).

    A zero-width assertion that looks ahead may depend on characters after
    the end of what has been seen, so it is allowed to "consume" up to its
    width of arbitrary characters at the end of a prefix.
    """

    def __init__(self, groups: dict[int, P.SubPattern], flags: int = 0, strict: bool = True):
        self.full = _Emitter("loose", groups, flags=flags, strict=strict)
        self.groups = groups

    def seq(self, items) -> str:
        return self._seq(items)[0]

    def _seq(self, items) -> tuple[str, str]:
        """(P, S): P matches every prefix of a match of ``items`` (the empty one too),
        and ``(?:S)?`` is P. S leaves the empty prefix out where the sequence begins
        with one character (then it is that character and the rest's P), else S is P."""
        items = list(items)
        acc = ""
        some = None  # acc without its empty prefix, when it begins with one character
        for op, av in reversed(items):
            full = self.full.item(op, av)
            if op in _SINGLE:
                some = f"{full}{acc}"
                acc = f"(?:{some})?" if acc else f"{full}?"
                continue
            some = None
            pre = self.item(op, av)
            if not acc:
                acc = pre
            elif full == "":
                acc = f"(?:{pre}|{acc})"
            else:
                acc = f"(?:{pre}|{full}{acc})"
        return acc, acc if some is None else some

    def item(self, op, av) -> str:
        if op in _SINGLE:
            return f"{self.full.item(op, av)}?"
        if op is C.BRANCH:
            # The empty prefix once for the whole branch, not once in each alternative: a
            # regex engine tries every alternative's empty match before it fails a position
            # (the names of env-var-secret: every split of the run, times each suffix).
            return "(?:" + "|".join(self._seq(alt)[1] for alt in av[1]) + ")?"
        if op is C.SUBPATTERN:
            _group, add, dele, sub = av
            flags = _flags_text(add & (re.IGNORECASE | re.DOTALL))
            off = _flags_text(dele & (re.IGNORECASE | re.DOTALL))
            saved = self.full.flags
            self.full.flags = (saved | add) & ~dele
            try:
                inner = self.seq(sub)
            finally:
                self.full.flags = saved
            if flags or off:
                return f"(?{flags}{'-' + off if off else ''}:{inner})"
            return f"(?:{inner})"
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            if hi == 0:
                return ""
            sub = list(sub)
            if len(sub) == 1 and sub[0][0] in _SINGLE:
                one = self.full.item(*sub[0])
                return f"{one}*" if hi >= _BIG else f"{one}{{0,{hi}}}"
            whole = self.full.seq(sub)
            part = self.seq(sub)
            reps = "*" if hi >= _BIG else f"{{0,{hi - 1}}}"
            return f"(?:(?:{whole}){reps}(?:{part}))"
        if op is C.AT:
            if av in (C.AT_END, C.AT_END_LINE):
                return r"\n?"
            return ""
        if op in (C.ASSERT, C.ASSERT_NOT):
            if av[0] < 0:
                return ""  # lookbehind: the text before is already known
            width = _width_hi(av[1])
            return f"[\\s\\S]{{0,{max(width - 1, 0)}}}" if width > 1 else ""
        if op is C.ATOMIC_GROUP:
            return f"(?:{self.seq(av)})"
        if op is C.GROUPREF:
            hi = _width_hi(self.groups[av])
            return f"[\\s\\S]{{0,{hi}}}"
        if op is C.GROUPREF_EXISTS:
            yes = self.seq(av[1])
            no = self.seq(av[2]) if av[2] is not None else ""
            return f"(?:{yes}|{no})"
        raise PatternError(f"unsupported regex construct {op}")


# -- required literals --------------------------------------------------------------

_SMALL = 12  # largest literal set worth tracking


def _cross(a: set[str], b: set[str]) -> set[str]:
    return {x + y for x in a for y in b}


def _expand_item(op, av) -> set[str] | None:
    """Every (lower-cased) string the item can match, when that set is small."""
    if op is C.LITERAL:
        return {chr(av).lower()} if av < 128 else None
    if op is C.IN:
        chars: set[str] = set()
        for kind, a in av:
            if kind is C.LITERAL and a < 128:
                chars.add(chr(a).lower())
            elif kind is C.RANGE and a[1] - a[0] < 4 and a[1] < 128:
                chars.update(chr(c).lower() for c in range(a[0], a[1] + 1))
            else:
                return None
        return chars if len(chars) <= 4 else None
    if op is C.SUBPATTERN:
        return _expand(av[3])
    if op is C.ATOMIC_GROUP:
        return _expand(av)
    if op is C.BRANCH:
        out: set[str] = set()
        for alt in av[1]:
            sub = _expand(alt)
            if sub is None:
                return None
            out |= sub
        return out if len(out) <= _SMALL else None
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        lo, hi, sub = av
        inner = _expand(sub)
        if inner is None or hi > 3:
            return None
        out = set()
        for k in range(lo, hi + 1):
            acc = {""}
            for _ in range(k):
                acc = _cross(acc, inner)
            out |= acc
        return out if len(out) <= _SMALL else None
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return {""}
    return None


def _expand(items) -> set[str] | None:
    acc = {""}
    for op, av in items:
        opts = _expand_item(op, av)
        if opts is None:
            return None
        acc = _cross(acc, opts)
        if len(acc) > _SMALL:
            return None
    return acc


def _lead(items) -> set[str]:
    """Strings one of which every match of ``items`` starts with ({""} if none known)."""
    acc = {""}
    for op, av in items:
        opts = _expand_item(op, av)
        if opts is None:
            inner = _lead_item(op, av)
            new = _cross(acc, inner)
            return new if len(new) <= _SMALL else acc
        new = _cross(acc, opts)
        if len(new) > _SMALL:
            return acc
        acc = new
    return acc


def _lead_item(op, av) -> set[str]:
    if op is C.SUBPATTERN:
        return _lead(av[3])
    if op is C.ATOMIC_GROUP:
        return _lead(av)
    if op is C.BRANCH:
        out: set[str] = set()
        for alt in av[1]:
            out |= _lead(alt)
        return out if len(out) <= _SMALL else {""}
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _lead(av[2])
    return {""}


def _literals(items) -> set[str] | None:
    """Lower-case strings, one of which every match contains; None if unknown."""
    best: set[str] | None = None

    def consider(cand: set[str] | None) -> None:
        nonlocal best
        if not cand or "" in cand:
            return
        if best is None or _score(cand) > _score(best):
            best = cand

    acc = {""}
    for op, av in items:
        opts = _expand_item(op, av)
        if opts is not None:
            new = _cross(acc, opts)
            if len(new) <= _SMALL:
                acc = new
            else:
                consider(acc)
                acc = opts
            continue
        new = _cross(acc, _lead_item(op, av))
        consider(new if len(new) <= _SMALL else acc)
        consider(_inner_literals(op, av))
        acc = {""}
    consider(acc)
    return best


def _inner_literals(op, av) -> set[str] | None:
    if op is C.SUBPATTERN:
        return _literals(av[3])
    if op is C.ATOMIC_GROUP:
        return _literals(av)
    if op is C.BRANCH:
        out: set[str] = set()
        for alt in av[1]:
            sub = _literals(alt)
            if not sub:
                return None
            out |= sub
        return out
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _literals(av[2])
    return None


def _score(cands: set[str]) -> tuple[int, int]:
    return (min(len(s) for s in cands), -len(cands))


def usable_literals(cands: set[str] | None) -> tuple[str, ...] | None:
    """Literals selective enough to prefilter on: 3+ characters, or 2 with a symbol."""
    if not cands:
        return None
    for s in cands:
        if len(s) < 2 or (len(s) == 2 and s.isalnum()):
            return None
    return tuple(sorted(cands))


def secret_heads(regex: re.Pattern, secret_group: int | None) -> tuple[tuple[str, ...], ...]:
    """Sets of strings (lower case) such that every match has, for each set,
    one of its strings whole before the text a finding replaces begins; empty
    if there are none. The stream redactor need not hold back a match in
    progress that lacks one of them yet: the ``://`` of a URL with
    credentials, the ``=`` of an assignment, the keyword of a ``token = ...``
    rule, the ``.atlasv1.`` of a Terraform token. Only the top-level sequence
    is read, up to the item holding the secret group (``secret_group``; None:
    the first group that takes part, so that item must always capture). A
    secret that is the whole match has none."""
    if secret_group == 0 or regex.groups == 0:
        return ()
    return _heads(_top_items(_parsed(regex.pattern, regex.flags), plain=False), secret_group)


@dataclass(frozen=True)
class Alternative:
    """One top-level alternative of a rule's regex, for the stream: its
    ``prefix`` and ``full`` forms (as in ``PatternInfo``) and its secret heads."""

    prefix: str
    full: str
    heads: tuple[tuple[str, ...], ...]


def alternatives(regex: re.Pattern, secret_group: int | None) -> tuple[Alternative, ...]:
    """The top-level ``|`` alternatives of ``regex``, each with its own heads; or
    none when it has no top-level ``|`` (``PatternInfo`` and ``secret_heads``
    then say it all). A rule written as ``<prefixed token>|<name> = <value>``
    has no heads as a whole (its first form's secret starts the match); read
    apart, only that first form can have a secret in progress at a plain
    word, and the second waits for its name and ``=``."""
    flags = regex.flags
    tree = _parsed(regex.pattern, flags)
    items = _top_items(tree, plain=True)
    if len(items) != 1 or items[0][0] is not C.BRANCH:
        return ()
    branches = items[0][1][1]
    heads_of = [() if secret_group == 0 else _heads(list(alt), secret_group) for alt in branches]
    if not any(heads_of):
        return ()  # none waits for a head: apart they would hold what the whole holds
    groups = _group_table(tree)
    scoped = _flag_prefix(flags)
    out = []
    for alt, heads in zip(branches, heads_of):
        forms = _forms(alt, groups, flags, scoped)
        if forms is None:
            return ()  # cannot be written apart: the whole regex stands for them
        out.append(Alternative(*forms, heads))
    return tuple(out)


def _forms(tree, groups, flags, scoped: str, compiles: bool = True) -> tuple[str, str] | None:
    """(prefix, full) of ``tree``: with context-checked assertions, else fully relaxed, the first
    that compiles (None if neither does; ``compiles=False``: the relaxed one regardless)."""
    for strict in (True, False):
        body = _Prefixer(groups, flags, strict).seq(tree)
        loose = _Emitter("loose", groups, flags=flags, strict=strict).seq(tree)
        prefix = f"(?{scoped}:{body})" if scoped else f"(?:{body})"
        full = f"(?{scoped}:{loose})" if scoped else f"(?:{loose})"
        if not compiles:
            if strict:
                continue
            return prefix, full
        try:
            re.compile(prefix + r"\Z", re.ASCII)
            re.compile(full, re.ASCII)
            return prefix, full
        except re.error:
            continue
    return None


def _top_items(tree, plain: bool) -> list:
    """The top-level sequence, inside any non-capturing group around the whole
    pattern (``plain``: only one that sets no flags)."""
    items = list(tree)
    while len(items) == 1 and items[0][0] is C.SUBPATTERN and items[0][1][0] is None \
            and not (plain and (items[0][1][1] or items[0][1][2])):
        items = list(items[0][1][3])
    return items


def _heads(items: list, secret_group: int | None) -> tuple[tuple[str, ...], ...]:
    for k, (op, av) in enumerate(items):
        if _holds_group(op, av, secret_group):
            if secret_group is None and not _always_captures(op, av):
                return ()  # no group may take part: the secret is then the whole match
            break
    else:
        return ()
    # every run of plain characters before the secret is in every match, each one a head
    found = [(run,) for run in _literal_runs(items[:k])] + [_options(op, av) for op, av in items[:k]]
    return tuple(dict.fromkeys(tuple(sorted({x.lower() for x in f})) for f in found if f))


_MAX_OPTIONS = 64  # alternatives an item may have and still serve as a head


def _required_strings(seq) -> tuple[str, ...] | None:
    """The longest run of plain characters in a sequence (one string every match of it contains)."""
    best = max(_literal_runs(seq), key=len, default="")
    return (best,) if best else None


def _literal_runs(seq) -> list[str]:
    """The runs of plain characters in a sequence (every match of it contains each)."""
    runs, run = [], []
    for op, av in seq:
        if op is C.LITERAL:
            run.append(chr(av))
            continue
        if op in (C.ASSERT, C.ASSERT_NOT, C.AT):
            continue  # zero-width: the characters around it are still adjacent
        if run:
            runs.append("".join(run))
            run = []
    if run:
        runs.append("".join(run))
    return runs


def _options(op, av) -> tuple[str, ...] | None:
    """Strings of which every match of this one node contains one: an
    alternation each of whose branches has a run of plain characters, a
    small class of plain characters, a group around such a sequence."""
    if op is C.BRANCH:
        out: list[str] = []
        for alt in av[1]:
            got = _required_strings(alt) or _seq_options(alt)
            if not got:
                return None
            out += got
        return tuple(out) if len(out) <= _MAX_OPTIONS else None
    if op is C.IN and av and all(o is C.LITERAL for o, _ in av) and len(av) <= 8:
        return tuple(chr(a) for _, a in av)
    if op is C.SUBPATTERN and av[0] is None:
        return _required_strings(av[3]) or _seq_options(av[3])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] >= 1 and len(av[2]) == 1:
        (sub_op, sub_av), = av[2]  # at least one of a character or a small class: ``[ \t]{1,8}``
        return (chr(sub_av),) if sub_op is C.LITERAL else _options(sub_op, sub_av)
    return None


def _seq_options(seq) -> tuple[str, ...] | None:
    """The options of the first node of ``seq`` that has some (zero-width nodes skipped)."""
    for op, av in seq:
        got = _options(op, av)
        if got:
            return got
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and av[0] == 0:
            continue
        if op not in (C.ASSERT, C.ASSERT_NOT, C.AT):
            return None
    return None


def _holds_group(op, av, group: int | None) -> bool:
    """Whether this node holds capturing group ``group`` (None: any)."""
    if op is C.SUBPATTERN and av[0] is not None and (group is None or av[0] == group):
        return True
    return any(_holds_group(o, a, group) for child in _children(op, av) for o, a in child)


def _always_captures(op, av) -> bool:
    """Whether every match of this node sets some capturing group."""
    if op is C.SUBPATTERN:
        return av[0] is not None or any(_always_captures(o, a) for o, a in av[3])
    if op is C.BRANCH:
        return all(any(_always_captures(o, a) for o, a in alt) for alt in av[1])
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        return av[0] >= 1 and any(_always_captures(o, a) for o, a in av[2])
    if op is C.ATOMIC_GROUP:
        return any(_always_captures(o, a) for o, a in av)
    return False


def may_begin_beyond_ascii(pattern: str) -> bool:
    """Whether a match of ``pattern`` (compiled with ``re.ASCII``, so case folding
    stays within ASCII) may begin with a non-ASCII character; True when the walk
    meets a construct it does not know, or cannot parse the pattern."""
    try:
        tree = P.parse(pattern, re.ASCII)
    except (re.error, RecursionError, OverflowError):
        return True

    def seq(items) -> tuple[bool, bool]:
        """(may begin with a non-ASCII character, may match empty)."""
        wide = False
        for op, av in items:
            w, empty = item(op, av)
            wide = wide or w
            if not empty:
                return wide, False
        return wide, True

    def item(op, av) -> tuple[bool, bool]:
        if op is C.LITERAL:
            return av > 127, False
        if op in (C.NOT_LITERAL, C.ANY):
            return True, False
        if op is C.IN:
            return _class_beyond_ascii(av), False
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            return False, True
        if op is C.SUBPATTERN:
            return seq(av[3])
        if op is C.ATOMIC_GROUP:
            return seq(av)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            w, empty = seq(av[2])
            return w, empty or av[0] == 0
        if op is C.BRANCH:
            parts = [seq(b) for b in av[1]]
            return any(w for w, _ in parts), any(e for _, e in parts)
        return True, True  # a back-reference, a conditional, anything newer

    return seq(tree)[0]


def _class_beyond_ascii(items) -> bool:
    for op, av in items:
        if op is C.NEGATE:
            return True
        if op is C.LITERAL and av > 127 or op is C.RANGE and av[1] > 127:
            return True
        if op is C.CATEGORY and av not in (C.CATEGORY_DIGIT, C.CATEGORY_SPACE, C.CATEGORY_WORD):
            return True  # \D, \S, \W match every non-ASCII character under re.ASCII
        if op not in (C.LITERAL, C.RANGE, C.CATEGORY):
            return True
    return False
