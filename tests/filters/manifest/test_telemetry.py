"""Context Manifests as OpenTelemetry: turns through the official SDKs, spans
and metrics received by a real OTLP/HTTP receiver and decoded with
``opentelemetry.proto``."""
from __future__ import annotations

import asyncio

import orjson
import pytest
from ctxproxy.proxy.ports import free_port

from ctxproxy.filters.base import Filter
from ctxproxy.filters.segments import Segment, offer
from ctxproxy.proxy.scripted_provider import Reply
from manifeststubs import EVIDENCE_MARKER, PLACEHOLDER, RULES_MARKER, SECRET, use_stubs
from otlpreceiver import attrs

from ctxproxy.proxy.telemetry import exporter_names

MARKER = "USER-MESSAGE-MARKER-4b9e"
OUT_MARKER = "MODEL-OUTPUT-MARKER-c21d"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
FULL = '[pipeline]\nrequest = ["identify", "redact", "effects", "prune", "inject", "manifest"]\n'
USAGE = dict(input_tokens=123, output_tokens=45, cache_read_tokens=7, cache_creation_tokens=3)
HEADERS = {"traceparent": TRACEPARENT, "X-Ctx-Session": "sess-telemetry-1"}
CLIENT_KIND = 3  # opentelemetry.proto.trace.v1.Span.SPAN_KIND_CLIENT
INTERNAL_KIND = 1




async def flush(proxy) -> None:
    tel = proxy.state.services.get("telemetry")
    assert tel is not None, "telemetry service missing: OTEL_* not picked up"
    await asyncio.to_thread(tel.force_flush, 5000)


def content(text: str) -> str:
    return f"{text} {MARKER} key={SECRET}"


async def run_turn(proxy, api: str, stream: bool, headers: dict | None = None) -> None:
    headers = HEADERS if headers is None else headers
    if api == "anthropic":
        client = proxy.anthropic()
        kw = dict(model="claude-test-1", max_tokens=100, extra_headers=headers,
                  messages=[{"role": "user", "content": content("hello")}])
        if stream:
            async with client.messages.stream(**kw) as s:
                text = "".join([t async for t in s.text_stream])
        else:
            text = (await client.messages.create(**kw)).content[0].text
    elif api == "chat":
        client = proxy.openai()
        kw = dict(model="gpt-5", extra_headers=headers, messages=[{"role": "system", "content": "Be brief."},
                                                                 {"role": "user", "content": content("hello")}])
        if stream:
            chunks = [c async for c in await client.chat.completions.create(
                **kw, stream=True, stream_options={"include_usage": True})]
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            text = (await client.chat.completions.create(**kw)).choices[0].message.content
    else:
        client = proxy.openai()
        kw = dict(model="gpt-5", extra_headers=headers, instructions="Be brief.",
                  input=[{"role": "user", "content": content("hello")}])
        if stream:
            async with client.responses.stream(**kw) as s:
                text = (await s.get_final_response()).output_text
        else:
            text = (await client.responses.create(**kw)).output_text
    assert OUT_MARKER in text


def chat_span(rx):
    return rx.wait_span(lambda s: s.name.startswith("chat "))


