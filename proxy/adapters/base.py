"""What the three wire adapters share: the edit-tracking view, lazy stream
events, error bodies, and the helpers that turn JSON shapes into slots.

An adapter is narrow: parse bytes into a view, let filters edit through it,
serialise back — the original bytes when nothing changed.
"""
from __future__ import annotations

import json
import re
import weakref
from typing import Any, Callable, ClassVar, Iterator

import orjson

from ..sse import encode_event

from ctxproxy.filters.view import (ARGS, TEXT, BodyHints, HistoryKeys, Delta, Slot, ToolCall, ToolResult, Usage, Where,
                                   iter_strings, type_of, visible_strings)


class AdapterError(ValueError):
    """The caller's body is not a request this API accepts (answered 400)."""


# Keys that never hold text the model reads as language (ids, enums, opaque blobs).
OPAQUE_KEYS = frozenset({
    "type", "id", "role", "tool_use_id", "tool_call_id", "call_id", "signature", "cache_control",
    "media_type", "encrypted_content", "status", "name", "index", "image_url", "file_id", "format",
    "detail", "annotations", "logprobs", "citations",
})
# Keys of what the model reads in a tool definition, at any depth (a parameter's schema
# has them too), each value taken whole: its prose, and the values a schema offers or
# shows (``enum``, ``default``, ``const``, ``examples``; Anthropic's ``input_examples``).
TOOL_TEXT_KEYS = frozenset({"description", "title", "server_description",
                            "enum", "default", "const", "examples", "input_examples"})
_NO_KEYS: frozenset[str] = frozenset()
# Keys whose value is a tool's own free-form arguments (``tool_use.input``):
# walked whole, since a tool may well name an argument ``name`` or ``id``.
FREE_FORM_KEYS = frozenset({"input"})
# Content parts that carry binary payloads (base64 images, audio, files): never walked,
# at any depth. "base64" is Anthropic's inline source object (``{"type": "base64",
# "media_type", "data"}``) of an image or a PDF ``document``: only the source is
# skipped, so a document's title and context, and a document with a ``text`` or
# ``content`` source, are read like any text.
BINARY_PARTS = frozenset({
    "image", "redacted_thinking", "input_image", "image_url", "input_audio", "input_file", "file",
    "document_binary", "compaction", "compaction_summary", "item_reference", "base64",
})
# Conversation items (roles, or Responses item types) that come from the model.
MODEL_ROLES = frozenset({"assistant", "function_call", "custom_tool_call", "reasoning", "local_shell_call",
                         "computer_call", "web_search_call", "file_search_call", "mcp_call"})
# Content parts that are text: what ``text_of`` flattens a tool result to.
TEXT_PARTS = frozenset({"text", "input_text"})


class View:
    """Base of request and response views: the parsed body plus an edit count."""

    api: ClassVar[str] = ""
    __slots__ = ("body", "raw", "edits", "__weakref__")

    def __init__(self, body: dict, raw: bytes = b""):
        self.body = body
        self.raw = raw
        self.edits = 0

    @property
    def changed(self) -> bool:
        return self.edits > 0

    def mark_changed(self) -> None:
        self.edits += 1

    def to_bytes(self) -> bytes:
        """Original bytes when untouched; otherwise the edited body."""
        return self.raw if not self.edits and self.raw else dumps(self.body)

    # -- shared slot helpers -------------------------------------------------
    def parts(self, value: Any, where: Where, kind: str = TEXT) -> Iterator[Slot]:
        """Slots inside a list of content parts (or one part), binary parts skipped
        at any depth (an image inside a tool result, a PDF's base64 source)."""
        if isinstance(value, (list, dict)):
            yield from iter_strings(value, where, kind, OPAQUE_KEYS, self.mark_changed, FREE_FORM_KEYS,
                                    BINARY_PARTS)

    def field_slot(self, obj: dict, key: str, where: Where, kind: str = TEXT) -> Iterator[Slot]:
        """The slot(s) of ``obj[key]``: a string field, or content parts under it."""
        value = obj.get(key)
        if isinstance(value, str):
            yield Slot(obj, key, where, kind, self.mark_changed)
        elif isinstance(value, (list, dict)):
            yield from self.parts(value, where, kind)

    def args_slot(self, obj: dict, key: str, where: Where) -> Iterator[Slot]:
        if isinstance(obj.get(key), str):
            yield Slot(obj, key, where, ARGS, self.mark_changed)


