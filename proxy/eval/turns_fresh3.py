"""The turns set's third sealed held-out half, written without reading recall's code or results.

Written by a helper engineer of this session who had not read recall's code,
its filters, the memory gate, the tuning results or the recall docs; only the
shape of a half (what ``turns.build`` and ``turns.body_of`` read) was taken from
``turns.py`` and ``turns_fresh2.py``. Nothing here was used to choose a value,
and it is never to be read to tune: the lead runs it once, at the end, and the
report gives its numbers, never its texts.

Same shapes as the other halves (Claude Code and Codex requests around the
user's words: long multi-part requests, pasted logs and stack traces, command
output returned by a tool, turns after a compaction), new content: a city
transit operator's fare-collection system (``fares``: bus and tram validators,
fare capping, transfers, settlement with the card acquirer, a back office for
customer service), with its own facts, distractors that share the turns' words
and answer none of them, rule files and compaction summary. Turns paraphrase
their fact, refer back with pronouns, carry typos and abbreviations, and some
quote a wrong value.
"""
from __future__ import annotations

PROJECT = "fares"

# (statement, the string only it holds)
FACTS = {
    "broker": ("Bus and tram validators upload their tap batches over MQTT with mutual TLS to "
               "tapbroker.fares.internal on port 8883; plain 1883 is closed.", "tapbroker.fares.internal"),
    "cap": ("The adult daily fare cap is 7.20 (DAILY_CAP_CENTS = 720 in pricing/caps.kt); once a rider's "
            "taps reach it, further rides that service day cost nothing.", "DAILY_CAP_CENTS = 720"),
    "service-day": ("The service day runs from 04:00 to 03:59 the next morning, local time: a tap at 02:30 "
                    "belongs to the previous day for capping and reports.", "03:59"),
    "token": ("Card numbers are never stored: validators send the processor's payment token and accounts are "
              "keyed on accounts.token_ref, which keeps us out of PCI scope.", "token_ref"),
    "owner": ("Marta Oyelaran owns the pricing engine and signs off on every change to how fares are "
              "computed.", "Marta Oyelaran"),
    "fare-table": ("A fare table the transit board approved takes effect on the first Sunday after board "
                   "approval, loaded from fares/tables/<yyyy-mm>.yaml.", "first Sunday after board approval"),
    "denylist": ("Validators receive the card denylist every 15 minutes as a delta, and a full copy nightly "
                 "at 02:10.", "every 15 minutes as a delta"),
    "offline": ("A validator without a connection keeps accepting known cards for 72 hours "
                "(OFFLINE_GRACE_HOURS=72), then refuses every card it cannot check.", "OFFLINE_GRACE_HOURS=72"),
    "transfer": ("Changing vehicles is free within 90 minutes of the first tap (tap-on to tap-on), between "
                 "buses and trams but not onto the airport express.", "90 minutes of the first tap"),
    "concession": ("Student and senior concessions are granted only through the city's eligibility API "
                   "(https://eligibility.stadt.example/v2); nobody sets the concession flag by hand.",
                   "eligibility.stadt.example/v2"),
    "settlement": ("The daily settlement file goes to the acquirer by SFTP at sftp.acquirer-example.net:2222 "
                   "at 05:30; a missed file may be resent until 16:00 the same day.",
                   "sftp.acquirer-example.net:2222"),
    "zones": ("Fare zone boundaries come from data/gtfs/fare_zones.txt; the zone_id column of stops.txt is "
              "not maintained.", "fare_zones.txt"),
    "refund-limit": ("A customer-service agent may refund up to 50.00 per case on their own; anything larger "
                     "goes to the refunds-approval queue for a supervisor.", "refunds-approval queue"),
    "firmware": ("New validator firmware goes to the Nordring depot's buses first and waits 48 hours there "
                 "before the rest of the fleet gets it.", "Nordring depot"),
    "tap-time": ("Fares are priced on the validator's GPS-synced tap time (taps.tapped_at, UTC); the "
                 "server's arrival time is kept in taps.received_at and never used for pricing.",
                 "taps.received_at"),
    "replica": ("Reports and dashboards read only from the read replica fares-db-ro; fares-db-primary is for "
                "the services.", "fares-db-ro"),
    "retention": ("Tap records are kept 400 days for fare disputes, then the purge_taps job anonymises them; "
                  "the data protection officer approved that period.", "400 days"),
    "qr-key": ("Mobile-app QR tickets are signed with Ed25519; the current key id is qr-2026-q4 and "
               "validators still accept the previous key for 7 days after a rotation.", "qr-2026-q4"),
    "inspect": ("The inspectors' handhelds call /v1/inspect, which must answer within 300 ms; after that the "
                "handheld shows the ticket as valid.", "300 ms"),
    "freeze": ("No production deploys from the first Advent Sunday to 6 January: the operations director "
               "froze changes for the Christmas market crowds.", "first Advent Sunday"),
}
# Visible to every turn, sharing its words, answering none of them.
DISTRACTORS = (
    "The MQTT broker's Grafana dashboard 'Taps ingest' shows messages per second per depot.",
    "Validators show a green light for an accepted tap and a red light with two beeps for a refusal.",
    "The pricing engine is written in Kotlin and built with Gradle 8.",
    "Fare table YAML files are checked in CI by scripts/check_tables.py.",
    "The transit board meets on the second Tuesday of every month.",
    "Reasons for putting a card on the denylist are listed in docs/denylist-reasons.md.",
    "Students renew their eligibility every September at the start of the academic year.",
    "The acquirer's support desk answers on weekdays from 08:00 to 18:00.",
    "The city publishes the GTFS feed on its open data portal every Friday.",
    "Customer service works in Zendesk; the refund macros are kept there.",
    "Minor Postgres upgrades are done by the DBA team on the first Wednesday of the month.",
    "The mobile app is built with Flutter and released every two weeks.",
    "Inspectors carry Zebra TC58 handhelds managed through the MDM.",
    "Validator firmware images are signed by the vendor before they reach us.",
    "Tap volume peaks at about 9,000 taps per minute around 07:40 on weekdays.",
    "The airport express is run by a separate operator under a contract with the city.",
    "Night buses run every 30 minutes between 01:00 and 04:30 on weekends.",
)

