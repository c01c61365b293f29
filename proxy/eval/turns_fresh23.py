"""Sealed held-out turns (twenty-third half): written without reading recall's code, rules or results. Scored once."""
from __future__ import annotations

PROJECT = "loomtrack"

FACTS = {
    "loom_rpm_cap": (
        "Air-jet looms in hall B are capped at 780 picks per minute in the scheduler, because above that the Toyota JAT810 frames showed weft breaks on 40s cotton during the 2023 trials.",
        "780 picks per minute",
    ),
    "yarn_lot_mixing": (
        "The yarn allocator never mixes two spinning lots on one warp beam, because lot-to-lot shade differences only show up after dyeing and the whole beam becomes second grade.",
        "never mixes two spinning lots",
    ),
    "dye_delta_e": (
        "Dye batches pass shade QC only when the spectrophotometer Delta E (CMC 2:1) against the master swatch is at most 0.8; buyers like Kessler Home reject anything above that.",
        "at most 0.8",
    ),
    "mill_timezone": (
        "All shift and loom timestamps are stored in Asia/Karachi local time in the loom_events table, because the PLC gateways cannot do UTC and converting caused double-counted night shifts.",
        "Asia/Karachi",
    ),
    "plc_gateway_host": (
        "Loom PLC telemetry is pulled over OPC UA from plcgw-02.hallb.loomtrack.internal on port 4840; plcgw-01 is the cold standby and must not be polled concurrently.",
        "plcgw-02.hallb.loomtrack.internal",
    ),
    "yarn_count_units": (
        "Yarn counts are stored as Ne (English cotton count) in inventory.yarn_lots, and polyester deniers are converted to Ne on import, because the costing sheets from finance only understand Ne.",
        "stored as Ne",
    ),
    "reorder_point": (
        "Yarn reorder points are computed as 18 days of planned consumption plus safety stock, because the Faisalabad spinners' lead time is 14 days and trucks slip by up to four days.",
        "18 days",
    ),
    "shipping_cutoff": (
        "Export containers for Karachi port must be stuffed and sealed by Thursday 14:00 PKT, because the Maersk feeder cutoff at KICT is Friday morning and customs needs a half day.",
        "Thursday 14:00 PKT",
    ),
    "hs_code_table": (
        "HS codes for finished fabric are looked up from shipping.hs_code_map keyed by construction and fibre blend, never typed by planners, because a wrong code triggered a customs hold in 2022.",
        "shipping.hs_code_map",
    ),
    "dye_recipe_owner": (
        "Dye recipe changes must be approved by Nadia Rauf of the colour lab before the dyehouse runs them, because she owns the recipe master and the buyer lab-dip approvals.",
        "Nadia Rauf",
    ),
    "shrinkage_allowance": (
        "Warp length planning adds a 6.5 percent shrinkage allowance for cotton twill after sanforizing, because orders shipped short twice when we used the generic 4 percent.",
        "6.5 percent",
    ),
    "scheduler_solver": (
        "The loom scheduler uses OR-Tools CP-SAT with a 90 second time limit per planning run, because longer runs blocked the morning planning meeting and gains after 90s were under one percent.",
        "90 second",
    ),
    "beam_change_penalty": (
        "The scheduler objective charges a beam change as 45 loom-minutes of lost production, which is why it prefers keeping same-warp orders on one loom even if a due date slips slightly.",
        "45 loom-minutes",
    ),
    "feature_flag_batching": (
        "Dye batch merging is behind the flag LT_DYE_BATCH_MERGE and stays off for reactive dyes, because merged reactive batches drifted in shade on the jet machines.",
        "LT_DYE_BATCH_MERGE",
    ),
    "moisture_regain": (
        "Yarn weights from the gate scale are corrected to 8.5 percent standard moisture regain for cotton before posting to inventory, because monsoon deliveries arrive wet and inflated stock.",
        "8.5 percent",
    ),
    "defect_points_system": (
        "Fabric inspection uses the four-point system with a reject threshold of 28 points per 100 square yards, because that is what our EU buyers' quality manuals specify.",
        "28 points per 100 square yards",
    ),
    "erp_sync_window": (
        "The nightly sync to the SAP ERP runs at 02:30 from the job erp_sync_nightly, because SAP locks material documents during its own 01:00 to 02:15 batch.",
        "02:30",
    ),
    "letter_of_credit": (
        "Commercial invoices for LC shipments must match the letter of credit description word for word, so the invoice template pulls text from lc_terms.goods_description instead of the order line.",
        "lc_terms.goods_description",
    ),
    "dyehouse_water_limit": (
        "The dyehouse is limited to 1,200 cubic metres of water per day by the effluent treatment permit, so the batch planner must spread long-liquor-ratio jobs across days.",
        "1,200 cubic metres",
    ),
    "oncall_team": (
        "Pages for the loom telemetry pipeline go to the Hall Ops Platform team on the #hallops-oncall rotation, not to IT, because IT has no access to the PLC network.",
        "#hallops-oncall",
    ),
    "label_printer_config": (
        "Bale labels are printed on Zebra ZT410 printers using the template at labels/bale_zpl/v3.zpl, because the buyer scanners only read the GS1-128 layout defined in v3.",
        "labels/bale_zpl/v3.zpl",
    ),
    "container_weight": (
        "The packing planner caps a 40ft container at 24,500 kg gross for fabric rolls, because the road haulage limit from the mill to Karachi is lower than the container rating.",
        "24,500 kg",
    ),
}

