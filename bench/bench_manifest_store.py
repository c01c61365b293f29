"""What storing a turn's manifest costs the store's writer thread: the
manifest and its turn pointer written one ``put`` each (as before) against one
``put_many`` for a batch of turns (as the manifest filter's gathered op
writes them), alternated, on a real LMDB store.

    python bench/bench_manifest_store.py [--turns 2000] [--per-op 10] [--rounds 8]

A third way writes the same turns as another tenant's, whose turns keep the
turn pointer that the ``default`` tenant's go without. The document is a
run.py turn's manifest (``bench/profile_engine.py turn`` makes one like it). Prints the thread CPU per turn of each round and the
medians; writes nothing outside a temporary directory.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from ctxproxy.filters.manifest.filter import TURN_INDEX_TENANT, _write_manifests
from ctxproxy.store import open_store

DOC = {"version": 1, "turn_id": "", "task_id": "fp-1ff2d5f7356e10c7af406c7b",
       "session_id": "fp-1ff2d5f7356e10c7af406c7b", "session_supplied": False, "task_supplied": False,
       "tenant": "default", "agent": "unknown", "identity_source": "fingerprint", "key_id": None, "api": "chat",
       "route": "openai", "provider": "openai", "server_address": "api.openai.com", "server_port": 443,
       "model": "gpt-5", "response_model": "gpt-5", "response_id": "chatcmpl-TgxtCIqJWJDdD1lqqkjaAssyqIFxh",
       "finish_reasons": ["stop"], "stream": False, "status": 200, "error": None, "started_at": 1796586775.9427342,
       "started_ns": 1796586775942734292, "request_ready_ns": 1796586775942906677, "duration_ms": 0.372,
       "ttfc_ms": None, "segments": [], "tokens": {"input": 1041, "output": 37, "cache_read": 0,
                                                   "cache_creation": None},
       "timings_ms": {"identify": 0.03, "redact": 0.017, "effects": 0.046, "checkpoint": 0.006, "prune": 0.05,
                      "recall": 0.02, "inject": 0.012, "memory_tool": 0.002, "upstream_headers": 0.009,
                      "manifest": 0.056, "relayed": 0.026, "upstream": 0.079},
       "degraded": [], "redaction_profile": "default", "redactions": {}, "response_redactions": {}, "effects": [],
       "checkpoint": None, "client_compacted": False,
       "task_state": {"compacted": False, "ref": None, "items": {}, "dropped": 0, "effects_ref": None},
       "pruned": [], "recall": {"status": "reused", "candidates": 0, "results": 0, "items": [], "ms": 0.005},
       "token_budget": 8000, "tokens_injected": 0, "policy_revision": None, "compacted": False,
       "sha256": "8e916542d91435917247f99f4dd93d06f9b40ec9586b1a488b2f73eb3f44374a"}


def one_by_one(batch, items: list[tuple]) -> None:
    """Before: two puts a turn."""
    for tenant, turn_id, m, session, subject in items:
        batch.manifests.put(tenant, turn_id, m, session=session, subject=subject)
        batch.manifests.put(TURN_INDEX_TENANT, turn_id, {"tenant": tenant}, session=session, subject=subject)


def named_tenant(batch, items: list[tuple]) -> None:
    """put_many for a tenant other than ``default``: its turns keep their pointer."""
    _write_manifests(batch, [("acme", turn_id, m, session, subject) for _, turn_id, m, session, subject in items])


def measure(store, label: str, write, turns: int, per_op: int) -> float:
    """Thread CPU µs per turn of writing ``turns`` turns, ``per_op`` a call, in one transaction."""
    with store.batch() as b:
        t0 = time.thread_time()
        for i in range(0, turns, per_op):
            write(b, [(DOC["tenant"], f"{label}-{j:07d}", {**DOC, "turn_id": f"{label}-{j:07d}"}, DOC["session_id"],
                       "user-1") for j in range(i, i + per_op)])
        return (time.thread_time() - t0) / turns * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--per-op", type=int, default=10, help="turns a gathered op writes at once")
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    ways = {"put x2 a turn": one_by_one, "put_many, tenant acme (with its pointer)": named_tenant,
            "put_many, tenant default (no pointer)": _write_manifests}
    got: dict[str, list[float]] = {k: [] for k in ways}
    with tempfile.TemporaryDirectory() as d:
        store = open_store(d)
        try:
            for r in range(args.rounds):
                order = list(ways) if r % 2 else list(reversed(ways))
                for name in order:  # each way its own turn ids: a replace would cost more
                    label = f"{r}-{list(ways).index(name)}"
                    got[name].append(measure(store, label, ways[name], args.turns, args.per_op))
        finally:
            store.close()
    for name, us in got.items():
        print(f"{name}: " + " ".join(f"{u:.1f}" for u in us) + f"  median {statistics.median(us):.1f} us/turn")


if __name__ == "__main__":
    main()
