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
closed. The records are ``store.memories`` records (``MemoryRecord``) of the
always-injected kinds (``SNAPSHOT_KINDS``: preferences and procedures); the
others are only recalled. A record is shown when:

- it is servable: ``active``, not quarantined, not expired, not superseded;
- each of its scope fields is empty or equal to the turn's: ``session``,
  ``user`` (the turn's must be known), ``project`` (the configured project,
  else the identity's), ``purpose``;
- its ``sensitivity`` is at most the configured maximum.

Each record is re-scanned with today's threat rules when the snapshot is
frozen; a record that fails, or one quarantined by a re-scan at load, is
never shown: the manifest lists ``[blocked: <reason>]`` in its place.
Approved model inferences and consolidated records form the "inferred"
segment, the rest the "curated" one, both fenced as data.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping

from ctxproxy.store.memory_records import SNAPSHOT_KINDS

from ctxproxy.store.services.digest import text_sha256
from ..segments import SENSITIVITY_ORDER, Segment, max_sensitivity

STATE_KEY = "memory_snapshot"
SCOPES = ("tenant", "project", "user", "session")
_HEADERS = {
    "curated": "Durable memory (curated), frozen at the start of this session:",
    "inferred": "Inferred memory: hypotheses formed in earlier sessions, not verified facts. "
                "Frozen at the start of this session:",
}


def snapshot_segments(turn: Any, store: Any, session_state: Mapping[str, Any], chars: Mapping[str, int],
                      project: str, max_sens: str, priority: int, now: float | None = None,
                      learned_signal: bool = True) -> tuple[list[Segment], dict[str, Any], dict[str, Any] | None]:
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
        project = project or getattr(ident, "project", "") or ""
        snap = build_snapshot(candidates(store, ident, project), ident, chars, project, max_sens, now,
                              scan=None if learned_signal else _default_scan(learned_signal=False))
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
    if snap.get("blocked"):  # the manifest's view only: these lines never reach the model
        info["blocked"] = list(snap["blocked"])
    return segments, info, write


def candidates(store: Any, ident: Any, project: str) -> list[Any]:
    """The snapshot-kind records of every scope this turn could see (each scope
    read from its index: the tenant's other records are never loaded)."""
    out = []
    for p in dict.fromkeys(("", project)):
        for u in dict.fromkeys(("", ident.user or "")):
            for s in dict.fromkeys(("", ident.session or "")):
                out += store.memories.scope_records(ident.tenant, p, u, s, snapshot=True)
    return out


def build_snapshot(records: Iterable[Any], ident: Any, chars: Mapping[str, int], project: str, max_sens: str,
                   now: float, scan: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Select, bound and render the visible memories (a plain dict, stored as is).

    ``scan`` (default: the memory threat scan) re-checks each record against
    today's rules: a record that fails is left out, and only the manifest
    lists ``[blocked: <reason>]`` in its place (the model never sees it).
    """
    scanner = [scan]

    def check(text: str) -> Any:
        if scanner[0] is None:  # the threat rules load on the first record to check
            scanner[0] = _default_scan()
        return scanner[0](text)

    limit = SENSITIVITY_ORDER.index(max_sens) if max_sens in SENSITIVITY_ORDER else 1
    candidates = []
    blocked = []
    for rec in records:
        text = rec.statement
        if not isinstance(text, str) or not text.strip() or rec.kind not in SNAPSHOT_KINDS:
            continue
        scope = _visible_scope(rec, ident, project, now, limit)
        if scope is None:
            continue
        reason = rec.quarantine or getattr(check(text), "reason", "")
        if reason or rec.quarantine:
            blocked.append({"memory_id": rec.memory_id, "scope": scope,
                            "line": f"[blocked: {rec.quarantine or reason}]"})
            continue
        if not rec.servable(now):
            continue
        trust = "inferred" if rec.origin in ("model_inference", "consolidated") else "curated"
        when = rec.observed_at or rec.updated_at
        candidates.append((trust != "curated", not rec.evergreen, -when, rec.memory_id, scope, trust, text, rec, when))
    candidates.sort(key=lambda c: c[:4])
    used = {s: 0 for s in SCOPES}
    lines: dict[str, list[str]] = {"curated": [], "inferred": []}
    sens: dict[str, list[str]] = {"curated": [], "inferred": []}
    records_n = omitted = 0
    for *_, mem_id, scope, trust, text, rec, when in candidates:
        flat = " ".join(text.split())
        if used[scope] + len(flat) > int(chars.get(scope, 0)):
            omitted += 1
            continue
        used[scope] += len(flat)
        records_n += 1
        day = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%d") if when else "?"
        lines[trust].append(f"- [{scope}] {flat} (mem:{mem_id}, {day})")
        sens[trust].append(rec.sensitivity)
    frozen_at = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    parts = [{"trust": t, "text": _HEADERS[t] + "\n" + "\n".join(lines[t]), "sensitivity": max_sensitivity(sens[t])}
             for t in ("curated", "inferred") if lines[t]]
    revision = text_sha256("\x00".join(p["text"] for p in parts))
    out = {"frozen_at": frozen_at, "revision": revision, "parts": parts, "records": records_n, "omitted": omitted,
           "chars": {s: n for s, n in used.items() if n}}
    if blocked:
        out["blocked"] = blocked
    return out


def _default_scan(learned_signal: bool = True) -> Callable[[str], Any]:
    try:
        from ctxproxy.store.services.memory.threats import scan, scan_rules
    except ImportError:  # the threat rules are not installed: nothing is re-scanned
        return lambda text: None
    return scan if learned_signal else scan_rules


def _visible_scope(rec: Any, ident: Any, project: str, now: float, limit: int) -> str | None:
    """The record's scope if this turn may see it (fails closed)."""
    if rec.session and (not ident.session or ident.session != rec.session):
        return None
    if rec.user and (not ident.user or ident.user != rec.user):
        return None
    if rec.project and (not project or rec.project != project):
        return None
    if rec.purpose and rec.purpose != (getattr(ident, "purpose", "") or ""):
        return None
    if rec.status != "active" or rec.superseded_by:
        return None
    if rec.sensitivity not in SENSITIVITY_ORDER or SENSITIVITY_ORDER.index(rec.sensitivity) > limit:
        return None
    return rec.scope


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
