"""Sealed held-out turns (sixth half) for the gridpulse project.

Written without reading recall's code, other eval halves, corpora or results.
Scored once sealed (2026-12-07 00:28 UTC: 0.614 hit, 0.214 false over 56 turns); development
material since.
"""
from __future__ import annotations

PROJECT = "gridpulse"

FACTS = {
    "mqtt_port": (
        "The gridpulse EMQX broker accepts inverter telemetry only on port 8883 with mutual TLS; plain 1883 is dropped at the edge load balancer.",
        "port 8883",
    ),
    "fleet_api_stg_host": (
        "The staging fleet API is reachable at fleet-api.stg.gridpulse.internal, which resolves only inside the VPN / internal ALB.",
        "fleet-api.stg.gridpulse.internal",
    ),
    "soc_alert": (
        "The Grafana low-battery alert fires when a battery's state of charge stays below 12% for 20 minutes (not instantaneously).",
        "below 12% for 20 minutes",
    ),
    "billing_owner": (
        "The feed-in tariff billing service is owned by Marisol Ortega's team; page #team-ledger for billing incidents, not platform on-call.",
        "#team-ledger",
    ),
    "ota_concurrency": (
        "OTA rollouts are throttled per region by the env var OTA_MAX_CONCURRENT (default 250); raise it only with device-team approval.",
        "OTA_MAX_CONCURRENT",
    ),
    "timescale_chunks": (
        "The Timescale hypertable `readings` uses 6-hour chunks and a compression policy that compresses chunks older than 3 days; compressed chunks reject UPDATEs.",
        "6-hour chunks",
    ),
    "serial_redaction": (
        "Inverter serial numbers must never appear raw in logs; wrap them with redact_serial() from gridpulse.common.pii.",
        "redact_serial()",
    ),
    "flaky_dst_test": (
        "test_tariff_rollover_dst in the billing service is flaky around DST switchovers and is quarantined with the @pytest.mark.dst_flaky marker (excluded in CI via -m 'not dst_flaky').",
        "dst_flaky",
    ),
    "tf_state": (
        "Terraform remote state lives in the S3 bucket gp-tfstate-euw1 with the DynamoDB lock table gp-tf-locks; force-unlock needs a second reviewer.",
        "gp-tfstate-euw1",
    ),
    "firmware_freeze": (
        "Firmware releases are frozen from Friday 14:00 UTC until Monday 08:00 UTC; hotfixes in that window need the device lead's sign-off.",
        "Friday 14:00 UTC",
    ),
    "topic_naming": (
        "MQTT topics follow gp/{site_id}/{device_id}/{stream}; serial numbers and customer ids must never appear in a topic.",
        "gp/{site_id}/{device_id}/{stream}",
    ),
    "dashboard_node": (
        "The React dashboard is pinned to Node 20.11 via .nvmrc because Node 22 breaks vite-plugin-svgr during the production build.",
        "vite-plugin-svgr",
    ),
    "go_lint_config": (
        "Go services lint with golangci-lint v1.59 using the shared config at tools/lint/.golangci.yml; per-service configs are not allowed.",
        "tools/lint/.golangci.yml",
    ),
    "tariff_rounding": (
        "Feed-in credits are computed per kWh with banker's rounding (half-even to 4 decimal places); only the invoice total is rounded to cents.",
        "half-even to 4 decimal",
    ),
    "ingest_flush": (
        "The ingest worker flushes batches to Timescale every 500 rows or 2 seconds, whichever comes first.",
        "500 rows or 2 seconds",
    ),
    "protobuf_adr": (
        "ADR-017: inverter payloads moved from JSON to protobuf v3; every new field must be declared optional and field numbers are never reused.",
        "ADR-017",
    ),
    "api_rate_limit": (
        "The public fleet API rate-limits each installer token to 600 requests/minute and returns 429 with a Retry-After header.",
        "600 requests/minute",
    ),
    "grafana_provisioning": (
        "Grafana alert rules are provisioned from ops/grafana/alerts/*.yaml by CI; edits made in the Grafana UI are overwritten on the next deploy.",
        "ops/grafana/alerts/",
    ),
    "migrations_sqitch": (
        "Postgres schema migrations are managed with sqitch (run from db/ with `sqitch deploy`), not alembic or goose.",
        "sqitch",
    ),
    "offline_rule": (
        "An inverter is marked offline after 3 missed heartbeats; devices send a heartbeat every 90 seconds.",
        "3 missed heartbeats",
    ),
    "ota_signing_key": (
        "OTA firmware images are signed with the HSM key alias gp-fw-sign-2026; the on-device updater rejects images signed with any other key.",
        "gp-fw-sign-2026",
    ),
    "oncall_handover": (
        "The platform on-call rotation hands over on Tuesdays at 10:00 Europe/Berlin, in the #gp-oncall channel.",
        "Tuesdays at 10:00",
    ),
}

