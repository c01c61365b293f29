"""Filters name no wire field: the adapters (proxy/adapters/) are the only
modules that know the three APIs' shapes, and hand the filters what they need
through the request and response views (filters/view.py).

The names are the adapters' own: every string literal in proxy/adapters/
shaped like a field or event name (snake_case or dotted: ``tool_use_id``,
``response.completed``), read from their code, so a name an adapter starts
to use is guarded the day it does. Single words (``text``, ``role``,
``type``) are left out: they are everyone's words.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILTERS = ROOT / "filters"
ADAPTERS = ROOT / "proxy" / "adapters"
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+")

# Names an adapter matches by prefix or builds, so they are not among its literals.
BUILT = ("response.output_item", "output_text")
# Names that are also the filters' own: fields of records and documents they write,
# or of the OTel GenAI conventions. Each says why; keep this list short.
OURS = {
    "call_id": "the ledger's and the pruned originals' record field (the view's ToolCall.call_id)",
    "session_id": "the Context Manifest's field (and Codex's turn-metadata key identify reads from a header)",
    "is_error": "a pruned original's record field (the view's ToolResult.is_error)",
    "finish_reason": "the GenAI conventions' output-message field, in the manifest's telemetry",
}


def literals(path: Path) -> set[str]:
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return {n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs}


def adapter_names() -> frozenset[str]:
    names = {s for p in ADAPTERS.rglob("*.py") for s in literals(p) if _NAME.fullmatch(s)}
    return frozenset((names | set(BUILT)) - set(OURS))


WIRE_NAMES = adapter_names()


@pytest.mark.parametrize("path", sorted(FILTERS.rglob("*.py")), ids=lambda p: str(p.relative_to(FILTERS)))
def test_a_filter_module_names_no_wire_field(path):
    named = sorted(WIRE_NAMES & literals(path))
    assert not named, f"{path.relative_to(ROOT)} names {named}: read them through the adapter's view"


def test_the_names_are_read_from_the_adapters():
    assert len(WIRE_NAMES) > 100  # every field and event name the three adapters use
    for name in ("tool_use_id", "tool_call_id", "function_call_output", "content_block", "message_start",
                 "response.completed", "compaction_summary", "input_json_delta", "previous_response_id",
                 "encrypted_content", "cache_read_input_tokens", "additional_tools"):
        assert name in WIRE_NAMES, name


def test_the_check_finds_a_wire_name_in_code_only(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""A ``"tool_use_id"`` in a docstring."""\n# or "tool_use_id" in a comment\n')
    assert not WIRE_NAMES & literals(module)
    module.write_text('KEYS = ("id", "tool_use_id")\n')
    assert WIRE_NAMES & literals(module) == {"tool_use_id"}
