"""The memory gate's content threat scan: ``scan(text) -> Threat | None``.

A memory is injected into every later session, so a statement that carries
instructions for the model (or a way to smuggle them) is refused, not stored.
The scan, in order:

1. Invisible characters on the raw text — zero-width, bidi controls, Unicode
   tag characters, variation-selector smuggling, C0/C1 controls — are
   reported (reason ``invisible_unicode``), never stripped: a memory whose
   visible text differs from what the model reads is refused whole. Emoji
   ZWJ sequences, flag tag sequences and ZWNJ inside scripts that need it
   pass.
2. NFKC + case folding (full-width and compatibility forms fold to ASCII),
   then the rule table (``threat_rules.RULES``), one combined regex per
   reason, compiled once.
3. Homoglyphs: a word mixing Latin with Cyrillic/Greek look-alikes is refused
   (``homoglyph``); the text with look-alikes mapped to Latin is scanned too.
4. Encodings: base64 / hex / ``\\x`` escapes / percent-encoding / HTML
   entities that decode to a threat, rot13 or reversed text when the text
   says so, leetspeak and spaced-out letters (``encoded_payload``).
5. When no rule found anything, the learned signal (``threat_model``): a
   linear model over the character and word n-grams of the normalised text,
   for wording the rules were not written for (``learned_classifier``).

Pure function, no I/O; never raises on any ``str``.
"""
from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import html
import re
import unicodedata
from typing import NamedTuple
from urllib.parse import unquote

from . import threat_compose, threat_model
from .threat_acts import ACT_RULES, NEEDS
from .literal_gate import LiteralGate
from .literals import requirements
from .threat_rules import (PROHIBITABLE, PROHIBITION_AFTER, PROHIBITION_BEFORE, PROHIBITION_WITHIN, QUESTION_ORDERS,
                           QUOTABLE, QUOTE_CUE, QUOTE_PAIRS, REFUSABLE, REFUSAL, REPORT_VERB, REPORTER, REQUEST_AFTER,
                           REQUEST_BEFORE, RULES, NEED_AFTER, NEED_BEFORE, ASK_FIRST, ASK_WAIVED)


class Threat(NamedTuple):
    reason: str   # stable category slug (see REASONS)
    message: str  # what was found; never echoes the statement's text


# Reason slug -> what the message says. Order is the order of checks.
REASONS: dict[str, str] = {
    "invisible_unicode": "invisible or bidi-control characters",
    "instruction_override": "text tells the model to ignore or replace its instructions",
    "role_hijack": "text tries to give the model a new role or persona",
    "concealment": "text tells the model to hide something from the user",
    "system_prompt_override": "text fakes, replaces or asks for the system prompt",
    "exfiltration": "text sends data to an outside address (command, link or image beacon)",
    "credential_read": "text reads credential or key files or asks for secrets",
    "agent_config_edit": "text edits the agent's rule, memory, hook or MCP configuration",
    "safeguard_off": "text turns a safeguard off or waives it (sandbox, approvals, 2FA, branch protection, signing, secret "
                     "or security checks)",
    "persistence_backdoor": "text plants an SSH key, scheduled job, shell-startup hook, service or remote shell",
    "destructive_command": "text holds a destructive command",
    "unsafe_action": "text orders a payment, a credential change, an invitation or a send to an outside address",
    "hidden_markup": "instructions hidden in markup or comments",
    "homoglyph": "a word mixes Latin with look-alike letters from another script",
    "encoded_payload": "an encoded or obfuscated payload decodes to an instruction",
    "learned_classifier": "a learned classifier scores the wording as an instruction to the model",
}

_MAX_SCAN = 200_000  # characters scanned; a longer statement is refused by size elsewhere


class _Rule(NamedTuple):
    reason: str
    regex: re.Pattern[str]


# The whole table: the rules by reason and language, and the dangerous acts told as ordinary steps.
_TABLE: tuple[tuple[str, str], ...] = RULES + ACT_RULES


