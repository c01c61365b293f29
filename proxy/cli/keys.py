"""``ctxproxy keys create|list|revoke`` — proxy keys for ``[auth] mode = "keys"``.

Works on the data dir beside a running proxy (LMDB is shared): a key created
here is accepted by every worker at once, a revoked one refused on its next
request. The key itself is printed once, by ``create``; the store keeps its hash.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .options import CLIError, add_store_options, cli_store, nonempty


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("keys", help="create, list and revoke proxy keys (auth.mode = \"keys\")",
                              description="Proxy keys name a principal: tenant, optional user, allowed "
                                          "projects, purposes and routes, and whether it is a tenant admin.")
    sub = p.add_subparsers(dest="keys_command", metavar="ACTION")
    c = sub.add_parser("create", help="create a key; prints its id and the key, once")
    add_store_options(c, "the key's tenant (required)")
    c.add_argument("--user", type=nonempty, help="the user the key speaks for (default: none)")
    c.add_argument("--project", action="append", default=[], type=nonempty, metavar="P",
                   help="a project the key may name in X-Ctx-Project (repeat; default: any)")
    c.add_argument("--purpose", action="append", default=[], type=nonempty, metavar="X",
                   help="a purpose the key may name in X-Ctx-Purpose (repeat; default: any)")
    c.add_argument("--route", action="append", default=[], type=nonempty, metavar="R",
                   help="a route ([routes.<name>]) the key may use (repeat; default: every route)")
    c.add_argument("--admin", action="store_true", help="may use the admin API, for its tenant only")
    c.add_argument("--expires", type=float, metavar="DAYS", help="expire after DAYS days (default: never)")
    c.add_argument("--json", action="store_true", help='print {"id": ..., "key": ...} and the principal')
    c.set_defaults(func=_create)
    ls = sub.add_parser("list", help="keys and their principals (never a secret)")
    add_store_options(ls, "only this tenant's keys (default: every tenant)")
    ls.add_argument("--json", action="store_true", help="print a JSON list")
    ls.set_defaults(func=_list)
    rv = sub.add_parser("revoke", help="revoke a key by id (every worker refuses it on its next request)")
    rv.add_argument("id", metavar="ID", type=nonempty, help="the key id (from create or list)")
    add_store_options(rv, "only if the key is this tenant's")
    rv.add_argument("--json", action="store_true", help="print the revoked key as JSON")
    rv.set_defaults(func=_revoke)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _create(args: argparse.Namespace) -> int:
    from ctxproxy.config import load_config

    from ..auth import issue_key

    if not args.tenant:
        raise CLIError("keys create: --tenant is required", 2)
    cfg = load_config(args.config, data_dir=args.data_dir)
    (Path(cfg.server.data_dir) / "store").mkdir(parents=True, exist_ok=True)  # keys often come before the proxy
    with cli_store(args) as cs:
        try:
            created = issue_key(cs.store, cs.config, args.tenant, user=args.user or "", projects=args.project,
                                purposes=args.purpose, routes=args.route, admin=args.admin,
                                expires_days=args.expires)
        except ValueError as exc:
            raise CLIError(f"keys create: {exc}", 2) from None
    if args.json:
        print(json.dumps(created))
    else:
        print(f"id  {created['id']}\nkey {created['key']}")
        print("(the key is shown this once; the store keeps only its hash)", file=sys.stderr)
    return 0


def _when(ts: float | None) -> str:
    return "-" if ts is None else datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def _list(args: argparse.Namespace) -> int:
    with cli_store(args) as cs:
        now = time.time()
        listed = [k.to_dict(now) for k in cs.store.proxy_keys.list(args.tenant)]
    if args.json:
        print(json.dumps(listed))
        return 0
    if not listed:
        print("(no proxy keys)", file=sys.stderr)
        return 0
    print("\t".join(LIST_COLUMNS))  # tab-separated, like the rows: `cut -f` and `column -t` read both
    for k in listed:
        allowed = " ".join(f"{n}={','.join(k[n])}" for n in ("projects", "purposes", "routes") if k[n])
        print("\t".join([k["id"], k["tenant"], k["user"] or "-", "admin" if k["admin"] else "-", k["state"],
                         _when(k["expires_at"]), allowed or "-"]))
    return 0


LIST_COLUMNS = ("ID", "TENANT", "USER", "ADMIN", "STATE", "EXPIRES", "ALLOWED")


def _revoke(args: argparse.Namespace) -> int:
    with cli_store(args) as cs:
        revoked = cs.store.proxy_keys.revoke(args.id, args.tenant)
    if revoked is None:
        raise CLIError(f"keys revoke: no proxy key {args.id!r}")
    print(json.dumps(revoked.to_dict(time.time())) if args.json else f"revoked {revoked.id}")
    return 0
