"""Redacting text that arrives in pieces, and JSON documents inside strings.

``StreamRedactor`` serves one output channel (one content block, one choice's
text, one thinking block). ``feed(chunk)`` returns what can be sent now;
``flush()`` returns the rest at block end. The concatenation of everything
it returns equals ``Redactor.redact(whole text)``: it is the same engine run
on the unsent part, and text is released only up to a point where no match
can still be in progress.

How much is held back: the redactor's *pending* regex finds the leftmost
position from which the unsent text could still grow into a match (or a
match whose verdict depends on characters not yet seen). Text before it is
sent, except that a cut never falls inside a regex match. Ordinary prose is
not delayed beyond the word being typed (a word can still become
``password=...``); inside something that looks like a token, at most about
that rule's maximum length is held (``Redactor.max_hold``, plus the
slack below). Positions once found unable to start a match are never
examined again.

Cost: examining the held text costs time proportional to it (the regexes
cannot resume where they stopped). So once more than ``LAZY`` characters are
held, the held text is examined again only after it has grown by a quarter
since the last look; a long stream of small deltas inside something that
looks like a token then costs amortised O(1) regex work per character
instead of O(held). The price is that up to a quarter more than
``max_hold`` (and never fewer than ``LAZY`` characters) may be held; what is
sent, concatenated, is unchanged.

Tool-call arguments are JSON inside a string: the caller assembles them
until the block ends and calls ``redact_json_text``, which decodes, redacts
every string (values and keys), and re-encodes only if something changed.
"""
from __future__ import annotations

import json
from typing import Any

from .engine import Redactor, Result, _check_key
from .errors import RedactionError
from .vault import Vault


class StreamRedactor:
    """Incremental redaction of one channel of streamed text."""

    LAZY = 1024  # held characters up to which every chunk is examined at once

    def __init__(self, redactor: Redactor, key: bytes, vault: Vault | None = None):
        _check_key(key)
        self._r = redactor
        self._key = bytes(key)
        self._vault = vault
        self._ctx = ""  # already-sent original text kept as left context for the regexes
        self._buf = ""  # received since the last cut (examined again on each look)
        self._sent = 0  # leading characters of _buf already released (no secret can begin there)
        self._new: list[str] = []  # received since the last look, not yet joined to _buf
        self._new_len = 0
        self._checked = 0  # positions of _buf before this cannot start a match
        self._quiet = 0  # characters of _buf after the last look
        self.counts: dict[str, int] = {}
        self.closed = False

    @property
    def held(self) -> int:
        """Characters received but not yet released."""
        return len(self._buf) - self._sent + self._new_len

    def feed(self, chunk: str) -> str:
        if self.closed:
            raise RedactionError("stream redactor used after flush")
        if not isinstance(chunk, str):
            raise RedactionError(f"stream redaction expects text, got {type(chunk).__name__}")
        if not chunk:
            return ""
        self._new.append(chunk)
        self._new_len += len(chunk)
        if len(self._buf) + self._new_len > self.LAZY and self._new_len * 4 < self._quiet:
            return ""  # looked at this recently: wait until the examined text grows by a quarter
        return self._release(final=False)

    def flush(self) -> str:
        """Release everything held (end of the block)."""
        if self.closed:
            return ""
        out = self._release(final=True) if self.held else ""
        self.closed = True
        return out

    def _release(self, final: bool) -> str:
        try:
            return self._release_inner(final)
        except RedactionError:
            raise
        except Exception as exc:
            raise RedactionError(f"stream redaction failed ({type(exc).__name__})") from None

    def _release_inner(self, final: bool) -> str:
        """Two positions bound what goes out. The *cut*: before it no match can
        still be in progress, so the regexes restart there next time (text
        before it is final). The *hold*: before it no secret can still begin,
        so text up to there is released even if it is examined again (the
        start of a URL whose ``://`` has not come, a word that may yet turn
        out to name a variable); the first finding past the cut bounds it too."""
        r = self._r
        if self._new:
            self._buf += "".join(self._new)
            self._new.clear()
            self._new_len = 0
        seg = self._ctx + self._buf
        base = len(self._ctx)
        sent = base + self._sent
        if final:
            return self._emit(seg, r._scan(seg, base)[0], sent, len(seg))
        pending, long_at = r._pending_locate(seg, base + self._checked)
        hold = r._secret_start(seg, pending, sent, long_at)
        if pending == base and hold <= sent:  # nothing can go, and nothing is final
            self._checked = 0
            self._quiet = len(self._buf)
            return ""
        spans, seen = r._scan(seg, base)
        cut = max(base, _cut_outside(seen, pending)) if seen else pending  # never inside a match (nor a placeholder)
        first = next((sp[0] for sp in spans if sp[0] >= cut), len(seg)) if spans else len(seg)
        release = max(cut, min(hold, first), sent)
        out = self._emit(seg, spans, sent, release)
        if cut > base:
            keep = r.context_chars
            self._ctx = seg[max(0, cut - keep):cut]
            self._buf = seg[cut:]
            base = cut
        self._sent = release - base
        self._checked = max(0, pending - base)
        self._quiet = len(self._buf)
        return out

    def _emit(self, seg: str, spans, start: int, stop: int) -> str:
        """``seg[start:stop]`` with its secrets replaced."""
        if stop <= start:
            return ""
        if not spans:  # the usual case: no secret here
            return seg[start:stop]
        for s, e, _ in spans:
            if s < start < e:  # the hold guarantees this never happens; fail closed if it did
                raise RedactionError("stream redaction: a secret began in text already sent")
        out = self._r._render(seg, [sp for sp in spans if start <= sp[0] < stop], self._key, self._vault, start,
                              stop)
        for rid, n in out.counts.items():
            self.counts[rid] = self.counts.get(rid, 0) + n
        return out.text