DISTRACTORS = (
    "The loomtrack web UI uses React with TanStack Query, and the design tokens live in ui/theme/tokens.ts.",
    "Grafana dashboards for hall A looms are provisioned from ops/grafana/hall_a.json and reviewed monthly.",
    "The weekly planning review happens on Mondays at 10:00 with the production manager and the merchandising leads.",
    "Spare parts for the rapier looms are tracked in a separate Odoo instance that loomtrack does not integrate with.",
    "Our Postgres is version 15 and migrations are written with Alembic in db/migrations.",
    "The canteen headcount report is generated by HR's own tool and does not read loomtrack shift data.",
    "Python services are formatted with ruff format and the line length is 100.",
    "The warehouse handheld app is built with Flutter and talks to the stock API over the mill Wi-Fi.",
    "Bilal Ahmed maintains the costing module and prefers pull requests that include sample order fixtures.",
    "The old Excel-based loom plan is archived under share/legacy_plans and is read-only.",
    "Sample yardage requests from merchandisers are entered in the sampling queue and are not scheduled on production looms.",
    "Integration tests for the stock API run against a dockerised Postgres seeded from tests/fixtures/stock_seed.sql.",
    "The mill's electricity tariff data is provided by the utilities team as a monthly CSV for the energy dashboard.",
    "Sizing machine recipes are kept on paper in the sizing department and are not yet digitised.",
    "The company logo and letterhead assets for documents are stored in assets/branding.",
    "API errors are returned in RFC 7807 problem+json format across all loomtrack services.",
)

CLAUDE_MD = """# loomtrack
Production planning platform for the weaving mill: loom scheduling, yarn inventory, dyehouse QC and export shipping.
- Services live in services/<name>; shared code in libs/loomcore.
- Run `make test` before pushing; `make lint` runs ruff and mypy.
- Database migrations go in db/migrations (Alembic); never edit an applied migration.
- Ask before touching anything under plc/ that talks to the shop floor.
"""

AGENTS_MD = """- Use Python 3.11 and the repo's .venv; do not install global packages.
- Keep changes small and add tests under tests/ next to the service you change.
- Do not commit generated ZPL previews or exported PDFs.
- Prefer existing helpers in libs/loomcore over new utility modules.
"""

SUMMARY = (
    "Summary: Earlier in this session we migrated the stock API's pagination from offset to cursor-based paging "
    "and updated the handheld app client to use the new next_cursor field. We also fixed two flaky tests in "
    "tests/stock/test_transfers.py that depended on dict ordering."
)

