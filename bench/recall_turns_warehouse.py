"""Recall turns for a warehouse management project ("pickwave").

Dev half written by an engineer who read neither recall's code nor any
result. Facts, distractors and turns are invented; each turn needs exactly
one stored fact, null turns need none.
"""
from __future__ import annotations

PROJECT = "pickwave"

FACTS = {
    "scanner_port": (
        "The handheld scanner app talks to scanner-gateway on port 8443 over mTLS; "
        "8080 on that service only serves /healthz.",
        "port 8443",
    ),
    "wave_cutoff": (
        "Wave planning closes the last wave of the day at 14:30 local warehouse time; "
        "orders released after that roll into the next day's first wave.",
        "14:30",
    ),
    "alloc_owner": (
        "pickwave-alloc (the Java/Spring order allocation service) is owned by the "
        "Fulfillment Core team; the on-call contact to page is @dana.okafor.",
        "dana.okafor",
    ),
    "slotting_env": (
        "The slotting optimizer reads its solver time budget from SLOTTING_SOLVER_TIMEOUT_S "
        "(default 90); the nightly full reslot sets it to 600.",
        "SLOTTING_SOLVER_TIMEOUT_S",
    ),
    "zpl_width": (
        "All floor label printers are Zebra ZT411 at 203 dpi, so the 4-inch shipping "
        "label ZPL must use ^PW812.",
        "^PW812",
    ),
    "fedex_rate_limit": (
        "FedEx allows 35 requests/second per account; carrier-gateway's token bucket is "
        "deliberately set to 30 to leave headroom.",
        "35 requests/second",
    ),
    "rabbit_dlq": (
        "Failed RabbitMQ messages are dead-lettered to exchange pickwave.dlx into queues "
        "suffixed .dlq and are kept for 72 hours before being dropped.",
        "pickwave.dlx",
    ),
    "mysql_replica": (
        "Reporting and BI queries must go to the read replica mysql-ro.pickwave.internal; "
        "the primary is reserved for allocation writes.",
        "mysql-ro.pickwave.internal",
    ),
    "k8s_cluster": (
        "Production runs in namespace wms-prod on cluster eks-use1-ops; staging is "
        "namespace wms-stg on the same cluster.",
        "eks-use1-ops",
    ),
    "datadog_tag": (
        "Every service must set the Datadog tag team:fulfillment (plus service:<name>); "
        "all monitors filter on it, so an untagged service never alerts.",
        "team:fulfillment",
    ),
    "flaky_test": (
        "WaveReleaseListenerIT.testConcurrentRelease in pickwave-alloc is flaky on CI due to a "
        "RabbitMQ container startup race; it is tagged @Tag(\"flaky\") and retried once.",
        "testConcurrentRelease",
    ),
    "deploy_freeze": (
        "pickwave has a peak-season deploy freeze from Nov 20 through Dec 2; only hotfixes "
        "approved by the ops lead ship during it.",
        "Nov 20 through Dec 2",
    ),
    "location_format": (
        "Location codes follow AA-BB-CC-D (aisle-bay-level-position, e.g. 07-12-03-B); "
        "the slotting optimizer rejects anything else.",
        "AA-BB-CC-D",
    ),
    "alloc_batch": (
        "Allocation writes orders in batches of at most 250 lines; bigger batches hit the "
        "MySQL lock wait timeout.",
        "250 lines",
    ),
    "reslot_schedule": (
        "The nightly full reslot CronJob (slotting-reslot-nightly) runs at 02:15 UTC; no "
        "schema migrations between 02:00 and 04:00 UTC.",
        "02:15 UTC",
    ),
    "print_relay_host": (
        "Label jobs are sent as raw ZPL over TCP 9100 through print-relay at "
        "print-relay.dc1.pickwave.internal.",
        "print-relay.dc1",
    ),
    "scanner_min_version": (
        "scanner-gateway rejects scanner app builds older than 4.18.0 (HTTP 426) because of "
        "the new offline queue protocol.",
        "4.18.0",
    ),
    "spring_pin": (
        "pickwave-alloc is pinned to Java 17 and Spring Boot 3.2.x; do not move to 3.3 until "
        "the Hibernate 6.5 batch insert regression is fixed.",
        "Hibernate 6.5",
    ),
    "ortools_pin": (
        "The slotting optimizer uses uv and Python 3.11; OR-Tools stays pinned at 9.8 because "
        "9.9 changed the CP-SAT parameter names.",
        "9.9 changed",
    ),
    "ups_sandbox": (
        "In staging carrier-gateway runs with CARRIER_MODE=sandbox against UPS CIE; the sandbox "
        "account number lives in Vault at secret/pickwave/ups-sandbox.",
        "secret/pickwave/ups-sandbox",
    ),
    "wave_cap": (
        "A single wave is capped at 1,800 picks or 45 totes, whichever comes first; "
        "wave-planner splits anything bigger.",
        "45 totes",
    ),
    "schema_owner": (
        "Only pickwave-alloc runs DDL (Flyway); other services must not migrate the schema, and "
        "the slotting optimizer reads through the view v_slot_candidates.",
        "v_slot_candidates",
    ),
}

