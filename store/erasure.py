"""Erasure's rules, once for every backend: what one request erases (a
session, a user, a memory, a project), how a retried request replays its
receipt, which memories go, expire or lose an evidence session, and how a
receipt is sealed into the tenant's chain. The backends find and delete
the rows; these decide."""
from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Mapping

from .checks import check_str
from .errors import StoreError
from .records import (CHECKPOINTS, MANIFESTS, MEMORIES, PRUNED, REF_POINTERS, TURN_POINTERS, DeletionReceipt,
                      receipt_hash)

ERASABLE_DOC_KINDS = (CHECKPOINTS, MANIFESTS, PRUNED)  # receipts outlive what they record
POINTER_INDEXES = ((MANIFESTS, TURN_POINTERS), (PRUNED, REF_POINTERS))
# the parts of an erasure's plan and receipt besides the record kinds
POINTERS = "pointers"  # id -> tenant pointers (see ``records.TURN_POINTERS``)
MEMORIES_EXPIRED = "memories_expired"  # memories whose only evidence was an erased session
MEMORY_REVISIONS = "memory_revisions"
MEMORY_INDEX = "memory_index"
TRIM = "_trim"  # memories that lose one of several evidence sessions (not counted)
SNAPSHOTS = "snapshots"  # other sessions' frozen memory snapshots showing an erased memory
SNAPSHOT_REF = re.compile(rb"\(mem:([^,\s)]+), ")  # how the snapshot filter names a memory it shows


def digest(tenant: str, value: str | None) -> str | None:
    """How a receipt names what it erased (receipts keep no ids)."""
    if value is None:
        return None
    return hashlib.sha256(tenant.encode() + b"\x00" + value.encode("utf-8", "surrogatepass")).hexdigest()


class Request:
    """One erasure request: its subject (the first of session, user, memory,
    project given) and the digests its receipt carries."""

    def __init__(self, tenant: str, request_id: str, *, session: str | None, subject: str | None,
                 memory: str | None, project: str | None) -> None:
        for value, what in ((session, "session"), (subject, "subject"), (memory, "memory"), (project, "project")):
            check_str(value, what, optional=True)
        self.tenant, self.request_id = tenant, request_id
        self.session, self.subject, self.memory, self.project = session, subject, memory, project
        self.kind, value = next(((k, v) for k, v in (("session", session), ("user", subject), ("memory", memory),
                                                      ("project", project)) if v is not None), ("", None))
        self.session_digest = digest(tenant, session)
        self.subject_digest = digest(tenant, value if self.kind != "session" else subject)

    def replay(self, stored: Mapping[str, Any]) -> DeletionReceipt:
        """The stored receipt of this request id: a retry of the same erasure
        replays it; another erasure under a used id would otherwise "succeed"
        without erasing anything."""
        if (stored["session_digest"], stored["subject_digest"], stored.get("subject_kind", self.kind)) != (
                self.session_digest, self.subject_digest, self.kind):
            raise StoreError(f"request id {self.request_id!r} was already used for another erasure "
                             "(another subject); use a new request id")
        return DeletionReceipt.from_dict(stored, replayed=True)

    def receipt(self, counts: Mapping[str, int], now: float, memory_ids: Any) -> DeletionReceipt:
        return DeletionReceipt(request_id=self.request_id, tenant=self.tenant, counts=dict(counts), created_at=now,
                               session_digest=self.session_digest, subject_digest=self.subject_digest,
                               subject_kind=self.kind, memory_ids=tuple(sorted(memory_ids)), status="pending")


def pointers_of(docs: Callable[[str], Any], txn: Any, tenant: str,
                erased: Mapping[str, Mapping[Any, Mapping[str, Any]]]) -> list[tuple[str, str, dict[str, Any]]]:
    """The id -> tenant pointers of the documents an erasure removes, as
    ``(kind, index, pointer record)``: a turn's pointer is written beside its
    manifest, in the same write, without scope entries of its own (it names no
    session or subject), so it is found by its manifest's id; a pointer naming
    another tenant stays. ``docs(kind)``: the backend's ``DocumentRules`` of that
    kind; ``erased``: the plan's records by kind."""
    out = []
    for kind, index in POINTER_INDEXES:
        rules = docs(kind)
        for rec in erased[kind].values():
            pointer = rules._read_in(txn, index, rec["id"])
            data = pointer.get("data") if pointer is not None else None
            if isinstance(data, dict) and data.get("tenant") == tenant:
                out.append((kind, index, pointer))
    return out


