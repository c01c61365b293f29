"""Text deltas of one read, joined by their bytes.

The relay joins the text deltas that came in one read into one event before
the filters (``engine._EventRelay``, ``[server] coalesce_deltas``). The first
delta of a run is parsed; ``frame`` then finds the bytes around its text's
JSON string (everything before and after it, SSE lines included). A later
event made of exactly those bytes around a JSON string is a delta of the same
shape — same envelope, same choice or block, nothing else in it — so its text
is read from that string alone (``Frame.text``), not by parsing the event and
comparing its fields. An event that differs in any other byte is parsed as
before.
"""
from __future__ import annotations

import re
from typing import Callable

import orjson

# The rest of a JSON string's body and its closing quote.
_BODY = re.compile(rb'(?:[^"\\]|\\.)*"')
_PROBE = "\x01"


class Frame:
    """The bytes of a run's first event before and after its text's JSON string."""

    __slots__ = ("head", "tail", "least")

    def __init__(self, head: bytes, tail: bytes):
        self.head = head
        self.tail = tail
        self.least = len(head) + len(tail)

    def text(self, raw: bytes) -> str | None:
        """The text of ``raw`` when it is this frame around one JSON string, else None."""
        if len(raw) < self.least or not raw.startswith(self.head) or not raw.endswith(self.tail):
            return None
        body = raw[len(self.head):len(raw) - len(self.tail)]
        try:  # one string or nothing: a quote inside would end it early, and that fails here
            text = orjson.loads(b'"' + body + b'"')
        except orjson.JSONDecodeError:
            return None
        return text if isinstance(text, str) else None


def frame(raw: bytes, key: str, text: str, read: Callable[[bytes], str | None]) -> Frame | None:
    """The frame of ``raw``, an event whose field ``key`` holds the run's ``text``;
    None when its bytes do not show it for certain. ``read(raw)`` gives an
    event's run text (None when it is no run): the frame is kept only when the
    same bytes with one more character in that string read as ``text`` plus it,
    i.e. the string found is that field and nothing else."""
    mark = b'"' + key.encode() + b'":"'
    i = raw.find(mark)
    if i < 0 or raw.find(mark, i + 1) >= 0:
        return None
    start = i + len(mark)
    m = _BODY.match(raw, start)
    if m is None:
        return None
    end = m.end() - 1
    head, tail = raw[:start], raw[end:]
    if read(head + raw[start:end] + b"\\u0001" + tail) != text + _PROBE:
        return None
    return Frame(head, tail)