DISTRACTORS = (
    "scanner-gateway was rewritten from Node to Go in 2023 and shares its cert-manager issuer with print-relay.",
    "The handheld scanners are Zebra TC52 devices running Android 11, enrolled through the MDM.",
    "The wave planning service is written in Go and consumes order.created events from RabbitMQ.",
    "Wave planning groups orders by carrier and pick zone before releasing them to the floor.",
    "pickwave-alloc exposes /actuator/prometheus and the Datadog agent scrapes it with the OpenMetrics check.",
    "Allocation prefers the pick location holding the oldest lot, and uses FEFO for food SKUs.",
    "The slotting optimizer writes its proposed moves into a table that supervisors approve in the web console.",
    "Slotting scores candidate moves by travel distance computed from the warehouse graph in floorplan.json.",
    "ZPL templates live in the labels/ directory of the print-relay repo and are rendered with Jinja.",
    "Label reprints are logged with the operator badge ID for audit purposes.",
    "carrier-gateway supports FedEx, UPS and DHL eCommerce; USPS support was dropped last year.",
    "Carrier labels come back from carrier-gateway as base64 ZPL and are forwarded unchanged to print-relay.",
    "RabbitMQ runs as a three-node cluster managed by the RabbitMQ cluster operator.",
    "MySQL is 8.0 on RDS, with binlog-based CDC feeding the data warehouse.",
    "Kubernetes deployments are synced by Argo CD from the pickwave-deploy repo.",
    "Datadog APM traces are sampled at 10% in production.",
    "Integration tests spin up RabbitMQ and MySQL with Testcontainers.",
    "Nightly batch jobs post a summary to the #pickwave-ops Slack channel.",
)

CLAUDE_MD = """# pickwave
- Monorepo: scanner-app/, wave-planner/ (Go), pickwave-alloc/ (Java/Spring), slotting/ (Python), carrier-gateway/, print-relay/.
- Run `make test` in the service you touch; don't run the whole repo.
- Never commit secrets; config comes from Vault via the helm charts in deploy/.
- Keep PRs to one service unless a proto change forces otherwise.
"""

AGENTS_MD = """# Agent notes
- Python: format with ruff, type-check with mypy --strict in slotting/.
- Java: `./mvnw -q verify` in pickwave-alloc/ before proposing changes.
- Go: `go test ./...` and `golangci-lint run` in wave-planner/.
- Ask before editing anything under deploy/ or db/migration/.
"""

