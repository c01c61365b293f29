"""Held-out turns (thirteenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 11:51 UTC: 0.568 hit, 0.143 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "brewhouse"

FACTS = {
    "fermenter_temp_tenths": (
        "Fermenter telemetry from the FV-series tanks reports temperature as integers in tenths of a degree Celsius (187 means 18.7 C), because the PLC gateway only emits int16 registers; divide by 10 before comparing against recipe setpoints.",
        "tenths of a degree Celsius",
    ),
    "excise_round_monthly": (
        "Excise removals are rounded to two decimal barrels only on the monthly total, never per keg line, because the 2022 TTB audit found a 0.8 bbl overstatement caused by per-line rounding.",
        "0.8 bbl overstatement",
    ),
    "keg_deposit_cents": (
        "Keg deposits ($30 half-barrel, $20 sixtel) are stored as integers in keg_deposits.amount_cents, because float amounts caused penny drift between the deposit ledger and the distributor statements.",
        "keg_deposits.amount_cents",
    ),
    "route_dock_cutoff": (
        "Every delivery route must return to the Eastside warehouse by 15:00, enforced by DOCK_CUTOFF in routing/constraints.py, because the loading dock closes at 3pm under the city's residential noise permit.",
        "DOCK_CUTOFF",
    ),
    "pos_offline_idempotency": (
        "The taproom POS buffers sales in local SQLite when the network drops and replays them with idempotency keys shaped tap-<terminal>-<seq>, because a replay without keys once double-charged 40 customers at the Portland taproom.",
        "tap-<terminal>-<seq>",
    ),
    "qc_abv_tolerance": (
        "A batch whose lab ABV differs from the label claim by more than 0.3 percentage points is blocked from release, because that is the TTB labeling tolerance for malt beverages and relabeling a packaged run costs days.",
        "0.3 percentage points",
    ),
    "age_check_needs_review": (
        "For online orders, an AgeChecker result of needs_review is treated as a hard fail, not a soft pass, because the state liquor board fined us after a review-status order shipped to a 19-year-old.",
        "needs_review",
    ),
    "recipe_versions_immutable": (
        "A brew recipe becomes immutable once any batch references it; edits insert a new recipe_versions row instead, because excise and QC records must point at the exact grain bill that was brewed.",
        "recipe_versions row",
    ),
    "telemetry_downsample": (
        "Raw tank telemetry is kept at 10-second resolution for 14 days in TimescaleDB and then downsampled to 5-minute averages, because the telemetry hypertable was growing 40 GB a week.",
        "40 GB a week",
    ),
    "distributor_order_cutoff": (
        "Distributor orders received after Wednesday 17:00 Central roll into the following week's allocation, because packaging runs on Thursday morning and needs a locked keg and case count.",
        "Wednesday 17:00 Central",
    ),
    "leased_keg_prefix": (
        "Kegs whose RFID tag starts with KX belong to the leased pool from KegSource and must never be charged a deposit, because the lessor bills distributors directly and double deposits triggered chargebacks.",
        "leased pool from KegSource",
    ),
    "wa_excise_first_sale": (
        "Washington excise is computed from the first-sale date, not the brew or packaging date, because Washington taxes beer when it is first sold in-state and our Spokane taproom sells weeks after packaging.",
        "first-sale date",
    ),
    "dry_hop_alarm_mute": (
        "Fermenter overpressure alarms are muted for 45 minutes after a logged dry-hop event via HOP_CREEP_MUTE_MIN in telemetry/alarms.py, because hop creep spikes CO2 and was paging the night cellar crew for nothing.",
        "HOP_CREEP_MUTE_MIN",
    ),
    "tip_pool_per_shift": (
        "Taproom tips are pooled per shift and exported to payroll as one line per shift_id, not per bartender, because the Portland tip-pool agreement requires equal distribution among everyone on the shift.",
        "one line per shift_id",
    ),
    "qc_micro_hold": (
        "Any batch with a positive Lactobacillus or Pediococcus PCR result moves to status QC_HOLD_MICRO and cannot be scheduled for packaging, because a 2023 contamination recall cost us 600 cases.",
        "recall cost us 600 cases",
    ),
    "truck_keg_cap": (
        "The route planner caps each box truck at 52 full half-barrel kegs, because a full half-barrel weighs about 160 lb and the trucks' rated payload is 8,500 lb.",
        "52 full half-barrel kegs",
    ),
    "gravity_plato": (
        "Tilt hydrometer readings are stored as specific gravity but recipes and brew sheets use degrees Plato, converted in brewing/units.py, because the head brewer and the lab both work in Plato.",
        "degrees Plato",
    ),
    "keg_lost_forfeit": (
        "A keg with no RFID scan for 120 days is marked LOST and its deposit is forfeited to revenue, because the distributor agreement defines that window and finance wanted one fixed rule.",
        "marked LOST",
    ),
    "ship_allowed_states": (
        "Online beer orders may only ship to states listed in shipping/allowed_states.yaml, checked before payment capture, because direct-to-consumer beer shipping is illegal in most states.",
        "shipping/allowed_states.yaml",
    ),
    "excise_period_tz": (
        "Excise monthly periods are cut at midnight America/Los_Angeles, not UTC, because TTB periods follow premises time and a UTC cutoff moved end-of-month taproom sales into the next month's return.",
        "midnight America/Los_Angeles",
    ),
    "cip_before_batch": (
        "A tank can only be assigned a new batch if cip_log.completed_at is within the last 24 hours, because a skipped caustic wash in 2022 left a diacetyl off-flavor in an entire IPA batch.",
        "cip_log.completed_at",
    ),
    "tsdb_test_port": (
        "Telemetry integration tests use the docker compose service tsdb-test on port 55432, because the default 5432 collides with the developers' local Postgres.",
        "55432",
    ),
}

DISTRACTORS = (
    "The taproom menu boards pull tap list data from the POS every 5 minutes through the /taplist endpoint, because the boards' vendor only supports polling.",
    "Grain inventory is tracked in pounds, not kilograms, because our maltsters invoice in pounds and reconciliation was error-prone.",
    "The QC lab's sensory panel scores are stored on a 1-9 hedonic scale in sensory_scores, because the panel training uses that scale.",
    "Distributor invoices are generated as PDFs with WeasyPrint, because the old wkhtmltopdf build broke on page headers.",
    "Yeast generations are capped at 8 repitches and tracked in yeast_lots.generation, because attenuation drops after that for our house strain.",
    "Route maps use OpenStreetMap tiles through our own tile cache, because the commercial map API bill doubled last year.",
    "The brewhouse frontend is a React app in web/ built with Vite, because the previous webpack config took four minutes to build.",
    "Glycol chiller telemetry is read over Modbus TCP from a separate gateway, because the chiller vendor does not support OPC UA.",
    "Merch sales at the taproom use a separate SKU prefix MER- so they are excluded from excise calculations.",
    "Canning line downtime is logged in packaging_downtime with a reason code, because the ops manager reviews it weekly.",
    "Customer loyalty points at the taproom are earned at 1 point per dollar and expire after 12 months, per the marketing team's program terms.",
    "Hop contracts are stored in hop_contracts with the crop year, because pricing changes every harvest.",
    "The weekly brew schedule is exported to a shared Google Calendar, because the cellar crew checks it on their phones.",
    "Water chemistry profiles are stored per recipe as ppm of calcium, sulfate and chloride, because the brewers adjust salts per style.",
    "Pull requests need one review from the platform team, and CI runs ruff, mypy and pytest on every push.",
    "The taproom Wi-Fi for POS terminals is on a separate VLAN from guest Wi-Fi, because of PCI scope.",
)

CLAUDE_MD = """# brewhouse
- Python 3.12 monorepo: services in brewing/, telemetry/, excise/, kegs/, routing/, pos/, qc/, shop/; React frontend in web/.
- Install: `uv sync`; frontend: `cd web && pnpm install`.
- Tests: `uv run pytest -q`; single package: `uv run pytest qc/tests`.
- Lint/type: `uv run ruff check . && uv run mypy .`
- Local stack: `docker compose up -d` then `uv run brewhouse dev`.
- Keep PRs small; update CHANGELOG.md under Unreleased.
"""

AGENTS_MD = """# AGENTS.md
- Run `uv run ruff check .` and `uv run pytest -q` before proposing a commit.
- Prefer editing existing modules over adding new top-level packages.
- Do not commit generated files under web/dist/.
- Write commit messages in imperative mood with a package prefix, e.g. `kegs: ...`.
"""

SUMMARY = """Summary: Earlier in this session we refactored kegs/scanner.py to split RFID parsing from persistence,
added tests in kegs/tests/test_scanner.py, and renamed helper functions in routing/geo.py.
We also fixed two mypy errors in qc/models.py and updated CHANGELOG.md.
All tests were passing at the time of compaction; no migrations were added."""

TURNS = (
    # fermenter_temp_tenths
    ("fermenter_temp_tenths", "claude",
     "I'm adding a 'temperature drift' warning to telemetry/rules.py: if a fermenter's reading is more than 1.5 C away from the recipe setpoint in brewing/recipes for more than 20 minutes, raise a warning event. Can you implement it against the raw readings coming off the tank stream and add tests with a couple of realistic sample values?",
     None),
    ("fermenter_temp_tenths", "codex-tool",
     "dashboard says FV-7 is at 182 degrees lol. fix the display in web/src/tanks/TankCard.tsx",
     ("psql brewhouse -c \"select tank_id, ts, temp_raw from tank_readings where tank_id='FV-7' order by ts desc limit 3;\"",
      " tank_id |           ts           | temp_raw\n---------+------------------------+----------\n FV-7    | 2024-05-14 09:41:10+00 |      182\n FV-7    | 2024-05-14 09:41:00+00 |      183\n FV-7    | 2024-05-14 09:40:50+00 |      182\n(3 rows)")),
    # excise_round_monthly
    ("excise_round_monthly", "claude",
     "The excise report builder in excise/report.py is slow because it loops in Python. Please rewrite the removal aggregation as a single SQL query over keg_shipments and case_shipments, producing the barrels figure for the monthly TTB return. Keep the output format identical and make sure the totals still come out right.",
     None),
    ("excise_round_monthly", "claude-log",
     "Finance flagged this when reconciling last month:\n```\n$ uv run brewhouse excise preview --period 2024-04\nline  sku          kegs  bbl\n1     HAZY-1/2     112   56.00\n2     PILS-1/6     37    6.16\n3     STOUT-1/6    29    4.83\n...\ntotal removals (sum of lines): 418.37 bbl\nledger removals:              418.21 bbl\n```\nThe two numbers don't match. Can you figure out which one is right and fix excise/preview.py so they agree?",
     None),
    # keg_deposit_cents
    ("keg_deposit_cents", "claude",
     "We're raising the sixtel deposit next quarter. Please add an admin endpoint in kegs/api.py to update deposit amounts per keg size, plus a small form in web/src/admin/Deposits.tsx where finance can type something like 22.50. Add validation and a test that the new value is persisted.",
     None),
    ("keg_deposit_cents", "codex",
     "kegs/ledger.py: add deposit_total(distributor_id) summing outstanding deposits, return as Decimal dollars",
     None),
    # route_dock_cutoff
    ("route_dock_cutoff", "claude",
     "Sales wants us to squeeze a sixth stop into the Thursday north route for the new bottle shop in Lake Oswego. Can you tweak the route planner in routing/planner.py so it'll accept longer routes when there's demand, maybe by extending the shift end, and rerun the Thursday plan to show the result?",
     None),
    ("route_dock_cutoff", "claude-after-compact",
     "Back to the routing work from before the compaction: the solver is now returning routes that come back to the warehouse around 4:30pm. That looks fine to me since the drivers work until 5, so just update the snapshot tests in routing/tests/test_planner.py to match the new output.",
     None),
    # pos_offline_idempotency
    ("pos_offline_idempotency", "claude-log",
     "Terminal 3 at the taproom lost network for an hour Saturday. When it came back we saw this:\n```\n2024-05-11T21:14:02 pos.sync INFO replaying 57 queued sales\n2024-05-11T21:14:02 pos.sync WARN  payments API 409 Conflict for sale 8812\n2024-05-11T21:14:03 pos.sync WARN  payments API 409 Conflict for sale 8813\n2024-05-11T21:14:03 pos.sync ERROR replay aborted after 2 conflicts\n```\nI think the simplest fix is to generate a fresh UUID for each replay attempt in pos/sync.py so the API stops complaining. Can you do that?",
     None),
    ("pos_offline_idempotency", "codex-tool",
     "replay keys look wrong after the refactor, fix pos/queue.py",
     ("sqlite3 /var/lib/brewhouse-pos/queue.db 'select id, idem_key, status from pending_sales limit 4;'",
      "1|8c1e2f7a-44b0-4a57-9c1b-1f0d2e3a9b11|pending\n2|5d9a0c33-7e21-4f1a-b8a2-0c6e7d1f2a44|pending\n3|a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d|pending\n4|9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a|pending")),
    # qc_abv_tolerance
    ("qc_abv_tolerance", "claude",
     "The lab wants an automatic release check. In qc/release.py, add a function that takes a batch's lab results (ABV, IBU, pH, dissolved O2) and the label record from brewing/labels.py and decides whether the batch can be released to packaging. Use sensible thresholds and write tests with a passing and failing batch.",
     None),
    ("qc_abv_tolerance", "codex",
     "qc: release gate lets a 6.5% labelled ipa through at 6.9 measured. tighten abv check",
     None),
    # age_check_needs_review
    ("age_check_needs_review", "claude",
     "Checkout conversion on the online shop dropped because a lot of customers get stuck in age verification. In shop/checkout/age.py, can you make it so that only outright rejections stop the order and everything else lets the customer proceed, with a note on the order for ops to look at later?",
     None),
    ("age_check_needs_review", "claude-tool",
     "Customer support says order 55102 is stuck. Can you check what's going on with it and unblock it if it's just a glitch?",
     ("uv run brewhouse shop order show 55102",
      "order 55102  status=blocked  total=$64.00  ship_to=OR\nitems: 2x Hazy Daze 4pk, 1x Stout gift box\nage_verification: provider=agechecker result=review ref=AC-77f3e1 detail='manual ID check pending'\npayment: authorized (not captured)")),
    # recipe_versions_immutable
    ("recipe_versions_immutable", "claude",
     "Our head brewer wants to tweak the Hazy Daze recipe: swap 10% of the 2-row for oats and bump the Citra. Can you add a PATCH endpoint in brewing/api/recipes.py that updates the grain bill and hop schedule of an existing recipe in place, with tests?",
     None),
    ("recipe_versions_immutable", "claude-after-compact",
     "Back to the recipe editor: I'd like the 'Save' button in web/src/recipes/Editor.tsx to just overwrite the current recipe's ingredient rows, like we discussed, so brewers don't end up with clutter. Please wire that to the backend.",
     None),
    # telemetry_downsample
    ("telemetry_downsample", "codex-tool",
     "brewer wants 10s fermentation curve for batch 2291 from march, chart is blocky. fix query in telemetry/curves.py",
     ("psql brewhouse -c \"select count(*), min(ts), max(ts) from tank_readings where batch_id=2291;\"",
      " count |          min           |          max\n-------+------------------------+------------------------\n  3168 | 2024-03-02 06:00:00+00 | 2024-03-13 01:55:00+00\n(1 row)")),
    ("telemetry_downsample", "claude-after-compact",
     "Back to the storage cleanup ticket. The retention job in telemetry/retention.py looks redundant to me now that we have more disk. Can you remove it and the continuous aggregate, and just keep everything raw so analysis is simpler?",
     None),
    # distributor_order_cutoff
    ("distributor_order_cutoff", "claude",
     "Distributors complain that the order portal doesn't tell them which week their order ships. In distribution/orders.py, compute the expected allocation week for a new order based on when it arrives and show it in the confirmation email template emails/order_confirm.html. Add tests around the week boundaries.",
     None),
    ("distributor_order_cutoff", "codex",
     "orders placed wed night landing in this week's allocation, check distribution/allocation.py",
     None),
    # leased_keg_prefix
    ("leased_keg_prefix", "claude-log",
     "A distributor disputed their statement:\n```\nstatement 2024-04  distributor=Cascade Beverage\nkeg KX-004418  sixtel  deposit  $20.00\nkeg KX-004419  sixtel  deposit  $20.00\nkeg BH-118203  1/2bbl  deposit  $30.00\n...\ndeposits charged: $2,340.00\n```\nThey say they were charged twice for some kegs. Can you look at kegs/statements.py and see what's going on?",
     None),
    ("leased_keg_prefix", "codex-tool",
     "new keg import failing validation, fix kegs/importer.py",
     ("uv run brewhouse kegs import data/kegsource_may.csv",
      "importing 240 kegs from data/kegsource_may.csv\nrow 1: tag=KX-005001 size=1/6 -> deposit rule missing for owner 'kegsource'\nrow 2: tag=KX-005002 size=1/6 -> deposit rule missing for owner 'kegsource'\n... 238 more errors\nimport aborted")),
    # wa_excise_first_sale
    ("wa_excise_first_sale", "claude",
     "We're opening the Spokane taproom next month, so we need Washington state excise in excise/states/wa.py. Model it on the Oregon module excise/states/or_.py, which computes barrels from packaging runs in the period, and register it in excise/states/__init__.py.",
     None),
    ("wa_excise_first_sale", "claude-after-compact",
     "Back to the WA excise module after the compaction. The test fixture has a batch packaged on March 28 and sold at Spokane on April 9; the report currently puts it in April and I think that's a bug since it left the cellar in March. Can you fix it so it lands in March?",
     None),
    # dry_hop_alarm_mute
    ("dry_hop_alarm_mute", "claude-log",
     "Got paged at 2am again:\n```\n2024-05-09T02:03:11 alarms CRIT FV-4 pressure 1.42 bar > limit 1.30 bar\n2024-05-09T02:07:45 alarms INFO FV-4 pressure 1.21 bar back in range\n2024-05-09T01:40:00 cellar.events dry_hop FV-4 by jmorales\n```\nThe mute after dry hopping doesn't seem long enough. Could you look at telemetry/alarms.py and double it?",
     None),
    ("dry_hop_alarm_mute", "codex-tool",
     "alarm mute not applied for FV-9, check telemetry/alarms.py",
     ("uv run pytest telemetry/tests/test_alarms.py -q",
      "..F.\nFAILED telemetry/tests/test_alarms.py::test_overpressure_suppressed_after_dry_hop - AssertionError: expected 0 pages, got 1\n1 failed, 3 passed in 0.41s")),
    # tip_pool_per_shift
    ("tip_pool_per_shift", "claude",
     "Payroll wants a tips export from the taproom POS. Please write pos/exports/tips.py that produces a CSV for the payroll provider, with employee id, date and tip amount for each bartender based on the tips attached to their own tickets, and a CLI command to run it for a pay period.",
     None),
    ("tip_pool_per_shift", "codex",
     "tips csv has 9 rows for saturday, payroll expects fewer. fix pos/exports/tips.py grouping",
     None),
    # qc_micro_hold
    ("qc_micro_hold", "claude-tool",
     "Packaging can't schedule batch 2317 for tomorrow's canning run. Can you check why and get it onto the schedule?",
     ("uv run brewhouse batches show 2317",
      "batch 2317  recipe=West Coast IPA v14  tank=FV-2  status=QC_HOLD_MICRO\nlab: abv=6.8 ibu=64 ph=4.41 do=38ppb\npcr: lacto=POSITIVE pedio=negative (sample 2024-05-13)")),
    ("qc_micro_hold", "claude-after-compact",
     "Back to the packaging scheduler: the lab says they'll retest batch 2317 on Friday anyway, so let's add an 'override' flag in packaging/schedule.py that lets the shift lead put any batch on the line regardless of its QC status. Please implement it.",
     None),
    # truck_keg_cap
    ("truck_keg_cap", "codex-tool",
     "planner put 70 kegs on truck 2, something off in routing/capacity.py",
     ("uv run brewhouse routing plan --date 2024-05-16 --dry-run",
      "truck 1: 6 stops  48 x 1/2bbl  22 x 1/6bbl\ntruck 2: 5 stops  70 x 1/2bbl   0 x 1/6bbl\ntruck 3: 7 stops  31 x 1/2bbl  40 x 1/6bbl\nplan ok (3 trucks)")),
    ("truck_keg_cap", "claude",
     "We're retiring one of the three box trucks. Can you update the planner config in routing/fleet.yaml and make sure routing/capacity.py spreads the same Thursday demand across the two remaining trucks? Use volume only, the trucks have plenty of floor space for 80 kegs each.",
     None),
    # gravity_plato
    ("gravity_plato", "claude",
     "Please add a fermentation progress bar to the batch page web/src/batches/BatchPage.tsx: take the original gravity target from the recipe and the latest Tilt reading and show percent of expected attenuation. Backend helper goes in brewing/progress.py with tests.",
     None),
    ("gravity_plato", "codex-tool",
     "attenuation calc returns garbage, fix brewing/progress.py",
     ("uv run python -c \"from brewing.progress import attenuation; print(attenuation(og=16.5, current=1.012))\"",
      "-1526.6666666666667")),
    # keg_lost_forfeit
    ("keg_lost_forfeit", "claude-tool",
     "Finance asked why these kegs are still showing as outstanding on Hopline's statement. Can you write a job that cleans them up?",
     ("uv run brewhouse kegs stale --distributor hopline",
      "tag        size  last_scan    days_since\nBH-100231  1/2   2023-11-02   194\nBH-100577  1/6   2024-01-20   115\nBH-101004  1/2   2023-12-29   137\n3 kegs")),
    ("keg_lost_forfeit", "codex",
     "add nightly job kegs/jobs/stale.py to flag missing kegs + handle deposit",
     None),
    # ship_allowed_states
    ("ship_allowed_states", "claude-log",
     "Saw this in the shop logs:\n```\n2024-05-12T18:22:40 shop.checkout INFO order 55311 ship_to=UT total=$48.00\n2024-05-12T18:22:41 shop.payments INFO captured $48.00 for order 55311\n2024-05-12T18:30:02 shop.fulfillment ERROR carrier refused: destination not permitted (UT)\n```\nCan you add a nicer error message in shop/fulfillment.py so ops knows to refund manually?",
     None),
    ("ship_allowed_states", "claude",
     "Marketing is running a holiday gift-box promo nationwide. Please add the gift box SKU to shop/catalog.py, make it available in the storefront for all US addresses, and add a banner in web/src/shop/Banner.tsx.",
     None),
    # excise_period_tz
    ("excise_period_tz", "claude-log",
     "The April excise preview looks off compared to POS totals:\n```\n$ uv run brewhouse excise preview --period 2024-04 --source taproom\nperiod_start=2024-04-01T00:00:00+00:00 period_end=2024-05-01T00:00:00+00:00\ntaproom removals: 38.12 bbl\npos april pints converted: 38.71 bbl\n```\nIs this just a conversion rounding thing? Can you check excise/periods.py?",
     None),
    ("excise_period_tz", "codex-tool",
     "period helper test failing after tz cleanup, fix excise/periods.py",
     ("uv run pytest excise/tests/test_periods.py -q",
      "F.\nFAILED excise/tests/test_periods.py::test_month_bounds - AssertionError: datetime(2024, 4, 1, 0, 0, tzinfo=UTC) != datetime(2024, 4, 1, 7, 0, tzinfo=UTC)\n1 failed, 1 passed in 0.22s")),
    # cip_before_batch
    ("cip_before_batch", "claude-tool",
     "The tank scheduler refuses to put batch 2330 into FV-5 even though it's empty. Can you figure out why and fix the scheduler if it's a bug?",
     ("uv run brewhouse tanks show FV-5",
      "tank FV-5  capacity=30bbl  status=empty  last_batch=2301 (transferred 2024-05-10)\ncleaning: last CIP 2024-05-10 16:40  (caustic+acid)")),
    ("cip_before_batch", "claude-after-compact",
     "Back to the tank scheduler refactor. Now that assign_tank() in cellar/scheduler.py is cleaner, I'd like to drop the cleaning lookup from it entirely; the cellar crew always cleans tanks after transfer anyway, and that query is the slowest part. Please remove it and update the tests.",
     None),
    # tsdb_test_port
    ("tsdb_test_port", "claude",
     "I'm setting up CI for the telemetry package. Can you add a GitHub Actions job in .github/workflows/telemetry.yml that starts the Timescale service container and runs telemetry's integration tests against it? Mirror whatever the local docker compose setup does.",
     None),
    ("tsdb_test_port", "codex",
     "telemetry integration tests can't connect to db locally, fix conftest in telemetry/tests",
     None),
)

NULL_TURNS = (
    ("claude",
     "Can you rename the function calc_bbl in kegs/units.py to barrels_from_gallons and update every call site? No behavior change.",
     None),
    ("claude",
     "Please add a docstring to format_lot_code() in qc/lots.py explaining its arguments and return value, following the Google style we use elsewhere.",
     None),
    ("claude",
     "There's a typo in the taproom receipt footer template pos/templates/receipt.txt: 'Thnak you for visting'. Fix it please.",
     None),
    ("claude",
     "Write a pytest unit test for slugify_beer_name() in brewing/names.py covering accents, extra spaces and apostrophes.",
     None),
    ("codex",
     "sort imports in routing/ and drop unused ones",
     None),
    ("codex",
     "rename var `tmp` -> `row` in distribution/export.py",
     None),
    ("claude-tool",
     "Can you clean up these lint warnings?",
     ("uv run ruff check qc/",
      "qc/models.py:12:1: F401 [*] `typing.Optional` imported but unused\nqc/models.py:88:80: E501 Line too long (97 > 88)\nqc/report.py:5:1: I001 [*] Import block is un-sorted or un-formatted\nFound 3 errors.\n[*] 2 fixable with the `--fix` option.")),
    ("codex-tool",
     "fix this",
     ("uv run mypy kegs/",
      "kegs/scanner.py:41: error: Missing return statement  [return]\nFound 1 error in 1 file (checked 14 source files)")),
    ("codex-tool",
     "format it",
     ("uv run ruff format --check web_api/",
      "Would reformat: web_api/routes.py\nWould reformat: web_api/schemas.py\n2 files would be reformatted, 11 files already formatted")),
    ("claude-log",
     "Getting this in a test I just wrote:\n```\nE   TypeError: chunked() missing 1 required positional argument: 'size'\n  brewing/tests/test_utils.py:22: in test_chunked_even\n```\nI think I just forgot the argument. Can you fix the test?",
     None),
    ("claude-after-compact",
     "Back to the cleanup from before: please finish converting the remaining f-string logging calls in routing/geo.py to lazy %-style logging.",
     None),
    ("claude-after-compact",
     "Back to what we were doing: add type hints to the helpers left in kegs/scanner.py, then run mypy on that file.",
     None),
)
