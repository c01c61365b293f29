"""A fourth sealed half of the turns set: an insurance claims pipeline (``claimsdesk``).

Written this session by a helper engineer who had not read recall's code, any
result, or any other half's memories and turns (only ``turns.py``'s shapes and
builders, for the format). It is never read to tune anything: a later session
scores it exactly once.

Same shapes as ``turns``: ``FACTS`` (each with a string only that statement
holds), ``DISTRACTORS`` sharing the turns' words and answering none of them,
``TURNS`` that each need exactly one fact, ``NULL_TURNS`` that need none.
"""
from __future__ import annotations

PROJECT = "claimsdesk"

# (statement, the string only it holds)
FACTS = {
    "fnol-port": ("The FNOL intake API (first notice of loss) listens on port 9310 in every environment.",
                  "port 9310"),
    "senior-queue": ("Claims above 25,000 EUR are routed to the senior adjuster queue adj-senior-2 and are never "
                     "auto-approved.", "adj-senior-2"),
    "reserve-minor": ("Claim reserves are stored as integer minor units in the claim_reserves.reserve_minor column, "
                      "never as floats.", "reserve_minor"),
    "siu-threshold": ("A claim goes to SIU (special investigations) review when fraud_score >= 0.82.",
                      "fraud_score >= 0.82"),
    "ocr-timeout": ("OCR of claim attachments goes through the Textract wrapper in libs/docscan, with a "
                    "45-second timeout per page.", "45-second timeout per page"),
    "policy-cache": ("Policy lookups are cached for 10 minutes in the memcached pool policy-mc-07.",
                     "policy-mc-07"),
    "sepa-cutoff": ("The daily SEPA payout batch closes at 15:30 Europe/Berlin; payouts approved later go out the "
                    "next business day.", "closes at 15:30"),
    "rating-owner": ("Farid Haddad owns the rating engine and signs off every change to the tariff tables.",
                     "Farid Haddad"),
    "test-dsn": ("The claims test suite needs CLAIMS_TEST_DSN=postgresql://claims:claims@localhost:55432/claims_test.",
                 "localhost:55432"),
    "idempotency": ("Every POST to /claims must send an Idempotency-Key header; the gateway keeps keys for 72 hours "
                    "and replays the first response.", "keeps keys for 72 hours"),
    "retention": ("Closed claim files are kept ten years and then deleted by the purge-closed-claims job.",
                  "purge-closed-claims"),
    "flaky-subro": ("test_subrogation_recovery is flaky under pytest-xdist because it shares the recovery_seq "
                    "sequence: run it with -p no:xdist, do not mark it skip.", "recovery_seq sequence"),
    "status-topic": ("Claim status changes are published to the Kafka topic claims.status.v3, keyed by claim_id.",
                     "claims.status.v3"),
    "nid-mask": ("Policyholder national ID numbers are masked to their last 4 digits in logs with mask_nid() from "
                 "libs/pii.", "mask_nid()"),
    "release-window": ("Claims pipeline releases to production happen Tuesday to Thursday before 14:00 only, never on "
                       "a Friday or during month-end close.", "Tuesday to Thursday before 14:00"),
    "fx-rates": ("Foreign-currency claims are converted with rates from the ECB reference feed, fetched once a day at "
                 "16:15 CET.", "ECB reference feed"),
    "paid-state": ("Decision: a claim moves from APPROVED to PAID only through PAYMENT_PENDING; a direct APPROVED to "
                   "PAID transition is rejected.", "PAYMENT_PENDING"),
    "photo-limit": ("Damage photo uploads are capped at 25 files per claim and 15 MB per file.",
                    "25 files per claim"),
}
# Visible to every turn, sharing its words, answering none of them.
DISTRACTORS = (
    "The FNOL intake form is translated into Spanish and Polish.",
    "Senior adjusters work two shifts, 07:00 to 15:00 and 13:00 to 21:00.",
    "The fraud scoring model is retrained every quarter by the data science team.",
    "Claim attachments are stored in the claims-attachments-prod bucket with server-side encryption.",
    "The SEPA payout file uses the pain.001.001.09 format.",
    "The rating engine is written in Kotlin and runs on JDK 21.",
    "The claims test suite takes about nine minutes on CI.",
    "Partner brokers are rate limited to 300 requests per minute at the gateway.",
    "Kafka consumer groups in the claims pipeline are named after the consuming service.",
    "Policyholders get claim updates by email through the notifier's claim-update template.",
    "Logs of the retention jobs are shipped to the compliance team's Splunk index.",
    "Staging is refreshed from an anonymized production snapshot every Sunday.",
    "Memcached hit rates are on the Caches dashboard in Grafana.",
    "Uploaded photos are virus-scanned with ClamAV before they are attached to a claim.",
    "The claim state diagram lives in design/claim-states.drawio.",
)

