"""``ctxproxy effects list|get|resolve|key`` — the effect ledger from a shell.

By default the commands open the store in the data directory directly (LMDB
is shared safely with a running proxy); ``--url`` talks to a running proxy's
admin API instead (token from ``--token`` or ``$CTXPROXY_ADMIN_TOKEN``).

    ctxproxy effects list --session S [--state unknown] [--json]
    ctxproxy effects get KEY            (KEY: whole, or the 16 characters ``list`` prints)
    ctxproxy effects resolve KEY --resolution not_executed --note "checked: never ran"
    ctxproxy effects key --tool Bash --args '{"command": "gh pr create"}' --task T
    ctxproxy effects forget --session S | --subject U [--request-id R] [--dry-run]

``forget`` erases a session (or every session of a subject) from the store,
every kind of record, as ``Store.delete_subject`` does; it works on the data
directory only (the admin API has no erasure endpoint).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.parse
from contextlib import contextmanager
from typing import Any, Iterator

from .options import CLIError, add_remote_options, add_store_options, admin_call, admin_failure, cli_store, default_tenant_of, nonempty


KEY_HELP = ("the idempotency key (sha256 hex), or the first characters of it as `effects list` prints them "
            "(at least 8; they must begin one key only)")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("effects", help="inspect and resolve the tool-effect ledger",
                              description="List, get and resolve recorded tool effects (idempotency ledger).")
    sub = p.add_subparsers(dest="effects_command", metavar="ACTION")

    def local(sp: argparse.ArgumentParser) -> None:
        add_store_options(sp, tenant_help="tenant id (default: filters.identify.default_tenant of --config, "
                                          "else default; with --url, the proxy's)")
        sp.add_argument("--json", action="store_true", help="print JSON")

    def common(sp: argparse.ArgumentParser) -> None:
        local(sp)
        add_remote_options(sp)

    ls = sub.add_parser("list", help="effects of a session or task, oldest first")
    common(ls)
    ls.add_argument("--session", type=nonempty, help="only this session")
    ls.add_argument("--task", type=nonempty, help="only this task")
    ls.add_argument("--state", action="append", help="only this effective state (repeatable)")
    kind = ls.add_mutually_exclusive_group()
    kind.add_argument("--side-effects", dest="side_effect", action="store_const", const=True,
                      help="only side-effecting calls")
    kind.add_argument("--read-only", dest="side_effect", action="store_const", const=False,
                      help="only read-only calls")
    ls.set_defaults(func=_list)

    g = sub.add_parser("get", help="every occurrence of an idempotency key")
    common(g)
    g.add_argument("key", type=nonempty, help=KEY_HELP)
    g.set_defaults(func=_get)

    r = sub.add_parser("resolve", help="settle a pending/unknown effect by human arbitration")
    common(r)
    r.add_argument("key", type=nonempty, help=KEY_HELP)
    r.add_argument("--resolution", required=True, choices=("completed", "failed", "not_executed"))
    r.add_argument("--call-id", type=nonempty, help="only this occurrence")
    r.add_argument("--note", help="why (kept with the record)")
    r.add_argument("--by", default=os.environ.get("USER") or "cli", type=nonempty, help="who resolved it")
    r.set_defaults(func=_resolve)

    k = sub.add_parser("key", help="compute the idempotency key of a tool call",
                       description="Print sha256(tenant, task, tool, canonical arguments), the key the ledger "
                                   "files the call under. Opens no store.")
    add_store_options(k, store=False)
    k.add_argument("--tool", required=True, type=nonempty, help="the tool's name as the model calls it")
    k.add_argument("--args", default="{}", help="the call's arguments as JSON (default {})")
    scope = k.add_mutually_exclusive_group(required=True)
    scope.add_argument("--task", type=nonempty, help="the task (keys are per task by default)")
    scope.add_argument("--session", type=nonempty, help="the session (its task when none was named)")
    k.set_defaults(func=_key)

    fg = sub.add_parser("forget", help="alias of `ctxproxy forget` (--subject is --user)",
                        description="Erase a session (or everything of a user) from every layer of the store, "
                                    "as `ctxproxy forget` does; prints the receipt.")
    local(fg)
    who = fg.add_mutually_exclusive_group(required=True)
    who.add_argument("--session", type=nonempty, help="the session to erase")
    who.add_argument("--subject", type=nonempty, help="the user id (X-Ctx-User) whose sessions and documents to erase")
    fg.add_argument("--request-id", type=nonempty, help="id of this erasure: running it again prints its receipt again")
    fg.add_argument("--dry-run", action="store_true", help="only count what would be erased")
    fg.set_defaults(func=_forget)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


# -- backends --------------------------------------------------------------------


@contextmanager
def _open(args: argparse.Namespace) -> Iterator[Any]:
    """The store; ``args.tenant`` defaults to the config's default tenant, as the proxy's."""
    with cli_store(args) as cs:
        args.tenant = cs.tenant
        yield cs.store


# -- commands ----------------------------------------------------------------------


def _run(fn: Any, args: argparse.Namespace) -> int:
    try:
        return fn(args)
    except CLIError as exc:
        print(f"ctxproxy effects: {exc}", file=sys.stderr)
        return exc.code


def _list(args: argparse.Namespace) -> int:
    def go(args: argparse.Namespace) -> int:
        if args.url:
            status, payload = admin_call(args, "GET", "effects", {
                "tenant": args.tenant, "session": args.session, "task": args.task, "state": args.state,
                "side_effect": None if args.side_effect is None else str(args.side_effect).lower()})
            if status != 200:
                raise admin_failure(status, payload)
            records = payload["effects"]
        else:
            from ctxproxy.store import StoreError

            with _open(args) as store:
                try:
                    records = [r.to_dict() for r in store.effects.list(
                        args.tenant, session=args.session, task=args.task, state=args.state,
                        side_effect=args.side_effect)]
                except StoreError as exc:
                    raise CLIError(str(exc)) from None
        if args.json:
            print(json.dumps(records, indent=2, ensure_ascii=False))
        else:
            _table(records)
        return 0

    return _run(go, args)


def _get(args: argparse.Namespace) -> int:
    def go(args: argparse.Namespace) -> int:
        if args.url:
            status, payload = admin_call(args, "GET", f"effects/{urllib.parse.quote(args.key, safe='')}",
                                     {"tenant": args.tenant})
            if status != 200:
                raise _key_failure(status, payload)
        else:
            from ctxproxy.store.lookups import key_answer

            with _open(args) as store:
                args.key = _full_key(store, args)
                records = store.effects.by_key(args.tenant, args.key)
            if not records:
                raise CLIError(f"no effect with key {args.key} for tenant {args.tenant}", 3)
            payload = key_answer(args.tenant, args.key, records)
        if args.json:
            print(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            print(f"key {payload['key']}: {payload['status']}")
            _table(payload["records"])
        return 0

    return _run(go, args)


def _resolve(args: argparse.Namespace) -> int:
    def go(args: argparse.Namespace) -> int:
        if args.url:
            status, payload = admin_call(args, "POST", f"effects/{urllib.parse.quote(args.key, safe='')}/resolve",
                                     body={"tenant": args.tenant, "resolution": args.resolution,
                                           "call_id": args.call_id, "note": args.note, "by": args.by})
            if status != 200:
                raise _key_failure(status, payload)
            resolved = payload["resolved"]
        else:
            from ctxproxy.store import EffectStateError, StoreError

            with _open(args) as store:
                args.key = _full_key(store, args)
                try:
                    resolved = [r.to_dict() for r in store.effects.resolve(
                        args.tenant, args.key, resolution=args.resolution, call_id=args.call_id,
                        note=args.note, by=args.by)]
                except EffectStateError as exc:
                    raise CLIError(str(exc), 4) from None
                except StoreError as exc:
                    raise CLIError(str(exc)) from None
            if not resolved:
                raise CLIError(f"no effect with key {args.key} for tenant {args.tenant}", 3)
        if args.json:
            print(json.dumps(resolved, indent=2, ensure_ascii=False))
        else:
            print(f"resolved {len(resolved)} record(s) of {args.key} as {args.resolution}")
        return 0

    return _run(go, args)


def _full_key(store: Any, args: argparse.Namespace) -> str:
    """The key ``args.key`` names: whole, or a unique prefix (what ``list`` prints)."""
    from ctxproxy.store.lookups import KeyPrefixError, full_key

    try:
        return full_key(store.effects, args.tenant, args.key)
    except KeyPrefixError as exc:
        raise CLIError(str(exc), 2) from None


def _key_failure(status: int, payload: Any) -> CLIError:
    """``admin_failure``, and exit 2 for an ambiguous key prefix, as without ``--url``."""
    failure = admin_failure(status, payload)
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and error.get("type") == "ambiguous_key":
        failure.code = 2
    return failure


def _forget(args: argparse.Namespace) -> int:
    """``effects forget`` is an alias of the top-level ``forget`` (``--subject`` = ``--user``)."""
    from .forget import run_forget

    args.user, args.memory, args.project, args.url = args.subject, None, None, None
    return run_forget(args)


def _key(args: argparse.Namespace) -> int:
    from ctxproxy.filters.effects.rules import canonical_json, effect_key

    args.tenant = default_tenant_of(args)
    try:
        value = json.loads(args.args)
    except ValueError as exc:
        print(f"ctxproxy effects: --args is not JSON: {exc}", file=sys.stderr)
        return 2
    print(effect_key(args.tenant, args.task or args.session, args.tool, canonical_json(value)))
    return 0


def _table(records: list[dict]) -> None:
    if not records:
        print("(no effects)")
        return
    for r in records:
        refs = ", ".join(r.get("refs") or ())
        args = r.get("args_canonical") or ""
        if len(args) > 60:
            args = args[:59] + "…"
        print(f"{r['state']:<9} {r['key'][:16]}  {r['call_id'][:28]:<28} {r['tool']:<14} {args}"
              + (f"  refs: {refs}" if refs else ""))
