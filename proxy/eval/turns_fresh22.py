"""Sealed held-out turns (twenty-second half): written without reading recall's code, rules or results. Scored once."""
from __future__ import annotations

PROJECT = "ferrymate"

FACTS = {
    "seat_hold": (
        "Seat holds in ticketing-api expire after 9 minutes, because the card payment session opened at checkout times out at 10 minutes and we need a margin to release inventory first.",
        "9 minutes",
    ),
    "feed_timezone": (
        "The harbour authority timetable feed sends departure times in Europe/Helsinki local time with no offset, so schedule-sync must localize them before writing sailings.departs_at_utc.",
        "Europe/Helsinki",
    ),
    "fuel_units": (
        "The fuel_flow field in vessel telemetry frames is litres per hour as sent by the engine PLC, and we never rescale it at ingest because the chief engineers compare it against paper logs.",
        "litres per hour",
    ),
    "berth_gap": (
        "Port-api rejects berth bookings that leave less than a 25-minute gap between two vessels at the same berth, because mooring crews need that time to release lines and reposition fenders.",
        "25-minute",
    ),
    "lane_metres": (
        "Vehicle deck capacity is tracked in lane metres, with a standard car counted as 5.5 lane metres and a car with caravan as 12, because vehicle counts alone overfilled the deck on summer sailings.",
        "5.5 lane metres",
    ),
    "mqtt_host": (
        "Ships publish telemetry to mqtt.fleet.ferrymate.internal on port 8883 with mutual TLS client certificates, because the satellite link provider blocks unauthenticated plaintext MQTT on 1883.",
        "mqtt.fleet.ferrymate.internal",
    ),
    "refund_ledger": (
        "Refunds are recorded as new rows in ticketing.refund_ledger and never by editing bookings.amount, because finance reconciles the daily settlement file against ledger rows only.",
        "refund_ledger",
    ),
    "berth_owner": (
        "Any change to berth pricing rules needs sign-off from Ingrid Solberg of the Harbour Ops team, because berth fees are written into the port authority contracts she negotiates.",
        "Ingrid Solberg",
    ),
    "surge_flag": (
        "Dynamic fares are gated by the feature flag pricing.surge_v2, which stays off for all Åland routes because the public service contract there fixes ticket prices.",
        "pricing.surge_v2",
    ),
    "manifest_lead": (
        "manifest-sender pushes the passenger manifest to the coastguard gateway 40 minutes before departure, because the legal deadline is 30 minutes and the gateway often needs retries.",
        "40 minutes",
    ),
    "ais_poll": (
        "AIS position polling against the MarineLink API runs every 15 seconds per vessel; faster polling got our key throttled for a whole day last March.",
        "15 seconds",
    ),
    "qr_key": (
        "Boarding QR codes are signed with the Ed25519 key id bq-2024-02, and pier gate scanners cache the public key offline, so rotating it requires pushing scanner config first.",
        "bq-2024-02",
    ),
    "routes_config": (
        "Route definitions live in config/routes/<code>.yaml and are read only at startup, so a route edit needs a rolling restart of schedule-api because hot reload was removed after a partial-read outage.",
        "config/routes/",
    ),
    "migration_window": (
        "Database migrations on the booking cluster run only in the 02:00-04:00 UTC window, because that is the only time no sailing is open for check-in on any route.",
        "02:00-04:00 UTC",
    ),
    "fare_minor": (
        "Fare amounts are stored as integers in fares.amount_minor together with an ISO currency code, because SEK and EUR routes share tables and float prices caused rounding drift in settlements.",
        "amount_minor",
    ),
    "wave_limit": (
        "Sailings for vessels shorter than 80 m are auto-flagged for cancellation review when forecast significant wave height exceeds 3.5 m, per the fleet safety management system.",
        "3.5 m",
    ),
    "child_age": (
        "Child fare eligibility uses the passenger's age on the sailing date rather than the booking date, because customers booking months ahead were getting free tickets for seven-year-olds.",
        "sailing date",
    ),
    "telemetry_rollup": (
        "Raw telemetry stays 30 days in the telemetry_raw hypertable and is then only available in the telemetry_1m continuous aggregate, so long-range reports must query the rollup.",
        "telemetry_1m",
    ),
    "tallinn_header": (
        "The Port of Tallinn berth SOAP API rejects calls without the X-Agent-Code header set to our agent code FMT01, returning a generic fault that looks like an auth error.",
        "X-Agent-Code",
    ),
    "cabin_oversell": (
        "Cabin inventory may be oversold by at most 2% on overnight sailings, while deck seats are never oversold, because the passenger certificate caps souls on board, not cabins.",
        "2%",
    ),
    "alert_team": (
        "Vessel telemetry alerts route to the Opsgenie team fleet-sre rather than the platform rotation, because only fleet-sre has the bridge satellite phone numbers.",
        "fleet-sre",
    ),
    "webhook_dedupe": (
        "Payment provider webhooks are deduplicated by pspReference in payments.webhook_seen for seven days, because the provider retries notifications and double-confirmed bookings once issued two tickets.",
        "pspReference",
    ),
}

