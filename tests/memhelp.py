"""Putting memory records straight into the store (no gate), for tests of what reads them."""
from __future__ import annotations

from ctxproxy.store.memory_records import MemoryRecord, new_memory_id


def put_memory(store, tenant: str, statement: str, **fields) -> MemoryRecord:
    values = {"kind": "preference", "origin": "user", "status": "active", **fields}
    values.setdefault("memory_id", new_memory_id())
    return store.memories.put(MemoryRecord(tenant=tenant, statement=statement, **values))


# Memories about nothing a test's turn asks: a background for recall's word statistics.
UNRELATED = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
             "Quarterly planning happens in the first week of each quarter.",
             "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
             "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.",
             "Standup is at 9:30 in the small meeting room.", "Invoices are generated on the first of the month.",
             "Episode audio is kept in the private R2 bucket wc-audio-prod.",
             "The RSS feed is served behind Fastly with a 5-minute TTL.")
