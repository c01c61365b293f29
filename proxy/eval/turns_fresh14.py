"""Held-out turns (fourteenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 13:21 UTC: 0.682 hit, 0.071 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "groundlink"

FACTS = {
    "min_elevation": (
        "Pass planning uses a 7 degree minimum elevation mask at every site, because below that the Svalbard and Punta Arenas dishes see terrain multipath and dropped frames.",
        "7 degree",
    ),
    "tle_source": (
        "Orbit propagation pulls TLEs only from the Space-Track mirror at tle-cache.gl.internal, because direct Celestrak polling got our IP rate-limited during the March launch campaign.",
        "tle-cache.gl.internal",
    ),
    "schedule_tz": (
        "The antenna scheduler stores and compares all pass windows in UTC and only converts to site local time in the operator UI, because Punta Arenas DST shifts once double-booked a dish.",
        "UTC",
    ),
    "slew_buffer": (
        "Back-to-back passes on the same antenna need a 90 second slew and settle buffer between LOS and the next AOS, because the 7.3 m dishes cannot re-point faster.",
        "90 second",
    ),
    "frame_sync": (
        "The CCSDS frame decoder uses attached sync marker 0x1ACFFC1D and allows up to 3 bit errors in the ASM, because stricter matching lost whole frames at low SNR.",
        "0x1ACFFC1D",
    ),
    "delivery_bucket": (
        "Customer Level-0 products are delivered to the s3://gl-deliveries-eu bucket with per-customer prefixes, because EU customers contractually require data to stay in Frankfurt.",
        "s3://gl-deliveries-eu",
    ),
    "presigned_ttl": (
        "Presigned download links for customer products expire after 72 hours, because the Enterprise SLA promises three days of retrieval and shorter links generated support tickets.",
        "72 hours",
    ),
    "telemetry_table": (
        "Raw housekeeping telemetry is written to the TimescaleDB hypertable tlm_raw_hk partitioned by spacecraft_id, because per-spacecraft queries dominate the dashboards.",
        "tlm_raw_hk",
    ),
    "retention": (
        "Raw baseband IQ recordings are kept for 14 days on the site NAS before deletion, because reprocessing requests almost never arrive later and the disks fill in three weeks.",
        "14 days",
    ),
    "doppler": (
        "Doppler pre-compensation for the S-band uplink is recomputed every 500 ms from the propagated state vector, because coarser steps caused the transponder to lose lock near TCA.",
        "500 ms",
    ),
    "oncall_owner": (
        "The pass-planner service is owned by the Flight Dynamics team and pages go to the #fd-oncall rotation, because Ops only owns the antenna control units.",
        "#fd-oncall",
    ),
    "priority_rule": (
        "When passes conflict, the scheduler ranks by contract tier first and pass elevation second, so Platinum customers always win regardless of pass quality, as agreed with Sales in Q2.",
        "contract tier first",
    ),
    "acu_port": (
        "The antenna control units accept pointing commands over TCP port 4003 using the vendor ACU-NG protocol, because port 4001 is the read-only status feed.",
        "4003",
    ),
    "uplink_lock": (
        "Any telecommand uplink requires the GL_UPLINK_ARMED flag set by a second operator in the console, because a single-operator uplink once sent commands to the wrong spacecraft.",
        "GL_UPLINK_ARMED",
    ),
    "config_path": (
        "Per-site hardware parameters live in config/sites/<site>.yaml and are loaded by sitecfg.load(), because hardcoded values in the driver diverged between Svalbard and Hartebeesthoek.",
        "config/sites/",
    ),
    "bitrate_units": (
        "Link budget code expresses data rates in megabits per second, never megabytes, because a mixed-unit bug once scheduled X-band passes eight times too short.",
        "megabits per second",
    ),
    "reprocess_queue": (
        "Reprocessing jobs go onto the RabbitMQ queue l0.reprocess with a priority of 2, because priority 5 and above is reserved for live-pass decoding.",
        "l0.reprocess",
    ),
    "customer_api_version": (
        "The customer delivery API keeps v2 endpoints alive until 2026-06-30 even after v3 launches, because Oceanwatch and two defence customers have frozen integrations.",
        "2026-06-30",
    ),
    "rf_interference": (
        "The Hartebeesthoek X-band chain masks out azimuth 212 to 228 degrees, because a neighbouring radar site causes interference in that sector.",
        "212 to 228",
    ),
    "ntp_source": (
        "All site servers sync time from the GPS-disciplined stratum-1 server gps-ntp01 at each site rather than public pools, because frame timestamps must be accurate to 1 microsecond.",
        "gps-ntp01",
    ),
    "release_freeze": (
        "Deploys to the scheduler are frozen 48 hours before any launch-and-early-orbit-phase support window, because LEOP passes cannot be rescheduled if a release breaks planning.",
        "48 hours",
    ),
    "quicklook_format": (
        "Quicklook images for customers are rendered as Cloud-Optimized GeoTIFF with a 512 pixel tile size, because the customer portal map viewer streams tiles directly.",
        "512 pixel",
    ),
}

DISTRACTORS = (
    "The operator UI uses a dark theme by default because the control room lighting is dimmed during night shifts.",
    "Grafana dashboards for antenna health are grouped by site, with Svalbard first because it has the most passes.",
    "The weekly ops review happens on Thursdays and covers missed passes, anomalies and customer escalations.",
    "We switched the internal docs site from MkDocs to Docusaurus last year to get versioned pages.",
    "The spacecraft catalogue service exposes NORAD IDs and customer-facing names through a read-only REST endpoint.",
    "Integration tests for the decoder use recorded IQ snippets stored in Git LFS under testdata/iq.",
    "The customer portal sends a summary email each Monday listing the previous week's delivered products.",
    "Site technicians log dish maintenance in the CMMS system, not in the scheduler's notes field.",
    "Python services use Poetry for dependency management and are built into distroless container images.",
    "The antenna status page refreshes every ten seconds and colours dishes red when the ACU reports a fault.",
    "Invoices for ground-station time are generated monthly by the finance team from the billing export.",
    "Our Kubernetes clusters run one per region, with the EU cluster in Frankfurt and the APAC cluster in Singapore.",
    "The decoder's unit tests use pytest with hypothesis for fuzzing the frame parser.",
    "New engineers shadow an operator shift at the Svalbard control room during their first month.",
    "Pass reports include max elevation, duration, frames received and a link margin plot.",
    "The team prefers small pull requests and squash merges onto the main branch.",
)

CLAUDE_MD = """# groundlink
Ground-station platform: pass planning, antenna scheduling, telemetry ingest, customer delivery.
- Python 3.12 services live under services/; shared libs under libs/.
- Run `make test` before pushing; `make lint` runs ruff and mypy.
- Site configs are YAML under config/; never commit credentials.
- Ask before touching anything under acu/ (talks to real hardware).
"""

AGENTS_MD = """- Keep changes small and scoped to one service per PR.
- Run `make test` and `make lint` before proposing a commit.
- Do not run anything that sends commands to antenna hardware.
- Prefer editing existing modules over adding new dependencies.
"""

SUMMARY = (
    "Summary: Earlier in this session we migrated the pass-report PDF generator from ReportLab to WeasyPrint "
    "and fixed the broken page footer. We also updated the CI matrix to drop Python 3.10."
)

TURNS = (
    # min_elevation
    ("min_elevation", "claude",
     "Sales wants to quote more contact minutes per day for the new Punta Arenas customer. Can you look at services/planner/visibility.py and figure out why we're leaving so many low passes on the table? If we can squeeze in the horizon-grazing ones, update the planner and the tests in tests/planner/test_visibility.py accordingly.",
     None),
    ("min_elevation", "codex-tool",
     "why does the planner drop the 03:12 pass over svalbard? fix it",
     ("python -m planner.explain --site svalbard --sat GL-SAT-4 --date 2025-05-11",
      "pass 03:12:40Z-03:16:05Z max_el=5.8deg status=REJECTED reason=elevation_mask\npass 04:49:10Z-04:58:51Z max_el=41.2deg status=SCHEDULED\npass 06:27:33Z-06:35:02Z max_el=12.9deg status=SCHEDULED")),
    # tle_source
    ("tle_source", "codex",
     "add fresh orbital elements fetch to orbit/propagate.py, ours are stale",
     None),
    ("tle_source", "claude-log",
     "The nightly propagation job failed again. Can you change the fetcher so this stops happening?\n```\n2025-05-12T02:00:03Z orbit.fetch INFO fetching elements for 38 objects\n2025-05-12T02:00:04Z orbit.fetch ERROR GET https://celestrak.org/NORAD/elements/gp.php?CATNR=58012 -> 403 Forbidden\n2025-05-12T02:00:04Z orbit.fetch ERROR too many requests from this address\n2025-05-12T02:00:04Z orbit.job FATAL propagation aborted: 0/38 element sets\n```",
     None),
    # schedule_tz
    ("schedule_tz", "claude",
     "The Chile operators keep asking for the schedule grid to show their wall-clock times. I was thinking we could just store the window start and end in Santiago time for that site in services/scheduler/models.py so the grid doesn't need to convert. Can you make that change and a migration?",
     None),
    ("schedule_tz", "claude-after-compact",
     "Back to the overlap checker from before the summary: conflicts.py compares `start_local` fields across sites. Can you finish that function so it flags two bookings on the same dish?",
     None),
    # slew_buffer
    ("slew_buffer", "codex",
     "scheduler lets two passes on dish B touch end-to-start, tighten packing logic in allocate.py",
     None),
    ("slew_buffer", "claude-tool",
     "We lost the first minute of data on the second pass here. The allocator said everything fit. What should allocate.py be doing differently?",
     ("grep -E 'dish=HBK-2' logs/acu-2025-05-10.log | head -6",
      "10:14:02Z dish=HBK-2 LOS GL-SAT-2 az=311.0 el=7.1\n10:14:05Z dish=HBK-2 CMD point az=48.7 el=7.0 target=GL-SAT-7\n10:14:05Z dish=HBK-2 AOS expected GL-SAT-7\n10:15:11Z dish=HBK-2 STATUS on-target az=48.7 el=9.4\n10:15:12Z dish=HBK-2 RX lock acquired\n10:15:12Z decoder GL-SAT-7 first frame seq=1208")),
    # frame_sync
    ("frame_sync", "claude-log",
     "Decoder is throwing away a lot at the edges of passes. Rewrite the sync search in decoder/sync.py to be more forgiving?\n```\nsync.search: candidate at bit 88213 hamming=2 -> rejected\nsync.search: candidate at bit 96405 hamming=1 -> rejected\nsync.search: candidate at bit 104597 hamming=0 -> accepted\nframes: recovered=412 expected=1180 snr_db=3.1\n```",
     None),
    ("frame_sync", "codex",
     "implement asm correlator in decoder/sync.py, replace the regex hack",
     None),
    # delivery_bucket
    ("delivery_bucket", "claude",
     "We're onboarding a Dutch agriculture customer next week. Can you add their delivery config to services/delivery/customers.yaml and wire up the uploader? Just copy whatever the US customers use for now, we'll tidy it later.",
     None),
    ("delivery_bucket", "codex-tool",
     "compliance flagged agrisat deliveries, fix the uploader target",
     ("aws s3 ls s3://gl-deliveries-us/agrisat-nl/2025/05/ --region us-east-1",
      "2025-05-11 09:22:14  184221904 L0_GL-SAT-3_20250511T0901.tar\n2025-05-11 10:58:40  201338112 L0_GL-SAT-3_20250511T1037.tar")),
    # presigned_ttl
    ("presigned_ttl", "codex",
     "security says download links live too long, shorten expiry in delivery/links.py to 1h",
     None),
    ("presigned_ttl", "claude-tool",
     "Support forwarded another complaint that customers' download links are dead before they get to them. Can you look into delivery/links.py and fix the expiry?",
     ("rg -n 'expires' services/delivery/links.py",
      "41:    expires_in = int(os.environ.get(\"LINK_EXPIRES\", 3600 * 24))\n58:    return s3.generate_presigned_url(\"get_object\", Params=params, ExpiresIn=expires_in)")),
    # telemetry_table
    ("telemetry_table", "claude",
     "I need a new endpoint in services/tlm_api/routes.py that returns the last hour of battery voltage for a given spacecraft. Write the SQL query and a test. Battery voltage is in the housekeeping stream, param id HK_BAT_V.",
     None),
    ("telemetry_table", "claude-log",
     "Dashboards time out for this query. What's wrong with it?\n```\nEXPLAIN ANALYZE SELECT ts, value FROM telemetry WHERE param='HK_BAT_V' AND sat='GL-SAT-5' AND ts > now()-interval '1 hour';\nERROR:  relation \"telemetry\" does not exist\nLINE 1: EXPLAIN ANALYZE SELECT ts, value FROM telemetry WHERE param=...\n```",
     None),
    # retention
    ("retention", "codex-tool",
     "nas at svalbard almost full, write cleanup job for iq recordings",
     ("df -h /mnt/nas-iq && ls /mnt/nas-iq | head -3 && ls /mnt/nas-iq | wc -l",
      "Filesystem      Size  Used Avail Use% Mounted on\nnas01:/iq        96T   91T  5.0T  95% /mnt/nas-iq\n2025-03-02\n2025-03-03\n2025-03-04\n71")),
    ("retention", "claude",
     "A customer asked whether we could keep their raw recordings around for a couple of months in case they want to rerun demodulation with a new filter. Before I reply, can you check what the purge script in ops/purge_iq.py does today and tell me if that's feasible without changes?",
     None),
    # doppler
    ("doppler", "claude-log",
     "Uplink keeps dropping near the middle of high passes. Can you look at uplink/doppler.py and suggest a fix?\n```\n12:41:07.000Z uplink freq_offset=+48213.4Hz\n12:41:12.000Z uplink freq_offset=+31877.9Hz\n12:41:14.310Z transponder LOCK LOST\n12:41:17.000Z uplink freq_offset=-2210.6Hz\n12:41:19.882Z transponder LOCK reacquired\n```",
     None),
    ("doppler", "codex",
     "doppler precomp burns cpu, reduce update rate in uplink/doppler.py",
     None),
    # oncall_owner
    ("oncall_owner", "claude",
     "I'm adding alert rules for the pass planner in monitoring/alerts/planner.yaml: one for propagation job failures and one for empty schedules. Can you write them and set the routing so the right people get paged?",
     None),
    ("oncall_owner", "codex",
     "planner alert routes to ops-antenna, wrong team? fix alertmanager route",
     None),
    # priority_rule
    ("priority_rule", "claude-tool",
     "A Platinum customer lost a pass today to a Bronze customer and is furious. Can you look at the conflict resolver in scheduler/resolve.py and fix the ordering?",
     ("python -m scheduler.resolve --explain --date 2025-05-09 --dish SVB-1",
      "conflict 14:02Z-14:11Z\n  candidate GL-SAT-2 customer=polarsense tier=bronze max_el=64.0 score=0.91\n  candidate GL-SAT-9 customer=oceanwatch tier=platinum max_el=18.5 score=0.62\n  winner: GL-SAT-2")),
    ("priority_rule", "claude-after-compact",
     "Back to the scheduler scoring from before the summary. I'd like the conflict score to be a weighted blend, maybe 0.7 elevation and 0.3 customer value, so we maximise data volume. Can you implement that in resolve.py?",
     None),
    # acu_port
    ("acu_port", "codex-tool",
     "acu client pointing commands do nothing, debug acu/client.py",
     ("python -m acu.client --dish HBK-1 --point 120.0 35.0 --verbose",
      "connecting hbk1-acu.site:4001 ... ok\n>> PNT 120.000 035.000\n<< STS AZ=301.22 EL=88.90 MODE=STOW\n<< STS AZ=301.22 EL=88.90 MODE=STOW\ntimeout waiting for on-target")),
    ("acu_port", "claude",
     "I'm writing a simulator for the antenna controllers so we can run the scheduler end-to-end in CI. Can you scaffold tests/sim/acu_sim.py so it listens the way the real controller does and accepts pointing commands from acu/client.py?",
     None),
    # uplink_lock
    ("uplink_lock", "claude",
     "For the automated overnight passes, we want the scheduler to send the routine time-sync telecommand to each spacecraft without anyone at the console. Can you add that to services/uplink/auto.py so it fires at AOS?",
     None),
    ("uplink_lock", "claude-log",
     "My integration test for the command sender fails. What do I need to set up?\n```\ntests/uplink/test_send.py::test_send_noop FAILED\nE   uplink.errors.UplinkRefused: uplink not armed by secondary operator\nE   at uplink/send.py:88 in send_tc\n```",
     None),
    # config_path
    ("config_path", "codex",
     "hbk feed gain is hardcoded in rf/driver.py line 203, move it somewhere sane",
     None),
    ("config_path", "claude-after-compact",
     "Back to onboarding the new Awarua site from before the summary. Where do I put its dish diameter, feed gains and LNA settings so the drivers pick them up? Please create the file and fill in placeholders.",
     None),
    # bitrate_units
    ("bitrate_units", "claude-tool",
     "The planner says this X-band pass can move the whole 40 GB backlog, but we only got a fraction of it down. Can you find the bug in linkbudget/capacity.py?",
     ("pytest tests/linkbudget -q",
      "F.\nFAILED tests/linkbudget/test_capacity.py::test_xband_volume - assert 3600.0 == 450.0\n 1 failed, 1 passed in 0.21s")),
    ("bitrate_units", "codex",
     "add rate field to the pass report json, use whatever linkbudget returns",
     None),
    # reprocess_queue
    ("reprocess_queue", "claude",
     "Customers can now request reprocessing of an old pass from the portal. Can you write the handler in services/portal/reprocess.py that enqueues the job for the decoder workers? Make it snappy, customers hate waiting.",
     None),
    ("reprocess_queue", "codex-tool",
     "live passes lagging since yesterday, find out why",
     ("rabbitmqctl list_queues name messages consumers | grep l0",
      "l0.live\t214\t4\nl0.reprocess\t0\t4\nl0.portal_requests\t1893\t4")),
    # customer_api_version
    ("customer_api_version", "codex",
     "v3 delivery api shipped, delete the v2 routes and their tests",
     None),
    ("customer_api_version", "claude",
     "Now that the new delivery API is live, I'd like to clean house. Can you add deprecation headers to the old endpoints in services/delivery_api/v2/ and set up a sunset date on them? Pick something reasonable, maybe end of this quarter.",
     None),
    # rf_interference
    ("rf_interference", "claude-log",
     "Why are these passes getting garbage at the South Africa site? Is this a decoder bug?\n```\nHBK-1 GL-SAT-6 az=205.3 el=22.1 snr_db=11.2 fer=0.001\nHBK-1 GL-SAT-6 az=214.9 el=24.0 snr_db=2.7 fer=0.311\nHBK-1 GL-SAT-6 az=221.6 el=25.2 snr_db=1.9 fer=0.402\nHBK-1 GL-SAT-6 az=230.4 el=24.6 snr_db=10.8 fer=0.002\n```",
     None),
    ("rf_interference", "codex",
     "planner scheduling hbk x-band passes that always fail, add the missing constraint",
     None),
    # ntp_source
    ("ntp_source", "claude",
     "I'm writing the Ansible role for the new site servers in ops/ansible/roles/base. Can you add chrony config? I was going to just use pool.ntp.org to keep it simple.",
     None),
    ("ntp_source", "claude-tool",
     "Frame timestamps from Awarua look off compared to the spacecraft clock. Can you figure out what's misconfigured?",
     ("chronyc sources -v | tail -4",
      "^* time.cloudflare.com           3   6   377    34   +2841us[+2903us] +/-   18ms\n^- 0.pool.ntp.org                2   6   377    35   -1120us[-1058us] +/-   41ms\n^- 1.pool.ntp.org                2   6   377    33   +4410us[+4472us] +/-   52ms")),
    # release_freeze
    ("release_freeze", "codex",
     "merge and deploy scheduler fix to prod today, leop for gl-sat-11 starts tomorrow 06:00z",
     None),
    ("release_freeze", "claude-after-compact",
     "Back to the deploy pipeline from before the summary. Can you add a stage in .gitlab-ci.yml that blocks scheduler deploys at the right times around launches? The launch calendar is in ops/launches.yaml.",
     None),
    # quicklook_format
    ("quicklook_format", "claude",
     "The portal team says the quicklook previews load slowly on the map. Can you update services/quicklook/render.py to produce something the viewer can stream? It currently writes a plain PNG.",
     None),
    ("quicklook_format", "codex-tool",
     "portal map shows quicklooks blurry and slow, check render output",
     ("gdalinfo out/ql_GL-SAT-3_20250511.tif | grep -iE 'block|layout|overview'",
      "Band 1 Block=2048x1 Type=Byte, ColorInterp=Gray\nBand 2 Block=2048x1 Type=Byte, ColorInterp=Undefined")),
)

NULL_TURNS = (
    ("codex", "rename pass_dur to pass_duration_s in planner/report.py", None),
    ("claude", "There's a typo in the README: 'recieve' appears twice in the delivery section. Can you fix those and make the heading capitalisation consistent?", None),
    ("codex-tool", "fix ruff errors in libs/geo",
     ("ruff check libs/geo",
      "libs/geo/angles.py:3:1: F401 [*] `math.pi` imported but unused\nlibs/geo/angles.py:27:89: E501 Line too long (104 > 88)\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.")),
    ("claude", "Can you write unit tests for libs/geo/angles.py::wrap_azimuth? It should map any angle into [0, 360). Cover negatives, exactly 360 and large values.", None),
    ("codex", "bump pydantic to 2.7 in services/portal/pyproject.toml", None),
    ("claude-tool", "mypy is complaining about this helper, can you fix the annotations?",
     ("mypy libs/util/chunks.py",
      "libs/util/chunks.py:12: error: Function is missing a return type annotation  [no-untyped-def]\nlibs/util/chunks.py:18: error: Incompatible return value type (got \"list[list[Any]]\", expected \"list[bytes]\")  [return-value]\nFound 2 errors in 1 file (checked 1 source file)")),
    ("codex", "run black on services/tlm_api and commit formatting only", None),
    ("claude", "The docstring in libs/util/timefmt.py::iso_z says it returns milliseconds but it returns seconds precision. Please correct the docstring and add an example.", None),
    ("claude-log", "This test started failing after I renamed a helper. What did I miss?\n```\nImportError while importing test module 'tests/util/test_chunks.py'.\nE   ImportError: cannot import name 'split_chunks' from 'libs.util.chunks'\n```", None),
    ("codex-tool", "sort imports in services/delivery",
     ("isort --check-only services/delivery",
      "ERROR: services/delivery/links.py Imports are incorrectly sorted and/or formatted.\nERROR: services/delivery/uploader.py Imports are incorrectly sorted and/or formatted.")),
    ("claude-after-compact", "Back to the PDF work from before the summary: can you rename the template file pass_report_old.html to pass_report.html and update the one import that references it?", None),
    ("codex", "add .DS_Store and *.swp to .gitignore", None),
)
