"""No secret value leaves or stays: the whole corpus through the full pipeline,
then the provider's requests, the data directory, the logs and the exported
spans are searched for every secret value."""
import asyncio
import json
import logging
from pathlib import Path

import aiohttp

from ctxproxy.proxy.scripted_provider import Reply, ToolCall, Text
from secretcorpus import build_corpus

from ctxproxy.store.services.redaction import PLACEHOLDER_RE
from ctxproxy.store.services.redaction.builtin import builtin_rules
from ctxproxy.store.services.redaction.rules import DEFAULT_GROUPS

FULL = '[pipeline]\nrequest = ["identify", "redact", "effects", "prune", "inject", "manifest"]\n'


def secrets_of(samples):
    return sorted({v for s in samples for _, v in s.secrets if len(v) >= 8})


def search(haystack: bytes, values) -> list[str]:
    return [v for v in values if v.encode() in haystack]




async def test_corpus_leaves_no_trace(otlp, make_proxy, fake, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    groups = {r.id: r.group for r in builtin_rules()}
    samples = [s for s in build_corpus(seed=7, positives_per_rule=1)
               if s.positive and groups.get(s.rule) in DEFAULT_GROUPS]  # PII is an opt-in group
    values = secrets_of(samples)
    assert len(values) > 100
    proxy = await make_proxy(FULL, data_dir=str(tmp_path / "data"))
    ant, oai = proxy.anthropic(), proxy.openai()
    # Each sample travels as a tool result (and comes back in the model's answer
    # and tool arguments) through one of the three APIs, alternating.
    for i, s in enumerate(samples):
        api = ("anthropic", "chat", "responses")[i % 3]
        fake.script(Reply.of(Text(f"echo: {s.text}"), ToolCall("write_file", {"content": s.text}),
                             delta_chars=7))
        session = {"X-Ctx-Session": f"leak-{i % 5}"}
        if api == "anthropic":
            msgs = [{"role": "user", "content": "check the file"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "read_file",
                                                       "input": {"path": "x"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                  "content": s.text}]}]
            async with ant.messages.stream(model="claude-x", max_tokens=50, messages=msgs,
                                           extra_headers=session) as st:
                await st.get_final_message()
        elif api == "chat":
            msgs = [{"role": "user", "content": "check the file"},
                    {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
                        "name": "read_file", "arguments": json.dumps({"path": "x"})}}]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": s.text}]
            async for _ in await oai.chat.completions.create(model="gpt-x", messages=msgs, stream=True,
                                                             extra_headers=session):
                pass
        else:
            await oai.responses.create(model="gpt-x", extra_headers=session, input=[
                {"role": "user", "content": "check the file"},
                {"type": "function_call", "call_id": f"r{i}", "name": "read_file", "arguments": "{}"},
                {"type": "function_call_output", "call_id": f"r{i}", "output": s.text}])
    proxy.settled_store()
    tel = proxy.state.services["telemetry"]
    await asyncio.to_thread(tel.force_flush, 5000)

    sent = b"".join(r.body for r in fake.requests)
    assert search(sent, values) == [], "a secret reached the provider"
    assert b"[REDACTED:" in sent
    disk = b"".join(p.read_bytes() for p in Path(tmp_path / "data").rglob("*") if p.is_file())
    assert search(disk, values) == [], "a secret reached the data directory"
    # the proxy's side: our loggers, aiohttp's and OTel's (the SDK clients log their own requests)
    ours = ("ctxproxy", "aiohttp", "opentelemetry", "lmdb", "asyncio")
    logs = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(ours)).encode()
    assert search(logs, values) == [], "a secret reached the logs"
    spans = otlp.all_bytes()
    assert len(otlp.spans()) >= len(samples)
    assert search(spans, values) == [], "a secret reached the exported telemetry"


async def test_websocket_frames_are_redacted(make_proxy, fake):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    fake.script(Reply.of(Text(f"your token {secret} is set"), delta_chars=5))
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "redact"]\n')
    url = proxy.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url) as ws:
            await ws.send_str(json.dumps({"type": "response.create", "model": "gpt-x",
                                          "input": [{"role": "user", "content": f"use {secret}"}]}))
            frames = []
            async for msg in ws:
                frames.append(msg.data)
                if json.loads(msg.data)["type"] == "response.completed":
                    break
    got = "".join(frames)
    assert secret not in got and "[REDACTED:github-pat:" in got
    deltas = "".join(json.loads(f).get("delta", "") for f in frames
                     if json.loads(f)["type"] == "response.output_text.delta")
    assert "[REDACTED:github-pat:" in deltas
    assert secret.encode() not in b"".join(r.body for r in fake.requests)


async def test_injected_rules_are_redacted_too(make_proxy, fake, tmp_path):
    secret = "sk-ant-api03-" + "Xq7Lm2Pz9Rk4Vb8Nw3Ts6Yh1Jc5Df0Gu" * 3 + "Ab1-cD2_eF3gAA"
    rules = tmp_path / "AGENTS.md"
    rules.write_text(f"# Deploy\nUse the key {secret} for staging.\n")
    proxy = await make_proxy(f'''
[pipeline]
request = ["identify", "redact", "inject"]
[filters.inject.rules]
root = "{tmp_path}"
project = ["AGENTS.md"]
''')
    await proxy.anthropic().messages.create(model="claude-x", max_tokens=10,
                                            messages=[{"role": "user", "content": "deploy"}])
    body = fake.last.body.decode()
    assert "Use the key [REDACTED:" in body
    assert secret not in body


async def test_reversible_values_go_only_to_the_client(otlp, make_proxy, fake, tmp_path):
    """Reversible mode gives the agent's tool the real value, and only the agent:
    the ledger, the manifest, the data directory and the spans keep the
    placeholder, and the call settles when the agent sends the value back."""
    secret = "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    proxy = await make_proxy(FULL + """
