"""The turns set's second sealed held-out half, written without reading recall's code or results.

Written by an engineer who had not read recall's code, its filters, its tuning
results or the other held-out halves' contents; only the shape of a half (what
``turns.build`` reads) was taken from them. Nothing here was used to choose a
value: the lead runs it once, at the end, and the report gives its numbers,
never its texts.

Same shapes as the other halves (Claude Code and Codex requests around the
user's words: long multi-part requests, pasted logs and command output, stack
traces, tool-result turns, turns after a compaction), new content: a hospital
laboratory's specimen-collection scheduling system (``labsched``), with its
own facts, distractors that share the turns' words and answer none of them,
rule files and compaction summary. Turns paraphrase their fact, refer back with
pronouns, carry typos and abbreviations, and some quote a wrong value in a log.
"""
from __future__ import annotations

PROJECT = "labsched"

# (statement, the string only it holds)
FACTS = {
    "hl7": ("Orders from the EHR arrive as HL7 v2 ORM messages over MLLP on port 6661 of "
            "mirth-prod.lab.internal (not the default 2575).", "port 6661"),
    "tat": ("STAT specimens must be resulted within 60 minutes of receipt; the overdue warning fires at 45 "
            "minutes (TAT_WARN_MIN=45 in scheduler/alerts/settings.py).", "TAT_WARN_MIN=45"),
    "mrn": ("Patients are matched on the enterprise EMPI id only; the lab accession number belongs to one "
            "specimen and never identifies a patient.", "EMPI id"),
    "slots": ("Phlebotomy appointments are seven minutes long on purpose (SLOT_MINUTES = 7); the outpatient "
              "clinics asked for it after the 2025 time study.", "SLOT_MINUTES = 7"),
    "fasting": ("Tests that need the patient to fast (lipid panel, fasting glucose, C-peptide) may only be "
                "booked in slots starting before 10:30 local time.", "before 10:30"),
    "analyzer": ("Both Roche cobas 8000 chemistry lines send results over ASTM/TCP to the middleware host "
                 "lis-mw-02; lis-mw-01 was decommissioned in October.", "lis-mw-02"),
    "units": ("Glucose results are stored in SI units (mmol/L) in the results.value_si column; mg/dL is "
              "computed for display only.", "value_si"),
    "director": ("Dr. Ingrid Solberg, the lab's medical director, must approve every change to reference "
                 "ranges or critical-value limits.", "Ingrid Solberg"),
    "critical": ("A critical result stays open until a lab tech logs the phone call to the ward in the "
                 "critical_calls table; paging the ward never closes it.", "critical_calls"),
    "phi": ("Tests and local debugging use only the synthetic patients in fixtures/synthea_2026/; no "
            "patient data leaves the production VPC, not even de-identified.", "synthea_2026"),
    "window": ("Production releases of the scheduler happen only in the Sunday 02:00-04:00 maintenance "
               "window, after the change board approved them on the Thursday before.", "Sunday 02:00-04:00"),
    "labels": ("Tube labels are Code 128 barcodes printed on Zebra ZD421 printers from the template "
               "labels/tube_v4.zpl.", "tube_v4.zpl"),
    "audit": ("The audit_bookings table must keep every row for 7 years (state health records law); "
              "migrations never truncate or partition-drop it.", "7 years"),
    "results-queue": ("Final results go to the EHR through the RabbitMQ queue lab.results.outbound; messages "
                      "the EHR rejects land in lab.results.dlq.", "lab.results.outbound"),
    "tz": ("Appointment times are stored as local wall-clock time plus the site's IANA zone from sites.tz, "
           "never converted to UTC, so that bookings survive daylight-saving changes.", "sites.tz"),
    "sso": ("Staff sign in only through Okta SAML (app id 0oa9lab2sched); local passwords are disabled in "
            "every environment.", "0oa9lab2sched"),
    "self-booking": ("Patient self-booking is behind the Flagsmith flag patient_portal_booking, enabled per "
                     "clinic; only Northgate has it on.", "patient_portal_booking"),
    "loinc": ("Local orderable codes map to LOINC through mappings/order_to_loinc.csv; a test missing there "
              "cannot be booked.", "order_to_loinc.csv"),
    "courier": ("The courier collects specimens from the satellite clinics at 11:00 and 15:30; anything "
                "drawn after 15:00 waits for the next morning's run.", "11:00 and 15:30"),
}
DISTRACTORS = (
    "Mirth channel definitions are exported to git every night by the mirth-backup job.",
    "The HL7 ADT feed keeps patient demographics current; the scheduler only reads it.",
    "STAT tubes travel in red bags and routine specimens in blue bags.",
    "The phlebotomy team lead keeps the weekly staff rota in a shared spreadsheet.",
    "Reference ranges are documented for clinicians in docs/lab/reference-ranges.md.",
    "The cobas lines run quality control every morning at 06:00 before any patient samples.",
    "Hospital IT manages all printers, including the label printers, through PaperCut.",
    "Patients get an SMS reminder 24 hours before their blood draw appointment.",
    "The Grafana dashboard 'Bookings' shows appointments per clinic per hour.",
    "Point-of-care glucose meters on the wards are not connected to the scheduler.",
    "The RabbitMQ management UI is reachable only through the bastion host.",
    "The Northgate clinic opens at 07:00 on weekdays and at 08:00 on Saturdays.",
    "Okta group membership for lab staff is managed by the hospital identity team.",
    "The change board meets on Thursdays at 14:00 in room B2 and keeps minutes in Confluence.",
    "The training team uses Synthea too, to make demo records for new staff.",
    "Regenstrief publishes a new LOINC release twice a year.",
    "The courier company invoices the lab monthly per collected bag.",
)

