"""docs/cli.md shows every command and every action the parser has: what
`ctxproxy --help` lists, a user finds on that page."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from ctxproxy.proxy.cli.main import _parser

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def documented() -> dict[str, set[str]]:
    """Command -> the words after ``ctxproxy <command>`` on its lines of the synopsis
    (actions written ``a|b|c`` or one per line)."""
    block = DOC.read_text().split("```\n", 2)[1]
    out: dict[str, set[str]] = {}
    for line in block.splitlines():
        m = re.match(r"ctxproxy (\S+)(.*)", line.split("#")[0])
        if m:
            out.setdefault(m.group(1), set()).update(re.split(r"[|\s]+", m.group(2).strip()))
    return out


def test_every_command_and_action_is_in_docs_cli():
    docs = documented()
    missing = []
    for command, sub in _subcommands(_parser()).items():
        if command not in docs:
            missing.append(command)
            continue
        missing += [f"{command} {action}" for action in _subcommands(sub) if action not in docs[command]]
    assert not missing, f"not in docs/cli.md: {missing}"
    assert "--version" in docs
