"""Transparent mode over real TLS: the official SDKs with HTTPS_PROXY and the
generated CA, through ``ctxproxy mitm``, to a fake provider serving TLS with
its own CA (trusted by the proxy as upstream, never by the clients: a call
that succeeds went through the proxy). A host that is not a provider reaches
the client with its own certificate and identical bytes."""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("mitmproxy", reason="transparent mode needs the mitm extra")

import aiohttp  # noqa: E402
import anthropic  # noqa: E402
import openai  # noqa: E402
from ctxproxy.proxy.ports import free_port  # noqa: E402
from wsturns import ws_turn  # noqa: E402
from tlscerts import TestCA  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.mitm.ca import bundle_path, ca_cert_path  # noqa: E402
from ctxproxy.proxy.mitm.server import MitmThread  # noqa: E402
from ctxproxy.proxy.scripted_provider import FakeProvider, Reply  # noqa: E402

GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # shaped like a GitHub token; not a real one
TOOL = {"name": "gh", "description": "run gh", "input_schema": {"type": "object",
                                                                "properties": {"args": {"type": "string"}}}}


class Mitm:
    """A running transparent proxy and what a test reads back from it."""

    def __init__(self, thread: MitmThread, cfg):
        self.thread = thread
        self.cfg = cfg
        self.proxy = thread.proxy
        self.url = f"http://127.0.0.1:{self.proxy.port}"

    def settled_store(self):
        """The store once every turn that has answered has ended and its records landed:
        a no-op through the proxy's loop runs after the turn ends it scheduled."""
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0), self.thread.loop).result(10)
        self.proxy.services["writer"].flush()
        return self.proxy.services["store"]

    def manifest(self, turn_id: str, tenant: str = "default") -> dict:
        doc = self.settled_store().manifests.get(tenant, turn_id)
        assert doc is not None, f"no manifest for turn {turn_id}"
        return doc.data


@pytest.fixture
def certs(tmp_path):
    return TestCA(tmp_path / "certs", "fake provider CA")


@pytest.fixture
async def tls_fake(certs):
    fp = FakeProvider()
    ctx, _ = certs.server_context("localhost")
    await fp.start(ssl_context=ctx, url_host="localhost")
    yield fp
    await fp.stop()


@pytest.fixture
def start_mitm(tmp_path, tls_fake, certs, monkeypatch):
    """``start_mitm(toml="")`` -> Mitm in front of ``tls_fake``; the clients' environment
    set as ``--print-env`` says (HTTPS_PROXY, SSL_CERT_FILE = the generated bundle)."""
    threads = []
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    def start(toml: str = "", upstream_ca: Path | None = None, **overrides) -> Mitm:
        path = tmp_path / f"mitm-{len(threads)}.toml"
        path.write_text(f'[mitm]\nport = 0\nupstream_ca = "{upstream_ca or certs.pem}"\n' + toml)
        overrides.setdefault("data_dir", str(tmp_path / "data"))
        overrides.setdefault("anthropic_upstream", tls_fake.url)
        overrides.setdefault("openai_upstream", tls_fake.url)
        cfg = load_config(path, **overrides)
        thread = MitmThread(cfg)
        thread.start()
        threads.append(thread)
        mitm = Mitm(thread, cfg)
        monkeypatch.setenv("HTTPS_PROXY", mitm.url)
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle_path(cfg)))
        return mitm

    yield start
    for t in threads:
        t.stop()


def oai(fp: FakeProvider, **kw) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=fp.url + "/v1", api_key="sk-test", max_retries=0, **kw)


def ant(fp: FakeProvider, **kw) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=fp.url, api_key="sk-ant-test", max_retries=0, **kw)


# -- the three APIs, streamed and not -------------------------------------------

