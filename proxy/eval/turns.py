"""The turns set: realistic agent turns, the memory each should bring back, and memories it should not.

Questions in a test are one clean line; an agent's turns are not. Each turn
here is a whole request in the shape Claude Code or Codex sends it (as
recorded in ``shared/fixtures/real-clients``; the content is our own): a long
request naming several things, a pasted log or stack trace, the turn that
returns a tool's result (the user's words are two items back; the goal is
the conversation's first prompt), a turn after the agent compacted its
history, each wrapped as the agent wraps it (Claude Code's
``<system-reminder>`` with the project's CLAUDE.md, Codex's ``AGENTS.md``
instructions and environment context, a compaction summary). The rule files
and summaries name other topics on purpose: recall must read the user's
words, not the wrapper.

- one project's memories (tenant ``acme``, user ``dev``): facts each turn
  needs, and distractors sharing the turns' words (staging, tests, refunds,
  Kafka, the gateway…) that answer none of them;
- ``TURNS``: each names the memory it needs (``expect``: a string only that
  memory holds); every other recalled item is a false injection;
- ``NULL_TURNS``: turns about something no memory covers: anything recalled
  is a false injection.

Metrics (``probes.metrics``): ``turn_hit_rate`` (the expected memory among the
injected items), ``false_injection_rate`` (turns with any other recalled item)
and ``false_injections_per_turn``. Every turn is a new session of the same
developer, so nothing is reused between them.
"""
from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from .spec import Memory, ProbeSet, Question

TENANT, USER, PROJECT = "acme", "dev", "shop"

# (statement, the string only it holds)
FACTS = {
    "staging-port": ("Staging listens on port 8443, not 443.", "port 8443"),
    "localstack": ("The integration tests need LOCALSTACK_HOST set to localstack.internal:4566.",
                   "localstack.internal:4566"),
    "cents": ("Refund amounts are stored as integer cents in the refunds.amount_cents column.", "amount_cents"),
    "webhook": ("The payments webhook secret rotates every 90 days; the current key id is whk-2026-11.",
                "whk-2026-11"),
    "release": ("Production deploys go through the release-train job in Jenkins, never from a laptop.",
                "release-train job"),
    "flaky": ("test_settlement_batch fails when the clock crosses midnight UTC: rerun it, never skip it.",
              "crosses midnight UTC"),
    "owner": ("Ana Kowalski owns the ledger service and reviews every change to its schema.", "Ana Kowalski"),
    "redis": ("The session cache is the redis-sessions-3 cluster in eu-west-1.", "redis-sessions-3"),
    "errors": ("Decision: the public API returns errors as RFC 7807 problem+json documents.", "RFC 7807"),
    "export": ("The nightly export job writes parquet files to s3://acme-exports/nightly/ and keeps 30 days.",
               "s3://acme-exports/nightly/"),
    "killswitch": ("The kill switch for checkout is the LaunchDarkly flag checkout-kill-v2.", "checkout-kill-v2"),
    "pinning": ("The mobile app pins TLS certificates: rotating the api.acme.io certificate needs an app release "
                "first.", "pins TLS certificates"),
    "depth": ("The gateway rejects GraphQL queries nested deeper than 8 levels (max_depth = 8).", "max_depth = 8"),
    "migrations": ("Database migrations stay backwards compatible for one release: expand, then contract.",
                   "expand, then contract"),
    "indexer": ("The search indexer consumes the orders-cdc topic with consumer group search-indexer-v4.",
                "search-indexer-v4"),
    "loadtest": ("Load tests run with k6 from perf/ against the perf-1 environment, never against staging.",
                 "perf-1 environment"),
}
# Visible to every turn, sharing its words, answering none of them.
DISTRACTORS = (
    "Staging's database is refreshed from a production snapshot every Sunday night.",
    "The integration test suite takes about 14 minutes on CI.",
    "Refund confirmation emails use the refund-issued template of the notifier service.",
    "Jenkins build agents are rebuilt every Monday morning.",
    "The ledger service exposes its metrics on /internal/metrics.",
    "Kafka topics are created through the platform team's Terraform module.",
    "The checkout page's A/B experiments are configured in Optimizely.",
    "Parquet schemas are documented in docs/data/schemas.md.",
    "Session cookies expire after 12 hours of inactivity.",
    "The gateway allows 600 requests per minute per API key.",
    "The design team keeps the icon set in Figma.",
    "Quarterly planning happens in the first week of January, April, July and October.",
)