DISTRACTORS = (
    "The EMQX cluster runs three nodes on c6g.large instances behind a network load balancer.",
    "Fleet API list endpoints paginate with opaque cursors; page size maxes out at 200.",
    "The battery health Grafana dashboard was redesigned in Q3 to show cycle counts per site.",
    "The billing service renders monthly feed-in statements as PDF with WeasyPrint.",
    "Firmware binaries for OTA are stored in the gp-firmware-artifacts bucket with versioning enabled.",
    "A Timescale continuous aggregate `readings_hourly` precomputes hourly energy totals per site.",
    "Inverter service logs are shipped to Loki and kept for 14 days.",
    "The billing test suite takes roughly four minutes on CI runners.",
    "Terraform modules are organised per environment under infra/envs/{dev,stg,prod}.",
    "Firmware release notes are drafted in Notion by the device team before each rollout.",
    "MQTT client ids are the device UUID assigned at provisioning.",
    "The React dashboard fetches data with TanStack Query and renders charts with visx.",
    "Go services build with Go 1.22 into distroless container images.",
    "Tariff tables are imported each quarter from the regulator's published CSV.",
    "The ingest worker is a Go service consuming a shared MQTT subscription.",
    "Protobuf schemas live in proto/gridpulse/v1 and are generated with buf.",
    "Installer tokens expire after 180 days and can be revoked from the admin console.",
    "Postgres runs on RDS 16 with a read replica dedicated to the dashboard.",
    "Heartbeat payloads include firmware version, uptime and Wi-Fi RSSI.",
    "PagerDuty escalates an unacknowledged page to the platform lead after 15 minutes.",
)

CLAUDE_MD = """# gridpulse
- Run `make test` for the service you touched before committing.
- Go code: gofmt + lint must pass; Python: ruff and mypy --strict.
- Never commit real inverter serials or customer addresses in fixtures.
- Infra changes go through a Terraform plan posted on the PR.
"""

AGENTS_MD = """# AGENTS.md (gridpulse)
- Services: ingest (Go), fleet-api (Go), billing (Python), ota (Python), dashboard (React).
- Prefer small PRs; one service per PR unless it's a proto change.
- Use `make dev-up` to start MQTT, Timescale and Grafana locally.
- Ask before running anything against staging or prod.
"""

SUMMARY = (
    "Summary:\n"
    "1. Primary request: refactor the dashboard's site list page to use the new SiteCard component and add skeleton loaders.\n"
    "2. Done: SiteCard extracted to dashboard/src/components/SiteCard.tsx, storybook story added, list page migrated, snapshot tests updated.\n"
    "3. Pending: dark-mode colours for the skeleton loader; the user said they'd decide on the palette later."
)

_EMQX_LOG = "\n".join([
    "2026-11-30T09:14:02.118Z [warning] emqx_listeners: listener tcp:default on 0.0.0.0:1883 disabled by config",
    "2026-11-30T09:14:02.121Z [info] emqx_listeners: ssl:default started",
    "2026-11-30T09:14:07.540Z [error] client gp-sim-0042: connect to mqtt.stg.gridpulse.io:1883 failed: econnrefused",
    "2026-11-30T09:14:12.541Z [error] client gp-sim-0042: connect to mqtt.stg.gridpulse.io:1883 failed: econnrefused",
    "2026-11-30T09:14:17.544Z [error] client gp-sim-0042: reconnect backoff 8s",
])

