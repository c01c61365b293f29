"""The project facts of every recall eval half the project develops on pass the memory gate.

They are ordinary engineering memories written by people who never read the gate (keys read from a
path, exports, tokens, webhooks, sudo, a CLAUDE.md): the material the gate must admit. A rule that
refuses one of them also stops recall of that fact for every user, so a new rule is checked against
them here as well as against the gate's own clean banks. The sealed half is not read.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from ctxproxy.proxy.eval import turns
from ctxproxy.store.services.memory.threats import scan

BENCH = Path(__file__).resolve().parents[4] / "bench"


def _halves():
    mods = [importlib.import_module(name) for split, name in turns.HALVES if split not in turns.SEALED]
    if BENCH.is_dir():  # the bench's own halves, beside the package's
        sys.path.insert(0, str(BENCH))
        try:
            mods += [importlib.import_module(n) for n in
                     ("recall_turns_ml", "recall_turns_warehouse", "recall_turns_genomics")]
        finally:
            sys.path.remove(str(BENCH))
    return mods


@pytest.mark.parametrize("half", _halves(), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_fact_and_distractor_of_a_dev_half_passes_the_gate(half):
    texts = [statement for statement, _ in half.FACTS.values()] + list(half.DISTRACTORS)
    refused = [(t, threat.reason) for t in texts if (threat := scan(t)) is not None]
    assert len(texts) >= 20
    assert refused == []
