"""The built-in rule set, written for ctxproxy.

Token formats are public facts (documented prefixes and lengths); the regexes,
thresholds and allowlists here are our own. Order matters: when two rules
claim the same span, the one listed first names the placeholder, so specific
formats come before structural ones (PEM, JWT, URLs), and those before the
generic assignment and keyword rules. PII rules come last and are off unless
a profile asks for the ``pii`` group.

Conventions:
- every secret character class excludes ``[`` so that a placeholder
  (``[REDACTED:...]``) can never be taken for a secret;
- prefixed tokens end at a character that cannot continue them
  (``(?![...])``), so a longer lookalike does not match a shorter format;
- prefixed tokens need some entropy so that ``ghp_xxxx…`` style placeholders
  in documentation pass through.
"""
from __future__ import annotations

import re

from .rules import Rule, make_rule

# Values that say "I am not a real secret" (docs, templates, examples): an
# optional token prefix (``ghp_``, ``sk-ant-api03-``), then only filler to the
# end. Anchored: a real secret that merely contains ``abcdefgh`` or ``example``
# somewhere in its random part is still a secret.
_FILLER = (
    r"(?:x{6,}|\*{4,}|\.{3,}|0{8,}|1234567890|abcdefgh|<[^<>]*>|"
    r"(?:example|sample|dummy|placeholder|changeme|redacted|your[_-]?(?:api|key|token|secret|pass))"
    r"(?:[_-]?(?:api|key|token|secret|pass(?:word)?|value|here|[0-9]{1,3}))*)"
)
_PLACEHOLDER = (
    rf"(?i)^(?:[a-z0-9]{{1,12}}[_.-]){{0,4}}[a-z0-9]{{0,12}}?[_.-]?{_FILLER}"
    rf"(?:[_.-]?(?:{_FILLER}|[x*.0]+))*$"
)
# Words that, inside a generic value, mark a template rather than a secret.
_STOPWORDS = (
    "example", "sample", "dummy", "placeholder", "changeme", "change_me", "redacted", "your_",
    "your-", "yourpass", "xxxxxx", "******", "<", "${", "{{", "todo", "fixme", "insert", "replace",
    "string", "boolean", "integer", "undefined", "optional", "required", "password", "secret",
    "token", "notreal", "not-real", "fake",
)
# Example credentials published in vendor documentation.
_DOC_EXAMPLES = (
    r"EXAMPLE",  # AWS: AKIAIOSFODNN7EXAMPLE, wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
    r"^sk_test_(?:4eC39HqLyjWDarjtT1zdp7dc|BQokikJOvBiI2HlWgH4olfQ2)$",  # Stripe docs
    r"^ghp_16C7e42F292c6912E7710c838347Ae178B4a$",  # GitHub docs
    r"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c$",  # jwt.io
    r"^Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==$",  # Azurite
)
# Generic values that are code, not secrets: references, identifiers, words.
_CODE_VALUES = (
    r"^[a-z_][a-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)+$",  # settings.SECRET_KEY, process.env.TOKEN
    r"^[a-z]+(?:[_-][a-z]+)+$",  # access_token, my-secret-name
    r"^[A-Z]+(?:_[A-Z]+)+$",  # GITHUB_TOKEN
    r"^[a-z]+(?:[A-Z][a-z]+)+$",  # accessToken
    r"^\$(?:\{[^}]*\}|\([^)]*\)|[A-Z_][A-Z0-9_]*)$",  # ${VAR}, $(cmd), $VAR
    r"^%(?:\([a-z_]*\))?[sd]$|^%[A-Z_][A-Z0-9_]*%$",  # %(password)s, %PASSWORD%
    r"^[A-Za-z][A-Za-z0-9+.-]{1,30}://",  # URLs: url-credentials handles passwords in them
    r"^(?i:true|false|null|none|nil|undefined)$",
)

_END = r"(?![A-Za-z0-9_-])"  # a token over [A-Za-z0-9_-] ends here
# Where a prefixed token may begin: a word boundary, or right after an escape
# that glues a letter or digit to it: a JSON/shell ``\n`` ``\r`` ``\t`` written
# out, or a URL ``%XX`` (``...\nsk-ant-...`` in JSON text, ``token%3Dghp_...``).
_LEFT = r"(?:\b|(?<=\\[nrt])|(?<=%[0-9A-Fa-f]{2}))"
_SEP = r"""["']?[ \t]{0,8}(?:=|:|:=|=>|->)[ \t]{0,8}["'`]?"""


