"""The redact filter on views built by the wire adapters: every request field of
the three APIs, non-streamed and streamed responses (every split point of a
secret, for text, thinking and tool-argument deltas), reversible mode, profiles
and failing closed; then the same through the proxy with the official SDKs
(the fake provider receives no secret, the client gets none back)."""
from __future__ import annotations

import json

import orjson
import pytest
from ctxproxy.proxy.scripted_provider import CustomToolCall, Reply, Text, Thinking, ToolCall
from secretcorpus import hyperscan_cache_dir

from ctxproxy.config import ConfigError, parse_section
from ctxproxy.filters import FilterError, Identity, Pipeline, Services, Turn
from ctxproxy.filters.redact import RedactConfig, RedactFilter
from ctxproxy.store.services.redaction import PLACEHOLDER_RE, ProfileRegistry
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS

TOKENS = TokenCounter()
SECRET = b"server-secret-for-tests-0123456789"
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
ANT = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa_-" * 2 + "Qw3Er4Ty5U" + "AA"
AWS = "AKIAZ3MXQ7RT5WVY2KLP"
STRIPE = "sk_live_" + "4fT9kP2qL7vX1bN8mZ3cR6wY0hJ5sD2g"
SLACK = "xoxb-73018462951-4829105736284-aZ3bY4cX5dW6eV7fU8gT9hS0"
NPM = "npm_" + "Qz8Xw7Vy6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpI\n"
       "cGx1mTAEsnqoZU2bKQ8nDAKYp0Tcn2eqxLHpRFbN1Bq4pWJQk6YkDqLr1C3aa2Dn\n-----END RSA PRIVATE KEY-----")
SECRETS = (GHP, ANT, AWS, STRIPE, SLACK, NPM, PEM)


@pytest.fixture(scope="module")
def registry():
    return ProfileRegistry.build({"default": {}, "vault": {"reversible": True}, "pii": {
        "groups": ["llm", "cloud", "vcs", "saas", "crypto", "generic", "pii"]}}, cache_dir=hyperscan_cache_dir())


@pytest.fixture(scope="module")
def filt(registry):
    return RedactFilter(RedactConfig(route_profiles={"rev": "vault"}, profiles={"vault": {}, "pii": {}}),
                        SECRET, registry=registry)


def make_turn(api: str, body: dict, session: str = "s1", route: str = "r", tenant: str = "default") -> Turn:
    t = Turn(api=api, route=route, path="/", headers={}, request=ADAPTERS[api].parse_request(orjson.dumps(body)),
             tokens=TOKENS)
    t.identity = Identity(tenant=tenant, session=session, task=session)
    return t


def sent(turn: Turn) -> str:
    return turn.request.to_bytes().decode()


def assert_clean(text: str) -> None:
    for s in SECRETS:
        assert s not in text and json.dumps(s)[1:-1] not in text


# -- requests: every field of every API ----------------------------------------------------

REQUESTS = {
    "anthropic": {
        "model": "claude", "max_tokens": 100,
        "system": [{"type": "text", "text": f"Deploy key: {GHP}", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": f"my key is {ANT}"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "the user gave a key", "signature": "sig=="},
                {"type": "text", "text": f"I will use {AWS}."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                 "input": {"command": f"curl -H 'Authorization: Bearer {STRIPE}' x", "env": {"T": [SLACK]}}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                    {"type": "text", "text": f"NPM_TOKEN={NPM}\n"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
                {"type": "text", "text": PEM}]},
        ]},
    "chat": {
        "model": "gpt", "messages": [
            {"role": "system", "content": f"Deploy key: {GHP}"},
            {"role": "developer", "content": [{"type": "text", "text": f"cfg {AWS}"}]},
            {"role": "user", "content": [{"type": "text", "text": f"my key is {ANT}"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {
                    "name": "exec", "arguments": json.dumps({"cmd": f"stripe login --api-key {STRIPE}",
                                                             "env": {"SLACK": SLACK}})}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": f"NPM_TOKEN={NPM}\n{PEM}"},
        ]},
    "responses": {
        "model": "gpt", "instructions": f"Deploy key: {GHP}",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": f"my key is {ANT}"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": f"user gave {AWS}"}],
             "encrypted_content": "gAAAAB..."},
            {"type": "function_call", "call_id": "call_1", "name": "shell",
             "arguments": json.dumps({"command": ["bash", "-lc", f"stripe login --api-key {STRIPE}"]})},
            {"type": "function_call_output", "call_id": "call_1", "output": f"NPM_TOKEN={NPM}"},
            {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch",
             "input": f"*** Begin Patch\n+SLACK_TOKEN={SLACK}\n*** End Patch"},
            {"type": "custom_tool_call_output", "call_id": "call_2", "output": PEM},
        ]},
}