TURNS = (
    # loom_rpm_cap
    ("loom_rpm_cap", "claude",
     "The production manager wants to squeeze more output from hall B next month. Can you update services/scheduler/capacity.py so the planner assumes the air-jets run faster? Right now the plans look too conservative to him, and he'd like to see what happens at the frames' rated speed of 1000.",
     None),
    ("loom_rpm_cap", "codex-tool",
     "why does planner clamp hall b speed? want to set 950",
     ("grep -rn 'speed' services/scheduler/capacity.py",
      "services/scheduler/capacity.py:41:    max_speed = min(loom.rated_speed, HALL_LIMITS[loom.hall])\nservices/scheduler/capacity.py:42:    # see hall limits\nservices/scheduler/capacity.py:88:def effective_speed(loom, efficiency):\n")),
    # yarn_lot_mixing
    ("yarn_lot_mixing", "claude",
     "We keep ending up with leftover yarn cones from older lots in the store, and the inventory team is annoyed. Could you change the allocator in services/inventory/allocate.py so when a warp needs 1,800 kg it can top up from any lot of the same count and supplier? That would clear the shelves much faster.",
     None),
    ("yarn_lot_mixing", "claude-log",
     "Why is the allocator refusing this? There's plenty of 30s cotton in stock overall.\n```\n2024-05-12 07:14:03 INFO allocate warp=WB-2291 count=30Ne req_kg=1620\n2024-05-12 07:14:03 INFO candidate lot=L8812 avail_kg=1100\n2024-05-12 07:14:03 INFO candidate lot=L8830 avail_kg=900\n2024-05-12 07:14:03 WARN no single candidate satisfies req_kg; allocation=NONE\n```",
     None),
    # dye_delta_e
    ("dye_delta_e", "codex",
     "qc pass threshold in dyehouse/qc.py looks too strict, loosen it",
     None),
    ("dye_delta_e", "claude-tool",
     "The QC test for shade approval is failing after my refactor of the colour comparison. Can you figure out what value the check should use and fix the test or the code?",
     ("pytest tests/dyehouse/test_shade.py -q",
      "F.\n=================================== FAILURES ===================================\n_____________________ test_batch_borderline_passes _____________________\n    def test_batch_borderline_passes():\n        res = evaluate_shade(batch_fixture('B-7731'))\n>       assert res.passed\nE       assert False\nE        +  where False = ShadeResult(de_cmc=0.78, limit=0.5, passed=False).passed\n1 failed, 1 passed in 0.41s\n")),
    # mill_timezone
    ("mill_timezone", "claude",
     "I'm writing a report of night-shift efficiency per loom for the last quarter. I plan to group the loom_events rows by shift using the usual 22:00-06:00 window after converting everything from UTC. Can you write the SQL in reports/night_shift.sql for me?",
     None),
    ("mill_timezone", "claude-after-compact",
     "Back to the shift report from before the summary: the night totals come out five hours off and some shifts seem doubled. What's wrong with how I'm bucketing the event times?",
     None),
    # plc_gateway_host
    ("plc_gateway_host", "codex",
     "add redundancy to telemetry poller: read from both gateways in parallel",
     None),
    ("plc_gateway_host", "claude-log",
     "The telemetry collector started failing after someone edited the config. Which endpoint should it point at?\n```\n[collector] connecting opc.tcp://plcgw-01.hallb.loomtrack.internal:4840\n[collector] BadNotConnected: server in standby mode\n[collector] retry 3/3 failed, giving up\n```",
     None),
    # yarn_count_units
    ("yarn_count_units", "claude",
     "We got a new supplier sending polyester filament with the specs given as 150 denier. Please add an import path in services/inventory/importers/supplier_csv.py that stores their lots. Keep it consistent with the rest of the yarn data so costing reports keep working.",
     None),
    ("yarn_count_units", "codex-tool",
     "costing report shows absurd yarn price for new poly lots, fix",
     ("psql -c \"select lot_id, fibre, count_value from inventory.yarn_lots where supplier='Sapphire Poly' limit 3\"",
      " lot_id | fibre     | count_value\n--------+-----------+-------------\n P-1001 | polyester |         150\n P-1002 | polyester |          75\n P-1003 | polyester |         150\n(3 rows)\n")),
    # reorder_point
    ("reorder_point", "claude",
     "Finance says we're carrying too much cotton yarn. Could you change services/inventory/reorder.py so the reorder point is just the supplier lead time worth of consumption? That seems like the textbook approach and should free up working capital.",
     None),
    ("reorder_point", "codex",
     "reorder calc: what horizon should the days-of-cover constant be? tests need it",
     None),
    # shipping_cutoff
    ("shipping_cutoff", "claude",
     "Merchandising wants the export planner to show a 'last safe stuffing time' for each weekly sailing out of Karachi. Can you add that field in services/shipping/planner.py and display it in the container view?",
     None),
    ("shipping_cutoff", "claude-after-compact",
     "Back to the container schedule work from before the summary. The Kessler order is marked ready Thursday evening; will it make this week's vessel or should I push it to next week in the plan?",
     None),
    # hs_code_table
    ("hs_code_table", "codex",
     "add free-text hs code input on shipment form, planners asked",
     None),
    ("hs_code_table", "claude-tool",
     "An invoice went out with a blank tariff code for the new linen-blend canvas. Where is that supposed to come from and how do I fix it for this construction?",
     ("grep -rn 'hs_code' services/shipping/invoice.py",
      "services/shipping/invoice.py:57:    hs = lookup_hs(order.construction, order.blend)\nservices/shipping/invoice.py:58:    if hs is None:\nservices/shipping/invoice.py:59:        log.warning('no hs mapping for %s/%s', order.construction, order.blend)\n")),
    # dye_recipe_owner
    ("dye_recipe_owner", "claude",
     "The navy shade on the twill has been coming out slightly red. I tweaked the recipe in dyehouse/recipes/navy_204.yaml to cut the red component by 5 percent. Can you push it to the dyehouse queue so tonight's batch uses it?",
     None),
    ("dye_recipe_owner", "codex",
     "who signs off recipe edits before dyehouse runs them? need reviewer for PR",
     None),
    # shrinkage_allowance
    ("shrinkage_allowance", "claude-log",
     "Orders for the 3/1 twill keep shipping short. Is the warp length calc wrong?\n```\norder=KH-5521 ordered_m=12000 woven_m=12480 finished_m=11710 short_m=290\norder=KH-5540 ordered_m=8000  woven_m=8320  finished_m=7805  short_m=195\n```",
     None),
    ("shrinkage_allowance", "codex",
     "set shrink factor in planning/warp_length.py for cotton twill",
     None),
    # scheduler_solver
    ("scheduler_solver", "claude",
     "The plan quality could probably be better. Could you let the solver in services/scheduler/solve.py run until it proves optimality? I don't mind if it takes a while, the planners can wait.",
     None),
    ("scheduler_solver", "codex-tool",
     "planner run too short? tune limit",
     ("grep -n 'max_time' services/scheduler/solve.py",
      "services/scheduler/solve.py:33:    solver.parameters.max_time_in_seconds = TIME_LIMIT_S\nservices/scheduler/solve.py:12:TIME_LIMIT_S = 600  # TODO revisit\n")),
    # beam_change_penalty
    ("beam_change_penalty", "claude-after-compact",
     "Back to the scheduler from before the summary: planners complain it keeps a late order queued behind others on the same loom instead of moving it to a free loom. Is that a bug, and what weighting drives it?",
     None),
    ("beam_change_penalty", "codex",
     "objective in scheduler/objective.py: what's the cost weight for warp swap",
     None),
    # feature_flag_batching
    ("feature_flag_batching", "claude",
     "The dyehouse wants fewer small batches. Can you enable merging of compatible batches for all dye classes in services/dyehouse/batcher.py? It should help machine utilisation across the board.",
     None),
    ("feature_flag_batching", "claude-tool",
     "Merging works for disperse jobs but not for the reactive ones. Is this broken?",
     ("python -m dyehouse.batcher --dry-run --week 21",
      "disperse: 14 jobs -> 6 batches (merge on)\nreactive: 22 jobs -> 22 batches (merge off)\nvat: 3 jobs -> 2 batches (merge on)\n")),
    # moisture_regain
    ("moisture_regain", "codex",
     "gate scale import posts raw kg, is that right? check inventory/gate_scale.py",
     None),
    ("moisture_regain", "claude-log",
     "Stock in the system is higher than the physical count after the July deliveries. Any idea why?\n```\ndelivery=GD-7781 scale_kg=5120 posted_kg=4987 supplier=Faisal Spinning\ndelivery=GD-7790 scale_kg=4890 posted_kg=4890 supplier=Faisal Spinning (manual entry)\n```",
     None),
    # defect_points_system
    ("defect_points_system", "claude",
     "I'm adding a grading step to the inspection app in services/inspection/grade.py. Inspectors enter defects with lengths; the roll should be accepted or rejected based on the usual rule. Could you implement the grading function and a couple of tests?",
     None),
    ("defect_points_system", "codex-tool",
     "roll graded A but buyer rejected, check grade logic",
     ("python -m inspection.grade --roll R-99102",
      "roll=R-99102 width_in=63 length_yd=120 points=61 pts_per_100sqyd=29.1 grade=A\n")),
    # erp_sync_window
    ("erp_sync_window", "claude",
     "The nightly job that pushes goods receipts to SAP sometimes fails with lock errors. I was going to move it earlier, to midnight-thirty, so it finishes before the morning shift. Can you update the schedule in ops/jobs.yaml?",
     None),
    ("erp_sync_window", "claude-log",
     "What's the right slot for this job?\n```\n01:20:11 erp_sync_nightly start\n01:20:14 ERROR SAP: Material document 4900012231 is locked by user BATCHUSR\n01:20:14 erp_sync_nightly aborted\n```",
     None),
    # letter_of_credit
    ("letter_of_credit", "codex",
     "invoice template: use order line description for goods text",
     None),
    ("letter_of_credit", "claude-after-compact",
     "Back to the export documents from before the summary. The bank rejected our documents for the Hamburg shipment as discrepant on the goods description. Where should the invoice get that text from?",
     None),
    # dyehouse_water_limit
    ("dyehouse_water_limit", "claude",
     "Can you make the batch planner in services/dyehouse/plan.py just pack all the jobs as early in the week as possible? Front-loading would give us slack for reruns at the end of the week.",
     None),
    ("dyehouse_water_limit", "claude-tool",
     "The dyehouse plan checker flags Tuesday as infeasible even though machines are free. What's the constraint?",
     ("python -m dyehouse.plan --check --week 22",
      "Mon ok  liquor_m3=980\nTue FAIL liquor_m3=1340 (limit exceeded)\nWed ok  liquor_m3=610\n")),
    # oncall_team
    ("oncall_team", "codex",
     "add alert routing for telemetry lag alert in ops/alerts.yaml",
     None),
    ("oncall_team", "claude",
     "Our loom telemetry lag alert fired last night and nobody responded for three hours because it went to the IT helpdesk queue. Could you fix the routing in ops/alertmanager/routes.yaml so it reaches people who can actually do something?",
     None),
    # label_printer_config
    ("label_printer_config", "claude-tool",
     "The buyer's warehouse says they can't scan our bale labels from last week's shipment. Can you see what changed?",
     ("git log --oneline -3 -- labels/",
      "a41c2e9 labels: switch bale printing to v2 template for smaller font\n77b01f3 labels: add roll qr code\n5d9e210 labels: v3 bale template\n")),
    ("label_printer_config", "codex",
     "bale label print uses which zpl template? new printer setup",
     None),
    # container_weight
    ("container_weight", "claude",
     "The packing planner seems to leave containers underfilled. A 40ft high cube is rated for over 26 tonnes gross; could you raise the limit in services/shipping/packing.py so we ship fewer boxes?",
     None),
    ("container_weight", "codex-tool",
     "packing planner splits order into extra container, why",
     ("python -m shipping.packing --order KH-6012",
      "rolls=412 total_kg=47900\ncontainer 1: 40HC gross_kg=24480\ncontainer 2: 40HC gross_kg=23420 (overflow)\n")),
)

