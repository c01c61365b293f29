"""What a turn asks: the query one recall runs, built from a message.

A real agent turn is not a question: it is a long message (a request with
pasted logs, a stack trace, a file), a tool result, wrapped in what the agent
adds (``agent_text``). The query keeps what can tell one memory from another:

- **terms**, each with a weight: 1, and for a tool-result turn's goal (the
  task's first words) ``GOAL``; identifiers (``parse_body``, ``getUserName``),
  paths and their parts, numbers and versions, names (a capitalised word
  inside a sentence) and quoted strings are **salient**: a long message
  keeps them before plain words of the same rarity (``SALIENT``);
- **substrings**: identifiers, file names and quoted strings, matched in the
  statement itself (``ExhaustedError`` finds ``ResourceExhaustedError``);
- **phrases**: adjacent content words (``support group``), a bonus when a
  statement holds them in that order;
- **focus**: the terms of what the message asks — its questions, its
  requests (``can you…``, ``fix…``, ``please look at…``, ``I want to…``) —
  when it also holds other sentences (context: "the CI keeps failing on the
  integration tests", a pasted log). A memory sharing only the context's
  words shares the message's side remarks, not its subject (``focus_of``).
  Empty when every sentence asks, or none does, or what it asks names fewer
  than ``FOCUS_MIN`` specific words ("how do I fix it?", "who do I add as
  reviewer?" lean on the rest): then all of it is the focus. With ``resumes``
  (``[filters.recall.rank] resumed``, off by default), what a message opening "Back to
  the routing work from before the compaction: …" goes back to is of it (``resumed``);
- **one question**: a message of one sentence that asks (``one_question``),
  or a search of one line that asks nothing ("paris budget invoice",
  ``one_search``), may be answered by several memories, each a part; a
  request, or a question with the task around it, is about one thing
  (``rank.single_out``).

One word the tokenizer gives several terms (an identifier and its parts, an
acronym's plural) is one word to the floor (``units_of``). Latest words that
refer back ("who signs off on this?") are read with what they refer to
(``parse``'s ``context``), a memory still needing a word of their own.

Long messages: only ``max_chars`` characters are read (their start and their
end, where a request and its question usually are), and when more than
``MAX_TERMS`` terms remain, ``select`` keeps the most salient ones — prior
weight times their rarity among the memories the caller may see (the index's
document frequencies) — so that what decides a match is the message's rare
words, not its length. Building a query costs O(the characters read), and a
query is built once per distinct text (``parse`` is cached by content).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from itertools import zip_longest
from typing import Mapping, Sequence

from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.memory_terms import STOPWORDS, query_terms, token_terms
from ctxproxy.store.services.digest import text_sha256
from ctxproxy.store.term_patterns import DIGIT, HYPHENATED, WORD

from .rank import idf, specific_term

MAX_TERMS = 32  # terms of a query that decide (a long message's most salient)
MAX_SUBSTRINGS = 8
MAX_PHRASES = 12
SALIENT = 1.5  # a salient term's edge when a long message's terms are selected
SHORT = 0.5  # a term of one or two characters (``00`` of a timestamp, ``ms``): its edge when selecting
FOCUS_MIN = 2  # specific words what a message asks must name to be its focus (fewer lean on the rest)
GOAL = 0.5  # weight of the goal's terms against the latest words'
CACHE = 512  # queries kept (per process), by the digest of their text
CACHE_BYTES = 1 << 20  # and the bytes they may hold

# Tokens worth a substring lookup: identifiers (snake, camel, dotted, with digits).
_IDENT = re.compile(r"[A-Za-z_][\w.]*[_.\d][\w.]*|[A-Z]?[a-z]+[A-Z][\w]*|[A-Z]{2,}[a-z][\w]*")
_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+")  # services/refund/refund.py, scripts/deploy.sh
_QUOTED = re.compile(r"\"([^\"\n]{3,80})\"|`([^`\n]{3,80})`|(?<![\w])'([^'\n]{3,80})'(?![\w])")
_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+(?:[A-Z][a-z]+)*")  # inside a sentence, capitalised
# Capitalised inside a sentence, yet naming no one thing: "on Sunday", "in May".
_CALENDAR = frozenset("Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May "
                      "June July August September October November December".split())
_WORDS = re.compile(r"[^\W_]+")
_HYPHENED = re.compile(r"(?<![\w-])(?=[\w-]*\d)[A-Za-z]\w*(?:-\w+)+")  # with a digit: redis-sessions-3, kill-v2


@dataclass(frozen=True)
class Query:
    """A built query: weighted terms, substrings, phrases (see the module docstring)."""

    weights: dict[str, float] = field(default_factory=dict)
    salient: frozenset[str] = frozenset()
    substrings: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    text: str = ""  # what it asks (``focus_of``) or else all that was read of it: what the embeddings extra embeds
    strong: frozenset[str] = frozenset()  # salient terms each naming a whole thing: one suffices to recall
    focus: frozenset[str] = frozenset()  # the terms of what it asks, when it says more (empty: all of it)
    temporal: bool = False  # it asks when ("when did…", "what year…", "how long ago…")
    units: Mapping[str, str] = field(default_factory=dict)  # a key's word when one word gave several (``units_of``)
    anchor: frozenset[str] = frozenset()  # with words said before (``parse``'s context): what it asks itself
    # one question (``one_question``) or a search (``one_search``): several memories may each answer a part of it
    question: bool = False

    def __bool__(self) -> bool:
        return bool(self.weights or self.substrings)


def substrings_of(text: str) -> list[str]:
    """Identifiers, paths' file names and quoted strings of ``text`` worth a substring match."""
    found = [x for x in (m.group().strip(".") for m in _IDENT.finditer(text)) if _IDENT.fullmatch(x)]
    # a path's file name (deploy.sh), not its last word (/v1/checkout: the word already matches)
    found += [f for f in (m.group().rsplit("/", 1)[-1] for m in _PATH.finditer(text)) if not f.isalpha()]
    found += [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    found += _word_pairs(text)
    return [s for s in dict.fromkeys(found) if len(s) >= 4][:MAX_SUBSTRINGS]


_SNAKE = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+){2,}")  # three parts or more


