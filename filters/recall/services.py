"""The recall indexes of one store, opened once per process and shared.

The filter (every route's pipeline), ``POST /ctx/v1/recall`` and the
session search all use the same two SQLite indexes beside the store; they
are opened on first use, registered on ``store.derived`` (so ``forget``
reaches them), and kept in the services mapping under ``"recall"``.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Mapping

from ctxproxy.store.memory_index import MemoryIndex
from ctxproxy.store.session_index import SessionIndex

from .rank import RankConfig
from .recaller import Recaller

KEY = "recall"
_lock = threading.Lock()


class RecallServices:
    def __init__(self, data_dir: str | Path, store: Any):
        self.memories = MemoryIndex.open(data_dir, store)
        self.sessions = SessionIndex.open(data_dir, store)
        self._recallers: dict[RankConfig, Recaller] = {}

    def recaller(self, config: RankConfig | None = None) -> Recaller:
        config = config or RankConfig()
        r = self._recallers.get(config)
        if r is None:
            r = self._recallers[config] = Recaller(self.memories, self.sessions, config)
        return r

    def close(self) -> None:
        self.memories.close()
        self.sessions.close()


def recall_services(services: Mapping[str, Any]) -> RecallServices | None:
    """The shared indexes (None without a store)."""
    rs = services.get(KEY)
    if rs is not None:
        return rs
    store = services.get("store")
    if store is None or not isinstance(services, dict):
        return None
    data_dir = services.get("data_dir") or Path(getattr(store, "path", ".")).parent
    with _lock:
        rs = services.get(KEY)
        if rs is None:
            rs = services[KEY] = RecallServices(data_dir, store)
    return rs