EXPECTED = {  # provider usage as each adapter reports it from the fake's numbers
    "anthropic": ("claude-test-1", "anthropic", {"gen_ai.usage.cache_creation.input_tokens": 3}),
    "chat": ("gpt-5", "openai", {}),
    "responses": ("gpt-5", "openai", {}),
}
# gen_ai.usage.input_tokens includes cached tokens (read and written). OpenAI's
# prompt/input tokens already do; Anthropic's input_tokens is the uncached rest.
INPUT_TOKENS = {"anthropic": 123 + 7 + 3, "chat": 123, "responses": 123}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_turn_span_attributes_children_events(api, stream, otlp, make_proxy, fake, monkeypatch):
    use_stubs(monkeypatch)
    fake.script(Reply.text(f"Fine. {OUT_MARKER} done.", chunk_split=3, **USAGE))
    proxy = await make_proxy(FULL)
    await run_turn(proxy, api, stream)
    await flush(proxy)
    span = await chat_span(otlp)
    model, provider, extra = EXPECTED[api]
    a = attrs(span)

    # the CLIENT span, parented on the agent's traceparent
    assert span.name == f"chat {model}" and span.kind == CLIENT_KIND
    assert span.trace_id.hex() == TRACE_ID and span.parent_span_id.hex() == PARENT_ID
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == provider
    assert a["gen_ai.request.model"] == model and a["gen_ai.response.model"] == model
    host, port = fake.url.removeprefix("http://").split(":")
    assert a["server.address"] == host and a["server.port"] == int(port)
    assert a["gen_ai.request.stream"] is stream
    assert a["gen_ai.response.id"]
    assert a["gen_ai.response.finish_reasons"]
    assert a["gen_ai.usage.input_tokens"] == INPUT_TOKENS[api] and a["gen_ai.usage.output_tokens"] == 45
    assert a["gen_ai.usage.cache_read.input_tokens"] == 7
    for k, v in extra.items():
        assert a[k] == v
    assert a["gen_ai.conversation.id"] == "sess-telemetry-1"
    assert a["gen_ai.conversation.compacted"] is True  # the stub pruned a tool output
    assert "error.type" not in a and span.status.code != 2
    assert len(a["ctxproxy.turn.id"]) == 32

    # manifest summary
    assert a["ctxproxy.manifest.version"] == 1
    assert a["ctxproxy.manifest.segment_count"] == 2 and a["ctxproxy.manifest.dropped_segment_count"] == 1
    assert a["ctxproxy.manifest.segment_kinds"] == ["evidence", "rules"]
    assert a["ctxproxy.manifest.max_sensitivity"] == "confidential"
    assert 0 < a["ctxproxy.manifest.untrusted_tokens"] < a["ctxproxy.manifest.tokens"]
    assert a["ctxproxy.manifest.redaction_count"] == 2  # one in the request, one (stub) on the way back
    assert a["ctxproxy.manifest.pruned_tool_output_count"] == 1
    assert a["ctxproxy.manifest.tool_effect_count"] == 1
    assert a["ctxproxy.manifest.policy_revision"] == "abc123"
    assert len(a["ctxproxy.manifest.sha256"]) == 64 and a["ctxproxy.manifest.stored"] is True
    mj = orjson.loads(a["ctxproxy.manifest.json"])
    assert a["ctxproxy.manifest.truncated"] is False and mj["truncated"] is False
    assert [s["ref"] for s in mj["segments"]] == ["rules:AGENTS.md@abc123", "memory:m42", "memory:big"]
    assert mj["segments"][0]["labels"]["trust"] == "reviewed"

    # one event per item
    events: dict[str, list[dict]] = {}
    for ev in span.events:
        events.setdefault(ev.name, []).append(attrs(ev))
    assert events["ctxproxy.redaction"] == [
        {"ctxproxy.redaction.rule": "stub-api-key", "ctxproxy.redaction.count": 1,
         "ctxproxy.redaction.direction": "request"},
        {"ctxproxy.redaction.rule": "stub-out", "ctxproxy.redaction.count": 1,
         "ctxproxy.redaction.direction": "response"}]
    (eff,) = events["ctxproxy.tool_effect"]
    assert eff["ctxproxy.tool_effect.key"] == "ik-0f3a9c" and eff["ctxproxy.tool_effect.state"] == "completed"
    assert eff["gen_ai.tool.name"] == "create_pr"
    (pr,) = events["ctxproxy.tool_output.pruned"]
    assert pr["ctxproxy.tool_output.ref"] == "ctx://pruned/p1" and pr["ctxproxy.tool_output.tokens_before"] == 900
    segs = {e["ctxproxy.segment.ref"]: e for e in events["ctxproxy.context.segment"]}
    assert segs["rules:AGENTS.md@abc123"]["ctxproxy.segment.status"] == "placed"
    assert segs["rules:AGENTS.md@abc123"]["ctxproxy.segment.freshness.revision"] == "abc123"
    assert segs["memory:m42"]["ctxproxy.segment.trust"] == "untrusted"
    assert segs["memory:big"]["ctxproxy.segment.status"] == "dropped"

    # child spans: each filter and the upstream call, inside the turn span
    children = [s for s in otlp.spans() if s.parent_span_id == span.span_id]
    names = [c.name for c in children]
    for f in ("identify", "redact", "effects", "prune", "inject"):
        assert f"ctxproxy.filter.{f}" in names
    (up,) = [c for c in children if c.name == "POST"]
    assert up.kind == CLIENT_KIND and attrs(up)["http.response.status_code"] == 200
    for c in children:
        assert c.trace_id == span.trace_id
        assert span.start_time_unix_nano <= c.start_time_unix_nano <= c.end_time_unix_nano <= span.end_time_unix_nano
    assert otlp.resources()[0]["service.name"] == "ctxproxy"

    # nothing of the conversation left the proxy: no user text, no secret, no
    # model output, no segment text — in any attribute or event
    blob = otlp.all_bytes()
    for needle in (MARKER, SECRET, PLACEHOLDER, OUT_MARKER, RULES_MARKER, EVIDENCE_MARKER, "Be brief", "hello"):
        assert needle.encode() not in blob, needle
    assert "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a


