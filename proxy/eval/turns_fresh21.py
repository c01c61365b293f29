"""Held-out turns (twenty-first half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 22:48 UTC: 0.932 hit, 0.071 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "molarly"

FACTS = {
    "xray_retention": (
        "Dental X-ray DICOM files live in the S3 bucket molarly-imaging-prod-eu with Object Lock in compliance mode for 10 years, because state dental boards require radiograph retention and nobody may shorten it.",
        "molarly-imaging-prod-eu",
    ),
    "slot_grid": (
        "The booking service uses a 15-minute slot grid and a hygiene cleaning always occupies 4 consecutive slots, because every clinic's chairside schedule is drawn on quarter hours.",
        "4 consecutive slots",
    ),
    "recall_quiet_hours": (
        "Recall reminder texts are scheduled in the clinic's local time zone, not the patient's phone area code, and never go out before 09:00 or after 19:00, because of TCPA quiet-hour rules.",
        "09:00",
    ),
    "clearinghouse_port": (
        "X12 837D claim files are pushed to the clearinghouse over SFTP at sftp.dentalxchange-gw.net on port 2222, because the clearinghouse blocks port 22 from our NAT egress range.",
        "port 2222",
    ),
    "claim_retry_backoff": (
        "The claims worker resubmits after a rejected 999 acknowledgement at most 3 times with a 20 minutes backoff, because the clearinghouse suspends submitters that resend duplicates within an hour.",
        "20 minutes",
    ),
    "pms_sync_owner": (
        "The nightly pms-sync job that mirrors Dentrix schedules is owned by the Chairside team and pages Priya Raman first, because she wrote the Dentrix adapter and knows its lock quirks.",
        "Priya Raman",
    ),
    "comm_prefs_table": (
        "Patient SMS and email consent lives in the append-only table patient_comm_prefs, never as columns on patients, because HIPAA audits need the full history of every opt-in and opt-out.",
        "patient_comm_prefs",
    ),
    "new_patient_flag": (
        "Online self-booking for new patients is gated by the flag booking.new_patient_online, which stays off for orthodontic clinics because ortho consults need a 60-minute slot chosen by staff.",
        "booking.new_patient_online",
    ),
    "thumb_size": (
        "X-ray thumbnails are rendered at 512 px on the long edge as WebP quality 80, because the chairside Android tablets freeze when opening full-resolution panoramic images.",
        "512 px",
    ),
    "money_cents": (
        "All claim, payment and ledger amounts are stored as integer cents in columns named amount_cents, because float rounding once left EOB reconciliation off by a cent per line.",
        "amount_cents",
    ),
    "cdt_mapping": (
        "Procedure-to-fee mapping uses CDT 2024 codes from claims/cdt/cdt2024.csv, because payers started rejecting deleted codes such as D0360 after the January code-set cutover.",
        "claims/cdt/cdt2024.csv",
    ),
    "perio_interval": (
        "The default recall interval is 6 months, but patients flagged perio_maint get 3 months, because the periodontists require tighter maintenance for gum disease patients.",
        "perio_maint",
    ),
    "pacs_ae_title": (
        "Intraoral sensors send images to the DICOM gateway pacs-gw.molarly.internal using the called AE title MOLARLY_PACS, because the sensor vendors' capture software only supports one fixed AE title.",
        "MOLARLY_PACS",
    ),
    "recall_queue": (
        "Reminder sends go through the RabbitMQ queue recall.outbound.v2; the old v1 queue is only drained, because v1 consumers had no idempotency key and double-texted patients.",
        "recall.outbound.v2",
    ),
    "waitlist_pilot": (
        "Same-day cancellation backfill from the waitlist runs only for clinics listed in config/waitlist_pilot.yaml, because front-desk staff at other clinics objected to surprise bookings.",
        "config/waitlist_pilot.yaml",
    ),
    "eob_parser": (
        "Delta Dental EOB PDFs are parsed with the pdfplumber text-layer parser instead of OCR, because OCR misread tooth numbers such as 18 as 1B and broke posting.",
        "pdfplumber",
    ),
    "deploy_freeze": (
        "Production deploys of booking-api are frozen Mondays 07:00-11:00 US Central time, because that is when clinics phone patients to confirm the week's schedule.",
        "Mondays 07:00-11:00",
    ),
    "tooth_numbering": (
        "Tooth numbers are stored in the Universal Numbering System (1-32, A-T) and converted to FDI only in the UI for Canadian clinics, because US payer claims require Universal numbers.",
        "Universal Numbering System",
    ),
    "portal_rate_limit": (
        "The patient portal API is limited to 30 requests per minute per patient token at the Envoy edge, because a scraper bot once polled availability and hoarded open slots.",
        "30 requests per minute",
    ),
    "staging_deid": (
        "Staging is refreshed nightly by the deid-snap job, which replaces names with Faker values and shifts all dates by a random offset of up to 45 days, because real PHI is forbidden outside production.",
        "45 days",
    ),
    "eligibility_cache": (
        "Eligibility 270/271 responses are cached for 72 hours keyed by payer ID and member ID, because payers bill us per eligibility inquiry and coverage rarely changes within days.",
        "72 hours",
    ),
    "rcm_alerts": (
        "Claim denial and rejection alerts go to the Slack channel #rcm-alerts rather than #oncall, because Marcus Oyelaran's revenue-cycle team handles them during business hours.",
        "#rcm-alerts",
    ),
}

DISTRACTORS = (
    "The patient portal frontend is a Next.js app deployed to the portal-web namespace, and its design tokens come from the shared molarly-ui package.",
    "Clinic opening hours are imported weekly from the operations Google Sheet by the hours-import job, because regional managers edit them there.",
    "Imaging service integration tests use the synthetic DICOM fixtures in tests/fixtures/dicom_synth, which contain no real patient data.",
    "The insurance team prefers payer names spelled exactly as on the payer's card, so Delta Dental of Colorado is not shortened to Delta CO.",
    "Postgres for the booking service runs on version 15 with pgbouncer in transaction mode in front of it.",
    "Recall email templates are written in MJML and compiled during the build, with Spanish variants kept in templates/es.",
    "Grafana dashboards for the claims pipeline are provisioned from ops/grafana/claims.json and edited only through pull requests.",
    "The mobile check-in kiosk app is built with Flutter and released through the managed Google Play track for clinic devices.",
    "Booking API endpoints are versioned in the URL path, and v0 was removed in March after the last clinic kiosk upgraded.",
    "Clinic IDs are short slugs like elmwood-01 and are never reused after a clinic closes.",
    "The data team receives a daily Parquet export of de-identified appointment counts in the analytics bucket for capacity planning.",
    "Python services use ruff for linting and black-compatible formatting with a line length of 100.",
    "Treatment plan PDFs are generated with WeasyPrint from HTML templates stored in treatment/templates.",
    "The front-desk web app supports keyboard shortcuts, and F2 opens the quick patient search.",
    "Hygienists record periodontal charting in six sites per tooth, and the charting UI autosaves every few seconds.",
    "Sprint planning for the platform team happens every other Tuesday, and the board lives in Linear under the MOL project.",
)

CLAUDE_MD = """# molarly platform
- Monorepo: booking/, recall/, imaging/, claims/, insurance/, portal/ services; shared libs in libs/.
- Run `make test SERVICE=<name>` before pushing; CI runs the same target.
- Python 3.12, ruff for lint; TypeScript for portal/ with pnpm.
- Never commit real patient data; fixtures must be synthetic.
- Database migrations go in db/migrations and are reviewed by the owning team.
"""

AGENTS_MD = """- Keep changes scoped to one service per pull request when possible.
- Use `make lint` and `make test SERVICE=<name>` to verify work.
- Ask before changing shared libs in libs/ since every service depends on them.
- Write commit messages in imperative mood with the service as prefix, e.g. `recall: ...`.
"""

SUMMARY = (
    "Summary: Earlier in this session we cleaned up the treatment-plan PDF templates, fixed a CSS overflow in the "
    "front-desk patient search results, and added unit tests for the phone-number formatter in libs/formatting. "
    "All tests passed and the changes were committed on the branch ui-polish."
)

TURNS = (
    ("xray_retention", "claude",
     "Finance flagged the imaging archive as our biggest AWS line item this quarter. Can you add a lifecycle rule in infra/terraform/imaging/main.tf that moves radiographs to Deep Archive after a year and deletes anything older than five years? The old scans are basically never opened, and I'd like to get the PR up before the budget meeting on Thursday.",
     None),
    ("xray_retention", "codex-tool",
     "archive service writes to wrong bucket since config refactor, fix",
     ("grep -rn 'bucket' services/imaging/config/prod.yaml",
      "services/imaging/config/prod.yaml:4:  bucket: molarly-imaging-prod\nservices/imaging/config/prod.yaml:5:  object_lock_mode: null\nservices/imaging/config/prod.yaml:6:  region: eu-central-1")),
    ("slot_grid", "codex",
     "cleanings only block 30 min on the front desk grid, fix duration in booking/appointment_types.py",
     None),
    ("slot_grid", "claude-log",
     "A partner lab's integration keeps failing to create appointments. Here's what we log:\n```\n2024-06-11T14:02:19Z booking-api WARN create_appointment rejected clinic=elmwood-01 start=2024-06-13T10:10:00-05:00 reason=SlotMisaligned\n2024-06-11T14:02:21Z booking-api WARN create_appointment rejected clinic=elmwood-01 start=2024-06-13T14:35:00-05:00 reason=SlotMisaligned\n```\nShould I just relax the validator to accept any minute, or what's the right fix?",
     None),
    ("recall_quiet_hours", "claude",
     "A patient complained she got a dental reminder text at 6:40 in the morning. She goes to our Tucson clinic but her phone number has a Denver area code. Can you look at recall/scheduler.py and fix how we decide when a reminder is allowed to go out? I think right now we derive the send time from the phone number's area code.",
     None),
    ("recall_quiet_hours", "claude-after-compact",
     "Back to the reminder batching from before the summary: I'd like the daily recall batch to fire at 06:00 UTC so everything is delivered before lunch everywhere. Can you update the schedule in deploy/recall-batch.yaml?",
     None),
    ("clearinghouse_port", "codex-tool",
     "837 upload job times out every night, fix",
     ("python -m claims.submit --dry-run --verbose",
      "INFO loaded 142 claims from outbox\nINFO connecting sftp host=sftp.dentalxchange-gw.net port=22\nERROR TimeoutError: [Errno 110] Connection timed out after 30.0s\nERROR submit aborted, 142 claims left in outbox")),
    ("clearinghouse_port", "claude",
     "We're moving the claims submitter into the new Kubernetes cluster, which denies all egress by default. I need the NetworkPolicy in k8s/claims/netpol.yaml: it has to reach Postgres, Vault and wherever we send the insurance files. Please fill in the right destinations and ports so the first nightly run doesn't fail.",
     None),
    ("claim_retry_backoff", "codex",
     "too many claims stuck after rejects, make worker retry 10x every minute in claims/worker.py",
     None),
    ("claim_retry_backoff", "claude-log",
     "The clearinghouse emailed us this morning that our submitter ID is suspended. Here's the worker log from last night:\n```\n01:02:11 claims-worker INFO batch 5512 ack=999 status=R retry=1\n01:04:11 claims-worker INFO batch 5512 resubmitted\n01:06:12 claims-worker INFO batch 5512 ack=999 status=R retry=2\n01:08:12 claims-worker INFO batch 5512 resubmitted\n01:10:13 claims-worker INFO batch 5512 ack=999 status=R retry=3\n...\n01:40:20 claims-worker INFO batch 5512 ack=999 status=R retry=11\n```\nWhat went wrong and what should the worker do instead?",
     None),
    ("pms_sync_owner", "claude",
     "The nightly schedule sync with the practice-management software failed three nights in a row at the Elmwood clinic and nobody noticed until patients showed up for phantom appointments. Can you add a PagerDuty escalation for it in ops/pagerduty/services.yaml? I'm not sure who should be first responder, so pick whoever makes sense.",
     None),
    ("pms_sync_owner", "codex",
     "dentrix adapter throwing lock errors again, who should i page",
     None),
    ("comm_prefs_table", "claude-tool",
     "Front desk wants a way to mark a patient as 'no texts please'. I was going to add a boolean sms_opt_out to the patients table with a migration. Can you write it?",
     ("psql molarly_dev -c '\\d patients' | head -12",
      "                 Table \"public.patients\"\n   Column      |           Type           | Nullable\n---------------+--------------------------+----------\n id            | uuid                     | not null\n clinic_id     | text                     | not null\n first_name    | text                     | not null\n last_name     | text                     | not null\n dob           | date                     | not null\n phone_e164    | text                     |\n email         | text                     |\n created_at    | timestamptz              | not null")),
    ("comm_prefs_table", "codex",
     "need sql for patients who unsubscribed from email in last 30 days, for compliance export",
     None),
    ("new_patient_flag", "claude",
     "Marketing wants new patients to be able to book online at every location starting Monday, including the Bright Braces practices we just acquired. Can you flip whatever needs flipping in config/flags/prod.yaml and make sure the web widget shows the new-patient path everywhere?",
     None),
    ("new_patient_flag", "claude-tool",
     "The Maple Grove location says prospective patients can't find the 'I'm new here' option on the booking page. Is this a bug?",
     ("curl -s 'https://api.molarly.internal/v1/clinics/mg-ortho-02/booking-config' | jq .",
      "{\n  \"clinic_id\": \"mg-ortho-02\",\n  \"specialty\": \"orthodontics\",\n  \"self_booking\": {\n    \"existing_patients\": true,\n    \"new_patients\": false\n  },\n  \"slot_minutes\": 15\n}")),
    ("thumb_size", "codex-tool",
     "op room tablets hang opening pano images since imaging deploy, fix",
     ("kubectl logs deploy/imaging-thumbs --tail=4",
      "2024-06-12T09:11:02Z thumbs INFO study=1.2.840.99.771 wrote thumb 2976x1536 png 7.4MB\n2024-06-12T09:11:05Z thumbs INFO study=1.2.840.99.772 wrote thumb 2976x1536 png 7.1MB\n2024-06-12T09:11:09Z thumbs INFO study=1.2.840.99.773 wrote thumb 1600x1200 png 3.9MB\n2024-06-12T09:11:12Z thumbs INFO study=1.2.840.99.774 wrote thumb 2976x1536 png 7.6MB")),
    ("thumb_size", "claude-after-compact",
     "Back to the imaging viewer from before the summary. Design wants previews crisper on the new 4K monitors at the front desk, so let's just serve the original resolution as PNG everywhere. Can you change imaging/thumbs.py accordingly?",
     None),
    ("money_cents", "claude-log",
     "Reconciliation started failing after yesterday's merge that added an adjustments table:\n```\nreconcile.py:214 MISMATCH claim=88123 eob_paid=142.3 ledger=142.29999999999998 diff=-0.01\nreconcile.py:214 MISMATCH claim=88131 eob_paid=87.15 ledger=87.14999999999999 diff=-0.01\n```\nThe new table has `amount numeric(10,2)` and the model reads it as float. How should the column and model be defined?",
     None),
    ("money_cents", "codex",
     "add copay field to LedgerEntry model in claims/models.py, dollars w/ decimals",
     None),
    ("cdt_mapping", "codex-tool",
     "pano xray claims getting rejected since january, check",
     ("grep -rn 'D0330\\|D0360' claims/",
      "claims/cdt/cdt2021.csv:88:D0330,Panoramic radiographic image,112.00\nclaims/cdt/cdt2021.csv:91:D0360,Cone beam CT - craniofacial data capture,260.00\nclaims/fees/loader.py:12:FEE_FILE = \"claims/cdt/cdt2021.csv\"\nclaims/tests/test_fees.py:30:    assert fee(\"D0360\") == 260_00")),
    ("cdt_mapping", "claude",
     "The billing office wants silver diamine fluoride treatment added to the fee schedule, at $38 for the Texas clinics. I don't remember where the procedure-to-fee table lives these days since someone reorganized claims/ last year. Can you add it in the right place and update any tests?",
     None),
    ("perio_interval", "claude",
     "Can you implement next_recall_due(patient, visit) in recall/intervals.py? Product's spec just says 'six months after the last cleaning', but I think the gum-disease folks at the Lakeside clinic had some objection last year. Add unit tests too.",
     None),
    ("perio_interval", "claude-log",
     "A periodontist at Lakeside says her maintenance patients aren't being called back on time. Here's the recall computation debug output:\n```\nrecall DEBUG patient=p_7731 last_visit=2024-03-02 flags=['perio'] next_due=2024-09-01\nrecall DEBUG patient=p_7740 last_visit=2024-03-05 flags=['perio'] next_due=2024-09-04\nrecall DEBUG patient=p_7752 last_visit=2024-03-06 flags=[] next_due=2024-09-05\n```\nIs the scheduler wrong?",
     None),
    ("pacs_ae_title", "claude-tool",
     "A new clinic in Reno installed their intraoral sensor software yesterday and no images show up in our archive. Can you figure out what the vendor's technician needs to enter on their side?",
     ("tail -n 4 /var/log/pacs-gw/assoc.log",
      "2024-06-12 15:20:41 A-ASSOCIATE-RQ from 10.44.7.21 calling=RENO_SENSOR1 called=ANY-SCP\n2024-06-12 15:20:41 A-ASSOCIATE-RJ result=1 source=1 reason=7 (called AE title not recognized)\n2024-06-12 15:21:03 A-ASSOCIATE-RQ from 10.44.7.21 calling=RENO_SENSOR1 called=STORESCP\n2024-06-12 15:21:03 A-ASSOCIATE-RJ result=1 source=1 reason=7 (called AE title not recognized)")),
    ("pacs_ae_title", "codex",
     "give me a dcm4che storescu command to smoke test our pacs gateway with a sample bitewing",
     None),
    ("recall_queue", "codex-tool",
     "patients getting double recall texts again since last deploy, check",
     ("rabbitmqadmin list queues name messages consumers",
      "+--------------------+----------+-----------+\n|        name        | messages | consumers |\n+--------------------+----------+-----------+\n| recall.outbound    | 0        | 3         |\n| recall.outbound.v2 | 12       | 3         |\n| claims.submit      | 0        | 1         |\n+--------------------+----------+-----------+")),
    ("recall_queue", "claude",
     "I'm building a WhatsApp sender for reminder messages for the Monterrey pilot clinics. Which broker queue should it consume from, and can you scaffold it in recall/consumers/whatsapp.py following the SMS consumer's structure? Make sure it can't send the same reminder twice.",
     None),
    ("waitlist_pilot", "claude-after-compact",
     "Back to the cancellation flow from before the summary: when a patient cancels on the same day, let's automatically offer the freed slot to the waitlist at all clinics. Can you wire that into booking/cancel.py?",
     None),
    ("waitlist_pilot", "codex",
     "oakridge same-day cancel didnt offer slot to waitlist, why",
     None),
    ("eob_parser", "claude-log",
     "Posting of insurance payments from our biggest payer is producing garbage since last sprint:\n```\neob-import WARN line 14 tooth='1B' code=D2391 unparseable tooth\neob-import WARN line 22 tooth='3O' code=D2740 unparseable tooth\neob-import INFO pipeline=generic_ocr pages=6 confidence=0.81\n```\nWhat should we change?",
     None),
    ("eob_parser", "claude-tool",
     "Please add an importer for Delta Dental remittance PDFs in eob/importers/. I put a sample in samples/, here's what it looks like.",
     ("pdftotext -layout samples/delta_eob_0412.pdf - | head -8",
      "DELTA DENTAL EXPLANATION OF BENEFITS            Page 1 of 3\nPatient: DOE, JANE        Member ID: 9918827361\nDate     Tooth  Proc   Submitted  Allowed  Paid\n05/02/24  18    D2391    185.00   142.30  113.84\n05/02/24  19    D2391    185.00   142.30  113.84\n05/02/24        D1110    120.00    96.00   96.00")),
    ("deploy_freeze", "codex",
     "ship booking-api hotfix for the typo in confirmation page to prod now, monday 8:15 chicago",
     None),
    ("deploy_freeze", "claude-after-compact",
     "Back to the release pipeline from before the summary. Let's have booking-api deploy to production automatically every Monday at 08:00 local so the week starts on the latest code. Can you add the schedule trigger to .github/workflows/deploy-booking.yml?",
     None),
    ("tooth_numbering", "claude",
     "Dentists at our new Toronto clinic keep complaining that the chart says tooth 14 when they mean 24. Can you change how tooth_number is stored for that clinic so it matches what they expect? A migration in db/migrations plus the model change should do it.",
     None),
    ("tooth_numbering", "codex-tool",
     "claim got rejected for tooth number, see validator output",
     ("python -m claims.validate out/837D_20240611_0042.x12",
      "SV3*AD:D2391*185~\nTOO*JP*36~\nERROR loop=2400 seg=TOO02 value='36' not valid for code list JP\n1 error(s), claim 0042-17 not submittable")),
    ("portal_rate_limit", "claude-log",
     "Parents with several kids are getting errors in the new family view of the portal:\n```\n[2024-06-10T18:22:01Z] \"GET /v1/patients/p_88/appointments\" 429 - rl=local_rate_limit\n[2024-06-10T18:22:01Z] \"GET /v1/patients/p_89/appointments\" 429 - rl=local_rate_limit\n```\nThe page loads each child's appointments and availability separately. How should I restructure this?",
     None),
    ("portal_rate_limit", "codex",
     "add rate limiting to new /v1/availability endpoint, same as the rest of portal",
     None),
    ("staging_deid", "claude-tool",
     "QA says the staging data looks broken: some recall dates are way off from when the visit happened. Is our date logic buggy?",
     ("psql molarly_staging -c 'select patient_id, visit_date, recall_sent_at from recall_log limit 3'",
      " patient_id | visit_date |     recall_sent_at\n------------+------------+------------------------\n p_1021     | 2024-02-09 | 2024-07-28 09:30:00-05\n p_1022     | 2024-04-30 | 2024-10-02 10:00:00-05\n p_1023     | 2024-01-17 | 2024-06-01 09:15:00-05")),
    ("staging_deid", "claude-after-compact",
     "Back to the staging refresh from before the summary: the current nightly job is slow, so can we just pg_dump production straight into staging instead? QA also wants the real names there so they can reproduce a patient's bug report exactly.",
     None),
    ("eligibility_cache", "codex",
     "insurance/eligibility.py hits the payer on every check-in page load, add caching",
     None),
    ("eligibility_cache", "claude-log",
     "A patient switched employers Monday and her new plan wasn't picked up at check-in on Wednesday:\n```\n2024-06-12T13:40:02Z eligibility INFO payer=60054 member=W223344 source=cache age=47h status=active plan=OLD-PPO\n```\nShe got billed under the wrong plan. Why didn't it query the payer, and what's the fix for the front desk?",
     None),
    ("rcm_alerts", "codex-tool",
     "route new claim-denied-spike alert properly, see rules file",
     ("cat alerting/rules/claims.yaml",
      "groups:\n- name: claims\n  rules:\n  - alert: ClaimDeniedSpike\n    expr: sum(rate(claims_denied_total[1h])) by (payer) > 0.05\n    labels:\n      severity: page\n      slack_channel: \"#oncall\"")),
    ("rcm_alerts", "claude",
     "The on-call engineers are annoyed that they get woken up at 2am because some insurer denied a batch of claims. That's not something they can even fix. Can you change the alert routing so the right people get these instead?",
     None),
)

NULL_TURNS = (
    ("codex", "rename get_appt to get_appointment in booking/api/handlers.py and update callers", None),
    ("claude", "There's a typo in the patient portal footer: 'Priavcy Policy'. Can you fix it in portal/src/components/Footer.tsx? While you're there, make the copyright year computed instead of hardcoded.", None),
    ("codex-tool", "fix lint errors in recall/",
     ("ruff check recall/",
      "recall/templates.py:3:1: F401 [*] `os` imported but unused\nrecall/scheduler.py:88:101: E501 Line too long (112 > 100)\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.")),
    ("claude", "Can you write unit tests for libs/formatting/phone.py's format_e164 helper? Cover US numbers with and without the +1, numbers with spaces and dashes, and garbage input that should raise ValueError.", None),
    ("codex", "bump pydantic to 2.7 in imaging/requirements.txt", None),
    ("claude-tool", "This test started failing after I reordered the dict keys. Can you fix the test so it doesn't depend on ordering?",
     ("make test SERVICE=booking",
      "FAILED booking/tests/test_serializers.py::test_slot_json - AssertionError: assert '{\"end\": \"10:15\", \"start\": \"10:00\"}' == '{\"start\": \"10:00\", \"end\": \"10:15\"}'\n1 failed, 211 passed in 8.42s")),
    ("claude", "The README in imaging/ still describes how to run the service with docker-compose v1 syntax. Please update it to `docker compose` and tidy the setup section so it reads as numbered steps.", None),
    ("codex", "add type hints to libs/dates/weekdays.py", None),
    ("claude-log", "Getting this when I run the formatter locally:\n```\nerror: cannot format claims/report.py: Cannot parse: 41:15:     match kind\n```\nWhat's wrong with line 41?", None),
    ("codex-tool", "fix failing pure helper test",
     ("pytest libs/tests/test_slugify.py -q",
      "F.\n___ test_slugify_accents ___\n    assert slugify('Clínica Ñandú') == 'clinica-nandu'\nE   AssertionError: assert 'clnica-nand' == 'clinica-nandu'\n1 failed, 1 passed in 0.03s")),
    ("claude-after-compact", "Back to the UI polish from before the summary: can you also make the patient search input autofocus when the page loads, and add a placeholder that says 'Search by name or DOB'?", None),
    ("codex", "sort imports in portal/src/pages/*.tsx", None),
)
