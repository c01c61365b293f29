"""The ``ctxproxy`` command line."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import importlib

from ctxproxy.config import ConfigError, default_config_text, load_config

from ..version import version
from .options import CLIError, nonempty

# Modules that add subcommands: each has ``register(subparsers)``; the parser it
# adds sets ``func(args) -> int`` via ``set_defaults``.
COMMAND_MODULES: tuple[str, ...] = ("ctxproxy.proxy.cli.pruned", "ctxproxy.proxy.cli.manifest",
                                    "ctxproxy.proxy.cli.effects", "ctxproxy.proxy.cli.memory",
                                    "ctxproxy.proxy.cli.forget", "ctxproxy.proxy.cli.sessions", "ctxproxy.proxy.cli.demo",
                                    "ctxproxy.proxy.cli.keys", "ctxproxy.proxy.cli.mitm", "ctxproxy.proxy.cli.eval",
                                    "ctxproxy.proxy.cli.learn",
                                    "ctxproxy.proxy.cli.store_admin")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxproxy",
        description="Sidecar proxy for AI agents: point an agent's base URL at it. "
                    "It filters every model call (identity, redaction, tool-effect ledger, context) "
                    "and forwards it to the provider.")
    p.add_argument("--version", action="version", version=f"ctxproxy {version()}",
                   help="print the installed ctxproxy's version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("serve", help="run the proxy (defaults: 127.0.0.1:8788, data in ./.ctxproxy)",
                       description="Run the proxy. Flags override the config file for quick use.")
    s.add_argument("--config", metavar="FILE", help="ctxproxy.toml to use (default: the embedded defaults)")
    s.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, help="port to listen on (default 8788)")
    s.add_argument("--workers", type=int, help="processes sharing the port (SO_REUSEPORT; default 1)")
    s.add_argument("--data-dir", metavar="DIR", type=nonempty,
                   help="where the store and caches live (default ./.ctxproxy)")
    s.add_argument("--anthropic-upstream", metavar="URL",
                   help="Anthropic base URL, with or without /v1 (default https://api.anthropic.com)")
    s.add_argument("--openai-upstream", metavar="URL",
                   help="OpenAI base URL, with or without /v1 (default https://api.openai.com)")
    s.add_argument("--shutdown-timeout", type=float, metavar="SECONDS",
                   help="on SIGTERM/SIGINT, how long requests in flight may finish before they are cut "
                        "(default 5; server.shutdown_timeout)")
    s.add_argument("--log-level", default="INFO", type=_log_level, help="DEBUG, INFO, WARNING or ERROR (default INFO)")

    c = sub.add_parser("config", help="check or print configuration")
    csub = c.add_subparsers(dest="config_command", metavar="ACTION")
    chk = csub.add_parser("check", help="validate a config file without serving (exit 2 if invalid)")
    chk.add_argument("file", metavar="FILE", help="the ctxproxy.toml to check")
    csub.add_parser("default", help="print the embedded default ctxproxy.toml")
    c.set_defaults(func=lambda args: (c.print_help(), 2)[1])
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return p


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(LOG_LEVELS)}, got {value!r}")
    return level


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `ctxproxy manifest show ... | head` left early: no traceback
        try:  # what is still buffered goes nowhere, rather than failing again at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1


def _main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "config":
            return _config(args, parser)
        if getattr(args, "func", None) is not None:
            return args.func(args)
    except ConfigError as exc:
        print(f"ctxproxy: config error: {exc}", file=sys.stderr)
        return 2
    except CLIError as exc:  # a subcommand's own refusal: one line, its exit code
        print(f"ctxproxy: {exc}", file=sys.stderr)
        return exc.code
    except Exception as exc:  # a store refusal (an id it cannot file, a full map...) is one line, too
        from ctxproxy.store import StoreError

        if not isinstance(exc, StoreError):
            raise
        print(f"ctxproxy: store error: {exc}", file=sys.stderr)
        return 1
    parser.print_help()
    return 2


def _serve(args: argparse.Namespace) -> int:
    from ..edge.server import LOG_FORMAT, ServeError, run  # heavy imports only when serving

    cfg = load_config(args.config, host=args.host, port=args.port, workers=args.workers, data_dir=args.data_dir,
                      shutdown_timeout=args.shutdown_timeout,
                      anthropic_upstream=args.anthropic_upstream, openai_upstream=args.openai_upstream)
    _check_pipeline(cfg)
    data_dir = Path(cfg.server.data_dir)
    if data_dir.exists() and not data_dir.is_dir():
        print(f"ctxproxy: data directory {data_dir} exists and is not a directory (--data-dir / "
              f"server.data_dir)", file=sys.stderr)
        return 1
    logging.basicConfig(level=args.log_level, format=LOG_FORMAT)
    try:
        return run(cfg, args.log_level)
    except ServeError as exc:
        print(f"ctxproxy: {exc}", file=sys.stderr)
        return 1


def _check_pipeline(cfg, build: bool = False) -> None:
    """Filter names (each error with its key path), every filter's section, the
    routes; with ``build``, also construct each filter as ``serve`` would (rule
    files read and compiled, patterns checked) without a store, a socket or the
    data directory, so what only fails at start-up fails here."""
    from ctxproxy.filters import FILTERS, Services, build_pipeline, filter_configs
    from ..auth import provider_keys
    from ..routing import Router

    lists = [("pipeline.request", cfg.pipeline.request)]
    lists += [(f"routes.{rname}.filters", route.filters) for rname, route in cfg.routes.items() if route.filters]
    for path, names in lists:
        for i, name in enumerate(names):
            if name not in FILTERS:
                raise ConfigError(f"{path}[{i}]: unknown filter {name!r} (known: {', '.join(FILTERS)})")
        dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise ConfigError(f"{path}: filter {dup!r} is listed twice")
    configs = filter_configs(cfg)
    Router(cfg)
    provider_keys(cfg)  # [tenants.<t>] api_key_env: each variable set
    if not build:
        return
    services = Services(config=cfg, secret=b"\x00" * 32)  # what filters read at construction; no store
    names = dict.fromkeys(n for _, ns in lists for n in ns)
    logging.disable(logging.WARNING)  # "no store: ..." notes are about this check, not the config
    try:
        for name in names:
            try:
                pipeline = build_pipeline((name,), configs, services)
            except ConfigError:
                raise
            except Exception as exc:  # a filter that cannot be built is a config problem: name its section
                raise ConfigError(f"filters.{name}: {exc}") from None
            pipeline.close()
    finally:
        logging.disable(logging.NOTSET)


def _config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.config_command == "check":
        cfg = load_config(args.file)
        _check_pipeline(cfg, build=True)
        print(f"{args.file}: ok ({len(cfg.routes)} routes; pipeline: {', '.join(cfg.pipeline.request)})")
        return 0
    if args.config_command == "default":
        sys.stdout.write(default_config_text())
        return 0
    return args.func(args)  # no ACTION: its help, exit 2 (as the other commands)


if __name__ == "__main__":
    sys.exit(main())
