"""Recall quality on LoCoMo: Recall@5 and MRR per category, turn level.

    nice .venv/bin/python bench/bench_recall.py [--tune conv-26,conv-30] [--set k=v ...] [--json]
    nice .venv/bin/python bench/bench_recall.py --embeddings              # the extra on (defaults)
    nice .venv/bin/python bench/bench_recall.py --embeddings --grid vector_weight=0.2,0.3 --grid vector_min=0.3,0.4

Each turn of a conversation becomes an ``event`` memory of that
conversation's user (statement ``"<speaker>: <text>"``, ``observed_at`` =
its session's date, ``external_id`` = its ``dia_id``), written through the
real memory index (SQLite FTS5 under a temporary data dir). Each question of
categories 1-4 is a recall query, asked as that user ``as_of`` the
conversation's last session; a hit is any evidence ``dia_id`` among the top
5. Conversations are reported in two groups: the ones ranking was tuned on
(``--tune``) and the held-out rest — the held-out figure is the result.

The dataset is read from ``../shared/datasets/locomo/`` (never copied into
the project); without it the script says so and exits 0.

``--embeddings`` turns the extra on (``embeddings = true``): the turns are
also embedded into a real vector index beside the memory index. ``--grid``
tries every combination of the values given, on the tuning conversations
only (the held-out ones are not even run), and prints one line each.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import re
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / ".." / "shared" / "datasets" / "locomo" / "locomo10_dev.json"
TUNED_ON = ("conv-26", "conv-30")  # the first two of the dev split; conv-41, -42, -43 held out
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
K = 5


def session_date(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` as local-time epoch seconds."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()


def evidence_ids(raw: list, valid: set[str]) -> list[str]:
    out = []
    for item in raw:
        for part in re.split(r"[\s;,]+", str(item)):
            m = re.fullmatch(r"D(\d+):0*(\d+)", part.strip())
            if m and f"D{m.group(1)}:{m.group(2)}" in valid:
                out.append(f"D{m.group(1)}:{m.group(2)}")
    return out


def load(conv: dict, tenant: str) -> tuple[list, float]:
    from ctxproxy.store.memory_records import MemoryRecord

    c = conv["conversation"]
    user = conv["sample_id"]
    turns, last = [], 0.0
    n = 1
    while f"session_{n}" in c:
        when = session_date(c[f"session_{n}_date_time"])
        if c[f"session_{n}"]:
            last = max(last, when)
        for i, t in enumerate(c[f"session_{n}"]):
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [shares a picture: {t['blip_caption']}]"
            turns.append(MemoryRecord(memory_id=f"{user}/{t['dia_id']}", tenant=tenant,
                              statement=f"{t['speaker']}: {text}", kind="event", origin="imported",
                              status="active", observed_at=when + i, external_id=t["dia_id"], user=user,
                              evidence_ref=f"session:{user}-s{n}/turn:{t['dia_id']}",
                              evidence_sessions=(f"{user}-s{n}",)))
        n += 1
    return turns, last


def evaluate(data: list[dict], rank_cfg, k: int = K) -> dict:
    from ctxproxy.store.services.recall.hybrid import VectorRecall
    from ctxproxy.store.services.recall.recaller import Recaller
    from ctxproxy.store.memory_index import MemoryIndex
    from ctxproxy.store.sqlite_index import Viewer
    from ctxproxy.store.vector_index import VectorIndex

    tenant = "locomo"
    with tempfile.TemporaryDirectory() as tmp:
        index = MemoryIndex(Path(tmp) / "memories.db")
        vectors = None
        if rank_cfg.embeddings:
            from ctxproxy.store.services.recall.embeddings import shared_embedder

            embedder = shared_embedder()
            vectors = VectorIndex(Path(tmp) / "vectors.db")
            vectors.use(embedder)
        recaller = Recaller(index, config=rank_cfg,
                            vectors=VectorRecall(vectors, index, embedder, rank_cfg) if vectors else None)
        per_conv = {}
        for conv in data:
            turns, last = load(conv, tenant)
            index.upsert(turns)
            if vectors is not None:
                vectors.upsert(turns)
            valid = {t.external_id for t in turns}
            viewer = Viewer(tenant=tenant, user=conv["sample_id"])
            stats: dict[int, list[tuple[int, float]]] = {}
            latency = []
            for q in conv["qa"]:
                cat = q.get("category")
                if cat not in CATEGORIES:
                    continue
                gold = set(evidence_ids(q.get("evidence") or [], valid))
                if not gold:
                    continue
                t0 = time.perf_counter()
                got = recaller.recall(viewer, q["question"], k=k, as_of=last).items
                latency.append(time.perf_counter() - t0)
                ids = [s.cand.external_id for s in got]
                rank = next((i + 1 for i, x in enumerate(ids) if x in gold), 0)
                stats.setdefault(cat, []).append((1 if rank else 0, 1.0 / rank if rank else 0.0))
            per_conv[conv["sample_id"]] = {"stats": stats, "latency": latency}
        index.close()
        if vectors is not None:
            vectors.close()
    return per_conv


def summarize(per_conv: dict, names: list[str]) -> dict:
    rows = {}
    allq: list[tuple[int, float]] = []
    for cat, label in CATEGORIES.items():
        qs = [x for n in names for x in per_conv[n]["stats"].get(cat, [])]
        allq += qs
        if qs:
            rows[label] = (len(qs), sum(h for h, _ in qs) / len(qs), sum(r for _, r in qs) / len(qs))
    rows["all"] = (len(allq), sum(h for h, _ in allq) / max(1, len(allq)), sum(r for _, r in allq) / max(1, len(allq)))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tune", default=",".join(TUNED_ON), help="conversations ranking was tuned on")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a rank config override")
    p.add_argument("--embeddings", action="store_true", help="the embeddings extra on (embeddings = true)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="try each value (every combination), on the tuning conversations only")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not DATASET.exists():
        print(f"bench_recall: {DATASET} not found (the LoCoMo dev split); skipped")
        return 0
    sys.path.insert(0, str(ROOT))
    from ctxproxy.store.services.recall.rank import RankConfig

    def typed(key: str, value: str):
        kind = type(getattr(RankConfig(), key))
        return value.lower() in ("1", "true", "yes", "on") if kind is bool else kind(value)

    overrides = {"embeddings": True} if args.embeddings else {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = typed(key, value)
    data = json.loads(DATASET.read_text())
    if args.grid:
        tune = [c for c in data if c["sample_id"] in args.tune.split(",")]
        axes = [(key, [typed(key, v) for v in values.split(",")])
                for key, _, values in (g.partition("=") for g in args.grid)]
        for combo in itertools.product(*(values for _, values in axes)):
            point = dict(zip((key for key, _ in axes), combo))
            per_conv = evaluate(tune, RankConfig(**{**overrides, **point}))
            n, r, m = summarize(per_conv, list(per_conv))["all"]
            print(f"{point}  R@5 {r:.3f}  MRR {m:.3f}  (n {n}, tuned on {', '.join(per_conv)})", flush=True)
        return 0
    cfg = RankConfig(**overrides)
    per_conv = evaluate(data, cfg)
    tuned = [n for n in args.tune.split(",") if n in per_conv]
    held = [n for n in per_conv if n not in tuned]
    out = {"config": dataclasses.asdict(cfg), "tuned_on": tuned, "held_out": held,
           "tuned": summarize(per_conv, tuned), "held": summarize(per_conv, held)}
    lat = sorted(x for v in per_conv.values() for x in v["latency"])
    out["latency_ms"] = {"p50": lat[len(lat) // 2] * 1000, "p95": lat[int(len(lat) * 0.95)] * 1000}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"config: {overrides or 'defaults'}")
    for group, names in (("tuned", tuned), ("held", held)):
        print(f"-- {group} on {', '.join(names)}")
        print(f"{'category':<12} {'n':>4} {'R@5':>6} {'MRR':>6}")
        for label, (n, r, m) in out[group].items():
            print(f"{label:<12} {n:>4} {r:>6.3f} {m:>6.3f}")
    print(f"recall latency p50 {out['latency_ms']['p50']:.2f} ms, p95 {out['latency_ms']['p95']:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