CLAUDE_MD = ("# Shop\n- Run make test before pushing; CI runs the integration tests on every PR.\n"
             "- Staging config lives in deploy/staging.env; never commit secrets.\n"
             "- The ledger, refunds and checkout services share the Postgres cluster.\n"
             "- Use the Kafka client wrapper in libs/kafka, not the raw client.\n")
AGENTS_MD = ("# Shop: agent rules\n- Answer briefly.\n- Run make test before proposing a commit; the integration "
             "tests need Docker.\n- Migrations go in db/migrations with a timestamp prefix.\n"
             "- Refunds, payments and the webhook handlers are in services/payments.\n")
SUMMARY = ("Summary:\n1. Primary request: fix the Kafka consumer lag alerts and clean up the checkout A/B "
           "experiment flags.\n2. Done: bumped the consumer's max.poll.records, removed two stale flags, "
           "the integration tests passed on CI.\n3. Pending: nothing on the lag alerts.")

LOG = "\n".join(f"2026-11-30T23:{m:02d}:{s:02d}.{s * 37 % 1000:03d}Z INFO  worker-{s % 4} processed batch "
                f"{1000 + m * 60 + s} in {40 + (m * s) % 90} ms (queue depth {(m * 7 + s) % 23})"
                for m in range(50, 60) for s in range(0, 60, 4))