@pytest.mark.parametrize("api", list(REQUESTS))
def test_request_every_field_redacted(filt, api):
    t = make_turn(api, REQUESTS[api])
    filt.on_request(t)
    out = sent(t)
    assert_clean(out)
    st = t.state["redact"]
    assert st.profile.name == "default" and sum(st.counts.values()) >= 7
    assert {"github-pat", "anthropic-api-key", "aws-access-key-id", "stripe-secret-key", "slack-token",
            "npm-token", "private-key"} <= set(st.counts)
    body = orjson.loads(out)
    if api == "anthropic":
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}  # unknown fields survive
        assert body["messages"][1]["content"][0]["signature"] == "sig=="
        assert body["messages"][2]["content"][0]["content"][1]["source"]["data"] == "iVBORw0KGgo="
    if api == "chat":
        args = json.loads(body["messages"][3]["tool_calls"][0]["function"]["arguments"])
        assert args["cmd"].startswith("stripe login --api-key [REDACTED:stripe-secret-key:")
    if api == "responses":
        assert body["input"][1]["encrypted_content"] == "gAAAAB..."
        assert json.loads(body["input"][2]["arguments"])["command"][:2] == ["bash", "-lc"]


def test_unchanged_request_keeps_its_bytes(filt):
    raw = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hello, no secrets here"}]})
    t = Turn(api="chat", route="r", path="/", headers={}, request=ADAPTERS["chat"].parse_request(raw), tokens=TOKENS)
    filt.on_request(t)
    assert not t.request.changed and t.request.to_bytes() is raw and t.state["redact"].counts == {}


