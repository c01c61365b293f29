"""What a turn's request hooks read first, looked up once for the whole chain.

Each request filter used to decide a request it had seen before from a memo
of its own: identify's identity and answer anchor by the request's digest,
redact's "found clean", prune's "holds tool results" and recall's words by
the same digest, and per session the last decision of effects, checkpoint
and inject's observed rules. Eight lookups a turn, each in its own cache with
its own cold lines, most of them answering "nothing to do".

``TurnSummary`` (``summary(turn)``, made once a turn and kept on it) holds
instead:

- ``digest``: the request's bytes and headers as 16 bytes (sha256 cut, made
  once; ``None`` for a request too large to be worth naming, which is then
  never taken for one seen before);
- the request's *facts*: one record per digest of what every filter learned
  from reading those very bytes (``RequestFacts``), found with one lookup;
- the session's *record*: one per live session, each filter's last decision
  and the digest it was made for (``LastDecisions``), found with one lookup.

A fact is what a filter computed from the bytes alone (and, where it says so
with a key, from the route's fixed tenant or the caller's key); it is read
only while no filter before it edited the request, since an edited request is
not the bytes the digest names. A decision is what a filter decided on the
session's state; the filter still checks that state is the one it decided on.
Each filter's entries are its own (a token per filter object: another
pipeline's or a reloaded config's filters never read them). Both records are
bounded in bytes, together for the process (``FACTS_BYTES``,
``RECORDS_BYTES``).
"""
from __future__ import annotations

import itertools
import weakref
from hashlib import sha256
from typing import Any, Hashable

from ctxproxy.store.bounded import SLOT_BYTES, ByteLRU, entry_bytes
from ctxproxy.store.frozen import FrozenDict

# A larger request is never taken for a repeat: hashing it costs about what its filters would
# save (527 KB took 0.6 ms to hash; a coding agent's turn with its tool definitions is ~80 KB).
REPEAT_MAX_BYTES = 256 << 10
# What the filters learned from a request's bytes, by its digest: the sum of the five
# per-filter memos this replaced (identities 256, anchors 128, clean 256, results 128, words 256).
FACTS_BYTES = 1 << 20
# Per live session, each filter's last decision (three filters keep one: 256 KiB each before)
# and the parts of its record that filters keep decoded (four, 1 MiB each before).
RECORDS_BYTES = (768 << 10) + (4 << 20)
# A record's own cost beside its entries: the slot in the LRU, its key and its dict.
_RECORD_BYTES = SLOT_BYTES + entry_bytes(("t" * 64, "s" * 64), {})
_ENTRY_BYTES = 104  # a dict slot and the (value, size) tuple, beside what the value holds

_tokens = itertools.count(1)
_UNREAD = object()


def request_digest(turn: Any) -> bytes | None:
    """The request's bytes and headers as 16 bytes, made once per turn (None
    when the view kept no bytes or more than ``REPEAT_MAX_BYTES``: such a turn
    is never a repeat)."""
    got = turn.request_digest
    if got is None:
        raw = getattr(turn.request, "raw", b"")
        if not raw or len(raw) > REPEAT_MAX_BYTES:
            return None
        # sha256 runs on the CPU's SHA instructions: ~1.7x quicker than blake2b on 4 KB.
        h = sha256(raw)
        # The headers in one string: a name or value holds no NUL, so the joins stay unambiguous.
        h.update("\x00".join([f"{k}\x01{v}" for k, v in turn.headers.items()]).encode("utf-8", "surrogatepass"))
        h.update(f"\x02{turn.route}\x02{turn.api}".encode())
        got = turn.request_digest = h.digest()[:16]
    return got


def unedited_digest(turn: Any) -> bytes | None:
    """``request_digest`` when no filter before this one edited the request (its
    bytes then say what the filter reads), else None: what a filter may key a
    result of reading the request by."""
    if turn.request is None or getattr(turn.request, "edits", 1):
        return None
    return request_digest(turn)


class _Record:
    """Entries of several filters under one key: ``(token, key) -> (value, bytes)``."""

    __slots__ = ("entries", "nbytes")

    def __init__(self) -> None:
        self.entries: dict[Hashable, tuple[Any, int]] = {}
        self.nbytes = _RECORD_BYTES

    def put(self, lru: ByteLRU, key: Hashable, slot: Hashable, value: Any, nbytes: int) -> None:
        old = self.entries.get(slot)
        if old is not None:
            self.nbytes -= old[1]
        self.entries[slot] = (value, nbytes)
        self.nbytes += nbytes
        lru.put(key, self, self.nbytes)  # its new size, and the most recent

    def drop(self, lru: ByteLRU, key: Hashable, slot: Hashable) -> None:
        old = self.entries.pop(slot, None)
        if old is not None:
            self.nbytes -= old[1]
            if self.entries:
                lru.put(key, self, self.nbytes)
            else:
                lru.discard(key, self)