CLAUDE_MD = ("# claimsdesk\n- Run make check before pushing; CI runs unit and contract tests on every PR.\n"
             "- Services: fnol-intake, triage, adjuster-api, payouts, rating (Kotlin).\n"
             "- Use structlog; never log raw request bodies.\n"
             "- Shared code lives in libs/ (docscan, pii, money, kafkautil).\n")
AGENTS_MD = ("# claimsdesk: agent rules\n- Keep answers short and show diffs.\n- Run make check before proposing a "
             "commit; contract tests need Docker.\n- Alembic migrations go in db/migrations, one per PR.\n"
             "- Payout, triage and FNOL handlers are in services/.\n")
SUMMARY = ("Summary:\n1. Primary request: make the triage service's structured logs consistent and fix the broker "
           "portal's pagination.\n2. Done: switched triage to structlog processors, fixed the off-by-one in the "
           "portal's page cursor, make check passes.\n3. Pending: nothing on pagination.")

_TRIAGE_LOG = "\n".join(
    f"2026-12-03T10:{m:02d}:{s:02d}Z INFO triage.worker claim=CLM-{48210 + m * 7 + s} score={(m * 13 + s) % 97 / 100:.2f} "
    f"route={'auto' if (m + s) % 3 else 'manual'} took={30 + (m * s) % 70}ms"
    for m in range(12, 18) for s in range(0, 60, 6))

