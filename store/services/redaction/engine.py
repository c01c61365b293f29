"""The redaction engine: text in, text with placeholders out.

``Redactor`` is built once from a list of rules (a profile). ``redact(text,
key)`` replaces every secret with ``[REDACTED:<rule-id>:<8 hex>]`` where the
hex is ``HMAC-SHA256(key, secret)[:8]``: the same secret gives the same
placeholder under one key (a session) and unlinkable ones under another.

What counts as a match (identical on both paths, and in the stream redactor):

1. For each rule, its regex's successive leftmost matches, as ``finditer``
   would give them over the whole text (a match that a filter then rejects
   still consumes its text, as in gitleaks).
2. Each match is checked (secret group, keywords on its line, entropy,
   validator, allowlists; see ``rules.py``). A secret that overlaps a
   placeholder already in the text is dropped: placeholders are inert.
3. Across rules, findings are taken leftmost first, then longest, then by
   rule order; a finding overlapping one already taken joins it (one
   placeholder, named by the first, over both), so no part of a secret is
   ever left beside a placeholder.

How matches are found: a prefilter says where a rule's match may start
(Hyperscan events on the Hyperscan path; required literals on the pure-Python
path), and the rule's Python regex is run only inside those windows, in a way
that reproduces ``finditer`` exactly (see ``_chain``). Results are cached by
content hash, so an unchanged message is not scanned again on the next turn.

Every failure inside ``redact`` surfaces as ``RedactionError`` whose message
names no secret; callers fail closed on it.
"""
from __future__ import annotations

import bisect
import codecs
import functools
import hashlib
import hmac
import logging
import re
import threading
from dataclasses import dataclass, field
from re import _constants as sre_c
from re import _compiler as sre_compile
from re import _parser as sre_parse
from typing import Any, Sequence

from ctxproxy.store.bounded import SLOT_BYTES, ByteLRU, entry_bytes, size_of

from ..digest import memo_key
from . import prefilter
from .errors import RedactionError
from .hold_scan import SpacedScan, spaced_scan
from .patterns import PatternInfo, alternatives, analyze, may_begin_beyond_ascii, secret_heads
from .rules import CHECKS, LINE_CONTEXT, Allowlist, Rule, shannon_entropy
from .vault import PLACEHOLDER_RE, Vault

log = logging.getLogger("ctxproxy.redaction")

# What the memos may hold in this process (docs/performance.md lists every such bound).
SPANS_BYTES = 2 << 20  # where a text's secrets are, by its memo key: ~7.5K texts, none holds text
RENDERED_BYTES = 2 << 20  # the redacted form of texts that had a secret, per session key
CLEAN_ITEMS_BYTES = 2 << 20  # conversation items found clean: ~12K
_SLOT = SLOT_BYTES
_SPAN_ENTRY = entry_bytes(memo_key("x" * 64), ())  # an entry without a secret
_SPAN_BYTES = size_of((1 << 20, 1 << 20, 100))  # and each secret's span on top
_CLEAN_ITEM_BYTES = 48 + size_of(memo_key(b"x" * 64))  # a set slot and its key

PLACEHOLDER_MARK = "[REDACTED:"


def _one_byte_per_char(err: UnicodeEncodeError):
    return "\xff" * (err.end - err.start), err.end


codecs.register_error("ctxproxy-redaction-ff", _one_byte_per_char)


def encode(text: str) -> bytes:
    """One byte per character, so byte offsets are character offsets.

    ASCII stays as is; other characters become bytes >= 0x80, which (like the
    original characters under ``re.ASCII``) are neither word, digit nor space
    characters and match only ``.`` or a negated class.
    """
    if text.isascii():
        return text.encode("ascii")
    return text.encode("latin-1", "ctxproxy-redaction-ff")


# The hold-back finds where to walk before the held text's last run with a Hyperscan scan
# (``hold_scan.py``); False: it walks every position there, as without Hyperscan.
SPACED_SCAN = True
SCAN_MIN = 8  # positions from which a scan costs less than walking them (~2-3 µs against ~0.4 each)

JOIN_MIN = 8  # new texts from which ``dirty`` prescans them in one Hyperscan call


@dataclass(frozen=True)
class Finding:
    """Where a secret was, in the original text, and which rule found it (never the value)."""

    start: int
    end: int
    rule_id: str


@dataclass(frozen=True)
class Result:
    text: str
    counts: dict[str, int] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.counts)


