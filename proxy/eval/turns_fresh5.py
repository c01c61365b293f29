"""Fifth sealed held-out half of the recall turn set.

Domain: "riftline", the backend of a multiplayer online game (matchmaking,
dedicated game servers, leaderboards, anti-cheat, inventory, premium ledger).

Written without reading recall's code, the other halves of the turn set or
any results. It was scored once sealed (2026-12-06 23:00 UTC: 0.725 hit, 0.269 false over 52
turns) and is development material since.
"""

from __future__ import annotations

PROJECT = "riftline"

FACTS = {
    "matchmaker_port": (
        "The matchmaker service listens on port 7441 on mm-01.riftline.internal; "
        "game clients never talk to it directly, only through the gateway.",
        "7441",
    ),
    "tick_rate": (
        "Dedicated game servers run at a fixed simulation rate of 30 Hz "
        "(TICK_RATE=30 in server/config/sim.toml); 60 Hz was trialled in March "
        "and doubled the CPU cost per match, so it was rolled back.",
        "TICK_RATE=30",
    ),
    "leaderboard_redis": (
        "Leaderboards live in the Redis cluster lb-redis.riftline.internal:6390, "
        "one sorted set per key lb:{season}:{region}, trimmed to the top 10000 "
        "every night.",
        "lb:{season}:{region}",
    ),
    "season_reset": (
        "Season rollovers run on the first Tuesday of each quarter at 09:00 UTC "
        "via tools/season_rollover.py, and ranked queues are frozen for 45 "
        "minutes while it runs.",
        "season_rollover.py",
    ),
    "anticheat_owner": (
        "The anti-cheat pipeline (services/sentinel) is owned by Priya Raman's "
        "integrity team; false-ban reports go to #integrity-oncall, not #backend.",
        "#integrity-oncall",
    ),
    "max_party": (
        "Maximum party size is 5 (MAX_PARTY_SIZE in shared/limits.py), but ranked "
        "queues also reject parties of 4 to stop stacked 4+1 lobbies.",
        "parties of 4",
    ),
    "rating_params": (
        "Player ratings use Glicko-2 with a system constant tau of 0.5, not Elo; "
        "we switched in season 6 because Elo overrated players with few matches.",
        "tau of 0.5",
    ),
    "replay_bucket": (
        "Match replays are uploaded to the S3 bucket riftline-replays-prod under "
        "replays/{yyyy}/{mm}/{match_id}.rpl and are deleted after 30 days by a "
        "lifecycle rule.",
        "riftline-replays-prod",
    ),
    "proto_version": (
        "The wire protocol version lives in proto/VERSION; the gateway refuses "
        "clients more than 2 minor versions behind and closes their websocket "
        "with code 4409.",
        "4409",
    ),
    "heartbeat": (
        "Game servers heartbeat to the fleet manager every 5 seconds; after 3 "
        "missed heartbeats (15 s) the fleet manager marks the server dead and "
        "reassigns its players.",
        "3 missed heartbeats",
    ),
    "region_list": (
        "Production regions are euw, use, usw, sea and sa; sa runs on a separate "
        "provider (Latitude) and its servers are reached through sa-gw.riftline.gg "
        "rather than the shared gateway.",
        "sa-gw.riftline.gg",
    ),
    "db_migrations": (
        "Player-DB schema changes are Atlas migrations in db/migrations/, applied "
        "with `make migrate-player ENV=<env>`; never run a raw ALTER TABLE on "
        "players, it holds 40M rows and locks the login path.",
        "make migrate-player",
    ),
    "inventory_service": (
        "The inventory service vault (services/vault, Go) serves gRPC on port "
        "9120; every item grant must be idempotent and carry a grant_id UUID so "
        "retries are deduplicated.",
        "grant_id",
    ),
    "loadtest": (
        "Load tests use the bot swarm in tools/botswarm, 2000 simulated clients "
        "per runner, and run only against the staging-lt cluster, never the "
        "shared staging cluster.",
        "staging-lt",
    ),
    "chat_filter": (
        "Chat goes through the chatguard profanity service with an 80 ms timeout; "
        "on timeout a message is delivered unfiltered in private parties but "
        "dropped in public lobbies.",
        "80 ms timeout",
    ),
    "patch_window": (
        "Server patch deploys go out Wednesdays 06:00-08:00 UTC, the "
        "lowest-concurrency window; any hotfix outside it needs sign-off from the "
        "live-ops lead, Tomasz Wierzbicki.",
        "Tomasz Wierzbicki",
    ),
    "metrics_dashboard": (
        "The match health dashboard is "
        "https://grafana.riftline.internal/d/mh01/match-health; its key panel is "
        "'p99 tick overrun' and the alert fires above 4 ms.",
        "d/mh01/match-health",
    ),
    "ban_appeals": (
        "Ban appeals are rows in the Postgres table integrity.appeals and must be "
        "answered within 72 hours; the support tool only reads them, decisions "
        "go through the sentinel admin API.",
        "integrity.appeals",
    ),
    "currency_ledger": (
        "Premium currency (shards) is stored as BIGINT in the ledger, never as a "
        "float or decimal; the ledger rejects any single transaction above "
        "250000 shards as likely fraud.",
        "250000 shards",
    ),
    "ci_runners": (
        "Dedicated-server builds must run on the self-hosted CI runners labelled "
        "unreal-linux, because the Unreal server build needs about 11 GB of RAM "
        "and GitHub-hosted runners run out of memory.",
        "unreal-linux",
    ),
    "ping_threshold": (
        "The matchmaker never places a player in a region where their measured "
        "ping is above 120 ms unless they have waited more than 90 seconds in "
        "queue.",
        "above 120 ms",
    ),
}

