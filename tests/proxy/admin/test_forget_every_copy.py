"""Forgotten text stays forgotten, every copy of it, with a proxy that served
turns holding it: its frozen memory snapshot, what recall found, the session
records. Forgetting runs through the admin API (in the proxy's process) or
from the CLI beside the running proxy (another process); either way the
proxy's later turns do not bring the text back, and after ``forget finish``
no file of the data dir holds its bytes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import aiohttp

TOKEN = "forget-copies-token"
CANARY = "heliotrope4417"
PREFERENCE = f"Prefers {CANARY} as the prefix of every branch name."
FACT = f"The {CANARY} build server sits in rack nine."


def files_holding(root: str, needle: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*")
                  if p.is_file() and needle.encode() in p.read_bytes())


def sent(fake) -> str:
    return json.dumps(fake.last.json, ensure_ascii=False)


async def turn(p, user: str, session: str, *texts: str) -> None:
    """One model turn whose history is ``texts`` (user, assistant, user, ...)."""
    client = p.anthropic(default_headers={"X-Ctx-User": user, "X-Ctx-Session": session})
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    await client.messages.create(model="claude-test", max_tokens=16, messages=messages)


async def remember_and_serve(p, fake) -> str:
    """Alice's memories, and turns that froze them into her sessions' snapshots
    and recalled them; returns the data dir."""
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        for body in ({"statement": PREFERENCE, "kind": "preference", "user": "alice"},
                     {"statement": FACT, "kind": "fact", "user": "alice"}):
            async with http.post(f"{p.url}/ctx/v1/memories", json=body) as r:
                assert r.status == 201, await r.text()
    await turn(p, "alice", "alice-1", "Which branch name should I use for the fix?")
    assert PREFERENCE in sent(fake)  # frozen into the session's snapshot
    await turn(p, "alice", "alice-1", "Which branch name should I use for the fix?", "fix/login", "And the server?")
    await turn(p, "alice", "alice-2", f"Where is the {CANARY} build server?")
    assert FACT in sent(fake) and PREFERENCE in sent(fake)  # recalled, and the snapshot again
    await turn(p, "bob", "bob-1", "Which branch name should I use?")
    assert CANARY not in sent(fake)
    data_dir = p.state.config.server.data_dir
    p.settled_store()
    assert files_holding(data_dir, CANARY)  # the test would prove nothing otherwise
    return data_dir


async def serve_after_forget(p, fake) -> None:
    """Alice goes on (her old session, a new one), and bob: nothing brings the text back."""
    await turn(p, "alice", "alice-1", "Which branch name should I use for the fix?", "fix/login", "And the server?",
               "It is in the usual place.", "Thanks, and the release branch?")
    assert CANARY not in sent(fake)
    await turn(p, "alice", "alice-3", "Which build server and branch prefix do I use?")
    assert CANARY not in sent(fake)
    await turn(p, "bob", "bob-1", "Which branch name should I use?", "main", "And the build server?")
    assert CANARY not in sent(fake)
    p.settled_store()


def cli(data_dir: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", *argv, "--data-dir", data_dir],
                          capture_output=True, text=True, timeout=120)


async def test_forget_through_the_admin_api_leaves_no_copy(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy("")
    data_dir = await remember_and_serve(p, fake)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.post(f"{p.url}/ctx/v1/forget", json={"user": "alice", "request_id": "f-1"}) as r:
            receipt = await r.json()
        assert r.status == 200 and receipt["status"] == "erased", receipt
        assert receipt["completed_at"] >= receipt["created_at"] and receipt["counts"]["memories"] == 2
        async with http.get(f"{p.url}/ctx/v1/forget/f-1") as r:
            checked = await r.json()
        assert checked["clean"] is True, checked
        await serve_after_forget(p, fake)  # (alice's new turns are hers again: the text is not)
    assert files_holding(data_dir, CANARY) == []


async def test_forget_from_the_cli_beside_a_running_proxy_is_not_undone(make_proxy, fake, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    p = await make_proxy("")
    data_dir = await remember_and_serve(p, fake)
    done = cli(data_dir, "forget", "--user", "alice", "--request-id", "f-2", "--json")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    assert receipt["status"] == "pending" and receipt["counts"]["memories"] == 2  # the proxy has the store open
    shown = cli(data_dir, "forget", "show", "f-2", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["clean"] is True, shown.stdout
    await serve_after_forget(p, fake)
    await p.runner.cleanup()  # the proxy stops: the store is the CLI's alone
    finished = cli(data_dir, "forget", "finish")
    assert finished.returncode == 0, finished.stderr
    shown = cli(data_dir, "forget", "show", "f-2", "--json")
    checked = json.loads(shown.stdout)["receipt"]  # (alice's new sessions are hers: not clean, but no old text)
    assert checked["status"] == "erased" and checked["completed_at"] >= checked["created_at"]
    assert files_holding(data_dir, CANARY) == []