def placeholder_id(rule_id: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", rule_id.lower()).strip("-")[:64]
    return slug or "rule"


class _Runtime:
    __slots__ = ("rule", "index", "info", "search", "pid", "allowlists", "first_group")

    def __init__(self, rule: Rule, index: int, info: PatternInfo):
        self.rule = rule
        self.index = index
        self.info = info
        self.search = rule.regex.search
        self.pid = placeholder_id(rule.id)
        self.allowlists: tuple[Allowlist, ...] = rule.allowlists
        self.first_group = rule.secret_group is None and rule.regex.groups > 0


def _line(text: str, start: int, end: int) -> str:
    lo = max(text.rfind("\n", 0, start) + 1, start - LINE_CONTEXT)
    nl = text.find("\n", end)
    hi = min(len(text) if nl < 0 else nl, end + LINE_CONTEXT)
    return text[lo:hi]


class Redactor:
    """A compiled profile: rules, their prefilter, a result cache."""

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        use_hyperscan: bool | None = None,
        cache_dir: str | None = None,
        cache_bytes: int = SPANS_BYTES,
        name: str = "custom",
    ):
        self.name = name
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._rt: list[_Runtime] = []
        infos: dict[int, PatternInfo] = {}
        for i, rule in enumerate(self.rules):
            try:
                info = analyze(rule.regex)
            except Exception as exc:
                raise ValueError(f"rule {rule.id}: cannot analyse its regex ({exc})") from None
            if info.min_len == 0:
                raise ValueError(f"rule {rule.id}: the regex can match an empty string")
            infos[i] = info
            self._rt.append(_Runtime(rule, i, info))

        # Streaming: where a match could still be in progress, and how much context to keep.
        alts: list[tuple[str, int | None]] = [(_placeholder_prefix(), 96)]
        # what a secret may begin in: (prefix, reach, heads) per rule, or per top-level
        # alternative of a rule whose alternatives have different heads
        starts: list[tuple[str, int | None, tuple[tuple[str, ...], ...]]] = [(alts[0][0], 96, ())]
        context = 1
        for rt in self._rt:
            info = rt.info
            line = rt.rule.needs_line
            reach = None if info.max_len is None else info.max_len + info.ahead
            if line:
                reach = None if reach is None else reach + LINE_CONTEXT
                context = max(context, LINE_CONTEXT + 1)
            alts.append((_in_progress(info.prefix, info.full, line), reach))
            split = alternatives(rt.rule.regex, rt.rule.secret_group)
            if split:
                starts += [(_in_progress(a.prefix, a.full, line), reach, a.heads) for a in split]
            else:
                starts.append((alts[-1][0], reach, secret_heads(rt.rule.regex, rt.rule.secret_group)))
            context = max(context, info.behind + 1)
        self.context_chars = context
        reaches = [w for _, w in alts]
        self.max_hold = None if any(w is None for w in reaches) else max(reaches)
        self._pending = _PendingIndex(alts)
        # Where a *secret* could still begin (what the stream must hold back): as
        # above, but a match in progress that lacks one of its rule's heads yet
        # (``patterns.secret_heads``) cannot hold one. Once a rule has all its
        # heads in the held text, the stream holds from the pending position.
        self._heads = [tuple(frozenset(opts) for opts in h) for _, _, h in starts if h]
        self._head_alts = [(a, w) for a, w, h in starts if h]  # in the order of _heads
        self._ready: dict[frozenset[str], tuple[int, ...]] = {}  # head strings present -> rules whose heads came
        self._ready_indexes: dict[tuple[int, ...], _PendingIndex] = {}  # per set of rules whose heads came
        for alt, _ in self._head_alts:
            _first_chars(alt)  # now, not in the first stream that needs it
        strings = sorted({o for hs in self._heads for opts in hs for o in opts}, key=lambda o: (-len(o), o))
        # every head string at each position, longest first: one found stands for those it contains
        self._head_rx = re.compile("(?=(" + _longest_first(strings) + "))") if strings else None
        self._head_within = {o: frozenset(x for x in strings if x in o) for o in strings}
        self._secret_index = _PendingIndex([(a, w) for a, w, h in starts if not h]) if strings else None
        self._scans_made = False  # the hold-back's Hyperscan scans (``_spaced_scans``)

        self._hs: prefilter.HyperscanIndex | None = None
        if use_hyperscan is None:
            use_hyperscan = prefilter.hyperscan_available()
        elif use_hyperscan and not prefilter.hyperscan_available():
            raise ValueError("hyperscan was requested but the hyperscan package is not installed")
        if use_hyperscan and self._rt:
            try:
                self._hs = prefilter.HyperscanIndex(infos, cache_dir)
            except Exception as exc:
                log.warning("redaction profile %s: hyperscan unavailable (%s); using the Python path",
                            name, type(exc).__name__)
                self._hs = None
        self._hs_covered = self._hs.covered if self._hs is not None else frozenset()
        self._uncovered = [rt for rt in self._rt if rt.index not in self._hs_covered]
        # Many new texts at once are prescanned as one (``dirty``): only when Hyperscan takes
        # every rule and no pattern's anchors see a text's own ends.
        self._joinable = self._hs is not None and not self._uncovered and self._hs.joinable

        # Content-hash caches: positions of secrets (key-independent), and rendered
        # results per (text, session key). Neither holds a secret value.
        self._cache = ByteLRU(cache_bytes, "redaction spans")  # (start, end, rule) per secret
        self._rendered = ByteLRU(RENDERED_BYTES, "redacted texts")  # only texts that had a secret
        # Conversation items (a message, a tool result: their JSON encoding's
        # digest) whose every string was found clean: a turn skips the history it
        # re-sends instead of walking it. A set, cleared when full.
        self._clean_items: set = set()
        self._clean_items_max = CLEAN_ITEMS_BYTES // _CLEAN_ITEM_BYTES
        self._lock = threading.Lock()
        self.cache_hits = 0
        self.cache_misses = 0

    # -- public ---------------------------------------------------------------------

    @property
    def engine(self) -> str:
        return "hyperscan" if self._hs is not None else "python"

    @property
    def python_only_rules(self) -> tuple[str, ...]:
        """Rules the Hyperscan path leaves to the literal prefilter."""
        if self._hs is None:
            return tuple(rt.rule.id for rt in self._rt)
        return tuple(rt.rule.id for rt in self._rt if rt.index not in self._hs_covered)

    def redact(self, text: str, key: bytes, vault: Vault | None = None) -> Result:
        """Replace every secret in ``text``. Raises ``RedactionError`` on any failure."""
        _check_key(key)
        if not isinstance(text, str):
            raise RedactionError(f"redaction expects text, got {type(text).__name__}")
        try:
            if not text:
                return Result(text)
            digest = memo_key(text)
            spans = self._spans(text, digest)
            if not spans:  # the common case: nothing to replace, nothing more to cache
                return Result(text)
            cache_key = (digest, hashlib.blake2b(key, digest_size=16).digest()) if vault is None else None
            if cache_key is not None:
                hit = self._rendered.get(cache_key)
                if hit is not None:
                    self.cache_hits += 1
                    return Result(hit.text, dict(hit.counts), hit.findings)
            result = self._render(text, spans, key, vault)
            if cache_key is not None:
                self._rendered.put(cache_key, result, _SLOT + size_of(result.text) + 400)
            return Result(result.text, dict(result.counts), result.findings)
        except RedactionError:
            raise
        except Exception as exc:
            raise RedactionError(f"redaction failed in profile {self.name!r} ({type(exc).__name__})") from None

    def dirty(self, texts: Sequence[str]) -> list[int]:
        """Indexes of ``texts`` that hold a secret: one lock and one hash per text
        for everything seen before, a scan only for new text. The request path
        asks this first, so a turn costs O(new content)."""
        digests = [memo_key(t) if t else None for t in texts]
        misses: list[int] = []
        out: list[int] = []
        with self._lock:
            cache = self._cache
            for i, d in enumerate(digests):
                if not d:
                    continue
                hit = cache.peek(d)
                if hit is None:
                    misses.append(i)
                elif hit:
                    out.append(i)
            self.cache_hits += len(digests) - len(misses)
        if len(misses) >= JOIN_MIN and self._joinable:
            misses = self._joined_prescan(texts, digests, misses)
        for i in misses:
            try:
                if self._spans(texts[i], digests[i]):
                    out.append(i)
            except RedactionError:
                raise
            except Exception as exc:
                raise RedactionError(f"redaction failed in profile {self.name!r} ({type(exc).__name__})") from None
        return sorted(out)

    def _joined_prescan(self, texts: Sequence[str], digests: list, misses: list[int]) -> list[int]:
        """The ``misses`` that need their own scan: one Hyperscan pass over them all, joined
        (``prefilter.HyperscanIndex.joined_events``); a text with no event of its own has no
        rule to run, so it has no secret, and is remembered as such. A long conversation
        first seen is scanned in one call instead of one per string."""
        try:
            # one encode of them joined: one byte per character, so joining and encoding commute
            named = self._hs.joined_data_events(encode("\n".join([texts[i] for i in misses])),
                                                [len(texts[i]) for i in misses])
        except Exception as exc:
            raise RedactionError(f"redaction failed in profile {self.name!r} ({type(exc).__name__})") from None
        for k, i in enumerate(misses):
            if k not in named:
                self._cache.put(digests[i], (), _SPAN_ENTRY)
        self.cache_misses += len(misses) - len(named)
        return [i for k, i in enumerate(misses) if k in named]

    def findings(self, text: str) -> tuple[Finding, ...]:
        """Where the secrets are (positions and rule ids only)."""
        return tuple(Finding(s, e, self.rules[i].id) for s, e, i in self.spans(text))

    def spans(self, text: str) -> tuple[tuple[int, int, int], ...]:
        """(start, end, rule index) of each secret, from the cache when the text was seen."""
        if not text:
            return ()
        return self._spans(text, memo_key(text))

    def _spans(self, text: str, digest: bytes) -> tuple[tuple[int, int, int], ...]:
        hit = self._cache.get(digest)
        if hit is not None:
            self.cache_hits += 1
            return hit
        spans = tuple(self._scan(text, 0)[0])
        self.cache_misses += 1
        self._cache.put(digest, spans, _SPAN_ENTRY + _SPAN_BYTES * len(spans))
        return spans

    def placeholder(self, rule: Rule | str, secret: str, key: bytes) -> str:
        rid = rule.id if isinstance(rule, Rule) else rule
        return _placeholder(placeholder_id(rid), secret, key)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._rendered.clear()
        with self._lock:
            self._clean_items.clear()

    @staticmethod
    def encoding_digest(raw: bytes | None) -> Any:
        """Digest of a conversation item's JSON encoding (the request view's
        ``item_encodings``), for ``is_clean_item`` / ``mark_clean_items``; None
        stays None."""
        return None if raw is None else memo_key(raw)

    def is_clean_item(self, digest: Any) -> bool:
        return digest is not None and digest in self._clean_items

    def mark_clean_items(self, digests: Sequence[Any]) -> None:
        with self._lock:
            if len(self._clean_items) + len(digests) > self._clean_items_max:
                self._clean_items.clear()
            self._clean_items.update(d for d in digests if d is not None)

    # -- internals shared with the stream redactor ------------------------------------

    def _render(self, text: str, spans, key: bytes, vault: Vault | None, start: int = 0,
                stop: int | None = None) -> Result:
        stop = len(text) if stop is None else stop
        if not spans:
            return Result(text[start:stop] if (start or stop != len(text)) else text)
        parts: list[str] = []
        counts: dict[str, int] = {}
        findings: list[Finding] = []
        last = start
        for s, e, i in spans:
            if s >= stop:
                break
            rt = self._rt[i]
            secret = text[s:e]
            ph = _placeholder(rt.pid, secret, key)
            if vault is not None:
                vault.put(ph, secret)
            parts.append(text[last:s])
            parts.append(ph)
            last = e
            rid = rt.rule.id
            counts[rid] = counts.get(rid, 0) + 1
            findings.append(Finding(s, e, rid))
        parts.append(text[last:stop])
        return Result("".join(parts), counts, tuple(findings))

    def warm(self) -> None:
        """Compile now what a stream compiles as it first needs it (the regexes
        of where a match or a secret may still be in progress, their Hyperscan
        scans); a server calls it at start-up so that no turn pays for it."""
        self._spaced_scans()
        self._pending.warm()
        if self._secret_index is not None:
            self._secret_index.warm()
        for alt, _ in self._head_alts:  # the tables of the indexes made when a rule's heads come
            _begins_after(alt)
            _goes_on_with(alt)

    @property
    def cold(self) -> int:
        """How many of those regexes are not compiled yet (0 once ``warm`` ran)."""
        return self._pending.cold + (self._secret_index.cold if self._secret_index is not None else 0)

    def _pending_start(self, text: str, pos: int) -> int:
        """Leftmost position >= pos where a match (or a placeholder) may still be in progress."""
        return self._pending.start(text, pos)

    def _pending_locate(self, text: str, pos: int) -> tuple[int, int]:
        """``_pending_start``, and where the first long-reaching match in progress begins
        (for ``_secret_start``, which then need not look before it)."""
        if not self._scans_made:
            self._spaced_scans()
        return self._pending.locate(text, pos)

    def _spaced_scans(self) -> None:
        """With Hyperscan, the table a stream searches of where a match or a secret may be in
        progress finds where to start walking before the text's last run with one scan
        (``hold_scan.py``). Made once, at ``warm`` or the first stream (~0.6 s and ~0.4 MB for
        the default profile; the other tables, and the indexes made while streaming, walk)."""
        with self._lock:
            if self._scans_made:
                return
            self._scans_made = True
            if self._hs is None or not SPACED_SCAN:
                return
            for index in (self._pending, self._secret_index):
                table = index.searched() if index is not None else None
                alts = table.spaced_alts() if table is not None and table._narrow else None
                if not alts:
                    continue
                try:
                    table._spaced_scan = spaced_scan(alts)
                except Exception as exc:  # (the walk looks at every position, as without Hyperscan)
                    log.warning("redaction profile %s: no hold-back scan (%s)", self.name, type(exc).__name__)

    def _secret_start(self, text: str, pos: int, known: int = 0, long_from: int = 0) -> int:
        """Leftmost position >= pos where a secret may still begin, for ``pos`` a
        ``_pending_start``: every match in progress starts there or later, so
        while no rule with heads has them all in ``text[pos:]``, only the rules
        without heads can have a secret in progress. No secret begins before
        ``known`` (found so on an earlier look, whatever follows): not searched again;
        ``long_from`` as ``_pending_locate`` gave it."""
        index = self._secret_index
        if index is None or pos >= len(text) or index.at(text, pos, long_from):
            return pos  # nothing in progress, or a rule without heads may begin a secret right there
        rest = index.start(text, max(pos + 1, known), long_from)
        found = {m.group(1) for m in self._head_rx.finditer(text[pos:].lower())}
        if found:
            present = frozenset().union(*(self._head_within[f] for f in found))
            ready = self._ready.get(present)
            if ready is None:
                if len(self._ready) >= 4096:
                    self._ready.clear()
                ready = self._ready[present] = tuple(
                    i for i, hs in enumerate(self._heads) if all(opts & present for opts in hs))
            if ready:  # where one of those rules is in progress (searched from pos: its match may
                # have begun in text already sent, its secret not yet)
                return min(rest, self._ready_index(ready).start(text, pos, long_from))
        return rest

    def _ready_index(self, ready: tuple[int, ...]) -> "_PendingIndex":
        index = self._ready_indexes.get(ready)
        if index is None:
            if len(self._ready_indexes) >= 256:
                self._ready_indexes.clear()
            # made while streaming: without the tables by the character two back, which
            # would double the time it takes
            index = self._ready_indexes[ready] = _PendingIndex([self._head_alts[i] for i in ready], two_back=False)
        return index

    def _scan(self, text: str, start: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]]]:
        """Findings from ``start`` on, and the span of every regex match seen (for stream cuts)."""
        n = len(text)
        if start >= n:
            return [], []
        data = encode(text)
        holes: list[tuple[int, int]] = []
        if PLACEHOLDER_MARK in text:
            holes = [m.span() for m in PLACEHOLDER_RE.finditer(text, start)]
        hole_starts = [h[0] for h in holes]
        events = self._hs.events(data) if self._hs is not None else {}
        low: bytes | None = None
        memo: dict[str, list[int]] = {}
        cands: list[tuple[int, int, int]] = []
        seen: list[tuple[int, int]] = list(holes)
        if self._hs is not None:  # only rules with events, and the ones Hyperscan could not take
            work = [(self._rt[i], ev) for i, ev in events.items()] + [(rt, None) for rt in self._uncovered]
        else:
            work = [(rt, None) for rt in self._rt]
        for rt, ev in work:
            if ev is not None:
                intervals = self._hs.intervals(rt.index, ev, start)
            else:
                if low is None:
                    low = data.lower()
                intervals = prefilter.literal_intervals(rt.info, low, start, memo)
            if not intervals:
                continue
            for m in _chain(rt, text, start, intervals):
                seen.append((m.start(), m.end()))
                span = _validate(rt, m, text)
                if span is None:
                    continue
                if holes:
                    k = bisect.bisect_left(hole_starts, span[1]) - 1
                    if k >= 0 and holes[k][1] > span[0]:
                        continue
                cands.append((span[0], span[1], rt.index))
        return _resolve(cands, start), seen


