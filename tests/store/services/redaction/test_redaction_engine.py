"""The redaction engine: placeholders, both engine paths, caches, fail-closed, vault, JSON."""
from __future__ import annotations

import json
import pickle
import random
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretcorpus import OTHER_KEY, TEST_KEY, build_corpus, hyperscan_cache_dir, realistic_megabyte, redactor

from ctxproxy.store.services.redaction import (
    BUILTIN_GROUPS,
    DEFAULT_GROUPS,
    GROUPS,
    PLACEHOLDER_RE,
    RedactionError,
    Redactor,
    Vault,
    builtin_rules,
    make_rule,
    placeholder_id,
    redact_json_text,
)
from ctxproxy.store.services.redaction import engine as engine_mod
from ctxproxy.store.services.redaction import prefilter
from ctxproxy.store.services.redaction.rules import iban_ok, luhn_ok, shannon_entropy

GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
ANT = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa_-" * 2 + "Qw3Er4Ty5U" + "AA"
AWS_ID = "AKIAZ3MXQ7RT5WVY2KLP"
PG_PW = "s3cr3tP4ss-w0rd"


@pytest.fixture(scope="module")
def hs():
    return redactor("hyperscan")


@pytest.fixture(scope="module")
def py():
    return redactor("python")


# -- the rule set -----------------------------------------------------------------------


def test_builtin_rules_cover_the_required_formats():
    rules = builtin_rules()
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids))
    credential_rules = [r for r in rules if r.group != "pii"]
    assert len(credential_rules) >= 60
    groups = {r.group for r in rules}
    assert groups == set(BUILTIN_GROUPS)
    for needed in ("openai-project-key", "anthropic-api-key", "google-api-key", "azure-openai-key", "mistral-api-key",
                   "groq-api-key", "huggingface-token", "openrouter-api-key", "cohere-api-key", "replicate-api-token",
                   "perplexity-api-key", "xai-api-key", "deepseek-api-key", "together-api-key",
                   "aws-access-key-id", "aws-secret-access-key", "gcp-service-account-key", "azure-storage-account-key",
                   "github-pat", "github-fine-grained-pat", "gitlab-pat", "bitbucket-app-password", "slack-token",
                   "slack-webhook-url", "stripe-secret-key", "twilio-api-key", "sendgrid-api-key", "mailgun-api-key",
                   "npm-token", "pypi-token", "dockerhub-token", "shopify-token", "datadog-api-key",
                   "sentry-auth-token", "discord-bot-token", "telegram-bot-token", "digitalocean-token",
                   "heroku-api-key", "vault-token", "doppler-token", "linear-api-key", "notion-token",
                   "atlassian-api-token", "private-key", "jwt", "url-credentials", "dotenv-assignment",
                   "keyword-high-entropy", "pii-email", "pii-phone", "pii-credit-card"):
        assert needed in ids, needed
    assert "pii" not in DEFAULT_GROUPS and set(DEFAULT_GROUPS) < set(GROUPS)


def test_validators():
    assert luhn_ok("4111 1111 1111 1111") and not luhn_ok("4111 1111 1111 1112")
    assert iban_ok("GB82 WEST 1234 5698 7654 32") and not iban_ok("GB82 WEST 1234 5698 7654 33")
    assert shannon_entropy("") == 0.0 and shannon_entropy("aaaa") == 0.0
    assert abs(shannon_entropy("abcd") - 2.0) < 1e-9


# -- redaction and placeholders ---------------------------------------------------------------


def test_redacts_secrets_and_keeps_the_rest(hs):
    text = (f"export GITHUB_TOKEN={GHP}\nANTHROPIC_API_KEY={ANT}\n"
            f"DATABASE_URL=postgres://admin:{PG_PW}@db.internal:5432/app\nid={AWS_ID} example=AKIAIOSFODNN7EXAMPLE\n"
            "Nothing else here: sk-... <your-key> xxxxxxxx\n")
    res = hs.redact(text, TEST_KEY)
    for secret in (GHP, ANT, PG_PW, AWS_ID):
        assert secret not in res.text
    assert res.counts == {"github-pat": 1, "anthropic-api-key": 1, "url-credentials": 1, "aws-access-key-id": 1}
    assert "postgres://admin:[REDACTED:url-credentials:" in res.text and "@db.internal:5432/app" in res.text
    assert "AKIAIOSFODNN7EXAMPLE" in res.text and "sk-... <your-key> xxxxxxxx" in res.text
    assert res.changed and len(res.findings) == 4
    for f in res.findings:
        assert text[f.start:f.end] in (GHP, ANT, PG_PW, AWS_ID)
    clean = hs.redact("just prose about tokens and passwords", TEST_KEY)
    assert not clean.changed and clean.text == "just prose about tokens and passwords" and clean.counts == {}


