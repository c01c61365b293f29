"""The set of repositories a store, a batch and a snapshot each expose, once
for every backend. A backend names its classes; each repository is built
on first use (most turns touch one or two) and bound to one runner (the
store itself, a batch's transaction, a snapshot's)."""
from __future__ import annotations

from functools import cached_property
from typing import Any

from .records import CHECKPOINTS, MANIFESTS, PRUNED, RECEIPTS


class RepositorySet:
    Effects: type
    Sessions: type
    Index: type
    Documents: type
    Memories: type
    Learning: type

    def __init__(self, x: Any, ctx: Any) -> None:
        self._x = x
        self._ctx = ctx

    @cached_property
    def effects(self) -> Any:
        return self.Effects(self._x, self._ctx)

    @cached_property
    def sessions(self) -> Any:
        return self.Sessions(self._x, self._ctx)

    @cached_property
    def index(self) -> Any:
        return self.Index(self._x, self._ctx)

    @cached_property
    def checkpoints(self) -> Any:
        return self.Documents(CHECKPOINTS, self._x, self._ctx)

    @cached_property
    def manifests(self) -> Any:
        return self.Documents(MANIFESTS, self._x, self._ctx)

    @cached_property
    def pruned(self) -> Any:
        return self.Documents(PRUNED, self._x, self._ctx)

    @cached_property
    def receipts(self) -> Any:
        return self.Documents(RECEIPTS, self._x, self._ctx)

    @cached_property
    def memories(self) -> Any:
        return self.Memories(self._x, self._ctx, index=self.index)  # an erased memory's postings go too

    @cached_property
    def learning(self) -> Any:
        return self.Learning(self._x, self._ctx)

    @cached_property
    def proxy_keys(self) -> Any:
        return self._proxy_keys()

    def _proxy_keys(self) -> Any:
        raise NotImplementedError

    def docs(self, kind: str) -> Any:
        return getattr(self, kind)

    @property
    def pending_timeout(self) -> float | None:
        """Seconds after which a pending effect reads as unknown (None: never)."""
        return self._ctx.pending_timeout

    def forget_repositories(self) -> None:
        """Drop the repositories built so far (they are built again on next use)."""
        for klass in type(self).__mro__:
            for name, attr in vars(klass).items():
                if isinstance(attr, cached_property):
                    self.__dict__.pop(name, None)
