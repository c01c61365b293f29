"""Forgetting a subject across every layer, with a receipt an auditor can check.

::

    receipt = forget(store, "acme", {"user": "alice"})        # or session / memory / project
    receipt.status          # "erased" once no old copy is left in the files, else "pending"
    check(store, "acme", receipt.request_id)                  # re-checks that nothing remains
    verify_chain(receipts)                                    # offline: hashes and links

Steps: (1) one LMDB transaction erases the subject's memories (every
revision, every index entry), session records, checkpoints, effect payloads,
manifests, pruned originals and pointers, expires memories whose only
evidence was an erased session, and stores a ``pending`` receipt; (2) each
derived index in ``store.derived`` (recall's SQLite FTS, the session index)
erases its entries and reports counts; (3) the receipt is sealed into the
tenant's chain (``seq``, ``prev_hash``, ``hash``); (4) erasure on disk: each
derived index makes its free pages unreadable, and the LMDB file is replaced
by a compacted copy; then every pending receipt reads ``erased``. Step 4
needs the store to itself: while another process has it open the receipts
stay ``pending`` and ``finish_erasure`` (run by ``ctxproxy forget --finish``
and at proxy start) completes them later.

A retry with the same request id replays its receipt (and finishes it when it
was left pending).
"""
from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping

from .errors import StoreError
from .records import DeletionReceipt, receipt_hash

log = logging.getLogger("ctxproxy.store")

SUBJECT_KINDS = ("user", "session", "memory", "project")
_ARG = {"user": "subject", "session": "session", "memory": "memory", "project": "project"}


def subject_of(subject: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, id) of a subject given as ``{"user"|"session"|"memory"|"project": id}``."""
    given = [(k, v) for k, v in subject.items() if k in SUBJECT_KINDS and v is not None]
    unknown = [k for k in subject if k not in SUBJECT_KINDS]
    if unknown:
        raise StoreError(f"unknown subject field {unknown[0]!r}; expected one of {', '.join(SUBJECT_KINDS)}")
    if len(given) != 1:
        raise StoreError(f"name exactly one subject: {', '.join(SUBJECT_KINDS)}")
    kind, value = given[0]
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"{kind}: expected a non-empty string")
    return kind, value


def forget(store: Any, tenant: str, subject: Mapping[str, Any], *, request_id: str | None = None,
           finish: bool = True) -> DeletionReceipt:
    kind, value = subject_of(subject)
    receipt = store.delete_subject(tenant, **{_ARG[kind]: value}, request_id=request_id)
    if not receipt.hash:  # not sealed yet (a new erasure, or one interrupted before its seal)
        counts: dict[str, int] = {}
        for index in getattr(store, "derived", ()):
            for layer, n in (index.forget(tenant, {kind: value}, list(receipt.memory_ids)) or {}).items():
                counts[f"{index.name}.{layer}"] = counts.get(f"{index.name}.{layer}", 0) + int(n)
        receipt = store.seal_receipt(tenant, receipt.request_id, counts=counts, status="pending")
    if finish and receipt.status != "erased":
        finish_erasure(store)
        receipt = get_receipt(store, tenant, receipt.request_id) or receipt
    return receipt


def finish_erasure(store: Any, *, operator: bool = False) -> bool:
    """Make erased bytes unreadable on disk, then mark pending receipts erased.
    False (receipts stay pending) when another process has the store open.
    A shared database's tables are rewritten only when the operator asks
    (``operator``: ``ctxproxy forget finish``): the rewrite locks them for
    every replica (``rewrite_erased``)."""
    pending = store.pending_receipts()
    for index in getattr(store, "derived", ()):
        index.erase_free_pages()
    rewrite = getattr(store, "rewrite_erased", None)
    if not (rewrite() if operator and rewrite is not None else store.compact()):
        if pending:
            log.info("erasure of %d receipt(s) pending: another process has the store open", len(pending))
        return False
    for tenant, rid in pending:
        store.seal_receipt(tenant, rid, status="erased")
    return True


def get_receipt(store: Any, tenant: str, request_id: str) -> DeletionReceipt | None:
    doc = store.receipts.get(tenant, request_id)
    return None if doc is None else DeletionReceipt.from_dict(doc.data)


def receipts(store: Any, tenant: str) -> list[DeletionReceipt]:
    """The tenant's sealed receipts in chain order."""
    out = [DeletionReceipt.from_dict(d.data) for d in store.receipts.list(tenant) if d.data.get("hash")]
    return sorted(out, key=lambda r: r.seq)


def check(store: Any, tenant: str, request_id: str) -> dict[str, Any] | None:
    """The receipt, and what the store and derived indexes still hold of its subject."""
    receipt = get_receipt(store, tenant, request_id)
    if receipt is None:
        return None
    left = store.remaining(tenant, receipt.subject_kind, receipt.subject_digest or receipt.session_digest,
                           receipt.memory_ids)
    for index in getattr(store, "derived", ()):
        remaining = getattr(index, "remaining", None)
        if remaining is not None:
            left[index.name] = int(remaining(tenant, receipt.subject_kind,
                                             receipt.subject_digest or receipt.session_digest,
                                             list(receipt.memory_ids)))
    return {"receipt": receipt.to_dict(), "remaining": left, "clean": not any(left.values())}


def verify_chain(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """Problems in receipt chains (one per tenant); [] when every link and hash holds."""
    by_tenant: dict[str, list[Mapping[str, Any]]] = {}
    for d in items:
        by_tenant.setdefault(str(d.get("tenant")), []).append(d)
    problems = []
    for tenant, chain in sorted(by_tenant.items()):
        chain.sort(key=lambda d: int(d.get("seq") or 0))
        prev = ""
        for i, d in enumerate(chain, 1):
            rid = d.get("request_id")
            if int(d.get("seq") or 0) != i:
                problems.append(f"{tenant}: receipt {rid} has seq {d.get('seq')}, expected {i} (a receipt is missing)")
            if d.get("prev_hash", "") != prev:
                problems.append(f"{tenant}: receipt {rid} does not link to the previous receipt")
            if d.get("hash") != receipt_hash(d):
                problems.append(f"{tenant}: receipt {rid} was altered (its hash does not match)")
            prev = d.get("hash", "")
    return problems