class _PendingIndex:
    """Finds the leftmost position from which the text could still become a match.

    Each rule contributes a prefix regex (see ``patterns.py``) and how far a
    prefix can reach. Rules that reach at most ``SHORT`` characters only need
    checking in the last ``SHORT`` characters, and only where the character
    at that position can begin one of them (a table by first character);
    the few long-reaching rules share one regex searched over the rest.
    ``two_back``: the tables also read the character two before a position
    (``_Search.classes``).
    """

    SHORT = 512

    def __init__(self, alts: list[tuple[str, int | None]], two_back: bool = True):
        short = [a for a, w in alts if w is not None and w <= self.SHORT]
        long = [a for a, w in alts if w is None or w > self.SHORT]
        # Both kinds are tried only where the character can begin them (a table by first
        # character): one regex of every long alternative costs a try of each of them at
        # every position searched (~100 alternatives), where the table tries a handful.
        self._short = _FirstCharTable(short, two_back)
        self._long = _FirstCharTable(long, two_back) if long else None
        # Within the last SHORT characters (all of a stream's held text, as a rule) both
        # kinds are tried in one pass: a position costs one look-up and one regex, not two.
        self._both = _JoinedTable(self._short, self._long) if long else self._short

    def _bucket(self, c: int) -> re.Pattern | None:
        return self._short.bucket(c)

    def tables(self) -> tuple["_Search", ...]:
        return (self._short,) if self._long is None else (self._short, self._long, self._both)

    def searched(self) -> "_Search":
        """The table ``locate`` searches held text shorter than ``SHORT`` with (both kinds of
        alternatives in one walk): a stream's searches, as a rule."""
        return self._both

    def warm(self) -> None:
        self._short.warm()
        if self._long is not None:
            self._long.warm()
            self._both.warm()

    @property
    def cold(self) -> int:
        if self._long is None:
            return self._short.cold
        return self._short.cold + self._long.cold + self._both.cold

    def at(self, text: str, p: int, long_from: int = 0) -> bool:
        """Whether some alternative matches from ``p`` to the end (``start`` at one position)."""
        n = len(text)
        if p >= n:
            return False
        c = ord(text[p])
        c = c if c < 128 else 128
        if self._long is not None and p >= long_from:
            rx = self._long.bucket(c)
            if rx is not None and rx.match(text, p):
                return True
        if p < n - self.SHORT:
            return False
        rx = self._short.bucket(c)
        return rx is not None and rx.match(text, p) is not None

    def start(self, text: str, pos: int, long_from: int = 0) -> int:
        return self.locate(text, pos, long_from)[0]

    def locate(self, text: str, pos: int, long_from: int = 0) -> tuple[int, int]:
        """(``start``, where its leftmost long-reaching alternative matches, len(text)
        if none). ``long_from``: none matches before it (an index over more
        alternatives found so), so that search starts there."""
        n = len(text)
        near = max(pos, n - self.SHORT)  # where the short-reaching ones may begin
        long = self._long
        if long is None:
            return self._short.leftmost(text, near, n), n
        far = max(pos, long_from)
        if far < near:  # only the long-reaching ones before the last SHORT characters
            p = long.leftmost(text, far, near)
            if p < near:
                return p, p
        if near < long_from:  # no long-reaching one before long_from
            stop = min(long_from, n)
            p = self._short.leftmost(text, near, stop)
            if p < stop:
                return p, stop
            near = stop
        # Either kind from here: none matched before p, so p bounds the leftmost long one too
        p = self._both.leftmost(text, near, n)
        return p, p


