"""Incremental server-sent-events decoding that keeps every original byte.

``SSEDecoder.decode(chunk)`` returns the events completed by ``chunk``; each
keeps its exact raw bytes (fields, comments, line endings and the blank line
that ends it) so an event no filter touched is re-emitted byte for byte.
``flush()`` returns whatever trails at the end of the stream.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class RawEvent:
    raw: bytes  # the event as received, terminator included
    name: str | None  # the ``event:`` field
    data: bytes | None  # ``data:`` lines joined by b"\n"; None when absent


class SSEDecoder:
    __slots__ = ("_buf", "_scan", "_cr")

    def __init__(self) -> None:
        self._buf = bytearray()  # always starts at the start of an event
        self._scan = 0  # where to resume looking for the end of an event
        self._cr = False  # a CR was seen: every line ending is possible from now on

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
            events.append(_parse(bytes(buf[start:end])))
            start = end
            self._scan = 0
        if start:
            del buf[:start]
        self._scan = max(0, len(buf) - 1)  # a trailing "\n" may pair with the next chunk's
        return events

    def _decode_any(self) -> list[RawEvent]:
        events: list[RawEvent] = []
        buf = self._buf
        start = 0
        i = self._scan
        n = len(buf)
        line_start = i
        # Walk line terminators; an empty line ends an event.
        while i < n:
            c = buf[i]
            if c == 0x0A or c == 0x0D:
                if c == 0x0D:
                    if i + 1 >= n:
                        break  # "\r" may be half of "\r\n": wait for more
                    end = i + 2 if buf[i + 1] == 0x0A else i + 1
                else:
                    end = i + 1
                if i == line_start:  # empty line: event complete
                    raw = bytes(buf[start:end])
                    events.append(_parse(raw))
                    start = end
                line_start = end
                i = end
            else:
                nl = buf.find(b"\n", i)
                cr = buf.find(b"\r", i)
                if nl < 0 and cr < 0:
                    i = n
                    break
                i = nl if cr < 0 else cr if nl < 0 else min(nl, cr)
        if start:
            del buf[:start]
        # resume at the start of the unfinished line (relative to the new buffer)
        self._scan = max(0, line_start - start) if line_start >= start else 0
        return events

    def flush(self) -> RawEvent | None:
        if not self._buf:
            return None
        raw = bytes(self._buf)
        self._buf.clear()
        self._scan = 0
        self._cr = False
        return _parse(raw)


def _parse(raw: bytes) -> RawEvent:
    name = None
    data: list[bytes] = []
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
    return RawEvent(raw, name, b"\n".join(data) if data else None)


def encode_event(name: str | None, data: bytes) -> bytes:
    """One SSE event; ``data`` must be a single line (compact JSON is)."""
    head = b"event: " + name.encode() + b"\n" if name else b""
    return head + b"data: " + data + b"\n\n"
