"""A real OTLP/HTTP receiver for tests: an aiohttp server on 127.0.0.1 that
accepts protobuf ``POST /v1/traces`` and ``POST /v1/metrics`` (what the OTel
SDK's OTLP/HTTP exporters send), keeps the raw bytes and decodes them with
``opentelemetry.proto``.

    async with OTLPReceiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.url)
        ...
        span = await rx.wait_span(lambda s: s.name.startswith("chat "))
        assert attrs(span)["gen_ai.usage.input_tokens"] == 123
"""
from __future__ import annotations

import asyncio
import gzip
import zlib
from typing import Any, Callable

from aiohttp import web
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind)


def attrs(obj: Any) -> dict[str, Any]:
    """Attributes of a span, event, resource or data point as a dict."""
    return {kv.key: value(kv.value) for kv in obj.attributes}


class OTLPReceiver:
    def __init__(self) -> None:
        self.traces_raw: list[bytes] = []
        self.metrics_raw: list[bytes] = []
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.url = ""
        self._runner: web.AppRunner | None = None
        app = web.Application()
        app.router.add_post("/v1/traces", self._traces)
        app.router.add_post("/v1/metrics", self._metrics)
        self.app = app

    async def __aenter__(self) -> "OTLPReceiver":
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @staticmethod
    async def _body(request: web.Request) -> bytes:
        raw = await request.read()
        enc = request.headers.get("content-encoding", "").lower()
        if enc == "gzip":
            return gzip.decompress(raw)
        if enc == "deflate":
            return zlib.decompress(raw)
        return raw

    async def _receive(self, request: web.Request, kind: type, answer: type, raws: list, msgs: list) -> web.Response:
        """One export: its bytes and the ``kind`` message they parse to are kept."""
        raw = await self._body(request)
        msg = kind()
        msg.ParseFromString(raw)
        raws.append(raw)
        msgs.append(msg)
        return web.Response(body=answer().SerializeToString(), content_type="application/x-protobuf")

    async def _traces(self, request: web.Request) -> web.Response:
        return await self._receive(request, ExportTraceServiceRequest, ExportTraceServiceResponse, self.traces_raw,
                                   self.traces)

    async def _metrics(self, request: web.Request) -> web.Response:
        return await self._receive(request, ExportMetricsServiceRequest, ExportMetricsServiceResponse,
                                   self.metrics_raw, self.metrics)

    # -- reading what arrived ------------------------------------------------------
    def spans(self) -> list[Any]:
        return [span for req in self.traces for rs in req.resource_spans for ss in rs.scope_spans
                for span in ss.spans]

    def resources(self) -> list[dict[str, Any]]:
        return [attrs(rs.resource) for req in self.traces for rs in req.resource_spans]

    def metric_points(self, name: str) -> list[Any]:
        """Every data point of metric ``name`` (sums, gauges, histograms)."""
        out = []
        for req in self.metrics:
            for rm in req.resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        if metric.name != name:
                            continue
                        kind = metric.WhichOneof("data")
                        out.extend(getattr(metric, kind).data_points)
        return out

    def metric_names(self) -> set[str]:
        return {m.name for req in self.metrics for rm in req.resource_metrics for sm in rm.scope_metrics
                for m in sm.metrics}

    def all_bytes(self) -> bytes:
        return b"".join(self.traces_raw + self.metrics_raw)

    async def wait(self, ready: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Poll (bounded) until ``ready()`` returns something truthy."""
        for _ in range(int(timeout / 0.05)):
            got = ready()
            if got:
                return got
            await asyncio.sleep(0.05)
        raise AssertionError("OTLP receiver: nothing matching arrived in time")

    async def wait_span(self, match: Callable[[Any], bool], timeout: float = 10.0) -> Any:
        return await self.wait(lambda: next((s for s in self.spans() if match(s)), None), timeout)
