"""Where a rule could match: Hyperscan events, or required literals.

Both prefilters answer the same question for the engine: for each rule, a
sorted list of intervals ``[a, b]`` of positions where a match may *start*.
The engine then runs the rule's Python regex only there. A prefilter may
over-report (the regex decides) but must never miss a real match start.

- ``HyperscanIndex`` compiles every rule's relaxed prefix pattern (see
  ``patterns.py``) into one database (once; the serialized database is cached
  on disk under a hash of the pattern set). A real match starting at ``s``
  makes the relaxed pattern match from ``s`` to some end ``e``; per pattern
  the index uses start-of-match reporting when Hyperscan can (``som``:
  ``s`` lies between the reported start and ``e - hs_min``), else end-only
  reporting for patterns of bounded length (``end``/``prefilter``: ``s``
  lies within ``[e - hs_max, e - hs_min]``). Patterns Hyperscan cannot take
  are left to the literal prefilter.
- ``literal_intervals`` uses the literals every match must contain.
"""
from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import logging
import os
import re
import struct
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Sequence

from .patterns import PatternInfo

log = logging.getLogger("ctxproxy.redaction")

try:  # optional: the pure-Python path works without it
    import hyperscan as _hs
except ImportError:  # pragma: no cover - depends on the platform
    _hs = None

# Serialized databases compiled by this process, by cache key (several apps in one
# process, e.g. tests, share them even without a cache directory).
_MEMO: dict[str, tuple[dict[int, str], bytes]] = {}
_MEMO_LOCK = threading.Lock()

SOM = "som"
END = "end"
PREFILTER = "prefilter"
_MAGIC = b"CTXHSDB1"


