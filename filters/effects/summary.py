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

``SummaryBook`` builds a scope's summary: its side-effecting records (kept in
this process while the ledger's revision for the scope stands), the ones the
request's history no longer shows, rendered most urgent first; a new
revision is stored (``checkpoints``, id ``effects:<scope>``), filed under
every session whose effects it lists, so erasing any of them erases it. The
renderers below (``effect_call``, ``effect_state``, ...) are the one way a
ledger record is shown to the model, here and in the task-state checkpoint.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.records import COMPLETED, FAILED, PENDING, RESOLVED
from ctxproxy.store.services.digest import text_sha256

from ..base import Turn
from ..segments import Segment, offered, take
from .rules import ToolClasses, canonical_json

LEDGERS_BYTES = 2 << 20  # side-effect ledgers read, by scope and revision


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


class SummaryBook:
    """Builds the ledger summary of a scope (a task, or a session), keeping
    each scope's side-effecting records and their rendering in this process
    (bounded) while the ledger's revision for the scope stands."""

    def __init__(self, config: Any, classes: ToolClasses):
        self.config = config  # the effects filter's (its checkpoint* keys)
        self.classes = classes
        self._ledgers = ByteLRU(LEDGERS_BYTES, "effect ledgers read")  # see _records

    def summary(self, b: Any, es: dict, lazy: Any, tenant: str, session: str, task: str, scope: str,
                now: float) -> LedgerSummary | None:
        """The summary of the side effects ``lazy`` (the request's history) no
        longer shows, given the session's ledger state ``es`` (its goal; ``cp``,
        the revision last stored, is updated); None when the history shows
        them all. A new revision is stored in ``b`` (``checkpoints``)."""
        cfg = self.config
        memo = self._records(b, tenant, {"task": task} if cfg.key_scope == "task" else {"session": session},
                                  now)
        hidden = [r for r in memo.records if not lazy.visible(r)]
        if not hidden:
            return None
        sig = (tuple(id(r) for r in hidden), es.get("goal"))
        rendered = memo.rendered  # (read once: the writer thread may render it too)
        if rendered is None or rendered[0] != sig:
            text = render_summary(hidden, es.get("goal"), self.classes, cfg.args_chars, cfg.checkpoint_max_effects)
            rendered = memo.rendered = (sig, text, text_sha256(text)[:12])
        _, text, rev = rendered
        ref = f"checkpoint:{scope}@{rev}"
        if es.get("cp") != rev:
            # A task's checkpoint lists the effects of each of its sessions: erasing any of
            # them (or its subject) must erase it too, so it is filed under all of them.
            b.checkpoints.put(tenant, f"effects:{scope}", {
                "ref": ref, "revision": rev, "text": text, "keys": [[r.key, r.call_id] for r in hidden],
                "observed_at": now}, session=session,
                sessions=sorted({r.session for r in hidden if r.session is not None}))
            es["cp"] = rev
        return LedgerSummary(kind="checkpoint", ref=ref, text=text, origin="effects",
                             scope="task" if cfg.key_scope == "task" else "session", trust="system",
                             sensitivity="internal", freshness={"observed_at": now, "revision": rev},
                             priority=cfg.checkpoint_priority, max_tokens=cfg.checkpoint_max_tokens,
                             placement=cfg.checkpoint_placement, truncatable=True, boundary="item",
                             records=tuple(hidden), classes=self.classes, args_chars=cfg.args_chars,
                             listing=listing(cfg.key_scope, task if cfg.key_scope == "task" else session))

    def _records(self, b: Any, tenant: str, where: dict, now: float) -> "_Ledger":
        """The scope's side-effecting records, kept in this process until the
        ledger's revision for the scope changes or a pending record would start
        reading as unknown: after a compaction every turn shows the summary,
        and it should not cost a scan of the whole ledger each time."""
        rev = b.effects.revision(tenant, **where)
        key = (tenant, *where.items())
        memo = self._ledgers.get(key)  # write-aheads run this on the store's writer thread
        if memo is not None and memo.rev == rev and now < memo.until:
            return memo
        records = b.effects.list(tenant, side_effect=True, **where)
        timeout = b.pending_timeout
        until = min((r.created_at + timeout for r in records if r.state == PENDING and timeout is not None),
                    default=float("inf"))
        memo = _Ledger(rev, until, records)
        if rev is not None or not records:  # (records without a revision predate it: read them each time)
            self._ledgers.put(key, memo)
        return memo


@dataclass(eq=False)
class _Ledger:
    """A scope's side-effecting records as read at revision ``rev`` (valid
    until ``until``), and the summary last rendered from them."""

    rev: bytes | None
    until: float
    records: list
    rendered: tuple | None = None  # (signature, text, digest)


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
