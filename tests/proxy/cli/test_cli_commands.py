"""The command line as README shows it: the effects commands use the tenant
the proxy uses (``filters.identify.default_tenant`` of ``--config``, or the
running proxy's with ``--url``), like ``manifest`` and ``pruned``; a command
without its ACTION exits 2; a reader that leaves the pipe early
(``... | head``) is no traceback."""
from __future__ import annotations

import asyncio
import io
import json

import pytest

from ctxproxy.proxy.cli.main import main
from ctxproxy.proxy.scripted_provider import Reply

TOKEN = "qa-admin-token"
ACME = """
[server]
admin_token = "qa-admin-token"

[filters.identify]
default_tenant = "acme"
"""
CALL = {"command": "gh pr create --title qa"}


async def _record_a_call(make_proxy, fake, tmp_path):
    """A proxy whose default tenant is 'acme' records one pending Bash call in session s1."""
    cfg = tmp_path / "acme.toml"
    cfg.write_text(ACME)
    proxy = await make_proxy(ACME)
    fake.script(Reply.tool_call("Bash", CALL, "toolu_qa"))
    async with proxy.anthropic(default_headers={"X-Ctx-Session": "s1"}) as client:
        await client.messages.create(model="claude-test-1", max_tokens=20,
                                     messages=[{"role": "user", "content": "open a PR"}])
    store = proxy.settled_store()
    [record] = store.effects.list("acme", session="s1")
    return proxy, cfg, record


async def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = await asyncio.to_thread(main, list(argv))  # --url talks to the proxy on this loop
    out, err = capsys.readouterr()
    return rc, out, err


async def test_effects_cli_uses_the_configured_default_tenant(make_proxy, fake, tmp_path, capsys):
    proxy, cfg, record = await _record_a_call(make_proxy, fake, tmp_path)
    local = ("--config", str(cfg), "--data-dir", str(tmp_path / "data"))

    rc, out, err = await _cli(capsys, "effects", "list", "--session", "s1", "--json", *local)
    assert rc == 0, err
    assert [r["key"] for r in json.loads(out)] == [record.key]

    rc, out, err = await _cli(capsys, "effects", "get", record.key, "--json", *local)
    assert rc == 0, err
    assert json.loads(out)["tenant"] == "acme"

    rc, out, err = await _cli(capsys, "effects", "key", "--tool", "Bash", "--args", json.dumps(CALL),
                              "--session", "s1", "--config", str(cfg))
    assert rc == 0, err
    assert out.strip() == record.key

    rc, out, err = await _cli(capsys, "effects", "forget", "--session", "s1", "--dry-run", "--json", *local)
    assert rc == 0, err
    assert json.loads(out)["counts"]["effects"] == 1

    # an explicit --tenant still wins
    rc, out, err = await _cli(capsys, "effects", "list", "--session", "s1", "--json", "--tenant", "default", *local)
    assert rc == 0, err
    assert json.loads(out) == []
    rc, out, err = await _cli(capsys, "effects", "key", "--tool", "Bash", "--args", json.dumps(CALL),
                              "--session", "s1")
    assert rc == 0 and out.strip() != record.key  # no --config: tenant 'default', another key


async def test_effects_cli_over_the_admin_api_uses_the_proxys_tenant(make_proxy, fake, tmp_path, capsys):
    proxy, cfg, record = await _record_a_call(make_proxy, fake, tmp_path)
    remote = ("--url", proxy.url, "--token", TOKEN)

    rc, out, err = await _cli(capsys, "effects", "list", "--session", "s1", "--json", *remote)
    assert rc == 0, err
    assert [r["key"] for r in json.loads(out)] == [record.key]

    rc, out, err = await _cli(capsys, "effects", "get", record.key, *remote)
    assert rc == 0, err
    assert out.startswith(f"key {record.key}: pending")

    rc, out, err = await _cli(capsys, "effects", "resolve", record.key, "--resolution", "not_executed", *remote)
    assert rc == 0, err
    assert proxy.settled_store().effects.by_key("acme", record.key)[0].resolution == "not_executed"


async def test_effects_get_takes_the_short_key_list_prints(make_proxy, fake, tmp_path, capsys):
    proxy, cfg, record = await _record_a_call(make_proxy, fake, tmp_path)
    local = ("--config", str(cfg), "--data-dir", str(tmp_path / "data"))
    rc, out, err = await _cli(capsys, "effects", "list", "--session", "s1", *local)
    assert rc == 0, err
    short = next(word for word in out.split() if record.key.startswith(word) and len(word) < len(record.key))
    for where in (local, ("--url", proxy.url, "--token", TOKEN)):
        rc, out, err = await _cli(capsys, "effects", "get", short, *where)
        assert rc == 0, err
        assert out.startswith(f"key {record.key}: pending")  # the whole key, as the ledger files it

    # two keys that begin alike: the prefix they share names neither
    store = proxy.settled_store()
    for twin in ("0123456789abcdef" + "a" * 48, "0123456789abcdef" + "b" * 48):
        store.effects.put_pending("acme", key=twin, call_id=f"c_{twin[-1]}", tool="Bash", args_canonical="{}",
                                  session="s2")
    for where in (local, ("--url", proxy.url, "--token", TOKEN)):
        rc, out, err = await _cli(capsys, "effects", "get", "0123456789abcdef", *where)
        assert rc == 2 and "ambiguous: 2 keys begin with it" in err, (rc, err)
        rc, out, err = await _cli(capsys, "effects", "get", "0123456789abcdefa", *where)
        assert rc == 0 and out.startswith("key 0123456789abcdef" + "a" * 48), err


@pytest.mark.parametrize("command", ["config", "effects", "manifest", "pruned"])
def test_a_command_without_its_action_exits_2(capsys, command):
    assert main([command]) == 2
    assert "ACTION" in capsys.readouterr().out


class _ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no fileno")


def test_a_closed_pipe_is_no_traceback(monkeypatch):
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    assert main(["config", "default"]) == 1


def test_demo_help_lists_its_turns(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "Context Manifest:\n\n1. the agent asks for a PR" in out
    assert "5. the agent compacts" in out


def test_version_prints_the_installed_distributions(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"ctxproxy {metadata.version('ctxproxy')}"
