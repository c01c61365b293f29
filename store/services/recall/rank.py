"""Ranking recall candidates: BM25, optional vectors, decay, MMR, a floor.

Every candidate reaching this module already passed the viewer's visibility
check (the index's WHERE clause), and the statistics BM25 uses — the number
of documents, their average length, each term's document frequency — are
taken over those visible candidates and documents only: a hidden record
changes no score.

Per candidate, in order (each part is reported in the manifest):

- ``lexical``: Okapi BM25 of the query terms over the document's terms,
  divided by the query's ceiling (every term matched at saturation), so it
  reads as "how much of the query this matches", in [0, 1];
- ``vector``: with the embeddings extra on (``embeddings = true``), the
  cosine similarity of the query's and the memory's vectors; fused as
  ``(1 - vector_weight) * lexical + vector_weight * max(0, vector)`` (a
  candidate without a vector keeps its lexical relevance);
- ``decay``: ``0.5 ** (age / half_life)`` with the age counted from the
  query's ``as_of`` back to the memory's ``observed_at`` (1.0 for evergreen
  records and for anything observed after ``as_of``); it scales relevance
  as ``relevance * ((1 - decay_weight) + decay_weight * decay)``, so an old
  but exact memory still beats a fresh vague one;
- ``match`` (the floor): how much of what the memory and the query could
  have in common they do — the idf mass of the query terms the memory holds
  (its neighbours' at ``context_weight``, matched substrings too), over the
  smaller of the query's mass and the memory's own. A long message does not
  lower it: past the memory's size, the message's other words do not count.
  A message's side remarks (the words outside what it asks — its questions
  and requests, ``query.focus_of`` — such as "the CI keeps failing on the
  integration tests") count at ``side_weight`` (1: like the rest, and the
  next rule's "one of them" is off);
- ``chance`` (the floor): how far the idf mass a candidate shares with the
  query lies above what a memory drawn at random from the visible ones
  would share (each term held with the chance df/n: a mean and a
  deviation), in deviations, less ``sqrt(2 ln n)`` (about where the best
  of n random memories lies; n at least ``CHANCE_DOCS``); a common word
  (``GENERIC``) weighs ``generic_weight`` in it and in ``match``. A candidate is
  offered only when its ``chance`` reaches ``chance_min`` (or it holds every
  specific query word any visible memory holds: ``covers``), its ``match`` reaches
  ``min_score`` (0: off), and it holds a strong salient word (a name, an
  identifier, a number) or ``min_terms`` specific words, one of them of
  what the message asks; or, with embeddings, when its cosine reaches
  ``vector_min`` (a paraphrase sharing no word with the query);
- ``relative_chance``: a message that is more than one question (a request,
  side remarks beside its question) keeps only the candidates whose ``chance``
  reaches this share of the best one's (``distinct``); ``question_chance``: a one-sentence
  question the same, at this lower share, for a memory that is not an event of a conversation;
  ``question_match``: such a question offers no such memory whose ``match`` is below this
  (``question_floor``);
- ``single_out``: such a message offers no candidate whose words of it
  another candidate holds too — the message names that other one at least
  as well, and of two holding the same words, neither (``single_out``);
- ``remark_words`` (off by default): a memory holding that many specific words of the side remarks
  only, ``remark_chance`` deviations above chance or more, passes though none is of what is asked
  (``_told``); ``broad_share`` (off by default): a word more than that share of the visible memories
  hold is none of the words a memory shares with the message — not counted toward ``min_terms``,
  the focus, the lead or ``single_out`` (``broad_words``; events of a conversation exempt);
- ``novelty`` (off by default): no candidate whose words of the message one further above chance
  holds all of — beside the more distinct one it adds nothing (``novel``; two holding the same
  words equally far above chance both stay);
- ``resumed`` (off by default): what a message opening "Back to the routing work…" goes back to is of
  what it asks (``query.resumed``), not a side remark;
- ``lead_share``: a memory sharing one plain word with the message (no name, identifier or number)
  is offered only when that word stands in its leading share — its subject, not what it says of
  it (``leads``); events of a conversation are exempt (their neighbours say the rest);
- ``general_ask``: a message asking for general knowledge — what a concept is, how two
  differ, and nothing of the project (``general_ask.general``) — recalls nothing;
- ``edit_ask``: a message asking only for a mechanical edit — a rename, a lint, typo or compile
  error fixed, type hints, and nothing asked nor said of the project (``edit_ask.mechanical``) —
  recalls nothing;
- ``build_ask``: a message asking to build something it specifies whole — no question, nothing of the
  project it points at (``build_ask.specified``) — is offered only memories that state a rule or a value
  the build would keep (``build_ask.constrains``), not one describing the component it names;
- ``software_asks`` (off by default): the mechanical edits said otherwise ("mypy complains in geo.py, fix
  types", a docstring, sorted imports, the formatter; ``edit_ask.mechanical``'s ``wide``) and a unit test
  asked for named code, its cases said and no value of the project pointed at
  (``build_ask.unit_test_said_whole``), recall nothing; and "test" counts as a common word (``SOFTWARE``);
- ``time_weight``: a question asking when (``query``'s ``temporal``: "when
  did…", "what year…", "how long ago…") raises by this share the score of
  each candidate that passed the floor and says when (``says_when``:
  "yesterday", "last week", a weekday, a month, a year);
  ``question_weight`` (off by default) lowers by this share the score of a
  statement that only asks (``asks_only``: its reply holds the answer);
- ``answer_weight``: an event that passed the floor and asks brings its reply,
  the next event of its conversation (``answers``);
- MMR (``mmr_lambda``): greedy selection trading score against the largest
  term-set overlap with what is already selected, so near-duplicates do not
  fill the budget.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from ctxproxy.store.memory_terms import STOPWORDS, stem, token_terms
from ctxproxy.store.term_patterns import WORD

DAY = 86400.0


@dataclass(frozen=True)
class RankConfig:
    """``[filters.recall.rank]``: how candidates are scored (see the module docstring)."""

    k1: float = 1.2  # BM25 term-frequency saturation
    b: float = 0.35  # BM25 length normalisation (short statements: low)
    half_life_days: float = 30.0  # temporal decay from observed_at to the query's as_of
    decay_weight: float = 0.1  # share of relevance that decays (0: no decay, 1: all of it)
    mmr_lambda: float = 0.7  # MMR trade-off: 1 = score only, 0 = diversity only
    min_score: float = 0.0  # relevance floor: the share of what memory and query could share that they do (match)
    relative_floor: float = 0.0  # ...and at least this share of the best candidate's match
    embeddings: bool = False  # fuse vectors of the embeddings extra (ctxproxy[embeddings]); start-up fails without it
    vector_weight: float = 0.1  # fusion weight of the vector similarity (embeddings on)
    vector_min: float = 0.35  # cosine that admits a candidate no query word matched (embeddings on)
    vector_candidates: int = 20  # the most similar visible memories added to the lexical candidates
    prf_docs: int = 0  # pseudo-relevance feedback: expand the query from this many top documents (0: off)
    prf_terms: int = 6  # ...with this many of their terms
    prf_weight: float = 0.3  # ...each weighted this much relative to a query term
    context_weight: float = 0.4  # weight of a neighbouring event's terms in a document (0: own text only)
    phrase_weight: float = 0.5  # weight of a query phrase (adjacent words) found in a statement, against a term's
    min_terms: int = 2  # distinct specific query words a memory must hold, unless it holds a salient one (0: off)
    time_weight: float = 0.4  # a question asking when: the edge of a statement that says when (``says_when``)
    question_weight: float = 0.0  # share of its score a statement that only asks loses (``asks_only``)
    side_weight: float = 0.5  # weight in ``match`` of a message's side remarks (words outside what it asks; 1: off)
    answer_weight: float = 1.1  # a recalled event that asks: its next event gets this share of its score (0: off)
    chance_min: float = 0.6  # how far (deviations) a match must lie above the best chance gives (-inf: off)
    relative_chance: float = 0.7  # a message saying more than it asks: share of the best ``chance`` the others need
    question_chance: float = 0.3  # a one-sentence question: the share of the best ``chance`` a fact needs (0: off)
    question_match: float = 0.13  # ...and the ``match`` a fact needs (0: off)
    general_ask: bool = True  # a message asking what a concept is or how two differ recalls nothing (``general_ask``)
    edit_ask: bool = True  # a message asking only a rename, a lint, typo or compile fix recalls nothing (``edit_ask``)
    build_ask: bool = True  # a build the message specifies whole gets only a memory stating a rule or a value (``build_ask``)
    software_asks: bool = False  # edits said otherwise, a unit test said whole recall nothing; "test" names nothing (off)
    generic_weight: float = 0.5  # weight in ``match`` and ``chance`` of a common word (``GENERIC``, stop words; 1: off)
    family_weight: float = 0.8  # a word's other forms (``morphology``: approval/approve, application/app; 0: off)
    single_out: bool = True  # a message more than one question: no candidate whose words another holds too
    lead_share: float = 0.5  # one plain word shared: it must stand in this leading share of the memory (0: off)
    remark_words: int = 0  # a memory holding this many words of the side remarks only... (0: off; 3 measured)
    remark_chance: float = 2.0  # ...this far above chance passes though none is of what is asked (``passes``)
    broad_share: float = 0.0  # a word more than this share of the visible memories hold singles none out (0: off)
    judge: bool = False  # the learned judge (``judge``) decides each candidate instead of ``distinct``/``single_out``
    novelty: bool = False  # no memory whose words of the message one further above chance holds all of (``novel``)
    resumed: bool = False  # what a message opening "Back to the routing work…" goes back to is of what it asks
    crowd: int = 0  # this many memories or more holding the same words of the message, equally: none offered (0: off)

    def validate(self, path: str) -> None:
        from ctxproxy.config import ConfigError

        checks = (("k1", self.k1 >= 0), ("b", 0 <= self.b <= 1), ("half_life_days", self.half_life_days > 0),
                  ("decay_weight", 0 <= self.decay_weight <= 1), ("mmr_lambda", 0 <= self.mmr_lambda <= 1),
                  ("min_score", 0 <= self.min_score <= 1),
                  ("relative_floor", 0 <= self.relative_floor <= 1), ("vector_weight", 0 <= self.vector_weight <= 1),
                  ("vector_min", -1 <= self.vector_min <= 1), ("vector_candidates", self.vector_candidates >= 0),
                  ("prf_docs", self.prf_docs >= 0), ("prf_terms", self.prf_terms >= 0),
                  ("prf_weight", self.prf_weight >= 0),
                  ("context_weight", 0 <= self.context_weight <= 1), ("phrase_weight", self.phrase_weight >= 0),
                  ("min_terms", self.min_terms >= 0), ("side_weight", 0 <= self.side_weight <= 1),
                  ("time_weight", self.time_weight >= 0), ("question_weight", 0 <= self.question_weight <= 1),
                  ("answer_weight", self.answer_weight >= 0), ("chance_min", self.chance_min == self.chance_min),
                  ("relative_chance", 0 <= self.relative_chance <= 1),
                  ("question_chance", 0 <= self.question_chance <= 1),
                  ("question_match", 0 <= self.question_match <= 1),
                  ("generic_weight", 0 <= self.generic_weight <= 1),
                  ("family_weight", 0 <= self.family_weight <= 1), ("lead_share", 0 <= self.lead_share <= 1),
                  ("remark_words", self.remark_words >= 0), ("remark_chance", self.remark_chance == self.remark_chance),
                  ("broad_share", 0 <= self.broad_share <= 1), ("crowd", self.crowd >= 0))
        for key, ok in checks:
            if not ok:
                raise ConfigError(f"{path}.{key}: out of range ({getattr(self, key)!r})")
        if self.judge:
            from . import judge

            try:
                judge.shipped()
            except judge.JudgeError as e:
                raise ConfigError(f"{path}.judge: {e}") from None
        if self.embeddings:
            from .embeddings import missing

            problem = missing()
            if problem:
                raise ConfigError(f"{path}.embeddings: {problem}")


@dataclass(slots=True)
class Scored:
    cand: Any  # store.memory_index.Candidate (or a session hit of the same shape)
    lexical: float = 0.0
    vector: float | None = None
    decay: float = 1.0
    relevance: float = 0.0
    score: float = 0.0
    mmr: float = 0.0
    match: float = 0.0
    anchors: int = 0  # distinct specific query words (or substrings) it holds (``match``)
    focused: bool = True  # ...one of them of what the message asks (``query.focus_of``)
    aside: bool = False  # ...all of them in its side remarks (and of what latest words referring back ask)
    salient: bool = False  # ...one of them salient: an identifier, path, long number, name, quoted string
    chance: float = 0.0  # how far its match is above what a random visible memory's would be, in deviations
    covers: bool = False  # it holds every specific query word (and substring) any visible memory holds
    lead: bool = True  # one of the words it holds stands in its leading share (its subject: ``leads``)
    words: frozenset = frozenset()  # the specific words of the message it holds (one per word: ``units``)
    got: float = 0.0  # the idf mass of the message it holds (``match``'s numerator)
    q_mass: float = 0.0  # ...the message's whole mass
    own_mass: float = 0.0  # ...and its own terms' mass
    termset: frozenset = field(default_factory=frozenset)

    def parts(self) -> dict[str, float]:
        out = {"lexical": round(self.lexical, 4), "match": round(self.match, 4), "decay": round(self.decay, 4),
               "mmr": round(self.mmr, 4)}
        if self.vector is not None:
            out["vector"] = round(self.vector, 4)
        return out


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


@lru_cache(maxsize=65536)
def _idf(n_docs: int, df: int) -> float:
    return idf(n_docs, df)


def bm25(cands: Sequence[Any], weights: Mapping[str, float], substrings: Sequence[str], n_docs: int,
         avg_len: float, cfg: RankConfig, df: Mapping[str, int] | None = None,
         phrases: Sequence[str] = ()) -> tuple[list[float], float]:
    """BM25 of each candidate for the weighted query terms (and substrings,
    counted in the raw statement) and the query's ceiling. A document's terms are its own plus its neighbours'
    (``ctx``) at ``context_weight`` (BM25F-style: weighted frequencies and
    length). Document frequencies are counted among the candidates: they are
    every visible document holding any query term. ``avg_len`` is the
    weighted average length. ``df``: document frequencies the index counted
    among all visible documents (when it passed on only the best of them).
    ``phrases`` (adjacent query words) count like substrings, at ``phrase_weight``."""
    cw = cfg.context_weight
    # Counted with str.count on " term " in the space-joined terms: C speed, and
    # only for the query's terms (a candidate's full term counts are never built).
    own = [" " + c.terms + " " for c in cands]
    ctx = [" " + c.ctx + " " if cw and c.ctx else "" for c in cands]
    tfs: dict[str, list[float]] = {}
    for t in weights:
        needle = " " + t + " "
        tfs[t] = [o.count(needle) + (cw * x.count(needle) if x else 0.0) for o, x in zip(own, ctx)]
    subs = [s.lower() for s in substrings]
    phrases = [p for p in phrases if p not in subs] if cfg.phrase_weight else []
    lowered = [c.statement.lower() for c in cands] if subs or phrases else []
    for sub in subs + phrases:
        tfs["\x00" + sub] = [low.count(sub) for low in lowered]
    n_docs = max(n_docs, len(cands), 1)
    avg_len = avg_len or 1.0
    k1, b = cfg.k1, cfg.b
    qw = {**weights, **{"\x00" + p: cfg.phrase_weight for p in phrases}, **{"\x00" + sub: 1.0 for sub in subs}}
    idfs = {t: idf(n_docs, df[t] if df is not None and t in df else sum(1 for f in tfs[t] if f)) * qw[t]
            for t in tfs}
    ceiling = sum(idfs.values()) * (k1 + 1) or 1.0
    scores = []
    for i, cand in enumerate(cands):
        norm = k1 * (1 - b + b * ((cand.nterms + cw * cand.nctx) or 1) / avg_len)
        s = 0.0
        for t, w in idfs.items():
            f = tfs[t][i]
            if f:
                s += w * f * (k1 + 1) / (f + norm)
        scores.append(s)
    return scores, ceiling


def decay(observed_at: float, as_of: float, evergreen: bool, half_life_days: float) -> float:
    if evergreen or not observed_at:
        return 1.0
    age = max(0.0, as_of - observed_at) / DAY
    return 0.5 ** (age / half_life_days)


def feedback_terms(scored: Sequence[Scored], query: Mapping[str, float], n_docs: int, cfg: RankConfig
                   ) -> dict[str, float]:
    """Pseudo-relevance feedback: the terms that weigh most (tf·idf) in the
    top documents above the floor and not in the query, with ``prf_weight``
    (document frequencies among the candidates)."""
    top = [s for s in sorted(scored, key=lambda s: -s.score) if s.relevance >= cfg.min_score][: cfg.prf_docs]
    if cfg.prf_docs <= 0 or cfg.prf_terms <= 0 or not top:
        return {}
    df: Counter = Counter()
    for s in scored:
        df.update(set(s.cand.terms.split()))
    pool: Counter = Counter()
    for s in top:
        for t, f in Counter(s.cand.terms.split()).items():
            if t not in query and len(t) > 2 and not t.isdigit():
                pool[t] += f * idf(n_docs, df[t])
    return {t: cfg.prf_weight for t, _ in pool.most_common(cfg.prf_terms)}


def score(cands: Sequence[Any], weights: Mapping[str, float], substrings: Sequence[str], n_docs: int,
          avg_len: float, as_of: float, cfg: RankConfig, vectors: Sequence[float | None] | None = None,
          df: Mapping[str, int] | None = None, phrases: Sequence[str] = ()) -> list[Scored]:
    """``vectors``: each candidate's cosine to the query (None: no vector)."""
    lex, ceiling = bm25(cands, weights, substrings, n_docs, avg_len, cfg, df, phrases)
    out = []
    w = cfg.vector_weight
    for i, cand in enumerate(cands):
        s = Scored(cand, lexical=min(1.0, lex[i] / ceiling))
        s.vector = vectors[i] if vectors is not None else None
        s.relevance = s.lexical if s.vector is None else (1 - w) * s.lexical + w * max(0.0, s.vector)
        s.decay = decay(cand.observed_at, as_of, cand.evergreen, cfg.half_life_days)
        s.score = s.relevance * ((1 - cfg.decay_weight) + cfg.decay_weight * s.decay)
        out.append(s)
    return out


