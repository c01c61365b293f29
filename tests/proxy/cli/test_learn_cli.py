"""``ctxproxy learn`` on the data dir of a running proxy and against its admin
API: run (and dry run), status, review in bulk, insights, exports."""
from __future__ import annotations

import asyncio
import json

from learnsessions import Say, fix_session, run_agent

from ctxproxy.proxy.cli.main import main

LEARN_NOW = "[learn]\nenabled = false\nmin_idle = 0.0\n[filters.effects]\nrecord_read_only = true\n"
TOKEN = "admin-secret-token"


def run(capsys, *argv):
    code = main([str(a) for a in argv])  # --data-dir and --config: the running proxy's
    out = capsys.readouterr()
    return code, out.out, out.err


async def test_run_status_review_insights_export(make_proxy, fake, tmp_path, capsys):
    proxy = await make_proxy(LEARN_NOW)
    data = proxy.state.services["data_dir"]
    cfg = ("--config", proxy.state.config.source)
    await run_agent(proxy, fake, "claude-code", fix_session(opening="Fix the config test. Never push to main directly.",
                                                           correction="No, check the local cloudflare rule and "
                                                                      "find out."),
                    session="s1", user="alice", project="shop")
    proxy.settled_store()
    code, out, _ = run(capsys, "learn", "run", "--dry-run", "--data-dir", data, *cfg)
    assert code == 0 and "dry run: nothing written" in out
    assert "+ [preference, user] Never push to main directly." in out
    code, out, _ = run(capsys, "learn", "run", "--user", "alice", "--data-dir", data, *cfg, "--json")
    report = json.loads(out)
    assert code == 0 and report["scope"] == "user:alice" and report["consolidation"]["proposed"] == 2
    code, out, _ = run(capsys, "learn", "run", "--all", "--data-dir", data, *cfg, "--json")
    report = json.loads(out)
    assert report["scope"] == "all" and report["consolidation"]["proposed"] >= 3  # the project's procedures
    assert report["consolidation"]["unchanged"] == 2  # alice's two, proposed by the scoped run
    code, out, _ = run(capsys, "learn", "status", "--data-dir", data, *cfg)
    assert code == 0 and "watermark: 1" in out and "lease: free" in out
    code, out, _ = run(capsys, "learn", "review", "--user", "alice", "--data-dir", data, *cfg)
    assert 'user said: "No, check the local cloudflare rule and find out."' in out and "evidence: session s1" in out
    code, out, _ = run(capsys, "learn", "review", "--user", "alice", "--approve-all", "--data-dir", data, *cfg)
    assert code == 0 and out.count(": active") == 2
    code, out, _ = run(capsys, "learn", "review", "--project", "shop", "--reject-all", "--data-dir", data, *cfg,
                       "--json")
    assert code == 0 and {r["status"] for r in json.loads(out)} == {"deleted"}
    code, out, err = run(capsys, "learn", "review", "--approve", "mem_missing", "--data-dir", data, *cfg)
    assert code == 3 and "not_found" in err + out
    page = tmp_path / "report.html"
    code, out, _ = run(capsys, "learn", "insights", "--out", page, "--data-dir", data, *cfg)
    html = page.read_text()
    assert code == 0 and html.startswith("<!doctype html>") and "<svg" in html and "claude-code" in html
    assert "2 active" in html and "rejected" in html
    code, out, _ = run(capsys, "learn", "insights", "--user", "alice", "--data-dir", data, *cfg)
    assert code == 0 and out.startswith("# ctxproxy insights: tenant default — user alice")
    code, out, _ = run(capsys, "learn", "export", "--format", "hermes", "--out", tmp_path / "hermes",
                       "--data-dir", data, *cfg)
    assert code == 0 and "Never push to main directly." in (tmp_path / "hermes" / "USER.md").read_text()