# (memory key or None, shape, what the user writes, a tool's command and output for tool-result shapes)
TURNS = (
    ("fnol-port", "claude", "The mobile team says their FNOL submissions from the new app build time out against "
     "staging. Can you check services/fnol-intake/docker-compose.override.yml and the k8s service manifest? I "
     "suspect someone put the wrong port in one of them after the refactor last week.", None),
    ("fnol-port", "codex-tool", "healthcheck for the intake api keeps failing in the helm chart, pls fix "
     "charts/fnol/values.yaml so the probe hits the right port",
     ("sed -n 1,30p charts/fnol/values.yaml", "image:\n  repository: registry.internal/claimsdesk/fnol-intake\n"
      "  tag: 2026.12.1\nservice:\n  port: 8080\nlivenessProbe:\n  httpGet:\n    path: /healthz\n    port: 8080\n"
      "  initialDelaySeconds: 10\n")),
    ("senior-queue", "claude", "A broker escalated claim CLM-50192 (water damage, 31k EUR) because it sat in the "
     "normal adjuster inbox for six days. Where should a claim of that size have ended up? I want to check whether "
     "the router in services/triage/routing.py sent it to the right place.", None),
    ("senior-queue", "codex", "Write a unit test for route_claim() covering the big-ticket case: amount 40000 EUR, "
     "no fraud flag. Assert the exact queue name it should land in, not just that it isn't 'auto'.", None),
    ("reserve-minor", "codex", "I'm adding a reserve adjustment endpoint to adjuster-api. How do we store reserve "
     "amounts in the db, and which column? I don't want to be the one who introduces Decimal-vs-float bugs again. "
     "Then write the SQLAlchemy model change.", None),
    ("reserve-minor", "claude-tool", "Finance reports reserve totals off by a few cents in the monthly report. Look "
     "at the query output and tell me what's wrong with how the report reads the amounts.",
     ("psql -c \"select claim_id, reserve_minor, reserve_minor::float/100 from claim_reserves limit 3\"",
      " claim_id  | reserve_minor | ?column?\n-----------+---------------+----------\n CLM-40011 |       1250050 |"
      " 12500.5\n CLM-40012 |         99999 |   999.99\n CLM-40013 |        310001 |  3100.01\n(3 rows)")),
    ("siu-threshold", "claude-log", "Why did none of these get sent to investigations? Some of them look really "
     "suspicious to me. What's the cutoff supposed to be?\n\n" + _TRIAGE_LOG, None),
    ("siu-threshold", "codex", "product wants a dashboard tile 'claims referred to special investigations today'. "
     "Write the SQL against claim_scores; I need the same condition the triage service uses to refer a claim, "
     "I think it was score > 0.75 but not sure", None),
    ("ocr-timeout", "claude-log", "OCR keeps dying on multi-page PDFs from one insurer, see below. Is our limit too "
     "tight or is this their files? What's the per-page limit we configured?\n\n"
     "2026-12-02T09:14:02Z ERROR docscan.extract claim=CLM-49901 file=police_report.pdf page=3 "
     "error=TimeoutError elapsed=45.0s\n2026-12-02T09:14:48Z ERROR docscan.extract claim=CLM-49901 "
     "file=police_report.pdf page=4 error=TimeoutError elapsed=45.0s\n2026-12-02T09:15:10Z WARN docscan.extract "
     "claim=CLM-49901 giving up after 2 failed pages", None),
    ("ocr-timeout", "codex", "add a retry with backoff around the text extraction call for attachments, but keep "
     "whatever per-page timeout we already use, dont change it. where's the wrapper again?", None),
    ("policy-cache", "claude", "An underwriter changed a policy's deductible and the triage service kept using the "
     "old one for a while. How long can a stale policy read live, and which cache cluster is it so I can flush the "
     "key for POL-771203?", None),
    ("policy-cache", "codex-tool", "the policy lookup latency alert fired; check the client config and tell me if "
     "we're even pointing at the right cache",
     ("cat services/triage/config/cache.toml", "[policy_cache]\nservers = [\"policy-mc-03:11211\"]\n"
      "ttl_seconds = 600\nconnect_timeout_ms = 50\n")),
    ("sepa-cutoff", "claude", "A customer was promised her payout 'today' by the call center; the claim was "
     "approved at 16:05. Will the money go out today? Draft a short, honest reply for the agent to send her.", None),
    ("sepa-cutoff", "claude-after-compact", "ok and given the bank's cut-off, what time should the nightly "
     "'approve pending payouts' reminder to adjusters fire so their approvals still make the same-day run?", None),
    ("rating-owner", "claude", "I need to bump the hail surcharge in the tariff table for Bavaria, it's a one-line "
     "CSV change in rating/tariffs/hail.csv. Who has to approve it before it merges?", None),
    ("rating-owner", "codex", "Set up CODEOWNERS so tariff table edits automatically request review from the person "
     "who owns the rating engine. Use their GitHub handle if you know it, otherwise leave a TODO with their name.",
     None),
    ("test-dsn", "claude-tool", "tests are failing on my machine but green on CI, can u figure out what env the "
     "suite wants",
     ("make test", "tests/test_reserves.py::test_adjust_reserve ERROR\nE   sqlalchemy.exc.OperationalError: "
      "(psycopg.OperationalError) connection failed: connection to server at \"127.0.0.1\", port 5432 failed: "
      "Connection refused\n========== 1 error, 212 passed in 31.08s ==========")),
    ("test-dsn", "codex", "write a .envrc for direnv so anyone running the claims tests locally gets the right "
     "database connection string set automatically", None),
    ("idempotency", "claude-log", "Brokers say they sometimes get duplicate claims when their client retries after "
     "a timeout. Here's the access log. What are they supposed to send, and how long do we remember it?\n\n"
     "10.4.2.17 - broker-hv [02/Dec/2026:11:02:13 +0000] \"POST /claims HTTP/1.1\" 201 412 rt=29.8\n"
     "10.4.2.17 - broker-hv [02/Dec/2026:11:02:44 +0000] \"POST /claims HTTP/1.1\" 201 412 rt=0.4\n"
     "10.4.2.17 - broker-hv [02/Dec/2026:11:07:09 +0000] \"POST /claims HTTP/1.1\" 201 409 rt=0.5", None),
    ("idempotency", "codex", "Update the broker integration guide in broker-docs/submitting.md: explain how to "
     "retry a create-claim call safely, including the header and how long a retry is de-duplicated for.", None),
    ("retention", "claude", "Legal asked how long we keep files for closed claims and what actually deletes them "
     "afterwards. Can you find the job and give me a two-line answer I can forward?", None),
    ("retention", "claude-after-compact", "one more thing before we wrap up: which scheduled job would have removed "
     "that 2014 claim folder the auditor can't find? I want to check its run history.", None),
    ("flaky-subro", "claude-log", "CI red again on main, only this one test, rerun fixed it last time. Can I just "
     "mark it skip?\n\n============================= FAILURES =============================\n"
     "_____________________ test_subrogation_recovery[gw3] _____________________\n"
     "    assert recovery.ref == 'REC-000118'\nE   AssertionError: assert 'REC-000121' == 'REC-000118'\n"
     "tests/test_subrogation.py:88: AssertionError\n=== 1 failed, 1187 passed in 142.77s ===", None),
    ("flaky-subro", "codex", "the subro recovery test fails randomly in the parallel run. fix the CI config so it "
     "stops flaking, without disabling the test", None),
    ("status-topic", "claude", "The broker portal team wants to react when a claim gets approved or rejected "
     "instead of polling our API every minute. What should they subscribe to, and what's the message key? I'll "
     "forward your answer.", None),
    ("status-topic", "codex-tool", "the new notifier consumer receives nothing. check its config",
     ("cat services/notifier/consumer.yaml", "bootstrap: kafka-claims:9092\ntopic: claims.status.v2\n"
      "group: notifier\nauto_offset_reset: latest\n")),
    ("nid-mask", "claude-tool", "A pen tester flagged that full national ID numbers show up in the triage logs. "
     "Here's a line. Fix it the way we're supposed to do it in this codebase.",
     ("grep -n national_id services/triage/handlers.py", "57:    log.info(\"claim received\", claim_id=claim.id, "
      "national_id=claim.holder.national_id)")),
    ("nid-mask", "codex", "Adding structured logging to the fnol intake validator. Some fields are personal data "
     "(the holder's ID number). Is there a helper we already use to redact that, and how much of the number may "
     "stay visible?", None),
    ("release-window", "claude", "It's Friday 11am and I've got the reserve rounding fix ready, tests green, "
     "reviewed. Can we ship it to prod now or do I have to wait? What are the rules here?", None),
    ("release-window", "codex", "Add a guard to scripts/release.sh that refuses to deploy to production outside "
     "the allowed release window. Put the window in one constant at the top.", None),
    ("fx-rates", "claude", "A Swiss policyholder's claim in CHF was paid out at a rate that differs from what she "
     "saw on her bank app. Where do our conversion rates come from and when are they refreshed? Need this for the "
     "complaint reply.", None),
    ("paid-state", "codex-tool", "mark_paid() throws InvalidTransition for some approved claims, see the test "
     "output; fix the caller, not the state machine",
     ("pytest tests/test_payouts.py -k mark_paid -q", "F\n    claim.transition(ClaimState.PAID)\nE   "
      "claimsdesk.states.InvalidTransition: APPROVED -> PAID\n1 failed in 0.84s")),
    ("paid-state", "claude-after-compact", "right, and for the bulk payout script we talked about: can it flip "
     "approved claims straight to paid once the bank confirms, or does it have to go through something in "
     "between?", None),
    ("photo-limit", "claude", "A garage uploaded 40 photos for one car and the portal silently dropped some. What "
     "are the limits on damage pictures, so I can show a proper error message instead of dropping them?", None),
)

