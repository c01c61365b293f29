"""Held-out turns (twelfth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 10:26 UTC: 0.705 hit, 0.214 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "aqualine"

FACTS = {
    "ami_stale_file_cutoff": (
        "The AMI ingest job rejects any head-end interval file whose read window is older than 72 hours, "
        "because after outages the head-end re-sends stale batches and reprocessing them double-billed customers.",
        "72 hours",
    ),
    "leak_alert_window": (
        "A leak alert fires only after 24 consecutive hourly intervals with nonzero flow (above 0.1 gal/h), "
        "because the old 6-hour window flagged every irrigation timer in the service area.",
        "24 consecutive hourly intervals",
    ),
    "tier_units_ccf": (
        "Tier boundaries in the rate_tiers table are stored in CCF, not gallons, because the council ordinance defines tiers in CCF; "
        "convert meter gallons using 748 gallons per CCF before tier lookup.",
        "748 gallons per CCF",
    ),
    "invoice_rounding": (
        "Bill amounts are kept at full precision per line and rounded half-even to the cent only on the invoice total, "
        "because the 2022 PUC audit flagged cent drift from per-line rounding.",
        "PUC audit",
    ),
    "p1_work_order_paging": (
        "P1 work orders (main breaks) page the on-call crew lead through the PagerDuty service field-ops-p1 immediately and are excluded "
        "from the nightly dispatch export, because a break logged at 11pm once waited until the morning batch.",
        "field-ops-p1",
    ),
    "scada_read_replica": (
        "All telemetry queries go to the read-only PI historian replica at pi-replica.aqualine.internal, never the primary, "
        "because a dashboard query against the primary once stalled the treatment plant HMI.",
        "pi-replica.aqualine.internal",
    ),
    "legacy_psi_tags": (
        "SCADA pressure tags arrive in kPa and telemetry/units.py converts them to psi, except tags ending in _PSI_LEGACY, "
        "which come from pump stations whose PLCs were never reprogrammed and already report psi.",
        "_PSI_LEGACY",
    ),
    "bwn_languages": (
        "Boil-water notices must go out in English, Spanish and Vietnamese (templates in notices/templates/bwn/), "
        "because the state primacy agency requires every language spoken by more than 5% of the service area.",
        "Vietnamese",
    ),
    "portal_account_linking": (
        "The customer portal links a login to an account by account number plus the service address ZIP, not by email, "
        "because landlords and tenants often share one email across several accounts.",
        "service address ZIP",
    ),
    "meter_id_text": (
        "Meter IDs are 10-character zero-padded strings like 0004512377 and are stored as TEXT everywhere, "
        "because exporting them as integers stripped the leading zeros and broke the head-end match.",
        "0004512377",
    ),
    "billing_cycle_timezone": (
        "Interval reads are stored in UTC, but billing cycles close at local midnight in America/Los_Angeles, "
        "because closing cycles on UTC boundaries misbilled the 23- and 25-hour DST days.",
        "America/Los_Angeles",
    ),
    "estimated_reads": (
        "A missed read is billed as an estimate flagged read_type='E' from the same month last year, and a second consecutive estimate "
        "automatically opens a meter-inspection work order, because state rules cap consecutive estimated bills at two.",
        "read_type='E'",
    ),
    "test_db_port": (
        "Integration tests use the Postgres 15 + TimescaleDB container from `make db-up`, which listens on port 55432, "
        "because the default 5432 collided with developers' local Postgres installs.",
        "55432",
    ),
    "rate_change_proration": (
        "When rates change mid-cycle, the bill is prorated by days on each side of the effective date, as required by Resolution 2023-41, "
        "rather than applying the new rate to the whole cycle.",
        "Resolution 2023-41",
    ),
    "shutoff_guard": (
        "Non-payment disconnection work orders are blocked by the shutoff_guard check on Fridays, the day before a holiday, "
        "and when the forecast high exceeds 100°F, because of the state shutoff moratorium law.",
        "shutoff_guard",
    ),
    "leak_alert_dedup": (
        "Leak notifications are deduplicated per account for 7 days through the alert_suppression table, "
        "because customers complained about getting the same leak text every morning.",
        "alert_suppression",
    ),
    "sms_short_code": (
        "Customer SMS is sent through the Twilio messaging service on the dedicated short code 73859, "
        "because carriers filtered our long-code numbers during the 2023 boil-water event.",
        "73859",
    ),
    "dashboard_poll_interval": (
        "SCADA dashboards poll every 30 seconds and share one pooled client, because the PI replica license caps concurrent connections at 25.",
        "concurrent connections at 25",
    ),
    "gis_facility_ids": (
        "Work orders reference assets by the GIS facility ID (e.g. HYD-10442 for a hydrant) from the ArcGIS layer, not our internal asset_id, "
        "because the crews' tablets only display GIS IDs.",
        "HYD-10442",
    ),
    "migration_compat": (
        "Alembic migrations must follow expand/contract and stay compatible with the previous release, "
        "because the ingest workers and the web app deploy on separate schedules.",
        "expand/contract",
    ),
    "backflow_reminders": (
        "Backflow test certificates are valid for 365 days and the reminder job mails the customer 45 days before expiry, "
        "because the cross-connection control program requires annual testing with time to book a tester.",
        "45 days before",
    ),
    "high_bill_hold": (
        "Any bill over 3x the account's 12-month average is parked in the billing_holds queue for CSR review before mailing, "
        "because a register rollover once produced a $48,000 residential bill.",
        "billing_holds",
    ),
}

DISTRACTORS = (
    "Fire hydrant flushing schedules are generated quarterly by district and exported to the crews' calendar feed.",
    "The customer portal uses Stripe for card payments and ACH autopay is handled by the bank's lockbox file.",
    "Lead service line inventory records live in the lsl_inventory table and are published annually to the state.",
    "The SCADA dashboards use Grafana with one folder per pressure zone.",
    "Meter install dates come from the AMI vendor's provisioning API and are backfilled nightly.",
    "Work order photos are uploaded to the wo-photos S3 bucket with a 7-year lifecycle rule.",
    "Sewer charges are billed as a flat monthly fee plus winter-averaged volume for residential accounts.",
    "The leak detection model for district metered areas runs in a separate notebook repo owned by the hydraulics team.",
    "Paperless billing enrollment is stored on the account record as ebill_opt_in.",
    "The nightly GL export to the city finance system is a fixed-width file with a trailer record.",
    "Reservoir level tags are named by site code, e.g. RSV-NORTH-LVL, in the PI historian.",
    "Customer service reps use the staff console at /admin, which is only reachable over the city VPN.",
    "The Consumer Confidence Report PDF is built each spring from templates in reports/ccr/.",
    "Frontend code for the portal is React with TypeScript and lives under web/portal/.",
    "Pump run-hour totals are rolled up daily into the pump_runtime_daily continuous aggregate.",
    "Field crews sync offline work orders over LTE when the tablet comes back into coverage.",
)

CLAUDE_MD = """# aqualine
Python 3.12 monorepo: ingest/ (AMI reads), billing/, workorders/, telemetry/, portal/ (API), web/portal/ (React).
Install: `uv sync`; run tests: `make test`; integration tests: `make itest`.
Lint/format: `make lint` (ruff + mypy); run before every commit.
Migrations live in migrations/ (Alembic); generate with `make migration m="..."`.
Do not commit .env files; copy .env.example instead.
"""

AGENTS_MD = """# AGENTS.md
- Keep changes small and scoped to one package per PR.
- Run `make lint` and `make test` before proposing a change.
- Put new tests next to the package in tests/<package>/.
- Ask before adding a new third-party dependency.
"""

SUMMARY = """Summary: Earlier in this session we refactored billing/cycle.py into smaller functions, added tests in tests/billing/test_cycle.py,
and touched ingest/headend_client.py to add retry logging. We also updated workorders/api.py response schemas and fixed two
mypy errors in telemetry/tags.py. All tests passed at the end; no migrations were added."""

TURNS = (
    # ami_stale_file_cutoff
    ("ami_stale_file_cutoff", "claude",
     "The head-end vendor just told us their SFTP server was down since Monday and they're going to dump everything they buffered "
     "onto the drop tonight. Can you look at ingest/headend_sftp.py and ingest/validate.py and tell me what will happen to those files "
     "when the ingest job picks them up? I want to know whether we need to do anything manually tomorrow morning.",
     None),
    ("ami_stale_file_cutoff", "codex-tool",
     "ingest skipped a bunch of files, why. fix or explain",
     ("grep -c SKIPPED logs/ingest-2024-05-14.log && tail -n 3 logs/ingest-2024-05-14.log",
      "212\n2024-05-14T06:02:11Z WARN ingest.validate SKIPPED file=HE_20240510_0415.csv reason=window_too_old\n"
      "2024-05-14T06:02:11Z WARN ingest.validate SKIPPED file=HE_20240510_0430.csv reason=window_too_old\n"
      "2024-05-14T06:02:12Z INFO ingest.run done accepted=96 skipped=212")),
    # leak_alert_window
    ("leak_alert_window", "claude",
     "Product wants a 'faster leak alerts' story: they say customers only hear about leaks a day late. Please write up a proposal in "
     "docs/proposals/leak-latency.md and sketch the change in alerts/leak_detector.py. Keep in mind we got burned before by noisy alerts, "
     "so explain what the trade-off would be before touching the thresholds.",
     None),
    ("leak_alert_window", "claude-log",
     "A customer called saying their toilet has been running since yesterday afternoon but they never got an alert. Here's the detector output:\n"
     "```\n2024-06-02T14:00Z acct=778120 meter=0001938842 flow=0.8 gal/h run=1\n...\n"
     "2024-06-03T09:00Z acct=778120 meter=0001938842 flow=0.9 gal/h run=20\nno alert: threshold not met\n```\n"
     "Is the detector broken or is this expected? If it's expected I'll explain it to CS.",
     None),
    # tier_units_ccf
    ("tier_units_ccf", "claude",
     "I'm adding a 'usage this cycle vs. your tier limits' widget to the portal. The usage total comes from interval_reads (gallons). "
     "Can you write the backend endpoint in portal/api/usage.py that returns how far the customer is into each tier, pulling the "
     "limits from rate_tiers? Please include tests with a couple of realistic households.",
     None),
    ("tier_units_ccf", "codex",
     "tier calc in billing/tiers.py gives tier 3 for a 4k gal month. thats wrong. fix",
     None),
    # invoice_rounding
    ("invoice_rounding", "claude-after-compact",
     "Back to the invoice rendering work from before the summary. I'd like each line item in billing/invoice.py to be rounded to cents "
     "as soon as it's computed so the PDF columns add up visually. Can you make that change and update the snapshot tests?",
     None),
    ("invoice_rounding", "codex-tool",
     "test fails after my refactor of line items. make it pass",
     ("pytest tests/billing/test_invoice.py -q",
      "F.\nFAILED tests/billing/test_invoice.py::test_total_matches_reference - AssertionError: Decimal('84.37') != Decimal('84.38')\n"
      "1 failed, 1 passed in 0.41s")),
    # p1_work_order_paging
    ("p1_work_order_paging", "claude",
     "We're consolidating all work-order notifications into the nightly dispatch export so supervisors get one clean file each morning. "
     "Please refactor workorders/notify.py so that every new work order, regardless of type, just gets queued for workorders/dispatch_export.py. "
     "Remove the other notification paths if they become redundant.",
     None),
    ("p1_work_order_paging", "claude-log",
     "Staging alert from the integration test run:\n"
     "```\nworkorders.notify ERROR create_incident failed: 404 service not found (service_key=None)\n"
     "wo_id=WO-88213 priority=P1 type=MAIN_BREAK\n```\n"
     "Looks like the config lost a value when we moved to the new settings loader. Can you figure out what should be there and restore it?",
     None),
    # scada_read_replica
    ("scada_read_replica", "codex-tool",
     "dashboards timing out. point the client somewhere that works",
     ("python -m telemetry.ping --host $PI_HOST",
      "PI_HOST is unset; falling back to pi-primary.aqualine.internal\nconnecting... ok (412 ms)\nquery test_tag: timeout after 30s")),
    ("scada_read_replica", "claude-after-compact",
     "Back to the historian client rewrite. Now that telemetry/pi_client.py is async, please wire up the connection settings in "
     "telemetry/settings.py with a sensible default host so new developers don't have to set anything to see the dashboards.",
     None),
    # legacy_psi_tags
    ("legacy_psi_tags", "claude-log",
     "The north zone pressure panel looks crazy, some stations show ~8 psi:\n"
     "```\ntag=PS-07.DP01 raw=58.2  display=8.44 psi\ntag=PS-09.DP01 raw=401.3 display=58.20 psi\n```\n"
     "I think the conversion in telemetry/units.py is being applied twice or something. Can you fix it?",
     None),
    ("legacy_psi_tags", "claude",
     "Let's clean up telemetry/units.py — there's a weird special case in the pressure converter that looks like leftover cruft from an old "
     "migration. Please simplify it so every pressure tag goes through the same kPa→psi path, and add a property-based test.",
     None),
    # bwn_languages
    ("bwn_languages", "claude",
     "We need a new 'precautionary boil-water notice' type for partial-zone events. Please add it to notices/models.py, create the templates, "
     "and hook it into notices/send.py. Copy the structure of the existing full-zone notice so it gets reviewed the same way.",
     None),
    ("bwn_languages", "codex",
     "bwn render test says missing template for locale. which locales do we actually need, add them",
     None),
    # portal_account_linking
    ("portal_account_linking", "claude",
     "Registration on the portal has too much friction. I'd like a new user to be able to sign up with their email and have us auto-link "
     "any accounts that already have that email on file. Can you implement that in portal/api/auth.py and portal/services/linking.py?",
     None),
    ("portal_account_linking", "claude-tool",
     "Support says this user can't link their account. Can you check why the link endpoint rejects them and fix whatever is wrong?",
     ("curl -s -X POST localhost:8000/api/link -d '{\"account\":\"40021877\",\"zip\":\"95814\"}' -H 'content-type: application/json'",
      "{\"error\":\"link_mismatch\",\"detail\":\"verification field does not match account record\"}")),
    # meter_id_text
    ("meter_id_text", "codex-tool",
     "new migration fails on meters table, fix the column type",
     ("alembic upgrade head",
      "sqlalchemy.exc.DataError: (psycopg.errors.InvalidTextRepresentation) invalid input syntax for type bigint: \"000A512377\"\n"
      "[SQL: ALTER TABLE meters ALTER COLUMN meter_id TYPE BIGINT USING meter_id::bigint]")),
    ("meter_id_text", "claude-log",
     "The reconciliation report shows thousands of unmatched meters:\n"
     "```\nreconcile: headend=41213 billing=41213 matched=2870 unmatched=38343\nsample unmatched: headend='0000938121' billing='938121'\n```\n"
     "I changed billing/export.py yesterday to cast IDs to int so sorting works. Was that the problem? What should I do instead?",
     None),
    # billing_cycle_timezone
    ("billing_cycle_timezone", "claude-after-compact",
     "Back to the cycle-close job. Let's simplify billing/cycle_close.py so it just uses the UTC midnight boundary since everything in "
     "interval_reads is UTC anyway — that removes the pytz dependency. Go ahead and make the change.",
     None),
    ("billing_cycle_timezone", "codex",
     "march bills off by one hour of usage for some accts. check cycle boundaries",
     None),
    # estimated_reads
    ("estimated_reads", "claude",
     "When the AMI network drops a meter for a cycle, right now we just skip billing it. Can you implement estimated billing in "
     "billing/estimates.py? I'm not sure how to mark them or what should happen if the meter keeps missing. Write it the way you think "
     "the state would want.",
     None),
    ("estimated_reads", "codex-tool",
     "why no inspection WO for this meter",
     ("psql -c \"select cycle, read_type from bill_reads where meter_id='0002231940' order by cycle desc limit 3\"",
      " cycle  | read_type\n--------+-----------\n 2024-05 | E\n 2024-04 | E\n 2024-03 | A\n(3 rows)")),
    # test_db_port
    ("test_db_port", "claude-tool",
     "Integration tests can't connect on my machine. Can you fix the test config?",
     ("make itest",
      "psycopg.OperationalError: connection failed: connection to server at \"127.0.0.1\", port 5432 failed: "
      "FATAL:  password authentication failed for user \"aqualine\"\nmake: *** [itest] Error 1")),
    ("test_db_port", "codex",
     "write a docker-compose.test.yml for the itest db, match what make db-up does",
     None),
    # rate_change_proration
    ("rate_change_proration", "claude",
     "New rates take effect July 1 and lots of accounts have cycles that straddle that date. Please update billing/rates.py so the "
     "calculator handles a cycle that spans a rate change, and add a test for a June 18–July 17 cycle.",
     None),
    ("rate_change_proration", "claude-after-compact",
     "Back to the rate engine. Finance asked whether we could simplify things by just applying whichever rate is in effect on the "
     "cycle's close date. Can you make that change in billing/rates.py? It would delete a lot of code.",
     None),
    # shutoff_guard
    ("shutoff_guard", "claude-log",
     "Collections is upset that their disconnect batch didn't go out:\n"
     "```\n2024-07-12 workorders.create BLOCKED type=DISCONNECT_NONPAY count=143 guard=weekday\n"
     "2024-07-12 workorders.create BLOCKED type=DISCONNECT_NONPAY count=12 guard=heat\n```\n"
     "Can you find the code that's blocking these and tell me if we can let the batch through?",
     None),
    ("shutoff_guard", "codex-tool",
     "remove the flaky check that keeps failing disconnect tests",
     ("pytest tests/workorders -q -k disconnect",
      "FAILED tests/workorders/test_disconnect.py::test_create_disconnect - workorders.errors.Blocked: guard=holiday_eve\n"
      "1 failed, 7 passed in 1.02s")),
    # leak_alert_dedup
    ("leak_alert_dedup", "claude",
     "I'm moving leak notifications to the new notifications service (notifications/dispatch.py). Please port alerts/leak_notify.py "
     "over. The new service has its own retry and rate limiting, so anything in the old module that only exists to reduce volume can go.",
     None),
    ("leak_alert_dedup", "claude-tool",
     "A customer says they got a leak text every day for a week. Can you check what went wrong?",
     ("psql -c \"select sent_at::date, channel from leak_notifications where account_id=551902 order by sent_at\"",
      "  sent_at   | channel\n------------+---------\n 2024-08-01 | sms\n 2024-08-02 | sms\n 2024-08-03 | sms\n 2024-08-04 | sms\n(4 rows)")),
    # sms_short_code
    ("sms_short_code", "claude-log",
     "Test message from staging went out from a random number:\n"
     "```\ntwilio: sent sid=SM8f2a from=+19165550147 to=+1916555xxxx status=queued\n```\n"
     "The production config for notices/sms.py needs to match what we actually use for customers. Can you set the sender correctly?",
     None),
    ("sms_short_code", "codex",
     "swap sms sender to a cheaper long code pool in notices/sms.py, save $$",
     None),
    # dashboard_poll_interval
    ("dashboard_poll_interval", "claude",
     "Operators want the pump station dashboard to feel live. Can you change telemetry/poller.py so each panel polls every 2 seconds "
     "and opens its own connection so slow panels don't block fast ones?",
     None),
    ("dashboard_poll_interval", "codex-tool",
     "pi errors after scaling dashboards, fix",
     ("kubectl logs deploy/telemetry-dash --tail=3",
      "pi_client ERROR connect refused: license limit reached\npi_client ERROR connect refused: license limit reached\n"
      "poller INFO panels=40 interval=5s clients=40")),
    # gis_facility_ids
    ("gis_facility_ids", "claude-tool",
     "Crews say the hydrant work orders from the flushing module show an ID they can't find on the tablet. Can you fix it?",
     ("psql -c \"select wo_id, asset_ref from work_orders where source='flushing' limit 2\"",
      "  wo_id   | asset_ref\n----------+-----------\n WO-90112 | 118734\n WO-90113 | 118735\n(2 rows)")),
    ("gis_facility_ids", "claude-after-compact",
     "Back to the valve exercise work orders. Please finish workorders/valves.py so each generated work order points at the right "
     "asset, and add a test for the mapping.",
     None),
    # migration_compat
    ("migration_compat", "claude",
     "I want to rename interval_reads.val to interval_reads.usage_gal. Please write the Alembic migration and update ingest/ and "
     "billing/ in the same PR — a single migration that renames the column is fine, right?",
     None),
    ("migration_compat", "claude",
     "The meters.install_dt column is unused now. Write a migration that drops it and remove the references in the ORM models, all in one go "
     "so we can ship it with tomorrow's web deploy.",
     None),
    # backflow_reminders
    ("backflow_reminders", "claude-after-compact",
     "Back to the backflow module. Please implement the reminder scheduler in backflow/reminders.py that decides when to mail the "
     "customer about an upcoming certificate expiry, with tests.",
     None),
    ("backflow_reminders", "codex",
     "backflow reminder fires 2 wks before expiry, customers say too late. whats the rule, fix",
     None),
    # high_bill_hold
    ("high_bill_hold", "claude",
     "Finance wants bills mailed faster. Can you look at billing/mailing.py and remove whatever is delaying some bills from going "
     "out on the cycle close date? A few hundred per cycle get stuck somewhere.",
     None),
    ("high_bill_hold", "claude",
     "After the meter swap project we'll get a lot of first bills with odd numbers. Please write a script in scripts/meter_swap_review.py "
     "that routes suspicious bills to the existing human review step instead of mailing them.",
     None),
)

NULL_TURNS = (
    ("claude",
     "Please rename the function calc_amt to calculate_amount in billing/utils.py and update all call sites. No behavior change.",
     None),
    ("codex",
     "typo in portal/api/usage.py docstring: 'recieve' -> 'receive'",
     None),
    ("claude-tool",
     "Can you clean up these lint warnings?",
     ("make lint",
      "workorders/api.py:14:1: F401 'json' imported but unused\nworkorders/api.py:88:80: E501 line too long (97 > 88)\n"
      "Found 2 errors.")),
    ("codex-tool",
     "fix formatting",
     ("ruff format --check .",
      "Would reformat: telemetry/tags.py\nWould reformat: ingest/parse.py\n2 files would be reformatted, 118 files already formatted")),
    ("claude",
     "Add a unit test for the pure helper split_name(full) in portal/util/names.py — cover empty string, single name, and names with "
     "multiple spaces.",
     None),
    ("codex",
     "add docstring to telemetry/tags.py::normalize_tag explaining args and return",
     None),
    ("claude-log",
     "mypy complains:\n```\nbilling/cycle.py:42: error: Missing return type annotation for function \"close_cycle\"\n"
     "billing/cycle.py:57: error: Incompatible default for argument \"dry_run\" (default has type \"None\", argument has type \"bool\")\n```\n"
     "Can you add the annotations properly?",
     None),
    ("claude-after-compact",
     "Back to the refactor from before the summary: please sort the imports in the files we touched and make sure the test file names "
     "follow test_<module>.py.",
     None),
    ("codex-tool",
     "unused var warning, remove",
     ("ruff check ingest/",
      "ingest/parse.py:31:5: F841 Local variable `tmp` is assigned to but never used\nFound 1 error.")),
    ("claude",
     "Can you convert the string formatting in scripts/report.py from % style to f-strings? Keep the output identical.",
     None),
    ("codex-tool",
     "tests for clamp() failing after i renamed args, fix the test",
     ("pytest tests/util/test_math.py -q",
      "FAILED tests/util/test_math.py::test_clamp - TypeError: clamp() got an unexpected keyword argument 'lo'\n1 failed in 0.05s")),
    ("claude-log",
     "Got this when running the formatter:\n```\nerror: cannot format web/portal/src/Usage.tsx: Unexpected token (12:5)\n```\n"
     "There's probably a stray comma. Can you fix the syntax so prettier runs?",
     None),
)
