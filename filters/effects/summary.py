"""The ledger summary: the side effects a compacted history no longer shows.

After a client compacts its history, ``effects`` offers one segment listing
the task's side effects that the history no longer shows (completed, failed,
pending, unknown), kind ``checkpoint`` (its ``[filters.effects]`` keys are
``checkpoint*``). It is a ``LedgerSummary``: the text, and the records it lists.

This module is the effects filter's public interface to the other filters.
``inject`` places a summary as it is. A filter that lists side effects
itself — the task-state checkpoint (``filters/checkpoint``) — folds it
into its own segment instead (one segment, one budget): it reads the
records with ``offered_summaries(turn)`` and, once its own segment is
offered, withdraws the summary with ``withdraw_summaries(turn)``. Such a
filter declares ``runs_after = ("effects",)``: the pipeline refuses a chain
that runs it first.

The renderers below (``effect_call``, ``effect_state``, ...) are the one way
a ledger record is shown to the model, here and in the task-state checkpoint.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ctxproxy.store.records import COMPLETED, FAILED, RESOLVED

from ..base import Turn
from ..segments import Segment, offered, take
from .rules import ToolClasses, canonical_json


@dataclass(eq=False)
class LedgerSummary(Segment):
    """The ledger summary, with the records it lists (oldest first): the
    side effects the compacted history no longer shows."""

    records: tuple = ()
    classes: ToolClasses | None = None
    args_chars: int = 160
    listing: str = ""  # how to list every effect of the scope (for what a budget leaves out)


def offered_summaries(turn: Turn) -> list[LedgerSummary]:
    """The ledger summaries offered this turn (read; still offered)."""
    return [s for s in offered(turn) if isinstance(s, LedgerSummary)]


def withdraw_summaries(turn: Turn) -> None:
    """Withdraw the ledger summaries from this turn's offers: their records
    are folded into another segment."""
    take(turn, LedgerSummary)


def listing(key_scope: str, scope: str) -> str:
    """How a person lists every effect of a scope (the CLI and the admin API)."""
    flag = "task" if key_scope == "task" else "session"
    return f"`ctxproxy effects list --{flag} {scope}` (admin API: GET /ctx/v1/effects?{flag}= the same)"


def completed(r: Any) -> bool:
    return r.state == COMPLETED or (r.state == RESOLVED and r.resolution == "completed")


_FIRST_KEYS = ("file_path", "path", "notebook_path", "url", "command", "cmd", "name", "id", "title")


def compact_args(tool: str, args_canonical: str, classes: ToolClasses, limit: int) -> str:
    """A short, fence-safe form of a call's arguments for the model: a shell
    command as itself; an object as ``key=value`` pairs, paths and names
    first, long strings (file contents, patches) reduced to their length."""
    try:
        args = orjson.loads(args_canonical)
    except orjson.JSONDecodeError:
        args = args_canonical
    cmd = classes.command_of(tool, args) if tool in classes.shell else None
    if cmd is not None:
        text = "`" + " ".join(cmd.split()) + "`"
    elif isinstance(args, dict):
        keys = sorted(args, key=lambda k: (_FIRST_KEYS.index(k) if k in _FIRST_KEYS else len(_FIRST_KEYS), k))
        parts = []
        for k in keys:
            v = args[k]
            if isinstance(v, str):
                flat = " ".join(v.split())
                v = flat if len(flat) <= 60 else (f"{flat[:40]}…" if len(flat) <= 200 else f"«{len(v)} chars»")
            else:
                v = canonical_json(v)
                v = v if len(v) <= 60 else v[:40] + "…"
            parts.append(f"{k}={v}")
        text = " ".join(parts)
    elif isinstance(args, str):
        flat = " ".join(args.split())
        text = flat if len(flat) <= 80 else f"«{len(args)} chars: {flat[:60]}…»"
    else:
        text = canonical_json(args)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def effect_group(r: Any) -> str:
    """``done``, ``failed`` or ``open`` (pending / unknown: it may or may not have taken effect)."""
    if completed(r):
        return "done"
    if r.state == FAILED or (r.state == RESOLVED and r.resolution in ("failed", "not_executed")):
        return "failed"
    return "open"


def effect_call(r: Any, classes: ToolClasses, args_chars: int, key: bool = False) -> str:
    """The call in short form; ``key``: with the first 8 hex digits of its
    idempotency key (the admin listing shows it whole)."""
    s = f"{r.tool} {compact_args(r.tool, r.args_canonical, classes, args_chars)}"
    return f"{s} [key {r.key[:8]}]" if key else s


def effect_state(r: Any) -> str:
    return f"{r.state} ({r.resolution}, resolved by a human)" if r.state == RESOLVED else r.state


def effect_details(r: Any) -> str:
    """What the result showed: its references, else its excerpt ('' if neither)."""
    if r.refs:
        return "; refs: " + ", ".join(x.replace("<", "‹").replace(">", "›") for x in r.refs)
    return f'; result: "{r.excerpt}"' if r.excerpt else ""


def effect_text(r: Any, classes: ToolClasses, args_chars: int) -> str:
    return f"{effect_call(r, classes, args_chars)} → {effect_state(r)}{effect_details(r)}"


def render_summary(records: list, goal: str | None, classes: ToolClasses, args_chars: int,
                      max_effects: int) -> str:
    """The summary's text: what the compacted history no longer shows.

    Most urgent first, so that truncation (at item boundaries, from the end)
    drops the oldest completed effects, never the open ones or the next safe
    action: goal, next safe action, pending/unknown, completed (newest first),
    failed (newest first)."""
    shown = records[-max_effects:]
    older = len(records) - len(shown)
    groups: dict[str, list] = {"done": [], "failed": [], "open": []}
    for r in reversed(shown):
        groups[effect_group(r)].append(r)
    lines = ["Task-state checkpoint (system-provided, recorded by ctxproxy from this task's tool calls). "
             "The conversation history was compacted and no longer shows these calls; this ledger is authoritative."]
    if goal:
        lines.append(f"Goal: {goal}")
    if groups["open"]:
        first = groups["open"][-1]  # the oldest open effect
        lines.append(f"Next safe action: check whether {first.tool} "
                     f"{compact_args(first.tool, first.args_canonical, classes, args_chars)} took effect "
                     "before running it again.")
    if older:
        lines.append(f"({older} older side effects are not listed.)")

    def line(r: Any) -> str:
        return f"- {effect_text(r, classes, args_chars)}"

    if groups["open"]:
        lines.append("Pending or unknown (the result was never seen; it may or may not have taken effect):")
        lines += [line(r) for r in groups["open"]]
    if groups["done"]:
        lines.append("Completed side effects, newest first (already done; do not repeat them):")
        lines += [line(r) for r in groups["done"]]
    if groups["failed"]:
        lines.append("Failed or not executed, newest first:")
        lines += [line(r) for r in groups["failed"]]
    return "\n".join(lines)
