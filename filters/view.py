"""What filters see of a request or a response: views over the parsed JSON.

The wire adapters in ``ctxproxy.proxy.adapters`` implement these shapes; the
filters depend only on what is written here, which keeps the dependency
direction ``proxy -> filters``. A view never copies the body: every slot reads
and writes the parsed dict in place and marks the view changed, so an
untouched request can be forwarded as its original bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple, Protocol

# Channel kinds of streamed or returned model output.
TEXT = "text"
THINKING = "thinking"
ARGS = "args"  # tool-call arguments (JSON text, or free-form custom tool input)
# Thinking the provider signed (Anthropic): its own words, returned verbatim, which no
# filter edits — a changed byte voids the signature and the provider refuses the turn.
SIGNED = "signed"


Where = Any  # a path: a str, or (parent path, key or index) built while walking


class Slot:
    """One model-visible string inside a body: ``container[key]``, readable and
    writable in place (a write that changes it calls ``touch``).

    ``where`` names the position for humans and tests ("messages[3].content[0].text");
    it is formatted only when asked for (a turn walks thousands of slots).
    ``kind`` is TEXT, THINKING, SIGNED (read-only) or ARGS (a JSON document inside a string).
    """

    __slots__ = ("_container", "_key", "_where", "kind", "_touch")

    def __init__(self, container: dict | list, key: Any, where: Where, kind: str, touch: Callable[[], None]):
        self._container = container
        self._key = key
        self._where = where
        self.kind = kind
        self._touch = touch

    @property
    def where(self) -> str:
        return format_where(self._where)

    def get(self) -> str:
        return self._container[self._key]

    def set(self, text: str) -> None:
        if self._container[self._key] != text:
            self._container[self._key] = text
            self._touch()

    def __repr__(self) -> str:
        return f"Slot({self.where!r}, {self.kind!r})"


def format_where(where: Where) -> str:
    if not isinstance(where, tuple):
        return where
    parent, key = where
    base = format_where(parent)
    return f"{base}[{key}]" if isinstance(key, int) else f"{base}.{key}"


@dataclass(eq=False)
class ToolCall:
    """A tool call the model made (in request history or in a response)."""

    call_id: str
    name: str
    arguments: Any  # decoded JSON value; a str for free-form (custom) tools
    position: int  # index of the message / input item that holds it
    raw_arguments: str | None = None  # the JSON text as sent, when it was text


@dataclass(eq=False)
class ToolResult:
    """A tool result the client returns, matched to its call by ``call_id``."""

    call_id: str
    content: str  # text of the result, flattened
    is_error: bool
    position: int
    has_images: bool = False  # holds a part that is not text (image, document, ...): never pruned
    replace: Callable[[str], None] = field(default=lambda text: None, repr=False)


class BodyHints(NamedTuple):
    """What a request body says about who sends it (the adapter reads the wire
    fields; identify decides what they mean). Values as found: identify checks them."""

    session: Any = None  # Claude Code's metadata.user_id session_id
    conversation: Any = None  # Responses: a conversation the provider keeps
    prompt_cache_key: Any = None  # Codex sets it to its session id
    previous_response_id: Any = None  # Responses: the answer this turn continues
    users: tuple = ()  # user ids, best first: account, device, the OpenAI ``user``, ``safety_identifier``
    turn_metadata: Any = None  # Codex's turn metadata (a JSON string) when the body carries it


NO_HINTS = BodyHints()


class HistoryKeys(NamedTuple):
    """What a fingerprint of a history item leaves out (the adapter names the
    wire keys; the effect ledger and compaction tracking only use them)."""

    ids: frozenset = frozenset()  # keys holding a call id: its form is normalised (OpenClaw rewrites it)
    volatile: frozenset = frozenset()  # keys clients rewrite every turn without changing the conversation
    compaction_items: tuple = ()  # item types that stand for compacted history
    compaction_triggers: tuple = ()  # item types that ask the provider to compact the history


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    # The API counts cache reads and writes apart from ``input_tokens`` (Anthropic:
    # input is only what follows the last breakpoint); OpenAI's input includes them.
    cache_apart: bool = False

    def counts(self) -> dict[str, int | None]:
        """The counts by the names the filters use (input, output, cache_read, cache_creation)."""
        return {"input": self.input_tokens, "output": self.output_tokens, "cache_read": self.cache_read_input_tokens,
                "cache_creation": self.cache_creation_input_tokens}


class RequestView(Protocol):
    api: str  # "anthropic" | "chat" | "responses"
    body: dict

    @property
    def changed(self) -> bool: ...
    def mark_changed(self) -> None: ...
    @property
    def model(self) -> str: ...
    @property
    def stream(self) -> bool: ...
    def items(self) -> list:
        """The conversation list (``messages`` or ``input``), in order."""
    def item_role(self, item: Any) -> str: ...
    def text_slots(self) -> Iterator[Slot]:
        """Every string the model will read: system, all messages of all roles,
        tool inputs and results, Responses instructions and input items."""
    def head_slots(self) -> Iterator[Slot]:
        """The slots outside the conversation list (system prompt, instructions)."""
    def item_slots(self, i: int, item: dict) -> Iterator[Slot]:
        """The slots of conversation item ``i`` (``text_slots`` is the head's, then each item's)."""
    def message_slots(self) -> Iterator[tuple[int | None, str, Slot]]:
        """``text_slots`` as ``(message, role, slot)``: the index of the item holding
        the slot (-1: a prompt given as one string, role "user"), or None for the
        system prompt outside the conversation."""
    def item_encodings(self) -> list[bytes | None]:
        """Each item's JSON encoding, made once per state of the body (memo keys)."""
    def system_text(self, opening: bool = False) -> str:
        """The system text; ``opening``: only what comes before the first user turn."""
    def first_user_text(self) -> str: ...
    def body_hints(self) -> "BodyHints": ...
    def server_history(self) -> str | None:
        """The id of the provider-kept answer this request continues (its
        history lives upstream, not in the body); None when the body is whole."""
    def offer_tool(self, name: str, description: str, schema: dict) -> None:
        """Declare a tool the proxy answers itself, in this API's tool format."""
    def restore_tool_round(self, name: str, anchor: str, calls: list[tuple[str, str, str, bool]]) -> bool:
        """Put back the proxy's own calls and results the client never saw, beside its call ``anchor``."""
    history_keys: "HistoryKeys"
    def tool_names(self) -> list[str]: ...  # the declared tools' names, sorted
    def offers_tools(self) -> bool: ...  # declared tools, or an item listing more (Codex's)
    def item_state(self, item: Any) -> str: ...  # what names a provider-kept item (compaction): opaque content or id
    def from_model(self, item: Any) -> bool: ...
    def result_has_breakpoint(self, res: ToolResult) -> bool: ...
    def visible_strings(self, value: Any) -> Iterator[str]: ...
    def head_strings(self) -> Iterator[str]: ...
    def beside_results(self, item: Any) -> Iterator[str]: ...
    def tool_calls(self) -> list[ToolCall]: ...
    def tool_results(self) -> list[ToolResult]: ...
    def latest_user_text(self) -> str:
        """Text of the newest user message that has text (the recall query)."""
    def cache_breakpoints(self) -> list[str]:
        """Where the request's prompt-cache markers (``cache_control``) sit."""
    def count_cache_breakpoints(self) -> int:
        """How many there are (cheap: no paths built)."""
    def add_system_segment(self, text: str, stable: bool = False, anchor: bool = False) -> str:
        """Context in the system slot. ``stable`` (byte-stable across the
        session's turns) goes inside the caller's cached prefix, before its
        last system breakpoint; otherwise after every breakpoint. ``anchor``
        lets the adapter add one breakpoint of its own where the caller set
        none (never more than the provider allows). Returns where it went."""
    def add_turn_segment(self, text: str, anchor: bool = False) -> str:
        """Per-turn context: after the last cache breakpoint, next to the
        latest user message (at the tail of the conversation). Returns where."""
    def add_result_segment(self, position: int, text: str) -> str:
        """Context drawn from the tool result(s) of item ``position``: right after
        them (Anthropic: a text block after the message's last ``tool_result``;
        Chat and Responses: a user message after that result item), so what
        precedes it is untouched. Returns where ("" when item ``position`` holds
        no tool result)."""


