"""The embedded store's own tests, run again on the PostgreSQL backend: the
same interface, the same behaviour. Tests that are about LMDB itself (its
map, its files, reopening a directory) stay with LMDB."""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import test_memory_store  # noqa: E402
import test_store  # noqa: E402

from ctxproxy.store.postgres import PGStore  # noqa: E402

Clock = test_store.Clock


def _portable(module, skip: set[str]):
    """The module's tests that take the ``store`` fixture and nothing of LMDB's own."""
    out = {}
    for name, fn in vars(module).items():
        if not name.startswith("test_") or not callable(fn) or name in skip:
            continue
        params = inspect.signature(fn).parameters
        if "store" in params and "tmp_path" not in params:
            out[name] = fn
    return out


# about LMDB's environment, its encoding of keys or its files
_LMDB_ONLY = {"test_stats_and_schema", "test_long_and_odd_ids_are_hashed_into_keys", "test_record_tenant_is_checked",
              "test_corrupt_record_is_a_store_error", "test_compact_reopens", "test_schema_version_is_stored",
              "test_update_that_changes_nothing_commits_nothing", "test_batch_without_writes_commits_nothing"}

globals().update(_portable(test_store, _LMDB_ONLY))
globals().update({f"{name}_memories": fn for name, fn in _portable(test_memory_store, _LMDB_ONLY).items()})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(pg_dsn, clock):
    s = PGStore.open(pg_dsn, clock=clock, pending_timeout=600, listen=False)
    yield s
    s.close()