# The same keys for the three APIs: a fingerprint must not depend on which of them
# carried an item (the ledger's threads keep fingerprints across turns).
HISTORY_KEYS = HistoryKeys(
    ids=frozenset({"id", "tool_use_id", "call_id", "tool_call_id"}),
    volatile=frozenset({"cache_control"}),
    compaction_items=("compaction", "compaction_summary"),  # Codex's remote compaction
    compaction_triggers=("compaction_trigger",),  # Codex's remote compaction v2 asks with this item
)


class RequestViewBase(View):
    """What the three request views share: model, stream flag, the conversation
    list, and the tool calls and results found in it (walked once per state of
    the body: several filters ask, and the history can be long)."""

    items_key: ClassVar[str] = "messages"  # where the conversation lives ("messages" / "input")
    __slots__ = ("_calls", "_results", "_encodings")

    # Top-level keys outside the conversation whose text the model reads (tools: as JSON).
    head_keys: ClassVar[tuple[str, ...]] = ()
    result_parts_key: ClassVar[str] = "content"  # where a tool result item holds its parts

    def __init__(self, body: dict, raw: bytes = b""):
        super().__init__(body, raw)
        self._calls: tuple[int, list[ToolCall]] | None = None
        self._results: tuple[int, list[ToolResult]] | None = None
        self._encodings: tuple[int, list[bytes | None]] | None = None

    def item_encodings(self) -> list[bytes | None]:
        """Each conversation item's JSON encoding (None if it has none), made
        once per state of the body: filters key their per-item memos by it."""
        if self._encodings is None or self._encodings[0] != self.edits:
            out: list[bytes | None] = []
            for item in self.items():
                try:
                    out.append(dumps(item))
                except (TypeError, orjson.JSONEncodeError):
                    out.append(None)
            self._encodings = (self.edits, out)
        return self._encodings[1]

    def tool_calls(self) -> list[ToolCall]:
        if self._calls is None or self._calls[0] != self.edits:
            self._calls = (self.edits, self._find_tool_calls())
        return list(self._calls[1])

    def tool_results(self) -> list[ToolResult]:
        if self._results is None or self._results[0] != self.edits:
            self._results = (self.edits, self._find_tool_results())
        return list(self._results[1])

    def _find_tool_calls(self) -> list[ToolCall]:
        raise NotImplementedError

    def _find_tool_results(self) -> list[ToolResult]:
        raise NotImplementedError

    @property
    def model(self) -> str:
        m = self.body.get("model")
        return m if isinstance(m, str) else ""

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    def items(self) -> list:
        value = self.body.get(self.items_key)
        return value if isinstance(value, list) else []

    # Model-visible strings: those outside the conversation list (system prompt,
    # instructions), then item by item, so a filter can skip items it has seen.
    def head_slots(self) -> Iterator[Slot]:
        return iter(())

    def item_slots(self, i: int, item: dict) -> Iterator[Slot]:
        raise NotImplementedError

    def text_slots(self) -> Iterator[Slot]:
        yield from self.head_slots()
        for i, item in enumerate(self.items()):
            if isinstance(item, dict):
                yield from self.item_slots(i, item)

    def head_messages(self) -> Iterator[tuple[int | None, str, Slot]]:
        """``message_slots`` of what precedes the conversation (by default the
        system prompt: message None)."""
        for s in self.head_slots():
            yield None, "", s

    def message_slots(self) -> Iterator[tuple[int | None, str, Slot]]:
        """``text_slots`` with the message holding each: ``(message, role,
        slot)``, where ``message`` is the index of its item in ``items()`` (-1 for
        a prompt given as one string) and None for the system prompt outside
        the conversation."""
        yield from self.head_messages()
        for i, item in enumerate(self.items()):
            if isinstance(item, dict):
                role = self.item_role(item)
                for s in self.item_slots(i, item):
                    yield i, role, s

    # Model-visible strings that are neither the prompt nor the conversation.
    aside_keys: ClassVar[tuple[str, ...]] = ("tools",)

    def aside_encoding(self) -> bytes | None:
        """The JSON of what ``aside_slots`` reads, so a filter can skip it when it
        has seen the same before: None when nothing is there, b"" when it cannot
        be encoded (read it every time)."""
        values = [self.body[k] for k in self.aside_keys if self.body.get(k)]
        if not values:
            return None
        try:
            return dumps(values)
        except (TypeError, ValueError):
            return b""

    def aside_slots(self) -> Iterator[Slot]:
        """What the model reads in the tool definitions (``TOOL_TEXT_KEYS``). Only
        that: names and schemas are structure, and the credentials some tools
        carry for the provider to use (a Responses MCP tool's ``headers`` and
        ``authorization``) are not shown to the model and must reach the
        provider intact."""
        tools = self.body.get("tools")
        if isinstance(tools, list):
            yield from iter_strings(tools, "tools", TEXT, _NO_KEYS, self.mark_changed, only=TOOL_TEXT_KEYS)

    @staticmethod
    def item_role(item: Any) -> str:
        role = item.get("role") if isinstance(item, dict) else None
        return role if isinstance(role, str) else ""

    def latest_user_text(self) -> str:
        for item in reversed(self.items()):
            if isinstance(item, dict) and item.get("role") == "user":
                text = text_of(item.get("content"))
                if text:
                    return text
        return ""

    @staticmethod
    def visible_strings(value: Any) -> Iterator[str]:
        """Every string in ``value`` the model reads as language: the one list of
        keys that are not (``OPAQUE_KEYS``), binary parts skipped, a tool's own
        arguments whole."""
        return visible_strings(value, OPAQUE_KEYS, FREE_FORM_KEYS, BINARY_PARTS)

    def head_strings(self) -> Iterator[str]:
        """What the model reads outside the conversation: system text or
        instructions, a string ``input``, and the tool definitions (as JSON)."""
        body = self.body
        for key in self.head_keys:
            if body.get(key):
                yield from self.visible_strings(body[key])
        if body.get("tools"):
            yield dumps(body["tools"]).decode()

    def beside_results(self, item: Any) -> Iterator[str]:
        """The strings of a conversation item that holds tool results, the
        results themselves left out (a Chat ``tool`` message or a Responses
        ``*_output`` item is the result: nothing)."""
        return iter(())

    def from_model(self, item: Any) -> bool:
        """Whether a conversation item came from the model (its answer, a call it
        made): results before the last such item have been seen by it."""
        return self.item_role(item) in MODEL_ROLES

    def result_has_breakpoint(self, res: ToolResult) -> bool:
        """Whether a tool result's content parts carry ``cache_control`` (a Chat
        ``tool`` message's or a Responses output's parts, which OpenRouter and
        compatible servers pass on to Anthropic models): such a result is not
        rewritten, so the caller's breakpoints stay where they were."""
        item = self._item_at(res.position)
        if item is None:
            return False
        parts = item.get(self.result_parts_key)
        return isinstance(parts, list) and any(isinstance(p, dict) and "cache_control" in p for p in parts)

    def _item_at(self, position: int) -> dict | None:
        items = self.items()
        item = items[position] if 0 <= position < len(items) else None
        return item if isinstance(item, dict) else None

    def body_hints(self) -> BodyHints:
        """What the body says about who sends it (identify decides what it means)."""
        body = self.body
        meta = claude_metadata(body) if "metadata" in body else {}
        conversation = body.get("conversation")  # Responses: a conversation the provider keeps
        if isinstance(conversation, dict):
            conversation = conversation.get("id")
        client_meta = body.get("client_metadata")  # Codex copies its turn metadata header here
        return BodyHints(meta.get("session_id"), conversation, body.get("prompt_cache_key"),
                         body.get("previous_response_id"),
                         (meta.get("account_uuid"), meta.get("device_id"), body.get("user"),
                          body.get("safety_identifier")),
                         client_meta.get("x-codex-turn-metadata") if isinstance(client_meta, dict) else None)

    def server_history(self) -> str | None:
        return None  # Messages and Chat Completions always carry the whole conversation

    history_keys: ClassVar[HistoryKeys] = HISTORY_KEYS

    # Conversation item types that list tools offered besides the declared ones (Codex's).
    tool_list_items: ClassVar[tuple[str, ...]] = ()

    def offers_tools(self) -> bool:
        """Whether the request offers the model tools: declared ones, or an item
        near the head of the conversation listing more (``tool_list_items``)."""
        if self.body.get("tools"):
            return True
        if not self.tool_list_items:
            return False
        items = self.items()
        return any(isinstance(it, dict) and it.get("type") in self.tool_list_items for it in items[:4]) \
            if isinstance(items, list) else False

    @staticmethod
    def item_state(item: Any) -> str:
        """What names a provider-kept item (a compaction): its opaque content, else its id ('' if neither)."""
        if not isinstance(item, dict):
            return ""
        return str(item.get("encrypted_content") or item.get("id") or "")

    def tool_names(self) -> list[str]:
        """The declared tools' names, sorted (a function tool's under ``function``;
        a built-in tool without a name by its ``type``)."""
        tools = self.body.get("tools")
        out = []
        for t in tools if isinstance(tools, list) else ():
            if isinstance(t, dict):
                name = t.get("name")
                if not isinstance(name, str) and isinstance(t.get("function"), dict):
                    name = t["function"].get("name")
                out.append(name if isinstance(name, str) else str(t.get("type", "")))
        return sorted(out)

    def count_cache_breakpoints(self) -> int:
        return sum(count_markers(m.get("content")) for m in self.items() if type(m) is dict)

    def offer_tool(self, name: str, description: str, schema: dict) -> None:
        """Declare a tool the proxy answers itself, in this API's tool format, last
        among the tools (the client's own cache breakpoints stay where they are)."""
        from .tool_rounds import codec_for

        codec = codec_for(self.api, name)
        codec.add_tool(self.body, codec.tool_def(description, schema))
        self.mark_changed()

    def restore_tool_round(self, name: str, anchor: str, calls: list[tuple[str, str, str, bool]]) -> bool:
        """Put back calls of the proxy's own tool (``(call_id, arguments, result,
        is_error)``) that the client never saw, beside its own call ``anchor``
        of the same answer, and their results beside the client's: the provider
        then reads every call with its result. False when the anchor is gone."""
        from .tool_rounds import Call, codec_for

        done = codec_for(self.api, name).reinsert(self.body, anchor, [Call(*c) for c in calls])
        if done:
            self.mark_changed()
        return done


