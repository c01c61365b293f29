"""Whether a request is the one its session sent last: one digest per turn, each filter's last decision.

A client that sends its session's previous request again, byte for byte
(a retry after a timeout, a load test's repeated turn, a replayed
conversation), brings nothing new: a filter that decided that request
before, on the same stored state, decides it the same way again. Reading
the body again to find that out costs what the decision costs.

``request_digest(turn)`` names the request by its bytes and headers (the
adapter's parse keeps the bytes; sha256 cut to 16 bytes, made once per turn
and shared by the filters). ``LastDecisions`` keeps, per session, the digest a
filter last decided and what it needs to decide the same again; the filter
still checks that the state it decided on is what it reads now (its session
part unchanged, the ledger state the same), and takes its full path when
anything differs. What a repeat skips is deciding, never recording: a
decision is kept only when deciding wrote nothing and offered nothing.
"""
from __future__ import annotations

from hashlib import sha256
from typing import Any

from ctxproxy.store.bounded import ByteLRU, entry_bytes

DECISIONS_BYTES = 256 << 10  # each filter's last decision per session (~1-2K sessions)
# A larger request is never taken for a repeat: hashing it costs about what its filters would
# save (527 KB took 0.6 ms to hash; a coding agent's turn with its tool definitions is ~80 KB).
REPEAT_MAX_BYTES = 256 << 10
ENTRY_BYTES = entry_bytes(("t" * 64, "s" * 64), (b"0" * 16, ()))  # an entry's key, digest and tuple


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


class LastDecisions:
    """Per session, a filter's last decision and the digest of the request it decided."""

    def __init__(self, name: str, max_bytes: int = DECISIONS_BYTES):
        self._memo = ByteLRU(max_bytes, f"last decisions: {name}")

    @staticmethod
    def _key(turn: Any) -> tuple[str, str]:
        ident = turn.identity
        return ident.tenant, ident.session

    def get(self, turn: Any) -> Any:
        """What this filter decided for this very request last time (same
        session, same digest), or None."""
        hit = self._memo.get(self._key(turn))  # a session with no decision kept hashes nothing
        if hit is None:
            return None
        digest = request_digest(turn)
        return hit[1] if digest is not None and hit[0] == digest else None

    def peek(self, turn: Any) -> Any:
        """The session's last decision, whatever request it was for (None: none)."""
        hit = self._memo.peek(self._key(turn))
        return None if hit is None else hit[1]

    def keep(self, turn: Any, decision: Any, nbytes: int | None = None) -> None:
        """Keep ``decision`` for this request. ``nbytes``: what it holds that nothing
        else does, when the caller knows (a document its part cache already counts
        is not walked again); else it is estimated."""
        digest = request_digest(turn)
        if digest is None:
            self.forget(turn)
            return
        self._memo.put(self._key(turn), (digest, decision), None if nbytes is None else ENTRY_BYTES + nbytes)

    def forget(self, turn: Any) -> None:
        self._memo.pop(self._key(turn))