STOP_TERMS = frozenset(STOPWORDS) | frozenset(stem(w) for w in STOPWORDS)
# The most common words of general English (verbs, nouns, adjectives), and of any request about
# software (the last lines: a source file's extension names the language of the whole repository, not
# a subject). A memory that shares only these with a message shares no subject with it.
_COMMON = """
able add ago allow also always another answer anyone anything appear area ask away back bad become begin
believe best better big bring build buy call came case change check come consider continue could cut day
decide different done early easy else end enough even ever every example expect fact far feel few find
fine first follow form friend full get give go going good got great group hand happen hard help high hold
home hope idea important include keep kind know large last late later lead learn least leave less let
life like line little live long look lose lot love made make many may mean meet might mind minute moment
month more move much must name need never new next nice night nothing now number offer often okay old
once one open order other part pass people per perhaps person place play point possible pretty probably
problem put quite rather read ready real really reason remember right run said same saw say second see
seem set several shall show side since small someone something sometimes soon sort start state still stop
sure take talk tell thank thanks thing think though thought three today together told took toward try
turn two under understand until upon use used using usual usually very want way week well went whether
while whole why without word work world would write wrong year yes yet
bug code config data error file fix function issue log script service setting user value
py pyi js jsx mjs ts tsx kt rs rb
"""
GENERIC = frozenset(w for word in _COMMON.split() for w in (word, stem(word)))
# How the work stands ("the test is failing", "lint fails"): a word of every report of a broken build, not
# of its subject. Common, so it names no subject; still counted among the words a message asks with.
STATE = frozenset(stem(w) for w in ("fail", "failure"))
GENERIC = GENERIC | STATE
# With ``software_asks``, words of any request about software that the list above keeps specific ("the tests
# fail", "why is this test flaky?"): they name no memory about load or soak tests.
SOFTWARE = frozenset(w for word in ("test", "tests") for w in (word, stem(word)))