DISTRACTORS = (
    "The customer app uses React Native 0.73 and the release train ships to both stores every second Tuesday.",
    "Crew rostering is handled by an external vendor system and ferrymate only consumes its nightly CSV export.",
    "Onboard shop sales are synced from the vessel POS terminals whenever the ship is back in port Wi-Fi range.",
    "The marketing site is a separate Next.js repo owned by the digital team and is not deployed from this monorepo.",
    "We use Renovate for dependency updates, grouped weekly, and the PR author is the renovate bot account.",
    "Loyalty points are calculated by the partner airline programme; we send them a booking event and nothing else.",
    "Staging data is refreshed from an anonymised production snapshot every Sunday night.",
    "The schedule-api OpenAPI spec is generated from code and published to the internal developer portal on merge.",
    "Cabin photos and deck plans are stored in the media bucket and served through the CDN with one-day caching.",
    "The kiosk terminals at the Stockholm terminal run a locked-down Chromium in kiosk mode pointing at the web check-in.",
    "Integration tests for the booking flow use a Docker Compose stack with Postgres 15 and a fake payment provider.",
    "Pet bookings are limited to designated pet cabins, and that limit is configured per vessel in the admin UI.",
    "Our Python services are formatted with ruff format and type-checked with mypy in strict mode on CI.",
    "Group bookings over 20 passengers go to the sales desk queue and are not bookable online.",
    "The monthly fleet emissions report is generated by the sustainability team from their own data warehouse.",
    "Translations for the booking UI live in Lokalise, with Finnish, Swedish, Estonian and English as required locales.",
)

CLAUDE_MD = """# ferrymate monorepo
- Services: ticketing-api, schedule-api, port-api, telemetry-ingest, manifest-sender (Python 3.12, FastAPI).
- Run `make test SERVICE=<name>` before proposing changes; CI runs the same target.
- Database access goes through each service's `repo/` layer; no raw SQL in handlers.
- Shared libraries live in `libs/`; bump their version in `pyproject.toml` when changing them.
- Ask before touching anything under `infra/` or `deploy/`.
"""

AGENTS_MD = """- Keep PRs small and scoped to one service; mention the service in the PR title.
- Use `uv run` for all Python commands; do not install packages globally.
- Add or update tests alongside every behavioural change.
- Never commit generated files from `build/` or `.cache/`.
"""

SUMMARY = (
    "Summary: Earlier in this session we cleaned up the onboard shop CSV importer, replaced its ad-hoc date parsing with a shared helper, "
    "and fixed two flaky tests in the POS sync module. We also updated the README section on running the Docker Compose stack locally."
)