async def _call(api: str, fp: FakeProvider, stream: bool, content: str, **kw) -> tuple[str, str]:
    """(answer text, X-Ctx-Turn-Id) of one call through the SDK of ``api``."""
    if api == "anthropic":
        c = ant(fp)
        args = dict(model="claude-test-1", max_tokens=50, messages=[{"role": "user", "content": content}], **kw)
        if stream:
            async with c.messages.stream(**args) as s:
                text = "".join([t async for t in s.text_stream])
                return text, s.response.headers["x-ctx-turn-id"]
        raw = await c.messages.with_raw_response.create(**args)
        return (await raw.parse()).content[0].text, raw.headers["x-ctx-turn-id"]
    c = oai(fp)
    if api == "chat":
        args = dict(model="gpt-5", messages=[{"role": "user", "content": content}], **kw)
        if stream:
            raw = await c.chat.completions.with_raw_response.create(stream=True, **args)
            text = "".join([ch.choices[0].delta.content or "" async for ch in raw.parse() if ch.choices])
            return text, raw.headers["x-ctx-turn-id"]
        raw = await c.chat.completions.with_raw_response.create(**args)
        return raw.parse().choices[0].message.content, raw.headers["x-ctx-turn-id"]
    args = dict(model="gpt-5", input=content, **kw)
    if stream:
        raw = await c.responses.with_raw_response.create(stream=True, **args)
        text = "".join([e.delta async for e in raw.parse() if e.type == "response.output_text.delta"])
        return text, raw.headers["x-ctx-turn-id"]
    raw = await c.responses.with_raw_response.create(**args)
    return raw.parse().output_text, raw.headers["x-ctx-turn-id"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_each_api_through_the_filters_with_a_manifest(start_mitm, tls_fake, api, stream):
    mitm = start_mitm()
    tls_fake.script(Reply.text("one two three four", chunk_split=3))
    text, turn_id = await _call(api, tls_fake, stream, "count to four")
    assert text == "one two three four"
    assert len(turn_id) == 32
    rec = tls_fake.last
    assert rec.api == api and rec.headers["accept-encoding"] == "identity"  # the filters read the answer
    assert not any(k.lower().startswith("x-ctx-") for k in rec.headers)
    m = mitm.manifest(turn_id)
    assert m["turn_id"] == turn_id and m["model"] in ("claude-test-1", "gpt-5")


async def test_secrets_are_redacted_both_ways(start_mitm, tls_fake):
    mitm = start_mitm()
    for api in ("anthropic", "chat", "responses"):
        for stream in (False, True):
            tls_fake.script(Reply.text(f"your token is {GHP} ok", chunk_split=5))
            text, turn_id = await _call(api, tls_fake, stream, f"my token is {GHP}")
            sent = tls_fake.last.body.decode()
            assert GHP not in sent and "[REDACTED:" in sent, (api, stream)
            assert GHP not in text and "[REDACTED:" in text and text.endswith(" ok"), (api, stream, text)
            m = mitm.manifest(turn_id)
            assert m["redactions"] == {"github-pat": 1} and m["response_redactions"] == {"github-pat": 1}


async def test_tool_loop_records_the_effect(start_mitm, tls_fake):
    mitm = start_mitm()
    tls_fake.script(Reply.tool_call("gh", {"args": "pr create --title fix"}), Reply.text("PR opened."))
    c = ant(tls_fake)
    headers = {"x-ctx-session": "sess-mitm"}
    messages = [{"role": "user", "content": "open a PR"}]
    async with c.messages.stream(model="claude-test-1", max_tokens=100, tools=[TOOL], messages=messages,
                                 extra_headers=headers) as s:
        first = await s.get_final_message()
    (use,) = [b for b in first.content if b.type == "tool_use"]
    store = mitm.settled_store()
    assert [r.state for r in store.effects.list("default", session="sess-mitm")] == ["pending"]
    messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                               "content": "https://github.com/o/r/pull/4821"}]}]
    second = await c.messages.create(model="claude-test-1", max_tokens=100, tools=[TOOL], messages=messages,
                                     extra_headers=headers)
    assert second.content[0].text == "PR opened."
    (rec,) = mitm.settled_store().effects.list("default", session="sess-mitm")
    assert rec.state == "completed" and rec.call_id == use.id and rec.tool == "gh"


# -- a host that is not a provider ---------------------------------------------

