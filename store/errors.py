"""Errors raised by ``ctxproxy.store``.

::

    StoreError            anything the store could not do: open, read, write,
     │                    encode, a schema it does not know, a bad tenant id
     ├── EffectStateError an effect is not in a state that allows the change
     │                    (the admin API answers 409 for it)
     ├── StoreUnavailable the database cannot be reached (a networked backend:
     │                    down, restarting); the edge answers model calls 503
     ├── StoreConflict    a transaction lost a race with another writer of the
     │                    same rows (a networked backend): run it again
     ├── RevisionConflict a memory write based on a revision that is no longer current (409)
     └── ExternalIdTaken  a memory's external_id is already used in its scope

    WriteNeeded           (not an error) a write was attempted inside
                          ``store.snapshot()``: redo the work in ``store.batch()``

Backend errors (``lmdb.Error`` and friends) never leave the package: they are
translated at the boundary with ``raise StoreError(...) from exc``.
"""
from __future__ import annotations


class StoreError(Exception):
    """The store could not do what was asked; the message says what and where.

    ``turn_id`` is empty inside the store; a filter that re-raises sets it so
    the error names the turn it broke.
    """

    def __init__(self, message: str, *, turn_id: str | None = None) -> None:
        super().__init__(message)
        self.turn_id = turn_id


class StoreUnavailable(StoreError):
    """The database cannot be reached (down, restarting, the network); a later
    attempt may succeed. Nothing was written."""


class StoreConflict(StoreError):
    """A transaction lost a race with another writer of the same rows (the
    database broke a deadlock, a lock wait ran out, a serialization failure).
    Nothing was written; running it again is safe."""


class EffectStateError(StoreError):
    """An effect cannot make the requested transition (e.g. resolving one that
    already completed)."""


class WriteNeeded(Exception):
    """A repository of ``store.snapshot()`` was asked to write.

    Not a ``StoreError``: it is the signal of the optimistic pattern — do the
    work against a read snapshot, and only if it turns out to write, do it
    again inside ``store.batch()`` (which takes the writer lock and fsyncs).
    """


class RevisionConflict(StoreError):
    """A memory write named the revision it was based on, and the record has
    moved on since (another writer got there first). The admin API answers
    409; the caller re-reads and tries again."""

    def __init__(self, message: str, *, current: int = 0) -> None:
        super().__init__(message)
        self.current = current


class ExternalIdTaken(StoreError):
    """Another memory of the same scope already carries this ``external_id``."""

    def __init__(self, message: str, *, memory_id: str = "") -> None:
        super().__init__(message)
        self.memory_id = memory_id
