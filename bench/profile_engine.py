"""Where a turn's CPU goes: the default pipeline driven in-process through the
turn engine (``tests/enginedriver.py``: no sockets), the provider a function
that returns pre-rendered wire bytes, so only ctxproxy's own work is counted.

    python bench/profile_engine.py turn  [N]     # run.py's two 4 KB requests, non-stream
    python bench/profile_engine.py stream [N]    # the same, streamed: a 600-character answer in 12-char deltas
                                   [--per-read K]  # K events to a read (5: what run.py's phase 4 sees)
    python bench/profile_engine.py first         # run.py's 196K-token conversation: first send, two later turns
    python bench/profile_engine.py chat [N]      # N new turns of plain short chats (no tools, no secrets):
                                                 # what each filter costs with nothing to do, in us per turn
    python bench/profile_engine.py tool [N]      # N new turns of small tool conversations (one read_file
                                                 # call and its result a turn)
                                   [--later]     # --profile the later turns instead of the first send
    ... --profile [--sort tottime|cumulative]    # and a cProfile of the measured part (slower: compare within a run)
    ... --filters                                # and each filter's wall time per turn, from the turns' own
                                                 # timings (no profiler: cProfile's per-call cost inflates
                                                 # many-call code and hides waits, such as a write-ahead's)
    ... --writer-profile                         # a cProfile of the store writer's thread (its CPU clock)
    ... --filters --cpu                          # each filter's CPU time on the event loop's thread instead of
                                                 # wall (waits left out; other load on the machine matters less)

Prints wall and process CPU per turn (the process's, so the store's writer
thread counts too). A benchmark, not a test; nothing is written.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests")]

from enginedriver import EngineDriver  # noqa: E402
from run import KINDS, REPLY_TEXT, LongConversation  # noqa: E402

from ctxproxy.config import load_config  # noqa: E402
from ctxproxy.proxy.adapters import api_for_path  # noqa: E402
from ctxproxy.proxy.engine import CannedUpstream  # noqa: E402
from ctxproxy.proxy.scripted_provider import Reply, render_answer  # noqa: E402


def canned(reply: Reply, per_read: int = 1):
    """A provider that renders each (path, stream) answer once and replays its bytes,
    ``per_read`` events to a read (as a busy proxy finds them in its socket)."""
    seen: dict[tuple, tuple] = {}

    async def send(forward):
        path = urlsplit(forward.url).path
        key = (path, b'"stream":true' in (forward.body or b""))
        if key not in seen:
            api, _ = api_for_path(path)
            seen[key] = render_answer(api, reply, forward.body or b"")
        status, headers, chunks = seen[key]
        reads = [b"".join(chunks[i:i + per_read]) for i in range(0, len(chunks), per_read)]
        return CannedUpstream(status, headers, reads)

    return send


FILTER_TIMES: bool = False  # --filters

TURNS_PER_SESSION = 6  # a new conversation every few turns, as many agents open them


def growing_turns(n: int, tools: bool) -> list[tuple]:
    """``n`` calls, each a new turn: a conversation grows by one exchange a turn
    (a user question and the answer, or a read_file call and its result), and a
    new conversation starts every ``TURNS_PER_SESSION`` turns; Anthropic and
    Chat alternate by conversation. Plain chats declare no tools and carry no
    rule files and no secrets: every filter but the core has nothing to do."""
    anthropic, chat = KINDS[1], KINDS[0]
    calls = []
    for c in range(-(-n // TURNS_PER_SESSION)):
        kind = anthropic if c % 2 else chat
        msgs: list[dict] = []
        for t in range(TURNS_PER_SESSION):
            if len(calls) == n:
                break
            if not msgs or not tools:
                msgs.append({"role": "user", "content": f"Conversation {c}, question {t}: what does step {t} "
                                                        "of the build do, in one sentence?"})
            else:
                cid = f"call_{c}_{t}"
                args = {"path": f"src/mod_{t}.py"}
                if kind is anthropic:
                    msgs.append({"role": "assistant", "content": [
                        {"type": "tool_use", "id": cid, "name": "read_file", "input": args}]})
                    msgs.append({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": cid,
                         "content": f"def step_{t}(ctx):\n    return ctx.run('make {t}')\n"}]})
                else:
                    msgs.append({"role": "assistant", "content": None, "tool_calls": [
                        {"id": cid, "type": "function",
                         "function": {"name": "read_file", "arguments": json.dumps(args)}}]})
                    msgs.append({"role": "tool", "tool_call_id": cid,
                                 "content": f"def step_{t}(ctx):\n    return ctx.run('make {t}')\n"})
            body: dict = {"model": "claude-sonnet-4-5" if kind is anthropic else "gpt-5",
                          "messages": list(msgs)}
            if kind is anthropic:
                body["max_tokens"] = 256
            if tools:
                tool = {"name": "read_file", "description": "Read a file.",
                        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
                body["tools"] = [tool] if kind is anthropic else [
                    {"type": "function", "function": {"name": tool["name"], "description": tool["description"],
                                                      "parameters": tool["input_schema"]}}]
            calls.append(("POST", kind.path, kind.headers, json.dumps(body).encode()))
            msgs.append({"role": "assistant", "content": REPLY_TEXT})
    return calls


def request_spans(turn) -> dict[str, float]:
    """Each filter's on_request wall time in this turn, in us (the turn's own spans)."""
    out: dict[str, float] = {}
    for span in turn.spans:
        name, t0, t1 = span[:3]
        if name.endswith(".request"):
            out[name[:-len(".request")]] = out.get(name[:-len(".request")], 0.0) + (t1 - t0) / 1e3
    return out


def thread_cpu() -> dict[str, float]:
    """CPU seconds so far of each of this process's threads, by thread name (Linux)."""
    out: dict[str, float] = {}
    for t in threading.enumerate():
        try:
            out[t.name] = out.get(t.name, 0.0) + time.clock_gettime(time.pthread_getcpuclockid(t.ident))
        except (AttributeError, OSError, TypeError):  # no per-thread clocks here, or the thread just ended
            continue
    return out