def _word_pairs(text: str) -> list[str]:
    """Two adjacent words of a long snake_case identifier, lower-cased: another identifier holding
    them names the same thing (``PARTY_SIZE_NOT_ALLOWED`` and ``MAX_PARTY_SIZE``: ``party_size``;
    ``test_promotion_race_v2`` and ``test_promotion_race``). Words of three letters or more, not
    stop words (``size_not``, ``not_allowed`` name nothing)."""
    out = []
    for m in _SNAKE.finditer(text):
        parts = m.group().lower().split("_")
        out += [f"{a}_{b}" for a, b in zip(parts, parts[1:])
                if a.isalpha() and b.isalpha() and len(a) > 2 and len(b) > 2 and a not in STOPWORDS
                and b not in STOPWORDS]
    return out


def interleave(*groups: Sequence[str], limit: int | None = MAX_SUBSTRINGS) -> tuple[str, ...]:
    """Substrings of several kinds (a turn's identifiers, an output's dotted names, its compound
    names written apart...) within the bound of one lookup: each kind's first, then each kind's
    second, and so on, each once — so a bound the first kinds fill drops no kind whole."""
    taken = dict.fromkeys(s for row in zip_longest(*groups) for s in row if s is not None)
    return tuple(taken)[:limit]


def read(text: str, max_chars: int) -> str:
    """At most ``max_chars`` of ``text``: its start and its end (a long paste's middle left out),
    each line of one shape once (``distinct_lines``)."""
    if len(text) > max_chars:
        head = max_chars * 3 // 5
        start, end = text[:head], text[head - max_chars:]
        cut = start.rfind("\n")  # whole lines, so that a line's shape is its own
        start = start[:cut] if cut > head // 2 else start
        cut = end.find("\n")
        end = end[cut + 1:] if 0 <= cut < len(end) // 2 else end
        text = start + "\n…\n" + end
    return distinct_lines(text) if text.count("\n") > 2 else text


_DIGITS = re.compile(r"\d+")


def distinct_lines(text: str) -> str:
    """``text`` with each line whose shape (its digits aside) was already seen left out: a pasted
    log of a thousand lines of one form says what one of them says, and its timestamps, counters
    and ids are not what the user asks about."""
    seen: set[str] = set()
    out = []
    for line in text.split("\n"):
        shape = _DIGITS.sub("0", line.strip())
        if shape in seen and shape:  # a blank line is kept: it ends a paragraph (a paste's, ``focus_of``)
            continue
        seen.add(shape)
        out.append(line)
    return "\n".join(out)