class _Search:
    """The walk of ``_FirstCharTable`` and ``_JoinedTable``: ``masks()`` and the
    regexes to try where a mask has bits (``_tries``: (bits, table, bucket, singles,
    single, shift) each, the table's alternatives being the bits from ``shift`` up)."""

    _narrow: bool
    _spaced_scan: SpacedScan | None = None  # before the last run, where to start walking (``hold_scan.py``)
    _tries: tuple
    _spaced_tries: tuple
    _masks: tuple[list[list[int]], list[list[int]], list[list[int]]] | None
    _classes: tuple | bool | None  # classes() once built; False: no wider lookbehind, None: not built

    def masks(self) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
        raise NotImplementedError

    def classes(self) -> tuple | bool:
        """For the wider positive lookbehinds (``\\\\[nrt]`` before a token), which
        ``masks()`` reads as their last character: (code -> class of the character two
        before a position, as bytes; per class the ``before`` table; per class the
        ``spaced_before`` one), where a class is the characters two back that the same
        of those lookbehinds may look at. False when no alternative has one."""
        raise NotImplementedError

    def leftmost(self, text: str, pos: int, end: int) -> int:
        """The leftmost position in ``[pos, end)`` where an alternative matches to the
        end of ``text``; ``end`` if none does."""
        if pos >= end:
            return end
        before, spaced_before, after = self._masks or self.masks()
        classes = self._classes
        if classes is None:
            classes = self.classes()
        cmap, befores, spaced_befores = classes or (None, None, None)
        if self._narrow:
            tail = _last_run(text, pos)  # no whitespace from here to the end
            if tail > pos:
                stop = min(tail, end)
                scan = self._spaced_scan  # where the walk may find something, at C speed
                start = pos if scan is None or tail - pos < SCAN_MIN else scan.first(text, pos, tail, encode)
                if start < stop:
                    p = _walk(spaced_before, after, self._spaced_tries, text, start, stop, cmap, spaced_befores)
                    if p < stop:
                        return p
                pos = stop
        return _walk(before, after, self._tries, text, pos, end, cmap, befores)

    def spaced_alts(self) -> list[str]:
        """The alternatives that may consume whitespace (``spaced``)."""
        raise NotImplementedError


def _walk(before: list, after: list, tries: tuple, text: str, pos: int, end: int,
          cmap: bytes | None = None, befores: list | None = None) -> int:
    if pos >= end:
        return end
    # One code a character (128: any non-ASCII one); 129 before the text's start and
    # after its end. Walked as (previous, character, next) triples at C speed.
    codes = encode(text[max(0, pos - 1):end + 1]).translate(_CLAMP)
    if pos == 0:
        codes = _EDGE + codes
    if end >= len(text):
        codes += _EDGE
    p = pos
    for prev, c, nxt in zip(codes, codes[1:], codes[2:]):
        m = before[prev][c] & after[c][nxt]
        if m and cmap is not None:  # and by the character two back (``classes``)
            x = ord(text[p - 2]) if p > 1 else 129
            m &= befores[cmap[x if x < 128 else 128]][prev][c]
        if m:
            for bits, table, bucket, singles, single, shift in tries:
                x = m & bits
                if not x:
                    continue
                if x.bit_count() <= FEW:  # the few alternatives the masks left, each alone
                    x >>= shift
                    while x:
                        low = x & -x
                        i = low.bit_length() - 1
                        rx = singles[i]
                        if rx is False:
                            rx = single(i)
                        if rx.match(text, p):
                            return p
                        x ^= low
                    continue
                rx = table[c]
                if rx is False:
                    rx = bucket(c)
                if rx is not None and rx.match(text, p):
                    return p
        p += 1
    return end