NULL_TURNS = (
    ("claude", "Can you rename the function calc_eff in services/scheduler/metrics.py to loom_efficiency and update its callers? It's a pure rename, no behaviour change.", None),
    ("codex", "fix typo 'recieved' in services/inventory/models.py docstrings", None),
    ("codex-tool", "fix lint errors in shipping module",
     ("ruff check services/shipping",
      "services/shipping/planner.py:12:1: F401 [*] `datetime.timezone` imported but unused\nservices/shipping/packing.py:88:5: E741 Ambiguous variable name: `l`\nFound 2 errors.\n")),
    ("claude", "Please add unit tests for libs/loomcore/units.py's meters_to_yards helper; it's a pure function and has no tests yet. Cover zero, a normal value and negative input.", None),
    ("claude", "The README's setup section still says to use pipenv. Could you update it to describe creating the .venv with python -m venv and installing from requirements.txt?", None),
    ("codex", "bump pydantic to 2.7 in requirements.txt and fix any import breakage", None),
    ("claude-tool", "mypy complains about a missing return type in the inspection app. Can you fix it?",
     ("mypy services/inspection",
      "services/inspection/views.py:44: error: Function is missing a return type annotation  [no-untyped-def]\nFound 1 error in 1 file (checked 9 source files)\n")),
    ("claude-log", "This test fails on my machine only. What's going on?\n```\nFAILED tests/loomcore/test_fmt.py::test_format_kg - AssertionError: assert '1,234.5 kg' == '1.234,5 kg'\n```\nI think it's my locale.", None),
    ("codex", "sort imports in services/dyehouse with ruff", None),
    ("claude-after-compact", "Back to the stock API work from before the summary: can you add a docstring to the new cursor helper explaining the encoding format?", None),
    ("codex-tool", "format the scheduler package",
     ("ruff format --check services/scheduler",
      "Would reformat: services/scheduler/solve.py\nWould reformat: services/scheduler/objective.py\n2 files would be reformatted, 14 files already formatted\n")),
    ("claude", "The CHANGELOG has entries out of date order for May. Can you reorder them newest first and fix the inconsistent heading levels?", None),
)