_INGEST_TRACE = "\n".join(
    ["goroutine 87 [running]:",
     "github.com/gridpulse/ingest/internal/sink.(*TimescaleSink).Write(0xc0001a2000, {0xc000412000, 0x1f4, 0x200})",
     "\t/src/internal/sink/timescale.go:141 +0x2b4",
     "github.com/gridpulse/ingest/internal/pipeline.(*Batcher).flush(0xc00011e0a0)",
     "\t/src/internal/pipeline/batcher.go:77 +0x1c8"]
    + [f"level=info ts=2026-12-01T07:0{i}:00Z msg=\"batch flushed\" rows={n} elapsed_ms={e}" for i, (n, e) in enumerate([(500, 311), (500, 298), (137, 2001), (500, 305)])]
    + ["level=error msg=\"unexpected flush size\" got=137 want_multiple_of=1000"]
)

_BILLING_PYTEST = "\n".join([
    "============================= test session starts ==============================",
    "platform linux -- Python 3.12.3, pytest-8.3.2",
    "collected 412 items",
    "tests/test_invoice.py ........................................ [ 10%]",
    "tests/test_tariff.py .......................F.................. [ 20%]",
    "=================================== FAILURES ===================================",
    "__________________________ test_tariff_rollover_dst ___________________________",
    "    def test_tariff_rollover_dst(clock):",
    ">       assert credits.period_end == datetime(2026, 10, 25, 2, 0, tzinfo=BERLIN)",
    "E       AssertionError: assert datetime(2026, 10, 25, 3, 0, ...) == datetime(2026, 10, 25, 2, 0, ...)",
    "tests/test_tariff.py:218: AssertionError",
    "=========================== 1 failed, 411 passed in 241.07s ===================",
])

_TF_ERR = "\n".join([
    "Error: Error acquiring the state lock",
    "",
    "Error message: ConditionalCheckFailedException: The conditional request failed",
    "Lock Info:",
    "  ID:        4b1c9e0a-77d2-5f3e-9a41-0c2d8e6f1b23",
    "  Path:      <bucket>/prod/fleet-api/terraform.tfstate",
    "  Operation: OperationTypeApply",
    "  Who:       runner@gh-actions-7f2c",
    "  Version:   1.8.5",
    "  Created:   2026-12-04 16:02:11.9 +0000 UTC",
    "",
    "Terraform acquires a state lock to protect the state from being written",
    "by multiple users at the same time.",
])

_VITE_ERR = "\n".join([
    "> dashboard@3.14.0 build",
    "> tsc -b && vite build",
    "vite v5.4.8 building for production...",
    "✓ 1412 modules transformed.",
    "error during build:",
    "TypeError [ERR_IMPORT_ATTRIBUTE_MISSING]: Module \"file:///app/node_modules/@svgr/core/package.json\" needs an import attribute of \"type: json\"",
    "    at validateAttributes (node:internal/modules/esm/assert:88:15)",
    "    at defaultLoad (node:internal/modules/esm/load:153:3)",
    "Node.js v22.3.0",
])

_COMPRESS_ERR = "\n".join([
    "psycopg.errors.FeatureNotSupported: cannot update/delete rows from chunk \"_hyper_3_1187_chunk\" as it is compressed",
    "CONTEXT:  SQL statement \"UPDATE readings SET energy_wh = $1 WHERE device_id = $2 AND ts = $3\"",
    "  File \"/app/billing/backfill/correct_readings.py\", line 64, in apply_corrections",
    "    cur.execute(UPDATE_SQL, (row.energy_wh, row.device_id, row.ts))",
])

