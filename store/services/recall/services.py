"""The recall indexes of one store, opened once per process and shared.

The filter (every route's pipeline), ``POST /ctx/v1/recall`` and the
session search all use the same two indexes, opened on first use and kept
on the proxy's services (``services.recall``): SQLite files beside the
store, registered on ``store.derived`` (so ``forget`` reaches them), except
the indexes of a PostgreSQL store, which are the database's own
(``store/postgres/recall_index.py``, ``store/postgres/session_index.py``). With
the embeddings extra on (``[filters.recall.rank] embeddings = true``), the
model and the vector index beside them are opened at start-up too
(``prepare``); without the extra that is a ``ConfigError``.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ctxproxy.config import ConfigError
from ctxproxy.store.memory_index import open_memory_index
from ctxproxy.store.session_index import open_session_index
from ctxproxy.store.vector_index import VectorIndex

from .hybrid import VectorRecall
from .rank import RankConfig
from .recaller import Recaller

_lock = threading.Lock()


class RecallServices:
    def __init__(self, data_dir: str | Path, store: Any):
        self.memories = open_memory_index(data_dir, store)
        self.sessions = open_session_index(data_dir, store)
        self.data_dir, self.store = data_dir, store
        self.vectors: VectorIndex | None = None  # opened by prepare() when a ranking asks for embeddings
        self._embedder = None
        self._recallers: dict[RankConfig, Recaller] = {}

    def prepare(self, config: RankConfig | None, sync: bool = False) -> None:
        """Open what ``config`` needs: with embeddings, the model and the vector
        index, caught up now (``sync``: the CLI) or in the background."""
        if config is None or not config.embeddings:
            return
        with _lock:
            if self.vectors is None:
                from .embeddings import EmbeddingsUnavailable, shared_embedder

                try:
                    self._embedder = shared_embedder()
                except EmbeddingsUnavailable as exc:
                    raise ConfigError(f"filters.recall.rank.embeddings: {exc}") from None
                vectors = VectorIndex.open(self.data_dir, self.store)
                vectors.use(self._embedder)
                self.vectors = vectors
        if sync:
            self.vectors.catch_up()
        else:
            self.vectors.kick()

    def warm(self, config: RankConfig | None = None) -> None:
        """At start-up: the memory index takes in what changed while no server
        ran (imports, edits, erasures by the CLI), which the first recall
        would do otherwise, and the ranking is set up."""
        self.memories.catch_up()
        self.recaller(config)

    def recaller(self, config: RankConfig | None = None) -> Recaller:
        config = config or RankConfig()
        r = self._recallers.get(config)
        if r is None:
            vectors = None
            if config.embeddings:
                self.prepare(config)
                vectors = VectorRecall(self.vectors, self.memories, self._embedder, config)
            r = self._recallers[config] = Recaller(self.memories, self.sessions, config, vectors)
        return r

    def reindex(self) -> dict[str, int]:
        """Rebuild the memory index, and the vector index when it is open."""
        out = {"indexed": self.memories.rebuild()}
        if self.vectors is not None:
            out["vectors"] = self.vectors.rebuild()
        return out

    def close(self) -> None:
        self.memories.close()
        self.sessions.close()
        if self.vectors is not None:
            self.vectors.close()


def recall_services(services: Any) -> RecallServices | None:
    """The shared indexes of ``services`` (the proxy's ``Services``: its
    ``store``, ``data_dir`` and ``recall`` fields), opened on first use; None
    without a store."""
    rs = getattr(services, "recall", None)
    if rs is not None:
        return rs
    store = getattr(services, "store", None)
    if store is None:
        return None
    data_dir = services.data_dir or Path(getattr(store, "path", ".")).parent
    with _lock:
        if services.recall is None:
            services.recall = RecallServices(data_dir, store)
    return services.recall
