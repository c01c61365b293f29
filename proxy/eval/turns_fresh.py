"""The turns set's sealed fresh half: agent turns written independently, after recall was tuned.

Neither the dev half (``turns``) nor the held-out half (``turns_heldout``) is
unseen any more: the held-out figures have been read while recall changed. This
half was written by someone who had not read recall's code nor seen any result
on it, and it is never opened to choose a value or to explain a miss: a change
that learns the first two halves shows as a gap to this one. Same shapes
(Claude Code and Codex requests as in ``shared/fixtures/real-clients``: long
requests naming several things, pasted logs and stack traces, tool results
whose need comes from the task stated before, turns after a compaction), new
content: a podcast hosting platform (``wavecast``) with its own facts,
distractors sharing the turns' words, rule files and compaction summary, in
its own project so the halves never see each other's memories.
"""
from __future__ import annotations

PROJECT = "wavecast"

FACTS = {
    "feed-cache": ("Public RSS feeds are served from feeds.wavecast.fm behind Fastly with a 5-minute TTL; to "
                   "refresh one show's feed at once, purge its Fastly surrogate key, which is feed- followed by "
                   "the show id (feed-8812 for show 8812).", "Fastly surrogate key"),
    "loudness": ("The mastering step normalises every episode to -16 LUFS integrated loudness with a true peak "
                 "of at most -1 dBTP.", "-16 LUFS"),
    "midroll": ("Mid-roll ad positions are stored in milliseconds from the start of the episode, in the "
                "episodes.midroll_ms column.", "midroll_ms"),
    "payout-min": ("Creator payouts run on the 3rd of each month; a balance under 25 EUR is not paid out but "
                   "carried over to the next month.", "under 25 EUR"),
    "pipeline-owner": ("Keiko Tanaka owns the transcoding pipeline; every change to the ffmpeg version or the "
                       "encoder settings needs her sign-off.", "Keiko Tanaka"),
    "audio-bucket": ("Episode audio is kept in the private Cloudflare R2 bucket wc-audio-prod; players get "
                     "signed URLs that expire after 6 hours.", "wc-audio-prod"),
    "iab": ("Download counts follow the IAB Podcast Measurement guidelines v2.2: requests from the same IP "
            "and user agent for the same episode within 24 hours count as one download.",
            "IAB Podcast Measurement"),
    "ios-target": ("The iOS app's deployment target is iOS 16.0; listeners on older devices are sent to the "
                   "web player.", "iOS 16.0"),
    "search-trunc": ("Episode search uses the Meilisearch index episodes_v7; only the first 20,000 characters "
                     "of each transcript are indexed.", "episodes_v7"),
    "whisper-pool": ("Transcription jobs run Whisper large-v3 on the gpu-pool-b node pool and are retried at "
                     "most twice.", "gpu-pool-b"),
    "migrations": ("Schema migrations reach production only through the migrate job in Argo CD sync wave -1, "
                   "before the api pods roll; nobody runs alembic against prod by hand.", "sync wave -1"),
    "api-limit": ("The public Creator API allows 120 requests per minute per access token; above that it "
                  "answers 429 with a Retry-After header.", "120 requests per minute"),
    "ip-trunc": ("Listener IP addresses are truncated to /24 for IPv4 and /48 for IPv6 before anything is "
                 "written to the analytics warehouse.", "truncated to /24"),
    "show-toggles": ("Per-show switches live in the show_settings JSONB column so support can flip them in "
                     "the admin; GrowthBook is only for global feature flags.", "show_settings JSONB"),
    "local-audio": ("For local development, docker compose --profile audio starts MinIO and a transcode "
                    "worker; plain make dev starts only the API and Postgres.", "--profile audio"),
}
DISTRACTORS = (
    "The RSS feed validator in CI checks every feed against the Podcasting 2.0 namespace.",
    "Fastly request logs are shipped to BigQuery once an hour.",
    "The mastering step also adds a show's intro and outro jingles when the host has uploaded them.",
    "Ad campaigns are booked by the sales team in the ad-stitcher admin screen.",
    "New creators fill in a tax form in Stripe Connect before their first payout.",
    "The transcode worker image is rebuilt every night from the shared python-ffmpeg base image.",
    "Cover art is served from the public wc-images bucket through the image resizer.",
    "The creator dashboard shows download numbers with a delay of one day.",
    "The Android app is written in Kotlin with Jetpack Compose; the iOS app uses SwiftUI.",
    "Meilisearch snapshots are taken every night and kept for seven days.",
    "Argo CD posts every production sync to the #releases Slack channel.",
    "The analytics warehouse is ClickHouse; its dashboards are built in Metabase.",
    "Support answers refund requests for premium listener subscriptions with Zendesk macros.",
)

