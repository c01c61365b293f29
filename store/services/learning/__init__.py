"""Learning: what agents' sessions teach, proposed for a person to approve.

- ``candidates`` — what phase 1 finds (``Candidate``, a session's ``Extraction``)
- ``extract``    — phase 1, per session: from the session index, the
  checkpoint's task state, the effect ledger and the manifests, no model
- ``model``      — the optional model-backed extractor (``[learn] model``)
- ``consolidate``— phase 2, per tenant: groups, recurrence, budgets, the gate
- ``lease``      — one consolidation per tenant across workers
- ``job``        — the run (``Learner``): phases, watermark, cooldown, backoff
- ``review``     — proposals with their evidence; approve, reject, edit
- ``insights``   — the report a person reads (never a prompt)
- ``export``     — approved memories in each agent's own files

Plain functions and classes over the store's interfaces: no turn, no wire
format, no server. Everything written is ``proposed`` through the memory gate.
"""
