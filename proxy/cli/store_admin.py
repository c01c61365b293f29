"""``ctxproxy store``: the store's schema and moving between backends.

::

    ctxproxy store upgrade [--config FILE] [--dsn DSN] [--data-dir DIR]   apply the PostgreSQL schema migrations
    ctxproxy store status  [--config FILE] [--dsn DSN]     the schema version, and whether it is current
    ctxproxy store migrate --from lmdb --to postgres [--data-dir DIR] [--dsn DSN]   (or --from postgres --to lmdb)
"""
from __future__ import annotations

import argparse
import sys

from .options import CLIError, add_config_option, nonempty


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("store", help="the store's schema (PostgreSQL) and moving between backends",
                       description="Schema upgrades of the PostgreSQL store, and copying a store to another backend.")
    ssub = p.add_subparsers(dest="store_command", metavar="ACTION")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    up = ssub.add_parser("upgrade", help="apply the schema migrations the database lacks (run once per release, "
                                         "before the replicas of the new release start)",
                         description="Apply the schema migrations the database lacks. A host's own session index "
                                     "(<data-dir>/recall/sessions.db, kept per host before the database held it) "
                                     "is copied into the database too, leaving out what an erasure took; run it "
                                     "on each host that served turns.")
    up.add_argument("--data-dir", metavar="DIR", type=nonempty,
                    help="this host's data directory, whose session index is copied in (default: from --config, "
                         "else ./.ctxproxy)")
    _dsn_options(up)
    up.set_defaults(func=_upgrade)

    st = ssub.add_parser("status", help="the database's schema version and this ctxproxy's")
    _dsn_options(st)
    st.set_defaults(func=_status)

    mg = ssub.add_parser("migrate", help="copy every record to another backend, resumably, and verify the copy",
                         description="Copy every record of one store to another, verified by counts and sha256 "
                                     "digests per kind. Resumable: a second run skips what is there. Stop the "
                                     "proxies first.")
    mg.add_argument("--from", dest="source", required=True, choices=("lmdb", "postgres"), help="the store to read")
    mg.add_argument("--to", dest="target", required=True, choices=("lmdb", "postgres"), help="the store to fill")
    mg.add_argument("--data-dir", metavar="DIR", type=nonempty,
                    help="the LMDB side's data directory (default: from --config, else ./.ctxproxy)")
    mg.add_argument("--verify-only", action="store_true", help="compare the two stores without copying")
    _dsn_options(mg)
    mg.set_defaults(func=_migrate)


def _dsn_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dsn", help="the PostgreSQL database (default: [store] dsn of --config, else "
                                 "$CTXPROXY_DATABASE_URL, else libpq's PG* variables)")
    add_config_option(p)


def _config(args: argparse.Namespace):
    from ctxproxy.config import load_config

    return load_config(getattr(args, "config", None), data_dir=getattr(args, "data_dir", None))


def _dsn(args: argparse.Namespace) -> str:
    return args.dsn or _config(args).store.database_url()


def _upgrade(args: argparse.Namespace) -> int:
    from ctxproxy.store import StoreError
    from ctxproxy.store.postgres import SCHEMA_VERSION, upgrade

    try:
        applied = upgrade(_dsn(args))
    except StoreError as exc:
        raise CLIError(f"cannot upgrade the schema: {exc}") from None
    for name in applied:
        print(f"applied {name}")
    print(f"schema v{SCHEMA_VERSION}: {'upgraded' if applied else 'already current'}")
    _backfill_session_index(args)
    return 0


def _backfill_session_index(args: argparse.Namespace) -> None:
    """This host's embedded session index into the database, when it has one."""
    from ctxproxy.store import StoreError
    from ctxproxy.store.postgres import PGStore
    from ctxproxy.store.postgres.session_index import backfill, embedded_path

    data_dir = _config(args).server.data_dir
    if not embedded_path(data_dir).exists():
        return
    try:
        store = PGStore.open(_dsn(args), listen=False)
        try:
            copied = backfill(store, data_dir)
        finally:
            store.close()
    except StoreError as exc:
        raise CLIError(f"cannot copy the session index of {embedded_path(data_dir)}: {exc}") from None
    print(f"session index of {embedded_path(data_dir)}: " + ", ".join(f"{n} {kind} rows" for kind, n in
                                                                       copied.items()) +
          " copied (rows already there and rows an erasure took left out); once every host has run this, "
          "the file can be deleted")


def _status(args: argparse.Namespace) -> int:
    from ctxproxy.store import StoreError
    from ctxproxy.store.postgres import SCHEMA_VERSION, schema_version

    try:
        version = schema_version(_dsn(args))
    except StoreError as exc:
        raise CLIError(str(exc)) from None
    state = "current" if version == SCHEMA_VERSION else (
        "older: run `ctxproxy store upgrade`" if version < SCHEMA_VERSION else "newer than this ctxproxy")
    print(f"database schema v{version}, this ctxproxy v{SCHEMA_VERSION}: {state}")
    return 0 if version == SCHEMA_VERSION else 3


def _migrate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ctxproxy.store import StoreError, open_store
    from ctxproxy.store.postgres import PGStore
    from ctxproxy.store.postgres.migrate import migrate, migrate_back, verify

    if {args.source, args.target} != {"lmdb", "postgres"}:
        raise CLIError(f"--from {args.source} --to {args.target}: the two stores are LMDB and PostgreSQL, "
                       "one on each side", 2)
    cfg = _config(args)
    path = Path(cfg.server.data_dir) / "store"
    if args.source == "lmdb" and not path.is_dir():
        raise CLIError(f"no store at {path} (is --data-dir right?)")
    try:
        lmdb = open_store(str(path), pending_timeout=cfg.store.pending_timeout)
        pg = PGStore.open(_dsn(args), listen=False)
    except StoreError as exc:
        raise CLIError(f"cannot open the stores: {exc}") from None
    try:
        def progress(kind: str, n: int) -> None:
            print(f"\r{kind}: {n}", end="", file=sys.stderr, flush=True)

        if args.verify_only:
            result = verify(lmdb, pg)
        elif args.source == "lmdb":
            result = migrate(lmdb, pg, progress)
        else:
            result = migrate_back(pg, lmdb, progress)
        print(file=sys.stderr)
    finally:
        lmdb.close()
        pg.close()
    for kind, r in result.items():
        there, here = (r["source"], r["target"]) if args.source == "lmdb" else (r["target"], r["source"])
        print(f"{kind:12} {there:>8} -> {here:>8}  {'same' if r['same'] else 'DIFFERENT'}")
    if not all(r["same"] for r in result.values()):
        raise CLIError("the copy differs from the source (see above); run it again to resume", 3)
    print("verified: every kind has the same count and sha256 on both sides")
    return 0
