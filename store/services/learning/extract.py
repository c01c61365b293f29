"""Phase 1: one session's candidates, from what the proxy recorded of it.

Deterministic (no model call; the same records give the same candidates)
and outside any turn. It reads:

- the checkpoint's task state (``sessions`` part ``task_state``): the goal
  (the first user turn; clipped there at 300 characters, so read whole from
  the session index) and the user's instructions and corrections and the
  decisions taken, each the user's own sentence as the checkpoint kept it
  (``wording.instructions``), and the outcomes tool results verified (tests
  passed, a commit, a PR or ticket, a deployment);
- the effect ledger: the tool calls in order, with their state (calls
  that change something always; read-only ones, test runs among them, when
  ``[filters.effects] record_read_only`` is on — a failed test run and the
  run that passed after a fix need it);
- the session index: the turn each sentence was said in;
- the manifests: which agent the session was.

and finds:

``preference``  an instruction, correction or stated preference, verbatim
                (origin ``user``);
``decision``    a choice the user made, with the question it answered
                (origin ``user``; a ``decision:`` line found in any text is
                ``tool_output``: it may come from a file or a tool);
``procedure``   the commands that led to a verified outcome, as run, with
                the outcome as evidence (origin ``verified_tool_result``);
``failure``     a command that failed, the changes after which the same
                command passed (origin ``verified_tool_result``).

A tool's output is never a statement: it is the evidence (``outcome``).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable, Sequence

import orjson

from ctxproxy.store.records import COMPLETED, FAILED, RESOLVED
from ctxproxy.store.services.wording import instructions

from .candidates import DECISION, FAILURE, PART, PREFERENCE, PROCEDURE, Candidate, Extraction

TASK_STATE = "task_state"  # the checkpoint's session part
MAX_STEP = 160  # characters of one step as shown
MAX_STEPS = 8  # steps of one procedure (the last ones before the outcome)
_BACKTICK = re.compile(r"`([^`]+)`")
_DECISION_LINE = re.compile(r'^"(.*)" \(decision: line\)$', re.S)
_ANSWERING = re.compile(r'^"(.*)" \(answering "(.*)"\)$', re.S)
_QUOTED = re.compile(r'^"(.*)"$', re.S)
_SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "pwsh", "powershell")
_COMMAND_KEYS = ("command", "cmd", "script")
_TARGET_KEYS = ("file_path", "path", "filePath", "filename", "target", "url")


def clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def command_of(args_canonical: str) -> str:
    """The command line of a call's arguments ('' when it runs none)."""
    try:
        args = orjson.loads(args_canonical)
    except orjson.JSONDecodeError:
        return ""
    if not isinstance(args, dict):
        return ""
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[0] in _SHELLS and value[1] in ("-c", "-lc", "-Command"):
                return value[2]
            return " ".join(value)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def step_of(rec: Any) -> str:
    """A call as a step: its command in backticks, else the tool and its target."""
    cmd = command_of(rec.args_canonical)
    if cmd:
        return f"`{clip(cmd, MAX_STEP - 2)}`"
    try:
        args = orjson.loads(rec.args_canonical)
    except orjson.JSONDecodeError:
        args = None
    target = next((args[k] for k in _TARGET_KEYS if isinstance(args, dict) and isinstance(args.get(k), str)), "")
    return clip(f"{rec.tool} {target}".strip(), MAX_STEP)


def _failed(rec: Any) -> bool:
    return rec.state == FAILED or (rec.state == RESOLVED and rec.resolution in ("failed", "not_executed"))


def _done(rec: Any) -> bool:
    return rec.state == COMPLETED or (rec.state == RESOLVED and rec.resolution == "completed")


def _entries(state: Any, name: str, width: int) -> list[list]:
    items = state.get(name) if isinstance(state, dict) else None
    return [e for e in items or () if isinstance(e, list) and len(e) == width and isinstance(e[-1], str)]


