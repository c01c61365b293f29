"""gitleaks-format rule files, Go regex conversion, and redaction profiles."""
from __future__ import annotations

import re

import pytest
from secretcorpus import TEST_KEY, hyperscan_cache_dir

from ctxproxy.config import ConfigError
from ctxproxy.store.services.redaction import (
    ProfileRegistry,
    RedactionError,
    Redactor,
    RuleLoadError,
    convert_go_regex,
    load_gitleaks_file,
    load_gitleaks_text,
)

TEAM_RULES = r"""
title = "acme security team rules"

[extend]
disabledRules = ["telegram-bot-token"]

[allowlist]
description = "global: test fixtures"
regexes = ['''ACME-TEST-[0-9]+''']
stopwords = ["fixture"]

[[allowlists]]
targetRules = ["acme-internal-token"]
regexTarget = "line"
regexes = ['''#\s*not-a-secret''']

[[rules]]
id = "acme-internal-token"
description = "ACME internal service token"
regex = '''\b(acme_(?:live|test)_[a-z0-9]{24})\b'''
secretGroup = 1
keywords = ["acme_"]
entropy = 3.0

[[rules]]
id = "acme-db-password"
description = "password in acme.yaml, value in group 2"
regex = '''(?i)(acme[_-]?db[_-]?(?:pass|pwd))["']?\s*[:=]\s*["']?([^\s"']{8,64})'''
secretGroup = 2
keywords = ["acme"]
  [[rules.allowlists]]
  regexes = ['''^(?:changeme|example)''']
  stopwords = ["dummy"]
  [[rules.allowlists]]
  regexTarget = "match"
  condition = "AND"
  regexes = ['''ACME_DB_PASS''']
  paths = ['''\.example$''']

[[rules]]
id = "acme-legacy-key"
regex = '''legacy-[A-F0-9]{20}'''
  [rules.allowlist]
  regexes = ['''0{20}''']

[[rules]]
id = "acme-go-syntax"
description = "mid-pattern flags, a POSIX class and end-of-text in one"
regex = '''ref=(?i)ACMEKEY[[:digit:]]{6}\z'''

[[rules]]
id = "acme-unicode"
regex = '''\p{Greek}{8,}'''

[[rules]]
id = "acme-ungreedy"
regex = '''(?U)x+y'''

[[rules]]
id = "acme-path-only"
path = '''\.pem$'''

[[rules]]
id = "acme-empty"
regex = '''a*'''

[[rules]]
id = "acme-bad-group"
regex = '''(tok)_[0-9]{10}'''
secretGroup = 3
"""


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "gitleaks.toml"
    path.write_text(TEAM_RULES, encoding="utf-8")
    return path


def test_rule_file_loads_and_reports_what_it_cannot_use(team):
    rf = load_gitleaks_file(team)
    ids = [r.id for r in rf.rules]
    assert ids == ["acme-internal-token", "acme-db-password", "acme-legacy-key", "acme-go-syntax"]
    errors = dict(rf.errors)
    assert set(errors) == {"acme-unicode", "acme-ungreedy", "acme-path-only", "acme-empty", "acme-bad-group"}
    assert "Unicode" in errors["acme-unicode"] and "ungreedy" in errors["acme-ungreedy"]
    assert "path-only" in errors["acme-path-only"] and "empty" in errors["acme-empty"]
    assert "secretGroup 3" in errors["acme-bad-group"]
    assert rf.disabled == ("telegram-bot-token",)
    assert all(r.group == "custom" and r.source == str(team) for r in rf.rules)


@pytest.mark.parametrize("engine", [True, False], ids=["hyperscan", "python"])
def test_rule_file_redacts_with_allowlists_and_secret_group(team, engine):
    rf = load_gitleaks_file(team)
    red = Redactor(rf.rules, use_hyperscan=engine, cache_dir=hyperscan_cache_dir())
    tok = "acme_live_k3j9x7q2m5v8b1n4c6z0w2e7"

    def redact(text):
        return red.redact(text, TEST_KEY)

    assert redact(f"token {tok} here").counts == {"acme-internal-token": 1}
    assert redact(f"token {tok}  # not-a-secret").counts == {}  # targeted global allowlist on the line
    assert redact("token acme_test_fixture000aaabbbcccdd1 x").counts == {}  # global stopword
    res = redact("acme_db_pass: 'Zq8!rT2#wX5v' ok")
    assert res.counts == {"acme-db-password": 1}
    assert "acme_db_pass: '[REDACTED:acme-db-password:" in res.text  # only group 2 replaced
    assert redact("acme_db_pwd=changeme-please").counts == {}  # rule allowlist regex
    assert redact("acme_db_pwd=dummy-value-1").counts == {}  # rule stopword
    assert redact("ACME_DB_PASS=Zq8rT2wX5vK1").counts == {"acme-db-password": 1}  # AND with paths never applies
    assert redact("key legacy-0A1B2C3D4E5F60718293 and legacy-00000000000000000000").counts == {"acme-legacy-key": 1}
    assert redact("ref=acmekey123456").counts == {"acme-go-syntax": 1}
    assert redact("ref=ACMEKEY123456 trailing").counts == {}  # \z: only at the very end
    assert redact("REF=acmekey123456").counts == {}  # (?i) applies only after it
    assert redact("ACME-TEST-42 acme_live_zzzz").counts == {}


