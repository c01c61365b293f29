"""What the store-reading subcommands share: finding and opening the store."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


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


def open_cli_store(args: argparse.Namespace) -> tuple[Any, Any]:
    """(store, config) for ``--data-dir`` / ``--config``. Read-write even to read:
    LMDB shares the environment safely with a running proxy."""
    from ctxproxy.config import load_config
    from ctxproxy.store import StoreError, open_store

    cfg = load_config(getattr(args, "config", None), data_dir=getattr(args, "data_dir", None))
    path = Path(cfg.server.data_dir) / "store"
    if not path.is_dir():
        raise CLIError(f"no store at {path} (is --data-dir right?)")
    st = cfg.store  # opened as the proxy opens it (server.open_services): the same pending
    # timeout, or the CLI would call "pending" what the proxy reports as "unknown"
    try:
        return open_store(str(path), map_size=st.map_size_mb << 20, max_map_size=st.max_map_size_mb << 20,
                          pending_timeout=st.pending_timeout), cfg
    except StoreError as exc:
        raise CLIError(f"cannot open the store: {exc}") from None
