"""The project rules bundle: instruction files resolved into one revision.

Sources come from ``[filters.inject]`` in four layers, resolved in this order
(which is also precedence, highest first)::

    managed  →  task  →  project  →  local

``managed`` is a policy file an administrator controls; ``task`` patterns may
name ``{task}`` (the turn's task id, made path-safe); ``project`` is the
repository's AGENTS.md / CLAUDE.md tree; ``local`` is a developer's own
override file. Within a layer, patterns keep their configured order and the
files one pattern matches are sorted shallowest first, then by path. A file
matched twice is kept once, in its first layer.

Every file carries its sha256 (of the bytes on disk). The bundle has an id
(hash of its source definition: root and patterns) and a revision (sha256 of
the resolved text), so a manifest can say exactly which instructions a turn
saw.

Conflicts: two files that declare the same ``key: <name> = <value>`` with
different values, or carry the same Markdown heading with different bodies,
produce an ``instruction_conflict`` record naming both sources and the rule
applied — the earlier source in the resolved order wins. In the resolved text
the losing line (or section body) is replaced by a one-line note, so the
model never sees both. Records hold sources, line numbers and value digests,
never the values.

Revocation: ``revoked`` lists file sha256s (``sha256:<hex>`` or a hex prefix
of at least 12 characters) and bundle revisions (``rev:<hex>`` or the same
hex forms). A revoked file is refused and the rest load; a revoked revision
refuses the whole bundle. Either way the bundle says so (``refused``).

Files are read once and re-read only when their mtime or size changes; the
file system is looked at no more than once per ``refresh_seconds``, never per
turn. On the request path (``get(task, wait=False)``) a stale bundle is
served as it is while one background thread refreshes every cached bundle
(one walk of each pattern for all of them): a ``**/AGENTS.md`` walk of a big
repository never stalls the event loop. Only the very first load walks on the
caller's thread (inject does it at start-up); a task seen for the first time
reuses the last walk and only stats its files. ``refresh_seconds = 0`` looks
every turn, on the caller's thread (tests, development).
"""
from __future__ import annotations

import glob
import hashlib
import logging
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ctxproxy.store.services.digest import text_sha256

log = logging.getLogger("ctxproxy.filters.inject")