def _compile() -> tuple[tuple[_Rule, ...], tuple[frozenset[int], ...], tuple[int, ...], LiteralGate]:
    """Rules in reason order; for each rule the gate's members it needs (one per literal set its pattern
    requires: a rule runs only when the text holds a literal of every one), each member's rule; and the one
    literal gate of the rules' members and the conventions' parts."""
    order = {r: i for i, r in enumerate(REASONS)}
    for reason, _ in _TABLE:
        if reason not in order:
            raise ValueError(f"threat rule with unknown reason {reason!r}")
    ranked = sorted(_TABLE, key=lambda rule: order[rule[0]])
    rules = tuple(_Rule(reason, re.compile(pattern, re.MULTILINE)) for reason, pattern in ranked)
    members: list[frozenset[str] | None] = []
    needs, rule_of = [], []
    for i, (_, pattern) in enumerate(ranked):
        sets = requirements(pattern) or [None]  # none known: the rule always runs
        needs.append(frozenset(range(len(members), len(members) + len(sets))))
        members += sets
        rule_of += [i] * len(sets)
    return rules, tuple(needs), tuple(rule_of), LiteralGate([members, threat_compose.PART_LITERALS])


_RULES, _MEMBERS, _RULE_OF, _GATE = _compile()
# rule index -> substrings one of which the text must hold before the rule runs (threat_acts.NEEDS)
_NEEDS = {i: NEEDS[r.regex.pattern] for i, r in enumerate(_RULES) if r.regex.pattern in NEEDS}


def _version() -> str:
    h = hashlib.sha256()
    for reason, pattern in RULES + ACT_RULES:
        h.update(f"{reason}\0{pattern}\0".encode())
    h.update(repr(threat_compose.COMPOSITES).encode())
    h.update(f"{sorted(PROHIBITABLE)}\0{PROHIBITION_BEFORE}\0{PROHIBITION_AFTER}\0{PROHIBITION_WITHIN}\0".encode())
    h.update(f"{sorted(QUOTABLE)}\0{sorted(REFUSABLE)}\0{sorted(QUOTE_PAIRS.items())}\0{QUOTE_CUE}\0{REQUEST_BEFORE}\0{REQUEST_AFTER}\0"
             f"{REFUSAL}\0{REPORTER}\0{REPORT_VERB}\0{QUESTION_ORDERS}\0{NEED_BEFORE}\0{NEED_AFTER}\0{ASK_FIRST}\0{ASK_WAIVED}\0".encode())
    h.update("\0".join(REASONS).encode())
    h.update(threat_model.file_version().encode())
    return h.hexdigest()[:16]


# Changes whenever a rule, a reason or the learned model changes: the gate re-scans stored records when it differs
# from the one they were last scanned under (threats.py's own code changes show in its file hash).
RULES_VERSION = _version()


def _present(folded: str) -> tuple[set[int], set[int]]:
    """The rules' gate members and the conventions' parts one of whose literals occurs in ``folded``: one
    query for both."""
    return _GATE.present(folded)


def _candidates(folded: str, present: set[int] | None = None) -> list[int]:
    """Rules that hold a literal of every set they require in ``folded`` (plus those without literals), in rule
    order. ``present``: the rules' gate members found in ``folded``, when already asked."""
    found = _present(folded)[0] if present is None else present
    return [i for i in sorted({_RULE_OF[m] for m in found}) if _MEMBERS[i] <= found
            and (i not in _NEEDS or any(map(folded.__contains__, _NEEDS[i])))]


# -- invisible characters ---------------------------------------------------------

_INVISIBLE = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0"
    "\ufff9-\ufffb\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_ZWJ, _ZWNJ = "\u200d", "\u200c"
_FLAG_BLACK = "\U0001f3f4"


def _emojiish(ch: str) -> bool:
    o = ord(ch)
    return o >= 0x1F000 or 0x2190 <= o <= 0x2BFF or o in (0xFE0F, 0x20E3) or 0x1F3FB <= o <= 0x1F3FF


def _joining_script(ch: str) -> bool:
    # Scripts where ZWNJ/ZWJ change letter shaping in ordinary text (Arabic, Persian, Indic, ...).
    o = ord(ch)
    return 0x0600 <= o <= 0x08FF or 0x0900 <= o <= 0x0DFF or 0x0F00 <= o <= 0x0FFF or 0x1000 <= o <= 0x109F \
        or 0x1780 <= o <= 0x17FF or 0xFB50 <= o <= 0xFDFF or 0xFE70 <= o <= 0xFEFF


