"""Content parts that are not text: binary payloads are never read as text at
any depth, a tool result with a part other than text is never pruned to a
stub, and a part whose ``type`` is not a string is an unknown (scanned)
block, never a 500."""
import aiohttp
import orjson
import pytest

from toolsession import canned, prune_toml, tool_outputs

from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.base import Identity
from ctxproxy.filters.prune import REF_PREFIX, PruneConfig, PruneFilter, estimate_tokens
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply

TOKENS = TokenCounter()
OUTS = tool_outputs(40, seed=3, scale=0.5)
SECRET = "AKIAZ3MXQ7RT5WVY2KLP"  # an AWS key id the default redaction catches
# A "PDF" whose base64 happens to hold a secret-shaped run: redaction must not rewrite it.
PDF_DATA = "JVBERi0xLjcK/" + SECRET + "/" + "QUJD" * 500
PDF = {"type": "document", "title": "spec.pdf", "context": "the design spec",
       "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_DATA}}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K" + "A" * 64}}
TEXT_DOC = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}}
CONTENT_DOC = {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "inner"}, IMAGE]}}
SEARCH = {"type": "search_result", "source": "https://example.com/r", "title": "Result",
          "content": [{"type": "text", "text": "a search hit"}]}
HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json",
           "X-Ctx-Session": "sess-parts"}


def view_of(body: dict, api: str = "anthropic"):
    return ADAPTERS[api].parse_request(orjson.dumps(body))


def run_prune(store, body: dict, api: str = "anthropic") -> tuple[Turn, dict]:
    f = PruneFilter(PruneConfig(trigger_tokens=8000, keep_recent=3, min_tokens=100), store)
    t = Turn(api=api, route="r", path="/", headers={}, request=view_of(body, api), tokens=TOKENS,
             identity=Identity(tenant="acme", session="s1"))
    Pipeline([f]).run_request(t)
    return t, orjson.loads(t.request.to_bytes())


# -- binary payloads, at every depth ---------------------------------------------------

def test_binary_payloads_are_never_slots_at_any_depth():
    body = {"model": "m", "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {
            "attach": {"type": "image", "source": {"type": "base64", "data": "tool-arg"}}}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "text", "text": "out"}, IMAGE, PDF, TEXT_DOC, CONTENT_DOC, SEARCH]},
            PDF]}]}
    slots = {s.where: s.get() for s in view_of(body).text_slots()}
    assert not any(v.startswith(("JVBERi0x", "iVBORw0K")) for v in slots.values()), slots
    r = "messages[1].content[0].content"
    assert {f"{r}[0].text", f"{r}[2].title", f"{r}[2].context", f"{r}[3].source.data",
            f"{r}[4].source.content[0].text", f"{r}[5].source", f"{r}[5].title",
            f"{r}[5].content[0].text", "messages[1].content[1].title"} <= set(slots)
    # a tool's own arguments are scanned whole, whatever shape they take
    assert slots["messages[0].content[0].input.attach.source.data"] == "tool-arg"