TURNS = (
    # mqtt_port
    ("mqtt_port", "claude-log",
     "The inverter simulator can't connect to staging anymore after Laila's broker config change. Can you figure out what port the sim should use and fix sims/config/stg.yaml?\n\n" + _EMQX_LOG,
     None),
    ("mqtt_port", "codex",
     "write a docker-compose healthcheck for the local emqx container that checks the TLS listener inverters actually use", None),
    # fleet_api_stg_host
    ("fleet_api_stg_host", "claude",
     "I'm adding a smoke test job to .github/workflows/smoke.yml that should hit the staging fleet API /healthz after each deploy. What base URL should it use? The runners are self-hosted inside the VPC, so that part's fine.",
     None),
    ("fleet_api_stg_host", "codex-tool",
     "why does curl fail here? fix the env file",
     ("cat deploy/stg/.env.fleet && curl -sS $FLEET_API_URL/healthz",
      "FLEET_API_URL=https://fleet-api.staging.gridpulse.io\nFLEET_API_TIMEOUT=5s\ncurl: (6) Could not resolve host: fleet-api.staging.gridpulse.io")),
    # soc_alert
    ("soc_alert", "claude",
     "Support says customers get the 'battery low' email too late. Before I touch anything: what exactly is the current trigger condition for that Grafana alert? I want to explain it in the ticket.",
     None),
    ("soc_alert", "claude-tool",
     "does this alert rule match what we agreed on? looks off to me",
     ("cat ops/grafana/alerts/battery.yaml",
      "- uid: gp-soc-low\n  title: Battery SoC low\n  condition: C\n  data:\n    - refId: A\n      model:\n        expr: min_over_time(battery_soc_percent[5m])\n    - refId: C\n      model:\n        type: threshold\n        conditions: [{evaluator: {type: lt, params: [15]}}]\n  for: 5m\n  labels: {severity: warning}")),
    # billing_owner
    ("billing_owner", "claude",
     "Feed-in credits for the Dutch sites look doubled on December invoices. I'm writing up the incident now — who should I escalate this to? I don't think it's a platform problem.",
     None),
    ("billing_owner", "codex",
     "update CODEOWNERS and the runbook header in billing/RUNBOOK.md so the escalation contact for the tariff service is right", None),
    # ota_concurrency
    ("ota_concurrency", "claude",
     "The 4.2.1 rollout to the Iberia region is crawling — only a couple hundred devices updating at a time. Where is that cap configured and what's the default? Don't change it yet.",
     None),
    ("ota_concurrency", "codex-tool",
     "the helm values for ota look wrong, what knob actually limits parallel updates?",
     ("grep -rn -i 'concurr\\|parallel' deploy/helm/ota/values-prod.yaml",
      "14:  workerParallelism: 8\n22:  dbPoolSize: 20\n31:  # rollout limits come from env, see ota/settings.py")),
    # timescale_chunks
    ("timescale_chunks", "claude-log",
     "The backfill script that corrects last week's meter readings blows up. Why, and what's the safe way to correct old data?\n\n" + _COMPRESS_ERR,
     None),
    ("timescale_chunks", "claude",
     "I'm sizing the new Timescale instance. How is the readings hypertable partitioned in time, and after how long does data get compressed? Put the answer in docs/capacity.md too.",
     None),
    # serial_redaction
    ("serial_redaction", "claude",
     "In ota/updater/session.py I log the device identifier on every retry (line ~120, the logger.warning call). Security flagged it in review. What's our approved helper for this?",
     None),
    ("serial_redaction", "codex-tool",
     "make these log lines compliant",
     ("grep -n 'serial' fleet_api_py/handlers/claims.py",
      "41:    log.info(\"claim started for %s\", inverter.serial)\n58:    log.error(\"claim failed serial=%s reason=%s\", inverter.serial, err)")),
    # flaky_dst_test
    ("flaky_dst_test", "claude-log",
     "CI on my PR is red but I only touched the PDF template. Is this failure mine?\n\n" + _BILLING_PYTEST,
     None),
    ("flaky_dst_test", "codex",
     "the tariff rollover test around daylight saving keeps failing in the nightly; how do we normally mark that one so CI skips it", None),
    # tf_state
    ("tf_state", "claude-log",
     "Terraform apply for fleet-api is stuck on a lock from a runner that died. Which bucket/table is it and what's the process to clear it?\n\n" + _TF_ERR,
     None),
    ("tf_state", "codex",
     "new terraform root for the billing-exports module — write backend.tf using our standard remote state setup", None),
    # firmware_freeze
    ("firmware_freeze", "claude",
     "It's Friday afternoon and the device team wants me to push the 4.2.2 firmware to canary before the weekend. Is that allowed? If not, what do I need?",
     None),
    ("firmware_freeze", "codex",
     "add a guard to ota/release/cli.py that refuses to start a rollout during the release blackout window", None),
    # topic_naming
    ("topic_naming", "claude",
     "Writing the publisher for the new EV charger stream in ingest/publishers/evse.go. What should the topic string look like? I was going to use the charger serial in it.",
     None),
    ("topic_naming", "codex-tool",
     "is this subscription pattern right?",
     ("rg -n 'Subscribe' ingest/internal/mqtt/",
      "ingest/internal/mqtt/sub.go:33:\tc.Subscribe(\"$share/ingest/inverters/+/telemetry\", 1, h.onMessage)")),
    # dashboard_node
    ("dashboard_node", "claude-log",
     "Dashboard build broke on my laptop after I upgraded Homebrew. Works in CI. What's going on?\n\n" + _VITE_ERR,
     None),
    ("dashboard_node", "codex",
     "bump the dashboard Dockerfile base image, keep whatever node version we're required to stay on", None),
    # go_lint_config
    ("go_lint_config", "claude",
     "I want to enable the `exhaustive` linter for the ingest service only, because the new enum switch in decoder.go missed a case. Where do I add it? I was going to drop a .golangci.yml into ingest/.",
     None),
    ("go_lint_config", "codex-tool",
     "lint passes locally but fails in CI, why",
     ("golangci-lint run ./... ; echo $?; ls -a",
      "0\n.  ..  .golangci.yml  cmd  go.mod  go.sum  internal  Makefile")),
    # tariff_rounding
    ("tariff_rounding", "claude",
     "A customer disputes a 0.01 EUR difference between their own spreadsheet and our statement. Explain how we round feed-in credits so I can answer them, and check billing/credits.py matches.",
     None),
    ("tariff_rounding", "codex-tool",
     "is this rounding correct per our billing rules?",
     ("sed -n 30,40p billing/credits.py",
      "def credit_for(kwh: Decimal, rate: Decimal) -> Decimal:\n    raw = kwh * rate\n    return raw.quantize(Decimal(\"0.01\"), rounding=ROUND_HALF_UP)")),
    # ingest_flush
    ("ingest_flush", "claude-log",
     "Someone added an assertion in the batcher and now ingest crashes on staging. Is the assertion wrong or is the batcher wrong?\n\n" + _INGEST_TRACE,
     None),
    ("ingest_flush", "codex",
     "what latency should the dashboard 'live' view assume between an inverter reading arriving and it being queryable in timescale? need a number for the tooltip", None),
    # protobuf_adr
    ("protobuf_adr", "claude",
     "I need to add `grid_frequency_hz` to the InverterReading message in proto/gridpulse/v1/reading.proto. Any rules I should follow for adding fields? Also remind me why we left JSON.",
     None),
    ("protobuf_adr", "codex-tool",
     "review this proto diff",
     ("git diff proto/gridpulse/v1/reading.proto",
      "-  reserved 7;\n-  float battery_temp_c = 8;\n+  float battery_temp_c = 8;\n+  float grid_frequency_hz = 7;")),
    # api_rate_limit
    ("api_rate_limit", "claude",
     "An installer's integration is getting throttled when they sync their 3k sites. What's the per-token limit on the public API so I can suggest a sync strategy?",
     None),
    ("api_rate_limit", "codex",
     "write a python client helper for the public fleet api that stays under our throttling limit and backs off correctly when throttled", None),
    # grafana_provisioning
    ("grafana_provisioning", "claude",
     "I tweaked the inverter offline alert threshold directly in Grafana yesterday and today it's back to the old value. Did someone revert it?",
     None),
    ("grafana_provisioning", "claude-after-compact",
     SUMMARY + "\n\nok, new thing: add a Grafana alert for when billing export jobs fail two nights in a row. where do alert definitions live in this repo?",
     None),
    # migrations_sqitch
    ("migrations_sqitch", "claude",
     "I need to add a `tariff_zone` column to the sites table. Generate the migration — I assume it's alembic like the other Python projects?",
     None),
    ("migrations_sqitch", "codex-tool",
     "migration not applied on my local db, how do I run them here",
     ("ls db/ && alembic upgrade head",
      "deploy  revert  verify  sqitch.plan  sqitch.conf\nFAILED: No config file 'alembic.ini' found, or file has no '[alembic]' section")),
    # offline_rule
    ("offline_rule", "claude-after-compact",
     SUMMARY + "\n\nNext: the site list should show a grey 'offline' badge. What's the backend rule for considering an inverter offline, so the frontend tooltip says the right thing?",
     None),
    ("offline_rule", "codex",
     "how many minutes after the last ping does fleet-api flip a device to offline? product wants a number", None),
    # ota_signing_key
    ("ota_signing_key", "claude-tool",
     "Devices in the canary group reject the new image. Signing step looks suspicious:",
     ("grep -n key ota/release/sign.sh",
      "12: KEY_ALIAS=${KEY_ALIAS:-gp-fw-sign-2025}\n13: pkcs11-tool --sign --label \"$KEY_ALIAS\" -i \"$IMG\" -o \"$IMG.sig\"")),
    ("ota_signing_key", "codex",
     "which hsm key alias do we sign firmware with now? writing the release checklist", None),
    # oncall_handover
    ("oncall_handover", "claude",
     "I'm swapping on-call weeks with Jonas. When exactly does the rotation switch so I put the override in PagerDuty at the right time?",
     None),
    ("oncall_handover", "claude-after-compact",
     SUMMARY + "\n\nAlso, can you set up a Slack reminder workflow that pings the outgoing on-call right before handover? Use the actual handover time.",
     None),
)

