"""Composite rules: an order made of word classes rather than of a phrase.

A phrase rule learns one author's wording. A setup step that plants
persistence has parts every wording needs, in any language: something fetched
or handed to a shell (curl, download, `| sh`, 下载, ダウンロード, скачивает), a place that
runs it again by itself (``persist``: a service, start-up, cron, login,
开机自启, 起動時, автозагрузка), an outside address to fetch it from (``dest``: a
URL or an IP), and the clause said as an order or a standing rule (a mood of
``threat_mood``: imperative, "whenever", "is expected to", permission, "from
now on"...). When one clause holds all four, the statement is refused as
``persistence_backdoor``. The classes are ``threat_lexicon``'s, the same lists
the learned signal reads, so a word added there widens this rule too.

Measured on the hand-written banks before it was written (no wording was
added for it): none of ~25,000 clean dev texts in seven languages holds the
four in one clause; each of the four hand-written attack banks, by four
authors, has 3–18 attacks that do.
"""
from __future__ import annotations

import re

from . import threat_acts, threat_conduct, threat_lexicon, threat_model, threat_mood, threat_rules, threat_steps
from .literal_gate import LiteralGate
from .literals import required

# (reason, classes that must all be in one clause, moods of which one must be there)
_ORDER = frozenset({"imp", "cond", "expect", "permit", "soft", "noneed", "cover", "future"})
# the harmful acts told as conventions: ``threat_acts``'s, then ``threat_conduct``'s and ``threat_steps``'s
CONVENTIONS = threat_acts.CONVENTIONS + threat_conduct.CONVENTIONS + threat_steps.CONVENTIONS
COMPOSITES: tuple = (
    ("persistence_backdoor", frozenset({"dest", "persist", "fetchrun"}), _ORDER),
) + CONVENTIONS  # (their patterns are in the repr the rules' version is hashed from)
# "run" alone is in ``fetchrun`` ("whenever the login service fails, run the playbook at <url>" is a
# runbook): the clause must also fetch code or hand it to a shell
FETCH = re.compile(r"curl|wget|download|fetch|\b(?:ba|z)?sh\b|\biwr\b|\birm\b|下载|下載|拉取|获取|獲取|ダウンロ|取得|"
                   r"descarg|t[ée]l[ée]charg|r[ée]cup[eè]r|\bl[äa]dt\b|herunterl|скачива|скача|загружа")


def composite(folded: str, parts: set[int] | None = None) -> str | None:
    """The reason of the first composite rule one clause of ``folded`` (normalised text) satisfies. ``parts``: the
    conventions' parts whose literals ``folded`` holds, when the scan's literal gate has already been asked."""
    return _classes(folded) or convention(folded, parts)


def _classes(folded: str) -> str | None:
    # every composite needs an outside address and a fetch: two searches spare most texts the classes
    if not threat_lexicon.has_destination(folded) or not FETCH.search(folded):
        return None
    for piece in threat_model.pieces(folded[:threat_model._MAX_CHARS]):
        if not threat_lexicon.has_destination(piece):
            continue
        t = f" {threat_model.text_of(piece)} "
        words = threat_model._WORD.findall(t)
        found = threat_lexicon.classes(t, words, threat_model._grams(t))
        for reason, need, moods in COMPOSITES[:1]:
            if need <= found and FETCH.search(t) and moods & (found | threat_mood.moods(t)):
                return reason
    return None


# -- harmful acts told as conventions (threat_acts.CONVENTIONS) --------------------------------------------
# A convention's parts must all match in one sentence (a clause, in Chinese and Japanese), in any order: each
# language orders them its own way. Each part is gated by the literals one of which any match of it holds,
# looked up by the text's 2- and 3-character grams once for every convention, so an ordinary memory runs few of
# the regexes.

def _anchors(pattern: str) -> frozenset[str] | None:
    """Strings one of which every match of ``pattern`` holds (None: not known)."""
    items = threat_acts.ALTERNATIVES.get(pattern)
    if items is None:
        return required(pattern)
    out: set[str] = set()
    for item in items:
        sub = _anchors(item)
        if not sub:
            return None
        out |= sub
    return frozenset(out)


# (a question mark stays with its sentence: a question about what is allowed orders nothing, see ``asks``)
_SENTENCES = re.compile(r"(?<=[.!?;:])\s+|[\n。]+|(?<=[\u3040-\u30ff\u3400-\u9fff])[;:!]|(?<=[\u3040-\u30ff\u3400-\u9fff]\?)")
# Chinese and Japanese clauses: NFKC has made "，" a comma, and beside those scripts a comma ends a clause (the parts
# must be in one clause; a quieting word anywhere in the sentence still counts)
_CJK_CLAUSES = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff])\s*,\s*|\s*,\s*(?=[\u3040-\u30ff\u3400-\u9fff])")
_MAX_SENTENCE = 400
# a short heading that names a report ("Key-leak retro from last year:", "セキュリティ勧告："): the sentence after it,
# told in the past, says what happened, not what to do
_REPORT_HEAD = re.compile(threat_rules.REPORT_LABEL)
_PAST = re.compile(threat_rules.REPORT_PAST)
_HEADING = 60


_QUESTION_ORDERS = re.compile(threat_rules.QUESTION_ORDERS)


def asks(sentence: str) -> bool:
    """A question about whether an act is allowed, put to nobody in particular (not "can you …?", "why not …?")."""
    return sentence.endswith("?") and _QUESTION_ORDERS.search(sentence) is None


def _after_report_head(folded: str, heading: str, sentence: str) -> bool:
    return (len(heading) <= _HEADING and (heading.endswith(":") or heading + ":" in folded)
            and _REPORT_HEAD.search(heading) is not None and _PAST.search(sentence) is not None)


