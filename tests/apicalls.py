"""Model calls for the three APIs as a client sends them, and the answer's text
as a client reads it (through the adapters' own views): what the engine's
tests and the writing-a-filter example drive the engine with."""
from __future__ import annotations

import json

import redactioncache
from ctxproxy.config import load_config
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.sse import SSEDecoder

PATHS = {"anthropic": "/v1/messages", "chat": "/v1/chat/completions", "responses": "/v1/responses"}
AUTH = {"anthropic": {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
        "chat": {"authorization": "Bearer sk-test"}, "responses": {"authorization": "Bearer sk-test"}}


def request_body(api: str, text: str, stream: bool) -> bytes:
    if api == "anthropic":
        body = {"model": "claude-test-1", "max_tokens": 64, "messages": [{"role": "user", "content": text}]}
    elif api == "chat":
        body = {"model": "gpt-5", "messages": [{"role": "user", "content": text}]}
    else:
        body = {"model": "gpt-5", "input": text}
    if stream:
        body["stream"] = True
    return json.dumps(body).encode()


def config(tmp_path, toml: str = "", *, shared_redaction: bool = True):
    """The config of ``toml`` with its data in ``tmp_path``; the redaction engine the run's other
    configs of the same redaction section built (``redactioncache``), unless ``shared_redaction=False``."""
    path = None
    if toml:
        path = tmp_path / "ctxproxy.toml"
        path.write_text(toml)
    cfg = load_config(path, port=0, data_dir=str(tmp_path / "data"), anthropic_upstream="http://provider.invalid",
                      openai_upstream="http://provider.invalid/")
    return redactioncache.shared_redaction(cfg) if shared_redaction else cfg


def streamed_text(api: str, body: bytes) -> str:
    """The answer's text, read from the events the client got through the adapter's own stream view."""
    state = ADAPTERS[api].stream()
    out = []
    for raw in SSEDecoder().decode(body):
        out.extend(d.text for d in state.event(raw.name, raw.raw, raw.data).deltas() if d.kind == "text")
    return "".join(out)


def whole_text(api: str, body: bytes) -> str:
    return "".join(s.get() for s in ADAPTERS[api].parse_response(body).text_slots())
