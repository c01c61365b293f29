"""/ctx/v1/learn/… through a real proxy: run, review (singly and in bulk), the
approved memory in the next session's frozen snapshot and never the current
one's, insights, export, tenants kept apart."""
from __future__ import annotations

import pytest
from adminapi import call
from learnsessions import Say, fix_session, run_agent

from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store.services.memory.formats import read_entries

LEARN_NOW = "[learn]\nenabled = false\nmin_idle = 0.0\n[filters.effects]\nrecord_read_only = true\n"


@pytest.fixture
def admin_toml() -> str:
    return LEARN_NOW


async def learned(api, fake, agent: str, opening: str, **who) -> tuple[int, dict]:
    """One fix session of ``agent`` opening with ``opening``, a learning run, and
    the proposals listed after it (status, body)."""
    p, http = api
    await run_agent(p, fake, agent, fix_session(opening=opening), **who)
    await call(http, "POST", f"{p.url}/ctx/v1/learn/run", json={})
    return await call(http, "GET", f"{p.url}/ctx/v1/learn/proposals")


def system_text(record) -> str:
    body = record.json
    system = body.get("system")
    return system if isinstance(system, str) else "".join(b.get("text", "") for b in system or [])


async def test_run_review_and_the_next_session_sees_it(api, fake):
    p, http = api
    base = f"{p.url}/ctx/v1/learn"
    said = "Always run make check before pushing."
    await run_agent(p, fake, "claude-code", [Say(f"Fix the import error. {said}", "Fixed.")],
                    session="a1", user="alice")
    status, report = await call(http, "POST", f"{base}/run", json={"dry_run": True})
    assert status == 200 and report["dry_run"] and report["consolidation"]["proposed"] == 1
    status, report = await call(http, "POST", f"{base}/run", json={})
    assert status == 200 and report["status"] == "ok" and report["mode"] == "INIT"
    status, listed = await call(http, "GET", f"{base}/proposals", params={"user": "alice"})
    [prop] = [x for x in listed["proposals"] if x["statement"] == said]
    assert prop["status"] == "proposed" and prop["quotes"] == [said] and prop["evidence"][0]["session"] == "a1"
    assert prop["agents"] == ["claude-code"] and prop["evidence"][0]["turns"]
    # a session already running has its snapshot frozen: approval must not change its prefix
    fake.script(Reply.text("one"), Reply.text("two"))
    client = p.anthropic(default_headers={"x-ctx-session": "a2", "x-ctx-user": "alice"})
    await client.messages.create(model="claude-test-1", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    status, done = await call(http, "POST", f"{base}/proposals/{prop['memory_id']}/approve", json={})
    assert status == 200 and done["status"] == "active"
    await client.messages.create(model="claude-test-1", max_tokens=64,
                                 messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "one"},
                                           {"role": "user", "content": "again"}])
    assert said not in system_text(fake.model_requests[-1])  # the current session: unchanged
    fake.script(Reply.text("three"))
    nxt = p.anthropic(default_headers={"x-ctx-session": "a3", "x-ctx-user": "alice"})
    await nxt.messages.create(model="claude-test-1", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    assert said in system_text(fake.model_requests[-1])  # the next session's frozen snapshot has it
    status, st = await call(http, "GET", f"{base}/status")
    assert status == 200 and st["watermark"] == 1 and st["memories"]["active"] == 1 and st["lease"] is None


async def test_bulk_review_edit_and_errors(api, fake):
    p, http = api
    base = f"{p.url}/ctx/v1/learn"
    status, listed = await learned(api, fake, "codex", "Fix the config test. Prefer small commits.", session="b1",
                                   user="bob", project="shop")
    ids = [x["memory_id"] for x in listed["proposals"]]
    assert status == 200 and len(ids) >= 3
    pref = next(x for x in listed["proposals"] if x["statement"] == "Prefer small commits.")
    status, edited = await call(http, "PATCH", f"{base}/proposals/{pref['memory_id']}",
                                json={"statement": "Prefer small, focused commits.", "revision": pref["revision"]})
    assert status == 200 and edited["status"] == "proposed" and edited["revision"] == pref["revision"] + 1
    status, stale = await call(http, "PATCH", f"{base}/proposals/{pref['memory_id']}",
                               json={"statement": "x y z", "revision": pref["revision"]})
    assert status == 409 and stale["error"]["type"] == "revision_conflict"
    status, out = await call(http, "POST", f"{base}/proposals:review",
                             json={"approve": [*ids, "mem_nope"]})
    assert status == 200
    by_id = {r["memory_id"]: r for r in out["results"]}
    assert all(by_id[i]["status"] == "active" for i in ids) and by_id["mem_nope"]["error"]["type"] == "not_found"
    status, body = await call(http, "POST", f"{base}/proposals:review", json={"approve": [], "reject": []})
    assert status == 400 and body["error"]["field"] == "body"
    status, body = await call(http, "POST", f"{base}/run", json={"user": "bob", "project": "shop"})
    assert status == 400 and body["error"]["field"] == "project"
    # export: Claude Code skills from approved procedures; the file round-trips through the importer
    status, exp = await call(http, "GET", f"{base}/export", params={"format": "claude"})
    assert status == 200
    skills = {k: v for k, v in exp["files"].items() if k.startswith("skills/")}
    assert skills and all("disable-model-invocation: true" in v and "## Success criteria" in v
                          for v in skills.values())
    status, page = await call(http, "GET", f"{base}/insights", params={"format": "html"})
    assert status == 200 and page.startswith("<!doctype html>") and "<svg" in page and "codex" in page


async def test_another_tenants_proposals_are_invisible(api, fake, monkeypatch):
    p, http = api
    base = f"{p.url}/ctx/v1/learn"
    await run_agent(p, fake, "claude-code", [Say("Go. Never deploy on Fridays.", "OK.")], session="t1",
                    user="carol", tenant="other")
    status, report = await call(http, "POST", f"{base}/run", json={"tenant": "other"})
    assert status == 200 and report["consolidation"]["proposed"] == 1
    status, listed = await call(http, "GET", f"{base}/proposals", params={"tenant": "other"})
    mid = listed["proposals"][0]["memory_id"]
    status, mine = await call(http, "GET", f"{base}/proposals")  # the default tenant
    assert mine["count"] == 0
    status, body = await call(http, "POST", f"{base}/proposals/{mid}/approve", json={})
    assert status == 404 and body["error"]["type"] == "not_found"


async def test_codex_and_hermes_exports_read_back(api, fake, tmp_path):
    p, http = api
    base = f"{p.url}/ctx/v1/learn"
    status, listed = await learned(api, fake, "claude-code", "Fix the test. Never push to main directly.",
                                   session="e1", user="erin", project="shop")
    await call(http, "POST", f"{base}/proposals:review", json={"approve": [x["memory_id"]
                                                                        for x in listed["proposals"]]})
    status, codex = await call(http, "GET", f"{base}/export", params={"format": "codex"})
    text = codex["files"]["MEMORY.md"]
    shop = text.split("# Task group: shop")[1]
    assert "## Reusable knowledge" in shop and "## Failures and how to do differently" in shop
    assert "# Task group: all projects" in text and "## User preferences" in text  # erin's own, no project
    assert "Never push to main directly." in codex["files"]["memory_summary.md"]
    for name, body in codex["files"].items():
        (tmp_path / "codex" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "codex" / name).write_text(body)
    entries = read_entries(tmp_path / "codex", "codex")
    assert {e["external_id"] for e in entries} == {x["memory_id"] for x in listed["proposals"]}
    status, hermes = await call(http, "GET", f"{base}/export", params={"format": "hermes"})
    assert len(hermes["files"]["MEMORY.md"]) <= 2200 and len(hermes["files"]["USER.md"]) <= 1375
    assert "Never push to main directly." in hermes["files"]["USER.md"]