TOOLS = {
    "anthropic": [{"name": "deploy", "description": f"Deploys with {GHP}.", "input_schema": {
        "type": "object", "properties": {"env": {"type": "string", "description": f"one of prod, or {AWS}"}}}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
    "chat": [{"type": "function", "function": {"name": "deploy", "description": f"Deploys with {GHP}.",
                                               "parameters": {"type": "object", "title": f"args {AWS}"}}}],
    "responses": [{"type": "function", "name": "deploy", "description": f"Deploys with {GHP}.",
                   "parameters": {"type": "object", "properties": {"description": {
                       "type": "string", "description": f"free text, not {AWS}"}}}},
                  {"type": "mcp", "server_label": "ci", "server_url": "https://mcp.example/sse",
                   "headers": {"Authorization": f"Bearer {GHP}"}, "require_approval": "never"}],
}


@pytest.mark.parametrize("api", list(REQUESTS))
def test_tool_descriptions_are_redacted_and_the_rest_of_a_definition_kept(filt, api):
    """The model reads a tool's descriptions: redacted. Its name and schema are
    structure, and a Responses MCP tool's headers are credentials the provider
    uses to call the server: kept as sent. Chat's predicted output is read too."""
    key = "input" if api == "responses" else "messages"
    body = {"model": "m", "tools": TOOLS[api], key: [{"role": "user", "content": "deploy it"}]}
    if api == "anthropic":
        body["max_tokens"] = 10
    if api == "chat":
        body["prediction"] = {"type": "content", "content": f"export NPM_TOKEN={NPM}"}
    t = make_turn(api, body)
    filt.on_request(t)
    out = orjson.loads(sent(t))
    tools = out["tools"]
    described = json.dumps([tools[0]])
    assert GHP not in described and AWS not in described and "[REDACTED:github-pat:" in described
    assert t.state["redact"].counts == ({"github-pat": 1, "aws-access-key-id": 1, "npm-token": 1} if api == "chat"
                                        else {"github-pat": 1, "aws-access-key-id": 1})
    assert tools[1:] == TOOLS[api][1:]  # a server tool; the MCP tool's Authorization header reaches the provider
    if api == "chat":
        assert tools[0]["function"]["name"] == "deploy" and NPM not in out["prediction"]["content"]
    elif api == "responses":
        assert list(tools[0]["parameters"]["properties"]) == ["description"]  # a parameter named so stays


def _schema_with_values() -> dict:
    """A parameter schema whose offered and shown values hold secrets, beside a
    property that is *named* like those keys (structure, kept)."""
    return {"type": "object", "properties": {
        "token": {"type": "string", "enum": ["none", STRIPE], "default": STRIPE},
        "region": {"const": f"key {AWS}", "examples": [{"id": SLACK}]},
        "default": {"type": "string"}}}


SCHEMA_TOOLS = {
    "anthropic": [{"name": "pay", "description": "Pays.", "input_schema": _schema_with_values(),
                   "input_examples": [{"token": NPM, "region": "eu"}]}],
    "chat": [{"type": "function", "function": {"name": "pay", "parameters": _schema_with_values()}}],
    "responses": [{"type": "function", "name": "pay", "parameters": _schema_with_values()},
                  {"type": "mcp", "server_label": "ci", "server_url": "https://mcp.example/sse",
                   "server_description": f"deploys, call with {NPM}",
                   "headers": {"Authorization": f"Bearer {GHP}"}}],
}


@pytest.mark.parametrize("api", list(REQUESTS))
def test_schema_values_the_model_reads_are_redacted(filt, api):
    """A schema's ``enum``, ``default``, ``const`` and ``examples`` (and Anthropic's
    ``input_examples``, an MCP tool's ``server_description``) are shown to the
    model as they are, so a secret there would reach the provider: redacted,
    each value whole. Property names, types and the MCP credentials stay."""
    key = "input" if api == "responses" else "messages"
    body = {"model": "m", "tools": SCHEMA_TOOLS[api], key: [{"role": "user", "content": "pay it"}]}
    if api == "anthropic":
        body["max_tokens"] = 10
    t = make_turn(api, body)
    filt.on_request(t)
    tools = orjson.loads(sent(t))["tools"]
    fn = tools[0]["function"] if api == "chat" else tools[0]
    schema = fn["input_schema" if api == "anthropic" else "parameters"]
    text = json.dumps(tools)
    for secret in (STRIPE, AWS, SLACK, NPM):
        assert secret not in text
    assert schema["properties"]["token"]["enum"][0] == "none"
    assert schema["properties"]["token"]["default"].startswith("[REDACTED:")
    assert schema["properties"]["region"]["const"].startswith("key [REDACTED:")
    assert list(schema["properties"]) == ["token", "region", "default"]
    assert schema["properties"]["default"] == {"type": "string"}
    counts = t.state["redact"].counts
    assert sum(counts.values()) == {"anthropic": 5, "chat": 4, "responses": 5}[api]
    if api == "responses":
        assert tools[1]["headers"] == {"Authorization": f"Bearer {GHP}"}  # the provider's credential
        assert tools[1]["server_description"].startswith("deploys, call with [REDACTED:npm-token:")


def test_clean_tool_definitions_keep_the_bytes_and_are_not_walked_again(filt, monkeypatch):
    tools = [{"name": "read", "description": "Reads a file (clean-tools test).", "input_schema": {"type": "object"}}]
    raw = orjson.dumps({"model": "m", "max_tokens": 5, "tools": tools,
                        "messages": [{"role": "user", "content": "hello"}]})
    walked = []
    view_class = type(ADAPTERS["anthropic"].parse_request(raw))
    monkeypatch.setattr(view_class, "aside_slots", lambda self: walked.append(1) or iter(()))
    for _ in range(2):
        t = Turn(api="anthropic", route="r", path="/", headers={}, request=ADAPTERS["anthropic"].parse_request(raw),
                 tokens=TOKENS)
        filt.on_request(t)
        assert t.request.to_bytes() is raw
    assert walked == [1]  # the second turn found the same definitions clean by their encoding


@pytest.mark.parametrize("api", list(REQUESTS))
def test_resent_history_is_skipped_only_when_it_was_clean(filt, api):
    """Items found clean are skipped when re-sent; items that held a secret are
    redacted on every turn; a new secret in a new item is always found."""
    key = "input" if api == "responses" else "messages"
    clean = [{"role": "user", "content": f"turn one of {api}, nothing secret"},
             {"role": "assistant", "content": "ok"}]
    secret_item = {"role": "user", "content": f"the key is {GHP}"}
    base = {k: v for k, v in REQUESTS[api].items() if k not in (key, "system", "instructions")}
    red = filt.registry.get("default").redactor
    for _ in range(2):  # twice: the second turn re-sends everything
        t = make_turn(api, {**base, key: clean + [secret_item]})
        filt.on_request(t)
        assert_clean(sent(t))
        assert t.state["redact"].counts == {"github-pat": 1}
    assert all(red.is_clean_item(red.encoding_digest(orjson.dumps(it))) for it in clean)
    assert not red.is_clean_item(red.encoding_digest(orjson.dumps(secret_item)))
    t = make_turn(api, {**base, key: clean + [secret_item, {"role": "user", "content": f"and {AWS}"}]})
    filt.on_request(t)
    assert GHP not in sent(t) and AWS not in sent(t)
    assert t.state["redact"].counts == {"github-pat": 1, "aws-access-key-id": 1}


def test_placeholders_per_session(filt):
    body = {"model": "m", "messages": [{"role": "user", "content": f"key {GHP}"}]}
    a1, a2, b = make_turn("chat", body, "s1"), make_turn("chat", body, "s1"), make_turn("chat", body, "s2")
    other_tenant = make_turn("chat", body, "s1", tenant="acme")
    for t in (a1, a2, b, other_tenant):
        filt.on_request(t)
    ph = [PLACEHOLDER_RE.findall(sent(t))[0] for t in (a1, a2, b, other_tenant)]
    assert ph[0] == ph[1] and len(set(ph)) == 3


# -- non-streamed responses ------------------------------------------------------------------

RESPONSES = {
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
                  "content": [{"type": "thinking", "thinking": f"I saw {AWS}", "signature": "s"},
                              {"type": "text", "text": f"Your token is {GHP}."},
                              {"type": "tool_use", "id": "toolu_9", "name": "Bash",
                               "input": {"command": f"export T={NPM}"}}]},
    "chat": {"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": f"Your token is {GHP}.", "reasoning_content": f"I saw {AWS}",
            "tool_calls": [{"id": "call_9", "type": "function",
                            "function": {"name": "exec", "arguments": json.dumps({"cmd": f"export T={NPM}"})}}]}}]},
    "responses": {"id": "r", "object": "response", "status": "completed", "model": "m", "output": [
        {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": f"I saw {AWS}"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"Your token is {GHP}."}]},
        {"type": "function_call", "call_id": "call_9", "name": "shell",
         "arguments": json.dumps({"cmd": f"export T={NPM}"})}]},
}


