"""Recall quality on LoCoMo through the admin API: Recall@5 and MRR per category.

    nice .venv/bin/python bench/bench_recall.py                      # both splits, defaults
    nice .venv/bin/python bench/bench_recall.py --split tune --set context_weight=0.4
    nice .venv/bin/python bench/bench_recall.py --split tune --grid k1=0.9,1.2 --grid b=0.3,0.5
    nice .venv/bin/python bench/bench_recall.py --embeddings         # the extra on
    nice .venv/bin/python bench/bench_recall.py --convs conv-26 --json
    nice .venv/bin/python bench/bench_recall.py --backend both        # LMDB and PostgreSQL, the same run

A real ctxproxy runs in this process (the eval harness's, on 127.0.0.1). Each
turn of a conversation is written with ``POST /ctx/v1/memories:batch`` (so the
memory gate decides) as one ``event`` memory of that conversation's user:
statement ``"<speaker>: <text>"`` (a shared picture's caption appended),
``observed_at`` its session's date — every turn of a session the same time —,
``external_id`` its ``dia_id``, its session as the evidence session, no expiry.
Each question of categories 1-4 is ``POST /ctx/v1/recall`` as that user,
``as_of`` the conversation's last session; a hit is any evidence ``dia_id``
among the top 5.

The split is fixed: ranking is tuned on ``TUNE`` only; ``HELD_OUT`` is never
used to choose anything (``--grid`` refuses to run on it). The dataset is read
from ``../shared/datasets/locomo/`` (never copied into the project); without it
the script says so and exits 0.

``--grid`` tries every combination of the values given, one proxy each over
the same data directory (the memories are written once), and prints a line each.

``--backend postgres`` puts the store (and recall's memory index) in a
throwaway PostgreSQL cluster started as tests/pgserver.py does; ``both`` runs
the same conversations on LMDB and then on PostgreSQL and says on how many
questions the two top-5 lists are the same.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
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
# Fixed before any tuning of this round: conv-42 and conv-43 are held out (never tuned on).
TUNE = ("conv-26", "conv-30", "conv-41")
HELD_OUT = ("conv-42", "conv-43")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
K = 5
TENANT = "locomo"


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


def memories(conv: dict) -> tuple[list[dict], float]:
    """The admin API bodies of a conversation's turns, and its last session's date."""
    c = conv["conversation"]
    user = conv["sample_id"]
    out, last = [], 0.0
    n = 1
    while f"session_{n}" in c:
        when = session_date(c[f"session_{n}_date_time"])
        if c[f"session_{n}"]:
            last = max(last, when)
        for t in c[f"session_{n}"]:
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [shares a picture: {t['blip_caption']}]"
            out.append({"statement": f"{t['speaker']}: {text}", "kind": "event", "origin": "imported",
                        "user": user, "observed_at": when, "expires_at": None, "external_id": t["dia_id"],
                        "evidence_ref": f"session:{user}-s{n}/turn:{t['dia_id']}",
                        "evidence_sessions": [f"{user}-s{n}"]})
        n += 1
    return out, last


def questions(conv: dict, valid: set[str]) -> list[tuple[int, str, set[str]]]:
    out = []
    for q in conv["qa"]:
        cat = q.get("category")
        gold = set(evidence_ids(q.get("evidence") or [], valid)) if cat in CATEGORIES else set()
        if gold:
            out.append((cat, q["question"], gold))
    return out


def config_file(tmp: Path, rank: dict, dsn: str | None = None) -> Path | None:
    if not rank and dsn is None:
        return None
    path = tmp / "ctxproxy.toml"
    lines = ["[filters.recall.rank]"] + [f"{k} = {json.dumps(v)}" for k, v in rank.items()]
    if dsn is not None:
        lines += ["[store]", 'backend = "postgres"', f"dsn = {json.dumps(dsn)}"]
    path.write_text("\n".join(lines) + "\n")
    return path


async def write_all(t, data: list[dict]) -> dict:
    """Every conversation's turns through the gate; the gate's verdicts counted."""
    verdicts: dict[str, int] = {}
    for conv in data:
        bodies, _ = memories(conv)
        for i in range(0, len(bodies), 1000):
            status, body = await t.admin("POST", "memories:batch", bodies[i:i + 1000], tenant=TENANT)
            if status != 200:
                raise RuntimeError(f"memories:batch answered {status}: {body}")
            for r in body["results"]:
                v = "duplicate" if r.get("duplicate_of") else r.get("status") or r.get("error", {}).get("type", "?")
                verdicts[v] = verdicts.get(v, 0) + 1
    return verdicts


async def ask_all(t, data: list[dict]) -> dict:
    per_conv = {}
    for conv in data:
        bodies, last = memories(conv)
        valid = {b["external_id"] for b in bodies}
        stats: dict[int, list[tuple[int, float]]] = {}
        latency, ranked = [], []
        for cat, question, gold in questions(conv, valid):
            t0 = time.perf_counter()
            status, body = await t.admin("POST", "recall", {"query": question, "user": conv["sample_id"], "k": K,
                                                            "as_of": last}, tenant=TENANT)
            latency.append(time.perf_counter() - t0)
            if status != 200:
                raise RuntimeError(f"recall answered {status}: {body}")
            ids = [item["external_id"] for item in body["items"]]
            ranked.append(ids)
            rank = next((i + 1 for i, x in enumerate(ids) if x in gold), 0)
            stats.setdefault(cat, []).append((1 if rank else 0, 1.0 / rank if rank else 0.0))
        per_conv[conv["sample_id"]] = {"stats": stats, "latency": latency, "ranked": ranked}
    return per_conv


async def run(data: list[dict], points: list[dict], data_dir: Path, dsn: str | None = None
              ) -> tuple[dict, list[dict]]:
    """Write once, then one proxy per configuration point over the same data dir
    (and the same database, with ``dsn``)."""
    from ctxproxy.proxy.eval.harness import target

    verdicts: dict = {}
    results = []
    for i, rank in enumerate(points):
        async with target("ctxproxy", config_file(data_dir, rank, dsn), data_dir / "data") as t:
            if i == 0:
                verdicts = await write_all(t, data)
            results.append(await ask_all(t, data))
    return verdicts, results


def summarize(per_conv: dict, names: list[str]) -> dict:
    rows = {}
    allq: list[tuple[int, float]] = []
    for cat, label in CATEGORIES.items():
        qs = [x for n in names for x in per_conv[n]["stats"].get(cat, [])]
        allq += qs
        if qs:
            rows[label] = (len(qs), sum(h for h, _ in qs) / len(qs), sum(r for _, r in qs) / len(qs))
    rows["all"] = (len(allq), sum(h for h, _ in allq) / max(1, len(allq)),
                   sum(r for _, r in allq) / max(1, len(allq)))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--split", choices=("both", "tune", "held"), default="both",
                   help=f"tune: {', '.join(TUNE)}; held: {', '.join(HELD_OUT)} (default both)")
    p.add_argument("--convs", default="", help="these conversations only (comma-separated; overrides --split)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a rank config override")
    p.add_argument("--embeddings", action="store_true", help="the embeddings extra on (embeddings = true)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="try each value (every combination), on the tuning conversations only")
    p.add_argument("--backend", choices=("lmdb", "postgres", "both"), default="lmdb",
                   help="the store: LMDB (default), PostgreSQL (a throwaway cluster), or both in one run")
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
    names = {"both": TUNE + HELD_OUT, "tune": TUNE, "held": HELD_OUT}[args.split]
    if args.convs:
        names = tuple(args.convs.split(","))
    if args.grid and set(names) & set(HELD_OUT):
        if args.split != "both" or args.convs:
            print("bench_recall: --grid never runs on the held-out conversations", file=sys.stderr)
            return 2
        names = TUNE
    data = [c for c in json.loads(DATASET.read_text()) if c["sample_id"] in names]
    axes = [(key, [typed(key, v) for v in values.split(",")])
            for key, _, values in (g.partition("=") for g in args.grid)]
    points = [{**overrides, **dict(zip((k for k, _ in axes), combo))}
              for combo in itertools.product(*(values for _, values in axes))] if axes else [overrides]
    backends = ("lmdb", "postgres") if args.backend == "both" else (args.backend,)
    if args.backend == "both" and args.grid:
        print("bench_recall: --grid runs on one backend at a time", file=sys.stderr)
        return 2
    runs = {}
    for backend in backends:
        with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
            if backend == "postgres":
                with throwaway_database() as dsn:
                    runs[backend] = asyncio.run(run(data, points, Path(tmp), dsn))
            else:
                runs[backend] = asyncio.run(run(data, points, Path(tmp)))
    if len(runs) > 1:
        return compare(runs, overrides, args.json)
    verdicts, results = runs[backends[0]]
    if args.grid:
        for point, per_conv in zip(points, results):
            n, r, m = summarize(per_conv, list(per_conv))["all"]
            print(f"{point}  R@5 {r:.3f}  MRR {m:.3f}  (n {n}, on {', '.join(per_conv)})", flush=True)
        return 0
    out = report(verdicts, results[0], overrides)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    show(out, results[0], overrides, backends[0])
    return 0


def report(verdicts: dict, per_conv: dict, overrides: dict) -> dict:
    from ctxproxy.store.services.recall.rank import RankConfig

    groups = [(g, [n for n in members if n in per_conv]) for g, members in (("tune", TUNE), ("held", HELD_OUT))]
    groups = [(g, ms) for g, ms in groups if ms]
    cfg = RankConfig(**overrides)
    out = {"config": dataclasses.asdict(cfg), "gate": verdicts,
           **{g: {"conversations": ms, **{k: list(v) for k, v in summarize(per_conv, ms).items()}}
              for g, ms in groups},
           "per_conversation": {n: summarize(per_conv, [n])["all"] for n in per_conv}}
    lat = sorted(x for v in per_conv.values() for x in v["latency"])
    out["latency_ms"] = {"p50": lat[len(lat) // 2] * 1000, "p95": lat[int(len(lat) * 0.95)] * 1000}
    return out


def show(out: dict, per_conv: dict, overrides: dict, backend: str) -> None:
    groups = [(g, out[g]["conversations"]) for g in ("tune", "held") if g in out]
    print(f"backend: {backend}; config: {overrides or 'defaults'}; gate: {out['gate']}")
    for group, ms in groups:
        print(f"-- {group} ({', '.join(ms)})")
        print(f"{'category':<12} {'n':>4} {'R@5':>6} {'MRR':>6}")
        for label, (n, r, m) in summarize(per_conv, ms).items():
            print(f"{label:<12} {n:>4} {r:>6.3f} {m:>6.3f}")
    print("per conversation: " + ", ".join(f"{n} {r:.3f}/{m:.3f}" for n, (_, r, m) in out["per_conversation"].items()))
    print(f"POST /ctx/v1/recall wall p50 {out['latency_ms']['p50']:.2f} ms, p95 {out['latency_ms']['p95']:.2f} ms")


def compare(runs: dict, overrides: dict, as_json: bool) -> int:
    """Both backends' figures, and on how many questions their top-5 lists are the same."""
    outs = {b: report(v, r[0], overrides) for b, (v, r) in runs.items()}
    (a, (_, ra)), (b, (_, rb)) = runs.items()
    same = total = 0
    differ = []
    for conv in ra[0]:
        for i, (x, y) in enumerate(zip(ra[0][conv]["ranked"], rb[0][conv]["ranked"])):
            total += 1
            same += x == y
            if x != y:
                differ.append(f"{conv}#{i}")
    agree = {"questions": total, "same_top5": same, "differ": differ[:20]}
    if as_json:
        print(json.dumps({**outs, "agreement": agree}, indent=1))
    else:
        for backend, out in outs.items():
            show(out, runs[backend][1][0], overrides, backend)
        print(f"top-5 lists the same on both backends: {same}/{total} questions"
              + (f" (differ: {', '.join(differ[:20])})" if differ else ""))
    return 0 if same == total else 1


@contextlib.contextmanager
def throwaway_database():
    """A database on a throwaway PostgreSQL cluster (tests/pgserver.py), its DSN."""
    sys.path.insert(0, str(ROOT / "tests"))
    import pgserver

    server = pgserver.start()
    if server is None:
        raise SystemExit(f"bench_recall: {pgserver.HOW}")
    try:
        server.prepare()
        yield server.new_database()
    finally:
        server.close()


if __name__ == "__main__":
    sys.exit(main())