# One of each for the process, shared by every pipeline's filters (their entries apart by token).
_FACTS = ByteLRU(FACTS_BYTES, "request facts (by the request's digest)")
_RECORDS = ByteLRU(RECORDS_BYTES, "sessions' last decisions")


class TurnSummary:
    """The request's digest, its facts and its session's record, each found once a turn."""

    __slots__ = ("digest", "_facts", "_session", "_record")

    def __init__(self, digest: bytes | None) -> None:
        self.digest = digest
        self._facts: Any = _UNREAD
        self._session: tuple[str, str] | None = None
        self._record: _Record | None = None

    def facts(self) -> _Record | None:
        got = self._facts
        if got is _UNREAD:
            got = self._facts = None if self.digest is None else _FACTS.get(self.digest)
        return got

    def record(self, session: tuple[str, str]) -> _Record | None:
        if session != self._session:  # once a turn (the identity is set before the first ask)
            self._session, self._record = session, _RECORDS.get(session)
        return self._record

    def learned(self, record: _Record) -> None:
        self._facts = record

    def recorded(self, session: tuple[str, str], record: _Record | None) -> None:
        self._session, self._record = session, record


def summary(turn: Any) -> TurnSummary:
    """This turn's summary, made on the first ask."""
    got = turn.summary
    if got is None:
        got = turn.summary = TurnSummary(request_digest(turn))
    return got


class RequestFacts:
    """What one filter learned from reading a request's bytes, kept by their digest.

    ``get`` answers only while no filter before this one edited the request;
    ``key`` separates facts that also depend on something beside the bytes."""

    __slots__ = ("name", "token")

    def __init__(self, name: str) -> None:
        self.name = name
        self.token = next(_tokens)

    def get(self, turn: Any, key: Hashable = None) -> Any:
        if turn.request is None or getattr(turn.request, "edits", 1):
            return None
        record = summary(turn).facts()
        if record is None:
            return None
        hit = record.entries.get((self.token, key))
        return None if hit is None else hit[0]

    def put(self, turn: Any, value: Any, nbytes: int | None = None, key: Hashable = None) -> None:
        """Keep ``value`` for these bytes (not when a filter before edited them).
        ``nbytes``: what the value holds, when the caller knows; else estimated."""
        if turn.request is None or getattr(turn.request, "edits", 1):
            return
        s = summary(turn)
        if s.digest is not None:  # kept once the request is on its way: the next turn reads it
            turn.defer(self.name, lambda: self._put(s, value, nbytes, key))

    def _put(self, s: TurnSummary, value: Any, nbytes: int | None, key: Hashable) -> None:
        record = s.facts()
        if record is None:
            record = _Record()
            s.learned(record)
        n = _ENTRY_BYTES + (nbytes if nbytes is not None else entry_bytes(key, value))
        record.put(_FACTS, s.digest, (self.token, key), value, n)


class SessionMemo:
    """A filter's entries in the sessions' records, under keys of its own.

    ``get`` through ``turn`` (its session the turn's) finds the record the
    turn already found; without one (another session, the store's writer
    thread) it looks the record up. An entry's value may be changed in place;
    its size is then the one it was put with."""

    __slots__ = ("name", "token")

    def __init__(self, name: str) -> None:
        self.name = name
        self.token = next(_tokens)

    def _record(self, session: tuple[str, str], turn: Any) -> _Record | None:
        if turn is not None and turn.summary is not None:
            return turn.summary.record(session)
        return _RECORDS.get(session)

    def get(self, session: tuple[str, str], key: Hashable, turn: Any = None) -> Any:
        record = self._record(session, turn)
        hit = None if record is None else record.entries.get((self.token, key))
        return None if hit is None else hit[0]

    def peek(self, session: tuple[str, str], key: Hashable) -> Any:
        record = _RECORDS.peek(session)
        hit = None if record is None else record.entries.get((self.token, key))
        return None if hit is None else hit[0]

    def put(self, session: tuple[str, str], key: Hashable, value: Any, nbytes: int | None = None,
            turn: Any = None) -> None:
        record = self._record(session, turn)
        if record is None:
            record = _Record()
            if turn is not None and turn.summary is not None:
                turn.summary.recorded(session, record)
        n = _ENTRY_BYTES + (nbytes if nbytes is not None else entry_bytes(key, value))
        record.put(_RECORDS, session, (self.token, key), value, n)

    def pop(self, session: tuple[str, str], key: Hashable) -> None:
        record = _RECORDS.peek(session)
        if record is not None:
            record.drop(_RECORDS, session, (self.token, key))


