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