CLAUDE_MD = ("# Fares\n- Run ./gradlew check and go test ./... before pushing; CI runs the pricing golden tests.\n"
             "- pricing/ is the Kotlin pricing engine, ingest/ the Go tap ingest, backoffice/ the Django back "
             "office.\n- Never put customer emails or names in logs; use the account id.\n"
             "- Flyway migrations in db/migration are reviewed by the DBA group.\n")
AGENTS_MD = ("# Fares: agent rules\n- Keep answers short.\n- Run ./gradlew check before proposing a commit; the "
             "ingest tests need the mosquitto container from docker-compose.test.yml.\n- Golden fare cases "
             "live in pricing/src/test/resources/golden/.\n- Go code is formatted with gofumpt.\n")
SUMMARY = ("Summary:\n1. Primary request: add a CSV export to the back office's journey search and fix the "
           "flaky dedupe test in ingest.\n2. Done: export endpoint and button added, the dedupe test uses a "
           "fixed clock, CI is green.\n3. Pending: nothing.")

BROKER_LOG = "\n".join(
    f"2026-12-05T22:{m:02d}:{s:02d}Z validator[bus-4411] mqtt: connect tcp://tapbroker-legacy.fares.internal:1883 "
    f"failed: connection refused (pending_batches={3 + (m * 3 + s) % 17}, attempt {1 + (m + s) % 6})"
    for m in range(10, 20) for s in range(5, 60, 11))

