"""A deterministic corpus for the redaction rules: real-looking secrets in the
places agents meet them, and the near misses that must pass through.

``build_corpus(seed)`` returns ``Sample`` objects. A positive sample carries
the secrets it contains (rule id + value); a negative one carries none. For
every built-in rule there are positives in several surroundings (.env files,
shell history, Python/JS/Go code, JSON tool output, YAML, log lines, prose)
and near misses built from the same format (``ghp_xxxx…``, ``<your-key>``,
``sk-...``, ``${VAR}``, documented example keys). A shared set of negatives
covers what is easy to mistake for a secret: git SHAs, sha256/sha512 digests,
UUIDs, base64 images, lockfile integrity hashes, ids in logs, code that reads
secrets from the environment, and prose about passwords and tokens.

Everything comes from ``random.Random(seed)``: the same seed gives the same
corpus, so a failing rule can be reproduced.
"""
from __future__ import annotations

import base64
import json
import random
import string
import uuid
from dataclasses import dataclass, field
from typing import Callable

A = string.ascii_letters + string.digits
AU = A + "_-"
H = "0123456789abcdef"
HU = "0123456789ABCDEF"
UP = string.ascii_uppercase + string.digits
LO = string.ascii_lowercase + string.digits
B64 = A + "+/"
B32 = string.ascii_uppercase + "234567"
DIG = string.digits
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
PW = A + "!@%^&*-_+=.~"


def r(rng: random.Random, alphabet: str, n: int) -> str:
    """A random string that is not degenerate (has at least a few distinct characters)."""
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if len(set(s)) >= min(n, 8) // 2 + 1:
            return s


