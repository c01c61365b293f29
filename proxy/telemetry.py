"""OpenTelemetry providers and exporters, from the standard ``OTEL_*`` variables.

The proxy owns the providers (they open sockets; filters never do) and hands
``filters.manifest.export.Telemetry`` to the filters as the ``telemetry`` service.

Which exporter, per signal (traces, metrics):

- ``OTEL_SDK_DISABLED=true``: none at all;
- ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER``: a comma list of
  ``otlp`` (OTLP/HTTP protobuf), ``console`` (stdout, for local use), ``none``;
- unset: ``otlp`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the per-signal
  ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``..._METRICS_ENDPOINT``) is set,
  else none — a laptop without a collector gets no connection errors.

The OTLP exporters read the rest themselves (endpoint, headers, timeout,
compression, certificates, metrics temporality); ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES`` name the resource (``service.name`` defaults to
``ctxproxy``), ``OTEL_TRACES_SAMPLER`` picks the sampler,
``OTEL_BSP_*`` tune the batch processor, ``OTEL_METRIC_EXPORT_INTERVAL`` the
metric reader. Only the ``http/protobuf`` OTLP protocol is built in.

Export never blocks or fails a turn: spans go through a
``BatchSpanProcessor`` (a bounded queue and a worker thread), metrics through
a periodic reader; exporter errors are logged by the SDK and dropped.
"""
from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from ctxproxy.filters.manifest.export import Telemetry

log = logging.getLogger("ctxproxy.telemetry")

SERVICE_NAME = "ctxproxy"
_PROTOCOL = "http/protobuf"


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def exporter_names(signal: str, env: Any = None) -> list[str]:
    """The exporters ``OTEL_*`` asks for, for ``signal`` "traces" or "metrics"."""
    env = os.environ if env is None else env
    if _is_true(env.get("OTEL_SDK_DISABLED")):
        return []
    up = signal.upper()
    raw = env.get(f"OTEL_{up}_EXPORTER")
    if raw is None or not raw.strip():
        has_endpoint = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get(f"OTEL_EXPORTER_OTLP_{up}_ENDPOINT")
        raw = "otlp" if has_endpoint else "none"
    names = []
    for name in raw.split(","):
        name = name.strip().lower()
        if not name or name == "none":
            continue
        if name not in ("otlp", "console"):
            log.warning("OTEL_%s_EXPORTER=%s: unknown exporter, ignored (use otlp, console or none)", up, name)
            continue
        if name not in names:
            names.append(name)
    if "otlp" in names:
        protocol = (env.get(f"OTEL_EXPORTER_OTLP_{up}_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                    or _PROTOCOL).strip().lower()
        if protocol != _PROTOCOL:
            log.warning("OTLP protocol %r is not built in; exporting %s with %s", protocol, signal, _PROTOCOL)
    return names


def _resource(version: str) -> Any:
    from opentelemetry.sdk.resources import Resource

    detected = Resource.create({})  # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES
    attrs: dict[str, Any] = {}
    if str(detected.attributes.get("service.name", "")).startswith("unknown_service"):
        attrs["service.name"] = SERVICE_NAME
    if version and "service.version" not in detected.attributes:
        attrs["service.version"] = version
    return detected.merge(Resource(attrs))


def open_telemetry(version: str = "") -> Telemetry | None:
    """Providers and exporters per ``OTEL_*``; ``None`` when nothing is exported.
    Never raises: a broken telemetry setup is logged and the proxy runs without it."""
    traces, metrics = exporter_names("traces"), exporter_names("metrics")
    if not traces and not metrics:
        return None
    try:
        resource = _resource(version)
        return Telemetry(_tracer_provider(traces, resource), _meter_provider(metrics, resource), version)
    except Exception as exc:
        log.warning("telemetry disabled: could not set up exporters (%s: %s)", type(exc).__name__, exc)
        return None


def _tracer_provider(names: list[str], resource: Any) -> Any:
    if not names:
        return None
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    for name in names:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter: Any = OTLPSpanExporter()
        else:
            exporter = ConsoleSpanExporter()
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _meter_provider(names: list[str], resource: Any) -> Any:
    if not names:
        return None
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader

    readers = []
    for name in names:
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            exporter: Any = OTLPMetricExporter()
        else:
            exporter = ConsoleMetricExporter()
        readers.append(PeriodicExportingMetricReader(exporter))
    return MeterProvider(metric_readers=readers, resource=resource, shutdown_on_exit=False)


async def close_telemetry(telemetry: Telemetry | None, timeout: float = 5.0) -> None:
    """Flush and shut the providers down without blocking the event loop for
    longer than ``timeout`` seconds (an unreachable collector can make the
    final export wait for the exporter's own timeout; that thread is a daemon)."""
    if telemetry is None:
        return
    done = threading.Event()

    def run() -> None:
        try:
            telemetry.shutdown()
        finally:
            done.set()

    threading.Thread(target=run, name="ctxproxy-otel-shutdown", daemon=True).start()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done.is_set() and loop.time() < deadline:
        await asyncio.sleep(0.02)
    if not done.is_set():
        log.warning("telemetry shutdown still running after %.1fs; not waiting for it", timeout)