def own_terms(cand: Any) -> set[str]:
    """A candidate's distinct content terms (stop words and single letters out)."""
    return {t for t in cand.terms.split() if len(t) > 1 and t not in STOP_TERMS}


def match(scored: Sequence[Scored], weights: Mapping[str, float], substrings: Sequence[str],
          df: Mapping[str, int], n_docs: int, term_df: Mapping[str, int], cfg: RankConfig,
          owns: Sequence[set[str]] | None = None, salient: frozenset[str] = frozenset(),
          focus: frozenset[str] = frozenset(), units: Mapping[str, str] | None = None,
          anchor: frozenset[str] = frozenset()) -> None:
    """Set each candidate's ``match`` (see the module docstring): the idf mass of
    the query terms it holds (its neighbours' at ``context_weight``; substrings found in its statement) over the smaller
    of the query's mass and its own terms' mass. ``df``: the query keys'
    visible document frequencies; ``term_df``: its own terms'; ``owns``: each
    candidate's ``own_terms`` when the caller has them. ``focus``: the terms of
    what the message asks (``query.focus_of``; empty: all of it); the others
    weigh ``side_weight``, and ``focused`` says whether it holds one of them. ``units``: the
    keys that are one word of the message (``query.units_of``: an identifier's whole, its parts,
    its substring): a memory holding several of them holds that word once — its best key counts,
    in ``match``, in ``chance`` (whose null draws such a word as one, its parts nested) and
    among the distinct words it holds. ``anchor`` (a message that refers back, its words
    before joined): a memory holding none of these is about what was said before only, and
    fails the subject test."""
    n = max(n_docs, 1)
    # A query word no memory holds still counts: it says the message is about something else.
    # (The query's weights order the candidates; whether one is relevant does not depend on them.)
    side = cfg.side_weight
    focus = focus if side < 1 else frozenset()  # 1: side remarks count like the rest (the rule off)
    # A word of common English (``use``, ``first``, ``keep``) held by one of a few memories reads as rare as
    # a name; at full weight each adds to what chance gives any memory as much as a subject word does.
    gw = cfg.generic_weight
    plain = SOFTWARE if cfg.software_asks else frozenset()  # "test": a word of any request about software
    q = {t: _idf(n, df.get(t, 0)) * (1.0 if not focus or t in focus else side)
         * (1.0 if specific_term(t) and t not in plain else gw) for t in weights}
    subs = {sub.lower(): _idf(n, df.get("\x00" + sub.lower(), 0)) for sub in substrings}
    q_mass = sum(q.values()) + sum(subs.values())
    if q_mass <= 0:
        return
    cw = cfg.context_weight
    specific = {t for t in q if specific_term(t) and t not in plain}
    # What a memory drawn at random from the visible ones would hold of the query: each term (or
    # substring) with the chance df/n that it does; its mean and deviation.
    # (A caller with few memories is measured against at least ``CHANCE_DOCS``: one memory holding
    # every word of its own is no evidence that a word of it is common.)
    pool = max(n, CHANCE_DOCS)
    units = units or {}
    keyed = [(t, v, min(1.0, df.get(t, 0) / pool)) for t, v in q.items()] + \
        [("\x00" + sub, v, min(1.0, df.get("\x00" + sub, 0) / pool)) for sub, v in subs.items()]
    by_unit: dict[str, list[tuple[float, float]]] = {}
    for key, v, p in keyed:
        by_unit.setdefault(units.get(key, key), []).append((v, p))
    mean = var = 0.0
    for draws in by_unit.values():  # one word: a random memory holds its best key it holds (parts nested)
        held_p = m1 = m2 = 0.0
        for v, p in sorted(draws, key=lambda d: d[1]):
            step = max(0.0, p - held_p)
            held_p = max(held_p, p)
            m1, m2 = m1 + v * step, m2 + v * v * step
        mean, var = mean + m1, var + max(0.0, m2 - m1 * m1)
    dev = math.sqrt(var) or 1.0
    best_by_chance = math.sqrt(2 * math.log(pool))  # the best of ``pool`` such draws: about this far above the mean
    known = {t for t in specific if df.get(t, 0) > 0}
    broad = broad_words(specific, df, n_docs, cfg)
    known_subs = {sub for sub in subs if df.get("\x00" + sub, 0) > 0}
    for i, s in enumerate(scored):
        own = owns[i] if owns is not None else own_terms(s.cand)
        near = set(s.cand.ctx.split()) if cw and s.cand.ctx else ()
        best: dict[str, float] = {}  # per word of the message, the most the memory holds of it
        for t, v in q.items():
            got_t = v if t in own else cw * v if t in near else 0.0
            if got_t:
                u = units.get(t, t)
                best[u] = max(best.get(u, 0.0), got_t)
        held = specific & own
        if held:
            held -= set(_date_terms(s.cand.observed_at))  # the month and year it was observed: not its words
        if not s.cand.near:  # an event: the speaker's name is in half its conversation and still says who
            held -= broad
        s.salient = bool(held & salient)
        low = s.cand.statement.lower() if subs else ""
        found = [sub for sub in subs if sub in low]
        for sub in found:
            u = units.get("\x00" + sub, "\x00" + sub)
            best[u] = max(best.get(u, 0.0), subs[sub])
        got = sum(best.values())
        s.got, s.q_mass = got, q_mass
        s.salient = s.salient or any(not sub.isalpha() for sub in found)  # a quoted plain word is a word
        s.words = frozenset({units.get(t, t) for t in held} | {units.get("\x00" + sub, "\x00" + sub)
                                                                 for sub in found})
        s.anchors = len(s.words)
        s.focused = not focus or bool(held & focus)
        s.aside = not s.focused
        if anchor and not held & anchor:
            s.focused = s.salient = s.aside = False
        s.chance = (got - mean) / dev - best_by_chance
        if cfg.lead_share and held:
            s.lead = bool(held & leads(s.cand.statement, cfg.lead_share))
        s.covers = bool(known or known_subs) and known <= own and all(sub in low for sub in known_subs)
        if got <= 0:
            s.match = 0.0
            continue
        own_mass = sum(_idf(n, term_df[t] if t in term_df else df.get(t, 0)) for t in own) or q_mass
        s.own_mass = own_mass
        s.match = min(1.0, got / min(q_mass, own_mass))