class LastDecisions:
    """Per session, a filter's last decision and the digest of the request it decided."""

    __slots__ = ("name", "token")

    def __init__(self, name: str) -> None:
        self.name = name
        self.token = next(_tokens)

    @staticmethod
    def _session(turn: Any) -> tuple[str, str]:
        ident = turn.identity
        return ident.tenant, ident.session

    def _hit(self, turn: Any) -> tuple[bytes, Any] | None:
        record = summary(turn).record(self._session(turn))
        if record is None:
            return None
        hit = record.entries.get(self.token)
        return None if hit is None else hit[0]

    def get(self, turn: Any) -> Any:
        """What this filter decided for this very request last time (same
        session, same digest), or None."""
        hit = self._hit(turn)
        if hit is None:
            return None
        digest = summary(turn).digest
        return hit[1] if digest is not None and hit[0] == digest else None

    def peek(self, turn: Any) -> Any:
        """The session's last decision, whatever request it was for (None: none)."""
        hit = self._hit(turn)
        return None if hit is None else hit[1]

    def keep(self, turn: Any, decision: Any, nbytes: int | None = None) -> bool:
        """Keep ``decision`` for this request (False: a request never taken for a
        repeat, nothing kept). ``nbytes``: what it holds that nothing else does, when
        the caller knows (a document its part cache already counts is not walked
        again); else it is estimated. While the request filters run it is kept once
        the request is on its way (``Turn.defer``): the next request reads it."""
        s = summary(turn)
        if s.digest is None:
            self.forget(turn)
            return False
        session = self._session(turn)  # (in order with ``forget``, deferred alike)
        turn.defer(self.name, lambda: self._keep(s, session, decision, nbytes))
        return True

    def _keep(self, s: TurnSummary, session: tuple[str, str], decision: Any, nbytes: int | None) -> None:
        record = s.record(session)
        if record is None:
            record = _Record()
            s.recorded(session, record)
        n = _ENTRY_BYTES + 40 + (nbytes if nbytes is not None else entry_bytes(None, decision))
        record.put(_RECORDS, session, self.token, (s.digest, decision), n)

    def forget(self, turn: Any) -> None:
        s, session = summary(turn), self._session(turn)
        turn.defer(self.name, lambda: self._forget(s, session))

    def _forget(self, s: TurnSummary, session: tuple[str, str]) -> None:
        record = s.record(session)
        if record is not None:
            record.drop(_RECORDS, session, self.token)



class ChainDecisions:
    """Per session, what a whole request chain decided for the session's last
    request: each replaying filter's memo, and what every one of them read
    that one comparison can check (the identity, the edge, the session's
    stored records as read). ``Pipeline`` keeps one; its filters replay their
    memos only while all of it is unchanged (``filters/base.py``)."""

    __slots__ = ("decisions",)

    def __init__(self) -> None:
        self.decisions = LastDecisions("request chain")

    def get(self, turn: Any) -> dict[int, Any] | None:
        """The memos kept for this very request (same digest and session), when the
        identity, the edge and the session's records (the very objects) are as then."""
        hit = self.decisions.get(turn)
        if hit is None:
            return None
        ident, continues, kept, memos = hit
        if ident != turn.identity or continues != turn.continues:
            return None
        return memos if same_records(kept, session_records(turn)) else None

    def keep(self, turn: Any, memos: dict[int, Any]) -> bool:
        """Keep ``memos`` for this request on the records the turn read (False:
        the turn holds no read of them that a later turn could compare)."""
        kept = record_refs(session_records(turn))
        if kept is None:
            self.forget(turn)
            return False
        # The memos are objects the filters hold already, the records weak references:
        # only the entry's own slots are counted here.
        self.decisions.keep(turn, (turn.identity, turn.continues, kept, memos), 256 + 72 * len(kept) + 120 * len(memos))
        return True

    def forget(self, turn: Any) -> None:
        self.decisions.forget(turn)


def session_records(turn: Any) -> tuple | None:
    """The session's stored state and parts as this turn read them (the store's
    read-only objects), or None when the turn holds no such read of its session."""
    sc, pc = turn.session_cache, turn.parts_cache
    if sc is None or pc is None:
        return None
    key = (turn.identity.tenant, turn.identity.session)
    if sc[0] != key or pc[0] != key:
        return None
    return (sc[1], *pc[1].values())


_NO_RECORD = object()  # a record or part the store does not hold (read as None or an empty dict)


def record_refs(records: tuple | None) -> tuple | None:
    """``records`` as weak references, or None when one of them cannot be told
    again by its identity (not a read-only record kept by the store's session cache)."""
    if records is None:
        return None
    out = []
    for r in records:
        if r is None or (type(r) is dict and not r):
            out.append(_NO_RECORD)
        elif type(r) is FrozenDict:
            out.append(weakref.ref(r))
        else:
            return None
    return tuple(out)


def same_records(kept: tuple, records: tuple | None) -> bool:
    """Whether ``records`` are the very objects ``kept`` refers to (none stored then, none now)."""
    if records is None or len(kept) != len(records):
        return False
    for k, r in zip(kept, records):
        if k is _NO_RECORD:
            if not (r is None or (type(r) is dict and not r)):
                return False
        elif k() is not r:
            return False
    return True
