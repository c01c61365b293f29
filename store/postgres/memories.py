"""``store.memories`` over PostgreSQL: the current revision a row of
``memories`` (with the columns the gate looks up by: scope, duplicates,
contradictions, external id, expiry), earlier revisions in
``memory_revisions``, each session a record belongs to (own and evidence) in
``memory_sessions``, a change feed, and recall's index of it
(``recall_index``), all in the write's transaction. The gate's rules are
the embedded store's: the keys come from ``memory_text`` as there."""
from __future__ import annotations

from typing import Any, Iterator

import orjson

from .. import memory_text
from ..errors import ExternalIdTaken, RevisionConflict
from ..memory_listing import MemoryListing
from ..memory_records import SNAPSHOT_KINDS, MemoryRecord
from ..memory_storage import LIVE, PAGE, dump_record, validate_record
from .common import Ctx, Runner, ident, load, tenant_of
from .pool import ALL_TENANTS, Tx
from .recall_index import apply_in as index_for_recall
from .recall_index import remove_in as unindex_for_recall

META_TENANT = "#meta"  # store_meta rows of the memory layer (rules version...)


def _rec(raw: bytes, tenant: str) -> MemoryRecord:
    return MemoryRecord.from_dict(load("memory", bytes(raw), tenant))


RECALLED = "memories:recalled"  # tx.rows key of a scope's count of recalled memories


def _recount(tx: Tx, old: MemoryRecord | None, new: MemoryRecord | None) -> None:
    """Keep a batch's counts of recalled memories (``recalled_count``) up to date with a write."""
    for rec, step in ((old, -1), (new, 1)):
        if rec is not None and rec.status in LIVE and rec.kind not in SNAPSHOT_KINDS:
            memo = (RECALLED, rec.tenant, _scope_part(*rec.scope_key()))
            if memo in tx.rows:
                tx.rows[memo] += step


def _scope_part(project: str, user: str, session: str) -> str:
    return memory_text.scoped(project, user, session, "")


def _ext_key(project: str, user: str, session: str, external_id: str) -> str:
    return memory_text.scoped(project, user, session, "x:" + external_id)


