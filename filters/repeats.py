"""Whether a request is the one its session sent last: one digest per turn, each filter's last decision.

A client that sends its session's previous request again, byte for byte
(a retry after a timeout, a load test's repeated turn, a replayed
conversation), brings nothing new: a filter that decided that request
before, on the same stored state, decides it the same way again. Reading
the body again to find that out costs what the decision costs.

``request_digest(turn)`` names the request by its bytes and headers (the
adapter's parse keeps the bytes; sha256 cut to 16 bytes, made once per turn
and shared by the filters). ``LastDecisions`` keeps, per session, the digest a
filter last decided and what it needs to decide the same again (in the
session's one record, ``turn_summary``: one lookup a turn for every filter); the filter
still checks that the state it decided on is what it reads now (its session
part unchanged, the ledger state the same), and takes its full path when
anything differs. What a repeat skips is deciding, never recording: a
decision is kept only when deciding wrote nothing and offered nothing.
"""
from __future__ import annotations

from .turn_summary import REPEAT_MAX_BYTES, LastDecisions, RequestFacts, request_digest, unedited_digest

__all__ = ["LastDecisions", "REPEAT_MAX_BYTES", "RequestFacts", "request_digest", "unedited_digest"]