@pytest.mark.parametrize("api", list(RESPONSES))
def test_non_streamed_response_redacted(filt, api):
    t = make_turn(api, {"model": "m", "messages": [], "input": []})
    filt.on_request(t)
    view = ADAPTERS[api].parse_response(orjson.dumps(RESPONSES[api]))
    Pipeline([filt]).run_response(t, view)
    out = view.to_bytes().decode()
    counts = {"aws-access-key-id": 1, "github-pat": 1, "npm-token": 1}
    if api == "anthropic":  # signed thinking goes on as the provider wrote it
        assert orjson.loads(out)["content"][0]["thinking"] == f"I saw {AWS}"
        out, counts = out.replace(f"I saw {AWS}", ""), {"github-pat": 1, "npm-token": 1}
    assert_clean(out)
    assert t.state["redact"].response_counts == counts


# -- streamed responses --------------------------------------------------------------------------


def anthropic_events(blocks):
    out = [("message_start", {"type": "message_start", "message": {"id": "msg_s", "model": "m", "usage": {}}})]
    for i, (kind, chunks) in enumerate(blocks):
        start = {"text": {"type": "text", "text": ""}, "thinking": {"type": "thinking", "thinking": ""},
                 "args": {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {}}}[kind]
        out.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        dtype, key = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking"),
                      "args": ("input_json_delta", "partial_json")}[kind]
        for c in chunks:
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": dtype, key: c}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    out += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"})]
    return out


def chat_events(blocks):
    def chunk(delta, finish=None):
        return (None, {"id": "c", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    tool = 0
    for kind, chunks in blocks:
        if kind == "args":
            out.append(chunk({"tool_calls": [{"index": tool, "id": f"call_{tool}", "type": "function",
                                              "function": {"name": "exec", "arguments": ""}}]}))
            out += [chunk({"tool_calls": [{"index": tool, "function": {"arguments": c}}]}) for c in chunks]
            tool += 1
        else:
            key = "content" if kind == "text" else "reasoning_content"
            out += [chunk({key: c}) for c in chunks]
    out += [chunk({}, "stop"), (None, "[DONE]")]
    return out


def responses_events(blocks):
    out = [("response.created", {"type": "response.created", "response": {"id": "r", "status": "in_progress",
                                                                         "output": []}})]
    items = []
    for i, (kind, chunks) in enumerate(blocks):
        full = "".join(chunks)
        if kind == "text":
            out.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": {"type": "message", "role": "assistant",
                                                                "content": []}}))
            out += [("response.output_text.delta", {"type": "response.output_text.delta", "output_index": i,
                                                    "content_index": 0, "delta": c}) for c in chunks]
            out.append(("response.output_text.done", {"type": "response.output_text.done", "output_index": i,
                                                      "content_index": 0, "text": full}))
            item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": full}]}
        elif kind == "thinking":
            out.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": {"type": "reasoning", "summary": []}}))
            out += [("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta",
                                                               "output_index": i, "summary_index": 0, "delta": c})
                    for c in chunks]
            out.append(("response.reasoning_summary_text.done", {"type": "response.reasoning_summary_text.done",
                                                                 "output_index": i, "summary_index": 0, "text": full}))
            item = {"type": "reasoning", "summary": [{"type": "summary_text", "text": full}]}
        else:
            out.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                       "item": {"type": "function_call", "call_id": f"call_{i}",
                                                                "name": "shell", "arguments": ""}}))
            out += [("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                                "output_index": i, "delta": c}) for c in chunks]
            out.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                                                                  "output_index": i, "arguments": full}))
            item = {"type": "function_call", "call_id": f"call_{i}", "name": "shell", "arguments": full}
        out.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                  "item": item}))
        items.append(item)
    out.append(("response.completed", {"type": "response.completed", "response": {
        "id": "r", "status": "completed", "output": items, "usage": {"input_tokens": 1, "output_tokens": 2}}}))
    return out