def _cut_outside(spans: list[tuple[int, int]], cut: int) -> int:
    """The largest position <= ``cut`` that lies strictly inside none of ``spans``.

    Spans that overlap (not merely touch) form chains; a cut inside a chain
    moves to the chain's start. One sort instead of moving the cut one span
    at a time (which is quadratic in the number of spans)."""
    inside = [(s, e) for s, e in spans if s < cut]
    if not inside:
        return cut
    inside.sort()
    group_start, group_end = inside[0]
    for s, e in inside[1:]:
        if s < group_end:  # overlaps the chain (a span starting where it ends does not)
            if e > group_end:
                group_end = e
        else:
            if group_start < cut < group_end:
                return group_start
            group_start, group_end = s, e
    return group_start if group_start < cut < group_end else cut


def redact_json_text(redactor: Redactor, text: str, key: bytes, vault: Vault | None = None) -> Result:
    """Redact a JSON document held in a string (tool-call arguments).

    Every string inside it is decoded and scanned (so JSON escaping cannot
    hide a secret); the document is re-encoded only when something changed.
    Text that is not JSON is redacted as plain text.
    """
    _check_key(key)
    if not isinstance(text, str):
        raise RedactionError(f"redaction expects text, got {type(text).__name__}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return redactor.redact(text, key, vault)
    counts: dict[str, int] = {}
    try:
        new, changed = _walk(value, redactor, key, vault, counts)
        if not changed:
            return Result(text)
        return Result(json.dumps(new, ensure_ascii=False, separators=(",", ":")), counts)
    except RedactionError:
        raise
    except Exception as exc:
        raise RedactionError(f"redaction of a JSON document failed ({type(exc).__name__})") from None


def redact_json_value(redactor: Redactor, value: Any, key: bytes, vault: Vault | None = None
                      ) -> tuple[Any, dict[str, int]]:
    """Redact every string inside an already decoded JSON value; returns (value, counts)."""
    _check_key(key)
    counts: dict[str, int] = {}
    new, _ = _walk(value, redactor, key, vault, counts)
    return new, counts


def _walk(value: Any, r: Redactor, key: bytes, vault: Vault | None, counts: dict[str, int]) -> tuple[Any, bool]:
    if isinstance(value, str):
        res = r.redact(value, key, vault)
        if not res.changed:
            return value, False
        for rid, n in res.counts.items():
            counts[rid] = counts.get(rid, 0) + n
        return res.text, True
    if isinstance(value, list):
        changed = False
        out = []
        for item in value:
            new, c = _walk(item, r, key, vault, counts)
            out.append(new)
            changed |= c
        return (out if changed else value), changed
    if isinstance(value, dict):
        changed = False
        items = []
        for k, v in value.items():
            nk, ck = _walk(k, r, key, vault, counts)
            nv, cv = _walk(v, r, key, vault, counts)
            items.append((nk, nv))
            changed |= ck or cv
        return (dict(items) if changed else value), changed
    return value, False
