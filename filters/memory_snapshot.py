"""The durable memory snapshot: a session's memories, frozen at its first turn.

At the first turn ctxproxy sees of a session, the memories visible to it are
selected, bounded by characters per scope, rendered, and stored in the
session's state (``store.sessions``, key ``memory_snapshot``). Every later
turn of the session reuses those bytes, so the system-slot prefix stays
byte-stable for the whole session; memories written meanwhile appear in the
next session. The snapshot is read from the store on every turn (a few
microseconds with LMDB) rather than cached in the process, so deleting the
session ("forget me") removes it at once.

Visibility is decided before anything is read into the snapshot, and fails
closed:

- identity unknown (no session, or ``identify`` did not run): no memory;
- ``scope`` must be one of ``tenant`` (the whole tenant), ``project`` (equal
  to the configured project; none configured: none shown), ``user`` (the
  record's ``user`` or subject equals the turn's user, which must be known),
  ``session`` (the record's session equals this one); a record without a
  known scope is never shown;
- ``status`` other than ``active``, ``superseded_by`` set, or ``expires_at``
  (epoch seconds or ISO 8601) in the past: not shown;
- ``sensitivity`` above the configured maximum, unknown, or ``secret``: not
  shown.

The record fields read are ``text``, ``scope``, ``project``, ``user``,
``session``, ``trust`` (``curated`` / ``reviewed`` → curated, anything else
→ inferred: a model's inference stays a hypothesis), ``sensitivity``,
``status``, ``superseded_by``, ``expires_at``, ``observed_at``, ``pinned``.
Curated and inferred memories become two segments, labelled as such, both
fenced as data.
"""
from __future__ import annotations

import hashlib
import time
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

from .segments import SENSITIVITY_ORDER, Segment, max_sensitivity

STATE_KEY = "memory_snapshot"
SCOPES = ("tenant", "project", "user", "session")
_HEADERS = {
    "curated": "Durable memory (curated), frozen at the start of this session:",
    "inferred": "Inferred memory: hypotheses formed in earlier sessions, not verified facts. "
                "Frozen at the start of this session:",
}


def snapshot_segments(turn: Any, store: Any, session_state: Mapping[str, Any], chars: Mapping[str, int],
                      project: str, max_sens: str, priority: int, now: float | None = None
                      ) -> tuple[list[Segment], dict[str, Any], dict[str, Any] | None]:
    """The snapshot's segments for this turn, its manifest info, and — on the
    session's first turn — the session-state change that freezes it (the
    caller writes it, together with its own, in one transaction).

    ``session_state`` is the session's stored state, already read this turn.
    The caller has checked that the identity is known.
    """
    ident = turn.identity
    snap = session_state.get(STATE_KEY)
    write = None
    status = "reused"
    if not isinstance(snap, dict):
        now = time.time() if now is None else now
        snap = build_snapshot(store.memories.list(ident.tenant), ident, chars, project, max_sens, now)
        write = {STATE_KEY: snap}
        status = "frozen"
    segments = []
    for part in snap.get("parts", ()):
        segments.append(Segment(
            kind="memory", ref=f"memory@{snap['revision'][:12]}/{part['trust']}", text=part["text"],
            origin="store.memories", scope="session", trust=part["trust"], sensitivity=part["sensitivity"],
            freshness={"frozen_at": snap["frozen_at"], "revision": snap["revision"][:12]},
            priority=priority, placement="system", stable=True, boundary="line"))
    info = {"status": status, "frozen_at": snap.get("frozen_at"), "revision": snap.get("revision"),
            "records": snap.get("records", 0), "omitted": snap.get("omitted", 0), "chars": snap.get("chars", {})}
    return segments, info, write


def build_snapshot(docs: Iterable[Any], ident: Any, chars: Mapping[str, int], project: str, max_sens: str,
                   now: float) -> dict[str, Any]:
    """Select, bound and render the visible memories (a plain dict, stored as is)."""
    limit = SENSITIVITY_ORDER.index(max_sens) if max_sens in SENSITIVITY_ORDER else 1
    candidates = []
    for doc in docs:
        d = doc.data if isinstance(doc.data, Mapping) else {}
        text = d.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        scope = _visible_scope(doc, d, ident, project, now, limit)
        if scope is None:
            continue
        trust = "curated" if d.get("trust") in ("curated", "reviewed") else "inferred"
        when = _epoch(d.get("observed_at")) or doc.updated_at
        candidates.append((trust != "curated", not d.get("pinned"), -when, doc.id, scope, trust, text, d, when))
    candidates.sort(key=lambda c: c[:4])
    used = {s: 0 for s in SCOPES}
    lines: dict[str, list[str]] = {"curated": [], "inferred": []}
    sens: dict[str, list[str]] = {"curated": [], "inferred": []}
    records = omitted = 0
    for *_, doc_id, scope, trust, text, d, when in candidates:
        flat = " ".join(text.split())
        if used[scope] + len(flat) > int(chars.get(scope, 0)):
            omitted += 1
            continue
        used[scope] += len(flat)
        records += 1
        day = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%d") if when else "?"
        lines[trust].append(f"- [{scope}] {flat} (mem:{doc_id}, {day})")
        sens[trust].append(d.get("sensitivity", "internal"))
    frozen_at = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    parts = [{"trust": t, "text": _HEADERS[t] + "\n" + "\n".join(lines[t]), "sensitivity": max_sensitivity(sens[t])}
             for t in ("curated", "inferred") if lines[t]]
    revision = hashlib.sha256("\x00".join(p["text"] for p in parts).encode()).hexdigest()
    return {"frozen_at": frozen_at, "revision": revision, "parts": parts, "records": records, "omitted": omitted,
            "chars": {s: n for s, n in used.items() if n}}


def _visible_scope(doc: Any, d: Mapping[str, Any], ident: Any, project: str, now: float, limit: int) -> str | None:
    scope = d.get("scope")
    if scope == "tenant":
        pass
    elif scope == "project":
        if not project or d.get("project") != project:
            return None
    elif scope == "user":
        if not ident.user or ident.user not in (d.get("user"), doc.subject):
            return None
    elif scope == "session":
        if ident.session not in (d.get("session"), doc.session) or not ident.session:
            return None
    else:
        return None
    if d.get("status", "active") != "active" or d.get("superseded_by"):
        return None
    expires = d.get("expires_at")
    if expires is not None:
        t = _epoch(expires)
        if t is None or t <= now:
            return None
    sensitivity = d.get("sensitivity", "internal")
    if sensitivity not in SENSITIVITY_ORDER or sensitivity == "secret" or SENSITIVITY_ORDER.index(sensitivity) > limit:
        return None
    return scope


def _epoch(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value:
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp()
    return None
