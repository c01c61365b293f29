"""The request side before the turn summary, for benchmarks that compare it in one process.

Before ``filters/turn_summary.py``, each filter that decides a request sent
again kept its own memo: identify (identity, anchor), redact, prune and recall
by the request's digest, effects, checkpoint and inject's observed rules per
session, each a ``ByteLRU`` of its own looked up on every turn. ``install()``
patches ``RequestFacts`` and ``LastDecisions`` so that, while ``MODE["base"]``
is true, each filter object reads and writes such a memo of its own (kept
apart from the summary's records, so both stay warm when a benchmark
alternates); false, they run as shipped. A benchmark's tool, not a test.
"""
from __future__ import annotations

from typing import Any

from ctxproxy.filters import turn_summary as ts
from ctxproxy.store.bounded import ByteLRU, entry_bytes

MODE = {"base": False}
_ENTRY = entry_bytes(("t" * 64, "s" * 64), (b"0" * 16, ()))  # as the per-filter LastDecisions counted
_memos: dict[int, ByteLRU] = {}


def _memo(owner: Any, bound: int) -> ByteLRU:
    memo = _memos.get(owner.token)
    if memo is None:
        memo = _memos[owner.token] = ByteLRU(bound, f"per-filter memo (bench): {owner.name}")
    return memo


def install() -> None:
    facts_get, facts_put = ts.RequestFacts.get, ts.RequestFacts.put
    get, peek, keep, forget = (ts.LastDecisions.get, ts.LastDecisions.peek, ts.LastDecisions.keep,
                               ts.LastDecisions.forget)

    def f_get(self, turn, key=None):
        if not MODE["base"]:
            return facts_get(self, turn, key)
        digest = ts.unedited_digest(turn)
        return None if digest is None else _memo(self, 256 << 10).get((digest, key))

    def f_put(self, turn, value, nbytes=None, key=None):
        if not MODE["base"]:
            return facts_put(self, turn, value, nbytes, key)
        digest = ts.unedited_digest(turn)
        if digest is not None:
            _memo(self, 256 << 10).put((digest, key), value, nbytes)

    def _key(turn):
        return turn.identity.tenant, turn.identity.session

    def d_get(self, turn):
        if not MODE["base"]:
            return get(self, turn)
        hit = _memo(self, 256 << 10).get(_key(turn))
        if hit is None:
            return None
        digest = ts.request_digest(turn)
        return hit[1] if digest is not None and hit[0] == digest else None

    def d_peek(self, turn):
        if not MODE["base"]:
            return peek(self, turn)
        hit = _memo(self, 256 << 10).peek(_key(turn))
        return None if hit is None else hit[1]

    def d_keep(self, turn, decision, nbytes=None):
        if not MODE["base"]:
            return keep(self, turn, decision, nbytes)
        digest = ts.request_digest(turn)
        memo = _memo(self, 256 << 10)
        if digest is None:
            memo.pop(_key(turn))
            return
        memo.put(_key(turn), (digest, decision), None if nbytes is None else _ENTRY + nbytes)

    def d_forget(self, turn):
        if not MODE["base"]:
            return forget(self, turn)
        _memo(self, 256 << 10).pop(_key(turn))

    ts.RequestFacts.get, ts.RequestFacts.put = f_get, f_put
    ts.LastDecisions.get, ts.LastDecisions.peek, ts.LastDecisions.keep, ts.LastDecisions.forget = (
        d_get, d_peek, d_keep, d_forget)
