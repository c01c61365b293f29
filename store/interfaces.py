"""The store's interfaces: what filters, the admin API and the CLI depend on.

LMDB (``lmdb_store``) is the embedded implementation; a networked backend
(PostgreSQL, for a fleet of sidecars) implements the same protocols. Nothing
here names a backend type.

Rules every implementation keeps:
- every method takes ``tenant`` first and never returns another tenant's
  record; ids are opaque strings;
- a method that returns has committed durably (fsync) — except inside a
  ``batch()``, where everything commits together when the block exits;
- failures raise ``StoreError``; "not there" is ``None`` / ``False`` / ``[]``.
"""
from __future__ import annotations

from typing import Any, Collection, ContextManager, Iterator, Mapping, Protocol, Sequence

from .proxy_keys import ProxyKey
from .records import DeletionReceipt, EffectRecord, StoreStats, StoredDoc


class EffectLedger(Protocol):
    """Tool calls and their outcomes (see ``records`` for the state machine)."""

    def put_pending(
        self,
        tenant: str,
        *,
        key: str,
        call_id: str,
        tool: str,
        args_canonical: str,
        session: str | None = None,
        task: str | None = None,
        side_effect: bool = True,
        turn_id: str | None = None,
        aliases: Sequence[str] = (),
    ) -> EffectRecord:
        """Record a call as pending. Idempotent on ``(key, call_id)``: an
        existing record is returned unchanged (only new ``aliases`` are added),
        so replayed history never duplicates or regresses an effect."""

    def complete(
        self,
        tenant: str,
        key: str,
        call_id: str,
        *,
        state: str = "completed",
        result_digest: str | None = None,
        result_size: int | None = None,
        refs: Sequence[str] = (),
        excerpt: str | None = None,
        turn_id: str | None = None,
    ) -> EffectRecord | None:
        """Settle an open (pending/unknown) effect as ``completed`` or
        ``failed``. A settled effect is returned unchanged (first result wins:
        history replays the same result every turn). ``None`` if no such
        record."""

    def mark_unknown(
        self, tenant: str, key: str, call_id: str, *, note: str | None = None
    ) -> EffectRecord | None:
        """Store ``unknown`` for a pending effect whose result will not come."""

    def resolve(
        self,
        tenant: str,
        key: str,
        *,
        resolution: str,
        call_id: str | None = None,
        note: str | None = None,
        by: str | None = None,
    ) -> list[EffectRecord]:
        """Human arbitration: settle the open records of ``key`` (or just
        ``call_id``) as ``resolved`` with ``resolution`` in ``RESOLUTIONS``.
        ``[]`` if the key is unknown; ``EffectStateError`` if none is open."""

    def get(self, tenant: str, key: str, call_id: str) -> EffectRecord | None: ...

    def by_key(self, tenant: str, key: str) -> list[EffectRecord]:
        """Every occurrence of an idempotency key, oldest first (the tool
        gateway's "was this already done?")."""

    def by_call_id(
        self, tenant: str, call_id: str, *, session: str | None = None
    ) -> EffectRecord | None:
        """The newest record whose call id or alias is ``call_id``."""

    def revision(self, tenant: str, *, session: str | None = None, task: str | None = None) -> bytes | None:
        """Changes whenever an effect record of the session (or task) is
        written or deleted; None when it has none."""

    def list(
        self,
        tenant: str,
        *,
        session: str | None = None,
        task: str | None = None,
        state: str | Collection[str] | None = None,
        side_effect: bool | None = None,
    ) -> list[EffectRecord]:
        """Records oldest first, filtered; ``state`` is the effective state."""


class SessionStore(Protocol):
    """Per-session state (compaction fingerprints, memory snapshot, stable
    prefix); last writer wins. State that grows with the conversation (prune
    decisions) goes in a named ``part`` of the session, read only by its
    owner, so that the record every turn reads stays small. Deleting a
    session deletes its parts."""

    def get(self, tenant: str, session: str, part: str | None = None) -> dict[str, Any] | None: ...

    def get_parts(self, tenant: str, session: str, parts: Sequence[str | None]) -> dict[str | None, Any]:
        """The session's own state (``None``) and each named part's, read in one
        transaction."""

    def put(
        self, tenant: str, session: str, state: Mapping[str, Any], *, subject: str | None = None,
        part: str | None = None,
    ) -> None: ...

    def update(
        self, tenant: str, session: str, changes: Mapping[str, Any], *, subject: str | None = None,
        current: Mapping[str, Any] | None = None, part: str | None = None,
    ) -> dict[str, Any]:
        """Shallow-merge ``changes`` into the state in one transaction; returns
        the new state (created if absent). Writes nothing when every change is
        already stored; ``current`` is the state as the caller just read it."""

    def delete(self, tenant: str, session: str) -> bool: ...

    def list(self, tenant: str, *, subject: str | None = None) -> list[str]:
        """Session ids; with ``subject``, the sessions that have had that subject
        (a session whose subject changed is listed under both)."""