BUILD = {"anthropic": anthropic_events, "chat": chat_events, "responses": responses_events}


def run_stream(filt, turn, events):
    """Feed events through a pipeline of the filter (its last edits included);
    return the emitted events' bytes."""
    state = ADAPTERS[turn.api].stream()
    pipeline = Pipeline([filt])
    emitted = []
    for name, data in events:
        raw_data = data.encode() if isinstance(data, str) else orjson.dumps(data)
        head = f"event: {name}\n".encode() if name else b""
        emitted += pipeline.run_event(turn, state.event(name, head + b"data: " + raw_data + b"\n\n", raw_data))
    pipeline.run_end(turn)
    return [e.to_bytes() for e in emitted]


def channel_texts(api, emitted: list[bytes]) -> dict[str, str]:
    """What a client reassembles per channel from the emitted events."""
    state = ADAPTERS[api].stream()
    texts: dict[str, str] = {}
    for raw in emitted:
        name = None
        lines = raw.decode().split("\n")
        if lines[0].startswith("event: "):
            name = lines.pop(0)[7:]
        data = lines[0][6:].encode()
        for d in state.event(name, raw, data).deltas():
            texts[d.channel] = texts.get(d.channel, "") + d.text
    return texts


def _signed(api, kind):
    """Anthropic thinking is signed: the provider's own text, never edited."""
    return api == "anthropic" and kind == "thinking"


def _expected(filt, turn, kind, full, api=""):
    if _signed(api, kind):
        return full
    red = filt.registry.get("default").redactor
    key = filt._key(turn)
    if kind == "args":
        from ctxproxy.store.services.redaction import redact_json_text

        return redact_json_text(red, full, key).text
    return red.redact(full, key).text


CASES = {
    "text": f"Sure — use {GHP} for the deploy.",
    "thinking": f"The user pasted {AWS} earlier",
    "args": json.dumps({"command": f"export NPM_TOKEN={NPM} && npm publish"}),
}


@pytest.mark.parametrize("api", list(BUILD))
@pytest.mark.parametrize("kind", list(CASES))
def test_stream_every_split_point(filt, api, kind):
    """Two chunks cut at every point of the secret, and three (a second cut a few characters later)."""
    full = CASES[kind]  # chat streams thinking as reasoning_content
    secret = {"text": GHP, "thinking": AWS, "args": NPM}[kind]
    at = full.index(secret)
    splits = [[full[:cut], full[cut:]] for cut in range(at, at + len(secret) + 1)]
    splits += [[full[:cut], full[cut:cut + 7], full[cut + 7:]] for cut in range(at - 3, at + len(secret) + 1)]
    for chunks in splits:
        t = make_turn(api, {"model": "m", "messages": [], "input": []})
        emitted = run_stream(filt, t, BUILD[api]([(kind, chunks)]))
        blob = b"".join(emitted).decode()
        texts = channel_texts(api, emitted)
        (got,) = [v for v in texts.values() if v]
        assert got == _expected(filt, t, kind, full, api), (api, kind, chunks)
        if not _signed(api, kind):
            assert secret not in blob, (api, kind, chunks)


@pytest.mark.parametrize("api", list(BUILD))
def test_stream_three_and_many_chunks_mixed_blocks(filt, api):
    blocks_text = [("thinking", CASES["thinking"]), ("text", CASES["text"] + " and " + PEM), ("args", CASES["args"])]
    for size in (1, 2, 3, 7, 50):
        blocks = [(k, [s[i:i + size] for i in range(0, len(s), size)]) for k, s in blocks_text]
        t = make_turn(api, {"model": "m", "messages": [], "input": []})
        emitted = run_stream(filt, t, BUILD[api](blocks))
        blob = b"".join(emitted).decode()
        texts = [v for v in channel_texts(api, emitted).values() if v]
        # (Anthropic's thinking is signed: it is the one text that goes on as written)
        assert_clean(blob if api != "anthropic" else "".join(v for v in texts if v != CASES["thinking"]))
        want = [_expected(filt, t, k, s, api) for k, s in blocks_text]
        assert sorted(texts) == sorted(want), (api, size)
        counts = t.state["redact"].response_counts
        assert counts.get("github-pat") == 1 and counts.get("npm-token") == 1 and counts.get("private-key") == 1


