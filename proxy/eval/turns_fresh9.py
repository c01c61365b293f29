"""Held-out turns (ninth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 04:57 UTC: 0.727 hit, 0.161 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "harvestline"

FACTS = {
    "mqtt_retain": (
        "Telematics boxes publish CAN frames to the MQTT topic hl/v2/{vin}/can on AWS IoT Core with QoS 1, and retained messages are disabled because stale engine-hours from parked machines confused the dealer portal.",
        "retained messages are disabled",
    ),
    "kinesis_shards": (
        "The can-ingest Kinesis stream runs 24 shards keyed by VIN; for harvest peak (mid-September to October) it is raised to 48 by applying the scale-harvest Terraform workspace.",
        "scale-harvest",
    ),
    "telemetry_partitions": (
        "telemetry_points in Aurora PostgreSQL is range-partitioned monthly on recorded_at and managed by pg_partman; retention is done by detaching and dropping old partitions, never by a bulk DELETE.",
        "managed by pg_partman",
    ),
    "yield_raster": (
        "Yield points are reprojected to the field's local UTM zone before interpolation; gdalwarp uses bilinear resampling at 2 m pixels and writes Cloud-Optimized GeoTIFF with DEFLATE compression.",
        "2 m pixels",
    ),
    "shapefile_import": (
        "Dealer-uploaded boundary shapefiles often have no .cpg sidecar, so the importer assumes CP1252 for the DBF attributes and repairs self-intersecting polygons with shapely make_valid before storing.",
        "assumes CP1252",
    ),
    "ota_rollback": (
        "TBX-3 firmware images are signed with an ed25519 key held in AWS KMS, and the bootloader enforces anti-rollback: it rejects any image whose security version counter is lower than the installed one.",
        "enforces anti-rollback",
    ),
    "ota_stages": (
        "OTA rollouts go 1% then 10% then 100% with a 48-hour soak at each stage, and firmware rollouts are frozen from 15 September to 31 October during harvest.",
        "48-hour soak",
    ),
    "android_minsdk": (
        "The cab tablet app keeps minSdk 26 because the dealer-supplied Samsung Galaxy Tab Active2 fleet cannot be upgraded past Android 9.",
        "Galaxy Tab Active2",
    ),
    "android_sync": (
        "The cab app queues as-applied records in Room and WorkManager uploads them only on unmetered networks, unless the queue exceeds 5,000 rows, in which case it syncs over cellular too.",
        "exceeds 5,000 rows",
    ),
    "ktor_exposed": (
        "The backend is Kotlin on Ktor 2 with JetBrains Exposed for SQL (no Spring anywhere), and blocking JDBC calls must be wrapped in withContext(Dispatchers.IO).",
        "JetBrains Exposed for SQL",
    ),
    "flyway_naming": (
        "Flyway migrations live in backend/db/migrations and are named with a date prefix such as V20240312_1__description.sql so parallel branches never collide on version numbers.",
        "V20240312_1__",
    ),
    "firmware_runner": (
        "The firmware build step in Bitbucket Pipelines must run on the self-hosted runner labelled hl-arm64, because the cross-compiler image is about 9 GB and overflows the cloud runners' disk.",
        "labelled hl-arm64",
    ),
    "testcontainers_postgis": (
        "Backend integration tests use Testcontainers with the postgis/postgis:15-3.4 image; plain postgres images fail because field boundaries are stored in geography columns.",
        "postgis/postgis:15-3.4",
    ),
    "weather_batching": (
        "Forecasts come from Tomorrow.io (plus NOAA HRRR for US fields); the Tomorrow.io key is capped at 500 calls per hour, so weather-sync batches fields into 0.1 degree grid cells and makes one request per cell.",
        "0.1 degree grid cells",
    ),
    "gdd_method": (
        "Growing degree days are computed in agronomy-py, not the backend, using the corn method: base 10 °C with daily max capped at 30 °C.",
        "capped at 30 °C",
    ),
    "claas_dbc": (
        "Proprietary Claas combine PGNs are decoded with firmware/dbc/claas_private.dbc, which is under NDA and must never be copied into the public sdk-public repository.",
        "claas_private.dbc",
    ),
    "ecs_drain": (
        "The ingest and mqtt-bridge ECS services deploy blue/green via CodeDeploy, and their target groups need a 120-second deregistration delay so box connections drain before tasks stop.",
        "120-second deregistration delay",
    ),
    "portal_cognito": (
        "The dealer portal authenticates against a separate Cognito user pool per region (eu-central-1 and us-east-2), and dealers only see farms in their territory through PostgreSQL row-level security on dealer_id.",
        "separate Cognito user pool per region",
    ),
    "bushel_units": (
        "Everything is stored metric (kg/ha); the API converts to bu/ac only at the edge from the account's unit_system, using 56 lb per bushel for corn and 60 lb for soybeans and wheat.",
        "56 lb per bushel for corn",
    ),
    "gps_clock": (
        "Record timestamps come from the telematics box's GPS clock in UTC; the tablet's local clock is never trusted because cab tablets drift and contractors cross time zones.",
        "box's GPS clock in UTC",
    ),
    "staging_mirror": (
        "Staging (stg.harvestline.io) receives a random 2% sample of production MQTT traffic through the stg_mirror IoT rule, so real VINs showing up there is expected.",
        "random 2% sample",
    ),
    "yield_cleaning": (
        "Yield cleaning drops points with ground speed under 0.8 km/h or with the header raised, and discards the first 12 seconds of every pass to cover grain-flow delay.",
        "first 12 seconds of every pass",
    ),
}

DISTRACTORS = (
    "The TBX-3 uses a 60-second MQTT keepalive; the older TBX-2 boxes used 300 seconds.",
    "The can-ingest consumer uses KCL 2.x in Kotlin and checkpoints to DynamoDB every 30 seconds.",
    "The Aurora cluster has a db.r6g.2xlarge writer and two readers; analytics queries go to the reader endpoint.",
    "Yield maps in the dealer portal are rendered with deck.gl from raster tiles served through CloudFront.",
    "Field boundaries drawn by hand in the cab app are stored with source='manual' and are not overwritten by shapefile imports.",
    "The TBX-3 has 4 GB of eMMC and buffers up to seven days of CAN data when there is no cellular coverage.",
    "Firmware versions follow YEAR.MONTH.PATCH, for example 2024.03.2, and the changelog is kept in firmware/CHANGELOG.md.",
    "New cab app screens are written in Jetpack Compose; older screens still use XML layouts and view binding.",
    "Backend logs are JSON via kotlin-logging to CloudWatch with 30-day retention.",
    "Pull requests need two approvals in Bitbucket, one of them from a code owner.",
    "agronomy-py pins rasterio to 1.3.x and GDAL 3.8 in its Docker image.",
    "On-farm Davis weather stations are polled through the WeatherLink API every 15 minutes.",
    "Soil lab results from Ward Labs and A&L arrive as CSV and are imported into the soil_samples table.",
    "The dealer portal uses TanStack Query and Tailwind, and component tests run with Vitest.",
    "Telematics SIMs come from 1NCE with a ten-year data plan that includes EU roaming.",
    "Variable-rate prescriptions are exported as ISOXML TASKDATA.zip files following ISO 11783-10.",
)

CLAUDE_MD = """# harvestline
- Backend: ./gradlew :backend:check before proposing changes; agronomy-py: pytest -q.
- Never touch production infrastructure from a laptop; Terraform runs in Pipelines.
- Ask before deleting data or running migrations against shared databases.
- Keep PRs small and explain the why in the description."""

AGENTS_MD = """# AGENTS.md
- Monorepo: backend/ (Kotlin), agronomy-py/, cab-app/ (Android), dealer-portal/ (React), firmware/.
- Run the relevant module's tests before handing back a patch.
- Do not add dependencies without asking.
- Commit messages: imperative, Conventional Commits prefixes."""

SUMMARY = """Summary:
1. Primary request: The user is improving how the cab tablet app and backend handle as-applied data and field passes, and asked for fixes across cab-app/, backend/ and the dealer portal as issues come up.
2. Done: Refactored PassRepository in the cab app to use Flow, added unit tests for pass stitching, fixed a null crash in the dealer portal machine list, and wrote a draft of the field passes endpoint.
3. Pending: Finish the sync and portal questions the user raises next, update the docs in docs/cab-app.md, and open a PR once backend checks pass."""

TURNS = (
    # mqtt_retain
    ("mqtt_retain", "claude", "The dealer portal shows engine hours that are three days old for a handful of tractors that have been parked in the shed all week, and the dealer thinks it's live data. I was going to turn on the retain flag for the box publishes in infra/iot/topic_rules.tf so the portal gets the last value immediately on subscribe. Is that a good idea, or did we decide something about this before?", None),
    ("mqtt_retain", "codex-tool", "should the box set retain on can publishes? portal wants last value", ("grep -n 'retain' firmware/tbx3/net/mqtt_client.c", "firmware/tbx3/net/mqtt_client.c:92:    pub.retain = cfg->retain_flag;\nfirmware/tbx3/net/mqtt_client.c:140:    /* retain_flag comes from provisioning profile */")),
    # kinesis_shards
    ("kinesis_shards", "claude-log", "Ingest lag is climbing again and it's the third week of September. This is from the ingest service:\n\n2024-09-18T06:12:44Z WARN can-ingest ProvisionedThroughputExceededException: Rate exceeded for shard shardId-000000000017 in stream can-ingest under account 4411...\n2024-09-18T06:12:45Z WARN can-ingest retrying putRecords batch (412 records) attempt 5/5\n2024-09-18T06:12:47Z ERROR can-ingest dropping batch after retries\n\nWhat's our usual playbook for this time of year?", None),
    ("kinesis_shards", "codex", "how do we bump stream capacity for the busy season", None),
    # telemetry_partitions
    ("telemetry_partitions", "claude", "Legal wants all machine telemetry older than three years removed for EU accounts. I was going to add a nightly job in backend/jobs/RetentionJob.kt that runs DELETE FROM telemetry_points WHERE recorded_at < now() - interval '3 years' in batches of 50k. Can you write it?", None),
    ("telemetry_partitions", "codex-tool", "autovacuum pegged on the big telemetry table again, why", ("psql -Atc \"select relkind, relispartition from pg_class where relname = 'telemetry_points'\"", "p|f")),
    # yield_raster
    ("yield_raster", "claude", "I'm writing agronomy-py/yield/interpolate.py to turn cleaned yield points into a raster for the portal. What resolution and resampling should it use so it matches the maps we already produce, and what coordinate system should the points be in before I interpolate?", None),
    ("yield_raster", "claude-log", "The new yield map for field 8812 looks squashed and the per-pixel areas in the summary are nonsense:\n\n$ gdalinfo out/8812_yield.tif | grep -E 'Pixel Size|EPSG'\nPixel Size = (0.000018000000000,-0.000018000000000)\n        ID[\"EPSG\",4326]]\n\nWhy are my pixels in degrees, and what should the output look like?", None),
    # shapefile_import
    ("shapefile_import", "claude-log", "Field names from a German dealer's upload come out garbled:\n\nINFO boundary-import dealer=DE-004471 file=Betrieb_Mueller.zip layers=1\nINFO field_name='SchlÃ¤ge Nord' area_ha=12.4\nWARN sidecar missing: Betrieb_Mueller.cpg\n\nHow is the importer supposed to decode the attribute table when that file is absent?", None),
    ("shapefile_import", "codex", "boundary import throws TopologyException ring self-intersection, what do we do with bad polygons", None),
    # ota_rollback
    ("ota_rollback", "claude", "A customer's box is on 2024.05.1, which has a GPS fix regression, and support wants to push 2024.03.2 back onto that single VIN until we ship a patch. Can you prepare the job in ota/jobs/ to downgrade it?", None),
    ("ota_rollback", "codex-tool", "downgrade job failed on the box, why", ("aws iot describe-job-execution --job-id downgrade-TBX3-0049122 --thing-name TBX3-0049122 --query execution.statusDetails", "{\n    \"detailsMap\": {\n        \"reason\": \"IMG_REJECTED\",\n        \"code\": \"0x2F\"\n    }\n}")),
    # ota_stages
    ("ota_stages", "claude", "Product wants the fuel-rate decoding fix on every box by Friday. Today is October 3rd. Can you write ota/rollouts/fuel-rate-fix.yaml so it goes straight to the whole fleet in one step?", None),
    ("ota_stages", "codex", "ota rollout percentages and wait between steps?", None),
    # android_minsdk
    ("android_minsdk", "claude", "I'd like to use the system Photo Picker and predictive back in the cab app, and a couple of Jetpack libraries now want API 29+. Can I just raise minSdk in cab-app/app/build.gradle.kts to 33?", None),
    ("android_minsdk", "codex-tool", "why is minSdk this low, can we bump it", ("grep -n 'minSdk' cab-app/app/build.gradle.kts", "14:        minSdk = 26")),
    # android_sync
    ("android_sync", "claude", "Operators complain their mobile data bills spike after long spraying days. When exactly does the cab app push the as-applied records it has stored? I'm looking at cab-app/app/src/main/java/io/harvestline/cab/sync/ but the constraints are spread over three files.", None),
    ("android_sync", "claude-after-compact", "Ok, continuing with sync — at what backlog size does the app stop waiting for Wi-Fi and upload over LTE anyway?", None),
    # ktor_exposed
    ("ktor_exposed", "claude", "I need a new endpoint GET /v1/fields/{id}/passes in the backend. Should I add a @RestController with a JPA repository like I'd do elsewhere, or how is it wired in this codebase?", None),
    ("ktor_exposed", "claude-log", "Under load the API stops responding:\n\nWARN  [DefaultDispatcher-worker-7] com.zaxxer.hikari.pool.HikariPool - HikariPool-1 - Connection is not available, request timed out after 30000ms.\n\"DefaultDispatcher-worker-3\" #41 daemon prio=5 BLOCKED\n    at java.net.SocketInputStream.socketRead0(Native Method)\n    at org.postgresql.core.VisibleBufferedInputStream.read\n\nWhere should database calls run?", None),
    # flyway_naming
    ("flyway_naming", "codex", "add migration: implement_width_m numeric on machines table", None),
    ("flyway_naming", "claude-tool", "Two branches both added a V42 migration and main won't start now. How are we supposed to name these files?", ("ls backend/db/migrations | tail -4", "V20240301_1__add_dealer_territory.sql\nV20240405_2__field_passes.sql\nV42__add_notes.sql\nV42__implement_width.sql")),
    # firmware_runner
    ("firmware_runner", "claude-log", "The firmware pipeline failed on my branch:\n\n+ docker pull hl/tbx3-cross:gcc12\ngcc12: Pulling from hl/tbx3-cross\nfailed to register layer: write /usr/lib/gcc-cross/aarch64-linux-gnu/12/cc1plus: no space left on device\nBuild teardown\n\nI added a new step to bitbucket-pipelines.yml for it. What did I miss?", None),
    ("firmware_runner", "codex", "which runner do firmware steps use in pipelines", None),
    # testcontainers_postgis
    ("testcontainers_postgis", "claude-log", "Integration tests blew up after I swapped the container image to postgres:16-alpine to make CI faster:\n\norg.postgresql.util.PSQLException: ERROR: type \"geography\" does not exist\n  Position: 87\n    at io.harvestline.boundary.BoundaryRepositoryIT.insertsField(BoundaryRepositoryIT.kt:42)\n\nWhat image should it be?", None),
    ("testcontainers_postgis", "codex", "db image for backend ITs?", None),
    # weather_batching
    ("weather_batching", "claude", "weather-sync is getting HTTP 429s from the forecast provider around 5am when every farm refreshes at once. Can you look at weather/sync/ForecastFetcher.kt and tell me how requests are meant to be grouped?", None),
    ("weather_batching", "claude-after-compact", "Before I write the batching code for forecasts: how coarse is the grid we group fields into?", None),
    # gdd_method
    ("gdd_method", "claude", "Agronomists say our corn heat-unit numbers are too high during July heat waves. Where does that calculation live and what formula is it supposed to follow?", None),
    ("gdd_method", "codex", "gdd base/cap temps?", None),
    # claas_dbc
    ("claas_dbc", "claude", "I'm preparing the partner SDK release and want partners to be able to decode everything our boxes see. Can you copy all of firmware/dbc/*.dbc into sdk-public/dbc/ and add them to the package manifest?", None),
    ("claas_dbc", "codex-tool", "combine frames not decoding on the bench, which definition file covers these", ("candump -n 3 can0", "  can0  18FF4A3D   [8]  12 00 FF 7C 01 00 FF FF\n  can0  18FF4B3D   [8]  00 00 33 10 FF FF FF FF\n  can0  18FEEE00   [8]  5A 41 FF FF FF FF FF FF")),
    # ecs_drain
    ("ecs_drain", "claude-log", "Every deploy of the bridge drops a few hundred box connections:\n\n2024-06-11T09:02:13Z ERROR mqtt-bridge connection reset by peer client=TBX3-0049122\n2024-06-11T09:02:13Z INFO  target deregistered tg=mqtt-bridge-green after 30s\n\nWhich setting should be different here?", None),
    ("ecs_drain", "codex", "ecs target group drain time for ingest svc?", None),
    # portal_cognito
    ("portal_cognito", "claude", "A dealer in Ohio says he can't log in to the portal with the account he created on our European site last year. Can you explain how portal login is set up in dealer-portal/src/auth/ and whether accounts are supposed to work across regions?", None),
    ("portal_cognito", "claude-after-compact", "One more portal thing: how do we guarantee a dealer never sees farms outside their own territory?", None),
    # bushel_units
    ("bushel_units", "claude", "The new yield summary endpoint returns 9.4 for a field and a farmer in Iowa says it should be about 150. Where should the conversion happen, and what test weight do we use for corn versus beans?", None),
    ("bushel_units", "codex", "lbs per bu soybeans in our conversion?", None),
    # gps_clock
    ("gps_clock", "claude-log", "Passes are stitched in the wrong order for a contractor who drove from Nebraska into Colorado:\n\npass 1184 start=2024-10-02T14:58:10-05:00 source=tablet\npass 1185 start=2024-10-02T14:03:55-06:00 source=tablet\n\nWhich time source should the stitcher trust?", None),
    ("gps_clock", "codex", "as-applied timestamps: tablet clock or box?", None),
    # staging_mirror
    ("staging_mirror", "claude", "I want to load-test the new PGN decoder in staging. Does staging see any real machine traffic, or do I need to write a simulator first?", None),
    ("staging_mirror", "codex-tool", "why is stg receiving data from real customer VINs??", ("aws iot get-topic-rule --rule-name stg_mirror --query rule.sql", "\"SELECT * FROM 'hl/v2/+/can' WHERE rand() < 0.02\"")),
    # yield_cleaning
    ("yield_cleaning", "claude", "The yield map has a stripe of near-zero yield at the start of every pass. Which filters does agronomy-py/yield/clean.py apply, and is there already one meant for this?", None),
    ("yield_cleaning", "codex", "yield cleaning min ground speed?", None),
)

NULL_TURNS = (
    ("claude", "Rename the React component DealerFarmTable to FarmListTable everywhere in dealer-portal/src and update the imports and the Storybook story.", None),
    ("codex", "add unit tests for parseVin in backend common module", None),
    ("claude-tool", "Fix the lint error please.", ("npx eslint src/pages/Machines.tsx", "src/pages/Machines.tsx\n  12:7  error  'useMemo' is defined but never used  @typescript-eslint/no-unused-vars\n\n1 problem (1 error, 0 warnings)")),
    ("claude", "Write a Kotlin extension function that formats a Double of hectares with one decimal and a ' ha' suffix, and add tests for rounding.", None),
    ("codex", "fix typo 'teh telematics' in README", None),
    ("claude-log", "This test fails after my refactor:\n\nFAILED tests/test_grid.py::test_cell_index - AssertionError: assert (3, 4) == (4, 3)\n\nI think I swapped row and column in cell_index(). Can you fix it?", None),
    ("codex-tool", "fix the compile error", ("./gradlew :backend:compileKotlin", "e: backend/src/main/kotlin/io/harvestline/api/MachineRoutes.kt: (57, 23): Unresolved reference: toDto")),
    ("claude", "Add a loading spinner to the machine detail page in the dealer portal while the query is pending, and an error state with a retry button.", None),
    ("claude", "Convert the remaining Java files in cab-app/app/src/main/java/io/harvestline/cab/util/ to idiomatic Kotlin.", None),
    ("codex", "sort field list alphabetically in FieldPicker composable", None),
    ("claude-after-compact", "Let's finish the docstrings for the functions in agronomy-py/yield/io.py that we didn't get to.", None),
    ("claude", "What does this regex match exactly: ^TBX3-\\d{7}$ ? Add a comment above it in BoxSerial.kt.", None),
)
