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
3. a Responses request that continues ``previous_response_id`` (and names
   no session) joins the session of that response (source
   ``chain:previous_response_id``): remembered in-process for the last
   ``chain_memory`` responses and, for the sessions of step 4, in the store,
   so another worker or a restarted proxy follows the chain too;
4. continuity (``continuity``): a conversation is known by what it continues,
   not by how it opens (two runs of one scheduled job open alike and must not
   share a ledger). A request whose history has no answer of the model is a
   conversation's first: a new session, ``cv-<random>`` (source ``new``),
   heir to nothing. A history that continues an answer this proxy relayed
   (its newest model turn, and the item before it, as the link filed when
   the answer went out) is that answer's session (source ``continuity``):
   across turns, workers and restarts, and after a compaction that keeps the
   newest answer. A history that continues none (the proxy came in
   mid-conversation, a link was erased) gets a session derived from its
   opening and first answer, ``fp-<digest>`` (source ``fingerprint``), the
   same for each of its turns, and its answers are filed under it from then
   on. The OpenClaw runtime line goes first.

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

import logging
import re
import secrets
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from ctxproxy.config import ConfigError

from ctxproxy.store.bounded import SLOT_BYTES, ByteLRU
from ctxproxy.store.services.digest import memo_key, text_sha256

from . import continuity as cont
from .base import Filter, Identity, Turn
from .services import Services
from .compaction import codex_metadata
from .relayed import relayed
from .repeats import RequestFacts, request_digest
from .view import NO_HINTS, BodyHints

log = logging.getLogger("ctxproxy.filters.identify")

FINGERPRINT_BYTES = 1 << 20  # fingerprints remembered (~4K: the keys hold no text)
CONTINUED_BYTES = 256 << 10  # requests followed, by digest (``_continued``; ~1K: digests and ids only)
# A request sent again that continued no answer is decided again from the store after this
# long (an answer filed since in this process is seen at once; one another worker filed, then).
MISS_SECONDS = 2.0
_ID_OK = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,200}$")
TENANT_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # it prefixes store keys: keep it plain
_OPENCLAW_ID = re.compile(r"[A-Za-z0-9._:-]{4,128}")


@dataclass(frozen=True)
class IdentifyConfig:
    trust_headers: bool = True  # honour X-Ctx-* headers (tenant only on routes without a fixed tenant)
    default_tenant: str = "default"  # tenant when nothing names one
    fingerprint_chars: int = 4000  # how much of the conversation start derives a session no answer links
    chain_memory: int = 65536  # response ids and answers remembered in-process (the store keeps all); 0: chains off

    def validate(self, path: str) -> None:
        if self.fingerprint_chars < 1:
            raise ConfigError(f"{path}.fingerprint_chars: must be at least 1, got {self.fingerprint_chars}")
        if self.chain_memory < 0:
            raise ConfigError(f"{path}.chain_memory: must be 0 (off) or more, got {self.chain_memory}")


_ANCHOR_BYTES = sys.getsizeof("")  # an anchor fact, but its characters
_ANCHOR = "anchor"  # the key of the answer anchor among identify's facts