TURNS = (
    # seat_hold
    ("seat_hold", "claude",
     "Product wants to give people more time at checkout because the Finnish bank redirect is slow. Can you bump the hold duration in ticketing-api/holds/service.py to 15 minutes and update the expiry job in ticketing-api/jobs/release_holds.py to match? Also tidy up the log line there, it prints the whole hold object.",
     None),
    ("seat_hold", "codex-tool",
     "seats show sold out then come back after checkout fails, check release job",
     ("grep -n 'expired' logs/ticketing-api-2024-06-11.log | tail -4",
      "14:02:11 WARN payment_session ps_8812 expired before hold release (hold_id=h_55120 age=612s)\n14:02:11 INFO seat 14C returned to pool sailing=HEL-TLL-0730\n14:05:40 WARN payment_session ps_8830 expired before hold release (hold_id=h_55141 age=605s)\n14:05:40 INFO seat 22A returned to pool sailing=HEL-TLL-0730")),
    # feed_timezone
    ("feed_timezone", "claude-log",
     "Timetable sync ran last night and now the summer departures are all off by a few hours in the app. Here's what the importer logged:\n```\n2024-03-31T01:00:04Z schedule-sync INFO parsed 412 rows from hafeed_2024-03-31.xml\n2024-03-31T01:00:05Z schedule-sync INFO upsert sailing HEL-TLL-0730 departs_at_utc=2024-04-02T07:30:00+00:00\n2024-03-31T01:00:05Z schedule-sync INFO upsert sailing HEL-STO-1700 departs_at_utc=2024-04-02T17:00:00+00:00\n```\nWhat's wrong with the conversion?",
     None),
    ("feed_timezone", "codex",
     "parse_departure in schedule_sync/feed.py uses datetime.fromisoformat directly, make it correct",
     None),
    # fuel_units
    ("fuel_units", "claude",
     "The new fleet efficiency dashboard shows fuel consumption that looks 60 times too high compared to what the engineers expect. I was going to divide fuel_flow by 60 in telemetry-ingest/normalize.py so it's per minute like the other rates. Can you make that change and adjust the unit tests?",
     None),
    ("fuel_units", "codex-tool",
     "chief eng says panel numbers dont match the logbook, find why",
     ("jq '.frames[0]' samples/mv_aurora_frame.json",
      "{\n  \"vessel\": \"MV Aurora\",\n  \"ts\": \"2024-05-02T08:14:00Z\",\n  \"sog\": 17.2,\n  \"fuel_flow\": 1840.5,\n  \"main_engine_rpm\": 512\n}")),
    # berth_gap
    ("berth_gap", "claude-tool",
     "A harbour agent says they can't book berth B3 in Turku for 10:40 even though the previous ship leaves at 10:20. Is port-api being buggy or is that intended? Have a look and tell me what to answer them.",
     ("curl -s -X POST localhost:8040/berths/TKU-B3/bookings -d '{\"vessel\":\"MS Linnea\",\"from\":\"2024-06-14T10:40:00Z\",\"to\":\"2024-06-14T12:00:00Z\"}'",
      "{\"error\":\"booking_conflict\",\"detail\":\"slot overlaps protected interval of booking bk_7731\",\"status\":409}")),
    ("berth_gap", "claude-after-compact",
     "Back to the berth calendar work from before the summary: the new drag-and-drop UI should only let planners drop a vessel where the server will accept it. What spacing should the client enforce between consecutive bookings?",
     None),
    # lane_metres
    ("lane_metres", "codex",
     "vehicle deck shows 40% free on HEL-TLL-1700 but loaders say its full, check capacity calc in fares/deck.py",
     None),
    ("lane_metres", "claude",
     "We're adding a 'motorhome' vehicle category to the booking form. Could you add it to the enum in ticketing-api/models/vehicle.py and wire it into the deck availability check so the right amount of space gets reserved? Motorhomes are roughly double a normal car in length.",
     None),
    # mqtt_host
    ("mqtt_host", "claude-tool",
     "The new vessel gateway on MV Stella isn't delivering any frames. Can you figure out what's wrong with its config?",
     ("cat deploy/vessels/stella/gateway.env && tail -3 /var/log/fm-gateway.log",
      "MQTT_HOST=telemetry.ferrymate.io\nMQTT_PORT=1883\nMQTT_TLS=false\nVESSEL_ID=stella\n2024-06-01T09:12:44Z fm-gateway ERROR connect failed: connection reset by peer\n2024-06-01T09:13:14Z fm-gateway ERROR connect failed: connection reset by peer\n2024-06-01T09:13:44Z fm-gateway ERROR connect failed: connection reset by peer")),
    ("mqtt_host", "codex",
     "write the docker-compose override for the telemetry simulator so it publishes like a real ship does",
     None),
    # refund_ledger
    ("refund_ledger", "claude",
     "Customer service needs a 'partial refund' button in the admin tool for when a cabin upgrade is cancelled. The simplest thing seems to be subtracting the upgrade price from the booking total in admin/api/bookings.py. Can you implement that endpoint and a small test?",
     None),
    ("refund_ledger", "claude-log",
     "Finance pinged us about the settlement check failing this morning:\n```\nrecon 2024-06-09 FAIL: settlement total 1,204,330.00 EUR vs computed 1,203,910.00 EUR (diff 420.00)\n  unmatched booking BK-99120 amount changed 2024-06-08T16:22Z by admin-svc, no matching entry\n  unmatched booking BK-99184 amount changed 2024-06-08T17:05Z by admin-svc, no matching entry\n```\nAny idea what admin-svc did wrong there?",
     None),
    # berth_owner
    ("berth_owner", "codex",
     "raise weekend berth fee multiplier to 1.3 in port_api/pricing/rules.py and open the pr",
     None),
    ("berth_owner", "claude-after-compact",
     "Back to the port pricing refactor from before the summary. I've got the new tiered night-rate rules ready in port-api; who needs to approve this before we merge it?",
     None),
    # surge_flag
    ("surge_flag", "claude",
     "Revenue management wants demand-based pricing everywhere starting next month. Can you enable the dynamic pricing for all routes in config/flags/production.yaml and remove the per-route exceptions so it's simpler? The exception list looks like leftover cruft.",
     None),
    ("surge_flag", "codex-tool",
     "mariehamn fares jumped on sunday, why",
     ("grep -rn 'MHQ' config/flags/production.yaml; git log -1 --format='%h %an %s' -- config/flags/production.yaml",
      "config/flags/production.yaml:41:      # MHQ routes excluded (see contract)\n7c1e2af Jonas Berg flags: simplify route exclusions")),
    # manifest_lead
    ("manifest_lead", "claude-log",
     "Coastguard emailed about late manifests on two evening departures. The sender logged:\n```\n18:21:00 manifest-sender INFO scheduling push for HEL-STO-1900 at T-20m\n18:40:02 manifest-sender WARN gateway 503, retry 1/5 in 120s\n18:42:03 manifest-sender WARN gateway 503, retry 2/5 in 240s\n18:46:05 manifest-sender INFO accepted HEL-STO-1900 (receipt CG-77120)\n```\nWhere did the T-20m come from and what should it be?",
     None),
    ("manifest_lead", "claude-tool",
     "Someone changed the manifest cron recently and I'm not sure it's right. Can you check the schedule and fix it if needed?",
     ("git diff HEAD~1 -- manifest-sender/schedule.py",
      "-LEAD_TIME = timedelta(minutes=40)\n+LEAD_TIME = timedelta(minutes=30)  # align with regulation")),
    # ais_poll
    ("ais_poll", "codex",
     "positions on the live map lag, set ais poller interval to 3s in telemetry-ingest/ais.py",
     None),
    ("ais_poll", "claude-log",
     "The AIS poller started failing in the staging load test:\n```\nWARN ais.poller HTTP 429 from api.marinelink.example rate=vessel:MV_AURORA\nWARN ais.poller HTTP 429 from api.marinelink.example rate=vessel:MS_LINNEA\nERROR ais.poller key suspended: retry-after 86400\n```\nThe test harness had 40 vessels polling. What should I change so this doesn't hit production?",
     None),
    # qr_key
    ("qr_key", "claude",
     "Security asked us to rotate the boarding pass signing key this quarter. I've generated a new keypair and put it in Vault. Can you switch ticketing-api/boarding/sign.py to the new key and deploy it tomorrow morning? Anything I should watch out for?",
     None),
    ("qr_key", "codex-tool",
     "gate scanners at vaasa reject every boarding pass since deploy",
     ("tail -3 logs/gate-scanner-vaa-02.log",
      "07:12:09 scan REJECT sig_invalid kid=bq-2024-06 cached_kids=[bq-2024-02]\n07:12:31 scan REJECT sig_invalid kid=bq-2024-06 cached_kids=[bq-2024-02]\n07:13:02 scan REJECT sig_invalid kid=bq-2024-06 cached_kids=[bq-2024-02]")),
    # routes_config
    ("routes_config", "claude-after-compact",
     "Back to the new Turku–Mariehamn route from before the summary. I've added its yaml file and merged it, but the route still doesn't show up in schedule-api responses. What did I miss?",
     None),
    ("routes_config", "codex",
     "add summer-only route VAA-UME, where do route defs go",
     None),
    # migration_window
    ("migration_window", "claude",
     "I have an alembic migration that adds an index on bookings.sailing_id; it's urgent because the check-in query is slow. Can you run it against the production booking cluster right after lunch today? The script is ops/migrations/2024_06_add_idx.py.",
     None),
    ("migration_window", "claude-tool",
     "The deploy pipeline refused to run my migration step. Can you see why and get it through?",
     ("ci logs deploy-prod --job migrate --tail 4",
      "[migrate] target=booking-cluster-prod\n[migrate] now=2024-06-12T13:41:07Z\n[migrate] guard: outside permitted window, aborting\n[migrate] exit 3")),
    # fare_minor
    ("fare_minor", "codex",
     "add price column for the new seat upgrade table, migration + model",
     None),
    ("fare_minor", "claude-log",
     "A settlement test is flaky on the SEK route pricing:\n```\nFAILED tests/test_settlement.py::test_sek_route_total\nAssertionError: assert 1349.9999999999998 == 1350.0\n  fares = [449.95, 449.95, 450.1]\n```\nCan you fix it? I was thinking of just rounding in the assertion.",
     None),
    # wave_limit
    ("wave_limit", "claude-after-compact",
     "Back to the weather integration from before the summary. The forecast feed now gives us significant wave height per route; can you write the rule in ops-planner/weather/rules.py that decides which sailings get flagged for cancellation review?",
     None),
    ("wave_limit", "codex-tool",
     "why did tomorrows MS Linnea run get flagged but Aurora didnt, same route",
     ("psql -c \"select vessel, length_m, hs_forecast_m, flagged from weather_review where sailing_date='2024-10-03' and route='TKU-MHQ'\"",
      " vessel    | length_m | hs_forecast_m | flagged\n-----------+----------+---------------+---------\n MS Linnea |    68.0  |          3.8  | t\n MV Aurora |   136.0  |          3.8  | f")),
    # child_age
    ("child_age", "claude",
     "There's a ticket saying families who booked in January for a July trip got child prices for kids who turned 6 in spring, and now the gate staff are arguing with them. Can you look at ticketing-api/fares/passenger.py and fix the age check? Also add a test with a birthday between booking and travel.",
     None),
    ("child_age", "codex",
     "age_at() helper in fares/passenger.py, which date should it take",
     None),
    # telemetry_rollup
    ("telemetry_rollup", "claude-tool",
     "The quarterly engine-hours report came out almost empty for January and February. Can you check the report query and fix it?",
     ("psql -f reports/engine_hours.sql -v from=2024-01-01 -v to=2024-03-31",
      " month   | vessel    | engine_hours\n---------+-----------+-------------\n 2024-03 | MV Aurora |       412.5\n 2024-03 | MS Linnea |       389.0\n(2 rows)")),
    ("telemetry_rollup", "claude-after-compact",
     "Back to the yearly fuel trend chart from before the summary. Which table should the backend query for twelve months of data per vessel?",
     None),
    # tallinn_header
    ("tallinn_header", "claude-log",
     "Our new Tallinn berth client keeps failing, but the credentials are definitely right:\n```\nzeep.exceptions.Fault: Server was unable to process request. ---> Access denied\n  at port_api/clients/tallinn.py:88 in reserve_berth\n```\nThe same username and password work in their web portal. What's going on?",
     None),
    ("tallinn_header", "claude-tool",
     "Can you compare our Tallinn client with the one ops wrote in the old scripts repo? Theirs worked, ours doesn't.",
     ("diff legacy/tallinn_reserve.py port_api/clients/tallinn.py",
      "12,13c12\n<     headers = {\"SOAPAction\": \"ReserveBerth\",\n<                \"X-Agent-Code\": AGENT}\n---\n>     headers = {\"SOAPAction\": \"ReserveBerth\"}")),
    # cabin_oversell
    ("cabin_oversell", "codex",
     "apply the 5% overbooking factor to all inventory types in inventory/allocate.py",
     None),
    ("cabin_oversell", "claude",
     "No-shows on the Helsinki–Stockholm night boats cost us a lot of empty cabins. Revenue wants to sell more than we have, like airlines do. Can you add an overbooking setting to inventory/allocate.py and propose a sensible default for both cabins and the reclining seats?",
     None),
    # alert_team
    ("alert_team", "codex-tool",
     "engine overheat alert on aurora last night went nowhere, check routing",
     ("grep -n -A3 'engine_temp_high' monitoring/alerts/telemetry.yaml",
      "57:  - alert: engine_temp_high\n58:    expr: max_over_time(main_engine_temp_c[5m]) > 95\n59:    labels:\n60:      opsgenie_team: platform-oncall")),
    ("alert_team", "claude",
     "I'm adding a new alert for when a vessel stops sending telemetry for more than ten minutes. Can you write the rule in monitoring/alerts/telemetry.yaml, including the routing labels, and a short runbook entry in docs/runbooks/telemetry-gap.md?",
     None),
    # webhook_dedupe
    ("webhook_dedupe", "codex-tool",
     "customer got two tickets for one payment, see logs",
     ("grep 'BK-88102' logs/payments-webhook.log",
      "11:02:13 webhook AUTHORISATION psp=8815720193 booking=BK-88102 -> confirmed, tickets issued\n11:02:44 webhook AUTHORISATION psp=8815720193 booking=BK-88102 -> confirmed, tickets issued")),
    ("webhook_dedupe", "claude",
     "I'm rewriting payments/webhooks.py to make it async and dropped the old helper that looked things up in a table before processing because it seemed slow. Can you review my branch and tell me if anything important is missing before I merge?",
     None),
)