def passes(s: Scored, cfg: RankConfig, need: int | None = None) -> bool:
    """The floor: a match well above chance (``chance_min``; or all the memories know of the query), enough of
    what memory and query could share (``min_score``) — and of it, a salient word or ``need``
    distinct specific ones (``min_terms``, fewer when the query has fewer), one of what the
    message asks (not only its side remarks) — or (embeddings on) enough of its meaning."""
    if s.vector is not None and s.vector >= cfg.vector_min:
        return True
    need = cfg.min_terms if need is None else need
    if s.anchors <= LEAD_WORDS and not s.salient and not s.lead and not s.cand.near:
        return False  # one plain word of what it says of its subject, not the subject: a coincidence
    if s.chance < cfg.chance_min and not s.covers:  # no better than chance, nor all the memories know of the query
        return False
    return s.match >= cfg.min_score and (s.salient or s.anchors >= need and (s.focused or _told(s, cfg)))


def _told(s: Scored, cfg: RankConfig) -> bool:
    """Whether a memory the side remarks alone name is their subject (``remark_words``): many of their
    specific words, together far above chance ("why did fleetmgr kill gs-euw-0412?? it only froze for
    like 10s…" and the heartbeat fact) — the ask after a told story ("Why?", "is that intended?")
    names too little of its own."""
    return bool(cfg.remark_words) and s.aside and s.anchors >= cfg.remark_words and s.chance >= cfg.remark_chance