def test_placeholder_format_and_consistency(hs):
    text = f"a={GHP} b={GHP} c={GHP[:-1]}Z"
    one = hs.redact(text, TEST_KEY).text
    phs = PLACEHOLDER_RE.findall(one)
    assert len(phs) == 3
    assert phs[0] == phs[1] != phs[2]  # same secret, same placeholder; another secret, another one
    assert re.fullmatch(r"\[REDACTED:github-pat:[0-9a-f]{8}\]", phs[0])
    other = hs.redact(text, OTHER_KEY).text
    assert PLACEHOLDER_RE.findall(other)[0] != phs[0]  # unlinkable across sessions
    assert hs.placeholder("github-pat", GHP, TEST_KEY) == phs[0]
    assert placeholder_id("My Rule/ID") == "my-rule-id"


CONTEXTS = ("{ph}", "KEY={ph}", 'api_key = "{ph}"', '{{"token": "{ph}"}}', "Authorization: Bearer {ph}",
            "postgres://user:{ph}@db:5432/app", "password: {ph}", "token {ph} issued", "{ph}{ph}",
            "export SECRET={ph} # rotated", "sk-{ph}")


@pytest.mark.parametrize("rule", builtin_rules(), ids=lambda r: r.id)
def test_placeholder_never_matches_a_rule(rule, hs):
    """Neither the rule's own regex nor the engine takes a placeholder for a secret."""
    rng = random.Random(rule.id)
    ph = f"[REDACTED:{placeholder_id(rule.id)}:{rng.getrandbits(32):08x}]"
    assert PLACEHOLDER_RE.fullmatch(ph)
    every = redactor("hyperscan", BUILTIN_GROUPS)
    for ctx in CONTEXTS:
        text = ctx.format(ph=ph)
        spans = [m.span() for m in PLACEHOLDER_RE.finditer(text)]
        for m in rule.regex.finditer(text):
            g = rule.secret_group if rule.secret_group is not None else next(
                (i for i in range(1, rule.regex.groups + 1) if m.group(i)), 0)
            s, e = m.span(g)
            assert not any(s < pe and e > ps for ps, pe in spans), (rule.id, text)
        assert every.redact(text, TEST_KEY).text == text


def test_redaction_is_idempotent(hs):
    for sample in build_corpus(seed=11, positives_per_rule=2)[::3]:
        once = hs.redact(sample.text, TEST_KEY).text
        assert hs.redact(once, TEST_KEY).text == once


def test_non_ascii_text_keeps_offsets(hs, py):
    text = f"📦 déploiement — clé: {GHP} ✓ 中文 password = \"ünïcødé-p4ss-{AWS_ID}\"\n𝔘𝔫𝔦 {ANT}"
    a, b = hs.redact(text, TEST_KEY), py.redact(text, TEST_KEY)
    assert a == b
    assert GHP not in a.text and ANT not in a.text and AWS_ID not in a.text
    for f in a.findings:
        assert text[f.start:f.end]


