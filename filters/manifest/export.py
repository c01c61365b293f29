"""OpenTelemetry for one turn: names, the one event function, the turn span
with its children, and the metrics.

No sockets here. The proxy builds the providers and their exporters
(``ctxproxy.proxy.telemetry``) and hands filters a ``Telemetry`` as the
``telemetry`` service; this module only uses the OTel API on it. Everything
exported comes from a Context Manifest (``filters.manifest``): refs, labels,
counts and provider usage, never message text. Message content goes out only
when the manifest filter's ``capture_content`` is on, and then only text the
redact filter already rewrote (the caller passes it in ``content``).

The GenAI semantic conventions are still experimental, so their names are
our own constants below rather than imports from a moving package.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

log = logging.getLogger("ctxproxy.telemetry")

SCOPE = "ctxproxy"

# -- OTel GenAI semantic conventions (attribute and metric names) -------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM = "gen_ai.request.stream"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_CONVERSATION_COMPACTED = "gen_ai.conversation.compacted"  # ours; not (yet) in the conventions
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOKEN_TYPE = "gen_ai.token.type"
GEN_AI_CLIENT_TOKEN_USAGE = "gen_ai.client.token.usage"
GEN_AI_CLIENT_OPERATION_DURATION = "gen_ai.client.operation.duration"
GEN_AI_CLIENT_TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"
OPERATION_CHAT = "chat"

# -- general conventions ------------------------------------------------------
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"
HTTP_REQUEST_METHOD = "http.request.method"
HTTP_RESPONSE_STATUS_CODE = "http.response.status_code"

# -- ours ---------------------------------------------------------------------
TURN_ID = "ctxproxy.turn.id"
TENANT = "ctxproxy.tenant"
TASK_ID = "ctxproxy.task.id"
API = "ctxproxy.api"
ROUTE = "ctxproxy.route"
AGENT = "ctxproxy.agent"
IDENTITY_SOURCE = "ctxproxy.identity.source"
DEGRADED = "ctxproxy.degraded"
FILTER_NAME = "ctxproxy.filter.name"
FILTER_HOOK = "ctxproxy.filter.hook"
CONTENT_TRUNCATED = "ctxproxy.content.truncated"
CONTENT_WITHHELD = "ctxproxy.content.withheld"

M = "ctxproxy.manifest."
MANIFEST_VERSION = M + "version"
MANIFEST_SEGMENT_COUNT = M + "segment_count"
MANIFEST_DROPPED_SEGMENT_COUNT = M + "dropped_segment_count"
MANIFEST_TOKENS = M + "tokens"
MANIFEST_UNTRUSTED_TOKENS = M + "untrusted_tokens"
MANIFEST_SEGMENT_KINDS = M + "segment_kinds"
MANIFEST_MAX_SENSITIVITY = M + "max_sensitivity"
MANIFEST_REDACTION_COUNT = M + "redaction_count"
MANIFEST_PRUNED_COUNT = M + "pruned_tool_output_count"
MANIFEST_EFFECT_COUNT = M + "tool_effect_count"
MANIFEST_TOKEN_BUDGET = M + "token_budget"
MANIFEST_POLICY_REVISION = M + "policy_revision"
MANIFEST_SHA256 = M + "sha256"
MANIFEST_JSON = M + "json"
MANIFEST_TRUNCATED = M + "truncated"
MANIFEST_STORED = M + "stored"  # true only once the manifest is committed (``store_outcome``)
MANIFEST_STORE_STATE = M + "store_state"  # stored | failed | pending | off
MANIFEST_STORE_ERROR = M + "store_error"  # the failed write's error type
MANIFEST_EVENTS_DROPPED = M + "events_dropped"
# the rules the model saw: bundle files and records, the agent's own rule files, compaction
MANIFEST_RULES_FILE_COUNT = M + "rules.file_count"
MANIFEST_RULES_CONFLICT_COUNT = M + "rules.conflict_count"
MANIFEST_RULES_REFUSED_COUNT = M + "rules.refused_count"
MANIFEST_OBSERVED_RULE_COUNT = M + "observed_rule_count"
MANIFEST_REINJECTED_RULE_COUNT = M + "reinjected_rule_count"
MANIFEST_COMPACTION = M + "compaction"

# span events (one per item; emitted through ``emit_event`` only)
EVENT_SEGMENT = "ctxproxy.context.segment"
EVENT_REDACTION = "ctxproxy.redaction"
EVENT_PRUNED = "ctxproxy.tool_output.pruned"
EVENT_EFFECT = "ctxproxy.tool_effect"

# metrics
METRIC_TURNS = "ctxproxy.turns"
METRIC_DEGRADED_TURNS = "ctxproxy.turns.degraded"
METRIC_INJECTED_TOKENS = "ctxproxy.context.injected_tokens"
METRIC_PRUNED_TOKENS = "ctxproxy.tool_output.pruned_tokens"
METRIC_REDACTIONS = "ctxproxy.redactions"
METRIC_FILTER_DURATION = "ctxproxy.filter.duration"
METRIC_MANIFEST_WRITE_FAILURES = "ctxproxy.manifest.write_failures"

# Bucket advice: the conventions' for tokens and durations; ours for filters (fast).
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
FILTER_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)

_HOOKS = ("request", "response", "event", "end")


class Telemetry:
    """What filters get as the ``telemetry`` service: a tracer and the turn
    metrics, from providers the proxy built (either may be absent)."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None, version: str = ""):
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.tracer = tracer_provider.get_tracer(SCOPE, version) if tracer_provider is not None else None
        self.metrics = TurnMetrics(meter_provider.get_meter(SCOPE, version)) if meter_provider is not None else None

    def force_flush(self, timeout_millis: int = 5000) -> bool:
        ok = True
        for p in (self.tracer_provider, self.meter_provider):
            if p is not None:
                try:
                    ok = bool(p.force_flush(timeout_millis)) and ok
                except Exception as exc:  # an exporter problem is never the caller's
                    log.warning("telemetry flush failed: %s", type(exc).__name__)
                    ok = False
        return ok

    def shutdown(self) -> None:
        """Flush and stop; may block up to the exporter timeout (run it off the event loop)."""
        for p in (self.tracer_provider, self.meter_provider):
            if p is not None:
                try:
                    p.shutdown()
                except Exception as exc:
                    log.warning("telemetry shutdown failed: %s", type(exc).__name__)