class ResponseViewBase(View):
    """What the three whole-response views share; ``usage_of`` reads the API's usage shape."""

    usage_of: ClassVar[Callable[[Any], Usage]]
    __slots__ = ()

    def usage(self) -> Usage:
        return self.usage_of(self.body.get("usage"))

    def response_id(self) -> str | None:
        return self.body.get("id")

    def response_model(self) -> str | None:
        return self.body.get("model")


def system_text_of(head: Any, items: list, roles: tuple[str, ...], opening: bool = False) -> str:
    """The text of ``head`` (a top-level system field) and of the items with a
    system role, joined by newlines; with ``opening``, only those before the
    first user turn (the conversation's start, which later turns never change)."""
    parts = [text_of(head)] if head is not None else []
    for m in items:
        if isinstance(m, dict):
            role = m.get("role")
            if role in roles:
                parts.append(text_of(m.get("content")))
            elif opening and role == "user":
                break
    return "\n".join(filter(None, parts))


def text_of(content: Any) -> str:
    """Plain text of a content value (string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                t = part.get("text")
                if isinstance(t, str):
                    out.append(t)
        return "\n".join(out)
    return ""


def is_text_part(part: Any) -> bool:
    """A part ``text_of`` reads whole: a string, or a text part holding a string."""
    return isinstance(part, str) or (
        isinstance(part, dict) and type_of(part) in TEXT_PARTS and isinstance(part.get("text"), str))


def has_binary(content: Any) -> bool:
    """Whether a tool result holds a part that is not text (an image, a PDF
    document, search results, a part of unknown type). Its flattened text is
    not the whole result, so prune leaves it alone: a stub could only stand in
    for the text, and the stored original holds only the text."""
    return isinstance(content, list) and not all(is_text_part(p) for p in content)


def decode_args(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return loads(text)
    except orjson.JSONDecodeError:
        return text


def make_result_replacer(view: View, holder: dict, key: str, text_type: str) -> Callable[[str], None]:
    """Replace a tool result's text, keeping every part that is not text in place.
    The view keeps its results, so the replacer holds it weakly: a strong
    reference would make a cycle that keeps the whole parsed body alive until
    the garbage collector runs."""
    ref = weakref.ref(view)

    def replace(text: str) -> None:
        content = holder.get(key)
        if has_binary(content):  # only the text is replaced: every other part stays as it was
            kept = [p for p in content if not is_text_part(p)]
            holder[key] = [{"type": text_type, "text": text}, *kept]
        else:
            holder[key] = text
        owner = ref()
        if owner is not None:
            owner.mark_changed()

    return replace


# -- prompt-cache breakpoints (cache_control markers) -------------------------
MAX_CACHE_BREAKPOINTS = 4  # Anthropic's limit per request (a top-level marker counts)


def part_markers(parts: Any, where: str) -> list[tuple[str, dict]]:
    """``(where, marker)`` for every part of a list that carries ``cache_control``
    (content blocks, system blocks, tool definitions), and inside the nested
    ``content`` of a part (tool results). Tool inputs and schemas are not
    walked: a property named cache_control there is not a marker."""
    out: list[tuple[str, dict]] = []
    if isinstance(parts, list):
        for i, part in enumerate(parts):
            if isinstance(part, dict):
                marker = part.get("cache_control")
                if marker:
                    out.append((f"{where}[{i}]", marker))
                if isinstance(part.get("content"), list):
                    out += part_markers(part["content"], f"{where}[{i}].content")
    return out


def count_markers(parts: Any) -> int:
    """How many parts of a list (and of their nested ``content``) carry
    ``cache_control`` — ``part_markers`` without building paths (it walks the
    whole conversation, so it stays cheap)."""
    n = 0
    if isinstance(parts, list):
        for part in parts:
            if type(part) is dict:
                if part.get("cache_control"):
                    n += 1
                inner = part.get("content")
                if type(inner) is list:
                    n += count_markers(inner)
    return n


def last_marked(parts: list) -> int | None:
    """Index of the last part carrying a ``cache_control`` marker."""
    for i in range(len(parts) - 1, -1, -1):
        if isinstance(parts[i], dict) and parts[i].get("cache_control"):
            return i
    return None


def longest_ttl(markers: list) -> dict:
    """A marker as long-lived as the longest one already present (a shorter TTL
    may not precede a longer one)."""
    ttls = [m.get("ttl") for m in markers if isinstance(m, dict)]
    return {"type": "ephemeral", "ttl": "1h"} if "1h" in ttls else {"type": "ephemeral"}


def usage_int(obj: Any, *path: str) -> int | None:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj if isinstance(obj, int) and not isinstance(obj, bool) else None


def parse_body(raw: bytes) -> dict:
    """orjson parse with the errors a caller should see (400)."""
    try:
        body = loads(raw)
    except orjson.JSONDecodeError as exc:
        raise AdapterError(f"request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise AdapterError("request body must be a JSON object")
    return body


class StreamState:
    """Per-response state of an adapter's stream (``Adapter.stream()``): makes
    the events of one response (``event``) and has the last word on what is
    sent of them (``outgoing``)."""

    __slots__ = ()

    def event(self, name: str | None, raw: bytes, data: bytes | None) -> "Event":
        raise NotImplementedError

    def outgoing(self, events: list) -> list:
        """The events the filters let out for one upstream event, as they go
        to the client, in order (an API whose events are numbered renumbers
        them). Every driver calls it on what the event hooks returned."""
        return events


class Event:
    """A stream event parsed lazily: ``data`` is decoded on first use, and the
    raw bytes go out unchanged unless a filter edits it."""

    __slots__ = ("name", "raw", "_data_bytes", "_data", "edits", "stream", "_closed", "_deltas", "_starts")
    repeats_streamed: ClassVar[bool] = True  # see ``StreamEvent.repeats_streamed``

    def __init__(self, name: str | None, raw: bytes, data: bytes | None, stream: Any):
        self.name = name
        self.raw = raw
        self._data_bytes = data
        self._data: Any = _UNSET
        self.edits = 0
        self.stream = stream  # the per-response StreamState of the adapter
        self._closed: list[str] | None = None
        self._deltas: list[Delta] | None = None
        self._starts: list[tuple[str, str, str]] | None = None

    @property
    def data(self) -> Any:
        if self._data is _UNSET:
            d = self._data_bytes
            try:
                self._data = loads(d) if d and d[:1] in (b"{", b"[") else None
            except orjson.JSONDecodeError:
                self._data = None
        return self._data

    @property
    def changed(self) -> bool:
        return self.edits > 0

    def mark_changed(self) -> None:
        self.edits += 1

    # The views' slot helpers, for the whole texts some events carry (a finished item,
    # a block that comes whole): they only need ``mark_changed``.
    field_slot = View.field_slot
    parts = View.parts

    def parsed_as(self, data: Any) -> "Event":
        """This event, whose JSON the caller already parsed (``data``): it is not parsed again."""
        if self._data is _UNSET:
            self._data = data
        return self

    @property
    def type(self) -> str | None:
        d = self.data
        return type_of(d) if isinstance(d, dict) else None

    def json_bytes(self) -> bytes:
        """The event's JSON alone (a WebSocket frame)."""
        return (self._data_bytes or b"") if not self.edits else dumps(self._data)

    def to_bytes(self) -> bytes:
        if not self.edits:
            return self.raw
        return encode_event(self.name, dumps(self._data))

    # Defaults; adapters override what their API has.
    def text_run(self) -> tuple[Any, dict, str] | None:
        """When the event is one text delta and nothing else: (its shape — what
        must equal another event's for the two to be one — , the dict and the
        key holding the text). None otherwise, and for APIs that do not say."""
        return None

    def done(self) -> None:
        """The event went out: drop what was found once for the filters (a delta's
        setter refers back to its event, a cycle the relay breaks here)."""
        self._deltas = self._starts = None

    def deltas(self) -> list[Delta]:
        """Found once per event: each filter reads them (a delta reads and writes
        the event's JSON itself, so an edit by one filter is what the next sees).
        The relay calls ``done`` once the event is sent."""
        if self._deltas is None:
            self._deltas = self._find_deltas()
        return self._deltas

    def _find_deltas(self) -> list[Delta]:
        return []

    def text_slots(self) -> Iterator[Slot]:
        return iter(())

    def tool_call_starts(self) -> list[tuple[str, str, str]]:
        """(channel, call id, tool name) of each tool call this event opens; found once."""
        if self._starts is None:
            self._starts = self._find_tool_call_starts()
        return self._starts

    def _find_tool_call_starts(self) -> list[tuple[str, str, str]]:
        return []

    def only_deltas(self) -> bool:
        """Whether the event carries nothing but its deltas (no role, ids,
        finish, usage...): one whose deltas a filter emptied can then be left
        out rather than sent empty. Unknown shapes: False."""
        return False

    def closed_channels(self) -> list[str]:
        """Channels this event ends. Computed once per event: the answer
        updates the stream's open-channel state, and every filter that asks
        must get the same list."""
        if self._closed is None:
            self._closed = self._closing()
        return self._closed

    def _closing(self) -> list[str]:
        return []

    def usage(self) -> Usage | None:
        return None

    # SSE event names that can carry usage, ids, models or finish reasons.
    meta_events: ClassVar[frozenset[str]] = frozenset()

    def may_carry_meta(self, id_known: bool) -> bool:
        """A cheap test before parsing: whether this event can carry usage, the
        response id or model, or finish reasons (few do). ``id_known``: the
        response id was seen already."""
        name = self.name
        return name in self.meta_events if name is not None else self._unnamed_meta(id_known)

    def _unnamed_meta(self, id_known: bool) -> bool:
        return True

    def response_id(self) -> str | None:
        return None

    def response_model(self) -> str | None:
        return None

    def finish_reasons(self) -> list[str]:
        return []

    def delta(self, obj: dict, key: str, channel: str, kind: str) -> Delta:
        def set_(text: str) -> None:
            if obj[key] != text:
                obj[key] = text
                self.mark_changed()

        return Delta(channel, kind, lambda: obj[key], set_)