[filters.redact]
profile = "vault"
[filters.redact.profiles.vault]
reversible = true
[filters.manifest]
capture_content = true
""", data_dir=str(tmp_path / "data"))
    client = proxy.anthropic()
    session = {"X-Ctx-Session": "rev-leak"}
    for n, stream in enumerate((False, True)):
        fake.script(lambda rec: Reply.of(Text("Logging in."), ToolCall("run", {
            "command": "gh auth login --with-token " + PLACEHOLDER_RE.findall(rec.body.decode())[0]},
            call_id=f"toolu_rev{n}"), delta_chars=4))
        kw = dict(model="c", max_tokens=50, extra_headers=session,
                  messages=[{"role": "user", "content": f"log in with {secret}"}])
        if stream:
            async with client.messages.stream(**kw) as s:
                msg = await s.get_final_message()
        else:
            msg = await client.messages.create(**kw)
        call = msg.content[-1]
        assert call.input["command"] == f"gh auth login --with-token {secret}"  # the tool gets the value
        # the agent runs it and sends the call (with the value) and its result back
        fake.script(Reply.text("Done."))
        await client.messages.create(model="c", max_tokens=50, extra_headers=session, messages=[
            {"role": "user", "content": f"log in with {secret}"},
            {"role": "assistant", "content": [{"type": "text", "text": "Logging in."},
                                              {"type": "tool_use", "id": call.id, "name": "run",
                                               "input": call.input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                          "content": "Logged in as octocat"}]}])
        store = proxy.settled_store()
        rec = store.effects.by_call_id("default", call.id)
        assert rec.state == "completed" and "[REDACTED:github-pat:" in rec.args_canonical
    await asyncio.to_thread(proxy.state.services["telemetry"].force_flush, 5000)
    assert secret.encode() not in b"".join(r.body for r in fake.requests)
    disk = b"".join(p.read_bytes() for p in Path(tmp_path / "data").rglob("*") if p.is_file())
    assert secret.encode() not in disk, "a restored value reached the data directory"
    assert otlp.spans() and secret.encode() not in otlp.all_bytes(), "a restored value reached the spans"


async def test_auxiliary_calls_and_odd_paths_carry_no_secret(make_proxy, fake, serve_app):
    """count_tokens, Responses input_tokens and compact carry the whole conversation;
    a trailing slash still names the Messages API: none is a way around redaction."""
    secret = "ghp_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5"
    seen = []

    async def record(request):
        seen.append((request.path, await request.read()))
        return aiohttp.web.json_response({"input_tokens": 7} if "tokens" in request.path else {"output": []})

    app = aiohttp.web.Application()
    app.router.add_post("/{tail:.*}", record)
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "redact", "effects", "manifest"]\n',
                             upstream=await serve_app(app))
    msgs = [{"role": "user", "content": f"deploy with {secret}"}]
    n = await proxy.anthropic().messages.count_tokens(model="claude-x", messages=msgs)
    assert n.input_tokens == 7  # the answer comes back as the provider sent it
    async with aiohttp.ClientSession() as s:
        for path, body in (("/v1/responses/input_tokens", {"model": "gpt-x", "input": msgs}),
                           ("/v1/responses/compact", {"model": "gpt-x", "input": msgs, "instructions": "compact"}),
                           ("/v1/messages/", {"model": "claude-x", "max_tokens": 5, "messages": msgs})):
            async with s.post(proxy.url + path, json=body) as r:
                assert r.status == 200, path
    assert [p for p, _ in seen] == ["/v1/messages/count_tokens", "/v1/responses/input_tokens",
                                    "/v1/responses/compact", "/v1/messages/"]
    for path, body in seen:
        assert secret.encode() not in body and b"[REDACTED:github-pat:" in body, path
    store = proxy.settled_store()  # an auxiliary call is not a model turn: no manifest of its own
    assert len(store.manifests.list("default")) == 1


async def test_lone_surrogates_are_read_not_waved_through(make_proxy, serve_app):
    """JSON allows a lone surrogate escape (a Python client sends one for half an
    emoji; a stream can be cut inside one). Such a body or event is still read,
    so a secret beside it is redacted rather than passed on unscanned."""
    secret = "ghp_" + "Mn4Bv6Cx8Zl0Kj2Hg4Fd6Sa8Qw0Er2Ty4Ui6O"[:36]
    event = ('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half \\ud83d '
             + secret + ' end"}}')
    stream = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
              b'"role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,'
              b'"output_tokens":1}}}\n\n'
              b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
              b'"content_block":{"type":"text","text":""}}\n\n'
              b'event: content_block_delta\ndata: ' + event.encode() + b'\n\n'
              b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
              b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    seen = []

    async def handler(request):
        seen.append(await request.read())
        resp = aiohttp.web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(stream)
        return resp

    app = aiohttp.web.Application()
    app.router.add_post("/{tail:.*}", handler)
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "redact", "effects", "prune", "manifest"]\n',
                             upstream=await serve_app(app))
    body = ('{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"half \\udc00 '
            + secret + '"}]}').encode()
    async with aiohttp.ClientSession() as s:
        async with s.post(proxy.url + "/v1/messages", data=body,
                          headers={"content-type": "application/json"}) as r:
            assert r.status == 200
            got = await r.read()
    assert secret.encode() not in seen[0] and b"[REDACTED:github-pat:" in seen[0]
    assert b"\\udc00" in seen[0]  # the surrogate itself survives, escaped
    assert secret.encode() not in got and b"[REDACTED:github-pat:" in got and b"message_stop" in got