_STS_TOKEN = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD" + "k7Qm2Zp9Xr4Tn8Vb1Lc6Hs3Wy5Ja0Ud" * 8
_SHAPES = [
    # (text, the secret that must vanish)
    ('{"output": "deploy ok\\n' + ANT + '\\n"}', ANT),  # a JSON-escaped newline glued to the token
    ("https://ci.internal/cb?next=%2Fhooks%3Ftoken%3D" + GHP + "&x=1", GHP),  # a URL escape glued to it
    ("line one\\r\\n\\t" + GHP, GHP),
    ("STRIPE_SECRET_KEY=Xq7Lm2Pz9Rt4Wv8Yb3Nc6Hd1 node server.js", "Xq7Lm2Pz9Rt4Wv8Yb3Nc6Hd1"),
    ("$ OPENAI_API_KEY=Tz8Kp3Wm6Qr1Vx9Lb4Nf7Hc2Gd5 python agent.py", "Tz8Kp3Wm6Qr1Vx9Lb4Nf7Hc2Gd5"),
    ("docker run -e MY_SERVICE_KEY=Rb5Nw8Kq2Zt6Lm9Xv3Pc run", "Rb5Nw8Kq2Zt6Lm9Xv3Pc"),
    ("DJANGO_SECRET_KEY='k9#Vz!2q (Lm)x&8 {Rt}@w4%Pb'", "k9#Vz!2q (Lm)x&8 {Rt}@w4%Pb"),
    (f'{{"Credentials": {{"AccessKeyId": "ASIAZ3MXQ7RT5WVY2KLP", "SessionToken": "{_STS_TOKEN}"}}}}', _STS_TOKEN),
    ("PGPASSWORD=Hq4Vm8Zr2Kt6 psql -h db.internal -U app orders", "Hq4Vm8Zr2Kt6"),
    ('{"user": "svc", "password": "correct horse battery staple 42"}', "correct horse battery staple 42"),
    ('    password = "Zx7q{Lm2Rt9"', "Zx7q{Lm2Rt9"),
    ("db_password: 'Kp3 Wv9!Xq2&Lm'", "Kp3 Wv9!Xq2&Lm"),
    ("DATABASE_URL=postgres://user:p@ss7Wq2Zx9@db.internal:5432/app", "p@ss7Wq2Zx9"),
    ("mysql://root:Sup3r@Secret!@localhost/db", "Sup3r@Secret!"),
    # a .env file inside JSON text (a tool printing JSON): the newlines are written out
    ('{"env": "DEBUG=1\\nDB_PASSWORD=Wq8Zr3Lm7Kt2Xv\\nPORT=80"}', "Wq8Zr3Lm7Kt2Xv"),
    ('{"env": "DEBUG=1\\nSTRIPE_SECRET_KEY=Xq7Lm2Pz9Rt4Wv8Yb3Nc6Hd1"}', "Xq7Lm2Pz9Rt4Wv8Yb3Nc6Hd1"),
    ('"PGPASSWORD=Hq4Vm8Zr2Kt6"', "Hq4Vm8Zr2Kt6"),
]


@pytest.mark.parametrize("text,secret", _SHAPES, ids=[f"shape{i}" for i in range(len(_SHAPES))])
def test_credential_shapes_the_first_rules_missed(hs, py, text, secret):
    for red in (hs, py):
        res = red.redact(text, TEST_KEY)
        assert secret not in res.text, res.text
        assert any(text[f.start:f.end] == secret for f in res.findings), (res.findings, text)


# A credential-style assignment inside another credential's value, or in a header quoted
# in text (a log line, a curl command, a JSON string printed in text): (text, value).
NESTED_VALUE = "Hq4Vm8Zr2Kt6Wq8Zr3"
NESTED = [
    ("Authorization: Bearer NAME_KEY=Hq4Vm8Zr2K@t6Wq8Zr3", "Hq4Vm8Zr2K@t6Wq8Zr3"),  # the bearer token stops at @
    ("Authorization: Bearer NAME_KEY=Hq4Vm8Zr2K#t6Wq8Zr3 retry", "Hq4Vm8Zr2K#t6Wq8Zr3"),
    (f"curl -H 'Authorization: Bearer NAME_PASSWORD={NESTED_VALUE}' https://api.internal/v1", NESTED_VALUE),
    (f'curl -H \\"Authorization: Bearer NAME_PASSWORD={NESTED_VALUE}\\" https://api.internal', NESTED_VALUE),
    (f"`Authorization: Bearer NAME_PASSWORD={NESTED_VALUE}`", NESTED_VALUE),
    (f"[req] headers={{Authorization: Bearer NAME_PASSWORD={NESTED_VALUE}}}", NESTED_VALUE),
    (f"Authorization: Bearer eyJhbGciOi.NAME_PASSWORD={NESTED_VALUE}", NESTED_VALUE),
    (f"Authorization: Bearer Zq8Lm3Xv7Rt2-NAME_PASSWORD={NESTED_VALUE}", NESTED_VALUE),
    (f"Authorization: Bearer Kp9NAME_PASSWORD={NESTED_VALUE}", NESTED_VALUE),
    (f"X-Api-Key: tok.DB_SECRET={NESTED_VALUE}", NESTED_VALUE),
    (f"token=abc:SERVICE_TOKEN={NESTED_VALUE};", NESTED_VALUE),
]


@pytest.mark.parametrize("text,value", NESTED, ids=[f"nested{i}" for i in range(len(NESTED))])
def test_an_assignment_inside_another_credential_goes_whole(hs, py, text, value):
    for red in (hs, py):
        res = red.redact(text, TEST_KEY)
        assert not any(value[i:i + 5] in res.text for i in range(len(value) - 4)), res.text  # no part of it
        assert res.counts and red.redact(res.text, TEST_KEY).text == res.text


