"""Reads the admin API and the CLI share: manifests, pruned originals, effect keys.

Plain functions over an open ``Store``, no HTTP: the admin endpoints answer
them as JSON, the commands print them. Ids that name no tenant (a turn id, a
``ctx://pruned/`` reference) are found through the id -> tenant pointers the
filters write under ``TURN_POINTERS`` / ``REF_POINTERS``.
"""
from __future__ import annotations

from typing import Any

from .lmdb_store import REF_POINTERS, TURN_POINTERS
from .records import UNPOINTED_TENANT

REF_PREFIX = "ctx://pruned/"  # a pruned original's reference: REF_PREFIX + its id
MAX_MANIFESTS = 1000  # a session's manifests listed at most


def pointed_tenant(docs: Any, index_tenant: str, id: str) -> str | None:
    """The tenant an id -> tenant pointer in ``index_tenant`` names, or None.
    Only filters write these pointers; one naming an index tenant is ignored."""
    pointer = docs.get(index_tenant, id)
    tenant = pointer.data.get("tenant") if pointer is not None else None
    return tenant if isinstance(tenant, str) and tenant and not tenant.startswith("#") else None


def find_manifest(store: Any, turn_id: str, tenant: str | None = None) -> Any:
    """The stored manifest of ``turn_id`` (a ``StoredDoc``) or None: in
    ``tenant`` only, else in the tenant its pointer names, else (no pointer: a
    turn of ``UNPOINTED_TENANT`` is written without one) in that tenant."""
    if tenant is None:
        tenant = pointed_tenant(store.manifests, TURN_POINTERS, turn_id) or UNPOINTED_TENANT
    return store.manifests.get(tenant, turn_id)


def list_manifests(store: Any, tenant: str, session: str, limit: int = MAX_MANIFESTS) -> list[dict]:
    """A session's manifests, oldest first, the last ``limit`` of them."""
    docs = store.manifests.list(tenant, session=session)
    return [dict(d.data) for d in docs[-limit:]] if limit > 0 else []


def find_pruned(store: Any, ref: str, tenant: str | None, fallback: str) -> Any:
    """The stored original of ``ref`` (an id or the whole reference), a
    ``StoredDoc`` or None: in ``tenant`` only, else in the tenant its pointer
    names, else in ``fallback``."""
    pid = ref[len(REF_PREFIX):] if ref.startswith(REF_PREFIX) else ref
    if tenant is None:
        tenant = pointed_tenant(store.pruned, REF_POINTERS, pid) or fallback
    return store.pruned.get(tenant, pid)


def describe_pruned(doc: Any, content: bool = True) -> dict[str, Any]:
    """JSON form of a stored original."""
    data = dict(doc.data)
    out = {"id": doc.id, "ref": REF_PREFIX + doc.id, "tenant": doc.tenant, "session": doc.session,
           "created_at": doc.created_at}
    for key in ("call_id", "tool", "tokens", "chars", "sha256", "is_error", "api", "turn_id"):
        out[key] = data.get(key)
    if content:
        out["content"] = data.get("content", "")
    return out


def key_status(records: list) -> str:
    """What an idempotency key's records say was done: completed, pending, unknown, failed, resolved or none."""
    states = {r.state for r in records}
    if "completed" in states or any(r.state == "resolved" and r.resolution == "completed" for r in records):
        return "completed"
    for s in ("pending", "unknown", "failed", "resolved"):
        if s in states:
            return s
    return "none"


def key_answer(tenant: str, key: str, records: list) -> dict:
    """The answer to a tool gateway's "was this done?" for one key."""
    status = key_status(records)
    return {"tenant": tenant, "key": key, "status": status, "done": status == "completed",
            "records": [r.to_dict() for r in records]}


KEY_CHARS = 64  # an idempotency key: sha256, hex
MIN_KEY_PREFIX = 8  # the shortest prefix a key is looked up by


class KeyPrefixError(ValueError):
    """A key prefix that more than one of the tenant's keys begins with."""


def full_key(effects: Any, tenant: str, given: str) -> str:
    """The idempotency key ``given`` names: itself when it is a key of
    ``tenant``, else the one key it begins (``effects list`` prints keys cut
    to 16 characters; at least ``MIN_KEY_PREFIX``), else ``given`` (no such
    key). ``KeyPrefixError`` when several keys begin with it."""
    if len(given) >= KEY_CHARS or len(given) < MIN_KEY_PREFIX or effects.by_key(tenant, given):
        return given
    prefix = given.lower()
    matches = sorted({r.key for r in effects.list(tenant) if r.key.startswith(prefix)})
    if len(matches) > 1:
        shown = ", ".join(m[:20] + "…" for m in matches[:5]) + (", …" if len(matches) > 5 else "")
        raise KeyPrefixError(f"key prefix {given} is ambiguous: {len(matches)} keys begin with it ({shown}); "
                             "give more characters")
    return matches[0] if matches else given
