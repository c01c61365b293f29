"""Running a probe set (facts, isolation, the team's cases) against one target, and
its metrics from what the scripted provider received.

Order: rule files are on disk before the proxy starts; memories go through the
admin API (the gate); priming turns go through the proxy, then its background
writes are settled; each question is then one model request in its own session,
answered by the scripted provider, whose record is what the metrics read.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from . import received
from .harness import Target
from .spec import PATHS, ProbeSet, Question, request_body

K = 5  # Recall@K


@dataclass
class Observation:
    question: Question
    text: str  # what the model read
    items: list[str]  # injected items, reading order
    recalled: list[str]  # items of the recall evidence segment, ranked
    item_tokens: list[int]


@dataclass
class Writes:
    accepted: int = 0  # active, new records
    accepted_good: int = 0  # ...that the case calls reusable and that are unexpired at question time
    refused: int = 0
    statuses: dict[str, int] = field(default_factory=dict)


async def write_memories(t: Target, ps: ProbeSet) -> Writes:
    w = Writes()
    now = time.time()
    for m in ps.memories:
        status, body = await t.admin("POST", "memories", {"statement": m.statement, **m.fields}, tenant=m.tenant)
        if not t.proxied:
            continue
        if status == 400 or status >= 500 or status in (401, 403):  # the case itself, or the proxy, is wrong
            raise RuntimeError(f"memory {m.statement[:60]!r}: the admin API answered {status} {body}")
        kind = (body or {}).get("status") if status == 201 else (body or {}).get("error", {}).get("type", str(status))
        if status == 201 and (body or {}).get("duplicate_of"):
            kind = "duplicate"
        w.statuses[kind] = w.statuses.get(kind, 0) + 1
        if kind == "active":
            w.accepted += 1
            expires = m.fields.get("expires_at")
            w.accepted_good += m.reusable and not (expires is not None and expires <= now)
        elif status != 201:
            w.refused += 1
    return w


async def ask(t: Target, api: str, text: str, who: dict[str, str], body: dict | None = None) -> Any:
    status, _ = await t.post(PATHS[api], body if body is not None else request_body(api, text),
                             await t.identity_headers(who))
    if status != 200:
        raise RuntimeError(f"{t.name}: {api} answered {status} for {text[:60]!r}")
    return t.fake.model_requests[-1]


async def run(t: Target, ps: ProbeSet, step: Callable[[], None]) -> tuple[list[Observation], Writes]:
    writes = await write_memories(t, ps)
    for p in ps.primes:
        await ask(t, p.api, p.text, p.who)
        step()
    await t.settle()
    out = []
    for q in ps.questions:
        rec = await ask(t, q.api, q.text, q.who, q.body)
        text = received.body_text(rec)
        segs = received.segments(text)
        its = received.items(text)
        recalled = [i for s in segs if s.kind == "evidence" for i in received.items(s.text)]
        out.append(Observation(q, text, its, recalled, [received.count(i) for i in its]))
        step()
    return out, writes


def _holds(item: str, wanted: list[str]) -> bool:
    return any(w in item for w in wanted)


def metrics(obs: list[Observation], writes: Writes, stale: list[str]) -> dict[str, float | None]:
    """The facts and isolation metrics of one run (docs/eval.md defines each); None: nothing to measure."""
    ranked = [o for o in obs if o.question.ranked and o.question.expect]
    needed = [o for o in obs if o.question.expect]
    probes = [o for o in obs if o.question.forbid]
    ranks = [_rank(o) for o in ranked]
    cited = [it for o in ranked for it in o.recalled]
    supporting = sum(_holds(it, o.question.expect) for o in ranked for it in o.recalled)
    tokens = sum(sum(o.item_tokens) for o in needed)
    noise = sum(n for o in needed for it, n in zip(o.items, o.item_tokens) if not _holds(it, o.question.expect))
    m: dict[str, float | None] = {
        "recall@1": _share(sum(r == 1 for r in ranks), len(ranks)),
        f"recall@{K}": _share(sum(r is not None and r <= K for r in ranks), len(ranks)),
        "mrr": _share(sum(1 / r for r in ranks if r), len(ranks)),
        "facts_injected": _share(sum(any(_holds(it, o.question.expect) for it in o.items) for o in needed),
                                 len(needed)),
        "citation_precision": _share(supporting, len(cited)) if cited else None,
        "freshness_error": _share(sum(any(_holds(it, stale) for it in o.items) for o in obs), len(obs))
        if stale else None,
        "noise_ratio": _share(noise, tokens) if tokens else None,
        "privacy_leakage": _share(sum(any(c in o.text for c in o.question.forbid) for o in probes), len(probes)),
        "memory_write_precision": _share(writes.accepted_good, writes.accepted) if writes.accepted else None,
    }
    turns = [o for o in obs if o.question.exclusive]
    if turns:
        m.update(turn_metrics(turns))
    return m


def turn_metrics(turns: list[Observation]) -> dict[str, float | None]:
    """Hit rate and false injections of exclusive questions (agent turns)."""
    wanted = [o for o in turns if o.question.expect]
    return {"turn_hit_rate": _share(sum(any(_holds(it, o.question.expect) for it in o.recalled) for o in wanted),
                                    len(wanted)),
            "false_injection_rate": _share(sum(_false(o) > 0 for o in turns), len(turns)),
            "false_injections_per_turn": _share(sum(_false(o) for o in turns), len(turns))}


def _false(o: Observation) -> int:
    """Recalled items an exclusive question did not ask for."""
    return sum(not _holds(it, o.question.expect) for it in o.recalled)


def details(obs: list[Observation], writes: Writes, stale: list[str], limit: int = 20) -> dict:
    """What the metrics summarise, for a person reading the report: the gate's verdicts,
    Recall@K and MRR per way of asking, the questions that missed or leaked, and the
    stale memories injected (the first ``limit`` of each). A sealed question counts in
    ``by_split`` only: its text is never quoted, nor its shape's hits given."""
    by: dict[str, list[Observation]] = {}
    for o in obs:
        if o.question.ranked and o.question.expect:
            by.setdefault(o.question.variant or "-", []).append(o)
    variants = {}
    for name, group in by.items():
        ranks = [_rank(o) for o in group]
        variants[name] = {"questions": len(group),
                          f"recall@{K}": _share(sum(r is not None and r <= K for r in ranks), len(ranks)),
                          "mrr": _share(sum(1 / r for r in ranks if r), len(ranks))}
    quotable = [o for o in obs if not o.question.sealed]  # a sealed half shows only in by_split's numbers
    shapes: dict[str, list[Observation]] = {}
    for o in quotable:
        if o.question.exclusive:
            shapes.setdefault(o.question.variant or "-", []).append(o)
    by_shape = {name: {"turns": len(group),
                       "hits": sum(any(_holds(it, o.question.expect) for it in o.recalled) for o in group
                                   if o.question.expect),
                       "false_injections": sum(_false(o) for o in group)} for name, group in shapes.items()}
    out = {"writes": writes.statuses, "questions": len(obs), "by_variant": variants,
           "missed": [o.question.text for o in quotable if o.question.expect
                      and not any(_holds(it, o.question.expect) for it in o.items)][:limit],
           "leaked": [f"{o.question.text} {o.question.who}" for o in quotable
                      if any(c in o.text for c in o.question.forbid)][:limit],
           "stale_injected": _stale_counts(obs, stale, limit)}
    if by_shape:
        out["by_shape"] = by_shape
        splits: dict[str, list[Observation]] = {}
        for o in obs:
            if o.question.exclusive and o.question.split:
                splits.setdefault(o.question.split, []).append(o)
        out["by_split"] = {name: {"turns": len(group), **turn_metrics(group)} for name, group in splits.items()}
        out["false_injected"] = [f"{o.question.text[:60]}… → {it[:80]}" for o in quotable if o.question.exclusive
                                 for it in o.recalled if not _holds(it, o.question.expect)][:limit]
    return out


def _stale_counts(obs: list[Observation], stale: list[str], limit: int) -> dict[str, int]:
    """Each stale statement injected, and into how many requests (most first)."""
    counts: dict[str, int] = {}
    for o in obs:
        for st in {st for st in stale for it in o.items if st in it}:
            counts[st] = counts.get(st, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])


def _rank(o: Observation) -> int | None:
    """1-based rank of the first recalled item holding the expected answer (None: absent)."""
    return next((i + 1 for i, it in enumerate(o.recalled) if _holds(it, o.question.expect)), None)


def _share(n: float, d: int) -> float | None:
    return round(n / d, 4) if d else None
