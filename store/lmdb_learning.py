"""``store.learning``: what the learning job keeps besides memories, over LMDB.

One named database, ``learn``, keys prefixed by tenant::

    T "lease"                 -> {owner, until, heartbeat_at, taken_at}: one consolidation per tenant
    T "job"                   -> {watermark, scopes, last_run, cooldown_until, failures, retry_at, ...}
    T "#seq"                  -> the tenant's last extraction number (8 bytes BE)
    T "q" seq(8 BE)           -> {session, user}: a session extracted (phase 2's input feed)
    T "r" digest              -> {user, at}: a rejected proposal (its scope and text, digested)
    T "e" memory_id           -> {evidence: [{session, user, agent, turns, effects, outcome, quote}]}
    T "es" session memory_id  -> ""  } the evidence of a session / a user, for forgetting
    T "eu" user memory_id     -> ""  }

The per-session extraction state itself is a part of the session record
(``sessions`` part ``learn``), so erasing a session erases it.

The watermark never moves back: ``save_job`` keeps the larger of the stored
and the given one. The lease is taken, renewed and dropped in one write
transaction each, so two processes sharing the environment never both hold it.
"""
from __future__ import annotations

import struct
from typing import Any, Iterable, Mapping

from . import keys, surrogates
from .errors import StoreError
from .lmdb_env import load as _load
from .lmdb_env import scan as _scan
from .lmdb_env import scan_rest as _scan_rest

LEARN = "learn"
RECORD_VERSION = 1
_MAX_EVIDENCE = 64  # evidence entries kept per memory (the newest)


def _dump(record: Mapping[str, Any]) -> bytes:
    try:
        return surrogates.dumps(record)
    except TypeError as exc:
        raise StoreError(f"cannot encode learning record as JSON: {exc}") from exc


