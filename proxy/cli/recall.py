"""Recall from a shell: the same queries as the admin API, on the data dir or ``--url``.

    ctxproxy memory search QUERY [--user U] [--project P] [--session S] [--purpose P] [-k N] [--as-of T]
    ctxproxy memory reindex                      rebuild the recall index from the store

``memory`` adds these actions (``add_memory_actions``); ``sessions search``
(``sessions.py``) asks its queries through ``answer`` and prints with
``print_ranked``, as these do.
"""
from __future__ import annotations

import argparse
import json
from typing import Any, Callable

from .options import CLIError, ask, cli_store, nonempty


def add_memory_actions(sub: Any, common: Callable[..., None]) -> None:
    """``memory search`` and ``memory reindex`` (called by ``memory.register``)."""
    s = sub.add_parser("search", help="what recall would inject for a principal (ranked, visibility applied)")
    common(s)
    s.add_argument("query", help="the query text")
    for name in ("user", "project", "session", "purpose"):
        s.add_argument(f"--{name}", type=nonempty, help=f"the principal's {name}")
    s.add_argument("-k", type=int, default=8, help="results at most (default 8)")
    s.add_argument("--as-of", dest="as_of", help="decay counted from this time (epoch seconds or ISO 8601)")
    s.add_argument("--max-sensitivity", dest="max_sensitivity", choices=("public", "internal", "confidential"))
    s.set_defaults(func=_search)
    r = sub.add_parser("reindex", help="rebuild the recall index (SQLite FTS5) from the store")
    common(r, remote=False)
    r.set_defaults(func=_reindex)


def _services(cs: Any) -> Any:
    from pathlib import Path

    from ctxproxy.store.services.recall.services import RecallServices

    rs = RecallServices(Path(cs.config.server.data_dir), cs.store)
    rs.prepare(_rank(cs)[0], sync=True)  # the embeddings extra, when on: vectors caught up before answering
    return rs


def _rank(cs: Any) -> tuple[Any, tuple]:
    from ctxproxy.filters import filter_configs

    rc = filter_configs(cs.config).get("recall")
    return (rc.rank, tuple(rc.exclude_kinds)) if rc is not None else (None, ())


def answer(args: argparse.Namespace, remote: tuple, local: Callable[[Any, Any], dict]) -> dict:
    """The admin API's answer with ``--url``, else the same query on the data
    dir, over its recall indexes (``local(cs, indexes)``)."""
    from ctxproxy.store.services.recall.queries import QueryError

    def here(cs: Any) -> dict:
        rs = _services(cs)
        try:
            return local(cs, rs)
        except QueryError as exc:
            raise CLIError(str(exc), 2) from None
        finally:
            rs.close()

    method, path, query, body = remote
    return ask(args, method, path, query, here, body)


def _search(args: argparse.Namespace) -> int:
    from ctxproxy.store.services.recall.queries import recall_items

    body: dict[str, Any] = {"query": args.query, "k": args.k}
    for name in ("user", "project", "session", "purpose", "as_of", "max_sensitivity"):
        if getattr(args, name, None):
            body[name] = getattr(args, name)
    if args.as_of and args.as_of.replace(".", "", 1).isdigit():
        body["as_of"] = float(args.as_of)
    out = answer(args, ("POST", "recall", {"tenant": args.tenant}, body),
                 lambda cs, rs: recall_items(rs, cs.tenant, body, *_rank(cs)))
    print_ranked(args, out["items"], out, "(nothing recalled)", "statement",
                 lambda it: f"{it['memory_id']}  {it['kind']}/{it['scope']}  {it['observed_at'][:10]}")
    return 0


def _reindex(args: argparse.Namespace) -> int:
    with cli_store(args) as cs:
        rs = _services(cs)
        try:
            payload = rs.reindex()
        finally:
            rs.close()
    n = payload["indexed"]
    vectors = f", {payload['vectors']} embedded" if "vectors" in payload else ""
    print(json.dumps(payload) if args.json else f"recall index rebuilt: {n} servable memories indexed{vectors}")
    return 0


def print_ranked(args: argparse.Namespace, rows: list, out: dict, empty: str, text_key: str,
           columns: Callable[[dict], str]) -> None:
    """The answer as JSON (``--json``), else one line a row: score, ``columns``,
    then its text on one line, cut at 90 characters."""
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return
    if not rows:
        print(empty)
    for row in rows:
        text = " ".join(row[text_key].split())
        print(f"{row['score']:.3f}  {columns(row)}  {text if len(text) <= 90 else text[:89] + '…'}")