NULL_TURNS = (
    ("claude", "The adjuster dashboard's table header is misaligned in Safari when the sidebar is collapsed. Can you "
     "look at web/adjuster/src/components/ClaimTable.tsx and fix the CSS? Probably a flex-basis issue.", None),
    ("codex", "Convert services/triage/models.py from pydantic v1 to v2 style (validators, Config class, .dict() "
     "calls). Keep behaviour identical and run the unit tests.", None),
    ("claude-tool", "why does this date parsing blow up for some broker files?",
     ("python -m triage.tools.parse_dates samples/broker_0412.csv", "Traceback (most recent call last):\n"
      "  File \"triage/tools/parse_dates.py\", line 22, in parse\n    return datetime.strptime(raw, '%d.%m.%Y')\n"
      "ValueError: time data '2026-04-12' does not match format '%d.%m.%Y'")),
    ("codex", "Write a regex that validates German licence plates (e.g. M-AB 1234, B-X 12E for electric) for the "
     "vehicle claim form, with a few pytest cases.", None),
    ("claude", "Our Dockerfile for adjuster-api is 1.4 GB. Make it a multi-stage build on python:3.12-slim and "
     "explain what you removed.", None),
    ("claude-log", "What is this warning about and is it dangerous?\n\n/usr/lib/python3.12/site-packages/urllib3/"
     "connectionpool.py:1099: InsecureRequestWarning: Unverified HTTPS request is being made to host "
     "'localhost'. Adding certificate verification is strongly advised.", None),
    ("codex", "add type hints to libs/money/rounding.py and make mypy --strict pass for that file only", None),
    ("claude", "Can you write a short onboarding paragraph for new engineers explaining what a claim, a policy and "
     "a policyholder are, in plain words, for the top of README.md?", None),
    ("codex-tool", "the GitHub Actions cache never hits, figure out why",
     ("sed -n 10,24p .github/workflows/ci.yml", "      - uses: actions/cache@v4\n        with:\n"
      "          path: ~/.cache/pip\n          key: pip-${{ github.sha }}\n")),
    ("claude", "rename the function calc_thing() in services/payouts/util.py to something meaningful, it computes "
     "the number of business days between two dates, and update the callers", None),
    ("claude-after-compact", "thanks. last thing: can you squash my last three commits into one with a decent "
     "message? they're all the pagination fix.", None),
    ("codex", "Generate 200 rows of fake but realistic claimant names and addresses for a demo database seed, "
     "German and Austrian addresses, as a CSV.", None),
)
