"""Project-rule files the agent put into the request itself, and their re-injection.

Agents load their own rule files and wrap them in a request in their own
way; these are recognised by those wrappers (no file access):

- **Claude Code**: the first user message's ``<system-reminder>`` with
  ``Contents of <path> (<kind>):`` blocks (start-up files), and on-demand
  ``role: "system"`` messages of ``Contents of <path>:`` blocks (a nested
  ``CLAUDE.md`` or a path-scoped rule, after a read there);
- **Codex**: the ``# AGENTS.md instructions for <cwd>`` block
  (``~/.codex/AGENTS.md``, then ``--- project-doc ---`` and the docs from the
  git root down to the cwd), one observed segment per part, named by the cwd;
- **OpenClaw** and **Hermes**: the system prompt's ``# Project Context``
  section (``The following project context files have been loaded…``) with a
  ``## <path>`` heading per file.

Each file becomes an ``Observed`` record: agent, path (or the block's cwd),
kind, sha256 of its text as sent, and its position in the request. The last
copy of each is kept in the session record's ``observed_rules`` part, so
that when a compaction drops a file (Claude Code re-sends its start-up files
but not the on-demand ones) ``reinject`` can put it back, labelled as a
re-injected copy, by the ``[filters.inject] reinject_observed_rules`` policy.
"""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator

from ..compaction import REQUEST, RESUMED, detect
from ..repeats import LastDecisions
from ctxproxy.store.services.digest import text_sha256
from ..segments import Segment

MAX_FILES = 32  # files remembered per session
MAX_TEXT = 32768  # characters of one file kept for re-injection

_CC_FILE = re.compile(r"^Contents of (/[^\n]*?) \(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\):\n\n", re.M)
_CC_ON_DEMAND = re.compile(r"^Contents of (/[^\n]*?):\n\n", re.M)
_CC_END = ("\n# currentDate", "\n      IMPORTANT: this context may or may not be relevant", "</system-reminder>")
_CODEX = re.compile(r"^# AGENTS\.md instructions for ([^\n]+)\n\n<INSTRUCTIONS>\n(.*?)\n?</INSTRUCTIONS>", re.S)
_CODEX_SPLIT = "--- project-doc ---"
_PROJECT_CONTEXT = re.compile(r"^# Project Context\n\nThe following project context files have been loaded[^\n]*\n",
                              re.M)
_CTX_FILE = re.compile(r"^## ([^\s]*[./][^\s]*)[ \t]*\n\n?", re.M)  # a heading that names a file
_CTX_END = re.compile(r"^(?:## (?:Silent Replies|Heartbeats|Runtime)\b|Conversation started:)", re.M)


@dataclass(frozen=True)
class Observed:
    agent: str  # claude-code | codex | openclaw | hermes
    path: str  # the file's path as the agent wrote it (Codex: the block's cwd)
    kind: str  # the agent's label (Claude Code's kind, on-demand, global, project-doc, context)
    text: str
    where: str  # its position: messages[i].content[j], input[i].content[j], system

    @property
    def sha256(self) -> str:
        return text_sha256(self.text)

    @property
    def key(self) -> str:
        return f"{self.agent}:{self.kind}:{self.path}"

    def record(self, state: str = "present") -> dict[str, Any]:
        return {"agent": self.agent, "path": self.path, "kind": self.kind, "sha256": self.sha256,
                "position": self.where, "state": state}


def observe(view: Any) -> list[Observed]:
    """Every rule file the request carries in an agent's wrapper, in request order."""
    out: list[Observed] = []
    system = view.system_text()
    if system and "# Project Context" in system:
        out += _project_context(system)
    items = view.items()
    if not isinstance(items, list):
        return out
    name = "messages" if view.api in ("anthropic", "chat") else "input"
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        role = item.get("role")
        content = item.get("content")
        if role == "system" and isinstance(content, str) and content.startswith("Contents of /"):
            out += _claude_on_demand(content, f"{name}[{i}]")
        elif role == "user":
            for j, text in _parts(item):
                where = f"{name}[{i}].content[{j}]" if j is not None else f"{name}[{i}]"
                if text.startswith("<system-reminder>") and "\nContents of /" in text:
                    out += _claude_startup(text, where)
                elif text.startswith("# AGENTS.md instructions for "):
                    out += _codex(text, where)
    return out


def _parts(item: dict) -> Iterator[tuple[int | None, str]]:
    content = item.get("content")
    if isinstance(content, str):
        yield None, content
    elif isinstance(content, list):
        for j, block in enumerate(content):
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield j, block["text"]


def _blocks(text: str, pattern: re.Pattern, ends: tuple[str, ...] = ()) -> Iterator[tuple[re.Match, str]]:
    """Each header match of ``pattern`` and the text up to the next header (or an end marker)."""
    matches = list(pattern.finditer(text))
    for k, m in enumerate(matches):
        stop = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        for marker in ends:
            e = text.find(marker, m.end(), stop)
            if e >= 0:
                stop = e
        body = text[m.end():stop].rstrip("\n")
        if body.strip():
            yield m, body + "\n"


def _claude_startup(text: str, where: str) -> list[Observed]:
    return [Observed("claude-code", m.group(1), m.group(2), body, where) for m, body in _blocks(text, _CC_FILE, _CC_END)]


def _claude_on_demand(text: str, where: str) -> list[Observed]:
    return [Observed("claude-code", m.group(1), "on-demand", body, where) for m, body in _blocks(text, _CC_ON_DEMAND)]