class TurnMetrics:
    """The instruments, created once per provider."""

    def __init__(self, meter: Any):
        self.turns = meter.create_counter(METRIC_TURNS, "{turn}", "Model turns through the proxy.")
        self.degraded = meter.create_counter(
            METRIC_DEGRADED_TURNS, "{turn}", "Turns where an optional filter failed and was skipped.")
        self.token_usage = meter.create_histogram(
            GEN_AI_CLIENT_TOKEN_USAGE, "{token}", "Number of input and output tokens used (provider usage).",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self.duration = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_DURATION, "s", "GenAI operation duration, as the proxy saw it.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self.first_chunk = meter.create_histogram(
            GEN_AI_CLIENT_TIME_TO_FIRST_CHUNK, "s", "Time to the first streamed chunk.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self.injected = meter.create_counter(
            METRIC_INJECTED_TOKENS, "{token}", "Tokens of context segments placed in requests.")
        self.pruned = meter.create_counter(
            METRIC_PRUNED_TOKENS, "{token}", "Tokens removed from requests by tool-output pruning.")
        self.redactions = meter.create_counter(METRIC_REDACTIONS, "{redaction}", "Secrets redacted, per rule.")
        self.filter_duration = meter.create_histogram(
            METRIC_FILTER_DURATION, "s", "Time spent in each filter per turn (all its hooks).",
            explicit_bucket_boundaries_advisory=FILTER_BUCKETS)
        self.manifest_write_failures = meter.create_counter(
            METRIC_MANIFEST_WRITE_FAILURES, "{manifest}", "Turn manifests whose write to the store failed.")

    def manifest_not_stored(self, n: int, error_type: str) -> None:
        self.manifest_write_failures.add(n, {ERROR_TYPE: error_type})

    def record(self, m: Mapping[str, Any], filter_names: Sequence[str]) -> None:
        base = {GEN_AI_OPERATION_NAME: OPERATION_CHAT, GEN_AI_PROVIDER_NAME: m.get("provider") or "",
                GEN_AI_REQUEST_MODEL: m.get("model") or "", ROUTE: m.get("route") or ""}
        outcome = dict(base)
        if m.get("error"):
            outcome[ERROR_TYPE] = m["error"]
        self.turns.add(1, outcome)
        self.duration.record(max(0.0, (m.get("duration_ms") or 0.0) / 1000.0), outcome)
        if m.get("ttfc_ms") is not None:
            self.first_chunk.record(m["ttfc_ms"] / 1000.0, base)
        usage_attrs = dict(base)
        if m.get("response_model"):
            usage_attrs[GEN_AI_RESPONSE_MODEL] = m["response_model"]
        tokens = m.get("tokens") or {}  # input includes cache reads and writes, as on the span
        for kind, key in (("input", "input"), ("output", "output")):
            if isinstance(tokens.get(key), int):
                self.token_usage.record(tokens[key], {**usage_attrs, GEN_AI_TOKEN_TYPE: kind})
        if m.get("tokens_injected"):
            self.injected.add(m["tokens_injected"], base)
        saved = sum(max(0, (p.get("tokens_before") or 0) - (p.get("tokens_after") or 0)) for p in m.get("pruned", ()))
        if saved:
            self.pruned.add(saved, base)
        for direction, counts in (("request", m.get("redactions") or {}), ("response", m.get("response_redactions") or {})):
            for rule, n in counts.items():
                self.redactions.add(n, {"ctxproxy.redaction.rule": rule, "ctxproxy.redaction.direction": direction,
                                        ROUTE: base[ROUTE]})
        if m.get("degraded"):
            self.degraded.add(1, {**base, DEGRADED: ",".join(sorted(m["degraded"]))})
        timings = m.get("timings_ms") or {}
        for name in filter_names:
            if name in timings:
                self.filter_duration.record(timings[name] / 1000.0, {FILTER_NAME: name})


