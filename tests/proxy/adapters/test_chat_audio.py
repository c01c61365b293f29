"""A Chat answer spoken as audio (``modalities: ["text", "audio"]``): its
``transcript`` is text the client reads, so a secret in it is redacted, whole or
streamed in pieces; the audio itself (base64 ``data``) goes on untouched."""
import json

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from apicalls import AUTH, PATHS, config, request_body
from enginedriver import EngineDriver

from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.proxy.sse import SSEDecoder, encode_event

SECRET = "ghp_Zq8vR2mL5tX9wK3pN7bY4cF6hJ1dG0sA8eQu"
AUDIO = "UklGRiQAAABXQVZFZm10IBAAAAABAAEA"  # base64 of a WAV header


def _answer() -> bytes:
    return json.dumps({
        "id": "chatcmpl-a1", "object": "chat.completion", "created": 1, "model": "gpt-4o-audio-preview",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": None, "refusal": None,
            "audio": {"id": "audio_1", "data": AUDIO, "expires_at": 1767225600,
                      "transcript": f"Your token is {SECRET}, keep it."}}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}}).encode()


def _stream() -> bytes:
    def chunk(delta, finish=None):
        data = {"id": "chatcmpl-a2", "object": "chat.completion.chunk", "created": 1,
                "model": "gpt-4o-audio-preview", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return encode_event(None, json.dumps(data).encode())
    pieces = ["Your token is ", SECRET[:9], SECRET[9:25], SECRET[25:] + ",", " keep it."]
    return b"".join([chunk({"role": "assistant", "content": None}),
                     chunk({"audio": {"id": "audio_2", "data": AUDIO, "expires_at": 1767225600}})]
                    + [chunk({"audio": {"transcript": p}}) for p in pieces]
                    + [chunk({}, "stop"), encode_event(None, b"[DONE]")])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_spoken_answers_transcript_is_redacted(tmp_path, stream):
    async def provider(forward):
        return CannedUpstream(200, {"content-type": "text/event-stream" if stream else "application/json"},
                              [_stream() if stream else _answer()])

    body = json.loads(request_body("chat", "say my token", stream=stream))
    body.update(modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"})
    async with EngineDriver(config(tmp_path), provider=provider) as drive:
        got = await drive.call("POST", PATHS["chat"], {**AUTH["chat"], "x-ctx-session": "audio"},
                               json.dumps(body).encode())
    assert got.status == 200 and got.turn.degraded == []
    assert SECRET not in got.body.decode()
    if stream:
        chunks = [json.loads(e.data) for e in SSEDecoder().decode(got.body) if e.data and e.data != b"[DONE]"]
        for c in chunks:
            ChatCompletionChunk.model_validate(c)  # what the SDK reads, chunk by chunk
        audio = [c["choices"][0]["delta"].get("audio") for c in chunks]
        assert [a["data"] for a in audio if a and "data" in a] == [AUDIO]
        assert all(a["transcript"] for a in audio if a and "transcript" in a)  # no empty pieces: held ones wait
        transcript = "".join(a.get("transcript", "") for a in audio if a)
    else:
        message = ChatCompletion.model_validate_json(got.body).choices[0].message
        transcript = message.audio.transcript
        assert message.audio.data == AUDIO and message.audio.id == "audio_1"
    assert transcript.startswith("Your token is [REDACTED:github-pat:") and transcript.endswith(", keep it.")
    assert got.turn.state["redact"].response_counts == {"github-pat": 1}
