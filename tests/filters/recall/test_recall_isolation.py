"""The recall isolation set: generated and seeded, 0 leaks expected.

60 principals (5 tenants × 3 users × 2 session trees × 2 purposes). Each tree
is a root session with two child sessions (siblings). Every principal has a
unique canary in a session-bound memory (a child session), a user-level
memory, and a turn of the session index — all with the same filler words,
so a hidden record would match every probe if visibility failed.

Probes ask, as every viewer (tenant, user, tree, session in the tree,
purpose), for queries that contain other principals' canaries verbatim. The
oracle is the visibility rule written independently of the code: tenant
equal; user, project, purpose empty or equal; session empty or in the
viewer's tree (itself, its ancestors, its descendants — never a sibling).
Most probes run in-process against the recall API's query; a few hundred go
through real model turns (the official SDK → proxy → scripted provider),
with forged parent/session headers among them. A hidden canary's query
must answer exactly as a query with a canary that never existed (same items,
same scores). After ``forget`` of a user, its canaries never come back:
not in recall, not in session search, not after a restart, not after a
reindex.
"""
from __future__ import annotations

import itertools
import json
import random
import re
from dataclasses import dataclass

import pytest

from memhelp import put_memory

from ctxproxy.store.services.recall import embeddings
from ctxproxy.store.services.recall.queries import recall_items, session_hits
from ctxproxy.store.services.recall.rank import RankConfig
from ctxproxy.store.services.recall.services import RecallServices
from ctxproxy.store import forget as forgetting
from ctxproxy.store import open_store

SEED = 1806
TENANTS = [f"tn{i}" for i in range(5)]
USERS = ["ua", "ub", "uc"]
TREES = [0, 1]
PURPOSES = ["support", "analysis"]
CANARY = re.compile(r"cnry[0-9a-f]{10}")
FILLER = "the deploy window and the release plan"
EVIDENCE = re.compile(r'<ctx-data kind=\\"evidence\\".*?</ctx-data>', re.S)


@dataclass(frozen=True)
class Planted:
    canary: str
    tenant: str
    user: str
    session: str  # "" = not session-bound
    purpose: str
    where: str  # memory | session


@dataclass(frozen=True)
class Viewer:
    tenant: str
    user: str
    tree: int
    session: str
    purpose: str


def sessions_of(tenant: str, user: str, tree: int) -> tuple[str, str, str]:
    root = f"{tenant}-{user}-t{tree}-root"
    return root, f"{tenant}-{user}-t{tree}-c1", f"{tenant}-{user}-t{tree}-c2"


def tree_of(session: str) -> set[str]:
    """The oracle's session tree: itself, its ancestors, its descendants."""
    base, _, leaf = session.rpartition("-")
    root = f"{base}-root"
    return {root, f"{base}-c1", f"{base}-c2"} if leaf == "root" else {session, root}


def visible(p: Planted, v: Viewer) -> bool:
    return (p.tenant == v.tenant and p.user in ("", v.user) and p.purpose in ("", v.purpose)
            and (p.session == "" or p.session in tree_of(v.session)))


def plan(rng: random.Random) -> list[Planted]:
    out = []
    for tenant, user, tree, purpose in itertools.product(TENANTS, USERS, TREES, PURPOSES):
        root, c1, c2 = sessions_of(tenant, user, tree)
        child = c1 if purpose == "support" else c2
        for session, where in ((child, "memory"), ("", "memory"), (child, "session")):
            out.append(Planted(f"cnry{rng.getrandbits(40):010x}", tenant, user, session, purpose, where))
    return out


def viewers() -> list[Viewer]:
    return [Viewer(t, u, tree, s, p) for t, u, tree, p in itertools.product(TENANTS, USERS, TREES, PURPOSES)
            for s in sessions_of(t, u, tree)]