def _salient_terms(text: str) -> tuple[set[str], set[str]]:
    """The terms of ``text``'s identifiers, paths, numbers, names and quoted strings; and of them
    the **strong** ones, each a whole thing named: a name, a number, an identifier as one term
    (``parse_body``, ``redissession``) — not the parts of a path or of an identifier
    (``services/payments/refunds.py``: ``servic``, ``payment``, ``refund`` are words of a path)."""
    tokens: list[str] = []
    for rx in (_IDENT, _PATH, _NAME):
        tokens += (m.group() for m in rx.finditer(text))
    tokens += (next(g for g in m.groups() if g) for m in _QUOTED.finditer(text))
    hyphened = [m.group() for m in _HYPHENED.finditer(text)]
    tokens += hyphened
    names = {m.group() for m in _NAME.finditer(text)} - _CALENDAR
    out: set[str] = set()
    strong: set[str] = set()
    for tok in dict.fromkeys(tokens):
        ident = _IDENT.fullmatch(tok) or tok in hyphened
        for w in _WORDS.findall(tok) if not ident else [tok]:
            if w.lower() not in STOPWORDS:
                found = token_terms(w)
                out.update(found)
                if ident:
                    parts = query_terms(tok)
                    strong.update(t for t in parts if "_" in t or len(t) > 2 and DIGIT.search(t))
                    if len(parts) > 1 and len(parts[0]) > len(parts[1]) and parts[0].startswith(parts[1]):
                        strong.add(parts[0])  # the parts joined: redis-sessions → redissession
                elif tok in names:
                    strong.update(found)
    # numbers of three digits and more (a port, a version, an id); "00" and "42" of a log line are not
    numbers = {t for t in query_terms(" ".join(m.group() for m in re.finditer(r"\S*\d\S*", text)))
               if len(t) > 2 and DIGIT.search(t)}
    return out | strong | numbers, strong | numbers


def units_of(text: str, substrings: tuple[str, ...] = ()) -> dict[str, str]:
    """Which query keys are one word of the message: an identifier gives its whole and its parts
    (``ClickHouse`` → ``clickhous click hous``, ``iOS`` → ``ios os``, ``listening_sessions``), a
    substring looked up for it (``\x00clickhouse``) is that word again, an acronym's plural is the
    acronym (``gpus gpu``), and a hyphenated word's joined spelling is its last word again
    (``ad-stitcher``: ``adstitcher`` with ``stitcher``; ``ad`` stays a word). A memory naming that
    word holds them all: one observation, not three — the floor counts it once (``rank.match``). A
    part the message also writes as a word of its own stays its own. Only keys of such words are
    mapped (to one of them)."""
    spans = [(m.start(), m.end(), m.group()) for m in HYPHENATED.finditer(text)]
    inside = [(a, b) for a, b, _ in spans]
    alone: set[str] = set()
    groups: list[list[str]] = []
    for m in WORD.finditer(text):
        found = token_terms(m.group())
        if any(a <= m.start() and m.end() <= b for a, b in inside):
            continue  # a part of a hyphenated word: below
        if len(found) == 1:
            alone.add(found[0])
        elif found:
            groups.append(list(found))
    for _, _, word in spans:  # the joined form of a hyphenated word is that pair of words again
        parts = [t for p in word.split("-") for t in token_terms(p) if t not in STOPWORDS]
        if parts:
            groups.append([parts[-1]] + query_terms(word.replace("-", "")))
    for a in _ACRONYMS.findall(text):  # GPUs and GPU: one word
        groups.append([a.lower(), a[:-1].lower()])
    out: dict[str, str] = {}
    for terms in groups:
        head = terms[0]
        members = [head] + [t for t in terms[1:] if t not in alone and t != head]
        if len(members) < 2:
            continue
        root = next((out[t] for t in members if t in out), head)
        for t in members:
            out.setdefault(t, root)
    inside: dict[str, str] = {}  # two words of a longer identifier (``_word_pairs``): that identifier's word
    for sub in substrings:
        whole = next((w for w in substrings if len(w) > len(sub) and sub in w.lower()), None)
        if whole is not None:
            inside[sub] = whole
    for sub in [s for s in substrings if s not in inside] + list(inside):
        if sub in inside:
            if "\x00" + inside[sub].lower() in out:
                out["\x00" + sub.lower()] = out["\x00" + inside[sub].lower()]
        elif WORD.fullmatch(sub) or HYPHENATED.fullmatch(sub):  # an identifier looked up is that identifier's word
            terms = query_terms(sub.replace("-", "")) if "-" in sub else list(token_terms(sub))
            if terms:
                out["\x00" + sub.lower()] = out.setdefault(terms[0], terms[0])
    return out