DISTRACTORS = (
    "The matchmaker exposes Prometheus metrics on /metrics and is scraped every 15 seconds.",
    "The gateway terminates TLS with certificates from Let's Encrypt, renewed by cert-manager.",
    "Leaderboard pages in the launcher are cached by the CDN for 60 seconds.",
    "Season cosmetic rewards are configured by the design team in content/rewards/*.yaml.",
    "The anti-cheat client module ships inside the game binary and updates with every client patch.",
    "Party invites expire after 2 minutes if nobody accepts them.",
    "Players see rank tiers from Bronze to Apex; the raw rating number is hidden in the client.",
    "The in-client replay viewer supports playback at up to 8x speed.",
    "Protobuf schemas live in proto/ and are generated with buf generate in CI.",
    "The fleet manager is written in Rust and runs as three replicas with leader election.",
    "The euw region has the highest concurrency, peaking around 21:00 CET on Sundays.",
    "The analytics team reads from a Player-DB read replica for its nightly exports.",
    "Vault loads the item catalogue from content/items.json when it starts.",
    "Bot swarm clients log JSON to stdout and the logs are shipped to Loki.",
    "Chat messages are kept for 14 days for moderation review.",
    "Client patches are published to Steam and the Epic store on Tuesdays.",
    "Grafana alerts for game servers route to the PagerDuty service riftline-live.",
    "The ledger writes an audit event for every premium currency purchase.",
)

CLAUDE_MD = """# riftline backend - rules for Claude

- Go services live in services/, Python tools in tools/, the Unreal server in server/.
- Run `make test SERVICE=<name>` for the service you touch; do not run the full suite.
- Never commit content/ assets; designers own them.
- Keep gRPC changes backward compatible; add fields, do not renumber.
- Use structured logging (zap in Go, structlog in Python); no bare prints.
- Ask before touching anything under services/ledger.
"""

AGENTS_MD = """# AGENTS.md - riftline

- Format Go with gofmt and Python with ruff format before committing.
- Tests: `go test ./services/<name>/...` or `pytest tools/<name>`.
- Do not change proto/ field numbers.
- Config lives in config/<env>/*.toml; never hardcode hostnames in code.
- Prefer small PRs; one service per PR.
"""

SUMMARY = """Summary:
1. Primary request: Add rank decay for inactive players in ranked (services/rating) and refactor region selection in the matchmaker into its own module (services/matchmaker/region.go).
2. Done: Wrote the decay function (rating deviation grows 5% per idle week, capped), added unit tests in services/rating/decay_test.go, extracted pickRegion() from queue.go into region.go with no behaviour change yet, fixed a flaky test in queue_test.go caused by map iteration order.
3. Pending: Hook the decay job into the quarterly rollover and dry-run it; keep the region-selection rules identical in region.go and add table tests; schedule the server deploy for the decay change; update docs/ranked.md.
"""

# --- pasted logs, traces and command outputs -------------------------------

