"""One recall: a query, a viewer, and the ranked visible memories.

Shared by the ``recall`` filter, ``POST /ctx/v1/recall`` and ``ctxproxy
memory search``, so all three answer the same for the same principal.

Steps: the query (``query.parse``: the user's own words — ``agent_text`` —,
weighted terms, identifier-like substrings looked up in the trigram index,
phrases; a long message's most salient terms, ``query.select``); candidates from
each index, already restricted to what the viewer may see; BM25 over them
(``rank``); with the embeddings extra on, the most similar visible memories
join the candidates and each gets its cosine (``hybrid``); optionally a
second, expanded lookup (pseudo-relevance feedback: terms of the best
first-pass documents); decay, the floor (``rank.match``: judged by what
each candidate matches, not by how much else the message says; a message
more than one question keeps what its words single out: ``rank.distinct``,
``rank.single_out``; or, ``judge = true``, the learned ``judge`` decides each candidate), a recalled question's reply (``rank.answers``), MMR.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ctxproxy.store.memory_index import MAX_TERMS as LOOKED_UP, Candidate
from ctxproxy.store.sqlite_index import Viewer

from . import build_ask, edit_ask, general_ask
from . import judge
from . import morphology
from . import query as queries
from . import rank
from . import tool_output
from .agent_text import own_words
from .rank import RankConfig, Scored

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
        # the learned judge (``judge = true``): its shipped weights, read once; JudgeError when missing or corrupt
        self.judge = judge.shipped() if self.config.judge else None

    def recall(self, viewer: Viewer, query: str, k: int = 8, as_of: float | None = None,
               sessions: Sequence[str] | None = None, memories: bool = True,
               exclude_kinds: Sequence[str] = (), goal: str = "", max_chars: int = 2000,
               context: str = "", held: Sequence[str] = (), held_names: Sequence[str] = ()) -> Recalled:
        """Up to ``k`` results for ``query`` among what ``viewer`` may see.
        ``sessions``: the session-index sessions to search too (already
        authorised for this viewer by the caller: its session tree). ``goal``:
        the task's goal, for a turn that returns a tool's result; ``context``: what latest
        words that refer back ("this", "it") refer to (``query.parse``). Each is read
        up to ``max_chars`` (``query.parse``); the agents' wrappers are not
        the user's words (``agent_text``). ``held``: terms that join the query as
        strong ones, each naming a whole thing, one of which every result holds (a
        tool output's identifiers: ``recall_output``); ``held_names``: substrings the
        same way (its dotted names), those few visible memories hold."""
        # "As the store stood then": what was live at ``as_of`` is served, expired since or not
        as_of = time.time() if as_of is None else as_of
        now = as_of
        exclude = tuple(exclude_kinds)
        if not viewer.known or self._nothing_visible(viewer, now, sessions, memories, exclude):
            return Recalled([], 0)  # decided from kept counts, before the query is even parsed
        own = own_words(query)
        if self.config.general_ask and general_ask.general(own[:max_chars]):
            return Recalled([], 0)  # what a concept is, how two differ: the same answer in every project
        wide = self.config.software_asks
        if self.config.edit_ask and edit_ask.mechanical(own[:max_chars], wide):
            return Recalled([], 0)  # a rename, a lint error: the same edit whatever the project decided
        if wide and build_ask.unit_test_said_whole(own[:max_chars]):
            return Recalled([], 0)  # a unit test of named code, its cases said: it follows from the code
        q = queries.parse(own, own_words(goal), max_chars, context, resumes=self.config.resumed)
        if not q and not held and not held_names:
            return Recalled([], 0)
        cfg = self.config
        if len(q.weights) > queries.MAX_TERMS:  # a long message: its most salient terms decide
            n, df = self.memories.doc_freqs(viewer, list(q.weights), now, exclude) if memories else (0, {})
            q = queries.select(q, df, n) if df else replace(q, weights=dict(list(q.weights.items())[:queries.MAX_TERMS]))
        if memories and cfg.family_weight:  # a word's other forms a visible memory holds (approval: approve)
            visible: list[int] = []

            def forms(keys: list[str], prefixes: list[str]) -> tuple[dict[str, int], dict[str, list[str]]]:
                docs, df, completed = self.memories.word_forms(viewer, keys, prefixes, now, exclude)
                visible.append(docs)
                return df, completed

            q = morphology.extend(q, forms, LOOKED_UP - len(q.weights), cfg.family_weight)
            if visible == [0] and not (self.sessions is not None and sessions):
                return Recalled([], 0)  # that read found no memory the viewer may see: no search either
        if held or held_names:  # after the forms: an identifier is looked up as it is written
            q = replace(q, weights={**q.weights, **dict.fromkeys(held, 1.0)}, salient=q.salient | set(held),
                        strong=q.strong | set(held),
                        substrings=queries.interleave(held_names, q.substrings))
        words, subs = list(q.weights), list(q.substrings)
        cands, n_docs, avg, df = self._candidates(viewer, words, subs, now, sessions, memories, exclude)
        sims = None
        if self.vectors is not None:
            cands, sims = self.vectors.extend(viewer, q.text, cands, now, exclude, memories)
        scored = rank.score(cands, q.weights, subs, n_docs, avg, as_of, cfg, vectors=sims, df=df, phrases=q.phrases)
        if held or held_names:  # only what holds one of them is judged (and compared with each other: ``distinct``)
            names = tool_output.rare(tuple("\x00" + n for n in held_names), df, n_docs)
            scored = [s for s in scored if not rank.own_terms(s.cand).isdisjoint(held)
                      or any(n[1:] in s.cand.statement.lower() for n in names)]
        # The floor judges the best candidates by what each matches of the query itself.
        pool = sorted(scored, key=lambda s: (-s.score, s.cand.memory_id))[: max(k * 4, 20)]
        owns = [rank.own_terms(s.cand) for s in pool]
        rank.match(pool, q.weights, subs, df, n_docs, self._own_df(viewer, owns, df, now, exclude, memories), cfg,
                   owns, q.strong, q.focus, q.units, q.anchor)
        need = rank.terms_needed(q.weights, cfg)
        passed = [s for s in pool if rank.passes(s, cfg, need)]
        if q.question:
            passed = rank.question_floor(passed, cfg)
        several = not q.question  # a request, a question with the task around it: about one thing
        ruled = rank.single_out(rank.distinct(passed, cfg, bool(q.focus) or several), cfg, several)
        if self.judge is not None:  # the learned judge decides each candidate, the rules' verdicts among its inputs
            ok, kept_ids = {id(s) for s in passed}, {id(s) for s in ruled}
            rows = judge.features(pool, [id(s) in ok for s in pool], [id(s) in kept_ids for s in pool], q, df,
                                  n_docs, bool(held or held_names))
            ruled = self.judge.keep(pool, rows) + [s for s in passed if s.vector is not None
                                                  and s.vector >= cfg.vector_min and s.match <= 0]
        passed = rank.crowded(rank.novel(ruled, cfg), cfg)
        if cfg.build_ask and not held and build_ask.specified(own[:max_chars]):  # a build said whole: a rule, a value
            passed = [s for s in passed if build_ask.constrains(s.cand.statement) or s.cand.near]
        best = max((s.match for s in passed), default=0.0)
        floor = {id(s.cand) for s in passed if s.match >= cfg.relative_floor * best or s.vector is not None
                 and s.vector >= cfg.vector_min}
        if cfg.prf_docs and scored:  # feedback only reorders what passed the floor
            extra = rank.feedback_terms([s for s in pool if id(s.cand) in floor], q.weights, n_docs, cfg)
            if extra:  # df: candidates
                scored = rank.score(cands, {**q.weights, **extra}, subs, n_docs, avg, as_of, cfg, vectors=sims,
                                    phrases=q.phrases)
        kept = [s for s in scored if id(s.cand) in floor]
        for s in kept:
            if q.temporal and cfg.time_weight and rank.says_when(s.cand.statement):
                s.score *= 1 + cfg.time_weight  # asked when: a statement saying when answers it
            if cfg.question_weight and rank.asks_only(s.cand.statement):
                s.score *= 1 - cfg.question_weight
        kept = rank.answers(kept, scored, cfg.answer_weight)  # a recalled question brings its reply
        return Recalled(rank.mmr(kept, k, cfg.mmr_lambda), len(cands))

    def recall_output(self, viewer: Viewer, query: str, output: str, k: int = 3, as_of: float | None = None,
                      exclude_kinds: Sequence[str] = (), goal: str = "", max_chars: int = 2000,
                      context: str = "", searched: str = "") -> Recalled:
        """The memories a tool's ``output`` points at, for a turn whose newest item is
        that output: what the output points at that the turn's words do not name
        (``tool_output.pointers``: its rare identifiers as strong terms, its dotted and versioned
        names as substrings) joins the turn's query, and only memories holding one of them
        count; then, judged on those alone with its compound names written apart too, the
        memories that also hold a word of the turn's join them — or a word of ``searched``, what
        the agent searched the output for (``tool_output.searched_for``: a grep's pattern). Memories
        only: a session turn naming the same host is not what the tool's output means."""
        as_of = time.time() if as_of is None else as_of
        exclude = tuple(exclude_kinds)
        # no memory to point at (the index's kept counts): the output is not read at all
        if not viewer.known or self.memories.nothing_visible(viewer, as_of, exclude):
            return Recalled([], 0)
        # what the user's words name already, the first recall weighed: the output adds the rest
        named = queries.parse(own_words(query), own_words(goal), max_chars, context,
                              resumes=self.config.resumed).weights
        terms, names, apart = tool_output.pointers(
            output, named, lambda keys: self.memories.doc_freqs(viewer, keys, as_of, exclude), max_chars)
        if not (terms or names or apart):
            return Recalled([], 0)
        got = Recalled([], 0)
        if terms or names:  # with the turn's words: what the output names beside a short request
            got = self.recall(viewer, query, k=k, as_of=as_of, exclude_kinds=exclude, goal=goal,
                              max_chars=max_chars, context=context, held=terms, held_names=names)
        if len(got.items) >= k:
            return got
        # and on what the output points at alone (beside a long request's many words one rare identifier
        # never clears the chance floor), kept when it holds a word of the turn's too
        # (``tool_output.holding_a_turn_word``)
        alone = self.recall(viewer, "", k=k, as_of=as_of, exclude_kinds=exclude, max_chars=max_chars,
                            held=terms, held_names=queries.interleave(names, apart, limit=None))
        seen = {s.cand.memory_id for s in got.items}
        # what the agent searched the output for is a word of the turn too
        asked = {**named, **queries.parse(searched, "", max_chars).weights} if searched.strip() else named
        more = [s for s in tool_output.holding_a_turn_word(alone.items, asked) if s.cand.memory_id not in seen]
        return Recalled((got.items + more)[:k], max(got.candidates, alone.candidates))

    def _nothing_visible(self, viewer: Viewer, now: float, sessions: Sequence[str] | None, memories: bool,
                         exclude_kinds: tuple[str, ...]) -> bool:
        """No session to search and no memory the viewer may see: no query could
        find anything (the memory index keeps its counts per partition)."""
        if self.sessions is not None and sessions:
            return False
        if not memories:
            return True
        return self.memories.nothing_visible(viewer, now, exclude_kinds)

    def _own_df(self, viewer: Viewer, owns: Sequence[set[str]], df: Mapping[str, int], now: float,
                exclude_kinds: tuple[str, ...], memories: bool) -> dict[str, int]:
        """The visible document frequencies of the pooled candidates' own terms
        (the memory index's counts; a term it does not hold counts 0)."""
        terms = set().union(*owns) - set(df)
        if not terms or not memories:
            return {}
        return self.memories.doc_freqs(viewer, sorted(terms), now, exclude_kinds)[1]

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
