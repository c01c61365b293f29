"""The learned judge of recall candidates: inject this memory into this turn, or not.

With ``[filters.recall.rank] judge = true`` it decides, for each candidate the
floor's scoring reached (``rank.match`` set its parts; a candidate sharing no
word with the turn is never offered), whether the turn gets it — instead of the
hand-written ``distinct`` and ``single_out``. Its features (``FEATURES``) are
measures of the match (how far above chance, how many of the turn's words and
how rare, how much of the memory's own rare words the turn covers), of the
candidate among the others (its rank and margin, how many hold the same words,
how many pass the floor) and of the turn's shape (one question, a request with
side remarks, a tool's output); two read the memory's text against the turn's
words: ``phrases`` (the turn's adjacent-word phrases its statement holds) and
``values`` (numbers, identifiers and paths it states that the turn does not).
The floor's own verdicts (``rank.passes``, and what ``distinct``/``single_out``
keep) are two more.

The model is a logistic regression: a dot product over the features and a
cut-off per shape of the turn (``SHAPES``: one plain question, a request, a
tool's output), or for a shape, no cut-off but the rules' own verdict (``None``:
on one-sentence questions no cut-off kept LoCoMo's answers as often as the
rules without letting in as many unrelated memories as the rules do), shipped
as ``recall_judge.json`` in this package and trained by
``bench/train_recall_judge.py`` over the agent turns' labelled halves and
LoCoMo's tuned conversations.
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Sequence

from .rank import idf, specific_term

WEIGHTS_FILE = "recall_judge.json"
FORMAT = 1

FEATURES = (
    "chance",  # how far above the best of chance (deviations, clipped, /4)
    "match",  # rank.match
    "anchors",  # log(1 + distinct specific words of the turn it holds)
    "salient",  # one of them a name, an identifier, a number
    "focused",  # one of them of what the turn asks
    "covers",  # it holds every specific word of the turn any memory holds
    "floor",  # rank.passes
    "rules",  # kept by rank.distinct and rank.single_out
    "cover_query",  # share of the turn's idf mass it holds
    "cover_own",  # share of its own idf mass the turn holds
    "rarest",  # idf of its rarest shared word, over the idf of a word one memory holds
    "commonest",  # idf of its commonest shared word, likewise
    "one_subject",  # one shared word only, held by many memories: log(1 + its df) / log(1 + n)
    "shadowed",  # log(1 + other candidates holding all its shared words)
    "crowd",  # share of the other candidates holding one of its shared words
    "gap",  # its chance less the best other candidate's (clipped, /4)
    "chance_rank",  # log(1 + its place by chance)
    "score_rank",  # log(1 + its place by score)
    "passing",  # log(1 + candidates passing the floor)
    "question",  # the turn is one question (or a search)
    "remarks",  # the turn says more than it asks
    "output",  # a tool output's identifiers are the query (recall_output)
    "query_size",  # log(1 + the turn's specific words)
    "focus_share",  # share of its shared words in what the turn asks
    "lone",  # one shared word, not salient, in a turn that says more than it asks
    "phrases",  # log(1 + the turn's phrases (adjacent words) its statement holds)
    "length",  # log(1 + its terms)
    "values",  # log(1 + its values the turn does not hold: numbers, identifiers, paths)
    "chance_share",  # its chance over the best candidate's (when that is above 0)
    "match_share",  # its match over the best candidate's
    "cover_own_share",  # its cover_own over the best candidate's
    "spread",  # mean share of the visible memories holding its shared words
)

# more of the match never counts against a memory: the trainer keeps these features' weights at 0 or above
MONOTONE = ("chance", "match", "anchors", "floor", "rules", "cover_query", "cover_own", "gap", "phrases",
            "chance_share", "match_share", "cover_own_share")


# the shapes of a turn, each with its own cut-off: what the recall reads (a tool's output, ``recall_output``),
# else one question saying nothing else, else a request (or a question with the task around it)
SHAPES = ("question", "request", "output")
_QUESTION, _REMARKS, _OUTPUT, _RULES = (FEATURES.index(f) for f in ("question", "remarks", "output", "rules"))


def shape(row: Sequence[float]) -> str:
    """The shape of the turn a features row was read from (``SHAPES``)."""
    if row[_OUTPUT]:
        return "output"
    return "question" if row[_QUESTION] and not row[_REMARKS] else "request"


class JudgeError(RuntimeError):
    """The judge's weights are missing or unreadable."""


class Judge:
    def __init__(self, weights: Sequence[float], bias: float, threshold: float = 0.5,
                 meta: Mapping[str, Any] | None = None, thresholds: Mapping[str, float | None] | None = None):
        if len(weights) != len(FEATURES):
            raise JudgeError(f"{len(weights)} weights for {len(FEATURES)} features")
        unknown = set(thresholds or {}) - set(SHAPES)
        if unknown:
            raise JudgeError(f"a cut-off for an unknown shape {sorted(unknown)[0]!r}")
        self.weights = [float(w) for w in weights]
        self.bias = float(bias)
        self.threshold = float(threshold)  # the cut-off of a shape ``thresholds`` does not name
        # a shape's cut-off; None: the rules' verdict stands for that shape
        self.thresholds = {k: None if v is None else float(v) for k, v in (thresholds or {}).items()}
        self.meta = dict(meta or {})

    def cut(self, row: Sequence[float]) -> float | None:
        """The cut-off for a candidate of this row's turn shape (None: the rules decide that shape)."""
        return self.thresholds.get(shape(row), self.threshold)

    def decides(self, row: Sequence[float]) -> bool:
        """Whether the candidate of this features row is kept."""
        cut = self.cut(row)
        return bool(row[_RULES]) if cut is None else self.probability(row) >= cut

    def probability(self, row: Sequence[float]) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, row))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def keep(self, pool: Sequence[Any], rows: Sequence[Sequence[float]]) -> list[Any]:
        """The candidates of ``pool`` to offer (``rows``: their ``features``)."""
        return [s for s, row in zip(pool, rows) if s.match > 0 and self.decides(row)]

    def dumps(self) -> str:
        return json.dumps({"format": FORMAT, "features": list(FEATURES), "weights": self.weights, "bias": self.bias,
                           "threshold": self.threshold, "thresholds": self.thresholds, "meta": self.meta},
                          indent=1, sort_keys=True) + "\n"

    @classmethod
    def loads(cls, raw: str | bytes) -> "Judge":
        try:
            body = json.loads(raw)
            if body.get("format") != FORMAT:
                raise JudgeError(f"unknown format {body.get('format')!r}")
            if list(body["features"]) != list(FEATURES):
                raise JudgeError("its features are not this version's")
            return cls(body["weights"], body["bias"], body["threshold"], body.get("meta"), body.get("thresholds"))
        except JudgeError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise JudgeError(f"unreadable ({type(e).__name__}: {e})") from None


