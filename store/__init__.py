"""ctxproxy.store — persistence behind small interfaces; LMDB is the embedded default.

::

    store = open_store(data_dir)          # in each worker, after fork
    rec = store.effects.put_pending("acme", key=k, call_id="toolu_1", tool="Bash",
                                    args_canonical='{"command":"gh pr create"}',
                                    session="s1", task="t1", side_effect=True)
    with store.batch() as b:              # one transaction, committed before the turn goes on
        b.effects.complete("acme", k, "toolu_1", refs=["PR #4821"])
        b.sessions.update("acme", "s1", {"seen": [...]})
    store.close()

Every method takes the tenant first; keys are tenant-prefixed so no scan
crosses tenants (``keys``). A method returns after its write is committed and
synced. Errors are ``StoreError``; no backend type leaves this package.
The interfaces are in ``interfaces``, the values in ``records``; the LMDB
implementation is ``lmdb_store`` over ``lmdb_env``.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from .errors import EffectStateError, ExternalIdTaken, RevisionConflict, StoreError, StoreUnavailable, WriteNeeded
from .interfaces import (Batch, DocumentStore, EffectLedger, LearningStore, ProxyKeyStore, SessionStore, Store,
                         TermIndex)
from .proxy_keys import KEY_PREFIX, Principal, ProxyKey, split_key
from .lmdb_store import (
    DEFAULT_MAP_SIZE,
    DEFAULT_MAX_MAP_SIZE,
    DEFAULT_PENDING_TIMEOUT,
    MIGRATIONS,
    REF_POINTERS,
    SCHEMA_VERSION,
    TURN_POINTERS,
    LMDBStore,
    MigrationContext,
)
from .memory_records import MemoryRecord, new_memory_id
from .records import (
    COMPLETED,
    EFFECT_STATES,
    FAILED,
    OPEN_STATES,
    PENDING,
    RESOLUTIONS,
    RESOLVED,
    SETTLED_STATES,
    UNKNOWN,
    UNPOINTED_TENANT,
    DeletionReceipt,
    EffectRecord,
    StoredDoc,
    StoreStats,
)


def open_store(
    path: str | Path,
    *,
    map_size: int = DEFAULT_MAP_SIZE,
    max_map_size: int = DEFAULT_MAX_MAP_SIZE,
    readonly: bool = False,
    pending_timeout: float | None = DEFAULT_PENDING_TIMEOUT,
    max_readers: int = 126,
    clock: Callable[[], float] = time.time,
) -> Store:
    """Open (creating if needed) the store in directory ``path``.

    ``map_size`` is the initial LMDB map; a full map doubles up to
    ``max_map_size``. ``pending_timeout`` (seconds, ``None`` = never) is how
    long an effect may stay pending before it reads as ``unknown``.

    Call it in each worker process after fork, never before: an open store
    must not cross ``fork()``. Several processes may open the same directory;
    opening it twice in one process shares one environment.
    """
    store = LMDBStore.open(str(path), map_size=map_size, max_map_size=max_map_size,
                           readonly=readonly, pending_timeout=pending_timeout,
                           max_readers=max_readers, clock=clock)
    if not readonly:
        attach_recall_indexes(store, Path(path).parent)
        attach_learning(store)
    return store


def attach_learning(store: Store) -> None:
    """Register learning's part of forgetting on ``store.derived``: what the
    learning job derived from an erased session or user goes with it."""
    from .learned import attach

    attach(store)


def open_configured(store_config: Any, data_dir: str | Path, *, listen: bool = True) -> Store:
    """The store ``[store]`` names: LMDB in ``<data_dir>/store`` (the default), or
    the PostgreSQL database of ``dsn`` (``backend = "postgres"``; its schema must
    be the one this ctxproxy knows: ``ctxproxy store upgrade``). ``listen``:
    follow the other replicas' revocations (a long-running process)."""
    st = store_config
    if st.backend == "postgres":
        from .postgres import PGStore

        return PGStore.open(st.database_url(), pending_timeout=st.pending_timeout, pool_size=st.pool_size,
                            listen=listen, listen_dsn=st.listen_dsn or None)
    return open_store(str(Path(data_dir) / "store"), map_size=st.map_size_mb << 20,
                      max_map_size=st.max_map_size_mb << 20, pending_timeout=st.pending_timeout)


def attach_recall_indexes(store: Store, data_dir: Path) -> None:
    """Register recall's SQLite indexes (``<data_dir>/recall/``) on
    ``store.derived`` when they exist, so a forget run from any process —
    the proxy, the CLI — erases them too."""
    from .memory_index import MemoryIndex
    from .session_index import SessionIndex
    from .vector_index import VectorIndex

    folder = data_dir / "recall"
    if (folder / "memories.db").exists():
        MemoryIndex.open(data_dir, store)
    if (folder / "sessions.db").exists():
        SessionIndex.open(data_dir, store)
    if (folder / "vectors.db").exists():  # the embeddings extra's (forget needs neither the model nor numpy)
        VectorIndex.open(data_dir, store)


__all__ = [
    "open_store",
    "open_configured",
    "Store",
    "Batch",
    "EffectLedger",
    "SessionStore",
    "DocumentStore",
    "TermIndex",
    "ProxyKeyStore",
    "LearningStore",
    "ProxyKey",
    "Principal",
    "split_key",
    "KEY_PREFIX",
    "StoreError",
    "StoreUnavailable",
    "EffectStateError",
    "WriteNeeded",
    "RevisionConflict",
    "ExternalIdTaken",
    "MemoryRecord",
    "new_memory_id",
    "EffectRecord",
    "StoredDoc",
    "DeletionReceipt",
    "StoreStats",
    "MigrationContext",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "PENDING",
    "COMPLETED",
    "FAILED",
    "UNKNOWN",
    "RESOLVED",
    "EFFECT_STATES",
    "OPEN_STATES",
    "SETTLED_STATES",
    "RESOLUTIONS",
    "TURN_POINTERS",
    "UNPOINTED_TENANT",
    "REF_POINTERS",
]
