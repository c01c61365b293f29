"""Proxy keys beyond the isolation suite: revocation seen by every ``--workers``
process on its next request, the per-peer failure limit (which cannot lock a
valid key out), ``ctxproxy keys create|list|revoke``, the Responses
WebSocket and pass-through paths in keys mode, admin keys in open mode, and
the start-up warning of open mode on a non-loopback address."""
from __future__ import annotations

import http.client
import json
import logging
import os
import signal
import subprocess
import sys
import time

import aiohttp
import pytest
from ctxproxy.proxy.ports import free_port

from ctxproxy.config import load_config
from ctxproxy.proxy.auth import FailureLimiter, issue_key, warn_if_open
from ctxproxy.proxy.cli.main import main
from ctxproxy.proxy.scripted_provider import FakeProviderThread

KEYS = '[auth]\nmode = "keys"\n[pipeline]\nrequest = ["identify", "manifest"]\n'
CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def chat(conn: http.client.HTTPConnection, key: str) -> int:
    conn.request("POST", "/v1/chat/completions", body=CHAT,
                 headers={"X-Ctx-Key": key, "Authorization": "Bearer sk-own", "Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    return r.status


def test_revocation_is_seen_by_every_worker_on_its_next_request(tmp_path, capsys):
    data = tmp_path / "data"
    cfg = tmp_path / "keys.toml"
    cfg.write_text(KEYS)
    code, out, _ = cli(capsys, "keys", "create", "--tenant", "acme", "--user", "alice", "--data-dir", str(data),
                       "--json")
    created = json.loads(out)
    assert code == 0 and set(created) >= {"id", "key"}
    port = free_port()
    with FakeProviderThread() as fake:
        proc = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", "--workers", "2", "--port",
                                 str(port), "--data-dir", str(data), "--config", str(cfg), "--openai-upstream",
                                 fake.url, "--log-level", "WARNING"],
                                env={**os.environ, "OTEL_SDK_DISABLED": "true"}, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            # one kept-alive connection to each worker (SO_REUSEPORT pins a connection to one)
            conns: dict[int, http.client.HTTPConnection] = {}
            deadline = time.monotonic() + 60
            while len(conns) < 2 and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                try:
                    conn.request("GET", "/ctx/healthz")
                    pid = json.loads(conn.getresponse().read())["pid"]
                except OSError:
                    conn.close()
                    time.sleep(0.1)  # the workers are still starting
                    continue
                if pid in conns:
                    conn.close()
                else:
                    conns[pid] = conn
            assert len(conns) == 2
            for conn in conns.values():
                assert chat(conn, created["key"]) == 200 and chat(conn, created["key"]) == 200  # cached
            code, out, _ = cli(capsys, "keys", "revoke", created["id"], "--data-dir", str(data))
            assert code == 0 and created["id"] in out
            for conn in conns.values():
                assert chat(conn, created["key"]) == 401  # the very next request of each worker
            n = len(fake.model_requests)
            assert n == 4
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)


