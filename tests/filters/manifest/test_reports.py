"""Filters' own manifest parts (report): the rules bundle's per-file sha256 in resolved order,
instruction_conflict records and refused revoked files reach the manifest and the span."""
import hashlib
import json

import orjson
from multidict import CIMultiDict

from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.base import Identity
from ctxproxy.filters.inject.filter import InjectConfig, InjectFilter, RulesConfig
from ctxproxy.filters.manifest.filter import _Seen, build_manifest, manifest_json, summarize
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS

TOKENS = TokenCounter()


def turn_for(f):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    t = Turn(api="chat", route="r", path="/v1/chat/completions", headers=CIMultiDict(),
             request=ADAPTERS["chat"].parse_request(orjson.dumps(body)), tokens=TOKENS,
             identity=Identity(tenant="t1", session="s1", task="s1", source="header"))
    Pipeline([f]).run_request(t)
    return build_manifest(t, _Seen(), "openai", (None, None), t.started_ns)


def test_rules_bundle_files_conflicts_and_refused_in_the_manifest_and_span(tmp_path):
    (tmp_path / "policy.md").write_text("# Policy\nNever push to main.\nkey: pm = pip\n")
    (tmp_path / "AGENTS.md").write_text("# Project\nkey: pm = uv\n")
    (tmp_path / "CLAUDE.md").write_text("# Old rules\n")
    revoked = hashlib.sha256((tmp_path / "CLAUDE.md").read_bytes()).hexdigest()
    rules = RulesConfig(root=str(tmp_path), managed=("policy.md",), project=("AGENTS.md", "CLAUDE.md"),
                        revoked=(f"sha256:{revoked}",), refresh_seconds=0)
    m = turn_for(InjectFilter(InjectConfig(rules=rules)))
    r = m["rules"]
    assert [(f["order"], f["path"], f["layer"]) for f in r["files"]] == [(0, "policy.md", "managed"),
                                                                         (1, "AGENTS.md", "project")]
    assert r["files"][0]["sha256"] == hashlib.sha256((tmp_path / "policy.md").read_bytes()).hexdigest()
    (c,) = r["conflicts"]
    assert c["type"] == "instruction_conflict" and c["applied"]["path"] == "policy.md"
    assert c["overridden"]["path"] == "AGENTS.md" and "uv" not in json.dumps(c)
    (ref,) = r["refused"]
    assert ref["path"] == "CLAUDE.md" and ref["reason"] == "revoked" and ref["sha256"] == revoked
    assert r["revision"] == m["policy_revision"]
    attrs = summarize(m)
    assert (attrs["ctxproxy.manifest.rules.file_count"], attrs["ctxproxy.manifest.rules.conflict_count"],
            attrs["ctxproxy.manifest.rules.refused_count"]) == (2, 1, 1)
    span = json.loads(manifest_json(m, 8192)[0])
    assert [f["path"] for f in span["rules_files"]] == ["policy.md", "AGENTS.md"]
    assert span["conflicts"] == [{"name": "pm", "applied": "policy.md", "overridden": "AGENTS.md"}]
    assert span["refused"][0]["path"] == "CLAUDE.md"


def test_a_revoked_revision_is_reported_refused(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# Project\nrun tests\n")
    probe = turn_for(InjectFilter(InjectConfig(rules=RulesConfig(root=str(tmp_path), project=("AGENTS.md",),
                                                                 refresh_seconds=0))))
    rev = probe["rules"]["revision"]
    m = turn_for(InjectFilter(InjectConfig(rules=RulesConfig(root=str(tmp_path), project=("AGENTS.md",),
                                                             revoked=(f"rev:{rev}",), refresh_seconds=0))))
    assert m["rules"]["revision"] is None and m["rules"]["refused"][0]["revision"] == rev
    assert m["policy_revision"] is None


def test_each_manifest_has_its_own_identity_and_route_fields_and_its_own_head():
    """The fields a turn's identity, route and request make are laid out once per
    such turn and copied: turns of two tenants interleaved each get their own,
    in the document's order, and a document changed after it was built leaves
    the next one as it would have been."""
    def one(tenant, session, route, model, key_id=""):
        body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
        t = Turn(api="chat", route=route, path="/v1/chat/completions", headers=CIMultiDict(),
                 request=ADAPTERS["chat"].parse_request(orjson.dumps(body)), tokens=TOKENS,
                 identity=Identity(tenant=tenant, session=session, task=session, source="header", key_id=key_id))
        return build_manifest(t, _Seen(), "openai", ("api.example", 443), t.started_ns + 1_500_000)

    first = one("t1", "s1", "r1", "m1")
    keys = list(first)
    assert keys[:16] == ["version", "turn_id", "task_id", "session_id", "session_supplied", "task_supplied",
                         "tenant", "agent", "identity_source", "key_id", "api", "route", "provider",
                         "server_address", "server_port", "model"]
    first["tenant"] = "changed"
    first["finish_reasons"].append("x")
    for _ in range(2):
        a, b = one("t1", "s1", "r1", "m1"), one("t2", "s2", "r2", "m2", key_id="k2")
        assert (a["tenant"], a["session_id"], a["route"], a["model"], a["key_id"]) == ("t1", "s1", "r1", "m1", None)
        assert (b["tenant"], b["session_id"], b["route"], b["model"], b["key_id"]) == ("t2", "s2", "r2", "m2", "k2")
        assert list(a) == keys and a["finish_reasons"] == [] and a["turn_id"] != b["turn_id"]
        assert a["duration_ms"] == 1.5 and a["status"] is None and a["timings_ms"] == {}


def test_a_head_of_long_identity_text_is_not_kept():
    """The kept heads are bounded: one whose identity and model hold more than
    HEAD_TEXT_MAX characters is laid out for its turn and not kept."""
    from ctxproxy.filters.manifest import filter as mf

    long_session = "s" * (mf.HEAD_TEXT_MAX + 1)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    t = Turn(api="chat", route="r", path="/v1/chat/completions", headers=CIMultiDict(),
             request=ADAPTERS["chat"].parse_request(orjson.dumps(body)), tokens=TOKENS,
             identity=Identity(tenant="t1", session=long_session, task=long_session, source="header"))
    m = build_manifest(t, _Seen(), "openai", (None, None), t.started_ns)
    assert m["session_id"] == long_session[:256]
    assert not any(key[0] is t.identity for key in mf._HEADS)
