"""redact — no secret reaches the provider, and none comes back unmasked.

Requests: every model-visible string the adapter exposes (``text_slots``:
system, messages of all roles, tool inputs and results, Responses
``instructions`` and input items, thinking sent back) is scanned after JSON
decoding; ``args`` slots (tool-call arguments: a JSON document inside a
string) are decoded, every string in them redacted, and re-encoded only if
something changed. Placeholders are ``[REDACTED:<rule>:<8 hex>]`` with an
HMAC under a per-session key (derived from the server secret, the tenant and
the session), so a secret keeps its placeholder across the turns of a session
and is unlinkable across sessions.

Thinking the provider signed (Anthropic ``thinking`` blocks with their
``signature``, and their deltas) is left as it is, both ways: it is the
provider's own text, written from a context this filter already redacted, and
one changed byte voids the signature, after which the provider refuses the
turn. Unsigned reasoning text (OpenAI summaries, thinking sent back without a
signature) is redacted like any text.

Responses: non-streamed bodies through their ``text_slots``; streamed ones
with one ``StreamRedactor`` per channel (text and thinking redacted as they
arrive, holding back only what could still become a match), and tool-call
arguments assembled until their channel closes, then redacted and sent as one
delta. Held-back text is flushed as a delta just before the event that closes
its channel.

Reversible mode (a profile with ``reversible = true``): the session's
placeholder -> value map is kept in memory (``Vault``, with a TTL), filled by
request redaction only, and placeholders inside tool-call arguments of the
response are put back, so the agent's tools run with the real values. Secrets
the model itself writes stay redacted. The putting back is the answer's last
edit (an egress, see ``filters.base``): the effect ledger, the manifest and
telemetry, which run after redact, see the placeholders, never the values.

Profiles: ``profile`` by default, ``route_profiles`` per route,
``tenant_profiles`` per tenant (wins). The profile name and the counts per
rule go to the manifest (``report``) — never a value; the per-turn state is ``RedactState``.

Fails closed (``required``): any error blocks the request, and a failure on
the response ends the stream rather than letting unredacted text through.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ctxproxy.config import ConfigError

from .base import Filter, FilterError, Turn
from .repeats import RequestFacts
from .report import COUNTS, TEXT
from .services import Services
from ctxproxy.store.bounded import ByteLRU
from ctxproxy.store.services.redaction import (
    Profile,
    ProfileRegistry,
    RedactionError,
    StreamRedactor,
    Vault,
    redact_json_text,
)
from .view import ARGS, SIGNED, Slot

log = logging.getLogger("ctxproxy.filters.redact")

_KEY_LABEL = b"ctxproxy/redact/session-key/v1"
_TOOL_INPUT = re.compile(r"\.input(?:[.\[]|$)")  # Anthropic tool_use input, Responses custom tool input
_MAX_VAULTS = 10_000

# Registries by (config, base dir, cache dir): the app builds one pipeline per route,
# and they all share the compiled profiles.
_REGISTRIES: OrderedDict[str, ProfileRegistry] = OrderedDict()
_REGISTRIES_LOCK = threading.Lock()


@dataclass(frozen=True)
class RedactConfig:
    profile: str = "default"  # profile used when neither the tenant nor the route names one
    route_profiles: Mapping[str, str] = field(default_factory=dict)  # route name -> profile
    tenant_profiles: Mapping[str, str] = field(default_factory=dict)  # tenant -> profile (wins over route)
    profiles: Mapping[str, Any] = field(default_factory=dict)  # name -> {groups, rule_files, reversible, ...}
    responses: bool = True  # redact model output (streamed and not) as well
    hyperscan: bool | None = None  # None: use Hyperscan when installed; false: pure-Python engine
    cache_dir: str = ""  # compiled Hyperscan databases; default <data_dir>/cache/redaction

    def validate(self, path: str) -> None:
        known = set(self.profiles) | {"default"}
        for where, name in [("profile", self.profile),
                            *((f"route_profiles.{k}", v) for k, v in self.route_profiles.items()),
                            *((f"tenant_profiles.{k}", v) for k, v in self.tenant_profiles.items())]:
            if name not in known:
                raise ConfigError(f"{path}.{where}: unknown redaction profile {name!r} "
                                  f"(defined: {', '.join(sorted(known))})")


def _registry(config: RedactConfig, base_dir: str | None, cache_dir: str | None) -> ProfileRegistry:
    stamps = []  # an edited rule file (config reload) must not reuse the old rules
    for body in config.profiles.values():
        for f in (body.get("rule_files") or ()) if isinstance(body, Mapping) else ():
            path = Path(str(f)) if Path(str(f)).is_absolute() or base_dir is None else Path(base_dir) / str(f)
            try:
                stamps.append((str(path), path.stat().st_mtime_ns))
            except OSError:
                stamps.append((str(path), None))
    ident = repr((config, cache_dir, stamps))  # base_dir only resolves rule files: their paths are in stamps
    with _REGISTRIES_LOCK:
        reg = _REGISTRIES.get(ident)
        if reg is not None:
            _REGISTRIES.move_to_end(ident)
            return reg
        try:
            reg = ProfileRegistry.build(dict(config.profiles), cache_dir=cache_dir, use_hyperscan=config.hyperscan,
                                        base_dir=base_dir, path="filters.redact.profiles")
        except ValueError as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"filters.redact: {exc}") from None
        _REGISTRIES[ident] = reg
        while len(_REGISTRIES) > 8:
            _REGISTRIES.popitem(last=False)
        return reg


class _Stream:
    """Per-turn state of a streamed response."""

    __slots__ = ("text", "kinds", "args", "tool_channels")

    def __init__(self) -> None:
        self.text: dict[str, StreamRedactor] = {}
        self.kinds: dict[str, str] = {}
        self.args: dict[str, list[str]] = {}
        self.tool_channels: set[str] = set()


@dataclass(eq=False, slots=True)
class RedactState:
    """The filter's per-turn state, ``turn.state["redact"]``: the turn's profile,
    session key and vault (worked out once, then reused by the response and
    every streamed event), counts per rule (never a value), and the state of a
    streamed answer."""

    profile: Profile
    key: bytes
    vault: Vault | None
    counts: dict[str, int] = field(default_factory=dict)  # the request's: rule -> count
    response_counts: dict[str, int] = field(default_factory=dict)  # the answer's
    stream: _Stream | None = None
    clean: bool = False  # the request was found to hold no secret with these rules (``replay``)

    @property
    def engine(self) -> str:
        return self.profile.redactor.engine


KEYS_BYTES = 256 << 10  # session keys remembered
_KEYS = ByteLRU(KEYS_BYTES, "session keys")  # ~700 sessions: a session sends many turns; a miss is one HMAC


def _session_key(secret: bytes, scope: str) -> bytes:
    """Per-session key: HMAC(server secret, label, tenant, session); cached, as a
    session sends many turns."""
    key = _KEYS.get((secret, scope))
    if key is None:
        key = hmac.new(secret, _KEY_LABEL + b"\x00" + scope.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
        _KEYS.put((secret, scope), key)
    return key


class RedactFilter(Filter):
    name = "redact"
    required = True
    guards_auxiliary = True
    Config = RedactConfig
    manifest_fields = {"redaction_profile": TEXT, "redactions": COUNTS, "response_redactions": COUNTS}

    def __init__(self, config: RedactConfig | None = None, secret: bytes | None = None,
                 registry: ProfileRegistry | None = None, base_dir: str | None = None,
                 cache_dir: str | None = None):
        self.config = config or RedactConfig()
        if secret is not None and not secret:
            raise ConfigError("redact: the server secret is empty")
        self._secret = secret
        if registry is None:
            registry = _registry(self.config, base_dir, self.config.cache_dir or cache_dir)
        self.registry = registry
        self._vaults: OrderedDict[tuple[str, str, str], Vault] = OrderedDict()
        self._lock = threading.Lock()
        # the redactor that found a request wholly clean, by its digest (the turn's facts)
        self._clean_requests = RequestFacts(self.name)

    @classmethod
    def create(cls, config: RedactConfig | None, services: Services) -> "RedactFilter":
        source = getattr(services.config, "source", "")
        base_dir = str(Path(source).parent) if source and not source.startswith("<") else None
        data_dir = services.data_dir
        cache_dir = str(Path(data_dir) / "cache" / "redaction") if data_dir else None
        return cls(config, services.secret, base_dir=base_dir, cache_dir=cache_dir)

    def warm(self) -> None:
        self.registry.warm()

    # -- per turn ----------------------------------------------------------------------

    def _profile(self, turn: Turn) -> Profile:
        cfg = self.config
        name = (cfg.tenant_profiles.get(turn.identity.tenant) or cfg.route_profiles.get(turn.route)
                or cfg.profile)
        return self.registry.get(name)

    def _key(self, turn: Turn) -> bytes:
        secret = self._secret if self._secret is not None else turn.services.secret
        if not isinstance(secret, (bytes, bytearray)) or not secret:
            raise RedactionError("no server secret to derive the session key from")
        ident = turn.identity
        # Without a session the turn is its own session: placeholders are not linkable to others.
        scope = f"{ident.tenant}\x00{ident.session or 'turn:' + turn.turn_id}"
        return _session_key(bytes(secret), scope)

    def _vault(self, turn: Turn, profile: Profile) -> Vault | None:
        if not profile.reversible:
            return None
        ident = turn.identity
        vkey = (profile.name, ident.tenant, ident.session or "turn:" + turn.turn_id)
        with self._lock:
            vault = self._vaults.get(vkey)
            if vault is None:
                vault = self._vaults[vkey] = Vault(profile.vault_ttl_seconds)
                while len(self._vaults) > _MAX_VAULTS:
                    self._vaults.popitem(last=False)
            else:
                self._vaults.move_to_end(vkey)
        return vault

    def _state(self, turn: Turn) -> RedactState:
        st = turn.state.get(self.name)
        if st is None:
            profile = self._profile(turn)
            st = turn.state[self.name] = RedactState(profile, self._key(turn), self._vault(turn, profile))
        return st

    def report(self, turn: Turn) -> dict | None:
        st: RedactState | None = turn.state.get(self.name)
        if st is None:
            return None
        return {"redaction_profile": st.profile.name, "redactions": dict(st.counts),
                "response_redactions": dict(st.response_counts)}

    @staticmethod
    def successor_state(st: RedactState) -> RedactState:
        """A successor answers the same request: its profile, key and vault, and
        the request's counts, stand; the answer's counts and stream are its own."""
        return RedactState(st.profile, st.key, st.vault, st.counts)

    @staticmethod
    def _add(counts: dict[str, int], more: Mapping[str, int]) -> None:
        for rid, n in more.items():
            counts[rid] = counts.get(rid, 0) + n

    # -- requests ----------------------------------------------------------------------

    def on_request(self, turn: Turn) -> None:
        view = turn.request
        if view is None:
            return
        try:
            st = self._state(turn)
            key, vault = st.key, st.vault
            red = st.profile.redactor
            counts = st.counts
            plain: list = []  # (slot, text, item index or -1)
            tainted: set[int] = set()  # items that held a secret

            def take(slot: Slot, item: int) -> None:
                text = slot.get()
                if not isinstance(text, str) or not text or slot.kind == SIGNED:
                    return
                if slot.kind == ARGS:  # JSON in a string: scanned decoded, value by value
                    res = redact_json_text(red, text, key, vault)
                    if res.changed:
                        slot.set(res.text)
                        self._add(counts, res.counts)
                        tainted.add(item)
                else:
                    plain.append((slot, text, item))

            # A request found wholly clean before (the same bytes and headers, no filter before
            # this one edited it) with these very rules holds no secret now: nothing to scan.
            if self._clean_requests.get(turn) is not red:
                for slot in view.head_slots():
                    take(slot, -1)
                # History the client re-sends: an item found clean before is skipped
                # for the price of encoding it, so a turn costs O(new content) in Python.
                # The tool definitions (sent on every turn) are skipped the same way.
                fresh = []
                aside = view.aside_encoding()
                if aside is not None:
                    digest = red.encoding_digest(aside or None)
                    if not red.is_clean_item(digest):
                        if digest is not None:
                            fresh.append((-2, digest))
                        for slot in view.aside_slots():
                            take(slot, -2)
                encodings = view.item_encodings()
                for i, item in enumerate(view.items()):
                    if isinstance(item, dict):
                        digest = red.encoding_digest(encodings[i])
                        if red.is_clean_item(digest):
                            continue
                        fresh.append((i, digest))
                        for slot in view.item_slots(i, item):
                            take(slot, i)
                # Text seen before costs a hash: only what holds a secret is rendered.
                for n in red.dirty([text for _, text, _ in plain]):
                    slot, text, item = plain[n]
                    res = red.redact(text, key, vault)
                    if res.changed:
                        slot.set(res.text)
                        self._add(counts, res.counts)
                        tainted.add(item)
                red.mark_clean_items([d for i, d in fresh if i not in tainted])
                if not view.edits and not counts:
                    self._clean_requests.put(turn, red, 0)  # the redactor is shared, not the fact's
                    st.clean = True
            else:
                st.clean = True
            self._ready(turn, st)
        except RedactionError as exc:
            raise FilterError(self.name, f"redaction failed, request not forwarded: {exc}", 500,
                              turn.turn_id) from None

    def _ready(self, turn: Turn, st: RedactState) -> None:
        """What the filters after this one and the answer use: the redaction of text
        added to the request, and the placeholders' restore on the answer."""
        red, key, vault, counts = st.profile.redactor, st.key, st.vault, st.counts
        turn_id = turn.turn_id  # (not the turn: its state holds this function)

        def apply(text: str) -> str:
            """For filters that add text later in the pipeline (inject)."""
            try:
                res = red.redact(text, key, vault)
            except RedactionError as exc:
                raise FilterError(self.name, f"redaction failed: {exc}", 500, turn_id) from None
            self._add(counts, res.counts)
            return res.text

        turn.redact_added = apply
        if vault is not None and self.config.responses:
            turn.add_egress(_RESTORE)

    def replay_memo(self, turn: Turn) -> Any:
        """What ``replay`` needs: the profile and session key of a request found clean
        (None for one that held a secret, or none read)."""
        st = turn.state.get(self.name)
        return (st.profile, st.key) if isinstance(st, RedactState) and st.clean else None

    def replay(self, turn: Turn, memo: Any) -> bool:
        """The chain's repeat (``Pipeline``): the same bytes found clean with the very
        rules this turn's profile has now (a reload makes other ones), under the same
        identity (so the same session key); the turn's vault is looked up as ever."""
        profile, key = memo
        if self._profile(turn) is not profile:
            return False
        st = turn.state[self.name] = RedactState(profile, key, self._vault(turn, profile), clean=True)
        self._ready(turn, st)
        return True

    # -- responses ---------------------------------------------------------------------

    def _redact_slot(self, slot: Slot, red, key: bytes, counts: dict) -> None:
        text = slot.get()
        if not isinstance(text, str) or not text or slot.kind == SIGNED:
            return
        res = redact_json_text(red, text, key) if slot.kind == ARGS else red.redact(text, key)
        self._add(counts, res.counts)
        if res.text != text:
            slot.set(res.text)

    def on_response(self, turn: Turn, view: Any) -> None:
        if not self.config.responses or view is None:
            return
        try:
            st = self._state(turn)
            key, counts = st.key, st.response_counts
            red = st.profile.redactor
            slots = [sl for sl in view.text_slots() if sl.kind != SIGNED]
            plain = [sl for sl in slots if sl.kind != ARGS]  # clean text needs nothing: ask once
            texts = [sl.get() for sl in plain]
            slots = [sl for sl in slots if sl.kind == ARGS] + [
                plain[i] for i in red.dirty([t if isinstance(t, str) else "" for t in texts])]
            for slot in slots:
                self._redact_slot(slot, red, key, counts)
        except RedactionError as exc:
            raise FilterError(self.name, f"redaction of the response failed: {exc}", 502, turn.turn_id) from None

    def on_response_event(self, turn: Turn, event: Any) -> list | None:
        if not self.config.responses:
            return None
        try:
            return self._event(turn, event)
        except RedactionError as exc:
            raise FilterError(self.name, f"redaction of the response failed: {exc}", 502, turn.turn_id) from None

    def _event(self, turn: Turn, event: Any) -> list | None:
        st = self._state(turn)
        key = st.key
        red = st.profile.redactor
        counts = st.response_counts
        ss = st.stream
        if ss is None:
            ss = st.stream = _Stream()

        starts = event.tool_call_starts()
        for channel, _call_id, _name in starts:
            ss.tool_channels.add(channel)
        deltas = event.deltas()
        closed = event.closed_channels()
        closing = closed  # a few channels at most: a list is looked through as fast as a set
        handled: set[str] = set()
        only_held = bool(deltas)  # every delta in it is being held back (its text emptied)
        text_held = False  # ... some of them text (the adapter says whether such an event may go)

        for d in deltas:
            ch = d.channel
            ss.kinds[ch] = d.kind
            if d.kind == ARGS:
                ss.args.setdefault(ch, []).append(d.text)
                if ch in closing:
                    d.text = self._finish_args(ss, ch, red, key, counts)
                    handled.add(ch)
                    only_held = False
                elif d.text:
                    d.text = ""
                continue
            if d.kind == SIGNED:  # the provider's signed thinking goes on as it came
                only_held = False
                continue
            sr = ss.text.get(ch)
            if sr is None:
                sr = ss.text[ch] = StreamRedactor(red, key)
            text = d.text
            out = sr.feed(text)
            if ch in closing:
                out += sr.flush()
                self._add(counts, ss.text.pop(ch).counts)
                handled.add(ch)
            if out or not text:
                only_held = False
            else:
                text_held = True
            if out != text:
                d.text = out

        before = []
        for ch in closed:
            if ch in handled:
                continue
            if ch in ss.text:
                sr = ss.text.pop(ch)
                tail = sr.flush()
                self._add(counts, sr.counts)
                if tail:
                    before.append(event.make_delta(ch, ss.kinds.get(ch, "text"), tail))
            elif ch in ss.args:
                full = self._finish_args(ss, ch, red, key, counts)
                if full:
                    before.append(event.make_delta(ch, ARGS, full))

        # Whole texts (``.done`` events and final response objects repeat the deltas' text;
        # a block that comes whole, a citation, are new): counted only when new.
        tally = {} if event.repeats_streamed else counts
        for slot in list(event.text_slots()):
            self._redact_slot(slot, red, key, tally)

        if only_held and not closed and not starts and event.usage() is None and not event.finish_reasons() \
                and (not text_held or event.only_deltas()):
            return before  # nothing left in it: every delta is held back (never sent empty)
        return [*before, event] if before else None

    def _finish_args(self, ss: _Stream, ch: str, red, key: bytes, counts: dict) -> str:
        full = "".join(ss.args.pop(ch, []))
        if not full:
            return ""
        res = redact_json_text(red, full, key)  # no vault: secrets the model wrote stay redacted
        self._add(counts, res.counts)
        return res.text

    def on_response_end(self, turn: Turn) -> None:
        st: RedactState | None = turn.state.get(self.name)
        ss = st.stream if st is not None else None
        if st is not None:
            st.stream = None
        if ss is not None and (ss.text or ss.args):
            # The stream ended without closing these channels: their held text is dropped, never sent.
            held = sum(sr.held for sr in ss.text.values()) + sum(len("".join(a)) for a in ss.args.values())
            if held:
                log.info("turn %s: %d held characters of unclosed channels dropped", turn.turn_id, held)