class _Offer(Filter):
    """Offers a system and a per-turn segment before inject adds its own rules
    (as the effect ledger offers its checkpoint)."""

    name = "prune"

    def __init__(self, config=None):
        pass

    def on_request(self, turn):
        offer(turn, Segment(kind="checkpoint", ref="checkpoint:order@1", text="Goal: ship the fix.",
                            origin="effects", priority=70))
        offer(turn, Segment(kind="evidence", ref="evidence:order-1", text="Earlier finding.", origin="memory",
                            trust="evidence", placement="turn", priority=60))


async def test_rules_dropped_for_the_budget_export_no_policy_revision_and_segments_say_where(
        otlp, make_proxy, fake, monkeypatch, tmp_path):
    """A real inject with a rules bundle, through the proxy: with room, the
    rules go inside the caller's cached prefix and the span names their
    revision; without room (the managed layer is never truncated) the model
    does not see them, and no policy revision is claimed. Segment events say
    where each segment went and in which order the model reads them."""
    from ctxproxy.filters import FILTERS
    from ctxproxy.filters.inject.filter import RulesConfig
    from ctxproxy.filters.inject.rules_bundle import RulesBundle

    monkeypatch.setitem(FILTERS, "prune", "test_telemetry:_Offer")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "policy.md").write_text("# Policy\n" + f"Never push to main. {RULES_MARKER} " * 200)
    revision = RulesBundle(RulesConfig(root=str(tmp_path / "rules"), managed=("policy.md",))).get().revision
    fake.script(Reply.text("ok"), Reply.text("ok"))
    for budget, placed in ((8000, True), (200, False)):
        proxy = await make_proxy('[pipeline]\nrequest = ["identify", "prune", "inject", "manifest"]\n'
                                 f'[filters.inject]\ntoken_budget = {budget}\n[filters.inject.rules]\n'
                                 f'root = "{tmp_path / "rules"}"\nmanaged = ["policy.md"]\nrefresh_seconds = 0\n',
                                 data_dir=str(tmp_path / f"data-{budget}"))
        raw = await proxy.anthropic().messages.with_raw_response.create(
            model="claude-test-1", max_tokens=20, messages=[{"role": "user", "content": "hi"}],
            system=[{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}])
        tid = raw.headers["x-ctx-turn-id"]
        await flush(proxy)
        span = await otlp.wait_span(lambda s: attrs(s).get("ctxproxy.turn.id") == tid)
        a = attrs(span)
        body = fake.last.json
        prompt = orjson.dumps(body["system"]).decode() + orjson.dumps(body["messages"]).decode()
        assert (RULES_MARKER in prompt) is placed
        if placed:
            assert a["ctxproxy.manifest.policy_revision"] == revision
        else:
            assert "ctxproxy.manifest.policy_revision" not in a
        events = [attrs(e) for e in span.events if e.name == "ctxproxy.context.segment"]
        seen = [e for e in events if e["ctxproxy.segment.status"] == "placed"]
        # events come in the order the model reads the segments, dropped ones last
        assert [e.get("ctxproxy.segment.position") for e in events] == \
            list(range(len(seen))) + [None] * (len(events) - len(seen))
        assert [e["ctxproxy.segment.ref"] for e in seen] == \
            sorted((e["ctxproxy.segment.ref"] for e in seen), key=prompt.index)
        where = {e["ctxproxy.segment.kind"]: e.get("ctxproxy.segment.placement") for e in events}
        assert where == {"rules": "system:before_breakpoint" if placed else None,
                         "checkpoint": "system:end", "evidence": "turn"}
        assert [e["ctxproxy.segment.kind"] for e in events] == \
            (["rules", "checkpoint", "evidence"] if placed else ["checkpoint", "evidence", "rules"])
        mj = orjson.loads(a["ctxproxy.manifest.json"])
        assert [(s["ref"], s["placement"], s["position"]) for s in mj["segments"]] == \
            [(e["ctxproxy.segment.ref"], e.get("ctxproxy.segment.placement"), e.get("ctxproxy.segment.position"))
             for e in events]
    assert RULES_MARKER.encode() not in otlp.all_bytes()


