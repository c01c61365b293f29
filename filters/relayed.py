"""The answer as the client received it: what the proxy relayed counts as history.

A filter that needs the model's answer as the client got it asks for
``relayed(turn)`` in its ``on_request``. The first ask makes the turn's one
``RelayedAnswer`` and adds it as an egress (``Turn.add_egress``): it reads
each event after every filter's response hooks, so its text is the text that
went out (redacted), and it costs nothing on a turn no filter asks about.

It keeps the answer's text per channel (the newest ``MAX_CHARS`` of each, in
the order the channels opened), a digest of all of it (whitespace left out,
as clients re-send an answer with other line breaks) and the tool calls the
answer made (call id, tool name). ``complete`` turns true when the provider
says why it stopped (a finish reason): every text and call of the answer has
then been seen, and the callbacks given to ``when_complete`` run at once —
for a stream before its last bytes go out, for a whole answer just after its
bytes were handed to the client's connection, as the exchange ends
(``Exchange.finish``, which the edges run before they read another request):
either way the client's next request already finds what they recorded. An
answer cut short or refused never completes.

A successor turn (Responses steering) shares the egress list of the turn it
continues; the collector takes one answer, the first, and ignores what follows.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from ctxproxy.store.services.digest import sha256

from .base import Turn
from .view import TEXT

log = logging.getLogger("ctxproxy.filters")

MAX_CHARS = 16384  # text kept per channel (its newest characters: a question ends an answer)


class RelayedAnswer:
    """The answer of one turn as it went out (an egress; see the module docstring)."""

    name = "relayed"
    watches_events = True  # reads the answer as it went out: may run just after an event's write

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}  # channel -> its pieces (newest MAX_CHARS)
        self._sizes: dict[str, int] = {}
        self.calls: list[tuple[str, str]] = []  # (call id, tool name), in order
        self.complete = False
        self._digest = sha256()
        self._chars = 0
        self._then: list[Callable[["RelayedAnswer"], None]] = []

    def when_complete(self, fn: Callable[["RelayedAnswer"], None]) -> None:
        self._then.append(fn)

    @property
    def text(self) -> str:
        """The answer's text: its channels' texts joined by newlines (as a client
        re-sends an answer's text parts), stripped."""
        return "\n".join("".join(parts) for parts in self.texts.values()).strip()

    def text_digest(self) -> str | None:
        """A digest of all the answer's text without its whitespace; None when it has none."""
        return self._digest.hexdigest() if self._chars else None

    @property
    def chars(self) -> int:
        """How long the answer's text is, whitespace left out."""
        return self._chars

    # -- the egress --------------------------------------------------------------------

    def event(self, turn: Turn, event: Any) -> None:
        if self.complete:
            return
        try:
            for d in event.deltas():
                if d.kind == TEXT:
                    self._add(d.channel, d.text)
            for _channel, call_id, tool in event.tool_call_starts():
                if call_id:
                    self.calls.append((call_id, tool))
            if event.may_carry_meta(turn.response_id is not None) and event.finish_reasons():
                self._completed()
        except Exception as exc:  # bookkeeping: the answer goes on as it is
            log.warning("turn %s: reading the relayed answer failed: %s", turn.turn_id, type(exc).__name__)
            self.complete, self._then = True, []

    def response(self, turn: Turn, view: Any) -> None:
        if self.complete:
            return
        try:
            for i, slot in enumerate(view.text_slots()):
                if slot.kind == TEXT:
                    self._add(str(i), slot.get())
            self.calls.extend((c.call_id, c.name) for c in view.tool_calls() if c.call_id)
            self._completed()
        except Exception as exc:
            log.warning("turn %s: reading the relayed answer failed: %s", turn.turn_id, type(exc).__name__)
            self.complete, self._then = True, []

    def _add(self, channel: str, text: str) -> None:
        if not isinstance(text, str) or not text:
            return
        bare = "".join(text.split())
        if bare:
            self._digest.update(bare.encode("utf-8", "surrogatepass"))
            self._chars += len(bare)
        parts = self.texts.setdefault(channel, [])
        parts.append(text)
        size = self._sizes.get(channel, 0) + len(text)
        if size > 2 * MAX_CHARS:  # keep the newest MAX_CHARS, in one piece
            joined = "".join(parts)[-MAX_CHARS:]
            parts[:] = [joined]
            size = len(joined)
        self._sizes[channel] = size

    def _completed(self) -> None:
        self.complete = True
        then, self._then = self._then, []
        for fn in then:
            try:
                fn(self)
            except Exception as exc:  # one filter's bookkeeping: the others' and the answer go on
                log.warning("a filter failed on the relayed answer: %s", type(exc).__name__)


def relayed(turn: Turn) -> RelayedAnswer:
    """The turn's ``RelayedAnswer``, made (and added as an egress) on the first ask."""
    for e in turn.egress or ():
        if isinstance(e, RelayedAnswer):
            return e
    answer = RelayedAnswer()
    turn.add_egress(answer)
    return answer