def emit_event(span: Any, name: str, attributes: Mapping[str, Any], timestamp: int | None = None) -> None:
    """The one way ctxproxy emits a per-item telemetry event. Today a span
    event; when the conventions move events to logs, only this changes."""
    span.add_event(name, attributes={k: v for k, v in attributes.items() if v is not None}, timestamp=timestamp)


def parent_context(headers: Any) -> Any:
    """The agent's W3C ``traceparent`` (and whatever ``OTEL_PROPAGATORS`` adds)."""
    try:
        return propagate.extract(headers) if headers is not None else None
    except Exception:  # a malformed header is ignored, never an error
        return None


def export_span(tracer: Any, turn: Any, m: Mapping[str, Any], manifest_attrs: Callable[[], Mapping[str, Any]],
                *, end_ns: int, max_events: int, content: Callable[[], Mapping[str, Any] | None] | None = None,
                hold: Callable[[Any, int], None] | None = None) -> Any:
    """One CLIENT span ``chat {model}`` for the turn, with its child spans and
    events; returns the span. ``manifest_attrs`` (the ``ctxproxy.manifest.*``
    attributes) and ``content`` are only computed when the sampler records the
    span. A recorded span is ended here, or, given ``hold``, handed to
    ``hold(span, end_time)`` to end later (it is exported once ended)."""
    model = m.get("model") or ""
    start_attrs = {GEN_AI_OPERATION_NAME: OPERATION_CHAT, GEN_AI_PROVIDER_NAME: m.get("provider") or "",
                   GEN_AI_REQUEST_MODEL: model}
    if m.get("server_address"):
        start_attrs[SERVER_ADDRESS] = m["server_address"]
        if m.get("server_port"):
            start_attrs[SERVER_PORT] = m["server_port"]
    start_ns = m.get("started_ns") or turn.started_ns
    span = tracer.start_span(f"{OPERATION_CHAT} {model}" if model else OPERATION_CHAT,
                             context=parent_context(turn.headers), kind=SpanKind.CLIENT,
                             attributes=start_attrs, start_time=start_ns)
    held = False
    try:
        if span.is_recording():
            _end_attributes(span, m, manifest_attrs())
            captured = content() if content is not None else None
            if captured:
                span.set_attributes({k: v for k, v in captured.items() if v is not None})
            _events(span, m, max_events, end_ns)
            _children(tracer, span, turn, m)
            if m.get("error"):
                span.set_status(Status(StatusCode.ERROR, str(m["error"])))
            if hold is not None:
                hold(span, max(end_ns, start_ns))
                held = True
    finally:
        if not held:
            span.end(end_time=max(end_ns, start_ns))
    return span


