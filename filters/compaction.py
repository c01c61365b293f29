"""Compaction on the wire: does this request ask for a summary, or continue from one?

Pure functions over a request view and its headers, one detector per agent
style, as the agents were recorded sending them (the recorded requests
``tests/realclients.py`` loads; ``tests/filters/test_compaction.py`` replays
each one):

- **Claude Code** (manual ``/compact`` and automatic): the summarization
  request is an ordinary turn whose last user message ends with a text block
  starting ``CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.``; the
  turn after it carries ``This session is being continued from a previous
  conversation`` (manual: followed by the ``/compact`` command record).
- **Codex, local** (custom provider): the request is marked only in
  ``x-codex-turn-metadata`` (header, or ``client_metadata``) with
  ``"request_kind": "compaction"``; the summary comes back in the next
  request as a user message ``Another language model started to solve this
  problem …``.
- **Codex, remote v2** (built-in OpenAI provider): the last input item is
  ``{"type": "compaction_trigger"}``; the next request carries a
  ``compaction`` item (opaque ``encrypted_content``) in place of the history.
- **OpenClaw** (pi agent core): a user message ``The conversation history
  before this point was compacted into the following summary:``.
- **Hermes**: a message starting ``[CONTEXT COMPACTION``.

Anything else that loses history (a client we do not know) is found by the
continuity check of ``track``: the item the session saw last is gone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import orjson

from .effects.history import item_fp

REQUEST = "request"  # this request asks the model for the summary
RESUMED = "resumed"  # this request continues from a summary

_CC_PROMPT = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."
_CC_SUMMARY = "This session is being continued from a previous conversation"
_CC_COMMAND = "<command-name>/compact</command-name>"
_CODEX_PROMPT = "You are performing a CONTEXT CHECKPOINT COMPACTION."
_CODEX_SUMMARY = "Another language model started to solve this problem and produced a summary"
_OPENCLAW_SUMMARY = "The conversation history before this point was compacted into the following summary:"
_HERMES_SUMMARY = "[CONTEXT COMPACTION"


@dataclass(frozen=True)
class Compaction:
    agent: str  # claude-code | codex | openclaw | hermes | unknown
    style: str  # summary | local | remote | history
    phase: str  # REQUEST or RESUMED
    trigger: str = ""  # manual | auto, when the wire says

    def record(self) -> dict[str, str]:
        out = {"agent": self.agent, "style": self.style, "phase": self.phase}
        if self.trigger:
            out["trigger"] = self.trigger
        return out


def item_texts(item: Any) -> Iterator[str]:
    """The text parts of one conversation item (any of the three APIs): a
    string content, or blocks holding a string ``text`` (the text, input and
    output text parts of the three APIs alike), of an item with a role (a
    message: not a reasoning item, whose parts hold ``text`` too). Tool calls
    and results are not text parts."""
    if not isinstance(item, dict) or "role" not in item:
        return
    content = item.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    yield text


def codex_metadata(headers: Mapping[str, str] | None, view: Any = None) -> dict:
    """Codex's turn metadata: the ``x-codex-turn-metadata`` header, else the
    same JSON the body carries (``view``'s hints); ``{}`` when absent or not JSON."""
    raw = headers.get("x-codex-turn-metadata") if headers is not None else None
    if not isinstance(raw, str) and view is not None:
        raw = view.body_hints().turn_metadata
    if not isinstance(raw, str) or len(raw) > 65536:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def detect(view: Any, headers: Mapping[str, str] | None = None, start: int = 0) -> Compaction | None:
    """The compaction this request shows, if any (see the module docstring).
    ``start``: summaries are looked for in items from there on only (the
    caller knows the items before it carry none): a turn costs O(new items)."""
    items = view.items()
    if not isinstance(items, list):
        return None
    keys = view.history_keys
    meta = codex_metadata(headers, view)
    cmeta = meta.get("compaction") if isinstance(meta.get("compaction"), dict) else {}
    trigger = cmeta.get("trigger") if isinstance(cmeta.get("trigger"), str) else ""
    if items and isinstance(items[-1], dict) and items[-1].get("type") in keys.compaction_triggers:
        return Compaction("codex", "remote", REQUEST, trigger)
    if meta.get("request_kind") == "compaction":
        remote = cmeta.get("implementation") == "responses_compaction_v2"
        return Compaction("codex", "remote" if remote else "local", REQUEST, trigger)
    last_user = next((it for it in reversed(items) if isinstance(it, dict) and it.get("role") == "user"), None)
    for text in item_texts(last_user):
        if text.startswith(_CC_PROMPT):
            return Compaction("claude-code", "summary", REQUEST)
        if text.startswith(_CODEX_PROMPT):
            return Compaction("codex", "local", REQUEST)
    found: Compaction | None = None
    manual = False
    for item in items[start:]:
        if not isinstance(item, dict):
            continue
        if item.get("type") in keys.compaction_items:
            found = found or Compaction("codex", "remote", RESUMED)
            continue
        for text in item_texts(item):
            if found is None:
                if text.startswith(_CC_SUMMARY):
                    found = Compaction("claude-code", "summary", RESUMED)
                elif text.startswith(_CODEX_SUMMARY):
                    found = Compaction("codex", "local", RESUMED)
                elif text.startswith(_OPENCLAW_SUMMARY):
                    found = Compaction("openclaw", "summary", RESUMED)
                elif text.startswith(_HERMES_SUMMARY):
                    found = Compaction("hermes", "summary", RESUMED)
            if _CC_COMMAND in text:
                manual = True
    if found is not None and found.agent == "claude-code":
        return Compaction(found.agent, found.style, found.phase, "manual" if manual else "auto")
    return found


def summary_text(text: str) -> bool:
    """Whether a user-role text is a compaction summary or prompt (not the user's words)."""
    return text.startswith((_CC_PROMPT, _CC_SUMMARY, _CODEX_PROMPT, _CODEX_SUMMARY, _OPENCLAW_SUMMARY,
                            _HERMES_SUMMARY))


def track(prev: Mapping[str, Any] | None, view: Any, headers: Mapping[str, str] | None = None
          ) -> tuple[Compaction | None, dict]:
    """``detect``, plus the continuity check for clients we do not know, in
    O(new items): the history is compared with what ``prev`` (this function's
    last result for the same conversation) remembers of it — its length and
    the fingerprints of its first and last items. When it only grew, just the
    new items are searched for a summary; when it lost the items seen last, it
    is a compaction whatever the client. Returns the compaction (None if none)
    and the state to remember for the next request."""
    items = view.items() if isinstance(view.items(), list) else []
    encodings = view.item_encodings()
    n = len(items)

    def fp(i: int) -> str:
        return item_fp(items[i], view.history_keys, encodings[i] if i < len(encodings) else None)

    state = {"n": n, "first": fp(0) if n else "", "last": fp(n - 1) if n else ""}
    server_history = view.server_history() is not None
    old_n = int(prev.get("n", 0)) if prev else 0
    if server_history or not old_n:
        return detect(view, headers), state
    grew = n >= old_n and fp(0) == prev.get("first") and fp(old_n - 1) == prev.get("last")
    found = detect(view, headers, start=old_n if grew else 0)
    if found is None and not grew:
        found = Compaction("unknown", "history", RESUMED)
    return found, state
