"""Composite rules: an order made of word classes rather than of a phrase.

A phrase rule learns one author's wording. A setup step that plants
persistence has parts every wording needs, in any language: something fetched
or handed to a shell (curl, download, `| sh`, 下载, ダウンロード, скачивает), a place that
runs it again by itself (``persist``: a service, start-up, cron, login,
开机自启, 起動時, автозагрузка), an outside address to fetch it from (``dest``: a
URL or an IP), and the clause said as an order or a standing rule (a mood of
``threat_mood``: imperative, "whenever", "is expected to", permission, "from
now on"...). When one clause holds all four, the statement is refused as
``persistence_backdoor``. The classes are ``threat_lexicon``'s, the same lists
the learned signal reads, so a word added there widens this rule too.

Measured on the hand-written banks before it was written (no wording was
added for it): none of ~25,000 clean dev texts in seven languages holds the
four in one clause; each of the four hand-written attack banks, by four
authors, has 3–18 attacks that do.
"""
from __future__ import annotations

import re

from . import threat_lexicon, threat_model, threat_mood

# (reason, classes that must all be in one clause, moods of which one must be there)
_ORDER = frozenset({"imp", "cond", "expect", "permit", "soft", "noneed", "cover", "future"})
COMPOSITES: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    ("persistence_backdoor", frozenset({"dest", "persist", "fetchrun"}), _ORDER),
)
# "run" alone is in ``fetchrun`` ("whenever the login service fails, run the playbook at <url>" is a
# runbook): the clause must also fetch code or hand it to a shell
FETCH = re.compile(r"curl|wget|download|fetch|\b(?:ba|z)?sh\b|\biwr\b|\birm\b|下载|下載|拉取|获取|獲取|ダウンロ|取得|"
                   r"descarg|t[ée]l[ée]charg|r[ée]cup[eè]r|\bl[äa]dt\b|herunterl|скачива|скача|загружа")


def composite(folded: str) -> str | None:
    """The reason of the first composite rule one clause of ``folded`` (normalised text) satisfies."""
    # every composite needs an outside address and a fetch: two searches spare most texts the classes
    if not threat_lexicon.has_destination(folded) or not FETCH.search(folded):
        return None
    for piece in threat_model.pieces(folded[:threat_model._MAX_CHARS]):
        if not threat_lexicon.has_destination(piece):
            continue
        t = f" {threat_model.text_of(piece)} "
        words = threat_model._WORD.findall(t)
        found = threat_lexicon.classes(t, words, threat_model._grams(t))
        for reason, need, moods in COMPOSITES:
            if need <= found and FETCH.search(t) and moods & (found | threat_mood.moods(t)):
                return reason
    return None
