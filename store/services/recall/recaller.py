"""One recall: a query, a viewer, and the ranked visible memories.

Shared by the ``recall`` filter, ``POST /ctx/v1/recall`` and ``ctxproxy
memory search``, so all three answer the same for the same principal.

Steps: the query's terms (``store.memory_terms.query_terms``) and its
identifier-like tokens (looked up as trigram substrings); candidates from
each index, already restricted to what the viewer may see; BM25 over them
(``rank``); with the embeddings extra on, the most similar visible memories
join the candidates and each gets its cosine (``hybrid``); optionally a
second, expanded lookup (pseudo-relevance feedback: terms of the best
first-pass documents); decay, the floor, MMR.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ctxproxy.store.memory_index import Candidate
from ctxproxy.store.memory_terms import query_terms
from ctxproxy.store.sqlite_index import Viewer

from . import rank
from .rank import RankConfig, Scored

# Tokens worth a substring lookup: identifiers (snake, camel, dotted, with digits).
_IDENT = re.compile(r"[A-Za-z_][\w.]*[_.\d][\w.]*|[a-z]+[A-Z][\w]*|[A-Z]{2,}[a-z][\w]*")


def substrings_of(text: str) -> list[str]:
    return list(dict.fromkeys(m.group().strip(".") for m in _IDENT.finditer(text) if len(m.group()) >= 4))[:8]


@dataclass(frozen=True)
class Recalled:
    """The outcome of one recall: results in order and how many candidates
    the visible set gave (reported as a count only)."""

    items: list[Scored]
    candidates: int


class Recaller:
    def __init__(self, memories: Any, sessions: Any = None, config: RankConfig | None = None,
                 vectors: Any = None):
        self.memories = memories  # store.memory_index.MemoryIndex
        self.sessions = sessions  # store.session_index.SessionIndex (session-index hits)
        self.config = config or RankConfig()
        self.vectors = vectors  # hybrid.VectorRecall when the embeddings extra is on

    def recall(self, viewer: Viewer, query: str, k: int = 8, as_of: float | None = None,
               sessions: Sequence[str] | None = None, memories: bool = True,
               exclude_kinds: Sequence[str] = ()) -> Recalled:
        """Up to ``k`` results for ``query`` among what ``viewer`` may see.
        ``sessions``: the session-index sessions to search too (already
        authorised for this viewer by the caller: its session tree)."""
        if not viewer.known or not query.strip():
            return Recalled([], 0)
        cfg = self.config
        # "As the store stood then": what was live at ``as_of`` is served, expired since or not
        as_of = time.time() if as_of is None else as_of
        now = as_of
        words = query_terms(query)
        subs = substrings_of(query)
        if not words and not subs:
            return Recalled([], 0)
        cands, n_docs, avg, df = self._candidates(viewer, words, subs, now, sessions, memories,
                                                  tuple(exclude_kinds))
        sims = None
        if self.vectors is not None:
            cands, sims = self.vectors.extend(viewer, query, cands, now, tuple(exclude_kinds), memories)
        weights = {w: 1.0 for w in words}
        scored = rank.score(cands, weights, subs, n_docs, avg, as_of, cfg, vectors=sims, df=df)
        # The floor reads the query itself; feedback only reorders what passed it.
        floor = {id(s.cand): rank.passes(s, cfg) for s in scored}
        if cfg.prf_docs and scored:
            extra = rank.feedback_terms(scored, weights, n_docs, cfg)
            if extra:  # df: candidates
                scored = rank.score(cands, {**weights, **extra}, subs, n_docs, avg, as_of, cfg, vectors=sims)
        kept = [s for s in scored if floor.get(id(s.cand), False)]
        return Recalled(rank.mmr(kept, k, cfg.mmr_lambda), len(cands))

    def _candidates(self, viewer: Viewer, words: Sequence[str], subs: Sequence[str], now: float,
                    sessions: Sequence[str] | None, memories: bool, exclude_kinds: tuple[str, ...] = ()
                    ) -> tuple[list[Candidate], int, float, dict[str, int]]:
        """Candidates of both indexes, the visible document count and average
        length, and each query key's visible document frequency."""
        cands: list[Candidate] = []
        n_docs, total = 0, 0.0
        keys = list(words) + ["\x00" + s.lower() for s in subs]
        df = dict.fromkeys(keys, 0)
        if memories:
            found, stats = self.memories.search(viewer, words, subs, now, exclude_kinds=exclude_kinds)
            cands += found
            n_docs += stats.docs
            total += stats.docs * (stats.avg_terms + self.config.context_weight * stats.avg_ctx)
            for k, n in (stats.df or {}).items():
                df[k] = df.get(k, 0) + n
        if self.sessions is not None and sessions:
            found, stats = self.sessions.search(viewer, words, subs, sessions=sessions)
            cands += found
            n_docs += stats.docs
            total += stats.docs * stats.avg_terms
            for c in found:  # every visible turn holding a key is a candidate: counted here
                padded, low = " " + c.terms + " ", c.statement.lower()
                for k in keys:
                    if (k[1:] in low) if k.startswith("\x00") else (" " + k + " " in padded):
                        df[k] += 1
        return cands, n_docs, (total / n_docs if n_docs else 0.0), df
