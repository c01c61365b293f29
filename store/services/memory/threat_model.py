"""The memory gate's learned signal: a linear model over the wording of a statement.

The rule table explains what it refuses; it also only knows the phrasings it
was written for. This model catches new wording of the same intents — another
language, a setup step that plants a backdoor, a "memory update" that claims an
authority — from the character and word n-grams of the normalised text and
the word classes they hold.

- Features: the text as ``threats.normalise`` leaves it (NFKC, case folding),
  newlines as spaces, digits as ``0``; every character 3- and 4-gram of it,
  and 2-grams when it has CJK characters (Chinese and Japanese words are one
  or two characters, and need no word splitting this way), every
  pair of adjacent words, and the word classes of ``threat_lexicon`` present
  (an address, an overturned instruction, a send, a secret, a destination...)
  alone, in pairs and in triples: the n-grams learn known wording, the classes
  carry an intent to wording and languages the dev texts did not have. A model
  file trained with moods (``"mood": true``) also counts ``threat_mood``'s
  sentence moods among the classes (an imperative, a check waived, a standing
  duty...), so an order and a fact naming the same setting differ.
- Score: logistic regression, ``sigmoid(bias + Σ weight(feature) · scale)``
  with ``scale = 1/sqrt(max(features, evidence_floor))``: a short text has
  few n-grams, and the floor keeps a handful of them from deciding alone ("A
  note to delete." is not an order because "delete" weighs toward one).
- Segments: the whole statement, each of its sentences or clauses when it has
  more than one, and for a statement longer than ``_WINDOW`` characters its
  half-overlapping windows; the highest score counts, so one injected
  sentence inside a benign note is not diluted by the rest. A model file
  trained so (``"background": true``) reads a window without the text's
  background, the features in more than half of its windows: a note's own
  vocabulary, repeated throughout, does not dilute the one passage that
  differs either.
- Threshold: one cut-off, and a lower one per script (``script_of``: kana,
  Han, Cyrillic) where every language's clean dev text written in it allows
  it: a Russian or Japanese order is not held to the cut-off that the
  hardest French clean counterpart set. A model file with language cut-offs
  (``lang_thresholds``) gives Latin-script text one per language too
  (``language_of``: English, German, Spanish, French from their commonest
  words), never above the one cut-off; text whose language is not clear
  keeps the one cut-off.
- Weights and thresholds ship in ``threat_model.json.gz`` beside this module,
  trained by ``bench/train_gate.py`` (numpy, at training time only). Loading
  and scoring are pure Python: one dict lookup per feature.

Pure, no I/O after import; never raises on a ``str``.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import re
from array import array
from importlib import resources
from collections import Counter
from itertools import chain, combinations, repeat
from typing import NamedTuple

from . import threat_lexicon, threat_mood, threat_structure
from .literal_gate import gram_slices

MODEL_FILE = "threat_model.json.gz"
_CHAR_SIZES = (2, 3, 4)  # 2-grams only for text with CJK characters
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WINDOW = 400         # characters per window for long statements
_MAX_CHARS = 20_000   # a longer statement is scored on its first characters only
_DIGITS = re.compile(r"\d")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
_PAIR = "\x01"        # word-pair features live in their own namespace
_SKIP = "\x04"        # and pairs of words one word apart ("skip the hooks" / "skip all the hooks") in theirs
_CLASS = "\x03"       # and word-class features in theirs
# Sentence and clause ends (on NFKC text, where CJK "！？；：" are already ASCII): ". ! ? ; :" followed by a
# space or by a CJK character, "。", line breaks.
_CLAUSE = re.compile(r"(?<=[.!?;:])(?:\s+|(?=[\u3040-\u30ff\u3400-\u9fff]))|[。\n]+\s*")
_MIN_SEGMENT = 8      # characters; a shorter clause is only scored as part of the whole
_MAX_SEGMENTS = 40
_BACKGROUND_WINDOWS = 4  # windows a text needs before it has a background of its own (window_features)
FORMAT = 2


def text_of(folded: str) -> str:
    """What the n-grams are taken from: newlines and runs of spaces as one space, digits as 0."""
    return _DIGITS.sub("0", _SPACES.sub(" ", folded)).strip()


def _grams(t: str) -> set[str]:
    """Character 3- and 4-grams; 2-grams too when the text has CJK (a word there is one or two characters)."""
    sizes = _CHAR_SIZES if _CJK.search(t) else _CHAR_SIZES[1:]
    # built in one pass in this order, so the set (and the order its weights are summed in) is always the same
    return set(map(t.__getitem__, chain.from_iterable(gram_slices(len(t), k) for k in sizes)))


def _pairs(out: set[str], words: list[str], skip: bool) -> set[str]:
    """``out`` with the adjacent word pairs of ``words``, and with ``skip`` the pairs one word apart (an
    order keeps its verb and object when an author puts another word between them)."""
    out.update(f"{_PAIR}{a} {b}" for a, b in zip(words, words[1:]))
    if skip:
        out.update(f"{_SKIP}{a} {b}" for a, b in zip(words, words[2:]))
    return out


def _with_classes(out: set[str], found: set[str]) -> set[str]:
    names = sorted(found)
    out.update(f"{_CLASS}{c}" for c in names)
    out.update(f"{_CLASS}{a}+{b}" for a, b in combinations(names, 2))
    out.update(f"{_CLASS}{a}+{b}+{c}" for a, b, c in combinations(names, 3))
    return out


def _classes(t: str, words: list[str], grams: set[str], mood: bool) -> set[str]:
    found = threat_lexicon.classes(t, words, grams)
    return found | threat_mood.moods(t) if mood else found


def _crossed(out: set[str], classes: set[str], kinds: set[str] | None) -> set[str]:
    """``out`` with the order x object crosses of ``threat_structure`` (``kinds`` None: a model without them)."""
    if kinds is not None:
        out |= threat_structure.crosses(classes | kinds)
    return out


def features(folded: str, mood: bool = True, structure: bool = False, skip: bool = False) -> set[str]:
    """The features of one piece of text (already NFKC-normalised and case-folded): its character
    n-grams, word pairs (with ``skip``, also the pairs one word apart), and the word classes of
    ``threat_lexicon`` it holds (with the moods of ``threat_mood`` when ``mood``), alone, in pairs and in
    triples; with ``structure``, the order x object crosses of ``threat_structure``."""
    t = f" {text_of(folded)} "
    out = _grams(t)
    words = _WORD.findall(t)
    _pairs(out, words, skip)
    found = _classes(t, words, out, mood)
    return _crossed(_with_classes(out, found), found, threat_structure.kinds(t) if structure else None)


def pieces(folded: str) -> list[str]:
    """``folded`` cut after each sentence or clause end (``_CLAUSE``); the pieces join back to it."""
    out, start = [], 0
    for m in _CLAUSE.finditer(folded):
        if m.end() > start:
            out.append(folded[start:m.end()])
            start = m.end()
    if start < len(folded):
        out.append(folded[start:])
    return out


def segment_features(folded: str, mood: bool = True, structure: bool = False, skip: bool = False,
                     background: bool = False) -> list[set[str]]:
    """The feature sets the gate scores, whole text first: the whole (its clauses joined by one
    space), each clause of at least ``_MIN_SEGMENT`` characters when there are two or more, and for a
    text longer than ``_WINDOW * 3 / 2`` characters its half-overlapping windows (with ``background``,
    each without the text's background: ``window_features``). The whole is built from its clauses'
    features plus what spans each join, so a text is read once."""
    folded = folded[:_MAX_CHARS]
    texts = [t for t in (text_of(p) for p in pieces(folded)) if t]
    if len(texts) <= 1:
        return [features(folded, mood, structure, skip)] + window_features(folded, mood, structure, skip, background)
    whole: set[str] = set()
    classes: set[str] = set()
    # object kinds of the whole text: one search; a clause is searched only when the whole names some
    kinds = threat_structure.kinds(f" {' '.join(texts)} ") if structure else None
    scored: list[set[str]] = []
    prev_t, prev_w = "", []
    for t in texts:
        padded = f" {t} "
        out = _grams(padded)
        words = _WORD.findall(padded)
        _pairs(out, words, skip)
        mine = _classes(padded, words, out, mood)
        kd = None if kinds is None else threat_structure.kinds(padded) if kinds else set()
        if prev_t:  # what spans the join: n-grams over the space between, and the word pair
            whole |= _grams(f"{prev_t[-3:]} {t[:3]}")
            if prev_w and words:
                _pairs(whole, prev_w[-2:] + words[:2], skip)
        whole |= out
        classes |= mine
        if len(t) >= _MIN_SEGMENT and len(scored) < _MAX_SEGMENTS:
            scored.append(_crossed(_with_classes(set(out), mine), mine, kd))
        prev_t, prev_w = t, words
    whole = _crossed(_with_classes(whole, classes), classes, kinds)
    wins = window_features(" ".join(texts), mood, structure, skip, background)
    return [whole] + (scored if len(scored) >= 2 else []) + wins


def window_features(folded: str, mood: bool = True, structure: bool = False, skip: bool = False,
                    background: bool = False) -> list[set[str]]:
    """The features of each window of a long text (none for a short one). With ``background``, a window
    keeps only what is its own: the features in more than half of the text's windows (and in three at
    least, so more than two overlapping neighbours) are the text's background and are dropped from every
    window. A note's own vocabulary repeated throughout then no longer dilutes the one sentence that differs
    (the order inside a long note), and a window of plain note holds only its rarer wording."""
    wins = [features(w, mood, structure, skip) for w in windows(folded)[1:]]
    if background and len(wins) >= _BACKGROUND_WINDOWS:
        seen = Counter(chain.from_iterable(wins))
        common = {f for f, n in seen.items() if n > len(wins) // 2 and n >= 3}
        wins = [w - common for w in wins]
    return wins


def windows(folded: str) -> list[str]:
    """The whole text and, for a long one, half-overlapping windows of ``_WINDOW`` characters."""
    folded = folded[:_MAX_CHARS]
    if len(folded) <= _WINDOW * 3 // 2:
        return [folded]
    step = _WINDOW // 2
    return [folded] + [folded[i:i + _WINDOW] for i in range(0, len(folded) - step, step)]


_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")


def script_of(folded: str) -> str:
    """The script a threshold is chosen for: "kana" (Japanese), "han" (Chinese), "cyrillic", or "" (the rest)."""
    if _KANA.search(folded):
        return "kana"
    if _HAN.search(folded):
        return "han"
    if _CYRILLIC.search(folded):
        return "cyrillic"
    return ""


# The commonest words of each Latin-script language the gate is calibrated for, without the ones two of
# them share ("de", "la", "que", "en", "un"...): a text's language is the one whose words it holds most.
_COMMON = {
    "en": "the and to of is in for it that with on this be are we you not when from our before after every all "
          "was has have will should must only never if or by at as its they their which",
    "de": "der die das und ist nicht mit den für wir ein eine auf dem zu von im sie wird bei auch nach vor "
          "werden wenn oder nur nie immer jede jeden kein keine vom zum zur des sich",
    "es": "el los las y es por para con una del al lo su antes cada se siempre nunca cuando pero como sin "
          "hay está son este esta nuestro",
    "fr": "le les et des du est pour dans une qui pas sur avec au aux ne nous avant chaque toujours jamais "
          "quand mais comme sans il elle sont ce cette notre",
}
_LANG_OF_WORD = {w: lang for lang, words in _COMMON.items() for w in words.split()}
_LANG_CHARS = 600  # the language is read from the text's first characters


def language_of(folded: str) -> str:
    """The Latin-script language of ``folded`` ("en", "de", "es", "fr") by its commonest words, or "" when
    no language leads by two words at least."""
    counts = Counter(filter(None, map(_LANG_OF_WORD.get, _WORD.findall(folded[:_LANG_CHARS]))))
    if not counts:
        return ""
    (top, n), *rest = counts.most_common(2)
    return top if n >= 2 and n - (rest[0][1] if rest else 0) >= 2 else ""


class Verdict(NamedTuple):
    score: float      # probability-like, 0..1
    threshold: float  # the model's own cut-off

    @property
    def blocked(self) -> bool:
        return self.score >= self.threshold


class LinearModel:
    """Weights by feature, a bias and a threshold; see the module docstring."""

    def __init__(self, weights: dict[str, float], bias: float, threshold: float, meta: dict | None = None,
                 evidence_floor: int = 1, mood: bool = False, script_thresholds: dict[str, float] | None = None,
                 structure: bool = False, skip: bool = False, background: bool = False,
                 lang_thresholds: dict[str, float] | None = None):
        self.weights = weights
        self.mood = mood  # trained with threat_mood's moods among its word classes
        self.structure = structure  # trained with threat_structure's order x object crosses
        self.skip = skip  # trained with the word pairs one word apart
        self.background = background  # trained with windows scored without their text's background
        self.bias = bias
        self.threshold = threshold
        self.script_thresholds = dict(script_thresholds or {})  # script_of(text) -> its own cut-off
        # language_of(text) -> its own cut-off, for text of no script of its own; never above the one cut-off
        self.lang_thresholds = {k: min(v, threshold) for k, v in (lang_thresholds or {}).items()}
        self.meta = meta or {}
        self.evidence_floor = max(1, int(evidence_floor))

    def margin(self, folded: str) -> float:
        """The margin of ``folded`` read as one piece (no clauses, no windows)."""
        return self.margin_of(features(folded, self.mood, self.structure, self.skip))

    def margin_of(self, feats: set[str]) -> float:
        if not feats:
            return self.bias
        total = sum(map(self.weights.get, feats, repeat(0.0, len(feats))))
        return self.bias + total / math.sqrt(max(len(feats), self.evidence_floor))

    def score(self, folded: str) -> float:
        m = max(self.margin_of(f) for f in segment_features(folded, self.mood, self.structure, self.skip,
                                                             self.background))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, m))))

    def verdict(self, folded: str) -> Verdict:
        return Verdict(self.score(folded), self.threshold_for(folded))

    def threshold_for(self, folded: str) -> float:
        if not self.script_thresholds and not self.lang_thresholds:
            return self.threshold
        script = script_of(folded[:_MAX_CHARS])
        if script or not self.lang_thresholds:
            return self.script_thresholds.get(script, self.threshold)
        return self.lang_thresholds.get(language_of(folded), self.threshold)

    # -- the shipped file ------------------------------------------------------------

    def dumps(self) -> bytes:
        """gzip'd JSON: features joined by NUL, weights as int16 scaled by ``scale``."""
        names = sorted(self.weights)
        top = max((abs(self.weights[n]) for n in names), default=1.0) or 1.0
        scale = top / 32767
        q = array("h", (round(self.weights[n] / scale) for n in names))
        body = {"format": FORMAT, "meta": self.meta, "bias": self.bias, "threshold": self.threshold,
                "evidence_floor": self.evidence_floor, "mood": self.mood, "scale": scale,
                "structure": self.structure, "skip": self.skip, "background": self.background,
                "script_thresholds": self.script_thresholds, "lang_thresholds": self.lang_thresholds,
                "features": "\x00".join(names),
                "weights": base64.b64encode(q.tobytes()).decode("ascii")}
        return gzip.compress(json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8"), mtime=0)

    @classmethod
    def loads(cls, raw: bytes) -> "LinearModel":
        body = json.loads(gzip.decompress(raw))
        if body.get("format") != FORMAT:
            raise ValueError(f"unknown threat model format {body.get('format')!r}")
        q = array("h")
        q.frombytes(base64.b64decode(body["weights"]))
        names = body["features"].split("\x00") if body["features"] else []
        if len(names) != len(q):
            raise ValueError("threat model: feature and weight counts differ")
        scale = float(body["scale"])
        return cls({n: w * scale for n, w in zip(names, q)}, float(body["bias"]), float(body["threshold"]),
                   body.get("meta") or {}, int(body["evidence_floor"]), bool(body.get("mood", False)),
                   {str(k): float(v) for k, v in (body.get("script_thresholds") or {}).items()},
                   bool(body.get("structure", False)), bool(body.get("skip", False)),
                   bool(body.get("background", False)),
                   {str(k): float(v) for k, v in (body.get("lang_thresholds") or {}).items()})


def _raw() -> bytes:
    return resources.files(__package__).joinpath(MODEL_FILE).read_bytes()


def file_version() -> str:
    """A short hash of the shipped model file ("absent" when it is missing)."""
    try:
        return hashlib.sha256(_raw()).hexdigest()[:16]
    except FileNotFoundError:
        return "absent"


_MODEL: list[LinearModel] = []


def model() -> LinearModel:
    """The shipped model, loaded once. A missing or broken file raises here, so every scan
    fails (the gate refuses to store what it could not check) rather than passing unchecked."""
    if not _MODEL:
        _MODEL.append(LinearModel.loads(_raw()))
    return _MODEL[0]