CLAUDE_MD = ("# Wavecast\n- Run make check before pushing; CI runs the API tests and the audio golden-file tests.\n"
             "- Never commit R2, Stripe or Fastly tokens; they come from 1Password via op run.\n"
             "- The API, the payouts service and the ad-stitcher share one Postgres database.\n"
             "- Durations at the API's edges are ISO 8601 strings.\n")
AGENTS_MD = ("# Wavecast: agent rules\n- Be brief.\n- Run make check before proposing a commit; the audio tests "
             "need ffmpeg on PATH.\n- Alembic migrations go in services/api/migrations, one per PR.\n"
             "- Workers are in workers/ (transcode, master, transcribe), the web editor in web/editor, the iOS "
             "app in apps/ios.\n")
SUMMARY = ("Summary:\n1. Primary request: upgrade ffmpeg in the transcode worker image from 6.1 to 7.1 and fix "
           "what breaks.\n2. Done: bumped the base image in workers/transcode/Dockerfile, replaced the removed "
           "-vsync flag with -fps_mode, regenerated two golden files whose AAC priming changed, make check "
           "passes locally.\n3. Pending: open the PR.")

FEED_CURL = ("$ curl -sI https://feeds.wavecast.fm/s/8812.xml\nHTTP/2 200\ncontent-type: application/rss+xml; "
             "charset=utf-8\ncache-control: public, max-age=300\nx-served-by: cache-fra-eddf8230057-FRA\n"
             "x-cache: HIT, HIT\nage: 7194\n\n$ curl -s https://origin.wavecast.internal/s/8812.xml | grep -m2 "
             "'<title>'\n  <title>Night Shift Stories</title>\n    <title>212: The Lighthouse at Dunmore "
             "Head</title>")
PLAYER_403 = "\n".join(f"2026-12-05T08:{m:02d}:{(m * 13) % 60:02d}Z player=ios/5.12.0 GET /e/ep_{5500 + m * 7}.mp3 "
                       f"(link issued 2026-12-04T2{m % 4}:{(m * 7) % 60:02d}Z) -> 403 Forbidden: Request has expired"
                       for m in range(0, 24))
THROTTLED = "\n".join(f"2026-12-05T09:14:{s:02d}Z podfetch-importer GET /v1/shows/{3000 + s}/episodes?page={s % 5 + 1} "
                      f"-> 429 Too Many Requests (retry-after: {max(1, 58 - s)})" for s in range(0, 60, 3))
PENDING_POD = """$ kubectl -n media describe pod transcribe-7f9c4-x2lqp
Name:             transcribe-7f9c4-x2lqp
Namespace:        media
Priority:         0
Status:           Pending
Containers:
  whisper:
    Image:      registry.wavecast.internal/workers/transcribe:2026.12.1
    Limits:
      nvidia.com/gpu:  1
Node-Selectors:  cloud.google.com/gke-nodepool=gpu-pool-a
Tolerations:     nvidia.com/gpu=present:NoSchedule
Events:
  Type     Reason            Age                   From               Message
  ----     ------            ----                  ----               -------
  Warning  FailedScheduling  3m2s (x41 over 3h20m)  default-scheduler  0/23 nodes are available: 17 node(s) didn't \
match Pod's node affinity/selector, 6 Insufficient nvidia.com/gpu. preemption: 0/23 nodes are available: 23 No \
preemption victims found for incoming pod."""

