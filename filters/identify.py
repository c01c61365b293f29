"""identify — who is talking: tenant, user, session, task.

The fallback chain, first hit wins for each field:

1. ``X-Ctx-Tenant`` / ``X-Ctx-User`` / ``X-Ctx-Session`` / ``X-Ctx-Task``
   headers, with ``trust_headers = true`` (the default). The tenant header
   is ignored on a route with a fixed ``tenant`` (``[routes.<name>]``), the
   only thing that fixes it; on any other route a caller picks its tenant
   with it. A proxy shared by callers who must not reach each other's
   tenant fixes the tenant per route, or sets ``trust_headers = false``;
2. client hints: Claude Code's ``x-claude-code-session-id`` header and
   ``metadata.user_id`` (JSON, or the ``user_…_account_…_session_<id>`` string
   of earlier versions); Codex's ``session-id`` / ``thread-id``
   headers, ``x-codex-turn-metadata`` and ``prompt_cache_key``; the Responses
   ``conversation`` (id or ``{"id": …}``); OpenClaw's ``sessionId=<id>``
   field of its ``Runtime: …`` line (the last line starting ``Runtime:``) in
   the system prompt or first user turn;
   the OpenAI ``user`` / ``safety_identifier`` body fields for the user;
3. a fingerprint of the conversation's start (the system text before the
   first user turn, and that turn): stable across the turns of one session
   (a system message added later does not move it), different for two
   concurrent sessions of the same agent (Hermes sends no id at all, and
   its ``prompt_cache_key`` is shared by every session, so it is not used).
   A Responses request that continues ``previous_response_id`` carries only
   its new input, so before the fingerprint it takes the session of that
   response (source ``chain:previous_response_id``), remembered in-process
   for the last ``chain_memory`` responses: a chain continued on another
   worker or after a restart starts a fingerprint session.

``X-Ctx-Project``, ``X-Ctx-Purpose`` and ``X-Ctx-Parent-Session`` (same
trust rule) name the project, the purpose and the parent of a sub-agent's
session: what recall's visibility checks and session trees go by.

In ``[auth] mode = "keys"`` the turn's principal (its proxy key) names the
tenant and the user: ``X-Ctx-Tenant``, ``X-Ctx-User`` and the user hints of
step 2 are ignored (a key without a user gives turns no user). The edge has
already refused a project or purpose outside the key's sets; with none named,
a key allowed exactly one gets that one. A user's key puts its sessions,
tasks and parent sessions in that user's namespace, ``<user>/<id>``: two
users of a tenant naming the same session id (or opening with the same
conversation) get two sessions, and no user can continue another's.

The task defaults to the session. ``identity.supplied`` says whether the
agent supplied its session id (only then is it exported as
``gen_ai.conversation.id``).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ctxproxy.config import ConfigError

from .base import Filter, Identity, Turn
from .compaction import codex_metadata
from .view import NO_HINTS, BodyHints
from ctxproxy.store.services.digest import memo_key, text_sha256

FINGERPRINT_MEMO = 4096  # fingerprints remembered (well under a MB: the keys hold no text)
_ID_OK = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,200}$")
TENANT_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # it prefixes store keys: keep it plain
_OPENCLAW_ID = re.compile(r"[A-Za-z0-9._:-]{4,128}")


@dataclass(frozen=True)
class IdentifyConfig:
    trust_headers: bool = True  # honour X-Ctx-* headers (tenant only on routes without a fixed tenant)
    default_tenant: str = "default"  # tenant when nothing names one
    fingerprint_chars: int = 4000  # how much of the conversation start is fingerprinted
    chain_memory: int = 65536  # Responses ids remembered for previous_response_id chains (0: off)

    def validate(self, path: str) -> None:
        if self.fingerprint_chars < 1:
            raise ConfigError(f"{path}.fingerprint_chars: must be at least 1, got {self.fingerprint_chars}")
        if self.chain_memory < 0:
            raise ConfigError(f"{path}.chain_memory: must be 0 (off) or more, got {self.chain_memory}")


class IdentifyFilter(Filter):
    name = "identify"
    required = True  # an unidentified turn could mix tenants
    guards_auxiliary = True
    Config = IdentifyConfig

    def __init__(self, config: IdentifyConfig):
        self.config = config
        self._chains: OrderedDict[tuple[str, str], str] = OrderedDict()  # (tenant, response id) -> session
        self._fingerprints: dict[Any, str] = {}  # every turn of a session fingerprints the same opening

    def on_request(self, turn: Turn) -> None:
        turn.identity = identify(turn.headers, turn.request, self.config, turn.tenant_fixed, self._chains,
                                 self._fingerprints, turn.principal)

    def on_response_id(self, turn: Turn, rid: str) -> None:
        """Remember which session the answer belongs to as soon as its id is known
        (before the client has it): the next turn names it in previous_response_id
        and may send nothing else to go by. (A successor turn shares the identity.)"""
        if turn.api == "responses" and self.config.chain_memory:
            ident = turn.identity
            self._remember(ident.tenant, rid, ident.session)

    def _remember(self, tenant: str, rid: str, session: str) -> None:
        chains = self._chains
        chains[(tenant, rid)] = session
        if len(chains) > self.config.chain_memory:
            chains.popitem(last=False)


def default_tenant(cfg: Any) -> str:
    """The tenant identify gives unlabelled traffic (``[filters.identify]``), read from a whole config: the admin API and the CLI ask it."""
    ident = cfg.filters.get("identify") or {}
    return ident.get("default_tenant", "default") if hasattr(ident, "get") else "default"


def identify(headers: Any, view: Any, cfg: IdentifyConfig, fixed_tenant: str = "",
             chains: dict[tuple[str, str], str] | None = None, fingerprints: dict[Any, str] | None = None,
             principal: Any = None) -> Identity:
    h = headers
    agent = _agent(h)
    tenant = principal.tenant if principal is not None else fixed_tenant or cfg.default_tenant
    user = task = session = source = project = purpose = parent = ""
    supplied = False
    hints = view.body_hints() if view is not None else NO_HINTS

    if cfg.trust_headers:
        named = h.get("x-ctx-tenant")
        if not fixed_tenant and principal is None and isinstance(named, str) and TENANT_OK.match(named):
            tenant = named
        user = _ok(h.get("x-ctx-user")) or ""
        task = _ok(h.get("x-ctx-task")) or ""
        session = _ok(h.get("x-ctx-session")) or ""
        project = _ok(h.get("x-ctx-project")) or ""
        purpose = _ok(h.get("x-ctx-purpose")) or ""
        parent = _ok(h.get("x-ctx-parent-session")) or ""
        if session:
            source, supplied = "header", True

    if not session:
        hint = _session_hint(h, hints, agent)
        if hint is not None:
            (source, session), supplied = hint, True
    own = f"{principal.user}/" if principal is not None and principal.user else ""  # a user's namespace
    if not session and chains:
        previous = hints.previous_response_id
        chained = chains.get((tenant, previous)) if isinstance(previous, str) else None
        if chained is not None and chained.startswith(own):  # another user's response continues nothing
            session, source = chained[len(own):], "chain:previous_response_id"
    if not session and view is not None:
        # The conversation's opening: a system message added mid-session must not move the session.
        system, first = view.system_text(opening=True), view.first_user_text()
        found = None
        if "Runtime:" in system or "Runtime:" in first:
            found = _openclaw_session(system) or _openclaw_session(first)
        if found:
            session, source, supplied = found, "hint:openclaw-runtime", True
        else:
            session, source = _fingerprint(system, first, cfg.fingerprint_chars, fingerprints), "fingerprint"
    if not session:
        session, source = "fp-none", "fingerprint"

    if principal is not None:
        user = principal.user
        if own:
            session, task, parent = own + session, own + task if task else "", own + parent if parent else ""
        if not project and len(principal.projects) == 1:
            project = principal.projects[0]
        if not purpose and len(principal.purposes) == 1:
            purpose = principal.purposes[0]
    elif not user:
        for value in hints.users:
            if value is not None and _ok(value):
                user = value
                break
    return Identity(tenant=tenant, user=user, session=session, task=task or session, source=source, agent=agent,
                    supplied=supplied, project=project, purpose=purpose, parent_session=parent,
                    key_id=principal.key_id if principal is not None else "")


def _session_hint(h: Any, hints: BodyHints, agent: str) -> tuple[str, str] | None:
    """(source, session id) from the first client hint that has one, in order."""
    for source, value in (
        ("hint:x-claude-code-session-id", h.get("x-claude-code-session-id")),
        ("hint:metadata.user_id", hints.session),
        ("hint:session-id", h.get("session-id")),
        ("hint:thread-id", h.get("thread-id")),
    ):
        if value is not None and _ok(value):
            return source, value
    if "x-codex-turn-metadata" in h:
        value = codex_metadata(h).get("session_id")  # the header only: a body hint is the view's
        if _ok(value):
            return "hint:x-codex-turn-metadata", value
    conversation = hints.conversation
    if _ok(conversation):
        return "hint:conversation", conversation
    value = hints.prompt_cache_key if agent == "codex" else None
    if _ok(value):
        return "hint:prompt_cache_key", value
    return None


def _ok(value: Any) -> str | None:
    return value if isinstance(value, str) and _ID_OK.match(value) else None


def _openclaw_session(text: str) -> str | None:
    """The id in OpenClaw's runtime line, ``Runtime: agent=main | … |
    sessionId=<id> | …``: only a ``sessionId=`` field of the last line that
    starts with ``Runtime:`` (OpenClaw writes it last). A ``sessionId=`` elsewhere
    (a cookie in pasted code, a log line, a doc quoting the format) is no
    session id: taken for one, it would join every session that quotes it.
    ``str.rfind`` first: a regex would test every position of a long prompt."""
    end = len(text)
    while (i := text.rfind("Runtime:", 0, end)) >= 0:
        end = i
        j = i
        while j and text[j - 1] in " \t":
            j -= 1
        if j and text[j - 1] not in "\r\n":
            continue  # not at the start of a line
        line_end = len(text)
        for stop in ("\n", "\r"):
            k = text.find(stop, i)
            if 0 <= k < line_end:
                line_end = k
        line = text[i + 8:line_end]
        start = 0
        while (k := line.find("sessionId=", start)) >= 0:
            start = k + 10
            if k and line[k - 1] not in " \t|":
                continue  # part of a longer field name, e.g. "mysessionId="
            m = _OPENCLAW_ID.match(line, start)
            if m:
                return m.group(0)
        return None  # the last runtime line decides
    return None


def _agent(h: Any) -> str:
    ua = (h.get("user-agent") or "").lower()
    if ua.startswith("claude-cli") or "x-claude-code-session-id" in h:
        return "claude-code"
    if "codex" in ua or "codex" in (h.get("originator") or "") or "x-codex-turn-metadata" in h:
        return "codex"
    if "openclaw" in ua:
        return "openclaw"
    if "hermes" in ua:
        return "hermes"
    if "x-stainless-lang" in h:
        return "sdk"
    return "unknown"


def _fingerprint(system: str, first_user: str, limit: int, memo: dict[Any, str] | None = None) -> str:
    """sha256 of the system text's head and the first user turn. A first user
    turn longer than ``limit`` adds its length and its tail: two sessions
    opened with the same long paste and different questions after it are two
    sessions (the turn is history, so this stays stable across turns). The
    system text is only taken by its head: agents append to it as they go.
    ``memo`` (the filter's) remembers it by the seed's memo key: every turn of
    a session has the same opening, so only its first pays for the digest."""
    seed = f"{system[:limit]}\x00{first_user[:limit]}"
    if len(first_user) > limit:
        seed += f"\x00{len(first_user)}\x00{first_user[-limit:]}"
    if memo is None:
        return _digest(seed)
    key = memo_key(seed)
    fp = memo.get(key)
    if fp is None:
        if len(memo) >= FINGERPRINT_MEMO:
            memo.clear()
        fp = memo[key] = _digest(seed)
    return fp


def _digest(seed: str) -> str:
    return "fp-" + text_sha256(seed)[:24]
