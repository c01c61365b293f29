"""Held-out turns (eighteenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 19:08 UTC: 0.864 hit, 0.125 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "hemalink"

FACTS = {
    "platelet_shelf": (
        "Platelet units expire 5 days after collection at 23:59 local time of the collecting site, so expiry.py computes expiry in the site's zone, never in UTC.",
        "5 days after collection",
    ),
    "coldchain_threshold": (
        "Cold-chain alerts for red cell fridges fire only after the probe reads above 6.0 °C for 30 consecutive minutes, because door openings cause brief spikes that used to page the night shift.",
        "30 consecutive minutes",
    ),
    "isbt_checksum": (
        "ISBT 128 donation identification numbers are validated with the ISO 7064 Mod 37-2 check character in labels/din.py; the check character is printed but never stored in the units table.",
        "ISO 7064 Mod 37-2",
    ),
    "crossmatch_validity": (
        "A cross-match result stays valid for 72 hours from sample draw, not from lab entry, because transfused or pregnant patients may form new antibodies; enforced in lab/crossmatch_window.py.",
        "72 hours from sample draw",
    ),
    "order_router_host": (
        "Hospital orders are routed through router-int.hemalink.internal:8443 with mutual TLS; the public api gateway must never call hospital HL7 endpoints directly because their firewalls allowlist only that host.",
        "router-int.hemalink.internal:8443",
    ),
    "recall_owner": (
        "Recall and lookback notifications are owned by the Quality team under Ines Okafor, and any change to recall/notify.py needs her sign-off because regulators audit that module's output.",
        "Ines Okafor",
    ),
    "donor_deferral_table": (
        "Donor deferrals live in the donor_deferrals table with an ends_on date column; permanent deferrals use ends_on NULL rather than a far-future date, because reports treat 9999-12-31 as corrupt data.",
        "ends_on NULL",
    ),
    "scheduler_tz": (
        "The donor scheduler stores all appointment slots in UTC but the mobile drive calendar renders in America/Winnipeg, since every mobile bus is dispatched from the Winnipeg depot.",
        "America/Winnipeg",
    ),
    "hemoglobin_units": (
        "Hemoglobin screening values are stored in g/L as integers, not g/dL; the fingerstick devices export g/dL and ingest/hb.py multiplies by 10 before saving.",
        "g/L as integers",
    ),
    "release_freeze": (
        "We freeze deploys to the order-routing service every Friday from 14:00 to Monday 08:00 Central, because weekend trauma demand is highest and on-call coverage is thinnest.",
        "Friday from 14:00",
    ),
    "label_printer_dpi": (
        "Unit labels are rendered at 300 dpi for the Zebra ZT411 printers; the 203 dpi templates were retired because their Code 128 bars failed scanner verification at the hospitals.",
        "300 dpi",
    ),
    "emergency_release_flag": (
        "The EMERGENCY_UNCROSSMATCHED feature flag allows O-negative release without a cross-match, but it must auto-expire after 15 minutes per order so it cannot stay on after the trauma ends.",
        "15 minutes per order",
    ),
    "probe_batch": (
        "Temperature probe readings are ingested in batches of at most 500 rows into coldchain.readings_raw, because larger inserts caused lock waits that delayed the excursion detector.",
        "500 rows",
    ),
    "abo_compat_source": (
        "The ABO/RhD compatibility matrix is generated from docs/compat/abo_matrix.csv by make compat; never edit lab/compat_table.py by hand since the CSV is the validated, signed-off source.",
        "docs/compat/abo_matrix.csv",
    ),
    "barcode_scanner_prefix": (
        "Handheld scanners at the depots are configured to send the =< data identifier prefix, so the scan parser strips it first; without that, every DIN lookup misses and returns unit-not-found.",
        "=<",
    ),
    "plasma_temp": (
        "Fresh frozen plasma must be stored at or below -25 °C; the freezer dashboard uses -25 as the breach line, not -18, because our licence follows the stricter regional standard.",
        "-25 °C",
    ),
    "retention_audit": (
        "Traceability records for transfused units are retained for 30 years in the audit_trace schema, so the nightly purge job explicitly excludes that schema from its cleanup.",
        "30 years",
    ),
    "hl7_version": (
        "Outbound messages to hospital LIS systems use HL7 v2.5.1 with BTS/BTX segments, because St. Brendan and Lakeview only parse that version and reject v2.3 transfusion segments.",
        "HL7 v2.5.1",
    ),
    "transport_box_limit": (
        "A validated transport box holds at most 8 red cell units, since the cooling packs were validated for 8 units over 6 hours; the packing screen blocks a ninth unit.",
        "at most 8 red cell units",
    ),
    "oncall_channel": (
        "Cold-chain pages go to the #cc-oncall Slack channel and PagerDuty service HEMA-CC, never to #general-ops, because that channel is muted overnight by most staff.",
        "HEMA-CC",
    ),
    "test_db_fixture": (
        "Integration tests use the hemalink_test Postgres database seeded by scripts/seed_test.sql, and tests must never reach the staging donor data because it contains real donor names.",
        "scripts/seed_test.sql",
    ),
    "irradiated_expiry": (
        "When a red cell unit is irradiated, its expiry becomes 14 days from irradiation or the original expiry, whichever is earlier, as implemented in processing/irradiate.py.",
        "14 days from irradiation",
    ),
}

DISTRACTORS = (
    "The donor portal uses magic-link login emails that expire after 20 minutes, since many donors open them on a different device.",
    "Grafana dashboards for the depots live in the ops-dashboards repo and are provisioned with Terraform, not edited in the UI.",
    "We pin the Python version to 3.12 in .python-version because the HL7 parsing library has not been tested on 3.13 yet.",
    "The mobile drive app caches the day's appointment list offline so staff can check donors in on rural sites without signal.",
    "Frontend components use the shared design tokens in ui/tokens.json; colors for blood groups follow the color-blind safe palette.",
    "Pull requests need one approval from a code owner listed in CODEOWNERS before merge, and CI must be green.",
    "Courier tracking events arrive from the logistics partner as webhooks signed with HMAC-SHA256.",
    "The weekly inventory report is emailed to regional managers every Monday at 07:00 as a PDF attachment.",
    "Donor SMS reminders are sent 24 hours before the appointment through the Twilio messaging service.",
    "Alembic migrations must be backward compatible for one release so the old and new app versions can run side by side.",
    "The staging environment is rebuilt from scratch every Sunday night with synthetic data from the faker-based generator.",
    "Error tracking uses Sentry with the release tagged as the git short sha so regressions map back to commits.",
    "The hospital portal supports English and French, and translation strings live in portal/locales/*.po files.",
    "Unit search results are paginated at 50 rows per page, sorted by expiry ascending by default.",
    "Docker images are built on the distroless base and scanned by Trivy in CI before push to the registry.",
    "The donor eligibility questionnaire content is versioned in content/questionnaire/ and reviewed by medical staff each quarter.",
)

CLAUDE_MD = """# hemalink
Regional blood bank and transfusion logistics platform (donors, units, cold chain, lab, hospital orders).
- Python 3.12 services under services/, shared libs under libs/; run `make test` before pushing.
- Format with ruff format and lint with ruff check; type-check with mypy --strict on libs/.
- Database migrations go through Alembic in migrations/; never edit an applied migration.
- Keep patient and donor identifiers out of logs; use the redact() helper.
"""

AGENTS_MD = """- Run `make lint test` and keep both green before proposing a change.
- Prefer small, focused diffs; one concern per pull request.
- Do not touch generated files under build/ or gen/.
- Ask before adding a new third-party dependency.
"""

SUMMARY = (
    "Summary: Earlier in this session we refactored the courier webhook handler to verify HMAC signatures before parsing, "
    "and added unit tests for the retry backoff helper. We also cleaned up unused imports in services/logistics and updated the README setup section."
)

TURNS = (
    # platelet_shelf
    ("platelet_shelf", "claude",
     "Our Thunder Bay site keeps complaining that platelets show as expired in the inventory screen a few hours early in the evening. "
     "Can you look at services/inventory/expiry.py and fix how we compute the cutoff for platelet units? "
     "While you're in there, the docstring for compute_expiry is out of date too.",
     None),
    ("platelet_shelf", "codex",
     "platelet expiry off by several hours for eastern sites, fix expiry.py",
     None),
    # coldchain_threshold
    ("coldchain_threshold", "claude-log",
     "The night shift got paged three times last night for fridge F-12 and every time it was back to normal within a couple of minutes.\n"
     "```\n2024-11-03T02:14:07Z WARN coldchain.alert fridge=F-12 probe=P2 temp=6.4C -> ALERT raised\n"
     "2024-11-03T02:15:52Z INFO coldchain.alert fridge=F-12 probe=P2 temp=4.1C -> ALERT cleared\n"
     "2024-11-03T03:41:10Z WARN coldchain.alert fridge=F-12 probe=P2 temp=6.2C -> ALERT raised\n```\n"
     "Someone changed the excursion rule recently. What should it be and can you fix it?",
     None),
    ("coldchain_threshold", "codex-tool",
     "fridge alerts too noisy again, fix rule in coldchain/excursion.py",
     ("pytest services/coldchain -q -k excursion",
      "F.\n__ test_door_open_spike_does_not_alert __\n    assert not detector.should_alert(readings)\nE   assert not True\nE    +  where True = <ExcursionDetector window=0s>.should_alert([...6.8, 6.9, 4.2])\n1 failed, 1 passed in 0.41s")),
    # isbt_checksum
    ("isbt_checksum", "claude",
     "We're adding a manual-entry fallback on the hospital receiving screen for when the label barcode is damaged and staff type the donation number in by hand. "
     "Please write the validation for that input field in labels/ so typos get caught before the lookup. "
     "Also decide whether we should save the extra trailing character they type into the database.",
     None),
    ("isbt_checksum", "claude-tool",
     "This test started failing after someone touched the label code. Can you figure out what's wrong with the validator?",
     ("pytest libs/labels/tests/test_din.py -q",
      "F\n__ test_known_good_din __\n    assert validate_din('W1234 24 123456 ? K')\nE   AssertionError: validate_din returned False (computed check='7', printed='K')\nlibs/labels/din.py:41: in validate_din\n    check = str(sum(int(c) for c in digits) % 10)\n1 failed in 0.12s")),
    # crossmatch_validity
    ("crossmatch_validity", "claude-after-compact",
     "Back to the lab integration from before the summary. The issue-for-transfusion endpoint needs to refuse units when the compatibility test is too old. "
     "Can you add that check in services/lab and a test for the edge case where the lab typed the result in a day after the tube was drawn?",
     None),
    ("crossmatch_validity", "codex",
     "issue endpoint accepts stale compat tests, add age check in lab service",
     None),
    # order_router_host
    ("order_router_host", "claude",
     "Lakeview Hospital says our orders are timing out since yesterday's gateway release. "
     "I noticed services/gateway/hospital_client.py now posts straight to their interface engine URL. "
     "Can you fix the client so orders get through again and add a config test so this doesn't regress?",
     None),
    ("order_router_host", "codex-tool",
     "hospital order dispatch timing out, fix client config",
     ("curl -sv https://lis.lakeview-health.ca/hl7/inbound --max-time 10",
      "*   Trying 142.118.40.22:443...\n* Connection timed out after 10001 milliseconds\n* Closing connection 0\ncurl: (28) Connection timed out after 10001 milliseconds")),
    # recall_owner
    ("recall_owner", "claude",
     "I want to change the wording of the lookback letters that go to hospitals when a donor later tests positive, it's clunky. "
     "The template is built in recall/notify.py. Can you rewrite it to be clearer and open the PR? Who should I tag as reviewer?",
     None),
    ("recall_owner", "codex",
     "tidy up recall/notify.py message builder, who needs to approve",
     None),
    # donor_deferral_table
    ("donor_deferral_table", "claude-log",
     "The quarterly deferral report job blew up:\n"
     "```\nreports.deferrals ERROR data_quality: 412 rows with implausible date in donor_deferrals.ends_on (max=9999-12-31)\n"
     "Traceback (most recent call last):\n  File \"reports/deferrals.py\", line 88, in build\n    raise DataQualityError(msg)\nreports.errors.DataQualityError: implausible dates\n```\n"
     "These came from the new lifetime-deferral feature merged Tuesday. How should those rows be written, and can you fix the writer and backfill?",
     None),
    ("donor_deferral_table", "claude",
     "We need to add a way for the medical director to mark a donor as never eligible again, for example after a vCJD risk finding. "
     "Please implement it in services/donors/deferral.py with a migration if needed, and make sure the eligibility check and the reports both understand it.",
     None),
    # scheduler_tz
    ("scheduler_tz", "codex",
     "mobile drive calendar shows slots an hour off, fix render in scheduler/calendar_view.py",
     None),
    ("scheduler_tz", "claude-after-compact",
     "Back to the donor scheduling work from before the summary. The bus crew says the calendar for mobile drives shows times that don't match what's printed on their run sheets. "
     "Can you fix how the calendar view displays slots and add a test around a DST change?",
     None),
    # hemoglobin_units
    ("hemoglobin_units", "claude-tool",
     "Donors at the Brandon clinic are all being deferred for low hemoglobin since we swapped in the new fingerstick devices. Can you check the ingest?",
     ("psql -c \"select donor_id, hb_value, device_model from hb_screens order by created_at desc limit 4\"",
      " donor_id | hb_value | device_model\n----------+----------+-------------\n   883120 |       14 | HemoCue-301\n   883119 |       13 | HemoCue-301\n   883117 |       15 | HemoCue-301\n   883116 |      138 | HemoCue-201\n(4 rows)")),
    ("hemoglobin_units", "codex",
     "add hb threshold check for female donors in eligibility/rules.py",
     None),
    # release_freeze
    ("release_freeze", "codex",
     "ship the router retry fix today, it's friday 4pm, write the deploy steps",
     None),
    ("release_freeze", "claude",
     "The retry patch for the order-routing service is approved and merged. I'd like to roll it to production this afternoon before I leave for the weekend. "
     "Can you prepare the deploy command and the rollback plan, and check whether anything stops us from going now?",
     None),
    # label_printer_dpi
    ("label_printer_dpi", "claude-log",
     "Saskatoon hospital sent this from their receiving scanner verification:\n"
     "```\nVERIFY grade=F symbology=Code128 module=0.191mm min_required=0.25mm\nlabel_template=unit_label_203.zpl printer=ZT411-SKT-02\n```\n"
     "Why would our labels suddenly fail grading, and what should I change in the label templates?",
     None),
    ("label_printer_dpi", "codex",
     "new depot printer labels look blurry and fail grading, fix template selection in labels/render.py",
     None),
    # emergency_release_flag
    ("emergency_release_flag", "claude",
     "During last week's mass-casualty drill, the ED was allowed to take O-neg units without compatibility testing, which is fine, but afterwards the override was still enabled the next morning on that order. "
     "Can you fix the override handling in services/orders/emergency.py so this can't happen, and add tests?",
     None),
    ("emergency_release_flag", "claude-tool",
     "The drill post-mortem found this. What's the right behaviour and can you patch it?",
     ("grep -rn EMERGENCY_UNCROSSMATCHED services/orders",
      "services/orders/emergency.py:22:    flags.enable(\"EMERGENCY_UNCROSSMATCHED\", order_id=order.id)\n"
      "services/orders/emergency.py:23:    # TODO: disable later\n"
      "services/orders/issue.py:57:    if flags.enabled(\"EMERGENCY_UNCROSSMATCHED\", order_id=order.id):")),
    # probe_batch
    ("probe_batch", "codex-tool",
     "excursion detector lagging, check ingest",
     ("grep -c 'lock wait' /var/log/hemalink/coldchain-ingest.log; tail -2 /var/log/hemalink/coldchain-ingest.log",
      "318\n2024-12-01T10:02:11Z INFO ingest flushed rows=4800 table=coldchain.readings_raw took=9.8s\n2024-12-01T10:02:12Z WARN detector lag=41s behind ingest")),
    ("probe_batch", "claude",
     "I'd like to speed up the temperature reading ingest since we're adding 60 new probes at the Regina depot. "
     "My idea is to buffer everything per minute and write it in one big insert in services/coldchain/ingest.py. Can you implement that?",
     None),
    # abo_compat_source
    ("abo_compat_source", "claude",
     "The medical team wants A2 subgroup plasma handling added to the compatibility rules. "
     "I think the table is in lab/compat_table.py, can you add the new rows there and update the tests?",
     None),
    ("abo_compat_source", "codex",
     "add AB plasma to A recipient row in compat table",
     None),
    # barcode_scanner_prefix
    ("barcode_scanner_prefix", "claude-tool",
     "Every unit lookup from the Brandon depot handhelds comes back not found, but typing the number on the keyboard works. Any idea?",
     ("tail -3 /var/log/hemalink/scan.log",
      "2024-10-22T15:01:02Z INFO scan raw='=<W123424123456' parsed_din='=<W123424123456'\n"
      "2024-10-22T15:01:02Z WARN lookup unit-not-found din='=<W123424123456'\n"
      "2024-10-22T15:01:09Z WARN lookup unit-not-found din='=<W123424654321'")),
    ("barcode_scanner_prefix", "codex",
     "rewrite scan parser in labels/scan.py with regex, simpler",
     None),
    # plasma_temp
    ("plasma_temp", "claude-after-compact",
     "Back to the freezer dashboard from before the summary. The design team wants a red breach line drawn on the plasma freezer temperature charts. "
     "Can you add it to dashboards/freezer.py with the right threshold value and a legend entry?",
     None),
    ("plasma_temp", "codex",
     "ffp freezer alert threshold wrong, set it in coldchain/limits.py",
     None),
    # retention_audit
    ("retention_audit", "claude",
     "The database is getting big, so I'd like the nightly cleanup to purge anything older than 10 years across all schemas. "
     "Please update jobs/purge.py and the cron config, and make the retention period configurable.",
     None),
    ("retention_audit", "claude-log",
     "The DBA flagged this plan from last night's purge dry run:\n"
     "```\npurge dry-run: schema=audit_trace table=transfusion_events rows_to_delete=1,204,551 cutoff=2014-12-01\n"
     "purge dry-run: schema=public table=session_log rows_to_delete=88,210 cutoff=2024-09-01\n```\n"
     "Is that expected? Fix the job if not.",
     None),
    # hl7_version
    ("hl7_version", "codex-tool",
     "st brendan rejecting our results msgs, fix",
     ("grep -m2 NACK /var/log/hemalink/hl7-out.log",
      "2024-09-14T08:12:33Z NACK to=STBRENDAN msa=AR err='Unsupported segment BPX in version 2.3'\n"
      "2024-09-14T08:14:01Z NACK to=STBRENDAN msa=AR err='Unsupported segment BPX in version 2.3'")),
    ("hl7_version", "claude",
     "We're onboarding Riverside General next month as a new hospital client. "
     "Please add an outbound message profile for them in services/hl7/profiles.py by copying an existing one, and set up the message header fields properly.",
     None),
    # transport_box_limit
    ("transport_box_limit", "claude",
     "The packing screen at the depot is annoying the courier team because they can't put a ninth bag in the cooler even when it physically fits. "
     "Can you remove that restriction in ui/packing and the backend validation?",
     None),
    ("transport_box_limit", "codex",
     "add max units per box validation to shipping/packing.py",
     None),
    # oncall_channel
    ("oncall_channel", "codex",
     "route new freezer alerts somewhere visible, wire notifier in coldchain/notify.py",
     None),
    ("oncall_channel", "claude-tool",
     "Nobody reacted to a fridge excursion at 3am last night until the morning. Can you see why?",
     ("grep -n channel config/alerts/coldchain.yaml",
      "4:  slack_channel: \"#general-ops\"\n5:  pagerduty_service: null")),
    # test_db_fixture
    ("test_db_fixture", "claude",
     "The new donor search integration tests are flaky because the dataset keeps changing under them. "
     "I was thinking of pointing them at the staging database since it has realistic data. Can you set up the conftest in tests/integration for that?",
     None),
    ("test_db_fixture", "claude-after-compact",
     "Back to the integration tests from before the summary. I need a fixture that gives me a few known donors and units to test the recall flow against. "
     "Where should that data come from, and can you write the fixture?",
     None),
    # irradiated_expiry
    ("irradiated_expiry", "codex",
     "irradiated rbc expiry calc, implement in processing/irradiate.py",
     None),
    ("irradiated_expiry", "claude-log",
     "A hospital reported this unit came back with a later expiry after it was irradiated:\n"
     "```\nunit=W123424556677 product=E0336 expiry_before=2025-01-10 irradiated_at=2024-12-30 expiry_after=2025-01-13\n```\n"
     "That looks wrong to me. What is the rule and can you fix it?",
     None),
)

NULL_TURNS = (
    ("claude", "Please rename the helper fmt_din to format_donation_number across libs/labels and update the call sites. Keep behaviour identical.", None),
    ("codex", "fix typo 'recieved' in ui/packing strings", None),
    ("codex-tool", "fix lint errors",
     ("ruff check services/logistics",
      "services/logistics/courier.py:14:1: F401 [*] `json` imported but unused\nservices/logistics/courier.py:88:89: E501 Line too long (104 > 88)\nFound 2 errors.")),
    ("claude", "Can you write unit tests for the pure function chunked() in libs/util/iter.py? It splits a list into fixed-size pieces; cover empty input and a last partial chunk.", None),
    ("codex", "bump httpx to latest minor in pyproject and relock", None),
    ("claude", "The README's local setup section is confusing. Please reword it to list the steps in order: clone, create venv, install, run make dev. Keep it short.", None),
    ("claude-tool", "Formatting check is failing in CI, can you fix it?",
     ("ruff format --check .",
      "Would reformat: services/donors/api.py\nWould reformat: libs/util/dates.py\n2 files would be reformatted, 311 files already formatted")),
    ("codex", "add type hints to libs/util/strings.py", None),
    ("claude-log", "Got this when running tests locally:\n```\nModuleNotFoundError: No module named 'freezegun'\n```\nIt's in the dev extras I think. How do I fix my env?", None),
    ("claude", "Please sort the entries in docs/glossary.md alphabetically and fix the heading levels so they're consistent.", None),
    ("codex-tool", "make the mypy error go away properly",
     ("mypy libs/util",
      "libs/util/iter.py:9: error: Function is missing a return type annotation  [no-untyped-def]\nFound 1 error in 1 file (checked 6 source files)")),
    ("claude-after-compact", "Back to the cleanup from before the summary. Please also delete the commented-out code blocks in services/logistics/tracking.py; they're dead since the webhook refactor.", None),
)
