"""The tool calls of one answer, assembled as it streams (or read from the whole JSON).

What the effects filter records ``pending`` when the answer ends: from the
redacted deltas (each call's arguments gathered on its channel until the
channel closes) or from the whole JSON. Arguments are kept as a copy: the
answer is edited after the filters' hooks (reversible redaction's last edit
puts values back into those very dicts), and the ledger keeps what the
filters saw.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from ..view import ARGS
from .rules import normalize_value
from .settle import TOO_DEEP


@dataclass
class Capture:
    """Tool calls of one response, and what the request said about where they belong."""

    open: dict[str, list] = field(default_factory=dict)  # channel -> [call_id, name, [text], free_form]
    done: list[tuple[str, str, Any]] = field(default_factory=list)  # (call_id, name, arguments)
    thread: str | None = None  # the request's thread (set by on_request)
    response_id: str | None = None  # of a whole JSON response (streams: turn.response_id)
    scope: tuple[str, str, str, str] | None = None  # tenant, session, task, key scope
    goal: str | None = None  # the X-Ctx-Goal header, redacted (set by on_request)

    def whole(self, view: Any) -> None:
        """The calls of a whole JSON answer."""
        self.response_id = view.response_id()
        for c in view.tool_calls():
            # normalize_value builds new containers and, unlike an orjson round trip, takes any
            # int and stops at MAX_DEPTH with a ValueError instead of failing the response.
            try:
                args = normalize_value(c.arguments)
            except ValueError:
                args = TOO_DEEP
            self.done.append((c.call_id, c.name, args))

    def event(self, event: Any) -> None:
        """One stream event: calls it opens, argument deltas, channels it closes."""
        for ch, cid, name in event.tool_call_starts():
            self.open[ch] = [cid, name, [], False]
        if self.open:
            for d in event.deltas():
                entry = self.open.get(d.channel)
                if entry is not None:
                    entry[2].append(d.text)
                    if d.kind != ARGS:
                        entry[3] = True  # free-form (custom tool) input, not JSON
            for ch in event.closed_channels():
                entry = self.open.pop(ch, None)
                if entry is not None:
                    self.done.append((entry[0], entry[1], _decode(entry[2], entry[3])))

    def close(self) -> None:
        """A clean end closes what is still open."""
        for entry in self.open.values():
            self.done.append((entry[0], entry[1], _decode(entry[2], entry[3])))
        self.open.clear()


def _decode(parts: list[str], free_form: bool) -> Any:
    text = "".join(parts)
    if free_form:
        return text
    if not text.strip():
        return {}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
