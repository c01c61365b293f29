"""Secret redaction engine: pure text in, text out (no HTTP, no wire formats).

Modules:
- ``rules``     — ``Rule`` / ``Allowlist`` and validators (entropy, Luhn, IBAN)
- ``builtin``   — the built-in rule set (``builtin_rules()``)
- ``gitleaks``  — gitleaks TOML rule files, Go RE2 -> Python regex conversion
- ``patterns``  — what the engine derives from a regex (bounds, Hyperscan and prefix forms)
- ``prefilter`` — Hyperscan database (cached on disk) and literal prefilter
- ``engine``    — ``Redactor``: ``redact(text, key) -> Result``
- ``stream``    — ``StreamRedactor`` (chunked text) and ``redact_json_text``
- ``vault``     — reversible mode: in-memory placeholder -> value map with a TTL
- ``profiles``  — named profiles built from config parameters
"""
from .builtin import builtin_rules
from .engine import Finding, Redactor, Result, placeholder_id
from .errors import RedactionError, RuleLoadError
from .gitleaks import RuleFile, compile_go_regex, convert_go_regex, load_gitleaks_file, load_gitleaks_text
from .profiles import Profile, ProfileRegistry, ProfileSpec
from .rules import BUILTIN_GROUPS, DEFAULT_GROUPS, GROUPS, Allowlist, Rule, make_rule, shannon_entropy
from .stream import StreamRedactor, redact_json_text, redact_json_value
from .vault import PLACEHOLDER_RE, Vault

__all__ = [
    "Allowlist", "BUILTIN_GROUPS", "DEFAULT_GROUPS", "Finding", "GROUPS", "PLACEHOLDER_RE", "Profile",
    "ProfileRegistry", "ProfileSpec", "RedactionError", "Redactor", "Result", "Rule", "RuleFile",
    "RuleLoadError", "StreamRedactor", "Vault", "builtin_rules", "compile_go_regex", "convert_go_regex",
    "load_gitleaks_file", "load_gitleaks_text", "make_rule", "placeholder_id", "redact_json_text",
    "redact_json_value", "shannon_entropy",
]