_TICK_LINES = "\n".join(
    f"2026-11-30T19:{m:02d}:{s:02d}.{ms:03d}Z WARN  sim  tick {88213 + i} took "
    f"{t:.1f}ms (budget 16.6ms) match=m-7f2a9c entities={410 + i * 3}"
    for i, (m, s, ms, t) in enumerate(
        [(41, 2, 118, 41.2), (41, 2, 160, 38.9), (41, 2, 201, 44.0),
         (41, 3, 7, 39.5), (41, 3, 52, 47.3), (41, 3, 98, 40.1)]
    )
)
LOG_TICK = (
    "[gs-usw-0193] server/Source/RiftServer/Sim/TickLoop.cpp:212\n"
    + _TICK_LINES
    + "\n2026-11-30T19:41:03.990Z INFO  sim  overrun streak=6, consider lowering entity cap"
)

TRACE_GLICKO = "\n".join([
    "Traceback (most recent call last):",
    '  File "/srv/rating/worker.py", line 88, in process_batch',
    "    new = update_player(p, results)",
    '  File "/srv/rating/glicko.py", line 141, in update_player',
    "    sigma = _new_volatility(phi, v, delta, sigma, cfg.tau)",
    '  File "/srv/rating/glicko.py", line 97, in _new_volatility',
    '    raise ValueError(f"volatility iteration did not converge (tau={tau})")',
    "ValueError: volatility iteration did not converge (tau=1.2)",
    "[worker-3] batch 55120 failed, 812 match results requeued",
])

_CLOSE_LINES = "\n".join(
    f"2026-12-01T08:{14 + i}:{(7 * i) % 60:02d}Z gw-euw-2 ws close conn={c} "
    f"client_proto={v} server_proto=1.15.2 code=4409 reason=\"proto too old\""
    for i, (c, v) in enumerate(
        [("a91f", "1.12.0"), ("b03c", "1.12.4"), ("c77e", "1.11.9"), ("d120", "1.12.0")]
    )
)
LOG_GATEWAY = "level=info msg=\"ws upgrade\" region=euw\n" + _CLOSE_LINES

LOG_FLEET = "\n".join([
    "2026-12-02T03:11:40Z fleetmgr[leader] hb ok server=gs-euw-0412 load=0.71",
    "2026-12-02T03:11:45Z fleetmgr[leader] hb ok server=gs-euw-0412 load=0.74",
    "2026-12-02T03:11:50Z fleetmgr[leader] hb late server=gs-euw-0412 missed=1",
    "2026-12-02T03:11:55Z fleetmgr[leader] hb late server=gs-euw-0412 missed=2",
    "2026-12-02T03:12:00Z fleetmgr[leader] hb late server=gs-euw-0412 missed=3",
    "2026-12-02T03:12:00Z fleetmgr[leader] state server=gs-euw-0412 RUNNING->DEAD",
    "2026-12-02T03:12:00Z fleetmgr[leader] reassign players=10 from=gs-euw-0412 to=gs-euw-0388",
    "2026-12-02T03:12:01Z fleetmgr[leader] hb from unknown server=gs-euw-0412 (ignored, state DEAD)",
])

LOG_CHAT = "\n".join([
    "ts=2026-12-03T20:02:11Z svc=chatrelay lobby=pub-4411 msg_id=9c1 chatguard=ok",
    "ts=2026-12-03T20:02:13Z svc=chatrelay lobby=pub-4411 msg_id=9c4 chatguard=deadline_exceeded action=drop",
    "ts=2026-12-03T20:02:13Z svc=chatrelay lobby=party-88a2 msg_id=9c5 chatguard=deadline_exceeded action=deliver_unfiltered",
    "ts=2026-12-03T20:02:14Z svc=chatrelay lobby=pub-4411 msg_id=9c7 chatguard=deadline_exceeded action=drop",
    "ts=2026-12-03T20:02:15Z svc=chatguard p99_latency=112ms queue_depth=340",
])

LOG_LEDGER = "\n".join([
    "2026-12-04 18:22:09.114 INFO  ledger purchase player=p_55a01 sku=shards_bundle_xl amount=150000 status=COMMITTED",
    "2026-12-04 18:22:41.870 WARN  ledger purchase player=p_55a01 sku=shards_bundle_xl_x2 amount=300000 status=REJECTED reason=TXN_LIMIT",
    "2026-12-04 18:22:41.871 INFO  ledger audit event=reject player=p_55a01 ref=stripe_pi_3Nq...",
])