def _kv(names: str, value: str, tail: str = r"(?![A-Za-z0-9_+/=-])") -> str:
    """``<name…> = <value>`` in code, JSON, YAML, .env and shell (case-insensitive)."""
    return rf"(?i)(?:{names})[\w.-]{{0,30}}?{_SEP}({value}){tail}"


_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


# Literal starts distinct enough to mark a token even glued to a word before them
# (``keyghp_…``, ``TOKEN_sk-ant-api03-…``). Short or word-like ones (``sk-``,
# ``key-``, ``pat-``, ``AKIA``) are left out: ``task-<32 hex>`` is not a key.
_GLUED_STARTS = (
    "sk-ant-api", "sk-ant-admin", "sk-ant-o", "sk-or-v1-", "sk-lf-", "gsk_", "api_org_", "pplx-", "lsv2_",
    "nvapi-", "pcsk_", "GOCSPX-", "pscale_", "glsa_", "NRAK-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "glpat-", "glptt-", "glrt-", "gldt-", "whsec_", "pypi-AgE", "rubygems_", "dckr_", "shippo_",
    "PMAK-", "FLWSECK", "figd_", "ops_eyJ", "fo1_",
)


def _tok(id: str, group: str, pattern: str, *, entropy: float = 3.0, allow=(), **kw) -> Rule:
    """A prefixed token: must clear the entropy floor and the placeholder allowlist.
    A leading ``\b`` also accepts an escape right before the token (``_LEFT``);
    a token with one of ``_GLUED_STARTS`` is also found glued to a word before
    it, and then its literal start stays in the text (so that a stream need
    not hold every word that ends in ``g`` for a ``ghp_`` that may follow)."""
    glued = next((s for s in _GLUED_STARTS if pattern.startswith("\\b(" + s)), None)
    if glued and "secret" not in kw and _one_form(pattern):
        pattern += "|(?<=\\w)" + glued + "(" + pattern[3 + len(glued):]
        kw["secret"] = None  # the first group that took part
    if pattern.startswith("\\b"):
        pattern = _LEFT + pattern[2:]
    return make_rule(id, group, pattern, entropy=entropy, allow=(_PLACEHOLDER, *_DOC_EXAMPLES, *allow), **kw)


def _one_form(pattern: str) -> bool:
    """Neither the pattern nor its first group is a choice of ``|`` alternatives
    (moving the literal start out of the group then keeps the same language)."""
    from re import _constants as C, _parser as P

    tree = list(P.parse(pattern))
    group = next((av[3] for op, av in tree if op is C.SUBPATTERN and av[0] == 1), None)
    return not any(len(t) == 1 and t[0][0] is C.BRANCH for t in (tree, list(group or [])))