@pytest.mark.parametrize("secret", [
    "ghp_aB3dE5abcdefghQw3Er4Ty5Ui7Op9As1Df2G",  # "abcdefgh" inside the random part
    "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5ExampleNm3Lk2Ji1Hg0FeDcBa_-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa_-Qw3Er4Ty5U1AA",
    "glpat-Qw3Er4Ty5xxxxxxUi7Op",
])
def test_a_secret_containing_placeholder_letters_is_still_a_secret(hs, py, secret):
    text = f"token: {secret}\n"
    for red in (hs, py):
        assert secret not in red.redact(text, TEST_KEY).text


@pytest.mark.parametrize("text", ["GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "ANTHROPIC_API_KEY=sk-ant-api03-...",
                                  "OPENAI_API_KEY=sk-proj-<redacted>", "GITHUB_TOKEN=ghp_YOUR_TOKEN_HERE",
                                  "MAPBOX_SECRET_TOKEN=sk.eyJ1Ijoi...", "api_key: your-api-key-here",
                                  "GITLAB_TOKEN=glpat-00000000000000000000"])
def test_placeholders_written_in_docs_pass(hs, text):
    assert hs.redact(text, TEST_KEY).text == text


_ORDINARY = [
    '{"nextPageToken": "Zq8Lm3Xv7Rt2Kp9Wb4Nc6Hd1Gf5Js0Ty3Ue8Ia2Ob"}',
    '"page_token": "Rb5Nw8Kq2Zt6Lm9Xv3PcHq4Vm8Zr2Kt6"',
    "request_token: 6f1c2a9e-4b7d-4e3a-9c85-2d7f0b1e4a63",
    "        self.credentials = credentials",
    "    self.password = password",
    'password = "{0}:{1}".format(user, pw)',
    'token_hint = "Paste the token from your dashboard."',
    "SSH_KEY=~/.ssh/id_ed25519 ansible-playbook site.yml",
    "CACHE_KEY=user:profile:42 make warm",
    "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }} gh release create",
    "OPENAI_API_KEY=$OPENAI_API_KEY python agent.py",
]


@pytest.mark.parametrize("text", _ORDINARY)
def test_ordinary_values_under_secret_like_names_pass(hs, text):
    assert hs.redact(text, TEST_KEY).text == text


# -- both engine paths --------------------------------------------------------------------


def test_engines_are_what_they_say(hs, py):
    assert hs.engine == "hyperscan" and py.engine == "python"
    assert hs.python_only_rules == ()  # every built-in rule compiles for Hyperscan


def test_both_paths_identical_on_the_corpus(hs, py):
    every_hs, every_py = redactor("hyperscan", BUILTIN_GROUPS), redactor("python", BUILTIN_GROUPS)
    samples = build_corpus(seed=3, positives_per_rule=4)
    for sample in samples:
        assert hs.findings(sample.text) == py.findings(sample.text), sample.text[:200]
        assert every_hs.findings(sample.text) == every_py.findings(sample.text), sample.text[:200]
    blob = "\n".join(s.text for s in samples[:400])
    assert hs.findings(blob) == py.findings(blob)


_FRAGMENTS = [GHP, ANT, AWS_ID, "AKIAIOSFODNN7EXAMPLE", "password=", "token: ", "Bearer ", "api_key = '",
              "postgres://u:", "@db/x", "-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END RSA PRIVATE KEY-----",
              "eyJhbGciOiJIUzI1NiJ9", ".", "\n", " ", "'", '"', "=", ":", "xoxb-", "sk-", "_", "é", "[REDACTED:x:",
              "12345678]"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(alphabet="abcXYZ019+/=-_. \n", max_size=30)),
                max_size=25))
def test_both_paths_identical_on_random_text(parts):
    text = "".join(parts)
    assert redactor("hyperscan").findings(text) == redactor("python").findings(text)


def _finditer_reference(red: Redactor, text: str) -> tuple[tuple[int, int, int], ...]:
    """What the engine must find: each rule's ``finditer`` over the whole text, checked,
    placeholders inert, overlaps resolved. No prefilter, no windows."""
    holes = [m.span() for m in PLACEHOLDER_RE.finditer(text)]
    cands = []
    for rt in red._rt:
        for m in rt.rule.regex.finditer(text):
            span = engine_mod._validate(rt, m, text)
            if span is None or any(span[0] < he and span[1] > hs_ for hs_, he in holes):
                continue
            cands.append((span[0], span[1], rt.index))
    return tuple(engine_mod._resolve(cands, 0))


# Prefixes of long-reaching rules, so the prefilter windows are dense and overlap.
_DENSE = ["-----BEGIN PRIVATE KEY-----\n", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n", "eyJhbGciOi.", "eyJ",
          "sv=2020-01-01&", "sig=", "Bearer ", "-----END PRIVATE KEY-----", "xoxb-", "sk-ant-api03-", "ghp_",
          "password=", "://u:", "@h/", "\\n"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS + _DENSE),
                          st.text(alphabet="abcXYZ019+/=-_.: \n", max_size=70)), max_size=40),
       st.integers(1, 6))