CLAUDE_MD = ("# Labsched\n- Run make check before pushing; CI runs the scheduler tests and the portal e2e suite.\n"
             "- Django 5 backend in scheduler/, React portal in portal/, interface code in interfaces/.\n"
             "- Never print patient names or dates of birth in logs; use the booking id.\n"
             "- All SQL migrations are reviewed by the DBA group on the PR.\n")
AGENTS_MD = ("# Labsched: agent rules\n- Be brief.\n- Run make check before proposing a commit; the interface "
             "tests need the MLLP simulator from tools/mllp_sim.\n- Migrations live in scheduler/migrations with "
             "Django's numbering.\n- Type hints on every new function; mypy runs in CI.\n")
SUMMARY = ("Summary:\n1. Primary request: make the waitlist page faster and add pagination to the clinic list "
           "in the portal.\n2. Done: the waitlist query uses an index on waitlist(clinic_id, created_at), the "
           "clinic list pages by 50, the portal e2e tests passed.\n3. Pending: nothing.")

EHR_LOG = "\n".join(
    f"2026-12-03T01:{m:02d}:{s:02d}.{(m * 61 + s) % 1000:03d}Z ERROR [Outbound_Lab_Orders] MLLP connect to "
    f"10.40.12.8:2575 failed: java.net.SocketTimeoutException: connect timed out (msg ORM^O01 "
    f"ctrl={740000 + m * 100 + s}, retry {1 + (m + s) % 5}/5)"
    for m in range(4, 14) for s in range(3, 60, 9))

ASTM_TRACE = (
    "2026-12-04 09:41:17,552 ERROR middleware.astm.client Connection to analyzer result sink failed\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/labmw/middleware/astm/client.py", line 88, in connect\n'
    "    self.sock = socket.create_connection((self.host, self.port), timeout=5)\n"
    '  File "/usr/lib/python3.11/socket.py", line 851, in create_connection\n'
    "    raise exceptions[0]\n"
    '  File "/usr/lib/python3.11/socket.py", line 836, in create_connection\n'
    "    sock.connect(sa)\n"
    "socket.gaierror: [Errno -2] Name or service not known\n"
    "2026-12-04 09:41:17,553 WARNING middleware.astm.client host=lis-mw-01 port=5005 line=cobas-A "
    "retry_in=30s\n"
    "2026-12-04 09:41:17,560 WARNING middleware.astm.client host=lis-mw-01 port=5005 line=cobas-B "
    "retry_in=30s\n"
    "2026-12-04 09:41:47,601 INFO middleware.astm.buffer pending_results=412 oldest=2026-12-04T09:02:11")

CONSUMER_LOG = "\n".join(
    f"2026-12-05T03:{m:02d}:{(m * 7) % 60:02d}Z WARNING results_publisher: nack from EHR for ORU^R01 "
    f"accession=A26-{880100 + m * 13} reason='PID-3 not found' requeue=False"
    for m in range(0, 40, 3)) + "\n2026-12-05T03:41:02Z INFO results_publisher: published=1873 nacked=14 " \
    "since=03:00"

