"""The user's own words in a message an agent sent, without what the agent wrapped around them.

Agents put more than the user's words into user messages (as recorded in
``shared/fixtures/real-clients``): Claude Code's ``<system-reminder>`` blocks
(its rule files, its date, its todo list), its ``/compact`` command records
and the summary it continues from; Codex's ``AGENTS.md instructions`` and
``<environment_context>`` parts and its compaction summary; OpenClaw's and
Hermes' summary messages; and the evidence and context ctxproxy itself
injected (``<ctx-data …>`` / ``<ctx-context …>`` fences). None of that is the
user's question, and a query built from it recalls the rules, the date and
our own evidence. ``own_words`` keeps the rest. ``summary_words`` gives the
summary a compacted conversation continues from: what "this" of the next ask
refers to, when the user's earlier words are gone.
"""
from __future__ import annotations

import re

# Blocks inside a text part: removed wherever they are.
_BLOCKS = re.compile(r"<system-reminder>.*?</system-reminder>"
                     r"|<(ctx-data|ctx-context)\b[^>]*>.*?</\1>"
                     r"|<(environment_context|INSTRUCTIONS|user_instructions|local-command-caveat|local-command-stdout"
                     r"|local-command-stderr|command-name|command-message|command-args)>.*?</\2>", re.S)
# A text part that starts so is the agent's, whole.
_AGENT_PARTS = (
    "# AGENTS.md instructions for",  # Codex: the rule files
    "Caveat: The messages below were generated",  # Claude Code: a command record
    "This session is being continued from a previous conversation",  # Claude Code: after a compaction
    "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.",  # Claude Code: the compaction prompt
    "You are performing a CONTEXT CHECKPOINT COMPACTION.",  # Codex: the compaction prompt
    "Another language model started to solve this problem",  # Codex: after a compaction
    "The conversation history before this point was compacted",  # OpenClaw
    "[CONTEXT COMPACTION",  # Hermes
    "Continue from where you left off.",  # Claude Code: after /compact
)
# Of those, the parts that hold the summary of the conversation before them.
_SUMMARIES = (
    "This session is being continued from a previous conversation",
    "Another language model started to solve this problem",
    "The conversation history before this point was compacted",
    "[CONTEXT COMPACTION",
)


# A compaction summary without its preface ("Summary:" then its numbered sections, the first the
# primary request, as Claude Code's compaction writes them; a list of the user's own is not one), the
# user's next words after it: the first paragraph that is no section of it (no number, bullet or indent first).
_BARE_SUMMARY = re.compile(r"Summary:[ \t]*\n\s*1\.\s+Primary request", re.I)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SECTION = re.compile(r"\s|\d+\.\s|[-*\u2022]\s")


def _unwrapped(text: str) -> str:
    """``text`` without the agents' tagged blocks, stripped."""
    if "<" in text:
        text = _BLOCKS.sub(" ", text)
    return text.strip()


def _bare_summary(text: str) -> tuple[str, str]:
    """``(summary, rest)`` when ``text`` opens with a summary without its preface, ``("", text)`` else."""
    if not _BARE_SUMMARY.match(text):
        return "", text
    paragraphs = _PARAGRAPH.split(text)
    end = next((i for i, p in enumerate(paragraphs) if i and not _SECTION.match(p)), len(paragraphs))
    return "\n\n".join(paragraphs[:end]), "\n\n".join(paragraphs[end:]).strip()


def own_words(text: str) -> str:
    """``text`` without the agent's wrappers ('' when nothing of the user's is left)."""
    text = _unwrapped(text) if text else ""
    return "" if not text or text.startswith(_AGENT_PARTS) else _bare_summary(text)[1]


def summary_words(text: str) -> str:
    """The summary of a compacted conversation that ``text`` continues from ('' when it is none)."""
    text = _unwrapped(text) if text else ""
    return text if text.startswith(_SUMMARIES) else _bare_summary(text)[0]
