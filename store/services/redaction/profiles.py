"""Named redaction profiles, built once from plain parameters.

The config layer passes a mapping such as::

    {"default": {"groups": ["llm", "cloud", "vcs", "saas", "crypto", "generic"],
                 "rule_files": ["/etc/ctxproxy/gitleaks.toml"],
                 "reversible": False},
     "strict":  {"groups": ["llm", "cloud", "vcs", "saas", "crypto", "generic", "pii"]}}

Each profile compiles to one ``Redactor`` (profiles with the same rule set
share it). A ``default`` profile always exists. Rule files that fail to load
at all stop start-up (``ConfigError``); individual rules that cannot be
compiled are kept in ``Profile.rule_errors`` and logged by id, so an operator
sees exactly what is not enforced.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ctxproxy.config import ConfigError

from .builtin import builtin_rules
from .engine import Redactor
from .errors import RedactionError, RuleLoadError
from .gitleaks import RuleFile, load_gitleaks_file
from .rules import BUILTIN_GROUPS, DEFAULT_GROUPS, Rule
from .vault import Vault

log = logging.getLogger("ctxproxy.redaction")

_KEYS = {"groups", "rule_files", "reversible", "vault_ttl_seconds", "disabled_rules"}


@dataclass(frozen=True)
class ProfileSpec:
    name: str
    groups: tuple[str, ...] = DEFAULT_GROUPS
    rule_files: tuple[str, ...] = ()
    reversible: bool = False
    vault_ttl_seconds: float = 3600.0
    disabled_rules: tuple[str, ...] = ()

    @classmethod
    def parse(cls, name: str, raw: Mapping[str, Any] | None, path: str = "redaction.profiles") -> "ProfileSpec":
        where = f"{path}.{name}"
        raw = dict(raw or {})
        unknown = sorted(set(raw) - _KEYS)
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}: unknown key (allowed here: {', '.join(sorted(_KEYS))})")
        groups = _strings(raw.get("groups", DEFAULT_GROUPS), f"{where}.groups")
        for g in groups:
            if g not in BUILTIN_GROUPS:
                raise ConfigError(f"{where}.groups: unknown rule group {g!r} (known: {', '.join(BUILTIN_GROUPS)})")
        files = _strings(raw.get("rule_files", ()), f"{where}.rule_files")
        disabled = _strings(raw.get("disabled_rules", ()), f"{where}.disabled_rules")
        reversible = raw.get("reversible", False)
        if not isinstance(reversible, bool):
            raise ConfigError(f"{where}.reversible: expected true or false, got {reversible!r}")
        ttl = raw.get("vault_ttl_seconds", 3600.0)
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
            raise ConfigError(f"{where}.vault_ttl_seconds: expected a positive number, got {ttl!r}")
        return cls(name, groups, files, reversible, float(ttl), disabled)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: expected a list of strings, got {type(value).__name__}")
    for v in value:
        if not isinstance(v, str):
            raise ConfigError(f"{where}: expected a list of strings, found {type(v).__name__}")
    return tuple(value)


@dataclass(frozen=True)
class Profile:
    name: str
    redactor: Redactor
    reversible: bool = False
    vault_ttl_seconds: float = 3600.0
    rule_errors: tuple[tuple[str, str], ...] = ()
    rule_notes: tuple[tuple[str, str], ...] = ()

    def new_vault(self) -> Vault | None:
        """A fresh in-memory vault for one session in reversible mode (else None)."""
        return Vault(self.vault_ttl_seconds) if self.reversible else None


class ProfileRegistry:
    """Profiles by name; ``get`` fails closed on an unknown name."""

    def __init__(self, profiles: Mapping[str, Profile], default: str = "default"):
        if default not in profiles:
            raise ConfigError(f"redaction: no profile named {default!r}")
        self._profiles = dict(profiles)
        self.default = default

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._profiles)

    def warm(self) -> None:
        """Every profile's redactor compiles now what its first stream would (``Redactor.warm``)."""
        for redactor in {id(p.redactor): p.redactor for p in self._profiles.values()}.values():
            redactor.warm()

    def get(self, name: str | None = None) -> Profile:
        key = name or self.default
        try:
            return self._profiles[key]
        except KeyError:
            raise RedactionError(f"unknown redaction profile {key!r}") from None

    @classmethod
    def build(
        cls,
        raw: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        cache_dir: str | None = None,
        use_hyperscan: bool | None = None,
        base_dir: str | Path | None = None,
        path: str = "redaction.profiles",
    ) -> "ProfileRegistry":
        specs = {name: ProfileSpec.parse(name, body, path) for name, body in (raw or {}).items()}
        if "default" not in specs:
            specs["default"] = ProfileSpec("default")
        builtins = builtin_rules()
        files: dict[str, RuleFile] = {}
        compiled: dict[tuple, Redactor] = {}
        profiles: dict[str, Profile] = {}
        for name, spec in specs.items():
            errors: list[tuple[str, str]] = []
            notes: list[tuple[str, str]] = []
            extra: list[Rule] = []
            disabled = set(spec.disabled_rules)
            for f in spec.rule_files:
                fpath = Path(f)
                if not fpath.is_absolute() and base_dir is not None:
                    fpath = Path(base_dir) / fpath
                key = str(fpath)
                if key not in files:
                    try:
                        files[key] = load_gitleaks_file(fpath)
                    except RuleLoadError as exc:
                        raise ConfigError(f"{path}.{name}.rule_files: {exc}") from None
                rf = files[key]
                extra.extend(rf.rules)
                errors.extend(rf.errors)
                notes.extend(rf.notes)
                disabled.update(rf.disabled)
            # Priority: specific built-ins, then the team's rules, then generic and PII built-ins.
            chosen = [r for r in builtins if r.group in spec.groups and r.group not in ("generic", "pii")]
            chosen += extra
            chosen += [r for r in builtins if r.group in spec.groups and r.group in ("generic", "pii")]
            chosen = [r for r in chosen if r.id not in disabled]
            ident = (tuple(id(r) for r in chosen),)
            redactor = compiled.get(ident)
            if redactor is None:
                redactor = compiled[ident] = Redactor(chosen, use_hyperscan=use_hyperscan, cache_dir=cache_dir,
                                                      name=name)
            for rid, reason in errors:
                log.warning("redaction profile %s: rule %s not loaded: %s", name, rid, reason)
            profiles[name] = Profile(name, redactor, spec.reversible, spec.vault_ttl_seconds,
                                     tuple(errors), tuple(notes))
        return cls(profiles)
