"""Putting memory records straight into the store (no gate), for tests of what reads them."""
from __future__ import annotations

from ctxproxy.store.memory_records import MemoryRecord, new_memory_id


def put_memory(store, tenant: str, statement: str, **fields) -> MemoryRecord:
    values = {"kind": "preference", "origin": "user", "status": "active", **fields}
    values.setdefault("memory_id", new_memory_id())
    return store.memories.put(MemoryRecord(tenant=tenant, statement=statement, **values))
