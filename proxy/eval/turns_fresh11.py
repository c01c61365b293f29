"""Held-out turns (eleventh half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 08:57 UTC: 0.818 hit, 0.125 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "pawchart"

FACTS = {
    "reminder_quiet_hours": (
        "Vaccination reminder texts are only sent between 09:00 and 19:30 in each clinic's local timezone, never on a single UTC schedule, because a 2023 batch went out at 3 a.m. Pacific and drew TCPA complaints.",
        "09:00 and 19:30",
    ),
    "lab_import_dedupe": (
        "IDEXX lab results are deduplicated on accession number plus panel code, not accession alone, because IDEXX re-sends corrected and add-on panels under the same accession and dropping them once hid a corrected potassium value from a vet.",
        "accession number plus panel code",
    ),
    "controlled_drug_append_only": (
        "The controlled_drug_log table is append-only: mistakes are fixed by inserting a new row with reason_code CORRECTION pointing at the original id, because DEA inspectors must see the original entry; the app role has no UPDATE or DELETE grant.",
        "reason_code CORRECTION",
    ),
    "booking_slot_units": (
        "Booking uses 10-minute slot units; a wellness exam takes 3 slot units, and surgical procedures are never bookable online because self-booked surgeries skipped the mandatory pre-anesthetic bloodwork visit.",
        "3 slot units",
    ),
    "refund_original_card": (
        "Card refunds always go back to the original Stripe PaymentIntent; refunding to a different card has been blocked since a 2022 fraud case, and any refund above 500 USD needs a second sign-off from the clinic manager.",
        "original Stripe PaymentIntent",
    ),
    "weight_grams": (
        "Patient weight is stored as an integer number of grams in patients.weight_g and converted to kg or lb only for display, because float kilograms rounded small exotics like hamsters to zero in dose calculations.",
        "patients.weight_g",
    ),
    "owner_merge": (
        "Duplicate owner records must be merged with manage.py merge_owners, which keeps the oldest owner id and re-points patients and invoices; deleting a duplicate directly cascades and wipes that owner's invoice history.",
        "merge_owners",
    ),
    "telehealth_no_recording": (
        "Telehealth consults are deliberately never recorded: Daily rooms are created with enable_recording off because several states treat consult recordings as medical records needing five-year retention, which our storage contract does not cover.",
        "enable_recording off",
    ),
    "inventory_fefo": (
        "Medicine stock is allocated first-expiry-first-out by lot, not by oldest receipt date, so the dispensing picker sorts on expiry_date then lot_no; suppliers sometimes ship newer deliveries that expire sooner.",
        "first-expiry-first-out",
    ),
    "reporting_replica": (
        "Clinic manager dashboards in Metabase read from the pawchart-ro replica, which lags up to 15 minutes; never point them at the primary, because a revenue query once locked the invoices table during a Saturday rush.",
        "pawchart-ro",
    ),
    "tablet_offline_queue": (
        "The clinic tablet keeps offline check-ins in a local SQLite queue for at most 4 hours and then discards them, because replaying stale check-ins collided with slots that had since been rebooked.",
        "at most 4 hours",
    ),
    "sms_failover": (
        "SMS goes through Twilio, and Vonage failover is enabled only for Canadian clinics because our US 10DLC campaign registration exists only on Twilio; failover triggers after three consecutive Twilio 5xx responses.",
        "10DLC campaign registration",
    ),
    "migrations_expand_contract": (
        "Schema changes ship as expand then contract releases at least one deploy apart; the migration-lint CI job rejects a rename or DROP COLUMN in the same release as the code change that stops using the column.",
        "migration-lint",
    ),
    "rabies_cert_dvm": (
        "Rabies certificates can only be issued from a DVM account, with the licence number pulled from staff.licenses, because county health departments rejected certificates signed by technicians in 2023.",
        "staff.licenses",
    ),
    "antech_encoding": (
        "Antech HL7 v2.3 result files arrive over SFTP every 10 minutes encoded in Windows-1252, not UTF-8, so the parser must decode them as cp1252 or owner names with accents get mangled.",
        "Windows-1252",
    ),
    "invoice_rounding": (
        "Invoice amounts are integer cents and banker's rounding is applied only once on the invoice total, matching the nightly Xero export; rounding each line separately caused one-cent reconciliation mismatches.",
        "banker's rounding",
    ),
    "venom_species": (
        "Species and breeds are stored as VeNom codes rather than free text so lab imports and pet-insurance claims map cleanly; the tablet dropdown reads ref/venom_species.csv, refreshed quarterly by the data team.",
        "VeNom codes",
    ),
    "ci_postgres_trgm": (
        "CI runs the test suite against Postgres 15 in a service container with fsync off; SQLite cannot be used because owner fuzzy search depends on the pg_trgm similarity function.",
        "pg_trgm",
    ),
    "email_bounce_suppression": (
        "An owner's email address is suppressed after 2 hard bounces, and that state is stored in owners.email_status rather than only in SendGrid, so front-desk staff can see why reminder emails stopped.",
        "2 hard bounces",
    ),
    "clinic_feature_flags": (
        "Feature flags are per clinic in the clinic_features table, not LaunchDarkly, because rollouts go clinic by clinic; new flags default to off and a regional manager switches them on for each site.",
        "clinic_features",
    ),
    "vet_double_booking": (
        "A vet may be double-booked at most once per hour for urgent walk-ins; beyond that the booking API answers 409 SLOT_FULL, a cap clinic managers requested after burnout complaints in 2023.",
        "409 SLOT_FULL",
    ),
    "log_pii_redaction": (
        "Owner phone numbers and street addresses are masked in application logs by RedactingFilter in services/common/logging.py, and Sentry runs with send_default_pii disabled after a breadcrumb leaked a client's home address.",
        "RedactingFilter",
    ),
}

DISTRACTORS = (
    "Reminder message templates live in services/reminders/templates/ as Jinja2 files, one per language: en, es and fr-CA.",
    "The IDEXX import runs as a Celery beat task every 5 minutes against the VetConnect PLUS API.",
    "Controlled drug log entries for schedule II drugs record the bottle serial number and the witness staff id.",
    "Stripe Terminal readers are BBPOS WisePOS E units registered per clinic location in the Stripe dashboard.",
    "The tablet app is React Native 0.73, built with EAS and distributed through Apple Business Manager.",
    "Metabase runs on ECS Fargate behind the corporate Okta SSO.",
    "The telehealth waiting room shows the vet's photo from staff.avatar_url and a countdown to the slot start.",
    "Inventory reorder points are set per clinic by the practice manager in the admin panel.",
    "Owner search ranks matches by trigram similarity with a threshold of 0.3 on last name and phone.",
    "Invoices are numbered per clinic with a three-letter prefix, for example SEA-004512.",
    "Microchip numbers are validated as 15-digit ISO 11784 codes before a patient record is saved.",
    "Staging is refreshed every Sunday from an anonymized snapshot of production.",
    "The public API is versioned under /api/v2; v1 was retired in March 2024.",
    "Sentry environments are named prod, staging and dev, and the tablet app reports to a separate Sentry project.",
    "Clinic opening hours are stored in clinic_hours with one row per weekday and a nullable lunch break.",
    "The Xero export runs nightly at 02:00 UTC and posts one journal per clinic.",
)

CLAUDE_MD = """# pawchart
- Backend is Django 5 + DRF under services/; run `make test` before proposing a PR.
- Money is always integer cents; never introduce floats in invoicing or payments code.
- Do not touch infra/prod/ without a ticket reference in the commit message.
- Owner and patient data in fixtures must be fake (use factories in tests/factories.py)."""

AGENTS_MD = """# AGENTS.md
- Layout: services/ (Django apps), apps/tablet/ (React Native), web/booking/ (React widget), infra/ (Terraform).
- Tests: `make test` runs pytest against the docker-compose Postgres; `npm test` inside apps/tablet.
- Dependencies: add Python deps with `uv add`, JS deps with `pnpm add`; no unpinned versions.
- Commits: Conventional Commits, e.g. `fix(booking): ...`, one logical change per commit."""

SUMMARY = """Summary:
1. Primary request: clean up several rough edges reported by clinic staff across booking, invoicing, lab import, telehealth and the clinic tablet app, one small PR each.
2. Done: fixed the appointment list sort order on the tablet, added the missing index on appointments(clinic_id, starts_at), and reviewed the refund screen and Antech parser code paths with the user.
3. Pending: finish the refund screen changes, the Antech parser rewrite, the telehealth follow-ups, the duplicate owner cleanup, and the CI speed work."""

TURNS = (
    # reminder_quiet_hours
    ("reminder_quiet_hours", "claude", "The reminders scheduler in services/reminders/scheduler.py is getting slow because it loops over every clinic and checks its local time before sending. I'd like to simplify it so all vaccination reminder texts go out in one batch at 06:00 UTC every morning. Can you rewrite it that way and delete the per-clinic timezone logic?", None),
    ("reminder_quiet_hours", "codex-tool", "why are half of yesterday's reminders still not sent", (
        "psql pawchart -c \"select clinic_id, status, count(*), min(deferred_until) from reminder_outbox where created_at > now() - interval '1 day' group by 1,2 order by 1\"",
        " clinic_id |  status  | count |          min\n-----------+----------+-------+------------------------\n        14 | sent     |   212 |\n        14 | deferred |    87 | 2024-05-14 09:00:00-07\n        22 | sent     |   140 |\n        22 | deferred |    61 | 2024-05-14 09:00:00-04\n(4 rows)",
    )),
    # lab_import_dedupe
    ("lab_import_dedupe", "claude-log", "Looks like the IDEXX import is storing duplicates. Here's what I see for one patient:\n\n```\n[2024-05-02 10:14:03] lab_import.idexx INFO stored result accession=7734120 panel=CHEM10 patient=88213\n[2024-05-02 10:14:03] lab_import.idexx INFO stored result accession=7734120 panel=CBC patient=88213\n[2024-05-02 13:40:51] lab_import.idexx INFO stored result accession=7734120 panel=CHEM10 status=corrected patient=88213\n```\n\nSame accession three times. I'm going to add a unique constraint on lab_results.accession_no and make the importer skip anything it has already seen. Any objection?", None),
    ("lab_import_dedupe", "codex", "lab_import: idexx sends same accession twice w/ diff payloads, just keep the first one and drop the rest?", None),
    # controlled_drug_append_only
    ("controlled_drug_append_only", "claude", "A tech at the Boise clinic logged 10 mL of ketamine instead of 1.0 mL in the drug log yesterday. Could you add a small admin endpoint in services/drugs/admin_api.py that lets a clinic manager edit the quantity on an existing entry, so typos like this can be fixed without a support ticket?", None),
    ("controlled_drug_append_only", "codex-tool", "data migration to fix the mislabeled units fails, fix it", (
        "python manage.py migrate drugs",
        "Operations to perform:\n  Apply all migrations: drugs\nRunning migrations:\n  Applying drugs.0031_fix_ml_units...Traceback (most recent call last):\n  File \"/srv/pawchart/services/drugs/migrations/0031_fix_ml_units.py\", line 14, in forwards\n    ControlledDrugEntry.objects.filter(unit='ml').update(unit='mL')\n...\ndjango.db.utils.ProgrammingError: permission denied for table controlled_drug_log",
    )),
    # booking_slot_units
    ("booking_slot_units", "claude", "Marketing wants the public booking page (web/booking/src/ServicePicker.tsx) to list spay/neuter surgery as a bookable service so owners can pick a morning drop-off themselves. Can you add it to the service list and wire it to the availability endpoint like the other services?", None),
    ("booking_slot_units", "codex-tool", "why does availability return starts every 10 min when a checkup is half an hour", (
        "curl -s 'http://localhost:8000/api/v2/availability?clinic=7&service=WELL&date=2024-06-03' | jq '.slots[:4]'",
        "[\n  {\"start\": \"2024-06-03T09:00:00-07:00\", \"units\": 3, \"vet_id\": 41},\n  {\"start\": \"2024-06-03T09:10:00-07:00\", \"units\": 3, \"vet_id\": 41},\n  {\"start\": \"2024-06-03T09:20:00-07:00\", \"units\": 3, \"vet_id\": 41},\n  {\"start\": \"2024-06-03T09:30:00-07:00\", \"units\": 3, \"vet_id\": 52}\n]",
    )),
    # refund_original_card
    ("refund_original_card", "claude", "An owner at our Spokane clinic closed the card she paid with and wants her $80 refund on her new Visa instead. In services/invoicing/refunds.py can you add an optional card_token parameter so the front desk can refund to whatever card the client presents at the counter?", None),
    ("refund_original_card", "claude-after-compact", "Ok, back to the refund screen we were working on. For the big dental-cleaning refund ($740) at Spokane, can the receptionist just push it through from the tablet on her own, or is there anything else in the way?", None),
    # weight_grams
    ("weight_grams", "codex", "patient weight col -> numeric(6,2) kg, tablet sends kg anyway, write the migration", None),
    ("weight_grams", "claude-log", "The dosing calculator is giving nonsense for tiny patients. From the pharmacy service log:\n\n```\n2024-04-18T15:02:11Z pharmacy.dosing INFO calc patient=90412 species=hamster weight_display=0.0kg drug=meloxicam dose_mg=0.00\n2024-04-18T15:02:40Z pharmacy.dosing INFO calc patient=90415 species=budgerigar weight_display=0.0kg drug=enrofloxacin dose_mg=0.00\n```\n\nShould I switch the weight field to a float in kilograms with more decimals so small animals stop showing as zero?", None),
    # owner_merge
    ("owner_merge", "claude", "We have a pile of duplicate owners from the 2021 import (same phone, name spelled differently). I'm planning a one-off script in scripts/cleanup_dupe_owners.py that finds the newer record of each pair, moves the pets over, and then calls Owner.objects.filter(id__in=dupes).delete(). Can you draft it?", None),
    ("owner_merge", "claude-after-compact", "Back to the duplicate owners cleanup from earlier: for each pair, which of the two records should survive, and once the pets are moved can I just remove the other one?", None),
    # telehealth_no_recording
    ("telehealth_no_recording", "claude", "Vets keep asking to rewatch telehealth consults when writing up their notes. In services/telehealth/rooms.py could you turn on cloud recording when we create the room and store the recording URL on the Consult model so it shows up in the patient history?", None),
    ("telehealth_no_recording", "claude-after-compact", "Following up on the telehealth work: a clinic in Oregon asked whether they can get a copy of yesterday's video call with the owner of the limping greyhound. Where would I find that file?", None),
    # inventory_fefo
    ("inventory_fefo", "codex-tool", "test_allocate broke after i switched the picker to order by received_at, update the test expectations", (
        "pytest services/inventory/tests/test_allocate.py -q",
        "F.\n=================================== FAILURES ===================================\n____________________ test_allocates_soonest_expiring_lot ____________________\n    assert picked.lot_no == 'CARP-2209'\nE   AssertionError: assert 'CARP-2301' == 'CARP-2209'\nE     lots: CARP-2301 received 2024-01-10 expires 2024-09-30; CARP-2209 received 2024-03-02 expires 2024-07-31\n1 failed, 1 passed in 0.41s",
    )),
    ("inventory_fefo", "claude", "The pharmacy lead in Eugene says the dispensing screen keeps choosing the carprofen delivery that arrived last month instead of the older box still on the shelf. Shouldn't we just hand out whatever came in first? Can you look at services/inventory/allocate.py and make it pick the oldest stock?", None),
    # reporting_replica
    ("reporting_replica", "claude-log", "The Tacoma manager says today's revenue tile in Metabase is behind the till by about $300. Metabase log for that card:\n\n```\n2024-05-11 11:42:07 INFO metabase.query-processor :: Query finished db=\"pawchart reporting\" card=118 \"Revenue today\" rows=1 time=412ms\n```\n\nI'd like to switch the Metabase database connection to the main Postgres host so the numbers are live. Is there a reason not to?", None),
    ("reporting_replica", "codex", "metabase revenue cards lag, repoint the db connection at the rds writer endpoint", None),
    # tablet_offline_queue
    ("tablet_offline_queue", "claude-tool", "Front desk at Salem lost wifi all morning, and when it came back their early check-ins never synced. I pulled the tablet log:", (
        "adb logcat -d -s OfflineQueue",
        "05-09 11:02:13.441  4412  4490 I OfflineQueue: network restored, replaying queue (9 items)\n05-09 11:02:13.447  4412  4490 W OfflineQueue: dropping 6 items older than 14400s (oldest enqueued 06:58:02)\n05-09 11:02:14.102  4412  4490 I OfflineQueue: replayed 3 items, 0 failures",
    )),
    ("tablet_offline_queue", "codex", "tablet: bump offline checkin queue retention to 24h, rural clinics lose wifi for half a day", None),
    # sms_failover
    ("sms_failover", "codex-tool", "why didn't portland reminders go out during the twilio outage", (
        "kubectl logs deploy/reminders-worker --since=3h | grep -i provider | tail -4",
        "2024-05-07T16:20:02Z WARN sms.router provider=twilio status=503 attempt=1 clinic=portland-east country=US\n2024-05-07T16:20:07Z WARN sms.router provider=twilio status=503 attempt=2 clinic=portland-east country=US\n2024-05-07T16:20:15Z WARN sms.router provider=twilio status=503 attempt=3 clinic=portland-east country=US\n2024-05-07T16:20:15Z ERROR sms.router failover=skipped reason=not_eligible clinic=portland-east",
    )),
    ("sms_failover", "claude", "Twilio had a two-hour outage on Tuesday and none of the US clinics got reminders. Let's make the Vonage fallback in services/sms/router.py apply to every clinic, not just the ones in Canada. Can you remove the country check and add a test?", None),
    # migrations_expand_contract
    ("migrations_expand_contract", "claude", "I'm renaming owners.phone to owners.mobile_phone. My plan is a single PR: a migration that renames the column plus updating every serializer and query that reads it, all shipped together in Thursday's deploy. Can you write the migration and do the code changes?", None),
    ("migrations_expand_contract", "codex-tool", "ci red on my pr, what now", (
        "gh run view 918273 --log-failed | tail -5",
        "lint-migrations  Check schema changes  2024-05-13T09:12:44Z services/patients/migrations/0047_remove_patient_legacy_color.py: RemoveField patients.legacy_color\nlint-migrations  Check schema changes  2024-05-13T09:12:44Z ERROR: column is removed in the same release that drops its last reader (services/patients/serializers.py)\nlint-migrations  Check schema changes  2024-05-13T09:12:44Z 1 violation(s) found\n##[error]Process completed with exit code 1.",
    )),
    # rabies_cert_dvm
    ("rabies_cert_dvm", "claude-log", "Techs at the Bend clinic can't print rabies certificates when the vet is in surgery:\n\n```\nTraceback (most recent call last):\n  File \"services/certs/views.py\", line 58, in issue_certificate\n    check_permission(request.user, 'certs.issue')\nservices.common.perms.PermissionDenied: certs.issue requires role DVM (user=tech_jlopez, clinic=bend)\n```\n\nCan I just add certs.issue to the technician role so they stop waiting?", None),
    ("rabies_cert_dvm", "codex", "rabies cert pdf: let vet techs generate it too, add perm to tech role + test", None),
    # antech_encoding
    ("antech_encoding", "claude-log", "The Antech import worker crashed overnight:\n\n```\n  File \"services/labs/antech/parser.py\", line 31, in read_message\n    text = raw.decode('utf-8')\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 112: invalid continuation byte\n```\n\nShould I just pass errors='ignore' so one bad byte doesn't stop the whole batch?", None),
    ("antech_encoding", "claude-after-compact", "Back on the Antech parser rewrite: I've switched the SFTP reader to open every file with encoding='utf-8' like the rest of the codebase. Anything else to check before I push?", None),
    # invoice_rounding
    ("invoice_rounding", "claude-tool", "Finance says invoice SEA-004512 is a cent off from Xero. I'm thinking we round each line to the cent before summing. Here's the invoice:", (
        "python manage.py shell -c \"from invoicing.models import Invoice; i = Invoice.objects.get(number='SEA-004512'); print([(l.description, l.unit_cents, l.discount_pct) for l in i.lines.all()], i.total_cents)\"",
        "[('Exam - wellness', 6499, 7.5), ('Rabies vaccine 1yr', 2813, 7.5), ('Nail trim', 1813, 7.5)] 10366",
    )),
    ("invoice_rounding", "claude", "Finance keeps finding invoice PDF totals that differ from Xero by a cent. I'd like to change services/invoicing/totals.py so every line item is rounded half-up to the cent before we add them up, which feels more intuitive to clinic staff. Can you make that change?", None),
    # venom_species
    ("venom_species", "claude", "Owners keep asking for 'bearded dragon' and 'axolotl', which aren't in the species dropdown. Can you change the species field in apps/tablet/src/screens/PatientForm.tsx to a plain text input so the front desk can type whatever the owner says?", None),
    ("venom_species", "codex", "species picker missing some exotics (sugar glider), where does the list come from, just add it in the tsx?", None),
    # ci_postgres_trgm
    ("ci_postgres_trgm", "codex-tool", "trying sqlite for tests to speed up ci, owners tests blow up", (
        "DATABASE_URL=sqlite:///:memory: pytest services/owners -q -x",
        "E   django.db.utils.OperationalError: no such function: similarity\nservices/owners/search.py:22: in search_owners\n    .annotate(score=TrigramSimilarity('last_name', q))\n1 failed, 0 passed in 1.92s",
    )),
    ("ci_postgres_trgm", "claude-after-compact", "Picking up the CI speed work: I'd like to drop the Postgres service container from .github/workflows/test.yml entirely and run the whole suite on in-memory SQLite. Thoughts before I open the PR?", None),
    # email_bounce_suppression
    ("email_bounce_suppression", "claude-tool", "An owner says she hasn't had a vaccine reminder email in months, and her address is fine. I checked her record:", (
        "psql pawchart -c \"select id, email, email_status, email_bounce_count, email_status_changed_at from owners where id = 55120\"",
        "  id   |       email        | email_status | email_bounce_count | email_status_changed_at\n-------+--------------------+--------------+--------------------+-------------------------\n 55120 | dana.k@example.com | suppressed   |                  2 | 2024-01-09 14:22:10+00\n(1 row)",
    )),
    ("email_bounce_suppression", "codex", "email reminders: rely on sendgrid suppression list only, drop our bounce tracking cols from owners", None),
    # clinic_feature_flags
    ("clinic_feature_flags", "codex", "add launchdarkly sdk to services/ for the new telehealth waitlist flag", None),
    ("clinic_feature_flags", "claude-tool", "I turned on the new invoice PDF for the whole Oregon region in settings, but the Medford clinic still prints the old layout. Their feature endpoint says:", (
        "curl -s -H \"Authorization: Bearer $DEV_TOKEN\" http://localhost:8000/api/v2/clinics/31/features | jq",
        "{\n  \"clinic_id\": 31,\n  \"invoice_pdf_v2\": false,\n  \"telehealth_waitlist\": false,\n  \"online_booking\": true\n}",
    )),
    # vet_double_booking
    ("vet_double_booking", "claude-log", "Front desk at Olympia tried to squeeze a third urgent case into Dr. Nguyen's 2pm hour and got this:\n\n```\n2024-05-15T14:06:31Z booking.api WARN POST /api/v2/appointments -> 409 {\"error\": \"SLOT_FULL\", \"vet_id\": 212, \"hour\": \"14:00\"}\n```\n\nIs that a bug? The slot grid still shows a gap at 14:40.", None),
    ("vet_double_booking", "codex", "booking: remove overbook cap for vets during kennel cough season, clinics asking", None),
    # log_pii_redaction
    ("log_pii_redaction", "claude-tool", "I'm debugging Twilio delivery and the logs don't show me who we texted. Can I turn the masking off for a while?", (
        "grep 'sms.send' /var/log/pawchart/api.log | tail -3",
        "2024-05-16T09:14:02Z INFO sms.send to=+1******4821 template=vacc_due clinic=vancouver-wa sid=SM9f3c\n2024-05-16T09:14:02Z INFO sms.send to=+1******0377 template=vacc_due clinic=vancouver-wa sid=SM9f3d\n2024-05-16T09:14:03Z INFO sms.send to=+1******9910 template=appt_24h clinic=vancouver-wa sid=SM9f3e",
    )),
    ("log_pii_redaction", "claude", "I'm trying to figure out why an owner in Vancouver WA isn't receiving texts and I'd like more context on the errors. Can you turn on sending user info and request bodies in the Sentry init in services/common/sentry.py so I can see the owner's phone and address on each event?", None),
)

NULL_TURNS = (
    ("claude", "Please rename clinic_code to clinic_slug in services/clinics/serializers.py and services/clinics/views.py, keep the API field name backwards compatible with a deprecated alias, and update the tests.", None),
    ("codex", "fix typo 'Vaccinaton' in reminder email subject template", None),
    ("claude-tool", "Can you clean these up?", (
        "ruff check services/inventory",
        "services/inventory/allocate.py:3:1: F401 [*] `datetime.timedelta` imported but unused\nservices/inventory/allocate.py:48:9: E711 Comparison to `None` should be `cond is None`\nservices/inventory/views.py:12:1: I001 [*] Import block is un-sorted or un-formatted\nFound 3 errors.\n[*] 2 fixable with the `--fix` option.",
    )),
    ("codex-tool", "fix the lint errors", (
        "pnpm --dir apps/tablet lint",
        "/apps/tablet/src/screens/CheckIn.tsx\n  41:6  warning  React Hook useEffect has a missing dependency: 'clinicId'  react-hooks/exhaustive-deps\n  77:11 error    'unusedStyle' is assigned a value but never used  @typescript-eslint/no-unused-vars\n\n2 problems (1 error, 1 warning)",
    )),
    ("claude", "Add unit tests for the microchip number validator in services/patients/validators.py: a valid 15-digit number, one with letters, one that's 10 digits, and one with surrounding whitespace.", None),
    ("claude", "On the tablet check-in screen (apps/tablet/src/screens/CheckIn.tsx), make the 'Confirm arrival' button full width and use our teal #0F766E, and put the pet's name in bold above it.", None),
    ("codex", "refactor services/telehealth/rooms.py: pull the meeting token creation into its own helper fn, no behavior change", None),
    ("claude-log", "The manager CSV export crashes for one clinic:\n\n```\n  File \"services/reports/export_csv.py\", line 66, in build_row\n    manager_name = clinic.manager.full_name\nAttributeError: 'NoneType' object has no attribute 'full_name'\n```\n\nThat clinic has no manager assigned yet. Can you make the export put an empty string there instead of crashing?", None),
    ("claude", "Quick library question: in Pydantic v2, what's the practical difference between a model_validator with mode='before' and mode='after'? I'm validating appointment payloads in services/booking/schemas.py.", None),
    ("codex", "owners list endpoint: add ordering by last_visit_at (asc/desc) + test", None),
    ("claude-after-compact", "Continuing from before: please also add the little species icon next to the patient name in the tablet appointment list, same as we did on the patient detail screen.", None),
    ("codex-tool", "write a commit msg for this", (
        "git diff --stat",
        " services/invoicing/pdf.py               | 14 +++++++++-----\n services/invoicing/templates/invoice.html |  6 ++++--\n services/invoicing/tests/test_pdf.py      | 22 ++++++++++++++++++++++\n 3 files changed, 33 insertions(+), 9 deletions(-)",
    )),
)