def test_keys_cli_create_list_revoke(tmp_path, capsys):
    d = str(tmp_path / "data")
    code, out, err = cli(capsys, "keys", "create", "--tenant", "acme", "--user", "bob", "--project", "p1",
                         "--project", "p2", "--purpose", "support", "--route", "openai", "--admin", "--expires", "7",
                         "--data-dir", d)
    assert code == 0 and out.startswith("id  ") and "\nkey ctxk_" in out and "shown this once" in err
    key_id, key = out.split()[1], out.split()[3]
    code, out, _ = cli(capsys, "keys", "list", "--json", "--data-dir", d)
    (listed,) = json.loads(out)
    assert listed["id"] == key_id and listed["projects"] == ["p1", "p2"] and listed["routes"] == ["openai"]
    assert listed["admin"] is True and listed["state"] == "active" and listed["expires_at"] > time.time() + 6 * 86400
    assert key not in out and key[-43:] not in out and "digest" not in out
    code, out, _ = cli(capsys, "keys", "list", "--data-dir", d, "--tenant", "other")
    assert code == 0 and out == ""
    code, _, err = cli(capsys, "keys", "revoke", key_id, "--data-dir", d, "--tenant", "other")
    assert code == 1 and "no proxy key" in err  # another tenant's key is no such key
    code, out, _ = cli(capsys, "keys", "revoke", key_id, "--data-dir", d, "--json")
    assert code == 0 and json.loads(out)["state"] == "revoked"
    code, out, _ = cli(capsys, "keys", "list", "--data-dir", d)
    header, row = out.splitlines()
    assert header.split("\t") == ["ID", "TENANT", "USER", "ADMIN", "STATE", "EXPIRES", "ALLOWED"]
    assert row.split("\t")[:5] == [key_id, "acme", "bob", "admin", "revoked"]
    assert row.split("\t")[6] == "projects=p1,p2 purposes=support routes=openai"
    for bad in (["--route", "nope"], ["--expires", "0"], ["--user", "a b"]):
        code, _, err = cli(capsys, "keys", "create", "--tenant", "acme", "--data-dir", d, *bad)
        assert code == 2 and err.startswith("ctxproxy: keys create:"), err
    code, _, err = cli(capsys, "keys", "create", "--data-dir", d)
    assert code == 2 and "--tenant is required" in err


def test_failure_limit_answers_429_but_a_valid_key_still_passes():
    now = [0.0]
    lim = FailureLimiter(3, clock=lambda: now[0])
    assert [lim.failed("p") for _ in range(3)] == [0, 0, 0]
    assert lim.failed("p") > 0 and lim.failed("other") == 0
    now[0] += 60.0  # the window drained
    assert lim.failed("p") == 0


async def test_failed_checks_are_limited_per_peer_not_per_key(make_proxy, fake):
    p = await make_proxy(KEYS.replace('mode = "keys"', 'mode = "keys"\nfailure_limit = 3'))
    good = issue_key(p.state.services["store"], p.state.config, "acme")["key"]
    url = p.url + "/v1/chat/completions"
    async with aiohttp.ClientSession() as http_:
        async def call(key: str) -> tuple[int, str | None]:
            async with http_.post(url, data=CHAT, headers={"X-Ctx-Key": key, "Authorization": "Bearer x",
                                                           "Content-Type": "application/json"}) as r:
                await r.read()
                return r.status, r.headers.get("retry-after")
        assert [(await call("ctxk_bad"))[0] for _ in range(3)] == [401, 401, 401]
        status, retry = await call("ctxk_bad")
        assert status == 429 and int(retry) >= 1
        assert (await call(good))[0] == 200  # same peer, over its limit: a valid key is served
        assert (await call("ctxk_bad"))[0] == 429
    assert p.state.keyring.refused["rate_limited"] == 2 and p.state.keyring.refused["invalid"] == 3


async def test_websocket_and_pass_through_need_a_key(make_proxy, fake):
    p = await make_proxy(KEYS)
    store = p.state.services["store"]
    made = issue_key(store, p.state.config, "acme")
    ws_url = p.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as http_:
        async with http_.get(p.url + "/v1/models", headers={"Authorization": "Bearer sk-own"}) as r:
            assert r.status == 401 and (await r.json())["error"]["type"] == "authentication_error"
        async with http_.get(p.url + "/v1/models", headers={"Authorization": f"Bearer {made['key']}"}) as r:
            assert r.status == 500  # no provider key configured for it: refused, not forwarded
        async with http_.get(p.url + "/v1/models", headers={"Authorization": "Bearer sk-own",
                                                          "X-Ctx-Key": made["key"]}) as r:
            assert r.status == 200
        with pytest.raises(aiohttp.WSServerHandshakeError) as e:
            await http_.ws_connect(ws_url, headers={"Authorization": "Bearer sk-own"})
        assert e.value.status == 401
        async with http_.ws_connect(ws_url, headers={"Authorization": "Bearer sk-own",
                                                     "X-Ctx-Key": made["key"]}) as ws:
            create = {"type": "response.create", "model": "m", "input": "hi"}
            await ws.send_json(create)
            for _ in range(100):
                ev = await ws.receive_json(timeout=10)
                if ev["type"] in ("response.completed", "error"):
                    break
            assert ev["type"] == "response.completed"
            store.proxy_keys.revoke(made["id"])
            await ws.send_json(create)  # the next turn on the open socket is refused
            ev = await ws.receive_json(timeout=10)
            assert ev["type"] == "error" and "revoked" in json.dumps(ev)
    assert all("ctxk_" not in str(dict(r.headers)) for r in fake.requests)