CI_OUTPUT = "\n".join([
    "Run ./server/build.sh --target LinuxServer --config Shipping",
    "[UBT] Building RiftServer LinuxServer Shipping...",
    "[UBT] [412/1880] Compile Module.RiftSim.cpp",
    "[UBT] [413/1880] Compile Module.RiftNet.3.cpp",
    "clang++: error: unable to execute command: Killed",
    "clang++: error: clang frontend command failed due to signal (use -v to see invocation)",
    "Error: Process completed with exit code 137.",
    "Runner: GitHub Actions 14 (ubuntu-22.04, 7 GB RAM)",
])

TURNS = (
    ("matchmaker_port", "claude",
     "I'm adding a queue-status endpoint to the gateway and it needs to call the "
     "matchmaker directly for the ticket count. What host:port should the gateway's "
     "upstream config point at? While you're in there bump the gateway request "
     "timeout to 3s and add a test for the 404 path.",
     None),
    ("matchmaker_port", "codex-tool",
     "the new k8s liveness probe for mm keeps failing, fix the probe config",
     ("curl -sv http://mm-01.riftline.internal:7414/healthz",
      "*   Trying 10.20.4.11:7414...\n* connect to 10.20.4.11 port 7414 failed: "
      "Connection refused\n* Failed to connect to mm-01.riftline.internal port 7414 "
      "after 2 ms: Couldn't connect to server\ncurl: (7) Failed to connect")),
    ("tick_rate", "claude",
     "design wants the new hero's dash to feel smoother and asked if we can just run "
     "the server sim faster, like 60. what's the sim rate right now, where is it set, "
     "and is there a reason we never went higher?",
     None),
    ("tick_rate", "claude-log",
     "server logs on usw are flooded with these. the budget number in the warning "
     "looks wrong to me, what's the per-tick budget actually supposed to be?\n\n"
     + LOG_TICK,
     None),
    ("leaderboard_redis", "codex",
     "write a small script that dumps the top 100 of the current season's EU "
     "leaderboard to CSV. which redis do I hit and how are the keys laid out?",
     None),
    ("leaderboard_redis", "claude-tool",
     "this is what I get trying to look at the leaderboard, what am I doing wrong?",
     ("redis-cli -h lb-redis.riftline.internal -p 6379 ZREVRANGE leaderboard:s14:euw 0 9 WITHSCORES",
      "Could not connect to Redis at lb-redis.riftline.internal:6379: Connection refused\n"
      "not connected>")),
    ("season_reset", "claude",
     "Support wants to post a notice about the ranked downtime around the next season "
     "change. When exactly does that happen, what runs it, and how long are queues "
     "down? Also can you draft the notice in a friendly tone, max 3 sentences.",
     None),
    ("season_reset", "claude-after-compact",
     "ok picking up from the summary. for hooking decay into the quarterly thing, "
     "which job do I need to dry-run?",
     None),
    ("anticheat_owner", "claude",
     "A streamer got auto-banned mid-stream, obviously a false positive (his mouse "
     "polls at 8k Hz and the aim heuristic freaked out). Who owns that system and "
     "where do I escalate? Then draft a short note for the community team.",
     None),
    ("anticheat_owner", "codex-tool",
     "one of these commits is banning legit players since yesterday. who do I ping "
     "about it, and where?",
     ("git log --format='%h %an %ad %s' --date=short -5 -- services/sentinel",
      "4e1a9d2 priya.raman 2026-12-01 aim: tighten snap-angle threshold\n"
      "b77c013 j.okafor 2026-11-28 replay sampler: skip bot matches\n"
      "0d9e551 priya.raman 2026-11-20 bump model to v14\n"
      "a3f1c88 l.moreau 2026-11-18 fix nil deref in report ingest\n"
      "91bb2e0 j.okafor 2026-11-11 metrics: add ban reason label")),
    ("max_party", "claude",
     "QA filed a bug: a 4-person party can't queue ranked, but a 5-stack can. error "
     "is PARTY_SIZE_NOT_ALLOWED. that's got to be an off-by-one somewhere right?",
     None),
    ("rating_params", "claude",
     "The new-player onboarding PR computes rating changes with an Elo K-factor of "
     "32. Is that consistent with the ranked system? What algorithm and params do we "
     "actually use, and why?",
     None),
    ("rating_params", "claude-log",
     "rating workers started failing after somebody tweaked the config on friday. "
     "what should that value be?\n\n" + TRACE_GLICKO,
     None),
    ("replay_bucket", "codex-tool",
     "support needs the replay for match 8f3c21e0 from last week, where does it live?",
     ("aws s3 ls s3://riftline-replays/replays/2026/11/",
      "An error occurred (NoSuchBucket) when calling the ListObjectsV2 operation: "
      "The specified bucket does not exist")),
    ("replay_bucket", "claude",
     "a player is disputing a ban from about five weeks ago and wants the replay of "
     "that match. can we still pull it? where are those kept?",
     None),
    ("proto_version", "claude-log",
     "players on the old launcher get disconnected the moment they connect. what's "
     "the rule here?\n\n" + LOG_GATEWAY,
     None),
    ("proto_version", "codex",
     "we're bumping the protocol minor twice this month. how far behind can a client "
     "be before the gateway kicks it, and what close code do they get? I need it for "
     "the launcher's error-message mapping",
     None),
    ("heartbeat", "claude-log",
     "why did fleetmgr kill gs-euw-0412?? it only froze for like 10s during a GC "
     "pause and 10 players got yanked to another box\n\n" + LOG_FLEET,
     None),
    ("heartbeat", "codex",
     "implement the heartbeat loop in the new Go game-server sidecar. what interval "
     "should it use and how many misses does the fleet side tolerate?",
     None),
    ("region_list", "claude",
     "adding a region picker to the server browser. which prod regions do we have and "
     "is any of them special-cased hostname-wise? also sort them by name in the UI",
     None),
    ("region_list", "claude-tool",
     "South American players can't connect since my DNS change, the name I put in "
     "the client config doesn't resolve",
     ("dig +short gw.sa.riftline.gg; dig gw.sa.riftline.gg | grep status",
      ";; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 40211")),
    ("db_migrations", "claude",
     "need a last_login_platform column on players. just give me the ALTER TABLE and "
     "I'll paste it into prod psql, it's a nullable column so should be instant",
     None),
    ("db_migrations", "codex-tool",
     "how do we normally apply player-db schema changes? this didn't work",
     ("atlas migrate apply --env prod --dir file://db/migrations",
      "Error: env \"prod\" not defined in project file\nexit status 1")),
    ("inventory_service", "codex",
     "the battle pass reward job double-granted skins when it retried after a "
     "timeout. what's the contract for grants in the inventory service and how do I "
     "make retries safe?",
     None),
    ("inventory_service", "claude-tool",
     "can't reach the inventory service with grpcurl from the bastion",
     ("grpcurl -plaintext vault.riftline.internal:9210 list",
      "Failed to dial target host \"vault.riftline.internal:9210\": "
      "dial tcp 10.20.7.3:9210: connect: connection refused")),
    ("loadtest", "claude",
     "I want to hammer the new lobby service with ~10k bots tonight before the "
     "tournament. Which cluster do I point them at and how many runners will I need?",
     None),
    ("loadtest", "codex-tool",
     "QA says staging has been unusable all afternoon, latency through the roof. "
     "what is this and is it allowed?",
     ("kubectl --context staging get pods -l app=botswarm -o wide",
      "NAME                        READY   STATUS    RESTARTS   AGE   NODE\n"
      "botswarm-runner-6d9f-2kq8x   1/1     Running   0          3h    stg-node-4\n"
      "botswarm-runner-6d9f-7mw2c   1/1     Running   0          3h    stg-node-2\n"
      "botswarm-runner-6d9f-9zt5p   1/1     Running   0          3h    stg-node-5\n"
      "botswarm-runner-6d9f-qq1rn   1/1     Running   0          3h    stg-node-1")),
    ("chat_filter", "claude-log",
     "players in public lobbies say their messages sometimes just vanish, in parties "
     "it's fine. is this intended or a bug?\n\n" + LOG_CHAT,
     None),
    ("chat_filter", "codex",
     "porting the chat relay to the new service. what's the time budget for the "
     "profanity check and what do we do when it doesn't answer in time?",
     None),
    ("patch_window", "claude",
     "can I ship this server crash fix today at 15:00 UTC? it affects maybe 0.3% of "
     "matches. also write the changelog line for it",
     None),
    ("patch_window", "claude-after-compact",
     "next item from the summary: schedule the server deploy. when's our regular "
     "slot and who do I need if I miss it?",
     None),
    ("metrics_dashboard", "claude",
     "writing the postmortem for sunday's lag spike. where's the grafana board for "
     "match health and at what threshold does the tick overrun alert fire?",
     None),
    ("metrics_dashboard", "codex-tool",
     "got paged for this at 4am. which dashboard should I open?",
     ("amtool alert query alertname=TickOverrunP99",
      "Alertname       Starts At                Summary\n"
      "TickOverrunP99  2026-12-05 04:02:11 UTC  p99 tick overrun 5.1ms on usw (gs pool B)")),
    ("ban_appeals", "claude",
     "the support tool needs a 'resolve appeal' button. can it just write the decision "
     "straight into the appeals table? where is that table and is there an SLA we "
     "should show in the UI?",
     None),
    ("currency_ledger", "claude-log",
     "a whale tried to buy the double shard bundle and the ledger bounced it, he's "
     "angry. why was it rejected?\n\n" + LOG_LEDGER,
     None),
    ("currency_ledger", "codex",
     "refactor the shards balance model to use float so the new 15% discount math is "
     "easier, then update the tests",
     None),
    ("ci_runners", "claude-tool",
     "the dedicated server build keeps dying on CI since I cleaned up the workflow "
     "file. any idea?",
     ("gh run view 88123401 --log-failed | tail -8", CI_OUTPUT)),
    ("ci_runners", "codex",
     "write a github actions workflow that builds the linux dedicated server on push "
     "to main and uploads the artifact",
     None),
    ("ping_threshold", "claude",
     "a player in Chile got put on US East with 160 ping, but only after waiting "
     "about 2 minutes. intended or a matchmaker bug?",
     None),
    ("ping_threshold", "claude-after-compact",
     "continuing with the region.go table tests. what's the latency cap rule I have "
     "to preserve, including the wait-time exception?",
     None),
)