def plant(store, rs: RecallServices, planted: list[Planted]) -> None:
    for t, u, tree in itertools.product(TENANTS, USERS, TREES):
        root, c1, c2 = sessions_of(t, u, tree)
        rs.sessions.note_session(t, root, u)
        rs.sessions.note_session(t, c1, u, parent=root)
        rs.sessions.note_session(t, c2, u, parent=root)
    for i, p in enumerate(planted):
        if p.where == "memory":
            put_memory(store, p.tenant, f"Note {p.canary}: {FILLER} for {p.user}.", kind="fact", user=p.user,
                       session=p.session, purpose=p.purpose)
        else:
            rs.sessions.add_turn(p.tenant, p.session, f"turn{i}", [("user", f"About {p.canary}: {FILLER}.")],
                                 user=p.user, purpose=p.purpose)


def canaries_in(payload) -> set[str]:
    return set(CANARY.findall(json.dumps(payload)))


def ask(rs: RecallServices, v: Viewer, query: str, rank: RankConfig | None = None) -> dict:
    return recall_items(rs, v.tenant, {"query": query, "user": v.user, "session": v.session, "purpose": v.purpose,
                                       "k": 20}, rank)


@pytest.fixture
def world(tmp_path):
    rng = random.Random(SEED)
    store = open_store(tmp_path / "store")
    rs = RecallServices(tmp_path, store)
    planted = plan(rng)
    plant(store, rs, planted)
    yield tmp_path, store, rs, planted, rng
    rs.close()
    store.close()


def run_probes(rs, planted, rng, per_viewer: int, rank: RankConfig | None = None) -> tuple[int, int, int]:
    """(probes, leaks, visible canaries found)."""
    by_canary = {p.canary: p for p in planted}
    probes = leaks = found = 0
    for v in viewers():
        targets = rng.sample(planted, per_viewer)
        for i in range(0, len(targets), 2):
            group = targets[i:i + 2]
            query = f"what about {' and '.join(p.canary for p in group)} in {FILLER}?"
            got = canaries_in(ask(rs, v, query, rank))
            probes += len(group)
            leaked = {c for c in got if not visible(by_canary[c], v)}
            assert not leaked, (v, leaked)
            leaks += len(leaked)
            found += sum(1 for p in group if visible(p, v) and p.canary in got)
    return probes, leaks, found


def test_ten_thousand_probes_leak_nothing(world):
    _, store, rs, planted, rng = world
    assert len({(p.tenant, p.user, p.session if p.where == "session" else "", p.purpose) for p in planted}) >= 50
    probes, leaks, found = run_probes(rs, planted, rng, per_viewer=60)
    assert probes >= 10_000 and leaks == 0
    assert found > 0  # the probes can find what is visible: they would see a leak


@pytest.mark.skipif(not embeddings.available(), reason=embeddings.missing())
def test_ten_thousand_probes_leak_nothing_with_embeddings(world):
    """Every planted memory is embedded and every one shares the filler's
    meaning: the vector side would surface any hidden one it scored."""
    _, store, rs, planted, rng = world
    on = RankConfig(embeddings=True, vector_min=0.0)  # any similarity admits a candidate: the widest net
    rs.prepare(on, sync=True)
    assert rs.vectors.count(TENANTS[0]) == sum(1 for p in planted if p.tenant == TENANTS[0] and p.where == "memory")
    probes, leaks, found = run_probes(rs, planted, rng, per_viewer=60, rank=on)
    assert probes >= 10_000 and leaks == 0
    assert found > 0


def test_a_hidden_canary_answers_like_one_that_never_existed(world):
    _, store, rs, planted, rng = world
    for v in rng.sample(viewers(), 40):
        hidden = [p for p in planted if not visible(p, v)]
        for p in rng.sample(hidden, 10):
            fresh = f"cnry{rng.getrandbits(40):010x}"
            a = ask(rs, v, f"what about {p.canary} in {FILLER}?")
            b = ask(rs, v, f"what about {fresh} in {FILLER}?")
            assert a == b  # same items, same scores: nothing tells the hidden record exists


def test_session_search_sees_the_tree_only(world):
    _, store, rs, planted, rng = world
    sessions = [p for p in planted if p.where == "session"]
    for v in viewers():
        for p in rng.sample(sessions, 12):
            out = session_hits(rs, v.tenant, f"{p.canary} {FILLER}", session=v.session, purpose=v.purpose)
            got = canaries_in(out)
            assert all(visible(next(q for q in sessions if q.canary == c), v) for c in got), (v, got)