def _llm() -> list[Rule]:
    g = "llm"
    return [
        _tok("anthropic-api-key", g, rf"\b(sk-ant-api\d{{2}}-[A-Za-z0-9_-]{{80,120}}){_END}"),
        _tok("anthropic-admin-key", g, rf"\b(sk-ant-admin\d{{2}}-[A-Za-z0-9_-]{{80,120}}){_END}"),
        _tok("anthropic-oauth-token", g, rf"\b(sk-ant-o(?:at|rt)\d{{2}}-[A-Za-z0-9_-]{{80,120}}){_END}"),
        _tok("openai-project-key", g, rf"\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{{40,250}}){_END}"),
        _tok("openai-legacy-key", g, r"\b(sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})\b"),
        _tok("openrouter-api-key", g, r"\b(sk-or-v1-[a-f0-9]{64})\b"),
        _tok("langfuse-secret-key", g, rf"\b(sk-lf-{_UUID})\b"),
        _tok("deepseek-api-key", g, r"\b(sk-[a-f0-9]{32})\b"),
        _tok("openai-compatible-key", g, r"\b(sk-[A-Za-z0-9]{32,64})\b", entropy=3.5),
        _tok("google-api-key", g, rf"\b(AIza[0-9A-Za-z_-]{{35}}){_END}"),
        _tok("azure-openai-key", g, _kv(
            r"azure[\w.-]{0,30}?(?:key|secret|token)|azure_openai|api-key|ocp-apim-subscription-key",
            r"[a-f0-9]{32}|[A-Za-z0-9]{84}", r"(?![A-Za-z0-9])")),
        _tok("mistral-api-key", g, _kv("mistral", r"[A-Za-z0-9]{32}", r"(?![A-Za-z0-9])")),
        _tok("groq-api-key", g, r"\b(gsk_[A-Za-z0-9]{52})\b"),
        _tok("huggingface-token", g, r"\b(hf_[A-Za-z0-9]{34,40})\b"),
        _tok("huggingface-org-token", g, r"\b(api_org_[A-Za-z0-9]{34})\b"),
        _tok("cohere-api-key", g, _kv(r"cohere|\bco_?api_?key", r"[A-Za-z0-9]{40}", r"(?![A-Za-z0-9])")),
        _tok("replicate-api-token", g, r"\b(r8_[A-Za-z0-9]{37})\b"),
        _tok("perplexity-api-key", g, r"\b(pplx-[A-Za-z0-9]{48})\b"),
        _tok("xai-api-key", g, r"\b(xai-[A-Za-z0-9]{80})\b"),
        _tok("together-api-key", g,
             rf"\b(tgp_v1_[A-Za-z0-9_-]{{40,64}}){_END}|" + _kv("together", r"[a-f0-9]{64}").removeprefix("(?i)"),
             secret=None, flags=re.IGNORECASE),
        _tok("langsmith-api-key", g, r"\b(lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})\b"),
        _tok("nvidia-api-key", g, rf"\b(nvapi-[A-Za-z0-9_-]{{64}}){_END}"),
        _tok("elevenlabs-api-key", g, r"\b(sk_[a-f0-9]{48})\b"),
        _tok("pinecone-api-key", g, r"\b(pcsk_[A-Za-z0-9]{4,10}_[A-Za-z0-9]{40,80})\b"),
        _tok("wandb-api-key", g, _kv("wandb", r"[a-f0-9]{40}", r"(?![A-Za-z0-9])")),
    ]


