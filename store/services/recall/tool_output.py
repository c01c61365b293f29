"""What a tool's output adds to a turn's query: its rare identifiers, never its words.

A tool-result turn's user words often do not name what the answer hangs on:
the command's output does (``Could not connect to http://localhost:4566/``,
``KEY_ID = 'whk-2026-08'``, ``--max-depth``). An output is long and noisy
(logs, listings, stack traces), so only the tokens that name one thing are
read from it:

- identifiers as one term: ``LOCALSTACK_HOST``, ``key_id``, ``parse_body``
  (an underscore), a hyphened or dotted name joined (``redis-cache-1`` →
  ``rediscach``, ``--max-depth`` → ``maxdepth``), a word with a digit
  (``e731``, ``a100``);
- numbers of three digits or more given as a value — ``host:port``,
  ``KEY=value``, after "port" — not a year, a count, a size or a file's
  line (``api.py:1088``): a number alone in a log is a coincidence;

never a plain word, a name or a piece of an identifier. The output is read
once, as a message is (``query.read``: at most ``max_chars``, its start and
end, each line shape once), so a log of a thousand lines costs what one of
them does; ``names_of`` takes every kind of name from that one text.

``rare`` then keeps, of those, only what some memory the caller may see holds
and few of them do: a term no visible memory holds cannot recall anything,
and one most of them hold tells none apart.

``pointers`` gives what the output's recall looks up: those identifiers (one
made of words most memories hold, ``claim_id``, left out), and as substrings
its dotted names, its versioned names without their version
(``claims.status.v2`` → ``claims.status.v``) and its compound names written
apart (``card_number`` → "card number", ``priya.raman`` → "priya raman"), as a
memory writes them.
``holding_a_turn_word`` keeps, of the memories those alone recall, the ones
that also hold a specific word of the turn's — or of what the agent searched the
output for (``searched_for``: a grep's pattern, ``rg -n "SLOT"`` → ``SLOT``), which
names what the turn needs as the user's words would.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, Sequence

import orjson

from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.memory_terms import STOPWORDS, query_terms
from ctxproxy.store.services.digest import text_sha256
from ctxproxy.store.term_patterns import DIGIT, HYPHENATED

from .query import interleave, read
from .rank import own_terms, specific_term

MAX_TERMS = 8  # identifiers of one output that join the query (its rarest)
RARE_SHARE = 0.02  # a term held by more than this share of the visible memories (and...)
RARE_MIN = 2  # ...more than this many) tells none apart: it does not join
CACHE_BYTES = 256 << 10  # what outputs name (``names_of``), by the digest of what was read

_TOKEN = re.compile(r"[A-Za-z0-9_][\w.:/@-]*[\w]")  # a run of identifier characters
_YEAR = re.compile(r"(?:19|20)\d\d")
_PORT = re.compile(r"\bport\b\W{0,3}(\d{2,5})\b", re.I)
_MAY_NAME = re.compile(r"[_\d-]")  # what a piece needs to name a whole thing (else: a word)
_cache = ByteLRU(CACHE_BYTES, "recall: what tool outputs name", max_entries=512)


def output_text(output: str) -> str:
    """What a tool said: Codex wraps a shell's output as JSON (``{"output": ..., "metadata":
    {"exit_code": 0}}``), whose keys are the wrapper's, not the tool's. The effects ledger
    and checkpoint read a shell's output through this too."""
    if output.lstrip().startswith("{") and '"output"' in output:  # no key of that name: nothing to parse
        try:
            value = orjson.loads(output)
        except orjson.JSONDecodeError:
            return output
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            return value["output"]
    return output


@dataclass(frozen=True, slots=True)
class OutputNames:
    """What one read of a tool's output names, each in order of first appearance."""

    identifiers: tuple[str, ...]  # the terms of its identifiers and numbers given as values
    dotted: tuple[str, ...]  # its dotted names of three labels or more (``dotted_names``)
    stems: tuple[str, ...]  # its versioned names without their version (``version_stems``)
    apart: tuple[str, ...]  # its compound names written apart (``apart_names``)


