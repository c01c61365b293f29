"""observed rules: the agents' own rule files recognised by their wrappers, recorded in the
manifest, and re-injected from the last observed copy after a compaction drops them."""
import hashlib
import json

import aiohttp
import orjson
import pytest
from realclients import body_bytes, load

from ctxproxy.config import ConfigError, load_config
from ctxproxy.filters.manifest.filter import manifest_json, summarize
from ctxproxy.filters.inject.observed_rules import observe
from ctxproxy.proxy.adapters import ADAPTERS

SKIP = {"host", "content-length", "accept-encoding", "connection"}
CLAUDE_SESSION = ("claude-code-rules-first", "claude-code-rules-nested", "claude-code-compact-request",
                  "claude-code-after-compact")


def view_of(name):
    rec = load(name)
    api = "anthropic" if rec["path"].startswith("/v1/messages") else "responses"
    return ADAPTERS[api].parse_request(body_bytes(rec))


def test_claude_code_startup_files_in_the_system_reminder():
    seen = observe(view_of("claude-code-rules-first"))
    assert [(o.path.rsplit("/", 2)[-2:], o.kind) for o in seen] == [
        (["claudecmp-home", ".claude"][1:] + ["CLAUDE.md"], "user's private global instructions for all projects"),
        (["rules", "style.md"], "user's private global instructions for all projects"),
        (["claudecmp-work", "CLAUDE.md"], "project instructions, checked into the codebase"),
        (["rules", "testing.md"], "project instructions, checked into the codebase"),
        (["claudecmp-work", "CLAUDE.local.md"], "user's private project instructions, not checked in")]
    local = seen[-1]
    assert local.text == ("# Private project notes (CLAUDE.local.md, not checked in)\n"
                          "- My local database is on port 5433\nmarker: SEED-CLAUDE-LOCAL-MD\n")
    assert local.sha256 == hashlib.sha256(local.text.encode()).hexdigest()
    assert {o.agent for o in seen} == {"claude-code"} and {o.where for o in seen} == {"messages[0].content[0]"}
    assert all("# currentDate" not in o.text and "</system-reminder>" not in o.text for o in seen)


def test_claude_code_on_demand_files_in_a_system_message():
    seen = [o for o in observe(view_of("claude-code-rules-nested")) if o.kind == "on-demand"]
    assert [o.path for o in seen] == ["/tmp/acc-run/claudecmp-work/services/refund/CLAUDE.md",
                                      "/tmp/acc-run/claudecmp-work/.claude/rules/refund-paths.md"]
    assert "Amounts are integer cents" in seen[0].text and seen[0].where == "messages[4]"
    assert seen[1].text.endswith("marker: SEED-RULE-REFUND-PATHS-MD\n")


def test_codex_agents_md_block_global_then_project_docs():
    seen = observe(view_of("codex-rules-nested"))
    assert [(o.agent, o.path, o.kind) for o in seen] == [
        ("codex", "/tmp/acc-run/cxrcmp-work/services/refund", "global"),
        ("codex", "/tmp/acc-run/cxrcmp-work/services/refund", "project-doc")]
    assert "SEED-GLOBAL-CODEX-AGENTS-MD" in seen[0].text and "project-doc" not in seen[0].text
    assert "SEED-ROOT-AGENTS-MD" in seen[1].text and "SEED-NESTED-REFUND-AGENTS-MD" in seen[1].text
    assert seen[0].where == "input[5].content[0]"


OPENCLAW_SYSTEM = ("You are a personal assistant running inside OpenClaw.\n\n## Tooling\n- read\n\n# Project Context\n\n"
                   "The following project context files have been loaded:\nIf SOUL.md is present, embody its persona "
                   "and tone.\n\n## /work/AGENTS.md\n\n# Agent rules\n## Testing\n- run pytest\n\n## SOUL.md\n\n"
                   "Be terse.\n\n## Silent Replies\nWhen you have nothing to say, respond with NO_REPLY\n"
                   "## Runtime\nRuntime: agent=main | sessionId=abc")
HERMES_SYSTEM = ("You are Hermes Agent.\n\n# Project Context\n\nThe following project context files have been loaded "
                 "and should be followed:\n\n## .hermes.md\n\nrepo rules here\n\n## AGENTS.md\n\nagent rules\n\n"
                 "Conversation started: Tuesday")