def test_keywords_must_be_on_the_line(team):
    rules = load_gitleaks_text(r"""
[[rules]]
id = "hex-near-keyword"
regex = '''\b([a-f0-9]{32})\b'''
keywords = ["widgetco"]
""").rules
    red = Redactor(rules, use_hyperscan=False)
    hexv = "9f86d081884c7d659a2feaa0c55ad015"
    assert red.redact(f"WIDGETCO_KEY={hexv}", TEST_KEY).changed
    assert not red.redact(f"checksum {hexv}", TEST_KEY).changed
    assert not red.redact(f"widgetco docs\n\nchecksum {hexv}", TEST_KEY).changed


@pytest.mark.parametrize("go, python", [
    (r"abc(?i)def|ghi", r"abc(?i:def)|(?i:ghi)"),
    (r"(a(?i)b|c)d", r"(a(?i:b)|(?i:c))d"),
    (r"(?i)start$", r"(?i)start\Z"),
    (r"(?m)^a$", r"(?m)^a$"),
    (r"[[:alnum:]_]+\z", r"[0-9A-Za-z_]+\Z"),
    (r"\Qa.b*\E+", r"a\.b\*+"),
    (r"x{,3}", r"x\{,3}"),
    (r"(?<name>k)(?P<v>v)", r"(?P<name>k)(?P<v>v)"),
    (r"\x{41}\x{263a}", r"\x41\u263a"),
    (r"[a[b]", r"[a\[b]"),
])
def test_go_regex_conversion(go, python):
    assert convert_go_regex(go) == python
    re.compile(python)


def test_unreadable_rule_files_are_errors(tmp_path):
    with pytest.raises(RuleLoadError):
        load_gitleaks_file(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[rules]\nid=", encoding="utf-8")
    with pytest.raises(RuleLoadError):
        load_gitleaks_file(bad)


def test_extend_path_and_use_default(tmp_path):
    (tmp_path / "base.toml").write_text(r"""
[[rules]]
id = "base-one"
regex = '''\bbase1_[a-z0-9]{16}\b'''
[[rules]]
id = "base-two"
regex = '''\bbase2_[a-z0-9]{16}\b'''
""", encoding="utf-8")
    child = tmp_path / "child.toml"
    child.write_text(r"""
[extend]
path = "base.toml"
useDefault = false
disabledRules = ["base-two"]
[[rules]]
id = "child"
regex = '''\bchild_[a-z0-9]{16}\b'''
""", encoding="utf-8")
    rf = load_gitleaks_file(child)
    assert [r.id for r in rf.rules] == ["base-one", "child"]
    rf2 = load_gitleaks_text('[extend]\nuseDefault = true\n')
    assert rf2.rules == () and rf2.notes and rf2.notes[0][0] == "extend"


# -- profiles -------------------------------------------------------------------------------


def test_profile_registry(team):
    reg = ProfileRegistry.build(
        {"default": {},
         "strict": {"groups": ["llm", "cloud", "vcs", "saas", "crypto", "generic", "pii"],
                    "rule_files": [team.name], "reversible": True, "vault_ttl_seconds": 30,
                    "disabled_rules": ["jwt"]},
         "team": {"groups": ["vcs"], "rule_files": [str(team)]}},
        cache_dir=hyperscan_cache_dir(), base_dir=team.parent)
    assert set(reg.names) == {"default", "strict", "team"}
    default, strict, team_p = reg.get(), reg.get("strict"), reg.get("team")
    assert not default.reversible and default.new_vault() is None
    assert strict.reversible and strict.new_vault().ttl == 30
    strict_ids = {r.id for r in strict.redactor.rules}
    assert "pii-email" in strict_ids and "jwt" not in strict_ids and "acme-internal-token" in strict_ids
    assert "telegram-bot-token" not in strict_ids  # disabledRules of the team file
    assert {rid for rid, _ in strict.rule_errors} >= {"acme-unicode", "acme-path-only"}
    team_ids = [r.id for r in team_p.redactor.rules]
    assert team_ids[0].startswith("github") and "acme-internal-token" in team_ids and "pii-email" not in team_ids
    with pytest.raises(RedactionError):
        reg.get("nope")
    tok = "acme_live_k3j9x7q2m5v8b1n4c6z0w2e7"
    assert team_p.redactor.redact(f"x {tok}", TEST_KEY).counts == {"acme-internal-token": 1}
    assert not default.redactor.redact(f"x {tok}", TEST_KEY).changed
    # the same rule set compiles once
    again = ProfileRegistry.build({"a": {}, "b": {}}, cache_dir=hyperscan_cache_dir())
    assert again.get("a").redactor is again.get("b").redactor is again.get("default").redactor


@pytest.mark.parametrize("raw, message", [
    ({"p": {"groups": ["llm", "nope"]}}, "unknown rule group"),
    ({"p": {"reversible": "yes"}}, "reversible"),
    ({"p": {"surprise": 1}}, "unknown key"),
    ({"p": {"groups": "llm"}}, "list of strings"),
    ({"p": {"vault_ttl_seconds": 0}}, "positive"),
    ({"p": {"rule_files": ["/nonexistent/rules.toml"]}}, "cannot read"),
])
def test_profile_config_errors(raw, message):
    with pytest.raises(ConfigError, match=message):
        ProfileRegistry.build(raw, use_hyperscan=False)