def test_windows_give_exactly_what_finditer_gives(parts, repeat):
    """Searching merged prefilter windows equals ``finditer`` over the whole text."""
    text = "".join(parts) * repeat
    want = _finditer_reference(redactor("hyperscan"), text)
    assert redactor("hyperscan").spans(text) == want
    assert redactor("python").spans(text) == want


@pytest.mark.parametrize("engine", ["hyperscan", "python"])
@pytest.mark.parametrize("unit", ["-----BEGIN PRIVATE KEY-----\n" + "Qk9EWV9MSU5FX0JBU0U2NF9DSEFSUw" * 2 + "\n",
                                  "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + "abcd" * 15 + "\n",
                                  "eyJabcdefgh.eyJabcdefgh.", "sv=2020-01-01&"],
                         ids=["pem", "pgp", "jwt", "sas"])
def test_dense_prefixes_cost_linear_regex_work(monkeypatch, engine, unit):
    """A text made of a repeated prefix makes the prefilter windows dense; each
    position must be searched about once, not once per window it falls in (that
    was quadratic: 1 MB of ``-----BEGIN`` lines took minutes on the event loop)."""
    text = (unit * (30_000 // len(unit) + 1))[:30_000]
    red = Redactor(redactor(engine).rules, use_hyperscan=engine == "hyperscan", cache_dir=hyperscan_cache_dir())
    examined = [0]
    for rt in red._rt:
        def counted(s, pos, endpos, _search=rt.search):
            m = _search(s, pos, endpos)
            examined[0] += (m.end() if m is not None else endpos) - pos
            return m
        monkeypatch.setattr(rt, "search", counted)
    assert red.spans(text) == _finditer_reference(red, text)
    # A few rules have windows here; each searches a position about once (the
    # windowed search this replaced examined 30-550 times the text).
    assert examined[0] <= 8 * len(text), examined[0]


# -- caches -------------------------------------------------------------------------------


def test_unchanged_text_is_not_rescanned(monkeypatch):
    red = Redactor([r for r in builtin_rules() if r.group == "vcs"], use_hyperscan=False)
    calls = []
    real = red._scan
    monkeypatch.setattr(red, "_scan", lambda text, start: calls.append(1) or real(text, start))
    text = f"history line with {GHP}\n" * 3
    first = red.redact(text, TEST_KEY)
    second = red.redact(text, TEST_KEY)
    third = red.redact(text, OTHER_KEY)  # another session: new placeholders, same positions, no rescan
    assert len(calls) == 1 and red.cache_hits == 3  # spans twice, the rendered text once
    assert first == second and third.text != first.text and third.counts == first.counts


def _dirty_one_by_one(text_list):
    py = redactor("python")
    return [i for i, t in enumerate(text_list) if t and py.findings(t)]


def test_many_new_texts_are_prescanned_in_one_call_and_only_those_with_an_event_scanned_alone(monkeypatch):
    """``dirty`` over many texts never seen scans them joined in one Hyperscan call; the texts
    without an event of their own are clean without a scan of their own, and the answer is
    what scanning each text alone gives (a secret at a text's very start or end included)."""
    red = Redactor([r for r in builtin_rules() if r.group in DEFAULT_GROUPS], use_hyperscan=True,
                   cache_dir=hyperscan_cache_dir())
    assert red._joinable
    samples = build_corpus(seed=5, positives_per_rule=2)
    texts = [s.text for s in samples] + [GHP, f"x {AWS_ID}", f"{PG_PW}", "", "é" * 40 + GHP]
    scanned = []
    real = red._scan
    monkeypatch.setattr(red, "_scan", lambda text, start: scanned.append(text) or real(text, start))
    assert red.dirty(texts) == _dirty_one_by_one(texts)
    assert 0 < len(scanned) < len([t for t in texts if t])
    scanned.clear()
    assert red.dirty(texts) == _dirty_one_by_one(texts) and not scanned  # remembered, clean ones too


def test_a_rule_anchored_at_a_texts_start_is_never_prescanned_joined():
    """A ``^`` without multi-line matches only at a text's own start, which joined texts hide:
    such a rule set scans each new text alone."""
    rules = [make_rule("line-key", "generic", r"^(tok_[0-9a-f]{16})")]
    red = Redactor(rules, use_hyperscan=True, cache_dir=hyperscan_cache_dir())
    assert not red._joinable
    texts = [f"filler {i}" for i in range(12)] + ["tok_0123456789abcdef"]
    assert red.dirty(texts) == [12]
    assert prefilter.joinable(Redactor([make_rule("m", "generic", r"(?m)^(tok_[0-9a-f]{16})")],
                                       use_hyperscan=True, cache_dir=hyperscan_cache_dir())._hs.infos[0])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(alphabet="abcXYZ019+/=-_. \néß日", max_size=30)),
                         max_size=8).map("".join), min_size=8, max_size=30))
