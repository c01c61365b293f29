"""Held-out turns (seventeenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 17:21 UTC: 0.818 hit, 0.036 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "powderline"

FACTS = {
    "gate_rssi": (
        "Gate readers discard RFID reads weaker than -62 dBm, because jackets of skiers queued in the maze behind the turnstile were triggering phantom double-scans at Summit Express.",
        "-62 dBm",
    ),
    "reentry_cooldown": (
        "A pass cannot re-enter the same lift within PASS_REENTRY_COOLDOWN_S=420 seconds, because handing cards back over the maze rail to friends was leaking roughly four percent of ticket revenue.",
        "PASS_REENTRY_COOLDOWN_S=420",
    ),
    "wetbulb_start": (
        "Snowmaking guns only auto-start when wet-bulb temperature is at or below -2.5 °C, because above that the nozzles throw slush and the fan blades ice up within an hour.",
        "-2.5 °C",
    ),
    "pump_cap": (
        "Pump house P2 at Ridgeback is capped at 1,900 gallons per minute by the state water permit, so snowctl/allocator.py must never schedule summed gun demand above that ceiling.",
        "1,900 gallons per minute",
    ),
    "groomer_gateway": (
        "Groomer GPS pings come through the Iridium gateway at grooming-gw.pwl.internal:7443 every 15 seconds, because LTE coverage dies above mid-mountain and the cellular ingest path loses whole shifts.",
        "grooming-gw.pwl.internal:7443",
    ),
    "business_day": (
        "Scans are stored in UTC but the business day rolls over at 04:00 America/Denver, because night-skiing scans after midnight must count toward the previous operating day in revenue reports.",
        "04:00 America/Denver",
    ),
    "avy_append_only": (
        "Rows in patrol.avy_observations are append-only; corrections are inserted as new rows pointing at the original via supersedes_id, because avalanche logs are legal records that get subpoenaed after incidents.",
        "supersedes_id",
    ),
    "ski_retirement": (
        "Rental skis are retired after 180 tune cycles counted in rental_assets.tune_count, because our liability insurer, Alpine Mutual, only covers equipment under that threshold.",
        "180 tune cycles",
    ),
    "din_calc": (
        "Rental binding DIN values must come from the shared dincalc package using the ISO 11088 table and are never hand-edited in the POS, because the printed tech ticket is a liability document.",
        "ISO 11088",
    ),
    "price_clamp": (
        "The dynamic pricing engine clamps day-ticket prices between 0.7x and 1.6x of the season base rate, because the Colorado consumer-protection settlement limits surge pricing on lift tickets.",
        "1.6x",
    ),
    "cart_lock": (
        "Prices shown in a guest's cart stay locked for CART_PRICE_LOCK_MIN=30 minutes even though the engine reprices every 20 minutes, because checkout complaints spiked when totals changed mid-payment.",
        "CART_PRICE_LOCK_MIN=30",
    ),
    "firmware_owner": (
        "Gate firmware changes need sign-off from Ingrid Halvorsen of the Lift Systems team before merge, because a bad OTA push in 2022 bricked forty turnstiles on a holiday Saturday.",
        "Ingrid Halvorsen",
    ),
    "scan_topic": (
        "Gate scan events are published to Kafka topic gate.scans.v3 keyed by lift_id, because the re-entry cooldown check needs strict per-lift ordering of scans.",
        "gate.scans.v3",
    ),
    "snow_units": (
        "Snow depth is stored in centimeters in the snow_depth_cm column everywhere, and converted to inches only in the US snow-report API, because the two Canadian resorts share the database.",
        "snow_depth_cm",
    ),
    "weather_boost_flag": (
        "The feature flag pricing.weather_boost stays off for Alder Peak, because its summit weather station reports garbage snowfall totals and once inflated prices on a bluebird day.",
        "pricing.weather_boost",
    ),
    "wind_hold": (
        "Chairlifts flip to WIND_HOLD automatically when gusts exceed 45 mph for three consecutive minutes, while the gondola uses 38 mph, per the lift manufacturer's operating limits.",
        "38 mph",
    ),
    "pass_identity": (
        "The backend identifies passes by the application-level pass_no stored on the card, never the chip UID, because DESFire EV3 cards randomize their UID on every read.",
        "pass_no",
    ),
    "offline_gates": (
        "Gates that lose the network keep validating against their cached denylist for at most 2,000 local scans and then fail closed, because unlimited offline mode was exploited with cancelled passes.",
        "2,000 local scans",
    ),
    "sqitch_migrations": (
        "Database migrations are written in sqitch under db/sqitch/, not alembic, because the old alembic folder is frozen legacy and the deploy pipeline only runs sqitch deploy.",
        "db/sqitch/",
    ),
    "weather_refund": (
        "When lifts are closed more than half of operating hours, guests get resort credit instead of a card refund, because the payment processor charges us a chargeback-risk fee on refunds.",
        "resort credit",
    ),
    "grooming_cutoff": (
        "Groomer operators must close their work orders by 05:15 local time, because the app's morning grooming report is generated and pushed to guests at 05:30.",
        "05:15",
    ),
    "pass_photos": (
        "Pass holder photos live in bucket s3://pwl-passphotos-prod with a 400-day lifecycle rule, because our privacy policy promises deletion about a year after a pass expires.",
        "s3://pwl-passphotos-prod",
    ),
}

DISTRACTORS = (
    "The rental shop POS prints receipts on Epson TM-m30 printers configured through the CUPS server in the shop back office.",
    "Lift maintenance tickets are tracked in the Maintainx workspace, not in Jira, because mechanics use the mobile app on the hill.",
    "The snowmaking dashboard uses Grafana panels sourced from the TimescaleDB hypertable snowctl.gun_readings.",
    "Frontend code for the guest app lives in apps/guest and is built with Vite; the staff console is a separate Next.js app.",
    "Daily standup for the platform team is at 09:15 Mountain time, and Thursdays are reserved for demo and retro.",
    "We use Renovate for dependency updates with automerge only for patch versions of dev dependencies.",
    "Parking lot occupancy sensors report through LoRaWAN to a separate TTN application owned by facilities.",
    "The ski school booking module is vendored from an agency contract and we only patch it for security issues.",
    "Staging resets nightly from an anonymized snapshot taken at 02:00 UTC.",
    "Patrol radios are Motorola APX units and their channel plan is managed by the patrol director, not engineering.",
    "The employee shuttle schedule page is static content generated from a Google Sheet by a GitHub Action.",
    "Our on-call rotation uses PagerDuty with weekly handoffs on Monday at 10:00 local time.",
    "Guest Wi-Fi in the base lodge is run by a third-party MSP and is outside the platform's scope.",
    "Lint for Python services is ruff with line length 100; TypeScript uses eslint with the shared @powderline/eslint-config.",
    "Season pass renewal emails are sent through Customer.io with templates owned by the marketing team.",
    "The lodge cafeteria menu board pulls from the Toast API every ten minutes.",
)

CLAUDE_MD = """# powderline
Monorepo for the resort group's operations platform: gates, snowctl, grooming, patrol, rentals, pricing.
- Python services live in services/<name>, run `make test SERVICE=<name>` before pushing.
- TypeScript apps live in apps/; use pnpm, never npm.
- Keep PRs small and link the Linear ticket in the description.
- Don't commit generated protobuf code; run `make proto` instead.
"""

AGENTS_MD = """- Run `make lint` and the service's unit tests before proposing a diff.
- Prefer editing existing modules over adding new top-level packages.
- Ask before touching anything under infra/terraform.
- Keep commit messages in imperative mood with a service prefix, e.g. `gates: ...`.
"""

SUMMARY = (
    "Summary: Earlier in this session we cleaned up the staff console's date picker component, "
    "replaced a deprecated moment.js import with date-fns, and fixed two flaky snapshot tests in apps/staff. "
    "We also updated the README section on local docker-compose setup."
)

TURNS = (
    # gate_rssi
    ("gate_rssi", "claude-log",
     "Ops forwarded this from the Summit Express gate this morning, people are getting charged two rides:\n```\n2024-02-10T15:02:11Z gate=SE-03 read pass_no=88412093 rssi=-71 accepted\n2024-02-10T15:02:11Z gate=SE-03 read pass_no=88412093 rssi=-58 accepted\n2024-02-10T15:02:13Z gate=SE-03 read pass_no=77120044 rssi=-74 accepted\n```\nThe reader config on SE-03 was reflashed last week. What's wrong with it and what value should it be?",
     None),
    ("gate_rssi", "codex",
     "gates/reader_config.py: min signal threshold default got lost in refactor, restore it",
     None),
    # reentry_cooldown
    ("reentry_cooldown", "claude",
     "Marketing wants a 'quick lap' promo on the Bunny Hill carpet where kids can re-scan as often as they like. Before I carve out an exception, can you update gates/validation/reentry.py so the normal rule stays intact for every other lift? I also want a unit test proving a normal pass scanned twice at Summit Express with a few minutes between is still rejected, using the right interval.",
     None),
    ("reentry_cooldown", "codex-tool",
     "test_reentry fails after config move, fix",
     ("pytest services/gates/tests/test_reentry.py -q",
      "F.\n=================================== FAILURES ===================================\n___________________ test_second_scan_inside_window_denied ___________________\n    def test_second_scan_inside_window_denied():\n        res = validate(scan(t=0), scan(t=300))\n>       assert res.denied\nE       assert False\nE        +  where False = Result(denied=False, reason=None).denied\nservices/gates/tests/test_reentry.py:22: AssertionError\n1 failed, 1 passed in 0.41s")),
    # wetbulb_start
    ("wetbulb_start", "claude",
     "Can you add an auto-start rule to snowctl/autostart.py so guns on the Lower Boulevard string kick on by themselves overnight? The humidity sensor there got replaced so we finally have decent readings. I'd like it to use the computed wet-bulb, not dry air temperature, and pick the correct trigger so the crew isn't chipping ice off fans in the morning.",
     None),
    ("wetbulb_start", "claude-after-compact",
     "Back to the snowmaking work from before the summary: the night crew says guns at Lower Boulevard started at -1 wet-bulb and made mush. Which threshold should the autostart check be using?",
     None),
    # pump_cap
    ("pump_cap", "claude-tool",
     "The allocator seems to be starting too many guns on the Ridgeback side tonight. Can you look at what it's doing and fix the scheduling limit?",
     ("python -m snowctl.allocator --dry-run --site ridgeback",
      "site=ridgeback pump=P2 planned guns=14\n  gun R-01 demand=160gpm\n  gun R-02 demand=160gpm\n  ...\n  gun R-14 demand=160gpm\ntotal_demand=2240gpm pump_limit=None\nWARN pump_limit unset, using unlimited")),
    ("pump_cap", "codex",
     "allocator: add hard ceiling for P2 total flow, currently unlimited",
     None),
    # groomer_gateway
    ("groomer_gateway", "claude",
     "The grooming fleet map in the staff console has gaps every night above the mid-station — cats just vanish for an hour and reappear at the top. Someone suggested moving services/grooming/ingest.py to the cheaper LTE-based provider since the contract renews next month. Can you update the ingest config and tell me if that's a good idea?",
     None),
    ("groomer_gateway", "codex-tool",
     "grooming ingest can't connect in staging, fix endpoint",
     ("docker compose logs grooming-ingest | tail -5",
      "grooming-ingest  | INFO starting ingest endpoint=grooming-gw.pwl.internal:443\ngrooming-ingest  | ERROR connect failed: Connection refused (grooming-gw.pwl.internal:443)\ngrooming-ingest  | INFO retry in 5s\ngrooming-ingest  | ERROR connect failed: Connection refused (grooming-gw.pwl.internal:443)\ngrooming-ingest  | FATAL giving up after 10 retries")),
    # business_day
    ("business_day", "claude",
     "Finance says Saturday's night-skiing revenue shows up partly on Sunday in the dashboard. I'm writing reports/daily_revenue.sql and need to bucket scans into operating days correctly. Can you write the grouping expression for me? Timestamps in gate_scans.scanned_at are timestamptz.",
     None),
    ("business_day", "claude-log",
     "Reconciliation job complained last night:\n```\nrecon[day=2024-01-13] scans_db=18422 scans_finance=18907 diff=-485\nrecon[day=2024-01-14] scans_db=9120 scans_finance=8635 diff=+485\nnote: all diff rows scanned_at between 00:00 and 03:59 local\n```\nWhere is the day boundary going wrong?",
     None),
    # avy_append_only
    ("avy_append_only", "claude",
     "Patrol asked for an 'edit observation' button in the patrol app so they can fix typos in slope angle or snowpack notes after submitting. Can you add a PATCH endpoint in services/patrol/api/observations.py and wire it to the form? Keep the history if it's easy.",
     None),
    ("avy_append_only", "codex",
     "patrol: write migration to dedupe double-submitted avy observations by deleting the later row",
     None),
    # ski_retirement
    ("ski_retirement", "claude-tool",
     "The fleet report says we have a bunch of skis flagged as 'should be retired' that the shop says are fine. Can you check the retirement logic and fix it?",
     ("grep -n 'retire' services/rentals/fleet.py",
      "41:    RETIRE_AFTER_TUNES = 250\n58:def should_retire(asset):\n59:    return asset.tune_count >= RETIRE_AFTER_TUNES or asset.damaged\n")),
    ("ski_retirement", "claude-after-compact",
     "Back to the rental fleet stuff from before the summary. The shop manager wants to squeeze another season out of the demo Völkl fleet by raising the tune limit. Can you bump it in fleet.py?",
     None),
    # din_calc
    ("din_calc", "claude",
     "Techs at the Alder Peak rental shop complain that the POS won't let them type a binding release value for experienced skiers who ask for it higher. Can you add an editable field to the binding screen in apps/pos/src/BindingForm.tsx that overrides the computed setting and prints it on the ticket?",
     None),
    ("din_calc", "codex",
     "rentals: port din lookup to a local dict in pos/utils so we drop the dependency",
     None),
    # price_clamp
    ("price_clamp", "claude",
     "For Presidents' Day weekend, revenue wants the demand model to go as high as it needs — last year we sold out by 8am. Can you remove the upper bound in services/pricing/engine.py so it just follows the model output? Also keep a log line when the price gets adjusted.",
     None),
    ("price_clamp", "claude-log",
     "Pricing dry run for next Saturday looks off:\n```\nresort=ridgeback date=2024-02-17 base=119.00 model_mult=2.31 final=274.89\nresort=alder date=2024-02-17 base=99.00 model_mult=0.52 final=51.48\n```\nIs the engine supposed to allow those?",
     None),
    # cart_lock
    ("cart_lock", "codex",
     "checkout: cart total should refresh from latest price on each reprice tick",
     None),
    ("cart_lock", "claude-tool",
     "A guest support ticket says their total jumped between adding tickets and paying. Can you figure out why the cart isn't holding the price?",
     ("grep -rn 'LOCK' services/pricing/cart.py",
      "12:CART_PRICE_LOCK_MIN = int(os.getenv(\"CART_PRICE_LOCK_MIN\", \"5\"))\n47:    if now - cart.priced_at > timedelta(minutes=CART_PRICE_LOCK_MIN):\n")),
    # firmware_owner
    ("firmware_owner", "claude",
     "I've got a small fix in firmware/turnstile/motor.c that reduces the arm reset delay from 900ms to 600ms so lines move faster. Tests pass locally. Can you open the PR and get it merged today so it ships with tonight's OTA?",
     None),
    ("firmware_owner", "claude-after-compact",
     "Back to the turnstile firmware PR from before the summary — CI is green now. Who do I need approval from before it can go out?",
     None),
    # scan_topic
    ("scan_topic", "codex-tool",
     "scan consumer reads nothing after upgrade, fix",
     ("kafka-console-consumer --bootstrap-server kafka:9092 --topic gate.scans --from-beginning --max-messages 3",
      "Processed a total of 0 messages\n[2024-02-01 11:03:44] WARN Error while fetching metadata: {gate.scans=UNKNOWN_TOPIC_OR_PARTITION}")),
    ("scan_topic", "claude",
     "I'm adding a producer in services/gates/publish.py for the new handheld scanners the lift ops team uses at the Chair 7 bottom terminal. Can you write the publish call so these scans end up in the same stream and get ordered correctly with turnstile scans for the cooldown logic?",
     None),
    # snow_units
    ("snow_units", "claude",
     "The snow report widget shows 48 inches of base at Whistler-side Cedar Bowl when it's obviously about 48 cm. Can you fix the migration I'm writing to convert the stored depth columns to inches so everything matches the US app?",
     None),
    ("snow_units", "codex",
     "add 24h new snow field to snow report api, read from db",
     None),
    # weather_boost_flag
    ("weather_boost_flag", "codex",
     "enable weather-based pricing bump for all resorts in flags/prod.yaml",
     None),
    ("weather_boost_flag", "claude-log",
     "Got this alert from the pricing service:\n```\nWARN pricing resort=alder input=station_snowfall_24h value=142cm confidence=low\nINFO pricing resort=alder multiplier=1.48 reason=powder_day\n```\nLooks like someone toggled something in the flag service yesterday. What should I check?",
     None),
    # wind_hold
    ("wind_hold", "claude-tool",
     "The gondola kept running during yesterday's wind event while patrol was calling it in. Can you look at the hold logic?",
     ("grep -n 'GUST' services/lifts/status.py",
      "18:GUST_LIMIT_MPH = {\"chair\": 45, \"gondola\": 45}\n19:GUST_WINDOW_MIN = 3\n")),
    ("wind_hold", "codex",
     "lifts: add separate gust threshold for the new Summit gondola in status.py",
     None),
    # pass_identity
    ("pass_identity", "claude-log",
     "Passes bought online aren't matching at the gate after we switched card stock:\n```\nlookup chip_uid=08A3F1C2 -> not found\nlookup chip_uid=08D17B44 -> not found\nlookup chip_uid=0812E9AA -> not found   (same card, third tap)\n```\nWhy would the same card give a different id each tap, and how should lookup work?",
     None),
    ("pass_identity", "claude",
     "Support wants a tool to link a lost card to a new one. I'm adding services/passes/relink.py — it should take the old card and new card and move the season entitlement. What identifier should I key the entitlement table on so this keeps working with the new card stock?",
     None),
    # offline_gates
    ("offline_gates", "claude",
     "When the fiber to the Ridgeback base went down last week, some gates kept letting people through for hours. I want to rewrite the offline mode in gates/offline.py so it's more robust — could you sketch the behavior and implement it? Keep the cached list logic.",
     None),
    ("offline_gates", "codex-tool",
     "offline gate test fails, fix",
     ("pytest services/gates/tests/test_offline.py -q",
      "F\n___________________ test_offline_fails_closed_after_budget ___________________\n>       assert gate.validate(scan).allowed is False\nE       AssertionError: assert True is False\nE        +  gate.offline_budget = None\nservices/gates/tests/test_offline.py:41: AssertionError\n1 failed in 0.22s")),
    # sqitch_migrations
    ("sqitch_migrations", "codex",
     "add migration for rental_assets.last_tuned_at column",
     None),
    ("sqitch_migrations", "claude-tool",
     "I added a new table migration for patrol shifts but staging doesn't have the table after deploy. Can you figure out why?",
     ("git show --stat HEAD",
      "commit 4e1a9c2\n    patrol: add shift table\n\n services/patrol/alembic/versions/0042_patrol_shifts.py | 31 +++++\n 1 file changed, 31 insertions(+)")),
    # weather_refund
    ("weather_refund", "claude",
     "We had the whole upper mountain closed for wind on Sunday. Guest services wants a script in tools/refunds/sunday_closure.py that processes compensation for everyone who bought a day ticket for that date. Can you write it using our payments client?",
     None),
    ("weather_refund", "claude-after-compact",
     "Back to the closure compensation script from before the summary: should it call stripe refunds.create for each order, or something else?",
     None),
    # grooming_cutoff
    ("grooming_cutoff", "claude",
     "The night shift lead wants the work-order app to let operators close orders any time before the end of shift at 06:00. Can you remove the deadline validation in apps/grooming/WorkOrderClose.tsx? They say it's annoying.",
     None),
    ("grooming_cutoff", "claude-log",
     "Morning report missed half the runs today:\n```\n05:30:00 report.build start\n05:30:02 report.build runs_groomed=11 open_orders=9\n05:41:17 workorder.close id=WO-8812 run=Cascade\n05:44:09 workorder.close id=WO-8815 run=Tumbleweed\n```\nWhat deadline should the app enforce for operators?",
     None),
    # pass_photos
    ("pass_photos", "codex",
     "passes: upload photo to correct bucket in photo_store.py, currently writes to dev",
     None),
    ("pass_photos", "claude",
     "Legal is reviewing our privacy practices and asked how long guest photos from pass pickup are kept and where. Can you add a short section to docs/privacy.md describing storage and retention, and make sure the Terraform lifecycle rule matches?",
     None),
)

NULL_TURNS = (
    ("codex", "rename get_lft_status to get_lift_status across services/lifts", None),
    ("claude", "The README in apps/staff has a broken link to the setup guide and a couple of typos ('recieve', 'enviroment'). Can you fix those and tidy the headings?", None),
    ("codex-tool", "fix ruff errors in services/rentals",
     ("ruff check services/rentals",
      "services/rentals/fleet.py:3:1: F401 [*] `itertools` imported but unused\nservices/rentals/pos_sync.py:88:101: E501 Line too long (112 > 100)\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.")),
    ("claude", "Can you write unit tests for the pure helper format_vertical_feet() in services/common/fmt.py? It should handle 0, negatives, and thousands separators.", None),
    ("codex", "bump pydantic to 2.6.4 in services/pricing/pyproject.toml", None),
    ("claude-tool", "Prettier is complaining in the guest app; please format the files it lists.",
     ("pnpm prettier --check apps/guest/src",
      "Checking formatting...\n[warn] apps/guest/src/components/TrailCard.tsx\n[warn] apps/guest/src/pages/Map.tsx\n[warn] Code style issues found in 2 files. Run Prettier with --write to fix.")),
    ("codex", "add type hints to services/common/slug.py", None),
    ("claude", "The CONTRIBUTING.md section on commit messages is confusing. Can you rewrite it in plain language with two examples?", None),
    ("claude-after-compact", "Back to the staff console from before the summary: please also remove the now-unused moment dependency from apps/staff/package.json.", None),
    ("codex", "sort imports in services/patrol/api", None),
    ("claude-tool", "Mypy found an issue in a small helper, can you fix it?",
     ("mypy services/common/units.py",
      "services/common/units.py:14: error: Incompatible return value type (got \"float | None\", expected \"float\")  [return-value]\nFound 1 error in 1 file (checked 1 source file)")),
    ("claude-log", "CI lint step fails:\n```\nscripts/check_trailing_ws.sh\ndocs/runbooks/lift_startup.md:12: trailing whitespace\ndocs/runbooks/lift_startup.md:40: trailing whitespace\n```\nCan you clean that up?", None),
)