class LMDBLearning:
    """``LearningStore`` over LMDB (see the module docstring)."""

    _db = property(lambda self: self._ctx.dbs[LEARN])

    def __init__(self, x: Any, ctx: Any) -> None:
        self._x = x
        self._ctx = ctx

    # -- records ------------------------------------------------------------------

    def _get_in(self, txn: Any, tenant: str, key: bytes) -> dict[str, Any] | None:
        raw = txn.get(key, db=self._db)
        return None if raw is None else _load(LEARN, raw, tenant)

    def _put_in(self, txn: Any, tenant: str, key: bytes, data: Mapping[str, Any]) -> dict[str, Any]:
        rec = {**data, "v": RECORD_VERSION, "tenant": tenant}
        txn.put(key, _dump(rec), db=self._db)
        return rec

    @staticmethod
    def _plain(rec: Mapping[str, Any] | None) -> dict[str, Any] | None:
        return None if rec is None else {k: v for k, v in rec.items() if k not in ("v", "tenant")}

    # -- the lease ---------------------------------------------------------------

    def take_lease(self, tenant: str, owner: str, ttl: float) -> dict[str, Any] | None:
        """The lease for ``owner`` when it is free, lapsed or already its own; None while another holds it."""
        k = keys.key(tenant, b"lease")

        def op(txn: Any) -> dict[str, Any] | None:
            now = self._ctx.clock()
            cur = self._get_in(txn, tenant, k)
            if cur is not None and cur.get("owner") != owner and float(cur.get("until", 0)) > now:
                return None
            taken = cur.get("taken_at", now) if cur is not None and cur.get("owner") == owner else now
            lapsed = cur.get("owner") if cur is not None and cur.get("owner") != owner else None
            rec = {"owner": owner, "until": now + ttl, "heartbeat_at": now, "taken_at": taken}
            if lapsed:
                rec["took_over_from"] = lapsed
            return self._plain(self._put_in(txn, tenant, k, rec))

        return self._x.write(op)

    def renew_lease(self, tenant: str, owner: str, ttl: float) -> bool:
        """Heartbeat: extend ``owner``'s lease; False when it is no longer its own."""
        k = keys.key(tenant, b"lease")

        def op(txn: Any) -> bool:
            cur = self._get_in(txn, tenant, k)
            if cur is None or cur.get("owner") != owner:
                return False
            now = self._ctx.clock()
            self._put_in(txn, tenant, k, {**self._plain(cur), "until": now + ttl, "heartbeat_at": now})
            return True

        return self._x.write(op)

    def drop_lease(self, tenant: str, owner: str) -> bool:
        k = keys.key(tenant, b"lease")

        def op(txn: Any) -> bool:
            cur = self._get_in(txn, tenant, k)
            if cur is None or cur.get("owner") != owner:
                return False
            txn.delete(k, db=self._db)
            return True

        return self._x.write(op)

    def lease(self, tenant: str) -> dict[str, Any] | None:
        k = keys.key(tenant, b"lease")
        return self._plain(self._x.read(lambda txn: self._get_in(txn, tenant, k)))

    # -- the job's state -------------------------------------------------------------

    def job(self, tenant: str) -> dict[str, Any]:
        k = keys.key(tenant, b"job")
        return self._plain(self._x.read(lambda txn: self._get_in(txn, tenant, k))) or {}

    def save_job(self, tenant: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``changes`` into the job state; ``watermark`` (and each of
        ``scopes``' watermarks) only ever grows."""
        k = keys.key(tenant, b"job")

        def op(txn: Any) -> dict[str, Any]:
            cur = self._plain(self._get_in(txn, tenant, k)) or {}
            new = {**cur, **changes}
            new["watermark"] = max(int(cur.get("watermark") or 0), int(changes.get("watermark") or 0))
            scopes = dict(cur.get("scopes") or {})
            for name, mark in (changes.get("scopes") or {}).items():
                scopes[name] = max(int(scopes.get(name) or 0), int(mark or 0))
            new["scopes"] = scopes
            return self._plain(self._put_in(txn, tenant, k, new))

        return self._x.write(op)

    # -- the extraction feed ------------------------------------------------------------

    def note_extracted(self, tenant: str, session: str, user: str = "") -> int:
        """Append ``session`` to the tenant's feed; its number."""
        counter = keys.key(tenant, b"#seq")
        keys.part(session, "session")

        def op(txn: Any) -> int:
            raw = txn.get(counter, db=self._db)
            seq = (struct.unpack(">Q", raw)[0] if raw else 0) + 1
            txn.put(counter, struct.pack(">Q", seq), db=self._db)
            self._put_in(txn, tenant, keys.key(tenant, b"q", struct.pack(">Q", seq)),
                         {"session": session, "user": user})
            return seq

        return self._x.write(op)

    def extracted(self, tenant: str, after: int = 0, limit: int = 100000) -> list[tuple[int, str]]:
        """(number, session) of the feed after ``after``, oldest first."""
        prefix = keys.prefix(tenant, b"q")
        start = prefix + struct.pack(">Q", max(0, int(after)) + 1)

        def op(txn: Any) -> list[tuple[int, str]]:
            out: list[tuple[int, str]] = []
            cursor = txn.cursor(self._db)
            if cursor.set_range(start):
                for k, v in cursor.iternext():
                    if not k.startswith(prefix) or len(out) >= limit:
                        break
                    out.append((struct.unpack(">Q", k[len(prefix):])[0], _load(LEARN, v, tenant)["session"]))
            return out

        return self._x.read(op)

    def last_extracted(self, tenant: str) -> int:
        counter = keys.key(tenant, b"#seq")
        raw = self._x.read(lambda txn: txn.get(counter, db=self._db))
        return struct.unpack(">Q", raw)[0] if raw else 0

    def trim_feed(self, tenant: str, through: int) -> int:
        """Drop feed entries up to ``through`` (consumed by a full run)."""
        prefix = keys.prefix(tenant, b"q")
        end = prefix + struct.pack(">Q", max(0, int(through)))

        def op(txn: Any) -> int:
            gone = [k for k, _ in _scan(txn, self._db, prefix) if k <= end]
            for k in gone:
                txn.delete(k, db=self._db)
            return len(gone)

        return self._x.write(op)

    # -- rejected proposals ---------------------------------------------------------------

    def reject(self, tenant: str, digest: str, *, user: str = "") -> None:
        k = keys.key(tenant, b"r", keys.part(digest, "digest"))
        self._x.write(lambda txn: self._put_in(txn, tenant, k, {"user": user, "at": self._ctx.clock()}))

    def rejected(self, tenant: str, digest: str) -> bool:
        k = keys.key(tenant, b"r", keys.part(digest, "digest"))
        return self._x.read(lambda txn: txn.get(k, db=self._db)) is not None

    def rejected_count(self, tenant: str) -> int:
        prefix = keys.prefix(tenant, b"r")
        return self._x.read(lambda txn: len(_scan_rest(txn, self._db, prefix)))

    # -- evidence per memory ------------------------------------------------------------

    def _evidence_keys(self, tenant: str, memory_id: str, entries: Iterable[Mapping[str, Any]]) -> list[bytes]:
        mp = keys.part(memory_id, "memory id")
        out = []
        for e in entries:
            if e.get("session"):
                out.append(keys.key(tenant, b"es", keys.part(e["session"], "session"), mp))
            if e.get("user"):
                out.append(keys.key(tenant, b"eu", keys.part(e["user"], "user"), mp))
        return out

    def _set_evidence_in(self, txn: Any, tenant: str, memory_id: str, entries: list[dict[str, Any]]) -> None:
        k = keys.key(tenant, b"e", keys.part(memory_id, "memory id"))
        old = self._get_in(txn, tenant, k)
        for ik in self._evidence_keys(tenant, memory_id, (old or {}).get("evidence") or ()):
            txn.delete(ik, db=self._db)
        if not entries:
            txn.delete(k, db=self._db)
            return
        self._put_in(txn, tenant, k, {"memory_id": memory_id, "evidence": entries})
        for ik in self._evidence_keys(tenant, memory_id, entries):
            txn.put(ik, b"", db=self._db)

    def add_evidence(self, tenant: str, memory_id: str, entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add evidence entries (one per session: a session's newer entry replaces its older one)."""
        k = keys.key(tenant, b"e", keys.part(memory_id, "memory id"))
        new = [dict(e) for e in entries]

        def op(txn: Any) -> list[dict[str, Any]]:
            cur = (self._get_in(txn, tenant, k) or {}).get("evidence") or []
            sessions = {e.get("session") for e in new}
            merged = [e for e in cur if e.get("session") not in sessions] + new
            merged = merged[-_MAX_EVIDENCE:]
            self._set_evidence_in(txn, tenant, memory_id, merged)
            return merged

        return self._x.write(op)

    def evidence(self, tenant: str, memory_id: str) -> list[dict[str, Any]]:
        k = keys.key(tenant, b"e", keys.part(memory_id, "memory id"))
        rec = self._x.read(lambda txn: self._get_in(txn, tenant, k))
        return list((rec or {}).get("evidence") or [])

    def evidence_of(self, tenant: str, *, session: str | None = None, user: str | None = None) -> list[str]:
        """Ids of the memories a session (or a user's sessions) is evidence for."""
        if session is not None:
            prefix = keys.prefix(tenant, b"es", keys.part(session, "session"))
        elif user is not None:
            prefix = keys.prefix(tenant, b"eu", keys.part(user, "user"))
        else:
            raise StoreError("evidence_of needs a session or a user")
        return [r.decode("utf-8", "surrogatepass") for r in self._x.read(lambda txn: _scan_rest(txn, self._db, prefix))]

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
            ids: list[str] = []
            if session is not None:
                ids += [r.decode("utf-8", "surrogatepass") for r in
                        _scan_rest(txn, self._db, keys.prefix(tenant, b"es", keys.part(session, "session")))]
            if user is not None:
                ids += [r.decode("utf-8", "surrogatepass") for r in
                        _scan_rest(txn, self._db, keys.prefix(tenant, b"eu", keys.part(user, "user")))]
            for mid in dict.fromkeys([*ids, *erased]):
                k = keys.key(tenant, b"e", keys.part(mid, "memory id"))
                cur = (self._get_in(txn, tenant, k) or {}).get("evidence") or []
                left = [] if mid in erased else [e for e in cur if keep(e)]
                counts["evidence"] += len(cur) - len(left)
                self._set_evidence_in(txn, tenant, mid, left)
            if session is not None or user is not None:
                for k, v in _scan(txn, self._db, keys.prefix(tenant, b"q")):
                    if not keep(_load(LEARN, v, tenant)):
                        txn.delete(k, db=self._db)
                        counts["feed"] += 1
            if user is not None:
                for k, v in _scan(txn, self._db, keys.prefix(tenant, b"r")):
                    if _load(LEARN, v, tenant).get("user") == user:
                        txn.delete(k, db=self._db)
                        counts["rejected"] += 1
            return counts

        return self._x.write(op)

    def tenants(self) -> list[str]:
        """Tenants with learning state."""
        def op(txn: Any) -> list[str]:
            out: list[str] = []
            cursor = txn.cursor(self._db)
            pos = cursor.first()
            while pos:
                t = cursor.key().split(keys.SEP, 1)[0]
                out.append(t.decode("utf-8"))
                pos = cursor.set_range(t + b"\x01")
            return out

        return self._x.read(op)