def test_stream_done_events_match_the_streamed_text(filt):
    full = CASES["text"]
    t = make_turn("responses", {"model": "m", "input": []})
    emitted = run_stream(filt, t, responses_events([("text", [full[:15], full[15:]]), ("args", [CASES["args"]])]))
    events = [json.loads(e.decode().split("data: ", 1)[1]) for e in emitted]
    done = [e for e in events if e["type"] == "response.output_text.done"][0]
    streamed = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert done["text"] == streamed and GHP not in done["text"]
    completed = [e for e in events if e["type"] == "response.completed"][0]
    assert completed["response"]["output"][0]["content"][0]["text"] == streamed
    args_done = [e for e in events if e["type"] == "response.function_call_arguments.done"][0]
    assert args_done["arguments"] == "".join(e["delta"] for e in events
                                             if e["type"] == "response.function_call_arguments.delta")
    # argument deltas are held until the call is complete: one delta, sent before its .done
    kinds = [e["type"] for e in events]
    assert kinds.count("response.function_call_arguments.delta") == 1
    assert kinds.index("response.function_call_arguments.delta") < kinds.index("response.function_call_arguments.done")


def test_prose_is_not_held_back(filt):
    t = make_turn("anthropic", {"model": "m", "messages": []})
    words = ["The ", "deploy ", "finished. ", "All ", "checks ", "passed. "]
    emitted = run_stream(filt, t, anthropic_events([("text", words)]))
    deltas = [json.loads(e.decode().split("data: ", 1)[1]) for e in emitted]
    texts = [d["delta"]["text"] for d in deltas if d.get("type") == "content_block_delta"]
    assert texts == words  # each delta passes as it came, nothing delayed


# -- reversible mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize("api", list(BUILD))
def test_reversible_restores_tool_arguments_only(filt, api):
    req = {"model": "m", "messages": [{"role": "user", "content": f"use {GHP}"}],
           "input": [{"role": "user", "content": f"use {GHP}"}]}
    t = make_turn(api, req, session="rev-1", route="rev")
    filt.on_request(t)
    assert t.state["redact"].profile.name == "vault"
    ph = PLACEHOLDER_RE.findall(sent(t))[0]
    args = json.dumps({"command": f"gh auth login --with-token {ph}; echo {STRIPE}"})
    blocks = [("text", [f"I will log in with {ph[:9]}", ph[9:] + " now."]), ("args", [args[:20], args[20:]])]
    emitted = run_stream(filt, t, BUILD[api](blocks))
    texts = channel_texts(api, emitted)
    tool_text = [v for v in texts.values() if "command" in v][0]
    prose = [v for v in texts.values() if "log in" in v][0]
    assert GHP in json.loads(tool_text)["command"]  # the agent's tool gets the real value
    assert STRIPE not in tool_text  # a secret the model wrote itself stays redacted
    assert ph in prose and GHP not in prose  # text keeps the placeholder
    # another session of the same profile cannot restore it
    t2 = make_turn(api, {"model": "m", "messages": [], "input": []}, session="rev-2", route="rev")
    filt.on_request(t2)
    out = channel_texts(api, run_stream(filt, t2, BUILD[api]([("args", [args])])))
    assert GHP not in "".join(out.values())


