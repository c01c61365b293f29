"""``ctxproxy memory`` — durable memory from a shell, through the same gate as the API.

    ctxproxy memory add "Prefers rebase over merge." --kind preference --user alice
    ctxproxy memory list [--project P] [--user U] [--session S] [--status S] [--kind K]
    ctxproxy memory show ID                     the record and its history
    ctxproxy memory approve ID | reject ID
    ctxproxy memory edit ID --statement "..." [--revision N]
    ctxproxy memory delete ID                   erase it (a forget receipt)
    ctxproxy memory import PATH [--format claude|codex|openclaw|hermes|jsonl] [--project P] [--user U]
    ctxproxy memory export DEST --format claude|codex|openclaw|hermes|jsonl [filters]
    ctxproxy memory rescan | purge              re-check with today's rules / erase long-expired

Against the data dir by default; ``--url`` (and ``--token``) use a running
proxy's admin API. ``--json`` prints JSON instead of tables.
"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .options import (CLIError, add_remote_options, add_store_options, admin_answer, admin_call, admin_failure, ask,
                      cli_store, gate_answer, gate_errors, nonempty, print_answer)

KINDS = ("preference", "fact", "procedure", "failure", "event")
STATUSES = ("active", "proposed", "hypothesis", "superseded", "expired", "deleted")
ORIGINS = ("user", "verified_tool_result", "tool_output", "model_inference", "imported", "consolidated")
FORMATS = ("claude", "codex", "openclaw", "hermes", "jsonl")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("memory", help="add, review, edit, import and export durable memories",
                              description="Durable memory records, written through the memory gate.")
    sub = p.add_subparsers(dest="memory_command", metavar="ACTION")

    def common(sp: argparse.ArgumentParser, remote: bool = True) -> None:
        add_store_options(sp)
        if remote:
            add_remote_options(sp)
        sp.add_argument("--json", action="store_true", help="print JSON")

    def scope(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--project", type=nonempty, help="project scope")
        sp.add_argument("--user", type=nonempty, help="user scope")
        sp.add_argument("--session", type=nonempty, help="session scope")

    a = sub.add_parser("add", help="write one memory (gated)")
    common(a)
    a.add_argument("statement", help="the statement to remember")
    a.add_argument("--kind", choices=KINDS, default="fact")
    a.add_argument("--origin", choices=ORIGINS, default="user")
    scope(a)
    a.add_argument("--evidence-ref", help="where it comes from: commit:SHA, url:..., session:S/turn:T")
    a.add_argument("--sensitivity", choices=("public", "internal", "confidential"))
    a.add_argument("--evergreen", action="store_true", help="never decays or expires")
    a.add_argument("--external-id", type=nonempty, help="your own id for it (unique per scope)")
    a.add_argument("--replaces", type=nonempty, help="memory id this one replaces (over a snapshot cap)")
    a.add_argument("--observed-at", type=_time_arg, help="when it was true: RFC 3339 (2026-03-01T12:00:00Z) "
                                                         "or unix seconds; default now")
    a.add_argument("--expires-at", type=_time_arg, help="when it stops being served: RFC 3339 or unix seconds")
    a.set_defaults(func=_add)

    ls = sub.add_parser("list", help="memories, oldest first")
    common(ls)
    scope(ls)
    ls.add_argument("--status", choices=STATUSES)
    ls.add_argument("--kind", choices=KINDS)
    ls.set_defaults(func=_list)

    for name, helptext, fn in (("show", "a memory and its history", _show),
                               ("approve", "approve a proposed memory or hypothesis", _approve),
                               ("reject", "reject a proposed memory or hypothesis", _reject),
                               ("delete", "erase a memory (every revision; a forget receipt)", _delete)):
        sp = sub.add_parser(name, help=helptext)
        common(sp)
        sp.add_argument("memory_id", type=nonempty)
        if name in ("approve", "reject"):
            sp.add_argument("--revision", type=int, help="the revision you reviewed (409 if it changed)")
        sp.set_defaults(func=fn)

    e = sub.add_parser("edit", help="a new revision (gated again)")
    common(e)
    e.add_argument("memory_id", type=nonempty)
    e.add_argument("--statement")
    e.add_argument("--kind", choices=KINDS)
    e.add_argument("--evidence-ref")
    e.add_argument("--sensitivity", choices=("public", "internal", "confidential"))
    e.add_argument("--revision", type=int, help="the revision you edited (409 if another writer came first)")
    e.set_defaults(func=_edit)

    i = sub.add_parser("import", help="import an agent's memory files, each entry gated on its own")
    common(i)
    i.add_argument("path", help="a memory directory or file")
    i.add_argument("--format", choices=FORMATS, help="default: guessed from the path")
    i.add_argument("--project", type=nonempty, help="project scope for every entry")
    i.add_argument("--user", type=nonempty, help="user scope for every entry (required for Hermes USER.md and "
                                                 "Claude Code 'user' memories)")
    i.add_argument("--propose", action="store_true", help="import as proposed (each needs an approval)")
    i.set_defaults(func=_import)

    x = sub.add_parser("export", help="write memories in an agent's format (with ids) or JSONL")
    common(x)
    x.add_argument("dest", help="directory to write (a file for jsonl)")
    x.add_argument("--format", choices=FORMATS, required=True)
    scope(x)
    x.add_argument("--status", choices=STATUSES, default="active")
    x.add_argument("--kind", choices=KINDS)
    x.set_defaults(func=_export)

    for name, helptext, fn in (("rescan", "re-check stored memories with today's threat and secret rules", _rescan),
                               ("purge", "erase memories expired longer than the grace period", _purge)):
        sp = sub.add_parser(name, help=helptext)
        common(sp, remote=False)
        sp.set_defaults(func=fn)
    from .recall import add_memory_actions

    add_memory_actions(sub, common)  # search, reindex
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


# -- plumbing ----------------------------------------------------------------------


def _time_arg(value: str) -> float | str:
    """Unix seconds, or RFC 3339 text (the gate checks it, as for the API)."""
    try:
        return float(value)
    except ValueError:
        return value


def _gate(cs: Any) -> Any:
    from ctxproxy.store.services.memory.gate import GateConfig, MemoryGate

    return MemoryGate(cs.store, GateConfig.from_config(cs.config))


def _fail(status: int, payload: Any) -> CLIError:
    err = payload.get("error", {}) if isinstance(payload, dict) else {}
    if status == 422 and err.get("type") == "memory_blocked":
        return CLIError(f"refused ({err.get('reason')}): {err.get('message')}", 5)
    if status == 409:
        return CLIError(f"conflict: {err.get('message')}", 4)
    return admin_failure(status, payload)


def _gated(args: argparse.Namespace, call: Any) -> dict:
    """Run ``call(gate, tenant)`` on the data dir's store; its answer, or the
    CLIError for a bad field (2), a missing record (3), a conflict (4), a refusal (5)."""
    with cli_store(args) as cs, gate_errors(f"memory {getattr(args, 'memory_id', '')!r}"):
        out = call(_gate(cs), cs.tenant)
    return gate_answer(out)


def _quote(memory_id: str) -> str:
    return urllib.parse.quote(memory_id, safe="")


def _scope_of(r: dict) -> str:
    parts = [f"{k}={r[k]}" for k in ("project", "user", "session") if r.get(k)]
    return ",".join(parts) or "tenant"


def _day(t: float | None) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d") if t else "-"


def table(records: list[dict]) -> str:
    if not records:
        return "(no memories)"
    rows = [("ID", "STATUS", "KIND", "SCOPE", "REV", "OBSERVED", "STATEMENT")]
    for r in records:
        text = " ".join(r["statement"].split())
        status = r["status"] + (f" [quarantined: {r['quarantine']}]" if r.get("quarantine") else "")
        rows.append((r["memory_id"], status, r["kind"], _scope_of(r), str(r["revision"]), _day(r["observed_at"]),
                     text if len(text) <= 70 else text[:69] + "…"))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    return "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(row[:6])) + "  " + row[6] for row in rows)


def _answer_line(ans: dict) -> str:
    extra = "".join(f", {k} {ans[k]}" for k in ("supersedes", "duplicate_of", "revision") if ans.get(k))
    return f"{ans['memory_id']}: {ans['status']}{extra}"


# -- commands ---------------------------------------------------------------------------


def _add(args: argparse.Namespace) -> int:
    body = {"statement": args.statement, "kind": args.kind, "origin": args.origin}
    for name in ("project", "user", "session", "evidence_ref", "sensitivity", "external_id", "replaces",
                 "observed_at", "expires_at"):
        if getattr(args, name, None) is not None:
            body[name] = getattr(args, name)
    if args.evergreen:
        body["evergreen"] = True
    if args.url:
        ans = admin_answer(args, "POST", "memories", {"tenant": args.tenant}, body, ok=201, fail=_fail)
    else:
        ans = _gated(args, lambda gate, tenant: gate.write(tenant, body, created_by="cli"))
    print_answer(args, ans, _answer_line(ans))
    return 0


def _list(args: argparse.Namespace) -> int:
    filters = {k: getattr(args, k) for k in ("project", "user", "session", "status", "kind") if getattr(args, k)}
    records = ask(args, "GET", "memories", {"tenant": args.tenant, **filters},
                  lambda cs: {"memories": [r.shown() for r in cs.store.memories.list(cs.tenant, **filters)]},
                  fail=_fail)["memories"]
    print_answer(args, records, table(records))
    return 0


def _show(args: argparse.Namespace) -> int:
    def here(cs: Any) -> dict:
        rec = cs.store.memories.get(cs.tenant, args.memory_id)
        if rec is None:
            raise CLIError(f"no memory {args.memory_id!r}", 3)
        return {"memory": rec.shown(),
                "history": [h.shown() for h in cs.store.memories.history(cs.tenant, args.memory_id)]}

    payload = ask(args, "GET", f"memories/{_quote(args.memory_id)}", {"tenant": args.tenant}, here, fail=_fail)
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    m = payload["memory"]
    for k in ("memory_id", "status", "kind", "origin", "statement", "evidence_ref", "supersedes", "superseded_by",
              "external_id", "sensitivity", "confidence", "quarantine", "created_by"):
        if m.get(k) not in ("", None):
            print(f"{k:>14}: {m[k]}")
    print(f"{'scope':>14}: {_scope_of(m)}")
    print(f"{'observed':>14}: {_day(m['observed_at'])}   expires: {_day(m.get('expires_at'))}")
    print(f"{'history':>14}:")
    for h in payload["history"]:
        print(f"{'':>16}r{h['revision']} {_day(h['updated_at'])} {h['status']:<10} {' '.join(h['statement'].split())[:70]}")
    return 0


def _review(args: argparse.Namespace, action: str) -> int:
    if args.url:
        body = {"revision": args.revision} if args.revision is not None else {}
        ans = admin_answer(args, "POST", f"memories/{_quote(args.memory_id)}/{action}", {"tenant": args.tenant},
                           body, fail=_fail)
    elif action == "approve":
        ans = _gated(args, lambda gate, tenant: gate.approve(tenant, args.memory_id, by="cli",
                                                             expected_revision=args.revision))
    else:
        def reject(gate: Any, tenant: str) -> dict:
            rec = gate.reject(tenant, args.memory_id, by="cli", expected_revision=args.revision)
            return {"memory_id": rec.memory_id, "status": rec.status, "revision": rec.revision}

        ans = _gated(args, reject)
    print_answer(args, ans, _answer_line(ans))
    return 0


def _approve(args: argparse.Namespace) -> int:
    return _review(args, "approve")


def _reject(args: argparse.Namespace) -> int:
    return _review(args, "reject")


def _edit(args: argparse.Namespace) -> int:
    body = {k: getattr(args, k) for k in ("statement", "kind", "evidence_ref", "sensitivity")
            if getattr(args, k) is not None}
    if not body:
        raise CLIError("nothing to change: give --statement, --kind, --evidence-ref or --sensitivity", 2)
    if args.url:
        if args.revision is not None:
            body["revision"] = args.revision
        ans = admin_answer(args, "PATCH", f"memories/{_quote(args.memory_id)}", {"tenant": args.tenant}, body,
                           fail=_fail)
    else:
        ans = _gated(args, lambda gate, tenant: gate.edit(tenant, args.memory_id, body,
                                                          expected_revision=args.revision, by="cli"))
    print_answer(args, ans, _answer_line(ans))
    return 0


def _delete(args: argparse.Namespace) -> int:
    from .forget import run_forget

    args.user = args.session = args.project = args.request_id = None
    args.memory, args.dry_run = args.memory_id, False
    if not args.url:
        with cli_store(args) as cs:
            if cs.store.memories.get(cs.tenant, args.memory_id) is None:
                raise CLIError(f"no memory {args.memory_id!r}", 3)
    return run_forget(args)


def _import(args: argparse.Namespace) -> int:
    from ctxproxy.store.services.memory.formats import FormatError, detect, read_entries

    path = Path(args.path).expanduser()
    try:
        fmt = args.format or detect(path)
        entries = read_entries(path, fmt, project=args.project or "", user=args.user or "")
    except (FormatError, OSError) as exc:
        raise CLIError(str(exc), 2) from None
    if args.propose and args.url:
        raise CLIError("--propose works on the data dir only (the API decides status by origin)", 2)
    results: list[dict] = []
    if args.url:
        for start in range(0, len(entries), 1000):
            payload = admin_answer(args, "POST", "memories:batch", {"tenant": args.tenant},
                                   entries[start:start + 1000], fail=_fail)
            results += payload["results"]
    else:
        with cli_store(args) as cs:
            for r in _gate(cs).write_many(cs.tenant, entries, created_by=f"import:{fmt}", propose=args.propose):
                if isinstance(r, Exception):
                    results.append({"code": 400, "error": {"type": "invalid_request", "message": str(r)}})
                else:
                    results.append({"code": 422 if r.refused else 201, **r.answer()})
    summary = {"format": fmt, "entries": len(entries), "created": 0, "duplicates": 0, "refused": 0, "invalid": 0}
    for entry, r in zip(entries, results):
        r["source"] = entry.get("evidence_ref", "")
        if r["code"] == 201:
            summary["duplicates" if r.get("duplicate_of") else "created"] += 1
        else:
            summary["refused" if r["code"] == 422 else "invalid"] += 1
    if args.json:
        print(json.dumps({"summary": summary, "results": results}, indent=2, ensure_ascii=False))
    else:
        for r in results:
            if r["code"] != 201:
                err = r["error"]
                print(f"refused {r['source']}: {err.get('reason', err.get('type'))}: {err['message']}",
                      file=sys.stderr)
        print(f"imported {path} ({fmt}): {summary['created']} new, {summary['duplicates']} duplicates, "
              f"{summary['refused']} refused, {summary['invalid']} invalid")
    return 0


def _export(args: argparse.Namespace) -> int:
    from ctxproxy.store.services.memory.formats import export
    from ctxproxy.store.memory_records import MemoryRecord

    filters = {k: getattr(args, k) for k in ("project", "user", "session", "status", "kind") if getattr(args, k)}
    if args.url:
        status, payload = admin_call(args, "GET", "memories", {"tenant": args.tenant, "limit": "0", **filters})
        status, payload = admin_call(args, "GET", "memories", {"tenant": args.tenant,
                                                               "limit": str(max(1, payload.get("count", 0))),
                                                               **filters}) if status == 200 else (status, payload)
        if status != 200:
            raise _fail(status, payload)
        records = [MemoryRecord.from_dict(d) for d in payload["memories"]]
    else:
        with cli_store(args) as cs:
            records = cs.store.memories.list(cs.tenant, **filters)
    files = export(records, args.format, Path(args.dest).expanduser())
    print_answer(args, {"records": len(records), "files": [str(f) for f in files]},
           f"exported {len(records)} memories to {len(files)} file(s) under {args.dest}")
    return 0


def _rescan(args: argparse.Namespace) -> int:
    with cli_store(args) as cs:
        counts = _gate(cs).rescan(force=True)
    print_answer(args, counts, ", ".join(f"{n} {k}" for k, n in counts.items()))
    return 0


def _purge(args: argparse.Namespace) -> int:
    with cli_store(args) as cs:
        counts = _gate(cs).purge_expired()
    print_answer(args, counts, ", ".join(f"{n} {k}" for k, n in counts.items()))
    return 0
