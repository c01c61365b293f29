"""The options every store-reading command shares (``--data-dir``,
``--config``, ``--tenant``, from proxy/cli/options.py) and the admin API's one
answer when a proxy runs without a store."""
import aiohttp
import pytest

from ctxproxy.config import load_config
from ctxproxy.filters.effects.rules import canonical_json, effect_key
from ctxproxy.proxy.cli.main import main
from ctxproxy.proxy.edge.server import make_app
from ctxproxy.store import open_store

# every subcommand that opens the store, with what it needs besides the shared options
STORE_COMMANDS = [
    ["effects", "list"],
    ["effects", "get", "k" * 64],
    ["effects", "resolve", "k" * 64, "--resolution", "failed"],
    ["effects", "forget", "--session", "s-1", "--dry-run"],
    ["manifest", "show", "--session", "s-1"],
    ["pruned", "show", "p-1"],
    ["pruned", "list", "--session", "s-1"],
]


@pytest.fixture
def configured(tmp_path):
    """A data dir with an (empty) store and a config naming it and a default tenant."""
    data = tmp_path / "data"
    open_store(str(data / "store")).close()
    cfg = tmp_path / "ctxproxy.toml"
    cfg.write_text(f'[server]\ndata_dir = "{data}"\n\n[filters.identify]\ndefault_tenant = "acme"\n')
    return data, cfg


@pytest.mark.parametrize("command", STORE_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_missing_store_is_one_line_for_every_command(command, tmp_path, capsys):
    nowhere = tmp_path / "nowhere"
    assert main([*command, "--data-dir", str(nowhere), "--tenant", "acme"]) == 1
    err = capsys.readouterr().err
    assert f"no store at {nowhere / 'store'}" in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("command", STORE_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_every_store_command_rejects_an_empty_tenant(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--tenant", " "])
    assert exc.value.code == 2 and "must not be empty" in capsys.readouterr().err


def test_config_gives_the_store_and_the_default_tenant(configured, capsys):
    data, cfg = configured
    assert main(["manifest", "show", "--session", "s-1", "--config", str(cfg)]) == 1
    assert "no manifests for session 's-1' (tenant 'acme')" in capsys.readouterr().err
    assert main(["manifest", "show", "--session", "s-1", "--config", str(cfg), "--tenant", "globex"]) == 1
    assert "(tenant 'globex')" in capsys.readouterr().err
    assert main(["effects", "list", "--config", str(cfg), "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"
    assert main(["pruned", "list", "--session", "s-1", "--data-dir", str(data)]) == 0
    assert "nothing pruned in session 's-1'" in capsys.readouterr().err
    # --data-dir wins over the config's data_dir
    assert main(["effects", "list", "--config", str(cfg), "--data-dir", str(data.parent / "elsewhere")]) == 1
    assert "no store at" in capsys.readouterr().err


def test_a_command_without_a_store_takes_the_default_tenant_of_its_config(configured, capsys):
    _, cfg = configured
    argv = ["effects", "key", "--tool", "Bash", "--args", '{"command": "ls"}', "--task", "t-1"]
    assert main([*argv, "--config", str(cfg)]) == 0
    assert capsys.readouterr().out.strip() == effect_key("acme", "t-1", "Bash", canonical_json({"command": "ls"}))
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == effect_key("default", "t-1", "Bash",
                                                         canonical_json({"command": "ls"}))


TOKEN = "admin-test-token"
STORE_ENDPOINTS = [
    ("GET", "effects?session=s-1", None),
    ("GET", "effects/" + "k" * 64, None),
    ("POST", "effects/lookup", {"tool": "Bash", "task": "t", "arguments": {}}),
    ("POST", "effects/" + "k" * 64 + "/resolve", {"resolution": "failed"}),
    ("GET", "manifests/turn-1", None),
    ("GET", "manifests?session=s-1", None),
    ("GET", "pruned/p-1", None),
    ("GET", "pruned?session=s-1", None),
]


async def test_every_store_endpoint_answers_503_without_a_store(tmp_path, serve_app, monkeypatch):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    toml = tmp_path / "ctxproxy.toml"
    toml.write_text('[pipeline]\nrequest = ["identify"]\n')
    cfg = load_config(toml, port=0, data_dir=str(tmp_path / "data"))
    url = await serve_app(make_app(cfg, services={"config": cfg, "secret": b"\x00" * 32}))
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with http.get(f"{url}/ctx/v1/status") as r:  # the API itself answers
            assert r.status == 200
        for method, path, body in STORE_ENDPOINTS:
            async with http.request(method, f"{url}/ctx/v1/{path}", json=body) as r:
                assert r.status == 503, path
                assert "Retry-After" not in r.headers  # waiting does not bring a store
                assert await r.json() == {"error": {"type": "unavailable", "status": 503, "message": "no store is configured"}}