async def test_other_hosts_pass_through_with_their_own_certificate_and_bytes(start_mitm, tmp_path):
    mitm = start_mitm()
    origin_ca = TestCA(tmp_path / "origin", "origin CA")
    ctx, origin_der = origin_ca.server_context("localhost")
    payload = os.urandom(1 << 16)  # not HTTP: a proxy that parsed it would break it
    received = bytearray()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.extend(await reader.readexactly(4096))
        writer.write(payload)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=ctx)
    port = server.sockets[0].getsockname()[1]
    sent = os.urandom(4096)

    def client() -> tuple[bytes, bytes]:
        trust = ssl.create_default_context(cafile=str(origin_ca.pem))  # the origin's CA only, not ours
        with socket.create_connection(("127.0.0.1", mitm.proxy.port), timeout=10) as raw:
            raw.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head:
                head += raw.recv(1)
            assert head.startswith(b"HTTP/1.1 200")
            with trust.wrap_socket(raw, server_hostname="localhost") as tls:
                der = tls.getpeercert(binary_form=True)
                tls.sendall(sent)
                got = b""
                while chunk := tls.recv(65536):
                    got += chunk
                return der, got

    async with server:
        der, got = await asyncio.to_thread(client)
    assert der == origin_der
    assert got == payload and bytes(received) == sent


# -- the Responses WebSocket, as Codex uses it -----------------------------------

async def test_responses_websocket_turns_are_filtered(start_mitm, tls_fake):
    mitm = start_mitm()
    tls_fake.script(Reply.text(f"the token is {GHP}"))
    trust = ssl.create_default_context(cafile=str(ca_cert_path(mitm.cfg)))
    url = tls_fake.ws_url
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(url, proxy=mitm.url, ssl=trust, headers={"authorization": "Bearer sk-ws"}) as ws:
            events = await ws_turn(ws, {"model": "gpt-5", "input": [{"role": "user", "content": f"token {GHP}"}]})
    assert events[-1]["type"] == "response.completed"
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert GHP not in text and "[REDACTED:" in text
    (frame,) = [r for r in tls_fake.requests if r.method == "WS"]
    assert GHP not in frame.body.decode() and "[REDACTED:" in frame.body.decode()
    assert frame.headers["authorization"] == "Bearer sk-ws"
    store = mitm.settled_store()
    (m,) = [d.data for d in store.manifests.list("default")]
    assert m["redactions"] == {"github-pat": 1} and m["response_redactions"] == {"github-pat": 1}


async def test_transparent_mode_does_not_offer_the_memory_tool_on_the_websocket(start_mitm, tls_fake):
    # mitmproxy owns the provider's socket: the proxy could not continue a turn on it
    mitm = start_mitm("[filters.memory_tool]\nenabled = true\n")
    tls_fake.script(Reply.text("plain"))
    trust = ssl.create_default_context(cafile=str(ca_cert_path(mitm.cfg)))
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(tls_fake.ws_url, proxy=mitm.url, ssl=trust,
                                headers={"authorization": "Bearer sk-ws", "X-Ctx-Session": "m1"}) as ws:
            events = await ws_turn(ws, {"model": "gpt-5", "input": "hi"})
    assert events[-1]["type"] == "response.completed"
    (frame,) = [r for r in tls_fake.requests if r.method == "WS"]
    assert not frame.json.get("tools")
    (m,) = [d.data for d in mitm.settled_store().manifests.list("default")]
    assert m["filters"]["memory_tool"] == {"offered": False, "name": "ctx_memory",
                                           "reason": "this edge cannot answer the tool"}


@pytest.mark.parametrize("body, status, message", [
    (b'{"model": "gpt-5", "messages": [', 400, "JSON"),
    (b'{"model": "gpt-5", "messages": [], "pad": "' + b"x" * 3000 + b'"}', 413, "max_body_bytes"),
])
async def test_a_bad_request_is_answered_here_in_the_callers_format(start_mitm, tls_fake, body, status, message):
    import httpx2

    mitm = start_mitm(toml="[server]\nmax_body_bytes = 2048\n")
    trust = ssl.create_default_context(cafile=str(bundle_path(mitm.cfg)))
    async with httpx2.AsyncClient(proxy=mitm.url, verify=trust, trust_env=False) as http:
        r = await http.post(tls_fake.url + "/v1/chat/completions", content=body,
                            headers={"content-type": "application/json", "authorization": "Bearer sk-test"})
    assert r.status_code == status and message in r.json()["error"]["message"]
    assert len(r.headers["x-ctx-turn-id"]) == 32 and tls_fake.model_requests == []


