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


def test_a_route_of_the_defaults_keeps_the_keys_a_file_leaves_out(tmp_path):
    path = write(tmp_path, '[routes.anthropic]\nupstream = "http://127.0.0.1:9"\n')
    cfg = load_config(path)
    assert cfg.routes["anthropic"].api == "anthropic" and cfg.routes["anthropic"].upstream == "http://127.0.0.1:9"
    assert cfg.routes["openai"].upstream == "https://api.openai.com"
    ok = run_cli("config", "check", str(path))
    assert ok.returncode == 0, ok.stderr


def test_sections_keep_default_keys_and_tables_of_values_replace_whole(tmp_path):
    cfg = load_config(write(tmp_path, "[memory.gate]\nttl_days = { event = 7 }\n[filters.redact]\nresponses = false\n"
                                      "[tenants.acme]\napi_key_env = \"ACME_KEY\"\n"))
    assert cfg.memory.gate.ttl_days == {"event": 7}  # failures no longer expire: the table is one value
    assert cfg.memory.gate.recalled_max_chars == 1000
    assert cfg.filters["redact"]["responses"] is False
    assert cfg.filters["redact"]["profile"] == "default" and "default" in cfg.filters["redact"]["profiles"]
    assert cfg.tenants["acme"].api_key_env == "ACME_KEY"


def test_each_filter_section_of_the_defaults_equals_its_own_defaults():
    """A filter's nested tables (``[filters.recall.rank]``) are parsed from what a
    file names over the section's own defaults: they must say what the embedded
    file says, or naming one key would change the others."""
    import tomllib

    from ctxproxy.config import default_config_text, parse_section
    from ctxproxy.filters import FILTERS, filter_class

    raw = tomllib.loads(default_config_text())["filters"]
    for name in FILTERS:
        cls = filter_class(name).Config
        if cls is None or name == "redact":  # redact's profiles are checked below
            continue
        assert parse_section(cls, raw.get(name), name) == parse_section(cls, {}, name), name
    from ctxproxy.store.services.redaction.profiles import ProfileSpec

    assert ProfileSpec.parse("default", raw["redact"]["profiles"]["default"]) == ProfileSpec("default")


def test_a_second_default_route_for_one_api_names_the_first(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_config(write(tmp_path, '[routes.claude]\napi = "anthropic"\nupstream = "http://127.0.0.1:9"\n'))
    assert "routes.claude: routes.anthropic is already the default" in str(exc.value)
    assert "[routes.anthropic]" in str(exc.value)


@pytest.mark.parametrize("text, message", [
    ("[server]\nprot = 1\n", "server.prot: unknown key"),
    ("[server]\nport = \"80\"\n", "server.port: expected an integer, got a string"),
    ("[server]\nport = 70000\n", "server.port: expected 0..65535"),
    ("[server]\nloop = \"trio\"\n", "server.loop: expected one of"),
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
    return subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", *args], capture_output=True, text=True,
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


@pytest.mark.parametrize("text, message", [
    ("[store]\nmap_size_mb = 0\n", "store.map_size_mb: expected at least 1 (MiB), got 0"),
    ("[store]\nmap_size_mb = -5\n", "store.map_size_mb: expected at least 1"),
    ("[store]\nmap_size_mb = 512\nmax_map_size_mb = 256\n",
     "store.max_map_size_mb: expected at least map_size_mb (512), got 256"),
    ("[store]\nmax_map_size_mb = 99999999999\n", "store.max_map_size_mb: expected at most"),
    ("[store]\npending_timeout = 0\n", "store.pending_timeout: expected a positive number of seconds, got 0"),
    ("[store]\npending_timeout = -1.5\n", "store.pending_timeout: expected a positive number"),
    ("[store]\npending_timeout = inf\n", "store.pending_timeout: expected a positive number"),
    ("[upstream]\npool_size = 0\n", "upstream.pool_size: expected at least 1 connection, got 0"),
    ("[upstream]\npool_size = -3\n", "upstream.pool_size: expected at least 1"),
    ("[upstream]\nconnect_timeout = 0\n", "upstream.connect_timeout: expected a positive number"),
    ("[upstream]\nread_timeout = nan\n", "upstream.read_timeout: expected a positive number"),
    ("[server]\nshutdown_timeout = -1\n", "server.shutdown_timeout: expected 0..3600 seconds"),
    ("[server]\nshutdown_timeout = nan\n", "server.shutdown_timeout: expected 0..3600 seconds"),
])
def test_sizes_timeouts_and_limits_are_validated(tmp_path, text, message):
    with pytest.raises(ConfigError) as exc:
        load_config(write(tmp_path, text))
    assert message in str(exc.value)
    bad = run_cli("config", "check", str(write(tmp_path, text)))
    assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr


def test_shutdown_timeout_zero_is_allowed_and_overridable():
    assert load_config().server.shutdown_timeout == 5.0
    assert load_config(None, shutdown_timeout=0).server.shutdown_timeout == 0
    with pytest.raises(ConfigError, match="server.shutdown_timeout"):
        load_config(None, shutdown_timeout=-1)


@pytest.mark.parametrize("text, message", [
    ("[pipeline]\nrequest = [\"identify\", \"redcat\"]\n",
     "pipeline.request[1]: unknown filter 'redcat' (known: identify,"),
    ("[routes.anthropic]\napi = \"anthropic\"\nupstream = \"https://api.anthropic.com\"\n"
     "filters = [\"identify\", \"nope\"]\n", "routes.anthropic.filters[1]: unknown filter 'nope'"),
    ("[pipeline]\nrequest = [\"identify\", \"redact\", \"identify\"]\n",
     "pipeline.request: filter 'identify' is listed twice"),
    ("[filters.redact.profiles.default]\nrule_files = [\"missing-gitleaks.toml\"]\n",
     "filters.redact.profiles.default.rule_files: *missing-gitleaks.toml: cannot read rule file"),
])
def test_config_check_builds_the_pipelines(tmp_path, text, message):
    """What only failed when ``serve`` built its filters fails ``config check``,
    with the key path; ``serve`` reports the same line and exits 2."""
    path = write(tmp_path, text)
    bad = run_cli("config", "check", str(path))
    assert bad.returncode == 2, bad.stdout
    assert said(bad.stderr, message) and "Traceback" not in bad.stderr, bad.stderr
    serve = run_cli("serve", "--config", str(path), "--port", "0", "--data-dir", str(tmp_path / "d"))
    assert serve.returncode == 2 and said(serve.stderr, message), serve.stderr
    assert "Traceback" not in serve.stderr


def said(text: str, message: str) -> bool:
    """``message`` in ``text``, where ``*`` in it stands for anything (a path)."""
    pos = 0
    for part in message.split("*"):
        pos = text.find(part, pos)
        if pos < 0:
            return False
        pos += len(part)
    return True


def test_config_check_reads_rule_files_beside_the_config(tmp_path):
    (tmp_path / "team-rules.toml").write_text(
        '[[rules]]\nid = "team-token"\nregex = \'\'\'team_[a-z0-9]{24}\'\'\'\nkeywords = ["team_"]\n')
    ok = run_cli("config", "check", str(write(
        tmp_path, "[filters.redact.profiles.default]\nrule_files = [\"team-rules.toml\"]\n")))
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""  # no notes about the store the check does not open
    assert not (tmp_path / ".ctxproxy").exists()