async def measure(drive, calls, profile: cProfile.Profile | None) -> tuple[float, float]:
    times: dict[str, float] = {}
    requests: dict[str, float] = {}
    threads0 = thread_cpu()
    t0, c0 = time.perf_counter(), time.process_time()
    if profile is not None:
        profile.enable()
    for call in calls:
        got = await drive.call(*call)
        assert got.status == 200, got.body[:300]
        for name, ms in got.turn.timings_ms.items():
            times[name] = times.get(name, 0.0) + ms
        for name, us in request_spans(got.turn).items():
            requests[name] = requests.get(name, 0.0) + us
    if profile is not None:
        profile.disable()
    wall, cpu = (time.perf_counter() - t0) * 1e3 / len(calls), (time.process_time() - c0) * 1e3 / len(calls)
    threads = thread_cpu()
    if FILTER_TIMES:
        print("  threads' CPU, us per turn: " + ", ".join(
            f"{name} {(threads[name] - threads0.get(name, 0.0)) * 1e6 / len(calls):.0f}"
            for name in sorted(threads) if threads[name] - threads0.get(name, 0.0) > 0))
        print("  filters, us per turn (all hooks): " + ", ".join(
            f"{k} {v * 1e3 / len(calls):.0f}" for k, v in times.items()))
        print("  on_request, us per turn: " + ", ".join(
            f"{k} {v / len(calls):.0f}" for k, v in requests.items()))
    return wall, cpu


