"""The compaction set: each agent's session (``agents``: Claude Code, Codex with local
and remote compaction, OpenClaw, Hermes, in their recorded request shapes) gives
instructions, takes decisions, reads long tool outputs, passes tests, commits,
opens a PR, deploys to staging and asks for an approval; then its client
compacts with a summary that keeps none of it, and the session goes on.

Measured from what the provider received: what stayed visible after the
compaction, side effects the model repeated, whether each request kept the
previous one's cached prefix, and the tokens of the requests before the
compaction (the same requests with and without the proxy: after it, a model
that cannot see its PR makes more requests).
"""
from __future__ import annotations

from typing import Callable

from . import received
from .agents import AGENTS, cache_kept, run
from .harness import Target


async def run_set(t: Target, step: Callable[[], None], filler: int = 24, after: int = 4,
                  read_lines: int = 29) -> dict:
    who = await t.identity_headers({"tenant": "default", "user": "eval"}) if t.keys_mode else None
    raw = {"visible": [], "duplicates": 0, "kept": [], "input_tokens": 0, "injected_tokens": 0, "lost": {}}
    for name, cls in AGENTS.items():
        agent = cls()
        r = await run(agent, t.url, t.fake, filler=filler, after=after, read_lines=read_lines, headers=who)
        raw["visible"].append(sum(r.visible_all.values()) / len(r.visible_all))
        raw["lost"][name] = sorted(k for k, v in r.visible_all.items() if not v)
        raw["duplicates"] += r.duplicates
        recs = t.fake.model_requests[r.start:]
        bodies = [(i, rec.json) for i, rec in enumerate(recs, r.start) if i != r.compaction_at]
        raw["kept"] += [cache_kept(agent.api, a, b) for (i, a), (j, b) in zip(bodies, bodies[1:])
                        if not (i < r.compaction_at < j)]  # the compaction itself starts a new prefix
        for rec in t.fake.model_requests[r.start:r.compaction_at]:  # the same requests with and without a proxy
            text = received.body_text(rec)
            raw["input_tokens"] += received.body_tokens(rec.json)
            raw["injected_tokens"] += received.injected_tokens(text)
        step()
    return raw


def metrics(raw: dict, direct: dict | None) -> dict[str, float | None]:
    """``direct``: the same sessions' raw numbers with no proxy (for the tokens pruning saved)."""
    own = raw["input_tokens"] - raw["injected_tokens"]  # what the sessions' own content cost after pruning
    saved = None
    if direct and direct["input_tokens"]:
        saved = round(1 - own / direct["input_tokens"], 4)
    return {"compaction_fidelity": round(sum(raw["visible"]) / len(raw["visible"]), 4),
            "duplicate_side_effects": raw["duplicates"],
            "cache_prefix_retention": round(sum(raw["kept"]) / len(raw["kept"]), 4) if raw["kept"] else None,
            "tokens_saved_by_pruning": saved,
            "input_tokens": raw["input_tokens"],
            "injected_tokens": raw["injected_tokens"]}
