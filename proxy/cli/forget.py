"""``ctxproxy forget`` — erase a subject from every layer, with a chained receipt.

    ctxproxy forget --user U | --session S | --memory ID | --project P [--request-id R] [--dry-run]
    ctxproxy forget show REQUEST_ID [--json]  the receipt, re-checking that nothing remains (exit 1 if not clean)
    ctxproxy forget verify [--file F]      check the tenant's receipt chain (offline: a JSONL export)
    ctxproxy forget export --file F        write the receipts (JSONL) for an auditor
    ctxproxy forget finish                 finish pending erasures (needs the store to itself)

Against the data dir by default; ``--url`` uses a running proxy's admin API.
``effects forget`` is an alias.
"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from typing import Any

from .options import CLIError, add_remote_options, add_store_options, admin_answer, ask, cli_store, nonempty


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("forget", help="erase a user, session, memory or project from every layer",
                              description="Erase a subject from every layer of the store (memories and their "
                                          "revisions, indexes, session records, checkpoints, effect payloads, "
                                          "manifests, pruned originals, derived indexes) and print the receipt. "
                                          "Receipts chain by hash; `forget verify` checks the chain.")
    p.add_argument("action", nargs="?", choices=("show", "verify", "export", "finish"),
                   help="instead of erasing: show a receipt, verify or export the chain, finish pending erasures")
    p.add_argument("request_id_arg", nargs="?", metavar="REQUEST_ID", help="(show) the receipt's request id")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--user", type=nonempty, help="the user (X-Ctx-User) to erase")
    who.add_argument("--session", type=nonempty, help="the session to erase")
    who.add_argument("--memory", type=nonempty, help="the memory id to erase")
    who.add_argument("--project", type=nonempty, help="the project whose memories to erase")
    p.add_argument("--request-id", type=nonempty, help="id of this erasure: running it again replays its receipt")
    p.add_argument("--dry-run", action="store_true", help="only count what would be erased")
    p.add_argument("--file", help="(verify/export) a JSONL file of receipts")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_store_options(p)
    add_remote_options(p)
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    if args.action == "verify":
        return _verify(args)
    if args.action == "export":
        return _export(args)
    if args.action == "show":
        return _show(args)
    if args.action == "finish":
        return _finish(args)
    return run_forget(args)


def _subject(args: argparse.Namespace) -> dict[str, str]:
    for kind in ("user", "session", "memory", "project"):
        if getattr(args, kind, None):
            return {kind: getattr(args, kind)}
    raise CLIError("name what to forget: --user, --session, --memory or --project", 2)


def run_forget(args: argparse.Namespace) -> int:
    from ctxproxy.store import StoreError
    from ctxproxy.store import forget as forgetting

    subject = _subject(args)
    if getattr(args, "url", None):
        if args.dry_run:
            raise CLIError("--dry-run works on the data dir only", 2)
        out = admin_answer(args, "POST", "forget", {"tenant": args.tenant},
                           {**subject, **({"request_id": args.request_id} if args.request_id else {})})
    else:
        with cli_store(args) as cs:
            try:
                if args.dry_run:
                    kind, value = forgetting.subject_of(subject)
                    arg = {"user": "subject"}.get(kind, kind)
                    out = {"dry_run": True, "counts": cs.store.count_subject(cs.tenant, **{arg: value})}
                else:
                    out = forgetting.forget(cs.store, cs.tenant, subject, request_id=args.request_id).to_dict()
            except StoreError as exc:
                raise CLIError(str(exc)) from None
    if args.json:
        print(json.dumps(out, indent=2))
    elif args.dry_run:
        print("would erase: " + ", ".join(f"{n} {k}" for k, n in out["counts"].items() if n) or "nothing")
    else:
        print(f"{out['status']} ({out['request_id']}): {_counts(out['counts'])}")
        if out["status"] == "pending":
            print(PENDING_NOTE, file=sys.stderr)
        print(f"  {_chain_line(out)}")
    return 0


PENDING_NOTE = ("  old copies may remain in free pages until `ctxproxy forget finish` runs with the store to "
                "itself (or the proxy restarts)")


def _counts(counts: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "nothing"


def _chain_line(receipt: dict) -> str:
    return (f"receipt #{receipt['seq']} hash {receipt['hash'][:16]}… "
            f"prev {receipt['prev_hash'][:16] + '…' if receipt['prev_hash'] else '(first)'}")


def _when(ts: Any) -> str:
    from datetime import datetime, timezone

    if not isinstance(ts, (int, float)):
        return "-"
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _print_check(out: dict) -> None:
    """``forget show`` for a person: the receipt, then whether anything of the subject remains."""
    r = out["receipt"]
    digest = r.get("subject_digest") or r.get("session_digest") or ""
    print(f"erasure {r['request_id']} (tenant {r['tenant']}): {r['status']}")
    print(f"  subject:   {r.get('subject_kind') or '-'} sha256:{digest[:16]}… (the receipt keeps only a digest)")
    print(f"  erased:    {_counts(r['counts'])}")
    print(f"  requested: {_when(r.get('created_at'))}; erased from free pages: {_when(r.get('erased_at'))}")
    print(f"  chain:     {_chain_line(r)}")
    left = {k: n for k, n in out["remaining"].items() if n}
    if out["clean"]:
        print("  check:     clean — nothing of the subject remains in the store or its indexes")
    else:
        print(f"  check:     NOT CLEAN — still there: {_counts(left)}")
    if r["status"] == "pending":
        print(PENDING_NOTE, file=sys.stderr)


def _show(args: argparse.Namespace) -> int:
    from ctxproxy.store import forget as forgetting

    rid = args.request_id_arg or args.request_id
    if not rid:
        raise CLIError("forget show REQUEST_ID", 2)
    out = ask(args, "GET", f"forget/{urllib.parse.quote(rid, safe='')}", {"tenant": args.tenant},
              lambda cs: forgetting.check(cs.store, cs.tenant, rid))
    if out is None:
        raise CLIError(f"no erasure receipt {rid!r}", 3)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print_check(out)
    return 0 if out["clean"] else 1


def _load_chain(args: argparse.Namespace) -> list[dict]:
    from ctxproxy.store import forget as forgetting

    if args.file:
        try:
            with open(args.file, encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except (OSError, ValueError) as exc:
            raise CLIError(f"cannot read receipts from {args.file}: {exc}") from None
    with cli_store(args) as cs:
        return [r.to_dict() for r in forgetting.receipts(cs.store, cs.tenant)]


def _verify(args: argparse.Namespace) -> int:
    from ctxproxy.store.forget import verify_chain

    chain = _load_chain(args)
    problems = verify_chain(chain)
    if args.json:
        print(json.dumps({"receipts": len(chain), "problems": problems}, indent=2))
    else:
        for p in problems:
            print(p)
        print(f"{len(chain)} receipt(s): " + ("chain intact" if not problems else f"{len(problems)} problem(s)"))
    return 0 if not problems else 1


def _export(args: argparse.Namespace) -> int:
    if not args.file:
        raise CLIError("forget export --file RECEIPTS.jsonl", 2)
    args_file, args.file = args.file, None
    chain = _load_chain(args)
    with open(args_file, "w", encoding="utf-8") as f:
        for d in chain:
            f.write(json.dumps(d, sort_keys=True) + "\n")
    print(f"wrote {len(chain)} receipt(s) to {args_file}")
    return 0


def _finish(args: argparse.Namespace) -> int:
    from ctxproxy.store.forget import finish_erasure

    with cli_store(args) as cs:
        pending = cs.store.pending_receipts()
        done = finish_erasure(cs.store, operator=True)
    if not done:
        raise CLIError(f"{len(pending)} erasure(s) still pending: another process (a running proxy?) has the "
                       "store open; stop it and run this again", 4)
    print(f"erased on disk: {len(pending)} receipt(s) finished")
    return 0