# Up to this many alternatives left by the masks at a position are tried one regex each;
# more, the character's whole bucket in one. A bucket holds up to ~250 alternatives and
# the masks leave one to three of them at most positions a walk tries: one bucket try was
# 3-7 us where the one alternative's is well under one.
FEW = 6


_CLAMP = bytes(range(128)) + bytes([128]) * 128  # every byte of a non-ASCII character: 128
_EDGE = bytes([129])


class _JoinedTable(_Search):
    """Two tables searched in one walk (the short- and the long-reaching alternatives
    in the last SHORT characters): a position is looked at once, and each table's
    regex is tried where its own alternatives may begin. Nothing of its own to compile."""

    def __init__(self, first: "_FirstCharTable", second: "_FirstCharTable"):
        self._first, self._second = first, second
        self._shift = len(first._alts)
        self._narrow = first._narrow or second._narrow
        low = (1 << self._shift) - 1
        k = self._shift
        self._tries = ((low, first._table, first.bucket, first._singles, first.single, 0),
                       (~low, second._table, second.bucket, second._singles, second.single, k))
        self._spaced_tries = ((low, first._spaced, first.spaced_bucket, first._singles, first.single, 0),
                              (~low, second._spaced, second.spaced_bucket, second._singles, second.single, k))
        self._masks = None
        self._classes = None

    def masks(self) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
        if self._masks is None:
            k = self._shift
            one, two = self._first.masks(), self._second.masks()
            self._masks = _shared(tuple([[a | (b << k) for a, b in zip(ra, rb)] for ra, rb in zip(x, y)]
                                        for x, y in zip(one, two)))  # type: ignore[assignment]
        return self._masks  # type: ignore[return-value]

    def classes(self) -> tuple | bool:
        if self._classes is None:
            one, two = self._first.classes(), self._second.classes()
            if not one and not two:
                self._classes = False
                return False
            (b1, s1, _), (b2, s2, _) = self._first.masks(), self._second.masks()
            one = one or (bytes(130), [b1], [s1])
            two = two or (bytes(130), [b2], [s2])
            k = self._shift
            ids: dict[tuple[int, int], int] = {}
            cmap = bytes(ids.setdefault((x, y), len(ids)) for x, y in zip(one[0], two[0]))
            joined = [_shared(tuple([[a | (b << k) for a, b in zip(ra, rb)] for ra, rb in zip(x, y)]
                                    for x, y in ((one[1][i], two[1][j]), (one[2][i], two[2][j]))))
                      for i, j in ids]
            self._classes = (cmap, [t[0] for t in joined], [t[1] for t in joined])
        return self._classes

    def warm(self) -> None:
        self.masks()
        self.classes()

    def spaced_alts(self) -> list[str]:
        return self._first.spaced_alts() + self._second.spaced_alts()

    @property
    def cold(self) -> int:
        return int(self._masks is None) + int(self._classes is None)


class _FirstCharTable(_Search):
    """Alternatives (prefix regexes, each anchored at the end of the text) by the
    characters that can begin them: ``bucket(c)`` is one regex of those that may
    start with character ``c`` (128: any non-ASCII one), None when none can.
    A regex's first characters are those it matches alone (prefix regexes match
    every prefix of a match); a positive lookbehind is set aside for that (it only
    restricts), and an alternative that cannot be analysed so may begin anywhere.

    A search looks at the characters on either side of a position too: which
    alternatives may begin at ``c`` after ``prev`` (``_begins_after``: a rule that
    opens with ``\\b`` only at a word's start, one that opens with ``(?<=\\n)``
    only on a new line) and which may begin at ``c`` followed by ``next``
    (``_goes_on_with``: ``azure...`` only where ``az`` is). Both are bit masks
    over the alternatives; where they share none, the position costs two
    look-ups and no regex (most letters of prose: a rule named by a keyword may
    begin at any of its first letter).

    Most alternatives (tokens, names, URLs) consume no whitespace, so they can
    match to the end only from inside the text's last run without any: before
    it, ``leftmost`` tries by a second table of only those that may consume
    some (``spaced``), and finds that run with one regex search, not by
    looking at each position. A prose or code stream's new text is mostly
    before its last word."""

    def __init__(self, alts: list[str], two_back: bool = True):
        self._alts = alts
        firsts = [_first_chars(alt) for alt in alts]
        self._members: list[tuple[int, ...]] = [
            tuple(i for i, f in enumerate(firsts) if c in f) for c in range(129)
        ]
        spaced = {i for i, alt in enumerate(alts) if _consumes_space(alt)}
        self._narrow = len(spaced) < len(alts)  # some alternative consumes no whitespace
        self._spaced_members = [tuple(i for i in m if i in spaced) for m in self._members]
        self._spaced_mask = sum(1 << i for i in spaced)
        self._table: list[re.Pattern | None | bool] = [False] * 129
        self._spaced: list[re.Pattern | None | bool] = [False] * 129
        self._masks = None
        self._classes = None if two_back else False  # two_back: ``classes()`` is built
        self._singles: list[re.Pattern | bool] = [False] * len(alts)  # each alternative alone (``single``)
        self._tries = ((-1, self._table, self.bucket, self._singles, self.single, 0),)
        self._spaced_tries = ((-1, self._spaced, self.spaced_bucket, self._singles, self.single, 0),)
        self._compiled: dict[tuple[int, ...], re.Pattern] = {}
        self._lock = threading.Lock()

    def bucket(self, c: int) -> re.Pattern | None:
        rx = self._table[c]
        if rx is False:
            rx = self._table[c] = self._regex(self._members[c])
        return rx  # type: ignore[return-value]

    def spaced_bucket(self, c: int) -> re.Pattern | None:
        """``bucket(c)`` of the alternatives that may consume whitespace."""
        rx = self._spaced[c]
        if rx is False:
            rx = self._spaced[c] = self._regex(self._spaced_members[c])
        return rx  # type: ignore[return-value]

    def single(self, i: int) -> re.Pattern:
        """Alternative ``i`` alone, anchored as a bucket is (a walk tries it where the
        masks leave few alternatives)."""
        rx = self._singles[i]
        if rx is False:
            rx = self._singles[i] = re.compile("(?:" + self._alts[i] + r")\Z", re.ASCII)
        return rx  # type: ignore[return-value]

    def _regex(self, members: tuple[int, ...]) -> re.Pattern | None:
        if not members:
            return None
        with self._lock:
            rx = self._compiled.get(members)
            if rx is None:
                rx = re.compile("(?:" + "|".join(self._alts[i] for i in members) + r")\Z", re.ASCII)
                self._compiled[members] = rx
        return rx

    def masks(self) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
        """(before, spaced_before, after): ``before[prev][c]`` the alternatives (bits) that
        may begin at ``c`` after ``prev``, ``after[c][next]`` those that may begin at ``c``
        followed by ``next``; 128 is any non-ASCII character, 129 none (the text's
        start, its end). Built once, from each alternative's own (cached) tables."""
        masks = self._masks
        if masks is not None:
            return masks
        afters = [_goes_on_with(alt) for alt in self._alts]
        of_char = [sum(1 << i for i in m) for m in self._members]
        before, spaced_before = self._before([_begins_after(alt) for alt in self._alts])
        after = [[of_char[c]] * 130 for c in range(129)]
        for i, a in enumerate(afters):
            bit = 1 << i
            for c in self._members_of(i):
                if a is not None and c in a:
                    allowed = a[c]
                    row = after[c]
                    for nxt in range(128):
                        if not allowed >> nxt & 1:
                            row[nxt] &= ~bit
        masks = _shared((before, spaced_before, after))
        with self._lock:
            if self._masks is None:
                self._masks = masks
        return self._masks  # type: ignore[return-value]

    def _before(self, befores: list) -> tuple[list[list[int]], list[list[int]]]:
        """(before, spaced_before) from each alternative's ``_begins_after``."""
        of_char = [sum(1 << i for i in m) for m in self._members]
        before = [list(of_char) for _ in range(130)]
        for i, b in enumerate(befores):
            bit = 1 << i
            for c in self._members_of(i):
                if b is not None and c in b:
                    allowed = b[c]
                    for prev in range(128):
                        if not allowed >> prev & 1:
                            before[prev][c] &= ~bit
        sp = self._spaced_mask
        return before, [[m & sp for m in row] for row in before]

    def classes(self) -> tuple | bool:
        classes = self._classes
        if classes is not None:
            return classes
        seconds = [_wide_seconds(alt) for alt in self._alts]
        if not any(seconds):
            classes = False
        else:
            sigs: dict[tuple, int] = {}
            cmap = bytes(sigs.setdefault(tuple(tuple(_looks_at(sl, x) for sl in secs) for secs in seconds), len(sigs))
                         for x in range(130))
            masks = self.masks()
            tables = []
            for sig in sigs:
                keys = [_wide_key(w) for w in sig]
                if not any(keys):  # every lookbehind kept (a non-ASCII character two back): the one table
                    tables.append(masks[:2])
                else:
                    tables.append(_shared(self._before([_begins_after(a, k) for a, k in zip(self._alts, keys)])))
            classes = (cmap, [t[0] for t in tables], [t[1] for t in tables])
        with self._lock:
            if self._classes is None:
                self._classes = classes
        return self._classes

    def spaced_alts(self) -> list[str]:
        return [a for i, a in enumerate(self._alts) if self._spaced_mask >> i & 1]

    def _members_of(self, i: int) -> list[int]:
        return [c for c in range(128) if i in self._members[c]]

    def warm(self) -> None:
        """Every bucket compiled now: a stream would otherwise compile each as its
        first character comes, in the first turns of the process."""
        for c in range(129):
            self.bucket(c)
            self.spaced_bucket(c)
        for i in range(len(self._alts)):
            self.single(i)
        self.masks()
        self.classes()

    @property
    def cold(self) -> int:
        return (self._table.count(False) + self._spaced.count(False) + self._singles.count(False)
                + (self._masks is None) + (self._classes is None))


