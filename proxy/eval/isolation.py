"""The isolation set: tenants, users, parent and child sessions, purposes, with canaries.

Generated from a seed. Every principal (tenant × user) owns a memory holding
its own canary, and every principal asks the question that memory answers:
its owner must see the canary (a positive control: the probe can fail), every
other principal must not. Beside those:

- purpose: a memory written for one purpose, asked from another purpose;
- sensitivity: a ``confidential`` memory above the default ceiling, asked by its owner;
- session tree: a parent session says a canary; its child (``X-Ctx-Parent-Session``)
  may see it, an unrelated session of the same user, another user naming the
  same parent, and another tenant using the same session ids must not.
"""
from __future__ import annotations

import random

from .spec import APIS, Memory, Prime, ProbeSet, Question

TENANTS = ("acme", "globex", "initech")
USERS = ("alice", "bob")
PROJECT = "web"


def build(seed: int = 7, tenants: int = 3, users: int = 2) -> ProbeSet:
    rng = random.Random(seed + 1)
    ps = ProbeSet("isolation")

    def canary() -> str:
        return f"CANARY-{rng.randrange(16**10):010x}"

    principals = [(t, u) for t in TENANTS[:tenants] for u in USERS[:users]]
    owned = {}
    for t, u in principals:
        c = owned[(t, u)] = canary()
        ps.memories.append(Memory(f"The {u} escrow phrase for {t} is {c}.", t,
                                  {"kind": "fact", "user": u, "project": PROJECT, "evidence_ref": "session:setup"}))
    n = 0
    for t, u in principals:
        for asker in principals:
            who = {"tenant": asker[0], "user": asker[1], "project": PROJECT, "session": f"iso-{n}"}
            q = Question(f"What is the {u} escrow phrase for {t}?", who, APIS[n % 2])
            (q.expect if asker == (t, u) else q.forbid).append(owned[(t, u)])
            q.ranked = asker == (t, u)
            ps.questions.append(q)
            n += 1
    for t in TENANTS[:tenants]:
        owner = {"tenant": t, "user": USERS[0], "project": PROJECT}
        # purpose
        c = canary()
        ps.memories.append(Memory(f"The billing reconciliation key for {t} is {c}.", t,
                                  {"kind": "fact", "user": USERS[0], "project": PROJECT, "purpose": "billing",
                                   "evidence_ref": "session:setup"}))
        for purpose, allowed in (("billing", True), ("support", False)):
            q = Question(f"What is the billing reconciliation key for {t}?",
                         {**owner, "purpose": purpose, "session": f"iso-{n}"}, APIS[n % 2])
            (q.expect if allowed else q.forbid).append(c)
            ps.questions.append(q)
            n += 1
        # sensitivity above the ceiling
        c = canary()
        ps.memories.append(Memory(f"The payroll vault pin for {t} is {c}.", t,
                                  {"kind": "fact", "user": USERS[0], "project": PROJECT,
                                   "sensitivity": "confidential", "evidence_ref": "session:setup"}))
        ps.questions.append(Question(f"What is the payroll vault pin for {t}?", {**owner, "session": f"iso-{n}"},
                                     APIS[n % 2], forbid=[c]))
        n += 1
        # the session tree
        c, parent = canary(), f"{t}-parent"
        ps.primes.append(Prime(f"Note for this task: the rollout codename of {t} is {c}. Please remember it.",
                               {**owner, "session": parent}))
        ask = f"What is the rollout codename of {t}?"
        ps.questions.append(Question(ask, {**owner, "session": f"{t}-child", "parent_session": parent}, APIS[n % 2],
                                     expect=[c]))
        ps.questions.append(Question(ask, {**owner, "session": f"{t}-unrelated"}, APIS[(n + 1) % 2], forbid=[c]))
        if users > 1:
            ps.questions.append(Question(ask, {**owner, "user": USERS[1], "session": f"{t}-forged",
                                               "parent_session": parent}, APIS[n % 2], forbid=[c]))
        for other in TENANTS[:tenants]:  # the same session ids under another tenant
            if other != t:
                ps.questions.append(Question(ask, {"tenant": other, "user": USERS[0], "project": PROJECT,
                                                   "session": f"{t}-child", "parent_session": parent},
                                             APIS[n % 2], forbid=[c]))
        n += 4
    return ps