async def amain(args: argparse.Namespace) -> None:
    # --cpu: the loop thread's own CPU (a C call that lets the writer thread run is not charged for it)
    profile = cProfile.Profile(time.thread_time if args.cpu else time.process_time) if args.profile else None
    with tempfile.TemporaryDirectory() as d:
        cfg = load_config(None, data_dir=d)
        if args.mode == "first":
            conv = LongConversation(later=2)
            async with EngineDriver(cfg, provider=canned(Reply.tool_call("Bash", {"command": "ls"}))) as drive:
                small = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10,
                                    "messages": [{"role": "user", "content": "hi"}]}).encode()
                await measure(drive, [("POST", "/v1/messages", {**conv.g.HEADERS, "X-Ctx-Session": "warm"}, small)],
                              None)
                headers = {**conv.g.HEADERS, "X-Ctx-Session": "long"}
                later = args.later
                wall, cpu = await measure(drive, [("POST", "/v1/messages", headers, conv.bodies[0])],
                                          None if later else profile)
                print(f"first send: wall {wall:.1f} ms, process CPU {cpu:.1f} ms")
                for body in conv.bodies[1:]:
                    wall, cpu = await measure(drive, [("POST", "/v1/messages", headers, body)],
                                              profile if later else None)
                    print(f"later turn: wall {wall:.1f} ms, process CPU {cpu:.1f} ms")
        elif args.mode in ("chat", "tool"):
            calls = growing_turns(args.n, args.mode == "tool")
            async with EngineDriver(cfg, provider=canned(Reply.text(REPLY_TEXT, delta_chars=12))) as drive:
                await measure(drive, growing_turns(60, args.mode == "tool"), None)  # warm-up
                # the warm-up's conversations are other ones: these turns are new to the proxy
                calls = [(m, p, h, b.replace(b"Conversation ", b"Talk ").replace(b"call_", b"tu_"))
                         for m, p, h, b in calls]
                wall, cpu = await measure(drive, calls, profile)
                print(f"{args.mode}: per new turn wall {wall * 1e3:.0f} us, process CPU {cpu * 1e3:.0f} us "
                      f"({len(calls)} turns, {TURNS_PER_SESSION} per conversation)")
        else:
            stream = args.mode == "stream"
            reply = Reply.text((REPLY_TEXT * 5)[:600] if stream else REPLY_TEXT, delta_chars=12)
            calls = [("POST", k.path, k.headers, k.stream_body if stream else k.body) for k in KINDS]
            async with EngineDriver(cfg, provider=canned(reply, args.per_read)) as drive:
                await measure(drive, calls * 100, None)  # warm-up: caches, memos, the session's state
                wall, cpu = await measure(drive, calls * args.n, profile)
                print(f"{args.mode}: per turn wall {wall * 1e3:.0f} us, process CPU {cpu * 1e3:.0f} us "
                      f"({2 * args.n} turns)")
    if profile is not None:
        pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("turn", "stream", "first", "chat", "tool"))
    ap.add_argument("n", nargs="?", type=int, default=400, help="turns per request kind (turn, stream)")
    ap.add_argument("--per-read", type=int, default=1, help="stream events a provider read holds (stream)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--later", action="store_true", help="profile the later turns, not the first send (first)")
    ap.add_argument("--filters", action="store_true", help="each filter's wall time per turn (its own timings)")
    ap.add_argument("--cpu", action="store_true", help="--filters: CPU time of the loop's thread, not wall")
    ap.add_argument("--writer-profile", action="store_true", help="cProfile the store writer's thread")
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    global FILTER_TIMES
    FILTER_TIMES = args.filters
    if args.cpu:  # the pipeline's own clock reads this thread's CPU time: its timings become CPU per filter
        import types

        import ctxproxy.filters.base as base
        base.time = types.SimpleNamespace(perf_counter=time.thread_time, time_ns=time.thread_time_ns)
    if args.writer_profile:
        writer_profile = profile_writer()
    asyncio.run(amain(args))
    if args.writer_profile:
        print("# the store writer's thread:")
        pstats.Stats(writer_profile).sort_stats(args.sort).print_stats(args.top)


def profile_writer() -> cProfile.Profile:
    """Run every store writer thread started from now on under one cProfile of its own CPU clock."""
    from ctxproxy.store.writer import BackgroundWriter

    prof = cProfile.Profile(time.thread_time)
    run = BackgroundWriter._run

    def profiled(self):
        prof.enable()
        try:
            run(self)
        finally:
            prof.disable()

    BackgroundWriter._run = profiled
    return prof


if __name__ == "__main__":
    main()
