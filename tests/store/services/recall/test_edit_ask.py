"""A message asking only for a mechanical edit — a rename, a lint, typo or compile error fixed, a rewrite
that keeps behaviour — recalls no memory: the edit is the same whatever the project decided, and the
memory about the component it names shares its words, not a need. One that asks, speaks of the
project or changes behaviour recalls as any (real LMDB store, real SQLite index)."""
from __future__ import annotations

import pytest
from memhelp import UNRELATED, put_memory

from ctxproxy.store.services.recall.edit_ask import mechanical
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

PORTAL = "The dealer portal uses TanStack Query and Tailwind, and component tests run with Vitest."
OTHERS = UNRELATED[:7]
RENAME = ("Rename the React component DealerFarmTable to FarmListTable everywhere in dealer-portal/src and "
          "update the imports and the Vitest component tests.")


@pytest.mark.parametrize("text", [
    RENAME,
    "rename the function calc_thing() in services/payouts/util.py to something meaningful, it computes "
    "the number of business days between two dates, and update the callers",
    "fix this lint error please",
    "Can you sort out these eslint warnings in the waitroom page?",  # a request put as a question
    "Fix the compile error.",
    "fix typo 'teh telematics' in README",
    "Add type hints to tools/reports/format.py and make mypy --strict pass on it.",
    "Clean up the unused imports in services/dispatch and make the linter happy.",
    "Refactor scheduler/booking/views.py: split the BookingView into smaller views and keep the URL names "
    "the same.",
    "Convert the LTI launch view from a function view to a class-based view, no behavior change.",
])
def test_a_mechanical_edit_is_one(text):
    assert mechanical(text)
    assert mechanical(text, wide=True)


@pytest.mark.parametrize("text", [
    # the same edits said otherwise: the complaint first, a polite question then "no behaviour change", a lead-in
    "lint failing on the billing module, fix",
    "mypy complains in routing.py, fix types",
    "make check fails on my branch with a mypy error in the geocoder client, fix it",
    "Can you rename the function calc_amt in billing/utils.py to calculate_amount and update every call site? "
    "No behavior change.",
    "Back to the PDF work from before the summary: can you rename the template file report_old.html to "
    "report.html and update the one import that references it?",
    "sort imports in services/delivery",
    "add docstring to telemetry/tags.py::normalize_tag explaining args and return",
    "typo 'recieved' in services/tickets/importer.py log messages",
    "Please run the formatter over web/src/components and commit the result separately.",
    "add .DS_Store and *.swp to .gitignore",
])
def test_the_same_edit_said_otherwise_is_one_when_wide(text):
    assert mechanical(text, wide=True)
    assert not mechanical(text)  # software_asks off: only the forms above


def test_a_paths_word_is_no_contract():
    assert mechanical("rename getArticleById to findArticle across services/cms-api", wide=True)


@pytest.mark.parametrize("text", [
    "I want to rename the column customers.fullname to customers.display_name. Write the migration for it.",
    "Rename the env var STAGE_PORT, which port does staging listen on?",  # it asks
    "rename the bucket variable; we deploy to the prod bucket on Fridays",  # the project's own
    "refactor the shards balance model to use float so the discount math is easier",  # a change of behaviour
    "Migrate the orders table to bigint ids, keep the column names the same.",  # a schema change
    "fix the build error on the firmware runner",  # a build is the environment's, not the code's
    "lint passes locally but fails in CI, why",
    "can you fix the lint errors? which config do we use now?",  # it asks more
])
def test_a_request_that_asks_or_changes_behaviour_is_not(text):
    assert not mechanical(text)
    assert not mechanical(text, wide=True)


@pytest.mark.parametrize("text", [
    "Can you rename the helper to fetch_rows? Which module do we keep it in?",  # a question after the polite one
    "rename field bin_uid to bin_id in driver endpoints, drop old one",  # a contract others read, not kept
    "JPY prices in the payouts csv show the wrong formatting, fix",  # the project's money, not a checker's
    "typo in the staging port in deploy/values.yaml",  # which port is right is the project's
    "rename the column orders.buyer_email to contact_email in one migration",
    "Back to what we changed in the queue before: fix the lint errors",  # the project's own, in the lead-in
])
def test_asking_more_or_dropping_a_contract_is_not_when_wide(text):
    assert not mechanical(text, wide=True)


def test_a_mechanical_edit_recalls_no_memory_holding_its_words(rs):
    store, services = rs
    for s in (PORTAL, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    assert ask(RENAME) == set()
    assert ask(RENAME, edit_ask=False) == {PORTAL}
    assert ask("which query library and test runner does the dealer portal use?") == {PORTAL}


def test_software_asks_recalls_nothing_for_the_same_edit_said_otherwise(rs):
    store, services = rs
    for s in (PORTAL, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")
    lint = "lint failing in dealer-portal/src on the TanStack Query hooks, fix"

    def ask(text: str, **rank) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**rank)).recall(dev, text).items}

    assert ask(lint) == {PORTAL}  # off: the component's words pass
    assert ask(lint, software_asks=True) == set()