class SessionRecords:
    """What the proxy recorded of one session, read once."""

    def __init__(self, store: Any, sessions: Any, tenant: str, session: str):
        self.tenant, self.session = tenant, session
        info = sessions.session_info(tenant, session) if sessions is not None else None
        self.user, self.project = (info[0], info[1]) if info else ("", "")
        self.rows = sessions.session_turns(tenant, session) if sessions is not None else []
        part = store.sessions.get(tenant, session, part=TASK_STATE) or {}
        doc = part.get("doc")  # the checkpoint keeps its part as {"rev", "doc"} (filters' PartCache)
        self.task_state = doc if isinstance(doc, dict) else {}
        self.effects = sorted(store.effects.list(tenant, session=session), key=lambda r: (r.created_at, r.call_id))
        self.manifests = [d.data for d in store.manifests.list(tenant, session=session)]

    @property
    def through(self) -> float:
        times = [r[3] for r in self.rows] + [e.updated_at for e in self.effects]
        return max(times, default=0.0)

    def agent(self) -> str:
        agents = Counter(m.get("agent") for m in self.manifests if m.get("agent") not in (None, "", "unknown"))
        return agents.most_common(1)[0][0] if agents else ""

    def turn_saying(self, sentence: str) -> str:
        """The id of the first user turn holding ``sentence`` ('' when none does)."""
        probe = " ".join(sentence.rstrip("…").split())
        for turn_id, role, text, _ in self.rows:
            if role == "user" and probe and probe in " ".join(text.split()):
                return turn_id
        return ""

    def goal(self) -> str:
        """The goal as the checkpoint keeps it: one line, clipped (a summary's field, not a quote)."""
        g = self.task_state.get("goal")
        return g[1] if isinstance(g, list) and len(g) == 2 and isinstance(g[1], str) else ""

    def first_words(self) -> str:
        """The first user turn, whole and as said (its line breaks too): the session index's user text
        the checkpoint's goal came from (the goal is one line, clipped at 300 characters), else the goal."""
        goal = self.goal()
        clipped = goal.endswith("…")
        probe = goal[:-1] if clipped else goal
        for _, role, text, _ in self.rows:
            flat = " ".join(text.split()) if role == "user" else None
            if flat is not None and probe and (flat.startswith(probe) if clipped else flat == probe):
                return text
        return goal  # not in the index (the goal header's, or not indexed): a clipped sentence is left out


def extract(records: SessionRecords, *, now: float) -> Extraction:
    """The session's candidates (phase 1)."""
    scope = {"user": records.user, "project": records.project}
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(c: Candidate) -> None:
        if c.key() not in seen:
            seen.add(c.key())
            out.append(c)

    at = records.through or now
    first = records.first_words()  # the first turn: the checkpoint keeps it as the goal, not as instructions
    said = [s for s in instructions(first) if not s.endswith("…")]
    for sentence in [*said, *(e[1] for e in _entries(records.task_state, "instructions", 2))]:
        turn = records.turn_saying(sentence)
        add(Candidate(PREFERENCE, sentence, "user", user=records.user,
                      project="" if records.user else records.project, quote=sentence,
                      turns=(turn,) if turn else (), observed_at=at))
    for _, text in _entries(records.task_state, "decisions", 2):
        add(_decision(text, records, at))
    for c in procedures(records.effects, _entries(records.task_state, "evidence", 3), records.goal(), scope, at):
        add(c)
    for c in fixes(records.effects, records.goal(), scope, at):
        add(c)
    tools = Counter(e.tool for e in records.effects)
    stats = {"user_turns": sum(1 for r in records.rows if r[1] == "user"),
             "tool_calls": len(records.effects), "failed_calls": sum(1 for e in records.effects if _failed(e)),
             "tools": dict(tools.most_common(20)),
             "models": sorted({m.get("model") for m in records.manifests if m.get("model")})[:8],
             "turns": len(records.manifests)}
    return Extraction(session=records.session, user=records.user, project=records.project, agent=records.agent(),
                      through=records.through, rows=len(records.rows), extracted_at=now, candidates=out, stats=stats)


def _decision(text: str, records: SessionRecords, at: float) -> Candidate:
    scope = {"project": records.project} if records.project else {"user": records.user}
    line = _DECISION_LINE.match(text)
    if line:  # a "decision:" line: in a user's text, a rules file, or a tool's output — not known which
        return Candidate(DECISION, f"Decision: {line.group(1)}", "tool_output", quote=line.group(1),
                         observed_at=at, **scope)
    m = _ANSWERING.match(text)
    choice, question = (m.group(1), m.group(2)) if m else ((_QUOTED.match(text) or re.match("(.*)", text)).group(1), "")
    turn = records.turn_saying(choice)
    statement = f'Decided: "{choice}"' + (f' (answering "{question}")' if question else "")
    return Candidate(DECISION, statement, "user", quote=choice, turns=(turn,) if turn else (), observed_at=at,
                     **scope)