def _end_attributes(span: Any, m: Mapping[str, Any], manifest_attrs: Mapping[str, Any]) -> None:
    attrs: dict[str, Any] = {GEN_AI_REQUEST_STREAM: bool(m.get("stream")), TURN_ID: m.get("turn_id"),
                             TENANT: m.get("tenant"), API: m.get("api"), ROUTE: m.get("route"),
                             AGENT: m.get("agent") or None, IDENTITY_SOURCE: m.get("identity_source") or None,
                             GEN_AI_CONVERSATION_COMPACTED: bool(m.get("compacted"))}
    if m.get("response_model"):
        attrs[GEN_AI_RESPONSE_MODEL] = m["response_model"]
    if m.get("response_id"):
        attrs[GEN_AI_RESPONSE_ID] = m["response_id"]
    if m.get("finish_reasons"):
        attrs[GEN_AI_RESPONSE_FINISH_REASONS] = list(m["finish_reasons"])
    if m.get("ttfc_ms") is not None:
        attrs[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = m["ttfc_ms"] / 1000.0
    tokens = m.get("tokens") or {}  # input includes cache reads and writes (the manifest adds Anthropic's)
    for key, name in (("input", GEN_AI_USAGE_INPUT_TOKENS), ("output", GEN_AI_USAGE_OUTPUT_TOKENS),
                      ("cache_read", GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS),
                      ("cache_creation", GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS)):
        if isinstance(tokens.get(key), int):
            attrs[name] = tokens[key]
    if m.get("session_supplied") and m.get("session_id"):
        attrs[GEN_AI_CONVERSATION_ID] = m["session_id"]
    if m.get("task_supplied") and m.get("task_id"):
        attrs[TASK_ID] = m["task_id"]
    if m.get("error"):
        attrs[ERROR_TYPE] = m["error"]
    if m.get("degraded"):
        attrs[DEGRADED] = list(m["degraded"])
    attrs.update(manifest_attrs)
    span.set_attributes({k: v for k, v in attrs.items() if v is not None})


def _events(span: Any, m: Mapping[str, Any], limit: int, end_ns: int) -> None:
    at_request = m.get("request_ready_ns") or None
    items: list[tuple[str, dict, int | None]] = []
    for direction, counts, ts in (("request", m.get("redactions") or {}, at_request),
                                  ("response", m.get("response_redactions") or {}, end_ns)):
        for rule, n in counts.items():
            items.append((EVENT_REDACTION, {"ctxproxy.redaction.rule": rule, "ctxproxy.redaction.count": n,
                                            "ctxproxy.redaction.direction": direction}, ts))
    for e in m.get("effects", ()):
        items.append((EVENT_EFFECT, {"ctxproxy.tool_effect.key": e.get("key"),
                                     "ctxproxy.tool_effect.state": e.get("state"),
                                     GEN_AI_TOOL_NAME: e.get("tool"), GEN_AI_TOOL_CALL_ID: e.get("call_id"),
                                     "ctxproxy.tool_effect.side_effect": e.get("side_effect"),
                                     "ctxproxy.tool_effect.duplicate": e.get("duplicate")}, end_ns))
    for part in (m.get("filters") or {}).values():  # a filter's own events (its part's "events")
        for ev in part.get("events", ()) if isinstance(part, dict) else ():
            if isinstance(ev, dict) and isinstance(ev.get("name"), str):
                items.append((ev["name"], dict(ev.get("attributes") or {}), end_ns))
    for p in m.get("pruned", ()):
        items.append((EVENT_PRUNED, {"ctxproxy.tool_output.ref": p.get("ref"), GEN_AI_TOOL_NAME: p.get("tool"),
                                     "ctxproxy.tool_output.tokens_before": p.get("tokens_before"),
                                     "ctxproxy.tool_output.tokens_after": p.get("tokens_after")}, at_request))
    for s in m.get("segments", ()):
        labels = s.get("labels") or {}
        budget = labels.get("budget") or {}
        attrs = {"ctxproxy.segment.kind": s.get("kind"), "ctxproxy.segment.ref": s.get("ref"),
                 "ctxproxy.segment.tokens": s.get("tokens"), "ctxproxy.segment.status": s.get("status"),
                 "ctxproxy.segment.reason": s.get("reason") or None,
                 "ctxproxy.segment.placement": s.get("placement") or None,  # where it went, if placed
                 "ctxproxy.segment.position": s.get("position"),  # in the order sent, if placed
                 "ctxproxy.segment.origin": labels.get("origin"), "ctxproxy.segment.scope": labels.get("scope"),
                 "ctxproxy.segment.trust": labels.get("trust"),
                 "ctxproxy.segment.sensitivity": labels.get("sensitivity"),
                 "ctxproxy.segment.priority": budget.get("priority")}
        for k, v in (labels.get("freshness") or {}).items():
            attrs[f"ctxproxy.segment.freshness.{k}"] = v
        items.append((EVENT_SEGMENT, attrs, at_request))
    for name, attrs, ts in items[:max(0, limit)]:
        emit_event(span, name, attrs, ts)
    if len(items) > limit:
        span.set_attribute(MANIFEST_EVENTS_DROPPED, len(items) - max(0, limit))


def _children(tracer: Any, parent: Any, turn: Any, m: Mapping[str, Any]) -> None:
    """Child spans for real work only — each filter hook and the upstream call —
    placed at the times the pipeline recorded."""
    ctx = trace.set_span_in_context(parent)
    for entry in list(getattr(turn, "spans", ()) or ()):
        name, start, end = entry[:3]
        extra = entry[3] if len(entry) > 3 and isinstance(entry[3], Mapping) else None  # a span's own counts
        if not isinstance(name, str) or not isinstance(start, int) or not isinstance(end, int):
            continue
        if name == "upstream":
            attrs: dict[str, Any] = {HTTP_REQUEST_METHOD: "POST"}
            if m.get("server_address"):
                attrs[SERVER_ADDRESS] = m["server_address"]
                if m.get("server_port"):
                    attrs[SERVER_PORT] = m["server_port"]
            if isinstance(m.get("status"), int):
                attrs[HTTP_RESPONSE_STATUS_CODE] = m["status"]
            if m.get("error"):
                attrs[ERROR_TYPE] = m["error"]
            child = tracer.start_span("POST", context=ctx, kind=SpanKind.CLIENT, attributes=attrs, start_time=start)
        else:
            fname, _, hook = name.rpartition(".")
            if fname and hook in _HOOKS:
                child = tracer.start_span(f"ctxproxy.filter.{fname}", context=ctx, kind=SpanKind.INTERNAL,
                                          attributes={FILTER_NAME: fname, FILTER_HOOK: hook}, start_time=start)
                if fname in (m.get("degraded") or ()):
                    child.set_status(Status(StatusCode.ERROR, "filter failed; skipped"))
            else:
                child = tracer.start_span(f"ctxproxy.{name}", context=ctx, kind=SpanKind.INTERNAL, start_time=start,
                                          attributes=dict(extra) if extra else None)
        child.end(end_time=max(end, start))