def _allowed_invisible(text: str, i: int, ch: str) -> bool:
    prev = text[i - 1] if i > 0 else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch in (_ZWJ, _ZWNJ):
        if ch == _ZWJ and prev and nxt and _emojiish(prev) and _emojiish(nxt):
            return True
        return bool(prev and nxt and _joining_script(prev) and _joining_script(nxt))
    if "\U000e0020" <= ch <= "\U000e007f":
        # Subdivision flags: U+1F3F4, up to 7 tag letters/digits, U+E007F cancel tag.
        j = i
        while j > 0 and "\U000e0020" <= text[j - 1] <= "\U000e007e":
            j -= 1
        if j == 0 or text[j - 1] != _FLAG_BLACK:
            return False
        k = i
        while k < len(text) and "\U000e0020" <= text[k] <= "\U000e007e":
            k += 1
        return k < len(text) and text[k] == "\U000e007f" and 1 <= k - j <= 7
    return False


def _invisible(text: str) -> Threat | None:
    for m in _INVISIBLE.finditer(text):
        ch = m.group()
        if ch == _ZWJ or ch == _ZWNJ or "\U000e0020" <= ch <= "\U000e007f":
            if _allowed_invisible(text, m.start(), ch):
                continue
        kind = _invisible_kind(ch)
        return Threat("invisible_unicode", f"{kind} character U+{ord(ch):04X} at offset {m.start()}")
    return None


def _invisible_kind(ch: str) -> str:
    o = ord(ch)
    if 0xE0000 <= o <= 0xE007F:
        return "Unicode tag"
    if 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069 or o in (0x200E, 0x200F, 0x061C):
        return "bidi-control"
    if 0xFE00 <= o <= 0xFE0D or 0xE0100 <= o <= 0xE01EF or 0x180B <= o <= 0x180F:
        return "variation-selector"
    if o < 0x20 or 0x7F <= o <= 0x9F:
        return "control"
    return "zero-width/invisible"


# -- normalisation --------------------------------------------------------------

_SPACES = re.compile(r"[^\S\n]+")
_CRLF = re.compile(r"\r\n?")


def normalise(text: str) -> str:
    """NFKC, case folding, CR/CRLF -> LF, runs of other whitespace -> one space."""
    t = unicodedata.normalize("NFKC", text).casefold()
    if "\r" in t:
        t = _CRLF.sub("\n", t)
    return _SPACES.sub(" ", t)


_BEFORE = re.compile(PROHIBITION_BEFORE)
_AFTER = re.compile(PROHIBITION_AFTER)
_WITHIN = re.compile(PROHIBITION_WITHIN)
_CLAUSE_END = re.compile(r"[.!?;。！？；\n]")


def _prohibited(folded: str, start: int, end: int) -> bool:
    """A prohibition governs the match at [start, end): just before it in its clause, or just after it."""
    lo = max(0, start - 40)
    before = folded[lo:start]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    if _BEFORE.search(before[cut:]) or _WITHIN.search(folded, start, end):
        return True
    return _AFTER.match(folded, end, min(len(folded), end + 40)) is not None


_QUOTE_CUE = re.compile(QUOTE_CUE)
_REQUEST_BEFORE = re.compile(REQUEST_BEFORE)
_REQUEST_AFTER = re.compile(REQUEST_AFTER)
_REFUSAL = re.compile(REFUSAL)
_SENTENCE_END = re.compile(r"[.!?;。！？；\n]")
_QUOTE_SLACK = 40  # characters a quotation may hold beyond the match and still be a mention of the phrase
_WORDISH = re.compile(r"\w")


def _quoted(folded: str, start: int, end: int) -> bool:
    """The match at [start, end) is a short quotation with a word nearby that says it is an example, a
    joke, a fake or a text ("posted 'ignore previous instructions' as a joke")."""
    lo = max(0, start - _QUOTE_SLACK)
    for i in range(start - 1, lo - 1, -1):
        ch = folded[i]
        if ch not in QUOTE_PAIRS or (ch == "'" and i > 0 and _WORDISH.match(folded[i - 1])):
            continue
        closers = QUOTE_PAIRS[ch]
        stop = min(len(folded), end + _QUOTE_SLACK - (start - i))
        j = next((k for k in range(end, stop) if folded[k] in closers
                  and not (folded[k] == "'" and k + 1 < len(folded) and _WORDISH.match(folded[k + 1]))), None)
        if j is None:
            return False
        around = folded[max(0, i - 60):i] + " " + folded[j + 1:j + 61]
        return _QUOTE_CUE.search(around) is not None
    return False