# (memory key or None, shape, what the user writes, a tool's command and output for tool-result shapes)
TURNS = (
    ("staging-port", "claude", "Can you update the deploy script so that it uses the right port for staging? I "
     "think it is broken since yesterday and the CI keeps failing on the integration tests, please look at "
     "scripts/deploy.sh first.", None),
    ("staging-port", "codex-tool", "The smoke check against staging times out. Find out why and fix "
     "tools/smoke.py; it should hit the staging endpoint on the port staging actually listens on.",
     ("sed -n 1,40p tools/smoke.py", "import httpx\n\nURL = 'https://staging.acme.internal:443/healthz'\n\n"
      "def main():\n    r = httpx.get(URL, timeout=5)\n    r.raise_for_status()\n")),
    ("localstack", "claude-tool", "The integration tests fail locally with a connection refused from the S3 "
     "client. Can you figure out what environment they expect? Run them and tell me.",
     ("make test-integration", "tests/integration/test_uploads.py::test_put_object FAILED\nE   botocore."
      "exceptions.EndpointConnectionError: Could not connect to the endpoint URL: \"http://localhost:4566/\"\n"
      "=========== 1 failed, 41 passed in 12.31s ===========")),
    ("cents", "codex", "I'm adding partial refunds to services/payments/refunds.py. Before I write the "
     "migration: how should the refunded amount be stored, and which column do the other refunds use? I "
     "want this to match what is there, then add tests for a refund of 12.50.", None),
    ("webhook", "claude-log", "Webhooks from the payment provider started failing signature checks this "
     "morning. Here is the log, can you tell me what changed and which key id we should be verifying "
     "with?\n\n" + "\n".join(f"2026-12-01T07:{m:02d}:11Z WARN payments.webhook signature mismatch for event "
                              f"evt_{m}9a2 (key id whk-2026-08)" for m in range(10, 40)), None),
    ("release", "claude", "We need to ship the hotfix for the invoice rounding bug to production today. "
     "The branch is hotfix/invoice-rounding, tests are green. What is the right way to get it deployed? I "
     "was going to run the deploy from my machine to save time.", None),
    ("flaky", "claude-tool", "CI on main is red again, this time in the settlement tests. Can you look at "
     "the failure and decide whether we should skip the test for now?",
     ("gh run view 8812 --log-failed", "tests/test_settlement.py::test_settlement_batch FAILED\n"
      "E   AssertionError: expected batch date 2026-11-30, got 2026-12-01\n"
      "==== 1 failed, 318 passed in 94.02s ====")),
    ("owner", "codex", "I want to add a nullable currency column to the ledger entries table and backfill "
     "it from the accounts table. Draft the migration and tell me who needs to review the schema change "
     "before I open the PR.", None),
    ("redis", "claude-log", "Users get logged out at random since the last deploy. I pasted the auth "
     "service log below; which cache cluster are sessions supposed to be in, and is the service pointing "
     "at the right one?\n\n" + "\n".join(f"2026-12-01T10:{m:02d}:03Z ERROR auth.session lookup miss for "
                                          f"sid=s{m}f3 (cache host redis-cache-1.eu-west-1)" for m in range(0, 30)),
     None),
    ("errors", "codex-tool", "Add input validation to the POST /v1/orders handler and return a proper error "
     "when the quantity is negative. Follow whatever format our public API uses for errors.",
     ("rg -n 'def create_order' services/orders", "services/orders/api.py:88:def create_order(req):\n"
      "services/orders/api.py:89:    body = req.json()\n")),
    ("export", "claude", "The data team says yesterday's export is missing. Where does the nightly export "
     "job write its parquet files, and how long are they kept? I want to check whether the file for the "
     "29th is still there before I rerun anything.", None),
    ("killswitch", "codex", "Checkout is throwing 500s for about 3% of users after the last release and "
     "I'm on call. How do I turn checkout off quickly while we investigate? Give me the exact flag name.",
     None),
    ("pinning", "claude", "The api.acme.io certificate expires in three weeks. Can you prepare the "
     "rotation? I'd like a checklist of everything that has to happen, in order, including anything "
     "the mobile apps need.", None),
    ("depth", "claude-log", "A partner says their GraphQL query gets rejected by the gateway with no useful "
     "message. The query is below. Why is it rejected?\n\n```graphql\nquery { shop { orders { items { "
     "product { vendor { address { country { region { name } } } } } } } } }\n```", None),
    ("migrations", "codex", "I want to rename the column customers.fullname to customers.display_name. "
     "Write the migration for it; we deploy the API and the workers separately, so think about what "
     "happens while both versions run.", None),
    ("indexer", "claude-tool", "Search results are stale by about an hour. Check the lag of the search "
     "indexer's consumer and tell me what's going on.",
     ("kafka-consumer-groups --describe --all-groups | head", "GROUP TOPIC PARTITION LAG\n"
      "billing-v2 invoices 0 0\nnotifier-v1 emails 0 3\n")),
    ("loadtest", "codex", "Before the sale next week I want to load test checkout at 5x the usual traffic. "
     "Set up the k6 script and tell me which environment to point it at; staging seems the obvious "
     "choice.", None),
    ("staging-port", "claude-after-compact", "Now point the health check in deploy/healthcheck.yaml at "
     "staging's real port.", None),
    ("cents", "claude-after-compact", "Next: the refund report shows amounts like 1250 for a 12.50 refund. Is "
     "the report reading the column wrong, or is that how refunds are stored?", None),
    ("owner", "claude-log", "Got this review request bounced, who actually owns the ledger service?\n\n"
     + "\n".join(f"remote: {line}" for line in ("Resolving deltas: 100% (3/3)", "error: review rule "
                                                "'ledger-schema' requires an approval from the service owner",
                                                "To github.com:acme/shop.git", " ! [remote rejected] "
                                                "ledger-currency -> ledger-currency (protected branch hook "
                                                "declined)")), None),
    # The subject in a remark, the ask naming only what is wanted of it ("its region", "a reviewer").
    ("redis", "claude", "I'm moving the auth service to the new VPC next sprint. The session cache has to "
     "move with it, so I need the name of the cluster and its region.", None),
    ("owner", "codex", "The ledger schema change in PR 4411 is ready and CI is green. Who do I add as "
     "reviewer?", None),
    ("export", "claude", "Our analysts can't find last night's parquet export and they are blocked. Look "
     "into where the job puts its files.", None),
    ("webhook", "codex-tool", "Signature verification on incoming payment webhooks broke after the weekend. "
     "Sort out which key id the handler should be using and patch it.",
     ("rg -n KEY_ID services/payments", "services/payments/webhooks.py:12:KEY_ID = 'whk-2026-08'\n")),
    ("depth", "claude-after-compact", "One more thing from the partner: their deeply nested GraphQL query "
     "still fails at the gateway. What is the nesting limit?", None),
    ("killswitch", "claude-log", "Checkout errors are spiking, see below. Kill it now, what's the flag?\n\n"
     + "\n".join(f"2026-12-01T12:{m:02d}:40Z ERROR checkout.api POST /v1/checkout 500 (upstream timeout, "
                 f"req r{m}c7)" for m in range(0, 25)), None),
    ("pinning", "codex", "Security wants the api.acme.io certificate swapped this week. Anything that stops us "
     "from just replacing it on the load balancer?", None),
    ("loadtest", "claude", "Marketing plans a flash sale and I have the k6 scripts in perf/ ready. Which "
     "environment do I run them against? Staging is idle today.", None),
)
NULL_TURNS = (
    ("claude", "Can you rename the helper format_money to format_amount everywhere in libs/ and update the "
     "imports? Keep the old name as a deprecated alias for one release.", None),
    ("codex-tool", "The README's setup section is out of date. Rewrite it for a new developer on macOS, "
     "using what's in the Makefile.", ("cat Makefile", "setup:\n\tbrew bundle\n\tpython -m venv .venv\n"
                                       "lint:\n\truff check .\n")),
    ("claude-log", "This stack trace showed up in the notebook I use for analysis, what does it mean?\n\n"
     "Traceback (most recent call last):\n  File \"analysis.py\", line 12, in <module>\n    df = pd.read_csv("
     "path)\n  File \"pandas/io/parsers/readers.py\", line 912, in read_csv\nUnicodeDecodeError: 'utf-8' codec "
     "can't decode byte 0xe9 in position 1041: invalid continuation byte", None),
    ("codex", "Write a small Python function that groups a list of dicts by a key and returns a dict of "
     "lists, with type hints and a docstring, plus two doctests.", None),
    ("claude", "I keep mixing up git rebase and merge. Explain when I should use each in our repo, with a "
     "short example of an interactive rebase to squash my last three commits.", None),
    ("claude-after-compact", "Thanks. Now please add a CHANGELOG entry for what we did and bump the patch "
     "version.", None),
    ("codex", "The staging database refresh ran long on Sunday. Can you write a query that lists the ten "
     "largest tables by size in Postgres?", None),
    ("claude", "The integration tests are all green now. Summarise the diff of this branch for the PR "
     "description.", None),
    ("claude-log", "The linter complains about this; how do I fix it?\n\n" + LOG[:600] +
     "\nlibs/text/wrap.py:14:5: E731 do not assign a lambda expression, use a def", None),
)


