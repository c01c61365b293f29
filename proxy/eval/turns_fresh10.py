"""Held-out turns (tenth half): written without reading recall's code, rules or results.

Scored once sealed (2026-12-07 06:20 UTC: 0.818 hit, 0.214 false over 56 turns); development
material since."""
from __future__ import annotations

PROJECT = "encore"

FACTS = {
    "seat_hold_ttl": (
        "Seat holds in services/holds expire after 8 minutes and must not be lengthened, because the Adyen 3DS session lives 10 minutes and a hold has to lapse before the payment session does, or we charge for released seats.",
        "lapse before the payment session",
    ),
    "waitroom_token_ttl": (
        "The waiting-room admission token is an ES256 JWT valid for 180 seconds; the edge worker rejects older tokens so queue positions sold on Telegram expire before a scalper can redeem them.",
        "valid for 180 seconds",
    ),
    "waitroom_release_rate": (
        "The waitroom releases fans at a fixed 400 per minute per event shard (config/waitroom/rates.yaml) because inventory row locks in Postgres start timing out above roughly 450 checkouts a minute.",
        "400 per minute per event shard",
    ),
    "qr_rotation_window": (
        "Rotating QR tickets refresh every 15 seconds from a per-ticket TOTP seed, and scanners accept only the previous and next window, which is what makes screenshot resale fail at the gate.",
        "previous and next window",
    ),
    "scanner_offline_grace": (
        "The Android scanner app syncs its offline SQLite allowlist every 60 seconds and keeps admitting for up to 20 minutes offline, because stadium Wi-Fi collapses during ingress peaks; after that it refuses entry.",
        "20 minutes offline",
    ),
    "psp_idempotency": (
        "Every Adyen payments call must carry an Idempotency-Key built from order_id plus attempt number; blind retries after a 502 once double-charged 340 fans during the Marlow Arena on-sale.",
        "double-charged 340 fans",
    ),
    "resale_price_cap": (
        "Resale listings for IE and UK events are capped at 110 percent of face value plus original fees by law, and the cap is enforced server-side in resale/pricing/caps.go, never only in the web form.",
        "110 percent of face value",
    ),
    "promoter_payout_delay": (
        "Promoter payouts are released T+5 business days after the event ends, never earlier, because cancellation chargebacks cluster in the first week and we once paid out a show that was cancelled the next day.",
        "T+5 business days after the event",
    ),
    "bot_score_challenge": (
        "Checkouts whose fraudscore bot score is above 0.82 get an hCaptcha challenge instead of a hard block, because blocking at 0.7 rejected about 4 percent of real fans behind mobile carrier NAT.",
        "above 0.82",
    ),
    "ticket_limit_by_phone": (
        "Per-event purchase limits are counted per verified phone number, not per account or email, because bots farm accounts; the counter is the Redis key limit:{event}:{phone_hash} in services/limits.",
        "per verified phone number",
    ),
    "sms_sender_pools": (
        "Transactional SMS use the Twilio messaging service on our registered 10DLC campaign, and marketing texts must go through the separate sender pool, otherwise carriers throttle ticket-delivery codes as well.",
        "separate sender pool",
    ),
    "email_suppression": (
        "The notifications service checks the SES suppression list before every send and hard-bounced addresses stay suppressed for 90 days; ticket delivery is not exempt, those fans get an app push instead.",
        "stay suppressed for 90 days",
    ),
    "seatmap_index": (
        "Seat maps ship as SVG plus a JSON index keyed section-row-seat, and web/seatmap must only read the index at runtime; parsing the SVG took over 2 seconds on 60k-seat stadiums.",
        "keyed section-row-seat",
    ),
    "inventory_partitions": (
        "Seat inventory in Postgres is partitioned one partition per event_id and partitions are detached 30 days after the event, so hot-path queries must always filter on event_id and never scan across partitions.",
        "detached 30 days after the event",
    ),
    "order_events_key": (
        "The order-events Kafka topic is keyed by order_id so each order's status transitions stay ordered; keying by event_id once made a hot partition and delivered refunds before their captures.",
        "delivered refunds before their captures",
    ),
    "refund_original_method": (
        "Refunds only go back to the original payment method through an Adyen refund on the PSP reference; paying a refund to a different card or bank account requires finance approval in the back office and has no API.",
        "has no API",
    ),
    "event_time_storage": (
        "Event start times are stored as venue-local wall time plus an IANA zone id rather than UTC, because promoters reschedule across DST changes; conversion happens only at render time.",
        "venue-local wall time",
    ),
    "onsale_soak_test": (
        "Before every major on-sale the k6 soak test loadtest/onsale.js must pass at 3x expected peak against staging-east; the one time it was skipped preceded the 41-minute checkout outage in March.",
        "3x expected peak",
    ),
    "flag_snapshot_lag": (
        "Checkout pods read LaunchDarkly flags from a local snapshot refreshed every 30 seconds, so a flag flip or kill switch can take up to half a minute to reach checkout.",
        "up to half a minute",
    ),
    "migrations_expand_contract": (
        "Migrations in db/migrations must stay backward compatible for one release (expand then contract) because checkout pods take about 25 minutes to roll and old pods keep writing during the deploy.",
        "expand then contract",
    ),
    "pdf_ticket_scope": (
        "Static-barcode PDF tickets are only rendered by the ticket-pdf worker for venues flagged legacy_scanner; every other venue is mobile-only rotating QR, so PDF download must not be offered globally.",
        "flagged legacy_scanner",
    ),
    "money_minor_units": (
        "Money is stored as integer minor units with an ISO currency column, and JPY and KRW have zero decimals, so never divide by 100 blindly; use money.MinorUnits(currency) from pkg/money.",
        "never divide by 100 blindly",
    ),
}