DENY_LOG = "\n".join(
    [f"2026-12-04T14:{m:02d}:{(m * 13) % 60:02d}Z tram-07/door-2 tap card=tok_…91f2 result=ACCEPT "
     f"fare=2.90 deny_ver=88{m // 10}1" for m in range(3, 24, 4)]
    + ["2026-12-04T14:02:11Z backoffice: card tok_…91f2 added to denylist by agent j.kurz (reported stolen)"])

NIGHT_LOG = "\n".join(
    f"2026-12-06T{h:02d}:{m:02d}:00+01:00 pricing acct=A-22093 tap route=N4 fare=2.90 "
    f"day_total={2.90 * (i + 1):.2f} cap_day=2026-12-0{6 if h < 12 else 5}"
    for i, (h, m) in enumerate(((23, 12), (23, 58), (0, 41), (1, 37), (2, 55))))

TRANSFER_LOG = (
    "journey 88213 acct=A-51877\n"
    "  08:05:12 TAP_ON  bus 61  stop 'Hauptbahnhof Süd'   fare=2.90 rule=FIRST\n"
    "  08:31:40 TAP_OFF bus 61  stop 'Lindenplatz'\n"
    "  09:40:03 TAP_ON  tram 4  stop 'Lindenplatz'        fare=2.90 rule=NEW_JOURNEY "
    "(transfer window expired: 68m since last tap)\n"
    "  10:02:55 TAP_OFF tram 4  stop 'Messe/Ost'\n")

SFTP_LOG = "\n".join(
    [f"2026-12-05T05:{30 + i:02d}:0{i}+01:00 settlement-job: sftp connect acquirer-example.net:22 timeout after "
     f"30s (file SETL_20261204.csv, try {i + 1}/8)" for i in range(8)]
    + ["2026-12-05T05:38:09+01:00 settlement-job: giving up, file left in outbox/"])

QR_LOG = "\n".join(
    f"2026-12-02T07:{m:02d}:{(m * 7) % 60:02d}Z validator[tram-{11 + m % 5}] qr: signature check failed "
    f"kid=qr-2026-q3 ticket=T{904400 + m * 37} reason=UNKNOWN_KID"
    for m in range(0, 50, 4))

KOTLIN_TRACE = (
    "Exception in thread \"pricing-worker-3\" java.lang.IllegalStateException: tap 7731902 priced against "
    "day 2026-12-06 but account A-22093 has no open day\n"
    "\tat fares.pricing.DayLedger.open(DayLedger.kt:57)\n"
    "\tat fares.pricing.Pricer.price(Pricer.kt:112)\n"
    "\tat fares.ingest.BatchConsumer.handle(BatchConsumer.kt:40)\n"
    "Caused by: batch B-2026-12-06-4411 received_at=2026-12-06T09:12:40Z (bus 4411 offline since 05:50)")