def _matches(rec: Any, kind: str, text: str) -> bool:
    """Whether a completed call is the one whose result showed this evidence."""
    blob = " ".join((rec.excerpt or "", " ".join(rec.refs)))
    if kind == "test":
        m = _BACKTICK.search(text)
        cmd = m.group(1).rstrip("…") if m else ""
        return bool(cmd) and " ".join(command_of(rec.args_canonical).split()).startswith(cmd)
    if kind == "url":
        return text in blob
    if kind == "commit":
        sha = text.split()[1] if len(text.split()) > 1 else ""
        return bool(sha) and sha in blob
    if kind == "ticket":
        key = text.split()[1].rstrip(":") if len(text.split()) > 1 else ""
        return bool(key) and key in blob
    if kind == "deploy":
        return text.rstrip("…")[:60] in " ".join((rec.excerpt or "").split())
    return False


def _outcome_phrase(kind: str) -> str:
    return {"test": "tests passed", "url": "opened", "commit": "committed", "ticket": "ticket filed",
            "deploy": "deployed"}.get(kind, kind)


def procedures(effects: Sequence[Any], evidence: Iterable[list], goal: str, scope: dict, at: float
               ) -> list[Candidate]:
    """The steps that led to each verified outcome: the calls that changed
    something since the previous outcome, then the call whose result verified it."""
    evidence = list(evidence)
    out = []
    steps: list[tuple[str, Any]] = []
    for rec in effects:
        if not _done(rec):
            continue
        verified = [(k, t) for _, k, t in evidence if _matches(rec, k, t)]
        step = step_of(rec)
        if verified:
            chain = [s for s, _ in steps if s != step][-(MAX_STEPS - 1):] + [step]
            if len(chain) >= 2:
                kinds = sorted({k for k, _ in verified})
                outcome = "; ".join(t for _, t in verified)
                statement = (f"Steps that worked ({', '.join(_outcome_phrase(k) for k in kinds)}): "
                             + " → ".join(chain))
                out.append(Candidate(PROCEDURE, statement, "verified_tool_result", quote=goal, steps=tuple(chain),
                                     outcome=outcome, verified=len(verified),
                                     effects=tuple(dict.fromkeys([r.key for _, r in steps] + [rec.key])),
                                     turns=tuple(dict.fromkeys(t for _, r in steps + [(step, rec)]
                                                               for t in (r.turn_id,) if t)),
                                     observed_at=at, **_scope_of(scope)))
            steps = []
        elif rec.side_effect:
            steps.append((step, rec))
    return out


def fixes(effects: Sequence[Any], goal: str, scope: dict, at: float) -> list[Candidate]:
    """A command that failed, and the changes after which the same command completed."""
    out = []
    for i, bad in enumerate(effects):
        if not _failed(bad):
            continue
        cmd = step_of(bad)
        for j in range(i + 1, len(effects)):
            later = effects[j]
            if step_of(later) != cmd:
                continue
            if not _done(later):
                break  # failed again: the fix is what came before the run that passed
            between = [e for e in effects[i + 1:j] if e.side_effect and _done(e) and step_of(e) != cmd]
            if between:
                changes = list(dict.fromkeys(step_of(e) for e in between))[-MAX_STEPS:]
                statement = f"{cmd} failed; it passed after: " + " → ".join(changes)
                outcome = f"failed: {clip(bad.excerpt or '', 200)}" if bad.excerpt else "failed"
                outcome += f" | then completed: {clip(later.excerpt or '', 200)}" if later.excerpt else ""
                out.append(Candidate(FAILURE, statement, "verified_tool_result", quote=goal, steps=tuple(changes),
                                     outcome=outcome, verified=1,
                                     effects=tuple(dict.fromkeys([bad.key, *(e.key for e in between), later.key])),
                                     turns=tuple(dict.fromkeys(t for e in (bad, *between, later)
                                                               for t in (e.turn_id,) if t)),
                                     observed_at=at, **_scope_of(scope)))
            break
    return out


def _scope_of(scope: dict) -> dict:
    """Procedures and fixes belong to the project when there is one, else to the user."""
    return {"project": scope["project"]} if scope.get("project") else {"user": scope.get("user", "")}


def read_session(store: Any, sessions: Any, tenant: str, session: str, *, now: float) -> Extraction:
    return extract(SessionRecords(store, sessions, tenant, session), now=now)


def stored(store: Any, tenant: str, session: str) -> Extraction | None:
    """The session's last extraction (None: never read, or erased with the session)."""
    return Extraction.from_dict(store.sessions.get(tenant, session, part=PART))


def keep(store: Any, tenant: str, found: Extraction) -> int:
    """Store a session's extraction and append it to the tenant's feed (its number);
    ``store`` may be a batch."""
    store.sessions.put(tenant, found.session, found.to_dict(), part=PART,
                       subject=found.user or None)
    return store.learning.note_extracted(tenant, found.session, found.user)
