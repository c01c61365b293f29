"""Transparent mode's host routing: which hosts are decrypted, which route a path takes."""
from __future__ import annotations

import pytest

from ctxproxy.config import ConfigError, load_config
from ctxproxy.proxy.mitm.hosts import HostRouter

ROUTES = """
[routes.openrouter]
api = "openai"
prefix = "/openrouter"
upstream = "https://openrouter.ai/api/v1"
api_key_env = "OPENROUTER_KEY_FOR_TEST"

[routes.azure]
api = "openai"
prefix = "/azure"
upstream = "https://x.openai.azure.com/openai"
"""


@pytest.fixture
def hosts(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_KEY_FOR_TEST", "sk-or-injected")
    path = tmp_path / "c.toml"
    path.write_text(ROUTES)
    return HostRouter(load_config(path))


def test_only_configured_hosts_are_intercepted(hosts):
    assert hosts.hosts() == ["api.anthropic.com:443", "api.openai.com:443", "chatgpt.com:443",
                             "openrouter.ai:443", "x.openai.azure.com:443"]
    assert hosts.intercepts("API.OpenAI.com.", 443)
    assert not hosts.intercepts("api.openai.com", 8443)  # another port is another service
    assert not hosts.intercepts("github.com", 443) and not hosts.intercepts(None, 443)
    assert hosts.match("github.com", 443, "/v1/messages", "POST") is None


@pytest.mark.parametrize("host, path, route, api, rest", [
    ("api.anthropic.com", "/v1/messages", "anthropic", "anthropic", "/v1/messages"),
    ("api.anthropic.com", "/v1/messages/count_tokens", "anthropic", "anthropic", "/v1/messages/count_tokens"),
    ("api.openai.com", "/v1/chat/completions", "openai", "chat", "/v1/chat/completions"),
    ("api.openai.com", "/v1/%72esponses?x=1", "openai", "responses", "/v1/responses"),  # escapes do not hide it
    ("api.openai.com", "/v1/models", "openai", None, "/v1/models"),
    ("openrouter.ai", "/api/v1/chat/completions", "openrouter", "chat", "/chat/completions"),
    ("openrouter.ai", "/chat/completions", "openrouter", "chat", "/chat/completions"),  # outside its base: still ours
    ("x.openai.azure.com", "/openai/deployments/d/chat/completions", "azure", "chat",
     "/deployments/d/chat/completions"),
    ("chatgpt.com", "/backend-api/codex/responses", "openai", "responses", "/backend-api/codex/responses"),
])
def test_a_path_takes_its_hosts_route(hosts, host, path, route, api, rest):
    m = hosts.match(host, 443, path, "POST")
    assert (m.route.name, m.api, m.upstream_path) == (route, api, rest)


def test_an_extra_host_never_gets_a_routes_injected_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_KEY_FOR_TEST", "sk-injected")
    path = tmp_path / "c.toml"
    path.write_text('[routes.openai]\napi = "openai"\nupstream = "https://api.openai.com"\n'
                    'api_key_env = "OPENAI_KEY_FOR_TEST"\n')
    hosts = HostRouter(load_config(path))
    assert hosts.match("api.openai.com", 443, "/v1/responses", "POST").route.injected_key == "sk-injected"
    chatgpt = hosts.match("chatgpt.com", 443, "/backend-api/codex/responses", "POST")
    assert chatgpt.route.name == "openai" and chatgpt.route.injected_key == ""  # its OAuth token goes on


def test_one_gateway_for_both_families_routes_by_path(tmp_path):
    cfg = load_config(None, anthropic_upstream="https://gw.local:9443", openai_upstream="https://gw.local:9443")
    hosts = HostRouter(cfg)
    assert hosts.match("gw.local", 9443, "/v1/messages", "POST").route.name == "anthropic"
    assert hosts.match("gw.local", 9443, "/v1/chat/completions", "POST").route.name == "openai"


@pytest.mark.parametrize("bad", ['hosts = ["chatgpt.com/backend-api"]', 'hosts = ["a.com:443"]', "port = 70000"])
def test_bad_mitm_section_names_the_key(tmp_path, bad):
    path = tmp_path / "c.toml"
    path.write_text(f"[mitm]\n{bad}\n")
    with pytest.raises(ConfigError, match=r"mitm\.(hosts\[0\]|port)"):
        load_config(path)


def test_a_passthrough_host_is_never_intercepted(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[mitm]\npassthrough = ["chatgpt.com", "API.Anthropic.com", "example.org"]\n')
    hosts = HostRouter(load_config(path))
    assert hosts.hosts() == ["api.openai.com:443"]
    assert not hosts.intercepts("api.anthropic.com", 443) and not hosts.intercepts("chatgpt.com", 443)
    assert hosts.passthrough == ["api.anthropic.com", "chatgpt.com", "example.org"]
    assert hosts.needless_passthrough == ["example.org"]  # said at start-up: it was never decrypted


def test_passthrough_is_empty_by_default():
    cfg = load_config(None)
    assert cfg.mitm.passthrough == () and cfg.mitm.passthrough_programs == ()


@pytest.mark.parametrize("toml, message", [
    ("pinned_passthrough = true", "mitm.pinned_passthrough: removed: a refused certificate no longer passes"),
    ("pinned_passthrough = false", "mitm.pinned_passthrough: removed"),
    ('passthrough = ["https://api.openai.com"]', "mitm.passthrough[0]: expected a host name"),
    ('passthrough_programs = ["curl"]', "mitm.passthrough_programs[0]: expected the absolute path"),
    ('passthrough_programs = ["/usr/bin/node"]', "/usr/bin/node runs many programs"),
    ('passthrough_programs = ["/usr/local/bin/python3.12"]', "runs many programs"),
])
def test_passthrough_config_errors(tmp_path, toml, message):
    path = tmp_path / "c.toml"
    path.write_text(f"[mitm]\n{toml}\n")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace(".", r"\.")):
        load_config(path)
