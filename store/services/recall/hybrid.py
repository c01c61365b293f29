"""The vector side of a recall (the embeddings extra on).

Given the lexical candidates (already restricted to what the viewer may
see), ``VectorRecall.extend`` embeds the query, asks the vector index —
whose WHERE clause runs first — for the ``vector_candidates`` most similar
memories the viewer may see at or above ``vector_min`` and for the
lexical candidates' similarities, adds those no query word found (fetched
with the visibility check applied again), and returns each candidate's
cosine. A candidate the vector index does not hold
(a session-index turn, a memory written a moment ago) is embedded on the
spot, at most ``ON_THE_FLY`` of them per recall (a bound on the work, in
candidate order); the rest keep their lexical relevance.
"""
from __future__ import annotations

from typing import Any, Sequence

from ctxproxy.store.sqlite_index import Viewer

from .rank import RankConfig

ON_THE_FLY = 64


class VectorRecall:
    def __init__(self, vectors: Any, memories: Any, embedder: Any, config: RankConfig):
        self.vectors = vectors  # store.vector_index.VectorIndex
        self.memories = memories  # store.memory_index.MemoryIndex
        self.embedder = embedder  # filters.recall.embeddings.Embedder
        self.config = config

    def extend(self, viewer: Viewer, query: str, cands: list, now: float, exclude_kinds: Sequence[str] = (),
               memories: bool = True) -> tuple[list, list[float | None]]:
        cfg = self.config
        q = self.embedder.embed([query])[0]
        held = {c.memory_id for c in cands if c.source == "memory"}
        by_id = self.vectors.search(viewer, q, now, exclude_kinds, want=held, top=cfg.vector_candidates,
                                    min_sim=cfg.vector_min) if memories else {}
        more = [mid for mid in by_id if mid not in held]
        if more:
            cands = cands + self.memories.fetch(viewer, more, now, exclude_kinds)
        sims: list[float | None] = [by_id.get(c.memory_id) if c.source == "memory" else None for c in cands]
        todo = [i for i, v in enumerate(sims) if v is None]
        if todo:
            todo = todo[:ON_THE_FLY]
            for i, row in zip(todo, self.embedder.embed([cands[i].statement for i in todo])):
                sims[i] = float(row @ q)
        return cands, sims