def _looks_at(seconds: frozenset[int] | None, x: int) -> bool:
    """Whether a lookbehind that may look at ``seconds`` two characters back may hold
    when that character is ``x`` (128: any non-ASCII one, 129: none, the text's start)."""
    return seconds is None or x == 128 or x in seconds


def _wide_key(wide: tuple[bool, ...]) -> tuple[bool, ...] | None:
    """``_begins_after``'s key: None when every wider lookbehind is kept (the one table)."""
    return None if all(wide) else wide

def _longest_first(strings: Sequence[str]) -> str:
    """An alternation of ``strings`` that matches, at a position, the longest of them
    there: grouped by first character, so the engine tests a position against a few
    dozen first characters instead of every string (~3× faster over prose and code)."""
    groups: dict[str, list[str]] = {}
    for o in sorted(filter(None, strings), key=lambda o: (-len(o), o)):
        groups.setdefault(o[0], []).append(o[1:])
    alts = [re.escape(c) + "(?:" + "|".join(map(re.escape, rest)) + ")" for c, rest in groups.items()]
    return "|".join(alts + [""] if "" in strings else alts)


def _shared(tables: tuple) -> tuple:
    """The mask tables with equal rows one list and equal masks one int (most rows
    are alike: a table is ~50K cells)."""
    ints: dict[int, int] = {}
    rows: dict[tuple[int, ...], list[int]] = {}
    out = []
    for table in tables:
        shared = []
        for row in table:
            row = [ints.setdefault(m, m) for m in row]
            shared.append(rows.setdefault(tuple(row), row))
        out.append(shared)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _wide_seconds(alt: str) -> tuple[frozenset[int] | None, ...]:
    """For each positive lookbehind of ``alt`` wider than one character, in order, what
    it may look at two characters back (``_second_last``)."""
    seconds: list = []
    _without_lookbehinds(alt, True, keep_single=True, seconds=seconds)
    return tuple(seconds)


@functools.lru_cache(maxsize=8192)
def _begins_after(alt: str, wide: tuple[bool, ...] | None = None) -> dict[int, int] | None:
    """For each ASCII character ``alt`` may begin with, the ASCII characters that may
    come before it there, as bits (None: any, whatever the character). Read by trying the
    two characters; a lookbehind that looks further back than one character
    stands for what it says of the last one (``(?<=\\\\[nr])`` for ``(?<=[nr])``),
    or is set aside (they only restrict; what stays — ``\\b``, ``^``,
    one-character lookbehinds — sees the real previous character). A safe
    superset, as ``_first_chars`` is. ``wide``: as ``_without_lookbehinds`` takes it,
    for the table of a character two back that some of those cannot look at."""
    if not any(tok in alt for tok in ("\\b", "\\B", "(?<", "^")):
        return None
    narrow = _without_lookbehinds(alt, True, keep_single=True, wide=wide)
    if narrow is None:
        return None
    rx = re.compile(narrow + r"\Z", re.ASCII)
    out: dict[int, int] = {}
    for c in _first_chars(alt):
        if c < 128:
            ch = chr(c)
            out[c] = sum(1 << p for p in range(128) if rx.match(chr(p) + ch, 1))
    return out


@functools.lru_cache(maxsize=4096)
def _goes_on_with(alt: str) -> dict[int, int] | None:
    """For each ASCII character ``alt`` may begin with, the ASCII characters that may
    follow it in a match in progress, as bits (tried as ``_first_chars`` tries the first: at
    the start of the text and after a word character, lookbehinds set aside)."""
    one = _loose(alt, False)
    after = _loose(alt, True)
    if one is None or after is None:
        return None
    out: dict[int, int] = {}
    for c in _first_chars(alt):
        if c < 128:
            ch = chr(c)
            out[c] = sum(1 << x for x in range(128) if one.match(ch + chr(x)) or after.match("a" + ch + chr(x), 1))
    return out