def test_forget_holds_after_restart_and_reindex(world):
    tmp_path, store, rs, planted, rng = world
    gone_tenant, gone_user = "tn1", "ub"
    rs.memories.catch_up()  # the index holds them (as after any recall)
    receipt = forgetting.forget(store, gone_tenant, {"user": gone_user})
    assert receipt.counts.get("recall.memories.memory_index_rows", 0) > 0
    assert receipt.counts.get("recall.sessions.session_index_turns", 0) > 0
    erased = {p.canary for p in planted if p.tenant == gone_tenant and p.user == gone_user}

    def check(rs_now):
        for v in viewers():
            if v.tenant != gone_tenant:
                continue
            for c in rng.sample(sorted(erased), 4):
                assert not canaries_in(ask(rs_now, v, f"what about {c} in {FILLER}?")) & erased
                assert not canaries_in(session_hits(rs_now, v.tenant, c, user=v.user)) & erased

    check(rs)
    rs.close()
    store.close()
    store2 = open_store(tmp_path / "store")  # a restart
    rs2 = RecallServices(tmp_path, store2)
    check(rs2)
    rs2.memories.rebuild()  # a reindex from the store
    check(rs2)
    for name in ("memories.db", "sessions.db"):  # not in the files either (secure_delete + VACUUM)
        raw = (tmp_path / "recall" / name).read_bytes()
        assert not any(c.encode() in raw for c in erased)
        wal = tmp_path / "recall" / (name + "-wal")
        assert not wal.exists() or not any(c.encode() in wal.read_bytes() for c in erased)
    rs2.close()
    store2.close()


async def test_model_turns_and_forged_headers_leak_nothing(make_proxy, fake):
    """A few hundred real turns (OpenAI SDK → proxy → scripted provider): what
    reached the provider holds no canary its caller may not see, with
    forged X-Ctx-Parent-Session / X-Ctx-Session among them."""
    rng = random.Random(SEED + 1)
    proxy = await make_proxy("[filters.recall]\nindex_sessions = false\n")  # the probes' own text stays out
    services = proxy.state.services
    from ctxproxy.store.services.recall.services import recall_services

    rs = recall_services(services)
    planted = plan(rng)
    plant(services["store"], rs, planted)
    by_canary = {p.canary: p for p in planted}
    clients = {}
    turns = leaks = 0
    for n in range(300):
        v = rng.choice(viewers())
        hdrs = {"X-Ctx-Tenant": v.tenant, "X-Ctx-User": v.user, "X-Ctx-Session": v.session,
                "X-Ctx-Purpose": v.purpose}
        effective = v
        if n % 3 == 1:  # forged parent: another user's (or another tree's) root, on a new session
            other = rng.choice([w for w in viewers() if w.tenant == v.tenant and w.user != v.user])
            fresh = f"{v.tenant}-{v.user}-new{n}"
            hdrs.update({"X-Ctx-Session": fresh, "X-Ctx-Parent-Session": sessions_of(other.tenant, other.user,
                                                                                    other.tree)[0]})
            effective = None  # a new session of its own: only its user's unbound records
        elif n % 3 == 2:  # forged session id: someone else's child session
            other = rng.choice([w for w in viewers() if (w.tenant, w.user) != (v.tenant, v.user)])
            hdrs["X-Ctx-Session"] = other.session
            hdrs["X-Ctx-Tenant"] = v.tenant
            effective = None
        key = tuple(sorted(hdrs.items()))
        client = clients.get(key) or clients.setdefault(key, proxy.openai(default_headers=hdrs))
        targets = rng.sample(planted, 3)
        text = f"what about {' and '.join(p.canary for p in targets)} in {FILLER}? ({n})"
        await client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": text}])
        fenced = EVIDENCE.findall(json.dumps(fake.last.json))  # what recall added (the question has its own)
        for c in canaries_in(fenced):
            p = by_canary.get(c)
            if p is None:
                continue
            ok = visible(p, effective) if effective is not None else (
                p.tenant == v.tenant and p.user == v.user and p.session == "" and p.purpose in ("", v.purpose))
            leaks += 0 if ok else 1
            assert ok, (n, hdrs, c, p)
        turns += 1
    assert turns == 300 and leaks == 0
