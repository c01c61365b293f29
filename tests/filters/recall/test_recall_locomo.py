"""Recall quality on LoCoMo with the default configuration, on the
conversations the ranking was not tuned on (bench/bench_recall.py has the
per-category report). Skips when ../shared/datasets/locomo is absent."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ctxproxy.store.services.recall.rank import RankConfig

ROOT = Path(__file__).resolve().parents[3]
# The bench script itself (loaded from its path: bench/ is not a package).
_spec = importlib.util.spec_from_file_location("bench_recall", ROOT / "bench" / "bench_recall.py")
bench_recall = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_recall)

pytestmark = pytest.mark.skipif(not bench_recall.DATASET.exists(),
                                reason="LoCoMo dev split not found at ../shared/datasets/locomo")


def test_held_out_conversations_meet_the_targets():
    data = [c for c in json.loads(bench_recall.DATASET.read_text()) if c["sample_id"] not in bench_recall.TUNED_ON]
    assert len(data) == 3
    per_conv = bench_recall.evaluate(data, RankConfig())
    n, r5, mrr = bench_recall.summarize(per_conv, list(per_conv))["all"]
    assert n > 500
    assert r5 >= 0.72 and mrr >= 0.52, (r5, mrr)
