"""The values the store hands out: frozen dataclasses, no backend types.

Effect states::

    pending ──result──▶ completed | failed        (first result wins; settled)
       │
       ├──mark_unknown / older than pending_timeout──▶ unknown
       │                                                  │
       └────────────────human resolve─────────────────────┴──▶ resolved
                                                   (resolution: completed |
                                                    failed | not_executed)

``unknown`` means the result was never seen (crash, abandoned turn, history
dropped before the result came back). It is derived when a record is read: a
record stored as ``pending`` whose ``created_at`` is older than the store's
``pending_timeout`` is returned with ``state="unknown"``. Nothing has to sweep
the store, every process agrees, and a crash cannot leave a stale ``pending``
behind. A filter that knows sooner (the session moved on without the result)
calls ``mark_unknown``, which stores it. A late result still completes an
unknown effect: it was seen after all. A pending effect is never reported as
completed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

PENDING = "pending"
COMPLETED = "completed"
FAILED = "failed"
UNKNOWN = "unknown"
RESOLVED = "resolved"
EFFECT_STATES = (PENDING, COMPLETED, FAILED, UNKNOWN, RESOLVED)
RESULT_STATES = (COMPLETED, FAILED)  # what a seen tool result settles an effect to
OPEN_STATES = (PENDING, UNKNOWN)  # states a result or a human can still settle
SETTLED_STATES = (COMPLETED, FAILED, RESOLVED)
RESOLUTIONS = ("completed", "failed", "not_executed")  # a human's verdict on an open effect

# Record kinds: one named database each (plus internal indexes).
EFFECTS = "effects"
SESSIONS = "sessions"
CHECKPOINTS = "checkpoints"
MANIFESTS = "manifests"
PRUNED = "pruned"
MEMORIES = "memories"
INDEX = "index"
RECEIPTS = "receipts"
DOC_KINDS = (CHECKPOINTS, MANIFESTS, PRUNED, RECEIPTS)
# Index tenants (a tenant name never starts with "#") holding id -> tenant pointers,
# ``{"tenant": t}``, filed under the session and subject of what they point at, so
# that a turn id or a pruned reference finds its tenant. Erasure removes them too.
TURN_POINTERS = "#turns"  # manifests: turn id -> tenant
# A turn of this tenant needs no pointer: a turn id without one is looked up here
# (one record fewer a turn where most turns are; pointers written before still read).
UNPOINTED_TENANT = "default"
REF_POINTERS = "#refs"  # pruned originals: pruned id -> tenant
DEFAULT_PENDING_TIMEOUT = 900.0  # seconds before a pending effect reads as unknown


@dataclass(frozen=True)
class EffectRecord:
    """One tool call and what became of it.

    Identity is ``(tenant, key, call_id)``: ``key`` is the idempotency key
    (same tool, same canonical arguments, same session or task), ``call_id``
    the provider's id for this occurrence. Two calls with one key are two
    records, and that is how a repeat is recognised (see ``by_key``).
    ``state`` is the effective state (see the module docstring).
    """

    tenant: str
    key: str
    call_id: str
    tool: str
    args_canonical: str  # compact JSON text, sorted keys
    side_effect: bool
    state: str
    created_at: float
    updated_at: float
    session: str | None = None
    task: str | None = None
    turn_id: str | None = None  # the turn whose response made the call
    result_turn_id: str | None = None  # the turn whose request carried the result
    result_digest: str | None = None
    result_size: int | None = None
    refs: tuple[str, ...] = ()  # external references found in the result (URLs, PR numbers, ids)
    excerpt: str | None = None
    resolution: str | None = None
    resolved_by: str | None = None
    note: str | None = None
    aliases: tuple[str, ...] = ()  # other forms of call_id it may come back as

    @classmethod
    def from_stored(cls, tenant: str, rec: Mapping[str, Any], now: float, pending_timeout: float | None
                    ) -> "EffectRecord":
        """The record as a backend stores it; ``state`` made effective (a pending
        record older than ``pending_timeout`` reads as unknown)."""
        state = rec["state"]
        if state == PENDING and pending_timeout is not None and now - rec["created_at"] >= pending_timeout:
            state = UNKNOWN
        return cls(
            tenant=tenant, key=rec["key"], call_id=rec["call_id"], tool=rec["tool"],
            args_canonical=rec["args_canonical"], side_effect=rec["side_effect"], state=state,
            created_at=rec["created_at"], updated_at=rec["updated_at"], session=rec.get("session"),
            task=rec.get("task"), turn_id=rec.get("turn_id"), result_turn_id=rec.get("result_turn_id"),
            result_digest=rec.get("result_digest"), result_size=rec.get("result_size"),
            refs=tuple(rec.get("refs") or ()), excerpt=rec.get("excerpt"), resolution=rec.get("resolution"),
            resolved_by=rec.get("resolved_by"), note=rec.get("note"), aliases=tuple(rec.get("aliases") or ()),
        )

    @property
    def settled(self) -> bool:
        return self.state in SETTLED_STATES

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (admin API, manifests)."""
        return {
            "tenant": self.tenant,
            "key": self.key,
            "call_id": self.call_id,
            "tool": self.tool,
            "args_canonical": self.args_canonical,
            "side_effect": self.side_effect,
            "state": self.state,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "session": self.session,
            "task": self.task,
            "turn_id": self.turn_id,
            "result_turn_id": self.result_turn_id,
            "result_digest": self.result_digest,
            "result_size": self.result_size,
            "refs": list(self.refs),
            "excerpt": self.excerpt,
            "resolution": self.resolution,
            "resolved_by": self.resolved_by,
            "note": self.note,
            "aliases": list(self.aliases),
        }