def _claude_reminder(rules: str) -> str:
    return ("<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
            "# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere to these "
            "instructions.\n\nContents of /work/shop/CLAUDE.md (project instructions, checked into the "
            f"codebase):\n\n{rules}\n# currentDate\nToday's date is 2026-12-01.\n\n      IMPORTANT: this "
            "context may or may not be relevant to your tasks.\n</system-reminder>\n")


def _todo_reminder() -> str:
    return ("<system-reminder>\nThe TodoWrite tool hasn't been used recently. If you're working on tasks "
            "that would benefit from tracking progress, consider using the TodoWrite tool. Make sure that "
            "you NEVER mention this reminder to the user\n</system-reminder>")


def claude_body(prompt: str, shape: str, tool: tuple[str, str] | None, rules: str = CLAUDE_MD,
                summary: str = SUMMARY) -> dict:
    """A Claude Code request (``/v1/messages``) around the user's words."""
    system = [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
              {"type": "text", "text": "You are an interactive CLI tool that helps users with software "
                                       "engineering tasks.", "cache_control": {"type": "ephemeral"}}]
    first = [{"type": "text", "text": _claude_reminder(rules)}]
    if shape == "claude-after-compact":
        messages = [
            {"role": "user", "content": first + [{"type": "text", "text": (
                "This session is being continued from a previous conversation that ran out of context. The "
                f"summary below covers the earlier portion of the conversation.\n\n{summary}\n\nContinue the "
                "conversation from where it left off without asking the user any further questions.")}]},
            {"role": "assistant", "content": [{"type": "text", "text": "The lag alerts are fixed and the flags "
                                                                      "are removed."}]},
            {"role": "user", "content": [{"type": "text", "text": prompt, "cache_control": {"type": "ephemeral"}}]}]
    else:
        messages = [{"role": "user", "content": first + [{"type": "text", "text": prompt,
                                                           "cache_control": {"type": "ephemeral"}}]}]
    if tool is not None:
        command, output = tool
        messages += [
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": command}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": output},
                {"type": "text", "text": _todo_reminder(), "cache_control": {"type": "ephemeral"}}]}]
    return {"model": "claude-test-1", "max_tokens": 64, "system": system, "messages": messages, "stream": False}