async def test_a_refusal_on_a_lane_named_with_a_lone_surrogate_is_an_error_frame(make_proxy, fake):
    """The error frame names the client's lane; "\\ud800" (valid JSON, not valid
    UTF-8) goes back escaped, and the socket stays open."""
    p = await make_proxy(KEYS)
    store = p.state.services["store"]
    made = issue_key(store, p.state.config, "acme")
    ws_url = p.url.replace("http://", "ws://") + "/v1/responses"
    async with aiohttp.ClientSession() as http_:
        async with http_.ws_connect(ws_url, headers={"Authorization": "Bearer sk-own",
                                                     "X-Ctx-Key": made["key"]}) as ws:
            store.proxy_keys.revoke(made["id"])
            for _ in range(2):
                await ws.send_str('{"type":"response.create","stream_id":"lane-\\ud800","model":"m","input":"hi"}')
                ev = await ws.receive_json(timeout=10)
                assert ev["type"] == "error" and ev["status"] == 401 and ev["stream_id"] == "lane-\ud800"
    assert fake.model_requests == []


async def test_tenant_admin_keys_work_in_open_mode(make_proxy, fake):
    p = await make_proxy()
    made = issue_key(p.state.services["store"], p.state.config, "acme", admin=True)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {made['key']}"}) as http_:
        async with http_.get(p.url + "/ctx/v1/effects") as r:
            assert r.status == 200 and (await r.json())["tenant"] == "acme"
        async with http_.get(p.url + "/ctx/v1/effects?tenant=globex") as r:
            assert r.status == 403  # another tenant named: refused, not answered from its own
    async with aiohttp.ClientSession() as http_:  # no operator token: the operator path stays disabled
        async with http_.get(p.url + "/ctx/v1/effects", headers={"Authorization": "Bearer guess"}) as r:
            assert r.status == 403


def test_open_mode_on_a_public_address_warns(caplog):
    caplog.set_level(logging.WARNING, logger="ctxproxy.auth")
    for host, warns in (("127.0.0.1", False), ("localhost", False), ("::1", False), ("0.0.0.0", True),
                        ("10.0.0.5", True)):
        caplog.clear()
        warn_if_open(load_config(None, host=host))
        assert any("every caller can pick any tenant" in r.getMessage() for r in caplog.records) is warns, host


async def test_every_model_path_takes_the_keys_tenant_and_no_span_holds_a_key(make_proxy, fake, otlp):
    from otlpreceiver import attrs

    p = await make_proxy(KEYS)
    made = issue_key(p.state.services["store"], p.state.config, "acme", user="alice")
    forged = {"X-Ctx-Key": made["key"], "X-Ctx-Tenant": "globex", "X-Ctx-User": "carol"}
    a, o = p.anthropic(default_headers=forged), p.openai(default_headers=forged)
    msg = [{"role": "user", "content": "hi"}]
    turns = [
        (await a.messages.with_raw_response.create(model="m", max_tokens=5, messages=msg)).headers,
        (await o.chat.completions.with_raw_response.create(model="m", messages=msg)).headers,
        (await o.responses.with_raw_response.create(model="m", input="hi")).headers,
    ]
    await a.messages.count_tokens(model="m", messages=msg)  # auxiliary: guarded, answered
    store = p.settled_store()
    for headers in turns:
        m = store.manifests.get("acme", headers["x-ctx-turn-id"])
        assert m is not None and m.data["key_id"] == made["id"]
        assert store.manifests.get("globex", headers["x-ctx-turn-id"]) is None
    assert sorted(store.sessions.list("acme", subject="alice")) == sorted(store.sessions.list("acme"))
    assert store.sessions.list("globex") == [] and store.sessions.list("acme", subject="carol") == []
    for headers in turns:
        await otlp.wait_span(lambda s, t=headers["x-ctx-turn-id"]: attrs(s).get("ctxproxy.turn.id") == t)
    blob = otlp.all_bytes()
    assert b"ctxk_" not in blob and made["key"][-43:].encode() not in blob
    assert all("ctxk_" not in str(dict(r.headers)) for r in fake.requests)