class ResponseView(Protocol):
    """A whole (non-streamed) JSON response."""

    api: str
    body: dict

    @property
    def changed(self) -> bool: ...
    def text_slots(self) -> Iterator[Slot]: ...
    def tool_calls(self) -> list[ToolCall]: ...
    def usage(self) -> Usage: ...
    def response_id(self) -> str | None: ...
    def response_model(self) -> str | None: ...
    def finish_reasons(self) -> list[str]: ...


@dataclass(eq=False)
class Delta:
    """A piece of streamed output on one channel.

    ``channel`` is stable for the life of a block/choice/item
    ("0:text", "2:args"...); filters keep per-channel state keyed by it.
    Setting ``text`` rewrites the event on the way out.
    """

    channel: str
    kind: str
    get: Callable[[], str]
    set: Callable[[str], None]

    @property
    def text(self) -> str:
        return self.get()

    @text.setter
    def text(self, value: str) -> None:
        self.set(value)


class StreamEvent(Protocol):
    """One server-sent event of a model response, parsed lazily."""

    name: str | None
    raw: bytes

    @property
    def changed(self) -> bool: ...
    def deltas(self) -> list[Delta]: ...
    def tool_call_starts(self) -> list[tuple[str, str, str]]:
        """(channel, call_id, name) for tool calls that begin in this event."""
    def only_deltas(self) -> bool:
        """Whether it carries nothing but its deltas (one emptied may be left out)."""
    def text_slots(self) -> Iterator[Slot]:
        """Whole texts it carries (a done event's, a finished item, a block that comes whole)."""
    # Whether those whole texts repeat what deltas streamed (a rule's count takes them once).
    repeats_streamed: bool
    def closed_channels(self) -> list[str]:
        """Channels that end with this event (block stop, finish, item done)."""
    def usage(self) -> Usage | None: ...
    def may_carry_meta(self, id_known: bool) -> bool:
        """Whether it can carry usage, ids, model or finish reasons (a test before parsing)."""
    def response_id(self) -> str | None: ...
    def response_model(self) -> str | None: ...
    def finish_reasons(self) -> list[str]: ...
    def make_delta(self, channel: str, kind: str, text: str) -> "StreamEvent":
        """A synthetic delta event on ``channel`` (used to flush held-back text
        before this event)."""