def names_of(output: str, max_chars: int = 2000) -> OutputNames:
    """What ``output`` names (see the module docstring): it is read once (``output_text``,
    ``query.read``: at most ``max_chars``) and each kind of name taken from that text;
    remembered by the digest of what was read."""
    text = read(output_text(output), max_chars)
    key = text_sha256(text)
    hit = _cache.get(key)
    if hit is None:
        hit = OutputNames(identifiers(text), dotted_names(text), version_stems(text), apart_names(text))
        _cache.put(key, hit)
    return hit


def identifiers(text: str) -> tuple[str, ...]:
    """The terms of ``text``'s identifiers and numbers given as values (see the module
    docstring), in order of first appearance."""
    out: dict[str, None] = {}
    for token in dict.fromkeys(m.group() for m in _TOKEN.finditer(text)):
        if token.isalpha():
            continue  # a plain word names nothing whole (and most of a log is words)
        for t in _whole_terms(token):
            out.setdefault(t)
    for m in _PORT.finditer(text):  # "listening on port 8080", "--port 8080"
        if len(m.group(1)) > 2:
            out.setdefault(m.group(1))
    return tuple(out)


_DOTTED = re.compile(r"(?<![\w.-])[A-Za-z0-9][\w-]*(?:\.[A-Za-z0-9][\w-]*){2,}(?![\w-])")  # three labels or more
MAX_NAMES = 4  # dotted names of one output looked up as substrings (and as many versioned names' stems)


def dotted_names(text: str) -> tuple[str, ...]:
    """``text``'s dotted names of three labels or more (a host, ``ingest.fleet.internal``;
    a module path), lower-cased, to be looked up as substrings: the index holds their
    words, not the name. An address of digits only (``127.0.0.1``) names nothing."""
    out: dict[str, None] = {}
    for m in _DOTTED.finditer(text):
        name = m.group().lower().strip(".")
        if any(not label.isdigit() for label in name.split(".")) and not DIGIT.fullmatch(name[:1] or "x"):
            out.setdefault(name)
        if len(out) >= MAX_NAMES:
            break
    return tuple(out)


# One name written as one token: snake_case, camelCase, kebab-case (``card_number``, ``R2_BUCKET``).
_COMPOUND = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:(?:[_-]+|(?<=[a-z0-9])(?=[A-Z]))[A-Za-z][A-Za-z0-9]*)+")
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z0-9]+(?![a-z])|\d+")
# A name of two labels or more with a version at its end (``claims.status.v2``, ``orders_events_v7``; not
# ``episodes_v7``): its stem, the version left out.
_VERSIONED = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z][A-Za-z0-9]*)+[._-]v)\d+\b")
MAX_APART = 4  # compound names of one output looked up written apart


# Two words joined by a dot: an attribute (``inverter.serial``), a handle (``priya.raman``); not a file.
_DOTTED_PAIR = re.compile(r"(?<![\w.])[A-Za-z]{3,}\.[A-Za-z]{3,}(?![\w.])")


def apart_names(text: str) -> tuple[str, ...]:
    """``text``'s compound names written apart, lower-cased, to be looked up as substrings: a
    memory writes the words the identifier joins (``card_number`` → "card numbers are never
    stored", ``R2_BUCKET`` → "the R2 bucket", ``national_id`` → "national ID numbers";
    ``inverter.serial`` → "inverter serial numbers", ``priya.raman`` → "Priya Raman's team").
    Two to four pieces, each of two characters or more, one a word of three letters or more, not
    all stop words; a file's name (``values.yaml``) is none."""
    out: dict[str, None] = {}
    found = [m for m in _COMPOUND.finditer(text)]
    found += [m for m in _DOTTED_PAIR.finditer(text) if not _CODE_FILE.search(m.group())]
    for m in sorted(found, key=lambda m: m.start()):
        pieces = [p.lower() for p in _PIECES.findall(m.group())]
        if not 2 <= len(pieces) <= 4 or any(len(p) < 2 for p in pieces) \
                or not any(len(p) > 2 and p.isalpha() for p in pieces) or all(p in STOPWORDS for p in pieces):
            continue
        out.setdefault(" ".join(pieces))
        if len(out) >= MAX_APART:
            break
    return tuple(out)


def version_stems(text: str) -> tuple[str, ...]:
    """``text``'s versioned names without their version, lower-cased, to be looked up as
    substrings: a config naming ``claims.status.v2`` points at the memory that says which
    version is current (``claims.status.v3``)."""
    found = (m.group(1).lower() for m in _VERSIONED.finditer(text))
    return tuple(dict.fromkeys(found))[:MAX_NAMES]


