"""``LearningStore``'s rules, once for every backend: the lease (free, lapsed
or already the owner's; a heartbeat keeps it; a takeover is recorded), the
job state whose watermarks never move back, the extraction feed, rejected
proposals, each learned memory's evidence (one entry per session, the
newest kept) and what forgetting takes.

The records sit under names below the tenant (``lmdb_learning`` has the
layout)::

    lease | job | #seq | q seq | r digest | e memory | es session memory | eu user memory

A backend subclasses ``LearningRules`` and keeps those names and their bytes
inside a transaction of its runner::

    _raw_in(txn, tenant, name)                    the bytes under a name, or None
    _set_in(txn, tenant, name, value)             store bytes under a name
    _del_in(txn, tenant, name)                    drop a name
    _range_in(txn, tenant, prefix, start, limit)  (name, bytes) below ``prefix``, from ``start``, in name order
    _serialize_in(txn, tenant)                    make the tenant's learning writes one at a time
                                                  (LMDB has one writer already)

and ``tenants()``. A name is the key parts joined as ``keys`` joins them.
"""
from __future__ import annotations

import struct
from typing import Any, Iterable, Mapping

from . import keys, surrogates
from .encoding import load
from .errors import StoreError

LEARN = "learn"
RECORD_VERSION = 1
MAX_EVIDENCE = 64  # evidence entries kept per memory (the newest)
LEASE, JOB, SEQ = b"lease", b"job", b"#seq"


def name(*parts: bytes) -> bytes:
    return keys.SEP.join(parts)


def below(*parts: bytes) -> bytes:
    """The prefix of every name below ``parts``."""
    return name(*parts) + keys.SEP


def _dump(record: Mapping[str, Any]) -> bytes:
    try:
        return surrogates.dumps(record)
    except TypeError as exc:
        raise StoreError(f"cannot encode learning record as JSON: {exc}") from exc


