"""Recall's services over a real LMDB store and SQLite index, for the tests of this folder."""
from __future__ import annotations

import pytest

from ctxproxy.store import open_store
from ctxproxy.store.services.recall.services import RecallServices


@pytest.fixture
def rs(tmp_path):
    """(store, services), closed after the test."""
    store = open_store(tmp_path / "store")
    services = RecallServices(tmp_path, store)
    yield store, services
    services.close()
    store.close()