def _refused_request(folded: str, start: int, end: int) -> bool:
    """The match is what a request asks for, in a sentence that refuses or reports it ("requests to
    disable the sandbox should be refused")."""
    before = folded[max(0, start - 60):start]
    if not (_REQUEST_BEFORE.search(before) or _REQUEST_AFTER.match(folded, end, min(len(folded), end + 12))):
        return False
    lo = max((m.end() for m in _SENTENCE_END.finditer(folded, max(0, start - 200), start)), default=max(0, start - 200))
    hi = _SENTENCE_END.search(folded, end, min(len(folded), end + 200))
    if hi is not None and hi.group() in ";；":  # "X asked us to disable it; we declined": the refusal in the next clause
        hi = _SENTENCE_END.search(folded, hi.end(), min(len(folded), hi.end() + 200))
    return _REFUSAL.search(folded, lo, hi.start() if hi else min(len(folded), end + 200)) is not None


_REPORTER = re.compile(REPORTER)
_REPORT_VERB = re.compile(REPORT_VERB)


def _reported(folded: str, start: int, end: int) -> bool:
    """The match is what a reporter (a phishing mail, an attacker) asked for or could do, in the same sentence."""
    lo = max((m.end() for m in _SENTENCE_END.finditer(folded, max(0, start - 160), start)), default=max(0, start - 160))
    who = _REPORTER.search(folded, lo, start)
    if who is None:
        return False
    return _REPORT_VERB.search(folded, who.end(), min(len(folded), end + 20)) is not None


_NEED_BEFORE = re.compile(NEED_BEFORE)
_NEED_AFTER = re.compile(NEED_AFTER)
_ASK_FIRST = re.compile(ASK_FIRST)
_ASK_WAIVED = re.compile(ASK_WAIVED)


def _needed_then_ask(folded: str, start: int, end: int) -> bool:
    """The match is what a task would need, and the rest of its sentence has the agent stop or ask first ("if a task
    seems solvable only by turning off a safeguard, stop and ask the user"), not waived just before."""
    if not (_NEED_BEFORE.search(folded, max(0, start - 40), start)
            or _NEED_AFTER.match(folded, end, min(len(folded), end + 12))):
        return False
    hi = _SENTENCE_END.search(folded, end, min(len(folded), end + 200))
    stop = hi.start() if hi else min(len(folded), end + 200)
    return any(not _ASK_WAIVED.search(folded, max(end, m.start() - 16), m.start())
               for m in _ASK_FIRST.finditer(folded, end, stop))


def _questioned(folded: str, start: int, end: int) -> bool:
    """The match is in a question about whether its act is allowed (``threat_compose.asks``)."""
    stop = _SENTENCE_END.search(folded, end, min(len(folded), end + 300))
    if stop is None or stop.group() != "?":
        return False
    lo = max((m.end() for m in _SENTENCE_END.finditer(folded, max(0, start - 200), start)), default=max(0, start - 200))
    return threat_compose.asks(folded[lo:stop.end()].strip())


def _allowed(reason: str, folded: str, start: int, end: int, waived: bool = False) -> bool:
    """A match that a prohibition governs, that is quoted as an example, that is refused as a request, that a
    question asks about, or that a task would need and the agent is to stop and ask about. ``waived``: the match's own words are a negation ("never ask for approval"), so no
    prohibition reads it."""
    if reason in PROHIBITABLE and ((not waived and _prohibited(folded, start, end)) or _questioned(folded, start, end)):
        return True
    if reason in QUOTABLE and _quoted(folded, start, end):
        return True
    return reason in REFUSABLE and (_refused_request(folded, start, end) or _reported(folded, start, end)
                                    or _needed_then_ask(folded, start, end))


def _composite(folded: str, parts: set[int] | None = None) -> Threat | None:
    reason = threat_compose.composite(folded, parts)
    return Threat(reason, REASONS[reason]) if reason else None


