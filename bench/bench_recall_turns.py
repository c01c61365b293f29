"""Recall's floor on agent turns, straight through the recaller, per turn (a development tool).

    python bench/bench_recall_turns.py                       # hit rate / false injections per half
    python bench/bench_recall_turns.py --set chance_min=1.0  # a rank setting (repeatable)
    python bench/bench_recall_turns.py -v                    # and each miss and false injection, its candidates
    python bench/bench_recall_turns.py --outweighed 0        # both recalls' memories counted (the filter's outweighed)

Each half's facts and distractors go into a real store and recall index as
facts of its project. Each turn is the whole request its shape gives
(``turns.body_of``: Claude Code's or Codex's wrappers, tool results, a
compaction summary), read as the recall filter reads it (``turn_words``: the
user's own words, a tool-result turn's goal, what words that refer back refer
to); ``k`` 8, every item returned counting as injected. A turn whose newest items are a
tool's results also counts what the filter's second recall finds from the output's rare
identifiers (``Recaller.recall_output``, placed after the output by the proxy);
``--no-outputs`` leaves it out. The halves: ``dev``
(``proxy/eval/turns.py``), ``old-held-out`` (``proxy/eval/turns_heldout.py``,
read since it was used), ``fresh``, ``fresh2``, ``fresh3``, ``fresh4``, ``fresh5``, ``fresh6``, ``fresh7``, ``fresh8``, ``fresh9``, ``fresh10``, ``fresh11``, ``fresh12``, ``fresh13``, ``fresh14``, ``fresh15``, ``fresh16``, ``fresh17``, ``fresh18``, ``fresh19``, ``fresh20`` and ``fresh21`` (``proxy/eval/turns_fresh*.py``,
each sealed once, read since), ``ml`` (``bench/recall_turns_ml.py``), ``warehouse`` and ``genomics``
(``bench/recall_turns_warehouse.py``, ``bench/recall_turns_genomics.py``: written by engineers who read
neither recall nor a result, each scored once before anything was tuned on it). Never a sealed
half: its figures come from ``ctxproxy eval --set turns`` only (the lead's
run). The figures equal ``ctxproxy eval --set turns --no-sealed`` on the
halves both hold, in about a second.

``-v`` prints, for each turn that missed or recalled something else, its six
candidates of highest ``match``: whether each passed, ``chance`` (the floor),
``match``, its specific words (how many, and which), whether one is of what the message asks.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTWEIGHED = 0.5  # the filter's ``outweighed`` (--outweighed)


def run_half(half, cfg, verbose: bool, name: str, outputs: bool = True, setup=None,
             on_turn=None, outweighed: float = OUTWEIGHED) -> tuple[int, int, int, int, int]:
    """``setup(recaller)`` runs once before the turns (``train_recall_judge.py`` sets its judge there);
    ``on_turn(key, expect, got)`` after each turn."""
    import orjson

    from ctxproxy.filters.recall import newest_round, outweigh, turn_words
    from ctxproxy.proxy.adapters import ADAPTERS
    from ctxproxy.proxy.eval import turns as turns_mod
    from ctxproxy.store import open_store
    from ctxproxy.store.memory_records import MemoryRecord, new_memory_id
    from ctxproxy.store.services.recall import rank
    from ctxproxy.store.services.recall.services import RecallServices
    from ctxproxy.store.services.recall.tool_output import searched_for
    from ctxproxy.store.sqlite_index import Viewer

    seen: list = []
    passes = rank.passes

    def spy(s, c, need=None):
        ok = passes(s, c, need)
        seen.append((s, ok))
        return ok

    hits = wanted = false_turns = false_items = n = 0
    with tempfile.TemporaryDirectory(prefix="bench-recall-turns-") as tmp:
        store = open_store(Path(tmp) / "store")
        for statement in [s for s, _ in half.FACTS.values()] + list(half.DISTRACTORS):
            store.memories.put(MemoryRecord(tenant="acme", statement=statement, kind="fact", origin="user",
                                            status="active", memory_id=new_memory_id(), user="dev",
                                            project=half.PROJECT))
        rs = RecallServices(tmp, store)
        rank.passes = spy  # restored in the finally below, so a failing half leaves rank as it was
        try:
            rs.prepare(cfg, sync=True)
            recaller = rs.recaller(cfg)
            if setup is not None:
                setup(recaller)
            viewer = Viewer("acme", user="dev", project=half.PROJECT)
            for key, shape, prompt, _tool in list(half.TURNS) + [(None, *t) for t in half.NULL_TURNS]:
                seen.clear()
                api, body = turns_mod.body_of(shape, prompt, _tool, half)  # read as the recall filter reads it
                view = ADAPTERS[api].parse_request(orjson.dumps(body))
                words = turn_words(view)
                first = recaller.recall(viewer, words.latest, k=8, goal=words.goal, context=words.context).items
                round_ = newest_round(view) if outputs else []
                ids = {r.call_id for r in round_}
                searched = searched_for([c.arguments for c in view.tool_calls() if c.call_id in ids])
                found = recaller.recall_output(viewer, words.latest, "\n".join(r.content for r in round_),
                                               goal=words.goal, context=words.context,
                                               searched=searched).items if round_ else []
                # what the tool's output points at, placed after it (the filter's second recall); what the
                # words recalled far below it is not given beside it (the filter's ``outweigh``)
                got = [s.cand.statement for s in outweigh(first, found, outweighed)]
                got += [s.cand.statement for s in found if s.cand.statement not in got]
                expect = half.FACTS[key][1] if key else None
                if on_turn is not None:
                    on_turn(key, expect, got)
                hit = expect is not None and any(expect in g for g in got)
                false = [g for g in got if not (expect and expect in g)]
                n, wanted, hits = n + 1, wanted + (expect is not None), hits + hit
                false_turns, false_items = false_turns + bool(false), false_items + len(false)
                if verbose and (expect and not hit or false):
                    print(f"[{name}] {'MISS' if expect and not hit else 'HIT ' if expect else 'NULL'} {key} "
                          f"({shape}): {prompt[:100]!r}")
                    for s, ok in sorted(seen, key=lambda x: -x[0].match)[:6]:
                        mark = "EXP" if expect and expect in s.cand.statement else "   "
                        print(f"    {'pass' if ok else '    '} {mark} chance {s.chance:5.2f} match {s.match:.2f} "
                              f"words {s.anchors} asked {int(s.focused)} :: {s.cand.statement[:80]}"
                              f"  {{{' '.join(sorted(w.lstrip(chr(0)) for w in s.words))}}}")
        finally:
            rank.passes = passes
            rs.close()
            store.close()
    return hits, wanted, false_turns, false_items, n


def halves() -> list[tuple[str, object]]:
    """The labelled halves, by name (never a sealed one)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import recall_turns_genomics
    import recall_turns_ml
    import recall_turns_warehouse

    from ctxproxy.proxy.eval import turns, turns_fresh, turns_fresh2, turns_fresh3, turns_fresh4, turns_fresh5, turns_fresh6, turns_fresh7, turns_fresh8, turns_fresh9, turns_fresh10, turns_fresh11, turns_fresh12, turns_fresh13, turns_fresh14, turns_fresh15, turns_fresh16, turns_fresh17, turns_fresh18, turns_fresh19, turns_fresh20, turns_fresh21, turns_heldout

    return [("dev", turns), ("old-held-out", turns_heldout), ("fresh", turns_fresh), ("fresh2", turns_fresh2),
            ("fresh3", turns_fresh3), ("fresh4", turns_fresh4), ("fresh5", turns_fresh5), ("fresh6", turns_fresh6), ("fresh7", turns_fresh7), ("fresh8", turns_fresh8), ("fresh9", turns_fresh9), ("fresh10", turns_fresh10), ("fresh11", turns_fresh11), ("fresh12", turns_fresh12), ("fresh13", turns_fresh13), ("fresh14", turns_fresh14), ("fresh15", turns_fresh15), ("fresh16", turns_fresh16), ("fresh17", turns_fresh17), ("fresh18", turns_fresh18), ("fresh19", turns_fresh19), ("fresh20", turns_fresh20), ("fresh21", turns_fresh21), ("ml", recall_turns_ml),
            ("warehouse", recall_turns_warehouse), ("genomics", recall_turns_genomics)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a rank config override")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--no-outputs", action="store_true",
                   help="without the second recall of a tool-result turn (its output's identifiers)")
    p.add_argument("--outweighed", type=float, default=OUTWEIGHED, metavar="SHARE",
                   help="the filter's outweighed: a memory of the words below this share of the output "
                        "recall's best is not counted (0: both counted, as before)")
    p.add_argument("--held-out", action="append", default=[], metavar="HALF",
                   help="pool this half apart from the tuned ones (repeatable); -v never prints its turns")
    p.add_argument("--only", action="append", default=[], metavar="HALF", help="only these halves (repeatable)")
    args = p.parse_args(argv)
    from ctxproxy.store.services.recall.rank import RankConfig

    def typed(key: str, value: str):
        kind = type(getattr(RankConfig(), key))
        return value.lower() in ("1", "true", "yes", "on") if kind is bool else kind(value)

    cfg = RankConfig(**{k: typed(k, v) for k, _, v in (s.partition("=") for s in args.set)})
    print(f"{'half':16} {'turns':>5} {'hit rate':>9} {'false rate':>11} {'false/turn':>11}")
    pools = {"tuned, pooled": [0, 0, 0, 0, 0], "held out, pooled": [0, 0, 0, 0, 0]}
    for name, half in halves():
        if args.only and name not in args.only:
            continue
        held = name in args.held_out
        row = run_half(half, cfg, args.verbose and not held, name, not args.no_outputs, outweighed=args.outweighed)
        pool = pools["held out, pooled" if held else "tuned, pooled"]
        pool[:] = [a + b for a, b in zip(pool, row)]
        report(name, *row)
    for name, row in pools.items():
        if row[4]:
            report(name, *row)
    return 0


def report(name: str, hits: int, wanted: int, false_turns: int, false_items: int, n: int) -> None:
    print(f"{name:16} {n:5} {hits / max(wanted, 1):9.3f} {false_turns / n:11.3f} {false_items / n:11.3f}"
          f"   ({hits}/{wanted} hits, {false_turns}/{n} false turns)")


if __name__ == "__main__":
    sys.exit(main())