def test_the_joined_prescan_gives_what_each_text_alone_gives(texts):
    # the prescan encodes them joined: one byte per character, so that is each encoded, joined
    assert engine_mod.encode("\n".join(texts + ["\ud800 lone"])) == b"\n".join(
        engine_mod.encode(t) for t in texts + ["\ud800 lone"])
    red = redactor("hyperscan")
    red.clear_cache()
    assert red.dirty(texts) == _dirty_one_by_one(texts)


def test_hyperscan_database_is_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(prefilter, "_MEMO", {})
    rules = [make_rule("demo-token", "saas", r"\b(dmo_[A-Za-z0-9]{24})\b")]
    first = Redactor(rules, use_hyperscan=True, cache_dir=str(tmp_path))
    files = list(tmp_path.glob("hs-*.db"))
    assert len(files) == 1 and not first._hs.from_cache and not first._hs.from_memory
    again = Redactor(rules, use_hyperscan=True)  # same process: compiled once
    assert again._hs.from_memory
    prefilter._MEMO.clear()
    second = Redactor(rules, use_hyperscan=True, cache_dir=str(tmp_path))
    assert second._hs.from_cache
    text = "x dmo_abcdefghijklmnopqrstuvwx y"
    assert first.redact(text, TEST_KEY) == second.redact(text, TEST_KEY) == again.redact(text, TEST_KEY)
    prefilter._MEMO.clear()
    files[0].write_bytes(b"garbage")  # a corrupt cache file is rebuilt, not trusted
    third = Redactor(rules, use_hyperscan=True, cache_dir=str(tmp_path))
    assert not third._hs.from_cache and third.redact(text, TEST_KEY) == first.redact(text, TEST_KEY)


def test_rule_hyperscan_cannot_take_still_works():
    # A non-ASCII literal and a backreference: left to the literal prefilter on the Hyperscan path.
    rules = [make_rule("umlaut-key", "generic", r"\b(schlüssel-[0-9a-f]{16})\b"),
             make_rule("twice", "generic", r"\b(zz(\d{6})-\2)\b", secret=1)]
    hs_red = Redactor(rules, use_hyperscan=True, cache_dir=hyperscan_cache_dir())
    py_red = Redactor(rules, use_hyperscan=False)
    assert "umlaut-key" in hs_red.python_only_rules
    text = "a schlüssel-0123456789abcdef b zz123456-123456 c zz123456-654321"
    assert hs_red.findings(text) == py_red.findings(text)
    assert [f.rule_id for f in hs_red.findings(text)] == ["umlaut-key", "twice"]


# -- failing closed -------------------------------------------------------------------------


def test_fails_closed_without_leaking(monkeypatch):
    red = Redactor(builtin_rules()[:5], use_hyperscan=False)
    with pytest.raises(RedactionError):
        red.redact("text", "not-bytes")  # type: ignore[arg-type]
    with pytest.raises(RedactionError):
        red.redact("text", b"")
    with pytest.raises(RedactionError):
        red.redact(b"bytes", TEST_KEY)  # type: ignore[arg-type]

    def boom(text, start):
        raise ValueError(f"internal failure near {GHP}")

    monkeypatch.setattr(red, "_scan", boom)
    with pytest.raises(RedactionError) as info:
        red.redact(f"token {GHP}", TEST_KEY)
    assert GHP not in str(info.value) and "ValueError" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None or GHP not in repr(info.value)


def test_overlaps_resolve_leftmost_longest_then_rule_order():
    """The leftmost, longest, earliest rule names the span; a finding that overlaps it
    joins it, so no part of a secret stays beside the placeholder."""
    rules = [make_rule("short", "generic", r"(abc)"), make_rule("long", "generic", r"(abcdef)"),
             make_rule("later", "generic", r"(cdefgh)"), make_rule("same-a", "generic", r"(xyz1)"),
             make_rule("same-b", "generic", r"(xyz1)"), make_rule("chained", "generic", r"(ghij)")]
    red = Redactor(rules, use_hyperscan=False)
    got = [(f.start, f.end, f.rule_id) for f in red.findings("abcdefghij xyz1 ghi")]
    assert got == [(0, 10, "long"), (11, 15, "same-a")]
    res = red.redact("abcdefghij xyz1 ghij", TEST_KEY)
    assert res.text.count("[REDACTED:") == 3 and res.counts == {"long": 1, "same-a": 1, "chained": 1}
    assert PLACEHOLDER_RE.sub("", res.text) == "  "


