"""Config: typed, validated at start-up, errors name the key path."""
import subprocess
import sys

import pytest

from ctxproxy.config import ConfigError, load_config


def write(tmp_path, text):
    p = tmp_path / "ctxproxy.toml"
    p.write_text(text)
    return p


def test_embedded_defaults():
    cfg = load_config()
    assert cfg.server.host == "127.0.0.1" and cfg.server.port == 8788
    assert cfg.server.max_body_bytes == 32 * 1024 * 1024
    assert {r.api for r in cfg.routes.values()} == {"anthropic", "openai"}
    assert cfg.pipeline.request[0] == "identify"


def test_user_file_overrides_only_what_it_names(tmp_path):
    cfg = load_config(write(tmp_path, "[server]\nport = 9999\n"))
    assert cfg.server.port == 9999 and cfg.server.host == "127.0.0.1"
    assert cfg.source.endswith("ctxproxy.toml")


@pytest.mark.parametrize("text, message", [
    ("[server]\nprot = 1\n", "server.prot: unknown key"),
    ("[server]\nport = \"80\"\n", "server.port: expected an integer, got a string"),
    ("[server]\nport = 70000\n", "server.port: expected 0..65535"),
    ("[upstream]\nread_timeout = -1\n", "upstream.read_timeout: expected a positive number"),
    ("[routes.x]\napi = \"grpc\"\nupstream = \"http://a\"\nprefix = \"/x\"\n", "routes.x.api: expected one of"),
    ("[routes.x]\nupstream = \"ftp://a\"\nprefix = \"/x\"\n", "routes.x.upstream: expected an http(s) URL"),
    ("[routes.x]\nupstream = \"http://a\"\nprefix = \"x/\"\n", "routes.x.prefix"),
    ("[bogus]\n", "bogus: unknown section"),
    ("[filters.nosuch]\n", "filters.nosuch: unknown filter"),
    ("[filters.identify]\ntrust_headers = 1\n", "filters.identify.trust_headers: expected true or false"),
    ("[pipeline]\nrequest = \"identify\"\n", "pipeline.request: expected a list"),
    ("not toml = = 1", "not valid TOML"),
])
def test_bad_config_names_the_key(tmp_path, text, message):
    from ctxproxy.filters import filter_configs

    with pytest.raises(ConfigError) as exc:
        filter_configs(load_config(write(tmp_path, text)))
    assert message in str(exc.value)


def test_cli_overrides_apply():
    cfg = load_config(None, host="0.0.0.0", port=1234, data_dir="/tmp/x",
                      anthropic_upstream="http://127.0.0.1:9/", openai_upstream="http://127.0.0.1:8")
    assert (cfg.server.host, cfg.server.port, cfg.server.data_dir) == ("0.0.0.0", 1234, "/tmp/x")
    ups = {r.api: r.upstream for r in cfg.routes.values()}
    assert ups == {"anthropic": "http://127.0.0.1:9", "openai": "http://127.0.0.1:8"}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli", *args], capture_output=True, text=True,
                          timeout=60)


def test_config_check_command(tmp_path):
    ok = run_cli("config", "check", str(write(tmp_path, "[server]\nport = 9000\n")))
    assert ok.returncode == 0 and "ok" in ok.stdout
    bad = run_cli("config", "check", str(write(tmp_path, "[server]\nport = true\n")))
    assert bad.returncode == 2 and "server.port: expected an integer" in bad.stderr


def test_help_explains_every_command():
    out = run_cli("--help").stdout
    assert "serve" in out and "config" in out
    serve = run_cli("serve", "--help").stdout
    for flag in ("--host", "--port", "--config", "--anthropic-upstream", "--openai-upstream", "--data-dir",
                 "--workers"):
        assert flag in serve
