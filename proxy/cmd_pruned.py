"""``ctxproxy pruned show ID`` — print a pruned tool output's original.

Reads the store directly (LMDB is shared safely with a running proxy), so it
works whether the proxy is up or not.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("pruned", help="inspect pruned tool outputs (ctx://pruned/<id>)",
                              description="Inspect tool outputs the prune filter replaced by a stub.")
    sub = p.add_subparsers(dest="pruned_command", metavar="ACTION")
    show = sub.add_parser("show", help="print the original of a pruned tool output")
    show.add_argument("id", metavar="ID", help="the id, or the whole ctx://pruned/<id> reference")
    _common(show)
    show.add_argument("--json", action="store_true", help="print the record as JSON (with metadata)")
    show.set_defaults(func=_show)
    ls = sub.add_parser("list", help="list what a session had pruned")
    ls.add_argument("--session", required=True, help="session id")
    _common(ls)
    ls.set_defaults(func=_list)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", metavar="DIR", help="the proxy's data directory (default: from --config, "
                                                     "else ./.ctxproxy)")
    p.add_argument("--config", metavar="FILE", help="ctxproxy.toml the proxy runs with")
    p.add_argument("--tenant", help="tenant (default: filters.identify.default_tenant)")


def _open(args: argparse.Namespace):
    from ctxproxy.config import load_config
    from ctxproxy.store import StoreError, open_store

    cfg = load_config(args.config, data_dir=args.data_dir)
    path = Path(cfg.server.data_dir) / "store"
    if not path.is_dir():
        print(f"ctxproxy: no store at {path} (is --data-dir right?)", file=sys.stderr)
        return None, None
    tenant = args.tenant or (cfg.filters.get("identify") or {}).get("default_tenant", "default")
    try:
        return open_store(str(path)), tenant
    except StoreError as exc:
        print(f"ctxproxy: cannot open the store: {exc}", file=sys.stderr)
        return None, None


def _show(args: argparse.Namespace) -> int:
    from ctxproxy.filters.prune import REF_PREFIX

    from .admin_pruned import describe

    store, tenant = _open(args)
    if store is None:
        return 1
    try:
        pid = args.id[len(REF_PREFIX):] if args.id.startswith(REF_PREFIX) else args.id
        doc = store.pruned.get(tenant, pid)
        if doc is None:
            print(f"ctxproxy: no pruned output {pid!r} for tenant {tenant!r}", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(describe(doc), indent=2, ensure_ascii=False))
        else:
            d = describe(doc)
            print(f"# {d['ref']}  tool={d['tool'] or '?'}  call={d['call_id']}  session={d['session']}  "
                  f"tokens={d['tokens']}  chars={d['chars']}", file=sys.stderr)
            sys.stdout.write(d["content"])
            if d["content"] and not d["content"].endswith("\n"):
                sys.stdout.write("\n")
        return 0
    finally:
        store.close()


def _list(args: argparse.Namespace) -> int:
    from .admin_pruned import describe

    store, tenant = _open(args)
    if store is None:
        return 1
    try:
        docs = store.pruned.list(tenant, session=args.session)
        for doc in docs:
            d = describe(doc, content=False)
            print(f"{d['ref']}\t{d['tool'] or '?'}\t{d['tokens']} tokens\t{d['call_id']}")
        if not docs:
            print(f"(nothing pruned in session {args.session!r})", file=sys.stderr)
        return 0
    finally:
        store.close()