def distinct(passed: Sequence[Scored], cfg: RankConfig, remarks: bool) -> list[Scored]:
    """Of the candidates that passed the floor, those whose ``chance`` reaches ``relative_chance``
    of the best one's — when the message is more than one question (``remarks``: a request, side
    remarks, a pasted log, the task around the question). Such a message gives many chances for a memory to
    share a few of its words; a memory far less distinct than the best one shared the extra, not
    the subject. A one-sentence question keeps those reaching ``question_chance`` of the best one's
    (a fact a few deviations above chance beside one many above it shares a word, not the subject),
    one holding a name of the question the best one does not (it answers another part of it), one
    the vectors admitted (a paraphrase),
    and every event of a conversation that passed (``near``: its neighbours say the rest, so
    several events can each answer part of it). One that holds all the memories know of the query stays."""
    top = max((s.chance for s in passed), default=0.0)
    share = cfg.relative_chance if remarks else cfg.question_chance
    if share <= 0 or top <= 0:
        return list(passed)
    if remarks:
        return [s for s in passed if s.chance >= share * top or s.covers and s.chance >= cfg.chance_min]
    best = max(passed, key=lambda s: s.chance).words
    return [s for s in passed if s.chance >= share * top or s.cand.near or s.salient and not s.words <= best
            or _by_meaning(s, cfg) or s.covers and s.chance >= cfg.chance_min]


