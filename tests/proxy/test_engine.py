"""The turn engine driven with no sockets (tests/enginedriver.py): all three
APIs, streamed and not, through the default pipeline, with a provider that is
a function rendering the scripted provider's real wire bytes."""
from __future__ import annotations

import json

import pytest

from apicalls import AUTH, PATHS, config, request_body, streamed_text, whole_text
from enginedriver import EngineDriver

from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.proxy.replies import UpstreamError
from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.proxy.sse import SSEDecoder

SECRET = "ghp_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_a_turn_through_the_default_pipeline(tmp_path, api, stream):
    async with EngineDriver(config(tmp_path)) as drive:
        drive.script(Reply.text("The engine answers in pieces."))
        got = await drive.call("POST", PATHS[api], {**AUTH[api], "content-type": "application/json"},
                               request_body(api, f"my token is {SECRET}, keep it", stream))
        assert got.status == 200, got.body
        assert got.headers["X-Ctx-Turn-Id"] == got.turn.turn_id
        forwarded = got.forwarded.body
        assert SECRET.encode() not in forwarded and b"[REDACTED:" in forwarded  # the request filters ran
        assert "x-ctx-turn-id" not in {k.lower() for k in got.forwarded.headers}
        if stream:
            assert got.headers["content-type"].startswith("text/event-stream")
            assert streamed_text(api, got.body) == "The engine answers in pieces."
        else:
            assert whole_text(api, got.body) == "The engine answers in pieces."
        drive.services["writer"].flush()
        doc = drive.services["store"].manifests.get(got.turn.identity.tenant, got.turn.turn_id)
        assert doc is not None  # the turn was finished: its manifest is stored


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_an_untouched_request_is_forwarded_as_its_own_bytes(tmp_path, api):
    async with EngineDriver(config(tmp_path, '[pipeline]\nrequest = ["identify"]\n')) as drive:
        body = request_body(api, "nothing to change here", True)
        got = await drive.call("POST", PATHS[api] + "?beta=true", AUTH[api], body)
        assert got.forwarded.body is body
        assert got.forwarded.url == "http://provider.invalid" + PATHS[api] + "?beta=true"
        assert got.status == 200 and got.body.endswith(b"\n\n")


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_a_body_that_is_not_json_is_answered_locally(tmp_path, api):
    async with EngineDriver(config(tmp_path)) as drive:
        got = await drive.call("POST", PATHS[api], AUTH[api], b"{not json")
        assert got.status == 400 and got.forwarded is None and drive.forwarded == []
        err = json.loads(got.body)
        assert (err["type"] == "error") if api == "anthropic" else ("message" in err["error"])
        assert got.turn.error_type


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_an_unreachable_provider_is_a_502_in_the_callers_format(tmp_path, api):
    async def down(forward):
        raise UpstreamError(502, "upstream unreachable: provider.invalid:80 (refused)", "upstream_unreachable")

    async with EngineDriver(config(tmp_path), provider=down) as drive:
        got = await drive.call("POST", PATHS[api], AUTH[api], request_body(api, "hello", False))
        assert got.status == 502
        assert "upstream unreachable" in got.body.decode()
        assert got.turn.error_type == "upstream_unreachable"
        assert any(name == "upstream" for name, *_ in got.turn.spans)


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_a_stream_cut_short_ends_with_an_error_event(tmp_path, api):
    async with EngineDriver(config(tmp_path)) as drive:
        drive.script(Reply.text("a long answer that never ends " * 3, drop_after_events=3))
        got = await drive.call("POST", PATHS[api], AUTH[api], request_body(api, "hello", True))
        assert got.status == 200
        last = SSEDecoder().decode(got.writes[-1])[-1]
        data = json.loads(last.data)
        assert "ended the stream early" in json.dumps(data)
        assert got.turn.error_type == "upstream_dropped"


async def test_a_provider_failing_mid_stream_ends_with_an_error_event(tmp_path):
    async def flaky(forward):
        return CannedUpstream(200, {"content-type": "text/event-stream"},
                              [b'data: {"id":"c1","object":"chat.completion.chunk","choices":[]}\n\n',
                               UpstreamError(502, "upstream closed the connection mid-response (mid-stream)",
                                             "upstream_dropped")])

    async with EngineDriver(config(tmp_path), provider=flaky) as drive:
        got = await drive.call("POST", PATHS["chat"], AUTH["chat"], request_body("chat", "hello", True))
        assert got.writes[0].startswith(b'data: {"id":"c1"')
        assert json.loads(SSEDecoder().decode(got.writes[-1])[0].data)["error"]["message"].startswith(
            "upstream closed the connection")


async def test_a_pass_through_goes_on_unread(tmp_path):
    async def models(forward):
        assert forward.method == "GET" and forward.body is None
        return CannedUpstream(200, {"content-type": "application/json", "content-length": "11",
                                    "connection": "keep-alive"}, [b'{"data":[]}'])

    async with EngineDriver(config(tmp_path), provider=models) as drive:
        got = await drive.call("GET", "/v1/models", AUTH["chat"])
        assert got.status == 200 and got.body == b'{"data":[]}'
        assert "connection" not in got.headers  # hop-by-hop headers stay on their hop
        assert got.forwarded.url == "http://provider.invalid/v1/models"
