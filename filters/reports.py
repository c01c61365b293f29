"""Each filter's own part of the Context Manifest, through its ``report(turn)``.

Interim wiring (until the manifest assembles every filter's ``report``
itself): a filter that has something to report registers for the turn with
``reporting(turn, self)``; ``manifest`` merges ``reports(turn)`` into the
manifest. A report holds refs, digests, labels and counts — never text.
"""
from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("ctxproxy.filters.manifest")

_KEY = "manifest:reporters"  # turn.state: the filters that report on this turn


def reporting(turn: Any, filt: Any) -> None:
    """Have ``filt.report(turn)`` in this turn's manifest."""
    reporters = turn.state.setdefault(_KEY, [])
    if filt not in reporters:
        reporters.append(filt)


def reports(turn: Any) -> dict[str, Any]:
    """The merged reports of the turn's filters (a failing one is left out and logged)."""
    out: dict[str, Any] = {}
    for filt in turn.state.get(_KEY, ()):
        try:
            part = filt.report(turn)
        except Exception as exc:  # the manifest fails open
            log.warning("turn %s: %s report failed: %s", turn.turn_id, getattr(filt, "name", "?"),
                        type(exc).__name__)
            continue
        if part:
            out.update(part)
    return out


def rules_report(inject_state: dict) -> dict[str, Any] | None:
    """``inject``'s part: the rules bundle it loaded (files in resolved order with
    their sha256, ``instruction_conflict`` records, refused files and revisions)
    and the rule files the agent itself put in the request (observed segments)."""
    out: dict[str, Any] = {}
    info = inject_state.get("rules")
    if isinstance(info, dict):
        out["rules"] = {
            "bundle_id": info.get("bundle_id"),
            "revision": info.get("revision") or None,
            "files": [{"order": i, "path": f.get("path"), "layer": f.get("layer"), "sha256": f.get("sha256"),
                       "bytes": f.get("bytes")} for i, f in enumerate(info.get("files") or ())],
            "conflicts": [dict(c) for c in inject_state.get("conflicts") or ()],
            "refused": [dict(r) for r in info.get("refused") or ()],
        }
    observed = inject_state.get("observed_rules")
    if observed:
        out["observed_rules"] = [dict(o) for o in observed]
    return out or None
