"""Compaction detection for the effect ledger: has the client's history lost
turns it contained before?

Per session the ledger keeps a few *threads* — one per conversation the
session carries. A thread is named by the conversation's profile (system text
and tool names: a sub-agent has another profile, an auxiliary call without
tools is not tracked at all) and its first item. For each thread we keep the
item count ``n`` of the last request and fingerprints of a logarithmic sample
of its items (positions 0, 1, 2, 4, 8, ... and the last two), so a turn costs
O(log n) item hashes, not O(conversation).

A request is a compaction when, for its thread:

- the history shrank (fewer items than last time), or a sampled item changed
  (a summary replaced turns, messages were dropped in the middle);
- it starts a new thread of a profile the session already had (the history
  was dropped or replaced by a summary: the first item changed);
- it carries a compaction item (``HistoryKeys.compaction_items``, Codex's)
  not seen before in this thread, or (first request of a session) a summary
  marker.

A request continuing with ``previous_response_id`` keeps its history on the
server: only compaction items count there.

Fingerprints ignore what clients rewrite on every turn without changing the
conversation (the request view's ``history_keys``, named by the adapter):
prompt-cache markers, and the form of call ids (OpenClaw sanitises them when
it replays history).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import orjson

from ctxproxy.store.bounded import ByteLRU, entry_bytes
from ctxproxy.store.services.digest import memo_key, sha256, text_sha256
from ..view import HistoryKeys
from .rules import normalize_id

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def _norm(value: Any, keys: HistoryKeys) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in keys.volatile:
                continue
            out[k] = normalize_id(v) if k in keys.ids and isinstance(v, str) else _norm(v, keys)
        return out
    if isinstance(value, list):
        return [_norm(v, keys) for v in value]
    return value


@functools.lru_cache(maxsize=8)
def _norm_keys(keys: HistoryKeys) -> re.Pattern:
    """A key that _norm rewrites or drops. In compact JSON a raw '"key":' can
    only be a key (quotes inside strings are escaped), so an item whose
    encoding has none is already normal: hash its encoding without the
    Python-level walk."""
    return re.compile(rb'"(?:' + b"|".join(re.escape(k.encode()) for k in sorted(keys.ids | keys.volatile))
                      + rb')":')


# History items come back on every turn: remember their fingerprints by the
# item's encoding (``memo_key``: no content kept).
MEMO_BYTES = 1 << 20  # each of the two memos below (~4K entries)
_FP_MEMO = ByteLRU(MEMO_BYTES, "history item fingerprints", fixed=entry_bytes(memo_key("x" * 64), "0" * 16))


def item_fp(item: Any, keys: HistoryKeys, encoding: bytes | None = None) -> str:
    """The item's fingerprint: a hash of its canonical (sorted, id-normalised)
    JSON; ``keys``: the request view's ``history_keys``. ``encoding``, the
    item's JSON in any key order when the caller has it (request views keep
    one per item), finds a fingerprint made before without encoding the item
    again. The memo assumes one ``keys`` per process (the adapters share one)."""
    key = memo_key(encoding) if encoding is not None else None
    fp = _FP_MEMO.get(key) if key is not None else None
    if fp is None:
        fp = _canonical_fp(item, keys)
        if key is not None:
            _FP_MEMO.put(key, fp)
    return fp


def _canonical_fp(item: Any, keys: HistoryKeys) -> str:
    try:
        raw = orjson.dumps(item, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return text_sha256(repr(item))[:16]
    key = memo_key(raw)
    fp = _FP_MEMO.get(key)
    if fp is None:
        if _norm_keys(keys).search(raw):
            raw = orjson.dumps(_norm(item, keys), option=orjson.OPT_SORT_KEYS)
        fp = sha256(raw).hexdigest()[:16]
        _FP_MEMO.put(key, fp)
    return fp


def _h(*parts: str) -> str:
    h = sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


# A session's profile and thread ids come back on every turn: remember them by
# ``memo_key`` of what they hash (no content kept).
_ID_MEMO = ByteLRU(MEMO_BYTES, "history ids")


def _memo_h(*parts: str) -> str:
    key = tuple(memo_key(p) for p in parts)
    out = _ID_MEMO.get(key)
    if out is None:
        out = _h(*parts)
        _ID_MEMO.put(key, out)
    return out


def sample_positions(n: int) -> list[int]:
    """Which of ``n`` history items a thread remembers: the first, the powers of
    two, the last two."""
    return list(_sample_positions(n))


@functools.lru_cache(maxsize=512)
def _sample_positions(n: int) -> tuple[int, ...]:
    pos = {0}
    p = 1
    while p < n:
        pos.add(p)
        p *= 2
    pos.update(i for i in (n - 2, n - 1) if i >= 0)
    return tuple(sorted(i for i in pos if i < n))


def clean_text(text: str) -> str:
    """User text without client-injected reminder blocks, whitespace collapsed."""
    return " ".join(_REMINDER.sub(" ", text).split())


@dataclass
class ThreadCheck:
    """What one request tells about its thread."""

    thread: str  # thread id
    profile: str
    reason: str | None = None  # why this is a compaction, None if it is not
    new_from: int = 0  # results in items at or after this position are new
    predecessor: str | None = None  # the thread this one continues (after a compaction)
    state: dict = field(default_factory=dict)  # the thread's new state (to store)


T_RESOLUTION = 30.0  # seconds


def check(threads: dict[str, dict], items: Sequence[Any], *, keys: HistoryKeys, system: str, tools: Iterable[str],
          server_history: bool, markers: Sequence[str], first_user: str, now: float,
          previous_response_id: str | None = None,
          encodings: Sequence[bytes | None] | None = None) -> ThreadCheck:
    """Compare a request's history with what the session's threads saw before.

    With server-side history (``previous_response_id``) the request continues
    the thread whose last response has that id (threads remember it as ``r``).
    ``keys``: the view's ``history_keys``; ``encodings``: each item's JSON, if
    the caller has them (see ``item_fp``)."""
    profile = _memo_h(system[:8000], "\x01".join(tools))
    fps: dict[int, str] = {}

    def fp_at(pos: int) -> str:  # each sampled item hashed once per check
        fp = fps.get(pos)
        if fp is None:
            fp = fps[pos] = item_fp(items[pos], keys, encodings[pos] if encodings is not None else None)
        return fp
    compaction_fps = sorted({item_fp(it, keys) for it in items
                             if isinstance(it, dict) and it.get("type") in keys.compaction_items})
    same_profile = sorted(((t.get("t", 0.0), tid) for tid, t in threads.items() if t.get("p") == profile),
                          reverse=True)
    if server_history:
        tid = next((t for t, st in threads.items() if previous_response_id and st.get("r") == previous_response_id),
                   None) or _h(profile, "server-history")
    else:
        tid = _memo_h(profile, fp_at(0) if items else "empty")
    old = threads.get(tid)
    out = ThreadCheck(tid, profile)

    if server_history:
        out.new_from = 0  # the input holds only what is new
        if old is None and same_profile:
            out.predecessor = same_profile[0][1]  # continues that conversation (no compaction)
    elif old is not None:
        n_old = int(old.get("n", 0))
        if len(items) < n_old:
            out.reason = f"history shrank from {n_old} to {len(items)} items"
        else:
            for pos, fp in old.get("s", ()):
                if pos < len(items) and fp_at(pos) != fp:
                    out.reason = f"history rewritten at item {pos}"
                    break
        out.new_from = 0 if out.reason else n_old
    else:
        if same_profile:
            out.reason = "history replaced (the conversation's first turn changed)"
            out.predecessor = same_profile[0][1]
        elif not threads and first_user and any(m.lower() in first_user.lower() for m in markers):
            out.reason = "conversation starts from a summary"

    seen_cmp = set(old.get("k", ())) if old else set()
    if compaction_fps and not set(compaction_fps) <= seen_cmp:
        out.reason = out.reason or "compaction item in the history"
        if out.predecessor is None and old is None and same_profile:
            out.predecessor = same_profile[0][1]

    if out.reason and out.predecessor is None and old is not None:
        out.predecessor = tid  # the thread compacted in place
    if server_history:
        n, samples = int((old or {}).get("n", 0)), list((old or {}).get("s", ()))
    else:
        n, samples = len(items), [[p, fp_at(p)] for p in _sample_positions(len(items))]
    out.state = {
        "p": profile,
        "n": n,
        "s": samples,
        "k": sorted(seen_cmp | set(compaction_fps))[-8:],
        "c": bool((old or {}).get("c")) or out.reason is not None
             or bool(out.predecessor and threads.get(out.predecessor, {}).get("c")),
        # last seen, kept to T_RESOLUTION: a turn that changes nothing else
        # then writes nothing (no fsync just to move a clock)
        "t": old["t"] if old and 0 <= now - float(old.get("t", -1e18)) < T_RESOLUTION else now,
        "open": list((old or {}).get("open", ())),
        "r": (old or {}).get("r"),
    }
    return out


def prune_threads(threads: dict[str, dict], keep: int) -> dict[str, dict]:
    """The ``keep`` most recently seen threads."""
    if len(threads) <= keep:
        return threads
    newest = sorted(threads.items(), key=lambda kv: kv[1].get("t", 0.0), reverse=True)[:keep]
    return dict(newest)