def question_floor(passed: Sequence[Scored], cfg: RankConfig) -> list[Scored]:
    """Of the candidates that passed, those a one-sentence question matches by ``question_match`` at
    least — its few words are its whole subject, so a fact holding a small share of what it could
    share with them shares a word, not the subject — every memory the vectors admitted (a
    paraphrase: its words need share nothing), every event of a conversation (``near``:
    the question may match the rest of its answer in its neighbours), and every memory holding all
    the memories know of the question that is no more than chance gives (``covers``: a word many
    memories hold is the question's whole subject, and each of them is about it; the shorter
    ones match it by a larger share, not the more relevant)."""
    if cfg.question_match <= 0:
        return list(passed)
    return [s for s in passed if s.match >= cfg.question_match or s.cand.near or _by_meaning(s, cfg)
            or s.covers and s.chance < cfg.chance_min]


def _by_meaning(s: Scored, cfg: RankConfig) -> bool:
    """Whether the vectors admitted it (embeddings on): a paraphrase, whatever its words share."""
    return s.vector is not None and s.vector >= cfg.vector_min


def single_out(passed: Sequence[Scored], cfg: RankConfig, several: bool) -> list[Scored]:
    """Of the candidates that passed, those the message's words single out — when it is more
    than one question (``several``: a request, a question with the task around it: about one
    thing). A candidate whose words of the message another candidate also holds, with as many
    or more, is not offered: the message names that other one at least as well, and when both
    hold the same words it names neither ("fix the failing DST test": three memories about
    tests, none about DST). A one-sentence question, or a search of one line that asks
    nothing ("Kestrel"), keeps what passed: several memories may each answer a part of it."""
    if not several or not cfg.single_out:
        return list(passed)
    return [s for s in passed if not s.words or not any(o is not s and s.words <= o.words for o in passed)]