async def test_span_without_traceparent_is_a_root_and_derived_session_is_not_exported(otlp, make_proxy, fake):
    fake.script(Reply.text(f"ok {OUT_MARKER}"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    await run_turn(proxy, "chat", False, headers={})
    await flush(proxy)
    span = await chat_span(otlp)
    a = attrs(span)
    assert span.parent_span_id == b""
    assert "gen_ai.conversation.id" not in a  # a fingerprint is not the agent's conversation id
    assert a["ctxproxy.identity.source"] == "new"  # a conversation's first request
    assert a["gen_ai.conversation.compacted"] is False
    assert a["ctxproxy.manifest.segment_count"] == 0 and "ctxproxy.manifest.max_sensitivity" not in a


async def test_upstream_error_sets_error_type_and_status(otlp, make_proxy, fake):
    fake.script(Reply.error(500, "provider fell over"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    import openai

    with pytest.raises(openai.InternalServerError):
        await proxy.openai().chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}])
    await flush(proxy)
    span = await chat_span(otlp)
    a = attrs(span)
    assert a["error.type"] == "500" and span.status.code == 2  # STATUS_CODE_ERROR
    (up,) = [s for s in otlp.spans() if s.parent_span_id == span.span_id and s.name == "POST"]
    assert attrs(up)["http.response.status_code"] == 500


async def test_stream_cut_midway_is_an_error_span(otlp, make_proxy, fake):
    import anthropic

    fake.script(Reply.text("a b c d e f g h i j k l", drop_after_events=4, **USAGE))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    with pytest.raises(anthropic.APIError):
        async with proxy.anthropic().messages.stream(model="claude-test-1", max_tokens=10,
                                                     messages=[{"role": "user", "content": "x"}]) as s:
            async for _ in s.text_stream:
                pass
    await flush(proxy)
    a = attrs(await chat_span(otlp))
    assert a["error.type"] == "upstream_dropped"
    assert a["gen_ai.usage.input_tokens"] == INPUT_TOKENS["anthropic"]  # message_start's usage came before the cut


async def test_degraded_filter_is_flagged(otlp, make_proxy, fake, monkeypatch):
    use_stubs(monkeypatch, "boom")
    fake.script(Reply.text(f"ok {OUT_MARKER}"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "boom", "manifest"]\n')
    await run_turn(proxy, "anthropic", True, headers={})
    await flush(proxy)
    span = await chat_span(otlp)
    assert attrs(span)["ctxproxy.degraded"] == ["boom"]
    (child,) = [s for s in otlp.spans() if s.name == "ctxproxy.filter.boom"]
    assert child.status.code == 2


async def test_metrics_exported(otlp, make_proxy, fake, monkeypatch):
    use_stubs(monkeypatch)
    fake.script(*[Reply.text(f"ok {OUT_MARKER}", **USAGE) for _ in range(3)])
    proxy = await make_proxy(FULL)
    for api, stream in (("anthropic", True), ("chat", False), ("responses", True)):
        await run_turn(proxy, api, stream)
    await flush(proxy)
    await otlp.wait(lambda: "ctxproxy.turns" in otlp.metric_names())
    assert sum(p.as_int for p in otlp.metric_points("ctxproxy.turns")) == 3
    usage = otlp.metric_points("gen_ai.client.token.usage")
    by_type: dict[str, int] = {}
    for p in usage:
        t = attrs(p)["gen_ai.token.type"]
        by_type[t] = by_type.get(t, 0) + int(p.sum)
    assert by_type == {"input": sum(INPUT_TOKENS.values()), "output": 3 * 45}
    assert sum(p.count for p in otlp.metric_points("gen_ai.client.operation.duration")) == 3
    assert sum(p.as_int for p in otlp.metric_points("ctxproxy.context.injected_tokens")) > 0
    assert sum(p.as_int for p in otlp.metric_points("ctxproxy.tool_output.pruned_tokens")) == 3 * 880
    reds: dict[str, int] = {}
    for p in otlp.metric_points("ctxproxy.redactions"):  # one point per rule, direction and route
        rule = attrs(p)["ctxproxy.redaction.rule"]
        reds[rule] = reds.get(rule, 0) + p.as_int
    assert reds == {"stub-api-key": 3, "stub-out": 3}
    filters = {attrs(p)["ctxproxy.filter.name"]: p.count for p in otlp.metric_points("ctxproxy.filter.duration")}
    assert filters["identify"] == 3 and filters["inject"] == 3
    blob = otlp.all_bytes()
    for needle in (MARKER, SECRET, OUT_MARKER):
        assert needle.encode() not in blob


async def test_degraded_turns_metric(otlp, make_proxy, fake, monkeypatch):
    use_stubs(monkeypatch, "boom")
    fake.script(Reply.text("ok"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "boom", "manifest"]\n')
    await proxy.openai().chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}])
    await flush(proxy)
    await otlp.wait(lambda: otlp.metric_points("ctxproxy.turns.degraded"))
    (p,) = otlp.metric_points("ctxproxy.turns.degraded")
    assert p.as_int == 1 and attrs(p)["ctxproxy.degraded"] == "boom"


