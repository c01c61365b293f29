"""``ctxproxy learn`` — what the agents' sessions taught, for a person to review.

    ctxproxy learn run [--user U | --project P | --all] [--dry-run]
    ctxproxy learn status
    ctxproxy learn review [--user U] [--project P]                   the proposals, with the user's words and evidence
    ctxproxy learn review --approve ID... | --reject ID... | --approve-all | --reject-all
    ctxproxy learn review --edit ID --statement TEXT
    ctxproxy learn insights [--user U] [--out report.html] [--url U]  Markdown on stdout, or a file (.html or .md)
    ctxproxy learn export --format codex|claude|openclaw|hermes [--out DIR] [--user U] [--project P]

Against the data dir by default (beside a running proxy); ``--url`` (and
``--token``) use a running proxy's admin API (``/ctx/v1/learn/…``). Exit
codes as ``ctxproxy memory``: 0 ok, 2 usage, 3 not found, 4 conflict, 5
refused by the gate (a bulk review exits with the first failure's code).
"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .options import (CLIError, add_remote_options, add_store_options, admin_call, admin_failure, cli_store, gate_answer,
                      gate_errors, nonempty, print_answer)

EXPORT_FORMATS = ("codex", "claude", "openclaw", "hermes")
_CODES = {"not_found": 3, "conflict": 4, "memory_blocked": 5}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("learn", help="what the agents' sessions taught: run, review, insights, export",
                              description="Learning from the sessions the proxy saw. It only proposes; "
                                          "a person approves.")
    sub = p.add_subparsers(dest="learn_command", metavar="ACTION")

    def common(sp: argparse.ArgumentParser) -> None:
        add_store_options(sp)
        add_remote_options(sp)
        sp.add_argument("--json", action="store_true", help="print JSON")

    r = sub.add_parser("run", help="read quiet sessions and consolidate now (the cooldown does not apply)")
    common(r)
    which = r.add_mutually_exclusive_group()
    which.add_argument("--user", type=nonempty, help="only this user's sessions and scope")
    which.add_argument("--project", type=nonempty, help="only this project's sessions and scope")
    which.add_argument("--all", action="store_true", help="every scope of the tenant (the default)")
    r.add_argument("--dry-run", action="store_true", help="show what would be proposed; write nothing")
    r.set_defaults(func=_run)

    s = sub.add_parser("status", help="the lease, watermark, last run and counts")
    common(s)
    s.set_defaults(func=_status)

    v = sub.add_parser("review", help="list proposals, or approve / reject / edit them (singly or in bulk)")
    common(v)
    v.add_argument("--user", type=nonempty, help="only this user's proposals")
    v.add_argument("--project", type=nonempty, help="only this project's proposals")
    act = v.add_mutually_exclusive_group()
    act.add_argument("--approve", nargs="+", metavar="ID", type=nonempty, help="approve these proposals")
    act.add_argument("--reject", nargs="+", metavar="ID", type=nonempty, help="reject these (never proposed again)")
    act.add_argument("--approve-all", action="store_true", help="approve every listed proposal")
    act.add_argument("--reject-all", action="store_true", help="reject every listed proposal")
    act.add_argument("--edit", metavar="ID", type=nonempty, help="new words for a proposal (give --statement)")
    v.add_argument("--statement", help="with --edit: the new statement (it stays proposed)")
    v.set_defaults(func=_review)

    i = sub.add_parser("insights", help="a report for people: sessions, tools, failures, learning, budgets")
    common(i)
    i.add_argument("--user", type=nonempty, help="one user's sessions and memories")
    i.add_argument("--out", metavar="FILE", help="write it here (.html: a self-contained page; else Markdown)")
    i.set_defaults(func=_insights)

    x = sub.add_parser("export", help="approved memories in an agent's own files")
    common(x)
    x.add_argument("--format", choices=EXPORT_FORMATS, required=True)
    x.add_argument("--out", metavar="DIR", default=".", help="directory to write into (default: here)")
    x.add_argument("--user", type=nonempty, help="only this user's memories (and the shared ones)")
    x.add_argument("--project", type=nonempty, help="only this project's memories")
    x.set_defaults(func=_export)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


# -- plumbing ----------------------------------------------------------------------


def _learner(cs: Any) -> Any:
    from ctxproxy.store.services.learning.job import Learner

    return Learner.for_config(cs.store, cs.config, Path(cs.config.server.data_dir))


def _remote(args: argparse.Namespace, method: str, path: str, query: dict | None = None, body: Any = None) -> Any:
    status, payload = admin_call(args, method, "learn/" + path, {"tenant": args.tenant, **(query or {})}, body)
    if status != 200:
        raise admin_failure(status, payload)
    return payload


def _when(t: Any) -> str:
    return datetime.fromtimestamp(float(t), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if t else "-"


# -- run and status --------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    scope = {"user": args.user, "project": args.project}
    if args.url:
        report = _remote(args, "POST", "run", body={**{k: v for k, v in scope.items() if v},
                                                    "dry_run": args.dry_run})
    else:
        with cli_store(args) as cs:
            report = _learner(cs).run(cs.tenant, user=args.user, project=args.project,
                                      dry_run=args.dry_run).to_dict()
    c = report.get("consolidation") or {}
    lines = [f"{report['tenant']} ({report['scope']}): {report['status']}"
             + (f", {report['mode']}" if report.get("mode") and c else "")
             + (" (dry run: nothing written)" if report["dry_run"] else ""),
             f"  sessions read: {report['sessions_read']}, watermark: {report['watermark']}"]
    if c:
        lines.append(f"  candidates {c['candidates']}: proposed {c['proposed']}, recurred {c['recurred']}, "
                     f"unchanged {c['unchanged']}, rejected before {c['rejected_before']}, "
                     f"over budget {c['over_budget']}, refused {sum(c['refused'].values())}"
                     + (f" ({', '.join(f'{k} {n}' for k, n in c['refused'].items())})" if c["refused"] else ""))
        for p in c.get("proposals") or ():
            lines.append(f"  + [{p['kind']}, {p['scope']}] {p['statement']}")
    if report.get("error"):
        lines.append(f"  {report['error']}")
    print_answer(args, report, "\n".join(lines))
    return 1 if report["status"] in ("failed", "busy", "lease lost") else 0


def _status(args: argparse.Namespace) -> int:
    if args.url:
        st = _remote(args, "GET", "status")
    else:
        with cli_store(args) as cs:
            st = _learner(cs).status(cs.tenant)
    lease = st.get("lease")
    last = st.get("last_run") or {}
    text = "\n".join([
        f"tenant {st['tenant']}",
        f"  lease: {lease['owner'] + ' until ' + _when(lease['until']) if lease else 'free'}",
        f"  watermark: {st['watermark']} (extracted sessions so far: {st['last_extracted']}, "
        f"waiting: {st['pending_sessions']})",
        f"  last run: {_when(last.get('at'))} {last.get('mode', '')} — proposed {last.get('proposed', 0)}, "
        f"recurred {last.get('recurred', 0)}" if last else "  last run: never",
        f"  cooldown until: {_when(st.get('cooldown_until'))}; failures: {st['failures']}"
        + (f", retry at {_when(st['retry_at'])}: {st['last_error']}" if st.get("retry_at") else ""),
        "  memories learned: " + (", ".join(f"{n} {k}" for k, n in sorted(st["memories"].items())) or "none")
        + f"; rejections remembered: {st['rejected_remembered']}",
    ])
    print_answer(args, st, text)
    return 0


# -- review ------------------------------------------------------------------------------


def _show(items: list[dict]) -> str:
    if not items:
        return "(no proposals)"
    out = []
    for p in items:
        agents = f", agents: {', '.join(p['agents'])}" if p["agents"] else ""
        out.append(f"{p['memory_id']}  r{p['revision']} {p['status']} {p['kind']} ({p['scope']}"
                   f"{' ' + (p['user'] or p['project']) if p['user'] or p['project'] else ''}) — seen in "
                   f"{p['recurrence']} session(s){agents}, {p['verified']} verified")
        out.append(f"    {p['statement']}")
        for q in p["quotes"][:2]:
            out.append(f"    user said: \"{q}\"")
        for e in p["evidence"][:3]:
            bits = [f"session {e['session']}"]
            if e.get("turns"):
                bits.append(f"turns {', '.join(t[-6:] for t in e['turns'][:4])}")
            if e.get("effects"):
                bits.append(f"{len(e['effects'])} tool call(s)")
            if e.get("outcome"):
                bits.append(f"outcome: {e['outcome'][:100]}")
            out.append("    evidence: " + "; ".join(bits))
    return "\n".join(out)


def _review(args: argparse.Namespace) -> int:
    query = {k: getattr(args, k) for k in ("user", "project") if getattr(args, k)}
    if args.edit:
        if args.statement is None or not args.statement.strip():
            raise CLIError("--edit needs --statement TEXT", 2)
        return _edit(args)
    if args.statement is not None:
        raise CLIError("--statement goes with --edit ID", 2)
    action = "approve" if args.approve or args.approve_all else "reject" if args.reject or args.reject_all else None
    if action is None:
        items = _remote(args, "GET", "proposals", query)["proposals"] if args.url else _local_list(args, query)
        print_answer(args, items, _show(items))
        return 0
    ids = args.approve or args.reject
    if ids is None:  # --approve-all / --reject-all: what the listing shows
        listed = _remote(args, "GET", "proposals", query)["proposals"] if args.url else _local_list(args, query)
        ids = [p["memory_id"] for p in listed]
    if args.url:
        results = _remote(args, "POST", "proposals:review", body={action: ids})["results"]
    else:
        from ctxproxy.store.services.learning import review

        with cli_store(args) as cs:
            learner = _learner(cs)
            results = getattr(review, action)(cs.store, learner.gate, cs.tenant, ids, by="cli")
    lines = [f"{r['memory_id']}: " + (f"{r['status']}" if "error" not in r else
                                      f"{r['error']['type']}: {r['error']['message']}") for r in results]
    print_answer(args, results, "\n".join(lines) or "(nothing to review)")
    failed = next((r for r in results if "error" in r), None)
    return _CODES.get(failed["error"]["type"], 1) if failed else 0


def _local_list(args: argparse.Namespace, query: dict) -> list[dict]:
    from ctxproxy.store.services.learning import review

    with cli_store(args) as cs:
        return review.proposals(cs.store, cs.tenant, **query)


def _edit(args: argparse.Namespace) -> int:
    if args.url:
        path = f"proposals/{urllib.parse.quote(args.edit, safe='')}"
        status, ans = admin_call(args, "PATCH", "learn/" + path, {"tenant": args.tenant},
                                 {"statement": args.statement})
        if status != 200:
            err = ans.get("error", {}) if isinstance(ans, dict) else {}
            raise CLIError(f"{err.get('type', status)}: {err.get('message', ans)}",
                           _CODES.get(err.get("type"), 1))
    else:
        from ctxproxy.store.services.learning import review

        with cli_store(args) as cs, gate_errors(f"learned proposal {args.edit!r}"):
            out = review.edit(cs.store, _learner(cs).gate, cs.tenant, args.edit, args.statement, by="cli")
        ans = gate_answer(out)
    print_answer(args, ans, f"{ans['memory_id']}: {ans['status']}" + (f", revision {ans['revision']}"
                                                               if ans.get("revision") else ""))
    return 0


# -- insights and export ----------------------------------------------------------------


def _insights(args: argparse.Namespace) -> int:
    from ctxproxy.store.services.learning import insights

    if args.url:  # the proxy gathers it (its gate's secret check); rendered here, as from the data dir
        data = _remote(args, "GET", "insights", {"format": "json", "user": args.user})
    else:
        with cli_store(args) as cs:
            learner = _learner(cs)
            data = insights.gather(cs.store, learner.sessions, cs.tenant, user=args.user,
                                   snapshot_chars=dict(cs.config.memory.gate.snapshot_chars),
                                   secrets=learner.gate.secrets)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    if not args.out:
        sys.stdout.write(insights.markdown(data))
        return 0
    out = Path(args.out).expanduser()
    text = insights.html(data) if out.suffix.lower() in (".html", ".htm") else insights.markdown(data)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, "utf-8")
    print(f"wrote {out}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from ctxproxy.store.services.memory.formats import write_files

    query = {k: getattr(args, k) for k in ("user", "project") if getattr(args, k)}
    if args.url:
        payload = _remote(args, "GET", "export", {"format": args.format, **query})
    else:
        from ctxproxy.store.services.learning.export import approved_files

        with cli_store(args) as cs:
            payload = approved_files(cs.store, cs.tenant, args.format, **query)
    written = write_files(Path(args.out).expanduser(), payload["files"])
    notes = ", ".join(f"{n} {k}" for k, n in payload["notes"].items())
    print_answer(args, {**payload, "written": [str(p) for p in written]},
           f"exported ({args.format}): {notes}\n" + "\n".join(f"  {p}" for p in written))
    return 0