async def test_against_a_running_proxy(make_proxy, fake, capsys, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    proxy = await make_proxy(LEARN_NOW)
    await run_agent(proxy, fake, "openclaw", [Say("Go on. Prefer rebase over merge.", "OK.")], session="r1",
                    user="dan")

    def cli(*argv):
        code = main([str(a) for a in argv] + ["--url", proxy.url, "--token", TOKEN])
        return code, capsys.readouterr().out

    code, out = await asyncio.to_thread(cli, "learn", "run")
    assert code == 0 and "proposed 1" in out
    code, out = await asyncio.to_thread(cli, "learn", "review", "--json")
    [prop] = json.loads(out)
    assert prop["statement"] == "Prefer rebase over merge." and prop["agents"] == ["openclaw"]
    code, out = await asyncio.to_thread(cli, "learn", "review", "--edit", prop["memory_id"], "--statement",
                                        "Prefer rebase over merge, always.")
    assert code == 0 and "revision 2" in out
    code, out = await asyncio.to_thread(cli, "learn", "review", "--reject", prop["memory_id"])
    assert code == 0 and "deleted" in out
    code, out = await asyncio.to_thread(cli, "learn", "status")
    assert code == 0 and "rejected" in out and "rejections remembered: 2" in out


GHP = "ghp_" + "Zq7Lm2Xv9Rt4Kp8Wn3Yb6Hc1Jd5Fs0Ga" + "Qe4T"
AKIA = "AKIA" + "Q7ZK3M9T2XW4B6NP"


async def test_insights_never_hold_a_secret(make_proxy, fake, tmp_path, capsys, monkeypatch):
    """A session whose user text and tool output hold credentials: the report,
    from the data dir or through the admin API, in every format, holds none."""
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    proxy = await make_proxy(LEARN_NOW + "[filters.recall]\nindex_tool_outputs = true\n")
    data = proxy.state.services["data_dir"]
    cfg = ("--config", proxy.state.config.source)
    from learnsessions import Call, Result

    await run_agent(proxy, fake, "claude-code", [
        Say(f"Deploy the shop. Always use the token {GHP} for the registry.",
            Call("Bash", {"command": f"AWS_ACCESS_KEY_ID={AKIA} make deploy"})),
        Result(f"deploy failed: bad credentials {GHP}", error=True,
               then=Call("Bash", {"command": f"AWS_ACCESS_KEY_ID={AKIA} make deploy"})),
        Result("deployed v42 to production", then="Deployed.")], session="sec1", user="alice", project="shop")
    proxy.settled_store()
    code, out, _ = run(capsys, "learn", "run", "--data-dir", data, *cfg)
    code, out, _ = run(capsys, "learn", "review", "--approve-all", "--data-dir", data, *cfg)
    assert code == 0
    reports = []
    for fmt in ("report.html", "report.md"):
        code, out, _ = run(capsys, "learn", "insights", "--out", tmp_path / fmt, "--data-dir", data, *cfg)
        assert code == 0
        reports.append((tmp_path / fmt).read_text())
    code, out, _ = run(capsys, "learn", "insights", "--json", "--data-dir", data, *cfg)
    reports.append(out)

    def cli(*argv):
        code = main([str(a) for a in argv] + ["--url", proxy.url, "--token", TOKEN])
        return code, capsys.readouterr().out

    code, out = await asyncio.to_thread(cli, "learn", "insights")
    assert code == 0 and out.startswith("# ctxproxy insights: tenant default")
    reports.append(out)
    code, out = await asyncio.to_thread(cli, "learn", "insights", "--json")
    assert code == 0 and json.loads(out)
    reports.append(out)
    code, out = await asyncio.to_thread(cli, "learn", "insights", "--user", "alice", "--out", tmp_path / "r.html")
    assert code == 0
    html = (tmp_path / "r.html").read_text()
    assert html.startswith("<!doctype html>") and "claude-code" in html
    reports.append(html)
    # the session is reported on, and what was learned from it: its secret as the proxy's placeholder
    assert "Always use the token [REDACTED:github-pat:" in reports[3]
    for text in reports:
        assert "claude-code" in text
        for secret in (GHP, AKIA, GHP[4:20], AKIA[4:]):
            assert secret not in text