LAYERS = ("managed", "task", "project", "local")
RULE_APPLIED = "precedence managed > task > project > local; within a layer, the first listed file wins"
_KEY = re.compile(r"^\s*(?:[-*+]\s+)?key:\s*([A-Za-z0-9_.:/-]+)\s*=\s*(.*?)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TASK_SAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class RulesSources:
    """The bundle's definition (parsed from ``[filters.inject]``)."""

    root: str = "."
    managed: tuple[str, ...] = ()
    task: tuple[str, ...] = ()
    project: tuple[str, ...] = ()
    local: tuple[str, ...] = ()
    revoked: tuple[str, ...] = ()
    exclude_dirs: tuple[str, ...] = (".git", "node_modules", ".venv", "venv", "__pycache__", ".ctxproxy")
    max_files: int = 64
    max_file_bytes: int = 256 * 1024
    refresh_seconds: float = 2.0  # 0: look at every turn, on the request path

    def patterns(self, layer: str) -> tuple[str, ...]:
        return getattr(self, layer)

    @property
    def empty(self) -> bool:
        return not any(self.patterns(layer) for layer in LAYERS)


@dataclass(frozen=True)
class RuleFile:
    path: str  # as shown: relative to the root when under it, else absolute
    layer: str
    sha256: str
    size: int
    mtime: float
    text: str = field(repr=False, default="")

    def record(self) -> dict[str, Any]:
        return {"path": self.path, "layer": self.layer, "sha256": self.sha256, "bytes": self.size}


@dataclass(frozen=True)
class Bundle:
    bundle_id: str
    revision: str  # sha256 hex of the resolved text ("" when refused)
    files: tuple[RuleFile, ...]
    layers: dict[str, str]  # layer -> resolved text (only non-empty layers)
    conflicts: tuple[dict[str, Any], ...] = ()
    refused: tuple[dict[str, Any], ...] = ()
    observed_at: float = 0.0  # newest file mtime

    @property
    def loaded(self) -> bool:
        return bool(self.revision) and bool(self.layers)

    def info(self) -> dict[str, Any]:
        return {"bundle_id": self.bundle_id, "revision": self.revision,
                "files": [f.record() for f in self.files], "refused": list(self.refused),
                "conflicts": len(self.conflicts)}


class RulesBundle:
    """Loads, resolves and caches the bundle; thread-safe, cheap per turn."""

    def __init__(self, sources: RulesSources, clock: Callable[[], float] = time.monotonic):
        self.sources = sources
        self.root = Path(sources.root).expanduser().resolve()
        definition = repr((str(self.root), [sources.patterns(layer) for layer in LAYERS]))
        self.bundle_id = "rb-" + hashlib.sha256(definition.encode()).hexdigest()[:12]
        self._clock = clock
        self._lock = threading.Lock()  # one refresh at a time (the walks)
        self._refreshing = threading.Lock()  # held while the background refresh runs
        # Plain dicts of immutable values: the request path reads them without the lock while a
        # refresh replaces entries (single dict operations are atomic in CPython).
        self._files: dict[str, tuple[int, int, RuleFile | None, str]] = {}  # abs path -> (mtime_ns, size, file, error)
        self._bundles: dict[str, tuple[float, tuple, Bundle]] = {}  # task key -> (checked, fingerprint, bundle)
        self._globs: dict[str, tuple[float, list[str]]] = {}  # pattern without {task} -> (walked at, paths)
        self._revoked = _parse_revoked(sources.revoked)

    def get(self, task: str = "", wait: bool = True) -> Bundle | None:
        """The bundle for ``task`` (``None`` when no sources are configured).

        With ``wait=False`` (the request path) a stale bundle is returned as it
        is and refreshed in the background; a task's first bundle reuses the
        last walk. With ``wait`` a stale bundle is refreshed here and now."""
        if self.sources.empty:
            return None
        task_key = _safe_task(task) if any("{task}" in p for p in self.sources.task) else ""
        now = self._clock()
        cached = self._bundles.get(task_key)
        if cached is not None and now - cached[0] < self.sources.refresh_seconds:
            return cached[2]
        if wait or not self.sources.refresh_seconds:
            with self._lock:
                return self._load(task_key, now, rescan=True)
        if cached is None:  # a new task: its own files are found and stat'ed, the rest comes from the last walk
            return self._load(task_key, now, rescan=False)
        if self._refreshing.acquire(blocking=False):  # else one is running: it refreshes this one too
            try:
                threading.Thread(target=self._refresh_all, name=f"rules-{self.bundle_id}", daemon=True).start()
            except RuntimeError:  # no thread to be had: the next stale turn tries again
                self._refreshing.release()
        return cached[2]

    def _refresh_all(self) -> None:
        """Every cached bundle, looked at again: each pattern walked once for all."""
        try:
            with self._lock:
                now = self._clock()
                for task_key in list(self._bundles):
                    self._load(task_key, now, rescan=True)
        except Exception as exc:  # the cached bundles stay; the next stale turn tries again
            log.warning("rules bundle %s: refresh failed: %s", self.bundle_id, type(exc).__name__)
        finally:
            self._refreshing.release()

    def _load(self, task_key: str, now: float, rescan: bool) -> Bundle:
        cached = self._bundles.get(task_key)
        found, refused = self._discover(task_key, now, rescan)
        fingerprint = tuple((layer, p, self._files[p][0], self._files[p][1]) for layer, p in found)
        if cached is not None and cached[1] == fingerprint:
            self._bundles[task_key] = (now, fingerprint, cached[2])
            return cached[2]
        bundle = self._resolve(found, refused)
        if cached is None or cached[2].revision != bundle.revision:
            log.info("rules bundle %s: revision %s (%d files, %d conflicts, %d refused)", self.bundle_id,
                     bundle.revision[:12] or "-", len(bundle.files), len(bundle.conflicts), len(bundle.refused))
            for r in bundle.refused:
                log.warning("rules bundle %s: refused %s (%s)", self.bundle_id, r.get("path") or r.get("revision"),
                            r["reason"])
        if len(self._bundles) > 256:
            self._bundles.clear()
        self._bundles[task_key] = (now, fingerprint, bundle)
        return bundle

    # -- discovery and reading ---------------------------------------------
    def _discover(self, task_key: str, now: float, rescan: bool
                  ) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
        seen: set[str] = set()
        found: list[tuple[str, str]] = []
        refused: list[dict[str, Any]] = []
        for layer in LAYERS:
            for pattern in self.sources.patterns(layer):
                if "{task}" in pattern:
                    if not task_key:
                        continue
                    paths = self._expand(pattern.replace("{task}", task_key))
                else:
                    paths = self._walked(pattern, now, rescan)
                for path in paths:
                    if path in seen:
                        continue
                    seen.add(path)
                    if len(found) >= self.sources.max_files:
                        refused.append({"path": self._show(path),
                                        "reason": f"more than {self.sources.max_files} files"})
                        continue
                    self._stat_and_read(path)
                    found.append((layer, path))
        return found, refused

    def _walked(self, pattern: str, now: float, rescan: bool) -> list[str]:
        """A pattern's files, from the last walk unless ``rescan`` (a refresh
        walks each pattern once, however many task bundles it resolves)."""
        last = self._globs.get(pattern)
        if last is not None and (last[0] == now or not rescan):
            return last[1]
        paths = self._expand(pattern)
        self._globs[pattern] = (now, paths)
        return paths

    def _expand(self, pattern: str) -> list[str]:
        base = self.root
        p = Path(pattern).expanduser()
        if p.is_absolute():
            base, rel = Path(p.anchor), str(p.relative_to(p.anchor))
        else:
            rel = pattern
        if not any(c in rel for c in "*?["):
            full = base / rel
            return [os.path.realpath(full)] if full.is_file() else []
        if "**" not in rel:  # one directory level per segment: the standard glob
            found = [str(base / m) for m in glob.glob(rel, root_dir=str(base))]
            out = [f for f in found if os.path.isfile(f)]
        else:  # recursive: walk below the literal leading directories, skipping excluded ones
            rx = re.compile(_glob_regex(rel))
            fixed = []
            for part in Path(rel).parts:
                if any(c in part for c in "*?["):
                    break
                fixed.append(part)
            start = base.joinpath(*fixed)
            excluded = set(self.sources.exclude_dirs)
            out = []
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = sorted(d for d in dirnames if d not in excluded)
                for name in filenames:
                    full = os.path.join(dirpath, name)
                    if rx.fullmatch(Path(os.path.relpath(full, base)).as_posix()):
                        out.append(full)
        out.sort(key=lambda f: (len(Path(f).parts), f))
        return [os.path.realpath(f) for f in out]

    def _stat_and_read(self, path: str) -> None:
        try:
            st = os.stat(path)
        except OSError as exc:
            self._files[path] = (0, 0, None, f"unreadable ({exc.strerror})")
            return
        old = self._files.get(path)
        if old is not None and old[0] == st.st_mtime_ns and old[1] == st.st_size:
            return  # unchanged: never re-read
        if st.st_size > self.sources.max_file_bytes:
            self._files[path] = (st.st_mtime_ns, st.st_size, None, f"larger than {self.sources.max_file_bytes} bytes")
            return
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            self._files[path] = (st.st_mtime_ns, st.st_size, None, f"unreadable ({exc.strerror})")
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self._files[path] = (st.st_mtime_ns, st.st_size, None, "not UTF-8")
            return
        rf = RuleFile(self._show(path), "", hashlib.sha256(data).hexdigest(), len(data), st.st_mtime, text)
        self._files[path] = (st.st_mtime_ns, st.st_size, rf, "")

    def _show(self, path: str) -> str:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return path

    # -- resolution -----------------------------------------------------------
    def _resolve(self, found: list[tuple[str, str]], refused: list[dict[str, Any]]) -> Bundle:
        refused = list(refused)
        files: list[RuleFile] = []
        for layer, path in found:
            _, _, rf, error = self._files[path]
            if rf is None:
                refused.append({"path": self._show(path), "layer": layer, "reason": error})
                continue
            if _is_revoked(rf.sha256, self._revoked):
                refused.append({"path": rf.path, "layer": layer, "sha256": rf.sha256, "reason": "revoked"})
                continue
            files.append(RuleFile(rf.path, layer, rf.sha256, rf.size, rf.mtime, rf.text))
        texts, conflicts = resolve_conflicts(files)
        layers: dict[str, str] = {}
        for rf, text in zip(files, texts):
            head = f"--- {rf.layer}: {rf.path} (sha256:{rf.sha256[:12]}) ---"
            chunk = f"{head}\n{text.strip()}"
            layers[rf.layer] = f"{layers[rf.layer]}\n\n{chunk}" if rf.layer in layers else chunk
        resolved = "\n\n".join(f"[{layer}]\n{layers[layer]}" for layer in LAYERS if layer in layers)
        revision = text_sha256(resolved) if layers else ""
        observed = max((f.mtime for f in files), default=0.0)
        if revision and _is_revoked(revision, self._revoked):
            refused.append({"revision": revision, "reason": "revoked", "files": [f.path for f in files]})
            return Bundle(self.bundle_id, "", tuple(files), {}, tuple(conflicts), tuple(refused), observed)
        return Bundle(self.bundle_id, revision, tuple(files), layers, tuple(conflicts), tuple(refused), observed)


def resolve_conflicts(files: Sequence[RuleFile]) -> tuple[list[str], list[dict[str, Any]]]:
    """The files' texts with losing declarations replaced, and the conflict records.

    ``files`` are in resolved order; the first declaration of a key (or a
    heading) wins. Same value / same body in two files is not a conflict.
    """
    key_winner: dict[str, tuple[int, int, str]] = {}  # key -> (file index, line, normalised value)
    head_winner: dict[str, tuple[int, int, str]] = {}
    conflicts: list[dict[str, Any]] = []
    out: list[str] = []
    for fi, rf in enumerate(files):
        lines = rf.text.split("\n")
        drop_key: dict[int, str] = {}  # line -> note
        drop_body: dict[int, tuple[int, str]] = {}  # heading line -> (end line, note)
        keys, sections = _declarations(lines)
        for key, line, value in keys:
            prev = key_winner.get(key)
            if prev is None:
                key_winner[key] = (fi, line, value)
            elif prev[0] != fi and prev[2] != value:
                winner = files[prev[0]]
                conflicts.append(_conflict("key", key, winner, prev[1], prev[2], rf, line, value))
                drop_key[line] = f'[ctxproxy: key "{key}" overridden by {winner.path} ({winner.layer})]'
        for title, line, end, body in sections:
            prev = head_winner.get(title)
            if prev is None:
                head_winner[title] = (fi, line, body)
            elif prev[0] != fi and prev[2] != body:
                winner = files[prev[0]]
                conflicts.append(_conflict("heading", title, winner, prev[1], prev[2], rf, line, body))
                drop_body[line] = (end, f"[ctxproxy: section overridden by {winner.path} ({winner.layer})]")
        if not drop_key and not drop_body:
            out.append(rf.text)
            continue
        kept: list[str] = []
        i = 0
        while i < len(lines):
            if i in drop_key:
                kept.append(drop_key[i])
                i += 1
            elif i in drop_body:
                end, note = drop_body[i]
                kept += [lines[i], note]
                i = end
            else:
                kept.append(lines[i])
                i += 1
        out.append("\n".join(kept))
    return out, conflicts


def _declarations(lines: list[str]) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, int, str]]]:
    """``key:`` declarations and heading sections of one file (code fences skipped)."""
    keys: list[tuple[str, int, str]] = []
    heads: list[tuple[str, int]] = []
    in_code = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        m = _KEY.match(line)
        if m:
            keys.append((m.group(1).casefold(), i, _norm(m.group(2))))
            continue
        h = _HEADING.match(line)
        if h:
            heads.append((_norm(h.group(2)), i))
    sections = []
    seen: set[str] = set()
    for n, (title, line) in enumerate(heads):
        end = heads[n + 1][1] if n + 1 < len(heads) else len(lines)
        body = _norm("\n".join(lines[line + 1:end]))
        if body and title not in seen:  # a container heading (empty body) declares nothing
            seen.add(title)
            sections.append((title, line, end, body))
    return keys, sections