_SPACES = " \t\n\r\f\v"  # whitespace as the rules' regexes read it (ASCII)


def _last_run(text: str, pos: int) -> int:
    """Where ``text``'s last run of characters that are not whitespace begins, ``pos``
    or later (``len(text)`` when it ends with some). Found from the end, one search
    per whitespace character, each narrowing the next: a regex searched from ``pos``
    would try every start, which costs the square of a long word's length."""
    for ch in _SPACES:
        k = text.rfind(ch, pos)
        if k >= pos:
            pos = k + 1
    return pos


_SPACE_CODES = frozenset(map(ord, " \t\n\r\f\v"))


@functools.lru_cache(maxsize=4096)
def _consumes_space(alt: str) -> bool:
    """Whether a match of ``alt`` may hold a whitespace character (in what it consumes:
    assertions look, they consume nothing). True when the walk meets a construct it
    does not know."""
    try:
        tree = sre_parse.parse(alt, re.ASCII)
    except (re.error, RecursionError, OverflowError):
        return True

    def klass(items) -> bool:
        negate = False
        hit: set[int] = set()
        for op, av in items:
            if op is sre_c.NEGATE:
                negate = True
            elif op is sre_c.LITERAL:
                hit |= {av} & _SPACE_CODES
            elif op is sre_c.RANGE:
                hit |= {c for c in _SPACE_CODES if av[0] <= c <= av[1]}
            elif op is sre_c.CATEGORY:
                if av in (sre_c.CATEGORY_SPACE, sre_c.CATEGORY_NOT_DIGIT, sre_c.CATEGORY_NOT_WORD):
                    hit |= _SPACE_CODES
                elif av not in (sre_c.CATEGORY_NOT_SPACE, sre_c.CATEGORY_DIGIT, sre_c.CATEGORY_WORD):
                    return True
            else:
                return True
        return hit != _SPACE_CODES if negate else bool(hit)

    def seq(items) -> bool:
        for op, av in items:
            if op is sre_c.LITERAL:
                if av in _SPACE_CODES:
                    return True
            elif op in (sre_c.NOT_LITERAL, sre_c.ANY):
                return True  # every whitespace character but at most one
            elif op is sre_c.IN:
                if klass(av):
                    return True
            elif op is sre_c.SUBPATTERN:
                if seq(av[3]):
                    return True
            elif op is sre_c.BRANCH:
                if any(seq(alt) for alt in av[1]):
                    return True
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
                if av[1] > 0 and seq(av[2]):
                    return True
            elif op is sre_c.ATOMIC_GROUP:
                if seq(av):
                    return True
            elif op is sre_c.GROUPREF_EXISTS:
                if seq(av[1]) or (av[2] is not None and seq(av[2])):
                    return True
            elif op not in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
                return True  # a back-reference, anything newer
        return False

    return seq(tree)


@functools.lru_cache(maxsize=4096)
def _first_chars(alt: str) -> frozenset[int]:
    """Characters (128: any non-ASCII) at which ``alt`` can begin, once per process
    (the indexes of rules whose heads came are built while streaming).

    Tried at the start of a one-character text, and after a word character: ``\\b``
    before a non-word character holds only after one (``\\B`` before a word
    character too). Without its positive lookbehinds the alternative matches more
    (they only ever restrict, and would fail on a lone character), and without its
    negative ones too for the second try, so that one word character stands for
    all: the result is a safe superset. 128 is read from the parse (an escape like
    ``\\u0436`` is a non-ASCII character that no sample character would stand for)."""
    one = _loose(alt, False)
    after = _loose(alt, True)
    if one is None or after is None:
        return frozenset(range(129))
    chars = {c for c in range(128) if one.fullmatch(chr(c)) or after.match("a" + chr(c), 1)}
    if may_begin_beyond_ascii(alt):
        chars.add(128)
    return frozenset(chars)


def _loose(alt: str, negative: bool) -> re.Pattern | None:
    if "(?<" in alt:
        alt = _without_lookbehinds(alt, negative)
        if alt is None:
            return None
    return re.compile(alt + r"\Z", re.ASCII)


def _without_lookbehinds(pattern: str, negative: bool = False, keep_single: bool = False,
                         wide: tuple[bool, ...] | None = None, seconds: list | None = None) -> str | None:
    """``pattern`` with every positive lookbehind group removed (``negative``: the
    negative ones too; ``keep_single``: but those that look at exactly one
    character, and the wider positive ones read as their last character), or None
    when that cannot be done safely (unbalanced text, or the result does not compile).

    With ``keep_single``, ``wide`` says of each wider positive lookbehind in turn
    whether it is kept so (True) or cannot hold (False: the character two back is
    none it may look at there); ``seconds`` collects, in the same order, what each
    may look at two back (``_second_last``)."""
    out: list[str] = []
    k = 0  # wider positive lookbehinds met
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a literal ] first in a class
                out.append("]")
                i += 1
            continue
        if pattern.startswith("(?<=", i) or negative and pattern.startswith("(?<!", i):
            depth, j, cls = 0, i, False
            while j < n:
                d = pattern[j]
                if d == "\\":
                    j += 2
                    continue
                if cls:
                    cls = d != "]"
                elif d == "[":
                    cls = True
                    if pattern.startswith("[^]", j) or pattern.startswith("[]", j):
                        j += 2 if pattern[j + 1] == "]" else 3
                        continue
                elif d == "(":
                    depth += 1
                elif d == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                return None
            if keep_single:
                inner = pattern[i + 4:j]
                if _one_wide(inner):
                    out.append(pattern[i:j + 1])
                elif pattern[i + 3] == "=":
                    if seconds is not None:
                        seconds.append(_second_last(inner))
                    last = _last_class(inner)
                    if wide is not None and not wide[k]:
                        out.append("(?!)")
                    elif last is not None:
                        out.append(f"(?<={last})")
                    k += 1
            i = j + 1
            continue
        out.append(c)
        i += 1
    stripped = "".join(out)
    try:
        re.compile(stripped, re.ASCII)
    except re.error:
        return None
    return stripped


def _one_wide(inner: str) -> bool:
    """Whether a lookbehind's body always looks at exactly one character."""
    try:
        return sre_parse.parse(inner, re.ASCII).getwidth() == (1, 1)
    except (re.error, RecursionError, OverflowError):
        return False


def _last_class(inner: str) -> str | None:
    """A one-character class of what a lookbehind's body may end with (ASCII;
    None when it cannot be told): ``\\\\[nr]`` gives ``[nr]``."""
    try:
        tree = sre_parse.parse(inner, re.ASCII)
    except (re.error, RecursionError, OverflowError):
        return None
    chars = _ending(list(tree), tree.state.flags)
    if chars is None:
        return None
    if not chars:
        return "(?!)"
    return "[" + "".join(f"\\x{c:02x}" for c in sorted(chars)) + "]"