# -- reversible mode ----------------------------------------------------------------------------


def test_vault_restores_and_expires():
    now = [100.0]
    vault = Vault(ttl_seconds=60, clock=lambda: now[0])
    red = redactor("hyperscan")
    res = red.redact(f"use {GHP} and {AWS_ID}", TEST_KEY, vault=vault)
    assert len(vault) == 2 and GHP not in repr(vault)
    assert vault.restore(res.text) == f"use {GHP} and {AWS_ID}"
    args = json.dumps({"cmd": f"gh auth login --with-token {PLACEHOLDER_RE.findall(res.text)[0]}"})
    assert json.loads(vault.restore_json_text(args))["cmd"].endswith(GHP)
    with pytest.raises(TypeError):
        pickle.dumps(vault)
    now[0] += 61
    assert vault.restore(res.text) == res.text  # expired: placeholders stay
    assert len(vault) == 0


def test_vault_refuses_ambiguous_placeholders():
    vault = Vault()
    vault.put("[REDACTED:x:00000000]", "one")
    vault.put("[REDACTED:x:00000000]", "two")
    assert vault.get("[REDACTED:x:00000000]") is None
    assert vault.restore("[REDACTED:x:00000000]") == "[REDACTED:x:00000000]"


def test_vault_drops_expired_entries_as_it_is_used():
    """Entries past their TTL go on the next calls, a bounded number per call, with no
    need to reach ``max_entries`` (they used to stay until the map was full)."""
    now = [0.0]
    vault = Vault(ttl_seconds=10, max_entries=1000, clock=lambda: now[0])
    for i in range(100):
        vault.put(f"[REDACTED:x:{i:08x}]", f"secret-{i}")
    now[0] = 5.0
    vault.put("[REDACTED:y:00000000]", "fresh")
    assert len(vault._items) == 101
    now[0] = 11.0  # the first hundred are past their time; "fresh" is not
    vault.get("[REDACTED:y:00000000]")
    assert len(vault._items) == 101 - Vault.SWEEP  # one call, bounded work
    calls = 1
    while len(vault._items) > 1:
        vault.get("[REDACTED:z:00000000]")
        calls += 1
    assert calls <= 100 // Vault.SWEEP + 1
    assert list(vault._items) == ["[REDACTED:y:00000000]"] and vault.get("[REDACTED:y:00000000]") == "fresh"
    now[0] = 16.0
    vault.put("[REDACTED:y:00000001]", "other")
    assert "[REDACTED:y:00000000]" not in vault._items
    assert len(vault._expiry) <= 2 * len(vault._items) + 2 * Vault.SWEEP


def test_vault_keeps_what_is_used_and_evicts_the_least_recently_used():
    now = [0.0]
    vault = Vault(ttl_seconds=1000, max_entries=3, clock=lambda: now[0])
    for i, value in enumerate(("A", "B", "C")):
        vault.put(f"[REDACTED:a:0000000{i}]", value)
    assert vault.get("[REDACTED:a:00000000]") == "A"  # a hit: A is now the most recent
    vault.put("[REDACTED:a:00000009]", "D")
    assert vault.get("[REDACTED:a:00000000]") == "A" and vault.get("[REDACTED:a:00000001]") is None
    vault.put("[REDACTED:a:00000002]", "C")  # stored again: recent too
    vault.put("[REDACTED:a:00000008]", "E")
    assert vault.get("[REDACTED:a:00000002]") == "C" and vault.get("[REDACTED:a:00000009]") is None
    # Storing the same placeholder again renews its time; an expired one is gone.
    now[0] = 999.0
    vault.put("[REDACTED:a:00000002]", "C")
    now[0] = 1500.0
    assert vault.get("[REDACTED:a:00000002]") == "C" and vault.get("[REDACTED:a:00000000]") is None


# -- JSON inside a string (tool-call arguments) ----------------------------------------------------


