"""inject — place offered context segments within the token budget.

Segments are allocated by priority (highest first, ties in offer order). One
that does not fit is truncated at a line boundary when it allows it, else
dropped; the segment records which, for the manifest. Placement: ``system``
segments go to the API's system slot (stable prefix), ``turn`` segments next
to the latest user message. Fails open: on error the request goes on without
the envelope and the turn is marked degraded.
"""
from __future__ import annotations

from dataclasses import dataclass

from .base import Filter, Turn
from .segments import Segment, offered, render


@dataclass(frozen=True)
class InjectConfig:
    token_budget: int = 8000  # tokens all injected segments may use together
    min_truncated_tokens: int = 64  # below this a truncated segment is dropped instead


class InjectFilter(Filter):
    name = "inject"
    required = False
    Config = InjectConfig

    def __init__(self, config: InjectConfig):
        self.config = config

    def on_request(self, turn: Turn) -> None:
        segments = offered(turn)
        if not segments or turn.request is None:
            return
        placed = allocate(segments, self.config.token_budget, turn.tokens.count, self.config.min_truncated_tokens)
        # all edits at the end: a failure above leaves the body untouched
        for seg in placed:
            text = render(seg)
            if seg.placement == "turn":
                turn.request.add_turn_segment(text)
            else:
                turn.request.add_system_segment(text)
        turn.state[self.name] = {"budget": self.config.token_budget, "used": sum(s.tokens for s in placed)}


def allocate(segments: list[Segment], budget: int, count, min_tokens: int = 64) -> list[Segment]:
    """Decide each segment's fate; returns the placed ones in placement order."""
    order = sorted(range(len(segments)), key=lambda i: (-segments[i].priority, i))
    left = budget
    for i in order:
        seg = segments[i]
        cap = min(left, seg.max_tokens) if seg.max_tokens else left
        n = count(seg.text)
        if n <= cap:
            seg.tokens, seg.status = n, "placed"
        elif seg.truncatable and cap >= min_tokens:
            seg.text = truncate_lines(seg.text, cap, count)
            seg.tokens, seg.status, seg.reason = count(seg.text), "truncated", f"{n} tokens > {cap} available"
        else:
            seg.tokens, seg.status, seg.reason = 0, "dropped", f"{n} tokens > {cap} available"
            continue
        left -= seg.tokens
    return [s for s in segments if s.status in ("placed", "truncated")]


def truncate_lines(text: str, cap: int, count) -> str:
    """The longest prefix of whole lines within ``cap`` tokens, with a marker."""
    marker = "\n[… truncated by ctxproxy to fit the context budget]"
    lines = text.split("\n")
    lo, hi = 0, len(lines)
    while lo < hi:  # binary search on the number of lines kept
        mid = (lo + hi + 1) // 2
        if count("\n".join(lines[:mid]) + marker) <= cap:
            lo = mid
        else:
            hi = mid - 1
    return "\n".join(lines[:lo]) + marker
