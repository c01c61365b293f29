"""Held-out turns (seventh half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 01:51 UTC: 0.850 hit, 0.288 false over 52 turns); development
material since."""
from __future__ import annotations

PROJECT = "coursehub"

FACTS = {
    "waitlist_port": ("The Go waitlist service listens on port 8743 in every environment; Django calls it via WAITLIST_URL.", "8743"),
    "sftp_host": ("Grade export uploads to the registrar SFTP host sftp.reg.uni-west.edu under /inbound/grades, user chub_export.", "sftp.reg.uni-west.edu"),
    "export_schedule": ("The grade export Celery beat job runs at 02:15 America/Chicago nightly; during finals week it also runs at 14:15.", "02:15 America/Chicago"),
    "saml_skew": ("SAML assertions are accepted with a clock skew tolerance of 90 seconds (SAML_ALLOWED_SKEW=90).", "SAML_ALLOWED_SKEW=90"),
    "lti_owner": ("The LTI 1.3 integration is owned by Priya Raman; ask her before touching the deep-linking flow.", "Priya Raman"),
    "redis_db": ("Celery broker uses Redis db 3; the Django cache uses db 1; never flush db 3 in staging during registration windows.", "Redis db 3"),
    "pg_pool": ("PgBouncer runs in transaction mode with default_pool_size=40 for the coursehub database.", "default_pool_size=40"),
    "flaky_test": ("test_waitlist_promotion_race in tests/registration/test_waitlist.py is known flaky under CI parallelism; it is quarantined with @pytest.mark.flaky(reruns=3).", "test_waitlist_promotion_race"),
    "seat_hold": ("A seat offered from the waitlist is held for 36 hours before it rolls to the next student.", "36 hours"),
    "credit_cap": ("Undergraduates are capped at 19 credit hours per term unless an advisor override flag is set.", "19 credit hours"),
    "branch_naming": ("Branches must be named chub-<ticket>-<slug>, e.g. chub-412-fix-roster; CI rejects other names.", "chub-<ticket>-<slug>"),
    "vue_node": ("The Vue front end builds with Node 18.19 pinned in .nvmrc; Node 20 breaks the vite-plugin-legacy step.", "Node 18.19"),
    "ci_runner": ("Heavy GitLab CI jobs run on the runner tagged chub-large; the shared runners time out at 60 minutes.", "chub-large"),
    "grade_rounding": ("Final grades are rounded half-up to one decimal before letter mapping; the decision was made with the registrar in spring.", "rounded half-up to one decimal"),
    "lti_kid_rotation": ("The LTI tool's JWKS signing key rotates on the first Monday of each month; the old kid is kept for 7 days.", "first Monday of each month"),
    "registration_freeze": ("Deploys are frozen from 72 hours before until 24 hours after each registration opening.", "72 hours before"),
    "env_var_feature": ("The new drop/add UI is behind the env var CHUB_FF_DROPADD_V2.", "CHUB_FF_DROPADD_V2"),
    "sftp_key_path": ("The export worker reads its SFTP private key from /etc/coursehub/keys/registrar_ed25519, mounted from Vault.", "registrar_ed25519"),
    "waitlist_batch": ("The waitlist promoter processes at most 250 promotions per tick, and ticks every 20 seconds.", "250 promotions per tick"),
    "db_host": ("Production PostgreSQL primary is pg-chub-01.db.internal; read replicas are pg-chub-02 and pg-chub-03.", "pg-chub-01.db.internal"),
}

DISTRACTORS = (
    "The waitlist service is written in Go and was split out of the Django monolith two years ago.",
    "Grade export files are CSV with a header row; the registrar asked for UTF-8 without BOM.",
    "Celery workers are deployed as a separate Kubernetes deployment named coursehub-worker.",
    "SAML metadata for the IdP is refreshed by a management command.",
    "The LTI integration supports names-and-roles provisioning for roster sync.",
    "Redis is also used for rate limiting the public course search endpoint.",
    "PostgreSQL is on version 15 and backups are taken by the platform team.",
    "The Vue front end uses Pinia for state and Vitest for unit tests.",
    "GitLab CI pipelines run lint, unit tests, and a migration check on every merge request.",
    "Waitlist positions are shown to students on the course detail page.",
    "Instructors can submit grades in the grading grid or upload a spreadsheet.",
    "Advisor overrides are audited in the registration_override table.",
    "The registrar sometimes rejects files with duplicate student IDs.",
    "Feature flags in coursehub are read at process start.",
    "The SFTP upload step retries on connection reset.",
    "Flaky tests should be reported in the #chub-ci channel.",
)

