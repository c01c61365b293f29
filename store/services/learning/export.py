"""Approved memories in each agent's own files (``ctxproxy learn export``).

``render(records, fmt, evidence=...)`` returns ``{relative path: text}``;
the CLI writes it under ``--out``, the admin API answers it as JSON.

``codex``     ``memory_summary.md`` (the best few of each group) and
              ``MEMORY.md``: one task group per project (``# Task group: <project>``)
              with ``## User preferences``, ``## Reusable knowledge`` and
              ``## Failures and how to do differently``;
``claude``    ``skills/<name>/SKILL.md`` per approved procedure (frontmatter
              ``name``, ``description``, ``disable-model-invocation: true``;
              the steps and the success criteria the evidence showed), and the
              other memories as Claude Code auto memory under ``memory/``;
``openclaw``  ``MEMORY.md`` (and ``memory/<day>.md`` for events);
``hermes``    ``MEMORY.md`` and ``USER.md`` within Hermes' caps (2,200 and
              1,375 characters): the best ranked entries that fit.

Every entry ends with ``(mem:<id>)``, so importing an export
(``ctxproxy memory import``, ``formats``) finds the records it came from.
Best ranked = seen in more sessions, then newer.
"""
from __future__ import annotations

import re
import time
from typing import Any, Callable, Iterable

from ctxproxy.store.services.memory.formats import HERMES_DELIMITER, entry_line, render as render_memories

EXPORT_FORMATS = ("codex", "claude", "openclaw", "hermes")
HERMES_CAPS = {"MEMORY.md": 2200, "USER.md": 1375}
GROUPS = (("User preferences", ("preference",)), ("Reusable knowledge", ("procedure", "fact", "event")),
          ("Failures and how to do differently", ("failure",)))
SUMMARY_PER_GROUP = 3
_SLUG = re.compile(r"[^a-z0-9]+")

Evidence = Callable[[Any], list]


def _rank(records: Iterable[Any], evidence: Evidence) -> list[Any]:
    return sorted(records, key=lambda r: (-len(evidence(r)), -(r.observed_at or 0), r.memory_id))


def render(records: Iterable[Any], fmt: str, *, evidence: Evidence = lambda r: [],
           caps: dict[str, int] | None = None) -> tuple[dict[str, str], dict[str, int]]:
    """(files, notes): ``notes`` counts what was left out (Hermes' caps) and written."""
    ranked = _rank(records, evidence)
    if fmt == "codex":
        return _codex(ranked), {"memories": len(ranked)}
    if fmt == "claude":
        return _claude(ranked, evidence)
    if fmt == "openclaw":
        return render_memories(ranked, "openclaw"), {"memories": len(ranked)}
    if fmt == "hermes":
        return _hermes(ranked, caps or HERMES_CAPS)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")


def _codex(ranked: list[Any]) -> dict[str, str]:
    projects = list(dict.fromkeys(r.project for r in ranked))
    body = ["# Memories (learned from your sessions by ctxproxy, approved)", ""]
    summary = ["# Memory summary (learned from your sessions by ctxproxy, approved)", ""]
    for project in projects:
        mine = [r for r in ranked if r.project == project]
        body += [f"# Task group: {project or 'all projects'}", ""]
        for title, kinds in GROUPS:
            group = [r for r in mine if r.kind in kinds]
            if not group:
                continue
            body += [f"## {title}", "", *(f"- {entry_line(r)}" for r in group), ""]
            summary += [f"## {title} ({project or 'all projects'})", "",
                        *(f"- {entry_line(r)}" for r in group[:SUMMARY_PER_GROUP]), ""]
    return {"MEMORY.md": "\n".join(body).rstrip() + "\n", "memory_summary.md": "\n".join(summary).rstrip() + "\n"}


def skill_name(statement: str, taken: set[str]) -> str:
    """A skill's name: lower case letters, digits and hyphens, at most 64 characters, unique."""
    words = _SLUG.sub("-", statement.lower()).strip("-")
    base = (words[:56].rstrip("-") or "procedure")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _yaml(text: str) -> str:
    """A one-line YAML scalar, quoted."""
    return '"' + " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _claude(ranked: list[Any], evidence: Evidence) -> tuple[dict[str, str], dict[str, int]]:
    files: dict[str, str] = {}
    taken: set[str] = set()
    procedures = [r for r in ranked if r.kind == "procedure"]
    for rec in procedures:
        ev = evidence(rec)
        newest = max(ev, key=lambda e: e.get("at") or 0, default={})
        steps = list(newest.get("steps") or []) or [rec.statement]
        outcomes = list(dict.fromkeys(e["outcome"] for e in ev if e.get("outcome")))[:5]
        goals = list(dict.fromkeys(e["quote"] for e in ev if e.get("quote")))[:3]
        name = skill_name(rec.statement, taken)
        when = f" Used for: {goals[0]}" if goals else ""
        description = (" ".join(rec.statement.split()) + "." + when)[:1000]
        agents = sorted({e["agent"] for e in ev if e.get("agent")})
        lines = ["---", f"name: {name}", f"description: {_yaml(description)}", "disable-model-invocation: true",
                 "---", "", f"# {' '.join(rec.statement.split())}", "", "## Steps", "",
                 *(f"{i}. {s}" for i, s in enumerate(steps, 1)), "", "## Success criteria", "",
                 *(f"- {o}" for o in outcomes or ["the last step completes without an error"]), ""]
        if goals:
            lines += ["## Where it worked", "", *(f"- {g}" for g in goals), ""]
        lines += ["## Source", "", f"Learned by ctxproxy from {len(ev)} session(s)"
                  + (f" ({', '.join(agents)})" if agents else "") + f", approved. (mem:{rec.memory_id})", ""]
        files[f"skills/{name}/SKILL.md"] = "\n".join(lines)
    others = [r for r in ranked if r.kind != "procedure"]
    if others:
        files.update({f"memory/{k}": v for k, v in render_memories(others, "claude").items()})
    return files, {"skills": len(procedures), "memories": len(others)}


def _hermes(ranked: list[Any], caps: dict[str, int]) -> tuple[dict[str, str], dict[str, int]]:
    files: dict[str, str] = {}
    notes: dict[str, int] = {}
    for name, records in (("MEMORY.md", [r for r in ranked if not r.user]),
                          ("USER.md", [r for r in ranked if r.user])):
        kept: list[str] = []
        for rec in records:
            line = entry_line(rec)
            if len(HERMES_DELIMITER.join([*kept, line])) <= caps[name]:
                kept.append(line)
        files[name] = HERMES_DELIMITER.join(kept)
        notes[f"{name} entries"] = len(kept)
        notes[f"{name} left out"] = len(records) - len(kept)
    return files, notes


def approved_files(store: Any, tenant: str, fmt: str, *, user: str | None = None,
                   project: str | None = None) -> dict[str, Any]:
    """The export of the tenant's approved learned memories (``user``: theirs and
    the shared ones; ``project``: that project's and the shared ones)."""
    from ctxproxy.store.learned import LEARNED_BY

    now = time.time()
    records = [r for r in store.memories.iter_tenant(tenant) if r.created_by == LEARNED_BY and r.servable(now)
               and (user is None or r.user in ("", user)) and (project is None or r.project in ("", project))]
    files, notes = render(records, fmt, evidence=lambda r: store.learning.evidence(tenant, r.memory_id))
    return {"format": fmt, "files": files, "notes": notes}