class PGMemories(MemoryListing):
    def __init__(self, x: Runner, ctx: Ctx, index: Any = None) -> None:
        self._x = x
        self._ctx = ctx
        self._terms = index

    # -- in-transaction primitives (also used by erasure) ---------------------------

    def _get_in(self, tx: Tx, tenant: str, memory_id: str, lock: bool = False) -> MemoryRecord | None:
        row = tx.tenant(tenant).one("SELECT doc FROM memories WHERE tenant = %s AND memory_id = %s"
                                    + (" FOR UPDATE" if lock and not tx.readonly else ""),
                                    (tenant, ident(memory_id, "memory id")))
        return None if row is None else _rec(row[0], tenant)

    def _put_in(self, tx: Tx, rec: MemoryRecord, expected_revision: int | None) -> MemoryRecord:
        tenant = rec.tenant
        tx.tenant(tenant).write_check()
        old = self._get_in(tx, tenant, rec.memory_id, lock=True)
        current = old.revision if old is not None else 0
        if expected_revision is not None and expected_revision != current:
            raise RevisionConflict(f"memory {rec.memory_id} is at revision {current}, not {expected_revision}; "
                                   "read it again and retry", current=current)
        now = self._ctx.clock()
        rec = rec.evolve(revision=current + 1, updated_at=now,
                         created_at=old.created_at if old is not None else (rec.created_at or now),
                         observed_at=rec.observed_at or now)
        mid = ident(rec.memory_id, "memory id")
        ext = _ext_key(*rec.scope_key(), rec.external_id) if rec.external_id else None
        if ext is not None:
            holder = tx.one("SELECT memory_id FROM memories WHERE tenant = %s AND external_key = %s",
                            (tenant, ext))
            if holder is not None and holder[0] != mid:
                raise ExternalIdTaken(f"external_id {rec.external_id!r} is already used in this scope",
                                      memory_id=holder[0])
        if old is not None:  # the revision it replaces joins the history
            tx.send("INSERT INTO memory_revisions (tenant, memory_id, revision, doc) VALUES (%s, %s, %s, %s)",
                    (tenant, mid, old.revision, dump_record(old)))
        self._write_row(tx, rec, old, fresh=old is None)
        return rec

    def _write_row(self, tx: Tx, rec: MemoryRecord, old: MemoryRecord | None, fresh: bool = False) -> None:
        """The record's row with its lookup columns, its sessions, a feed entry and
        recall's index of it (``fresh``: a new record, nothing of it indexed yet)."""
        tenant = rec.tenant
        mid = ident(rec.memory_id, "memory id")
        ext = _ext_key(*rec.scope_key(), rec.external_id) if rec.external_id else None
        p, u, s = rec.scope_key()
        live = rec.status in LIVE
        tx.send(
            "INSERT INTO memories (tenant, memory_id, revision, project, user_id, session, kind, status, live, "
            "scope_part, exact_key, near_key, subject_digest, external_key, expires_at, created_at, doc) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (tenant, memory_id) DO UPDATE SET revision = excluded.revision, project = excluded.project, "
            "user_id = excluded.user_id, session = excluded.session, kind = excluded.kind, status = excluded.status, "
            "live = excluded.live, scope_part = excluded.scope_part, exact_key = excluded.exact_key, "
            "near_key = excluded.near_key, subject_digest = excluded.subject_digest, "
            "external_key = excluded.external_key, expires_at = excluded.expires_at, doc = excluded.doc",
            (tenant, mid, rec.revision, rec.project and ident(rec.project, "project"),
             rec.user and ident(rec.user, "user"), rec.session and ident(rec.session, "session"), rec.kind,
             rec.status, live, _scope_part(p, u, s),
             memory_text.scoped(p, u, s, memory_text.exact_key(rec.statement)) if live else None,
             memory_text.scoped(p, u, s, memory_text.near_key(rec.statement)) if live else None,
             memory_text.subject_digest(p, u, s, rec.subject_key) if rec.subject_key and live else None,
             ext, rec.expires_at, rec.created_at, dump_record(rec)))
        sessions = [ident(x, "session") for x in dict.fromkeys((rec.session, *rec.evidence_sessions)) if x]
        before = [] if old is None else [ident(x, "session") for x in dict.fromkeys((old.session, *old.evidence_sessions)) if x]
        gone = [x for x in before if x not in sessions]
        if gone:
            tx.send("DELETE FROM memory_sessions WHERE tenant = %s AND memory_id = %s AND session = ANY(%s)",
                    (tenant, mid, gone))
        tx.many("INSERT INTO memory_sessions (tenant, session, memory_id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(tenant, x, mid) for x in sessions if x not in before])
        tx.send("INSERT INTO memory_feed (tenant, memory_id) VALUES (%s, %s)", (tenant, mid))
        index_for_recall(tx, rec, fresh)  # recallable on every replica when this commits
        _recount(tx, old, rec)

    def _import_in(self, tx: Tx, rec: MemoryRecord, revisions: list[bytes]) -> None:
        """A record as another store holds it (revision and times kept), with its earlier revisions' bytes."""
        tenant = rec.tenant
        tx.tenant(tenant)
        mid = ident(rec.memory_id, "memory id")
        tx.many("INSERT INTO memory_revisions (tenant, memory_id, revision, doc) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING", [(tenant, mid, _rec(raw, tenant).revision, raw) for raw in revisions])
        self._write_row(tx, rec, None)

    def _index_count(self, rec: MemoryRecord) -> int:
        """The index entries the embedded store keeps for a record (an erasure's counts agree)."""
        live = rec.status in LIVE
        n = 1 + 2 * live + bool(rec.user) + bool(rec.project) + len([x for x in dict.fromkeys(
            (rec.session, *rec.evidence_sessions)) if x]) + (rec.expires_at is not None)
        return n + bool(rec.subject_key and live)

    def _erase_in(self, tx: Tx, tenant: str, memory_id: str) -> dict[str, int]:
        rec = self._get_in(tx, tenant, memory_id, lock=True)
        if rec is None:
            return {"memories": 0, "revisions": 0, "memory_index": 0}
        mid = ident(memory_id, "memory id")
        revs = tx.exec("DELETE FROM memory_revisions WHERE tenant = %s AND memory_id = %s", (tenant, mid))
        tx.exec("DELETE FROM memory_sessions WHERE tenant = %s AND memory_id = %s", (tenant, mid))
        tx.exec("DELETE FROM memories WHERE tenant = %s AND memory_id = %s", (tenant, mid))
        unindex_for_recall(tx, tenant, [rec.memory_id])
        _recount(tx, rec, None)
        idx = self._index_count(rec) + bool(rec.external_id)
        if self._terms is not None:
            idx += self._terms._remove_doc_in(tx, tenant, memory_id)
        tx.exec("INSERT INTO memory_feed (tenant, memory_id) VALUES (%s, %s)", (tenant, mid))
        return {"memories": 1, "revisions": revs + 1, "memory_index": idx}

    def _where_in(self, tx: Tx, tenant: str, where: str, params: tuple) -> list[MemoryRecord]:
        rows = tx.tenant(tenant).all(f"SELECT doc FROM memories WHERE tenant = %s AND {where}", (tenant, *params))
        return [_rec(r[0], tenant) for r in rows]

    def _ids_by_in(self, tx: Tx, tenant: str, by: str, value: str) -> list[str]:
        if by == "session":
            rows = tx.tenant(tenant).all("SELECT memory_id FROM memory_sessions WHERE tenant = %s AND session = %s "
                                         "ORDER BY memory_id COLLATE \"C\"", (tenant, ident(value, "session")))
        else:
            column = {"user": "user_id", "project": "project"}[by]
            rows = tx.tenant(tenant).all(f"SELECT memory_id FROM memories WHERE tenant = %s AND {column} = %s "
                                         "ORDER BY memory_id COLLATE \"C\"", (tenant, ident(value, by)))
        return [r[0] for r in rows]

    def _records_in(self, tx: Tx, tenant: str, ids: list[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        rows = tx.tenant(tenant).all("SELECT memory_id, doc FROM memories WHERE tenant = %s AND memory_id = ANY(%s)",
                                     (tenant, list(dict.fromkeys(ids))))
        found = {r[0]: _rec(r[1], tenant) for r in rows}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    # -- the MemoryStore interface ------------------------------------------------------

    def put(self, record: MemoryRecord, *, expected_revision: int | None = None) -> MemoryRecord:
        validate_record(record)
        return self._x.write(lambda tx: self._put_in(tx, record, expected_revision))

    def get(self, tenant: str, memory_id: str) -> MemoryRecord | None:
        tenant_of(tenant)
        return self._x.read(lambda tx: self._get_in(tx, tenant, memory_id))

    def history(self, tenant: str, memory_id: str) -> list[MemoryRecord]:
        tenant_of(tenant)

        def op(tx: Tx) -> list[MemoryRecord]:
            current = self._get_in(tx, tenant, memory_id)
            if current is None:
                return []
            rows = tx.all("SELECT doc FROM memory_revisions WHERE tenant = %s AND memory_id = %s ORDER BY revision",
                          (tenant, ident(memory_id, "memory id")))
            return [*(_rec(r[0], tenant) for r in rows), current]

        return self._x.read(op)

    def _all_in(self, tx: Tx, tenant: str) -> list[MemoryRecord]:
        return self._where_in(tx, tenant, "true", ())

    def iter_tenant(self, tenant: str) -> Iterator[MemoryRecord]:
        """Every record of the tenant in id order, a page per transaction."""
        tenant_of(tenant)
        after = ""
        while True:
            rows = self._x.read(lambda tx, a=after: tx.tenant(tenant).all(
                "SELECT memory_id, doc FROM memories WHERE tenant = %s AND memory_id COLLATE \"C\" > %s "
                "ORDER BY memory_id COLLATE \"C\" LIMIT %s", (tenant, a, PAGE)))
            if not rows:
                return
            for r in rows:
                yield _rec(r[1], tenant)
            after = rows[-1][0]

    def tenants(self) -> list[str]:
        rows = self._x.read(lambda tx: tx.tenant(ALL_TENANTS).all(
            "SELECT DISTINCT tenant COLLATE \"C\" FROM memories ORDER BY 1"))
        return [r[0] for r in rows]

    def expiring(self, tenant: str, before: float) -> list[MemoryRecord]:
        tenant_of(tenant)
        return self._x.read(lambda tx: self._where_in(
            tx, tenant, "expires_at IS NOT NULL AND expires_at < %s ORDER BY expires_at, memory_id",
            (float(max(0, int(before))),)))

    def find_external(self, tenant: str, project: str, user: str, session: str,
                      external_id: str) -> MemoryRecord | None:
        tenant_of(tenant)
        recs = self._x.read(lambda tx: self._where_in(tx, tenant, "external_key = %s",
                                                      (_ext_key(project, user, session, external_id),)))
        return recs[0] if recs else None

    def same_text(self, tenant: str, project: str, user: str, session: str, statement: str) -> list[MemoryRecord]:
        tenant_of(tenant)
        h = memory_text.scoped(project, user, session, memory_text.exact_key(statement))
        n = memory_text.scoped(project, user, session, memory_text.near_key(statement))

        def op(tx: Tx) -> list[MemoryRecord]:  # one statement: the exact matches first, then the near ones
            rows = tx.tenant(tenant).all(
                "SELECT doc, exact_key IS NOT DISTINCT FROM %s FROM memories WHERE tenant = %s "
                "AND (exact_key = %s OR near_key = %s) ORDER BY memory_id COLLATE \"C\"", (h, tenant, h, n))
            return [_rec(r[0], tenant) for r in rows if r[1]] + [_rec(r[0], tenant) for r in rows if not r[1]]

        return self._x.read(op)

    def same_subject(self, tenant: str, project: str, user: str, session: str, subject_key: str
                     ) -> list[MemoryRecord]:
        if not subject_key:
            return []
        tenant_of(tenant)
        k = memory_text.subject_digest(project, user, session, subject_key)
        return self._x.read(lambda tx: self._where_in(tx, tenant, "subject_digest = %s ORDER BY memory_id COLLATE \"C\"",
                                                      (k,)))

    def scope_records(self, tenant: str, project: str, user: str, session: str, *, snapshot: bool
                      ) -> list[MemoryRecord]:
        tenant_of(tenant)
        sp = _scope_part(project, user, session)
        op = "= ANY(%s)" if snapshot else "<> ALL(%s)"
        return self._x.read(lambda tx: self._where_in(
            tx, tenant, f"scope_part = %s AND kind {op} ORDER BY memory_id COLLATE \"C\"", (sp, list(SNAPSHOT_KINDS))))

    def recalled_count(self, tenant: str, project: str, user: str, session: str) -> int:
        tenant_of(tenant)
        sp = _scope_part(project, user, session)

        def op(tx: Tx) -> int:
            # In a batch (the gate writing many), counted once and then kept by the
            # batch's own writes (``_recount``): a count per write was a round trip each.
            memo = (RECALLED, tenant, sp)
            if not tx.readonly and memo in tx.rows:
                return tx.rows[memo]
            n = tx.tenant(tenant).one(
                "SELECT count(*) FROM memories WHERE tenant = %s AND scope_part = %s AND live AND kind <> ALL(%s)",
                (tenant, sp, list(SNAPSHOT_KINDS)))[0]
            if not tx.readonly:
                tx.rows[memo] = n
            return n

        return self._x.read(op)

    def erase(self, tenant: str, memory_id: str) -> dict[str, int]:
        tenant_of(tenant)
        return self._x.write(lambda tx: self._erase_in(tx, tenant, memory_id))

    def count_refused(self, tenant: str, reason: str) -> int:
        tenant_of(tenant)
        r = ident(reason or "unknown", "reason")

        def op(tx: Tx) -> int:
            tx.tenant(tenant).exec("INSERT INTO memory_refusals (tenant, reason, at) VALUES (%s, %s, %s)",
                                   (tenant, r, self._ctx.clock()))
            return tx.one("SELECT count(*) FROM memory_refusals WHERE tenant = %s AND reason = %s", (tenant, r))[0]

        return self._x.write(op)

    def refused(self, tenant: str) -> dict[str, int]:
        tenant_of(tenant)
        rows = self._x.read(lambda tx: tx.tenant(tenant).all(
            "SELECT reason, count(*) FROM memory_refusals WHERE tenant = %s GROUP BY reason "
            "ORDER BY reason COLLATE \"C\"", (tenant,)))
        return {r[0]: r[1] for r in rows}

    def changes(self, after_seq: int, limit: int = 1000) -> list[tuple[int, str, str]]:
        rows = self._x.read(lambda tx: tx.tenant(ALL_TENANTS).all(
            "SELECT seq, tenant, memory_id FROM memory_feed WHERE seq > %s ORDER BY seq LIMIT %s",
            (max(0, int(after_seq)), limit)))
        return [(r[0], r[1], r[2]) for r in rows]

    def last_seq(self, at: int | None = None) -> int:  # (``at``: LMDB's read stamp; none here)
        return self._x.read(lambda tx: tx.tenant(ALL_TENANTS).one(
            "SELECT coalesce(max(seq), 0) FROM memory_feed")[0])

    def meta(self, name: str) -> Any:
        row = self._x.read(lambda tx: tx.tenant(META_TENANT).one(
            "SELECT value FROM store_meta WHERE tenant = %s AND name = %s", (META_TENANT, "memory:" + name)))
        return None if row is None else orjson.loads(row[0])

    def set_meta(self, name: str, value: Any) -> None:
        self._x.write(lambda tx: tx.tenant(META_TENANT).exec(
            "INSERT INTO store_meta (tenant, name, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value",
            (META_TENANT, "memory:" + name, orjson.dumps(value))))