SUMMARY = (
    "Summary:\n"
    "1. Primary request: The user asked to clean up the scanner app's Gradle build: migrate "
    "build.gradle files to Kotlin DSL and move dependency versions into libs.versions.toml.\n"
    "2. Done: Converted scanner-app/app/build.gradle and the root build file to .kts, created "
    "gradle/libs.versions.toml with 31 entries, fixed a kapt -> ksp migration for Room, "
    "./gradlew assembleDebug passes.\n"
    "3. Pending: The user wants to look at something else next; the Gradle work is finished "
    "apart from removing the unused buildSrc/ directory."
)

TURNS = (
    # scanner_port
    ("scanner_port", "claude",
     "The scanner app on my test TC52 keeps failing the TLS handshake after I pointed it at my "
     "local scanner-gateway. I set the base URL to https://10.0.3.14:8080 in "
     "app/src/main/res/xml/network_config.xml. Is that even the right port for real API "
     "traffic, or is that the health one? Also take a look at NetworkModule.kt, I think the "
     "cert pinning there is fine but not 100% sure.",
     None),
    ("scanner_port", "codex-tool",
     "scanner smoke test gets handshake errors against staging, which port should the client use",
     ("kubectl -n wms-stg get svc scanner-gateway",
      "NAME              TYPE        CLUSTER-IP      EXTERNAL-IP   PORT(S)             AGE\n"
      "scanner-gateway   ClusterIP   10.100.42.17    <none>        8080/TCP,8443/TCP   41d")),
    # wave_cutoff
    ("wave_cutoff", "claude",
     "ops says orders placed around 3pm are showing up in tomorrow's waves and they think it's a "
     "bug. before i dig into wave-planner/internal/cutoff/cutoff.go, what is the end-of-day "
     "cutoff actually supposed to be?",
     None),
    ("wave_cutoff", "claude-after-compact",
     "Next: write a table test for ReleaseScheduler in wave-planner that checks an order arriving "
     "one minute after the daily last-wave cutoff gets pushed to the first wave of the following "
     "day. Use our real cutoff time, not a made-up one.",
     None),
    # alloc_owner
    ("alloc_owner", "claude",
     "who do we page when the allocation service starts throwing 500s at night? adding it to "
     "docs/oncall.md",
     None),
    ("alloc_owner", "codex",
     "Add a CODEOWNERS entry and a short 'Who to contact' section to pickwave-alloc/README.md. "
     "Use the owning team and the person we normally page.",
     None),
    # slotting_env
    ("slotting_env", "claude-tool",
     "The nightly reslot keeps stopping early and returns FEASIBLE instead of OPTIMAL. Where is "
     "it getting its time limit from, and how do I raise it for just that job?",
     ("kubectl -n wms-prod logs job/slotting-reslot-nightly-28391 | tail -4",
      "02:15:07 INFO slotting.solver: starting CP-SAT max_time_in_seconds=90.0 workers=8\n"
      "02:16:37 INFO slotting.solver: status=FEASIBLE objective=18234.5 gap=7.9%\n"
      "02:16:38 INFO slotting.writer: wrote 1142 proposed moves\n"
      "02:16:38 INFO slotting.main: done in 91.4s")),
    ("slotting_env", "codex",
     "in slotting/config.py replace the hardcoded 90s solver budget with the env var we use for it",
     None),
    # zpl_width
    ("zpl_width", "claude",
     "The new 4x6 shipping label template is getting clipped on the right edge when it prints on "
     "the floor printers. It's print-relay/labels/ship_4x6.zpl.j2. I suspect whoever wrote it "
     "assumed 300 dpi heads. Can you fix the print width and double-check the field origins "
     "still make sense afterwards?",
     None),
    ("zpl_width", "codex-tool",
     "label cut off on the right, fix the template",
     ("head -5 print-relay/labels/ship_4x6.zpl.j2",
      "^XA\n^PW1218\n^LL1827\n^CF0,30\n^FO50,50^FDShip To: {{ ship_to.name }}^FS")),
    # fedex_rate_limit
    ("fedex_rate_limit", "claude-log",
     "carrier-gateway is getting a wall of 429s from FedEx during the afternoon rush. What's the "
     "real per-account limit we're allowed, and what should our bucket be?\n\n"
     "```\n"
     "14:02:11.482 WARN  c.p.carrier.fedex.FedExClient - rate limited status=429 retry-after=1 acct=5101\n"
     "14:02:11.490 WARN  c.p.carrier.fedex.FedExClient - rate limited status=429 retry-after=1 acct=5101\n"
     "14:02:11.517 ERROR c.p.carrier.ShipmentService - label request failed after 3 retries order=SO-88120431\n"
     "```",
     None),
    ("fedex_rate_limit", "codex",
     "raise the fedex token bucket in carrier-gateway/config/fedex.yaml to the highest value we "
     "agreed on without risking throttling",
     None),
    # rabbit_dlq
    ("rabbit_dlq", "claude",
     "I want a small script that replays failed allocation messages back onto their original "
     "queue. Where do those failed messages end up in RabbitMQ, and how long do I have before "
     "they disappear?",
     None),
    ("rabbit_dlq", "codex-tool",
     "set up dead lettering for the new tote-events queue the same way the other queues do it",
     ("grep -rn 'x-dead-letter' wave-planner/internal/amqp/",
      "wave-planner/internal/amqp/topology.go:88:\t\t\"x-dead-letter-exchange\": dlxName,\n"
      "wave-planner/internal/amqp/topology.go:89:\t\t\"x-dead-letter-routing-key\": q.Name + dlqSuffix,")),
    # mysql_replica
    ("mysql_replica", "claude",
     "The weekly pick-rate report (reports/pick_rate_weekly.sql, kicked off by the Monday "
     "cron) makes allocation crawl every Monday morning. I assume it's pointed at the wrong "
     "database. Which host should reporting stuff be using?",
     None),
    ("mysql_replica", "claude-tool",
     "can you fix the metabase datasource so the dashboards stop hammering the prod writer",
     ("grep -n -A1 host deploy/metabase/datasources.yml",
      "12:    host: mysql-rw.pickwave.internal\n13:    port: 3306")),
    # k8s_cluster
    ("k8s_cluster", "codex",
     "give me the kubectl command to tail wave-planner logs in prod, with the right context and namespace",
     None),
    ("k8s_cluster", "claude-after-compact",
     "OK, different thing now. The staging job in .github/workflows/deploy.yml still has "
     "CLUSTER_NAME and NAMESPACE placeholders from when we copied it. Fill in the real values "
     "for staging.",
     None),
    # datadog_tag
    ("datadog_tag", "claude",
     "I shipped a new service, tote-tracker, last week. Its errors show up fine in the Datadog "
     "logs explorer but none of our monitors have fired once. Something's missing in DD_TAGS I "
     "think, what does it need?",
     None),
    ("datadog_tag", "codex",
     "add the required datadog tags to deploy/charts/print-relay/values.yaml",
     None),
    # flaky_test
    ("flaky_test", "claude-log",
     "CI went red on my allocation PR. Is this the known flaky one or did I actually break "
     "something?\n\n"
     "```\n"
     "[ERROR] Tests run: 14, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 63.2 s <<< FAILURE! - in WaveReleaseListenerIT\n"
     "org.testcontainers.containers.ContainerLaunchException: Timed out waiting for container port to open (localhost ports: [32811] should be listening)\n"
     "\tat org.testcontainers.containers.GenericContainer.doStart(GenericContainer.java:359)\n"
     "\tat com.pickwave.alloc.release.WaveReleaseListenerIT.setUp(WaveReleaseListenerIT.java:58)\n"
     "```",
     None),
    ("flaky_test", "codex",
     "which alloc test did we quarantine as flaky and why? thinking about un-skipping it",
     None),
    # deploy_freeze
    ("deploy_freeze", "claude",
     "Product wants the new batch-picking flow live the Monday after Thanksgiving. Can we even "
     "deploy then? Draft me a short reply to them either way.",
     None),
    ("deploy_freeze", "codex",
     "when does the peak season freeze start and end? planning the scanner offline-queue rollout",
     None),
    # location_format
    ("location_format", "claude-tool",
     "slotting import rejects half the rows from the new building C sheet, why",
     ("python -m slotting.import_locations data/bldg_c.csv --dry-run | head -4",
      "REJECT row 2: location '7-12-3-B' invalid format\n"
      "REJECT row 3: location 'C07-12-03B' invalid format\n"
      "OK     row 4: location '07-12-04-A'\n"
      "REJECT row 5: location '07/12/05/A' invalid format")),
    ("location_format", "codex",
     "write a regex validator for warehouse location codes in slotting/validate.py matching our "
     "standard format, with a few pytest cases",
     None),
    # alloc_batch
    ("alloc_batch", "claude-log",
     "allocation job died overnight. what's the max batch size we should be running with?\n"
     "```\n"
     "com.mysql.cj.jdbc.exceptions.MySQLTransactionRollbackException: Lock wait timeout exceeded; try restarting transaction\n"
     "\tat com.mysql.cj.jdbc.exceptions.SQLError.createSQLException(SQLError.java:123)\n"
     "\tat com.pickwave.alloc.persist.AllocationBatchWriter.flush(AllocationBatchWriter.java:141)\n"
     "```",
     None),
    ("alloc_batch", "codex",
     "AllocationProperties.maxBatchLines defaults to 1000. change it to the safe limit and leave "
     "a comment explaining why",
     None),
    # reslot_schedule
    ("reslot_schedule", "claude",
     "I'd like to run the migration that adds slot_capacity to locations tonight. What window is "
     "safe so it doesn't collide with the nightly slotting run?",
     None),
    ("reslot_schedule", "codex-tool",
     "what time (and timezone) does the reslot cronjob actually fire",
     ("kubectl -n wms-prod get cronjob slotting-reslot-nightly",
      "NAME                      SCHEDULE     SUSPEND   ACTIVE   LAST SCHEDULE   AGE\n"
      "slotting-reslot-nightly   15 2 * * *   False     0        21h             212d")),
    # print_relay_host
    ("print_relay_host", "claude",
     "Writing a throwaway script to send a test ZPL label to one of the packing printers from my "
     "laptop over VPN, going through our relay like the apps do. What host and port do I hit?",
     None),
    ("print_relay_host", "codex",
     "print jobs from the packing station app time out, check packstation/lib/printing.py is "
     "pointing at the correct relay host",
     None),
    # scanner_min_version
    ("scanner_min_version", "claude-log",
     "A bunch of scanners in building B stopped syncing this morning. Which app version do they "
     "need to be on?\n\n"
     "```\n"
     "08:14:55 WARN scanner-gateway handshake: device=TC52-B-0417 client_version=4.17.3 -> 426 Upgrade Required\n"
     "08:14:58 WARN scanner-gateway handshake: device=TC52-B-0388 client_version=4.16.9 -> 426 Upgrade Required\n"
     "```",
     None),
    ("scanner_min_version", "codex",
     "add a check on the scanner app splash screen that warns the user if their build is older "
     "than what the gateway accepts",
     None),
    # spring_pin
    ("spring_pin", "claude",
     "Dependabot opened a PR bumping spring-boot-starter-parent to 3.3.1 in pickwave-alloc. "
     "Tests pass locally for me. OK to merge?",
     None),
    ("spring_pin", "codex-tool",
     "upgrade spring boot in alloc to the latest minor",
     ("grep -A1 spring-boot-starter-parent pickwave-alloc/pom.xml",
      "        <artifactId>spring-boot-starter-parent</artifactId>\n"
      "        <version>3.2.5</version>")),
    # ortools_pin
    ("ortools_pin", "claude-log",
     "after `uv lock --upgrade` the slotting tests blow up, what happened?\n"
     "```\n"
     "tests/test_solver.py::test_small_aisle FAILED\n"
     "E   ValueError: Protocol message SatParameters has no \"num_search_workers\" field.\n"
     "slotting/solver.py:47: ValueError\n"
     "```",
     None),
    ("ortools_pin", "codex",
     "renovate wants to bump ortools in slotting/pyproject.toml, should i take it?",
     None),
    # ups_sandbox
    ("ups_sandbox", "claude",
     "I need to test UPS return label creation in staging. Where do I get the sandbox account "
     "number from?",
     None),
    ("ups_sandbox", "claude-after-compact",
     "Next up: make carrier-gateway's staging values file send UPS calls to the test "
     "environment and pull the account number from Vault instead of the hardcoded one.",
     None),
    # wave_cap
    ("wave_cap", "claude",
     "A customer dropped a 5,000-line B2B order in this morning and the planner turned it into "
     "three waves instead of one. Is that intended, or is planner/split.go misbehaving?",
     None),
    ("wave_cap", "codex-tool",
     "why did this wave get split, picks are way under the limit",
     ("curl -s wave-planner.wms-prod:8080/debug/waves/W-20261103-07 | jq .stats",
      "{\n  \"picks\": 1312,\n  \"totes\": 46,\n  \"split_reason\": \"capacity\"\n}")),
    # schema_owner
    ("schema_owner", "claude",
     "the slotting optimizer needs a pallet_height column. can i just add an alembic migration "
     "in slotting/ for it?",
     None),
    ("schema_owner", "codex",
     "slotting has to read candidate locations from MySQL. which table or view should the "
     "SQLAlchemy model map to?",
     None),
)

