"""manifest — the Context Manifest of each turn: what the model saw, stored and exported.

Runs last in both directions. It names no other filter: each reports its own
part (``report(turn)``, keyed by filter in ``Pipeline.reports``) and declares
the top-level fields it fills and how they are formatted (``manifest_fields``:
``filters/report.py``; one owner per field). The manifest lays those out
beside its own fields and keeps any other key of a part under
``filters.<name>``; a field whose filter is off gets that filter's empty
value. The turn carries the segments offered (``turn.segments``, each with
its fate and, once placed, its ``where``; ``turn.placement`` for a segment
without one), plus provider usage from the response — whole JSON, or
streamed events including usage at the end of a stream. After
the last byte (``on_response_end``, also on errors and disconnects) it takes
what the manifest is made of, and the manifest is built by the store's writer
thread, which stores it in ``store.manifests`` (by turn id; listable by
session); when an exporter is configured it is built at once and exported as
one OTel span with events, plus metrics (``export``). The span ends once the
manifest's write has an outcome, so it says stored only of a committed
manifest (``store_outcome``).

What the model saw, not what was offered: segments are listed in the order
the request carries them, each with where it actually went (a stable segment
of a demoted session sits after the cache breakpoint, whatever its producer
asked for); dropped ones follow. The policy revision is that of rules segments
the model saw, none when they were dropped. Input tokens count every input
token, cache reads and writes included, as the GenAI conventions define
``gen_ai.usage.input_tokens``.

A manifest holds refs, labels, counts and timings — never message text,
segment text, tool arguments or a secret. What it derives from the
document itself (``compacted``, the policy revision the model saw, the span's
summary attributes) reads the fields, never a filter.

Fails open: a manifest problem is logged, never blocks or fails a turn.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple
from urllib.parse import urlsplit

import orjson

from ctxproxy.store import TURN_POINTERS, UNPOINTED_TENANT, surrogates

from .. import manifest_fields
from ..base import Filter, Turn
from ..report import ManifestField, as_dict as _dict, as_list as _list, integer as _int, scalar as _scalar, text as _str
from ..services import Services
from ctxproxy.store.services.digest import sha256
from ..segments import FENCED_TRUST, SENSITIVITY_ORDER
from .export import (
    CONTENT_TRUNCATED,
    CONTENT_WITHHELD,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OUTPUT_MESSAGES,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    MANIFEST_DROPPED_SEGMENT_COUNT,
    MANIFEST_EFFECT_COUNT,
    MANIFEST_JSON,
    MANIFEST_MAX_SENSITIVITY,
    MANIFEST_POLICY_REVISION,
    MANIFEST_PRUNED_COUNT,
    MANIFEST_REDACTION_COUNT,
    MANIFEST_SEGMENT_COUNT,
    MANIFEST_SEGMENT_KINDS,
    MANIFEST_SHA256,
    MANIFEST_STORE_ERROR,
    MANIFEST_STORE_STATE,
    MANIFEST_STORED,
    MANIFEST_TOKEN_BUDGET,
    MANIFEST_TOKENS,
    MANIFEST_TRUNCATED,
    MANIFEST_UNTRUSTED_TOKENS,
    MANIFEST_VERSION,
    export_span,
)
from .export import (
    MANIFEST_COMPACTION,
    MANIFEST_OBSERVED_RULE_COUNT,
    MANIFEST_REINJECTED_RULE_COUNT,
    MANIFEST_RULES_CONFLICT_COUNT,
    MANIFEST_RULES_FILE_COUNT,
    MANIFEST_RULES_REFUSED_COUNT,
)
from ..view import TEXT, THINKING
from .store_outcome import FAILED, OFF, STORED, Handed, Handover

log = logging.getLogger("ctxproxy.filters.manifest")

VERSION = 1
# Store tenant holding turn id -> tenant pointers, so the admin API and the CLI
# find a manifest from the X-Ctx-Turn-Id alone. No real tenant can be named so
# (identify accepts tenants starting with a letter or digit only).
TURN_INDEX_TENANT = TURN_POINTERS  # the store erases them with their session
PROVIDERS = {"anthropic": "anthropic", "chat": "openai", "responses": "openai"}
SEEN = ("placed", "truncated")  # segment statuses the model saw
RULE_KINDS = ("rules", "policy")
_MAX_STR = 256
REDACTION_PROFILE = "redaction_profile"  # the field whose presence says redact ran (content capture)


@dataclass(frozen=True)
class ManifestConfig:
    store: bool = True  # keep each turn's manifest (audit; GET /ctx/v1/manifests/{turn_id})
    store_wait: float = 5.0  # s a turn's span waits for its manifest's write to commit (0: export at once, "pending")
    export: bool = True  # span + metrics, when OTEL_* configures an exporter
    json_max_chars: int = 8192  # cap of the ctxproxy.manifest.json span attribute (then truncated=true)
    max_span_events: int = 128  # segment / redaction / pruned / effect events per span; the rest are counted
    capture_content: bool = False  # opt-in: gen_ai.input/output messages, only text the redact filter rewrote
    content_max_chars: int = 16384  # cap per captured content attribute
    provider_names: Mapping[str, str] = field(default_factory=dict)  # route -> gen_ai.provider.name

    def validate(self, path: str) -> None:
        from ctxproxy.config import ConfigError

        if self.json_max_chars < 256:
            raise ConfigError(f"{path}.json_max_chars: expected at least 256, got {self.json_max_chars}")
        if self.max_span_events < 0:
            raise ConfigError(f"{path}.max_span_events: expected 0 or more, got {self.max_span_events}")
        if not self.store_wait >= 0:
            raise ConfigError(f"{path}.store_wait: expected 0 or more seconds, got {self.store_wait}")
        if self.content_max_chars < 0:
            raise ConfigError(f"{path}.content_max_chars: expected 0 or more, got {self.content_max_chars}")


class _Seen:
    """What the response told us (per turn, in ``turn.state["manifest"]``)."""

    __slots__ = ("input", "output", "cache_read", "cache_creation", "cache_apart", "response_id", "response_model",
                 "finish_reasons", "first_chunk_ns", "output_parts", "output_chars", "_doc", "_pending", "answer")

    def __init__(self) -> None:
        self.input = self.output = self.cache_read = self.cache_creation = None
        self.cache_apart = False  # the provider counts cache reads and writes apart from input (Usage says)
        self.response_id: str | None = None
        self.response_model: str | None = None
        self.finish_reasons: list[str] = []
        self.first_chunk_ns: int | None = None
        self.output_parts: dict[str, list[str]] = {}  # channel -> text (capture_content only)
        self.output_chars = 0
        self._doc: dict | None = None  # the finished manifest (``doc``)
        self._pending: tuple | None = None  # what builds it, until it is built (``doc``)
        # A whole answer whose usage and ids are read at the turn's end, after the client has it
        # (``read_answer``); its text is captured when it comes (an egress may restore secrets in it).
        self.answer: Any = None

    def usage(self, u: Any) -> None:
        if u is None:
            return
        if getattr(u, "cache_apart", False):
            self.cache_apart = True
        for ours, v in u.counts().items():  # the view's Usage, by our names
            if isinstance(v, int) and not isinstance(v, bool):
                setattr(self, ours, v)  # later events carry the final counts

    def tokens(self, api: str = "") -> dict[str, int | None]:
        """Usage as the GenAI conventions count it: ``input`` includes cache reads
        and writes. Where the provider counts them apart (``Usage.cache_apart``:
        Anthropic's input is only what follows the last cache breakpoint) they
        are added (summed here, at the end: a stream sends them in separate
        events)."""
        inp = self.input
        if self.cache_apart and inp is not None:
            inp += (self.cache_read or 0) + (self.cache_creation or 0)
        return {"input": inp, "output": self.output, "cache_read": self.cache_read,
                "cache_creation": self.cache_creation}

    def meta(self, ev: Any) -> None:
        # the first id and model seen are kept: once known, they are not read again (every chunk
        # of a Chat stream repeats both)
        if self.response_id is None:
            rid = ev.response_id()
            if rid:
                self.response_id = str(rid)[:_MAX_STR]
        if self.response_model is None:
            model = ev.response_model()
            if model:
                self.response_model = str(model)[:_MAX_STR]
        for r in ev.finish_reasons():
            if isinstance(r, str) and r not in self.finish_reasons:
                self.finish_reasons.append(r[:64])

    @property
    def doc(self) -> dict | None:
        """The turn's manifest: built at the first read after the turn ended (by the
        store's writer thread when it writes it, or by whoever asks first), once."""
        if self._doc is None and self._pending is not None:
            with _BUILDING:
                if self._doc is None and self._pending is not None:
                    ended, provider, server, end_ns, reports = self._pending
                    self._doc = build_manifest(ended, self, provider, server, end_ns, reports)
                    self._pending = None
        return self._doc

    def read_answer(self) -> None:
        """The usage and ids of the whole answer kept by ``on_response``, once."""
        view, self.answer = self.answer, None
        if view is not None:
            self.usage(view.usage())
            self.meta(view)


_BUILDING = threading.Lock()  # a manifest is built once, by the writer's thread or the loop's, whichever reads first


class _Asked(NamedTuple):
    """The two things the manifest reads of the request: its model and whether it asked for a stream."""

    model: Any
    stream: Any


class _Ended:
    """What ``build_manifest`` reads of a turn that ended, taken on the loop: references
    and copies of the turn's own lists, not the turn (its request body is freed when the
    turn is), so the document can be built later on another thread."""

    __slots__ = ("turn_id", "identity", "request", "streamed", "error_type", "status", "spans", "started_ns",
                 "api", "route", "timings_ms", "degraded", "successor_of", "pipeline", "laid_out")

    def __init__(self, turn: Turn, reports: Mapping[str, Any]) -> None:
        request = turn.request
        self.turn_id = turn.turn_id
        self.identity = turn.identity
        # What reads the filters' states and the segments is formatted now, as the turn ends:
        # what a filter keeps (or a successor turn changes) afterwards cannot reach the document.
        self.laid_out = _laid_out(turn, reports)
        self.request = None if request is None else _Asked(getattr(request, "model", ""),
                                                           getattr(request, "stream", False))
        self.streamed = turn.streamed
        self.error_type = turn.error_type
        self.status = turn.status
        self.spans = list(turn.spans)
        self.started_ns = turn.started_ns
        self.api = turn.api
        self.route = turn.route
        self.timings_ms = dict(turn.timings_ms)
        self.degraded = list(turn.degraded)
        self.successor_of = turn.successor_of
        self.pipeline = turn.pipeline


# The fields the manifest fills itself, declared like the filters' fields (``manifest_fields``),
# so no filter can declare one of them.
OWN_FIELDS = ("version", "turn_id", "task_id", "session_id", "session_supplied", "task_supplied", "tenant", "agent",
              "identity_source", "key_id", "api", "route", "provider", "server_address", "server_port", "model",
              "response_model", "response_id", "finish_reasons", "stream", "status", "error", "started_at",
              "started_ns", "request_ready_ns", "duration_ms", "ttfc_ms", "segments", "tokens", "timings_ms",
              "degraded", "filters", "continues_turn", "compacted", "sha256")
_OWN = ManifestField(lambda v: None, optional=True)  # laid out by build_manifest, never from a report


class ManifestFilter(Filter):
    name = "manifest"
    required = False  # fails open
    watches_events = True  # notes the answer; may run just after an event went out
    Config = ManifestConfig
    manifest_fields = dict.fromkeys(OWN_FIELDS, _OWN)

    def __init__(self, config: ManifestConfig, store: Any = None, telemetry: Any = None, app_config: Any = None):
        self.config = config
        self.store = store if config.store else None
        self.telemetry = telemetry if config.export else None
        self.routes = getattr(app_config, "routes", None) or {}
        self._servers: dict[str, tuple[str | None, int | None]] = {}
        self._warned: set[str] = set()
        self.filter_names = _filter_names()
        metrics = getattr(self.telemetry, "metrics", None)
        self.handover = Handover(self._read_back, metrics.manifest_not_stored if metrics is not None else None,
                                 config.store_wait)

    @classmethod
    def create(cls, config: ManifestConfig | None, services: Services) -> "ManifestFilter":
        return cls(config or ManifestConfig(), store=services.store, telemetry=services.telemetry,
                   app_config=services.config)

    # -- hooks -----------------------------------------------------------------
    def _seen(self, turn: Turn) -> _Seen:
        seen = turn.state.get(self.name)
        if seen.__class__ is not _Seen:
            seen = turn.state[self.name] = _Seen()
        return seen

    def on_response(self, turn: Turn, view: Any) -> None:
        """A whole answer: kept, and its usage and ids read at the turn's end, so the
        client does not wait for the reading. Its text (capture_content) is taken now,
        as the filters before this one left it. A second answer in one turn (the
        rounds of a tool the proxy answers) has the first one read before it."""
        seen = self._seen(turn)
        seen.read_answer()
        seen.answer = view
        if self.config.capture_content:
            for s in view.text_slots():
                if s.kind in (TEXT, THINKING):
                    self._keep_output(seen, s.kind, s.get())

    def on_response_event(self, turn: Turn, ev: Any) -> None:
        seen = self._seen(turn)
        if seen.first_chunk_ns is None:
            seen.first_chunk_ns = time.time_ns()
        if self.config.capture_content:
            for d in ev.deltas():
                if d.kind in (TEXT, THINKING):
                    self._keep_output(seen, d.channel, d.text)
        if not ev.may_carry_meta(seen.response_id is not None):
            return None
        seen.usage(ev.usage())
        seen.meta(ev)
        return None

    def on_response_end(self, turn: Turn) -> None:
        seen = self._seen(turn)
        end_ns = time.time_ns()
        seen.read_answer()
        reports = turn.pipeline.reports(turn) if turn.pipeline is not None else {}
        # What the document is made of is taken now (a few references); the document itself is
        # built when first read: on the writer's thread, while it waits for more turns to commit
        # with (or in the commit), unless a span or metrics need it now.
        seen._pending = (_Ended(turn, reports), self._provider(turn), self._server(turn.route), end_ns, None)
        tel = self.telemetry
        exporting = tel is not None and (tel.tracer is not None or tel.metrics is not None)
        if exporting:
            seen.doc  # noqa: B018 (built here, on the loop)
        handed = self._store(turn, seen)
        if not exporting:
            return
        m = seen.doc
        try:
            if tel.tracer is not None:
                def manifest_attrs() -> dict[str, Any]:
                    attrs = summarize(m)
                    attrs.update(store_attributes(handed.state, handed.error))  # as known now
                    attrs[MANIFEST_JSON], attrs[MANIFEST_TRUNCATED] = manifest_json(m, self.config.json_max_chars)
                    return attrs

                # A manifest still on its way to the store: the span ends once its outcome is known.
                hold = _held(handed) if handed.waiting and self.config.store_wait > 0 else None
                export_span(tel.tracer, turn, m, manifest_attrs, end_ns=end_ns,
                            max_events=self.config.max_span_events, content=lambda: self._content(turn, seen, m),
                            hold=hold)
            if tel.metrics is not None:
                tel.metrics.record(m, self.filter_names)
        except Exception as exc:  # telemetry never fails a turn
            self._warn("export", f"telemetry export failed: {type(exc).__name__}")

    # -- helpers ---------------------------------------------------------------
    def _store(self, turn: Turn, seen: _Seen) -> Handed:
        """Queue the manifest on the store's background writer (group commit,
        off the event loop: the turns ending within one linger are built and
        written by one op); without one, write it now. The Handed says what
        became of it: stored, failed, off, or still on its way (``waiting``)."""
        store = self.store
        tenant = _str(turn.identity.tenant) or "default"  # the document's own tenant field
        if store is None:
            return Handed(tenant, turn.turn_id, OFF)
        ident = turn.identity
        item = (tenant, turn.turn_id, seen, _str(ident.session) or None, ident.user or None)
        writer = turn.services.writer
        try:
            if writer is not None:
                return self.handover.hand(writer, self._write_stored, item, _build_stored, tenant, turn.turn_id)
            with store.batch() as b:
                _write_manifests(b, [item])
            return Handed(tenant, turn.turn_id, STORED)
        except Exception as exc:
            self._warn("store", f"storing the manifest failed: {type(exc).__name__}")
            if self.name not in turn.degraded:
                turn.degraded.append(self.name)
            return Handed(tenant, turn.turn_id, FAILED, type(exc).__name__)

    def _read_back(self, tenant: str, turn_id: str) -> bool:
        """Whether the store holds this turn's manifest (asked after a failed write)."""
        store = self.store
        return store is not None and store.manifests.get(tenant, turn_id) is not None

    @staticmethod
    def _write_stored(batch: Any, items: list[tuple]) -> None:
        """The manifests gathered for one op, on the writer's thread (should the
        op fail, the writer writes them one by one: a bad one fails alone)."""
        _write_manifests(batch, items)

    def _provider(self, turn: Turn) -> str:
        return self.config.provider_names.get(turn.route) or PROVIDERS.get(turn.api, turn.api or "unknown")

    def _server(self, route: str) -> tuple[str | None, int | None]:
        if route not in self._servers:
            rc = self.routes.get(route)
            host, port = None, None
            if rc is not None:
                try:
                    u = urlsplit(rc.upstream)
                    host, port = u.hostname, u.port or (443 if u.scheme == "https" else 80)
                except ValueError:
                    pass
            self._servers[route] = (host, port)
        return self._servers[route]

    def _keep_output(self, seen: _Seen, channel: str, text: str) -> None:
        cap = self.config.content_max_chars
        if not isinstance(text, str) or seen.output_chars >= cap:
            return
        piece = text[:cap - seen.output_chars]
        seen.output_parts.setdefault(channel, []).append(piece)
        seen.output_chars += len(piece)

    def _content(self, turn: Turn, seen: _Seen, m: Mapping[str, Any]) -> dict[str, Any] | None:
        """Opt-in message content: only when the request was forwarded after the
        redact filter ran without failing (it reported the redaction profile
        and is not degraded), so every text here is redacted."""
        if not self.config.capture_content:
            return None
        owner = _fields(turn).get(REDACTION_PROFILE, ("",))[0]
        redacted = m.get(REDACTION_PROFILE) is not None and owner not in turn.degraded
        forwarded = any(s[0] == "upstream" for s in turn.spans)
        if not redacted or not forwarded or turn.request is None:
            self._warn("content", "capture_content is on but the redact filter did not run on this route; "
                       "message content is withheld")
            return {CONTENT_WITHHELD: "redact_not_run" if not redacted else "not_forwarded"}
        cap = self.config.content_max_chars
        system, messages, truncated = _input_messages(turn.request, cap)
        out: dict[str, Any] = {}
        if system:
            out[GEN_AI_SYSTEM_INSTRUCTIONS] = surrogates.dumps(system).decode()
        out[GEN_AI_INPUT_MESSAGES] = surrogates.dumps(messages).decode()
        if seen.output_parts:
            parts = [{"type": "text", "content": "".join(p)} for p in seen.output_parts.values()]
            msg: dict[str, Any] = {"role": "assistant", "parts": parts}
            if seen.finish_reasons:
                msg["finish_reason"] = seen.finish_reasons[0]
            out[GEN_AI_OUTPUT_MESSAGES] = surrogates.dumps([msg]).decode()
            truncated = truncated or seen.output_chars >= cap
        out[CONTENT_TRUNCATED] = truncated
        return out

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("manifest: %s", message)
        else:
            log.debug("manifest: %s", message)


def store_attributes(state: str, error: str | None) -> dict[str, Any]:
    """What the span says of the manifest's write: ``stored`` true only once committed."""
    attrs: dict[str, Any] = {MANIFEST_STORED: state == STORED, MANIFEST_STORE_STATE: state}
    if error:
        attrs[MANIFEST_STORE_ERROR] = error
    return attrs


def _held(handed: Handed) -> Any:
    """What ends a turn's span once its manifest's write has an outcome."""
    def hold(span: Any, end_time: int) -> None:
        def settle(state: str, error: str | None) -> None:
            try:
                span.set_attributes(store_attributes(state, error))
            finally:
                span.end(end_time=end_time)

        handed.hold(settle)

    return hold


def _build_stored(item: tuple) -> None:
    """The writer's thread builds a gathered manifest while it waits for more (one at a time)."""
    if type(item[2]) is not dict:  # noqa: E721
        item[2].doc  # noqa: B018


def _write_manifests(b: Any, items: list[tuple]) -> None:
    """Each turn's manifest and its turn id -> tenant pointer, in one ``put_many``
    (what the turns share is checked once). The pointer names no session or
    subject (no scope entries to write, nothing of the session kept in the index
    tenant): it is written with its manifest, and erasing the session or subject
    finds it by the manifest's id (``erasure.pointers_of``) and takes it too (it
    says the turn existed). A turn of ``UNPOINTED_TENANT`` has none: a turn id
    without a pointer is looked up in that tenant (``lookups.find_manifest``)."""
    docs = []
    for tenant, turn_id, m, session, subject in items:
        if type(m) is not dict:  # noqa: E721 (a turn's _Seen: its manifest is built now, if not yet)
            m = m.doc
        docs.append((tenant, turn_id, m, session, subject))
        if tenant != UNPOINTED_TENANT:
            docs.append((TURN_INDEX_TENANT, turn_id, {"tenant": tenant}, None, None))
    b.manifests.put_many(docs)


def _filter_names() -> tuple[str, ...]:
    from .. import FILTERS

    return tuple(FILTERS)


def _chain(turn: Turn) -> tuple:
    return tuple(s.filter for s in turn.pipeline.stages) if turn.pipeline is not None else ()


_FIELDS: dict[int, tuple[Any, Mapping]] = {}  # id(pipeline) -> (pipeline, its manifest fields): one per chain


def _fields(turn: Turn) -> Mapping[str, tuple[str, Any]]:
    """The manifest fields of the turn's chain (``manifest_fields``), worked out
    once per chain (a chain's filters are fixed for its life)."""
    p = turn.pipeline
    hit = _FIELDS.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    fields = manifest_fields(_chain(turn))
    if len(_FIELDS) > 64:  # chains made by many reloads or tests
        _FIELDS.clear()
    _FIELDS[id(p)] = (p, fields)
    return fields


# -- the manifest ---------------------------------------------------------------

def build_manifest(turn: Turn, seen: _Seen, provider: str, server: tuple[str | None, int | None],
                   end_ns: int, reports: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The manifest document (JSON-ready): refs, labels, counts, usage, timings.
    ``reports``: the filters' parts by filter name (``Pipeline.reports``; by
    default the turn's pipeline's), laid out as each filter declares."""
    ident = turn.identity
    laid_out = getattr(turn, "laid_out", None)  # an _Ended turn's, formatted when it ended
    if laid_out is None:
        if reports is None:
            reports = turn.pipeline.reports(turn) if turn.pipeline is not None else {}
        laid_out = _laid_out(turn, reports)
    segments, fields, own = laid_out
    request = turn.request
    model = _str(getattr(request, "model", "")) if request is not None else ""
    # streamed: the request asked for it, or the transport is a stream (Responses over WebSocket)
    stream = bool(turn.streamed) or (request is not None and bool(getattr(request, "stream", False)))
    error = turn.error_type or (str(turn.status) if isinstance(turn.status, int) and turn.status >= 400 else None)
    request_ready: int | None = None
    upstream: int | None = None
    for s in getattr(turn, "spans", ()):  # one pass: when the request was ready, and the upstream call's time
        if type(s) is not tuple or len(s) != 3:  # noqa: E721 (only the pipeline's own (name, start, end))
            continue
        n, s0, e = s
        if type(n) is not str or type(s0) is not int or type(e) is not int:  # noqa: E721
            continue
        if n == "upstream":
            upstream = (upstream or 0) + e - s0
        elif (request_ready is None or e > request_ready) and n.endswith(".request"):
            request_ready = e
    if request_ready is None:
        request_ready = turn.started_ns
    m = _head(ident, turn.api, turn.route, provider, server, model, stream)  # a copy: the turn's own fields follow
    m["turn_id"] = turn.turn_id
    m["response_model"] = seen.response_model
    m["response_id"] = seen.response_id
    m["finish_reasons"] = list(seen.finish_reasons)
    m["status"] = turn.status
    m["error"] = _str(error, 128) or None
    m["started_at"] = turn.started_ns / 1e9
    m["started_ns"] = turn.started_ns
    m["request_ready_ns"] = request_ready
    m["duration_ms"] = round((end_ns - turn.started_ns) / 1e3) / 1e3
    m["ttfc_ms"] = round((seen.first_chunk_ns - turn.started_ns) / 1e3) / 1e3 if seen.first_chunk_ns else None
    m["segments"] = segments
    m["tokens"] = seen.tokens(turn.api)
    m["timings_ms"] = _timings(turn, upstream)
    m["degraded"] = [_str(d, 64) for d in turn.degraded]
    m.update(fields)
    if own:  # each filter's keys beyond the fields it fills, under its name
        m["filters"] = own
    if turn.successor_of:  # an automatic successor: whose request it continues
        m["continues_turn"] = turn.successor_of
    # What the document says as a whole: the policy revision of the rules the model saw, and
    # whether the history it saw was compacted (pruned here, or by the agent itself).
    m["policy_revision"] = _policy_revision(m.get("policy_revision"), segments)
    if _dict(m.get("compaction")).get("phase") == "resumed":  # the agent's own compaction shape
        m["client_compacted"] = True
    m["compacted"] = bool(m.get("pruned")) or bool(m.get("client_compacted"))
    m["sha256"] = manifest_sha256(m)
    return m


_HEADS: dict[tuple, dict[str, Any]] = {}  # what a turn's identity, route and request make of the head
HEADS_MAX = 256  # (the turns of a few hundred live sessions; emptied when full)
HEAD_TEXT_MAX = 1024  # characters of identity and model a kept head may hold: ~1 MB for all at most


def _head(ident: Any, api: Any, route: Any, provider: str, server: tuple[str | None, int | None], model: str,
          stream: bool) -> dict[str, Any]:
    """A new manifest's first fields, in their order: those of the turn's identity,
    route, provider and request (the same for every turn of a session on one
    route and model, so laid out once and copied), then the turn's own, None
    until ``build_manifest`` sets them."""
    key = (ident, api, route, provider, server, model, stream)
    try:
        head = _HEADS.get(key)
    except TypeError:  # an identity of unhashable parts: laid out each time
        key, head = None, None
    if head is None:
        head = {
            "version": VERSION,
            "turn_id": None,
            "task_id": _str(ident.task),
            "session_id": _str(ident.session),
            "session_supplied": bool(ident.supplied),
            "task_supplied": bool(ident.task) and ident.task != ident.session,
            "tenant": _str(ident.tenant) or "default",
            "agent": _str(ident.agent),
            "identity_source": _str(ident.source),
            "key_id": _str(ident.key_id) or None,  # keys mode: the proxy key's id (never the key)
            "api": api,
            "route": route,
            "provider": provider,
            "server_address": server[0],
            "server_port": server[1],
            "model": model,
            "response_model": None,
            "response_id": None,
            "finish_reasons": None,
            "stream": stream,
            "status": None, "error": None, "started_at": None, "started_ns": None, "request_ready_ns": None,
            "duration_ms": None, "ttfc_ms": None, "segments": None, "tokens": None, "timings_ms": None,
            "degraded": None,
        }
        if key is not None and isinstance(ident, tuple) and (  # kept only with its text bounded
                len(model) + sum(len(v) for v in ident if type(v) is str) <= HEAD_TEXT_MAX):  # noqa: E721
            if len(_HEADS) >= HEADS_MAX:
                _HEADS.clear()
            _HEADS[key] = head
    return head.copy()


def _laid_out(turn: Any, reports: Mapping[str, Any]) -> tuple[list[dict], dict[str, Any], dict[str, dict]]:
    """What the manifest reads of the filters and the segments, formatted: (segment
    records, the filters' declared fields in order, each filter's other keys)."""
    fields: dict[str, Any] = {}
    own = lay_out(fields, reports, _fields(turn))  # no own field is declared by a filter: none is skipped
    return _segments(_list(turn.segments), _dict(turn.placement)), fields, own


def lay_out(m: dict[str, Any], reports: Mapping[str, Any], fields: Mapping[str, tuple[str, Any]]
            ) -> dict[str, dict]:
    """Each declared field into ``m``, formatted by its filter (its empty value
    when that filter did not report); returns every filter's other keys, by
    filter name."""
    plan, declared = _plan(fields)
    for owner, specs in plan:  # the fields in declared order, grouped by their owner
        part = reports.get(owner)
        get = part.get if isinstance(part, dict) else _nothing
        for name, fmt, optional in specs:
            if name in m:
                continue  # the manifest's own field: no filter overrides it
            value = fmt(get(name))
            if value is not None or not optional:
                m[name] = value
    own: dict[str, dict] = {}
    for owner, part in reports.items():
        if not isinstance(part, dict):
            continue
        mine = declared.get(owner, _NONE)
        if part.keys() <= mine:  # every key a declared field (the usual case): nothing of its own
            continue
        rest = {k: v for k, v in part.items() if k not in mine}
        if rest:
            own[owner if type(owner) is str and len(owner) <= 64 else _str(owner, 64)] = rest  # noqa: E721
    return own


def _nothing(name: str) -> None:
    return None


_NONE: frozenset = frozenset()


_PLANS: dict[int, tuple[Mapping, tuple, dict]] = {}  # id(fields) -> (fields, plan, declared): one per chain


def _plan(fields: Mapping[str, tuple[str, Any]]) -> tuple[tuple, dict[str, frozenset]]:
    """How ``fields`` are laid out, worked out once per mapping (a chain's fields are
    one mapping for the process's life): the filters' fields, in order, grouped by
    owner (a run of one owner's fields, then the next's), each with its format (the
    manifest's own are set before), and each owner's field names."""
    hit = _PLANS.get(id(fields))
    if hit is not None and hit[0] is fields:
        return hit[1], hit[2]
    runs: list[tuple[str, list]] = []
    for name, (owner, spec) in fields.items():
        if spec is _OWN:
            continue
        if not runs or runs[-1][0] != owner:
            runs.append((owner, []))
        runs[-1][1].append((name, spec.format, spec.optional))
    plan = tuple((owner, tuple(specs)) for owner, specs in runs)
    declared: dict[str, set] = {}
    for name, (owner, _) in fields.items():
        declared.setdefault(owner, set()).add(name)
    frozen = {owner: frozenset(names) for owner, names in declared.items()}
    if len(_PLANS) > 64:  # chains made by many reloads or tests
        _PLANS.clear()
    _PLANS[id(fields)] = (fields, plan, frozen)
    return plan, frozen


def manifest_sha256(m: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON (sorted keys) of the manifest without its own digest."""
    body = {k: v for k, v in m.items() if k != "sha256"} if "sha256" in m else m  # (no copy while building)
    return sha256(surrogates.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def summarize(m: Mapping[str, Any]) -> dict[str, Any]:
    """The flat ``ctxproxy.manifest.*`` attributes SREs filter and alert on.
    Counts and tokens are of the segments the model saw (placed or truncated);
    untrusted tokens are those of segments fenced as data (untrusted,
    evidence, inferred)."""
    seen = [s for s in m.get("segments", ()) if s.get("status") in SEEN]
    labels = [s.get("labels") or {} for s in seen]
    out: dict[str, Any] = {
        MANIFEST_VERSION: m.get("version", VERSION),
        MANIFEST_SEGMENT_COUNT: len(seen),
        MANIFEST_DROPPED_SEGMENT_COUNT: len(m.get("segments", ())) - len(seen),
        MANIFEST_TOKENS: sum(s.get("tokens") or 0 for s in seen),
        MANIFEST_UNTRUSTED_TOKENS: sum(s.get("tokens") or 0 for s, lab in zip(seen, labels)
                                       if lab.get("trust") in FENCED_TRUST),
        MANIFEST_SEGMENT_KINDS: sorted({s.get("kind") or "" for s in seen}),
        MANIFEST_REDACTION_COUNT: sum((m.get("redactions") or {}).values())
        + sum((m.get("response_redactions") or {}).values()),
        MANIFEST_PRUNED_COUNT: len(m.get("pruned", ())),
        MANIFEST_EFFECT_COUNT: len(m.get("effects", ())),
        MANIFEST_SHA256: m.get("sha256"),
    }
    levels = [SENSITIVITY_ORDER.index(lab.get("sensitivity")) for lab in labels
              if lab.get("sensitivity") in SENSITIVITY_ORDER]
    if levels:
        out[MANIFEST_MAX_SENSITIVITY] = SENSITIVITY_ORDER[max(levels)]
    if m.get("token_budget") is not None:
        out[MANIFEST_TOKEN_BUDGET] = m["token_budget"]
    if m.get("policy_revision"):
        out[MANIFEST_POLICY_REVISION] = m["policy_revision"]
    rules = m.get("rules")
    if isinstance(rules, dict):
        out[MANIFEST_RULES_FILE_COUNT] = len(rules.get("files") or ())
        out[MANIFEST_RULES_CONFLICT_COUNT] = len(rules.get("conflicts") or ())
        out[MANIFEST_RULES_REFUSED_COUNT] = len(rules.get("refused") or ())
    observed = m.get("observed_rules")
    if isinstance(observed, list):
        out[MANIFEST_OBSERVED_RULE_COUNT] = sum(1 for o in observed if o.get("state") == "present")
        out[MANIFEST_REINJECTED_RULE_COUNT] = sum(1 for o in observed if o.get("state") == "reinjected")
    compaction = m.get("compaction")
    if isinstance(compaction, dict):
        out[MANIFEST_COMPACTION] = "/".join(str(compaction.get(k) or "") for k in ("agent", "style", "phase"))
    return out


def manifest_json(m: Mapping[str, Any], cap: int) -> tuple[str, bool]:
    """``ctxproxy.manifest.json``: refs and labels only, at most ``cap``
    characters, always valid JSON. Items are dropped from the longest list
    until it fits; ``truncated`` and ``omitted`` say so."""
    doc: dict[str, Any] = {
        "v": m.get("version", VERSION),
        "turn": m.get("turn_id"),
        "segments": [{"kind": s.get("kind"), "ref": s.get("ref"), "tokens": s.get("tokens"),
                      "status": s.get("status"), "placement": s.get("placement"), "position": s.get("position"),
                      "labels": s.get("labels")} for s in m.get("segments", ())],
        "redactions": dict(m.get("redactions") or {}),
        "response_redactions": dict(m.get("response_redactions") or {}),
        "pruned": [{"ref": p.get("ref"), "tool": p.get("tool"), "before": p.get("tokens_before"),
                    "after": p.get("tokens_after")} for p in m.get("pruned", ())],
        "effects": [{"key": e.get("key"), "state": e.get("state"), "tool": e.get("tool")}
                    for e in m.get("effects", ())],
        # the rules bundle (files in resolved order, conflicts, refused) and the agent's own rule files
        "rules": _dict(m.get("rules")).get("revision"),
        "rules_files": [{"path": f.get("path"), "layer": f.get("layer"), "sha256": f.get("sha256")}
                        for f in _dict(m.get("rules")).get("files") or ()],
        "conflicts": [{"name": c.get("name"), "applied": _dict(c.get("applied")).get("path"),
                       "overridden": _dict(c.get("overridden")).get("path")}
                      for c in _dict(m.get("rules")).get("conflicts") or ()],
        "refused": [{k: r.get(k) for k in ("path", "revision", "sha256", "reason") if r.get(k)}
                    for r in _dict(m.get("rules")).get("refused") or ()],
        "observed_rules": [{"agent": o.get("agent"), "path": o.get("path"), "sha256": o.get("sha256"),
                            "state": o.get("state")} for o in _list(m.get("observed_rules"))],
        "truncated": False,
    }
    text = surrogates.dumps(doc).decode()
    if len(text) <= cap:
        return text, False
    doc["truncated"] = True
    doc["omitted"] = 0
    lists = ("segments", "pruned", "effects", "rules_files", "conflicts", "refused", "observed_rules")
    # Shrink geometrically, then finely: bounded by the number of items.
    while len(text) > cap and any(doc[k] for k in lists):
        longest = max(lists, key=lambda k: len(doc[k]))
        n = len(doc[longest])
        drop = max(1, n // 2) if len(text) > 2 * cap else 1
        del doc[longest][n - drop:]
        doc["omitted"] += drop
        text = surrogates.dumps(doc).decode()
    if len(text) > cap:
        doc["redactions"], doc["response_redactions"] = {}, {}
        text = surrogates.dumps(doc).decode()
    if len(text) > cap:
        text = surrogates.dumps({"v": doc["v"], "truncated": True}).decode()
    return text, True


# -- the turn's own records ----------------------------------------------------------

def _segments(raw: list, groups: dict) -> list[dict[str, Any]]:
    """Every offered segment: those the model saw in the order the request
    carries them (``position`` 0, 1, ..., as inject placed them), then the
    dropped ones, in offer order."""
    if not raw:
        return []
    out = [_segment(s, groups) for s in raw]
    seen = [i for i, s in enumerate(out) if s["status"] in SEEN]
    order = sorted(seen, key=lambda i: (out[i]["position"] is None, out[i]["position"] or 0, i))
    for position, i in enumerate(order):
        out[i]["position"] = position
    return [out[i] for i in order] + [s for s in out if s["status"] not in SEEN]


def _segment(s: Any, groups: dict) -> dict[str, Any]:
    """One segment's record. ``placement`` is where it actually went: the
    ``where`` inject writes on each segment it places, else inject's record of
    where each group went (``groups``: stable / system / turn); None when not
    placed. ``requested_placement`` is what its producer asked for."""
    get = (lambda k, d=None: s.get(k, d)) if isinstance(s, dict) else (lambda k, d=None: getattr(s, k, d))
    status = get("status", "offered")
    reason = _str(get("reason", ""))
    if status not in ("placed", "truncated", "dropped"):
        status, reason = "dropped", reason or "not placed (inject did not run)"
    freshness = get("freshness", {})
    freshness = {_str(k, 64): _scalar(v) for k, v in freshness.items()} if isinstance(freshness, dict) else {}
    tokens = _int(get("tokens", 0)) or 0
    requested = _str(get("placement", ""))
    stable = get("stable", False) is True
    where = ""
    if status in SEEN:
        group = "turn" if requested == "turn" else "stable" if stable else "system"
        where = _str(get("where", "")) or _str(groups.get(group, ""))
    return {
        "kind": _str(get("kind", "")),
        "ref": _str(get("ref", "")),
        "tokens": tokens,
        "status": status,
        "reason": reason,
        "placement": where or None,
        "position": _int(get("position")) if status in SEEN else None,
        "requested_placement": requested,
        "stable": stable,
        "labels": {
            "origin": _str(get("origin", "")),
            "scope": _str(get("scope", "")),
            "trust": _str(get("trust", "")),
            "freshness": freshness,
            "sensitivity": _str(get("sensitivity", "")),
            "budget": {"tokens": tokens, "priority": _int(get("priority")),
                       "max_tokens": _int(get("max_tokens"))},
        },
    }


def _policy_revision(reported: Any, segments: list[dict]) -> str | None:
    """The revision of the rules the model saw; None when no rules segment was
    placed (none loaded, or all dropped for the budget), whatever was loaded.
    The reported full revision (the bundle's) when the placed segments carry
    it (they are labelled with its first 12 characters), else their labels'."""
    seen = [s for s in segments if s["kind"] in RULE_KINDS and s["status"] in SEEN]
    if not seen:
        return None
    revs = list(dict.fromkeys(str(s["labels"]["freshness"]["revision"]) for s in seen
                              if s["labels"]["freshness"].get("revision") is not None))
    full = _str(reported)
    if full and all(full.startswith(r) for r in revs):
        return full
    return _str(",".join(revs)) or None


def _timings(turn: Turn, upstream: int | None) -> dict[str, float]:
    """Each filter's ms, and the upstream call's (``upstream``: its spans' ns summed,
    None when the turn made none)."""
    out: dict[str, float] = {}
    for k, v in turn.timings_ms.items():  # filter names and float ms, as the pipeline keeps them
        if type(v) is not float:  # noqa: E721
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            v = float(v)
        try:  # to the µs: round(v * 1000) / 1000 is round(v, 3) for timings, ~0.2 µs less each (11 a turn)
            v = round(v * 1e3) / 1e3
        except (ValueError, OverflowError):  # nan, inf: as they are (stored as null)
            pass
        out[k if type(k) is str and len(k) <= 64 else _str(k, 64)] = v  # noqa: E721
    if upstream is not None:
        out["upstream"] = round(upstream / 1e3) / 1e3
    return out


def _input_messages(view: Any, cap: int) -> tuple[list[dict], list[dict], bool]:
    """(system instruction parts, messages) from the request as forwarded, in the
    GenAI conventions' shape, at most ``cap`` characters of text in all."""
    system: list[dict] = []
    messages: list[dict] = []
    left = cap
    truncated = False
    last: int | None = None
    for message, role, s in view.message_slots():
        if s.kind not in (TEXT, THINKING):
            continue
        text = s.get()
        if not isinstance(text, str) or not text:
            continue
        if left <= 0:
            truncated = True
            break
        if len(text) > left:
            text, truncated = text[:left], True
        left -= len(text)
        part = {"type": "text" if s.kind == TEXT else "reasoning", "content": text}
        if message is None:  # the system prompt, outside the conversation
            system.append(part)
            continue
        if message != last:
            messages.append({"role": role or "user", "parts": []})
            last = message
        messages[-1]["parts"].append(part)
    return system, messages, truncated