def memory_plan(mem: Any, txn: Any, req: Request) -> tuple[dict, dict, dict]:
    """(memories to erase, to expire, to trim). A session's memories go;
    memories it was evidence for lose it (trim), and expire when it was
    their only evidence (surgical forgetting). ``mem``: the backend's
    memories, with ``_ids_by_in(txn, tenant, by, value)`` and
    ``_records_in(txn, tenant, ids)``."""
    tenant, session = req.tenant, req.session
    erase: dict[str, Any] = {}
    expire: dict[str, Any] = {}
    trim: dict[str, Any] = {}
    ids: list[str] = [req.memory] if req.memory is not None else []
    if req.subject is not None:
        ids += mem._ids_by_in(txn, tenant, "user", req.subject)
    if req.project is not None:
        ids += mem._ids_by_in(txn, tenant, "project", req.project)
    for rec in mem._records_in(txn, tenant, ids):
        erase[rec.memory_id] = rec
    if session is not None:
        for rec in mem._records_in(txn, tenant, mem._ids_by_in(txn, tenant, "session", session)):
            if rec.memory_id in erase:
                continue
            if rec.session == session:
                erase[rec.memory_id] = rec
            elif any(s != session for s in rec.evidence_sessions):
                trim[rec.memory_id] = rec
            else:
                expire[rec.memory_id] = rec
    return erase, expire, trim


def settle_memories(mem: Any, txn: Any, req: Request, trim: Mapping[str, Any], expire: Mapping[str, Any],
                    now: float) -> None:
    """Write the trimmed and the expired memories of a plan (``mem._put_in``)."""
    for rec in trim.values():
        mem._put_in(txn, rec.evolve(evidence_sessions=tuple(s for s in rec.evidence_sessions if s != req.session)),
                    None)
    for rec in expire.values():  # its only evidence is gone: so is the memory
        mem._put_in(txn, rec.evolve(evidence_sessions=(), status="expired", expires_at=now), None)


def unfrozen(session_rec: Mapping[str, Any]) -> dict[str, Any]:
    """A session record without its frozen memory snapshot (re-frozen without
    the erased memory at the session's next turn)."""
    return {**session_rec, "state": {k: v for k, v in session_rec["state"].items() if k != "memory_snapshot"}}


def finish(mem: Any, receipts: Any, txn: Any, req: Request, plan: Mapping[str, Any], counts: Mapping[str, int],
           now: float) -> DeletionReceipt:
    """The end of an erasure's transaction: the plan's trimmed and expired
    memories written, its receipt stored ``pending``."""
    settle_memories(mem, txn, req, plan[TRIM], plan[MEMORIES_EXPIRED], now)
    receipt = req.receipt(counts, now, plan[MEMORIES])
    receipts._put_in(txn, req.tenant, req.request_id, receipt.to_dict(), None, None)
    return receipt


def seal(receipt: Mapping[str, Any], counts: Mapping[str, int] | None, status: str, now: float,
         head: Callable[[], Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The receipt with the derived indexes' counts added and its status set,
    and (the first time it leaves ``pending``) linked to the tenant's chain:
    ``seq``, ``prev_hash`` (the previous sealed receipt's ``hash``) and its
    own ``hash``. ``head()`` reads the chain's head; returns (the receipt,
    the new head to store, or None)."""
    d = dict(receipt)
    merged = dict(d.get("counts") or {})
    for k, n in (counts or {}).items():
        merged[k] = merged.get(k, 0) + int(n)
    d["counts"] = merged
    d["status"] = status
    new_head = None
    if not d.get("hash"):
        h = head()
        d["completed_at"] = now
        d["seq"] = h["seq"] + 1
        d["prev_hash"] = h["hash"]
        d["hash"] = receipt_hash(d)
        new_head = {"seq": d["seq"], "hash": d["hash"]}
    if status == "erased":
        d["erased_at"] = now
    return d, new_head


def matcher(tenant: str, wanted: str | None) -> Callable[[Any], bool]:
    """Whether a stored id digests to an erased subject's digest."""
    def match(value: Any) -> bool:
        return isinstance(value, str) and bool(value) and digest(tenant, value) == wanted

    return match


def memory_remains(d: Mapping[str, Any], kind: str, match: Callable[[Any], bool], memory_ids: Any) -> bool:
    """Whether a stored memory record still holds an erased subject."""
    field = {"user": "user", "session": "session", "project": "project"}.get(kind)
    return d.get("memory_id") in memory_ids or bool(field and (
        match(d.get(field)) or (kind == "session" and any(map(match, d.get("evidence_sessions") or ())))))


def session_remains(d: Mapping[str, Any], kind: str, match: Callable[[Any], bool]) -> bool:
    """Whether a stored session record still holds an erased session or user."""
    return (kind == "session" and match(d.get("session"))) or (
        kind == "user" and any(map(match, d.get("subjects") or [d.get("subject")])))
