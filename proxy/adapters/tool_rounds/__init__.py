"""Rounds of a tool the proxy answers itself, in each API's wire format.

When the model calls the proxy's own tool (the memory tool), the proxy runs
it, appends the call and its result to the conversation and asks again; the
client reads one answer as if the model had not needed the tool. This
package knows the three APIs' shapes for that, one module each beside the
shared ``common``: the tool's definition, the calls in a whole answer and in
a stream, the request that continues a round, and how answers and streams
of several rounds join into one (block and choice indices, output indices
and sequence numbers contiguous, usage summed).

A stream costs nothing extra until the proxy's tool shows up: events pass as
their own bytes, and only an event that names the tool is parsed. After
that, every event of the turn is parsed and re-encoded (indices shift).
Events come as SSE events (``sse.RawEvent``) or as Responses WebSocket
frames (``FrameEvent``, written back with ``ws_frame``).
"""
from __future__ import annotations

from .anthropic import AnthropicCodec
from .common import Call, Codec, FrameEvent, Round, Splicer, ws_frame
from .openai_chat import ChatCodec
from .openai_responses import ResponsesCodec

CODECS: dict[str, type[Codec]] = {"anthropic": AnthropicCodec, "chat": ChatCodec, "responses": ResponsesCodec}


def codec_for(api: str, name: str) -> Codec:
    return CODECS[api](name)


__all__ = ["CODECS", "Call", "Codec", "FrameEvent", "Round", "Splicer", "codec_for", "ws_frame"]
