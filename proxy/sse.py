"""Incremental server-sent-events decoding that keeps every original byte.

``SSEDecoder.decode(chunk)`` returns the events completed by ``chunk``; each
keeps its exact raw bytes (fields, comments, line endings and the blank line
that ends it) so an event no filter touched is re-emitted byte for byte.
``flush()`` returns whatever trails at the end of the stream.

A UTF-8 byte order mark opening the stream is kept in the first event's raw
bytes and skipped when its fields are read (the SSE spec strips it). With CR
line endings, an event whose blank line is a "\r" at the very end of a chunk
is returned at once: a "\n" in the next chunk only completes that line
ending and starts the next event's raw bytes.
"""
from __future__ import annotations

import re
from typing import Any

_EOL = re.compile(rb"[\r\n]")
BOM = b"\xef\xbb\xbf"
_UNREAD = object()


class RawEvent:
    """One event: ``raw``, its bytes as received (terminator included), and its
    fields, read on first use (a relayed event no filter hooks is mostly
    passed on without them): ``name`` (the ``event:`` field) and ``data``
    (``data:`` lines joined by b"\n"; None when absent)."""

    __slots__ = ("raw", "_skip", "_name", "_data")

    def __init__(self, raw: bytes, skip: int = 0):
        self.raw = raw
        self._skip = skip  # a byte order mark opening the stream is no field
        self._name: Any = _UNREAD

    @property
    def name(self) -> str | None:
        if self._name is _UNREAD:
            self._read()
        return self._name

    @property
    def data(self) -> bytes | None:
        if self._name is _UNREAD:
            self._read()
        return self._data

    def _read(self) -> None:
        name = None
        data: list[bytes] = []
        raw = self.raw[self._skip:] if self._skip else self.raw
        for line in raw.splitlines():
            if not line or line[:1] == b":":
                continue
            field, sep, value = line.partition(b":")
            if sep and value[:1] == b" ":
                value = value[1:]
            if field == b"data":
                data.append(value)
            elif field == b"event":
                name = value.decode("utf-8", "replace")
        self._name, self._data = name, (b"\n".join(data) if data else None)

    def __repr__(self) -> str:
        return f"RawEvent({self.raw!r})"


class SSEDecoder:
    __slots__ = ("_buf", "_scan", "_cr", "_lf", "_first")

    def __init__(self) -> None:
        self._buf = bytearray()  # always starts at the start of an event
        self._scan = 0  # where to resume looking for the end of an event
        self._cr = False  # a CR was seen: every line ending is possible from now on
        self._lf = False  # the last event ended on a "\r" that a "\n" may complete
        self._first = True  # no event returned yet: a BOM may open the stream

    def decode(self, chunk: bytes) -> list[RawEvent]:
        self._buf += chunk
        if not self._cr and b"\r" not in chunk:
            return self._decode_lf()
        if not self._cr:
            self._cr, self._scan = True, 0  # rescan the pending event by lines
        return self._decode_any()

    def _decode_lf(self) -> list[RawEvent]:
        """LF line endings only (what providers send): an event ends at the
        first blank line, i.e. at "\n\n", or is a lone "\n" where one begins."""
        buf = self._buf
        events: list[RawEvent] = []
        start, n = 0, len(buf)
        while start < n:
            if buf[start] == 0x0A:
                end = start + 1
            else:
                i = buf.find(b"\n\n", max(start, self._scan))
                if i < 0:
                    break
                end = i + 2
            events.append(self._event(bytes(buf[start:end])))
            start = end
            self._scan = 0
        if start:
            del buf[:start]
        self._scan = max(0, len(buf) - 1)  # a trailing "\n" may pair with the next chunk's
        return events

    def _decode_any(self) -> list[RawEvent]:
        """Any line endings: walk the terminators (one regex search each, so a
        buffer is scanned once however its lines end); an empty line ends an event."""
        events: list[RawEvent] = []
        buf = self._buf
        n = len(buf)
        start = 0
        i = line_start = self._scan  # the start of the unfinished line
        if self._lf and n:
            self._lf = False
            if buf[0] == 0x0A and i == 0:  # the rest of the last event's "\r\n"
                i = line_start = 1
        search = _EOL.search
        while (m := search(buf, i)) is not None:
            j = m.start()
            if buf[j] == 0x0D:
                if j + 1 >= n:  # "\r" may be half of "\r\n"
                    if j == line_start:  # a blank line either way: the event is complete now
                        events.append(self._event(bytes(buf[start:j + 1])))
                        start = line_start = j + 1
                        self._lf = True
                    break
                end = j + 2 if buf[j + 1] == 0x0A else j + 1
            else:
                end = j + 1
            if j == line_start:  # empty line: event complete
                events.append(self._event(bytes(buf[start:end])))
                start = end
            line_start = i = end
        if start:
            del buf[:start]
        self._scan = line_start - start  # resume at the start of the unfinished line
        return events

    def _event(self, raw: bytes) -> RawEvent:
        if self._first:
            self._first = False
            if raw.startswith(BOM):
                return RawEvent(raw, 3)
        return RawEvent(raw)

    def flush(self) -> RawEvent | None:
        """What trails at the end of the stream (an event without its blank
        line); the decoder is then ready for a new stream."""
        self._lf = False
        if not self._buf:
            self._first = True
            return None
        raw = bytes(self._buf)
        self._buf.clear()
        self._scan = 0
        self._cr = self._lf = False
        ev = self._event(raw)
        self._first = True
        return ev


def encode_event(name: str | None, data: bytes) -> bytes:
    """One SSE event; ``data`` must be a single line (compact JSON is)."""
    head = b"event: " + name.encode() + b"\n" if name else b""
    return head + b"data: " + data + b"\n\n"