async def test_keys_mode_is_checked_as_in_serve(start_mitm, tls_fake):
    from ctxproxy.proxy.auth import issue_key

    mitm = start_mitm("[auth]\nmode = \"keys\"\n")
    with pytest.raises(openai.AuthenticationError) as refused:
        await oai(tls_fake).chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
    assert "missing proxy key" in refused.value.message and tls_fake.model_requests == []
    key = await asyncio.to_thread(issue_key, mitm.proxy.services["store"], mitm.cfg, "acme", user="ann")
    c = oai(tls_fake, default_headers={"x-ctx-key": key["key"]})
    raw = await c.chat.completions.with_raw_response.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
    assert raw.parse().choices[0].message.content == "Hello from fake."
    assert "x-ctx-key" not in tls_fake.last.headers  # the proxy key never goes upstream
    assert mitm.manifest(raw.headers["x-ctx-turn-id"], tenant="acme")["key_id"] == key["id"]


# -- faults ---------------------------------------------------------------------

async def test_a_client_offering_http2_is_served(start_mitm, tls_fake):
    import httpx2

    start_mitm()
    tls_fake.script(Reply.text("over h2 or not"))
    async with httpx2.AsyncClient(http2=True) as http:
        c = oai(tls_fake, http_client=http)
        raw = await c.chat.completions.with_raw_response.create(
            model="gpt-5", messages=[{"role": "user", "content": "hi"}], stream=True)
        text = "".join([ch.choices[0].delta.content or "" async for ch in raw.parse() if ch.choices])
    # mitmproxy answers the client's ALPN with the provider's choice: HTTP/1.1 here (the fake
    # provider's); HTTP/2 end to end with a provider that speaks it (below).
    assert raw.http_response.http_version == "HTTP/1.1"
    assert text == "over h2 or not" and len(raw.headers["x-ctx-turn-id"]) == 32


FRONT = """
import asyncio, sys
from mitmproxy import addons, options
from mitmproxy.addons import keepserving, readfile
from mitmproxy.master import Master

async def main():
    port, target, confdir, ca = sys.argv[1:5]
    m = Master(options.Options(listen_host="127.0.0.1", listen_port=int(port), confdir=confdir))
    m.addons.add(*addons.default_addons(), keepserving.KeepServing(), readfile.ReadFile())
    m.options.update(mode=["reverse:" + target], connection_strategy="lazy", ssl_verify_upstream_trusted_ca=ca)
    await m.run()

asyncio.run(main())
"""