NULL_TURNS = (
    ("claude",
     "Rename the function getPlyrStats to getPlayerStats across services/profile and "
     "fix all the callers.",
     None),
    ("claude-log",
     "go vet is complaining, fix it\n\n"
     "services/lobby/room.go:88:2: assignment copies lock value to r2: "
     "lobby.Room contains sync.Mutex\n"
     "services/lobby/room.go:131:9: fmt.Sprintf format %d has arg name of wrong type string",
     None),
    ("claude-tool",
     "tests are failing after my change, can you fix it?",
     ("go test ./services/lobby/...",
      "--- FAIL: TestRoomKick (0.00s)\n"
      "    room_test.go:54: expected 3 members, got 4\n"
      "FAIL\nFAIL\triftline/services/lobby\t0.112s")),
    ("claude",
     "Write a table-driven unit test for the function that formats match durations "
     "as mm:ss in tools/reports/format.py.",
     None),
    ("claude-after-compact",
     "carry on with the docs/ranked.md update, just describe the decay behaviour in "
     "plain words for players.",
     None),
    ("codex",
     "convert tools/reports/weekly.py from argparse to click, keep the same flags",
     None),
    ("codex-tool",
     "fix the lint errors",
     ("ruff check tools/",
      "tools/botswarm/runner.py:12:1: F401 `os` imported but unused\n"
      "tools/botswarm/runner.py:77:5: E722 Do not use bare `except`\n"
      "Found 2 errors.")),
    ("claude",
     "Add a --dry-run flag to tools/cleanup_lobbies.py that prints what it would "
     "delete instead of deleting.",
     None),
    ("codex",
     "the lobby service builds a big string with += in a loop in Render(); switch it "
     "to strings.Builder",
     None),
    ("claude-log",
     "what does this panic mean?\n\n"
     "panic: runtime error: index out of range [5] with length 5\n\n"
     "goroutine 41 [running]:\n"
     "riftline/services/lobby.(*Room).slotFor(...)\n"
     "\t/src/services/lobby/room.go:204\n"
     "riftline/services/lobby.(*Room).Join(0xc0001a2000, {0xc00012c0f0, 0x8})\n"
     "\t/src/services/lobby/room.go:97 +0x1c5",
     None),
    ("codex-tool",
     "why is this test flaky?",
     ("go test -count=20 -run TestShuffleTeams ./services/lobby/",
      "--- FAIL: TestShuffleTeams (0.00s)\n"
      "    teams_test.go:31: teams not balanced: [1500 1620] vs [1480 1490]\n"
      "FAIL\nok   (17 passed, 3 failed)")),
    ("claude",
     "Add type hints to tools/reports/format.py and make mypy --strict pass on it.",
     None),
)
