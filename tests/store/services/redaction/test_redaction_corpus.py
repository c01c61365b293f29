"""Precision and recall of the built-in rules on the generated secret corpus.

Recall: a secret counts as found when every character of it is covered by
placeholders. Precision: a finding is a true positive when it overlaps a
secret the sample contains; any other finding (in a near miss, in shared
negatives, or beside the secret) is a false positive for the rule that made
it. Attribution (the expected rule named the placeholder) is reported too.

Credential rules are measured with the default profile; PII rules (an opt-in
group) with every group enabled, on the PII samples and all negatives.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from secretcorpus import build_corpus, redactor

from ctxproxy.store.services.redaction import BUILTIN_GROUPS, builtin_rules

THRESHOLD = 0.95


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    secrets: int = 0
    found: int = 0
    attributed: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.secrets if self.secrets else 1.0

    @property
    def attribution(self) -> float:
        return self.attributed / self.secrets if self.secrets else 1.0


def _covered(findings, lo: int, hi: int) -> bool:
    pos = lo
    for f in sorted(findings, key=lambda f: f.start):
        if f.start <= pos < f.end:
            pos = f.end
    return pos >= hi


def _score(samples, red, tallies: dict[str, Tally], only: str | None = None, misses: list | None = None) -> None:
    for sample in samples:
        findings = red.findings(sample.text)
        if only:
            findings = tuple(f for f in findings if f.rule_id.startswith(only))
        regions = []
        for rid, value in sample.secrets:
            start = sample.text.find(value)
            assert start >= 0
            regions.append((rid, start, start + len(value)))
        for rid, lo, hi in regions:
            t = tallies.setdefault(rid, Tally())
            t.secrets += 1
            if _covered(findings, lo, hi):
                t.found += 1
            elif misses is not None:
                misses.append(("missed", rid, sample.context))
            if any(f.rule_id == rid and f.start < hi and f.end > lo for f in findings):
                t.attributed += 1
        for f in findings:
            t = tallies.setdefault(f.rule_id, Tally())
            if any(f.start < hi and f.end > lo for _, lo, hi in regions):
                t.tp += 1
            else:
                t.fp += 1
                if misses is not None:
                    misses.append(("false positive", f.rule_id, sample.rule or "shared", sample.context))


@pytest.fixture(scope="module")
def measured():
    samples = build_corpus(seed=1337, positives_per_rule=12)
    tallies: dict[str, Tally] = {}
    notes: list = []
    creds = [s for s in samples if not (s.rule or "").startswith("pii-")]
    pii = [s for s in samples if (s.rule or "").startswith("pii-") or not s.secrets]
    _score(creds, redactor("hyperscan"), tallies, misses=notes)
    pii_tallies: dict[str, Tally] = {}
    _score(pii, redactor("hyperscan", BUILTIN_GROUPS), pii_tallies, only="pii-", misses=notes)
    tallies.update({k: v for k, v in pii_tallies.items() if k.startswith("pii-")})
    return samples, tallies, notes


def test_every_builtin_rule_has_corpus_samples(measured):
    samples, tallies, _ = measured
    missing = [r.id for r in builtin_rules() if tallies.get(r.id, Tally()).secrets < 10]
    assert not missing, f"rules without at least 10 positive samples: {missing}"
    negatives = [s for s in samples if not s.secrets]
    near = {s.rule for s in negatives if s.rule}
    assert len(near) >= len(builtin_rules()) - 5, "most rules need near-miss negatives"
    assert len(negatives) >= 500


def test_precision_and_recall_per_rule_and_overall(measured):
    _, tallies, notes = measured
    total = Tally()
    lines = [f"{'rule':34s} {'secrets':>7s} {'recall':>7s} {'attrib':>7s} {'tp':>5s} {'fp':>4s} {'precision':>9s}"]
    for rid in sorted(tallies):
        t = tallies[rid]
        for field in ("tp", "fp", "secrets", "found", "attributed"):
            setattr(total, field, getattr(total, field) + getattr(t, field))
        lines.append(f"{rid:34s} {t.secrets:7d} {t.recall:7.3f} {t.attribution:7.3f} {t.tp:5d} {t.fp:4d} "
                     f"{t.precision:9.3f}")
    lines.append(f"{'OVERALL':34s} {total.secrets:7d} {total.recall:7.3f} {total.attribution:7.3f} {total.tp:5d} "
                 f"{total.fp:4d} {total.precision:9.3f}")
    print("\n" + "\n".join(lines))
    for note in notes:
        print("note:", *note)
    bad = [(rid, round(t.precision, 3), round(t.recall, 3)) for rid, t in tallies.items()
           if t.precision < THRESHOLD or t.recall < THRESHOLD]
    assert not bad, f"rules below {THRESHOLD} precision/recall: {bad}"
    assert total.precision >= THRESHOLD and total.recall >= THRESHOLD
    assert total.attribution >= 0.95, "placeholders should name the rule written for the format"
