"""What the store-reading subcommands share: their options and opening the store.

A new subcommand that reads or writes the store (keys, memory, forget,
sessions...) uses the two pieces here and nothing else::

    def register(subparsers):
        p = subparsers.add_parser("memory", ...)
        add_store_options(p)                 # --data-dir, --config, --tenant
        p.set_defaults(func=_list)

    def _list(args) -> int:
        with cli_store(args) as cs:          # CLIError if there is no store
            for doc in cs.store.memory.list(cs.tenant): ...
        return 0

``ctxproxy``'s main prints a ``CLIError`` as one ``ctxproxy: <message>`` line
on stderr and exits with its code, so commands need not catch it. A command
that opens no store but needs the proxy's default tenant adds the options with
``store=False`` and calls ``default_tenant_of(args)``.
"""
from __future__ import annotations

import argparse
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

TENANT_HELP = "tenant id (default: filters.identify.default_tenant of --config, else default)"


class CLIError(Exception):
    """A message for stderr and an exit code."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def nonempty(value: str) -> str:
    """argparse ``type`` for ids (turn, session, tenant, key...): an empty or blank
    one is a usage error, never a store lookup."""
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value


def add_store_options(parser: argparse.ArgumentParser, tenant_help: str = TENANT_HELP,
                      store: bool = True) -> None:
    """``--tenant`` and ``--config`` and, with ``store``, ``--data-dir``: where a
    command finds the proxy's store and which tenant it is about. ``args.tenant``
    stays None when not given (a command may default it to something of its
    own, e.g. a turn's tenant); ``CLIStore.tenant`` applies the config's default."""
    parser.add_argument("--tenant", type=nonempty, help=tenant_help)
    if store:
        parser.add_argument("--data-dir", metavar="DIR", type=nonempty,
                            help="the proxy's data directory (default: from --config, else ./.ctxproxy)")
    add_config_option(parser)


def add_config_option(parser: argparse.ArgumentParser,
                      help: str = "ctxproxy.toml the proxy runs with (its server.data_dir, [store], default tenant)"
                      ) -> None:
    """``--config FILE``, for commands that read the proxy's configuration but open no store."""
    parser.add_argument("--config", metavar="FILE", help=help)


def default_tenant_of(args: argparse.Namespace) -> str:
    """``--tenant``, else the default tenant of ``--config``, else ``default``;
    for commands that open no store."""
    from ctxproxy.config import load_config

    from ctxproxy.filters.identify import default_tenant

    if args.tenant is not None:
        return args.tenant
    return default_tenant(load_config(args.config)) if getattr(args, "config", None) else "default"


@dataclass
class CLIStore:
    """An open store with the config it was found by."""

    store: Any
    config: Any
    given_tenant: str | None  # --tenant as given (None: not given)

    @property
    def default_tenant(self) -> str:
        from ctxproxy.filters.identify import default_tenant

        return default_tenant(self.config)

    @property
    def tenant(self) -> str:
        """``--tenant``, else the tenant identify gives unlabelled traffic."""
        return self.given_tenant or self.default_tenant


@contextmanager
def cli_store(args: argparse.Namespace) -> Iterator[CLIStore]:
    """The store of ``--data-dir`` / ``--config`` for the ``with`` block, then closed."""
    store, cfg = open_cli_store(args)
    try:
        yield CLIStore(store, cfg, getattr(args, "tenant", None))
    finally:
        store.close()


def open_cli_store(args: argparse.Namespace) -> tuple[Any, Any]:
    """(store, config) for ``--data-dir`` / ``--config``: the store ``[store]`` names,
    opened as the proxy opens it (the same pending timeout, or the CLI would call
    "pending" what the proxy reports as "unknown"). Read-write even to read: LMDB
    shares the environment safely with a running proxy."""
    from ctxproxy.config import load_config
    from ctxproxy.store import StoreError, open_configured

    cfg = load_config(getattr(args, "config", None), data_dir=getattr(args, "data_dir", None))
    path = Path(cfg.server.data_dir) / "store"
    if cfg.store.backend == "lmdb" and not path.is_dir():
        raise CLIError(f"no store at {path} (is --data-dir right?)")
    try:
        return open_configured(cfg.store, cfg.server.data_dir, listen=False), cfg
    except StoreError as exc:
        raise CLIError(f"cannot open the store: {exc}") from None


# -- a running proxy's admin API (--url / --token) ---------------------------------


def add_remote_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="use a running proxy's admin API at this base URL instead of the store")
    parser.add_argument("--token", help="admin token (default: $CTXPROXY_ADMIN_TOKEN)")