NULL_TURNS = (
    ("claude", "Rename `SiteCard` props from `siteName` to `name` across dashboard/src and fix the tests.", None),
    ("codex", "write a go table test for ParseReading in ingest/internal/decoder covering empty and truncated payloads", None),
    ("claude-log",
     "Why does mypy complain here?\n\nbilling/statements.py:88: error: Argument 1 to \"render\" has incompatible type \"dict[str, object]\"; expected \"StatementContext\"  [arg-type]\nFound 1 error in 1 file (checked 57 source files)",
     None),
    ("claude", "Explain what a Timescale continuous aggregate is vs a normal materialized view, in two paragraphs.", None),
    ("codex-tool", "fix the failing gofmt check",
     ("gofmt -l ./...", "internal/mqtt/sub.go\ninternal/pipeline/batcher.go")),
    ("claude", "Add a dark mode toggle to the dashboard header; store the choice in localStorage.", None),
    ("claude-tool", "the OTA service unit tests fail only on my machine, here's the output",
     ("pytest ota/tests -q", "E   ModuleNotFoundError: No module named 'freezegun'\n1 error in 0.41s")),
    ("codex", "convert the billing README from rst to markdown", None),
    ("claude", "Write a small Python script that reads a CSV of inverter readings and plots daily kWh with matplotlib.", None),
    ("claude-after-compact", SUMMARY + "\n\nLet's finish the skeleton loader: use slate-700 for dark mode and slate-200 for light.", None),
    ("codex", "refactor fleet-api handlers to return typed errors instead of fmt.Errorf strings", None),
    ("claude", "Is there a more idiomatic way to write this in Go: `if err != nil { return nil, err } else { return x, nil }`?", None),
)
