"""A one-sentence question offers a fact only when its ``chance`` reaches ``question_chance`` of the
best one's, and matches it by ``question_match`` at least: a fact a few deviations above chance
beside one far above it, or holding a small share of what it could share with the question, shares
a word of the question, not its subject. Events of a conversation stay (their neighbours say the
rest) (real LMDB store, real SQLite index)."""
from __future__ import annotations

from memhelp import put_memory

from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

KEY = "The export worker reads its SFTP private key from /etc/coursehub/keys/registrar_ed25519, mounted from Vault."
HOST = ("Grade export uploads to the registrar SFTP host sftp.reg.uni-west.edu under /inbound/grades, "
        "user chub_export.")
OTHERS = ("Lunch is at noon on Fridays.", "The design team keeps the icon set in Figma.",
          "Quarterly planning happens in the first week of each quarter.",
          "The office printer on floor 3 needs a badge.", "Expense reports are due by the 5th of the month.",
          "Session cookies expire after 12 hours of inactivity.", "The VPN certificate is renewed every spring.",
          "Standup is at 9:30 in the small meeting room.", "Invoices are generated on the first of the month.",
          "Grade export files are CSV with a header row; the registrar asked for UTF-8 without BOM.",
          "The SFTP upload step retries on connection reset.",
          "Celery workers are deployed as a separate Kubernetes deployment named coursehub-worker.")
ASKED = "path of the private key the grade export uses for sftp?"


def _ask(rs, extra=(), **fields):
    store, services = rs
    for s in (KEY, *OTHERS, HOST, *extra):  # not neighbours: neither event's context holds the other's words
        put_memory(store, "acme", s, user="dev", **fields)
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    return ask


def test_a_question_offers_no_fact_far_less_distinct_than_the_best(rs):
    ask = _ask(rs, kind="fact")
    assert ask(ASKED) == {KEY}
    assert HOST in ask(ASKED, question_chance=0.0)  # the rule off: the host shares "grade export" and "sftp"


def test_events_of_a_conversation_are_kept_beside_the_best(rs):
    ask = _ask(rs, kind="event", evidence_sessions=("locomo-1",))
    assert {KEY, HOST} <= ask(ASKED)


RATE = "The public fleet API rate-limits each installer token to 600 requests/minute and returns 429 with a Retry-After header."
IDIOM = "Is there a more idiomatic way to write this in Go: `if err != nil { return nil, err } else { return x, nil }`?"


def test_a_question_offers_no_fact_it_matches_by_a_small_share(rs):
    ask = _ask(rs, kind="fact", extra=(RATE,))
    # "return" is the one word they share: rare among these memories, a small share of either
    assert ask(IDIOM) == set()
    # (it stands in what the memory says of the API, not its subject: ``lead_share`` refuses it too)
    assert ask(IDIOM, question_match=0.0, lead_share=0.0) == {RATE}
    assert ask(IDIOM, question_match=0.0) == set()
    assert ask("What does the fleet API return when an installer token is rate-limited?") == {RATE}