def _second_last(inner: str) -> frozenset[int] | None:
    """What a lookbehind's body (of fixed width two or more) may look at one before its
    last character (ASCII, both cases of a letter; None when it cannot be told):
    ``\\\\[nr]`` gives the backslash, ``%[0-9A-F]{2}`` the hex digits."""
    try:
        tree = sre_parse.parse(inner, re.ASCII)
    except (re.error, RecursionError, OverflowError):
        return None
    chars = _before_last(list(tree), tree.state.flags)
    if chars is None:
        return None
    return frozenset(chars | {ord(chr(c).swapcase()) for c in chars if chr(c).isalpha()})


def _before_last(items: list, flags: int) -> set[int] | None:
    if not items:
        return None
    op, av = items[-1]
    state = sre_parse.State()
    state.flags = flags
    try:
        width = sre_parse.SubPattern(state, [(op, av)]).getwidth()
    except (re.error, RecursionError, OverflowError):
        return None
    if width == (1, 1):
        return _ending(items[:-1], flags)
    if width[0] != width[1] or width[0] < 2:
        return None
    if op is sre_c.SUBPATTERN:
        return _before_last(list(av[3]), (flags | av[1]) & ~av[2])
    if op is sre_c.BRANCH:
        out: set[int] = set()
        for alt in av[1]:
            got = _before_last(list(alt), flags)
            if got is None:
                return None
            out |= got
        return out
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        return _before_last(list(av[2]) * av[0], flags)
    return None


def _ending(items: list, flags: int) -> set[int] | None:
    if not items:
        return None
    op, av = items[-1]
    if op in (sre_c.LITERAL, sre_c.NOT_LITERAL, sre_c.IN, sre_c.ANY):
        state = sre_parse.State()
        state.flags = flags
        try:
            rx = sre_compile.compile(sre_parse.SubPattern(state, [(op, av)]), flags)
        except (re.error, RecursionError, OverflowError, TypeError):
            return None
        return {c for c in range(128) if rx.fullmatch(chr(c))}
    if op is sre_c.SUBPATTERN:
        return _ending(list(av[3]), (flags | av[1]) & ~av[2])
    if op is sre_c.BRANCH:
        out: set[int] = set()
        for alt in av[1]:
            got = _ending(list(alt), flags)
            if got is None:
                return None
            out |= got
        return out
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _ending(list(av[2]), flags)
    return None


def _in_progress(prefix: str, full: str, line: bool) -> str:
    """What a match in progress looks like: a prefix of one, or for a rule that
    reads the match's line, also a whole match whose line has not ended."""
    return f"(?:{prefix}|{full}[^\\n]{{0,{LINE_CONTEXT}}})" if line else prefix


def _placeholder_prefix() -> str:
    # Every prefix of "[REDACTED:<id>:<8 hex>]".
    head = "".join("(?:" + re.escape(c) for c in PLACEHOLDER_MARK)
    tail = r"[a-z0-9._-]{0,64}(?::[0-9a-f]{0,8}\]?)?"
    return head + tail + ")?" * len(PLACEHOLDER_MARK)


def _placeholder(pid: str, secret: str, key: bytes) -> str:
    mac = hmac.new(key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:8]
    return f"[REDACTED:{pid}:{mac}]"


def _check_key(key: bytes) -> None:
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise RedactionError("redaction needs a non-empty session key (bytes)")


def _chain(rt: _Runtime, text: str, start: int, intervals: list[tuple[int, int]]):
    """The rule's ``finditer`` matches from ``start`` whose start lies in ``intervals``.

    Matches can only start inside the intervals (the prefilter guarantees it),
    so searching only there gives exactly what ``finditer`` over the whole
    text would. ``endpos`` is set far enough past an interval that no attempt
    starting inside it can tell the difference.

    Intervals closer than that reach are searched as one: a search that finds
    nothing in an interval runs on to its ``endpos``, so searching dense
    intervals one by one would re-scan up to ``reach`` characters per
    interval (quadratic on text made of a repeated prefix). Merged, each
    position is tried at most once, plus one ``reach`` per merged interval.
    Searching the gaps between intervals changes nothing: no match starts
    there, and an attempt there sees the same text it would in ``finditer``.
    """
    n = len(text)
    info = rt.info
    search = rt.search
    reach = None if info.max_len is None else info.max_len + info.ahead + 2
    pos = start
    for a, b in _merge_within(intervals, reach):
        if b < pos:
            continue
        p = a if a > pos else pos
        end = n if reach is None else min(n, b + reach)
        while p <= b:
            m = search(text, p, end)
            if m is None:
                break
            s = m.start()
            if s > b:
                break
            yield m
            e = m.end()
            pos = e if e > s else e + 1
            p = pos


def _merge_within(intervals: list[tuple[int, int]], reach: int | None) -> list[tuple[int, int]]:
    """Sorted intervals, with those that start within ``reach`` of the previous end joined
    (all of them when the reach is unbounded)."""
    if len(intervals) < 2:
        return intervals
    if reach is None:
        return [(intervals[0][0], max(b for _, b in intervals))]
    out = [intervals[0]]
    for a, b in intervals[1:]:
        pa, pb = out[-1]
        if a <= pb + reach:
            if b > pb:
                out[-1] = (pa, b)
        else:
            out.append((a, b))
    return out


def _validate(rt: _Runtime, m: re.Match, text: str) -> tuple[int, int] | None:
    rule = rt.rule
    if rt.first_group:
        s = e = -1
        for g in range(1, rule.regex.groups + 1):
            gs, ge = m.span(g)
            if ge > gs >= 0:
                s, e = gs, ge
                break
        if s < 0:
            s, e = m.span()
    else:
        s, e = m.span(rule.secret_group or 0)
    if s < 0 or e <= s:
        return None
    secret = text[s:e]
    if rule.keywords:
        around = _line(text, m.start(), m.end()).lower()
        if not any(k in around for k in rule.keywords):
            return None
    if rule.entropy and shannon_entropy(secret) <= rule.entropy:
        return None
    if rule.check is not None and not CHECKS[rule.check](secret):
        return None
    if rt.allowlists:
        whole = m.group(0)
        line = lambda: _line(text, m.start(), m.end())  # noqa: E731 - computed only when asked
        for allow in rt.allowlists:
            if allow.allows(secret, whole, line):
                return None
    return s, e


def _resolve(cands: list[tuple[int, int, int]], start: int) -> list[tuple[int, int, int]]:
    """Leftmost, then longest, then earliest rule names a span; a finding that
    overlaps it joins it (the span grows to its end), so no part of any secret
    is left in the text: a credential inside another one's value (``Bearer
    NAME_KEY=v@lue``, where the bearer token stops at ``@``) goes whole."""
    if not cands:
        return []
    cands.sort(key=lambda c: (c[0], c[0] - c[1], c[2]))
    out: list[tuple[int, int, int]] = []
    cursor = start
    for c in cands:
        if c[0] >= cursor:
            out.append(c)
            cursor = c[1]
        elif out and c[1] > cursor:
            s, _, i = out[-1]
            out[-1] = (s, c[1], i)
            cursor = c[1]
    return out