def test_reversible_non_streamed_tool_use(filt):
    t = make_turn("anthropic", {"model": "m", "messages": [{"role": "user", "content": f"use {GHP}"}]},
                  session="rev-3", route="rev")
    filt.on_request(t)
    ph = PLACEHOLDER_RE.findall(sent(t))[0]
    body = {"content": [{"type": "text", "text": f"ok {ph}"},
                        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": f"login {ph}"}}]}
    view = ADAPTERS["anthropic"].parse_response(orjson.dumps(body))
    Pipeline([filt]).run_response(t, view)
    out = orjson.loads(view.to_bytes())
    assert out["content"][1]["input"]["command"] == f"login {GHP}" and out["content"][0]["text"] == f"ok {ph}"


# -- profiles, config, failing closed ----------------------------------------------------------------


def test_tenant_profile_wins_and_pii_profile(registry):
    f = RedactFilter(RedactConfig(profile="default", route_profiles={"r": "default"}, tenant_profiles={"acme": "pii"},
                                  profiles={"pii": {}}), SECRET, registry=registry)
    body = {"model": "m", "messages": [{"role": "user", "content": "mail maria.garcia7@gmail.com"}]}
    t = make_turn("chat", body, tenant="acme")
    f.on_request(t)
    assert t.state["redact"].profile.name == "pii" and t.state["redact"].counts == {"pii-email": 1}
    t = make_turn("chat", body, tenant="other")
    f.on_request(t)
    assert t.state["redact"].profile.name == "default" and not t.request.changed


def test_config_parsing_and_errors(tmp_path):
    cfg = parse_section(RedactConfig, {"profile": "strict", "profiles": {"strict": {"groups": ["llm", "pii"]}},
                                       "route_profiles": {"openai": "default"}, "hyperscan": False}, "filters.redact")
    assert cfg.profile == "strict" and cfg.hyperscan is False
    with pytest.raises(ConfigError, match="unknown redaction profile 'nope'"):
        parse_section(RedactConfig, {"route_profiles": {"r": "nope"}}, "filters.redact")
    with pytest.raises(ConfigError, match="unknown rule group"):
        RedactFilter(RedactConfig(profiles={"x": {"groups": ["bogus"]}}), SECRET)
    f = RedactFilter.create(cfg, Services(secret=SECRET, data_dir=str(tmp_path)))
    assert f.registry.get("strict").redactor.engine == "python"
    assert {r.group for r in f.registry.get("strict").redactor.rules} == {"llm", "pii"}


def test_fails_closed(registry):
    f = RedactFilter(RedactConfig(), None, registry=registry)  # no server secret anywhere
    t = make_turn("chat", {"model": "m", "messages": [{"role": "user", "content": f"key {GHP}"}]})
    with pytest.raises(FilterError) as info:
        f.on_request(t)
    assert info.value.filter_name == "redact" and GHP not in info.value.message
    assert f.required

    class Broken:
        def get(self, name=None):
            raise RuntimeError(f"boom {GHP}")

    f2 = RedactFilter(RedactConfig(), SECRET, registry=registry)
    f2.registry = Broken()
    t = make_turn("chat", {"model": "m", "messages": [{"role": "user", "content": f"key {GHP}"}]})
    with pytest.raises(RuntimeError):  # the pipeline turns any exception of a required filter into a block
        f2.on_request(t)
    assert GHP in sent(t)  # nothing was edited; the pipeline will not forward it


# -- through the proxy, with the official SDKs --------------------------------------------------------

PIPELINE = """
[pipeline]
request = ["identify", "redact"]
"""
REVERSIBLE = PIPELINE + """
[filters.redact]
profile = "vault"
[filters.redact.profiles.vault]
reversible = true
"""


def _model_reply() -> Reply:
    return Reply.of(Thinking(f"the user pasted {AWS} earlier"), Text(f"Your token is {GHP}; keep it safe."),
                    ToolCall("run", {"command": f"export NPM_TOKEN={NPM} && npm publish"}), delta_chars=5)


def _received(fake) -> str:
    return "\n".join(r.body.decode() for r in fake.model_requests)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_sdk_anthropic(make_proxy, fake, stream):
    proxy = await make_proxy(PIPELINE)
    fake.script(_model_reply())
    client = proxy.anthropic()
    kw = dict(model="claude-x", max_tokens=200, system=f"deploy key {GHP}", messages=[
        *REQUESTS["anthropic"]["messages"], {"role": "assistant", "content": "ok"},
        {"role": "user", "content": f"also {SLACK}"}])
    if stream:
        async with client.messages.stream(**kw) as s:
            msg = await s.get_final_message()
    else:
        msg = await client.messages.create(**kw)
    assert_clean(_received(fake))
    assert msg.content[0].type == "thinking" and msg.content[0].thinking == f"the user pasted {AWS} earlier"
    out = msg.model_dump_json(exclude={"content": {0}})  # signed thinking comes back as the model wrote it
    assert_clean(out)
    assert "[REDACTED:github-pat:" in out and "[REDACTED:npm-token:" in out
    assert msg.content[-1].type == "tool_use" and msg.content[-1].input["command"].endswith("&& npm publish")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_sdk_chat(make_proxy, fake, stream):
    proxy = await make_proxy(PIPELINE)
    fake.script(_model_reply())
    client = proxy.openai()
    kw = dict(model="gpt-x", messages=REQUESTS["chat"]["messages"])
    if stream:
        content, args = "", ""
        async for chunk in await client.chat.completions.create(stream=True, **kw):
            for choice in chunk.choices:
                content += choice.delta.content or ""
                for call in choice.delta.tool_calls or ():
                    args += call.function.arguments or ""
        out = content + args
    else:
        res = await client.chat.completions.create(**kw)
        out = res.model_dump_json()
        args = res.choices[0].message.tool_calls[0].function.arguments
    assert_clean(_received(fake))
    assert_clean(out)
    assert "[REDACTED:github-pat:" in out and json.loads(args)["command"].startswith("export NPM_TOKEN=[REDACTED:")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_sdk_responses(make_proxy, fake, stream):
    proxy = await make_proxy(PIPELINE)
    fake.script(_model_reply().plus(CustomToolCall("apply_patch", f"+TOKEN={STRIPE}\n")))
    client = proxy.openai()
    kw = dict(model="gpt-x", instructions=REQUESTS["responses"]["instructions"], input=REQUESTS["responses"]["input"])
    if stream:
        async with client.responses.stream(**kw) as s:
            deltas = [e.delta for e in [ev async for ev in s] if getattr(e, "type", "").endswith(".delta")]
            res = await s.get_final_response()
        assert_clean("".join(d for d in deltas if isinstance(d, str)))
    else:
        res = await client.responses.create(**kw)
    assert_clean(_received(fake))
    out = res.model_dump_json()
    assert_clean(out)
    assert "[REDACTED:github-pat:" in out and "[REDACTED:stripe-secret-key:" in out


async def test_sdk_reversible_tool_arguments(make_proxy, fake):
    proxy = await make_proxy(REVERSIBLE)
    client = proxy.anthropic()
    fake.script(lambda rec: Reply.of(Text("Logging in."), ToolCall("run", {
        "command": "gh auth login --with-token " + PLACEHOLDER_RE.findall(rec.body.decode())[0]}), delta_chars=4))
    async with client.messages.stream(model="c", max_tokens=50, messages=[
            {"role": "user", "content": f"log in with {GHP}"}]) as s:
        msg = await s.get_final_message()
    assert GHP not in _received(fake)
    assert msg.content[-1].input["command"] == f"gh auth login --with-token {GHP}"


def test_tool_input_keys_are_the_tools_own_and_all_scanned(filt):
    """A tool may call its arguments ``name``, ``id`` or ``type``: inside ``input``
    they are not the content block's structure and are scanned like any other."""
    body = {"model": "m", "max_tokens": 9, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9", "name": "Deploy", "input": {
            "name": f"token {GHP}", "id": STRIPE, "status": [SLACK], "format": {"type": NPM},
            "citations": [{"cited_text": AWS}]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}]}]}
    t = make_turn("anthropic", body)
    filt.on_request(t)
    assert_clean(sent(t))
    block = orjson.loads(sent(t))["messages"][1]["content"][0]
    assert block["id"] == "toolu_9" and block["name"] == "Deploy"  # the block's own fields stay
    assert block["input"]["name"].startswith("token [REDACTED:github-pat:")