def novel(passed: Sequence[Scored], cfg: RankConfig) -> list[Scored]:
    """Of the candidates that passed, those adding a word of the message to what a more distinct one
    holds (``novelty``): none whose words of the message a candidate further above chance holds all
    of ("where is listing price max checked": the resale cap holds "listing" and "price" and lies
    further above chance; a notifications fact holding "list" only adds nothing). Two holding the
    same words equally far above chance stay: the message cannot tell which of the two it names.
    Events of a conversation stay (``near``: their neighbours say the rest), and so does a memory
    the vectors admitted (a paraphrase need hold no word)."""
    if not cfg.novelty or len(passed) < 2:
        return list(passed)
    return [s for s in passed if s.cand.near or _by_meaning(s, cfg)
            or not any(s.words <= o.words and s.chance < o.chance for o in passed)]


def crowded(passed: Sequence[Scored], cfg: RankConfig) -> list[Scored]:
    """Of the candidates that passed, those not among ``crowd`` or more holding the very same words of the
    message equally far above chance ("mypy complaining in kiosk sync types, fix": three kiosk memories
    on "kiosk" alone) — the words name a topic many memories are about, not one of them. Events of a
    conversation and what the vectors admitted stay."""
    if not cfg.crowd or len(passed) < cfg.crowd:
        return list(passed)
    same = Counter((s.words, round(s.chance, 6)) for s in passed if s.words)
    return [s for s in passed if s.cand.near or _by_meaning(s, cfg) or not s.words
            or same[(s.words, round(s.chance, 6))] < cfg.crowd]


def broad_words(terms: Iterable[str], df: Mapping[str, int], n_docs: int, cfg: RankConfig) -> set[str]:
    """Of ``terms``, those more than ``broad_share`` of the visible memories hold (counted against
    ``CHANCE_DOCS`` at least): the project's own subject ("holds", "patron" in a library's memories)
    names none of them, so it neither singles one out nor counts among the words a memory shares."""
    if not cfg.broad_share:
        return set()
    cut = cfg.broad_share * max(n_docs, CHANCE_DOCS)
    return {t for t in terms if df.get(t, 0) > cut}