def _phrases(text: str) -> list[str]:
    """Pairs of adjacent content words, lower-cased, in order."""
    words = text.lower().split()
    out = []
    for a, b in zip(words, words[1:]):
        a, b = a.strip(".,;:!?\"'()[]"), b.strip(".,;:!?\"'()[]")
        if a.isalpha() and b.isalpha() and len(a) > 2 and len(b) > 2 and a not in STOPWORDS \
                and b not in STOPWORDS:
            out.append(f"{a} {b}")
    return list(dict.fromkeys(out))[:MAX_PHRASES]


# Sentences end at . ? ! followed by a space (not inside ``refunds.py`` or ``12.50``), or at a line break.
_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")
_CLAUSE = re.compile(r"[,;:]\s+")
# Words that open a request (after "please", "now", "and"...): the imperative's verb or an ask.
_ASKS = frozenset("""
add adjust apply avoid build bump call change check clean compare configure convert create debug decide delete
deploy describe diagnose disable document draft edit enable ensure explain figure find fix follow generate give
go handle help implement improve install investigate keep list look make migrate move open point port prepare
print read refactor remove rename replace rerun reset restore return review rewrite roll run send set show split
start stop suggest summarise summarize tell test trace try turn update upgrade use verify write
""".split())
_OPENERS = frozenset("please now next then and also so just first ok okay".split())
_ASK_PREFIXES = ("can you ", "could you ", "would you ", "will you ", "can we ", "could we ", "should we ",
                 "should i ", "i want ", "i'd like ", "i would like ", "i need ", "we need ", "help me ",
                 "let's ", "have a look ", "take a look ", "walk me through ")


def _asks(clause: str) -> bool:
    """Whether a clause is a request: it opens with an ask ("can you", "I want") or an imperative's verb."""
    words = clause.lower().split()
    while words and words[0].strip(".,:;!") in _OPENERS:
        words = words[1:]
    if not words:
        return False
    rest = " ".join(words) + " "
    return rest.startswith(_ASK_PREFIXES) or words[0].strip(".,:;!") in _ASKS


def one_question(text: str) -> bool:
    """Whether ``text`` is one question: it ends with ``?`` and says no other sentence of three words
    or more (a line of a paste is one; "Thanks! Which port does staging use?" is one question).
    A request, even of one sentence ("fix the failing DST test, don't just change the
    assertion"), is not: it is about one thing to do."""
    return text.rstrip().endswith("?") and sum(1 for s in _SENTENCE.split(text) if len(s.split()) > 2) <= 1


def one_search(text: str) -> bool:
    """Whether ``text`` is a search: one line of one sentence that neither asks nor requests
    ("paris budget invoice", "Kestrel", "kafka consumer lag on the replica"). Like a question,
    it is answered by every memory that passes, not by the one its words single out."""
    text = text.strip()
    return (bool(text) and "\n" not in text and not text.endswith("?") and not _asks(text)
            and sum(1 for s in _SENTENCE.split(text) if s.strip()) <= 1)


_PARAGRAPH = re.compile(r"\n\s*\n")
_PROSE_END = re.compile(r"[.?!)\"'`]\s*$")


def _pasted(paragraph: str) -> bool:
    """Whether a paragraph is a paste (a log, a trace, a shell's output): lines of which none ends as
    a sentence does. A log's ``write /usr/lib/…: no space left`` or ``Build teardown`` is what a
    program said, not a request."""
    lines = [line for line in paragraph.strip().split("\n") if line.strip()]
    return len(lines) > 1 and not any(_PROSE_END.search(line) for line in lines)


