"""The learning store's tests, run again on the PostgreSQL backend, and the
lease contended by replicas (stores with pools of their own) at once."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_learning_store  # noqa: E402
from test_pg_contract import _portable  # noqa: E402

from ctxproxy.store.postgres import PGStore  # noqa: E402

globals().update(_portable(test_learning_store, set()))


@pytest.fixture
def clock():
    return test_learning_store.Clock()


@pytest.fixture
def store(pg_dsn, clock):
    s = PGStore.open(pg_dsn, clock=clock, listen=False)
    yield s
    s.close()


def test_one_lease_holder_among_replicas(pg_dsn):
    replicas = [PGStore.open(pg_dsn, listen=False, pool_size=2) for _ in range(4)]
    tenants = [f"t{n}" for n in range(6)]  # a round per tenant: a race lost once is enough to fail
    start, won = threading.Barrier(len(replicas)), {}

    def contend(i: int) -> None:
        for tenant in tenants:
            start.wait(30)
            won[tenant, i] = replicas[i].learning.take_lease(tenant, f"w{i}", 600) is not None

    try:
        threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(replicas))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(won) == len(tenants) * len(replicas)
        for tenant in tenants:
            holders = [i for i in range(len(replicas)) if won[tenant, i]]
            assert len(holders) == 1, (tenant, holders)
            assert replicas[0].learning.lease(tenant)["owner"] == f"w{holders[0]}"
            other = (holders[0] + 1) % len(replicas)
            assert not replicas[other].learning.renew_lease(tenant, f"w{other}", 600)
    finally:
        for r in replicas:
            r.close()


def test_learning_rows_are_the_tenants_own(store):
    store.learning.save_job("acme", {"watermark": 3})
    store.learning.note_extracted("acme", "s1", "alice")
    assert store.learning.tenants() == ["acme"]
    rows = store._pool.run(lambda tx: tx.tenant("other").all("SELECT tenant FROM learning"), readonly=True)
    assert rows == []  # row-level security: another tenant's transaction sees none of them