_UNSET = object()


# Claude Code's legacy metadata.user_id, one string.
_LEGACY_USER_ID = re.compile(r"user_(?P<device>[A-Za-z0-9]+)_account_(?P<account>[A-Za-z0-9-]*)"
                             r"_session_(?P<session>[A-Za-z0-9-]+)\Z")


def claude_metadata(body: dict) -> dict:
    """Claude Code's ``metadata.user_id``: JSON (``device_id``, ``account_uuid``,
    ``session_id``), or in earlier versions one string,
    ``user_<device hash>_account_<account uuid, may be empty>_session_<session id>``."""
    meta = body.get("metadata")
    uid = meta.get("user_id") if isinstance(meta, dict) else None
    if not isinstance(uid, str):
        return {}
    if uid.startswith("{"):
        try:
            parsed = orjson.loads(uid)
        except orjson.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    m = _LEGACY_USER_ID.match(uid)
    if m is None:
        return {}
    return {"device_id": m["device"], "account_uuid": m["account"] or None, "session_id": m["session"]}


def loads(data: bytes | str) -> Any:
    """orjson, or the standard library for the one thing JSON allows and orjson
    refuses: a lone surrogate escape (``"\\ud83d"``), which a Python client or a
    stream cut inside an emoji can send. An event or body we could not read
    would otherwise pass the filters unscanned. Other errors stay orjson's."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if (b"\\u" if isinstance(data, bytes) else "\\u") in data:
            try:
                return json.loads(data)
            except (ValueError, RecursionError):  # nested past the stdlib's limit too
                pass
        raise exc


def dumps(obj: Any) -> bytes:
    """orjson, or (for a lone surrogate read by ``loads``) ASCII JSON with it escaped."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode()


__all__ = [
    "AdapterError", "Event", "StreamState", "View", "ToolCall", "ToolResult", "Usage", "Delta", "Slot",
    "text_of", "is_text_part", "has_binary", "decode_args", "make_result_replacer", "usage_int", "parse_body", "dumps",
    "MAX_CACHE_BREAKPOINTS", "part_markers", "count_markers", "last_marked", "longest_ttl",
]
