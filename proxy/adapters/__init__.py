"""Wire adapters, one module per provider API, sharing ``base``.

``ADAPTERS[api]`` bundles what the server needs for one API: the request and
response views, a per-response stream state, and the error shapes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import orjson

from . import anthropic, openai_chat, openai_responses
from ..sse import encode_event
from .base import AdapterError, Event, View, dumps, loads, parse_body


@dataclass(frozen=True)
class Adapter:
    api: str
    request: type[View]
    response: type[View]
    stream: Callable[[], Any]  # new per-response stream state with .event(name, raw, data)
    error_body: Callable[[int, str], dict]
    stream_error: Callable[..., tuple[str | None, dict]]  # (status, message, response id, bytes sent)
    # Events that end a well-formed stream (by SSE name; for Chat, by data): a stream
    # that stops before one was cut. ``hints``: bytes one of which such an event must
    # hold, so most events are ruled out without reading their fields.
    terminal_names: frozenset[str] = frozenset()
    terminal_hints: tuple[bytes, bytes] = (b"", b"")
    # The SSE event that opens a response and names its id (read even when no filter
    # hooks events: a Responses chain needs the id); None when the API needs none.
    id_event: str | None = None
    # Bytes every event the client counts holds (Responses numbers its events): the
    # last such bytes sent say where an error event's number goes on. None: any bytes.
    counted_marker: bytes | None = None

    def opens_response(self, raw: Any) -> bool:
        """Whether the decoded SSE event ``raw`` is the one that names the response id."""
        name = self.id_event
        return name is not None and name.encode() in raw.raw and raw.name == name

    def counted(self, data: bytes) -> bool:
        """Whether bytes sent to the client hold an event it counts (not a keep-alive comment)."""
        return self.counted_marker is None or self.counted_marker in data

    def is_terminal(self, raw: Any) -> bool:
        """Whether the decoded SSE event ``raw`` (``sse.RawEvent``) ends the stream."""
        first, second = self.terminal_hints
        if first not in raw.raw and second not in raw.raw:
            return False
        if not self.terminal_names:  # Chat: "[DONE]", or an error object in place of a chunk
            return raw.data == b"[DONE]" or (raw.data is not None and raw.data.startswith(b'{"error"'))
        return raw.name in self.terminal_names

    def parse_request(self, raw: bytes) -> View:
        return self.request(parse_body(raw), raw)

    def parse_response(self, raw: bytes) -> View | None:
        try:
            body = loads(raw)
        except orjson.JSONDecodeError:
            return None
        return self.response(body, raw) if isinstance(body, dict) else None

    def error_bytes(self, status: int, message: str) -> bytes:
        return dumps(self.error_body(status, message))

    def stream_error_bytes(self, status: int, message: str, response_id: str | None = None,
                           after: bytes = b"") -> bytes:
        """The event that tells a streaming client its response failed;
        ``after``: the last bytes it was sent (an event may be numbered)."""
        name, data = self.stream_error(status, message, response_id, after)
        return encode_event(name, dumps(data))


ADAPTERS: dict[str, Adapter] = {
    "anthropic": Adapter("anthropic", anthropic.AnthropicRequest, anthropic.AnthropicResponse,
                         anthropic.AnthropicStream, anthropic.error_body, anthropic.stream_error,
                         frozenset({"message_stop", "error"}), (b"message_stop", b"error")),
    "chat": Adapter("chat", openai_chat.ChatRequest, openai_chat.ChatResponse,
                    openai_chat.ChatStream, openai_chat.error_body, openai_chat.stream_error,
                    frozenset(), (b"[DONE]", b'{"error"')),
    # Every name but "error" holds "response.".
    "responses": Adapter("responses", openai_responses.ResponsesRequest, openai_responses.ResponsesResponse,
                         openai_responses.ResponsesStream, openai_chat.error_body, openai_responses.stream_error,
                         openai_responses.TURN_END, (b"response.", b"error"), "response.created",
                         b'"sequence_number"'),
}

# Which API a POST speaks, by its path after any route prefix: (api, auxiliary).
# Auxiliary calls carry that API's request (the whole conversation) but their
# answer is not a model turn (a token count, a compacted history): secrets must
# not leave through them either, so they get the filters that guard requests.
#
# Anthropic paths match exactly: a bare "…/messages" suffix would also take
# OpenAI's Assistants API (/v1/threads/<id>/messages) and send its key to Anthropic.
ANTHROPIC_PATHS = {
    "/v1/messages": ("anthropic", False),
    "/messages": ("anthropic", False),
    "/v1/messages/count_tokens": ("anthropic", True),
    "/messages/count_tokens": ("anthropic", True),
}
# OpenAI paths match by suffix: deployments put their own path first
# (Azure: /openai/deployments/<name>/chat/completions).
OPENAI_SUFFIXES = (
    ("/chat/completions", ("chat", False)),
    ("/responses", ("responses", False)),
    ("/responses/input_tokens", ("responses", True)),
    ("/responses/compact", ("responses", True)),
)
_PASS_THROUGH = (None, False)


def api_for_path(path: str) -> tuple[str | None, bool]:
    """(API a POST to ``path`` speaks, whether it is an auxiliary call);
    (None, False) for pass-through paths. A trailing slash does not hide a
    model call from the filters."""
    path = path.rstrip("/")
    found = ANTHROPIC_PATHS.get(path)
    if found is not None:
        return found
    for suffix, found in OPENAI_SUFFIXES:
        if path.endswith(suffix):
            return found
    return _PASS_THROUGH


__all__ = ["ADAPTERS", "Adapter", "AdapterError", "Event", "View", "api_for_path"]