def _restore_slot(slot: Slot, vault: Vault) -> None:
    """Placeholders back to values in a tool-call argument slot; other text keeps them."""
    if slot.kind != ARGS and not _TOOL_INPUT.search(slot.where):
        return
    text = slot.get()
    if not isinstance(text, str) or not text:
        return
    out = vault.restore_json_text(text) if slot.kind == ARGS else vault.restore(text)
    if out != text:
        slot.set(out)


class _Restore:
    """Reversible mode's last edit of the answer (an egress): the session's
    placeholders in tool-call arguments become their values again, after every
    filter has seen the answer. Holds nothing: the vault and the stream's tool
    channels are the turn's."""

    name = "redact"

    def response(self, turn: Turn, view: Any) -> None:
        vault = turn.state["redact"].vault
        for slot in view.text_slots():
            _restore_slot(slot, vault)

    def event(self, turn: Turn, event: Any) -> None:
        st: RedactState = turn.state["redact"]
        vault, ss = st.vault, st.stream
        tool_channels = ss.tool_channels if ss is not None else ()
        for d in event.deltas():
            if not d.text:
                continue
            if d.kind == ARGS:  # whole arguments: redact sends them as one delta when they close
                out = vault.restore_json_text(d.text)
            elif d.channel in tool_channels:  # free-form tool input streamed as text
                out = vault.restore(d.text)
            else:
                continue
            if out != d.text:
                d.text = out
        for slot in event.text_slots():  # whole texts some events repeat (``.done``, final objects)
            _restore_slot(slot, vault)


_RESTORE = _Restore()

