"""The turns set's held-out half: other agent turns, another project, never used to choose a value.

The first half (``turns``) is what recall's defaults were tuned on; a change
that only learns the dev turns shows here. Same shapes (Claude Code and
Codex requests as recorded in ``shared/fixtures/real-clients``, long
requests, pasted logs, tool results, turns after a compaction), new content:
a delivery-fleet project (``fleet``) with its own facts, distractors sharing
the turns' words, rule files and compaction summary. Its memories are in
their own project, so the two halves never see each other's.
"""
from __future__ import annotations

PROJECT = "fleet"

FACTS = {
    "gps-port": ("The GPS trackers report over UDP to ingest.fleet.internal on port 5094.", "port 5094"),
    "geofence": ("Geofence radii are stored in metres as integers in the zones.radius_m column.", "radius_m"),
    "tiles": ("Map tiles come from the self-hosted tileserver-gl at tiles.fleet.internal, never from the public "
              "OSM servers.", "tileserver-gl"),
    "driver-app": ("The driver app's minimum supported Android version is API level 26 (Android 8.0).",
                   "API level 26"),
    "eta": ("The ETA model is retrained every Tuesday by the eta-retrain Airflow DAG; its features live in "
            "features/eta_v3.sql.", "eta-retrain"),
    "oncall": ("Priya Raman is the on-call lead for dispatch and approves every change to the routing "
               "weights.", "Priya Raman"),
    "sms": ("Driver SMS alerts go through Twilio with the messaging service SID MG7f3c91; the sender is "
            "the short code 48213.", "MG7f3c91"),
    "timezone": ("Delivery windows are stored in UTC and shown in the depot's local time zone, never the "
                 "customer's.", "depot's local time zone"),
    "vin": ("A vehicle is identified by its VIN everywhere; the fleet number is a display label and may be "
            "reused.", "display label and may be reused"),
    "retention": ("Raw GPS points are kept for 45 days in the gps_points_raw table, then only the hourly "
                  "rollups remain.", "45 days"),
    "routing": ("The route optimiser is OR-Tools with a 20-second solver time limit per depot "
                "(SOLVER_TIME_LIMIT_S=20).", "SOLVER_TIME_LIMIT_S=20"),
    "pod": ("Proof-of-delivery photos go to the fleet-pod-eu bucket and are deleted after 180 days.",
            "fleet-pod-eu"),
    "feature-flags": ("Fleet feature flags are read from Unleash; the project id is fleet-prod and the "
                      "dev environment is fleet-dev.", "fleet-prod"),
    "canary": ("Dispatch releases roll out to the Leeds depot first and wait 24 hours before the rest.",
               "Leeds depot first"),
}
DISTRACTORS = (
    "The GPS trackers' firmware is updated over the air once a quarter.",
    "Zones are drawn by the operations team in the admin console.",
    "The public website's map uses Mapbox for the marketing pages.",
    "The driver app's crash reports go to Sentry.",
    "The dispatch dashboard refreshes every 30 seconds.",
    "Routing weights are documented in docs/routing/weights.md.",
    "Customers get delivery updates by email from the notifications service.",
    "Depots close at 22:00 local time on weekdays.",
    "Vehicles are serviced every 15,000 kilometres.",
    "The hourly rollups feed the utilisation report on Mondays.",
    "Photos in the driver app are compressed to JPEG before upload.",
    "Release notes for the driver app are written in Notion.",
)

CLAUDE_MD = ("# Fleet\n- Run make check before pushing; CI runs the Android build and the dispatch tests.\n"
             "- Never commit the Twilio or Unleash tokens; they come from the vault.\n"
             "- The dispatch, routing and tracking services share one Postgres database.\n"
             "- GPS points are in WGS84 everywhere.\n")
AGENTS_MD = ("# Fleet: agent rules\n- Keep answers short.\n- Run make check before proposing a commit; the "
             "tracking tests need the GPS simulator.\n- SQL migrations go in migrations/ with a date prefix.\n"
             "- The driver app is in apps/driver, the dispatch API in services/dispatch.\n")
SUMMARY = ("Summary:\n1. Primary request: speed up the dispatch dashboard and fix the routing weights "
           "import.\n2. Done: added an index on deliveries(depot_id, window_start), the weights import "
           "reads the new CSV format, the dispatch tests passed.\n3. Pending: nothing.")

GPS_LOG = "\n".join(f"2026-12-02T06:{m:02d}:{s:02d}Z WARN tracker-{400 + s} no fix reported for "
                    f"{30 + (m * s) % 200} s (vehicle VIN WF0XXXTTGX{m:02d}{s:02d}, last seen udp)"
                    for m in range(10, 20) for s in range(0, 60, 6))

