"""``ctxproxy demo`` — a short agent session through the proxy, on this machine.

Starts a scripted provider and ctxproxy on 127.0.0.1, then drives a coding
agent's session with the official ``anthropic`` SDK and prints what ctxproxy
did on each turn, from that turn's stored Context Manifest:

1. the agent asks for a PR  → the model runs ``gh pr create`` (a side effect);
2. the PR is created        → recorded as a completed effect, reference PR #4821;
3. a long build log comes back;
4. a tool read ``.env``     → its secret is redacted before it leaves, and the
                              now-old build log is pruned (original kept);
5. the agent compacts       → the task checkpoint tells the model the PR exists.

Nothing leaves the machine: the "provider" is scripted and local.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

DEMO_CONFIG = """
[pipeline]
request = ["identify", "redact", "effects", "prune", "inject", "manifest"]

[filters.prune]
trigger_tokens = 3000   # small on purpose: the demo's build log is long enough to trigger it
keep_recent = 1
min_tokens = 50
"""
SECRET = "sk-proj-" + "Z3k9Qm2Lx7Vb4Np8Rt6Yw1Hc5Jd0Fg3Ks9Ua2Ee7Ti4Oo1Pq"  # fake, shaped like an OpenAI key
BUILD_LOG = "\n".join(f"[{i:04d}] compiling module_{i}.py ... ok ({i % 7} warnings)" for i in range(900))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="run a short scripted agent session through ctxproxy and show "
                                           "what it did on each turn",
                              description="\n\n".join(__doc__.split("\n\n")[1:]) if __doc__ else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keep", metavar="DIR", help="keep the demo's data directory here (default: a temp dir)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        import anthropic  # noqa: F401
    except ImportError:
        print("ctxproxy demo drives the official anthropic SDK: pip install 'anthropic>=1.0' "
              "(or '.[demo]' in the source tree)", file=sys.stderr)
        return 2
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        return asyncio.run(run(Path(args.keep), keep=True))
    with tempfile.TemporaryDirectory(prefix="ctxproxy-demo-") as tmp:
        return asyncio.run(run(Path(tmp)))


async def run(data_dir: Path, out: Any = None, keep: bool = False) -> int:
    import anthropic
    from aiohttp import web

    from ctxproxy.config import load_config

    from .manifest import render
    from ..scripted_provider import FakeProvider, Reply
    from ..edge.server import APP_STATE, make_app

    out = out or sys.stdout
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    cfg_path = data_dir / "demo.toml"
    cfg_path.write_text(DEMO_CONFIG)
    async with FakeProvider() as provider:
        provider.script(
            Reply.tool_call("Bash", {"command": "gh pr create --title 'Fix login timeout'"}),
            Reply.tool_call("Bash", {"command": "make build 2>&1 | tail -n 900"}),
            Reply.tool_call("Read", {"file_path": ".env"}),
            Reply.text("The build is green and PR #4821 is open."),
            Reply.text("PR #4821 is already open; I will not open another one."),
        )
        cfg = load_config(cfg_path, data_dir=str(data_dir / "data"), anthropic_upstream=provider.url,
                          openai_upstream=provider.url, port=0)
        app = make_app(cfg)
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        host, port = runner.addresses[0][:2]
        client = anthropic.AsyncAnthropic(base_url=f"http://{host}:{port}", api_key="demo-key", max_retries=0,
                                          default_headers={"X-Ctx-Session": "demo-session"})
        tools = [{"name": n, "description": d, "input_schema": {"type": "object", "properties": {
            k: {"type": "string"}}}} for n, d, k in (("Bash", "Run a shell command", "command"),
                                                     ("Read", "Read a file", "file_path"))]
        history: list[dict] = [{"role": "user", "content": "Fix the login timeout and open a PR."}]
        results = ["Created https://github.com/acme/app/pull/4821",
                   BUILD_LOG,
                   f"DATABASE_URL=postgres://app@db/app\nOPENAI_API_KEY={SECRET}\n"]
        steps = ["the model opens a PR (a side effect)",
                 "the PR result comes back: the effect completes with its reference",
                 "a long build log comes back",
                 "a tool result holds a secret (redacted); the old build log is pruned",
                 "the agent compacted its history: the checkpoint remembers the PR"]
        try:
            for i, step in enumerate(steps):
                if i == 4:  # the client compacts: earlier turns replaced by a summary
                    history = [{"role": "user", "content": "Summary of earlier work: fixed the login timeout. "
                                                           "Now make sure the change is up for review."}]
                raw = await client.messages.with_raw_response.create(
                    model="claude-demo", max_tokens=200, tools=tools, messages=history)
                msg = await raw.parse()
                turn_id = raw.headers.get("x-ctx-turn-id")
                app[APP_STATE].services.writer.flush()
                out.write(f"\n=== turn {i + 1}: {step} ===\n")
                out.write(_show(app, turn_id, render) + "\n")
                uses = [b for b in msg.content if b.type == "tool_use"]
                history.append({"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                                  for b in msg.content]})
                if uses and i < len(results):
                    history.append({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": uses[0].id, "content": results[i]}]})
            sent = b"".join(r.body for r in provider.requests)
            leaked = SECRET.encode() in sent
            out.write(f"\nThe provider received {len(provider.requests)} requests; the secret "
                      f"{'LEAKED' if leaked else 'never reached it'}.\n")
            if keep:
                out.write(f"Data kept in {data_dir / 'data'}; try: ctxproxy manifest show --session demo-session "
                          f"--data-dir {data_dir / 'data'}\n")
            return 1 if leaked else 0
        finally:
            await client.close()
            await runner.cleanup()


def _show(app: Any, turn_id: str | None, render: Any) -> str:
    from ctxproxy.store.lookups import find_manifest
    from ..edge.server import APP_STATE

    doc = find_manifest(app[APP_STATE].services.store, turn_id or "", None)
    return render(dict(doc.data)) if doc is not None else f"(no manifest for turn {turn_id})"