async def test_content_capture_is_opt_in_and_redacted(otlp, make_proxy, fake, monkeypatch):
    use_stubs(monkeypatch)
    fake.script(Reply.text(f"Fine. {OUT_MARKER}", chunk_split=2), Reply.text(f"Fine. {OUT_MARKER}"))
    proxy = await make_proxy(FULL + "[filters.manifest]\ncapture_content = true\n")
    await run_turn(proxy, "anthropic", True)
    await flush(proxy)
    a = attrs(await chat_span(otlp))
    inp = orjson.loads(a["gen_ai.input.messages"])
    assert inp[0]["role"] == "user"
    text = " ".join(p["content"] for m in inp for p in m["parts"])
    assert MARKER in text and PLACEHOLDER in text  # the redacted request, as forwarded
    out = orjson.loads(a["gen_ai.output.messages"])
    assert out[0]["role"] == "assistant" and OUT_MARKER in out[0]["parts"][0]["content"]
    assert a["ctxproxy.content.truncated"] is False
    assert SECRET.encode() not in otlp.all_bytes()  # never the secret itself


async def test_content_capture_withheld_without_redact(otlp, make_proxy, fake):
    fake.script(Reply.text(f"Fine. {OUT_MARKER}"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n'
                             "[filters.manifest]\ncapture_content = true\n")
    await run_turn(proxy, "chat", False)
    await flush(proxy)
    a = attrs(await chat_span(otlp))
    assert a["ctxproxy.content.withheld"] == "redact_not_run"
    assert "gen_ai.input.messages" not in a
    assert MARKER.encode() not in otlp.all_bytes() and SECRET.encode() not in otlp.all_bytes()


async def test_sampled_out_parent_exports_nothing(otlp, make_proxy, fake):
    fake.script(Reply.text("ok"), Reply.text("ok"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    client = proxy.openai()
    await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}],
                                         extra_headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-00"})
    await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "y"}])
    await flush(proxy)
    await chat_span(otlp)
    assert all(s.trace_id.hex() != TRACE_ID for s in otlp.spans())


async def test_receiver_down_never_fails_a_turn(make_proxy, fake, monkeypatch):
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "100")
    use_stubs(monkeypatch)
    fake.script(*[Reply.text(f"ok {OUT_MARKER}") for _ in range(6)])
    proxy = await make_proxy(FULL)
    assert proxy.state.services.get("telemetry") is not None
    for api in ("anthropic", "chat", "responses"):
        for stream in (False, True):
            await run_turn(proxy, api, stream)
            await asyncio.sleep(0.05)  # let the exporter thread fail meanwhile
    store = proxy.settled_store()  # every manifest committed (the writer commits in groups)
    assert len(store.manifests.list("default", session="sess-telemetry-1")) == 6
    # Shutdown with a dead collector ends: the exporters give up after their timeout
    # (a bound on a hang, far above it, not a measurement).
    await asyncio.wait_for(proxy.runner.cleanup(), 120)