class IdentifyFilter(Filter):
    name = "identify"
    required = True  # an unidentified turn could mix tenants
    guards_auxiliary = True
    Config = IdentifyConfig

    def __init__(self, config: IdentifyConfig, store: Any = None):
        self.config = config
        self.store = store
        self.links = cont.Links(store, config.chain_memory or cont.MEMO)  # answers, response ids -> sessions
        # every turn of a session fingerprints the same opening
        self._fingerprints = ByteLRU(FINGERPRINT_BYTES, "session fingerprints")
        # requests followed before (by their digest): the same request again is not read again
        self._continued = ByteLRU(CONTINUED_BYTES, "conversations followed")
        # by the request's digest (the turn's facts): the identity it was given and the anchor its
        # answer is filed under; the same bytes again are not read again
        self._facts = RequestFacts(self.name)

    @classmethod
    def create(cls, config: IdentifyConfig | None, services: Services) -> "IdentifyFilter":
        return cls(config or IdentifyConfig(), services.store)

    def _store(self, turn: Turn) -> Any:
        return self.store if self.store is not None else turn.services.store

    def on_request(self, turn: Turn) -> None:
        store = self._store(turn)
        ident = self._decided(turn, store)
        if ident is None:
            ident = identify(turn.headers, turn.request, self.config, turn.tenant_fixed, self.links,
                             self._fingerprints, turn.principal, store, (self._continued, lambda: request_digest(turn)))
            self._keep(turn, ident)
        turn.identity = ident
        view = turn.request
        if ident.supplied or view is None or store is None:
            return  # the agent names its session on every request: nothing to follow
        anchor = self._facts.get(turn, _ANCHOR)
        if anchor is None:
            try:
                anchor = cont.request_anchor(view)
            except Exception as exc:  # the turn goes on; its answer is just not filed
                log.warning("turn %s: continuity anchor failed: %s", turn.turn_id, type(exc).__name__)
                return
            self._facts.put(turn, anchor, _ANCHOR_BYTES + len(anchor), _ANCHOR)
        # Filed when the answer completes, as the client received it, before its last bytes go out.
        relayed(turn).when_complete(lambda answer: self._file(turn, anchor, answer))

    def _decided(self, turn: Turn, store: Any) -> Identity | None:
        """The identity this very request (its digest: bytes, headers, route) was
        given before, when it still holds: one named by the request itself
        (headers, client hints) always does; one followed by what the history
        continues, or derived from its opening, as long as ``_continued`` would
        decide the same (``_still_follows``). Everything else identify reads
        (the agent, the user, project, purpose) comes from the same bytes."""
        if turn.request is None:
            return None
        hit = self._facts.get(turn, (turn.tenant_fixed, turn.principal))
        if hit is None:
            return None
        ident, followed = hit
        if followed is None:
            return ident
        known = self._continued.get(followed)
        own = followed[1]
        if known is not None and known[0] == ident.session[len(own):] and \
                _still_follows(known, self.links, ident.tenant, own, store):
            return ident
        return None

    def _keep(self, turn: Turn, ident: Identity) -> None:
        """Remember ``ident`` for this request's digest (``_decided``): an identity
        the request names, or one ``_continued`` decided and remembered (under
        the key kept with it). A chained or new session is decided every time."""
        digest = turn.request_digest
        if digest is None or turn.request is None:
            return
        source = ident.source
        if source == "header" or source.startswith("hint:"):
            followed = None
        elif source in ("continuity", "fingerprint"):
            previous = turn.request.body_hints().previous_response_id
            if previous:  # the chain is looked up first, every time: a link to it may be filed since
                return
            followed = (ident.tenant, _own(turn.principal), previous if isinstance(previous, str) else None, digest)
            if followed not in self._continued:
                return
        else:
            return
        self._facts.put(turn, (ident, followed), None, (turn.tenant_fixed, turn.principal))

    def _file(self, turn: Turn, anchor: str, answer: Any) -> None:
        if turn.status is not None and turn.status >= 300:
            return
        for link in cont.answer_links(anchor, answer):
            self.links.add(turn, link, turn.identity.session, self._store(turn))

    def on_response_id(self, turn: Turn, rid: str) -> None:
        """Remember which session the answer belongs to as soon as its id is known
        (before the client has it): the next turn names it in previous_response_id
        and may send nothing else to go by. (A successor turn shares the identity.)
        A session the agent named is remembered in this process only: its next
        request names it again."""
        if turn.api == "responses" and self.config.chain_memory:
            ident = turn.identity
            self.links.add(turn, cont.response_link(rid), ident.session, self._store(turn),
                           persist=not ident.supplied)


def default_tenant(cfg: Any) -> str:
    """The tenant identify gives unlabelled traffic (``[filters.identify]``), read from a whole config: the admin API and the CLI ask it."""
    ident = cfg.filters.get("identify") or {}
    return ident.get("default_tenant", "default") if hasattr(ident, "get") else "default"


def identify(headers: Any, view: Any, cfg: IdentifyConfig, fixed_tenant: str = "",
             links: "cont.Links | None" = None, fingerprints: ByteLRU | None = None,
             principal: Any = None, store: Any = None,
             repeats: tuple[ByteLRU, Callable[[], bytes | None]] | None = None) -> Identity:
    """The turn's identity (see the module docstring). ``links``: the answers
    and response ids filed so far (``continuity.Links``; None: follow none),
    read from ``store`` when not in this process; ``fingerprints``: a memo of
    derived session ids; ``repeats``: a memo of requests followed before and
    a function giving this one's digest (``_continued``)."""
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
    own = _own(principal)
    previous = hints.previous_response_id if isinstance(hints.previous_response_id, str) else None
    if not session and links is not None and cfg.chain_memory and previous:
        chained = links.find(tenant, cont.response_link(previous), store)
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
            session, source = _continued(view, tenant, own, links, store, system, first, previous, cfg,
                                         fingerprints, repeats)
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