def terms_needed(weights: Mapping[str, float], cfg: RankConfig) -> int:
    """One per ``PER_TERM`` specific words of the message, up to ``min_terms``, and one at
    least: a question ("which Postgres instance backs payments?") is about each of its few
    words, while in a long request one shared word is as likely a coincidence as a subject;
    a message of common words only ("what has to happen first?") names no subject to recall."""
    if cfg.min_terms <= 0:
        return 0
    plain = SOFTWARE if cfg.software_asks else frozenset()
    n = sum(1 for t in weights if specific_term(t) and t not in plain or t in STATE)
    return max(1, min(cfg.min_terms, -(-n // PER_TERM)))


PER_TERM = 4
LEAD_WORDS = 1  # a memory sharing this many plain words or fewer must share its subject (``leads``)


@lru_cache(maxsize=8192)
def leads(statement: str, share: float) -> frozenset[str]:
    """The terms of ``statement``'s leading ``share`` of its content words (at least its first
    two): what a statement names first is what it is about ("The waitlist promoter processes at
    most 250 promotions per tick"), what follows is what it says of it ("…and ticks every 20
    seconds"). A message sharing one plain word with it shares its subject only when the word
    stands there; one in what it says of another subject ("Soil lab results … are imported into
    the soil_samples table" and "the big telemetry table", "Grade export uploads to the registrar
    SFTP host" and "blocked registering") is a coincidence of words."""
    words = [ts for ts in (tuple(t for t in token_terms(m.group()) if t not in STOP_TERMS and len(t) > 1)
                           for m in WORD.finditer(statement)) if ts]
    cut = max(2, math.ceil(share * len(words)))
    return frozenset(t for ts in words[:cut] for t in ts)


CHANCE_DOCS = 20  # the fewest memories the chance of a match is measured against


def specific_term(t: str) -> bool:
    """A word that can say what a text is about: not a stop word, not one of
    the most common words of English (``use``, ``need``, ``time``), not a
    number of one or two digits (``12`` of a timestamp)."""
    return len(t) > 1 and t not in STOP_TERMS and t not in GENERIC and not (t.isdigit() and len(t) < 3)


@lru_cache(maxsize=4096)
def _date_terms(observed: float) -> tuple[str, ...]:
    from ctxproxy.store.memory_index import date_terms

    return tuple(date_terms(observed)) if observed else ()


_MONTHS = "january february march april may june july august september october november december"
_WHEN = re.compile(r"\b(?:yesterday|today|tonight|tomorrow|ago|(?:last|next|this|past|coming) (?:week|weekend|month|"
                   r"year|night|morning|summer|winter|spring|fall|autumn|\w+day)|(?:mon|tues|wednes|thurs|fri|satur|"
                   r"sun)day|" + "|".join(_MONTHS.split()) + r"|(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)|weekend)\b", re.I)


def says_when(statement: str) -> bool:
    """Whether a statement says when something happened ("yesterday", "last week", "in May", 2023)."""
    return bool(_WHEN.search(statement))


_CAPTION = re.compile(r"\s*\[[^\]]*\]\s*$")


def asks_only(statement: str) -> bool:
    """Whether a statement ends in a question ("How long have you been married?"): what it asks
    is answered elsewhere (the reply), not in it."""
    return _CAPTION.sub("", statement).rstrip().endswith("?")


def answers(kept: Sequence[Scored], scored: Sequence[Scored], weight: float) -> list[Scored]:
    """``kept`` with the reply to each event that asks: a question's next event in its
    conversation (the neighbour of the same thread right after it, in the index's
    order: observed_at, then the order written) scores ``weight`` times the question,
    if that is more than its own score — joining ``kept`` when its own words did not
    pass the floor: the question's did, and the reply is what answers it."""
    if weight <= 0:
        return list(kept)
    by_doc = {s.cand.doc: s for s in scored if s.cand.source == "memory" and s.cand.doc}
    out = {id(s): s for s in kept}
    for q in kept:
        c = q.cand
        if not c.near or not asks_only(c.statement):
            continue
        after = [by_doc[d] for d in map(int, c.near.split()) if d in by_doc
                 and (by_doc[d].cand.observed_at, d) > (c.observed_at, c.doc)]
        if not after:
            continue
        reply = min(after, key=lambda s: (s.cand.observed_at, s.cand.doc))
        reply.score = max(reply.score, q.score * weight)
        out[id(reply)] = reply
    return list(out.values())


def mmr(scored: Sequence[Scored], k: int, lam: float) -> list[Scored]:
    """Greedy maximal marginal relevance over the best-scored (scores scaled
    to the top one; similarity = term-set Jaccard)."""
    pool = sorted(scored, key=lambda s: (-s.score, s.cand.memory_id))[: max(k * 4, 20)]
    if not pool:
        return []
    for s in pool:
        s.termset = frozenset(s.cand.terms.split())
    top = pool[0].score or 1.0
    chosen: list[Scored] = []
    while pool and len(chosen) < k:
        best, best_value = 0, -math.inf
        for i, s in enumerate(pool):
            sim = max((_jaccard(s.termset, c.termset) for c in chosen), default=0.0)
            value = lam * (s.score / top) - (1 - lam) * sim
            if value > best_value:
                best, best_value = i, value
        pick = pool.pop(best)
        pick.mmr = best_value
        chosen.append(pick)
    return chosen


def _jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)