def _cloud() -> list[Rule]:
    g = "cloud"
    aws_example = (r"EXAMPLE",)
    return [
        _tok("aws-access-key-id", g, r"\b((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16})\b", entropy=2.5,
             allow=aws_example),
        _tok("aws-secret-access-key", g, _kv(
            r"aws[\w.-]{0,20}?(?:secret|sk)|secret[_.-]?access[_.-]?key",
            r"[A-Za-z0-9/+]{40}", r"(?![A-Za-z0-9/+=])"), entropy=3.5, allow=aws_example),
        _tok("aws-secret-near-key-id", g,
             r"\b(?:AKIA|ASIA)[A-Z2-7]{16}\b[\"',;|: \t\r\n]{1,12}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
             entropy=3.5, allow=aws_example),
        _tok("aws-session-token", g, _kv(
            r"aws[\w.-]{0,20}?session[\w.-]{0,10}?token|x-amz-security-token|(?<![a-z0-9])session[_-]?token",
            r"[A-Za-z0-9/+=]{100,2000}", r"(?![A-Za-z0-9/+=])"), entropy=3.5),
        _tok("gcp-service-account-key", g,
             r'"private_key"\s{0,8}:\s{0,8}"(-----BEGIN (?:RSA )?PRIVATE KEY-----(?:\\[rn]|[\sA-Za-z0-9+/=]){64,8000}?'
             r'-----END (?:RSA )?PRIVATE KEY-----)'),
        _tok("google-oauth-client-secret", g, rf"\b(GOCSPX-[A-Za-z0-9_-]{{28}}){_END}"),
        _tok("google-oauth-access-token", g, rf"\b(ya29\.[0-9A-Za-z_-]{{30,1024}}){_END}"),
        _tok("google-oauth-refresh-token", g, rf"(?<![A-Za-z0-9/])(1//0[0-9A-Za-z_-]{{40,512}}){_END}"),
        _tok("azure-storage-account-key", g, _kv(
            r"accountkey|azure[\w.-]{0,20}?(?:storage|account)[\w.-]{0,20}?key",
            r"[A-Za-z0-9+/]{86}==", r"(?![A-Za-z0-9+/=])")),
        _tok("azure-connection-string-key", g,
             r"(?i)endpoint=sb://[^;\s]{1,200};[ \t]{0,8}sharedaccesskeyname=[^;\s]{1,100};[ \t]{0,8}"
             r"sharedaccesskey=([A-Za-z0-9+/]{42,44}=)"),
        _tok("azure-sas-token", g,
             r"(?i)\bsv=\d{4}-\d{2}-\d{2}&[^\s\"'<>]{0,300}?\bsig=([A-Za-z0-9%+/]{40,100}(?:%3d|=){0,2})"),
        # The secret is what follows "<3 chars><digit>Q~": the 3 characters are the
        # credential's "hint", which Microsoft Graph shows to anyone who can read the
        # app registration. Anchored there, a stream need not hold every short word.
        _tok("azure-ad-client-secret", g,
             r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~([A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~-])"),
        _tok("alibaba-access-key-id", g, r"\b(LTAI[A-Za-z0-9]{12,20})\b"),
        _tok("digitalocean-token", g, r"\b(do[por]_v1_[a-f0-9]{64})\b"),
        _tok("heroku-api-key", g,
             rf"\b(HRKU-AA[0-9A-Za-z_-]{{58}}){_END}|" + _kv("heroku", _UUID, r"(?![0-9a-f-])").removeprefix("(?i)"),
             secret=None, flags=re.IGNORECASE),
        _tok("cloudflare-api-token", g, _kv(r"cloudflare|\bcf_?api", r"[A-Za-z0-9_-]{40}", _END)),
        _tok("cloudflare-origin-ca-key", g, r"\b(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})\b"),
        _tok("vault-token", g, rf"\b(hv[sbr]\.[A-Za-z0-9_-]{{24,256}}){_END}"),
        # "<14 alnum>.atlasv1.<60-70>": the secret is the part after ".atlasv1.", so a
        # stream holds nothing until that infix has come (any word may be 14 alnum).
        _tok("terraform-cloud-token", g, r"\b[A-Za-z0-9]{14}\.atlasv1\.([A-Za-z0-9_=-]{60,70})(?![A-Za-z0-9_=-])"),
        _tok("doppler-token", g, r"\b(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})\b"),
        _tok("pulumi-access-token", g, r"\b(pul-[a-f0-9]{40})\b"),
        _tok("flyio-token", g, rf"\b(fo1_[A-Za-z0-9_-]{{43}}){_END}"),
        _tok("supabase-token", g, rf"\b(sbp_[a-f0-9]{{40}}|sb_secret_[A-Za-z0-9_-]{{20,64}}){_END}"),
        _tok("planetscale-token", g, rf"\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_-]{{32,64}}){_END}"),
        _tok("databricks-token", g, r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b"),
        _tok("grafana-cloud-token", g, r"\b(glc_[A-Za-z0-9+/]{32,400}={0,2})(?![A-Za-z0-9+/=])"),
        _tok("grafana-service-account-token", g, r"\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})\b"),
        _tok("newrelic-user-api-key", g, r"\b(NRAK-[A-Z0-9]{27})\b"),
        _tok("dynatrace-token", g, r"\b(dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})\b"),
        _tok("vercel-token", g, _kv("vercel", r"[A-Za-z0-9]{24}", r"(?![A-Za-z0-9])")),
    ]


def _vcs() -> list[Rule]:
    g = "vcs"
    return [
        _tok("github-pat", g, r"\b(ghp_[A-Za-z0-9]{36})\b",
             allow=(r"^ghp_16C7e42F292c6912E7710c838347Ae178B4a$",)),
        _tok("github-oauth-token", g, r"\b(gho_[A-Za-z0-9]{36})\b"),
        _tok("github-user-to-server-token", g, r"\b(ghu_[A-Za-z0-9]{36})\b"),
        _tok("github-server-to-server-token", g, r"\b(ghs_[A-Za-z0-9]{36})\b"),
        _tok("github-refresh-token", g, r"\b(ghr_[A-Za-z0-9]{36,76})\b"),
        _tok("github-fine-grained-pat", g, r"\b(github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b"),
        _tok("gitlab-pat", g, rf"\b(glpat-[A-Za-z0-9_-]{{20,80}}(?:\.[A-Za-z0-9_-]{{2,20}}){{0,2}}){_END}"),
        _tok("gitlab-pipeline-trigger-token", g, r"\b(glptt-[a-f0-9]{40})\b"),
        _tok("gitlab-runner-token", g, rf"\b(glrt-[A-Za-z0-9_-]{{20,64}}|GR1348941[A-Za-z0-9_-]{{20}}){_END}"),
        _tok("gitlab-deploy-token", g, rf"\b(gldt-[A-Za-z0-9_-]{{20,64}}){_END}"),
        _tok("gitlab-other-token", g, rf"\b(gl(?:cbt|ft|soat|oas|imt|agent|ffct)-[A-Za-z0-9_-]{{20,64}}){_END}"),
        _tok("bitbucket-app-password", g, r"\b(ATBB[A-Za-z0-9_=.-]{28,40})(?![A-Za-z0-9_=.-])"),
    ]


def _saas() -> list[Rule]:
    g = "saas"
    return [
        _tok("slack-token", g, r"\b((?:xoxe\.)?xox[baprseo]-[0-9A-Za-z-]{10,250})(?![0-9A-Za-z-])"),
        _tok("slack-app-token", g, r"\b(xapp-\d-[A-Z0-9]{8,12}-\d{10,14}-[a-f0-9]{40,80})\b"),
        _tok("slack-webhook-url", g,
             r"\b(https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{30,120})"),
        _tok("stripe-secret-key", g, r"\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,247})\b",
             allow=(r"^sk_test_4eC39HqLyjWDarjtT1zdp7dc$", r"^sk_test_BQokikJOvBiI2HlWgH4olfQ2$")),
        _tok("stripe-webhook-secret", g, r"\b(whsec_[A-Za-z0-9+/=]{32,64})(?![A-Za-z0-9+/=])"),
        _tok("twilio-api-key", g, r"\b(SK[0-9a-fA-F]{32})\b"),
        _tok("twilio-auth-token", g, _kv(r"twilio[\w.-]{0,20}?(?:auth|token|secret)", r"[a-f0-9]{32}",
                                         r"(?![A-Za-z0-9])")),
        _tok("sendgrid-api-key", g, rf"\b(SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}){_END}"),
        _tok("mailgun-api-key", g, r"\b(key-[a-f0-9]{32})\b|" +
             _kv("mailgun", r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}", r"(?![a-f0-9-])").removeprefix("(?i)"),
             secret=None, flags=re.IGNORECASE),
        _tok("mailchimp-api-key", g, r"\b([a-f0-9]{32}-us\d{1,2})\b"),
        _tok("npm-token", g, r"\b(npm_[A-Za-z0-9]{36})\b"),
        _tok("pypi-token", g, rf"\b(pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{{50,300}}){_END}"),
        _tok("rubygems-api-key", g, r"\b(rubygems_[a-f0-9]{48})\b"),
        _tok("nuget-api-key", g, r"\b(oy2[a-z0-9]{43})\b"),
        _tok("dockerhub-token", g, rf"\b(dckr_(?:pat|oat)_[A-Za-z0-9_-]{{27,36}}){_END}"),
        _tok("shopify-token", g, r"\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})\b"),
        _tok("datadog-api-key", g, _kv(r"datadog[\w.-]{0,20}?api|\bdd[_-]?api", r"[a-f0-9]{32}", r"(?![A-Za-z0-9])")),
        _tok("datadog-app-key", g, _kv(r"datadog[\w.-]{0,20}?app|\bdd[_-]?app", r"[a-f0-9]{40}", r"(?![A-Za-z0-9])")),
        _tok("sentry-auth-token", g, r"\b(sntry[su]_[A-Za-z0-9+/=_]{40,400})(?![A-Za-z0-9+/=_])"),
        # "<base64 of the bot's user id>.<timestamp>.<HMAC>": the id is public, so the
        # secret is what follows its "." (a stream need not hold words starting M, N, O).
        _tok("discord-bot-token", g,
             rf"\b[MNO][A-Za-z0-9_-]{{23,25}}\.([A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,38}}){_END}", entropy=3.5),
        _tok("discord-webhook-url", g,
             rf"\b(https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{{17,20}}/[A-Za-z0-9_-]{{60,68}}){_END}"),
        _tok("telegram-bot-token", g, rf"\b(\d{{8,10}}:AA[A-Za-z0-9_-]{{33}}){_END}"),
        _tok("linear-api-key", g, r"\b(lin_(?:api|oauth)_[A-Za-z0-9]{40})\b"),
        _tok("notion-token", g, r"\b(secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})\b"),
        _tok("atlassian-api-token", g, r"\b(AT(?:ATT|CTT)3[A-Za-z0-9_=-]{150,250})(?![A-Za-z0-9_=-])"),
        _tok("postman-api-key", g, r"\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b"),
        _tok("square-token", g, rf"\b(sq0(?:atp|csp)-[A-Za-z0-9_-]{{22,43}}|EAAA[A-Za-z0-9_-]{{60}}){_END}"),
        _tok("braintree-access-token", g, r"\b(access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32})\b"),
        _tok("shippo-api-token", g, r"\b(shippo_(?:live|test)_[a-f0-9]{40})\b"),
        _tok("flutterwave-secret-key", g, r"\b(FLWSECK(?:_TEST)?-[a-f0-9]{32}-X)\b"),
        _tok("okta-api-token", g, _kv("okta", r"00[A-Za-z0-9_-]{40}", _END)),
        _tok("hubspot-private-app-token", g, rf"\b(pat-(?:na|eu)1-{_UUID})\b"),
        _tok("airtable-pat", g, r"\b(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b"),
        _tok("figma-pat", g, rf"\b(figd_[A-Za-z0-9_-]{{40}}){_END}"),
        _tok("mapbox-secret-token", g, rf"\b(sk\.eyJ1Ijoi[A-Za-z0-9_-]{{30,300}}\.[A-Za-z0-9_-]{{20,30}}){_END}"),
        _tok("jfrog-api-key", g, r"\b(AKCp[A-Za-z0-9]{69})\b"),
        _tok("launchdarkly-key", g, rf"\b((?:api|sdk)-{_UUID})\b"),
        _tok("clickup-api-token", g, r"\b(pk_\d{6,10}_[A-Z0-9]{32})\b"),
        _tok("onepassword-service-token", g, r"\b(ops_eyJ[A-Za-z0-9+/=_-]{100,1500})(?![A-Za-z0-9+/=_-])"),
        _tok("algolia-admin-key", g, _kv("algolia", r"[a-f0-9]{32}", r"(?![A-Za-z0-9])")),
    ]


def _crypto() -> list[Rule]:
    g = "crypto"
    return [
        # A key's body never holds "-----": the match gives up at the next armor line
        # instead of scanning 8-12k characters on from every BEGIN that has no END.
        make_rule("pgp-private-key", g,
                  r"(-----BEGIN PGP PRIVATE KEY BLOCK-----(?:[^-]|-(?!----)){32,12000}?"
                  r"-----END PGP PRIVATE KEY BLOCK-----)"),
        make_rule("private-key", g,
                  r"(-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                  r"(?:\\[rn]|[\sA-Za-z0-9+/=:,.()]|-(?!----)){32,8000}?"
                  r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)"),
        make_rule("private-key-truncated", g,
                  r"(-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:\\[rn]|[\r\nA-Za-z0-9+/=]){64,8000})"),
        _tok("age-secret-key", g, r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b"),
        _tok("bip32-extended-private-key", g, r"\b([xtyz]prv[1-9A-HJ-NP-Za-km-z]{107,108})\b"),
        _tok("jwt", g, rf"\b(eyJ[A-Za-z0-9_-]{{8,2000}}\.eyJ[A-Za-z0-9_-]{{8,4000}}\.[A-Za-z0-9_-]{{16,1500}}){_END}",
             allow=(r"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c$",)),
    ]


_SECRET_NAMES = (
    r"secret|(?<!page)(?<!page[_.-])(?<!next)(?<!next[_.-])(?<!continuation[_.-])(?<!sync[_.-])(?<!resume[_.-])"
    r"(?<!cursor[_.-])(?<!request[_.-])token|passwd|password|passphrase|pwd|(?<![a-z0-9])pass(?![a-z])|api[_.-]?key|apikey|access[_.-]?key|"
    r"private[_.-]?key|auth[_.-]?key|client[_.-]?secret|credentials?"
)
# A name that ends like this is about a secret, not the secret itself (DB_PASSWORD_FILE, private_key_id).
_NOT_A_SECRET_NAME = "".join(
    f"(?<![_.-]{suffix})" for suffix in
    ("id", "ids", "name", "type", "url", "uri", "path", "file", "hash", "len", "length", "ttl", "ref", "version",
     "header", "field", "count", "expiry", "expires", "env", "var", "policy", "regex", "pattern", "prefix"))


# Upper-case names that end like a secret's but name something public or structural.
_NOT_AN_ENV_SECRET = "".join(
    f"(?<!{name})" for name in
    ("PUBLIC_KEY", "PRIMARY_KEY", "FOREIGN_KEY", "SORT_KEY", "PARTITION_KEY", "HASH_KEY", "RANGE_KEY", "CACHE_KEY",
     "ROUTING_KEY", "IDEMPOTENCY_KEY", "PAGE_TOKEN", "NEXT_TOKEN", "CSRF_TOKEN", "MAX_TOKEN"))


def _generic() -> list[Rule]:
    g = "generic"
    placeholder_passwords = (
        r"(?i)^(?:\*+|x+|\.+|<[^>]*>|\$\{[^}]*\}|(?-i:\$[A-Z_][A-Z0-9_]*)|\{[^}]*\}|%\(?[a-z_]*\)?s|"
        r"pass(?:word|wd)?|pwd|secret|changeme|example|test|user(?:name)?)$",
    )
    generic_allow = (_PLACEHOLDER, *_DOC_EXAMPLES, *_CODE_VALUES)
    return [
        make_rule("url-credentials", g,
                  r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/?#@\"'<>\[\]\\]{0,128}:([^\s/?#\"'<>\[\]\\]{1,256})@"
                  r"[A-Za-z0-9.\[_-]",
                  allow=placeholder_passwords, match_allow=(r"://([^:/@]{1,64}):\1@",)),
        make_rule("connection-string-password", g,
                  r"(?i)\b(?:server|data source|host|hostname|address|user id|uid|username|database|initial catalog)"
                  r"[ \t]{0,8}=[^;\n]{1,200};(?:[^;\n]{0,200};){0,10}?[ \t]{0,8}(?:password|pwd)[ \t]{0,8}=[ \t]{0,8}"
                  r"([^;'\"\s\[]{1,128})",
                  allow=placeholder_passwords),
        make_rule("authorization-header", g,
                  r"(?i)\bauthorization[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?(?:basic|token|apikey|api-key|sso-key|key)[ \t]{1,8}"
                  r"([A-Za-z0-9_~+/.=:-]{7,1999}[A-Za-z0-9_~+/=:-])(?![A-Za-z0-9_~+/=:-])",
                  entropy=2.5, allow=generic_allow, stopwords=_STOPWORDS),
        make_rule("bearer-token", g,
                  r"(?i)\bbearer[ \t]{1,8}([A-Za-z0-9_~+/.=-]{15,1999}[A-Za-z0-9_~+/=-])(?![A-Za-z0-9_~+/=-])",
                  entropy=3.0, allow=generic_allow, stopwords=_STOPWORDS),
        # A quoted value; inside matching quotes it may hold spaces and braces
        # ("correct horse battery staple", "p4ss{w0rd"), but not a format template
        # ("{0}:{1}") nor a sentence ("Enter the code sent to you").
        make_rule("secret-assignment", g,
                  rf"(?i)(?:{_SECRET_NAMES})[A-Za-z0-9_.-]{{0,30}}?{_NOT_A_SECRET_NAME}[\"']?[ \t]{{0,8}}(?:=|:|:=|=>|\?\?=|\|\|=)[ \t]{{0,8}}"
                  r"[fbr]?(?:[\"'`]([^\"'`\s\\{}()<>\[\]]{6,256})[\"'`]"
                  r"|\"((?! )[^\"\\\n()<>\[\]]{6,256}(?<! ))\"|'((?! )[^'\\\n()<>\[\]]{6,256}(?<! ))')",
                  secret=None, entropy=2.5,
                  allow=(*generic_allow, r"^(?:[^{}]*\{(?:\d*|[a-z_][a-z0-9_.]*)(?:![rsa])?(?::[^{}]*)?\})+[^{}]*$",
                         r"^[A-Z][a-z']*(?: [A-Za-z',]+)+[.!?:]?$"),
                  stopwords=_STOPWORDS),
        # A line of a .env or config file. Printed inside JSON text (a tool's output
        # serialised as a JSON string) its line breaks are written out (``\n``), and its
        # first line starts, its last value ends, at the string's quotes.
        make_rule("dotenv-assignment", g,
                  rf"(?im)(?:^|(?<=\\[nr])|(?<=\"))[ \t]{{0,16}}(?:export[ \t]{{1,8}})?[A-Za-z0-9_.-]{{0,40}}?(?:{_SECRET_NAMES})"
                  rf"[A-Za-z0-9_.-]{{0,40}}{_NOT_A_SECRET_NAME}"
                  r"[ \t]{0,8}[=:][ \t]{0,8}[\"']?((?:(?!\\[nrt\\\"])[^\s\"'`#{}()\[\]<>;,]){6,256})[\"']?[ \t]{0,8}"
                  r"(?:#(?:(?!\\[nr\\])[^\n]){0,200})?(?:$|(?=\\+[nr]|\\*\"))",
                  entropy=2.5, allow=generic_allow, stopwords=_STOPWORDS,
                  # code handing a value on under its own name: self.credentials = credentials
                  match_allow=(r"(?<![A-Za-z0-9])(?P<same>[A-Za-z][A-Za-z0-9_]*)[ \t]*[=:][ \t]*[\"']?(?P=same)[\"']?[ \t]*$",)),
        # An upper-case environment variable named for a secret, anywhere: on a line
        # (``PGPASSWORD=… psql``, ``OPENAI_API_KEY=… python run.py``, ``docker run -e
        # STRIPE_SECRET_KEY=…``, ``DJANGO_SECRET_KEY='…'``, quoted: spaces and symbols),
        # and inside another token or credential's value (``Bearer NAME_PASSWORD=…``,
        # ``tok.DB_SECRET=…``, glued to a word): no left boundary. In JSON text (a .env
        # printed as a JSON string) the line breaks are written out (``\nDB_PASSWORD=…\n``);
        # an unquoted value may end at a quote, a backtick or a closing bracket (a header
        # quoted in a command or a log line, ``\"`` in JSON text).
        make_rule("env-var-secret", g,
                  r"[A-Z][A-Z0-9_]{0,60}?"
                  r"(?:_KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|_PASS|_PWD)" + _NOT_AN_ENV_SECRET + "="
                  r"(?:\"([^\"\\\n\[]{8,256})\"|'([^'\\\n\[]{8,256})'"
                  r"|([^\s\"'`\\;&|<>()\[\]{}]{8,256})(?=[\s;&|)\]}>\"'`]|\\[nrt\"'\\]|\Z))",
                  secret=None, entropy=2.5,
                  allow=(*generic_allow, r"^(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w.-]+$"), stopwords=_STOPWORDS),
        make_rule("keyword-high-entropy", g,
                  r"(?i)\b(?:api[_ -]?key|access[_ -]?token|auth[_ -]?token|refresh[_ -]?token|secret[_ -]?key|"
                  r"client[_ -]?secret|token|secret|password|passwd|credentials?)s?\b"
                  r"(?:[ \t]{0,8}(?:is|was|=|:|=>)[ \t]{0,8}|[ \t]{1,8})[\"'`]?([A-Za-z0-9_+/=.~-]{15,199}[A-Za-z0-9_+/=~-])"
                  r"(?![A-Za-z0-9_+/=~-])",
                  entropy=3.5,
                  allow=(*generic_allow, r"^[^0-9]*$", r"^[^A-Za-z]*$", r"^(?i:[a-f0-9]+)$",
                         rf"^(?i:{_UUID})$"),
                  stopwords=_STOPWORDS),
    ]


def _pii() -> list[Rule]:
    g = "pii"
    return [
        make_rule("pii-email", g,
                  r"(?<![\w.%+/-])([A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24})\b",
                  allow=(r"(?i)@(?:example|test|localhost|invalid)\.|^git@|noreply",)),
        make_rule("pii-credit-card", g,
                  r"(?<![\w-])((?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|3[47]\d{2}|6(?:011|5\d{2}))"
                  r"(?:[ -]?\d{4}){2}[ -]?\d{1,4}(?:[ -]?\d{3})?)(?![\w-])",
                  check="luhn"),
        make_rule("pii-us-ssn", g, r"(?<![0-9-])((?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4})(?![0-9-])"),
        make_rule("pii-phone", g,
                  r"(?<![\w+])(\+[1-9]\d{0,2}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,4}|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4})"
                  r"(?![\w-])"),
        make_rule("pii-iban", g, r"\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)\b", check="iban"),
    ]


def builtin_rules() -> list[Rule]:
    """Every built-in rule, in priority order (earlier wins a tie)."""
    return [*_llm(), *_cloud(), *_vcs(), *_saas(), *_crypto(), *_generic(), *_pii()]