def _conflict(kind: str, name: str, winner: RuleFile, wline: int, wvalue: str, loser: RuleFile, lline: int,
              lvalue: str) -> dict[str, Any]:
    return {
        "type": "instruction_conflict",
        "kind": kind,  # key | heading
        "name": name,
        "applied": {"path": winner.path, "layer": winner.layer, "sha256": winner.sha256, "line": wline + 1,
                    "value_sha256": _digest(wvalue)},
        "overridden": {"path": loser.path, "layer": loser.layer, "sha256": loser.sha256, "line": lline + 1,
                       "value_sha256": _digest(lvalue)},
        "rule": RULE_APPLIED,
    }


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _digest(text: str) -> str:
    return text_sha256(text)[:16]


def _glob_regex(pattern: str) -> str:
    """``**`` spans directories, ``*`` and ``?`` stay inside one, ``[...]`` is a class."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1:j].replace("\\", "\\\\")
                out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _safe_task(task: str) -> str:
    """A task id usable inside a path: no separators, no dot-dot."""
    safe = _TASK_SAFE.sub("_", task)[:128].strip(".")
    return safe if safe and safe not in (".", "..") else ""


def _parse_revoked(entries: Sequence[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    exact, prefixes = set(), []
    for e in entries:
        v = e.strip().lower()
        for pre in ("sha256:", "rev:"):
            if v.startswith(pre):
                v = v[len(pre):]
        if len(v) == 64:
            exact.add(v)
        else:
            prefixes.append(v)
    return frozenset(exact), tuple(prefixes)


def _is_revoked(digest: str, revoked: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    return digest in revoked[0] or any(digest.startswith(p) for p in revoked[1])


def validate_revoked(entries: Sequence[str], path: str) -> str | None:
    """An error message for a malformed deny-list entry, else ``None``."""
    for i, e in enumerate(entries):
        v = e.strip().lower()
        for pre in ("sha256:", "rev:"):
            if v.startswith(pre):
                v = v[len(pre):]
        if not re.fullmatch(r"[0-9a-f]{12,64}", v):
            return f"{path}[{i}]: expected sha256:<hex>, rev:<hex> or a hex digest of 12-64 characters, got {e!r}"
    return None


# -- the manifest's part (inject reports it) ------------------------------------------

def bundle_report(info: dict | None, conflicts: Sequence[dict]) -> dict[str, Any]:
    """The manifest's record of the bundle ``inject`` loaded this turn (``info``,
    ``Bundle.info()``, and its conflicts): files in resolved order with their
    sha256, ``instruction_conflict`` records, refused files and revisions."""
    if not isinstance(info, dict):
        return {}
    return {"rules": {
        "bundle_id": info.get("bundle_id"),
        "revision": info.get("revision") or None,
        "files": [{"order": i, "path": f.get("path"), "layer": f.get("layer"), "sha256": f.get("sha256"),
                   "bytes": f.get("bytes")} for i, f in enumerate(info.get("files") or ())],
        "conflicts": [dict(c) for c in conflicts or ()],
        "refused": [dict(r) for r in info.get("refused") or ()],
    }}
