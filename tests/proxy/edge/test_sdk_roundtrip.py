"""The official SDKs through ctxproxy: what a real client sends and gets back."""
import json


from ctxproxy.proxy.scripted_provider import Reply

TOOL = {"name": "get_weather", "description": "Weather for a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
FN = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                       "parameters": TOOL["input_schema"]}}
RFN = {"type": "function", "name": "get_weather", "description": "Weather for a city",
       "parameters": TOOL["input_schema"]}


# -- Anthropic Messages --------------------------------------------------------

async def test_anthropic_non_stream(proxy, fake):
    fake.script(Reply.text("Bonjour."))
    client = proxy.anthropic()
    raw = await client.messages.with_raw_response.create(
        model="claude-opus-4-8", max_tokens=50, messages=[{"role": "user", "content": "Say hi"}])
    msg = await raw.parse()
    assert msg.content[0].text == "Bonjour."
    assert len(raw.headers["x-ctx-turn-id"]) == 32
    rec = fake.last
    assert rec.path == "/v1/messages" and rec.headers["authorization"] == "Bearer sk-ant-test"
    assert rec.headers["anthropic-version"]


async def test_anthropic_stream(proxy, fake):
    fake.script(Reply.text("one two three four", chunk_split=4))
    client = proxy.anthropic()
    async with client.messages.stream(model="claude-opus-4-8", max_tokens=50,
                                      messages=[{"role": "user", "content": "count"}]) as stream:
        texts = [t async for t in stream.text_stream]
        final = await stream.get_final_message()
    assert "".join(texts) == "one two three four"
    assert final.usage.output_tokens > 0


async def test_anthropic_tool_round_trip(proxy, fake):
    fake.script(Reply.tool_call("get_weather", {"city": "Paris"}), Reply.text("It is sunny."))
    client = proxy.anthropic()
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    async with client.messages.stream(model="claude-opus-4-8", max_tokens=100, tools=[TOOL],
                                      messages=messages) as stream:
        first = await stream.get_final_message()
    (use,) = [b for b in first.content if b.type == "tool_use"]
    assert use.input == {"city": "Paris"} and first.stop_reason == "tool_use"
    messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]}]
    second = await client.messages.create(model="claude-opus-4-8", max_tokens=100, tools=[TOOL],
                                          messages=messages)
    assert second.content[0].text == "It is sunny."
    sent = fake.last.json["messages"][-1]["content"][0]
    assert sent == {"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}


async def test_api_key_header_forwarded(proxy, fake):
    client = proxy.anthropic(default_headers={"x-api-key": "sk-ant-cc", "anthropic-beta": "b1,b2"})
    await client.messages.create(model="claude-opus-4-8", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert fake.last.headers["x-api-key"] == "sk-ant-cc"
    assert fake.last.headers["anthropic-beta"] == "b1,b2"


async def test_bearer_auth_forwarded(proxy, fake):
    import anthropic

    client = anthropic.AsyncAnthropic(base_url=proxy.url, auth_token="tok-123", max_retries=0)
    await client.messages.create(model="claude-opus-4-8", max_tokens=10,
                                 messages=[{"role": "user", "content": "hi"}])
    assert fake.last.headers["authorization"] == "Bearer tok-123"


async def test_count_tokens_passes_through(proxy, fake):
    client = proxy.anthropic()
    res = await client.messages.count_tokens(model="claude-opus-4-8",
                                             messages=[{"role": "user", "content": "hello there"}])
    assert res.input_tokens > 0
    assert fake.last.path == "/v1/messages/count_tokens"


# -- OpenAI Chat Completions ---------------------------------------------------

async def test_chat_non_stream(proxy, fake):
    fake.script(Reply.text("Hi!"))
    client = proxy.openai()
    res = await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "hello"}])
    assert res.choices[0].message.content == "Hi!"
    assert fake.last.headers["authorization"] == "Bearer sk-test"


async def test_chat_stream_with_usage(proxy, fake):
    fake.script(Reply.text("streamed words here", chunk_split=3))
    client = proxy.openai()
    stream = await client.chat.completions.create(model="gpt-5", messages=[{"role": "user", "content": "go"}],
                                                  stream=True, stream_options={"include_usage": True})
    text, usage = "", None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        usage = chunk.usage or usage
    assert text == "streamed words here" and usage.completion_tokens > 0


async def test_chat_tool_round_trip(proxy, fake):
    fake.script(Reply.tool_call("get_weather", {"city": "Oslo"}), Reply.text("Cold."))
    client = proxy.openai()
    messages = [{"role": "user", "content": "Weather in Oslo?"}]
    stream = await client.chat.completions.create(model="gpt-5", messages=messages, tools=[FN], stream=True)
    calls: dict[int, dict] = {}
    async for chunk in stream:
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            c = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
            c["id"] = tc.id or c["id"]
            c["name"] = (tc.function.name or "") or c["name"]
            c["args"] += tc.function.arguments or ""
    (call,) = calls.values()
    assert call["name"] == "get_weather" and json.loads(call["args"]) == {"city": "Oslo"}
    messages += [{"role": "assistant", "tool_calls": [{"id": call["id"], "type": "function",
                                                       "function": {"name": call["name"], "arguments": call["args"]}}]},
                 {"role": "tool", "tool_call_id": call["id"], "content": "-5C"}]
    res = await client.chat.completions.create(model="gpt-5", messages=messages, tools=[FN])
    assert res.choices[0].message.content == "Cold."
    assert fake.last.json["messages"][-1] == {"role": "tool", "tool_call_id": call["id"], "content": "-5C"}


async def test_models_list_passes_through(proxy, fake):
    client = proxy.openai()
    models = await client.models.list()
    assert len(models.data) >= 1
    assert fake.last.path == "/v1/models"


# -- OpenAI Responses ------------------------------------------------------------

async def test_responses_non_stream(proxy, fake):
    fake.script(Reply.text("Answer."))
    client = proxy.openai()
    res = await client.responses.create(model="gpt-5", input="question?")
    assert res.output_text == "Answer."


async def test_responses_stream(proxy, fake):
    fake.script(Reply.text("a b c d e", chunk_split=5))
    client = proxy.openai()
    async with client.responses.stream(model="gpt-5", input="go") as stream:
        deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
        final = await stream.get_final_response()
    assert "".join(deltas) == "a b c d e" == final.output_text
    assert final.usage.output_tokens > 0


async def test_responses_tool_round_trip(proxy, fake):
    fake.script(Reply.tool_call("get_weather", {"city": "Rome"}), Reply.text("Warm."))
    client = proxy.openai()
    async with client.responses.stream(model="gpt-5", input=[{"role": "user", "content": "Rome?"}],
                                       tools=[RFN]) as stream:
        first = await stream.get_final_response()
    (call,) = [o for o in first.output if o.type == "function_call"]
    assert json.loads(call.arguments) == {"city": "Rome"}
    res = await client.responses.create(model="gpt-5", tools=[RFN], input=[
        {"role": "user", "content": "Rome?"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "25C"}])
    assert res.output_text == "Warm."
    assert fake.last.json["input"][-1]["output"] == "25C"
