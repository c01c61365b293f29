"""Held-out turns (twentieth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 21:30 UTC: 0.659 hit, 0.143 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "airwatch"

FACTS = {
    "pm25_breakpoints": (
        "The AQI converter in aqi/breakpoints.py uses the 2024 EPA PM2.5 breakpoints where the Good band ends at 9.0 µg/m³, because the council adopted the revised federal table in March.",
        "9.0 µg/m³",
    ),
    "rh_correction": (
        "Low-cost optical PM readings are humidity-corrected with the factor applied only above 75% relative humidity, because below that the Plantower drift is within calibration error.",
        "75% relative humidity",
    ),
    "ingest_host": (
        "Street sensors post their readings over MQTT to ingest.airwatch.city:8883 with mutual TLS, because the old HTTP endpoint was dropped after cellular modems kept leaking plaintext payloads.",
        "ingest.airwatch.city:8883",
    ),
    "readings_table": (
        "Raw sensor readings live in the TimescaleDB hypertable telemetry.raw_readings chunked by 6 hours, because daily chunks made the hourly rollup job scan far too much data.",
        "telemetry.raw_readings",
    ),
    "school_alert_threshold": (
        "School alerts fire only when the 3-hour rolling AQI exceeds 150 at the nearest sensor, because single-hour spikes from bus idling caused too many false recess cancellations.",
        "3-hour rolling AQI exceeds 150",
    ),
    "timezone": (
        "All alert schedules and daily reports are computed in America/Chicago local time, not UTC, because the health department's exposure days are defined by local midnight.",
        "America/Chicago",
    ),
    "colocation_owner": (
        "Co-location calibration against the reference monitor at the Elm Street regulatory station is owned by Priya Raman's field team, so calibration tickets go to the FIELD-CAL queue.",
        "FIELD-CAL",
    ),
    "stale_sensor": (
        "A sensor is marked stale and hidden from the public map after 45 minutes without a reading, because showing old values during fires misled residents.",
        "45 minutes",
    ),
    "map_tiles": (
        "Public AQI map tiles are pre-rendered into the bucket s3://airwatch-public-tiles and cached by the CDN for 10 minutes, because live rendering collapsed during the wildfire smoke event.",
        "s3://airwatch-public-tiles",
    ),
    "hospital_pager": (
        "Hospital alerts are delivered through the PagerDuty service hospital-aq-notify rather than SMS, because hospital switchboards require acknowledgement tracking for every air-quality notice.",
        "hospital-aq-notify",
    ),
    "ozone_units": (
        "Ozone is stored in ppb internally and only converted to ppm for the AQI lookup, because the reference instruments report ppb and earlier unit mixing produced thousandfold errors.",
        "ppb internally",
    ),
    "firmware_flag": (
        "Firmware rollouts to street nodes are gated by the feature flag fw_canary_percent, kept at 5 until a week passes cleanly, because a bad build once bricked 200 nodes.",
        "fw_canary_percent",
    ),
    "nowcast": (
        "The public PM2.5 figure uses the NowCast weighting over the last 12 hours with a minimum weight factor of 0.5, because raw hourly values swung too much for parents.",
        "0.5",
    ),
    "calibration_file": (
        "Per-sensor calibration coefficients are versioned in calibration/coefficients.yaml and loaded at ingest time, because applying them in the dashboard layer left the API returning uncorrected values.",
        "calibration/coefficients.yaml",
    ),
    "retention": (
        "Raw readings are retained for 400 days and then only hourly aggregates are kept, because the state reporting requirement needs one full year plus a month for audit.",
        "400 days",
    ),
    "api_rate_limit": (
        "The open data API allows 60 requests per minute per API key, enforced in the gateway, because a researcher's scraper once starved the alert workers of database connections.",
        "60 requests per minute",
    ),
    "sensor_id_format": (
        "Sensor IDs follow the format AW-<ward>-<4 digit serial>, e.g. AW-07-0142, because the public works asset register joins on ward number for maintenance routing.",
        "AW-07-0142",
    ),
    "alert_quiet_hours": (
        "Non-emergency school alert emails are suppressed between 21:00 and 06:00, because principals complained about overnight noise; hospital alerts are never suppressed.",
        "21:00 and 06:00",
    ),
    "translation_langs": (
        "Public alert text must ship in English, Spanish and Vietnamese via locales/alerts/*.po, because the city language access ordinance lists those three for health notices.",
        "Vietnamese",
    ),
    "outlier_filter": (
        "The ingest pipeline drops PM2.5 readings above 1000 µg/m³ as sensor faults, because spider webs in the inlet produce absurd spikes that poisoned the ward averages.",
        "1000 µg/m³",
    ),
    "deploy_window": (
        "Production deploys of the alert service are frozen on weekdays 07:00 to 09:00, because that is when morning school alerts go out and a restart once delayed them.",
        "07:00 to 09:00",
    ),
    "wind_source": (
        "Wind direction for the smoke plume overlay comes from the NOAA station KMDW feed, not the on-sensor anemometers, because rooftop mounting made sensor wind readings unreliable.",
        "KMDW",
    ),
}

DISTRACTORS = (
    "The grafana dashboard for ingest latency is called 'Ingest / p95' and lives in the ops folder.",
    "We switched the frontend map library from Leaflet to MapLibre GL last spring for vector tile support.",
    "Sensor enclosures are painted white to reduce solar heating of the temperature probe.",
    "The weekly ops sync is on Tuesdays and notes go into docs/ops-notes/.",
    "The nightly backup of the config database runs at 02:30 and is verified by a restore test every Sunday.",
    "Our Python services use ruff for linting with line length 100.",
    "The mobile app is maintained by an external agency under a yearly contract.",
    "Battery-backed nodes report their voltage every hour in the health topic.",
    "The ward boundary GeoJSON comes from the city GIS portal and is refreshed quarterly.",
    "Integration tests spin up a local TimescaleDB container via docker compose.",
    "The annual air quality report is written in LaTeX and lives in the reports repository.",
    "Sensor maintenance visits are scheduled through the public works work-order system.",
    "The open data portal publishes a CSV export of hourly ward averages.",
    "Alert email templates are rendered with Jinja2 and previewed in Storybook-like snapshot tests.",
    "We use Renovate to bump dependencies, grouped weekly.",
    "The pilot with the transit agency put six sensors on bus shelters along Route 9.",
)

CLAUDE_MD = """# airwatch
Municipal air-quality platform: sensor ingest, calibration, AQI maps, alerts.
- Services live in services/<name>/, shared code in lib/.
- Run `make test` before opening a PR; `make lint` runs ruff and mypy.
- Database migrations go in migrations/ and are applied with alembic.
- Keep public-facing text in locales/, never hard-code it.
"""

AGENTS_MD = """- Use `make test` and `make lint`; CI runs the same targets.
- Do not edit generated files under gen/.
- Keep commits small and reference the ticket ID in the message.
- Ask before changing database migrations that already shipped.
"""

SUMMARY = (
    "Summary: Earlier in this session we cleaned up the docker compose file for local development, "
    "renamed a few environment variables in the dev setup script, and fixed a flaky snapshot test in the "
    "email template package. No production code paths were changed."
)

TURNS = (
    # pm25_breakpoints
    ("pm25_breakpoints", "claude",
     "A parent emailed saying the map shows 'Good' for her block at 11 µg/m³ but the state site says Moderate for the same value. Can you look at aqi/breakpoints.py and make our PM2.5 bands line up with what we're supposed to use? Please add a test case for the boundary too.",
     None),
    ("pm25_breakpoints", "codex-tool",
     "test_aqi_bands failing after table refactor, fix",
     ("pytest tests/aqi/test_bands.py -q",
      "F.\n=================================== FAILURES ===================================\n___________________________ test_good_upper_boundary ___________________________\n    assert category(pm25=9.1) == 'Moderate'\nE   AssertionError: assert 'Good' == 'Moderate'\n1 failed, 1 passed in 0.21s")),
    # rh_correction
    ("rh_correction", "claude-log",
     "Ward 3 numbers jumped on a dry afternoon after yesterday's deploy. Here's the ingest debug:\n```\n2025-06-02T14:10:03 DEBUG calib sensor=AW-03-0031 rh=41.0 pm25_raw=12.4 hum_corr=applied pm25=8.1\n2025-06-02T14:10:03 DEBUG calib sensor=AW-03-0044 rh=38.5 pm25_raw=10.9 hum_corr=applied pm25=7.0\n```\nWhy is the correction being applied here and what's the right condition?",
     None),
    ("rh_correction", "codex",
     "humidity fix in calib/humidity.py runs on every reading, should it?",
     None),
    # ingest_host
    ("ingest_host", "claude",
     "I'm writing the provisioning script for the new batch of nodes in provisioning/flash_node.sh. It needs to bake in where the nodes send their data and what port, plus the cert paths. Can you fill in the connection block? The old script from 2022 still points at the https upload URL.",
     None),
    ("ingest_host", "claude-tool",
     "The new nodes in ward 12 never show up. Can you figure out what's wrong with their config?",
     ("grep -n broker /etc/airwatch/node.conf",
      "4:broker_url = http://upload.airwatch.city/api/v1/readings\n5:broker_port = 80\n6:tls = false")),
    # readings_table
    ("readings_table", "codex",
     "write sql for max pm25 per sensor last 24h",
     None),
    ("readings_table", "claude-after-compact",
     "Back to the hourly rollup job from before the summary. It's slow again and I want to rewrite the query in jobs/rollup.py to hit the right source table and take advantage of how it's partitioned. Can you draft it?",
     None),
    # school_alert_threshold
    ("school_alert_threshold", "claude",
     "Lincoln Elementary got a recess cancellation at 10am and the principal says the air looked fine by 10:30. Can you check the logic in alerts/schools.py and tell me whether it behaved the way it's supposed to? If not, fix it.",
     None),
    ("school_alert_threshold", "claude-tool",
     "Why did this fire?",
     ("python -m alerts.explain --alert 88213",
      "{\"alert_id\": 88213, \"school\": \"Lincoln Elementary\", \"sensor\": \"AW-05-0210\", \"trigger\": \"aqi_1h\", \"value\": 163, \"aqi_3h\": 97, \"sent\": true}")),
    # timezone
    ("timezone", "codex",
     "daily exposure report cuts off at 7pm, fix reports/daily.py",
     None),
    ("timezone", "claude-log",
     "The health department says Tuesday's report includes Monday evening readings:\n```\nreport_day=2025-03-11 window_start=2025-03-11T00:00:00+00:00 window_end=2025-03-12T00:00:00+00:00 rows=28811\n```\nWhat's off with the window?",
     None),
    # colocation_owner
    ("colocation_owner", "claude",
     "Sensor AW-09-0077 has been reading 30% high vs its neighbours for a week. I think it needs to go back next to the reference monitor for a recalibration. Who handles that and where should I file it? Draft the ticket text for me.",
     None),
    ("colocation_owner", "claude-after-compact",
     "Back to the drifting sensors from before the summary — please write up the handoff note for the people who do the side-by-side runs with the regulatory instrument.",
     None),
    # stale_sensor
    ("stale_sensor", "codex-tool",
     "map still shows dead sensor, why",
     ("curl -s localhost:8080/api/sensors/AW-02-0019 | jq .",
      "{\n  \"id\": \"AW-02-0019\",\n  \"last_seen\": \"2025-08-14T09:02:11-05:00\",\n  \"now\": \"2025-08-14T11:40:03-05:00\",\n  \"visible\": true,\n  \"pm25\": 14.2\n}")),
    ("stale_sensor", "claude",
     "During last week's smoke event a resident screenshot showed green dots next to red ones, and it turned out some of those green sensors had stopped talking hours earlier. Can you add the right cutoff to map/visibility.py so that doesn't happen again?",
     None),
    # map_tiles
    ("map_tiles", "claude",
     "I need to write a small script that purges and re-renders the public map tiles after we fix a calibration error for a ward. Can you write tools/rerender_ward.py? It should upload the fresh tiles to wherever the map reads them from.",
     None),
    ("map_tiles", "codex",
     "where do rendered tiles go? tile worker output path is empty in config",
     None),
    # hospital_pager
    ("hospital_pager", "claude",
     "Mercy General wants to add their night charge nurse to air quality notices. Should I add her phone number to the SMS list in alerts/hospitals.yaml? Please make the change in whatever way is correct.",
     None),
    ("hospital_pager", "codex-tool",
     "hospital notice not acked, check",
     ("grep -rn 'channel' alerts/hospitals.yaml | head",
      "3:  channel: twilio_sms\n11:  channel: twilio_sms\n19:  channel: twilio_sms")),
    # ozone_units
    ("ozone_units", "claude-log",
     "Ozone AQI came out absurd after the migration:\n```\nsensor=REF-ELM o3_value=0.062 aqi_o3=0 category=Good\nsensor=AW-04-0113 o3_value=58.0 aqi_o3=500 category=Hazardous\n```\nWhat's going on and how should the values be handled?",
     None),
    ("ozone_units", "codex",
     "add o3 column to new aggregates table, what unit",
     None),
    # firmware_flag
    ("firmware_flag", "claude",
     "Firmware 3.8.2 passed bench testing and I'd like to roll it out to the street nodes this afternoon. Can you update the rollout config in fleet/rollout.toml and tell me the steps? I'd like to get it everywhere by Friday.",
     None),
    ("firmware_flag", "claude-after-compact",
     "Back to the firmware release from before the summary: the build is signed. How do we widen exposure safely from here?",
     None),
    # nowcast
    ("nowcast", "codex",
     "nowcast weights look off in aqi/nowcast.py, check min factor",
     None),
    ("nowcast", "claude-tool",
     "Parents say the map number jumps around hour to hour. Can you look at the averaging?",
     ("python -c 'from aqi.nowcast import weight_factor; print(weight_factor([40,5,6,5,7,5,6,5,6,5,5,6]))'",
      "0.125")),
    # calibration_file
    ("calibration_file", "claude",
     "Researchers using the open data API say values don't match the dashboard for the same sensor and hour. The dashboard looks right. Can you trace where corrections are applied and fix it so the API gives the corrected values too?",
     None),
    ("calibration_file", "codex",
     "new coefficients for AW-11-0200 from colocation, where do they go",
     None),
    # retention
    ("retention", "claude",
     "Storage costs are up and finance asked whether we can drop raw readings after 90 days and keep only hourly data. Can you write the retention policy migration? Tell me if there's anything that constrains the number.",
     None),
    ("retention", "claude-tool",
     "Is our retention policy set correctly?",
     ("psql -c \"SELECT hypertable_name, config FROM timescaledb_information.jobs WHERE proc_name='policy_retention';\"",
      " hypertable_name |          config\n-----------------+---------------------------\n raw_readings    | {\"drop_after\": \"180 days\"}\n(1 row)")),
    # api_rate_limit
    ("api_rate_limit", "codex",
     "configure gateway throttle for open data api",
     None),
    ("api_rate_limit", "claude-log",
     "Alert workers are timing out again:\n```\nERROR alerts.worker could not acquire connection: pool exhausted (size=20, waiting=57)\nINFO gateway key=rsch-4471 path=/v1/readings rpm=940\n```\nWhat should the gateway be doing here?",
     None),
    # sensor_id_format
    ("sensor_id_format", "claude",
     "I'm importing 40 new sensors from the vendor spreadsheet; their IDs are like 'PA-II-88f21c'. Can you write the import script in tools/import_sensors.py and assign our IDs properly so public works can route maintenance?",
     None),
    ("sensor_id_format", "codex-tool",
     "asset join fails for new sensors",
     ("python tools/check_assets.py",
      "WARN no asset match for sensor 'AW7-142'\nWARN no asset match for sensor 'AW-7-142'\nOK   AW-03-0031 -> asset 55102")),
    # alert_quiet_hours
    ("alert_quiet_hours", "claude",
     "A principal complained that she got an advisory email at 11:40pm. Can you look at alerts/email_sender.py and put in whatever suppression we're supposed to have? Make sure we don't break anything for the hospitals.",
     None),
    ("alert_quiet_hours", "codex",
     "add overnight suppression to school emails",
     None),
    # translation_langs
    ("translation_langs", "claude",
     "I added a new 'ozone advisory' alert type. The English template is done in alerts/templates/ozone.txt. What else do I need to add before it can go public? Please do it.",
     None),
    ("translation_langs", "claude-tool",
     "CI says the locale check failed on my alerts PR, can you fix it?",
     ("make check-locales",
      "checking locales/alerts/*.po for msgid 'ozone_advisory'\n  en.po  ok\n  es.po  ok\n  vi.po  MISSING\nmake: *** [check-locales] Error 1")),
    # outlier_filter
    ("outlier_filter", "claude-log",
     "Ward 6 average looks insane today:\n```\nward=06 hour=2025-05-20T08 sensors=9 pm25_mean=412.7\nsensor=AW-06-0090 pm25=3480.0\n```\nWhy did this value get in?",
     None),
    ("outlier_filter", "codex",
     "ingest/validate.py: add upper bound check for pm25",
     None),
    # deploy_window
    ("deploy_window", "codex",
     "schedule alert-service deploy for 7:30 tomorrow",
     None),
    ("deploy_window", "claude-after-compact",
     "Back to the alert service hotfix from before the summary. It's 8:15 on a Wednesday and the fix is ready. Can you ship it to production now?",
     None),
    # wind_source
    ("wind_source", "claude",
     "The smoke plume overlay was pointing the wrong way yesterday — smoke clearly drifted east but the arrows pointed north. Can you look at overlay/plume.py and fix where the wind data comes from?",
     None),
    ("wind_source", "claude-tool",
     "Why are the plume arrows all over the place?",
     ("grep -n wind overlay/plume.py",
      "12:from sensors.anemometer import latest_wind\n31:    wind = latest_wind(sensor_id)  # per-sensor rooftop anemometer\n")),
)

NULL_TURNS = (
    ("claude", "Please rename the helper `calc_avg` to `mean_pm25` in lib/stats.py and update its call sites. Nothing else should change.", None),
    ("codex", "fix typo 'recieve' in services/ingest/README.md", None),
    ("codex-tool", "fix lint errors",
     ("make lint",
      "lib/geo.py:14:1: F401 'math' imported but unused\nlib/geo.py:88:101: E501 line too long (104 > 100)\nFound 2 errors.")),
    ("claude", "Can you write unit tests for lib/geo.py's haversine_km function? Cover zero distance, antipodal points, and a known pair of coordinates.", None),
    ("codex", "bump pydantic to 2.8 in requirements.txt", None),
    ("claude", "The README intro for the dashboard is clunky. Can you reword the first paragraph so it's clearer for new contributors? Keep it short.", None),
    ("claude-tool", "Formatting check failed, can you fix it?",
     ("ruff format --check .",
      "Would reformat: services/map/app.py\nWould reformat: lib/units.py\n2 files would be reformatted, 120 files already formatted")),
    ("codex", "add type hints to lib/units.py", None),
    ("claude-log", "Got this while running tests locally:\n```\nModuleNotFoundError: No module named 'freezegun'\n```\nCan you add it to the dev requirements?", None),
    ("claude-after-compact", "Back to the cleanup from before the summary: please sort the imports in services/map/app.py and remove the dead commented-out code at the bottom.", None),
    ("codex-tool", "mypy failing, fix",
     ("mypy lib/",
      "lib/stats.py:22: error: Incompatible return value type (got \"float | None\", expected \"float\")\nFound 1 error in 1 file")),
    ("claude", "Please add a docstring to every public function in lib/colors.py explaining its arguments. Keep them one or two lines.", None),
)