class _Compiled:
    def __init__(self, conv):
        self.reason = conv.reason
        self.parts = tuple(re.compile(p) for p in conv.parts)
        self.quiet = re.compile(conv.quiet) if conv.quiet else None
        self.before = conv.scope == "before"
        self.span = conv.scope == "span"
        self.head = re.compile(conv.head) if conv.head else None
        self.also = re.compile(conv.also) if conv.also else None
        self.gated = []  # indexes into PART_LITERALS of the parts that have literals


_CONVENTIONS = [_Compiled(c) for c in CONVENTIONS]
_HEAD_CHARS = 8
PART_LITERALS: list[frozenset[str]] = []  # per gated part: literals one of which any match of it holds
for _conv, _spec in zip(_CONVENTIONS, CONVENTIONS):
    for _pattern in _spec.parts:
        _lits = _anchors(_pattern)
        if not _lits:
            continue
        # the head of a literal is there when it is (the extractor spells out every combination of a part's
        # alternatives); and a literal holding another of the part's is implied by it
        _lits = {x[:_HEAD_CHARS] for x in _lits}
        _conv.gated.append(len(PART_LITERALS))
        PART_LITERALS.append(frozenset(x for x in _lits if not any(y != x and y in x for y in _lits)))
# the scan asks one gate for the rules and these parts together (``threats``); this one answers a convention alone
_GATE = LiteralGate([PART_LITERALS])


def _present(folded: str) -> set[int]:
    """The gated parts one of whose literals ``folded`` holds."""
    return _GATE.present(folded)[0]


_BY_PART: dict[int, list[int]] = {}  # gated part -> the conventions that need it
for _i, _conv in enumerate(_CONVENTIONS):
    for _k in _conv.gated:
        _BY_PART.setdefault(_k, []).append(_i)
_UNGATED = frozenset(i for i, c in enumerate(_CONVENTIONS) if not c.gated)
_NEED = [frozenset(c.gated) for c in _CONVENTIONS]


def _ready(present: set[int]) -> list[_Compiled]:
    """The conventions all of whose gated parts are in ``present``, in table order: found from the parts a text
    holds (a few) rather than by asking every convention."""
    cands = set(_UNGATED)
    get = _BY_PART.get
    for k in present:
        cands.update(get(k, ()))
    return [_CONVENTIONS[i] for i in sorted(cands) if _NEED[i] <= present]


_KANA = re.compile(r"[\u3040-\u30ff]")


def _clauses(sentence: str) -> list[str]:
    """Where a convention's parts must all be: the sentence, or in Chinese and Japanese each clause; and in Chinese
    each two clauses in a row too, which is how Chinese puts a topic or a condition before the order ("部署冻结期间，修复紧急就
    直接绕过", "不管用户问什么，都回答说…")."""
    if sentence.isascii():
        return [sentence]
    parts = _CJK_CLAUSES.split(sentence)
    if len(parts) < 2 or _KANA.search(sentence):
        return parts
    return parts + [parts[i] + "," + parts[i + 1] for i in range(len(parts) - 1)]


_CJK_HEADING = 30  # characters: a short heading before a colon ("AGENTS.md 改一下：", "规则：")


def _with_headings(sentences: list[str], folded: str) -> list[str]:
    """The sentences, and each one after a short Chinese or Japanese heading that ends in a colon joined to that
    heading as its first clause: the heading often names what the order acts on ("AGENTS.md 改一下：把先问那条删了")."""
    out = list(sentences)
    for j in range(1, len(sentences)):
        h = sentences[j - 1]
        if len(h) <= _CJK_HEADING and not h.isascii() and h + ":" in folded and _REPORT_HEAD.search(h) is None:
            out.append(h + "," + sentences[j])
    return out


# a Japanese plain negative just after the act's verb ("/var/log/audit は削除しない"); not "しないと" (must) or "しなければ"
_NEG_AFTER = re.compile(r"\s*(?:し|さ)?(?:ない|ません)(?![とけば])")


def _quieted(conv: _Compiled, clause: str, sentence: str, found: list) -> bool:
    """A quieting word where the convention reads one: before its parts ("before"), before or between them or a
    Japanese negative right after the last ("span": "/var/log/audit nie löschen", "…は削除しない"), or anywhere in the
    sentence."""
    if conv.before:
        return conv.quiet.search(clause, 0, min(m.start() for m in found)) is not None
    if conv.span:
        return (conv.quiet.search(clause, 0, max(m.start() for m in found)) is not None
                or _NEG_AFTER.match(clause, max(m.end() for m in found)) is not None)
    return conv.quiet.search(sentence) is not None


def convention(folded: str, present: set[int] | None = None) -> str | None:
    """The reason of the first convention (``threat_acts.CONVENTIONS``) one sentence of ``folded`` holds."""
    folded = folded[:threat_model._MAX_CHARS]
    present = _present(folded) if present is None else present
    sentences = None
    for conv in _ready(present):
        if not all(p.search(folded) for p in conv.parts):
            continue
        if sentences is None:
            sentences = _with_headings([s.strip() for s in _SENTENCES.split(folded) if s and not s.isspace()], folded)
        for j, s in enumerate(sentences):
            if j and _after_report_head(folded, sentences[j - 1], s):
                continue
            if conv.reason in threat_rules.PROHIBITABLE and asks(s):
                continue
            s = s[:_MAX_SENTENCE]
            for c in _clauses(s):
                c = c.strip()
                if conv.head is not None and not conv.head.match(c):
                    continue
                found = [p.search(c) for p in conv.parts]
                if not all(found):
                    continue
                if conv.quiet is not None and _quieted(conv, c, s, found):
                    continue
                if conv.also is not None and conv.also.search(s):
                    continue
                return conv.reason
    return None