DISTRACTORS = (
    "The holds service takes multi-seat holds atomically with a single Redis Lua script, scripts/hold_many.lua, so a party of six never ends up with four seats.",
    "The waiting-room page is plain static HTML served from CloudFront with no JavaScript framework, so it survives a million concurrent fans on the CDN alone.",
    "QR codes on mobile tickets are rendered at error-correction level M with a 4-module quiet zone, which scanned best on the Zebra TC52 devices.",
    "The scanner app's minimum supported Android version is 10, matching the Zebra and Honeywell handhelds most venues lease.",
    "New resale listings appear in search only after a five-minute moderation delay so the fraud team can pull obviously stolen tickets.",
    "Promoter monthly statements are generated as CSV and PDF on the first calendar day of the month by the statements job in services/payouts.",
    "The fraudscore model is retrained every Sunday night on the previous four weeks of labelled checkouts and promoted only if AUC does not drop.",
    "Transactional email is sent from tickets@mail.encore.live with DKIM and a dedicated SES configuration set called txn-prod.",
    "Venue operations edit seat maps in a separate React app, web/venue-studio, which exports the SVG and the seat index together.",
    "Retention on the order-events Kafka topic is 14 days; anything older is read from the orders table in Postgres instead.",
    "k6 soak results are pushed to the Grafana dashboard 'onsale-soak' and kept for a year for post-mortems.",
    "Our LaunchDarkly project key is encore and environments are named dev, staging-east and prod.",
    "Database migrations are run with goose from the migrate job in the deploy pipeline, never by hand from a laptop.",
    "Wheelchair-accessible and companion seats carry the attribute access=true in the seat index and are excluded from best-available search.",
    "Prices in the web app are formatted with Intl.NumberFormat using the fan's locale but the event's currency.",
    "Resale sellers are paid out via Stripe Connect Express accounts, separate from the Adyen flow used for primary sales.",
)

CLAUDE_MD = """# encore
- Go services live under services/, the web app under web/, the scanner app under apps/scanner-android.
- Run `make check` before proposing a commit; it runs gofmt, golangci-lint, eslint and unit tests.
- Never log full card data, PSP tokens or phone numbers; use the redact helpers in pkg/logx.
- Anything touching checkout, holds or payments needs a reviewer from the payments team."""

