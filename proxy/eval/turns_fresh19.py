"""Held-out turns (nineteenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 19:53 UTC: 0.659 hit, 0.125 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "binroute"

FACTS = {
    "rfid_debounce": (
        "RFID lift events from the same bin tag within 90 seconds are collapsed into one lift in ingest/lifts.py, because the Sensoneo arm readers double-fire when the gripper re-seats the bin.",
        "90 seconds",
    ),
    "weighbridge_tz": (
        "Weighbridge tickets from the Hollins Lane landfill carry naive Europe/London wall-clock timestamps, so the ticket importer localises them before converting to UTC and matching them to truck runs.",
        "Europe/London",
    ),
    "ticket_units": (
        "Net weight on weighbridge tickets is stored as integer kilograms in tickets.net_kg, never as float tonnes, because the council gate-fee invoice rounds per ticket and float drift broke monthly reconciliation.",
        "tickets.net_kg",
    ),
    "shift_cap": (
        "The route optimiser caps each driver shift at 9.5 driving hours including the tipping run, because the GMB union agreement counts landfill queue time as driving time.",
        "9.5 driving hours",
    ),
    "complaint_window": (
        "Missed-pickup complaints are auto-validated against lift logs only when filed within 48 hours of the scheduled collection, because older complaints go to a human reviewer in Customer Ops.",
        "48 hours",
    ),
    "contamination_score": (
        "A recycling bin is flagged contaminated only when the audit photo score exceeds 0.35 on two consecutive audits, because single-audit flagging caused a flood of appeals during the Northfield pilot.",
        "0.35",
    ),
    "osrm_host": (
        "Route optimisation calls our self-hosted OSRM at osrm.internal.binroute.net:5000 with the hgv profile, because the public car profile routed 26-tonne trucks under the Mill Street low bridge.",
        "osrm.internal.binroute.net",
    ),
    "lifts_view": (
        "Analysts and reports must read lift data from the lifts_clean view, not the raw lift_events_raw table, because raw rows include test-rig tags from the depot workshop.",
        "lifts_clean",
    ),
    "complaint_paging": (
        "Missed-pickup SLA breaches page the Opsgenie schedule cust-ops-primary rather than platform on-call, because only Customer Ops supervisors can dispatch a return crew.",
        "cust-ops-primary",
    ),
    "reopt_flag": (
        "Mid-shift re-routing is gated by the ROUTE_LIVE_REOPT flag, which stays off for the Eastside depot because its trucks run old Trimble CX units that reject route pushes after login.",
        "ROUTE_LIVE_REOPT",
    ),
    "payload_margin": (
        "The optimiser loads rear-loader compactors to 85 percent of rated payload rather than full, because wet-week garden waste is much heavier than the per-bin weight estimate assumes.",
        "85 percent",
    ),
    "tag_case": (
        "The ingest normaliser uppercases RFID EPC tag IDs before joining to bin_registry, because the older Zebra handheld scanners emit lowercase hex and the join silently dropped those bins.",
        "bin_registry",
    ),
    "weighbridge_ratelimit": (
        "The Avery Weigh-Tronix gateway limits us to 30 requests per minute per site, so the ticket poller fetches tickets in one batch every five minutes instead of per truck.",
        "30 requests per minute",
    ),
    "holiday_calendar": (
        "Bank holiday collection slips live in config/calendars/holiday_shifts.yaml, maintained by Priya Natarajan in Service Planning, because the council only publishes the slip days as a PDF.",
        "holiday_shifts.yaml",
    ),
    "ev_reserve": (
        "Electric refuse trucks with fleet prefix EV- are planned to return to depot with a 20 percent battery reserve, because the Dennis Eagle eCollect range estimate drops badly in cold weather.",
        "20 percent battery reserve",
    ),
    "audit_photo_bucket": (
        "Contamination audit photos go to s3://binroute-audit-photos with a 180-day lifecycle expiry, because they can show faces and house numbers and the DPIA only allows that retention.",
        "s3://binroute-audit-photos",
    ),
    "quiet_zone": (
        "No route may start collecting before 06:00 in streets tagged quiet_zone in zones.geojson, because the council noise bylaw fines early lifts near hospitals and care homes.",
        "06:00",
    ),
    "driver_api_compat": (
        "The driver tablet API under /api/driver/v2 must stay backward-compatible for two releases, because the Android app on truck tablets only updates over depot Wi-Fi and lags behind.",
        "/api/driver/v2",
    ),
    "kafka_key": (
        "Lift events are published to Kafka topic fleet.lifts.v3 keyed by truck_id, not bin_id, because the route reconstruction job needs per-truck ordering of lifts.",
        "fleet.lifts.v3",
    ),
    "bng_projection": (
        "Route geometry is stored in PostGIS as EPSG:27700 British National Grid and converted to WGS84 only at the API edge, because the council street gazetteer and USRNs use BNG.",
        "EPSG:27700",
    ),
    "trade_empty_lift": (
        "Trade-waste lifts weighing under 5 kg are recorded as empty presentation and not billed, because charging for empty bins caused most commercial billing disputes last year.",
        "5 kg",
    ),
    "deploy_freeze": (
        "Route optimiser production deploys are frozen between 04:00 and 14:00 on collection days, because trucks download their routes at shift start and a mid-rollout restart strands crews.",
        "04:00 and 14:00",
    ),
}

DISTRACTORS = (
    "The depot dashboard uses Grafana with the Loki datasource named binroute-logs; panel JSON lives in ops/grafana/ and is provisioned on deploy.",
    "Bin registry imports from the council asset system run nightly and skip rows whose UPRN is blank, logging them to import_rejects.",
    "The fleet telematics adapter retries GPS pings three times with jittered backoff before marking a truck as offline.",
    "We use ruff and mypy in pre-commit; the CI job lint-and-type must pass before merge.",
    "Food waste caddies use a separate round type FOOD7 collected weekly on the same day as residual waste.",
    "Route maps in the driver app are rendered from vector tiles served by tiles.binroute.net, cached for 24 hours on the tablet.",
    "Crew names shown on the supervisor screen come from the HR export and are refreshed every Monday morning.",
    "The complaints web form is owned by the council's digital team; we only receive submissions through the webhook.",
    "Glass collections are fortnightly and use a separate kerbside sort vehicle with three compartments.",
    "Integration tests use the synthetic town fixture Little Wickham under tests/fixtures/ with 1,200 bins.",
    "The bulky waste booking service is a separate repo, binroute-bulky, with its own release cadence.",
    "Tyre pressure alerts from the fleet sensors go to the workshop mailbox, not to the platform team.",
    "The weekly tonnage report for councillors is generated as a PDF from reports/templates/weekly.html.",
    "Garden waste subscriptions renew every April; the subscriber list is synced from the council payments system.",
    "Our Python services target 3.12 and are packaged with uv; Docker images are based on python:3.12-slim.",
    "The staging environment mirrors two depots only, Westgate and Eastside, to keep costs down.",
)

CLAUDE_MD = """# binroute
City waste collection platform: route optimiser, lift ingest, weighbridge tickets, complaints, audits.
- Services live under services/<name>; shared code in libs/binroute_common.
- Run `make test` before pushing; `make lint` runs ruff and mypy.
- Migrations: alembic under db/migrations, one migration per PR.
- Never commit real resident addresses in fixtures; use the Little Wickham dataset.
"""

AGENTS_MD = """- Use uv for dependency changes and keep uv.lock committed.
- Keep PRs small and scoped to one service.
- Put new tests next to existing ones in services/<name>/tests.
- Ask before touching infra/terraform.
- Write commit messages in the imperative mood.
"""

SUMMARY = (
    "Summary: Earlier in this session we moved the supervisor dashboard's crew list to a paginated endpoint and fixed the "
    "Grafana panel that double-counted garden waste rounds. We also updated the README section on running the Little "
    "Wickham fixture locally."
)

TURNS = (
    # rfid_debounce
    ("rfid_debounce", "claude-log",
     "Seeing this in the lift count reconciliation for round W14 yesterday:\n```\n2024-11-12T07:41:03Z lift tag=E28011700000020F3A6B truck=RL-221 arm=L\n2024-11-12T07:41:41Z lift tag=E28011700000020F3A6B truck=RL-221 arm=L\n2024-11-12T07:44:10Z lift tag=E28011700000020F3A6B truck=RL-221 arm=L\nreconcile: W14 expected=612 counted=618 over=6\n```\nThe first two look like the same bin, the third maybe not. What should ingest be doing here and is it a bug?",
     None),
    ("rfid_debounce", "codex",
     "lift counts too high on arm-reader trucks, dedupe in ingest/lifts.py looks off, fix", None),
    # weighbridge_tz
    ("weighbridge_tz", "claude-tool",
     "The weighbridge matcher is failing to pair tickets with runs but only since the clocks changed last weekend. Can you work out why and fix services/tickets/importer.py?",
     ("pytest services/tickets/tests/test_match.py -q",
      "F.F.\nFAILED test_match.py::test_ticket_matches_run_after_dst - AssertionError: no run for ticket HL-883104 (ticket_time=2024-10-28 09:12:00, nearest run ends 2024-10-28 08:15:12+00:00)\nFAILED test_match.py::test_ticket_matches_run_summer - AssertionError: matched run R-5521 expected R-5520\n2 failed, 2 passed in 0.84s")),
    ("weighbridge_tz", "claude-after-compact",
     "Back to the landfill ticket importer from before the summary. I want to add a second tip site, Copse Farm, whose feed gives ISO timestamps with offsets. How should the parse step handle both kinds of feed?",
     None),
    # ticket_units
    ("ticket_units", "claude",
     "Finance wants the monthly gate-fee export to show tonnes with three decimals. I was going to just change the column in the tickets model to a float of tonnes and divide at ingest so everything downstream is simpler. Can you make that change in services/tickets/models.py and the migration?",
     None),
    ("ticket_units", "codex-tool",
     "gate fee recon off by a few pence again, find why",
     ("python scripts/recon.py --month 2024-10",
      "site=HOLLINS tickets=4412 ours_total=£187,334.17 invoice_total=£187,334.52 diff=£0.35\nfirst divergent ticket: HL-880017 ours=12.340000000000002t invoice=12.34t")),
    # shift_cap
    ("shift_cap", "codex",
     "optimiser gives rl-104 a 10h route incl tip run, is that allowed? adjust solver constraints", None),
    ("shift_cap", "claude",
     "The Westgate supervisor says the new long rural round is planned as one shift but crews keep running out of time because of the queue at the landfill. I'd like the solver in services/optimiser/constraints.py to only count wheel-turning time so we can fit more bins per shift. Can you change it that way?",
     None),
    # complaint_window
    ("complaint_window", "claude",
     "A resident reported a missed bin from last Monday and the system auto-closed it as 'collected' based on the lift log. Now they're angry. Can you look at services/complaints/validate.py and tell me whether the auto-check should even have run on a report filed that late, then patch it?",
     None),
    ("complaint_window", "claude-tool",
     "Why is complaint C-77120 sitting in the manual queue instead of being checked automatically? The lift log has it.",
     ("binroute complaints show C-77120",
      "{\"id\": \"C-77120\", \"uprn\": \"100012345678\", \"scheduled\": \"2024-11-04\", \"filed_at\": \"2024-11-07T10:02:00Z\", \"status\": \"manual_review\", \"auto_validation\": \"skipped\"}")),
    # contamination_score
    ("contamination_score", "codex",
     "audit: flag bin as contaminated as soon as score > 0.35, drop the consecutive check", None),
    ("contamination_score", "claude-log",
     "Got this from the audit job overnight:\n```\naudit bin=B-44102 score=0.52 prev_score=0.12 -> status=clean\naudit bin=B-44107 score=0.41 prev_score=0.38 -> status=contaminated\n```\nB-44102 had a visibly awful photo. Is the rule in services/audits/score.py broken?",
     None),
    # osrm_host
    ("osrm_host", "claude",
     "Local routing dev is slow because the optimiser waits on the internal network. I want to point services/optimiser/routing.py at router.project-osrm.org so it works anywhere without VPN. Can you make the base URL switch to that?",
     None),
    ("osrm_host", "codex-tool",
     "routing returns weird paths for rl trucks in staging, check config",
     ("grep -rn OSRM services/optimiser/ config/",
      "config/staging.env:4:OSRM_URL=http://osrm-car.staging.local:5000/route/v1/driving\nservices/optimiser/routing.py:12:OSRM_URL = os.environ[\"OSRM_URL\"]")),
    # lifts_view
    ("lifts_view", "claude-after-compact",
     "Back to the weekly lift report from before the summary. The numbers for Westgate look a little high, with some bins lifted dozens of times. Can you write the SQL for reports/weekly_lifts.sql properly?",
     None),
    ("lifts_view", "codex",
     "new query for bins lifted per round per week, put in reports/", None),
    # complaint_paging
    ("complaint_paging", "claude-tool",
     "Platform on-call got paged at 2am for a missed-pickup SLA breach and had nothing they could do. Can you fix the alert routing?",
     ("cat ops/alerts/complaints.yaml",
      "- alert: MissedPickupSLABreach\n  expr: complaints_open_over_sla > 0\n  for: 15m\n  labels:\n    severity: page\n  annotations:\n    opsgenie_schedule: platform-oncall")),
    ("complaint_paging", "codex",
     "add alert for missed pickups breaching sla, wire to opsgenie", None),
    # reopt_flag
    ("reopt_flag", "claude",
     "Eastside has had two road closures this week and the supervisor asked why their trucks don't get updated routes mid-shift like Westgate does. It seems like we just forgot to enable something there. Can you turn it on for them in config/depots/eastside.yaml?",
     None),
    ("reopt_flag", "claude-log",
     "Eastside tablets throwing this after a road closure push:\n```\n[driver-sync] push route_rev=7 to truck=ES-031 -> 409 REJECTED (session locked, device=CX-750 fw=3.2.1)\n[driver-sync] retry 3/3 failed, truck ES-031 left on route_rev=6\n```\nShould I increase retries?",
     None),
    # payload_margin
    ("payload_margin", "codex",
     "capacity constraint in solver leaves trucks part empty, use full rated payload", None),
    ("payload_margin", "claude-after-compact",
     "Back to the garden waste round planning from before the summary. The planner is putting fewer stops per truck than I expected given their rated capacity. Can you explain what's limiting it and whether I can raise the limit for the autumn?",
     None),
    # tag_case
    ("tag_case", "claude-tool",
     "Some bins scanned during the Eastside audit never show up against their address. Can you figure out what's going on?",
     ("psql -c \"select tag, count(*) from scans_unmatched group by 1 limit 3\"",
      "           tag            | count\n--------------------------+-------\n e2801170000002103c1f9a7b |    14\n e28011700000021040aa3c02 |     9\n e2801170000002104b7d1e55 |    11\n(3 rows)")),
    ("tag_case", "codex",
     "write a join helper for scans to bins in ingest/normalise.py", None),
    # weighbridge_ratelimit
    ("weighbridge_ratelimit", "claude",
     "Supervisors want weighbridge tickets to appear in the dashboard as soon as each truck leaves the landfill, not minutes later. I was thinking we make services/tickets/poller.py fetch the ticket for each truck the moment its geofence exit fires. Can you implement that?",
     None),
    ("weighbridge_ratelimit", "codex-tool",
     "ticket poller keeps failing at hollins, fix",
     ("kubectl logs deploy/ticket-poller --tail=5",
      "10:02:01 GET /sites/HOLLINS/tickets?truck=RL-221 200\n10:02:01 GET /sites/HOLLINS/tickets?truck=RL-224 200\n10:02:02 GET /sites/HOLLINS/tickets?truck=RL-230 429 Too Many Requests retry-after=41\n10:02:02 GET /sites/HOLLINS/tickets?truck=RL-231 429 Too Many Requests retry-after=40\n10:02:03 poller: 17 trucks pending")),
    # holiday_calendar
    ("holiday_calendar", "claude",
     "The council just announced that Boxing Day collections move to the Saturday. Where do I put that so the planner picks it up, and who should review it? I'd rather not hardcode dates in the optimiser.",
     None),
    ("holiday_calendar", "codex",
     "christmas week routes planned on wrong days, fix", None),
    # ev_reserve
    ("ev_reserve", "claude-log",
     "One of the electric trucks nearly didn't make it back:\n```\ntelematics truck=EV-007 soc=6% dist_to_depot=4.1km ambient=-2C\nplanner: EV-007 planned return soc=21%\n```\nThe plan looked fine. Should we tighten something, or is the planner ignoring the reserve?",
     None),
    ("ev_reserve", "codex",
     "let ev trucks run until battery hits 5%, more stops per shift", None),
    # audit_photo_bucket
    ("audit_photo_bucket", "claude-tool",
     "Storage costs for audits keep climbing. Can you check whether we are keeping the contamination photos longer than we should and fix the infra?",
     ("aws s3api get-bucket-lifecycle-configuration --bucket binroute-audit-photos",
      "An error occurred (NoSuchLifecycleConfiguration) when calling the GetBucketLifecycleConfiguration operation: The lifecycle configuration does not exist")),
    ("audit_photo_bucket", "claude",
     "The data science team wants to train a contamination classifier and asked me to copy all the audit photos since launch into their own bucket for permanent keeping. Can you write a script in scripts/ that does the copy?",
     None),
    # quiet_zone
    ("quiet_zone", "claude",
     "To finish the St Anne's round before the school run, I'd like that route to start at 05:30 instead. Can you change the start time in config/rounds/st_annes.yaml and regenerate the route? It goes past the hospital but it's only a few streets.",
     None),
    ("quiet_zone", "claude-after-compact",
     "Back to the earliest-start logic we were looking at before the summary. A councillor forwarded a noise complaint near the care home on Elm Road. What check should the planner be doing for early lifts there?",
     None),
    # driver_api_compat
    ("driver_api_compat", "codex",
     "rename field bin_uid to bin_id in driver endpoints, drop old one", None),
    ("driver_api_compat", "claude-tool",
     "After yesterday's release a bunch of trucks can't load their stop lists. Can you find out why?",
     ("kubectl logs deploy/driver-api --tail=4",
      "GET /api/driver/v2/stops?truck=RL-118 app=4.11.0 -> 200\nGET /api/driver/v2/stops?truck=RL-121 app=4.9.2 -> 500 KeyError: 'bin_uid'\nGET /api/driver/v2/stops?truck=RL-127 app=4.9.2 -> 500 KeyError: 'bin_uid'\nGET /api/driver/v2/stops?truck=RL-130 app=4.9.0 -> 500 KeyError: 'bin_uid'")),
    # kafka_key
    ("kafka_key", "claude",
     "The lift producer is hot on a few partitions and I'd like to spread load more evenly. Partitioning by bin looks like the obvious choice since there are far more bins than trucks. Can you change the producer in ingest/publish.py to do that?",
     None),
    ("kafka_key", "claude-log",
     "Route reconstruction spat this out:\n```\nreconstruct truck=RL-221 round=W14 WARN out-of-order lift seq=118 after seq=121\nreconstruct truck=RL-221 round=W14 WARN out-of-order lift seq=119 after seq=121\nreconstruct: 37 trucks with reordered lifts since 09:00 deploy\n```\nSomething in this morning's deploy changed the producer. What's the likely cause?",
     None),
    # bng_projection
    ("bng_projection", "codex",
     "store route geometry as lat/lon 4326 in postgis, simpler for frontend", None),
    ("bng_projection", "claude-tool",
     "The street-matching job is returning no USRN for any of the new route segments. Can you find out what's wrong?",
     ("psql -c \"select id, st_srid(geom), st_astext(st_startpoint(geom)) from route_segments order by id desc limit 2\"",
      "  id   | st_srid |        st_astext\n-------+---------+--------------------------\n 90412 |    4326 | POINT(-1.5491 53.8008)\n 90411 |    4326 | POINT(-1.5488 53.8011)\n(2 rows)")),
    # trade_empty_lift
    ("trade_empty_lift", "claude",
     "A café on Market Street is disputing three lifts on their October invoice. The weights were 2 kg, 3 kg and 1 kg. Can you look at services/billing/trade.py and tell me whether those should have been charged, and fix it if not?",
     None),
    ("trade_empty_lift", "codex-tool",
     "trade invoice totals jumped this month, check billing",
     ("pytest services/billing/tests -q -k trade",
      "F\nFAILED test_trade.py::test_light_lift_not_billed - assert 3 == 2  (lifts billed for customer T-0091; weights [212.0, 4.2, 180.5])\n1 failed in 0.31s")),
    # deploy_freeze
    ("deploy_freeze", "codex",
     "set up auto deploy of optimiser on every merge to main", None),
    ("deploy_freeze", "claude-after-compact",
     "Back to the optimiser hotfix from before the summary. It's 08:30 on a Tuesday and the fix is reviewed and green. Can I ship it to production now, or what's the right plan?",
     None),
)

NULL_TURNS = (
    ("codex", "rename calc_dist to haversine_km in libs/binroute_common/geo.py and update callers", None),
    ("claude", "The README's 'Getting started' section still says to run `pip install -r requirements.txt`, but we moved to uv months ago. Can you rewrite that section so it explains `uv sync` and `make test` clearly?", None),
    ("codex-tool", "fix lint errors in services/complaints",
     ("ruff check services/complaints",
      "services/complaints/api.py:14:1: F401 [*] `datetime.timezone` imported but unused\nservices/complaints/api.py:88:89: E501 Line too long (104 > 88)\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.")),
    ("claude", "Please add unit tests for the pure helper `format_uprn` in libs/binroute_common/ids.py. It should zero-pad to 12 digits and reject non-numeric input; cover the edge cases you think matter.", None),
    ("codex", "typo 'recieved' in services/tickets/importer.py log messages", None),
    ("claude-tool", "Can you bump httpx to the latest minor and make sure nothing breaks?",
     ("uv pip list | grep httpx",
      "httpx                 0.26.0")),
    ("claude", "The docstring on `RoundPlanner.plan()` is out of date since we added the depot argument. Can you update it to describe the parameters and return type properly?", None),
    ("codex", "sort imports across services/audits with ruff", None),
    ("claude-log", "Test run is failing on my machine only:\n```\nE   ModuleNotFoundError: No module named 'freezegun'\n```\nIs it missing from the dev dependencies? Please add it if so.", None),
    ("codex-tool", "mypy complains in geo.py, fix types",
     ("mypy libs/binroute_common/geo.py",
      "libs/binroute_common/geo.py:22: error: Function is missing a return type annotation  [no-untyped-def]\nFound 1 error in 1 file (checked 1 source file)")),
    ("claude-after-compact", "Back to the README work from before the summary. Can you also add a short table of contents at the top listing the existing sections?", None),
    ("codex", "add __repr__ to the Bin dataclass in libs/binroute_common/models.py", None),
)