# (memory key, shape, what the user writes, a tool's command and output for tool-result shapes)
TURNS = (
    ("broker", "claude-log", "Half the buses out of the Westend depot stopped uploading taps after last night's "
     "network change (the new APN profile went live at 22:00). This is what bus 4411's validator logs. Where "
     "are they actually supposed to connect - hostname and port? Also check whether the APN change could have "
     "dropped the client certs, and look at ingest/mqtt/ for anything hardcoded.\n\n```\n" + BROKER_LOG
     + "\n```", None),
    ("broker", "codex-tool", "the ingest integration tests run against a local mosquitto, make its listener "
     "match what the real broker uses (port + tls) so we stop testing a setup prod doesnt have",
     ("cat ingest/testdata/mosquitto.conf", "listener 1883\nallow_anonymous true\npersistence false\n"
      "log_dest stdout\n")),
    ("cap", "claude", "A customer wrote in: she did five trips on Tuesday and paid 14.50 in total, she says "
     "the fares page promises you never pay more than a day ticket. Can you check what the ceiling per day "
     "is supposed to be for adults and where that number lives in the code? Look through pricing/ and tell "
     "me if the implementation matches before changing anything, then add a golden case for her day.", None),
    ("cap", "codex", "write a unit test in pricing that checks a rider stops being charged once they hit the "
     "daily max. use the real constant, don't hardcode 7,50 like the old test in CapTest.kt did", None),
    ("service-day", "claude-log", "Night-bus riders on the N4 are getting capped on the wrong day. Here is one "
     "account's night from the pricing log. When does our operating day actually roll over, and is the code "
     "in pricing/ServiceDay.kt doing that?\n\n```\n" + NIGHT_LOG + "\n```", None),
    ("service-day", "claude-after-compact", "ok next thing: a tap at 2:15am on a saturday, which date does that "
     "count under for the daily totals?", None),
    ("token", "codex", "I'm adding a 'find account by card' search to backoffice/accounts. CS agents will type "
     "the long number printed on the customer's bank card. What do we key accounts on, and is it ok to add a "
     "pan column with an index for this?", None),
    ("token", "claude-tool", "Someone opened this migration for the card search feature, review it before the "
     "DBAs see it. Anything wrong?",
     ("cat db/migration/V87__account_card_number.sql", "ALTER TABLE accounts ADD COLUMN card_number "
      "varchar(19);\nCREATE INDEX accounts_card_number_idx ON accounts (card_number);\n"
      "-- backfill from validator payloads in V88\n")),
    ("owner", "claude", "I want to switch the senior discount rounding from half-up to half-even in the "
     "pricing engine, it's a one-line change in Discounts.kt. Who needs to approve that kind of change? "
     "Draft the PR description and tell me who to put as reviewer.", None),
    ("owner", "codex", "fix CODEOWNERS: the pricing/ entry still points to @fares/legacy-team. put the person "
     "who actually owns the fare calculation there", None),
    ("fare-table", "claude", "The board approved the 2027 prices yesterday (Wednesday). When do they go live, "
     "and where should the file go? Product is asking if we can just flip it on Monday morning.", None),
    ("fare-table", "claude-after-compact", "and the new tariff they voted on the 3rd - from what date do "
     "riders actually pay it?", None),
    ("denylist", "claude-log", "A stolen card was blocked in the back office at 14:02 but tram 7 kept "
     "accepting it until past 14:20. Logs below. How often do the validators get the blocked-card list? Is "
     "20 min of lag expected or is something broken?\n\n```\n" + DENY_LOG + "\n```", None),
    ("denylist", "codex-tool", "whats the worst case staleness of the hotlist on a validator? check the sync "
     "job and write it in the README",
     ("grep -n -i 'schedule\\|interval' ingest/denylist/job.go", "22:\t// TODO: document the cadence\n"
      "23:\tSchedule: cfg.Schedule,\n41:\tFullInterval: cfg.Full,\n")),
    ("offline", "claude", "Bus 3302's modem died on Friday evening and it only came back on Tuesday. Riders "
     "say the validator was fine over the weekend but started refusing everyone on Monday afternoon. How long "
     "is a validator allowed to keep taking taps with no connection before it starts rejecting cards?", None),
    ("offline", "codex", "add an alert in ingest/health when a validator has been disconnected for 80% of the "
     "allowed offline window. what's that window and which setting holds it?", None),
    ("transfer", "claude", "Rider complaint: she says she got on the 61 at 8:05, changed to the tram at 9:40 "
     "and was charged twice, and that changing should be free. Is she right? And separately, does the free "
     "change also apply if someone goes from a city bus onto the airport express?", None),
    ("transfer", "claude-log", "pls explain why journey 88213 got charged twice, the rider swears she only "
     "changed once\n\n" + TRANSFER_LOG, None),
    ("transfer", "codex-tool", "I think TransferRule measures the window from tap-off and the length is wrong "
     "too. fix it to match the policy",
     ("sed -n 10,22p pricing/src/main/kotlin/fares/pricing/TransferRule.kt",
      "class TransferRule(private val clock: Clock) : Rule {\n    private val window = Duration.ofMinutes(60)\n"
      "\n    override fun applies(j: Journey, tap: Tap): Boolean =\n        j.lastTapOff != null &&\n"
      "        Duration.between(j.lastTapOff, tap.at) <= window &&\n        tap.mode in setOf(Mode.BUS, "
      "Mode.TRAM, Mode.AIRPORT)\n}\n")),
    ("concession", "claude", "Customer service wants a button in the back office to mark a customer as a "
     "student directly in the DB, because the checks take days. Can we do that? How are reduced fares "
     "supposed to get granted?", None),
    ("concession", "codex-tool", "eligibility client tests fail with 404 since this morning. check which url "
     "it calls and fix it",
     ("grep -rn 'BASE' backoffice/eligibility/", "backoffice/eligibility/client.py:8:BASE = "
      "\"https://eligibility.stadt.example/v1\"\nbackoffice/eligibility/client.py:31:    r = "
      "self.session.get(f\"{BASE}/persons/{pid}/status\", timeout=5)\n")),
    ("settlement", "claude-log", "The acquirer called: they never got yesterday's settlement file. Here's the "
     "job log from this morning. Where and when is it supposed to be delivered, and how long do we have to "
     "resend it?\n\n```\n" + SFTP_LOG + "\n```", None),
    ("settlement", "claude-after-compact", "btw whats the cutoff for resending a settlement file we missed? "
     "ops wants to know if they can still do it after lunch", None),
    ("zones", "codex", "I need zone lookup for a stop id in pricing. read it from the gtfs folder - which file "
     "has the zone boundaries? the zone_id column in stops.txt is empty for half the stops", None),
    ("zones", "claude-tool", "why does zoneFor(\"100234\") return null? the stop exists",
     ("head -4 data/gtfs/stops.txt", "stop_id,stop_name,stop_lat,stop_lon,zone_id\n100231,Lindenplatz,"
      "51.3391,12.3712,\n100234,Messe/Ost,51.3962,12.4120,\n100240,Hauptbahnhof Süd,51.3442,12.3811,A\n")),
    ("refund-limit", "claude", "Jonas from CS wants to refund a rider 180 EUR for a monthly pass that got "
     "charged twice. Can he just do that himself in the back office, or does it need someone else? What's an "
     "agent allowed to do alone?", None),
    ("refund-limit", "codex", "implement the server side check in backoffice/refunds/views.py so an agent "
     "cant push through a refund over their limit; send the big ones wherever they're meant to go for "
     "escalation instead of just failing", None),
    ("firmware", "claude", "The vendor shipped validator fw 5.3.1 with the QR fix that inspectors keep "
     "asking for. Can I push it to every bus tonight? What's our usual procedure for rolling out firmware?",
     None),
    ("firmware", "codex-tool", "write the rollout plan for 5.3.1 based on the last one, but follow the staged "
     "procedure this time",
     ("cat rollout/plan-5.3.0.yaml", "version: 5.3.0\nstages:\n  - name: all\n    vehicles: '*'\n"
      "    start: 2026-11-02T23:00\n")),
    ("tap-time", "claude-log", "A bus was offline for three hours this morning and when its batch came in, "
     "pricing blew up on it. Which time is the fare supposed to be based on, and is the consumer using the "
     "wrong field?\n\n```\n" + KOTLIN_TRACE + "\n```", None),
    ("tap-time", "codex", "in ingest/batch.go we set tap.Time = time.Now() when a batch arrives. is that what "
     "pricing should see? fix it if not and keep the arrival time somewhere", None),
    ("replica", "codex", "the monthly ridership report is hammering the main database at 9am. point "
     "reports/monthly.sql's runner (reports/config.py) at the right host", None),
    ("replica", "claude-tool", "Metabase dashboards seem to slow down tap processing during the morning peak. "
     "Is it configured right?",
     ("grep -n 'host' deploy/metabase/values.yaml", "14:  host: fares-db-primary.prod.internal\n"
      "15:  port: 5432\n16:  dbname: fares\n")),
    ("retention", "claude", "A rider is disputing a charge from 14 months ago and legal wants the raw taps. "
     "Do we still have them? How long do we keep that data and what happens to it afterwards?", None),
    ("retention", "codex-tool", "the purge job seems to delete taps earlier than what was agreed. check it",
     ("grep -n 'RETENTION' jobs/purge_taps.py", "12:RETENTION = timedelta(days=365)\n13:BATCH = 5000\n")),
    ("qr-key", "claude-log", "Tram validators are rejecting mobile QR tickets since 7am, see below. Which key "
     "are we supposed to be on right now, and how long do old ones keep working after a switch?\n\n```\n"
     + QR_LOG + "\n```", None),
    ("inspect", "claude", "Inspectors report that at rush hour the handheld sometimes says an expired ticket "
     "is fine. I suspect timeouts. What's the latency budget the inspect endpoint has to meet, and what does "
     "the device do when we blow it?", None),
    ("freeze", "claude", "Product wants the new pricing engine live on 10 December so it's in before the "
     "holidays. Anything stopping us from deploying then?", None),
)

