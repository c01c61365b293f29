"""prune end to end: a 50-turn tool-heavy session per API through the official
SDKs and the proxy; the provider's prompt-cache prefix, pairs, monotonicity,
and pruned originals through the admin API and the CLI."""
import json
import os
import subprocess
import sys

import aiohttp
import pytest

from toolsession import prefix_share, prune_toml, results_of, run_session, script, tool_outputs, without_results

from ctxproxy.filters.prune import REF_PREFIX
from ctxproxy.proxy.cli.main import main as cli

TOKEN = "adm-test-token-1"
TURNS = 50
PRUNE_TOML = prune_toml(20000)
KEY = {"anthropic": "messages", "chat": "messages", "responses": "input"}


def client_for(api, proxy):
    return proxy.anthropic() if api == "anthropic" else proxy.openai()


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_fifty_turn_session_keeps_the_cached_prefix(api, make_proxy, fake, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", TOKEN)
    proxy = await make_proxy(PRUNE_TOML)
    outputs = tool_outputs(TURNS - 1, seed=11, scale=0.5)
    fake.script(*script(api, outputs))
    # Anthropic: no session header (the session is the conversation's fingerprint); OpenAI: X-Ctx-Session.
    headers = None if api == "anthropic" else {"X-Ctx-Session": f"sess-{api}"}
    sent = await run_session(api, client_for(api, proxy), outputs, headers=headers)
    bodies = [r.json for r in fake.model_requests]
    assert len(bodies) == len(sent) == TURNS

    # 1. the cached prefix: kept turn to turn except at batch pruning points
    share, breaks = prefix_share(api, bodies)
    batches = []  # turns where an earlier result's forwarded text changed: a batch
    pruned_text: dict[str, str] = {}
    for k, body in enumerate(bodies):
        client_results = results_of(api, {KEY[api]: sent[k]})
        got = results_of(api, body)
        assert list(got) == list(client_results)
        changed = False
        for cid, text in got.items():
            if cid in pruned_text:
                assert text != client_results[cid], f"turn {k}: {cid} was un-pruned"  # monotonic
                changed |= text != pruned_text[cid]
            if text != client_results[cid]:
                assert REF_PREFIX in text
                changed |= cid not in pruned_text
                pruned_text[cid] = text
        if changed:
            batches.append(k)
        # 2. pairs intact: only tool-result contents differ from what the agent sent
        assert without_results(api, body[KEY[api]]) == without_results(api, sent[k])
    with capsys.disabled():  # the number the issue asks to report
        print(f"\n{api}: {TURNS} turns, cached prefix kept on {share:.1%} of turns; "
              f"breaks at {breaks}, batches at {batches}, {len(pruned_text)} results pruned")
    assert len(batches) >= 2 and len(pruned_text) >= 20
    assert set(breaks) <= set(batches)
    assert share >= 0.9

    # 3. originals retrievable through the admin API (bearer token) ...
    refs = {cid: text[text.index(REF_PREFIX):].split()[0].rstrip("].") for cid, text in pruned_text.items()}
    originals = results_of(api, {KEY[api]: sent[-1]})
    async with aiohttp.ClientSession() as http:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        for cid, ref in refs.items():
            async with http.get(f"{proxy.url}/ctx/v1/pruned/{ref[len(REF_PREFIX):]}", headers=auth) as r:
                assert r.status == 200
                doc = await r.json()
            assert doc["content"] == originals[cid] and doc["call_id"] == cid and doc["ref"] == ref
            assert doc["tenant"] == "default" and doc["tokens"] > 0
        some = next(iter(refs.values()))[len(REF_PREFIX):]
        async with http.get(f"{proxy.url}/ctx/v1/pruned/{some}") as r:
            assert r.status == 401
        async with http.get(f"{proxy.url}/ctx/v1/pruned/{some}?tenant=other", headers=auth) as r:
            assert r.status == 404
        async with http.get(f"{proxy.url}/ctx/v1/pruned/{some}?format=text", headers=auth) as r:
            assert r.status == 200 and r.content_type == "text/plain"
        async with http.get(f"{proxy.url}/ctx/v1/pruned", params={"session": doc["session"]}, headers=auth) as r:
            listing = await r.json()
        assert {p["ref"] for p in listing["pruned"]} == set(refs.values())
        assert all("content" not in p for p in listing["pruned"])

    # ... and through the CLI (same process, store shared with the running proxy)
    data_dir = proxy.state.config.server.data_dir
    cid, ref = next(iter(refs.items()))
    capsys.readouterr()
    assert cli(["pruned", "show", ref, "--data-dir", data_dir]) == 0
    assert capsys.readouterr().out == originals[cid] + ("" if originals[cid].endswith("\n") else "\n")
    assert cli(["pruned", "list", "--session", doc["session"], "--data-dir", data_dir]) == 0
    assert set(capsys.readouterr().out.split()) >= set(refs.values())
    assert cli(["pruned", "show", "pr_nonexistent", "--data-dir", data_dir]) == 1
    assert cli(["pruned", "show", ref, "--data-dir", str(tmp_path / "nowhere")]) == 1


async def test_cli_in_its_own_process(make_proxy, fake, tmp_path):
    """`ctxproxy pruned show` as a user runs it, next to a running proxy."""
    proxy = await make_proxy(PRUNE_TOML)
    outputs = tool_outputs(30, seed=4, scale=0.5)
    fake.script(*script("chat", outputs))
    await run_session("chat", proxy.openai(), outputs, stream_every=0)
    body = fake.model_requests[-1].json
    ref = next(m["content"] for m in body["messages"] if m.get("role") == "tool" and REF_PREFIX in m["content"])
    ref = ref[ref.index(REF_PREFIX):].split()[0].rstrip("].")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "pruned", "show", ref, "--json",
                           "--data-dir", proxy.state.config.server.data_dir],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ref"] == ref and doc["tool"] in ("read_file", "grep", "run_tests", "list_dir")
    assert doc["content"] == outputs[int(doc["call_id"].split("_")[1])][2]


async def test_prune_off_by_default_forwards_untouched(make_proxy, fake):
    proxy = await make_proxy()  # embedded defaults: prune is not in the pipeline
    outputs = tool_outputs(12, seed=2)
    fake.script(*script("chat", outputs))
    sent = await run_session("chat", proxy.openai(), outputs, stream_every=0)
    for k, rec in enumerate(fake.model_requests):
        assert rec.json["messages"] == sent[k]
