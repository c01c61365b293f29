"""``ctxproxy manifest show`` — print Context Manifests as readable tables.

    ctxproxy manifest show TURN_ID            one turn (the X-Ctx-Turn-Id of a response)
    ctxproxy manifest show --session S        one line per turn of a session
    ... [--data-dir D | --config F] [--tenant T] [--json]

Reads the store directly (LMDB is shared safely with a running proxy), so it
works whether the proxy is up or not.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Iterable, Mapping, Sequence

from .options import add_store_options, cli_store, command, nonempty


def register(subparsers: argparse._SubParsersAction) -> None:
    sub = command(subparsers, "manifest", "inspect Context Manifests (what the model saw, per turn)",
                  "Inspect the Context Manifest stored for each turn.")
    show = sub.add_parser("show", help="print one turn's manifest, or a session's turns",
                          description="Print the manifest of TURN_ID (the X-Ctx-Turn-Id response header), "
                                      "or one line per turn of --session.")
    show.add_argument("turn_id", nargs="?", metavar="TURN_ID", type=nonempty, help="turn id")
    show.add_argument("--session", type=nonempty, help="list the turns of this session instead")
    add_store_options(show, tenant_help="tenant (default: the turn's own; for --session "
                                        "filters.identify.default_tenant)")
    show.add_argument("--json", action="store_true", help="print the stored JSON instead of tables")
    show.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    from ctxproxy.store.lookups import find_manifest, list_manifests

    if bool(args.turn_id) == bool(args.session):
        print("ctxproxy: give a TURN_ID or --session SESSION (one of them)", file=sys.stderr)
        return 2
    with cli_store(args) as cs:
        if args.turn_id:
            doc = find_manifest(cs.store, args.turn_id, args.tenant)
            if doc is None:
                print(f"ctxproxy: no manifest for turn {args.turn_id!r}", file=sys.stderr)
                return 1
            m = dict(doc.data)
            print(json.dumps(m, indent=2, sort_keys=True) if args.json else render(m))
            return 0
        tenant = cs.tenant
        ms = list_manifests(cs.store, tenant, args.session)
        if not ms:
            print(f"ctxproxy: no manifests for session {args.session!r} (tenant {tenant!r})", file=sys.stderr)
            return 1
        print(json.dumps(ms, indent=2, sort_keys=True) if args.json else render_session(ms, tenant, args.session))
        return 0


# -- rendering ------------------------------------------------------------------

def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], indent: str = "  ") -> str:
    rows = [[_cell(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = [indent + "  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if v is None or v == "":
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, Mapping):
        return ",".join(f"{k}={_cell(x)}" for k, x in v.items()) or "-"
    if isinstance(v, (list, tuple)):
        return ",".join(_cell(x) for x in v) or "-"
    return str(v).replace("\n", " ")


def _when(m: Mapping[str, Any]) -> str:
    t = m.get("started_at")
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if isinstance(t, (int, float)) else "-"


def render(m: Mapping[str, Any]) -> str:
    """One manifest as key/value lines and tables."""
    tok = m.get("tokens") or {}
    session = m.get("session_id") or "-"
    if m.get("session_supplied"):
        session += " (from the agent)"
    elif m.get("identity_source"):
        session += f" ({m['identity_source']})"
    model = m.get("model") or "-"
    if m.get("response_model") and m.get("response_model") != m.get("model"):
        model += f" -> {m['response_model']}"
    head = [
        ("turn", m.get("turn_id")),
        ("when", f"{_when(m)}  ({_cell(m.get('duration_ms'))} ms)"),
        ("tenant", m.get("tenant")),
        ("session", session),
        ("task", m.get("task_id")),
        ("api / route", f"{m.get('api')} / {m.get('route')}  ({m.get('provider')}"
                        f"{', ' + str(m['server_address']) if m.get('server_address') else ''})"),
        ("model", model),
        ("stream", m.get("stream")),
        ("status", f"{_cell(m.get('status'))}  error: {_cell(m.get('error'))}"),
        ("finish", m.get("finish_reasons")),
        ("tokens", f"in {_cell(tok.get('input'))}  out {_cell(tok.get('output'))}  "
                   f"cache read {_cell(tok.get('cache_read'))}  cache write {_cell(tok.get('cache_creation'))}"),
        ("context", f"budget {_cell(m.get('token_budget'))}  injected {_cell(m.get('tokens_injected'))}  "
                    f"policy {_cell(m.get('policy_revision'))}"),
        ("compacted", m.get("compacted")),
        ("degraded", m.get("degraded") or "none"),
        ("sha256", m.get("sha256")),
    ]
    width = max(len(k) for k, _ in head)
    out = [f"{k.ljust(width)}  {_cell(v)}" for k, v in head]

    segs = m.get("segments") or []
    out.append(f"\nsegments ({len(segs)})")
    if segs:
        rows = []
        for s in segs:
            lab = s.get("labels") or {}
            fresh = lab.get("freshness") or {}
            rows.append([s.get("kind"), s.get("ref"), s.get("tokens"), s.get("status"), s.get("placement"),
                         lab.get("trust"), lab.get("sensitivity"), lab.get("scope"), lab.get("origin"),
                         (lab.get("budget") or {}).get("priority"), fresh, s.get("reason")])
        # rows in the order the model read them (the manifest's order), dropped ones last
        out.append(table(["KIND", "REF", "TOKENS", "STATUS", "WHERE", "TRUST", "SENSITIVITY", "SCOPE", "ORIGIN",
                          "PRIO", "FRESHNESS", "REASON"], rows))
    red = [(r, n, "request") for r, n in (m.get("redactions") or {}).items()]
    red += [(r, n, "response") for r, n in (m.get("response_redactions") or {}).items()]
    out.append(f"\nredactions ({sum(n for _, n, _ in red)})"
               + (f"  profile {m['redaction_profile']}" if m.get("redaction_profile") else ""))
    if red:
        out.append(table(["RULE", "COUNT", "DIRECTION"], red))
    pruned = m.get("pruned") or []
    out.append(f"\npruned tool outputs ({len(pruned)})")
    if pruned:
        out.append(table(["REF", "TOOL", "TOKENS BEFORE", "AFTER"],
                         [[p.get("ref"), p.get("tool"), p.get("tokens_before"), p.get("tokens_after")]
                          for p in pruned]))
    effects = m.get("effects") or []
    out.append(f"\ntool effects ({len(effects)})"
               + (f"  checkpoint {m['checkpoint']}" if m.get("checkpoint") else ""))
    if effects:
        out.append(table(["KEY", "STATE", "TOOL", "CALL", "SIDE EFFECT", "DUPLICATE"],
                         [[e.get("key"), e.get("state"), e.get("tool"), e.get("call_id"), e.get("side_effect"),
                           e.get("duplicate")] for e in effects]))
    timings = m.get("timings_ms") or {}
    out.append("\ntimings (ms)")
    if timings:
        out.append(table(["STEP", "MS"], sorted(timings.items(), key=lambda kv: -kv[1])))
    return "\n".join(out)


def render_session(ms: Sequence[Mapping[str, Any]], tenant: str, session: str) -> str:
    rows = []
    for m in ms:
        tok = m.get("tokens") or {}
        red = sum((m.get("redactions") or {}).values()) + sum((m.get("response_redactions") or {}).values())
        placed = [s for s in m.get("segments") or [] if s.get("status") in ("placed", "truncated")]
        rows.append([_when(m), m.get("turn_id"), m.get("model"), tok.get("input"), tok.get("output"),
                     f"{len(placed)}/{len(m.get('segments') or [])}", red, len(m.get("pruned") or []),
                     len(m.get("effects") or []), m.get("degraded") or "", m.get("error")])
    return (f"session {session}  tenant {tenant}  ({len(ms)} turns)\n"
            + table(["WHEN", "TURN", "MODEL", "IN", "OUT", "SEGMENTS", "REDACTED", "PRUNED", "EFFECTS",
                     "DEGRADED", "ERROR"], rows))
