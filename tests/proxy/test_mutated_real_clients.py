"""The recorded real-client requests, each with a few JSON values changed to
shapes no client should send (wrong types, lone surrogates, huge numbers,
deep or empty containers, parts of another API), through the default
pipeline in-process; and the provider's rendered answers changed the same
way. Seeded, so a failure replays: every turn answers 200 or a 4xx in the
caller's format, no filter fails, and a secret in the answer never reaches
the client whole."""
from __future__ import annotations

import copy
import json
import logging
import random
from typing import Any, Iterator
from urllib.parse import urlsplit

from apicalls import config, streamed_text
from enginedriver import EngineDriver
from realclients import load, names

from ctxproxy.proxy.adapters import api_for_path
from ctxproxy.proxy.engine import CannedUpstream
from ctxproxy.proxy.scripted_provider import Reply, render_answer

SECRET = "ghp_Zq8vR2mL5tX9wK3pN7bY4cF6hJ1dG0sA8eQu"
ODD: list[Any] = [
    None, 0, -1, 2**70, 1e308, True, "", "\ud800", "\udfff x", "x" * 20000, [], {}, [[[[[]]]]], [None], {"": ""},
    {"type": "text"}, {"type": "tool_result"}, {"type": "image"}, {"role": "user"}, "\x00\x01\u202e",
    {"type": "tool_use", "id": None, "name": 5, "input": "x"}, {"type": "function_call", "call_id": 7, "arguments": {}},
    {"cache_control": {"type": "ephemeral"}}, "ghp_" + "a" * 36,
]


def _paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def mutate(value: Any, rng: random.Random, times: int) -> Any:
    """``value`` with ``times`` random nodes replaced by an odd value, deleted
    (a key) or doubled (a list item)."""
    value = copy.deepcopy(value)
    for _ in range(times):
        paths = [p for p in _paths(value) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent = value
        for k in path[:-1]:
            parent = parent[k]
        roll = rng.random()
        if roll < 0.15 and isinstance(parent, dict):
            del parent[path[-1]]
        elif roll < 0.25 and isinstance(parent, list):
            parent.insert(path[-1], copy.deepcopy(parent[path[-1]]))
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(ODD))
    return value


def _model_calls() -> list[dict]:
    out = []
    for name in names():
        rec = load(name)
        api, auxiliary = api_for_path(rec["path"])
        if rec["method"] == "POST" and api is not None:
            out.append({**rec, "api": api, "auxiliary": auxiliary, "name": name})
    return out


def _headers(rec: dict, session: str) -> dict[str, str]:
    h = {k: v for k, v in rec["headers"].items() if k.lower() not in ("content-length", "host")}
    return {**h, "X-Ctx-Session": session}


def _target(rec: dict) -> str:
    return rec["path"] + ("?" + rec["query"] if rec.get("query") else "")


def _failures(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]


async def test_mutated_requests_get_an_answer_or_a_4xx_and_no_filter_fails(tmp_path, caplog):
    rng = random.Random(20261203)
    calls = _model_calls()
    replies = []

    async def provider(forward):
        api, _ = api_for_path(urlsplit(forward.url).path)
        try:
            status, headers, chunks = render_answer(api, replies.pop(), forward.body or b"")
        except Exception:  # the scripted provider's own reading of an odd body: a provider's 400
            return CannedUpstream(400, {"content-type": "application/json"}, [b'{"error":{"message":"bad"}}'])
        return CannedUpstream(status, headers, chunks)

    caplog.set_level(logging.WARNING, logger="ctxproxy")
    seen: dict[int, int] = {}
    # prune's trigger low enough that it counts (and prunes) every recorded conversation
    async with EngineDriver(config(tmp_path, "[filters.prune]\ntrigger_tokens = 2000\n"), provider=provider) as drive:
        for i in range(400):
            rec = rng.choice(calls)
            body = mutate(rec["body"], rng, rng.choice([1, 1, 2, 3]))
            if isinstance(body, dict) and rng.random() < 0.5:
                body["stream"] = True
            raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")  # lone surrogates too
            replies[:] = [Reply.tool_call("Bash", {"command": "ls"}) if rng.random() < 0.4 else Reply.text("ok")]
            got = await drive.call("POST", _target(rec), _headers(rec, f"m{rng.randrange(6)}"), raw)
            seen[got.status] = seen.get(got.status, 0) + 1
            assert got.status in (200, 400, 413, 422), (i, rec["name"], got.status, got.body[:300])
            assert got.turn.degraded == [] and not _failures(caplog), (i, rec["name"], _failures(caplog))
    assert seen.get(200, 0) > 300 and seen.get(400, 0) > 0, seen  # most go through; some are refused


def _mutate_answer(chunks: list[bytes], stream: bool, rng: random.Random) -> list[bytes]:
    """One event's (or the body's) JSON changed; a stream sometimes loses an
    event, and arrives cut at random places."""
    if not stream:
        return [json.dumps(mutate(json.loads(b"".join(chunks)), rng, 1)).encode()]
    events = b"".join(chunks).decode().split("\n\n")
    with_data = [i for i, e in enumerate(events) if "data: {" in e]
    i = rng.choice(with_data)
    events[i] = "\n".join("data: " + json.dumps(mutate(json.loads(line[6:]), rng, 1))
                          if line.startswith("data: {") else line for line in events[i].split("\n"))
    if rng.random() < 0.1:
        del events[rng.choice(with_data)]
    out = "\n\n".join(events).encode()
    cuts = sorted(rng.sample(range(1, len(out)), 3))
    return [out[a:b] for a, b in zip([0, *cuts], [*cuts, len(out)])]


async def test_mutated_answers_reach_the_client_redacted_and_no_filter_fails(tmp_path, caplog):
    rng = random.Random(20261204)
    calls = [c for c in _model_calls() if not c["auxiliary"]]  # an auxiliary call's answer is relayed as sent

    async def provider(forward):
        api, _ = api_for_path(urlsplit(forward.url).path)
        reply = Reply.tool_call("Bash", {"command": "ls"}) if rng.random() < 0.3 else Reply.text(f"set {SECRET} now")
        status, headers, chunks = render_answer(api, reply, forward.body or b"")
        return CannedUpstream(status, headers, _mutate_answer(chunks, b'"stream": true' in forward.body
                                                              or b'"stream":true' in forward.body, rng))

    caplog.set_level(logging.WARNING, logger="ctxproxy")
    async with EngineDriver(config(tmp_path), provider=provider) as drive:
        for i in range(300):
            rec = rng.choice(calls)
            body = copy.deepcopy(rec["body"])
            body["stream"] = rng.random() < 0.6
            got = await drive.call("POST", _target(rec), _headers(rec, f"a{rng.randrange(6)}"), json.dumps(body).encode())
            assert got.status == 200, (i, rec["name"], got.body[:300])
            # what the client reads as text (a stream's deltas joined); the whole secret never
            text = streamed_text(rec["api"], got.body) if body["stream"] else got.body.decode()
            assert SECRET not in text, (i, rec["name"])
            assert got.turn.degraded == [] and not _failures(caplog), (i, rec["name"], _failures(caplog))
