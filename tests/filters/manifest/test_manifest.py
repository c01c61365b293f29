"""The manifest filter: config, hooks on canned exchanges for the three wire
formats (whole JSON and streams split across chunks), the stored manifest,
the admin API and ``ctxproxy manifest show``."""
from __future__ import annotations

import gc
import json
import threading
import weakref

import aiohttp
import orjson
import pytest
from multidict import CIMultiDict
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ctxproxy.proxy.scripted_provider import _RENDERERS, Record, Reply, _sse
from manifeststubs import EVIDENCE_MARKER, PLACEHOLDER, RULES_MARKER, SECRET, use_stubs

from ctxproxy.config import ConfigError, parse_section
from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.base import Identity
from ctxproxy.filters.services import Services
from ctxproxy.filters.inject.filter import InjectConfig, InjectFilter, RulesConfig
from ctxproxy.filters.manifest.filter import (
    TURN_INDEX_TENANT,
    ManifestConfig,
    ManifestFilter,
    build_manifest,
    manifest_json,
    manifest_sha256,
    _Seen,
)
from ctxproxy.filters.inject.rules_bundle import RulesBundle
from ctxproxy.filters.segments import Segment, offer
from ctxproxy.filters.manifest.export import Telemetry
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.adapters.base import _UNSET
from ctxproxy.proxy.cli.main import main as cli_main
from ctxproxy.proxy.sse import SSEDecoder
from ctxproxy.store import open_store
from ctxproxy.store.writer import BackgroundWriter

MARKER = "USER-MESSAGE-MARKER-4b9e"
OUT_MARKER = "MODEL-OUTPUT-MARKER-c21d"
TOKENS = TokenCounter()
PATHS = {"anthropic": "/v1/messages", "chat": "/v1/chat/completions", "responses": "/v1/responses"}
MODELS = {"anthropic": "claude-test-1", "chat": "gpt-5", "responses": "gpt-5"}
USAGE = dict(input_tokens=321, output_tokens=54, cache_read_tokens=11, cache_creation_tokens=5)


@pytest.fixture(autouse=True)
def _sdk_enabled(monkeypatch):
    # the SDK's own switch (conftest turns it off) would make the in-memory tracers no-ops;
    # no OTEL_EXPORTER_* is set, so a proxy here still gets no telemetry service
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)


# -- config ------------------------------------------------------------------------

def test_config_defaults_and_errors():
    cfg = parse_section(ManifestConfig, None, "filters.manifest")
    assert cfg.store and cfg.export and not cfg.capture_content and cfg.json_max_chars == 8192
    cfg = parse_section(ManifestConfig, {"capture_content": True, "provider_names": {"openrouter": "openrouter"}},
                        "filters.manifest")
    assert cfg.capture_content and cfg.provider_names["openrouter"] == "openrouter"
    with pytest.raises(ConfigError, match=r"filters\.manifest\.json_max_chars"):
        parse_section(ManifestConfig, {"json_max_chars": 10}, "filters.manifest")
    with pytest.raises(ConfigError, match=r"filters\.manifest\.capture: unknown key"):
        parse_section(ManifestConfig, {"capture": True}, "filters.manifest")
    with pytest.raises(ConfigError, match=r"filters\.manifest\.store: expected true or false"):
        parse_section(ManifestConfig, {"store": "yes"}, "filters.manifest")


def test_manifest_section_in_a_config_file(tmp_path):
    from ctxproxy.config import load_config
    from ctxproxy.filters import filter_configs

    p = tmp_path / "c.toml"
    p.write_text('[pipeline]\nrequest = ["identify", "manifest"]\n[filters.manifest]\nmax_span_events = 16\n')
    assert filter_configs(load_config(p))["manifest"].max_span_events == 16


# -- canned exchanges ------------------------------------------------------------------

def request_body(api: str, stream: bool) -> dict:
    text = f"hello {MARKER}"
    if api == "responses":
        body = {"model": MODELS[api], "input": [{"role": "user", "content": text}], "instructions": "Be brief."}
    else:
        body = {"model": MODELS[api], "max_tokens": 50, "messages": [{"role": "user", "content": text}]}
    if stream:
        body["stream"] = True
        if api == "chat":
            body["stream_options"] = {"include_usage": True}
    return body


def canned(api: str, req: dict, reply: Reply) -> tuple[bytes, bytes]:
    """(whole JSON body, SSE stream) as the fake provider renders ``reply``."""
    raw = orjson.dumps(req)
    r = _RENDERERS[api](reply, req, Record("POST", PATHS[api], "", CIMultiDict(), raw, req, api))
    return orjson.dumps(r.body()), b"".join(_sse(ev, r.named_events) for ev in r.events())