AGENTS_MD = """# AGENTS.md
- Layout: services/* (Go 1.22), web/* (Next.js + TypeScript), apps/scanner-android (Kotlin), infra/ (Terraform, AWS).
- Tests: `go test ./...` per service, `pnpm test` in web/, `./gradlew test` for the scanner.
- Deps: add Go modules with `go get` and commit go.sum; web deps via pnpm only, no npm or yarn lockfiles.
- Commits: conventional style, e.g. `fix(holds): ...`, one logical change per commit."""

SUMMARY = """Summary:
1. Primary request: harden the checkout flow for the Lumen Festival on-sale next Friday (about 220k fans expected in the waitroom).
2. Done: added tracing spans to services/checkout, fixed the seat-map tooltip overlap in web/seatmap, wrote a runbook draft in docs/runbooks/lumen.md.
3. Pending: review the hold/payment timing, check the queue release settings, confirm the load test plan, and look at the resale and payout settings for the festival promoter."""

TURNS = (
    # seat_hold_ttl
    ("seat_hold_ttl", "claude", "Fans keep complaining that their seats vanish while they're still typing card details, especially on the 3DS bank screen. I'm planning to bump HOLD_DURATION in services/holds/config.go from 8 to 20 minutes so nobody loses seats mid-payment. Can you make that change and update the test in holds_test.go?", None),
    ("seat_hold_ttl", "codex-tool", "why do holds drop so fast, can we extend", ("grep -rn 'HoldTTL' services/holds/", "services/holds/config.go:14:\tHoldTTL = 8 * time.Minute // see payments timing\nservices/holds/hold.go:52:\texpiresAt := now.Add(cfg.HoldTTL)\nservices/holds/hold_test.go:31:\tassert.Equal(t, 8*time.Minute, cfg.HoldTTL)")),
    # waitroom_token_ttl
    ("waitroom_token_ttl", "claude-log", "Users who got through the queue and then went to grab a coffee are bounced back to the end of the line. Here's the edge worker log, can we just make the admission token last an hour?\n\n2024-05-11T10:04:22Z WARN edge/admit reject token: exp exceeded (iat=1715421662 now=1715421862) shard=evt-88213-3 ua=Mobile Safari\n2024-05-11T10:04:22Z INFO edge/admit redirect -> /waitroom?e=88213", None),
    ("waitroom_token_ttl", "codex", "admission jwt exp too short? bump to 1h in edge/admit.ts", None),
    # waitroom_release_rate
    ("waitroom_release_rate", "claude", "The queue for Lumen Festival will have around 220k people and at the current pace the tail waits over an hour. I'd like to raise the drain speed in the waitroom to something like 2000 a minute per shard so it clears faster. Where is that configured and is there any reason not to?", None),
    ("waitroom_release_rate", "codex-tool", "can we let more ppl thru per shard", ("cat config/waitroom/rates.yaml", "default:\n  release_per_minute: 400\n  shards_per_event: 8\noverrides:\n  evt-77120:\n    shards_per_event: 16\n")),
    # qr_rotation_window
    ("qr_rotation_window", "claude-log", "Gate staff at Harbor Dome say some tickets scan red even though the fan's phone clock is only a couple minutes off. Scanner log below. Should I widen the accepted drift to like ±5 minutes so phones with bad clocks still work?\n\nE/TotpVerifier: code mismatch ticket=T-9F31C2 step=114298771 acceptedSteps=[114298770,114298771,114298772] presented=114298763\nI/GateResult: DENY reason=STALE_CODE gate=N4", None),
    ("qr_rotation_window", "claude-after-compact", "Back to the barcode thing from before the summary: how many time steps does the scanner tolerate for the rotating code, and would loosening it have any downside for resale?", None),
    # scanner_offline_grace
    ("scanner_offline_grace", "codex", "scanner refuses entry after wifi drop ~20min, make offline mode unlimited?", None),
    ("scanner_offline_grace", "claude-tool", "The scanners at Northfield Stadium stopped admitting during last night's show; I pulled this from one device.", ("adb logcat -d | grep -i Allowlist", "I/AllowlistSync: last successful sync 2024-06-02T19:41:03Z\nW/AllowlistSync: sync failed: UnknownHostException api.encore.live\nW/OfflineGuard: offline for 00:19:58\nE/OfflineGuard: offline limit reached, admission disabled until sync")),
    # psp_idempotency
    ("psp_idempotency", "claude", "I'm rewriting the retry wrapper in services/payments/adyen/client.go to use our generic backoff package. The generic one just replays the same HTTP request up to three times on 5xx. Anything I need to keep from the old code before I delete it?", None),
    ("psp_idempotency", "codex-tool", "simplify adyen retry", ("git diff --stat HEAD~1 -- services/payments", " services/payments/adyen/client.go | 48 +++-------\n services/payments/adyen/keys.go   | 31 -------\n 2 files changed, 12 insertions(+), 67 deletions(-)")),
    # resale_price_cap
    ("resale_price_cap", "claude", "Product wants sellers on the resale marketplace to set any price for the Dublin shows and let the market decide; the UI max-price field in web/resale/ListForm.tsx is the only thing stopping them. I'll remove the max attribute there. Anything else to change?", None),
    ("resale_price_cap", "codex-tool", "where is listing price max checked", ("rg -n 'MaxListPrice' --type go", "resale/pricing/caps.go:22:func MaxListPrice(t Ticket, market string) money.Amount {\nresale/pricing/caps.go:29:\t\treturn t.Face.MulPercent(110).Add(t.Fees)\nresale/api/listings.go:88:\tif req.Price.GT(pricing.MaxListPrice(t, ev.Market)) {")),
    # promoter_payout_delay
    ("promoter_payout_delay", "claude-after-compact", "Following up on the festival promoter item from the pending list: they're asking to get paid the morning after the last day instead of waiting. Can we just change the payout schedule for them?", None),
    ("promoter_payout_delay", "codex", "promoter wants same-day settlement, change payouts cron to run at event end", None),
    # bot_score_challenge
    ("bot_score_challenge", "claude-log", "We got hammered by bots on the last drop. The fraud dashboard export shows lots of checkouts getting through with a captcha solve. I want to block everything at 0.6 outright.\n\nscore_bucket  checkouts  action     solved\n0.60-0.70     18211      allow      -\n0.70-0.82     9120       allow      -\n0.82-0.95     4402       challenge  3110\n0.95-1.00     2290       challenge  201", None),
    ("bot_score_challenge", "codex-tool", "tighten bot gate", ("grep -n 'Threshold' services/fraudscore/policy.go", "12:const ChallengeThreshold = 0.82\n13:// hard block removed, see INC-2231 (carrier NAT false positives)\n27:\tif s.Bot > ChallengeThreshold { return ActionChallenge }")),
    # ticket_limit_by_phone
    ("ticket_limit_by_phone", "claude", "The 'max 4 tickets per fan' rule seems leaky: someone bought 16 for Harbor Dome using four accounts. I'm going to add a per-email check in services/limits/check.go on top of the account check. Does that sound right?", None),
    ("ticket_limit_by_phone", "claude-tool", "Trying to understand how the purchase cap is counted.", ("redis-cli --scan --pattern 'limit:88213:*' | head -3", "limit:88213:9c1e0f4a7b2d\nlimit:88213:31aa88d0c6e5\nlimit:88213:e07b4412f9a3")),
    # sms_sender_pools
    ("sms_sender_pools", "codex", "marketing wants promo sms for lumen, reuse TWILIO_MSG_SERVICE_SID from notifications", None),
    ("sms_sender_pools", "claude-log", "Ticket delivery codes stopped arriving for a chunk of T-Mobile users yesterday afternoon, right when the presale promo blast went out. What's going on?\n\n2024-06-04T15:02:11Z notifications sms send failed to=+1***4410 code=30007 msg='Message filtered' service=MG8f2...\n2024-06-04T15:02:11Z notifications sms send failed to=+1***0923 code=30007 msg='Message filtered' service=MG8f2...", None),
    # email_suppression
    ("email_suppression", "claude", "A fan says she never got her tickets by email; support found her address on the SES bounce list from an old typo she since fixed. I'd like to add a bypass so ticket-delivery emails skip the suppression check entirely, since they're essential. Where would that go in services/notifications?", None),
    ("email_suppression", "codex-tool", "why no email for this user", ("aws sesv2 get-suppressed-destination --email-address m.okafor@example.com", "{\n    \"SuppressedDestination\": {\n        \"EmailAddress\": \"m.okafor@example.com\",\n        \"Reason\": \"BOUNCE\",\n        \"LastUpdateTime\": \"2024-04-19T08:12:44Z\"\n    }\n}")),
    # seatmap_index
    ("seatmap_index", "claude", "For the new 'view from seat' hover in web/seatmap I need each seat's coordinates. The easiest path looks like loading the venue SVG with DOMParser and reading the circle elements' cx/cy when the map mounts. Can you sketch that in SeatMap.tsx?", None),
    ("seatmap_index", "claude-after-compact", "Going back to the seat-map perf issue we discussed: the stadium map for Northfield takes ages to become interactive. What is the renderer supposed to read on load?", None),
    # inventory_partitions
    ("inventory_partitions", "codex", "add query: all unsold seats across every event for the ops dashboard, put in inventory/repo.go", None),
    ("inventory_partitions", "claude-tool", "Someone asked why last summer's Harbor Dome seats aren't in the inventory table anymore.", ("psql -c \"\\d+ seat_inventory\" | tail -4", "Partition key: LIST (event_id)\nPartitions: seat_inventory_e91022 FOR VALUES IN (91022),\n            seat_inventory_e91023 FOR VALUES IN (91023)\nNumber of partitions: 412 (Use \\d+ to list them.)")),
    # order_events_key
    ("order_events_key", "claude", "The order-events consumer lag is uneven, a few partitions do all the work. I was thinking of switching the producer in services/orders/publish.go to key by event_id so all orders for one show land together, which would make the per-event analytics consumer simpler. OK to do?", None),
    ("order_events_key", "claude-log", "Our reconciliation job flagged this sequence for one order, how can a refund come before the capture?\n\noffset=88120112 partition=7 order=O-55e1 type=REFUNDED ts=2024-03-02T11:00:04.201Z\noffset=88120119 partition=3 order=O-55e1 type=CAPTURED ts=2024-03-02T11:00:03.980Z", None),
    # refund_original_method
    ("refund_original_method", "codex", "add endpoint refund to new iban, customer closed old card", None),
    ("refund_original_method", "claude", "Support wants a button in the back office to refund a fan onto a different card when the original one has expired. I'm planning to call Adyen's payout API from services/refunds with the new card details. Can you wire that up?", None),
    # event_time_storage
    ("event_time_storage", "claude-tool", "The migration I'm writing will convert starts_at to timestamptz UTC. Sanity check the column first.", ("psql -c \"select id, starts_local, zone_id from events where id=88213\"", "  id   |     starts_local     |     zone_id\n-------+---------------------+------------------\n 88213 | 2024-10-27 20:00:00 | Europe/London\n(1 row)")),
    ("event_time_storage", "codex", "store event start as utc, drop zone_id col", None),
    # onsale_soak_test
    ("onsale_soak_test", "claude-after-compact", "On the load test plan from the pending list: staging-east is busy with the data team this week, so I was going to skip the soak run for Lumen and rely on last month's numbers. Fine?", None),
    ("onsale_soak_test", "codex-tool", "is the soak good enough", ("k6 run --quiet loadtest/onsale.js -e TARGET=staging-east -e MULT=1.5", "  checks.........................: 99.71% ✓ 881203 ✗ 2551\n  http_req_duration..............: avg=212ms p(95)=640ms\n  iterations.....................: 440927\n  vus_max........................: 6000")),
    # flag_snapshot_lag
    ("flag_snapshot_lag", "claude-log", "I flipped the checkout-kill-switch flag off in LaunchDarkly and checkout kept accepting orders for a while. Is LD broken?\n\n10:31:02 ld audit: flag checkout-kill-switch -> off by r.nakamura\n10:31:19 checkout-7f9d pod=checkout-7f9d-2x order accepted O-a912\n10:31:28 checkout-7f9d pod=checkout-7f9d-2x order accepted O-a917", None),
    ("flag_snapshot_lag", "codex-tool", "why flag change not instant in checkout", ("grep -rn 'Refresh' services/checkout/flags/", "services/checkout/flags/snapshot.go:18:\tRefreshInterval = 30 * time.Second\nservices/checkout/flags/snapshot.go:41:\tticker := time.NewTicker(RefreshInterval)")),
    # migrations_expand_contract
    ("migrations_expand_contract", "claude", "I want to rename orders.buyer_email to orders.contact_email. My plan is one migration in db/migrations that does ALTER TABLE ... RENAME COLUMN plus the code change in the same PR, shipped together. Can you write it?", None),
    ("migrations_expand_contract", "codex-tool", "drop legacy col in same deploy", ("ls db/migrations | tail -3", "20240601_add_contact_email.sql\n20240602_backfill_contact_email.sql\n20240603_drop_buyer_email.sql")),
    # pdf_ticket_scope
    ("pdf_ticket_scope", "claude-after-compact", "Re the UI tweaks from earlier: fans keep asking for a 'Download PDF' option on the My Tickets page. Can we just add it for all orders?", None),
    ("pdf_ticket_scope", "claude-tool", "Why does this venue get PDF tickets and that one doesn't?", ("psql -c \"select id, name, flags from venues where id in (12, 40)\"", " id |      name       |      flags\n----+-----------------+-----------------\n 12 | Corn Exchange   | {legacy_scanner}\n 40 | Northfield Stad | {}\n(2 rows)")),
    # money_minor_units
    ("money_minor_units", "claude-log", "The Tokyo promoter's statement shows ¥1,200 where the ticket was ¥120,000. Stack trace isn't an error, but here's the line from the statement job:\n\nstatements: event=93310 currency=JPY gross_minor=120000 gross_display=1200.00", None),
    ("money_minor_units", "codex", "fmt price in payouts csv, amount/100 w 2 decimals", None),
)