def _rules(folded: str, context: str | None = None, present: set[int] | None = None) -> Threat | None:
    """The first rule that matches ``folded``. ``context`` (same length) is the text a match's
    prohibition, quotation or refusal is read in: the original words when ``folded`` is their skeleton.
    ``present``: the rules' members the literal gate found in ``folded``, when already asked."""
    context = folded if context is None else context
    for i in _candidates(folded, present):
        rule = _RULES[i]
        if rule.reason in PROHIBITABLE or rule.reason in REFUSABLE:
            # at most a few matches are read: a statement with many safeguard words is refused anyway
            waives = "waive" in rule.regex.groupindex
            for n, m in enumerate(rule.regex.finditer(folded)):
                if n >= 8 or not _allowed(rule.reason, context, m.start(), m.end(), waives and m.group("waive") is not None):
                    return Threat(rule.reason, REASONS[rule.reason])
        elif rule.regex.search(folded):
            return Threat(rule.reason, REASONS[rule.reason])
    return None


# -- homoglyphs -----------------------------------------------------------------

# Cyrillic and Greek letters that render like Latin ones (lower case; the text is case-folded).
_CONFUSABLE = {
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "ӏ": "l", "һ": "h", "ɡ": "g", "ո": "n", "ս": "u", "օ": "o", "ց": "g",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j", "ѵ": "v", "ʏ": "y", "ɪ": "i", "ʀ": "r", "ᴀ": "a",
    "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ᴋ": "k", "ᴍ": "m", "ᴏ": "o", "ᴘ": "p", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v",
    "ᴡ": "w", "ᴢ": "z", "ı": "i", "ȷ": "j",
}
_SKELETON = str.maketrans(_CONFUSABLE)
_WORD = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[a-z]")


def _homoglyph(folded: str) -> Threat | None:
    if folded.isascii():
        return None
    confusable = _CONFUSABLE.keys()
    for m in _WORD.finditer(folded):
        w = m.group()
        if w.isascii() or not _LATIN.search(w):
            continue
        if any(c in confusable for c in w):
            return Threat("homoglyph", "a word mixes Latin letters with Cyrillic/Greek look-alikes")
    skeleton = folded.translate(_SKELETON)
    if skeleton != folded:
        inner = _rules(skeleton, folded)  # one letter for one: a match's words are read in the original
        if inner is not None:
            return Threat("homoglyph", f"look-alike letters spell out a threat ({inner.reason})")
    return None


# -- encodings and obfuscation -----------------------------------------------------------

_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{0,3})"
                  r"|(?<![A-Za-z0-9+/=_-])[A-Za-z0-9_-]{20,}={0,2}")
_HEXRUN = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){12,}(?![0-9a-fA-F])|(?:\\x[0-9a-fA-F]{2}){6,}|(?:0x[0-9a-fA-F]{2}[\s,]*){6,}")
_UESC = re.compile(r"(?:\\u[0-9a-fA-F]{4}){4,}")
_PCT = re.compile(r"(?:%[0-9a-fA-F]{2}[^%\s]{0,3}){4,}")
_ENTITY = re.compile(r"&#(?:x[0-9a-f]+|\d+);|&[a-z]+;", re.IGNORECASE)
# A token of letters and leet characters, two letters at least ("1gn0re", "4ll", "pr3v10us").
_LEET_TOKEN = re.compile(r"(?<![\w@$])(?=[\w@$]*[a-z][\w@$]*[a-z])(?=[\w@$]*[0134578@$])[a-z0134578@$]{3,}(?![\w@$])")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s"})
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_*]){3,}[^\W\d_](?![^\W\d_])")
_SEPARATORS = re.compile(r"[ .\-_*]")
_MENTIONS_ROT = re.compile(r"\brot[- ]?13\b|\bcaesar\b")
_MENTIONS_REVERSE = re.compile(r"\brevers|\bbackwards?\b|\bright to left\b|\bmirror")


def _printable(s: str) -> bool:
    if len(s) < 6:
        return False
    good = sum(1 for c in s if c.isprintable() or c in "\n\t")
    letters = sum(1 for c in s if c.isalpha())
    return good >= 0.9 * len(s) and letters >= 0.5 * len(s.replace(" ", ""))


