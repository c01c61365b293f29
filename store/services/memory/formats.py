"""The memory files agents already keep, read into gate entries and written back.

Formats (``detect`` guesses from a path):

``claude``   Claude Code auto memory, ``~/.claude/projects/<project>/memory/``:
             ``MEMORY.md`` (an index, ``- [Title](topic.md) — hook`` lines, and in
             older directories plain notes) and topic files with a frontmatter
             (``name``, ``description``, ``type``: user | feedback | project |
             reference). A single ``CLAUDE.md``-style file: each bullet or
             paragraph is an entry.
``codex``    Codex ``~/.codex/memories``: ``MEMORY.md`` (merged durable memory)
             and ``memory_summary.md`` (short summaries); bullets are entries.
``openclaw`` an OpenClaw workspace: ``MEMORY.md`` (long-term, evergreen) and
             ``memory/YYYY-MM-DD.md`` (daily logs: events dated that day, so
             they decay with the event TTL).
``hermes``   Hermes ``~/.hermes/memories``: ``MEMORY.md`` and ``USER.md``, entries
             separated by a line holding ``§``; USER.md entries go to the user scope.
``jsonl``    one record (``MemoryRecord.to_dict``) per line, as ``export`` writes.

Every entry carries ``origin = "imported"``, the scope the import names
(``project``, ``user``: every format honours both) and an ``evidence_ref``
naming its file by its absolute path (``file:<path>#<n>``: three agents all
keep a ``MEMORY.md``); importing the same file again adds nothing (the gate
finds the duplicates). An entry that belongs to one user (Claude Code's
``type: user``, Hermes' ``USER.md``) with no user named is refused with the
reason, never stored wider. A line ending in ``(mem:<id>)`` — how ``export``
marks records — keeps that id as its ``external_id``.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import orjson

FORMATS = ("claude", "codex", "openclaw", "hermes", "jsonl")
HERMES_DELIMITER = "\n§\n"
_MARK = re.compile(r"\s*\(mem:([A-Za-z0-9_\-]{1,64})\)\s*$")
_BULLET = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_INDEX_LINK = re.compile(r"^\s*[-*]\s+\[[^\]]*\]\(([^)\s]+\.md)\)")
_DATED = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_CLAUDE_KINDS = {"user": "preference", "feedback": "procedure", "project": "fact", "reference": "fact"}


class FormatError(ValueError):
    pass


def detect(path: Path) -> str:
    if path.is_file():
        if path.suffix == ".jsonl":
            return "jsonl"
        return "claude"  # a CLAUDE.md-style notes file
    names = {p.name for p in path.iterdir()} if path.is_dir() else set()
    if "USER.md" in names and "MEMORY.md" in names and _hermes_like(path / "MEMORY.md"):
        return "hermes"
    if "memory_summary.md" in names:
        return "codex"
    if (path / "memory").is_dir() and any(_DATED.match(p.name) for p in (path / "memory").iterdir()):
        return "openclaw"
    if any(p.suffix == ".md" and p.name != "MEMORY.md" and _frontmatter(_read(p))[0] for p in path.iterdir()):
        return "claude"
    if "USER.md" in names:
        return "hermes"
    raise FormatError(f"cannot tell the memory format of {path}; name it with --format ({', '.join(FORMATS)})")


def _hermes_like(path: Path) -> bool:
    return "§" in _read(path)


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _frontmatter(text: str) -> tuple[dict[str, str], str]:
    """(fields, body) of a ``---`` YAML-ish frontmatter (flat ``key: value`` lines)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    fields: dict[str, str] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            fields[key.strip()] = value.strip().strip("'\"")
        elif sep and key.strip() == "type":  # nested under metadata:
            fields["type"] = value.strip()
    rest = text[end + 4:]
    return fields, rest[1:] if rest.startswith("\n") else rest