class DocumentStore(Protocol):
    """Checkpoints, manifests, pruned originals, memories, deletion receipts:
    JSON documents by id, optionally tagged with a session and a subject."""

    kind: str

    def put(
        self,
        tenant: str,
        id: str,
        data: Mapping[str, Any],
        *,
        session: str | None = None,
        subject: str | None = None,
        sessions: Sequence[str] = (),
    ) -> StoredDoc:
        """Insert or replace (``created_at`` is kept on replace). ``sessions``:
        other sessions whose data the document holds (a task's checkpoint
        lists every session's effects); erasing any of them erases it, and
        ``list(session=...)`` finds it under each."""

    def put_many(self, docs: Sequence[tuple[str, str, Mapping[str, Any], str | None, str | None]]) -> int:
        """Several ``(tenant, id, data, session, subject)`` documents in one write,
        as ``put`` would one by one; returns how many."""

    def get(self, tenant: str, id: str) -> StoredDoc | None: ...

    def list(
        self, tenant: str, *, session: str | None = None, subject: str | None = None
    ) -> list[StoredDoc]:
        """Oldest first."""

    def delete(self, tenant: str, id: str) -> bool: ...


class TermIndex(Protocol):
    """Inverted index for recall: postings per term, replaced per document."""

    def put_doc(self, tenant: str, doc_id: str, terms: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the postings of ``doc_id`` with ``terms`` (term -> data)."""

    def postings(self, tenant: str, term: str) -> list[tuple[str, dict[str, Any]]]: ...

    def terms(self, tenant: str, doc_id: str) -> list[str]: ...

    def remove_doc(self, tenant: str, doc_id: str) -> int: ...


class MemoryStore(Protocol):
    """Durable memory records (``MemoryRecord``), every revision kept, a change
    feed for derived indexes. Written only through the memory gate."""

    def put(self, record: Any, *, expected_revision: int | None = None) -> Any:
        """Store a new revision; ``RevisionConflict`` when ``expected_revision``
        is not the current one (0 = must not exist)."""

    def get(self, tenant: str, memory_id: str) -> Any: ...

    def history(self, tenant: str, memory_id: str) -> list[Any]: ...

    def list(self, tenant: str, *, project: str | None = None, user: str | None = None,
             session: str | None = None, status: str | None = None, kind: str | None = None) -> list[Any]: ...

    def iter_tenant(self, tenant: str) -> Iterator[Any]: ...

    def find_external(self, tenant: str, project: str, user: str, session: str, external_id: str) -> Any: ...

    def erase(self, tenant: str, memory_id: str) -> dict[str, int]: ...

    def changes(self, after_seq: int, limit: int = 1000) -> list[tuple[int, str, str]]: ...

    def last_seq(self, at: int | None = None) -> int: ...  # ``at``: a backend's read stamp, if it has one


class ProxyKeyStore(Protocol):
    """Proxy keys by id (``proxy_keys`` has the layout); secrets are stored hashed."""

    def create(self, tenant: str, *, user: str = "", projects: Sequence[str] = (), purposes: Sequence[str] = (),
               routes: Sequence[str] = (), admin: bool = False,
               expires_at: float | None = None) -> tuple[ProxyKey, str]:
        """(the record, the key itself: returned this once, never stored)."""

    def get(self, key_id: str) -> ProxyKey | None: ...

    def list(self, tenant: str | None = None) -> list[ProxyKey]: ...

    def revoke(self, key_id: str, tenant: str | None = None) -> ProxyKey | None:
        """None when no such key exists for ``tenant`` (another tenant's is no such key)."""

    def generation(self) -> int:
        """A counter every create and revoke moves, in every process sharing the store."""


class LearningStore(Protocol):
    """What the learning job keeps besides memories (``lmdb_learning`` has the
    layout): one lease per tenant, the job's state and input watermark, a feed
    of extracted sessions, rejected proposals (digests only) and the evidence
    of each learned memory. The per-session extraction state is a session
    part (``sessions`` part ``learn``), erased with its session."""

    def take_lease(self, tenant: str, owner: str, ttl: float) -> dict[str, Any] | None:
        """Take the tenant's lease for ``owner`` (free, lapsed, or already its
        own) for ``ttl`` seconds; None while another owner holds it. Atomic
        across every process sharing the store."""

    def renew_lease(self, tenant: str, owner: str, ttl: float) -> bool:
        """Heartbeat; False when the lease is no longer ``owner``'s (taken over)."""

    def drop_lease(self, tenant: str, owner: str) -> bool: ...

    def lease(self, tenant: str) -> dict[str, Any] | None: ...

    def job(self, tenant: str) -> dict[str, Any]:
        """The job's state (``{}`` before the first run)."""

    def save_job(self, tenant: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``changes``; ``watermark`` and ``scopes``' watermarks never move back."""

    def note_extracted(self, tenant: str, session: str, user: str = "") -> int:
        """Append a session to the tenant's extraction feed; its number (grows by one)."""

    def extracted(self, tenant: str, after: int = 0, limit: int = 100000) -> list[tuple[int, str]]: ...

    def last_extracted(self, tenant: str) -> int: ...

    def trim_feed(self, tenant: str, through: int) -> int: ...

    def reject(self, tenant: str, digest: str, *, user: str = "") -> None: ...

    def rejected(self, tenant: str, digest: str) -> bool: ...

    def rejected_count(self, tenant: str) -> int: ...

    def add_evidence(self, tenant: str, memory_id: str,
                     entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Add evidence entries to a memory (one per session, the newest kept)."""

    def evidence(self, tenant: str, memory_id: str) -> list[dict[str, Any]]: ...

    def evidence_of(self, tenant: str, *, session: str | None = None, user: str | None = None) -> list[str]: ...

    def forget(self, tenant: str, *, session: str | None = None, user: str | None = None,
               memory_ids: Sequence[str] = ()) -> dict[str, int]:
        """Drop a session's / a user's evidence, feed entries and (a user) rejected digests."""

    def tenants(self) -> list[str]: ...


class Repositories(Protocol):
    effects: EffectLedger
    sessions: SessionStore
    checkpoints: DocumentStore
    manifests: DocumentStore
    pruned: DocumentStore
    memories: MemoryStore
    receipts: DocumentStore
    index: TermIndex
    proxy_keys: ProxyKeyStore
    learning: LearningStore
    pending_timeout: float | None  # seconds after which a pending effect reads as unknown


class Batch(Repositories, Protocol):
    """The same repositories, writing into one transaction that commits (or
    not at all) when the ``with`` block exits. Reads see the batch's writes."""


class DerivedIndex(Protocol):
    """An index derived from the store (e.g. SQLite FTS5), registered in
    ``store.derived`` so forgetting reaches it."""

    name: str

    def forget(self, tenant: str, subject: Mapping[str, str], memory_ids: list[str]) -> dict[str, int]:
        """Erase the subject's entries and these memories'; counts erased per layer."""

    def erase_free_pages(self) -> None:
        """Make erased bytes unreadable on disk (e.g. secure_delete + VACUUM)."""


class Store(Repositories, Protocol):
    schema_version: int
    derived: list[DerivedIndex]

    def batch(self) -> ContextManager[Batch]: ...

    def snapshot(self) -> ContextManager[Repositories]:
        """The repositories over one consistent read snapshot; any write raises
        ``WriteNeeded`` (then redo the work in ``batch()``)."""

    def delete_subject(
        self,
        tenant: str,
        *,
        session: str | None = None,
        subject: str | None = None,
        request_id: str | None = None,
    ) -> DeletionReceipt:
        """Erase a session (or every session and document of a subject) across
        all kinds, in one transaction; store and return a receipt with counts.
        Documents that list a session's data (a task's checkpoint) go with it.
        A request id that already ran the same erasure returns its stored
        receipt; one used for another session or subject raises ``StoreError``."""

    def count_subject(
        self, tenant: str, *, session: str | None = None, subject: str | None = None
    ) -> dict[str, int]:
        """What ``delete_subject`` would erase now (all zeros after it ran)."""

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...
