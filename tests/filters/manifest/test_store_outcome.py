"""What the turn's span says of its manifest's write: ``ctxproxy.manifest.stored``
is true only for a manifest the store committed; a write that failed is
exported as failed (with its error type), logged with the turn id and
counted; a write still under way when the span's wait runs out is exported as
pending. Through a real LMDB store whose map is full, the real background
writer and a real OTLP receiver."""
from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import pytest

from ctxproxy.config import ConfigError, parse_section
from ctxproxy.filters import Pipeline
from ctxproxy.filters.manifest.filter import ManifestConfig, ManifestFilter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store import open_store
from ctxproxy.store.errors import StoreError
from ctxproxy.store.writer import BackgroundWriter
from otlpreceiver import attrs
from test_manifest import _turn_with_writer, in_memory_telemetry

TOKEN = "admin-test-token"
# identify and the manifest: a turn writes nothing else to the store
SMALL_STORE = ('[pipeline]\nrequest = ["identify", "manifest"]\n'
               '[store]\nmap_size_mb = 1\nmax_map_size_mb = 1\n')
FAILURES = "ctxproxy.manifest.write_failures"


@pytest.fixture(autouse=True)
def _sdk_enabled(monkeypatch):
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)


def fill(store) -> None:
    """Write filler documents until not even a small one fits the map."""
    size, n = 64 << 10, 0
    while size >= 64:
        try:
            with store.batch() as b:
                b.checkpoints.put("filler", f"f{n}", {"x": "a" * size})
            n += 1
        except StoreError:
            size //= 2
    assert n > 0


async def admin_status(proxy, path: str) -> int:
    async with aiohttp.ClientSession() as s:
        async with s.get(proxy.url + "/ctx/v1/" + path, headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            return r.status


async def test_a_manifest_the_full_store_refused_is_exported_failed_logged_and_counted(
        otlp, make_proxy, fake, monkeypatch, caplog):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    fake.script(Reply.text("ok"), Reply.text("ok"))
    proxy = await make_proxy(SMALL_STORE)
    client = proxy.anthropic()
    msgs = [{"role": "user", "content": "hello"}]
    hdrs = {"X-Ctx-Session": "sess-full", "X-Ctx-Tenant": "acme"}

    raw = await client.messages.with_raw_response.create(model="claude-test-1", max_tokens=5, messages=msgs,
                                                         extra_headers=hdrs)
    kept = raw.headers["x-ctx-turn-id"]
    span = await otlp.wait_span(lambda s: attrs(s).get("ctxproxy.turn.id") == kept)
    a = attrs(span)
    assert a["ctxproxy.manifest.stored"] is True and a["ctxproxy.manifest.store_state"] == "stored"
    assert "ctxproxy.manifest.store_error" not in a
    assert await admin_status(proxy, f"manifests/{kept}") == 200

    fill(proxy.state.services.store)
    caplog.set_level(logging.WARNING, logger="ctxproxy.filters.manifest")
    raw = await client.messages.with_raw_response.create(model="claude-test-1", max_tokens=5, messages=msgs,
                                                         extra_headers=hdrs)
    assert raw.http_response.status_code == 200  # the answer never waits for the manifest's write
    lost = raw.headers["x-ctx-turn-id"]
    span = await otlp.wait_span(lambda s: attrs(s).get("ctxproxy.turn.id") == lost)
    a = attrs(span)
    assert a["ctxproxy.manifest.stored"] is False and a["ctxproxy.manifest.store_state"] == "failed"
    assert a["ctxproxy.manifest.store_error"] == "StoreError"
    assert span.status.code != 2  # the model call itself went well
    # logged with the turn id and counted, by the time the span was ended
    assert any(lost in r.getMessage() and "not stored" in r.getMessage() for r in caplog.records)
    await asyncio.to_thread(proxy.state.services.telemetry.force_flush, 5000)
    points = await otlp.wait(lambda: otlp.metric_points(FAILURES))
    assert sum(p.as_int for p in points) == 1 and attrs(points[0]) == {"error.type": "StoreError"}
    assert await admin_status(proxy, f"manifests/{lost}") == 404


def test_in_one_failed_write_only_the_manifest_that_failed_is_reported_failed(tmp_path):
    """Two turns' manifests ride one op; the store refuses one of them (a tenant id it
    does not accept): the writer commits the other alone, and only the refused one's
    span says failed. Each span is held until then, and ends at its turn's end."""
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store, linger=30.0)  # holds its ops until flushed: both turns ride one op
    try:
        tel, exporter = in_memory_telemetry()
        p = Pipeline([ManifestFilter(ManifestConfig(), store=store, telemetry=tel)])
        turns = []
        for tenant in ("acme", "acme\tbad"):
            turn, whole = _turn_with_writer(store, writer)
            turn.identity = turn.identity._replace(tenant=tenant)
            p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
            p.run_end(turn)
            turns.append(turn)
        assert exporter.get_finished_spans() == ()  # not exported while the write is under way
        before = time.time_ns()
        writer.flush()
        spans = {s.attributes["ctxproxy.turn.id"]: s for s in exporter.get_finished_spans()}
        good, refused = (spans[t.turn_id] for t in turns)
        assert good.attributes["ctxproxy.manifest.stored"] is True
        assert good.attributes["ctxproxy.manifest.store_state"] == "stored"
        assert good.end_time < before  # its end is the turn's, not the write's
        assert refused.attributes["ctxproxy.manifest.stored"] is False
        assert refused.attributes["ctxproxy.manifest.store_state"] == "failed"
        assert refused.attributes["ctxproxy.manifest.store_error"] == "StoreError"
        assert store.manifests.get("acme", turns[0].turn_id) is not None
    finally:
        writer.close()
        store.close()