NULL_TURNS = (
    ("claude",
     "Rename the `qty` parameter to `quantity` across wave-planner/internal/plan/*.go and fix "
     "all the callers. Keep the JSON field name unchanged.",
     None),
    ("codex", "add type hints to slotting/geometry.py", None),
    ("claude-tool", "test is failing, fix it",
     ("pytest slotting/tests/test_distance.py -q",
      "F\n>       assert travel_distance(a, b) == 12.5\nE       assert 12.0 == 12.5\n1 failed in 0.21s")),
    ("claude-log",
     "NPE in the allocation controller when a request comes in with no lines. Add a guard and "
     "return 400.\n```\n"
     "java.lang.NullPointerException: Cannot invoke \"java.util.List.size()\" because the return value of \"AllocateRequest.getLines()\" is null\n"
     "\tat com.pickwave.alloc.api.AllocationController.allocate(AllocationController.java:57)\n"
     "```",
     None),
    ("codex",
     "in print-relay/labels/packing_slip.zpl.j2 replace the hardcoded return address lines with "
     "jinja variables",
     None),
    ("claude",
     "Refactor the RabbitMQ consumer in carrier-gateway so the channel is opened in a context "
     "manager; we're leaking channels whenever the handler raises.",
     None),
    ("codex-tool", "lint is failing",
     ("ruff check slotting/",
      "slotting/solver.py:14:1: F401 [*] `itertools` imported but unused\nFound 1 error.")),
    ("claude",
     "Can you explain what this query does? SELECT zone, COUNT(*) FILTER (WHERE status='done') "
     "FROM pick_tasks GROUP BY zone -- oh wait, MySQL doesn't have FILTER, rewrite it with SUM(CASE ...).",
     None),
    ("claude-after-compact",
     "Continue: add docstrings to the remaining public functions in slotting/scoring.py.",
     None),
    ("codex",
     "the Kubernetes deployment manifest for scanner-gateway has duplicated env entries, dedupe them",
     None),
    ("claude",
     "Add unit tests for the tote barcode checksum in scanner-app BarcodeUtils.kt: empty string, "
     "a valid 13-digit code, and one with a bad check digit.",
     None),
    ("codex", "how do i squash my last 4 commits into one", None),
)