def r_mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random, with at least one digit and one letter (when the alphabet has both)."""
    while True:
        s = r(rng, alphabet, n)
        has_d = any(c.isdigit() for c in s) or not any(c.isdigit() for c in alphabet)
        has_a = any(c.isalpha() for c in s) or not any(c.isalpha() for c in alphabet)
        if has_d and has_a:
            return s


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass
class Sample:
    text: str
    secrets: list[tuple[str, str]] = field(default_factory=list)  # (rule id, value) that must vanish
    rule: str | None = None  # the rule this sample exercises (positives) or mimics (near misses)
    context: str = ""

    @property
    def positive(self) -> bool:
        return bool(self.secrets)


# -- surroundings -------------------------------------------------------------------

TOKEN_TEMPLATES: dict[str, str] = {
    "env": "# production settings\nAPP_ENV=production\n{NAME}={tok}\nLOG_LEVEL=info\n",
    "shell": "$ export {NAME}='{tok}'\n$ ./deploy.sh --region us-east-1 --dry-run\n",
    "history": "  1041  cd ~/src/billing\n  1042  {NAME}={tok} make deploy\n  1043  git status\n",
    "python": 'import os\n\nclient = Client(api_key="{tok}", timeout=30)\nresp = client.get("/v1/models")\n',
    "js": "const client = new Client({{ token: '{tok}' }});\nawait client.connect();\n",
    "go": 'cfg := Config{{Token: "{tok}", Timeout: 30 * time.Second}}\n',
    "json": '{{"tool": "read_file", "path": "config.json", "content": {{"service": "billing", "{name}": "{tok}", '
            '"retries": 3}}}}',
    "log": "2024-05-01T12:00:03.123Z INFO worker[4412]: loaded credential {tok} for tenant acme\n",
    "yaml": "services:\n  api:\n    environment:\n      {NAME}: {tok}\n      PORT: 8080\n",
    "prose": "Here is the key you asked for: {tok}. Rotate it after the demo, please.",
    "toml": '[auth]\nmethod = "token"\n{name} = "{tok}"\n',
    "curl": "curl -sS https://api.internal.test/v2/items -H 'X-Api-Key: {tok}' | jq '.items[0]'\n",
}

KV_TEMPLATES: dict[str, str] = {
    "env": "# local overrides\nDEBUG=false\n{NAME}={val}\nREGION=eu-west-1\n",
    "shell": "$ export {NAME}=\"{val}\"\n$ python run.py --check\n",
    "python": 'settings = {{\n    "region": "us-east-1",\n    "{name}": "{val}",\n}}\n',
    "python-kw": 'client = make_client({name}="{val}", retries=2)\n',
    "json": '{{"ok": true, "env": {{"{NAME}": "{val}", "PORT": "8080"}}}}',
    "yaml": "deploy:\n  vars:\n    {name}: {val}\n    replicas: 3\n",
    "js": "const {name} = '{val}';\nmodule.exports = {{ {name} }};\n",
}


@dataclass
class Spec:
    rule: str
    make: Callable[[random.Random], object]
    style: str = "token"  # token | kv | text
    names: tuple[str, ...] = ("API_TOKEN",)
    prefix: str = ""  # the literal start of a token (for near misses)
    near: Callable[[random.Random], list[str]] | None = None  # extra near-miss texts
    # the secret is what follows the first occurrence of this (what comes before it is a
    # public identifier the rule leaves in place: an Azure hint, a Discord bot's id)
    secret_after: str = ""

    def secret(self, token: str) -> str:
        return token[token.index(self.secret_after) + len(self.secret_after):] if self.secret_after else token


def tok(rule, make, names=("API_TOKEN",), prefix="", near=None, secret_after="") -> Spec:
    return Spec(rule, make, "token", tuple(names), prefix, near, secret_after)


def kv(rule, names, make_value, near=None) -> Spec:
    return Spec(rule, make_value, "kv", tuple(names), "", near)


def text(rule, make, near=None) -> Spec:
    """``make(rng) -> (text, [(rule, secret), ...])``."""
    return Spec(rule, make, "text", (), "", near)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _jwt(rng: random.Random) -> str:
    header = b64url(json.dumps({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": str(rng.randint(10**5, 10**9)), "name": r(rng, string.ascii_letters, 8),
                                 "iat": rng.randint(1_600_000_000, 1_800_000_000), "scope": "read write"}).encode())
    return f"{header}.{payload}.{r(rng, AU, 43)}"


def _pem(rng: random.Random, label: str, lines: int = 12, newline: str = "\n") -> str:
    body = newline.join(r(rng, B64, 64) for _ in range(lines)) + newline + r(rng, B64, 40) + "=="
    return f"-----BEGIN {label}-----{newline}{body}{newline}-----END {label}-----"


def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    digits = prefix + "".join(rng.choice(DIG) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, d in enumerate(reversed(digits)):
        v = int(d)
        if i % 2 == 0:
            v *= 2
            if v > 9:
                v -= 9
        total += v
    return digits + str((10 - total % 10) % 10)


def _iban(rng: random.Random) -> str:
    bban = "".join(rng.choice(DIG) for _ in range(18))
    moved = bban + "DE00"
    num = int("".join(str(int(c, 36)) for c in moved))
    check = 98 - num % 97
    iban = f"DE{check:02d}{bban}"
    return " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))


# -- text-style positives -----------------------------------------------------------


def _aws_csv(rng):
    kid = "AKIA" + r(rng, B32, 16)
    sec = r_mixed(rng, B64, 40)
    t = rng.choice([
        f"User name,Password,Access key ID,Secret access key\ndeploy-bot,,{kid},{sec}\n",
        f"creds: {kid}:{sec}\n",
        f"| {kid} | {sec} | active |\n",
    ])
    return t, [("aws-access-key-id", kid), ("aws-secret-near-key-id", sec)]


def _gcp_json(rng):
    pem = _pem(rng, "PRIVATE KEY", lines=rng.randint(10, 25), newline="\\n")
    t = ('{\n  "type": "service_account",\n  "project_id": "acme-prod-%d",\n  "private_key_id": "%s",\n'
         '  "private_key": "%s\\n",\n  "client_email": "svc@acme-prod.iam.gserviceaccount.com"\n}\n'
         % (rng.randint(100, 999), r(rng, H, 40), pem))
    return "$ cat sa.json\n" + t, [("gcp-service-account-key", pem)]


def _azure_storage(rng):
    key = r(rng, B64, 86) + "=="
    t = rng.choice([
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acme{rng.randint(1, 99)};"
        f"AccountKey={key};EndpointSuffix=core.windows.net\n",
        f'{{"storage": {{"account": "acmelogs", "AccountKey": "{key}"}}}}',
        f"az storage blob list --account-name acmelogs --account-key ... # AZURE_STORAGE_KEY={key}\n",
    ])
    return t, [("azure-storage-account-key", key)]


def _azure_sb(rng):
    key = r(rng, B64, 43) + "="
    t = (f"Endpoint=sb://acme-{rng.randint(1, 99)}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
         f"SharedAccessKey={key}")
    return rng.choice(["SERVICEBUS_CONN='{}'\n", "conn = \"{}\"\n", "log: connecting with {}\n"]).format(t), \
        [("azure-connection-string-key", key)]


def _azure_sas(rng):
    sig = r(rng, A, 43) + "%3D"
    url = (f"https://acmelogs.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
           f"&se=2025-01-01T00:00:00Z&st=2024-12-01T00:00:00Z&spr=https&sig={sig}")
    return rng.choice(["Download link: {}\n", "curl -o report.csv '{}'\n", '{{"url": "{}"}}']).format(url), \
        [("azure-sas-token", sig)]


def _pem_text(label):
    def make(rng):
        pem = _pem(rng, label, lines=rng.randint(8, 30))
        t = rng.choice([
            "$ cat ~/.ssh/id_deploy\n{}\n$ ls\n",
            "key_material = \"\"\"{}\"\"\"\n",
            "Found this in the repo:\n\n```\n{}\n```\n",
            "PRIVATE_KEY=\"{}\"\n",
        ]).format(pem)
        return t, [("private-key", pem)]
    return make


def _pem_escaped(rng):
    pem = _pem(rng, "EC PRIVATE KEY", lines=rng.randint(3, 6), newline="\\n")
    return f'{{"tls": {{"key": "{pem}", "cert_path": "/etc/tls/cert.pem"}}}}', [("private-key", pem)]


def _pgp(rng):
    body = "\n".join(r(rng, B64, 64) for _ in range(rng.randint(10, 30)))
    block = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBGXyz{r(rng, B64, 55)}\n{body}\n=" + r(rng, B64, 4) + \
        "\n-----END PGP PRIVATE KEY BLOCK-----"
    return rng.choice(["$ gpg --export-secret-keys --armor ops@acme\n{}\n", "{}"]).format(block), \
        [("pgp-private-key", block)]


def _pem_truncated(rng):
    head = "-----BEGIN RSA PRIVATE KEY-----\n"
    body = "\n".join(r(rng, B64, 64) for _ in range(rng.randint(3, 8)))
    block = head + body
    return f"$ head -n 6 deploy.pem\n{block}\n... (output truncated)\n", [("private-key-truncated", block)]


def _url_creds(rng):
    pw = r_mixed(rng, A + "!$%^*-_~", rng.randint(10, 24))
    user = rng.choice(["admin", "app", "svc_billing", "root", "deploy"])
    scheme, host = rng.choice([
        ("postgres", "db.internal:5432/app"), ("postgresql", "10.0.3.7/orders"),
        ("mongodb+srv", "cluster0.ab1cd.mongodb.net/prod?retryWrites=true"), ("redis", "cache.internal:6379/0"),
        ("amqp", "mq.internal:5672/vhost"), ("mysql", "mysql.internal:3306/shop"), ("https", "git.internal/org/repo.git"),
    ])
    url = f"{scheme}://{user}:{pw}@{host}"
    t = rng.choice(["DATABASE_URL={}\n", "engine = create_engine(\"{}\")\n", "2024-05-01 12:00:00 connecting to {}\n",
                    '{{"dsn": "{}"}}', "$ psql {}\n", "git clone {}\n"]).format(url)
    return t, [("url-credentials", pw)]


def _conn_string(rng):
    pw = r_mixed(rng, A + "!@%^*-_~", rng.randint(10, 20))
    t = (f"Server=tcp:acme-{rng.randint(1, 99)}.database.windows.net,1433;Initial Catalog=orders;"
         f"User ID=svc_app;Password={pw};Encrypt=True;Connection Timeout=30;")
    return rng.choice(["\"ConnectionStrings\": {{ \"Default\": \"{}\" }}", "conn_str = '{}'\n", "{}\n"]).format(t), \
        [("connection-string-password", pw)]


def _basic_auth(rng):
    cred = base64.b64encode(f"{rng.choice(['svc', 'admin', 'ci'])}:{r_mixed(rng, A, 16)}".encode()).decode()
    t = rng.choice([
        "curl -H 'Authorization: Basic {}' https://registry.internal/v2/_catalog\n",
        "headers = {{\"Authorization\": \"Basic {}\"}}\n",
        "> GET /api HTTP/1.1\n> Host: internal\n> Authorization: Basic {}\n",
    ]).format(cred)
    return t, [("authorization-header", cred)]


def _bearer(rng):
    token = r_mixed(rng, A, rng.randint(32, 64))
    t = rng.choice([
        "curl -H \"Authorization: Bearer {}\" https://api.internal/v1/me\n",
        "requests.get(url, headers={{\"Authorization\": \"Bearer {}\"}})\n",
        "2024-05-01T10:00:00Z DEBUG outgoing request: Authorization=Bearer {} path=/v1/me\n",
        "fetch('/v1/me', {{ headers: {{ authorization: 'bearer {}' }} }})\n",
    ]).format(token)
    return t, [("bearer-token", token)]


def _dotenv(rng):
    name = rng.choice(["DB_PASSWORD", "SMTP_PASS", "JWT_SECRET", "SESSION_SECRET", "REDIS_PASSWORD",
                       "SIGNING_KEY_PASSPHRASE", "ADMIN_PWD", "WEBHOOK_SECRET", "INTERNAL_API_KEY"])
    val = r_mixed(rng, PW, rng.randint(12, 32))
    t = rng.choice([
        "# .env\nNODE_ENV=production\n{n}={v}\nPORT=3000\n",
        "export {n}={v}\n",
        "smtp:\n  host: mail.internal\n  {nl}: {v}\n",
        "[database]\nhost = db.internal\n{nl} = {v}\n",
    ]).format(n=name, nl=name.lower(), v=val)
    return t, [("dotenv-assignment", val)]


def _assignment(rng):
    name = rng.choice(["client_secret", "password", "apiKey", "db_password", "secretKey", "auth_token",
                       "signingSecret", "private_key_passphrase"])
    val = r_mixed(rng, A + "!@%^&*-_+=.~", rng.randint(12, 40))
    t = rng.choice([
        "    {n} = \"{v}\"\n",
        "const {n} = '{v}';\n",
        "{{\"user\": \"svc\", \"{n}\": \"{v}\", \"enabled\": true}}",
        "conn.login(user=\"svc\", {n}=\"{v}\")\n",
        "    {n}: \"{v}\",\n",
    ]).format(n=name, v=val)
    return t, [("secret-assignment", val)]


def _keyword_token(rng):
    val = r_mixed(rng, A, rng.randint(24, 48))
    t = rng.choice([
        "Generated access token: {} (expires in 3600 seconds)\n",
        "The API key is {} - store it in the vault.\n",
        "login ok, refresh_token={} scope=offline\n",
        "client secret was {} before rotation\n",
    ]).format(val)
    return t, [("keyword-high-entropy", val)]


def _email(rng):
    first = rng.choice(["maria", "john", "li", "fatima", "olu", "ana", "kenji"])
    last = rng.choice(["garcia", "smith", "wang", "khan", "adeyemi", "silva", "tanaka"])
    addr = f"{first}.{last}{rng.randint(1, 99)}@{rng.choice(['gmail.com', 'acme-corp.de', 'outlook.com', 'uni-x.edu'])}"
    return rng.choice(["Customer: {} (premium)\n", "From: Support <{}>\n", '{{"email": "{}"}}']).format(addr), \
        [("pii-email", addr)]


def _card(rng):
    num = _luhn_complete(rng, rng.choice(["4", "51", "52", "55", "2221"]), 16)
    shown = rng.choice([num, " ".join(num[i:i + 4] for i in range(0, 16, 4)), "-".join(num[i:i + 4] for i in range(0, 16, 4))])
    return rng.choice(["card: {}\n", "Charged {} for $42.00\n", '{{"pan": "{}"}}']).format(shown), \
        [("pii-credit-card", shown)]


def _ssn(rng):
    ssn = f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
    return rng.choice(["SSN: {}\n", "applicant ssn={} status=pending\n"]).format(ssn), [("pii-us-ssn", ssn)]


def _phone(rng):
    ph = rng.choice([
        f"+1 415 {rng.randint(200, 999)} {rng.randint(1000, 9999)}",
        f"({rng.randint(200, 999)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
        f"+44 20 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        f"+49 30 {rng.randint(100, 999)} {rng.randint(10000, 99999)}",
    ])
    return rng.choice(["Call me at {} tomorrow.\n", "phone: {}\n", '{{"mobile": "{}"}}']).format(ph), \
        [("pii-phone", ph)]


def _iban_text(rng):
    iban = _iban(rng)
    return rng.choice(["IBAN: {}\n", "Please transfer to {} by Friday.\n"]).format(iban), [("pii-iban", iban)]


# -- the specs ------------------------------------------------------------------------


def specs() -> list[Spec]:
    return [
        # llm
        tok("anthropic-api-key", lambda g: "sk-ant-api03-" + r(g, AU, 93) + "AA", ["ANTHROPIC_API_KEY"], "sk-ant-api03-"),
        tok("anthropic-admin-key", lambda g: "sk-ant-admin01-" + r(g, AU, 93) + "AA", ["ANTHROPIC_ADMIN_KEY"],
            "sk-ant-admin01-"),
        tok("anthropic-oauth-token", lambda g: "sk-ant-oat01-" + r(g, AU, 93) + "AA", ["CLAUDE_CODE_OAUTH_TOKEN"],
            "sk-ant-oat01-"),
        tok("openai-project-key", lambda g: g.choice(["sk-proj-", "sk-svcacct-"]) + r(g, AU, 74) + "T3BlbkFJ" + r(g, AU, 74),
            ["OPENAI_API_KEY"], "sk-proj-"),
        tok("openai-legacy-key", lambda g: "sk-" + r(g, A, 20) + "T3BlbkFJ" + r(g, A, 20), ["OPENAI_API_KEY"], "sk-"),
        tok("openrouter-api-key", lambda g: "sk-or-v1-" + r(g, H, 64), ["OPENROUTER_API_KEY"], "sk-or-v1-"),
        tok("langfuse-secret-key", lambda g: "sk-lf-" + _uuid(g), ["LANGFUSE_SECRET_KEY"], "sk-lf-"),
        tok("deepseek-api-key", lambda g: "sk-" + r(g, H, 32), ["DEEPSEEK_API_KEY"], "sk-"),
        tok("openai-compatible-key", lambda g: "sk-" + r_mixed(g, A, 48), ["MOONSHOT_API_KEY", "LLM_API_KEY"], "sk-"),
        tok("google-api-key", lambda g: "AIza" + r(g, AU, 35), ["GEMINI_API_KEY", "GOOGLE_API_KEY"], "AIza"),
        kv("azure-openai-key", ["AZURE_OPENAI_API_KEY", "azure_openai_key", "api-key"], lambda g: r(g, H, 32)),
        kv("mistral-api-key", ["MISTRAL_API_KEY", "mistral_key"], lambda g: r_mixed(g, A, 32)),
        tok("groq-api-key", lambda g: "gsk_" + r(g, A, 52), ["GROQ_API_KEY"], "gsk_"),
        tok("huggingface-token", lambda g: "hf_" + r(g, A, 34), ["HF_TOKEN"], "hf_"),
        tok("huggingface-org-token", lambda g: "api_org_" + r(g, A, 34), ["HF_ORG_TOKEN"], "api_org_"),
        kv("cohere-api-key", ["COHERE_API_KEY", "co_api_key"], lambda g: r_mixed(g, A, 40)),
        tok("replicate-api-token", lambda g: "r8_" + r(g, A, 37), ["REPLICATE_API_TOKEN"], "r8_"),
        tok("perplexity-api-key", lambda g: "pplx-" + r(g, A, 48), ["PERPLEXITY_API_KEY"], "pplx-"),
        tok("xai-api-key", lambda g: "xai-" + r(g, A, 80), ["XAI_API_KEY"], "xai-"),
        tok("together-api-key", lambda g: "tgp_v1_" + r(g, AU, 43), ["TOGETHER_API_KEY"], "tgp_v1_"),
        tok("langsmith-api-key", lambda g: "lsv2_pt_" + r(g, H, 32) + "_" + r(g, H, 10), ["LANGSMITH_API_KEY"], "lsv2_pt_"),
        tok("nvidia-api-key", lambda g: "nvapi-" + r(g, AU, 64), ["NVIDIA_API_KEY"], "nvapi-"),
        tok("elevenlabs-api-key", lambda g: "sk_" + r(g, H, 48), ["ELEVENLABS_API_KEY"], "sk_"),
        tok("pinecone-api-key", lambda g: "pcsk_" + r(g, A, 6) + "_" + r(g, A, 64), ["PINECONE_API_KEY"], "pcsk_"),
        kv("wandb-api-key", ["WANDB_API_KEY", "wandb_key"], lambda g: r(g, H, 40)),
        # cloud
        tok("aws-access-key-id", lambda g: g.choice(["AKIA", "ASIA"]) + r(g, B32, 16), ["AWS_ACCESS_KEY_ID"], "AKIA",
            near=lambda g: ["AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
                            "aws_access_key_id = AKIAI44QH8DHBEXAMPLE\n"]),
        kv("aws-secret-access-key", ["AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "awsSecretKey"],
           lambda g: r_mixed(g, B64, 40),
           near=lambda g: ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"]),
        text("aws-secret-near-key-id", _aws_csv, near=lambda g: [
            "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            "creds: AKIAXXXXXXXXXXXXXXXX:<secret-access-key>\n"]),
        kv("aws-session-token", ["AWS_SESSION_TOKEN", "aws_session_token"],
           lambda g: "IQoJb3JpZ2luX2Vj" + r(g, B64, g.randint(250, 600))),
        text("gcp-service-account-key", _gcp_json, near=lambda g: [
            '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"}',
            '{"type": "service_account", "private_key_id": "", "private_key": ""}']),
        tok("google-oauth-client-secret", lambda g: "GOCSPX-" + r(g, AU, 28), ["GOOGLE_CLIENT_SECRET"], "GOCSPX-"),
        tok("google-oauth-access-token", lambda g: "ya29.a0" + r(g, AU, g.randint(100, 200)), ["GOOGLE_ACCESS_TOKEN"],
            "ya29."),
        tok("google-oauth-refresh-token", lambda g: "1//0" + r(g, AU, 100), ["GOOGLE_REFRESH_TOKEN"], "1//0"),
        text("azure-storage-account-key", _azure_storage, near=lambda g: [
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=<account-key>;EndpointSuffix=core.windows.net\n",
            "UseDevelopmentStorage=true;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr"
            "/KBHBeksoGMGw== (the Azurite emulator key)\n"]),
        text("azure-connection-string-key", _azure_sb, near=lambda g: [
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=<key>\n"]),
        text("azure-sas-token", _azure_sas, near=lambda g: [
            "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=<signature>\n",
            "Append ?sv=...&sig=... to the blob URL.\n"]),
        tok("azure-ad-client-secret", lambda g: r(g, A, 3) + g.choice(DIG) + "Q~" + r(g, A + "_~.-", 34),
            ["AZURE_CLIENT_SECRET"], "", secret_after="Q~"),
        tok("alibaba-access-key-id", lambda g: "LTAI" + r(g, A, 20), ["ALIBABA_CLOUD_ACCESS_KEY_ID"], "LTAI"),
        tok("digitalocean-token", lambda g: "dop_v1_" + r(g, H, 64), ["DIGITALOCEAN_TOKEN"], "dop_v1_"),
        tok("heroku-api-key", lambda g: "HRKU-AA" + r(g, AU, 58), ["HEROKU_API_KEY"], "HRKU-AA"),
        kv("cloudflare-api-token", ["CLOUDFLARE_API_TOKEN", "cf_api_token"], lambda g: r_mixed(g, AU, 40)),
        tok("cloudflare-origin-ca-key", lambda g: "v1.0-" + r(g, H, 24) + "-" + r(g, H, 146), ["CF_ORIGIN_CA_KEY"],
            "v1.0-"),
        tok("vault-token", lambda g: "hvs." + r(g, AU, 90), ["VAULT_TOKEN"], "hvs."),
        tok("terraform-cloud-token", lambda g: r(g, A, 14) + ".atlasv1." + r(g, AU, 67), ["TFE_TOKEN"], "",
            secret_after=".atlasv1."),
        tok("doppler-token", lambda g: "dp.pt." + r(g, A, 43), ["DOPPLER_TOKEN"], "dp.pt."),
        tok("pulumi-access-token", lambda g: "pul-" + r(g, H, 40), ["PULUMI_ACCESS_TOKEN"], "pul-"),
        tok("flyio-token", lambda g: "fo1_" + r(g, AU, 43), ["FLY_API_TOKEN"], "fo1_"),
        tok("supabase-token", lambda g: "sbp_" + r(g, H, 40), ["SUPABASE_ACCESS_TOKEN"], "sbp_"),
        tok("planetscale-token", lambda g: "pscale_tkn_" + r(g, AU, 43), ["PLANETSCALE_SERVICE_TOKEN"], "pscale_tkn_"),
        tok("databricks-token", lambda g: "dapi" + r(g, H, 32), ["DATABRICKS_TOKEN"], "dapi"),
        tok("grafana-cloud-token", lambda g: "glc_" + r(g, B64, 120) + "=", ["GRAFANA_CLOUD_TOKEN"], "glc_"),
        tok("grafana-service-account-token", lambda g: "glsa_" + r(g, A, 32) + "_" + r(g, H, 8), ["GRAFANA_TOKEN"],
            "glsa_"),
        tok("newrelic-user-api-key", lambda g: "NRAK-" + r(g, UP, 27), ["NEW_RELIC_API_KEY"], "NRAK-"),
        tok("dynatrace-token", lambda g: "dt0c01." + r(g, UP, 24) + "." + r(g, UP, 64), ["DT_API_TOKEN"], "dt0c01."),
        kv("vercel-token", ["VERCEL_TOKEN", "vercel_token"], lambda g: r_mixed(g, A, 24)),
        # vcs
        tok("github-pat", lambda g: "ghp_" + r(g, A, 36), ["GITHUB_TOKEN", "GH_TOKEN"], "ghp_",
            near=lambda g: ["Example from the docs: ghp_16C7e42F292c6912E7710c838347Ae178B4a\n"]),
        tok("github-oauth-token", lambda g: "gho_" + r(g, A, 36), ["GITHUB_OAUTH_TOKEN"], "gho_"),
        tok("github-user-to-server-token", lambda g: "ghu_" + r(g, A, 36), ["GITHUB_USER_TOKEN"], "ghu_"),
        tok("github-server-to-server-token", lambda g: "ghs_" + r(g, A, 36), ["GITHUB_APP_TOKEN"], "ghs_"),
        tok("github-refresh-token", lambda g: "ghr_" + r(g, A, 76), ["GITHUB_REFRESH_TOKEN"], "ghr_"),
        tok("github-fine-grained-pat", lambda g: "github_pat_" + r(g, A, 22) + "_" + r(g, A, 59), ["GITHUB_TOKEN"],
            "github_pat_"),
        tok("gitlab-pat", lambda g: "glpat-" + r(g, AU, 20), ["GITLAB_TOKEN"], "glpat-"),
        tok("gitlab-pipeline-trigger-token", lambda g: "glptt-" + r(g, H, 40), ["GITLAB_TRIGGER_TOKEN"], "glptt-"),
        tok("gitlab-runner-token", lambda g: "glrt-" + r(g, AU, 20), ["RUNNER_TOKEN"], "glrt-"),
        tok("gitlab-deploy-token", lambda g: "gldt-" + r(g, AU, 20), ["GITLAB_DEPLOY_TOKEN"], "gldt-"),
        tok("gitlab-other-token", lambda g: g.choice(["glcbt-", "glft-", "glsoat-"]) + r(g, AU, 24), ["GITLAB_CI_TOKEN"],
            "glft-"),
        tok("bitbucket-app-password", lambda g: "ATBB" + r(g, A, 32), ["BITBUCKET_APP_PASSWORD"], "ATBB"),
        # saas
        tok("slack-token", lambda g: g.choice(["xoxb-", "xoxp-"]) + r(g, DIG, 11) + "-" + r(g, DIG, 13) + "-" + r(g, A, 24),
            ["SLACK_BOT_TOKEN"], "xoxb-"),
        tok("slack-app-token", lambda g: "xapp-1-A" + r(g, UP, 10) + "-" + r(g, DIG, 13) + "-" + r(g, H, 64),
            ["SLACK_APP_TOKEN"], "xapp-1-"),
        tok("slack-webhook-url", lambda g: "https://hooks.slack.com/services/T" + r(g, UP, 8) + "/B" + r(g, UP, 10) + "/"
            + r(g, A, 24), ["SLACK_WEBHOOK_URL"], "https://hooks.slack.com/services/"),
        tok("stripe-secret-key", lambda g: g.choice(["sk_live_", "rk_live_", "sk_test_"]) + r(g, A, 99),
            ["STRIPE_SECRET_KEY"], "sk_live_",
            near=lambda g: ["stripe.api_key = \"sk_test_4eC39HqLyjWDarjtT1zdp7dc\"  # from the Stripe docs\n"]),
        tok("stripe-webhook-secret", lambda g: "whsec_" + r(g, A, 32), ["STRIPE_WEBHOOK_SECRET"], "whsec_"),
        tok("twilio-api-key", lambda g: "SK" + r(g, H, 32), ["TWILIO_API_KEY"], "SK"),
        kv("twilio-auth-token", ["TWILIO_AUTH_TOKEN", "twilio_token"], lambda g: r(g, H, 32)),
        tok("sendgrid-api-key", lambda g: "SG." + r(g, AU, 22) + "." + r(g, AU, 43), ["SENDGRID_API_KEY"], "SG."),
        tok("mailgun-api-key", lambda g: "key-" + r(g, H, 32), ["MAILGUN_API_KEY"], "key-"),
        tok("mailchimp-api-key", lambda g: r(g, H, 32) + "-us" + str(g.randint(1, 21)), ["MAILCHIMP_API_KEY"], ""),
        tok("npm-token", lambda g: "npm_" + r(g, A, 36), ["NPM_TOKEN"], "npm_"),
        tok("pypi-token", lambda g: "pypi-AgEIcHlwaS5vcmc" + r(g, AU, 150), ["PYPI_TOKEN", "TWINE_PASSWORD"], "pypi-"),
        tok("rubygems-api-key", lambda g: "rubygems_" + r(g, H, 48), ["GEM_HOST_API_KEY"], "rubygems_"),
        tok("nuget-api-key", lambda g: "oy2" + r(g, LO, 43), ["NUGET_API_KEY"], "oy2"),
        tok("dockerhub-token", lambda g: "dckr_pat_" + r(g, AU, 27), ["DOCKERHUB_TOKEN"], "dckr_pat_"),
        tok("shopify-token", lambda g: "shpat_" + r(g, H, 32), ["SHOPIFY_ACCESS_TOKEN"], "shpat_"),
        kv("datadog-api-key", ["DD_API_KEY", "datadog_api_key"], lambda g: r(g, H, 32)),
        kv("datadog-app-key", ["DD_APP_KEY", "datadog_app_key"], lambda g: r(g, H, 40)),
        tok("sentry-auth-token", lambda g: "sntrys_" + r(g, A, 120), ["SENTRY_AUTH_TOKEN"], "sntrys_"),
        tok("discord-bot-token", lambda g: g.choice("MNO") + r(g, A, 23) + "." + r(g, AU, 6) + "." + r(g, AU, 27),
            ["DISCORD_BOT_TOKEN"], "", secret_after="."),
        tok("discord-webhook-url", lambda g: "https://discord.com/api/webhooks/" + r(g, DIG, 18) + "/" + r(g, AU, 68),
            ["DISCORD_WEBHOOK"], "https://discord.com/api/webhooks/"),
        tok("telegram-bot-token", lambda g: r(g, DIG, 10) + ":AA" + r(g, AU, 33), ["TELEGRAM_BOT_TOKEN"], ""),
        tok("linear-api-key", lambda g: "lin_api_" + r(g, A, 40), ["LINEAR_API_KEY"], "lin_api_"),
        tok("notion-token", lambda g: g.choice(["ntn_" + r(g, DIG, 11) + r(g, A, 35), "secret_" + r(g, A, 43)]),
            ["NOTION_TOKEN"], "ntn_"),
        tok("atlassian-api-token", lambda g: "ATATT3xFfGF0" + r(g, AU, 180), ["JIRA_API_TOKEN"], "ATATT3"),
        tok("postman-api-key", lambda g: "PMAK-" + r(g, H, 24) + "-" + r(g, H, 34), ["POSTMAN_API_KEY"], "PMAK-"),
        tok("square-token", lambda g: "sq0atp-" + r(g, AU, 22), ["SQUARE_ACCESS_TOKEN"], "sq0atp-"),
        tok("braintree-access-token", lambda g: "access_token$production$" + r(g, LO, 16) + "$" + r(g, H, 32),
            ["BRAINTREE_ACCESS_TOKEN"], "access_token$production$"),
        tok("shippo-api-token", lambda g: "shippo_live_" + r(g, H, 40), ["SHIPPO_API_TOKEN"], "shippo_live_"),
        tok("flutterwave-secret-key", lambda g: "FLWSECK-" + r(g, H, 32) + "-X", ["FLW_SECRET_KEY"], "FLWSECK-"),
        kv("okta-api-token", ["OKTA_API_TOKEN", "okta_token"], lambda g: "00" + r(g, AU, 40)),
        tok("hubspot-private-app-token", lambda g: "pat-na1-" + _uuid(g), ["HUBSPOT_ACCESS_TOKEN"], "pat-na1-"),
        tok("airtable-pat", lambda g: "pat" + r(g, A, 14) + "." + r(g, H, 64), ["AIRTABLE_TOKEN"], ""),
        tok("figma-pat", lambda g: "figd_" + r(g, AU, 40), ["FIGMA_TOKEN"], "figd_"),
        tok("mapbox-secret-token", lambda g: "sk.eyJ1Ijoi" + r(g, AU, 60) + "." + r(g, AU, 22), ["MAPBOX_SECRET_TOKEN"],
            "sk.eyJ1Ijoi"),
        tok("jfrog-api-key", lambda g: "AKCp" + r(g, A, 69), ["ARTIFACTORY_API_KEY"], "AKCp"),
        tok("launchdarkly-key", lambda g: g.choice(["api-", "sdk-"]) + _uuid(g), ["LAUNCHDARKLY_SDK_KEY"], "sdk-"),
        tok("clickup-api-token", lambda g: "pk_" + r(g, DIG, 8) + "_" + r(g, UP, 32), ["CLICKUP_TOKEN"], "pk_"),
        tok("onepassword-service-token", lambda g: "ops_eyJ" + r(g, A, 300), ["OP_SERVICE_ACCOUNT_TOKEN"], "ops_eyJ"),
        kv("algolia-admin-key", ["ALGOLIA_ADMIN_KEY", "algolia_api_key"], lambda g: r(g, H, 32)),
        # crypto
        text("pgp-private-key", _pgp, near=lambda g: [
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n...\n-----END PGP PRIVATE KEY BLOCK-----\n",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + r(g, B64, 64) + "\n" + r(g, B64, 64)
            + "\n-----END PGP PUBLIC KEY BLOCK-----\n"]),
        text("private-key", lambda g: (_pem_text(g.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY",
                                                            "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]))(g)
                                      if g.random() < 0.75 else _pem_escaped(g)),
             near=lambda g: ["-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----\n",
                             "ssh-keygen wrote -----BEGIN OPENSSH PRIVATE KEY----- to ~/.ssh/id_ed25519\n"]),
        text("private-key-truncated", _pem_truncated, near=lambda g: [
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA... (redacted)\n",
            "Paste the block that starts with -----BEGIN OPENSSH PRIVATE KEY----- here.\n"]),
        tok("age-secret-key", lambda g: "AGE-SECRET-KEY-1" + r(g, BECH32, 58), ["SOPS_AGE_KEY"], "AGE-SECRET-KEY-1"),
        tok("bip32-extended-private-key", lambda g: "xprv9s21ZrQH143K" + r(g, B58, 95), ["WALLET_XPRV"], "xprv"),
        tok("jwt", _jwt, ["ID_TOKEN", "SESSION_JWT"], "eyJ",
            near=lambda g: ["jwt.io example: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6"
                            "IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c\n",
                            "header only: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ\n"]),
        # generic
        text("url-credentials", _url_creds, near=lambda g: [
            "DATABASE_URL=postgres://user:password@localhost:5432/app\n",
            "postgres://app:${DB_PASSWORD}@db.internal/app\n", "redis://localhost:6379/0\n",
            "git clone https://oauth2@git.internal/org/repo.git\n", "mysql://root:<password>@127.0.0.1/shop\n",
            "amqp://guest:guest@rabbitmq:5672/ is the default in the compose file\n",
            "https://docs.example.com:8443/path?query=1#frag\n", "mongodb://admin:****@mongo:27017\n"]),
        text("connection-string-password", _conn_string, near=lambda g: [
            "Server=localhost;Database=app;User Id=sa;Password=<YourStrong!Passw0rd>;\n",
            "Server=db;Database=app;Uid=app;Pwd=${DB_PASSWORD};\n"]),
        text("authorization-header", _basic_auth, near=lambda g: [
            "curl -H 'Authorization: Basic <base64>' https://host\n", "Authorization: Token YOUR_TOKEN_HERE\n"]),
        text("bearer-token", _bearer, near=lambda g: [
            "curl -H \"Authorization: Bearer $TOKEN\" https://api.internal/v1/me\n",
            "headers = {\"Authorization\": f\"Bearer {token}\"}\n",
            "Authorization: Bearer <access-token>\n", "Send the bearer token in the Authorization header.\n",
            "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE\n"]),
        text("dotenv-assignment", _dotenv, near=lambda g: [
            "DB_PASSWORD=changeme\n", "JWT_SECRET=${JWT_SECRET}\n", "export API_KEY=$API_KEY\n", "SECRET_KEY=\n",
            "password: str\n", "TOKEN_URL=https://auth.internal/oauth/token\n", "SMTP_PASSWORD=your-password-here\n",
            "SESSION_SECRET=xxxxxxxxxxxxxxxx\n", "CLIENT_SECRET=<client secret>\n", "API_KEY=settings.API_KEY\n",
            "token: string;\n", "password = os.environ.get('DB_PASSWORD')\n", "SECRET_NAME=prod_db_credentials\n",
            "AUTH_TOKEN_HEADER=X-Auth-Token\n", "PASSWORD_MIN_LENGTH=12\n"]),
        text("secret-assignment", _assignment, near=lambda g: [
            'api_key = os.environ["OPENAI_API_KEY"]\n', "const secret = process.env.SECRET;\n",
            'password = getpass.getpass("Password: ")\n', '"token_type": "access_token",\n',
            '{"password": "********"}\n', 'client_secret = "<your client secret>"\n', "apiKey: 'YOUR_API_KEY',\n",
            'token = "abc"\n', '"secret_ref": "projects/acme/secrets/db-password/versions/latest"\n',
            'password_field = "password_confirmation"\n', "token: ''\n", 'auth_key = "${AUTH_KEY}"\n']),
        text("keyword-high-entropy", _keyword_token, near=lambda g: [
            "The token expires after 3600 seconds; refresh it with the refresh token endpoint.\n",
            f"token id {_uuid(g)} created\n", f"secret version {r(g, H, 40)} rotated\n",
            "Passwords must contain at least 12 characters including uppercase letters.\n",
            "password reset requested for account 12345\n", "token: none\n"]),
        # pii
        text("pii-email", _email, near=lambda g: ["Author: Jane Doe <jane@example.com>\n",
                                                   "git@github.com:org/repo.git\n", "noreply@github.com\n"]),
        text("pii-credit-card", _card, near=lambda g: ["order 4111 1111 1111 1112 failed Luhn\n",
                                                        "timestamp 1714567890123456\n"]),
        text("pii-us-ssn", _ssn, near=lambda g: ["ticket 000-12-3456\n", "version 2024-05-01\n"]),
        text("pii-phone", _phone, near=lambda g: ["build 20240501.1234\n", "port 8080-8090\n"]),
        text("pii-iban", _iban_text, near=lambda g: ["IBAN: DE00 0000 0000 0000 0000 00 (invalid)\n"]),
        # shapes the first rules missed (appended, so the samples above stay as they were)
        text("env-var-secret", _env_inline, near=lambda g: [
            "PGPASSWORD= psql -h db -U app\n", "OPENAI_API_KEY=$OPENAI_API_KEY python agent.py\n",
            "docker run -e STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY} app\n",
            "SSH_KEY=~/.ssh/id_ed25519 ansible-playbook site.yml\n", "CACHE_KEY=user:profile:42 make warm\n",
            "PUBLIC_KEY=" + r(g, B64, 64) + " ./verify.sh\n", "MAX_TOKENS=4096 python eval.py\n",
            "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }} gh release create\n",
            "NEXT_PAGE_TOKEN=" + r(g, A, 24) + " ./list.sh\n", "API_KEY=your-api-key-here npm start\n"]),
        text("secret-assignment", _quoted_password, near=lambda g: [
            'password = "{0}:{1}".format(user, pw)\n', 'token_hint = "Paste the token from your dashboard."\n',
            'password_prompt = "Enter your password"\n', '{"password": "Enter the code we sent you."}\n']),
        text("aws-session-token", _sts_json, near=lambda g: [
            "request_token: " + _uuid(g) + "\n", "        self.credentials = credentials\n",
            "    self.password = password\n", '{"continuation_token": "' + r(g, A, 32) + '"}\n',
            '{"nextPageToken": "' + r(g, A, 40) + '"}\n', '"SessionToken": "<session-token>"\n',
            "sessionToken = getSessionToken()\n"]),
        text("url-credentials", _url_creds_at, near=lambda g: [
            "git@github.com:org/repo.git and https://github.com/org/repo\n",
            "mailto:ops@example.com?subject=a:b@c\n"]),
        text("github-pat", _escaped_token("github-pat", lambda g: "ghp_" + r(g, A, 36))),
        text("anthropic-api-key", _escaped_token("anthropic-api-key", lambda g: "sk-ant-api03-" + r(g, AU, 93) + "AA")),
        text("slack-token", _escaped_token(
            "slack-token", lambda g: "xoxb-" + r(g, DIG, 12) + "-" + r(g, DIG, 13) + "-" + r(g, A, 24))),
        text("dotenv-assignment", _dotenv_in_json, near=lambda g: [
            '{"stdout": "DB_HOST=db.internal\\nport=5432\\npassword_min_length=12\\n"}\n',
            '{"stdout": "db_password=${DB_PASSWORD}\\nport=5432"}\n',
            '{"content": "# .env\\ndb_password=changeme\\nport=5432"}\n']),
    ]


def _dotenv_in_json(rng):
    """A .env printed inside JSON text (a tool's output serialised as a JSON string):
    the line breaks written out, the names lower-case, the last value ending at the quote."""
    name = rng.choice(["db_password", "smtp_pass", "jwt_secret", "redis_password", "secret_key", "webhook_secret"])
    val = r_mixed(rng, PW, rng.randint(12, 32))
    t = rng.choice([
        '{{"stdout": "host=db.internal\\nport=5432\\n{n}={v}\\nlog_level=info\\n"}}\n',
        '{{"content": "# .env\\n{n}={v}"}}\n',
        '{{"content": "{n}={v}\\nport=5432"}}\n',
        '{{"output": "{n}: {v}\\r\\nretries: 3"}}\n',
    ]).format(n=name, v=val)
    return t, [("dotenv-assignment", val)]


def _env_inline(rng):
    name = rng.choice(["PGPASSWORD", "MYSQL_PWD", "OPENAI_API_KEY", "STRIPE_SECRET_KEY", "MY_SERVICE_KEY",
                       "JWT_SIGNING_KEY", "DJANGO_SECRET_KEY", "REDIS_PASS", "VAULT_ROOT_TOKEN", "SMTP_PASSWORD"])
    val = r_mixed(rng, A, rng.randint(16, 40))
    quoted = r_mixed(rng, A + "!@#%^&*(-_=+) {}", rng.randint(24, 50)).strip() + rng.choice("0Z9")
    t, v = rng.choice([
        ("{n}={v} psql -h db.internal -U app orders\n", val),
        ("$ {n}={v} python agent.py --task nightly\n", val),
        ("docker run --rm -e {n}={v} -p 8080:8080 acme/api:1.4\n", val),
        ("env {n}={v} ./scripts/migrate.sh\n", val),
        ("RUN {n}='{v}' ./configure --with-ssl\n", quoted),
        ("ENV {n}=\"{v}\"\n", quoted),
    ])
    return t.format(n=name, v=v), [("env-var-secret", v)]


def _quoted_password(rng):
    val = rng.choice([
        " ".join(rng.choice(["correct", "horse", "battery", "staple", "orbit", "velvet", "tundra", "maple", "quartz",
                             "lantern", "cobalt", "ember"]) for _ in range(4)) + " " + str(rng.randint(10, 99)),
        r_mixed(rng, A, 6) + "{" + r(rng, string.ascii_uppercase, 2) + r_mixed(rng, A, 5) + "}" + r(rng, "!@%^&*", 2),
        r_mixed(rng, A, 5) + " " + r_mixed(rng, A + "!@%^&*", 9),
        r_mixed(rng, A, 7) + "{" + r_mixed(rng, A, 8),
    ])
    t = rng.choice(['{{"user": "svc", "password": "{v}"}}', "    password = \"{v}\"\n", "db_password: '{v}'\n",
                    "conn.login(user=\"svc\", password=\"{v}\")\n"]).format(v=val)
    return t, [("secret-assignment", val)]


def _sts_json(rng):
    key_id = "ASIA" + r(rng, B32, 16)
    secret = r_mixed(rng, B64, 40)
    token = "IQoJb3JpZ2luX2Vj" + r(rng, B64, rng.randint(250, 600))
    t = ('{{"Credentials": {{"AccessKeyId": "{k}", "SecretAccessKey": "{s}", "SessionToken": "{t}", '
         '"Expiration": "2024-05-01T12:00:00Z"}}, "AssumedRoleUser": {{"Arn": "arn:aws:sts::123456789012:'
         'assumed-role/ci/session"}}}}').format(k=key_id, s=secret, t=token)
    if rng.random() < 0.5:
        t = t.replace('"SessionToken": ', '"sessionToken":')
    return t, [("aws-access-key-id", key_id), ("aws-secret-access-key", secret), ("aws-session-token", token)]


def _url_creds_at(rng):
    """A password holding ``@``: it ends at the last ``@`` before the host."""
    pw = r_mixed(rng, A, rng.randint(4, 8)) + "@" + r_mixed(rng, A + "!$%^*-_~@", rng.randint(6, 14)) + "x"
    user = rng.choice(["admin", "app", "svc_billing", "root"])
    scheme, host = rng.choice([("postgres", "db.internal:5432/app"), ("mysql", "localhost/db"),
                               ("redis", "cache.internal:6379/0"), ("mongodb", "mongo.internal:27017/prod")])
    t = rng.choice(["DATABASE_URL={}\n", "engine = create_engine(\"{}\")\n", "$ psql {}\n"]).format(
        f"{scheme}://{user}:{pw}@{host}")
    return t, [("url-credentials", pw)]


def _escaped_token(rule, make):
    """A prefixed token glued to an escape: a written-out ``\\n`` in JSON text, a URL ``%3D``."""
    def sample(rng):
        tok = make(rng)
        t = rng.choice([
            '{{"output": "deploy ok\\n{v}\\n"}}',
            '"stdout": "export A=1\\n\\t{v}"',
            "https://ci.internal/callback?next=%2Fhooks%3Ftoken%3D{v}&x=1\n",
            "redirect_uri=https%3A%2F%2Fapp.internal%2Fcb%3Fkey%3d{v}\n",
            "line one\\r\\n{v}\\r\\n",
        ]).format(v=tok)
        return t, [(rule, tok)]
    return sample


def _name_lower(name: str) -> str:
    return name.lower()


def _token_samples(spec: Spec, rng: random.Random, count: int) -> list[Sample]:
    out = []
    ctxs = list(TOKEN_TEMPLATES)
    rng.shuffle(ctxs)
    for i in range(count):
        ctx = ctxs[i % len(ctxs)]
        value = spec.make(rng)
        name = rng.choice(spec.names)
        t = TOKEN_TEMPLATES[ctx].format(NAME=name, name=_name_lower(name), tok=value)
        out.append(Sample(t, [(spec.rule, spec.secret(value))], spec.rule, ctx))
    return out


def _kv_samples(spec: Spec, rng: random.Random, count: int) -> list[Sample]:
    out = []
    ctxs = list(KV_TEMPLATES)
    rng.shuffle(ctxs)
    for i in range(count):
        ctx = ctxs[i % len(ctxs)]
        value = spec.make(rng)
        name = rng.choice(spec.names)
        if ctx in ("python-kw", "js") and not name.replace("_", "").isalnum():
            ctx = "python"
        t = KV_TEMPLATES[ctx].format(NAME=name, name=name.lower() if ctx != "js" else _camel(name), val=value)
        out.append(Sample(t, [(spec.rule, value)], spec.rule, ctx))
    return out


def _camel(name: str) -> str:
    parts = name.lower().split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def _near_misses(spec: Spec, rng: random.Random) -> list[Sample]:
    texts: list[str] = []
    name = spec.names[0] if spec.names else "API_KEY"
    if spec.style == "token":
        example = spec.make(rng)
        rest = len(example) - len(spec.prefix)
        p = spec.prefix
        for filler in ("x" * rest, "X" * rest, "...", "<redacted>", "0" * rest, "YOUR_TOKEN_HERE", "*" * 12):
            texts.append(f"{name}={p}{filler}\n")
        texts.append(f"Tokens of this kind start with `{p or example[:4]}` followed by {rest} characters.\n")
    if spec.style in ("token", "kv"):
        texts += [
            f"{name}=<your-{name.lower().replace('_', '-')}>\n",
            f"export {name}=${{{name}}}\n",
            f'{name.lower()} = os.environ["{name}"]\n',
            f"{name}=\n",
        ]
    if spec.style == "kv":
        example = spec.make(rng)
        texts += [f"{name}={'x' * len(example)}\n", f'"{name.lower()}": "{"0" * len(example)}"\n']
    if spec.near is not None:
        texts += spec.near(rng)
    return [Sample(t, [], spec.rule, "near-miss") for t in texts]


def _b64_image(rng: random.Random, size: int) -> str:
    raw = bytes(rng.getrandbits(8) for _ in range(size))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + raw).decode()


def shared_negatives(rng: random.Random) -> list[Sample]:
    """Things that look like secrets to a naive scanner but are not."""
    t: list[str] = []
    for _ in range(12):
        sha = r(rng, H, 40)
        t.append(f"commit {sha}\nAuthor: CI Bot <ci@example.com>\nDate:   Wed May 1 12:00:00 2024 +0000\n\n    Fix flaky test\n")
        t.append(f"$ git log --oneline\n{sha[:7]} Merge pull request #{rng.randint(100, 9999)} from org/feature\n"
                 f"{r(rng, H, 7)} Bump version\n")
        t.append(f"image: registry.internal/api@sha256:{r(rng, H, 64)}\n")
        t.append(f"sha256sum dist/app.tar.gz\n{r(rng, H, 64)}  dist/app.tar.gz\n")
        t.append(f'"integrity": "sha512-{base64.b64encode(bytes(rng.getrandbits(8) for _ in range(64))).decode()}",\n')
        t.append(f"request_id={_uuid(rng)} trace_id={r(rng, H, 32)} span_id={r(rng, H, 16)} status=200 latency_ms=42\n")
        t.append(f'{{"id": "{_uuid(rng)}", "object": "chat.completion", "created": {rng.randint(1_600_000_000, 1_800_000_000)}, '
                 f'"model": "gpt-4o-mini", "system_fingerprint": "fp_{r(rng, H, 10)}"}}')
        t.append(f"![diagram](data:image/png;base64,{_b64_image(rng, rng.randint(600, 3000))})\n")
        t.append(f'{{"type": "image", "source": {{"type": "base64", "media_type": "image/png", '
                 f'"data": "{_b64_image(rng, rng.randint(600, 3000))}"}}}}')
        t.append(f"etag: \"{r(rng, H, 32)}\"\ncache-control: max-age=3600\nx-request-id: {_uuid(rng)}\n")
        t.append(f"msg_{r(rng, A, 24)} toolu_{r(rng, A, 24)} call_{r(rng, A, 24)} chatcmpl-{r(rng, A, 29)}\n")
    t += [
        'api_key = os.environ["OPENAI_API_KEY"]\nclient = OpenAI(api_key=api_key)\n',
        "const token = await getToken();\nconst headers = { Authorization: `Bearer ${token}` };\n",
        "password = getpass.getpass()\nif not password:\n    raise SystemExit(1)\n",
        "interface Credentials {\n  username: string;\n  password: string;\n  apiKey?: string;\n}\n",
        "CREATE TABLE users (id SERIAL, email TEXT, password_hash VARCHAR(255), api_token_hash TEXT);\n",
        "Rotate your API keys every 90 days. Never commit a token or a password to the repository.\n",
        "The secret manager stores the database password; the app reads it at start-up.\n",
        "To authenticate, pass your API key in the `x-api-key` header (see the docs).\n",
        "OPENAI_API_KEY=sk-...\nANTHROPIC_API_KEY=<your-anthropic-key>\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxx\n",
        "export TOKEN=$(vault kv get -field=token secret/ci)\n",
        "password: ${{ secrets.DB_PASSWORD }}\ntoken: ${{ secrets.GITHUB_TOKEN }}\n",
        "sk-learn is not a package; use scikit-learn. The task-manager-service handles retries.\n",
        "from huggingface_hub import hf_hub_download\nmodel = hf_hub_download(repo_id='org/model', filename='w.bin')\n",
        "The AKIA prefix marks long-term AWS access key ids; ASIA marks temporary ones.\n",
        "color: #3fa9f5; background: #ffffff; border: 1px solid #e5e5e5;\n",
        "version = \"1.24.3\"\nedition = \"2021\"\nrust-version = \"1.70\"\n",
        "Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n    token = load()\n"
        "KeyError: 'token'\n",
        "SECRET_KEY_BASE is generated by `rails secret` at deploy time.\n",
        "npm WARN deprecated request@2.88.2: request has been deprecated\n",
        "tokens = tokenizer.encode(text)\nprint(len(tokens), 'tokens')\n",
        "passwordless login via magic link is enabled for this tenant\n",
        f"uuid: {_uuid(rng)}\nchecksum: {r(rng, H, 32)}\n",
        f"The job {r(rng, LO, 20)} finished in 42s.\n",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 " + r(rng, B64, 300) + " user@laptop\n",
        "-----BEGIN CERTIFICATE-----\n" + "\n".join(r(rng, B64, 64) for _ in range(10)) + "\n-----END CERTIFICATE-----\n",
        "-----BEGIN PUBLIC KEY-----\n" + "\n".join(r(rng, B64, 64) for _ in range(4)) + "\n-----END PUBLIC KEY-----\n",
        "The private key must start with -----BEGIN PRIVATE KEY----- and end with the matching END line.\n",
        "Use `Authorization: Bearer <token>` for every call.\n",
        "See https://github.com/org/repo/blob/main/docs/auth.md#tokens for details.\n",
        "postgres://localhost:5432/app_development\n",
    ]
    return [Sample(x, [], None, "shared") for x in t]


def build_corpus(seed: int = 1337, positives_per_rule: int = 12) -> list[Sample]:
    rng = random.Random(seed)
    out: list[Sample] = []
    for spec in specs():
        if spec.style == "token":
            out += _token_samples(spec, rng, positives_per_rule)
        elif spec.style == "kv":
            out += _kv_samples(spec, rng, positives_per_rule)
        else:
            for _ in range(positives_per_rule):
                t, secrets = spec.make(rng)
                out.append(Sample(t, list(secrets), spec.rule, "text"))
        out += _near_misses(spec, rng)
    out += shared_negatives(rng)
    return out


# -- a realistic megabyte (benchmarks) --------------------------------------------------

_PROSE = (
    "The service reads its configuration at start-up and retries failed calls with exponential backoff. "
    "When the queue is full, producers block until a consumer frees a slot; the timeout is configurable. "
    "We rotate credentials every ninety days and keep them in the secret manager, never in the repository. "
    "The migration adds an index on (tenant_id, created_at) so the dashboard query stays under fifty milliseconds. "
)

_PY = '''def handle(event, context):
    """Process one batch of records and return the ids that failed."""
    failed = []
    for record in event.get("Records", []):
        try:
            payload = json.loads(record["body"])
            process(payload, retries=3, timeout=context.remaining())
        except (KeyError, ValueError) as exc:
            log.warning("bad record %s: %s", record.get("messageId"), exc)
            failed.append(record["messageId"])
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failed]}

'''

_JS = '''export async function fetchUser(id, { signal } = {}) {
  const res = await fetch(`/api/users/${encodeURIComponent(id)}`, { signal, headers: { accept: "application/json" } });
  if (!res.ok) throw new Error(`user ${id}: HTTP ${res.status}`);
  return res.json();
}

'''


def realistic_megabyte(seed: int = 5, size: int = 1_000_000, secrets_per_mb: int = 40) -> str:
    """About 1 MB of what an agent sends: code, prose, logs, JSON tool output, one
    base64 image, and a few dozen secrets in .env files and configs."""
    rng = random.Random(seed)
    corpus = [s for s in build_corpus(seed, positives_per_rule=2) if s.secrets and not s.rule.startswith("pii-")]
    parts: list[str] = []
    total = 0
    image = f'{{"type": "image", "source": {{"type": "base64", "media_type": "image/png", "data": "{_b64_image(rng, 120_000)}"}}}}'
    parts.append(image)
    total += len(image)
    every = max(1, size // max(1, secrets_per_mb))
    next_secret = every
    while total < size:
        kind = rng.random()
        if kind < 0.35:
            chunk = _PY.replace("handle", f"handle_{rng.randint(1, 999)}")
        elif kind < 0.55:
            chunk = _JS.replace("fetchUser", f"fetchUser{rng.randint(1, 999)}")
        elif kind < 0.75:
            chunk = _PROSE * rng.randint(1, 3) + "\n"
        elif kind < 0.9:
            chunk = "".join(
                f"2024-05-01T12:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z INFO api request_id={_uuid(rng)} "
                f"path=/v1/items/{rng.randint(1, 10**6)} status=200 latency_ms={rng.randint(1, 900)}\n"
                for _ in range(8))
        else:
            chunk = json.dumps({"files": [{"path": f"src/mod_{i}.py", "size": rng.randint(100, 90000),
                                           "sha256": r(rng, H, 64)} for i in range(6)]}) + "\n"
        if total >= next_secret:
            chunk += rng.choice(corpus).text
            next_secret += every
        parts.append(chunk)
        total += len(chunk)
    return "".join(parts)[:size]


# -- shared by the redaction tests ---------------------------------------------------------

TEST_KEY = b"test-session-key-0123456789abcdef"
OTHER_KEY = b"another-session-key-fedcba987654"


def hyperscan_cache_dir() -> str:
    """Where the tests keep compiled Hyperscan databases (keyed by pattern-set hash,
    so a stale file is never used for a different rule set)."""
    import os
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"ctxproxy-test-hscache-{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path


_REDACTORS: dict = {}


def redactor(engine: str = "hyperscan", groups: tuple[str, ...] | None = None):
    """A cached Redactor over the built-in rules of ``groups`` (default groups if None)."""
    from ctxproxy.store.services.redaction import DEFAULT_GROUPS, Redactor, builtin_rules

    groups = tuple(groups or DEFAULT_GROUPS)
    key = (engine, groups)
    if key not in _REDACTORS:
        rules = [r for r in builtin_rules() if r.group in groups]
        if engine == "hyperscan":
            _REDACTORS[key] = Redactor(rules, use_hyperscan=True, cache_dir=hyperscan_cache_dir())
        else:
            _REDACTORS[key] = Redactor(rules, use_hyperscan=False)
    return _REDACTORS[key]