DocFreqs = Callable[[list[str]], "tuple[int, Mapping[str, int]]"]
PART_SHARE = 0.1  # an identifier's word held by at most this share of the visible memories names something


def pointers(output: str, named: Collection[str], doc_freqs: DocFreqs, max_chars: int = 2000
             ) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """What ``output`` points at that the user's words (``named``: their query's terms) do not
    already name: its rare identifiers (``identifiers``, ``rare``) — one made of words only
    common ones (``claim_id`` where most memories are about claims: a field every record has)
    left out —, and the names to look up as substrings: dotted names and versioned names' stems,
    then apart the compound names written apart (one whose words the user's words all name, or
    one of whose words no visible memory holds, left out): ``(terms, names, apart)``.
    ``doc_freqs(keys)``: the number of visible memories and the keys' visible document
    frequencies (one read of the index, none when the output names nothing)."""
    output_names = names_of(output, max_chars)
    found = tuple(t for t in output_names.identifiers if t not in named)
    words = {a: [t for t in query_terms(a) if t not in STOPWORDS] for a in output_names.apart}
    words = {a: ws for a, ws in words.items() if ws and not all(t in named for t in ws)}
    parts = {t: [p for p in query_terms(t)[1:] if p.isalpha() and len(p) > 2] for t in found}
    parts.update((a, [t for t in ws if t.isalpha() and len(t) > 2]) for a, ws in words.items())
    terms: list[str] = []
    apart: list[str] = []
    if parts:
        n, df = doc_freqs(list(dict.fromkeys([*found, *(p for ps in parts.values() for p in ps)])))
        common = max(RARE_MIN, PART_SHARE * n)

        def names_one(key: str) -> bool:  # one of its words is not what most memories are about
            return any(df.get(p, 0) <= common for p in parts[key])

        terms = [t for t in rare(found, df, n) if len(query_terms(t)) < 2 or names_one(t)]
        # written apart, each of its words must be some visible memory's: else it matches only inside a longer
        # word ("media dev" in "media development"), a coincidence, and is not looked up
        apart = [a for a in words if names_one(a) and all(df.get(p, 0) > 0 for p in parts[a])]
    names = interleave(output_names.dotted, output_names.stems, limit=None)
    return terms, names, tuple(a for a in apart if a not in names)


def holding_a_turn_word(items: Sequence[Any], words: Collection[str]) -> list[Any]:
    """Of the memories an output points at, those that also hold a specific word of the turn's
    (``words``: its query's terms): one that shares none is about the thing the output names,
    not what the turn asks ("test is failing, fix it" and a test naming ``travel_distance``:
    not the memory explaining how travel distance is computed)."""
    asked = {t for t in words if specific_term(t)}
    return [s for s in items if not own_terms(s.cand).isdisjoint(asked)]


_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"})
_VALUED_FLAGS = frozenset({"-A", "-B", "-C", "-m", "-g", "-t", "-T", "--glob", "--type", "--max-count",
                           "--include", "--exclude", "--context", "--after-context", "--before-context"})


def searched_for(calls: Sequence[Any]) -> str:
    """What the tool calls that gave an output searched it for: a search tool's ``pattern``
    (Claude Code's Grep), or the pattern of each ``grep``/``rg``/``ag``/``ack``/``git grep`` in a
    shell command (``{"command": "rg -n \"SLOT\" scheduler/settings.py"}``, Codex's
    ``["bash", "-lc", "…"]``). The agent looks for what the turn needs ("make these log lines
    compliant": ``grep -n 'serial'``), so the pattern is a word of the turn. Never the command's
    paths or other words: ``pytest tests/test_travel.py`` names what failed, not what is asked."""
    out: list[str] = []
    for args in calls:
        if not isinstance(args, Mapping):
            continue
        if isinstance(args.get("pattern"), str):
            out.append(args["pattern"])
        command = args.get("command", args.get("cmd"))
        if isinstance(command, (list, tuple)):
            command = " ".join(str(c) for c in command)
        if isinstance(command, str):
            out += _patterns(command)
    return "\n".join(out)