def test_redact_json_text_scans_decoded_strings(hs):
    args = json.dumps({"command": f"curl -H 'Authorization: token {GHP}' https://api.github.com",
                       "env": {"AWS_ACCESS_KEY_ID": AWS_ID, "n": 3, "ok": True, "nested": [None, 1.5, GHP]},
                       GHP: "a secret used as a key"})
    escaped = args.replace("ghp_", "\\u0067hp_")  # JSON escaping must not hide a secret
    for doc in (args, escaped):
        res = redact_json_text(hs, doc, TEST_KEY)
        out = json.loads(res.text)
        assert GHP not in res.text and AWS_ID not in res.text
        assert out["env"]["n"] == 3 and out["env"]["ok"] is True and out["env"]["nested"][:2] == [None, 1.5]
        assert res.counts == {"github-pat": 3, "aws-access-key-id": 1}
    same = json.dumps({"path": "README.md", "limit": 10}, indent=2)
    untouched = redact_json_text(hs, same, TEST_KEY)
    assert untouched.text is same and not untouched.changed
    partial = '{"command": "echo ' + GHP  # not JSON (yet): redacted as text
    assert GHP not in redact_json_text(hs, partial, TEST_KEY).text


# -- profiles' groups ------------------------------------------------------------------------------


def test_pii_is_opt_in():
    text = "Contact maria.garcia7@gmail.com or +1 415 555 0134, card 4111 1111 1111 1111."
    assert not redactor("hyperscan").redact(text, TEST_KEY).changed
    res = redactor("hyperscan", BUILTIN_GROUPS).redact(text, TEST_KEY)
    assert res.counts == {"pii-email": 1, "pii-phone": 1, "pii-credit-card": 1}


# -- throughput (printed, never asserted) -----------------------------------------------------------


def test_throughput_report(hs, py):
    mb = realistic_megabyte(5)
    rng = random.Random(9)
    pool = build_corpus(seed=9, positives_per_rule=3)
    dense = "\n".join(rng.choice(pool).text for _ in range(9000))[:1_000_000]
    rows = []
    for label, text in (("realistic", mb), ("secret-dense", dense)):
        for red in (hs, py):
            fresh = Redactor(red.rules, use_hyperscan=red.engine == "hyperscan", cache_dir=hyperscan_cache_dir())
            t0 = time.process_time()
            res = fresh.redact(text, TEST_KEY)
            cold = time.process_time() - t0
            t0 = time.process_time()
            fresh.redact(text, TEST_KEY)
            warm = time.process_time() - t0
            rows.append(f"{label:13s} {fresh.engine:9s} {len(text) / 1e6:.2f} MB  cold {cold * 1000:7.1f} ms  "
                        f"warm {warm * 1000:6.2f} ms  findings {sum(res.counts.values())}")
    print("\nredaction throughput (CPU time):\n" + "\n".join(rows))
    assert engine_mod  # numbers are a report, not a test


@pytest.mark.parametrize("begin, end", [("-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"),
                                        ("-----BEGIN PGP PRIVATE KEY BLOCK-----",
                                         "-----END PGP PRIVATE KEY BLOCK-----")])
def test_a_key_never_spans_another_armor_line(begin, end):
    """A key body holds no ``-----``: a BEGIN without its END gives up at the
    next armor line rather than reading 8-12k characters on (what made a text
    of repeated BEGIN lines cost 1.7 s per MB). The cut key's body is still
    masked (``private-key-truncated``), and so is the whole key after it."""
    body = "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + str(i) for i in range(3)])
    cut = f"{begin}\n{body}\n"
    whole = f"{begin}\n{body.lower()}\n{end}"
    text = cut + whole
    red = redactor("python")
    (key,) = [r for r in red.rules if r.id == ("private-key" if "PGP" not in begin else "pgp-private-key")]
    m = key.regex.search(text)
    assert m is not None and m.start() == len(cut)
    covered = {i for s, e, *_ in red.spans(text) for i in range(s, e)}
    assert set(range(len(begin) + 1, len(begin) + 1 + len(body))) <= covered
    assert set(range(len(cut) + len(begin) + 1, len(text) - len(end))) <= covered


@pytest.mark.parametrize("pattern, wide", [
    (r"[a-z]+", False), (r"(?i)k[0-9]", False),  # re.ASCII: case folding stays in ASCII
    (r"\btok", False), (r"(?<=[^a])tok", False),  # an assertion consumes nothing
    (r"a\u0436", False), (r"\u0436", True), (r"x?\u0436", True), (r"(?:|b)\u0436", True),
    (r"\S+", True), (r"[^a]", True), (r".", True), (r"\W", True), (r"[\u0400-\u04ff]", True),
    (r"(a)\1", False), (r"(?:(a)|b)(?(1)c|\u0436)", False), (r"(a)?(?(1)b|\u0436)", True),
])
def test_whether_a_match_may_begin_beyond_ascii_is_read_from_the_parse(pattern, wide):
    from ctxproxy.store.services.redaction.patterns import may_begin_beyond_ascii

    assert may_begin_beyond_ascii(pattern) is wide
