"""What holding a turn's span until its manifest's write commits costs.

The manifest filter's turn end (``on_response_end``) on an event loop, with a
real LMDB store, the real background writer and a ``BatchSpanProcessor``
(its exporter drops the spans), three ways, alternated round by round:

- ``before``: the manifest handed to the writer as before this change
  (``gather`` and a done callback), the span ended at once saying stored;
- ``at once``: ``store_wait = 0``: the span ended at once, saying pending;
- ``held``: ``store_wait = 5`` (the default): the span ends when the write's
  outcome is known, on the writer's thread.

    python bench/bench_manifest_span_hold.py [--turns 400] [--rounds 7]

Prints, per way, the event loop thread's CPU per turn (what the request path
pays) and the process's CPU per turn (the writer's and span processor's
threads too), medians over rounds, and ratios to ``before``. Turns end a few
at a time with a loop iteration between, so the writer gathers several into
one op as under load. Writes nothing outside a temporary directory.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

import orjson
from multidict import CIMultiDict
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.base import Identity
from ctxproxy.filters.manifest.export import Telemetry
from ctxproxy.filters.manifest.filter import ManifestConfig, ManifestFilter, _build_stored
from ctxproxy.filters.manifest.store_outcome import STORED, Handed
from ctxproxy.filters.services import Services
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.store import open_store
from ctxproxy.store.writer import BackgroundWriter

BODY = {"model": "claude-test-1", "max_tokens": 50, "messages": [{"role": "user", "content": "hello there"}]}
ANSWER = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-1",
          "content": [{"type": "text", "text": "Fine, done."}], "stop_reason": "end_turn",
          "usage": {"input_tokens": 120, "output_tokens": 9}}
TOKENS = TokenCounter()
PER_TICK = 4  # turns ending between two loop iterations


class _Drop(SpanExporter):
    def export(self, spans):  # noqa: D102
        return SpanExportResult.SUCCESS


def _before(self, turn, seen):
    """The manifest handed over as before: gather, one callback per op, said stored at once."""
    ident = turn.identity
    item = ("acme", turn.turn_id, seen, ident.session, ident.user)
    fut = turn.services.writer.gather(self._write_stored, item, _build_stored)
    if fut is not None:
        fut.add_done_callback(lambda f: f.exception())
    return Handed("acme", turn.turn_id, STORED)


def _turn(services: Services) -> Turn:
    t = Turn(api="anthropic", route="r1", path="/v1/messages", headers=CIMultiDict(),
             request=ADAPTERS["anthropic"].parse_request(orjson.dumps(BODY)), tokens=TOKENS)
    t.identity = Identity(tenant="acme", user="u1", session="s1", task="s1", source="header", supplied=True)
    t.services = services
    t.status = 200
    return t


async def _round(way: str, store, writer, tel, turns: int) -> tuple[float, float]:
    f = ManifestFilter(ManifestConfig(store_wait=0 if way == "at once" else 5.0), store=store, telemetry=tel)
    if way == "before":
        f._store = _before.__get__(f)
    p = Pipeline([f])
    services = Services.of({"store": store, "writer": writer})
    answer = orjson.dumps(ANSWER)
    ready = []
    for _ in range(turns):  # the turns' requests and answers, outside the measured part
        t = _turn(services)
        p.run_response(t, ADAPTERS["anthropic"].parse_response(answer))
        ready.append(t)
    await asyncio.to_thread(writer.flush)
    tel.force_flush()
    c0, p0 = time.thread_time(), time.process_time()
    for i, t in enumerate(ready):
        p.run_end(t)
        if i % PER_TICK == PER_TICK - 1:
            await asyncio.sleep(0)
    loop_cpu = time.thread_time() - c0
    await asyncio.to_thread(writer.flush)
    tel.force_flush()
    return loop_cpu / turns * 1e6, (time.process_time() - p0) / turns * 1e6


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    ways = ("before", "at once", "held")
    with tempfile.TemporaryDirectory() as d:
        store = open_store(os.path.join(d, "store"))
        writer = BackgroundWriter(store)
        tp = TracerProvider()
        tp.add_span_processor(BatchSpanProcessor(_Drop()))
        tel = Telemetry(tp)
        try:
            got: dict[str, list[tuple[float, float]]] = {w: [] for w in ways}
            await _round("before", store, writer, tel, args.turns)  # warm-up
            for r in range(args.rounds):
                for w in (ways if r % 2 == 0 else ways[::-1]):
                    got[w].append(await _round(w, store, writer, tel, args.turns))
        finally:
            writer.close()
            tp.shutdown()
            store.close()
    base_loop = statistics.median(x[0] for x in got["before"])
    base_all = statistics.median(x[1] for x in got["before"])
    print(f"load average {os.getloadavg()[0]:.2f}; {args.turns} turns x {args.rounds} rounds", file=sys.stderr)
    for w in ways:
        lp = statistics.median(x[0] for x in got[w])
        al = statistics.median(x[1] for x in got[w])
        print(f"{w:8s} loop {lp:7.1f} us/turn ({lp / base_loop:.2f}x)   process {al:7.1f} us/turn "
              f"({al / base_all:.2f}x)")


if __name__ == "__main__":
    asyncio.run(main())