# (memory key or None, shape, what the user writes, a tool's command and output for tool-result shapes)
TURNS = (
    ("gps-port", "claude-log", "Half the trucks stopped showing up on the dispatch map after we moved the "
     "ingest service to the new cluster. Log below. Which port should the trackers be sending to, and is the "
     "new load balancer even listening on it?\n\n" + GPS_LOG, None),
    ("geofence", "codex", "I need to add a 'tolerance' setting to geofences in services/tracking/zones.py. "
     "Before I touch the schema: what unit are the existing radii in and which column holds them? The new "
     "field should be consistent with it.", None),
    ("tiles", "claude", "The staging map is blank and the browser console shows CORS errors on the tile "
     "requests. Can you check apps/web/src/map/config.ts and fix where the map loads its tiles from? "
     "Someone changed it last week.", None),
    ("driver-app", "codex-tool", "Bump the driver app's dependencies and tell me whether we can use the "
     "new camera library, which needs a recent Android.",
     ("cat apps/driver/android/app/build.gradle | head -20", "android {\n    compileSdk 34\n    defaultConfig "
      "{\n        applicationId 'io.fleet.driver'\n        minSdk 24\n        targetSdk 34\n    }\n}\n")),
    ("eta", "claude", "The ETAs have been way off since Wednesday, drivers are arriving 20 minutes after "
     "the promised window. When was the ETA model last retrained and where are its features defined? I "
     "want to see if something in the features broke.", None),
    ("oncall", "codex", "I tuned the routing weights in config/routing.yaml so that short urban stops "
     "cost less. Open a PR with the change and tell me who has to approve it before it can merge.", None),
    ("sms", "claude-tool", "Drivers say they stopped getting the shift reminder texts. Look at the "
     "notifier and find out what we send them through.",
     ("rg -n 'send_sms' services/notifier", "services/notifier/sms.py:12:def send_sms(to, body):\n"
      "services/notifier/sms.py:13:    client.messages.create(to=to, body=body, messaging_service_sid="
      "settings.SMS_SERVICE)\n")),
    ("timezone", "claude", "A customer in Galway complained that the delivery window in the tracking "
     "email was an hour off. Which time zone are windows supposed to be displayed in? Check "
     "services/notifications/templates/window.html and fix it if it's wrong.", None),
    ("vin", "codex", "Write the join between the maintenance records and the telematics events. The "
     "maintenance export only has the fleet number column, the telematics has both. Which key should I join "
     "on so it does not break?", None),
    ("retention", "claude-tool", "The analysts want the raw GPS trail for a delivery from early October "
     "to investigate a damage claim. Can you pull it?",
     ("psql -c \"select min(recorded_at) from gps_points_raw\"", "          min\n------------------------\n"
      " 2026-10-19 00:00:04+00\n(1 row)\n")),
    ("routing", "claude-log", "The nightly route build for the big depots is taking forever and the "
     "morning routes are late. Here's the timing from last night; is the optimiser configured the way we "
     "agreed?\n\n" + "\n".join(f"2026-12-02T03:{m:02d}:00Z INFO routing depot={d} stops={300 + m * 7} "
                                f"solve_s={95 + m}" for m, d in enumerate(("LDS", "MAN", "BHM", "GLA", "BRS")))
     , None),
    ("pod", "codex-tool", "Support needs a proof-of-delivery photo from March for a dispute. Find where the "
     "photos are stored and whether one from March still exists.",
     ("rg -n 'upload_photo' apps/driver/src", "apps/driver/src/pod/upload.ts:40:export async function "
      "upload_photo(file: Blob) {\n")),
    ("feature-flags", "codex", "Add a flag to hide the new route preview screen for everyone but the "
     "pilot depots. Where do our feature flags live and which project do I create it in?", None),
    ("canary", "claude-after-compact", "Good. Now roll the dispatch release out. What's the order we "
     "normally do it in?", None),
    ("gps-port", "codex-tool", "The tracker simulator in tools/simulate_trackers.py can't reach ingest "
     "on the dev cluster. Fix the target it sends to.",
     ("sed -n 1,12p tools/simulate_trackers.py", "import socket\n\nTARGET = ('ingest.fleet.internal', 5000)\n"
      "sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n")),
    ("oncall", "claude-after-compact", "Who should I ping about the routing weights change before I merge "
     "it?", None),
)
NULL_TURNS = (
    ("claude", "Convert the date helpers in apps/web/src/utils/dates.ts from moment to date-fns and keep "
     "the exported names the same.", None),
    ("codex-tool", "Clean up the unused imports in services/dispatch and make the linter happy.",
     ("ruff check services/dispatch", "services/dispatch/api.py:3:8: F401 `os` imported but unused\n"
      "services/dispatch/models.py:5:1: F401 `typing.Any` imported but unused\n")),
    ("claude-log", "What does this TypeScript error mean and how do I fix it?\n\n"
     "apps/web/src/components/Table.tsx(42,17): error TS2322: Type 'string | undefined' is not assignable "
     "to type 'string'.\n  Type 'undefined' is not assignable to type 'string'.", None),
    ("codex", "Write a SQL query that returns, per month, the number of rows and the distinct user ids "
     "of a table called events, newest month first.", None),
    ("claude", "Explain the difference between a Python dataclass and a NamedTuple, and when you'd pick "
     "each one.", None),
    ("claude-after-compact", "Thanks, that's all. Please write the PR description for these changes.", None),
    ("codex", "Set up a pre-commit config with black, ruff and a check for trailing whitespace.", None),
)