CLAUDE_MD = """# coursehub rules
- Run `make test` before proposing a commit.
- Never edit migrations that have shipped; add a new one.
- Keep Django views thin; put logic in services/.
"""

AGENTS_MD = """# AGENTS.md
- Go code in waitlist/ must pass `golangci-lint run`.
- Vue components use <script setup> and TypeScript.
- Do not commit .env files.
"""

SUMMARY = """Summary:
1. Primary request: Rename the `Section.meeting_pattern` field to `schedule_pattern` across models, serializers and the Vue timetable.
2. Done: model rename + migration 0087, serializer updated, timetable component updated, tests green.
3. Pending: update the API changelog and notify the mobile team."""

TURNS = (
    ("waitlist_port", "claude", "I'm writing a docker-compose override for local dev so django can reach the waitlist service. what port should the waitlist container expose? also keep the postgres service as is.", None),
    ("waitlist_port", "codex-tool", "health check for waitlist keeps failing, what's wrong", ("curl -s localhost:8080/healthz", "curl: (7) Failed to connect to localhost port 8080: Connection refused")),
    ("sftp_host", "claude", "The grade export task in coursehub/grading/export.py has the registrar hostname hardcoded as a placeholder 'TODO_HOST'. Can you fill in the real host and move it into settings/base.py as REGISTRAR_SFTP_HOST?", None),
    ("sftp_host", "claude-log", "export failed overnight, where is it even supposed to connect?\n\n[2026-12-04 02:15:07] ERROR grading.export: paramiko.ssh_exception.NoValidConnectionsError: [Errno None] Unable to connect to port 22 on 10.20.4.17", None),
    ("export_schedule", "codex", "when does the nightly grade export run? need to schedule a maintenance window around it", None),
    ("export_schedule", "claude-after-compact", "Ok next thing: add the celery beat entry for the grade export to config/celery_beat.py. It's currently missing after the refactor. Use crontab() with the right time and timezone.", None),
    ("saml_skew", "claude-log", "Students at the med campus are getting bounced at login. Here's the trace:\n\nsaml2.response.ResponseLifetimeExceed: Can't use response, too old (now=1733531200 + slack < notOnOrAfter)\n\nWhat's our configured tolerance, and should we raise it?", None),
    ("saml_skew", "claude", "writing docs for the SSO setup page — how much clock drift do we tolerate on SAML assertions?", None),
    ("lti_owner", "claude", "I want to refactor the LTI deep linking view (lti/views/deep_link.py) to use the new service layer. Anyone I should loop in first?", None),
    ("lti_owner", "codex", "who owns the lti integration", None),
    ("redis_db", "codex-tool", "staging celery tasks vanished after I ran this, did I break something?", ("redis-cli -h redis-staging -n 3 FLUSHDB", "OK")),
    ("redis_db", "claude", "Setting up CELERY_BROKER_URL in settings/staging.py — which redis database index do we use for the broker vs the cache?", None),
    ("pg_pool", "claude-log", "Getting this during the registration rush, what's our pool size and mode on pgbouncer?\n\nFATAL:  no more connections allowed (max_client_conn)\nWARNING pooler error: server login has been failing", None),
    ("pg_pool", "codex", "django CONN_MAX_AGE with pgbouncer, do we use session or transaction pooling here? and how big is the pool", None),
    ("flaky_test", "claude-tool", "CI failed on my MR, is this one of the known flaky ones or did I break it?", ("pytest tests/registration -x", "FAILED tests/registration/test_waitlist.py::TestPromotion::test_promotion_race - AssertionError: expected 1 promoted, got 2")),
    ("flaky_test", "codex", "which test in the waitlist suite is known to be flaky in ci?", None),
    ("seat_hold", "claude", "Product wants the email to students say how long they have to accept a waitlist offer. Update templates/email/waitlist_offer.html with the actual window — don't make up a number.", None),
    ("seat_hold", "codex", "how long does a student have to claim a seat offered from the waitlist before it moves on", None),
    ("credit_cap", "claude", "Add validation in registration/services/enroll.py so an undergrad can't exceed the max credit load for a term (respect the advisor override). What's the cap?", None),
    ("credit_cap", "claude-tool", "a student got blocked registering, is this right?", ("./manage.py shell -c \"print(load_for('s1234567', '2027SP'))\"", "current=17 requested=3 total=20 -> BLOCKED (override=False)")),
    ("branch_naming", "codex-tool", "pipeline rejected my branch name, what's the convention?", ("git push -u origin fix/roster-export", "remote: GitLab: Branch name 'fix/roster-export' does not match the required pattern.")),
    ("branch_naming", "claude", "create a branch for ticket 588 (roster sync drops TAs) and start on the fix in lti/roster.py", None),
    ("vue_node", "claude-log", "frontend build is broken on my laptop:\n\n[vite-plugin-legacy] TypeError: Cannot read properties of undefined (reading 'modernPolyfills')\n    at node_modules/@vitejs/plugin-legacy/dist/index.mjs:412\nnode -v => v20.11.0\n\nany ideas?", None),
    ("vue_node", "codex", "what node version does the vue app need", None),
    ("ci_runner", "claude-tool", "the migration check job keeps getting killed, how do I fix it in .gitlab-ci.yml?", ("gitlab-ci job #88213 migration-check", "ERROR: Job failed: execution took longer than 1h0m0s seconds")),
    ("ci_runner", "codex", "which runner tag for the heavy integration tests job", None),
    ("grade_rounding", "claude", "An instructor says a student with 89.95 got a B+ instead of an A-. Look at grading/letters.py and tell me whether that's consistent with how we agreed to round final grades.", None),
    ("grade_rounding", "claude-after-compact", "now write the unit tests for grading/letters.py covering the rounding boundary cases before letter mapping", None),
    ("lti_kid_rotation", "claude-log", "LMS launches started failing this morning:\n\nlti.errors.InvalidJWT: no key found for kid 'chub-2026-11'\n\nWhen do we rotate keys and how long do we keep the old one?", None),
    ("lti_kid_rotation", "codex", "when is the next lti jwks key rotation?", None),
    ("registration_freeze", "claude", "Spring registration opens Tuesday at 7am. I'd like to ship the roster fix Monday afternoon — is that allowed under our deploy policy?", None),
    ("registration_freeze", "codex", "deploy freeze rules around registration?", None),
    ("env_var_feature", "claude", "QA can't see the new drop/add screen on staging. How do we turn it on? Check frontend/src/views/DropAdd.vue and the settings module.", None),
    ("env_var_feature", "codex-tool", "new drop add page not showing", ("kubectl -n chub-staging exec deploy/coursehub-web -- env | grep CHUB_FF", "CHUB_FF_TRANSCRIPT_PDF=1")),
    ("sftp_key_path", "claude-tool", "export worker can't authenticate to the registrar, where should the key be?", ("kubectl -n chub-prod logs deploy/coursehub-worker | tail -2", "paramiko.ssh_exception.SSHException: private key file not found\nAuthenticationException: Authentication failed.")),
    ("sftp_key_path", "codex", "path of the private key the grade export uses for sftp?", None),
    ("waitlist_batch", "claude", "During registration the waitlist drains too slowly per the dashboard. What's the promoter's per-tick limit and interval? The config is somewhere in waitlist/internal/promoter.", None),
    ("waitlist_batch", "codex-tool", "is the promoter throttled?", ("kubectl logs deploy/waitlist | grep tick | tail -3", "tick promoted=250 pending=4120\ntick promoted=250 pending=3870\ntick promoted=250 pending=3620")),
    ("db_host", "codex", "hostname of the prod postgres primary?", None),
    ("db_host", "claude-log", "I need to run a read-only report query, which host should I point psql at? Last attempt:\n\npsql: error: connection to server at \"pg-chub.db.internal\" failed: Name or service not known", None),
)