_NOTHING: frozenset[str] = frozenset()


def type_of(obj: dict) -> str | None:
    """An object's ``type`` when it is a string. Anything else (a list, an
    object) names no type we know, and cannot be looked up in a set: such a
    block is an unknown one, walked like any other."""
    t = obj.get("type")
    return t if isinstance(t, str) else None


def iter_strings(
    value: Any, where: Where, kind: str, skip: frozenset[str], touch: Callable[[], None],
    free: frozenset[str] = _NOTHING, binary: frozenset[str] = _NOTHING, only: frozenset[str] = _NOTHING,
) -> Iterator[Slot]:
    """Slots for every string inside a JSON value, skipping keys in ``skip``
    (``only``: just the strings under these keys, at any depth, each value whole).

    The one JSON walker of the project: views use it for free-form values
    (tool inputs, unknown content blocks) so nothing model-visible is missed.
    Objects whose ``type`` is in ``binary`` (base64 payloads) are not entered,
    at any depth: no filter spends time on megabytes of base64 or rewrites it.
    Under a key in ``free`` (a tool's own arguments) nothing is skipped: there
    ``name`` or ``id`` are whatever the tool calls them, not structure.
    ``touch`` is called on every write so the owning view knows it changed.
    """
    if isinstance(value, dict):
        if binary and type_of(value) in binary:
            return
        for key, child in value.items():
            if key in skip:
                continue
            if isinstance(child, str):
                if not only or key in only:
                    yield Slot(value, key, (where, key), kind, touch)
            elif isinstance(child, (dict, list)):
                if key in free or key in only:
                    yield from iter_strings(child, (where, key), kind, _NOTHING, touch)
                else:
                    yield from iter_strings(child, (where, key), kind, skip, touch, free, binary, only)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            if isinstance(child, str):
                if not only:
                    yield Slot(value, i, (where, i), kind, touch)
            elif isinstance(child, (dict, list)):
                yield from iter_strings(child, (where, i), kind, skip, touch, free, binary, only)


def _keep() -> None:  # counting, not editing: no view to tell
    pass


def visible_strings(value: Any, skip: frozenset[str], free: frozenset[str] = _NOTHING,
                    binary: frozenset[str] = _NOTHING) -> Iterator[str]:
    """The strings ``iter_strings`` walks to, read (counting, not editing)."""
    if isinstance(value, str):
        yield value
        return
    for slot in iter_strings(value, None, TEXT, skip, _keep, free, binary):
        yield slot.get()
