"""Evidence drawn from a tool's result: right after it, and the same bytes on every later turn.

``recall`` offers it as a segment with ``placement="result"`` whose ``after``
names the tool result (``segments.result_anchor``: its call id, its length
and a digest of its edges). ``inject`` places it right after that result
(``view.add_result_segment``), never at the tail: the prompt up to the
result is what the provider cached last turn, and stays untouched. The
bytes placed are kept in the session record's ``result_evidence`` part, and
every later request that still carries that result with the same content
gets them again at the same place, so the cached prefix keeps growing with
the conversation instead of breaking where the evidence was.

Before bytes are repeated, the memories they show are checked: when the
store's memory change feed names one of them since they were last checked
(or the feed moved too far to tell, or one may have expired since), each is
read again, and one that is gone,
changed (a new revision), quarantined, superseded or expired drops the whole
record — a memory forgotten or hidden since is never shown again, at the
price of the cache from that point on. Only the caller they were recalled
for gets them again (``caller_of``: the same user, project, purpose, parent
session and route), never another sending the same session id. A result
whose content changed (pruned to a stub, a call id used again) loses its
evidence too. At most
``MAX_RECORDS`` per session: a session that has them places no new one
(dropping an old one would change the prompt where the cache begins).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable

from ctxproxy.store.services.digest import text_sha256

from ..segments import Segment, result_anchor
from ..session_part import PartCache

log = logging.getLogger("ctxproxy.filters.inject")

PART = "result_evidence"
MAX_RECORDS = 64  # records kept per session (each one result's evidence); then no new one is placed
MAX_TEXT = 16384  # characters of one record's placed text


@dataclass
class Repeat:
    """A record whose result this request carries: its bytes go after it again."""

    record: dict
    position: int  # the item holding the result, in this request


def caller_of(turn: Any) -> str:
    """Who the evidence was recalled for: every part of the identity recall's viewer is
    made of (user, project, purpose, parent session) and the route (its purpose and
    sensitivity ceiling). Another caller sending the same session id and history —
    another user, another purpose — never gets it repeated."""
    ident = turn.identity
    return text_sha256("\x00".join((ident.user, ident.project, ident.purpose, ident.parent_session,
                                     str(turn.route))))[:16]


def positions(view: Any, anchors: set[str]) -> dict[str, int]:
    """Where each of ``anchors`` is in this request: the item holding the result
    with that call id and content. Only results whose call id an anchor names are
    digested, each at its edges: a turn costs the records it has, not the size of
    the conversation."""
    calls = {a.rsplit("#", 2)[0] for a in anchors}
    out: dict[str, int] = {}
    for r in view.tool_results():
        if r.call_id in calls:
            a = result_anchor(r.call_id, r.content)
            if a in anchors:
                out[a] = r.position
    return out


class ResultEvidence:
    """The session's placed result evidence (its ``result_evidence`` part)."""

    def __init__(self) -> None:
        self.parts = PartCache(PART)

    def load(self, turn: Any, store: Any) -> tuple[int, list[dict]]:
        ident = turn.identity
        rev, doc, _ = self.parts.load(store, ident.tenant, ident.session, turn=turn)
        records = doc.get("records")
        return rev, [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []

    def repeats(self, turn: Any, store: Any, records: list[dict]) -> tuple[list[Repeat], list[dict], bool]:
        """The records this request carries the result of and whose memories are
        still as they were shown; the records kept (those dropped go) and whether
        that list changed."""
        if not records:
            return [], records, False
        caller = caller_of(turn)
        where = positions(turn.request, {r.get("after", "") for r in records if r.get("caller") == caller})
        now = time.time()
        seq = _last_seq(store) if where else None
        touched = _touched(store, [r for r in records if r.get("after") in where and r.get("caller") == caller],
                           seq) if where else None
        out, kept, changed = [], [], False
        for rec in records:
            at = where.get(rec.get("after", "")) if rec.get("caller") == caller else None
            if at is None:
                kept.append(rec)  # not in this request (compacted away, a retry of an older one), or another caller's
                continue
            moved = rec.get("seq") != seq
            if moved and touched is not None and not any(i and i[0] in touched for i in rec.get("ids") or ()):
                rec, moved, changed = {**rec, "seq": seq}, False, True  # the feed moved, none of its memories did
            if moved or (rec.get("until") is not None and now >= rec["until"]):
                ok, until = _checked(store, turn.identity.tenant, rec.get("ids") or [], now)
                if not ok:
                    changed = True  # a memory it shows is gone or changed: never shown again
                    continue
                rec = {**rec, "seq": seq, "until": until}
                changed = True
            kept.append(rec)
            out.append(Repeat(rec, at))
        return out, kept, changed

    def record(self, turn: Any, store: Any, seg: Segment, text: str, tokens: int) -> dict | None:
        """What is kept of a newly placed segment (None: a memory it shows could not be read)."""
        tenant = turn.identity.tenant
        if len(text) > MAX_TEXT:
            return None
        seq = _last_seq(store)  # before the reads: a change after them makes the next turn check again
        ids = []
        until: float | None = None
        for memory_id in seg.items:
            rec = store.memories.get(tenant, memory_id)
            if rec is None or not rec.servable(time.time()):
                return None
            ids.append([memory_id, rec.revision])
            if rec.expires_at is not None:
                until = rec.expires_at if until is None else min(until, rec.expires_at)
        return {"after": seg.after, "caller": caller_of(turn), "text": text, "ids": ids, "seq": seq, "until": until,
                "tokens": tokens, "ref": seg.ref, "sensitivity": seg.sensitivity,
                "observed_at": seg.freshness.get("observed_at", "")}

    def keep(self, turn: Any, store: Any, rev: int, records: list[dict], changed: bool) -> None:
        self.parts.keep(turn, store, (), rev, {"records": records}, None, changed)


def repeated_segment(rec: dict) -> Segment:
    """The manifest's view of a repeated record: placed as it was, outside the budget."""
    return Segment(kind="evidence", ref=str(rec.get("ref", "")), text=str(rec.get("text", "")), origin="recall",
                   scope="user", trust="evidence", sensitivity=rec.get("sensitivity") or "internal",
                   freshness={"observed_at": rec.get("observed_at") or "unknown"}, placement="result",
                   after=str(rec.get("after", "")), tokens=int(rec.get("tokens") or 0), status="placed",
                   reason="repeated")


def place(view: Any, items: list[tuple[int, str, Segment]], count: Callable[[str], int]) -> int:
    """Put each ``(position, text, segment)`` after its result, the last first (an item
    inserted in front would move those after it); returns the tokens placed."""
    used = 0
    for position, text, seg in sorted(items, key=lambda x: -x[0]):
        where = view.add_result_segment(position, text)
        seg.where = where or ""
        if not where:
            seg.status, seg.reason = "dropped", "its tool result is not in the request"
            continue
        used += count(text)
    return used


FEED_READ = 256  # changes of the memory feed read to tell whether a record's memories moved


def _touched(store: Any, records: list[dict], seq: int | None) -> set[str] | None:
    """The memory ids the store's change feed names since the oldest of ``records`` was
    checked; None when that is more than ``FEED_READ`` changes or cannot be read (each
    memory is then read again)."""
    olds = [r.get("seq") for r in records if r.get("seq") != seq]
    if not olds or seq is None or seq < 0 or not all(isinstance(o, int) and o >= 0 for o in olds):
        return None if olds else set()
    try:
        found = store.memories.changes(min(olds), limit=FEED_READ)
    except Exception:  # no feed to read: the memories are read instead
        return None
    if len(found) >= FEED_READ:
        return None
    return {memory_id for _, _, memory_id in found}


def _last_seq(store: Any) -> int:
    try:
        return int(store.memories.last_seq())
    except Exception:  # no change feed: every repeat checks its memories
        return -1


def _checked(store: Any, tenant: str, ids: list, now: float) -> tuple[bool, float | None]:
    """Whether each of ``ids`` is still servable at its recorded revision, and the
    earliest expiry among them (None: none expires)."""
    until: float | None = None
    for memory_id, revision in ids:
        rec = store.memories.get(tenant, memory_id)
        if rec is None or rec.revision != revision or not rec.servable(now) or getattr(rec, "superseded_by", ""):
            return False, None
        if rec.expires_at is not None:
            until = rec.expires_at if until is None else min(until, rec.expires_at)
    return True, until
