"""The memory gate's learned signal: a linear model over the wording of a statement.

The rule table explains what it refuses; it also only knows the phrasings it
was written for. This model catches new wording of the same intents — another
language, a setup step that plants a backdoor, a "memory update" that claims an
authority — from the character and word n-grams of the normalised text.

- Features: the text as ``threats.normalise`` leaves it (NFKC, case folding),
  newlines as spaces, digits as ``0``; every character 2-, 3- and 4-gram of it
  (which covers Chinese and Japanese, where words are not spaced) and every
  pair of adjacent words. Presence only, scaled by 1/sqrt(number of features).
- Score: logistic regression, ``sigmoid(bias + Σ weight(feature) · scale)``; a
  statement longer than ``_WINDOW`` characters is also scored window by
  window (half-overlapping), and the highest score counts, so one injected
  sentence in a long benign note is not diluted.
- Weights and threshold ship in ``threat_model.json.gz`` beside this module,
  trained by ``bench/train_gate.py`` (numpy, at training time only). Loading
  and scoring are pure Python: one dict lookup per n-gram.

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
from typing import NamedTuple

MODEL_FILE = "threat_model.json.gz"
_CHAR_SIZES = (2, 3, 4)
_WINDOW = 400         # characters per window for long statements
_MAX_CHARS = 20_000   # a longer statement is scored on its first characters only
_DIGITS = re.compile(r"\d")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
_PAIR = "\x01"        # word-pair features live in their own namespace


def text_of(folded: str) -> str:
    """What the n-grams are taken from: newlines and runs of spaces as one space, digits as 0."""
    return _DIGITS.sub("0", _SPACES.sub(" ", folded)).strip()


def features(folded: str) -> set[str]:
    """The n-gram features of ``folded`` (already NFKC-normalised and case-folded)."""
    t = f" {text_of(folded)} "
    n = len(t)
    out = {t[i:i + k] for k in _CHAR_SIZES for i in range(n - k + 1)}
    words = _WORD.findall(t)
    out.update(f"{_PAIR}{a} {b}" for a, b in zip(words, words[1:]))
    return out


def windows(folded: str) -> list[str]:
    """The whole text and, for a long one, half-overlapping windows of ``_WINDOW`` characters."""
    folded = folded[:_MAX_CHARS]
    if len(folded) <= _WINDOW * 3 // 2:
        return [folded]
    step = _WINDOW // 2
    return [folded] + [folded[i:i + _WINDOW] for i in range(0, len(folded) - step, step)]


class Verdict(NamedTuple):
    score: float      # probability-like, 0..1
    threshold: float  # the model's own cut-off

    @property
    def blocked(self) -> bool:
        return self.score >= self.threshold


class LinearModel:
    """Weights by feature, a bias and a threshold; see the module docstring."""

    def __init__(self, weights: dict[str, float], bias: float, threshold: float, meta: dict | None = None):
        self.weights = weights
        self.bias = bias
        self.threshold = threshold
        self.meta = meta or {}

    def margin(self, folded: str) -> float:
        feats = features(folded)
        if not feats:
            return self.bias
        get = self.weights.get
        total = 0.0
        for f in feats:
            w = get(f)
            if w is not None:
                total += w
        return self.bias + total / math.sqrt(len(feats))

    def score(self, folded: str) -> float:
        m = max(self.margin(w) for w in windows(folded))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, m))))

    def verdict(self, folded: str) -> Verdict:
        return Verdict(self.score(folded), self.threshold)

    # -- the shipped file ------------------------------------------------------------

    def dumps(self) -> bytes:
        """gzip'd JSON: features joined by NUL, weights as int16 scaled by ``scale``."""
        names = sorted(self.weights)
        top = max((abs(self.weights[n]) for n in names), default=1.0) or 1.0
        scale = top / 32767
        q = array("h", (round(self.weights[n] / scale) for n in names))
        body = {"format": 1, "meta": self.meta, "bias": self.bias, "threshold": self.threshold,
                "scale": scale, "features": "\x00".join(names),
                "weights": base64.b64encode(q.tobytes()).decode("ascii")}
        return gzip.compress(json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8"), mtime=0)

    @classmethod
    def loads(cls, raw: bytes) -> "LinearModel":
        body = json.loads(gzip.decompress(raw))
        if body.get("format") != 1:
            raise ValueError(f"unknown threat model format {body.get('format')!r}")
        q = array("h")
        q.frombytes(base64.b64decode(body["weights"]))
        names = body["features"].split("\x00") if body["features"] else []
        if len(names) != len(q):
            raise ValueError("threat model: feature and weight counts differ")
        scale = float(body["scale"])
        return cls({n: w * scale for n, w in zip(names, q)}, float(body["bias"]), float(body["threshold"]),
                   body.get("meta") or {})


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
