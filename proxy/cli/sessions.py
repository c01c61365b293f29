"""``ctxproxy sessions``: search the session index (each turn's redacted text), on the data dir or ``--url``.

    ctxproxy sessions search QUERY (--session S | --user U) [--limit N] [--json]
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import add_remote_options, add_store_options, command, nonempty
from .recall import answer, print_ranked


def register(subparsers: Any) -> None:
    sub = command(subparsers, "sessions", "search the session index (each turn's redacted text)",
                  "Search earlier turns: a session's tree, or a user's sessions.")
    s = sub.add_parser("search", help="turns matching QUERY, best first")
    add_store_options(s)
    add_remote_options(s)
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("query", help="the query text")
    who = s.add_mutually_exclusive_group(required=True)
    who.add_argument("--session", type=nonempty, help="search this session's tree")
    who.add_argument("--user", type=nonempty, help="search every session of this user")
    s.add_argument("--limit", type=int, default=20)
    s.set_defaults(func=_search)


def _search(args: argparse.Namespace) -> int:
    from ctxproxy.store.services.recall.queries import session_hits

    query = {"tenant": args.tenant, "q": args.query, "session": args.session, "user": args.user,
             "limit": args.limit}
    out = answer(args, ("GET", "sessions/search", query, None),
                 lambda cs, rs: session_hits(rs, cs.tenant, args.query, session=args.session or "",
                                             user=args.user or "", limit=args.limit))
    print_ranked(args, out["hits"], out, "(no turns found)", "text",
                 lambda h: f"{h['session']}  {h['turn_id']}  {h['role']}")
    sys.stdout.flush()
    return 0