# (shape, what the user writes, a tool's command and output for tool-result shapes): nothing stored covers them
NULL_TURNS = (
    ("claude", "Explain the difference between MQTT QoS 1 and QoS 2 in plain words and show a short Go "
     "example with the paho client that publishes with QoS 1.", None),
    ("codex", "Add a Makefile target lint-go that runs golangci-lint on ingest/ with the repo's config.", None),
    ("claude-tool", "this test started failing after the csv export change, what's wrong?",
     ("python -m pytest -q backoffice/journeys/tests/test_export.py", "F.\n=================================== "
      "FAILURES ===================================\n_______________ test_export_header ________________\n"
      "    def test_export_header(client):\n        rows = client.get('/journeys/export.csv').content"
      ".decode().splitlines()\n>       assert rows[0] == 'journey_id,started,ended,fare'\nE       "
      "AssertionError: assert 'id,started,ended,fare' == 'journey_id,started,ended,fare'\n"
      "1 failed, 1 passed in 0.84s\n")),
    ("claude-after-compact", "Great, thanks. Write the PR description for these changes.", None),
    ("codex-tool", "the dedupe package name has a typo, rename it and fix the imports",
     ("ls ingest/", "batch.go\ndepdupe/\nhealth/\nmqtt/\nmain.go\n")),
    ("claude-log", "Journey search crashes on page 2, fix it:\n\n```\njava.lang.IndexOutOfBoundsException: "
     "Index 50 out of bounds for length 50\n\tat java.base/java.util.ArrayList.get(ArrayList.java:427)\n\tat "
     "fares.backoffice.search.Pager.slice(Pager.kt:23)\n\tat fares.backoffice.search.JourneySearch.page("
     "JourneySearch.kt:71)\n```", None),
    ("claude", "Write a section for the README telling new developers how to run the back office locally "
     "with docker compose, including how to load the sample journeys.", None),
    ("codex", "Migrate the pricing golden tests from JUnit 4 to JUnit 5 (parameterized tests), no behaviour "
     "change.", None),
    ("claude", "Translate the refund confirmation email template (backoffice/templates/email/refund_done.txt) "
     "into Turkish and Polish; keep the {placeholders} exactly as they are.", None),
    ("claude-tool", "why is the gradle build so slow lately? what should I fix first",
     ("./gradlew build --profile --offline | tail -6", "BUILD SUCCESSFUL in 4m 12s\n38 actionable tasks: 38 "
      "executed\nSlowest tasks:\n  :pricing:compileKotlin 2m 31s\n  :pricing:test 58s\n  :backoffice-api:"
      "kaptKotlin 21s\n")),
    ("codex", "Write a SQL query that returns the average number of taps per journey per route for last "
     "month, busiest routes first.", None),
    ("claude", "Just brainstorming: how would you model fare products (single, day ticket, monthly pass) "
     "versus the rules that price them in a relational schema? Pros and cons, no code yet.", None),
)