# (memory key or None, shape, what the user writes, a tool's command and output for tool-result shapes)
TURNS = (
    ("feed-cache", "claude-log", "the host of Night Shift Stories fixed a typo in the title of ep 212 about two "
     "hours ago and Apple Podcasts + Overcast still show the old title. origin already has the new one (see "
     "below) so it's our CDN holding on to the old feed. How do I force a refresh for just that one show "
     "without purging everything?\n\n" + FEED_CURL, None),
    ("feed-cache", "codex", "When a host edits an episode in the admin the public feed should update right "
     "away, not whenever the CDN feels like it. Add a purge for that show's feed at the end of update_episode() "
     "in services/api/episodes/update.py, using the Fastly client we already have in libs/cdn.py.", None),
    ("loudness", "codex-tool", "Listeners keep saying Kitchen Table Economics is way quieter than our other "
     "shows. Check the mastering settings and bring them in line with our standard.",
     ("sed -n 1,30p workers/master/loudnorm.py", "import subprocess\n\nFILTER = \"loudnorm=I=-23:TP=-2:LRA=11:"
      "print_format=json\"\n\n\ndef master(src: str, dst: str, show: dict) -> None:\n    flt = show.get("
      "\"loudnorm_override\") or FILTER\n    subprocess.run([\"ffmpeg\", \"-y\", \"-i\", src, \"-af\", flt, dst], "
      "check=True)\n")),
    ("loudness", "claude", "writing the 'prepare your audio' help page for creators. what integrated loudness and "
     "true peak do we master to? I want the exact numbers so people can pre-master to the same target and we "
     "don't squash their audio twice", None),
    ("loudness", "claude-after-compact", "ok rerun the golden tests and check the mastered output still hits our "
     "loudness target with the new ffmpeg",
     ("ffmpeg -hide_banner -i tests/golden/out/ep_short.m4a -af ebur128=peak=true -f null - 2>&1 | tail -8",
      "  Integrated loudness:\n    I:         -16.1 LUFS\n    Threshold: -26.3 LUFS\n\n  True peak:\n"
      "    Peak:       -0.4 dBFS\n")),
    ("midroll", "claude", "Sales sold a campaign that needs two mid-roll slots per episode instead of one, so I "
     "need to 1) let hosts place a second marker in the episode editor (web/editor, the waveform is "
     "web/editor/Waveform.tsx), 2) make the ad-stitcher read both markers, 3) write the migration for the new "
     "column. Before I start: where is the existing mid-roll position stored and in what unit? I don't want the "
     "new one in seconds if the old one is something else. Also keep the editor's keyboard shortcuts working, "
     "M currently drops the marker.", None),
    ("midroll", "codex-tool", "On show 4471 the mid-roll ad plays right at the start of the episode instead of at "
     "12:30 where the host put it. find the bug in the ad-stitcher and fix it",
     ("rg -n -i 'midroll' services/ad-stitcher", "services/ad-stitcher/place.go:41:\tmarker := ep.MidrollMs\n"
      "services/ad-stitcher/place.go:58:\toffset := time.Duration(marker)\n"
      "services/ad-stitcher/place_test.go:12:\tep := Episode{MidrollMs: 30}\n")),
    ("payout-min", "claude-tool", "Angry email from the creator of show 3320: she says we didn't pay her anything "
     "for October although her dashboard shows €18.40 earned. Is this a bug in the payout run or expected? "
     "Have a look at the payout code and draft a reply I can send her, friendly but clear.",
     ("sed -n 40,56p services/payouts/run.py", "def run(run_date: date) -> None:\n    for acct in "
      "accounts_due(run_date):\n        bal = balance_cents(acct)\n        if bal < settings.PAYOUT_MIN_CENTS:\n"
      "            carry_over(acct, bal)\n            continue\n        transfer(acct, bal)\n")),
    ("payout-min", "codex", "write unit tests for the minimum-balance rule in services/payouts/rules.py: the edge "
     "cases right at the threshold, and a balance that carries over two months in a row and then gets paid. "
     "use the real threshold value, not a made up one", None),
    ("pipeline-owner", "claude-after-compact", "nice, the image builds and make check is green. who has to sign "
     "off on this before I open the PR?", None),
    ("pipeline-owner", "claude-log", "PR #2210 is stuck, the bot keeps posting this. who is it talking about?\n\n"
     "github-actions commented 2 hours ago\n> review-policy: changes under workers/transcode/encoder.py require "
     "an approval from the pipeline owner\n> required reviewers missing: 1\n> status: pending\n\nFiles changed "
     "(1)\n  workers/transcode/encoder.py  +12 -3   switch the AAC encoder from aac to libfdk_aac", None),
    ("audio-bucket", "claude-log", "Players are getting 403s on episode audio since this morning, mostly people "
     "who queued episodes last night and press play today. Sample from the player error reports below. How long "
     "are our audio links supposed to stay valid, and is this just expiry or something else?\n\n" + PLAYER_403,
     None),
    ("audio-bucket", "codex-tool", "Write a script in tools/ that lists every episode file over 500 MB in "
     "production storage, so we can re-encode them at a lower bitrate.",
     ("rg -n 'R2_BUCKET|endpoint_url' services/api/storage.py .env.example", ".env.example:7:R2_BUCKET="
      "wc-audio-dev\nservices/api/storage.py:9:BUCKET = os.environ[\"R2_BUCKET\"]\nservices/api/storage.py:10:"
      "s3 = boto3.client(\"s3\", endpoint_url=os.environ[\"R2_ENDPOINT\"])\n")),
    ("iab", "claude", "A creator sent a screenshot: Spotify says 1,204 plays for episode 88, we say 731 "
     "downloads. She thinks we undercount. Can you write her a short, non-technical explanation of how we count "
     "downloads (which standard, what happens with repeat requests) and double check that analytics/downloads.sql "
     "actually does that?", None),
    ("iab", "codex-tool", "downloads are being double counted for people who pause and come back later in the "
     "day. fix the dedupe in analytics/downloads.sql so it matches how we're supposed to count",
     ("sed -n 1,20p analytics/downloads.sql", "SELECT episode_id,\n       count() AS downloads\nFROM (\n"
      "    SELECT episode_id, ip_prefix, user_agent, toStartOfHour(ts) AS bucket\n    FROM raw_requests\n"
      "    WHERE bytes_sent > 60000\n    GROUP BY episode_id, ip_prefix, user_agent, bucket\n)\n"
      "GROUP BY episode_id\n")),
    ("ios-target", "codex", "Can we use @Observable (the Observation framework) in the iOS app or is our minimum "
     "version too old? check before I start rewriting PlayerViewModel, dont want to find out in review", None),
    ("search-trunc", "claude-log", "Support ticket: searching \"the lighthouse keeper\" doesn't find episode 141 "
     "of Coastal Tales although the host says it near the very end (excerpt below). The episode is 2h14m, the "
     "transcript is 118,402 characters. Phrases from the first few minutes of the same episode are found fine. "
     "What's going on?\n\n```\n[02:03:41] ...and that's when the lighthouse keeper finally opened the door,\n"
     "[02:03:47] soaked, holding a lantern that had gone out hours before.\n[02:03:55] And he said nothing. Not "
     "a word.\n```", None),
    ("search-trunc", "codex", "Add guest names to the episode search as a filterable attribute. Which index is "
     "live right now? I don't want to touch an old one by mistake.", None),
    ("whisper-pool", "claude-log", "transcripts have been stuck for hours and the whisper pods just sit in "
     "Pending. which node pool are they supposed to be on?\n\n" + PENDING_POD, None),
    ("whisper-pool", "codex-tool", "A creator says the transcript for her episode has said 'processing' for two "
     "days. Find out why and fix whatever is wrong with the job config.",
     ("kubectl -n media logs job/transcribe-ep-55120 --tail=6", "attempt 9: loading large-v3 on cuda:0\n"
      "RuntimeError: CUDA out of memory. Tried to allocate 2.10 GiB (GPU 0; 14.58 GiB total capacity)\n"
      "attempt 10: loading large-v3 on cuda:0\nRuntimeError: CUDA out of memory. Tried to allocate 2.10 GiB "
      "(GPU 0; 14.58 GiB total capacity)\nattempt 11: loading large-v3 on cuda:0\n")),
    ("migrations", "claude", "I added a published_tz column to episodes (alembic revision 3f2a9c, tiny, just a "
     "nullable text column). Whats the quickest way to get it onto prod? I was going to run alembic upgrade head "
     "from the bastion like I did on staging yesterday.", None),
    ("api-limit", "claude-log", "Partner (Podfetch) says their importer keeps getting throttled by the creator "
     "API. Their log is below. What's our actual limit, so I can tell them how to pace their requests?\n\n"
     + THROTTLED, None),
    ("ip-trunc", "codex", "Add city-level geo to the downloads ingest (analytics/ingest/geo.py) with MaxMind "
     "GeoLite2. I'd also like to keep the full client IP in the requests table so we can rerun lookups when "
     "the geo db updates. Any reason not to? If not, go ahead.", None),
    ("show-toggles", "claude", "Support wants to turn on the new transcript viewer for three shows only (77, "
     "1204, 3320) as a pilot, and they want to flip it themselves without asking us every time. Where should "
     "that switch go? I was about to make a GrowthBook flag with a list of show ids.", None),
    ("local-audio", "claude-tool", "uploads through the local web editor never leave 'pending'. figure out whats "
     "missing in my setup and fix it",
     ("docker compose ps --format '{{.Service}} {{.State}}' && docker compose logs api --tail 3",
      "api running\npostgres running\napi-1  | WARN storage: upload u_8841 queued, no worker heartbeat\n"
      "api-1  | ERROR storage: connect ECONNREFUSED 127.0.0.1:9000\napi-1  | ERROR storage: connect "
      "ECONNREFUSED 127.0.0.1:9000\n")),
)
NULL_TURNS = (
    ("claude", "Rename the EpisodeCard component to EpisodeTile across web/ and fix the storybook stories and the "
     "snapshot tests that reference it.", None),
    ("codex-tool", "The RSS feed validator in CI fails on our podcast:transcript tags. fix the feed generator so "
     "it passes",
     ("make validate-feeds", "validating fixtures/feeds/8812.xml\n  ERROR line 41: <podcast:transcript> is missing "
      "required attribute 'type'\n  ERROR line 77: <podcast:transcript> is missing required attribute 'type'\n"
      "2 errors in 1 feed\nmake: *** [validate-feeds] Error 1\n")),
    ("claude-log", "this blew up in the transcode worker for one upload, what does it mean and should we handle "
     "it better?\n\nTraceback (most recent call last):\n  File \"/app/workers/transcode/probe.py\", line 27, in "
     "probe\n    out = subprocess.run(cmd, check=True, capture_output=True)\n  File \"/usr/lib/python3.12/"
     "subprocess.py\", line 571, in run\n    raise CalledProcessError(retcode, process.args,\nsubprocess."
     "CalledProcessError: Command '['ffprobe', '-v', 'error', '-show_format', '-of', 'json', '/tmp/up_8841.m4a']' "
     "returned non-zero exit status 1.\nstderr: [mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d1c2a0] moov atom not found\n"
     "/tmp/up_8841.m4a: Invalid data found when processing input", None),
    ("codex", "Write a ClickHouse query for the 20 shows with the most listening hours in November from "
     "listening_sessions (columns show_id, started_at, seconds_played), with the show title joined from shows.",
     None),
    ("claude", "quick one: whats the difference between CBR and VBR mp3, and why do some podcast apps show the "
     "wrong duration or seek badly on VBR files?", None),
    ("claude-after-compact", "Before the PR: the golden-file tests take 40 s now. Make the two slow fixtures run "
     "only when RUN_SLOW=1 is set and leave the rest as is.", None),
    ("codex", "services/payouts/webhooks.py has no tests at all. Add pytest tests for the Stripe account.updated "
     "event with a fixture payload, and one for a bad signature.", None),
    ("claude", "The Now Playing screen in the iOS app freezes the artwork when you skip chapters quickly. Here's "
     "the view, what's wrong with it?\n\n```swift\nstruct NowPlayingView: View {\n    @ObservedObject var "
     "player: PlayerViewModel\n    var body: some View {\n        AsyncImage(url: player.chapter?.imageURL) { img "
     "in img.resizable() } placeholder: { ProgressView() }\n            .id(player.episode.id)\n    }\n}\n```",
     None),
    ("codex-tool", "make check fails on my branch with a mypy error in the ad-stitcher client, fix it",
     ("make check", "services/api/ads/client.py:88: error: Item \"None\" of \"Campaign | None\" has no attribute "
      "\"slots\"  [union-attr]\nFound 1 error in 1 file (checked 212 source files)\nmake: *** [check] Error 1\n")),
)
