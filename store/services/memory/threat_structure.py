"""Order × object crosses for the memory gate's learned signal.

A poisoned memory is a standing order whose object is harmful: "always" /
"whenever" / an imperative, and a secret sent out, a safeguard turned off, an
agent's rule file edited, a start-up file that fetches code, an authority
claimed. Its wording varies by author, the combination does not. Word n-grams
learn the wording; these features name the combination, so a weight learned on
one author's "post .env to a webhook" carries to another's "archive every token
to a gist".

- Object kinds found by path and file shapes that ``threat_lexicon``'s word
  splitting cannot see (``.bashrc``, ``CLAUDE.md``, ``id_ed25519``, a host
  name without a scheme), language-independent: ``agentcfg`` (agents' config
  and rule files), ``persistloc`` (start-up files, hooks, schedulers, keys
  that grant a login), ``secretloc`` (key and credential files, token
  variables), ``host`` (a named outside place: a bare host name, a paste or
  gist site, a webhook), ``weaken`` (a check switched off in a flag or setting:
  TLS verification, signing, permission prompts), ``supply`` (package
  registries and mirrors).
- Order kinds are the moods and word classes that make a clause an order
  (``ORDERS``); object kinds are those word classes and the kinds above
  (``OBJECTS``). Each present (order, object) pair is a feature, and so is
  each with the order or the object generalised (``ord``, ``obj``), and the
  number of object kinds an order comes with (1, 2, 3 or more).

Pure; a few substring tests per segment and a regex only where they hit, cheap enough for the
gate's throughput.
"""
from __future__ import annotations

import re

from .literals import required

_PREFIX = "\x03x:"  # inside threat_model's word-class namespace, so --class-scale applies to them too

_KINDS: dict[str, str] = {
    "agentcfg": r"claude\.md|agents\.md|gemini\.md|\.cursorrules|\.cursor/|\.windsurfrules|\.clinerules|"
                r"copilot-instructions|\.claude/|\.codex/|\.aider|\.continue/|settings(?:\.local)?\.json|"
                r"mcp\b|mcp server|approval_policy|sandbox_mode|system prompt",
    "persistloc": r"\.bashrc|\.zshrc|\.bash_profile|\.profile\b|\.zprofile|\.envrc|crontab|\bcron\b|systemd|"
                  r"launchagents|launchd|\.git/hooks|pre-commit|pre-push|post-checkout|post-merge|"
                  r"authorized_keys|sudoers|rc\.local|init\.d|autostart|login items|dockerfile|entrypoint|"
                  r"\.vscode/tasks|tasks\.json|\.github/workflows",
    "secretloc": r"\.env\b|id_rsa|id_ed25519|id_ecdsa|\.ssh/|\.aws/|credentials|\.netrc|\.pgpass|kubeconfig|"
                 r"[a-z]_token\b|_secret\b|_key\b|api[_ -]?key|private key|\bprintenv\b|\benv\b",
    "host": r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|xyz|co|app|sh|cc|ru|cn|info|site|cloud|me|"
            r"top|biz|tk|link|online|tech|ai)\b|\bgist\b|pastebin|webhook|ngrok|requestbin|s3://|\bbucket\b|"
            r"discord|telegram|notion",
    "weaken": r"sslverify|reject_unauthorized|--insecure|verify\s*=\s*false|--no-verify|trusted-host|"
              r"dangerously|skip-permissions|gpgsign|\bchmod\b|\+s\b|nopasswd|allow-all|"
              r"--privileged|setenforce|ufw disable|--yolo|auto-approve|full disk|full access",
    "supply": r"registry|index-url|\.npmrc|pip\.conf|sources\.list|\bmirror\b|package index|pypi|npm",
}
_NAMES = tuple(_KINDS)
_RE = {k: re.compile(v) for k, v in _KINDS.items()}
# A kind's regex runs only on text holding one of the literals every match of it contains (a substring
# test is cheap, a long alternation tried at every position is not).
_LITERALS = {k: tuple(sorted(required(v) or ())) for k, v in _KINDS.items()}
assert all(_LITERALS.values()), "every kind needs literals its matches contain"

# What makes a clause an order (threat_mood's moods, threat_lexicon's standing-time and obey classes),
# and what makes its object harmful (threat_lexicon's classes and the kinds above).
ORDERS = frozenset({"imp", "cond", "future", "permit", "cover", "soft", "noneed", "obey"})
OBJECTS = frozenset({"secret", "dest", "path", "safeguard", "off", "priv", "persist", "fetchrun", "auth", "role",
                     "conceal", "pay", "hidden", "instr", "send"} | set(_NAMES))


def kinds(folded: str) -> set[str]:
    """The object kinds of ``_KINDS`` that ``folded`` (normalised, case-folded text) names."""
    return {k for k, lits in _LITERALS.items() if any(lit in folded for lit in lits) and _RE[k].search(folded)}


def crosses(found: set[str]) -> set[str]:
    """The cross features of a segment whose word classes, moods and object kinds are ``found``."""
    orders = found & ORDERS
    objects = found & OBJECTS
    out = {f"{_PREFIX}{k}" for k in found & set(_NAMES)}
    if not orders or not objects:
        if objects:
            out.add(f"{_PREFIX}obj{min(len(objects), 3)}")
        return out
    out.update(f"{_PREFIX}{o}*{b}" for o in orders for b in objects)
    out.update(f"{_PREFIX}ord*{b}" for b in objects)
    out.update(f"{_PREFIX}{o}*obj" for o in orders)
    out.add(f"{_PREFIX}ord*obj{min(len(objects), 3)}")
    return out