NULL_TURNS = (
    ("codex", "rename get_sail() to get_sailing() in schedule_api/repo.py and update callers", None),
    ("claude", "The README for port-api has a typo in the setup section ('postgress') and the curl example uses an old port. Can you fix the wording and make the example consistent with the rest of the doc?", None),
    ("codex-tool", "fix the lint errors in telemetry-ingest",
     ("uv run ruff check telemetry-ingest",
      "telemetry-ingest/normalize.py:3:1: F401 [*] `math` imported but unused\ntelemetry-ingest/ais.py:57:89: E501 Line too long (104 > 88)\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.")),
    ("claude", "Please write unit tests for libs/text/slugify.py. It turns vessel names like 'MS Linnéa II' into url slugs; cover accents, spaces and roman numerals.", None),
    ("codex", "bump httpx to 0.27 in ticketing-api pyproject and regen the lockfile", None),
    ("claude-tool", "This test started failing after I refactored the duration formatter. Can you fix it?",
     ("uv run pytest libs/timefmt/tests/test_duration.py -q",
      "F.\nFAILED libs/timefmt/tests/test_duration.py::test_hours_minutes - AssertionError: assert '2h5m' == '2h 05m'\n1 failed, 1 passed in 0.11s")),
    ("claude-after-compact", "Back to the CSV importer from before the summary: can you add type hints to the remaining functions in pos_sync/importer.py and make mypy happy?", None),
    ("codex", "sort imports and format schedule_api/ with ruff format", None),
    ("claude-log", "Getting this when running the docs build locally:\n```\nWARNING: document isn't included in any toctree: docs/runbooks/old-pos-sync.rst\nbuild succeeded, 1 warning.\n```\nCan you either add it to the index or delete it if it's obsolete? It describes the old POS sync we removed.", None),
    ("codex-tool", "ci says pyproject invalid, fix",
     ("uv lock --check",
      "error: Failed to parse `pyproject.toml`\n  Caused by: TOML parse error at line 14, column 1\n   |\n14 | dependencies = [\"fastapi>=0.110\" \"pydantic>=2.6\"]\n   |                                   ^\n  expected `,` or `]`")),
    ("claude", "Can you extract the duplicated haversine distance code in telemetry-ingest/ais.py and ops-planner/geo.py into a shared function in libs/geo/distance.py with a couple of tests?", None),
    ("codex", "change the log format in libs/logging/setup.py to include the module name", None),
)