async def test_signed_thinking_goes_back_as_the_provider_wrote_it(make_proxy, fake):
    """A thinking block sent back with its signature is the provider's own text:
    editing one byte voids the signature and the provider refuses the turn. It is
    forwarded verbatim while everything around it is redacted; thinking without
    a signature is redacted like any text."""
    proxy = await make_proxy(PIPELINE)
    fake.script(Reply.text("ok"))
    signed = {"type": "thinking", "thinking": f"checking the key {AWS} format", "signature": "EqQBCkYIBxgCKkA="}
    await proxy.anthropic().messages.create(model="c", max_tokens=20, messages=[
        {"role": "user", "content": f"use {GHP}"},
        {"role": "assistant", "content": [signed, {"type": "thinking", "thinking": f"unsigned {NPM}"},
                                          {"type": "tool_use", "id": "toolu_s", "name": "Bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s", "content": "a.txt"}]}])
    sent_body = orjson.loads(fake.model_requests[-1].body)
    blocks = sent_body["messages"][1]["content"]
    assert blocks[0] == signed
    assert NPM not in blocks[1]["thinking"] and GHP not in sent_body["messages"][0]["content"]


# A credential inside another one's value: the bearer token stops at "@", the assignment it
# carries runs on; neither the provider, the client nor anything at rest sees a part of it.
NESTED_VALUE = "Hq4Vm8Zr2K@t6Wq8Zr3"
NESTED_LINE = f"GET /v1/items 401 Authorization: Bearer NAME_KEY={NESTED_VALUE}"


def _has_part(text: str, value: str = NESTED_VALUE) -> bool:
    return any(value[i:i + 6] in text for i in range(len(value) - 5))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_credential_inside_another_reaches_neither_the_provider_nor_the_session_index(
        make_proxy, fake, tmp_path, stream):
    proxy = await make_proxy("")  # the default pipeline: recall's session index keeps each turn's text
    fake.script(Reply.text(f"The log says {NESTED_LINE} — the key was refused.", delta_chars=3))
    client = proxy.anthropic(default_headers={"X-Ctx-Session": "s-nested", "X-Ctx-User": "alice"})
    kw = dict(model="claude-x", max_tokens=100,
              messages=[{"role": "user", "content": f"why does this fail?\n{NESTED_LINE}\n"}])
    if stream:
        async with client.messages.stream(**kw) as s:
            answer = "".join([t async for t in s.text_stream])
    else:
        answer = (await client.messages.create(**kw)).content[0].text
    assert not _has_part(_received(fake)) and "[REDACTED:" in _received(fake)
    assert not _has_part(answer) and answer.endswith(" — the key was refused.")
    store = proxy.settled_store()
    (m,) = store.manifests.list("default", session="s-nested")
    assert sum(m.data["redactions"].values()) == 1 and sum(m.data["response_redactions"].values()) == 1
    files = [f for f in (tmp_path / "data").rglob("*") if f.is_file()]
    assert any("sessions.db" in f.name for f in files)
    for f in files:  # at rest: the LMDB store, the session index and its WAL, every cache
        assert not _has_part(f.read_bytes().decode("latin-1")), f