# A message opening with what it goes back to: "Back to the routing work from before the compaction: …",
# "Following up on the telehealth work: …", "Re the UI tweaks from earlier: …" (re, on, about: before a colon).
_RESUMES = re.compile(r"^\s*(?:(?:ok|okay|so|right|alright)\b[,.!]?\s+)?(?:(?:(?:going|coming|getting)\s+)?back\s+to"
                      r"|follow(?:ing)?[\s-]+up\s+on|continuing\s+(?:with|on)|picking\s+up"
                      r"|(?P<topic>re|on|about|regarding))\s+(?P<subject>[^:.;?!\n\u2014]{3,80}?)\s*"
                      r"(?P<end>[:.;?!\n\u2014]|\s-\s|$)", re.I)
# ...the words after its subject say when it was said, not what: "…from before the summary", "…we discussed"
_SAID_WHEN = re.compile(r"(?:^|\s+)(?:from|after|before|that|which|we|i|you)\b.*$", re.I)


def resumed(text: str) -> str:
    """The subject a message says it goes back to ("Back to the routing work from before the compaction:
    the solver now…" → "the routing work"), '' when it opens otherwise. A lead-in of "re", "on" or
    "about" counts before a colon only ("On the load test plan from the pending list: …", not "On the
    tablet check-in screen, make…")."""
    m = _RESUMES.match(text)
    if not m or m.group("topic") and m.group("end") != ":":
        return ""
    return _SAID_WHEN.sub("", m.group("subject")).strip()


def focus_of(text: str, resumes: bool = False) -> str:
    """What ``text`` asks: its questions (sentences ending in ``?``) and its requests (a sentence from
    the clause that opens with an ask or an imperative on: "…, please look at X; it should use Y");
    '' when that is all of it or none of it (then all of it is the focus). ``resumes``: what a
    message opening "Back to the routing work…" goes back to is asked about too (``resumed``)."""
    asked, other = [], False
    if resumes and (subject := resumed(text)):
        asked.append(subject)
    prose = "\n\n".join(p for p in _PARAGRAPH.split(text) if not _pasted(p))
    other = prose != text.strip()
    for sentence in _SENTENCE.split(prose):
        sentence = sentence.strip()
        if not sentence:
            continue
        if sentence.endswith("?"):
            asked.append(sentence)
            continue
        clauses = _CLAUSE.split(sentence)
        first = next((i for i, clause in enumerate(clauses) if _asks(clause)), len(clauses))
        other = other or any(c.strip() for c in clauses[:first])
        asked += clauses[first:]
    return "\n".join(asked) if asked and other else ""


# A question about time: its answer is a statement that says when.
_WHEN = re.compile(r"\b(?:when|what (?:year|month|date|day|time)|which (?:year|month|date|day)|how long(?: ago)?"
                   r"|since when|how many (?:years|months|weeks|days))\b", re.I)


# An acronym's plural (``GPUs``, ``PRs``, ``A100s``): the tokenizer reads its case change as a word
# boundary (``gp``, ``us``); it is the acronym, as a memory naming one writes it (``GPU``, ``A100``).
_ACRONYMS = re.compile(r"\b[A-Z][A-Z\d]*[A-Z\d]s\b")


def _acronym_plurals(text: str, words: list[str]) -> list[str]:
    """``words`` with each acronym's plural read as the acronym (and its plural), not as its
    case-split pieces — unless the message also writes a piece as a word of its own."""
    found = _ACRONYMS.findall(text)
    if not found:
        return words
    alone = {t for m in WORD.finditer(text) if not _ACRONYMS.fullmatch(m.group())
             for t in token_terms(m.group())}
    pieces = {t for a in found for t in token_terms(a)[1:]} - alone
    folded = [t for a in found for t in (a[:-1].lower(), a.lower())]
    return list(dict.fromkeys([t for t in words if t not in pieces] + folded))


# Plain words joined by a slash ("which bucket/table is it?", "cannot update/delete rows"): alternatives, not a path.
_ALTERNATIVES = re.compile(r"[A-Za-z]{3,}/[A-Za-z]{3,}")


def _where(m: re.Match) -> str:
    """A path in what a message asks, left out (it says where, not what); words written as
    alternatives kept."""
    return m.group() if _ALTERNATIVES.fullmatch(m.group()) else " "


def _named(m: re.Match) -> str:
    """A path in a question: the file it names (``agronomy-py/yield/clean.py`` asks about ``clean``),
    not its folders (``pricing/`` is where many files are)."""
    return _where(m) if _ALTERNATIVES.fullmatch(m.group()) else m.group().rsplit("/", 1)[-1].split(".")[0]