@lru_cache(maxsize=1)
def shipped() -> Judge:
    """The judge shipped with the package (``JudgeError`` naming the file when it is missing or corrupt)."""
    return load(resources.files(__package__).joinpath(WEIGHTS_FILE))


def load(ref: Any) -> Judge:
    """A judge from a weights file (a path or a package resource)."""
    try:
        raw = ref.read_bytes()
    except OSError as e:
        raise JudgeError(f"the recall judge's weights {ref} are missing ({type(e).__name__})") from None
    try:
        return Judge.loads(raw)
    except JudgeError as e:
        raise JudgeError(f"the recall judge's weights {ref}: {e}") from None


# a value a memory states: a number, an identifier with a digit, underscore, dot, slash or inner capital
_VALUE = re.compile(r"\b(?:\d[\w:.,/-]*|[A-Za-z]+(?:[_./:-]\w+)+|[a-z]+[A-Z]\w*|[A-Z]{2,}\w*)")


def features(pool: Sequence[Any], floor: Sequence[bool], rules: Sequence[bool], query: Any,
             df: Mapping[str, int], n_docs: int, output: bool) -> list[list[float]]:
    """One row of ``FEATURES`` per candidate of ``pool`` (``rank.Scored`` after ``rank.match``);
    ``floor``/``rules``: the hand-written verdicts on each; ``query``: the ``query.Query``."""
    n = max(n_docs, 1)
    one = idf(n, 1) or 1.0
    log_n = math.log1p(n)
    by_chance = {id(s): i for i, s in enumerate(sorted(pool, key=lambda s: -s.chance))}
    by_score = {id(s): i for i, s in enumerate(sorted(pool, key=lambda s: -s.score))}
    chances = sorted((s.chance for s in pool), reverse=True)
    passing = math.log1p(sum(floor))
    query_size = math.log1p(sum(1 for t in query.weights if specific_term(t)))
    remarks = bool(query.focus)
    focus = query.focus
    units = query.units or {}
    top_chance = max((s.chance for s in pool), default=0.0)
    top_match = max((s.match for s in pool), default=0.0) or 1.0
    cover_own = [min(1.0, s.got / s.own_mass) if s.own_mass else 0.0 for s in pool]
    top_cover = max(cover_own, default=0.0) or 1.0
    text = " ".join(query.weights).lower() + " " + " ".join(query.substrings).lower()
    rows = []
    for i, (s, ok, kept) in enumerate(zip(pool, floor, rules)):
        words = s.words
        low = s.cand.statement.lower() if query.phrases else ""
        idfs = [idf(n, df.get(w, 0)) for w in words] or [0.0]
        others = [o for o in pool if o is not s and o.words]
        shadowed = sum(1 for o in others if words and words <= o.words)
        crowd = sum(1 for o in others if words & o.words) / max(1, len(others))
        best_other = chances[1] if chances and s.chance == chances[0] and len(chances) > 1 else \
            (chances[0] if chances else 0.0)
        if len(chances) == 1:
            best_other = s.chance - 4.0
        lone_df = df.get(next(iter(words)), 0) if len(words) == 1 else 0
        in_focus = sum(1 for w in words if w in focus or any(units.get(t) == w for t in focus)) if focus else \
            len(words)
        rows.append([
            max(-6.0, min(12.0, s.chance)) / 4.0,
            s.match,
            math.log1p(s.anchors),
            float(s.salient),
            float(s.focused),
            float(s.covers),
            float(ok),
            float(kept),
            min(1.0, s.got / s.q_mass) if s.q_mass else 0.0,
            cover_own[i],
            max(idfs) / one,
            min(idfs) / one,
            math.log1p(lone_df) / log_n if len(words) == 1 else 0.0,
            math.log1p(shadowed),
            crowd,
            max(-3.0, min(3.0, (s.chance - best_other) / 4.0)),
            math.log1p(by_chance[id(s)]),
            math.log1p(by_score[id(s)]),
            passing,
            float(query.question),
            float(remarks),
            float(output),
            query_size,
            in_focus / len(words) if words else 0.0,
            float(len(words) == 1 and not s.salient and remarks),
            math.log1p(sum(1 for p in query.phrases if p in low)),
            math.log1p(s.cand.nterms),
            math.log1p(sum(1 for v in _VALUE.findall(s.cand.statement) if v.lower() not in text)),
            s.chance / top_chance if top_chance > 0 else 0.0,
            s.match / top_match,
            cover_own[i] / top_cover,
            sum(df.get(w, 0) for w in words) / len(words) / n if words else 0.0,
        ])
    return rows
