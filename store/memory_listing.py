"""How the memory store lists and finds records by what they are bound to,
once for every backend. A backend's memories subclass ``MemoryListing`` and
provide, inside a transaction of their runner::

    _ids_by_in(txn, tenant, by, value)   ids of the records bound to a user, a session
                                         (own or evidence) or a project
    _records_in(txn, tenant, ids)        those records that exist, in that order
    _all_in(txn, tenant)                 every record of the tenant
"""
from __future__ import annotations

from typing import Any

from . import keys
from .errors import StoreError
from .memory_records import MemoryRecord


def bound_to(user: str | None, session: str | None, project: str | None) -> tuple[str, str]:
    """(what, value): the first of user, session, project given."""
    for by, value in (("user", user), ("session", session), ("project", project)):
        if value is not None:
            return by, value
    raise StoreError("ids_for needs a user, session or project")


class MemoryListing:
    _x: Any

    def _ids_by_in(self, txn: Any, tenant: str, by: str, value: str) -> list[str]:
        raise NotImplementedError

    def _records_in(self, txn: Any, tenant: str, ids: list[str]) -> list[MemoryRecord]:
        raise NotImplementedError

    def _all_in(self, txn: Any, tenant: str) -> list[MemoryRecord]:
        raise NotImplementedError

    def list(self, tenant: str, *, project: str | None = None, user: str | None = None,
             session: str | None = None, status: str | None = None, kind: str | None = None
             ) -> list[MemoryRecord]:
        """Oldest first, filtered."""
        keys.check_tenant(tenant)

        def keep(r: MemoryRecord) -> bool:
            return ((project is None or r.project == project) and (user is None or r.user == user)
                    and (session is None or r.session == session or session in r.evidence_sessions)
                    and (status is None or r.status == status) and (kind is None or r.kind == kind))

        def op(txn: Any) -> list[MemoryRecord]:
            bound = [(by, v) for by, v in (("user", user), ("session", session), ("project", project)) if v]
            if bound:
                recs = self._records_in(txn, tenant, self._ids_by_in(txn, tenant, *bound[0]))
            else:
                recs = self._all_in(txn, tenant)
            return sorted((r for r in recs if keep(r)), key=lambda r: (r.created_at, r.memory_id))

        return self._x.read(op)

    def ids_for(self, tenant: str, *, user: str | None = None, session: str | None = None,
                project: str | None = None) -> list[str]:
        """Ids of the records bound to a user, a session (own or evidence) or a project."""
        keys.check_tenant(tenant)
        by, value = bound_to(user, session, project)
        return self._x.read(lambda txn: self._ids_by_in(txn, tenant, by, value))
