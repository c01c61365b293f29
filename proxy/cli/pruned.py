"""``ctxproxy pruned show ID`` — print a pruned tool output's original.

Reads the store directly (LMDB is shared safely with a running proxy), so it
works whether the proxy is up or not.
"""
from __future__ import annotations

import argparse
import json
import sys

from .options import add_store_options, cli_store, command, nonempty


def register(subparsers: argparse._SubParsersAction) -> None:
    sub = command(subparsers, "pruned", "inspect pruned tool outputs (ctx://pruned/<id>)",
                  "Inspect tool outputs the prune filter replaced by a stub.")
    show = sub.add_parser("show", help="print the original of a pruned tool output")
    show.add_argument("id", metavar="ID", type=nonempty, help="the id, or the whole ctx://pruned/<id> reference")
    add_store_options(show, tenant_help="tenant (default: the original's own)")
    show.add_argument("--json", action="store_true", help="print the record as JSON (with metadata)")
    show.set_defaults(func=_show)
    ls = sub.add_parser("list", help="list what a session had pruned")
    ls.add_argument("--session", required=True, type=nonempty, help="session id")
    add_store_options(ls)
    ls.set_defaults(func=_list)


def _show(args: argparse.Namespace) -> int:
    from ctxproxy.store.lookups import describe_pruned, find_pruned

    with cli_store(args) as cs:
        doc = find_pruned(cs.store, args.id, args.tenant, cs.default_tenant)
        if doc is None:
            where = f" for tenant {args.tenant!r}" if args.tenant else ""
            print(f"ctxproxy: no pruned output {args.id!r}{where}", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(describe_pruned(doc), indent=2, ensure_ascii=False))
        else:
            d = describe_pruned(doc)
            print(f"# {d['ref']}  tool={d['tool'] or '?'}  call={d['call_id']}  session={d['session']}  "
                  f"tokens={d['tokens']}  chars={d['chars']}", file=sys.stderr)
            sys.stdout.write(d["content"])
            if d["content"] and not d["content"].endswith("\n"):
                sys.stdout.write("\n")
        return 0


def _list(args: argparse.Namespace) -> int:
    from ctxproxy.store.lookups import describe_pruned

    with cli_store(args) as cs:
        docs = cs.store.pruned.list(cs.tenant, session=args.session)
        for doc in docs:
            d = describe_pruned(doc, content=False)
            print(f"{d['ref']}\t{d['tool'] or '?'}\t{d['tokens']} tokens\t{d['call_id']}")
        if not docs:
            print(f"(nothing pruned in session {args.session!r})", file=sys.stderr)
        return 0