def markdown_entries(text: str) -> list[tuple[int, str]]:
    """(line number, text) of each bullet or paragraph; headings, code fences,
    tables and rules are structure, not entries. A bullet's wrapped lines join it."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    fence = False

    def flush() -> None:
        if current:
            joined = " ".join(s.strip() for s in current).strip()
            if joined:
                out.append((start, joined))
            current.clear()

    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            fence = not fence
            continue
        if fence:
            continue
        if not stripped or stripped.startswith(("#", "|", "---", "***", "<!--")) or stripped == "§":
            flush()
            continue
        m = _BULLET.match(line)
        if m:
            flush()
            start = n
            current.append(m.group(1))
        elif current and (line.startswith((" ", "\t")) or not _BULLET.match(line)):
            current.append(stripped)
        else:
            flush()
            start = n
            current.append(stripped)
    flush()
    return out


def _entry(statement: str, ref: str, **fields: Any) -> dict[str, Any]:
    m = _MARK.search(statement)
    if m:  # a record ctxproxy exported: its id names it (importing the file again adds nothing new)
        statement = statement[:m.start()]
        fields["external_id"] = m.group(1)
    return {"statement": statement.strip(), "origin": "imported", "evidence_ref": f"file:{ref}", **fields}


class _Source:
    """One import: the scope every entry gets, and how entries name their file."""

    def __init__(self, project: str, user: str) -> None:
        self.project = project
        self.user = user
        self.scope = {k: v for k, v in (("project", project), ("user", user)) if v}

    def entries(self, path: Path, items: Iterable[tuple[int, str]], *, own_user: bool = False,
                **fields: Any) -> list[dict[str, Any]]:
        """Gate entries of ``path``'s items (line or entry number, text). ``own_user``:
        they belong to one user, so an import that names none is refused."""
        items = list(items)
        if own_user and items and not self.user:
            raise FormatError(f"{path}: its entries belong to one user; give --user (nothing was imported, "
                              "rather than storing them where every user of the tenant would see them)")
        ref = str(path.resolve())
        return [_entry(text, f"{ref}#{n}", **fields, **self.scope) for n, text in items]


def read_entries(path: Path, fmt: str, *, project: str = "", user: str = "") -> list[dict[str, Any]]:
    """The gate entries of a memory file or directory (``FormatError`` if unreadable,
    or if an entry's scope cannot be told). Every entry is in the ``project`` and
    ``user`` scope given."""
    path = Path(path)
    if not path.exists():
        raise FormatError(f"{path} does not exist")
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    src = _Source(project, user)
    if fmt == "jsonl":
        return _jsonl(path, src.scope)
    if path.is_file():
        return src.entries(path, markdown_entries(_read(path)), kind="procedure")
    return {"claude": _claude, "codex": _codex, "openclaw": _openclaw, "hermes": _hermes}[fmt](path, src)


def _claude(root: Path, src: _Source) -> list[dict[str, Any]]:
    out = []
    linked = set()
    for p in sorted(root.glob("*.md")):
        if p.name == "MEMORY.md":
            continue
        text = _read(p)
        fields, body = _frontmatter(text)
        kind = _CLAUDE_KINDS.get(fields.get("type", ""), "fact")
        flat = " ".join(body.split()) or fields.get("description", "")
        if flat:
            linked.add(p.name)
            line = text.count("\n", 0, len(text) - len(body.lstrip())) + 1  # where the body starts
            out += src.entries(p, [(line, flat)], own_user=fields.get("type") == "user", kind=kind)
    index = root / "MEMORY.md"
    if index.exists():
        lines = []
        for n, text in markdown_entries(_read(index)):
            link = _INDEX_LINK.match("- " + text)
            if link and Path(link.group(1)).name in linked:
                continue  # an index line pointing at a topic file read above
            lines.append((n, text))
        out += src.entries(index, lines, kind="fact")
    return out


def _codex(root: Path, src: _Source) -> list[dict[str, Any]]:
    out = []
    for name in ("MEMORY.md", "memory_summary.md"):
        p = root / name
        if p.exists():
            out += src.entries(p, markdown_entries(_read(p)), kind="fact")
    return out


def _openclaw(root: Path, src: _Source) -> list[dict[str, Any]]:
    out = []
    p = root / "MEMORY.md"
    if p.exists():
        out += src.entries(p, markdown_entries(_read(p)), kind="fact", evergreen=True)
    daily = root / "memory"
    for f in sorted(daily.glob("*.md")) if daily.is_dir() else ():
        m = _DATED.match(f.name)
        if not m:
            continue
        day = datetime(int(m[1]), int(m[2]), int(m[3]), 12, tzinfo=timezone.utc).timestamp()
        out += src.entries(f, markdown_entries(_read(f)), kind="event", observed_at=day)
    return out


def hermes_entries(text: str) -> list[str]:
    return [e.strip() for e in re.split(r"\n\s*§\s*\n", "\n" + text + "\n") if e.strip()]


def _hermes(root: Path, src: _Source) -> list[dict[str, Any]]:
    out = []
    for name, kind in (("MEMORY.md", "fact"), ("USER.md", "preference")):
        p = root / name
        if p.exists():
            out += src.entries(p, enumerate(hermes_entries(_read(p)), 1), own_user=name == "USER.md", kind=kind)
    return out


_JSONL_FIELDS = ("statement", "kind", "origin", "project", "user", "session", "purpose", "evidence_ref",
                 "evidence_sessions", "confidence", "sensitivity", "observed_at", "expires_at", "evergreen",
                 "subject_key")


def _jsonl(path: Path, scope: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise FormatError(f"{path.name} line {n}: not JSON ({exc})") from None
        if not isinstance(d, dict):
            raise FormatError(f"{path.name} line {n}: expected an object")
        entry = {k: d[k] for k in _JSONL_FIELDS if k in d and d[k] not in (None, "") or k == "evergreen" and k in d}
        if isinstance(entry.get("evidence_sessions"), list) and not entry["evidence_sessions"]:
            entry.pop("evidence_sessions")
        entry.update(scope)
        if d.get("external_id") or d.get("memory_id"):
            entry["external_id"] = str(d.get("external_id") or d.get("memory_id"))[-200:]
        entry.setdefault("origin", "imported")
        out.append(entry)
    return out


# -- export --------------------------------------------------------------------


def entry_line(rec: Any) -> str:
    """A record as one entry: its statement on one line, then ``(mem:<id>)``
    (importing the file again finds it by that id)."""
    return f"{' '.join(rec.statement.split())} (mem:{rec.memory_id})"


def export(records: Iterable[Any], fmt: str, dest: Path) -> list[Path]:
    """Write records in ``fmt`` under ``dest`` (a directory; for jsonl a file).
    Returns the files written."""
    records = list(records)
    dest = Path(dest)
    if fmt == "jsonl":
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"".join(orjson.dumps(r.to_dict()) + b"\n" for r in records))
        return [dest]
    return write_files(dest, render(records, fmt))


def write_files(dest: Path, files: dict[str, str]) -> list[Path]:
    """``files`` (relative path -> text) written under ``dest``."""
    written = []
    for name, text in files.items():
        p = Path(dest) / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")
        written.append(p)
    return written


def render(records: Iterable[Any], fmt: str) -> dict[str, str]:
    """The files of ``fmt`` (relative path -> text) holding ``records``."""
    records = list(records)
    out: dict[str, str] = {}
    if fmt == "claude":
        index = ["# Memory index (exported by ctxproxy)", ""]
        types = {"preference": "user", "procedure": "feedback", "fact": "project", "failure": "project",
                 "event": "project"}
        for r in records:
            name = f"{r.memory_id}.md"
            title = " ".join(r.statement.split())[:60]
            out[name] = (f"---\nname: {r.memory_id}\ndescription: {title}\ntype: {types.get(r.kind, 'reference')}\n"
                         f"---\n\n{r.statement}\n")
            index.append(f"- [{title}]({name}) — {r.kind}, {r.status}")
        out["MEMORY.md"] = "\n".join(index) + "\n"
    elif fmt == "codex":
        out["MEMORY.md"] = "# Memories (exported by ctxproxy)\n\n" + "".join(f"- {entry_line(r)}\n" for r in records)
    elif fmt == "openclaw":
        dated = [r for r in records if r.kind == "event" and not r.evergreen]
        out["MEMORY.md"] = "# MEMORY.md\n\n" + "".join(f"- {entry_line(r)}\n" for r in records if r not in dated)
        days: dict[str, list[Any]] = {}
        for r in dated:
            days.setdefault(datetime.fromtimestamp(r.observed_at, timezone.utc).strftime("%Y-%m-%d"), []).append(r)
        for day, rs in sorted(days.items()):
            out[f"memory/{day}.md"] = f"# {day}\n\n" + "".join(f"- {entry_line(r)}\n" for r in rs)
    elif fmt == "hermes":
        out["MEMORY.md"] = HERMES_DELIMITER.join(entry_line(r) for r in records if not r.user)
        out["USER.md"] = HERMES_DELIMITER.join(entry_line(r) for r in records if r.user)
    else:
        raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return out