@pytest.fixture
async def h2_provider(tmp_path, tls_fake, certs):
    """The fake provider behind a front that speaks HTTP/2 over TLS, as the public
    providers do: mitmproxy in reverse mode with its own CA (lazy, so it answers the
    client's ALPN itself), in a process of its own (mitmproxy's options are
    process-wide, so two instances cannot share one)."""
    port = free_port()
    confdir = tmp_path / "front"
    proc = subprocess.Popen([sys.executable, "-c", FRONT, str(port), tls_fake.url, str(confdir), str(certs.pem)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):  # bounded: mitmproxy starts in a second or two
            assert proc.poll() is None, "the HTTP/2 front exited"
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        yield f"https://localhost:{port}", confdir / "mitmproxy-ca-cert.pem"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_http2_end_to_end_through_the_filters(start_mitm, tls_fake, h2_provider, stream):
    import httpx2

    front_url, front_ca = h2_provider
    mitm = start_mitm(upstream_ca=front_ca, openai_upstream=front_url)
    tls_fake.script(Reply.text(f"h2 {GHP} done", delta_chars=4))
    async with httpx2.AsyncClient(http2=True) as http:
        c = openai.AsyncOpenAI(base_url=front_url + "/v1", api_key="sk-test", max_retries=0, http_client=http)
        args = dict(model="gpt-5", messages=[{"role": "user", "content": f"my {GHP}"}])
        if stream:
            raw = await c.chat.completions.with_raw_response.create(stream=True, **args)
            text = "".join([ch.choices[0].delta.content or "" async for ch in raw.parse() if ch.choices])
        else:
            raw = await c.chat.completions.with_raw_response.create(**args)
            text = raw.parse().choices[0].message.content
    assert raw.http_response.http_version == "HTTP/2"
    assert GHP not in text and text.startswith("h2 [REDACTED:") and text.endswith(" done")
    assert GHP not in tls_fake.last.body.decode()
    m = mitm.manifest(raw.headers["x-ctx-turn-id"])
    assert m["redactions"] == {"github-pat": 1} and m["response_redactions"] == {"github-pat": 1}


class Heard(logging.Handler):
    """The first ``ctxproxy.mitm`` log line holding ``text``, from whichever thread logs it."""

    def __init__(self, text: str):
        super().__init__(logging.WARNING)
        self.text = text
        self.line: str | None = None
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.line is None and self.text in record.getMessage():
            self.line = record.getMessage()
            self.event.set()

    def __enter__(self) -> "Heard":
        logging.getLogger("ctxproxy.mitm").addHandler(self)
        return self

    def __exit__(self, *exc) -> None:
        logging.getLogger("ctxproxy.mitm").removeHandler(self)

    async def wait(self) -> str:
        assert await asyncio.to_thread(self.event.wait, 20), f"never logged: {self.text}"
        return self.line


async def test_a_client_that_refuses_the_certificate_changes_nothing_for_the_others(
        start_mitm, tls_fake, certs, monkeypatch):
    """All local agents share 127.0.0.1: one client that refuses our certificate (a curl
    without the CA, a health probe, a pinning client) must not switch interception off
    for the next one to that host."""
    mitm = start_mitm()
    ours = os.environ["SSL_CERT_FILE"]
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.pem))  # trusts the provider's CA, not ours
    told = Heard("refused ctxproxy's certificate")
    with told:
        with pytest.raises(openai.APIConnectionError):
            await oai(tls_fake).chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
        line = await told.wait()  # logged by the proxy's thread once it sees the handshake fail
    assert "localhost" in line and "NODE_EXTRA_CA_CERTS=" in line and "SSL_CERT_FILE=" in line
    assert "(pid " in line and sys.executable.rsplit("/", 1)[-1][:6] in line  # which client: its program
    assert "nothing is passed through" in line and "[mitm] passthrough" in line
    monkeypatch.setenv("SSL_CERT_FILE", ours)  # the next client, same address, same host, trusts the CA
    tls_fake.script(Reply.text(f"your token is {GHP} ok"))
    text, turn_id = await _call("chat", tls_fake, False, f"my token is {GHP}")
    assert GHP not in tls_fake.last.body.decode() and GHP not in text and "[REDACTED:" in text
    assert mitm.manifest(turn_id)["redactions"] == {"github-pat": 1}
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.pem))  # and the refusing one keeps failing: nothing unfiltered
    with pytest.raises(openai.APIConnectionError):
        await oai(tls_fake).chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])
    assert len(tls_fake.model_requests) == 1


async def test_a_configured_passthrough_host_is_logged_at_start_and_never_decrypted(
        start_mitm, tls_fake, certs, monkeypatch):
    with Heard("([mitm] passthrough)") as said:
        start_mitm('passthrough = ["LocalHost"]\n')
        line = await said.wait()
    assert "localhost" in line and "UNFILTERED" in line
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.pem))  # the provider's own certificate reaches the client
    tls_fake.script(Reply.text(f"direct {GHP}"))
    raw = await oai(tls_fake).chat.completions.with_raw_response.create(
        model="gpt-5", messages=[{"role": "user", "content": f"mine {GHP}"}])
    assert raw.parse().choices[0].message.content == f"direct {GHP}"  # the provider's own bytes
    assert "x-ctx-turn-id" not in raw.headers and GHP in tls_fake.last.body.decode()


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs a curl binary as the second program")
async def test_a_configured_program_goes_through_and_every_other_client_is_still_decrypted(
        start_mitm, tls_fake, certs):
    curl = os.path.realpath(shutil.which("curl"))
    with Heard("([mitm] passthrough_programs)") as said:
        mitm = start_mitm(f'passthrough_programs = ["{curl}"]\n')
        assert curl in await said.wait()
    tls_fake.script(Reply.text(f"direct {GHP}"), Reply.text(f"your token is {GHP} ok"))
    body = json.dumps({"model": "gpt-5", "messages": [{"role": "user", "content": f"mine {GHP}"}]})
    with Heard("passing curl") as passed:
        out = await asyncio.to_thread(
            subprocess.run, [curl, "-sS", "-i", "--proxy", mitm.url, "--cacert", str(certs.pem),  # not our CA
                             "-H", "content-type: application/json", "-d", body,
                             tls_fake.url + "/v1/chat/completions"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert curl in await passed.wait()
    assert f"direct {GHP}" in out.stdout and "x-ctx-turn-id" not in out.stdout.lower()
    assert GHP in tls_fake.last.body.decode()  # through, undecrypted: its own call, its own choice
    text, turn_id = await _call("chat", tls_fake, False, f"my token is {GHP}")  # this process: decrypted
    assert GHP not in tls_fake.last.body.decode() and GHP not in text
    assert mitm.manifest(turn_id)["redactions"] == {"github-pat": 1}


async def test_a_provider_that_does_not_answer_is_a_connection_error(start_mitm, tls_fake):
    dead = free_port()  # nothing listens there
    start_mitm(openai_upstream=f"https://localhost:{dead}")
    c = openai.AsyncOpenAI(base_url=f"https://localhost:{dead}/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        await c.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hi"}])