def codex_body(prompt: str, tool: tuple[str, str] | None, rules: str = AGENTS_MD) -> dict:
    """A Codex request (``/v1/responses``) around the user's words."""
    context = [
        {"type": "input_text", "text": f"# AGENTS.md instructions for /work/shop\n\n<INSTRUCTIONS>\n{rules}"
                                       "</INSTRUCTIONS>"},
        {"type": "input_text", "text": "<environment_context>\n  <cwd>/work/shop</cwd>\n  <shell>bash</shell>\n"
                                       "  <current_date>2026-12-01</current_date>\n</environment_context>"}]
    items: list = [{"type": "message", "role": "developer",
                    "content": [{"type": "input_text", "text": "You are Codex, a coding agent."}]},
                   {"type": "message", "role": "user", "content": context},
                   {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}]
    if tool is not None:
        command, output = tool
        items += [{"type": "function_call", "call_id": "call_01", "name": "shell",
                   "arguments": json.dumps({"command": ["bash", "-lc", command]})},
                  {"type": "function_call_output", "call_id": "call_01",
                   "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})}]
    return {"model": "gpt-test", "instructions": "You are Codex.", "input": items, "store": False,
            "stream": False}


def body_of(shape: str, prompt: str, tool: tuple[str, str] | None, half: Any = None) -> tuple[str, dict]:
    """(api, request body) of a turn of this shape, wrapped in ``half``'s rule files (default: this module's)."""
    half = half or sys.modules[__name__]
    rules = getattr(half, "AGENTS_MD", AGENTS_MD)
    if shape.startswith("codex"):
        return "responses", codex_body(prompt, tool, rules)
    return "anthropic", claude_body(prompt, shape, tool, getattr(half, "CLAUDE_MD", CLAUDE_MD),
                                    getattr(half, "SUMMARY", SUMMARY))


# (label, module): the halves, each a project of its own. The sealed half is imported only when it
# is scored (``build(sealed=True)``: the lead's one run), so ``--no-sealed`` never reads it.
HALVES = (("dev", __name__), ("held-out", "ctxproxy.proxy.eval.turns_heldout"),
          ("dev (fresh)", "ctxproxy.proxy.eval.turns_fresh"),
          ("dev (fresh2)", "ctxproxy.proxy.eval.turns_fresh2"),
          ("dev (fresh3)", "ctxproxy.proxy.eval.turns_fresh3"),
          ("dev (fresh4)", "ctxproxy.proxy.eval.turns_fresh4"),
          ("dev (fresh5)", "ctxproxy.proxy.eval.turns_fresh5"),
          ("dev (fresh6)", "ctxproxy.proxy.eval.turns_fresh6"),
          ("dev (fresh7)", "ctxproxy.proxy.eval.turns_fresh7"),
          ("dev (fresh8)", "ctxproxy.proxy.eval.turns_fresh8"),
          ("dev (fresh9)", "ctxproxy.proxy.eval.turns_fresh9"),
          ("dev (fresh10)", "ctxproxy.proxy.eval.turns_fresh10"),
          ("dev (fresh11)", "ctxproxy.proxy.eval.turns_fresh11"),
          ("dev (fresh12)", "ctxproxy.proxy.eval.turns_fresh12"),
          ("dev (fresh13)", "ctxproxy.proxy.eval.turns_fresh13"),
          ("dev (fresh14)", "ctxproxy.proxy.eval.turns_fresh14"),
          ("dev (fresh15)", "ctxproxy.proxy.eval.turns_fresh15"),
          ("dev (fresh16)", "ctxproxy.proxy.eval.turns_fresh16"),
          ("dev (fresh17)", "ctxproxy.proxy.eval.turns_fresh17"),
          ("dev (fresh18)", "ctxproxy.proxy.eval.turns_fresh18"),
          ("dev (fresh19)", "ctxproxy.proxy.eval.turns_fresh19"),
          ("dev (fresh20)", "ctxproxy.proxy.eval.turns_fresh20"),
          ("dev (fresh21)", "ctxproxy.proxy.eval.turns_fresh21"),
          ("held-out (sealed)", "ctxproxy.proxy.eval.turns_fresh22"))
SEALED = {"held-out (sealed)"}  # written independently and never read: the report gives its numbers, not its texts


def build(seed: int = 7, sealed: bool = True) -> ProbeSet:
    """Every half, each in its own project: ``dev`` (this module: what the defaults were tuned
    on), ``held-out`` (``turns_heldout``: read since), ``dev (fresh)``, ``dev (fresh2)`` and
    ``dev (fresh3)``, ``dev (fresh4)``, ``dev (fresh5)``, ``dev (fresh6)``, ``dev (fresh7)``, ``dev (fresh8)``, ``dev (fresh9)``, ``dev (fresh10)``, ``dev (fresh11)``, ``dev (fresh12)``, ``dev (fresh13)``, ``dev (fresh14)``, ``dev (fresh15)``, ``dev (fresh16)``, ``dev (fresh17)``, ``dev (fresh18)``, ``dev (fresh19)``, ``dev (fresh20)``, ``dev (fresh21)`` (``turns_fresh*``: each sealed once, read since) and
    ``held-out (sealed)`` (``turns_fresh22``: written by someone who had seen
    neither recall's code nor a result, scored once). ``sealed=False`` leaves the sealed half out
    unread (``ctxproxy eval --no-sealed``: every run made while changing recall)."""
    ps = ProbeSet("turns")
    n = 0
    for split, name in HALVES:
        if split in SEALED and not sealed:
            continue
        half = importlib.import_module(name)
        who = {"tenant": TENANT, "user": USER, "project": half.PROJECT}
        for statement, _ in half.FACTS.values():
            ps.memories.append(Memory(statement, TENANT, {"kind": "fact", "user": USER, "project": half.PROJECT,
                                                          "evidence_ref": "session:setup"}))
        for statement in half.DISTRACTORS:
            ps.memories.append(Memory(statement, TENANT, {"kind": "fact", "user": USER, "project": half.PROJECT,
                                                          "evidence_ref": "session:setup"}))
        for key, shape, prompt, tool in half.TURNS:
            api, body = body_of(shape, prompt, tool, half)
            ps.questions.append(Question(prompt, {**who, "session": f"turns-{seed}-{n}"}, api,
                                         expect=[half.FACTS[key][1]], variant=shape, body=body, exclusive=True,
                                         split=split, sealed=split in SEALED))
            n += 1
        for shape, prompt, tool in half.NULL_TURNS:
            api, body = body_of(shape, prompt, tool, half)
            ps.questions.append(Question(prompt, {**who, "session": f"turns-{seed}-{n}"}, api,
                                         variant=shape + " (nothing)", body=body, exclusive=True, split=split,
                                         sealed=split in SEALED))
            n += 1
    return ps