def _continued(view: Any, tenant: str, own: str, links: "cont.Links | None", store: Any, system: str,
               first: str, previous: str | None, cfg: IdentifyConfig, memo: ByteLRU | None,
               repeats: tuple[ByteLRU, Callable[[], bytes | None]] | None = None) -> tuple[str, str]:
    """(session, source) of a request that names no session: by what its
    history continues (``continuity``), else new or derived. ``repeats``: the
    filter's memo of requests decided before and what gives this request's
    digest (``repeats.request_digest``): the same request sent again is decided
    from it (a link it followed is looked up again, in memory first; one it
    missed is looked for again in memory, and in the store after
    ``MISS_SECONDS``)."""
    digest = repeats[1]() if repeats is not None and links is not None else None
    key = (tenant, own, previous, digest) if digest is not None else None
    if key is not None:
        hit = repeats[0].get(key)  # type: ignore[index]
        if hit is not None and _still_follows(hit, links, tenant, own, store):  # type: ignore[arg-type]
            return hit[0], hit[1]
    runs = cont.model_runs(view)
    newest = next(runs, None)
    if newest is None:
        if previous:  # continues an answer the provider keeps, which no link names
            return _digest(f"response\x00{previous}"), "fingerprint"
        return "cv-" + secrets.token_hex(12), "new"  # no answer yet: a conversation's first request
    missed: list[str] = []
    if links is not None:
        run: tuple[int, int] | None = newest
        while run is not None:
            for link in cont.run_links(view, *run):
                found = links.find(tenant, link, store)
                # another user's answer continues nothing (a session of ours is cv-/fp-, without a "/")
                if found is not None and found.startswith(own) and "/" not in found[len(own):]:
                    if key is not None:
                        decided = (found[len(own):], "continuity", link, tuple(missed), time.monotonic())
                        repeats[0].put(key, decided, _decided_bytes(key, decided))  # type: ignore[index]
                    return found[len(own):], "continuity"
                missed.append(link)
            run = next(runs, None)
    session = _fingerprint(system, first, cfg.fingerprint_chars, memo, cont.first_answer(view))
    if key is not None:
        decided = (session, "fingerprint", None, tuple(missed), time.monotonic())
        repeats[0].put(key, decided, _decided_bytes(key, decided))  # type: ignore[index]
    return session, "fingerprint"


def _own(principal: Any) -> str:
    """A user's namespace for its sessions (keys mode), else ""."""
    return f"{principal.user}/" if principal is not None and principal.user else ""


def _still_follows(decided: tuple, links: "cont.Links", tenant: str, own: str, store: Any) -> bool:
    """Whether ``_continued`` decides a request it decided before (``decided``:
    session, source, the link it followed, the links it missed, when) the same
    way now: the link it followed still leads to that session (read from
    memory first), and no link it missed has been filed since (in memory; in
    the store after ``MISS_SECONDS``)."""
    session, _, followed, missed, at = decided
    return (not missed or 0 <= time.monotonic() - at < MISS_SECONDS
            and not any(links.known(tenant, link) for link in missed)) and \
        (followed is None or links.find(tenant, followed, store) == own + session)


def _decided_bytes(key: tuple, decided: tuple) -> int:
    """What ``ByteLRU`` would estimate for a followed request's entry (its key's and
    its value's scalars, the missed links' tuple), summed flat instead of walked."""
    size = sys.getsizeof
    return (SLOT_BYTES + size(key) + sum(map(size, key)) + size(decided) + sum(map(size, decided))
            + sum(map(size, decided[3])))


def _fingerprint(system: str, first_user: str, limit: int, memo: ByteLRU | None = None,
                 answer: str = "") -> str:
    """sha256 of the system text's head, the first user turn and the first
    answer's signature (``answer``). A first user turn longer than ``limit``
    adds its length and its tail: two sessions opened with the same long
    paste and different questions after it are two sessions (the turn is
    history, so this stays stable across turns). The system text is only
    taken by its head: agents append to it as they go. ``memo`` (the
    filter's) remembers it by the seed's memo key: every turn of a session
    has the same opening, so only its first pays for the digest."""
    seed = f"{system[:limit]}\x00{first_user[:limit]}"
    if len(first_user) > limit:
        seed += f"\x00{len(first_user)}\x00{first_user[-limit:]}"
    if answer:
        seed += f"\x01{answer}"
    if memo is None:
        return _digest(seed)
    key = memo_key(seed)
    fp = memo.get(key)
    if fp is None:
        fp = _digest(seed)
        memo.put(key, fp)
    return fp


def _digest(seed: str) -> str:
    return "fp-" + text_sha256(seed)[:24]
