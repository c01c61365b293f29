"""Held-out turns (sixteenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 16:08 UTC: 0.727 hit, 0.161 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "quayside"

FACTS = {
    "reefer_poll": (
        "Reefer telemetry is polled every 90 seconds from the rack controllers, because the older Daikin units drop the Modbus session if polled faster and then stop reporting set-point alarms.",
        "90 seconds",
    ),
    "customs_hold_table": (
        "Customs holds are read only from the customs_release_v2 table, because the old customs_holds table is still written by the legacy EDI bridge but no longer receives release messages from the authority.",
        "customs_release_v2",
    ),
    "gate_tz": (
        "Gate transaction timestamps are stored in UTC but truck appointment slots are shown in Europe/Rotterdam, because haulier contracts define slot windows in local terminal time.",
        "Europe/Rotterdam",
    ),
    "edi_baplie_version": (
        "We parse BAPLIE stowage plans as SMDG version 2.2 only, because the carriers that sent 3.1 files kept omitting the VGM segment and the crane split planner crashed on missing weights.",
        "2.2",
    ),
    "crane_max_moves": (
        "The crane scheduler caps each STS crane at 32 moves per hour in plans, because the union agreement with the lashing gangs fixes that rate regardless of what the spreaders can physically do.",
        "32 moves per hour",
    ),
    "sftp_host": (
        "EDI files from shipping lines land on edi-in.quayside.internal over SFTP port 2222, because port 22 on that box is reserved for the ops bastion and carriers were whitelisted on 2222.",
        "edi-in.quayside.internal",
    ),
    "vgm_tolerance": (
        "A container is flagged for re-weighing when declared VGM and the gate weighbridge differ by more than 5 percent, because SOLAS enforcement by the port state inspectors uses that threshold.",
        "5 percent",
    ),
    "yard_block_ids": (
        "Yard block identifiers are two letters followed by two digits like RA07, because the RTG terminal operating screens truncate anything longer and operators then misplace boxes.",
        "RA07",
    ),
    "imo_segregation": (
        "Dangerous goods of IMO class 1 may only be assigned to yard block XZ01, because it is the only block inside the blast radius permit issued by the harbour master.",
        "XZ01",
    ),
    "release_owner": (
        "Changes to the berth allocation service need sign-off from Marieke de Vries of the marine operations team, because berth windows are contractually committed to the alliances months ahead.",
        "Marieke de Vries",
    ),
    "reefer_alarm_threshold": (
        "A reefer alarm is raised only after supply air deviates more than 2.5 degrees Celsius for three consecutive readings, because single spikes happen whenever the door is opened for inspection.",
        "2.5 degrees Celsius",
    ),
    "gate_ocr_confidence": (
        "Gate OCR container number reads below confidence 0.82 are routed to the manual clerk queue, because the check-digit validation alone still let swapped letters through at the in-gate.",
        "0.82",
    ),
    "demurrage_free_days": (
        "Import demurrage starts after 4 free days counted from discharge completion, not vessel arrival, because that is how the tariff published on the terminal website defines it.",
        "4 free days",
    ),
    "kafka_topic": (
        "Crane move events are published on the Kafka topic quay.crane.moves.v3 keyed by vessel visit id, because consumers rely on per-visit ordering to rebuild the bay plan.",
        "quay.crane.moves.v3",
    ),
    "feature_flag_twinlift": (
        "Twin-lift planning is behind the flag enable_twinlift_split, which stays off for berth 3, because the cranes there have single spreaders only.",
        "enable_twinlift_split",
    ),
    "coparn_retention": (
        "Raw COPARN and CODECO messages are kept for 400 days in the edi_archive bucket, because carrier billing disputes can be raised up to a year plus a month after the move.",
        "400 days",
    ),
    "vessel_visit_format": (
        "Vessel visit ids have the form call sign plus ISO week plus voyage suffix like PDHV-2419-E, because the port community system matches on that exact string.",
        "PDHV-2419-E",
    ),
    "tos_db_replica": (
        "Reporting queries must go to the read replica tos-db-ro.quayside.internal, because long yard inventory reports on the primary once stalled gate transactions during the morning peak.",
        "tos-db-ro.quayside.internal",
    ),
    "weight_units": (
        "All container weights inside the platform are integer kilograms, because some carriers send tonnes with decimals and others send pounds, and the rounding mismatches broke stack weight limits.",
        "integer kilograms",
    ),
    "stack_height": (
        "The yard planner never stacks laden boxes above 5 high in the RTG blocks, because the ground slab load rating in the civil engineering report was computed for five tiers.",
        "5 high",
    ),
    "edi_ack_window": (
        "APERAK acknowledgements must be returned to carriers within 15 minutes of receiving a COPRAR, because the alliance service level agreement penalises late acknowledgements per message.",
        "15 minutes",
    ),
    "oncall_channel": (
        "Production incidents for the gate system are announced in the Slack channel #qs-gate-incidents, because the hauliers' liaison desk only watches that channel during night shifts.",
        "#qs-gate-incidents",
    ),
}

DISTRACTORS = (
    "The yard map frontend uses MapLibre with vector tiles generated nightly from the CAD drawings of the terminal.",
    "Unit tests for the EDI parsers live under tests/edi and use sample files anonymised by replacing container numbers.",
    "We switched the berth planner UI from Moment to date-fns to shrink the bundle by about 60 KB.",
    "The straddle carrier fleet reports battery levels, but nothing in the platform consumes that feed yet.",
    "Pull request titles follow the pattern area: summary, for example gate: handle empty truck plate.",
    "The crane simulator in tools/cranesim replays a recorded vessel visit at ten times speed for demos.",
    "Grafana dashboards for yard occupancy are provisioned from JSON files under ops/grafana/dashboards.",
    "The terminal ran a pilot with automated stacking cranes in 2021 that was not continued.",
    "Docker images are built with multi-stage Dockerfiles and the final stage is based on distroless python.",
    "Our OpenAPI specs are generated from pydantic models and published to the internal developer portal.",
    "The rail gate handles roughly a fifth of the volume of the truck gate and has its own operator screens.",
    "Integration tests spin up Postgres and Redpanda with docker compose from the file compose.test.yml.",
    "The empty depot across the river is run by another company and only exchanges CODECO messages with us.",
    "We use ruff for linting and the line length is set to 100 characters across all Python services.",
    "The vessel schedule page caches the ETA feed from the port community system for two minutes.",
    "Quarterly game days rehearse failover of the gate service to the secondary data centre.",
)

CLAUDE_MD = """# quayside
Terminal operating platform: berth planning, crane scheduling, yard, gate, reefer and EDI services.
- Python services live under services/<name>, shared code under libs/quaycore.
- Run `make test SERVICE=<name>` before pushing; integration tests need docker compose.
- Keep migrations in services/<name>/migrations and never edit an applied one.
- Format with ruff format; type-check with mypy --strict on libs/.
"""

AGENTS_MD = """- Work in small commits with messages like `area: summary`.
- Do not touch ops/terraform without asking the platform team.
- Prefer adding tests next to the module you change.
- Ask before adding new third-party dependencies.
"""

SUMMARY = (
    "Summary: Earlier in this session we cleaned up the Grafana dashboard JSON for rail gate throughput "
    "and fixed a flaky snapshot test in the yard map frontend. We also renamed a few helper functions in "
    "libs/quaycore/strings.py and updated their call sites."
)

TURNS = (
    # reefer_poll
    ("reefer_poll", "claude",
     "Ops says the reefer dashboard feels laggy compared to the vendor's own screen, and they'd like near-real-time readings. "
     "Can you tighten the polling loop in services/reefer/collector.py so we read the rack controllers more often? "
     "I was thinking every 10s or so, but use your judgement. Also tidy up the logging in that file while you're there.",
     None),
    ("reefer_poll", "claude-tool",
     "The block C reefer racks keep going silent for a while every hour or so after yesterday's deploy. What changed and how do we fix it?",
     ("grep -n 'Modbus\\|session\\|interval' logs/reefer-collector-rack-c.log | tail -8",
      "2024-06-11T03:12:04Z INFO poll interval=20s rack=C-14\n"
      "2024-06-11T03:12:24Z INFO poll interval=20s rack=C-14\n"
      "2024-06-11T03:12:44Z WARN modbus: session closed by peer rack=C-14 unit=DAIKIN-LXE10\n"
      "2024-06-11T03:12:44Z ERROR read holding registers failed: connection reset\n"
      "2024-06-11T03:13:04Z WARN modbus: reconnect attempt 1 rack=C-14\n"
      "2024-06-11T03:29:51Z INFO modbus: session established rack=C-14\n"
      "2024-06-11T03:29:51Z WARN setpoint_alarm buffer empty since 03:12:44")),
    # customs_hold_table
    ("customs_hold_table", "codex",
     "gate lets out boxes that customs still holds, check hold lookup in gate/release_check.py", None),
    ("customs_hold_table", "claude-after-compact",
     "Back to the release check we touched before the summary. I want to write a small SQL view for the ops portal showing every "
     "import box that's still blocked by customs so the clerks stop phoning us. Which table should the view read from, and can you draft it in "
     "services/portal/sql/views/blocked_imports.sql?",
     None),
    # gate_tz
    ("gate_tz", "claude",
     "Hauliers are complaining that the appointment confirmation emails show slot times an hour or two off from what they booked. "
     "The email template is in services/gate/templates/slot_confirm.html and the formatting happens in services/gate/notify.py. "
     "Can you fix it so the times they see match what they booked? Add a test too.",
     None),
    ("gate_tz", "codex-tool",
     "appointment slot export off by 2h in summer, fix",
     ("pytest services/gate/tests/test_slot_export.py -q",
      "F.\n"
      "FAILED test_slot_export.py::test_morning_slot - AssertionError: '04:00-05:00' != '06:00-07:00'\n"
      "1 failed, 1 passed in 0.41s")),
    # edi_baplie_version
    ("edi_baplie_version", "claude-log",
     "Got this from the stowage import job overnight for the MSC file. Should I just extend the parser to accept it?\n"
     "```\n"
     "edi.baplie.loader WARNING unsupported message version D:13B:UN:SMDG31 from MSCU\n"
     "edi.baplie.loader ERROR rejected file MSCU_BAPLIE_20240611.edi (412 segments)\n"
     "planner.split WARNING no stowage plan for visit MSCV-2424-W, using empty bay plan\n"
     "```",
     None),
    ("edi_baplie_version", "codex",
     "add support for newer smdg baplie in edi/baplie/parser.py, carriers keep asking", None),
    # crane_max_moves
    ("crane_max_moves", "claude",
     "The commercial team wants the berth plan to show a shorter port stay for the big alliance calls. "
     "The crane productivity constant in services/cranesched/params.py looks conservative compared with what the new spreaders can do — "
     "the vendor quotes 40+ cycles an hour. Can you bump it so the schedules reflect the modern equipment and regenerate the example plan?",
     None),
    ("crane_max_moves", "codex-tool",
     "why does plan for berth 2 assign 45 mph to QC07, fix",
     ("python -m cranesched.plan --visit PDHV-2419-E --dry-run | head -6",
      "crane  moves  hours  rate\n"
      "QC05   288    9.0    32.0\n"
      "QC06   290    9.0    32.2\n"
      "QC07   405    9.0    45.0\n"
      "total  983    9.0\n"
      "warning: rate override from env CRANE_RATE_QC07=45")),
    # sftp_host
    ("sftp_host", "claude",
     "A new carrier, Nordlys Line, is onboarding next week and needs connection details for sending us COPRAR and BAPLIE files. "
     "Could you draft the onboarding section in docs/edi/onboarding.md with the host and port they should connect to, and the expected file naming? "
     "Keep it short, they'll forward it to their IT vendor.",
     None),
    ("sftp_host", "codex-tool",
     "carrier says uploads time out, check",
     ("grep -i 'nordlys' logs/sshd-edi.log | tail -4",
      "Jun 12 08:01:13 edi-in sshd[2211]: Connection from 185.44.12.9 port 51122 on 10.8.0.4 port 22 rejected: not in AllowUsers for bastion\n"
      "Jun 12 08:01:40 edi-in sshd[2214]: Connection from 185.44.12.9 port 51130 on 10.8.0.4 port 22 rejected: not in AllowUsers for bastion\n"
      "Jun 12 08:02:02 edi-in sshd[2219]: Connection from 185.44.12.9 port 51141 on 10.8.0.4 port 22 rejected: not in AllowUsers for bastion\n"
      "Jun 12 08:02:30 edi-in sshd[2221]: Disconnected from 185.44.12.9 port 51141")),
    # vgm_tolerance
    ("vgm_tolerance", "codex",
     "weighbridge mismatch check too strict, flags everything, see gate/weigh.py", None),
    ("vgm_tolerance", "claude-log",
     "Port state inspectors flagged two boxes we let through yesterday. Here's what our gate logged for them — why didn't we stop them?\n"
     "```\n"
     "gate.weigh INFO MSKU7712034 declared=24100 measured=25700 delta=6.6% action=pass\n"
     "gate.weigh INFO TGHU5521980 declared=18000 measured=19150 delta=6.4% action=pass\n"
     "gate.weigh DEBUG tolerance loaded from settings: 0.08\n"
     "```",
     None),
    # yard_block_ids
    ("yard_block_ids", "claude",
     "We're adding the new eastern extension to the yard model. The civil team named the blocks EAST-NORTH-1 through EAST-NORTH-6 on their drawings, "
     "so please add those to services/yard/seed/blocks.yaml and the enum in libs/quaycore/yard.py. Keep the existing blocks untouched.",
     None),
    ("yard_block_ids", "claude-after-compact",
     "Back to the yard work from before the summary: operators say boxes placed in the new blocks show up under the wrong block on their RTG screens, "
     "some of them get lost. Any idea what we did wrong in the seed data?",
     None),
    # imo_segregation
    ("imo_segregation", "codex",
     "yard alloc puts explosives in RB03 sometimes, fix allocation rule", None),
    ("imo_segregation", "claude",
     "Block XZ01 is almost full this week because of a large fireworks shipment ahead of the national holiday. "
     "Could you make the dangerous-goods allocator in services/yard/dg_alloc.py spill over to the nearest free block when its preferred one is full, "
     "instead of rejecting the booking? Ops wants fewer rejections at the gate.",
     None),
    # release_owner
    ("release_owner", "claude",
     "I've finished the berth window refactor in services/berth/allocation.py and the tests are green. "
     "Can you write the PR description and tell me who I should request review and approval from before it merges? "
     "I'm new to this part of the codebase.",
     None),
    ("release_owner", "codex-tool",
     "pr blocked, who needs to approve",
     ("gh pr view 1182 --json reviewDecision,reviews,files",
      "{\"reviewDecision\": \"REVIEW_REQUIRED\", \"reviews\": [{\"author\": \"jbakker\", \"state\": \"APPROVED\"}], "
      "\"files\": [{\"path\": \"services/berth/allocation.py\"}, {\"path\": \"services/berth/windows.py\"}]}")),
    # reefer_alarm_threshold
    ("reefer_alarm_threshold", "claude-log",
     "The reefer desk got paged 40 times last night for basically nothing. Can you make the alerting smarter?\n"
     "```\n"
     "reefer.alarm CRIT CRLU1234567 supply=-15.9 setpoint=-18.0 dev=2.1 reading=1/1\n"
     "reefer.alarm CRIT CRLU1234567 supply=-18.1 setpoint=-18.0 dev=0.1 cleared\n"
     "reefer.alarm CRIT SZLU9988776 supply=7.2 setpoint=4.0 dev=3.2 reading=1/1\n"
     "reefer.alarm CRIT SZLU9988776 supply=4.1 setpoint=4.0 dev=0.1 cleared\n"
     "```",
     None),
    ("reefer_alarm_threshold", "codex",
     "reefer alarms fire on door open, debounce in reefer/alarms.py", None),
    # gate_ocr_confidence
    ("gate_ocr_confidence", "claude",
     "The manual clerk queue at the in-gate is swamped in the mornings and trucks are backing up onto the access road. "
     "Could you look at services/gate/ocr_router.py and find a way to send fewer reads to the clerks? "
     "The OCR vendor says their model is pretty accurate now.",
     None),
    ("gate_ocr_confidence", "claude-tool",
     "Why did this truck go through automatically with a wrong box number? The container on the chassis was actually TCLU3058612.",
     ("jq '.[] | select(.plate==\"34-BLK-7\")' logs/ocr-reads-2024-06-12.json",
      "{\n  \"plate\": \"34-BLK-7\",\n  \"read\": \"TCLU3O58612\",\n  \"normalized\": \"TCLU3058612\",\n"
      "  \"check_digit_ok\": true,\n  \"confidence\": 0.71,\n  \"route\": \"auto\",\n  \"threshold\": 0.65\n}")),
    # demurrage_free_days
    ("demurrage_free_days", "codex",
     "demurrage invoice starts a day early for late discharges, fix billing/demurrage.py", None),
    ("demurrage_free_days", "claude-after-compact",
     "Back to billing from before the summary. A consignee disputes their demurrage bill: the vessel arrived Monday, discharge finished Wednesday night, "
     "and we charged from Friday. Can you check the calculation in services/billing/demurrage.py and tell me whether we're right?",
     None),
    # kafka_topic
    ("kafka_topic", "claude",
     "I'm writing a new consumer in services/bayview that rebuilds the live bay plan for the vessel planners' screen. "
     "Can you scaffold it with our usual aiokafka setup, subscribe to whatever stream carries the crane moves, and make sure the events for a single call come in order?",
     None),
    ("kafka_topic", "codex-tool",
     "bayview consumer gets nothing, why",
     ("kcat -b kafka:9092 -L | grep -i crane",
      "  topic \"quay.crane.moves.v2\" with 12 partitions:\n"
      "  topic \"quay.crane.moves.v3\" with 24 partitions:\n"
      "  topic \"quay.crane.health\" with 6 partitions:")),
    # feature_flag_twinlift
    ("feature_flag_twinlift", "claude-log",
     "The planner for the Maersk call at berth 3 generated this and the crane driver radioed that it's impossible. What's going on?\n"
     "```\n"
     "cranesched.split INFO visit=MAEV-2424-N berth=3 twin_moves=148 single_moves=212\n"
     "cranesched.split INFO QC11 job 0042 TWIN 20' bay 14 rows 02+04\n"
     "flags INFO loaded overrides berth=3 {\"enable_twinlift_split\": true}\n"
     "```",
     None),
    ("feature_flag_twinlift", "codex",
     "enable twin lifts everywhere, they're faster, flip it in config/flags.yaml", None),
    # coparn_retention
    ("coparn_retention", "claude",
     "Storage costs on the EDI archive are growing and finance asked us to trim them. "
     "Can you add an S3 lifecycle rule in ops/storage/edi_archive.tf that expires raw carrier messages after 90 days? "
     "We never look at them after the vessel sails anyway.",
     None),
    ("coparn_retention", "claude-tool",
     "A carrier is disputing a move from last spring and we can't find the original message. Why not?",
     ("aws s3api get-bucket-lifecycle-configuration --bucket edi_archive",
      "{\n  \"Rules\": [\n    {\n      \"ID\": \"expire-raw\",\n      \"Filter\": {\"Prefix\": \"raw/\"},\n"
      "      \"Status\": \"Enabled\",\n      \"Expiration\": {\"Days\": 180}\n    }\n  ]\n}")),
    # vessel_visit_format
    ("vessel_visit_format", "codex",
     "pcs rejects our visit ids after refactor, check berth/visit_id.py", None),
    ("vessel_visit_format", "claude",
     "I'm writing the generator for new vessel call identifiers in services/berth/visit_id.py since the old one was removed in the cleanup. "
     "Can you implement make_visit_id(call_sign, eta, direction) and a couple of tests? A UUID would be simplest honestly.",
     None),
    # tos_db_replica
    ("tos_db_replica", "claude",
     "Finance wants a monthly yard dwell report grouped by line operator, exported as CSV. "
     "Please add a script under services/reports/dwell_monthly.py using our usual SQLAlchemy engine setup, and a cron entry in ops/cron/reports.yaml to run it on the first of the month at 07:00.",
     None),
    ("tos_db_replica", "claude-log",
     "Gate staff said transactions froze for about 6 minutes this morning. Here's the DB log — any idea?\n"
     "```\n"
     "2024-06-12 07:31:02 UTC [tos-db-01] LOG: duration: 361204.118 ms statement: SELECT b.block, c.* FROM yard_inventory c JOIN ...\n"
     "2024-06-12 07:31:02 UTC [tos-db-01] LOG: process 81234 still waiting for ShareLock on transaction 99812 after 1000.042 ms\n"
     "2024-06-12 07:31:02 UTC [tos-db-01] DETAIL: application_name=gate-api\n"
     "```",
     None),
    # weight_units
    ("weight_units", "codex",
     "store gross weight as float tonnes in yard/models.py, carriers send tonnes anyway", None),
    ("weight_units", "claude-tool",
     "The stack weight validator is rejecting a perfectly normal tier. Can you figure out why?",
     ("pytest services/yard/tests/test_stack_limits.py -q -k hapag",
      "F\n"
      "FAILED test_stack_limits.py::test_hapag_coparn - ValueError: stack weight 71.63 exceeds limit 150000 for tier 3? "
      "got mixed weights [24300, 23.9, 23430]\n"
      "1 failed in 0.22s")),
    # stack_height
    ("stack_height", "claude",
     "Yard occupancy is above 90% and the planners want more capacity in the RTG blocks before peak season. "
     "The new RTGs can lift 1-over-6, so can you raise the max tier in services/yard/planner/limits.py accordingly and rerun the capacity estimate script?",
     None),
    ("stack_height", "codex",
     "planner stacks only 5 high in RTG blocks, cranes do 6, fix", None),
    # edi_ack_window
    ("edi_ack_window", "claude-after-compact",
     "Back to EDI after that summary. I'd like to batch APERAK responses and send them once an hour instead of per message, to cut the SFTP connection churn. "
     "Can you sketch the change in services/edi/aperak_sender.py?",
     None),
    ("edi_ack_window", "claude-log",
     "Finance forwarded a penalty invoice from the alliance. Our sender log for that day looks like this:\n"
     "```\n"
     "edi.aperak INFO queued ack for COPRAR ref=HLC-88120 received=09:02:11\n"
     "edi.aperak INFO batch flush size=214 at=09:45:00\n"
     "edi.aperak INFO queued ack for COPRAR ref=HLC-88151 received=09:47:40\n"
     "edi.aperak INFO batch flush size=190 at=10:30:00\n"
     "```\nWhat's the problem?",
     None),
    # oncall_channel
    ("oncall_channel", "codex",
     "wire gate incident alerts to slack in gate/alerting.py", None),
    ("oncall_channel", "claude-after-compact",
     "Back to the gate outage runbook from before the summary. Can you finish the 'Communicate' step in docs/runbooks/gate_down.md so that the hauliers' night desk actually hears about outages?",
     None),
)

NULL_TURNS = (
    ("codex", "rename parse_codeco_line to parse_codeco_segment in edi/codeco.py and callers", None),
    ("claude",
     "The README for services/yard has a few typos and the setup steps are out of order. Can you fix the spelling and move the 'Install' section above 'Run locally'?",
     None),
    ("codex-tool", "fix lint",
     ("ruff check services/gate",
      "services/gate/notify.py:12:1: F401 [*] `os` imported but unused\n"
      "services/gate/ocr_router.py:88:101: E501 Line too long (112 > 100)\n"
      "Found 2 errors.\n[*] 1 fixable with the `--fix` option.")),
    ("claude",
     "Can you write unit tests for iso6346_check_digit in libs/quaycore/containers.py? It computes the check digit for container numbers; cover a few known valid numbers and letters mapped past the multiples of 11.",
     None),
    ("codex", "bump pydantic to 2.7 in services/berth/pyproject.toml", None),
    ("claude-tool", "This test is failing after my change, can you fix it?",
     ("pytest libs/quaycore/tests/test_strings.py -q",
      "F\nFAILED test_strings.py::test_slugify_unicode - AssertionError: 'kai-zuid' != 'kai_zuid'\n1 failed in 0.05s")),
    ("codex", "add type hints to libs/quaycore/geometry.py", None),
    ("claude",
     "Please run ruff format over services/reefer and commit the formatting separately from any logic changes. Nothing else needs to change.",
     None),
    ("claude-log",
     "My local build fails with this, any idea?\n```\nModuleNotFoundError: No module named 'quaycore.strings'\n```\nI just renamed the file to text.py.",
     None),
    ("codex-tool", "fix failing mypy",
     ("mypy --strict libs/quaycore",
      "libs/quaycore/geometry.py:21: error: Function is missing a return type annotation  [no-untyped-def]\nFound 1 error in 1 file (checked 14 source files)")),
    ("claude-after-compact",
     "Back to the helper renames from before the summary: can you also update the docstrings that still mention the old names?",
     None),
    ("codex", "sort imports in services/gate", None),
)
