"""Evidence after tool results: does a turn's cost grow with the evidence the conversation holds?

    python bench/bench_result_evidence.py [--rounds 40]

A real ctxproxy in this process in front of the scripted provider, one
Anthropic session of Claude Code's shape. Round ``i`` adds one tool call and
its result, a log line naming ``pool_<i>``, an identifier one memory of the
caller holds: recall's second query finds it and inject places it after that
result; every later request carries all the earlier results, so inject gives
each earlier evidence again, byte for byte. The same conversation runs with
``tool_outputs = false`` beside it (rounds interleaved). Printed: the recall
and inject filters' time per turn (the manifest's ``timings_ms``) over the
first and the last rounds, each median, for both; and that the evidence of
round 1 kept its bytes to the end.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


async def run(rounds: int) -> None:
    import aiohttp
    from aiohttp import web

    sys.path.insert(0, str(ROOT / "tests"))
    from memhelp import put_memory

    from ctxproxy.config import load_config
    from ctxproxy.proxy.edge.server import APP_STATE, make_app
    from ctxproxy.proxy.scripted_provider import FakeProvider

    async def serve(app):
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"

    async with FakeProvider() as fake:
        with tempfile.TemporaryDirectory() as tmp:
            apps, runners = {}, []
            for name, toml in (("on", ""), ("off", "[filters.recall]\ntool_outputs = false\n")):
                path = Path(tmp) / f"{name}.toml"
                path.write_text(toml)
                cfg = load_config(path, port=0, data_dir=str(Path(tmp) / name), anthropic_upstream=fake.url,
                                  openai_upstream=fake.url)
                app = make_app(cfg)
                runner, url = await serve(app)
                runners.append(runner)
                store = app[APP_STATE].services["store"]
                for i in range(rounds):
                    put_memory(store, "acme", f"Worker pool pool_{i} drains its queue into bucket b{i}-east; "
                                              f"restart it with the drain flag.", kind="fact", user="alice")
                for i in range(200):
                    put_memory(store, "acme", f"Release note {i}: the dashboard shows panel {i} first.",
                               kind="fact", user="alice")
                apps[name] = (app, url, store)
            convs = {name: [{"role": "user", "content": "The workers are stuck again; look at the logs and fix it."}]
                     for name in apps}
            firsts: dict[str, str] = {}
            hdrs = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "X-Ctx-Tenant": "acme",
                    "X-Ctx-User": "alice"}
            async with aiohttp.ClientSession() as http:
                for i in range(rounds):
                    for name in (("on", "off") if i % 2 else ("off", "on")):
                        msgs = convs[name]
                        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}",
                                                                     "name": "Bash",
                                                                     "input": {"command": f"tail log {i}"}}]},
                                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                                               "content": f"ERROR pool_{i}: queue stuck, "
                                                                          f"{i * 37 % 1000} items waiting\n" * 3}]}]
                        body = {"model": "claude-test", "max_tokens": 16, "messages": msgs}
                        async with http.post(f"{apps[name][1]}/v1/messages", json=body,
                                             headers={**hdrs, "X-Ctx-Session": f"bench-{name}"}) as r:
                            assert r.status == 200, await r.text()
                        sent = fake.last.json["messages"][2]["content"]
                        if name == "on" and len(sent) > 1:
                            firsts.setdefault("round 1", sent[1]["text"])
                            firsts["last"] = sent[1]["text"]
            await asyncio.sleep(0.5)  # the manifests are written behind the turns
            for name, (app, _, store) in apps.items():
                ms = store.manifests.list("acme", session=f"bench-{name}")
                ms = sorted((m.data for m in ms), key=lambda d: d.get("started_ns") or 0)
                for f in ("recall", "inject"):
                    t = [float((m.get("timings_ms") or {}).get(f) or 0.0) for m in ms]
                    head, tail = t[2:12], t[-10:]
                    print(f"tool_outputs {name:3}: {f:6} ms per turn, rounds 3-12 median "
                          f"{statistics.median(head):.3f}, last 10 rounds median {statistics.median(tail):.3f}")
            same = firsts.get("round 1") == firsts.get("last") and firsts.get("round 1")
            print(f"round 1's evidence the same bytes on round {rounds}: {'yes' if same else 'NO'}")
            print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
            for runner in runners:
                await runner.cleanup()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    asyncio.run(run(max(13, min(args.rounds, 200))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