@pytest.mark.parametrize("system, agent, files", [
    (OPENCLAW_SYSTEM, "openclaw", [("/work/AGENTS.md", "# Agent rules\n## Testing\n- run pytest\n"),
                                   ("SOUL.md", "Be terse.\n")]),
    (HERMES_SYSTEM, "hermes", [(".hermes.md", "repo rules here\n"), ("AGENTS.md", "agent rules\n")]),
])
def test_openclaw_and_hermes_project_context(system, agent, files):
    body = {"model": "m", "messages": [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]}
    seen = observe(ADAPTERS["chat"].parse_request(orjson.dumps(body)))
    assert [(o.agent, o.path, o.text) for o in seen] == [(agent, p, t) for p, t in files]
    assert {o.where for o in seen} == {"system"}


def test_config_policy_checked(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[filters.inject]\nreinject_observed_rules = "sometimes"\n')
    with pytest.raises(ConfigError, match="reinject_observed_rules"):
        from ctxproxy.filters import filter_configs
        filter_configs(load_config(bad))


async def post(proxy, name):
    rec = load(name)
    headers = {k: v for k, v in rec["headers"].items() if k not in SKIP}
    url = proxy.url + rec["path"] + (f"?{rec['query']}" if rec.get("query") else "")
    async with aiohttp.ClientSession() as s:
        async with s.post(url, data=body_bytes(rec), headers=headers) as resp:
            await resp.read()
            assert resp.status == 200
            return resp.headers["X-Ctx-Turn-Id"]


def manifest(proxy, turn_id):
    return proxy.settled_store().manifests.get("default", turn_id).data


async def test_nested_rules_visible_after_claude_code_compacts(make_proxy, fake):
    """The acceptance case: Claude Code re-sends its start-up rules after /compact but not the
    nested CLAUDE.md and path-scoped rule it loaded on demand; ctxproxy puts them back."""
    p = await make_proxy()
    turns = [await post(p, name) for name in CLAUDE_SESSION]
    sent = fake.model_requests[-1].json
    system = json.dumps(sent["system"])
    assert "Amounts are integer cents, never floats" in system
    assert "Log every refund decision with the order id" in system
    assert "re-injected by ctxproxy from the last copy it observed" in system
    # the caller's breakpoints stay where they were; the copy sits inside the cached system prefix
    assert sent["system"][-1] == load("claude-code-after-compact")["body"]["system"][-1]
    # nothing re-injected before the compaction, nor into the summarization request
    for body in (r.json for r in fake.model_requests[:-1]):
        assert "re-injected by ctxproxy" not in json.dumps(body)
    m = manifest(p, turns[-1])
    assert [(o["path"].rsplit("/", 1)[-1], o["state"]) for o in m["observed_rules"]] == [
        ("CLAUDE.md", "present"), ("style.md", "present"), ("CLAUDE.md", "present"), ("testing.md", "present"),
        ("CLAUDE.local.md", "present"), ("CLAUDE.md", "reinjected"), ("refund-paths.md", "reinjected")]
    nested = [o for o in m["observed_rules"] if o["path"].endswith("services/refund/CLAUDE.md")]
    assert nested[0]["state"] == "reinjected" and len(nested[0]["sha256"]) == 64
    (seg,) = [s for s in m["segments"] if s["kind"] == "observed_rules"]
    assert seg["status"] == "placed" and seg["labels"]["trust"] == "reviewed"
    assert m["compaction"] == {"agent": "claude-code", "style": "summary", "phase": "resumed", "trigger": "manual"}
    assert m["client_compacted"] is True
    before = manifest(p, turns[1])
    assert [o["state"] for o in before["observed_rules"]] == ["present"] * 7
    assert "Amounts are integer cents" not in orjson.dumps(m).decode()  # refs and digests, never text
    attrs = summarize(m)
    assert attrs["ctxproxy.manifest.reinjected_rule_count"] == 2
    assert attrs["ctxproxy.manifest.observed_rule_count"] == 5
    span_json = json.loads(manifest_json(m, 8192)[0])
    assert {o["state"] for o in span_json["observed_rules"]} == {"present", "reinjected"}


async def test_policy_never_leaves_the_compacted_request_alone(make_proxy, fake):
    p = await make_proxy('[filters.inject]\nreinject_observed_rules = "never"\n')
    for name in CLAUDE_SESSION:
        await post(p, name)
    assert "Amounts are integer cents" not in json.dumps(fake.model_requests[-1].json["system"])


async def test_codex_resends_its_agents_md_so_nothing_is_reinjected(make_proxy, fake):
    p = await make_proxy()
    turns = [await post(p, n) for n in ("codex-rules-nested", "codex-remote-compact-request",
                                        "codex-remote-after-compact")]
    assert "re-injected by ctxproxy" not in json.dumps(fake.model_requests[-1].json)
    m = manifest(p, turns[-1])
    assert [o["state"] for o in m["observed_rules"]] == ["present", "present"]
    assert m["compaction"]["style"] == "remote"