def _codex(text: str, where: str) -> list[Observed]:
    m = _CODEX.match(text)
    if m is None:
        return []
    cwd, inner = m.group(1).strip(), m.group(2)
    if _CODEX_SPLIT in inner:
        head, _, docs = inner.partition(_CODEX_SPLIT)
        parts = [("global", head), ("project-doc", docs)]
    else:
        parts = [("instructions", inner)]
    return [Observed("codex", cwd, kind, body.strip("\n") + "\n", where) for kind, body in parts if body.strip()]


def _project_context(system: str) -> list[Observed]:
    m = _PROJECT_CONTEXT.search(system)
    if m is None:
        return []
    agent = "hermes" if "should be followed" in m.group(0) else "openclaw"
    rest = system[m.end():]
    end = _CTX_END.search(rest)
    section = rest[: end.start()] if end else rest
    return [Observed(agent, h.group(1), "context", body, "system") for h, body in _blocks(section, _CTX_FILE)]


# -- the session's copies and re-injection -----------------------------------------

POLICIES = ("after_compaction", "always", "never")


def remember(doc: dict, seen: list[Observed], now: float) -> bool:
    """Keep the last copy of each file seen in ``doc["files"]``; True if it changed."""
    files = dict(doc.get("files") or {})
    changed = False
    for ob in seen:
        if len(ob.text) > MAX_TEXT:
            continue
        old = files.get(ob.key)
        if old is None or old.get("sha256") != ob.sha256:
            files.pop(ob.key, None)
            files[ob.key] = {"agent": ob.agent, "path": ob.path, "kind": ob.kind, "sha256": ob.sha256,
                             "text": ob.text, "where": ob.where, "observed_at": now}
            changed = True
    while len(files) > MAX_FILES:
        files.pop(next(iter(files)))
        changed = True
    if changed:
        doc["files"] = files
    return changed


def missing(doc: dict, seen: list[Observed]) -> list[dict]:
    """The remembered files whose text this request does not carry, oldest first."""
    present = {ob.sha256 for ob in seen}
    keys = {ob.key for ob in seen}
    return [f for k, f in (doc.get("files") or {}).items()
            if f.get("sha256") not in present and k not in keys and isinstance(f.get("text"), str)]


def reinject_segment(files: list[dict], priority: int) -> Segment | None:
    """One stable system segment with the last observed copy of each file, labelled as re-injected."""
    if not files:
        return None
    parts = ["Project rules the agent loaded earlier in this session, re-injected by ctxproxy from the last "
             "copy it observed (the compacted history no longer shows them). They still apply."]
    for f in files:
        parts.append(f"Contents of {f['path']} ({f['agent']}, {f['kind']}; sha256 {f['sha256'][:12]}):\n\n"
                     f"{f['text'].rstrip()}")
    text = "\n\n".join(parts)
    rev = hashlib.sha256("".join(f["sha256"] for f in files).encode()).hexdigest()[:12]
    observed = max((float(f.get("observed_at") or 0) for f in files), default=0.0)
    stamp = datetime.fromtimestamp(observed, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if observed else ""
    return Segment(kind="observed_rules", ref=f"observed_rules@{rev}", text=text,
                   origin=",".join(f["path"] for f in files), scope="project", trust="reviewed",
                   sensitivity="internal", freshness={"revision": rev, "observed_at": stamp}, priority=priority,
                   placement="system", truncatable=True, stable=True, boundary="paragraph")


def observed_segments(turn: Any, store: Any, parts: Any, state: Any, policy: str, priority: int,
                      repeats: LastDecisions | None = None) -> list[Segment]:
    """``inject``'s source: records the request's rule files in ``state.observed_rules``,
    remembers their copies in the session (``parts``, a ``PartCache``), and returns the
    re-injection segment when ``policy`` says a file seen before must be put back.
    ``repeats``: the session's last request, decided with nothing to change or put back,
    sent again on the copies it left (the part cache's very object) is decided the same."""
    view = turn.request
    ident = turn.identity
    if repeats is not None and store is not None and ident.session:
        last = repeats.get(turn)
        if last is not None:
            rev, doc, _ = parts.load(store, ident.tenant, ident.session, turn=turn)
            if doc is last[0]:
                state.observed_rules = [dict(r) for r in last[1]]
                return []
    seen = observe(view)
    records = [ob.record() for ob in seen]
    state.observed_rules = records
    if store is None or not ident.session or (not seen and policy == "never"):
        return []
    rev, doc, n_before = parts.load(store, ident.tenant, ident.session, turn=turn)
    doc = dict(doc)
    gone = missing(doc, seen)  # before remembering this request's copies
    changed = remember(doc, seen, time.time())
    # only a request that lacks a file seen before needs to know whether (and how) it compacted
    found = detect(view, turn.headers) if gone else None
    n = len(view.items()) if isinstance(view.items(), list) else 0
    lost = (found is not None and found.phase == RESUMED) or (isinstance(n_before, int) and n < n_before)
    if lost and not doc.get("compacted"):
        doc["compacted"] = changed = True
    parts.keep(turn, store, (), rev, doc, n, changed)
    if repeats is not None:
        if changed or gone:
            repeats.forget(turn)
        else:  # nothing changed, nothing to put back: the same request again decides the same
            kept = [dict(r) for r in records]  # the copies themselves are the part cache's, counted there
            repeats.keep(turn, (doc, kept), 128 + 640 * len(kept))
    if policy == "never" or not gone or (found is not None and found.phase == REQUEST):
        return []
    if policy == "after_compaction" and not doc.get("compacted"):
        return []
    records += [{"agent": f["agent"], "path": f["path"], "kind": f["kind"], "sha256": f["sha256"],
                 "position": None, "state": "reinjected"} for f in gone]
    seg = reinject_segment(gone, priority)
    return [seg] if seg is not None else []