def _decode_bytes(raw: bytes) -> str | None:
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return s if _printable(s) else None


def _b64(token: str) -> str | None:
    t = token.rstrip("=")
    if len(t) % 4 == 1:
        t = t[:-1]
    t += "=" * (-len(t) % 4)
    try:
        if "-" in t or "_" in t:
            raw = base64.urlsafe_b64decode(t)
        else:
            raw = base64.b64decode(t, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _decode_bytes(raw)


def _hex(token: str) -> str | None:
    digits = re.sub(r"\\x|0x|[\s,]", "", token)
    try:
        return _decode_bytes(bytes.fromhex(digits))
    except ValueError:
        return None


def _decodings(nfkc: str, folded: str):
    """Yield (how, decoded text) for every decoding worth scanning."""
    for m in _B64.finditer(nfkc):
        s = _b64(m.group())
        if s is not None:
            yield "base64", s
    for m in _HEXRUN.finditer(nfkc):
        s = _hex(m.group())
        if s is not None:
            yield "hex", s
    if "\\u" in nfkc:
        for m in _UESC.finditer(nfkc):
            try:
                yield "unicode escapes", codecs.decode(m.group(), "unicode_escape")
            except (UnicodeDecodeError, ValueError):
                pass
    if "%" in nfkc and _PCT.search(nfkc):
        yield "percent-encoding", unquote(nfkc)
    if "&" in nfkc and len(_ENTITY.findall(nfkc)) >= 3:
        yield "HTML entities", html.unescape(nfkc)
    if _MENTIONS_ROT.search(folded):
        yield "rot13", codecs.encode(folded, "rot13")
    if _MENTIONS_REVERSE.search(folded):
        yield "reversed text", folded[::-1]


def _obfuscations(folded: str):
    if _SPACED.search(folded):
        yield "spaced-out letters", _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group()), folded)
    if _LEET_TOKEN.search(folded):
        plain = _LEET_TOKEN.sub(lambda m: m.group().translate(_LEET), folded)
        if plain != folded:
            yield "leetspeak", plain


def _encoded(nfkc: str, folded: str, depth: int) -> Threat | None:
    for how, decoded in _decodings(nfkc, folded):
        inner = _scan(decoded, depth + 1)
        if inner is not None:
            return Threat("encoded_payload", f"{how} decodes to: {inner.reason}")
    for how, plain in _obfuscations(folded):
        inner = _rules(plain)
        if inner is not None:
            return Threat("encoded_payload", f"{how} spell out: {inner.reason}")
    return None


# -- entry point ----------------------------------------------------------------------

def _scan(text: str, depth: int, use_model: bool = True) -> Threat | None:
    found = _invisible(text)
    if found is not None:
        return found
    nfkc = unicodedata.normalize("NFKC", text)
    folded = normalise(nfkc)
    rules, parts = _present(folded)
    found = _rules(folded, present=rules) or _homoglyph(folded) or _composite(folded, parts)
    if found is None and depth < 2:
        found = _encoded(nfkc, folded, depth)
    if found is None and depth == 0 and use_model:
        found = learned(folded)
    return found


def learned(folded: str) -> Threat | None:
    """The learned signal on normalised text (see ``threat_model``)."""
    v = threat_model.model().verdict(folded)
    if not v.blocked:
        return None
    return Threat("learned_classifier", f"{REASONS['learned_classifier']} (score {v.score:.2f}, "
                                        f"threshold {v.threshold:.2f})")


def scan(text: str) -> Threat | None:
    """Return the first threat found in ``text`` (a memory statement), or None if clean."""
    if not isinstance(text, str):
        raise TypeError("scan() takes a str")
    if len(text) > _MAX_SCAN:
        text = text[:_MAX_SCAN]
    return _scan(text, 0)


def scan_rules(text: str) -> Threat | None:
    """``scan`` without the learned signal: what the rules alone find (``[memory.gate] learned_signal =
    false``)."""
    if not isinstance(text, str):
        raise TypeError("scan_rules() takes a str")
    if len(text) > _MAX_SCAN:
        text = text[:_MAX_SCAN]
    return _scan(text, 0, use_model=False)