def _build(text: str, resumes: bool = False) -> Query:
    words = _acronym_plurals(text, query_terms(text))
    if not words:
        return Query(text=text)
    salient, strong = _salient_terms(text)
    plurals = {a[:-1].lower() for a in _ACRONYMS.findall(text)}
    salient, strong = salient | plurals, strong | {t for t in plurals if DIGIT.search(t)}
    asked = focus_of(text, resumes)
    # a path in a request says where to look, not what is asked; a question asks about its file
    focus = frozenset(query_terms("\n".join(_PATH.sub(_named if a.endswith("?") else _where, a)
                                             for a in asked.split("\n")))) & set(words)
    if sum(map(specific_term, focus)) < FOCUS_MIN:  # "who do I add as reviewer?": the rest says of what
        focus, asked = frozenset(), ""
    subs = tuple(substrings_of(text))
    return Query(dict.fromkeys(words, 1.0), frozenset(salient & set(words)), subs,
                 tuple(_phrases(text)), asked or text, frozenset(strong & set(words)), focus,
                 bool(_WHEN.search(asked or text)), units_of(text, subs),
                 question=one_question(text) or one_search(text))


_cache = ByteLRU(CACHE_BYTES, "parsed queries", max_entries=CACHE)


def _parsed(text: str, resumes: bool = False) -> Query:
    key = text_sha256(text) + ("+resumes" if resumes else "")
    hit = _cache.get(key)
    if hit is not None:
        return hit
    q = _build(text, resumes)
    _cache.put(key, q)
    return q


# Words that stand for something said before: "who signs off on this?", "roll it out".
_BACK = re.compile(r"\b(?:it|this|these|those|them)\b", re.I)


def refers_back(text: str) -> bool:
    """Whether what ``text`` asks (``focus_of``, else all of it) names something said before it
    ("who has to sign off on this before I open the PR?")."""
    return bool(_BACK.search(focus_of(text) or text))


def parse(latest: str, goal: str = "", max_chars: int = 2000, context: str = "", resumes: bool = False) -> Query:
    """The query of a turn: the user's latest words, and (a tool-result turn) the
    task's goal at ``GOAL`` weight; each read up to ``max_chars``. ``context``: what
    latest words that refer back (``refers_back``) refer to — the user's words before
    them, or the summary a compacted conversation continues from —, at ``GOAL`` weight
    too; it names what "this" is, and a memory must still hold a word of what the latest
    words ask (``anchor``): the words before do not make a subject of their own. ``resumes``: what
    latest words opening "Back to the routing work…" go back to is of what they ask (``resumed``)."""
    q = _parsed(read(latest, max_chars), resumes)
    if not goal.strip() and context.strip() and q:
        out = parse(latest, context, max_chars, resumes=resumes)
        return replace(out, anchor=frozenset(q.focus or q.weights))
    if not goal.strip() or goal.strip() == latest.strip():
        return q
    g = _parsed(read(goal, max_chars))
    weights = dict(q.weights)
    for t, w in g.weights.items():
        weights.setdefault(t, w * GOAL)
    focus = (q.focus or frozenset(q.weights)) | (g.focus or frozenset(g.weights)) if q.focus or g.focus \
        else frozenset()
    return Query(weights, q.salient | g.salient, tuple(dict.fromkeys(q.substrings + g.substrings))[:MAX_SUBSTRINGS],
                 tuple(dict.fromkeys(q.phrases + g.phrases))[:MAX_PHRASES], q.text + "\n" + g.text,
                 q.strong | g.strong, focus, q.temporal, {**g.units, **q.units}, question=q.question)


def select(q: Query, df: Mapping[str, int], n_docs: int, limit: int = MAX_TERMS) -> Query:
    """The ``limit`` most salient terms: weight × rarity among the visible
    memories (``df``), × ``SALIENT`` for identifiers, paths, numbers, names and
    quoted strings; a term no visible memory holds cannot match and goes."""
    if len(q.weights) <= limit:
        return q
    n = max(n_docs, 1)
    ranked = sorted((t for t in q.weights if df.get(t, 0) > 0),
                    key=lambda t: -q.weights[t] * idf(n, df[t]) * (SALIENT if t in q.salient else SHORT if len(t) < 3
                                                                   else 1.0))
    keep = set(ranked[:limit])
    return replace(q, weights={t: w for t, w in q.weights.items() if t in keep})