# (memory key, shape, what the user writes, a tool's command and output for tool-result shapes)
TURNS = (
    ("hl7", "claude-log", "Epic's interface team says outbound orders from their side have been piling up "
     "since last night's firewall change, and they sent this excerpt from their engine. What host and port "
     "should they actually be pointing at on our side? Also check whether the k8s Service for the interface "
     "engine still exposes it after Priya's network policy PR, I suspect that PR.\n\n```\n" + EHR_LOG
     + "\n```", None),
    ("hl7", "codex-tool", "the mllp listener in interfaces/orders doesnt come up right in docker compose, "
     "the simulator can't reach it. make the port mapping match what prod uses",
     ("sed -n 1,24p docker-compose.yml", "services:\n  interface-engine:\n    image: nextgen/connect:4.5\n"
      "    ports:\n      - \"2575:2575\"\n      - \"8443:8443\"\n    environment:\n      - "
      "DATABASE=postgres\n  mllp-sim:\n    build: tools/mllp_sim\n    depends_on: [interface-engine]\n")),
    ("tat", "claude", "ED keeps complaining that the overdue banner for their urgent bloods shows up way too "
     "late, by the time it appears the hour is basically gone and they've already called us twice. What is "
     "the warning supposed to trigger at, and where is that number configured? Look at scheduler/alerts/ "
     "and tell me if the code matches what we agreed before you change anything.", None),
    ("tat", "claude-after-compact", "one more thing: at how many mins does the turnaround warning go off for "
     "the urgent samples?", None),
    ("mrn", "codex", "I'm writing the dedupe for walk-in registrations in scheduler/registration/dedupe.py. "
     "If two registrations carry the same accession no., are they the same person? Which identifier should "
     "the match key be so we never merge two different people?", None),
    ("mrn", "claude-tool", "The nightly merge job wants to collapse these two into one patient record. Is it "
     "matching on the right thing? Don't run the merge, just tell me.",
     ("psql labsched -c \"select booking_id, accession_no, empi, last_name, dob from bookings where "
      "booking_id in (55120, 55873)\"",
      " booking_id | accession_no | empi      | last_name | dob\n------------+--------------+-----------+"
      "-----------+------------\n      55120 | A26-771204   | E00913377 | Okafor    | 1961-03-14\n      "
      "55873 | A26-771209   | E00402158 | Okafor    | 1961-03-14\n(2 rows)\n")),
    ("slots", "claude", "Clinic managers sent a screenshot of the day view: appointments at 08:00, 08:07, "
     "08:14, 08:21... The new PO thinks this is a bug and wants me to 'fix it to round numbers'. Before I "
     "touch it: is the odd spacing intentional or did someone fat-finger a setting? And where would the "
     "length be set if we did change it?", None),
    ("slots", "codex-tool", "generate the capacity estimate for the new Eastside site: how many blood draws "
     "per chair can we book in an 8h shift? use whatever the scheduler is configured with",
     ("rg -n \"SLOT\" scheduler/settings.py", "41:SLOT_MINUTES = env.int(\"SLOT_MINUTES\", "
      "default=DEFAULT_SLOT)\n42:SLOT_BUFFER_AFTER_LAST = 0\n")),
    ("fasting", "claude", "Patient complaint via PALS: she was booked for a cholesterol check at 14:20, had "
     "lunch, and got sent home to come back another day. Two things: (1) add validation in "
     "scheduler/booking/rules.py so the booking form refuses that, (2) tell me what the latest allowed start "
     "time is for those tests, I don't remember what we settled on.", None),
    ("fasting", "codex", "can u add a check in the portal so ppl cant pick an afternoon slot for the tests "
     "where they're not allowed to eat beforehand? whats the latest time we allow", None),
    ("analyzer", "claude-log", "Results from both chem lines stopped reaching the LIS about 40 min ago, the "
     "buffer on the middleware is growing. Trace below from labmw. Is it pointed at the right box? I "
     "thought we moved something in October.\n\n" + ASTM_TRACE, None),
    ("analyzer", "codex", "I need to add the host the chemistry analyzers deliver their results to into the "
     "nagios checks (monitoring/hosts.cfg). Which machine is it now?", None),
    ("units", "codex", "Build the CSV export for the diabetes clinic, they want glucose in mg/dL. Which "
     "column holds the stored number and what unit is it in, so I convert the right way round?", None),
    ("units", "claude-tool", "The glucose chart on the patient page shows values like 5.4 and 6.1 where the "
     "doctor expected ~97 and ~110. What is going on?",
     ("sed -n 30,48p portal/src/charts/GlucoseChart.tsx", "  const points = results.map((r) => ({\n"
      "    x: new Date(r.collected_at),\n    y: r.value,\n    label: `${r.value}`,\n  }));\n  return "
      "<LineChart data={points} yLabel=\"mg/dL\" />;\n")),
    ("director", "claude", "I've updated the potassium panic limits in config/critical_values.yaml from "
     "6.0 to 6.2 mmol/L as nephrology asked in the ticket. Open a PR with that change, write a short "
     "description, and tell me whose approval this needs before it can merge, it's not just code review "
     "right?", None),
    ("director", "claude-after-compact", "ok and if I tweak the normal range for TSH in kids, who has to "
     "sign that off?", None),
    ("critical", "claude", "Nurses on 4 West say the critical-result tickets close themselves right after "
     "the page goes out, so nobody knows whether anyone actually rang them. Is that intended? Where are we "
     "supposed to record that the call happened? Check scheduler/criticals/workflow.py.", None),
    ("phi", "codex", "I want to reproduce the double-booking bug from INC-20931 on my laptop. Can I pull that "
     "clinic's bookings from prod into my dev DB if I scrub the names first, or what should I use as data?",
     None),
    ("phi", "claude-tool", "Write pytest cases for the new overlap check in scheduler/booking/overlap.py. "
     "Use realistic patients, not 'John Doe' everywhere, the reviewers hated that last time.",
     ("ls tests/booking", "__init__.py\nconftest.py\ntest_cancel.py\ntest_rules.py\ntest_waitlist.py\n")),
    ("window", "claude", "The waitlist fix is merged and QA signed it off. Can we push it to prod tonight "
     "(it's Wednesday)? If not, when is the next chance and what do I need to get approved beforehand?",
     None),
    ("window", "codex-tool", "ship scheduler 4.12.1 to prod now pls, image is built and pushed",
     ("kubectl -n labsched get deploy scheduler -o wide",
      "NAME        READY   UP-TO-DATE   AVAILABLE   AGE    CONTAINERS   IMAGES                                  "
      "SELECTOR\nscheduler   6/6     6            6           41d    web          "
      "registry.lab.internal/scheduler:4.12.0   app=scheduler\n")),
    ("labels", "claude", "Tubes from the Eastside clinic come out with stickers the Sysmex reader can't scan, "
     "the bars look squashed. Which file do we print them from and what printer model is it laid out for? "
     "They might have bought different printers.", None),
    ("labels", "codex", "add the patient's DOB under the name on the tube sticker. where's the layout file?",
     None),
    ("audit", "claude-tool", "The booking audit table is huge, write a migration that keeps only the last 90 "
     "days and drops the rest so the nightly vacuum stops taking 3 hours.",
     ("psql labsched -c \"\\dt+ audit_*\"", "                        List of relations\n Schema |     Name"
      "       | Type  | Owner    | Persistence | Access method |  Size  \n--------+----------------+-------+"
      "----------+-------------+---------------+--------\n public | audit_bookings | table | labsched | "
      "permanent   | heap          | 381 GB\n(1 row)\n")),
    ("results-queue", "claude-log", "Some ORUs aren't showing up in Epic since 03:00, the publisher log is "
     "below. Which queue do finals go out on, and where do the rejected ones end up so I can look at them?"
     "\n\n" + CONSUMER_LOG, None),
    ("results-queue", "codex", "write a small script in tools/ that republishes result messages to the EHR "
     "for a list of accession numbers. what's the queue we publish to?", None),
    ("tz", "claude", "Bug: since the clocks went back on Nov 2 the Lakeside clinic's 8am draws show as 7am in "
     "the day view. Before I 'fix' it by storing everything in UTC like my last job did, how are "
     "appointment times supposed to be stored here?", None),
    ("tz", "codex-tool", "fix the failing DST test, don't just change the assertion",
     ("pytest -q tests/booking/test_dst.py", "F\n=================================== FAILURES "
      "===================================\n______________________ test_booking_across_fall_back "
      "______________________\n    def test_booking_across_fall_back(clinic_lakeside):\n        b = "
      "book(clinic_lakeside, date(2026, 11, 2), time(8, 0))\n>       assert b.local_start.hour == 8\nE       "
      "assert 7 == 8\nE        +  where 7 = datetime.datetime(2026, 11, 2, 7, 0).hour\ntests/booking/"
      "test_dst.py:19: AssertionError\n1 failed in 0.41s\n")),
    ("sso", "claude", "Two new phlebotomists can't log in, they get 'Invalid credentials'. Should I just "
     "reset their passwords in the Django admin? If that's not how it works here, which application in the "
     "identity provider is ours so I can ask for them to be assigned?", None),
    ("self-booking", "codex", "enable online self-scheduling for patients at the Riverside clinic too. "
     "where's the toggle for that?", None),
    ("loinc", "claude", "The new vitamin D order (local code VITD25) doesn't show up in the test picker when "
     "booking. I think it's missing from some mapping between our codes and the standard ones. Where does "
     "that live? Add the row if you can find the right LOINC.", None),
    ("courier", "claude-after-compact", "last q: a sample drawn at Westbrook at 15:10, does it make today's "
     "pickup or not?", None),
    ("courier", "codex-tool", "the clinic app shows 'ready for pickup today' until 16:00, that seems wrong. "
     "set the cutoff to what it should be",
     ("rg -n \"PICKUP\" clinic_app/config.py", "12:PICKUP_CUTOFF = \"16:00\"\n13:PICKUP_SITES = "
      "[\"westbrook\", \"eastside\", \"lakeside\"]\n")),
)
NULL_TURNS = (
    ("claude", "Refactor scheduler/booking/views.py: split the 600-line BookingView into smaller class-based "
     "views, one per step of the form, and keep the URL names the same so the portal doesn't break.", None),
    ("codex-tool", "make mypy happy in scheduler/registration, no type: ignore please",
     ("mypy scheduler/registration", "scheduler/registration/forms.py:22: error: Incompatible return value "
      "type (got \"str | None\", expected \"str\")  [return-value]\nscheduler/registration/api.py:57: error: "
      "Missing type parameters for generic type \"dict\"  [type-arg]\nFound 2 errors in 2 files (checked 9 "
      "source files)\n")),
    ("claude-log", "what does this warning mean and how do I get rid of it?\n\n```\nWarning: Each child in a "
     "list should have a unique \"key\" prop.\n\nCheck the render method of `ClinicDayView`. See "
     "https://reactjs.org/link/warning-keys for more information.\n    at SlotRow (portal/src/day/SlotRow.tsx:"
     "14:3)\n    at ClinicDayView (portal/src/day/ClinicDayView.tsx:52:5)\n```", None),
    ("codex", "Write a SQL query that gives the no-show rate per clinic per month from bookings (status = "
     "'no_show' vs all rows), newest month first.", None),
    ("claude", "Explain what MLLP framing is (the start and end bytes) and write a tiny Python function that "
     "wraps a message in it and one that unwraps it, with a unit test.", None),
    ("claude-after-compact", "Great, thanks. Write the commit message for these changes.", None),
    ("codex", "Add a GitHub Actions workflow that runs pytest against Postgres 16 as a service container and "
     "caches pip.", None),
    ("claude-tool", "why is this test suite so slow? suggest what to fix first",
     ("pytest -q --durations=5 tests/booking", "..........................................\n"
      "============================= slowest 5 durations =============================\n12.04s call     "
      "tests/booking/test_waitlist.py::test_waitlist_bulk\n3.10s setup    tests/booking/test_rules.py::"
      "test_rules_matrix\n0.88s call     tests/booking/test_cancel.py::test_cancel_refund_slot\n0.41s call"
      "     tests/booking/test_rules.py::test_rules_matrix\n0.02s teardown tests/booking/test_cancel.py::"
      "test_cancel_refund_slot\n42 passed in 17.31s\n")),
    ("claude", "Translate the reminder text in scheduler/templates/sms/reminder.txt into Spanish and Polish; "
     "keep the {placeholders} exactly as they are.", None),
    ("codex-tool", "one of the migrations has a typo in its name, rename it and fix the dependency in the "
     "next one",
     ("ls scheduler/migrations | tail -4", "0047_waitlist_index.py\n0048_clinic_pagnation.py\n"
      "0049_clinic_page_size.py\n__init__.py\n")),
    ("claude", "I'm new to the lab side. In plain words, what's the difference between a serum tube and a "
     "plasma tube, and why does the booking UI show different cap colours?", None),
    ("claude-log", "The clinic hours import crashes on the new CSV from facilities, fix the importer so it "
     "tolerates this:\n\n```\nTraceback (most recent call last):\n  File \"scheduler/importers/hours.py\", "
     "line 31, in load\n    opens = row[\"Opens\"]\nKeyError: 'Opens'\n```\nThe file's header row is: "
     "`clinic;opens_at;closes_at;weekday`", None),
)