@dataclass(frozen=True)
class StoredDoc:
    """A checkpoint, manifest, pruned original, memory or receipt."""

    kind: str
    tenant: str
    id: str
    data: Mapping[str, Any]
    created_at: float
    updated_at: float
    session: str | None = None
    subject: str | None = None
    sessions: tuple[str, ...] = ()  # other sessions whose data it holds (erased with any of them)


@dataclass(frozen=True)
class DeletionReceipt:
    """What an erasure erased. Ids are kept only as sha256 digests, so the
    receipt itself does not keep the subject (``memory_ids`` are opaque
    random ids, kept so a later check can look for them).

    ``status``: ``pending`` while old copies may still sit in free pages of
    the files, ``erased`` once they were made unreadable. Sealed receipts of a
    tenant form a chain: ``seq``, ``prev_hash`` (the previous one's ``hash``)
    and ``hash`` (``receipt_hash`` of the receipt without it)."""

    request_id: str
    tenant: str
    counts: Mapping[str, int]
    created_at: float
    session_digest: str | None = None
    subject_digest: str | None = None
    replayed: bool = False  # True when this request id had already run
    subject_kind: str = ""  # user | session | memory | project
    memory_ids: tuple[str, ...] = ()
    status: str = "pending"
    completed_at: float | None = None
    erased_at: float | None = None
    seq: int = 0
    prev_hash: str = ""
    hash: str = ""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "tenant": self.tenant,
            "counts": dict(self.counts),
            "created_at": self.created_at,
            "session_digest": self.session_digest,
            "subject_digest": self.subject_digest,
            "subject_kind": self.subject_kind,
            "memory_ids": list(self.memory_ids),
            "status": self.status,
            "completed_at": self.completed_at,
            "erased_at": self.erased_at,
            "seq": self.seq,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], replayed: bool = False) -> "DeletionReceipt":
        return cls(request_id=d["request_id"], tenant=d["tenant"], counts=dict(d.get("counts") or {}),
                   created_at=d["created_at"], session_digest=d.get("session_digest"),
                   subject_digest=d.get("subject_digest"), replayed=replayed,
                   subject_kind=d.get("subject_kind", ""), memory_ids=tuple(d.get("memory_ids") or ()),
                   status=d.get("status", "pending"), completed_at=d.get("completed_at"),
                   erased_at=d.get("erased_at"), seq=int(d.get("seq") or 0), prev_hash=d.get("prev_hash", ""),
                   hash=d.get("hash", ""))


# What a receipt's hash covers: everything fixed when it was sealed (not its later
# ``status``/``erased_at``, which move from pending to erased after the copy is compacted).
_HASHED = ("request_id", "tenant", "counts", "created_at", "session_digest", "subject_digest", "subject_kind",
           "memory_ids", "completed_at", "seq", "prev_hash")


def receipt_hash(d: Mapping[str, Any]) -> str:
    import hashlib
    import json

    body = {k: d.get(k) for k in _HASHED}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class StoreStats:
    """Sizes for telemetry and benchmarks (whole environment, all tenants)."""

    map_size: int
    used_bytes: int
    entries: Mapping[str, int] = field(default_factory=dict)