def test_exporter_selection_from_env():
    assert exporter_names("traces", {}) == []
    assert exporter_names("traces", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}) == ["otlp"]
    assert exporter_names("metrics", {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x/v1/traces"}) == []
    assert exporter_names("traces", {"OTEL_TRACES_EXPORTER": "console"}) == ["console"]
    assert exporter_names("traces", {"OTEL_TRACES_EXPORTER": "otlp,console,bogus"}) == ["otlp", "console"]
    assert exporter_names("traces", {"OTEL_TRACES_EXPORTER": "none",
                                     "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}) == []
    assert exporter_names("traces", {"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}) == []


async def test_disabled_sdk_means_no_telemetry_service(make_proxy, monkeypatch):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    proxy = await make_proxy()
    assert "telemetry" not in proxy.state.services


async def test_service_name_from_env(otlp, make_proxy, fake, monkeypatch):
    monkeypatch.setenv("OTEL_SERVICE_NAME", "agent-gateway")
    fake.script(Reply.text("ok"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    await proxy.openai().chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "x"}])
    await flush(proxy)
    await chat_span(otlp)
    assert otlp.resources()[0]["service.name"] == "agent-gateway"


async def test_responses_over_websocket(otlp, make_proxy, fake):
    import json

    import aiohttp

    fake.script(Reply.text(f"ok {OUT_MARKER}", **USAGE))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    url = proxy.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url, headers={"authorization": "Bearer sk-ws", "session-id": "codex-ws-1",
                                              "traceparent": TRACEPARENT}) as ws:
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-5",
                                          "input": [{"role": "user", "content": content("hi")}]}))
            async for msg in ws:
                if json.loads(msg.data)["type"] in ("response.completed", "response.failed", "error"):
                    break
    await flush(proxy)
    span = await chat_span(otlp)
    a = attrs(span)
    assert span.trace_id.hex() == TRACE_ID
    assert a["gen_ai.request.stream"] is True and a["gen_ai.conversation.id"] == "codex-ws-1"
    assert a["gen_ai.usage.input_tokens"] == 123 and a["gen_ai.usage.output_tokens"] == 45
    assert a["gen_ai.response.finish_reasons"] == ["completed"] and a["gen_ai.response.id"]
    assert MARKER.encode() not in otlp.all_bytes()


async def test_recall_child_span_counts_and_items_without_text(otlp, make_proxy, fake):
    """The ``ctxproxy.recall`` child span: candidate and result counts, and each
    recalled item's id, kind, scope, score parts and labels — the memory's text
    in no span and not in the stored manifest."""
    from memhelp import put_memory

    canary = "CANARY-RECALL-7c41d2"
    fake.script(Reply.text(f"ok {OUT_MARKER}"))
    proxy = await make_proxy()
    store = proxy.state.services["store"]
    rec = put_memory(store, "acme", f"The staging database is pg-stage-7 on port 6543 ({canary}).", kind="fact",
                     user="alice")
    put_memory(store, "acme", f"The staging cache is redis on port 6380 ({canary}-2).", kind="fact", user="alice")
    client = proxy.anthropic(default_headers={"X-Ctx-Tenant": "acme", "X-Ctx-User": "alice",
                                              "X-Ctx-Session": "s-span"})
    await client.messages.create(model="claude-test-1", max_tokens=32, messages=[
        {"role": "user", "content": "Which port does the staging database listen on?"}])
    assert canary in orjson.dumps(fake.last.json).decode()  # it was recalled and reached the model
    await flush(proxy)
    turn = await chat_span(otlp)
    span = await otlp.wait_span(lambda s: s.name == "ctxproxy.recall")
    assert span.parent_span_id == turn.span_id and span.trace_id == turn.trace_id
    a = attrs(span)
    assert a["ctxproxy.recall.status"] == "recalled"
    # both are candidates; only the database's port matches what was asked (the cache shares "staging port")
    assert a["ctxproxy.recall.candidates"] == 2 and a["ctxproxy.recall.results"] == 1
    items = orjson.loads(a["ctxproxy.recall.items"])
    assert items[0]["id"] == rec.memory_id and items[0]["kind"] == "fact" and items[0]["scope"] == "user"
    assert {"lexical", "decay", "mmr", "match"} <= set(items[0]["parts"]) and items[0]["parts"]["lexical"] > 0
    assert items[0]["labels"]["sensitivity"] == "internal" and items[0]["labels"]["observed_at"]
    manifest = proxy.settled_store().manifests.list("acme", session="s-span")[-1].data
    assert [i["id"] for i in manifest["recall"]["items"]] == [i["id"] for i in items]
    for needle in (canary, "pg-stage-7", "redis on port"):
        assert needle.encode() not in otlp.all_bytes(), needle
        assert needle not in orjson.dumps(manifest).decode(), needle