def _plain(rec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if rec is None else {k: v for k, v in rec.items() if k not in ("v", "tenant")}


def _seq(n: int) -> bytes:
    return struct.pack(">Q", max(0, int(n)))


def _ids(names: Iterable[bytes], prefix: bytes) -> list[str]:
    return [n[len(prefix):].decode("utf-8", "surrogatepass") for n in names]


class LearningRules:
    def __init__(self, x: Any, ctx: Any) -> None:
        self._x = x
        self._ctx = ctx

    # -- what a backend provides ---------------------------------------------------

    def _raw_in(self, txn: Any, tenant: str, name: bytes) -> bytes | None:
        raise NotImplementedError

    def _set_in(self, txn: Any, tenant: str, name: bytes, value: bytes) -> None:
        raise NotImplementedError

    def _del_in(self, txn: Any, tenant: str, name: bytes) -> None:
        raise NotImplementedError

    def _range_in(self, txn: Any, tenant: str, prefix: bytes, start: bytes | None = None,
                  limit: int | None = None) -> list[tuple[bytes, bytes]]:
        raise NotImplementedError

    def _serialize_in(self, txn: Any, tenant: str) -> None:
        pass

    def tenants(self) -> list[str]:
        raise NotImplementedError

    # -- records ---------------------------------------------------------------------

    def _get_in(self, txn: Any, tenant: str, name: bytes) -> dict[str, Any] | None:
        raw = self._raw_in(txn, tenant, name)
        return None if raw is None else load(LEARN, raw, tenant)

    def _put_in(self, txn: Any, tenant: str, name: bytes, data: Mapping[str, Any]) -> dict[str, Any]:
        rec = {**data, "v": RECORD_VERSION, "tenant": tenant}
        self._set_in(txn, tenant, name, _dump(rec))
        return rec

    def _write(self, tenant: str, op: Any) -> Any:
        keys.check_tenant(tenant)

        def serialized(txn: Any) -> Any:
            self._serialize_in(txn, tenant)
            return op(txn)

        return self._x.write(serialized)

    def _read(self, tenant: str, op: Any) -> Any:
        keys.check_tenant(tenant)
        return self._x.read(op)

    # -- the lease ---------------------------------------------------------------------

    def take_lease(self, tenant: str, owner: str, ttl: float) -> dict[str, Any] | None:
        """The lease for ``owner`` when it is free, lapsed or already its own; None while another holds it."""
        def op(txn: Any) -> dict[str, Any] | None:
            now = self._ctx.clock()
            cur = self._get_in(txn, tenant, LEASE)
            if cur is not None and cur.get("owner") != owner and float(cur.get("until", 0)) > now:
                return None
            taken = cur.get("taken_at", now) if cur is not None and cur.get("owner") == owner else now
            lapsed = cur.get("owner") if cur is not None and cur.get("owner") != owner else None
            rec = {"owner": owner, "until": now + ttl, "heartbeat_at": now, "taken_at": taken}
            if lapsed:
                rec["took_over_from"] = lapsed
            return _plain(self._put_in(txn, tenant, LEASE, rec))

        return self._write(tenant, op)

    def renew_lease(self, tenant: str, owner: str, ttl: float) -> bool:
        """Heartbeat: extend ``owner``'s lease; False when it is no longer its own."""
        def op(txn: Any) -> bool:
            cur = self._get_in(txn, tenant, LEASE)
            if cur is None or cur.get("owner") != owner:
                return False
            now = self._ctx.clock()
            self._put_in(txn, tenant, LEASE, {**_plain(cur), "until": now + ttl, "heartbeat_at": now})
            return True

        return self._write(tenant, op)

    def drop_lease(self, tenant: str, owner: str) -> bool:
        def op(txn: Any) -> bool:
            cur = self._get_in(txn, tenant, LEASE)
            if cur is None or cur.get("owner") != owner:
                return False
            self._del_in(txn, tenant, LEASE)
            return True

        return self._write(tenant, op)

    def lease(self, tenant: str) -> dict[str, Any] | None:
        return _plain(self._read(tenant, lambda txn: self._get_in(txn, tenant, LEASE)))

    # -- the job's state ---------------------------------------------------------------

    def job(self, tenant: str) -> dict[str, Any]:
        return _plain(self._read(tenant, lambda txn: self._get_in(txn, tenant, JOB))) or {}

    def save_job(self, tenant: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``changes`` into the job state; ``watermark`` (and each of
        ``scopes``' watermarks) only ever grows."""
        def op(txn: Any) -> dict[str, Any]:
            cur = _plain(self._get_in(txn, tenant, JOB)) or {}
            new = {**cur, **changes}
            new["watermark"] = max(int(cur.get("watermark") or 0), int(changes.get("watermark") or 0))
            scopes = dict(cur.get("scopes") or {})
            for scope, mark in (changes.get("scopes") or {}).items():
                scopes[scope] = max(int(scopes.get(scope) or 0), int(mark or 0))
            new["scopes"] = scopes
            return _plain(self._put_in(txn, tenant, JOB, new))

        return self._write(tenant, op)

    # -- the extraction feed ------------------------------------------------------------

    def _last_in(self, txn: Any, tenant: str) -> int:
        raw = self._raw_in(txn, tenant, SEQ)
        return struct.unpack(">Q", raw)[0] if raw else 0

    def note_extracted(self, tenant: str, session: str, user: str = "") -> int:
        """Append ``session`` to the tenant's feed; its number."""
        keys.part(session, "session")

        def op(txn: Any) -> int:
            seq = self._last_in(txn, tenant) + 1
            self._set_in(txn, tenant, SEQ, _seq(seq))
            self._put_in(txn, tenant, name(b"q", _seq(seq)), {"session": session, "user": user})
            return seq

        return self._write(tenant, op)

    def extracted(self, tenant: str, after: int = 0, limit: int = 100000) -> list[tuple[int, str]]:
        """(number, session) of the feed after ``after``, oldest first."""
        prefix = below(b"q")

        def op(txn: Any) -> list[tuple[int, str]]:
            rows = self._range_in(txn, tenant, prefix, prefix + _seq(int(after) + 1), limit)
            return [(struct.unpack(">Q", k[len(prefix):])[0], load(LEARN, v, tenant)["session"]) for k, v in rows]

        return self._read(tenant, op)

    def last_extracted(self, tenant: str) -> int:
        return self._read(tenant, lambda txn: self._last_in(txn, tenant))

    def trim_feed(self, tenant: str, through: int) -> int:
        """Drop feed entries up to ``through`` (consumed by a full run)."""
        prefix = below(b"q")
        end = prefix + _seq(through)

        def op(txn: Any) -> int:
            gone = [k for k, _ in self._range_in(txn, tenant, prefix) if k <= end]
            for k in gone:
                self._del_in(txn, tenant, k)
            return len(gone)

        return self._write(tenant, op)

    # -- rejected proposals ---------------------------------------------------------------

    def reject(self, tenant: str, digest: str, *, user: str = "") -> None:
        k = name(b"r", keys.part(digest, "digest"))
        self._write(tenant, lambda txn: self._put_in(txn, tenant, k, {"user": user, "at": self._ctx.clock()}))

    def rejected(self, tenant: str, digest: str) -> bool:
        k = name(b"r", keys.part(digest, "digest"))
        return self._read(tenant, lambda txn: self._raw_in(txn, tenant, k)) is not None

    def rejected_count(self, tenant: str) -> int:
        return self._read(tenant, lambda txn: len(self._range_in(txn, tenant, below(b"r"))))

    # -- evidence per memory ------------------------------------------------------------

    @staticmethod
    def _evidence_names(memory_id: str, entries: Iterable[Mapping[str, Any]]) -> list[bytes]:
        mp = keys.part(memory_id, "memory id")
        out = []
        for e in entries:
            if e.get("session"):
                out.append(name(b"es", keys.part(e["session"], "session"), mp))
            if e.get("user"):
                out.append(name(b"eu", keys.part(e["user"], "user"), mp))
        return out

    def _evidence_in(self, txn: Any, tenant: str, memory_id: str) -> list[dict[str, Any]]:
        return list((self._get_in(txn, tenant, name(b"e", keys.part(memory_id, "memory id"))) or {})
                    .get("evidence") or [])

    def _set_evidence_in(self, txn: Any, tenant: str, memory_id: str, entries: list[dict[str, Any]]) -> None:
        k = name(b"e", keys.part(memory_id, "memory id"))
        for ik in self._evidence_names(memory_id, self._evidence_in(txn, tenant, memory_id)):
            self._del_in(txn, tenant, ik)
        if not entries:
            self._del_in(txn, tenant, k)
            return
        self._put_in(txn, tenant, k, {"memory_id": memory_id, "evidence": entries})
        for ik in self._evidence_names(memory_id, entries):
            self._set_in(txn, tenant, ik, b"")

    def add_evidence(self, tenant: str, memory_id: str, entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add evidence entries (one per session: a session's newer entry replaces its older one)."""
        new = [dict(e) for e in entries]

        def op(txn: Any) -> list[dict[str, Any]]:
            sessions = {e.get("session") for e in new}
            merged = [e for e in self._evidence_in(txn, tenant, memory_id) if e.get("session") not in sessions] + new
            merged = merged[-MAX_EVIDENCE:]
            self._set_evidence_in(txn, tenant, memory_id, merged)
            return merged

        return self._write(tenant, op)

    def evidence(self, tenant: str, memory_id: str) -> list[dict[str, Any]]:
        return self._read(tenant, lambda txn: self._evidence_in(txn, tenant, memory_id))

    def _evidence_of_in(self, txn: Any, tenant: str, session: str | None, user: str | None) -> list[str]:
        ids: list[str] = []
        for what, value, tag in (("session", session, b"es"), ("user", user, b"eu")):
            if value is not None:
                prefix = below(tag, keys.part(value, what))
                ids += _ids((k for k, _ in self._range_in(txn, tenant, prefix)), prefix)
        return ids

    def evidence_of(self, tenant: str, *, session: str | None = None, user: str | None = None) -> list[str]:
        """Ids of the memories a session (or a user's sessions) is evidence for."""
        if session is None and user is None:
            raise StoreError("evidence_of needs a session or a user")
        return self._read(tenant, lambda txn: self._evidence_of_in(txn, tenant, session, None if session else user))

    # -- forgetting ------------------------------------------------------------------------

    def forget(self, tenant: str, *, session: str | None = None, user: str | None = None,
               memory_ids: Iterable[str] = ()) -> dict[str, int]:
        """Drop what learning kept of a session, a user or erased memories:
        their evidence entries, feed entries and (a user) rejected digests."""
        erased = list(memory_ids)

        def keep(e: Mapping[str, Any]) -> bool:
            return not ((session is not None and e.get("session") == session)
                        or (user is not None and e.get("user") == user))

        def op(txn: Any) -> dict[str, int]:
            counts = {"evidence": 0, "feed": 0, "rejected": 0}
            for mid in dict.fromkeys([*self._evidence_of_in(txn, tenant, session, user), *erased]):
                cur = self._evidence_in(txn, tenant, mid)
                left = [] if mid in erased else [e for e in cur if keep(e)]
                counts["evidence"] += len(cur) - len(left)
                self._set_evidence_in(txn, tenant, mid, left)
            if session is not None or user is not None:
                for k, v in self._range_in(txn, tenant, below(b"q")):
                    if not keep(load(LEARN, v, tenant)):
                        self._del_in(txn, tenant, k)
                        counts["feed"] += 1
            if user is not None:
                for k, v in self._range_in(txn, tenant, below(b"r")):
                    if load(LEARN, v, tenant).get("user") == user:
                        self._del_in(txn, tenant, k)
                        counts["rejected"] += 1
            return counts

        return self._write(tenant, op)
