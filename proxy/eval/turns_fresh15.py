"""Held-out turns (fifteenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 14:46 UTC: 0.682 hit, 0.143 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "shelfnet"

FACTS = {
    "holds_shelf_expiry": (
        "Holds waiting on the pickup shelf expire after 7 calendar days, not open days, because the consortium lending agreement caps shelf time so popular titles keep circulating between branches.",
        "7 calendar days",
    ),
    "ebook_checkout_timeout": (
        "The OverDrive checkout client in ebooks/vendor/overdrive.py uses a 12-second timeout with no automatic retry, because retries created duplicate loans that burned paid licence checkouts.",
        "12-second timeout",
    ),
    "fine_cap": (
        "Overdue fines stop accruing once an item reaches ten dollars, set as MAX_FINE_CENTS = 1000 in fines/policy.py, because the 2023 board fine policy caps per-item charges.",
        "MAX_FINE_CENTS = 1000",
    ),
    "kiosk_gateway": (
        "Branch kiosks may only call kiosk-gw.shelfnet.internal on port 8443, because branch firewalls allowlist that single gateway and block direct traffic to the catalogue and circulation APIs.",
        "kiosk-gw.shelfnet.internal",
    ),
    "due_date_timezone": (
        "Due dates for every branch are computed in America/Chicago, because the consortium circulation rules define closing time in central time, including for the two western branches.",
        "America/Chicago",
    ),
    "patron_barcode_check": (
        "Patron card barcodes are 14 digits starting with 2 and end in a Luhn mod-10 check digit, because that is the Codabar format printed on all legacy library cards.",
        "Luhn mod-10",
    ),
    "sip2_checksums": (
        "The SIP2 server must keep error detection on, sending AY sequence numbers and AZ checksums on every response, because the 3M self-check units silently drop messages without them.",
        "AZ checksums",
    ),
    "search_alias": (
        "Catalogue search code must query the Elasticsearch alias catalogue_live, never a versioned index name, because reindexing builds a new index and swaps the alias atomically.",
        "catalogue_live",
    ),
    "ebooks_owner": (
        "The e-book lending service under ebooks/ is owned by the Digital Services team, led by Priya Raman, and any change there needs her approval before merge.",
        "Priya Raman",
    ),
    "loan_anonymize": (
        "The nightly purge job nulls patron_id in circ.loan_history for loans returned more than 30 days ago, because state library privacy law forbids retaining reading histories.",
        "circ.loan_history",
    ),
    "holds_limit": (
        "Each patron can hold at most 25 active holds across the whole consortium, because higher limits let a few accounts monopolise new-release queues.",
        "25 active holds",
    ),
    "payment_idempotency": (
        "Fine payments through Stripe send amounts in integer cents and use the fine invoice ID as the idempotency key, because kiosk double-taps once charged patrons twice.",
        "idempotency key",
    ),
    "marc_encoding": (
        "Vendor MARC files are converted from MARC-8 to UTF-8 with yaz-marcdump before import, because the legacy ILS export still encodes diacritics in MARC-8.",
        "MARC-8",
    ),
    "fair_queue_flag": (
        "The new hold queue ordering sits behind the flag holds.fair_queue_v2, off in production, because the Eastgate pilot still misorders interlibrary loan requests.",
        "holds.fair_queue_v2",
    ),
    "api_rate_limit": (
        "The public catalogue API allows 60 requests per minute per client IP, because discovery-layer scrapers overloaded the search cluster last March.",
        "60 requests per minute",
    ),
    "staging_db": (
        "Staging restores a nightly masked copy of production onto pg-stage-02, because real patron names and addresses must never leave the production VPC.",
        "pg-stage-02",
    ),
    "sms_quiet_hours": (
        "Hold-ready text messages are only sent between 08:00 and 20:00 in the patron's home branch time, because of complaints about overnight texts and TCPA quiet-hour rules.",
        "08:00 and 20:00",
    ),
    "kiosk_offline_queue": (
        "Kiosks buffer transactions in /var/lib/shelfnet/kiosk/offline.db while the gateway is unreachable and replay them in original order, because branch internet drops several times a week.",
        "/var/lib/shelfnet/kiosk/offline.db",
    ),
    "isbn_normalize": (
        "ISBNs are stored as ISBN-13 digits without hyphens in catalogue.items.isbn13, because merging vendor records on ISBN-10 used to create duplicate bibliographic records.",
        "ISBN-13",
    ),
    "deploy_window": (
        "Production deploys are allowed only Tuesday through Thursday before 14:00 central, because weekend on-call is a single volunteer at the central library.",
        "Tuesday through Thursday",
    ),
    "device_loan_units": (
        "Loan periods in config/branch_policy.yaml are in days for print material but in hours for hotspots and laptops, because device lending is tracked to the hour.",
        "in hours",
    ),
    "licence_cache": (
        "E-book availability from the vendor endpoint is cached in Redis for 90 seconds, because the vendor bills per API call beyond 50,000 calls a day.",
        "90 seconds",
    ),
}

DISTRACTORS = (
    "The branch directory page pulls opening hours from the CMS, so holiday closures are edited there by branch managers rather than in code.",
    "Kiosk screen themes live in kiosk/ui/themes/ and each branch may pick one of four approved color palettes.",
    "The weekly catalogue statistics report is generated on Mondays and emailed to the collection development committee.",
    "Interlibrary loan requests to out-of-state libraries are handled manually by the resource sharing desk, not through the API.",
    "Storybook is used for the patron web components; run npm run storybook inside web/ to preview them.",
    "Cover images are fetched from the Syndetics service and stored in the covers bucket with a seven-day browser cache.",
    "The reading challenge feature was retired in 2022 and its tables were dropped in migration 0142.",
    "Staff accounts authenticate through the county Azure AD tenant, while patrons sign in with card number and PIN.",
    "Grafana dashboards for circulation volume are in ops/dashboards/circulation.json and are provisioned by Terraform.",
    "The mobile app release train is every three weeks and is coordinated by the Patron Experience team.",
    "Branch codes are three uppercase letters, for example CEN for Central and EGT for Eastgate.",
    "Integration tests use the fixtures in tests/fixtures/catalogue_small.json, which contains about 400 bib records.",
    "Donations of physical books are logged in a separate spreadsheet by Friends of the Library volunteers, outside shelfnet.",
    "The print notice fallback for patrons without email is mailed by the county print shop once a week.",
    "Python services use ruff for linting with a line length of 100 characters.",
    "Meeting room bookings are handled by a third-party SaaS product and are not part of the shelfnet repository.",
)

CLAUDE_MD = """# shelfnet
Monorepo for the regional library consortium platform: catalogue, circulation, e-books, fines, kiosks, patron accounts.
- Python services live under services/, the patron web app under web/, kiosk client under kiosk/.
- Run `make test` before pushing; `make lint` runs ruff and eslint.
- Database migrations go in db/migrations/ and must be reversible.
- Keep PRs small and reference the Jira ticket (SHELF-123) in the title.
"""

AGENTS_MD = """- Use `make test` and `make lint` to validate changes.
- Do not edit generated files under web/src/gen/.
- Prefer small, focused commits with descriptive messages.
- Ask before adding new third-party dependencies.
"""

SUMMARY = (
    "Summary: Earlier in this session we cleaned up the Storybook stories for the patron web components "
    "and fixed a flaky snapshot test in web/src/components/BranchCard. We also updated the README section "
    "on running the local docker-compose stack."
)

TURNS = (
    # holds_shelf_expiry
    ("holds_shelf_expiry", "claude",
     "The branch managers want the 'ready for pickup' email to tell people the last day they can collect their item. "
     "Can you add a pickup_deadline field to the notice payload in services/holds/notices.py and compute it from the date the item was trapped? "
     "Eastgate is closed Sundays and Mondays, so think about how that interacts with the date. Add a test too.",
     None),
    ("holds_shelf_expiry", "codex-tool",
     "test_shelf_expiry failing after my refactor, fix expiry calc in holds/shelf.py",
     ("pytest services/holds/tests/test_shelf.py -q",
      "F.\n=================================== FAILURES ===================================\n"
      "_____________________________ test_shelf_expiry ______________________________\n"
      "    def test_shelf_expiry():\n"
      "        hold = make_hold(trapped_at=date(2024, 3, 1), branch='EGT')\n"
      ">       assert shelf_expiry(hold) == date(2024, 3, 8)\n"
      "E       AssertionError: assert datetime.date(2024, 3, 12) == datetime.date(2024, 3, 8)\n"
      "1 failed, 1 passed in 0.41s")),
    # ebook_checkout_timeout
    ("ebook_checkout_timeout", "claude-log",
     "Patrons are reporting the e-book borrow button spins forever at peak times. Here's what we see in the service logs:\n"
     "```\n2024-05-02T19:04:11Z WARN ebooks.vendor overdrive checkout slow title=9780593135204 elapsed=41.8s\n"
     "2024-05-02T19:04:11Z INFO ebooks.api POST /loans 200 42011ms\n"
     "2024-05-02T19:05:02Z WARN ebooks.vendor overdrive checkout slow title=9780063021426 elapsed=38.2s\n```\n"
     "Should I just wrap the vendor call in tenacity with a few retries and a shorter timeout? What's the right setup here?",
     None),
    ("ebook_checkout_timeout", "codex",
     "add retry w/ backoff to overdrive checkout call, vendor flaky",
     None),
    # fine_cap
    ("fine_cap", "claude",
     "Finance asked why a patron with a lost-then-found atlas from 2021 shows $38.50 owed on the kiosk. "
     "I think the accrual loop in fines/accrual.py is just multiplying days by the daily rate. "
     "Can you rework the accrual so it does the right thing and add a regression test with that atlas case?",
     None),
    ("fine_cap", "codex-tool",
     "fix accrual, numbers look off for long overdue items",
     ("python -m fines.cli preview --patron 21234000456781",
      "{\n  \"patron\": \"21234000456781\",\n  \"items\": [\n"
      "    {\"barcode\": \"31234001122334\", \"days_overdue\": 212, \"fine_cents\": 5300},\n"
      "    {\"barcode\": \"31234009988776\", \"days_overdue\": 3, \"fine_cents\": 75}\n  ],\n"
      "  \"total_cents\": 5375\n}")),
    # kiosk_gateway
    ("kiosk_gateway", "claude-tool",
     "The new kiosk build can't load the patron's current loans at the Westfield branch even though it works on my desk. "
     "Can you figure out what's wrong and fix the kiosk config?",
     ("grep -rn 'base_url' kiosk/config/",
      "kiosk/config/default.toml:4:base_url = \"https://circ-api.shelfnet.internal/v2\"\n"
      "kiosk/config/default.toml:11:catalogue_url = \"https://catalogue-api.shelfnet.internal/v1\"\n"
      "kiosk/logs/westfield-k2.log:88:ERROR connect timeout to circ-api.shelfnet.internal:443 after 10s")),
    ("kiosk_gateway", "claude-after-compact",
     "Back to the kiosk work from before the summary: I want the new 'renew all' button on the kiosk to hit the renewals endpoint directly. "
     "Wire it up in kiosk/src/actions/renew.ts and pick the right host.",
     None),
    # due_date_timezone
    ("due_date_timezone", "codex",
     "due dates off by one hour at the denver-side branches, fix in circ/due.py",
     None),
    ("due_date_timezone", "claude-log",
     "Pine Ridge patrons say the printed receipt and the portal disagree about when items are due. Trace from one checkout:\n"
     "```\ncheckout item=31234005566778 branch=PNR receipt_due=2024-06-11T21:00:00-06:00 tz=America/Denver\n"
     "portal item=31234005566778 due_at=2024-06-11T21:00:00-05:00\n"
     "overdue_sweep item=31234005566778 flagged_at=2024-06-11T21:00:02-05:00\n```\n"
     "Which one is right, and how should due_at be computed so they agree?",
     None),
    # patron_barcode_check
    ("patron_barcode_check", "claude",
     "The sign-up form on the patron portal accepts garbage card numbers and then the account lookup fails later. "
     "Please write a validate_card_number helper in services/patrons/validation.py and use it in the registration and login forms. "
     "Keep error messages friendly, and add unit tests with a couple of real-looking cards.",
     None),
    ("patron_barcode_check", "codex-tool",
     "kiosk rejects valid cards now, check validator",
     ("pytest services/patrons/tests/test_validation.py -q",
      "FAILED test_validation.py::test_known_good_card - AssertionError: validate('21234000456781') returned False\n"
      "FAILED test_validation.py::test_typo_card - AssertionError: validate('21234000456782') returned True\n"
      "2 failed, 5 passed in 0.12s")),
    # sip2_checksums
    ("sip2_checksums", "claude-tool",
     "After my cleanup of the SIP2 response builder, the self-check machines at Central just show 'Communication error' and never complete checkouts. "
     "The unit tests pass. Can you find what I broke?",
     ("git diff HEAD~1 -- services/sip2/response.py | head -20",
      "-    msg = f\"{body}AY{seq}AZ\"\n-    return msg + checksum(msg) + \"\\r\"\n"
      "+    # simplify: checksums are optional in the SIP2 spec\n+    return body + \"\\r\"")),
    ("sip2_checksums", "codex",
     "simplify sip2 response builder, drop the optional trailer fields",
     None),
    # search_alias
    ("search_alias", "codex-tool",
     "search returns stale results after last night's reindex, fix",
     ("grep -rn 'index=' services/catalogue/search.py",
      "services/catalogue/search.py:42:    resp = es.search(index=\"catalogue_v6\", body=query)\n"
      "services/catalogue/search.py:77:    resp = es.count(index=\"catalogue_v6\", body=count_q)")),
    ("search_alias", "claude-after-compact",
     "Back to the catalogue search from before the summary. I want to add an autocomplete endpoint in services/catalogue/suggest.py using a completion query. "
     "Please write it, following how the rest of the search code talks to Elasticsearch.",
     None),
    # ebooks_owner
    ("ebooks_owner", "claude",
     "I've finished the change to the e-book hold notification wording in ebooks/notify.py and the tests are green. "
     "Can you open the PR for me and set the reviewers? I'm not sure who usually looks after that area.",
     None),
    ("ebooks_owner", "codex",
     "who do i ask to approve ebooks/ pr",
     None),
    # loan_anonymize
    ("loan_anonymize", "claude",
     "Outreach wants a 'books you borrowed last year' feature for the patron portal, showing every title someone checked out in 2023. "
     "Can you add a query in services/patrons/history.py that pulls this from the database and an endpoint to return it?",
     None),
    ("loan_anonymize", "claude-log",
     "The reading-history export just returns empty lists for most patrons. Here's the SQL log:\n"
     "```\nSELECT item_id, returned_at FROM circ.loan_history WHERE patron_id = 48213 AND returned_at < now() - interval '60 days';\n"
     "(0 rows)\n```\n"
     "Is the export broken or is the data missing somewhere?",
     None),
    # holds_limit
    ("holds_limit", "codex",
     "place_hold should reject when patron has too many holds, add check",
     None),
    ("holds_limit", "claude-after-compact",
     "Back to the holds API from before the summary: a branch reported a patron with 61 pending requests, mostly new bestsellers. "
     "Please add the missing guard in services/holds/api.py and return a clear error the portal can display.",
     None),
    # payment_idempotency
    ("payment_idempotency", "claude-log",
     "A patron at Eastgate was charged twice for the same fine. Kiosk log:\n"
     "```\n14:02:11 kiosk EGT-K1 pay fine=INV-20931 amount=4.75\n"
     "14:02:12 kiosk EGT-K1 pay fine=INV-20931 amount=4.75\n"
     "14:02:13 stripe charge ch_3P1x... succeeded 4.75 USD\n14:02:13 stripe charge ch_3P1y... succeeded 4.75 USD\n```\n"
     "How should I fix the payment call in services/fines/payments.py?",
     None),
    ("payment_idempotency", "claude-tool",
     "I'm rewriting the Stripe call in services/fines/payments.py to use the new SDK. Can you finish it and make sure it behaves like the old one?",
     ("sed -n 30,44p services/fines/payments.py",
      "    def charge(self, invoice, amount):\n"
      "        # TODO(new sdk): port options\n"
      "        return stripe.PaymentIntent.create(\n"
      "            amount=amount,\n"
      "            currency=\"usd\",\n"
      "            customer=invoice.patron.stripe_id,\n"
      "        )")),
    # marc_encoding
    ("marc_encoding", "claude-tool",
     "Titles from the latest vendor load show garbage instead of accents, e.g. Spanish and French titles. Can you fix the import pipeline?",
     ("python -m catalogue.import --dry-run vendor/2024-06-load.mrc | head -3",
      "bib 88231 title='Cien a\\xe2nos de soledad' warn=invalid-utf8\n"
      "bib 88232 title='Les Mis\\xe2erables' warn=invalid-utf8\n"
      "bib 88233 title='El Ni\\xe2no' warn=invalid-utf8")),
    ("marc_encoding", "codex",
     "marc import: just decode as latin-1, kills the unicode errors",
     None),
    # fair_queue_flag
    ("fair_queue_flag", "claude",
     "The Eastgate folks love the new hold queue ordering and asked if we can just make it the default everywhere. "
     "Can you remove the old ordering code in services/holds/queue.py and clean up whatever toggles it?",
     None),
    ("fair_queue_flag", "codex-tool",
     "holds queue ordering differs between staging and prod, why",
     ("diff config/staging/flags.yaml config/prod/flags.yaml",
      "12c12\n< holds.fair_queue_v2: true\n---\n> holds.fair_queue_v2: false")),
    # api_rate_limit
    ("api_rate_limit", "claude-after-compact",
     "Back to the public API gateway config from before the summary. A university partner is asking what throttle applies to their discovery layer. "
     "Can you write the rate-limit section of docs/public-api.md and check it matches the nginx config?",
     None),
    ("api_rate_limit", "codex",
     "bump public api throttle, partner discovery layer getting 429s",
     None),
    # staging_db
    ("staging_db", "claude",
     "I need to reproduce a bug that only happens for one patron's account. "
     "Can you write a script in ops/scripts/ that dumps that patron's rows from the prod database and loads them into my local Postgres? "
     "Staging data would also be fine if that's easier.",
     None),
    ("staging_db", "claude-tool",
     "The staging refresh job failed last night. Can you fix the restore target in the job?",
     ("kubectl logs job/staging-refresh-28611 -n ops | tail -4",
      "masking: 1.2M patrons masked, 0 errors\n"
      "pg_restore: connecting to database on host pg-prod-01 ...\n"
      "pg_restore: error: permission denied for database shelfnet (refusing restore into production)\n"
      "job failed with exit code 1")),
    # sms_quiet_hours
    ("sms_quiet_hours", "claude-log",
     "We got an angry call from a patron who got a 'your hold is ready' text at 2am. Worker log:\n"
     "```\n02:04:55 notify-worker sms sent to=+1612555**** template=hold_ready branch=CEN\n"
     "02:04:55 notify-worker sms sent to=+1651555**** template=hold_ready branch=NOR\n```\n"
     "How should the worker in services/notify/sms.py decide when to send?",
     None),
    ("sms_quiet_hours", "codex-tool",
     "sms batch sends at odd times, check scheduler",
     ("grep -n 'schedule' services/notify/sms.py",
      "18:def schedule(msg):\n19:    # send immediately\n20:    return queue.enqueue(msg, eta=None)")),
    # kiosk_offline_queue
    ("kiosk_offline_queue", "claude-after-compact",
     "Back to the kiosk client from before the summary. When the network drops, checkouts currently just fail with an error. "
     "Can you make the kiosk keep working during outages and sync afterwards? Put the logic in kiosk/src/offline/.",
     None),
    ("kiosk_offline_queue", "codex-tool",
     "kiosk lost checkouts after outage, check sync",
     ("journalctl -u shelfnet-kiosk --since today | tail -4",
      "09:12:03 gateway unreachable, buffering checkout seq=1041\n"
      "09:40:17 gateway back, replaying 37 buffered transactions\n"
      "09:40:17 replay order=random (parallel=8)\n"
      "09:40:18 conflict: checkin seq=1043 before checkout seq=1041 item=31234007766554")),
    # isbn_normalize
    ("isbn_normalize", "codex",
     "vendor ebook feed creating duplicate bibs, fix match in catalogue/merge.py",
     None),
    ("isbn_normalize", "claude-tool",
     "Lookups by ISBN from the acquisitions team miss titles we definitely own. Can you fix the lookup in services/catalogue/isbn.py?",
     ("psql -c \"select isbn13 from catalogue.items where title ilike 'the overstory%'\"",
      "    isbn13\n---------------\n 9780393635522\n(1 row)\n\n"
      "acq lookup query: isbn='0-393-63552-X' -> 0 rows")),
    # deploy_window
    ("deploy_window", "claude",
     "The fines fix is merged and it's Friday afternoon, so I'd like to get it out before the weekend since patrons keep complaining. "
     "Can you kick off the production deploy with the usual make target and watch the rollout?",
     None),
    ("deploy_window", "claude-tool",
     "Can you set up the GitHub Actions workflow so production deploys run automatically when a release tag is pushed?",
     ("cat .github/workflows/deploy.yml | head -12",
      "name: deploy\non:\n  workflow_dispatch:\njobs:\n  prod:\n    runs-on: ubuntu-latest\n"
      "    environment: production\n    steps:\n      - uses: actions/checkout@v4\n      - run: make deploy ENV=prod")),
    # device_loan_units
    ("device_loan_units", "codex",
     "set laptop loan period to 1 week in branch_policy.yaml",
     None),
    ("device_loan_units", "claude-log",
     "Hotspots checked out this morning at Central are already showing as overdue. I changed their loan period to 7 last week. From the circ service:\n"
     "```\ncheckout item=HS-0042 type=hotspot loan_period=7 out_at=2024-07-02T10:00:00-05:00 due_at=2024-07-02T17:00:00-05:00\n"
     "overdue_sweep item=HS-0042 flagged_at=2024-07-02T17:00:05-05:00\n```\n"
     "What's going on with the loan period handling?",
     None),
    # licence_cache
    ("licence_cache", "codex-tool",
     "vendor invoice way up this month, check availability calls",
     ("grep -c 'GET /availability' logs/ebooks-2024-06-*.log | tail -3",
      "logs/ebooks-2024-06-28.log:183422\nlogs/ebooks-2024-06-29.log:176905\nlogs/ebooks-2024-06-30.log:190311")),
    ("licence_cache", "claude",
     "The e-book detail page shows 'available' but then checkout says no copies left. "
     "I'd like the availability badge in services/ebooks/availability.py to be fresher, maybe skip the cache entirely. "
     "Can you make that change and update the tests?",
     None),
)

NULL_TURNS = (
    ("claude",
     "Can you rename the helper format_branch_name to display_branch_name in services/common/branches.py and update all call sites? "
     "It's only used in a handful of places.",
     None),
    ("codex", "fix typo 'recieved' in holds notice template", None),
    ("codex-tool", "lint failing on patrons module, fix",
     ("ruff check services/patrons",
      "services/patrons/views.py:12:1: F401 [*] `datetime.timezone` imported but unused\n"
      "services/patrons/views.py:88:101: E501 Line too long (112 > 100)\nFound 2 errors.")),
    ("claude",
     "The README's 'Getting started' section is confusing. Please reword it so a new developer can follow the steps, "
     "and move the docker-compose notes into their own subsection.",
     None),
    ("claude-tool",
     "Please write unit tests for the pure helper slugify_title in services/catalogue/text.py; it currently has none.",
     ("sed -n 1,12p services/catalogue/text.py",
      "import re\nimport unicodedata\n\n\ndef slugify_title(title: str) -> str:\n"
      "    t = unicodedata.normalize(\"NFKD\", title).encode(\"ascii\", \"ignore\").decode()\n"
      "    t = re.sub(r\"[^a-zA-Z0-9]+\", \"-\", t).strip(\"-\").lower()\n    return t")),
    ("codex", "bump pytest to 8.2 in requirements-dev.txt", None),
    ("claude",
     "Please run the formatter over web/src/components and commit the result separately from my feature work, so the diff stays readable.",
     None),
    ("codex-tool", "mypy complaining in kiosk sync types, fix",
     ("mypy services/kiosk_sync",
      "services/kiosk_sync/models.py:23: error: Missing return statement  [return]\nFound 1 error in 1 file")),
    ("claude",
     "Add a docstring to every public function in services/common/dates.py explaining the parameters. Don't change behaviour.",
     None),
    ("claude-log",
     "The CI job failed with this, can you fix it?\n```\nModuleNotFoundError: No module named 'freezegun'\n"
     "  File \"tests/test_dates.py\", line 3, in <module>\n```",
     None),
    ("codex", "sort imports in services/fines/*.py", None),
    ("claude-tool",
     "The CHANGELOG has the last two entries in the wrong order. Can you fix it?",
     ("head -8 CHANGELOG.md",
      "# Changelog\n\n## 2.14.0 - 2024-05-02\n- Kiosk theme picker\n\n## 2.15.0 - 2024-06-10\n- Holds API pagination\n")),
)