def test_documents_and_search_results_make_a_result_non_text():
    for part in (PDF, SEARCH, TEXT_DOC, IMAGE):
        body = {"model": "m", "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "out"}, part]}]}]}
        view = view_of(body)
        (res,) = view.tool_results()
        assert res.has_images and res.content == "out", part["type"]
        res.replace("[stub]")  # whoever replaces the text, the other parts stay
        content = orjson.loads(view.to_bytes())["messages"][0]["content"][0]["content"]
        assert content == [{"type": "text", "text": "[stub]"}, part]


def test_estimate_reads_text_documents_not_base64():
    def tokens(part: dict) -> int:
        return estimate_tokens(view_of({"model": "m", "messages": [{"role": "user", "content": [part]}]}),
                               TOKENS.count)

    assert tokens(TEXT_DOC) == TOKENS.count("plain words")
    assert tokens(PDF) == TOKENS.count("spec.pdf") + TOKENS.count("the design spec")


# -- prune keeps what is not text ----------------------------------------------------------

@pytest.mark.parametrize("part", [PDF, SEARCH], ids=["document", "search_result"])
def test_prune_leaves_results_with_documents_or_search_results_whole(store, part):
    body = canned("anthropic", OUTS, 30)
    block = body["messages"][2]["content"][0]
    block["content"] = [{"type": "text", "text": OUTS[0][2]}, part]
    _, out = run_prune(store, body)
    assert out["messages"][2]["content"][0] == block
    assert REF_PREFIX in str(out["messages"][4]["content"][0]["content"])  # its neighbours were pruned


def test_prune_runs_past_a_part_whose_type_is_not_a_string(store):
    body = canned("anthropic", OUTS, 30)
    body["messages"][1]["content"].append({"type": {"odd": 1}, "text": "x"})
    body["messages"][2]["content"].append({"type": ["x"], "content": [{"type": []}]})
    t, out = run_prune(store, body)
    assert t.state["prune"].batch is True
    assert out["messages"][1]["content"][-1] == {"type": {"odd": 1}, "text": "x"}


# -- a type that is not a string --------------------------------------------------------------

ODD = [
    ("anthropic", {"model": "m", "system": {"type": []}, "messages": [{"role": "user", "content": "hi"}]}),
    ("anthropic", {"model": "m", "messages": [{"role": "user", "content": [{"type": {}, "text": "hi"}]}]}),
    ("anthropic", {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": ["x"], "text": "hi"}]}]}]}),
    ("chat", {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c",
                                          "content": [{"type": {}, "text": "hi"}]}]}),
    ("responses", {"model": "m", "input": [{"type": [], "text": "hi"},
                                           {"type": "function_call_output", "call_id": "c",
                                            "output": [{"type": {}, "text": "hi"}]}]}),
]


@pytest.mark.parametrize("api, body", ODD)
def test_a_type_that_is_not_a_string_is_an_unknown_block(api, body):
    view = view_of(body, api)
    texts = [s.get() for s in view.text_slots()]
    assert "hi" in texts  # unknown blocks are scanned
    for res in view.tool_results():
        assert res.has_images  # not text: never pruned
    assert estimate_tokens(view, TOKENS.count) >= 0


def test_a_stream_event_whose_type_is_not_a_string_has_no_deltas():
    stream = ADAPTERS["anthropic"].stream()
    ev = stream.event("content_block_delta", b"", orjson.dumps(
        {"type": "content_block_delta", "index": 0, "delta": {"type": [], "text": "x"}}))
    assert ev.deltas() == []
    odd = stream.event(None, b"", orjson.dumps({"type": {"a": 1}}))
    assert odd.type is None and list(odd.text_slots()) == []


# -- end to end, the default pipeline -------------------------------------------------------------

@pytest.mark.parametrize("body", [b for api, b in ODD if api == "anthropic"])
async def test_proxy_forwards_odd_types_untouched(proxy, fake, body):
    body = dict(body, max_tokens=16)
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.url + "/v1/messages", data=orjson.dumps(body), headers=HEADERS) as r:
            assert r.status == 200, await r.text()
            await r.read()
    assert fake.model_requests[-1].json == body  # lossless


async def test_proxy_scans_a_block_of_unknown_type(proxy, fake):
    body = {"model": "m", "max_tokens": 16,
            "messages": [{"role": "user", "content": [{"type": {}, "text": f"key {SECRET}"}]}]}
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.url + "/v1/messages", data=orjson.dumps(body), headers=HEADERS) as r:
            assert r.status == 200, await r.text()
            await r.read()
    sent = fake.model_requests[-1].json
    assert SECRET not in orjson.dumps(sent).decode()
    assert sent["messages"][0]["content"][0]["type"] == {}


async def test_proxy_never_rewrites_base64(proxy, fake):
    """A base64 payload that happens to hold a secret-shaped run reaches the
    provider untouched, at the top of a message or inside a tool result;
    the text beside it is still redacted."""
    image = {"type": "image", "source": dict(IMAGE["source"], data=PDF_DATA)}
    body = {"model": "m", "max_tokens": 16, "messages": [
        {"role": "user", "content": [PDF, {"type": "text", "text": "read it"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "text", "text": f"key {SECRET}"}, image]}]}]}
    async with aiohttp.ClientSession() as http:
        async with http.post(proxy.url + "/v1/messages", data=orjson.dumps(body), headers=HEADERS) as r:
            assert r.status == 200, await r.text()
            await r.read()
    got = fake.model_requests[-1].json["messages"]
    assert got[0] == body["messages"][0]
    result = got[2]["content"][0]["content"]
    assert result[1] == image and SECRET not in result[0]["text"]


PRUNE_TOML = prune_toml(3000, keep_recent=1, chain=False)


async def test_sdk_session_keeps_a_pdf_whole_through_redact_and_prune(make_proxy, fake):
    """The official SDK, the default pipeline with an eager prune: an old tool
    result holding a PDF reaches the provider byte for byte (not pruned, its
    base64 not redacted), while a text-only result beside it is pruned."""
    p = await make_proxy(PRUNE_TOML)
    outs = [o for _, _, o in OUTS if len(o) > 3000][:3]
    messages: list[dict] = [{"role": "user", "content": "read the spec and the logs"}]
    for i, out in enumerate(outs):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "read_file", "input": {"path": f"f{i}"}}]})
        content = [{"type": "text", "text": out}, PDF] if i == 0 else out
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": content}]})
    fake.script(Reply.text("done"))
    msg = await p.anthropic().messages.create(model="claude-test-1", max_tokens=64, messages=messages,
                                              extra_headers={"X-Ctx-Session": "sess-pdf"})
    assert msg.content[0].text == "done"
    got = fake.model_requests[-1].json["messages"]
    assert got[2] == messages[2]  # the result with the PDF: whole, base64 untouched
    assert REF_PREFIX in str(got[4]["content"][0]["content"])  # prune did run
