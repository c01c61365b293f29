"""How every backend stores a memory record: the record's compact bytes,
what a record must be to be written, which statuses are live, and the page
size of a tenant's listing. The embedded store and PostgreSQL write the
same bytes, so ``store migrate`` copies them as they are."""
from __future__ import annotations

from . import keys, surrogates
from .errors import StoreError
from .memory_records import KINDS, STATUSES, MemoryRecord

RECORD_VERSION = 2
LIVE = ("active", "proposed", "hypothesis")  # count against a scope's limits; duplicates are looked for among them
PAGE = 512  # records per read of a tenant's listing

_DEFAULTS = MemoryRecord(memory_id="", tenant="", statement="", kind="", origin="", status="").to_dict()
_ALWAYS = frozenset(("memory_id", "tenant", "statement", "kind", "origin", "status", "revision"))


def dump_record(rec: MemoryRecord) -> bytes:
    """The record without its default-valued fields (they are most of them)."""
    d = {k: v for k, v in rec.to_dict().items() if k in _ALWAYS or v != _DEFAULTS[k]}
    d["v"] = RECORD_VERSION
    return surrogates.dumps(d)


def validate_record(rec: MemoryRecord) -> None:
    """Refuse what no backend may store (a store error that says why)."""
    if not isinstance(rec, MemoryRecord):
        raise StoreError(f"memories.put takes a MemoryRecord, not {type(rec).__name__}")
    keys.tenant_prefix(rec.tenant)
    if not isinstance(rec.memory_id, str) or not rec.memory_id or keys.part(rec.memory_id) != rec.memory_id.encode():
        raise StoreError(f"memory id {rec.memory_id!r} must be short printable text not starting with '#'")
    if not isinstance(rec.statement, str) or not rec.statement.strip():
        raise StoreError("memory statement is empty")
    if rec.kind not in KINDS:
        raise StoreError(f"memory kind must be one of {KINDS}, not {rec.kind!r}")
    if rec.status not in STATUSES:
        raise StoreError(f"memory status must be one of {STATUSES}, not {rec.status!r}")