def hyperscan_available() -> bool:
    return _hs is not None


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort and merge inclusive intervals that overlap or touch."""
    if not intervals:
        return []
    intervals.sort()
    out = [intervals[0]]
    for a, b in intervals[1:]:
        pa, pb = out[-1]
        if a <= pb + 1:
            if b > pb:
                out[-1] = (pa, b)
        else:
            out.append((a, b))
    return out


def literal_positions(low: bytes, literal: bytes) -> list[int]:
    out = []
    find = low.find
    i = find(literal)
    while i >= 0:
        out.append(i)
        i = find(literal, i + 1)
    return out


def literal_intervals(info: PatternInfo, low: bytes, start: int, memo: dict[str, list[int]]) -> list[tuple[int, int]]:
    """Start intervals from the required literals of ``info`` (``low`` is lower-cased)."""
    n = len(low)
    if info.literals is None:
        return [(start, n)]
    positions: list[int] = []
    for lit in info.literals:
        hits = memo.get(lit)
        if hits is None:
            hits = memo[lit] = literal_positions(low, lit.encode("ascii"))
        positions.extend(hits)
    if not positions:
        return []
    if info.max_len is None:
        return [(start, max(positions))] if max(positions) >= start else []
    span = info.max_len
    out = []
    for lit in info.literals:
        width = len(lit)
        for p in memo[lit]:
            if p >= start:
                out.append((max(start, p + width - span), p))
    return merge(out)


def _flags(info: PatternInfo, mode: str) -> int:
    f = 0
    if info.hs_caseless:
        f |= _hs.HS_FLAG_CASELESS
    if info.hs_dotall:
        f |= _hs.HS_FLAG_DOTALL
    if info.hs_multiline:
        f |= _hs.HS_FLAG_MULTILINE
    if mode == SOM:
        f |= _hs.HS_FLAG_SOM_LEFTMOST
    elif mode == PREFILTER:
        f |= _hs.HS_FLAG_PREFILTER
    return f


def _try(pattern: bytes, flags: int) -> bool:
    db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
    try:
        db.compile(expressions=[pattern], ids=[0], elements=1, flags=[flags])
    except _hs.error:
        return False
    return True


_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_CLASS = re.compile(rb"\[\^?\]?[^\]]*\]")


def joinable(info: PatternInfo) -> bool:
    """Whether the relaxed pattern matches within a text exactly where it matches within
    that text joined to others by newlines (``HyperscanIndex.joined_events``): no anchor
    that sees the text's own ends (``\\A``, ``\\Z``, ``\\z``; ``^`` and ``$`` outside a class
    unless multi-line, where a newline is an end too). ``\\b`` sees a newline as the text's
    end already."""
    pattern = info.hs_pattern
    if pattern is None:
        return False
    if re.search(rb"\\[AZzG]", pattern):
        return False
    bare = _CLASS.sub(b"", _ESCAPE.sub(b"", pattern))
    return info.hs_multiline or (b"^" not in bare and b"$" not in bare)


class HyperscanIndex:
    """One Hyperscan block-mode database over many rules' relaxed patterns."""

    def __init__(self, infos: dict[int, PatternInfo], cache_dir: str | os.PathLike | None = None):
        if _hs is None:
            raise RuntimeError("hyperscan is not installed")
        self.infos = infos
        self._lock = threading.Lock()
        items = sorted((i, info) for i, info in infos.items() if info.hs_pattern is not None)
        digest = hashlib.sha256(json.dumps(
            [_hs.__version__, [(i, info.hs_pattern.decode(), info.hs_caseless, info.hs_dotall,
                                info.hs_multiline, info.hs_min, info.hs_max) for i, info in items]]
        ).encode()).hexdigest()
        self.cache_key = digest[:32]
        self.from_cache = False  # read from the cache directory
        self.from_memory = False  # compiled earlier by this process
        with _MEMO_LOCK:
            memo = _MEMO.get(self.cache_key)
        loaded = None
        if memo is not None:
            loaded = memo[0], (_hs.loadb(memo[1], _hs.HS_MODE_BLOCK) if memo[1] else None)
            self.from_memory = True
        else:
            loaded = self._load(cache_dir)
            self.from_cache = loaded is not None
        if loaded is None:
            # Optimistic first: every pattern in its preferred mode, one compile.
            modes = {i: (END if info.hs_max is not None else SOM) for i, info in items}
            try:
                db = self._compile(modes)
            except _hs.error:
                # Some pattern needs another mode (or cannot be used): test them one by one.
                modes = {}
                for i, info in items:
                    mode = self._choose_mode(info)
                    if mode is not None:
                        modes[i] = mode
                db = self._compile(modes)
            self._store(cache_dir, modes, db)
            with _MEMO_LOCK:
                _MEMO[self.cache_key] = (dict(modes), _hs.dumpb(db) if db is not None else b"")
        else:
            modes, db = loaded
            if not self.from_memory:
                with _MEMO_LOCK:
                    _MEMO[self.cache_key] = (dict(modes), _hs.dumpb(db) if db is not None else b"")
        self.modes: dict[int, str] = modes
        self._db = db
        if db is not None:
            db.scratch = _hs.Scratch(db)

    @property
    def covered(self) -> frozenset[int]:
        return frozenset(self.modes)

    def _choose_mode(self, info: PatternInfo) -> str | None:
        order = [SOM] if info.hs_max is None else [END, PREFILTER, SOM]
        for mode in order:
            if _try(info.hs_pattern, _flags(info, mode)):
                return mode
        return None

    def _compile(self, modes: dict[int, str]):
        if not modes:
            return None
        ids = sorted(modes)
        db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
        db.compile(
            expressions=[self.infos[i].hs_pattern for i in ids],
            ids=ids,
            elements=len(ids),
            flags=[_flags(self.infos[i], modes[i]) for i in ids],
        )
        return db

    def _path(self, cache_dir) -> Path | None:
        return Path(cache_dir) / f"hs-{self.cache_key}.db" if cache_dir else None

    def _load(self, cache_dir):
        path = self._path(cache_dir)
        if path is None or not path.is_file():
            return None
        try:
            raw = path.read_bytes()
            if not raw.startswith(_MAGIC):
                return None
            (hlen,) = struct.unpack(">I", raw[8:12])
            header = json.loads(raw[12:12 + hlen])
            if header.get("key") != self.cache_key:
                return None
            modes = {int(k): v for k, v in header["modes"].items()}
            body = raw[12 + hlen:]
            db = _hs.loadb(bytes(body), _hs.HS_MODE_BLOCK) if body else None
            return modes, db
        except Exception as exc:  # a corrupt or foreign cache file is rebuilt, not trusted
            log.warning("redaction: ignoring unreadable hyperscan cache %s (%s)", path.name, type(exc).__name__)
            return None

    def _store(self, cache_dir, modes: dict[int, str], db) -> None:
        path = self._path(cache_dir)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            header = json.dumps({"key": self.cache_key, "modes": {str(k): v for k, v in modes.items()}}).encode()
            body = _hs.dumpb(db) if db is not None else b""
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".hs-", suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + struct.pack(">I", len(header)) + header + body)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("redaction: could not write hyperscan cache (%s)", type(exc).__name__)

    def events(self, data: bytes) -> dict[int, list[tuple[int, int]]]:
        """rule index -> [(start or -1, end)] for every Hyperscan match event."""
        out: dict[int, list[tuple[int, int]]] = {}
        if self._db is None or not data:
            return out
        raw: list[tuple[int, int, int]] = []
        add = raw.append

        def on_match(rid: int, frm: int, to: int, flags: int, ctx: object) -> None:
            add((rid, frm, to))

        with self._lock:
            self._db.scan(data, match_event_handler=on_match)
        for rid, frm, to in raw:
            lst = out.get(rid)
            if lst is None:
                lst = out[rid] = []
            lst.append((frm, to))
        return out

    @property
    def joinable(self) -> bool:
        """Every pattern in the database is ``joinable``: ``joined_events`` may stand for
        scanning each text alone."""
        return all(joinable(self.infos[i]) for i in self.modes)

    def joined_events(self, texts: Sequence[bytes]) -> set[int]:
        """Indexes of ``texts`` (``engine.encode``d) in which some pattern may match: one scan
        of them joined by newlines. A match within a text alone is a match within the joined
        data ending in that text (for ``joinable`` patterns), so a text not named has no event
        of its own and no rule to run; a match across a newline names a text too, which only
        costs its own scan."""
        return self.joined_data_events(b"\n".join(texts), [len(t) for t in texts])

    def joined_data_events(self, data: bytes, lengths: Sequence[int]) -> set[int]:
        """``joined_events`` of texts already joined by newlines into ``data`` (one
        encode of them all), given each one's length."""
        if self._db is None:
            return set()
        ends = list(itertools.accumulate(n + 1 for n in lengths))  # each text's end, its newline included
        last: list[int] = []
        add = last.append

        def on_match(rid: int, frm: int, to: int, flags: int, ctx: object) -> None:
            add(to)

        with self._lock:
            self._db.scan(data, match_event_handler=on_match)
        return {bisect.bisect_right(ends, to - 1) for to in set(last)}

    def intervals(self, rid: int, events: Iterable[tuple[int, int]], start: int) -> list[tuple[int, int]]:
        info = self.infos[rid]
        lo, hi = info.hs_min, info.hs_max
        som = self.modes[rid] == SOM
        out = []
        for frm, to in events:
            b = to - lo
            if b < start:
                continue
            if som:
                a = frm if hi is None else max(frm, to - hi)
            else:
                a = to - hi
            out.append((max(a, start), b))
        return merge(out)