async def test_a_provider_that_drops_mid_stream_cuts_the_client_and_the_turn_says_so(start_mitm, tls_fake):
    mitm = start_mitm()
    tls_fake.script(Reply.text("one two three four five six", drop_after_events=3))
    c = oai(tls_fake)
    raw = await c.chat.completions.with_raw_response.create(
        model="gpt-5", messages=[{"role": "user", "content": "count"}], stream=True)
    with pytest.raises(openai.APIError):
        async for _ in raw.parse():
            pass
    m = mitm.manifest(raw.headers["x-ctx-turn-id"])
    assert m["error"] == "upstream_dropped"


# -- the command line -------------------------------------------------------------

def test_print_env_creates_the_ca_and_names_what_agents_set(tmp_path):
    data = tmp_path / "data"
    out = subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "mitm", "--print-env", "--data-dir", str(data),
                          "--listen-port", "9999"], capture_output=True, text=True, timeout=60, check=True).stdout
    env = dict(line.split("  #")[0].removeprefix("export ").split("=", 1) for line in out.splitlines())
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:9999"
    ca = Path(env["NODE_EXTRA_CA_CERTS"])
    assert ca == (data / "mitm" / "mitmproxy-ca-cert.pem").resolve() and ca.read_bytes().startswith(b"-----BEGIN")
    bundle_file = Path(env["SSL_CERT_FILE"])
    assert env["REQUESTS_CA_BUNDLE"] == str(bundle_file) and bundle_file.read_bytes().endswith(ca.read_bytes())
    assert (data / "mitm" / "mitmproxy-ca.pem").stat().st_mode & 0o077 == 0  # the key: the owner's alone
    again = subprocess.run([sys.executable, "-m", "ctxproxy.proxy.cli.main", "mitm", "--print-env", "--data-dir",
                            str(data)], capture_output=True, text=True, timeout=60, check=True).stdout
    assert str(ca) in again and ca.read_bytes() == (data / "mitm" / "mitmproxy-ca-cert.pem").read_bytes()


def test_the_mitm_edge_starts_with_what_turns_need(start_mitm, tmp_path):
    from warmcheck import assert_warm, memories_written_while_no_server_ran

    memories_written_while_no_server_ran(tmp_path / "data")
    mitm = start_mitm()
    assert_warm(mitm.proxy.engine, mitm.proxy.services)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
async def test_transparent_mode_runs_on_the_configured_event_loop(start_mitm, tls_fake, loop, caplog):
    """``[server] loop`` holds for ``ctxproxy mitm`` too: mitmproxy's master and the
    filters run on that loop, a secret each way is still redacted, and the start-up
    line names the loop."""
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    caplog.set_level(logging.INFO, logger="ctxproxy.mitm")
    start_mitm(f'[server]\nloop = "{loop}"\n')
    assert f"event loop {loop});" in caplog.text
    tls_fake.script(Reply.text(f"your token is {GHP} ok"))
    r = await oai(tls_fake).chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": f"{GHP}"}])
    text = r.choices[0].message.content
    assert GHP not in text and text.startswith("your token is [REDACTED:") and text.endswith(" ok")
    assert GHP not in tls_fake.last.body.decode()