NULL_TURNS = (
    ("claude", "Rename the `get_section` helper in registration/services/lookup.py to `fetch_section` and update callers.", None),
    ("codex", "add a docstring to waitlist/internal/queue/queue.go explaining the Push method", None),
    ("claude", "The Vue course search component re-renders on every keystroke. Add a 300ms debounce.", None),
    ("claude-tool", "fix this lint error please", ("ruff check coursehub/grading", "coursehub/grading/export.py:14:1: F401 'os' imported but unused")),
    ("codex", "write a migration adding an index on enrollment(student_id, term)", None),
    ("claude", "Explain what the Celery `acks_late` option does and whether it matters for idempotent tasks.", None),
    ("claude-after-compact", "Go ahead and update the API changelog for the schedule_pattern rename.", None),
    ("codex-tool", "tests pass? summarize", ("go test ./waitlist/...", "ok  \tcoursehub/waitlist/internal/queue\t0.412s\nok  \tcoursehub/waitlist/internal/api\t0.733s")),
    ("claude", "Convert the LTI launch view from a function view to a class-based view, no behavior change.", None),
    ("claude-log", "what does this Django warning mean?\n\nRemovedInDjango51Warning: The USE_L10N setting is deprecated.", None),
    ("codex", "sort the imports in coursehub/sso/saml.py", None),
    ("claude", "Add a Vitest test for the GradeGrid component checking that empty cells render as a dash.", None),
)