def admin_call(args: argparse.Namespace, method: str, path: str, query: dict | None = None,
               body: Any = None) -> tuple[int, Any]:
    """(status, JSON payload) of an admin API call to ``args.url``."""
    token = args.token or os.environ.get("CTXPROXY_ADMIN_TOKEN", "")
    url = args.url.rstrip("/") + "/ctx/v1/" + path
    q = {k: v for k, v in (query or {}).items() if v is not None}
    if q:
        url += "?" + urllib.parse.urlencode(q, doseq=True)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            payload = json.loads(exc.read() or b"null")
        except ValueError:
            payload = None
        return exc.code, payload
    except urllib.error.URLError as exc:
        raise CLIError(f"cannot reach {args.url}: {exc.reason}") from None
    except OSError as exc:  # timeouts, resets
        raise CLIError(f"no answer from {args.url}: {exc}") from None


def admin_failure(status: int, payload: Any) -> CLIError:
    msg = payload.get("error", {}).get("message") if isinstance(payload, dict) else None
    return CLIError(f"admin API answered {status}: {msg or payload}", 1 if status != 404 else 3)


def admin_answer(args: argparse.Namespace, method: str, path: str, query: dict | None = None, body: Any = None,
                 ok: int = 200, fail: Callable[[int, Any], CLIError] = admin_failure) -> Any:
    """The JSON payload of an admin API call answered ``ok``; any other status is
    ``fail(status, payload)``, raised."""
    status, payload = admin_call(args, method, path, query, body)
    if status != ok:
        raise fail(status, payload)
    return payload


def ask(args: argparse.Namespace, method: str, path: str, query: dict | None, local: Callable[[CLIStore], Any],
        body: Any = None, fail: Callable[[int, Any], CLIError] = admin_failure) -> Any:
    """What a command shows, from the admin API with ``--url`` (``admin_answer``),
    else ``local(cs)`` on the data dir: the same answer either way."""
    if getattr(args, "url", None):
        return admin_answer(args, method, path, query, body, fail=fail)
    with cli_store(args) as cs:
        return local(cs)


def print_answer(args: argparse.Namespace, payload: Any, text: str) -> None:
    """``payload`` as JSON with ``--json``, else ``text``."""
    print(json.dumps(payload, indent=2, ensure_ascii=False, default=str) if args.json else text)


@contextmanager
def gate_errors(missing: str) -> Iterator[None]:
    """The memory gate's errors as a command's: a bad field (exit 2), no such
    ``missing`` (3), a stale revision or wrong state (4)."""
    from ctxproxy.store.errors import RevisionConflict
    from ctxproxy.store.services.memory.fields import FieldError
    from ctxproxy.store.services.memory.gate import NotFound, StateError

    try:
        yield
    except FieldError as exc:
        raise CLIError(str(exc), 2) from None
    except NotFound:
        raise CLIError(f"no {missing}", 3) from None
    except (StateError, RevisionConflict) as exc:
        raise CLIError(str(exc), 4) from None


def gate_answer(out: Any) -> dict:
    """A gate outcome's answer; a refusal is exit 5, saying why."""
    if isinstance(out, dict):
        return out
    if out.refused is not None:
        raise CLIError(f"refused ({out.refused.reason}): {out.refused.message}", 5)
    return out.answer()


def command(subparsers: Any, name: str, help: str, description: str | None = None) -> Any:
    """``ctxproxy <name> ACTION``: the subparsers its actions are added to;
    without an action it prints its help (exit 2)."""
    p = subparsers.add_parser(name, help=help, description=description or help)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
    return p.add_subparsers(dest=f"{name}_command", metavar="ACTION")