async def test_a_write_still_under_way_when_the_wait_ends_is_exported_pending(tmp_path):
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store, linger=30.0)  # nothing commits until flushed
    try:
        tel, exporter = in_memory_telemetry()
        p = Pipeline([ManifestFilter(ManifestConfig(store_wait=0.01), store=store, telemetry=tel)])
        turn, whole = _turn_with_writer(store, writer)
        p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
        p.run_end(turn)
        for _ in range(500):  # the loop's timer ends it
            if exporter.get_finished_spans():
                break
            await asyncio.sleep(0.01)
        (span,) = exporter.get_finished_spans()
        assert span.attributes["ctxproxy.manifest.stored"] is False
        assert span.attributes["ctxproxy.manifest.store_state"] == "pending"
        await asyncio.to_thread(writer.flush)
        assert store.manifests.get("acme", turn.turn_id) is not None
        assert len(exporter.get_finished_spans()) == 1  # ended once
    finally:
        writer.close()
        store.close()


def test_store_wait_zero_exports_at_once_as_pending(tmp_path):
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store, linger=30.0)
    try:
        tel, exporter = in_memory_telemetry()
        p = Pipeline([ManifestFilter(ManifestConfig(store_wait=0), store=store, telemetry=tel)])
        turn, whole = _turn_with_writer(store, writer)
        p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
        p.run_end(turn)
        (span,) = exporter.get_finished_spans()
        assert span.attributes["ctxproxy.manifest.stored"] is False
        assert span.attributes["ctxproxy.manifest.store_state"] == "pending"
    finally:
        writer.close()
        store.close()


def test_store_wait_config():
    assert parse_section(ManifestConfig, None, "filters.manifest").store_wait == 5.0
    assert parse_section(ManifestConfig, {"store_wait": 0}, "filters.manifest").store_wait == 0
    with pytest.raises(ConfigError, match=r"filters\.manifest\.store_wait"):
        parse_section(ManifestConfig, {"store_wait": -1}, "filters.manifest")
