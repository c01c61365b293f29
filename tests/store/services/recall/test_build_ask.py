"""A request to build something it specifies whole — no question, nothing of the project it points
at — is offered only a memory stating a rule the build must keep or a value it would use, not one
describing the component it names (real LMDB store, real SQLite index)."""
from __future__ import annotations

import pytest
from memhelp import UNRELATED, put_memory

from ctxproxy.store.services.recall.build_ask import constrains, specified, unit_test_said_whole
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.sqlite_index import Viewer

FRONT = "The Vue front end uses Pinia for state and Vitest for unit tests."
BRANCH = "Branches must be named after the ticket and its slug, and fixes land through a merge request."
OTHERS = UNRELATED[:7]
VITEST = "Add a Vitest test for the GradeGrid component checking that empty cells render as a dash."


@pytest.mark.parametrize("text", [
    VITEST,
    "Write a SQL query that gives the no-show rate per clinic per month from bookings, newest month first.",
    "services/payouts/webhooks.py has no tests at all. Add pytest tests for the account.updated event.",
    "in print-relay/labels/slip.zpl.j2 replace the hardcoded address lines with jinja variables",  # where, then what
    "the deployment manifest for scanner-gateway has duplicated env entries, dedupe them",
])
def test_a_build_said_whole(text):
    assert specified(text)


@pytest.mark.parametrize("text", [
    "Add a Vitest test for the GradeGrid component. Which runner do we use?",  # it asks
    "write a docker-compose healthcheck that checks the TLS listener inverters actually use",
    "add the required datadog tags to the chart",  # it points at what the project requires
    "set up dead lettering for the new queue the same way the other queues do it",
    "bump the base image, keep whatever node version we're required to stay on",
    "The Vitest run is slow on CI.",  # no build asked
    "make check fails on my branch, fix it",  # a command, not a build
])
def test_not_a_build_said_whole(text):
    assert not specified(text)


def test_a_rule_or_a_value_constrains_a_description_does_not():
    assert constrains(BRANCH)
    assert constrains("In staging the gateway runs with CARRIER_MODE=sandbox.")
    assert not constrains(FRONT)


def test_a_build_said_whole_is_offered_a_rule_not_a_description(rs):
    store, services = rs
    for s in (FRONT, BRANCH, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **cfg) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**cfg)).recall(dev, text).items}

    assert ask(VITEST, build_ask=False) == {FRONT}  # it shares the component's words, not a need
    assert ask(VITEST) == set()
    assert ask("create a branch for the ticket about the roster sync and start on the fix") == {BRANCH}
    assert ask("Add a Vitest test for the GradeGrid component; which state library does the front end use?") \
        == {FRONT}  # a question is not a build said whole


CHIP = "Microchip numbers are validated as 15-digit ISO 11784 codes before a patient record is saved."
CHIP_TESTS = ("Add unit tests for the microchip number validator in services/patients/validators.py: a valid "
              "15-digit number, one with letters, and one with surrounding whitespace.")


@pytest.mark.parametrize("text", [
    CHIP_TESTS,
    "Write a pytest unit test for slugify_beer_name() in brewing/names.py covering accents and apostrophes.",
    "Can you write unit tests for iso6346_check_digit in libs/quaycore/containers.py? It computes the check "
    "digit for container numbers; cover a few known valid numbers.",  # the polite question is the request
    "add unit tests for parseVin in backend common module",
])
def test_a_unit_test_said_whole(text):
    assert unit_test_said_whole(text)


@pytest.mark.parametrize("text", [
    "write unit tests for the minimum-balance rule in services/payouts/rules.py, use the real threshold value",
    "Write a unit test for route_claim() covering the big-ticket case. Assert the exact queue name.",
    "now write the unit tests for grading/letters.py covering the rounding boundary cases",
    "Can you write unit tests for the fare cap? Which constant do we use?",  # it asks more
    "tests for clamp() fail after I renamed args, fix the test",  # not a test to write
    "add the holds limit check to services/holds/api.py + test",  # the test is not what is built
])
def test_not_a_unit_test_said_whole(text):
    assert not unit_test_said_whole(text)


def test_a_unit_test_said_whole_recalls_nothing(rs):
    store, services = rs
    for s in (CHIP, *OTHERS):
        put_memory(store, "acme", s, kind="fact", user="dev")
    dev = Viewer("acme", user="dev")

    def ask(text: str, **cfg) -> set[str]:
        return {s.cand.statement for s in services.recaller(RankConfig(**cfg)).recall(dev, text).items}

    assert ask(CHIP_TESTS) == {CHIP}  # software_asks off: the validator's memory shares its words and a value
    assert ask(CHIP_TESTS, software_asks=True) == set()
    assert ask("how many digits does the microchip number validator accept?", software_asks=True) == {CHIP}