async def test_odd_key_bytes_are_401_never_500(make_proxy, fake):
    p = await make_proxy(KEYS)
    made = issue_key(p.state.services["store"], p.state.config, "acme")
    key = made["key"]
    odd = [key[:-1] + "é", key[:22] + "\udcff" * 43, key[:21] + "-" + key[22:], key + "x", "ctxk_" + "z" * 60,
           f"ctxk_F{made['id'][1:].upper()}_{key[22:]}"]  # upper case, even when the id is all digits
    async with aiohttp.ClientSession() as http_:
        for value in odd:
            raw = value.encode("utf-8", "surrogateescape")
            async with http_.post(p.url + "/v1/chat/completions", data=CHAT,
                                  headers={"X-Ctx-Key": raw.decode("latin-1"), "Authorization": "Bearer x"}) as r:
                assert r.status == 401, value
        async with http_.post(p.url + "/v1/chat/completions", data=CHAT,
                              headers={"X-Ctx-Key": key, "Authorization": "Bearer x"}) as r:
            assert r.status == 200


def test_generation_mirror_catches_up_with_a_writer_killed_after_its_commit(tmp_path, monkeypatch):
    from ctxproxy.store import open_store
    from ctxproxy.store import proxy_keys as pk

    store = open_store(tmp_path / "store")
    try:
        before = store.proxy_keys.generation()
        store.proxy_keys.create("acme")
        after = store.proxy_keys.generation()
        assert after != before
        now = [time.monotonic()]
        monkeypatch.setattr(pk.time, "monotonic", lambda: now[0])
        pk._mirror(store._env).checked = now[0]
        # what a writer killed between its commit and the mirror write leaves: the store moved, the mirror not
        store.proxy_keys._x.write(lambda txn: pk._bump(txn, store.proxy_keys._db))
        assert store.proxy_keys.generation() == after
        now[0] += pk.MIRROR_CHECK
        assert store.proxy_keys.generation() == after + 1
    finally:
        store.close()


async def test_a_route_pinned_to_a_tenant_serves_only_its_keys(make_proxy, fake):
    p = await make_proxy(KEYS + '[routes.acme_only]\napi = "openai"\nprefix = "/acme"\n'
                                f'upstream = "{fake.url}"\ntenant = "acme"\n')
    store, cfg = p.state.services["store"], p.state.config
    keys = {t: issue_key(store, cfg, t)["key"] for t in ("acme", "globex")}
    async with aiohttp.ClientSession() as http_:
        for tenant, want in (("acme", 200), ("globex", 403)):
            async with http_.post(p.url + "/acme/v1/chat/completions", data=CHAT,
                                  headers={"X-Ctx-Key": keys[tenant], "Authorization": "Bearer x"}) as r:
                assert r.status == want, tenant


@pytest.mark.parametrize("toml, error", [
    ('[auth]\nmode = "kyes"\n', "auth.mode: expected one of 'open' | 'keys'"),
    ("[auth]\nfailure_limit = 0\n", "auth.failure_limit: expected at least 1"),
    ('[tenants.acme]\napi_key_env = { nope = "X" }\n', "tenants.acme.api_key_env.nope: no such route"),
    ('[tenants.acme]\napi_key_env = "CTX_TEST_UNSET_VARIABLE"\n', "environment variable CTX_TEST_UNSET_VARIABLE"),
])
def test_auth_config_errors_name_the_key(tmp_path, capsys, toml, error):
    path = tmp_path / "c.toml"
    path.write_text(toml)
    code, _, err = cli(capsys, "config", "check", str(path))
    assert code == 2 and error in err, err
