"""``ctxproxy mitm`` — transparent mode: an HTTPS proxy that filters provider calls.

For agents that cannot be pointed at a base URL: set ``HTTPS_PROXY`` and trust
the CA instead (``--print-env`` says how). Only the providers' hosts are
decrypted; every other host passes through as TLS, untouched. Needs the
``mitm`` extra: ``pip install 'ctxproxy[mitm]'``.
"""
from __future__ import annotations

import argparse
import logging
import shlex
import sys

from .options import nonempty

MISSING = ("ctxproxy mitm needs mitmproxy, which the base install leaves out: "
           "pip install 'ctxproxy[mitm]'")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("mitm", help="transparent mode: an HTTPS proxy that runs the filters on provider calls "
                                           "(HTTPS_PROXY; see --print-env)",
                              description="Run mitmproxy with ctxproxy's addon: provider hosts from the config are "
                                          "decrypted and filtered as in `serve` (same store and telemetry); every "
                                          "other host is passed through as TLS, untouched.")
    p.add_argument("--listen-port", type=int, metavar="PORT", help="port to listen on (default 8789; mitm.port)")
    p.add_argument("--listen-host", metavar="HOST", help="address to listen on (default 127.0.0.1; mitm.host)")
    p.add_argument("--config", metavar="FILE", help="ctxproxy.toml to use (default: the embedded defaults)")
    p.add_argument("--data-dir", metavar="DIR", type=nonempty,
                   help="where the store, caches and the CA live (default ./.ctxproxy)")
    p.add_argument("--print-env", action="store_true",
                   help="create the CA if needed, print the environment an agent needs, and exit")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ctxproxy.config import load_config
    from ctxproxy.config.schema import replace_mitm

    cfg = replace_mitm(load_config(args.config, data_dir=args.data_dir), host=args.listen_host, port=args.listen_port)
    try:
        import mitmproxy  # noqa: F401
    except ImportError:
        print(f"ctxproxy: {MISSING}", file=sys.stderr)
        return 1
    from ..mitm.ca import agent_env, ensure_ca

    if args.print_env:
        ensure_ca(cfg)
        for name, value, who in agent_env(cfg):
            print(f"export {name}={shlex.quote(value)}  # {who}")
        return 0
    from .main import _check_pipeline, _log_level
    from ..edge.server import LOG_FORMAT, ServeError
    from ..event_loop import LoopUnavailable, run_on
    from ..mitm.server import serve_mitm

    level = _log_level(args.log_level)
    _check_pipeline(cfg)
    logging.basicConfig(level=level, format=LOG_FORMAT)
    if level != "DEBUG":  # one line per client connection otherwise
        logging.getLogger("mitmproxy").setLevel(logging.WARNING)
    try:
        run_on(cfg.server.loop, serve_mitm(cfg))
    except (ServeError, LoopUnavailable) as exc:
        print(f"ctxproxy: {exc}", file=sys.stderr)
        return 1
    return 0