NULL_TURNS = (
    ("claude", "Rename the function holdSeats to reserveSeats across services/holds and its callers, and update the doc comments accordingly. Keep behaviour identical.", None),
    ("codex", "fix typo 'recieve' in web/checkout/Confirm.tsx + i18n en.json", None),
    ("claude-tool", "golangci-lint is complaining in the payouts service, can you fix these?", ("golangci-lint run ./services/payouts/...", "services/payouts/statement.go:88:2: ineffectual assignment to err (ineffassign)\nservices/payouts/csv.go:31:6: func `padLeft` is unused (unused)")),
    ("claude", "The seat-map legend in web/seatmap/Legend.tsx wraps badly on narrow phones. Make it a horizontally scrollable row under 400px and add a snapshot test.", None),
    ("codex", "add unit test for resale listing title truncation, 80 chars", None),
    ("codex-tool", "fix failing test", ("go test ./services/notifications/...", "--- FAIL: TestRenderSubject (0.00s)\n    render_test.go:22: got \"Your tickets for Lumen\" want \"Your tickets for Lumen Festival\"\nFAIL")),
    ("claude", "In apps/scanner-android, the result screen's green/red colours aren't accessible for colour-blind staff. Add an icon (check or cross) next to the colour and bump the text size to 28sp.", None),
    ("claude-log", "The web build broke after I pulled main, any idea?\n\nType error: Property 'sectionLabel' does not exist on type 'SeatProps'.\n  web/seatmap/Seat.tsx:44:19", None),
    ("codex", "extract fraudscore http handler into its own file handler.go, no logic change", None),
    ("claude-tool", "Can you sort out these eslint warnings in the waitroom page?", ("pnpm eslint web/waitroom", "web/waitroom/Position.tsx\n  12:7  warning  'useMemo' is defined but never used  no-unused-vars\n  40:3  warning  Unexpected console statement         no-console")),
    ("claude-after-compact", "Continuing from the summary: please add a short README section to docs/runbooks/lumen.md listing the on-call contacts table format, just headings, no names yet.", None),
    ("codex", "bump go to 1.22.4 in all services go.mod + ci matrix", None),
)