def in_memory_telemetry() -> tuple[Telemetry, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return Telemetry(tp), exporter


def make_turn(api: str, body: dict, headers: dict | None = None) -> Turn:
    t = Turn(api=api, route="r1", path=PATHS[api], headers=CIMultiDict(headers or {}),
             request=ADAPTERS[api].parse_request(orjson.dumps(body)), tokens=TOKENS)
    t.identity = Identity(tenant="acme", user="u1", session="s1", task="s1", source="header", supplied=True)
    return t


def relay(pipeline: Pipeline, turn: Turn, api: str, stream: bytes, chunk: int) -> bytes:
    """Feed an SSE body through the pipeline in ``chunk``-byte pieces, as the relay does."""
    state, dec, out = ADAPTERS[api].stream(), SSEDecoder(), []
    for i in range(0, len(stream), chunk):
        for raw in dec.decode(stream[i:i + chunk]):
            for ev in pipeline.run_event(turn, state.event(raw.name, raw.raw, raw.data)):
                out.append(ev.to_bytes())
    return b"".join(out)


EXPECTED_USAGE = {  # input counts cached tokens too (GenAI conventions); Anthropic reports them apart
    "anthropic": {"input": 321 + 11 + 5, "output": 54, "cache_read": 11, "cache_creation": 5},
    "chat": {"input": 321, "output": 54, "cache_read": 11, "cache_creation": None},
    "responses": {"input": 321, "output": 54, "cache_read": 11, "cache_creation": None},
}
FINISH = {"anthropic": ["end_turn"], "chat": ["stop"], "responses": ["completed"]}


@pytest.mark.parametrize("chunk", [0, 1, 7, 4096], ids=["json", "split1", "split7", "whole"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
def test_hooks_on_canned_exchange(api, chunk, tmp_path):
    stream = chunk > 0
    body = request_body(api, stream)
    whole, sse = canned(api, body, Reply.text(f"Fine. {OUT_MARKER}", **USAGE))
    store = open_store(tmp_path / "store")
    tel, exporter = in_memory_telemetry()
    f = ManifestFilter(ManifestConfig(), store=store, telemetry=tel)
    p = Pipeline([f])
    turn = make_turn(api, body)
    turn.status = 200
    if stream:
        assert relay(p, turn, api, sse, chunk) == sse  # the manifest never changes a byte
    else:
        view = ADAPTERS[api].parse_response(whole)
        p.run_response(turn, view)
        assert view.to_bytes() == whole
    p.run_end(turn)

    m = store.manifests.get("acme", turn.turn_id).data
    assert m["tokens"] == EXPECTED_USAGE[api]
    assert m["model"] == m["response_model"] == MODELS[api]
    assert m["response_id"] and m["finish_reasons"] == FINISH[api]
    assert m["stream"] is stream and m["status"] == 200 and m["error"] is None
    assert m["session_id"] == "s1" and m["tenant"] == "acme" and m["api"] == api
    assert m["sha256"] == manifest_sha256(m)
    assert (m["ttfc_ms"] is not None) is stream
    pointer = store.manifests.get(TURN_INDEX_TENANT, turn.turn_id)
    assert pointer.data == {"tenant": "acme"}
    assert (pointer.session, pointer.subject) == (None, None)  # erasure finds it by its manifest's id
    assert [d.id for d in store.manifests.list("acme", session="s1")] == [turn.turn_id]
    (span,) = exporter.get_finished_spans()
    assert span.name == f"chat {MODELS[api]}"
    assert span.attributes["gen_ai.usage.input_tokens"] == EXPECTED_USAGE[api]["input"]
    assert span.attributes["gen_ai.conversation.id"] == "s1"
    dumped = orjson.dumps(m) + repr(span.to_json()).encode()
    assert MARKER.encode() not in dumped and OUT_MARKER.encode() not in dumped
    store.close()


def test_response_events_are_parsed_only_when_they_can_carry_usage():
    body = request_body("anthropic", True)
    _, sse = canned("anthropic", body, Reply.text("x" * 200, **USAGE))
    state, dec = ADAPTERS["anthropic"].stream(), SSEDecoder()
    f = ManifestFilter(ManifestConfig(store=False, export=False))
    turn = make_turn("anthropic", body)
    events = [state.event(r.name, r.raw, r.data) for r in dec.decode(sse)]
    for ev in events:
        f.on_response_event(turn, ev)
    parsed = {ev.name for ev in events if ev._data is not _UNSET}
    assert parsed == {"message_start", "message_delta"}
    assert turn.state["manifest"].output == 54


class _Counted:
    """A response view or event that counts how often its usage and ids are read."""

    def __init__(self, view, calls=None):
        self.view, self.reads, self.calls = view, 0, calls if calls is not None else []

    def __getattr__(self, name):
        if name in ("usage", "response_id", "response_model", "finish_reasons"):
            self.reads += 1
            self.calls.append(name)
        return getattr(self.view, name)


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
def test_a_whole_answer_is_read_at_the_turns_end_not_before_the_client_has_it(api):
    body = request_body(api, False)
    whole, _ = canned(api, body, Reply.text("an answer", **USAGE))
    f = ManifestFilter(ManifestConfig(store=False, export=False))
    turn = make_turn(api, body)
    view = _Counted(ADAPTERS[api].parse_response(whole))
    f.on_response(turn, view)
    assert view.reads == 0  # the client gets its answer without waiting for this
    f.on_response_end(turn)
    m = turn.state["manifest"].doc
    assert view.reads > 0 and m["tokens"]["output"] == 54 and m["response_id"] and m["finish_reasons"]
    assert m["response_model"]


def test_two_whole_answers_in_one_turn_keep_the_first_id_and_every_finish_reason():
    body = request_body("chat", False)
    f = ManifestFilter(ManifestConfig(store=False, export=False))
    turn = make_turn("chat", body)
    first = orjson.loads(canned("chat", body, Reply.text("one", **USAGE))[0])
    second = dict(first, id="chatcmpl-second", usage=dict(first["usage"], completion_tokens=7))
    second["choices"] = [dict(first["choices"][0], finish_reason="length")]
    for doc in (first, second):
        f.on_response(turn, ADAPTERS["chat"].parse_response(orjson.dumps(doc)))
    f.on_response_end(turn)
    m = turn.state["manifest"].doc
    assert m["response_id"] == first["id"]
    assert m["finish_reasons"] == [first["choices"][0]["finish_reason"], "length"]
    assert m["tokens"]["output"] == 7  # the last answer's counts, as before


def test_a_chat_stream_reads_its_id_and_model_once():
    body = request_body("chat", True)
    _, sse = canned("chat", body, Reply.text("x" * 200, **USAGE))
    state, dec = ADAPTERS["chat"].stream(), SSEDecoder()
    f = ManifestFilter(ManifestConfig(store=False, export=False))
    turn = make_turn("chat", body)
    events = [state.event(r.name, r.raw, r.data) for r in dec.decode(sse)]
    calls = []
    for ev in events:
        f.on_response_event(turn, _Counted(ev, calls))
    assert len(events) > 5 and calls.count("response_id") == 1 and calls.count("response_model") == 1
    f.on_response_end(turn)
    m = turn.state["manifest"].doc
    assert m["response_id"] == orjson.loads(events[0].raw.split(b"data: ", 1)[1])["id"]
    assert m["finish_reasons"] == ["stop"] and m["tokens"]["output"] == 54


def test_segments_and_other_filters_records():
    body = request_body("chat", False)
    turn = make_turn("chat", body)
    turn.segments = [Segment(kind="rules", ref="rules:a@1", text=f"secret rules {RULES_MARKER}", origin="AGENTS.md",
                             trust="reviewed", freshness={"revision": "r7", "observed_at": 1.5}, tokens=40,
                             status="placed"),
                     Segment(kind="evidence", ref="mem:1", text=EVIDENCE_MARKER, origin="memory", trust="untrusted",
                             sensitivity="secret", tokens=10, status="truncated", reason="50 > 10"),
                     Segment(kind="memory", ref="mem:2", text="x", origin="memory")]  # never placed
    reports = {  # what the filters report (``report``), by filter
        "redact": {"redaction_profile": "strict", "redactions": {"aws-key": 2, "bad": "x", "zero": 0}},
        "prune": {"pruned": [{"ref": "ctx://pruned/9", "tool": "bash", "tokens_before": 500, "tokens_after": 12}]},
        "effects": {"effects": [{"key": "k", "call_id": "c", "tool": "t", "state": "pending", "side_effect": True,
                                 "duplicate": True}], "checkpoint": "cp:1", "client_compacted": True},
        "inject": {"token_budget": 8000, "tokens_injected": 50},
    }
    m = build_manifest(turn, _Seen(), "openai", ("api.openai.com", 443), turn.started_ns + 5_000_000, reports)
    assert [s["status"] for s in m["segments"]] == ["placed", "truncated", "dropped"]
    assert m["segments"][2]["reason"] == "not placed (inject did not run)"
    assert m["segments"][0]["labels"] == {"origin": "AGENTS.md", "scope": "session", "trust": "reviewed",
                                          "freshness": {"revision": "r7", "observed_at": 1.5},
                                          "sensitivity": "internal",
                                          "budget": {"tokens": 40, "priority": 50, "max_tokens": None}}
    assert m["redactions"] == {"aws-key": 2} and m["redaction_profile"] == "strict"
    assert m["pruned"] == [{"ref": "ctx://pruned/9", "tool": "bash", "tokens_before": 500, "tokens_after": 12}]
    assert m["effects"][0]["state"] == "pending" and m["effects"][0]["duplicate"] is True
    assert m["checkpoint"] == "cp:1" and m["compacted"] and m["client_compacted"]
    assert m["token_budget"] == 8000 and m["tokens_injected"] == 50 and m["policy_revision"] == "r7"
    assert m["duration_ms"] == 5.0
    text = orjson.dumps(m)
    assert RULES_MARKER.encode() not in text and EVIDENCE_MARKER.encode() not in text


def sent_order(body: dict, refs: list[str]) -> list[str]:
    """``refs`` in the order the model reads them in a forwarded Anthropic body
    (system before messages, whatever order the JSON keys came in)."""
    prompt = json.dumps(body.get("system")) + json.dumps(body["messages"])
    return sorted(refs, key=prompt.index)


def test_placement_and_position_are_where_inject_put_each_segment(tmp_path):
    """A real inject on a real store: offered evidence, memory, rules; sent
    rules, memory (the stable block, inside the caller's cached prefix), then
    the evidence at the tail. Once the session's stable bytes changed
    (stable_max_changes=1) the stable block goes after the breakpoint, though
    its producers still ask for the cached prefix."""
    store = open_store(tmp_path / "store")
    cfg = InjectConfig(stable_max_changes=1)

    def turn_with(rules_text: str) -> tuple[Turn, dict, dict]:
        turn = make_turn("anthropic", {
            "model": "claude-test-1", "max_tokens": 50,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": "hi"}]})
        offer(turn, Segment(kind="evidence", ref="evidence:e1", text="Earlier finding.", origin="memory",
                            trust="evidence", placement="turn"))
        offer(turn, Segment(kind="memory", ref="memory:snap", text="Prefers uv.", origin="memory", stable=True))
        offer(turn, Segment(kind="rules", ref="rules:r@1", text=rules_text, origin="AGENTS.md", trust="reviewed",
                            stable=True, priority=90))
        p = Pipeline([InjectFilter(cfg, store), ManifestFilter(ManifestConfig(export=False), store=store)])
        p.run_request(turn)
        p.run_end(turn)
        return turn, turn.state["manifest"].doc, orjson.loads(turn.request.to_bytes())

    refs = ["rules:r@1", "memory:snap", "evidence:e1"]
    for rules_text, stable_where in (("Always run tests.", "system:before_breakpoint"),
                                     ("Always run tests twice.", "system:end")):
        turn, m, body = turn_with(rules_text)
        assert sent_order(body, refs) == refs
        assert [(s["ref"], s["position"], s["placement"], s["requested_placement"]) for s in m["segments"]] == [
            ("rules:r@1", 0, stable_where, "system"), ("memory:snap", 1, stable_where, "system"),
            ("evidence:e1", 2, "turn", "turn")]
        stored = store.manifests.get("acme", turn.turn_id).data
        assert [s["ref"] for s in stored["segments"]] == refs
    assert turn.state["inject"].placement["demoted"] is True

    # an inject that records where each group went but not each segment's `where`
    for seg in turn.segments:
        seg.where = ""
    again = build_manifest(turn, _Seen(), "anthropic", (None, None), turn.started_ns)
    assert [(s["ref"], s["position"], s["placement"]) for s in again["segments"]] == \
        [(s["ref"], s["position"], s["placement"]) for s in m["segments"]]
    store.close()


def test_policy_revision_only_from_rules_the_model_saw(tmp_path):
    """The rules bundle loads, but its managed layer (never truncated) does not
    fit the budget: the request goes without it, and so does the manifest."""
    (tmp_path / "policy.md").write_text("# Policy\n" + "Never push to main. " * 300)
    rules = RulesConfig(root=str(tmp_path), managed=("policy.md",), refresh_seconds=0)
    revision = RulesBundle(rules).get().revision
    for budget, placed in ((100, False), (8000, True)):
        turn = make_turn("chat", request_body("chat", False))
        p = Pipeline([InjectFilter(InjectConfig(token_budget=budget, rules=rules)),
                      ManifestFilter(ManifestConfig(store=False, export=False))])
        p.run_request(turn)
        p.run_end(turn)
        m = turn.state["manifest"].doc
        (seg,) = m["segments"]
        assert seg["kind"] == "rules" and (seg["status"] == "placed") is placed
        assert ("Never push" in turn.request.to_bytes().decode()) is placed
        assert m["policy_revision"] == (revision if placed else None)


def test_hostile_records_from_other_filters_do_not_break_the_manifest():
    turn = make_turn("chat", request_body("chat", False))
    turn.segments = "nope"
    reports = {"redact": {"redactions": ["x"]}, "prune": {"pruned": [1, None, {"ref": 5}]},
               "effects": {"effects": "x", "checkpoint": {"a": 1}}, "inject": {"token_budget": "8000"}, "odd": 7}
    turn.placement = 3
    turn.spans.append(("broken",))  # malformed span records are skipped
    m = build_manifest(turn, _Seen(), "openai", (None, None), turn.started_ns, reports)
    assert m["segments"] == [] and m["redactions"] == {} and len(m["pruned"]) == 3 and m["effects"] == []
    assert m["token_budget"] is None
    orjson.dumps(m)


def test_manifest_json_is_capped_valid_and_flagged():
    turn = make_turn("chat", request_body("chat", False))
    turn.segments = [Segment(kind="evidence", ref=f"mem:{i:04d}", text="t", origin="memory", tokens=3,
                             status="placed") for i in range(400)]
    m = build_manifest(turn, _Seen(), "openai", (None, None), turn.started_ns)
    text, truncated = manifest_json(m, 2000)
    assert truncated and len(text) <= 2000
    doc = json.loads(text)
    assert doc["truncated"] is True and doc["omitted"] + len(doc["segments"]) == 400
    assert doc["segments"][0]["ref"] == "mem:0000"  # the first ones are kept
    small, flag = manifest_json(build_manifest(make_turn("chat", request_body("chat", False)), _Seen(), "openai",
                                               (None, None), 0), 2000)
    assert not flag and json.loads(small)["truncated"] is False


def test_span_events_are_capped():
    tel, exporter = in_memory_telemetry()
    f = ManifestFilter(ManifestConfig(store=False, max_span_events=5), telemetry=tel)
    turn = make_turn("chat", request_body("chat", False))
    turn.segments = [Segment(kind="evidence", ref=f"m{i}", text="t", origin="o", tokens=1, status="placed")
                     for i in range(20)]
    f.on_response_end(turn)
    (span,) = exporter.get_finished_spans()
    assert len(span.events) == 5 and span.attributes["ctxproxy.manifest.events_dropped"] == 15


class _BrokenStore:
    def batch(self):
        raise RuntimeError("disk on fire")


class _BrokenTelemetry:
    metrics = None

    @property
    def tracer(self):
        raise RuntimeError("exporter exploded")


def test_store_and_telemetry_failures_never_raise():
    f = ManifestFilter(ManifestConfig(), store=_BrokenStore(), telemetry=_BrokenTelemetry())
    turn = make_turn("anthropic", request_body("anthropic", False))
    Pipeline([f]).run_end(turn)
    assert turn.degraded == ["manifest"]


def test_store_off_and_export_off():
    tel, exporter = in_memory_telemetry()
    f = ManifestFilter(ManifestConfig(store=False, export=False), store=_BrokenStore(), telemetry=tel)
    turn = make_turn("anthropic", request_body("anthropic", False))
    f.on_response_end(turn)
    assert exporter.get_finished_spans() == () and turn.degraded == []
    assert turn.state["manifest"].doc["turn_id"] == turn.turn_id


def _built_where(monkeypatch) -> list[str]:
    """The names of the threads that build a manifest, in order."""
    from ctxproxy.filters.manifest import filter as manifest_module

    where: list[str] = []
    real = manifest_module.build_manifest

    def build(*args, **kwargs):
        where.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(manifest_module, "build_manifest", build)
    return where


def _turn_with_writer(store, writer, api: str = "anthropic") -> tuple[Turn, bytes]:
    body = request_body(api, False)
    whole, _ = canned(api, body, Reply.text(f"Fine. {OUT_MARKER}", **USAGE))
    turn = make_turn(api, body)
    turn.services = Services.of({"store": store, "writer": writer})
    turn.status = 200
    return turn, whole


def test_without_an_exporter_the_writer_builds_the_manifest_and_the_request_is_not_kept(tmp_path, monkeypatch):
    where = _built_where(monkeypatch)
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store, linger=30.0)  # holds its ops until flushed
    try:
        f = ManifestFilter(ManifestConfig(), store=store, telemetry=None)
        p = Pipeline([f])
        turn, whole = _turn_with_writer(store, writer)
        p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
        p.run_end(turn)
        seen, turn_id, request = turn.state["manifest"], turn.turn_id, weakref.ref(turn.request)
        del turn
        gc.collect()
        assert request() is None  # what the manifest is built of is not the turn's request body
        assert threading.current_thread().name not in where  # nothing built at the turn's end
        writer.flush()
        assert where == ["ctxproxy-store-writer"]  # built once, by the writer (lingering, or in its commit)
        stored = store.manifests.get("acme", turn_id).data
        assert stored == seen.doc and where == ["ctxproxy-store-writer"]
        assert stored["tokens"] == EXPECTED_USAGE["anthropic"] and stored["response_id"]
        assert stored["model"] == MODELS["anthropic"] and stored["stream"] is False and stored["status"] == 200
        assert stored["sha256"] == manifest_sha256(stored)
        assert store.manifests.get(TURN_INDEX_TENANT, turn_id).data == {"tenant": "acme"}
    finally:
        writer.close()
        store.close()


def test_a_manifest_built_by_the_writer_is_the_one_built_at_the_turns_end(tmp_path):
    """The same turn's manifest, built by the writer and built on the loop (an exporter
    needs it at once), differs in nothing but its turn id and its digest."""
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store)
    try:
        docs, answer = [], None
        for telemetry in (None, in_memory_telemetry()[0]):
            turn, whole = _turn_with_writer(store, writer)
            answer = answer or whole  # one answer for both (its id is random)
            turn.turn_id = "t-" + ("writer" if telemetry is None else "loop")
            turn.started_ns = 1_000_000
            turn.spans.append(("upstream", 1_000_100, 1_000_900))
            turn.timings_ms["identify"] = 0.0123456
            p = Pipeline([ManifestFilter(ManifestConfig(), store=store, telemetry=telemetry)])
            p.run_response(turn, ADAPTERS["anthropic"].parse_response(answer))
            p.run_end(turn)
            writer.flush()
            docs.append(store.manifests.get("acme", turn.turn_id).data)
        for d in docs:  # what differs between two runs of one turn: its id, its clock readings
            assert set(d["timings_ms"]) == {"identify", "manifest", "upstream"}
            del d["turn_id"], d["sha256"], d["duration_ms"], d["timings_ms"]["manifest"]
        assert docs[0] == docs[1]
    finally:
        writer.close()
        store.close()


def test_what_changes_after_the_turns_end_does_not_reach_a_manifest_built_later(tmp_path):
    """The writer builds the document later, from what the turn's end took: the
    segments, the turn's spans and timings, as they were when the turn ended."""
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store, linger=30.0)
    try:
        p = Pipeline([ManifestFilter(ManifestConfig(), store=store, telemetry=None)])
        turn, whole = _turn_with_writer(store, writer)
        seg = Segment(kind="rules", ref="rules:a@1", text="rules", origin="AGENTS.md", trust="reviewed",
                      freshness={"revision": "r7"}, tokens=40, status="placed")
        turn.segments = [seg]
        turn.timings_ms["identify"] = 0.5
        p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
        p.run_end(turn)
        seg.tokens, seg.status, seg.ref = 999, "dropped", "rules:changed"
        turn.timings_ms["identify"] = 7.0
        turn.spans.append(("upstream", turn.started_ns, turn.started_ns + 10**9))
        turn.degraded.append("redact")
        turn.status = 500
        writer.flush()
        m = store.manifests.get("acme", turn.turn_id).data
        assert [(s["ref"], s["tokens"], s["status"]) for s in m["segments"]] == [("rules:a@1", 40, "placed")]
        assert m["timings_ms"]["identify"] == 0.5 and "upstream" not in m["timings_ms"]
        assert m["degraded"] == [] and m["status"] == 200 and m["policy_revision"] == "r7"
    finally:
        writer.close()
        store.close()


def test_with_an_exporter_the_manifest_is_built_at_the_turns_end(tmp_path, monkeypatch):
    where = _built_where(monkeypatch)
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store, linger=30.0)
    try:
        tel, exporter = in_memory_telemetry()
        p = Pipeline([ManifestFilter(ManifestConfig(), store=store, telemetry=tel)])
        turn, whole = _turn_with_writer(store, writer)
        p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
        p.run_end(turn)
        assert where == [threading.current_thread().name]  # the span needed it now
        assert not exporter.get_finished_spans()  # held until the write commits
        writer.flush()
        (span,) = exporter.get_finished_spans()
        stored = store.manifests.get("acme", turn.turn_id).data
        assert span.attributes["ctxproxy.manifest.sha256"] == stored["sha256"] and len(where) == 1
        assert span.attributes["ctxproxy.manifest.stored"] is True
    finally:
        writer.close()
        store.close()


# -- end to end: stored, served by the admin API, shown by the CLI --------------------------

TOKEN = "admin-test-token"
FULL = '[pipeline]\nrequest = ["identify", "redact", "effects", "prune", "inject", "manifest"]\n'


async def admin_get(proxy, path: str, token: str | None = TOKEN) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s:
        async with s.get(proxy.url + "/ctx/v1/" + path, headers=headers) as r:
            return r.status, await r.json()


async def test_manifest_stored_and_served(make_proxy, fake, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    use_stubs(monkeypatch)
    fake.script(Reply.text(f"ok {OUT_MARKER}", **USAGE), Reply.text(f"ok {OUT_MARKER}", chunk_split=3, **USAGE))
    proxy = await make_proxy(FULL, data_dir=str(tmp_path / "data"))
    client = proxy.anthropic()
    msgs = [{"role": "user", "content": f"hello {MARKER} {SECRET}"}]
    hdrs = {"X-Ctx-Session": "sess-admin", "X-Ctx-Tenant": "acme"}
    raw = await client.messages.with_raw_response.create(model="claude-test-1", max_tokens=20, messages=msgs,
                                                         extra_headers=hdrs)
    tid = raw.headers["x-ctx-turn-id"]
    async with client.messages.stream(model="claude-test-1", max_tokens=20, messages=msgs,
                                      extra_headers=hdrs) as s:
        await s.get_final_message()
    assert PLACEHOLDER in json.dumps(fake.last.json)  # the stub redact did run before forwarding

    status, m = await admin_get(proxy, f"manifests/{tid}")
    assert status == 200 and m["turn_id"] == tid and m["tenant"] == "acme" and m["session_id"] == "sess-admin"
    assert m["tokens"] == EXPECTED_USAGE["anthropic"]
    assert m["redactions"] == {"stub-api-key": 1} and m["response_redactions"] == {"stub-out": 1}
    assert [(s["status"], s["placement"], s["position"]) for s in m["segments"]] == [
        ("placed", "system:end", 0), ("placed", "turn", 1), ("dropped", None, None)]
    assert m["token_budget"] == 8000 and m["tokens_injected"] > 0
    assert m["effects"][0]["key"] == "ik-0f3a9c" and m["pruned"][0]["ref"] == "ctx://pruned/p1"
    assert set(m["timings_ms"]) >= {"identify", "redact", "effects", "prune", "inject", "upstream"}
    assert m["policy_revision"] == "abc123" and m["error"] is None and m["degraded"] == []

    status, listed = await admin_get(proxy, "manifests?session=sess-admin&tenant=acme")
    assert status == 200 and listed["count"] == 2
    assert listed["manifests"][0]["turn_id"] == tid and listed["manifests"][1]["stream"] is True
    assert (await admin_get(proxy, f"manifests/{tid}?tenant=acme"))[0] == 200
    assert (await admin_get(proxy, f"manifests/{tid}?tenant=other"))[0] == 404  # never across tenants
    assert (await admin_get(proxy, "manifests/nope"))[0] == 404
    assert (await admin_get(proxy, "manifests?session=sess-admin"))[1]["count"] == 0  # default tenant
    assert (await admin_get(proxy, "manifests"))[0] == 400
    assert (await admin_get(proxy, "manifests?session=x&limit=0"))[0] == 400
    assert (await admin_get(proxy, f"manifests/{tid}", token=None))[0] == 401
    assert (await admin_get(proxy, f"manifests/{tid}", token="wrong"))[0] == 403

    # no content and no secret in what was stored
    store = proxy.settled_store()
    stored = b"".join(orjson.dumps(dict(d.data)) for d in store.manifests.list("acme", session="sess-admin"))
    for needle in (MARKER, SECRET, PLACEHOLDER, OUT_MARKER, RULES_MARKER, EVIDENCE_MARKER):
        assert needle.encode() not in stored, needle

    # the CLI reads the same store
    data_dir = str(tmp_path / "data")
    assert cli_main(["manifest", "show", tid, "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    assert tid in out and "sess-admin (from the agent)" in out and "in 337  out 54" in out
    assert "WHERE" in out and "system:end" in out
    assert "KIND" in out and "rules:AGENTS.md@abc123" in out and "stub-api-key" in out and "ik-0f3a9c" in out
    assert "ctx://pruned/p1" in out and "dropped" in out
    assert cli_main(["manifest", "show", "--session", "sess-admin", "--tenant", "acme", "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    assert "2 turns" in out and tid in out
    assert cli_main(["manifest", "show", tid, "--json", "--data-dir", data_dir]) == 0
    assert json.loads(capsys.readouterr().out)["turn_id"] == tid
    assert cli_main(["manifest", "show", "missing", "--data-dir", data_dir]) == 1
    assert cli_main(["manifest", "show", "--data-dir", data_dir]) == 2
    assert cli_main(["manifest", "show", "x", "--data-dir", str(tmp_path / "nowhere")]) == 1
    for needle in (MARKER, SECRET, OUT_MARKER):
        assert needle not in out


async def test_turn_pointer_is_erased_with_its_manifest(make_proxy, fake):
    """The turn id -> tenant pointer names no session or subject (no scope entries
    of its own, nothing of the session in the index tenant); erasing the manifest's
    session or subject finds it by the manifest's id and takes it too (it shows
    the turn existed)."""
    fake.script(Reply.text("ok"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    raw = await proxy.anthropic().messages.with_raw_response.create(
        model="claude-test-1", max_tokens=5, messages=[{"role": "user", "content": "x"}],
        extra_headers={"X-Ctx-Tenant": "acme", "X-Ctx-Session": "sess-ptr", "X-Ctx-User": "user-9"})
    tid = raw.headers["x-ctx-turn-id"]
    store = proxy.settled_store()
    (manifest,) = store.manifests.list("acme", session="sess-ptr")
    assert (manifest.id, manifest.subject) == (tid, "user-9")
    pointer = store.manifests.get(TURN_INDEX_TENANT, tid)
    assert pointer.data == {"tenant": "acme"} and (pointer.session, pointer.subject) == (None, None)
    assert store.manifests.list(TURN_INDEX_TENANT, session="sess-ptr") == []
    assert store.count_subject("acme", subject="user-9")["pointers"] == 1
    assert store.count_subject("other", subject="user-9")["pointers"] == 0  # another tenant's erasure: not its
    receipt = store.delete_subject("acme", subject="user-9")  # erasure takes the pointer too
    assert receipt.counts["pointers"] == 1 and store.manifests.get(TURN_INDEX_TENANT, tid) is None
    assert store.manifests.get("acme", tid) is None


async def test_a_default_tenant_turn_has_no_pointer_and_is_found_by_its_id(make_proxy, fake, monkeypatch):
    """A turn of the default tenant is stored without a turn pointer: the admin API
    finds it by its id in that tenant (never in another), and erasing its session takes it."""
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    fake.script(Reply.text("ok"))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "manifest"]\n')
    raw = await proxy.anthropic().messages.with_raw_response.create(
        model="claude-test-1", max_tokens=5, messages=[{"role": "user", "content": "x"}],
        extra_headers={"X-Ctx-Session": "sess-default"})
    tid = raw.headers["x-ctx-turn-id"]
    store = proxy.settled_store()
    (manifest,) = store.manifests.list("default", session="sess-default")
    assert manifest.id == tid and store.manifests.get(TURN_INDEX_TENANT, tid) is None
    status, doc = await admin_get(proxy, f"manifests/{tid}")
    assert status == 200 and doc["turn_id"] == tid and doc["tenant"] == "default"
    assert (await admin_get(proxy, f"manifests/{tid}?tenant=acme"))[0] == 404
    receipt = store.delete_subject("default", session="sess-default")
    assert receipt.counts["manifests"] == 1 and receipt.counts["pointers"] == 0
    assert (await admin_get(proxy, f"manifests/{tid}"))[0] == 404


async def test_blocked_turn_still_has_a_manifest(make_proxy, fake, monkeypatch):
    import anthropic

    from ctxproxy.filters import FILTERS

    monkeypatch.setitem(FILTERS, "redact", "test_manifest:_Refuse")
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "redact", "manifest"]\n')
    with pytest.raises(anthropic.APIStatusError) as exc:
        await proxy.anthropic().messages.create(model="claude-test-1", max_tokens=5,
                                                messages=[{"role": "user", "content": "x"}],
                                                extra_headers={"X-Ctx-Session": "blocked-1"})
    tid = exc.value.response.headers.get("x-ctx-turn-id")
    assert not fake.requests  # nothing was forwarded
    store = proxy.settled_store()
    (doc,) = store.manifests.list("default", session="blocked-1")
    assert doc.data["error"] == "FilterError" and doc.data["status"] is None
    assert doc.data["tokens"]["input"] is None and tid == doc.id


from ctxproxy.filters import FilterError  # noqa: E402
from ctxproxy.filters.base import Filter  # noqa: E402


class _Refuse(Filter):
    name = "redact"
    required = True

    def __init__(self, config=None):
        pass

    def on_request(self, turn):
        raise FilterError("redact", "refused for the test", 400)


def test_a_manifest_the_closed_writer_refuses_is_not_reported_stored(tmp_path):
    """At shutdown the writer closes before a turn still streaming ends: its manifest
    cannot be queued, and the turn says so (degraded, the span's stored flag false)
    instead of reporting it handed over."""
    store = open_store(tmp_path / "store")
    writer = BackgroundWriter(store)
    try:
        writer.close()
        tel, exporter = in_memory_telemetry()
        p = Pipeline([ManifestFilter(ManifestConfig(), store=store, telemetry=tel)])
        turn, whole = _turn_with_writer(store, writer)
        p.run_response(turn, ADAPTERS["anthropic"].parse_response(whole))
        p.run_end(turn)
        assert store.manifests.get("acme", turn.turn_id) is None
        assert turn.degraded == ["manifest"]
        (span,) = exporter.get_finished_spans()
        assert span.attributes["ctxproxy.manifest.stored"] is False
    finally:
        store.close()
