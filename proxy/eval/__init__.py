"""``ctxproxy eval``: the facts, isolation and compaction regression sets (docs/eval.md).

- ``harness``: the scripted provider and a real ctxproxy in this process, and
  the same sessions sent to the provider directly (the no-proxy baseline);
- ``received``: reading what the provider received (injected segments, items, tokens);
- ``facts``, ``isolation``, ``compaction``: the built-in sets, generated from a seed;
- ``cases``: the team's own cases (JSONL);
- ``metrics``: the table, the JSON report and the ``--baseline`` gate;
- ``agents``, ``prefix``: the compaction-style agent sessions and the prompt-cache
  prefix check, shared with the tests and the benchmarks.
"""
