"""What Anthropic's server tools bring back (a page ``web_fetch`` read, the
output of a command the code execution tool ran) and the citations that quote
it: the model read them as they are, so a secret in them would reach the
client. Redacted in a whole answer and in a stream, where such a block comes
whole in its ``content_block_start`` and a citation in its ``citations_delta``."""
import json

import pytest

from apicalls import AUTH, PATHS, config, request_body
from enginedriver import EngineDriver

from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.proxy.sse import encode_event

SECRET = "ghp_Zq8vR2mL5tX9wK3pN7bY4cF6hJ1dG0sA8eQu"
PAGE = f"DEPLOY_TOKEN={SECRET}"
FETCHED = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {
    "type": "web_fetch_result", "url": "https://example.com/env", "retrieved_at": "2026-12-01T10:00:00Z",
    "content": {"type": "document", "title": "env", "citations": {"enabled": True},
                "source": {"type": "text", "media_type": "text/plain", "data": PAGE}}}}
RAN = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {
    "type": "bash_code_execution_result", "stdout": f"token {SECRET}\n", "stderr": "", "return_code": 0,
    "content": []}}
CITATION = {"type": "char_location", "cited_text": PAGE, "document_index": 0, "document_title": "env",
            "start_char_index": 0, "end_char_index": len(PAGE)}
SAID = "The page sets a deploy token."
USAGE = {"input_tokens": 40, "output_tokens": 12}


def _message() -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-1", "stop_reason": "end_turn",
            "stop_sequence": None, "usage": USAGE, "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch",
                 "input": {"url": "https://example.com/env"}},
                FETCHED, RAN, {"type": "text", "text": SAID, "citations": [CITATION]}]}


def _stream() -> bytes:
    def ev(name, data):
        return encode_event(name, json.dumps({"type": name, **data}).encode())
    head = {**_message(), "content": [], "stop_reason": None}
    return b"".join([
        ev("message_start", {"message": head}),
        ev("content_block_start", {"index": 0, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": {}}}),
        ev("content_block_delta", {"index": 0, "delta": {
            "type": "input_json_delta", "partial_json": '{"url": "https://example.com/env"}'}}),
        ev("content_block_stop", {"index": 0}),
        ev("content_block_start", {"index": 1, "content_block": FETCHED}), ev("content_block_stop", {"index": 1}),
        ev("content_block_start", {"index": 2, "content_block": RAN}), ev("content_block_stop", {"index": 2}),
        ev("content_block_start", {"index": 3, "content_block": {"type": "text", "text": "", "citations": []}}),
        ev("content_block_delta", {"index": 3, "delta": {"type": "citations_delta", "citation": CITATION}}),
        ev("content_block_delta", {"index": 3, "delta": {"type": "text_delta", "text": SAID}}),
        ev("content_block_stop", {"index": 3}),
        ev("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": USAGE}),
        ev("message_stop", {})])


def _blocks(body: bytes, stream: bool) -> list[dict]:
    """The answer's content blocks, a stream's put together from its events."""
    if not stream:
        return json.loads(body)["content"]
    blocks: dict[int, dict] = {}
    for line in body.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        e = json.loads(line[6:])
        if e["type"] == "content_block_start":
            blocks[e["index"]] = e["content_block"]
        elif e["type"] == "content_block_delta" and e["delta"]["type"] == "citations_delta":
            blocks[e["index"]]["citations"].append(e["delta"]["citation"])
        elif e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta":
            blocks[e["index"]]["text"] += e["delta"]["text"]
    return [blocks[i] for i in sorted(blocks)]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_server_tool_results_and_citations_are_redacted(tmp_path, stream):
    async def provider(forward):
        return CannedUpstream(200, {"content-type": "text/event-stream" if stream else "application/json"},
                              [_stream() if stream else json.dumps(_message()).encode()])

    async with EngineDriver(config(tmp_path), provider=provider) as drive:
        got = await drive.call("POST", PATHS["anthropic"], {**AUTH["anthropic"], "x-ctx-session": "fetch"},
                               request_body("anthropic", "what does the page set?", stream=stream))
    assert got.status == 200 and got.turn.degraded == []
    assert SECRET not in got.body.decode()
    fetched, ran, text = _blocks(got.body, stream)[1:]
    assert fetched["content"]["content"]["source"]["data"].startswith("DEPLOY_TOKEN=[REDACTED:github-pat:")
    assert fetched["content"]["url"] == "https://example.com/env" and fetched["tool_use_id"] == "srvtoolu_1"
    assert ran["content"]["stdout"].startswith("token [REDACTED:github-pat:") and ran["content"]["return_code"] == 0
    assert text["text"] == SAID
    assert text["citations"][0]["cited_text"] == fetched["content"]["content"]["source"]["data"]
    assert text["citations"][0]["end_char_index"] == len(PAGE)  # positions are the provider's, kept
    assert got.turn.state["redact"].response_counts == {"github-pat": 3}