# Shell words: a quoted string (its quotes dropped below), a run of pipes and separators, or a bare word.
_SHELL_WORD = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|[|;&]+|[^\s|;&'\"]+")
_SEARCHER = re.compile(r"(?<![\w-])(?:e?grep|fgrep|rg|ag|ack)(?![\w-])")


def _patterns(command: str) -> list[str]:
    """The search patterns of a shell command's greps (each first argument that is no flag, or
    an ``-e`` / ``--regexp`` value). A command naming no search tool is not split at all."""
    command = command[:2000]
    if not _SEARCHER.search(command):
        return []
    tokens = [t[1:-1] if len(t) > 1 and t[0] == t[-1] and t[0] in "'\"" else t for t in _SHELL_WORD.findall(command)]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        name = tokens[i].rsplit("/", 1)[-1]
        if name == "git" and i + 1 < len(tokens) and tokens[i + 1] == "grep":
            name, i = "git-grep", i + 1
        i += 1
        if name not in _SEARCHERS:
            continue
        while i < len(tokens) and tokens[i].strip("|;&"):
            tok = tokens[i]
            if tok in ("-e", "--regexp") and i + 1 < len(tokens):
                out.append(tokens[i + 1])
                break
            if tok.startswith("-"):
                i += 2 if tok in _VALUED_FLAGS else 1
                continue
            out.append(tok)
            break
    return out


def _whole_terms(token: str) -> list[str]:
    """The terms of one token that each name a whole thing (its pieces left out)."""
    out = []
    before = ""  # the piece and the separator before this one
    for piece, sep in zip(*[iter(re.split(r"([/:@=]+)", token) + [""])] * 2):
        # a path, a URL, host:port, flag=value: each piece its own
        prev, before = before, piece + sep
        piece = piece.strip(".-_")
        if piece.isdigit():  # a number counts as a value: host:port, KEY=value; not a count, a line, a size
            if _value_sized(piece) and _valued(prev):
                out.append(piece)
            continue
        if not piece or piece[0].isdigit() or not _MAY_NAME.search(piece):
            continue  # a time, a date, a size (2026-12-01T07, 12.31s); a plain or dotted word
        for t in query_terms(piece):
            if "_" in t.strip("_") and len(t) > 3:
                out.append(t)  # an identifier as one term: localstack_host, key_id
            elif t.isdigit():
                if _value_sized(t):
                    out.append(t)  # a port, an error code; not a year
            elif len(t) > 2 and t[0].isalpha() and DIGIT.search(t) and t not in STOPWORDS:
                out.append(t)  # e731, a100 (not 31s, 11z: a number and its unit)
        for m in HYPHENATED.finditer(piece):  # as the index joins a hyphened name: redis-cache → rediscach
            joined = query_terms(m.group().replace("-", ""))
            if joined and len(joined[0]) > 3:
                out.append(joined[0])
    return out


def _value_sized(number: str) -> bool:
    """Whether a number is long enough to be a port or a code (three digits or more) and is not a year."""
    return len(number) > 2 and not (len(number) == 4 and _YEAR.fullmatch(number))


_CODE_FILE = re.compile(r"\.(?:py|pyi|js|jsx|ts|tsx|go|rb|rs|java|kt|c|h|cc|cpp|hpp|cs|php|swift|scala|sh|sql|"
                        r"html|css|scss|vue|txt|log|md|json|ya?ml|toml|ini|cfg|xml|csv|lock)$", re.I)


def _valued(prev: str) -> bool:
    """Whether a number after ``prev`` (the piece before it and their separator) is a value
    (``localhost:4566``, ``PORT=4566``), not a line of a file (``api.py:1088``)."""
    if not prev or prev[-1] not in ":=" or prev.endswith("://"):
        return False
    return not _CODE_FILE.search(prev.rstrip(":="))


def rare(terms: tuple[str, ...], df: Mapping[str, int], n_docs: int, limit: int = MAX_TERMS) -> list[str]:
    """Of ``terms``, those some visible memory holds and few do (``df``: their visible
    document frequencies over ``n_docs``), at most ``limit``, rarest first."""
    most = max(RARE_MIN, int(RARE_SHARE * n_docs))
    held = [t for t in terms if 0 < df.get(t, 0) <= most]
    return sorted(held, key=lambda t: (df[t], terms.index(t)))[:limit]
