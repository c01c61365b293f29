"""prune: hooks on canned requests of all three APIs (no sockets)."""
import tomllib

import orjson
import pytest

from toolsession import canned, prefix_kept, prune_toml, results_of, tool_outputs, without_results

from ctxproxy.config import ConfigError, parse_section
from ctxproxy.filters import Pipeline, Turn
from ctxproxy.filters.base import Identity
from ctxproxy.filters.prune import REF_PREFIX, PruneConfig, PruneFilter, estimate_tokens, pruned_id, render_stub
from ctxproxy.filters.tokens import TokenCounter
from ctxproxy.proxy.adapters import ADAPTERS
from ctxproxy.proxy.scripted_provider import Reply
from ctxproxy.store.services.digest import memo_key

APIS = ("anthropic", "chat", "responses")
TOKENS = TokenCounter()
OUTS = tool_outputs(40, seed=3, scale=0.5)
KEY = {"anthropic": "messages", "chat": "messages", "responses": "input"}

DEFAULT_BLOCK = """
[filters.prune]
trigger_tokens = 100000
target_ratio = 0.5
keep_recent = 3
clear_at_least = 0
min_batch_ratio = 0.2
exclude_tools = []
min_tokens = 200
mode = "auto"
soft_min_chars = 4000
soft_head_chars = 1500
soft_tail_chars = 1500
"""


def cfg(**kw) -> PruneConfig:
    base = dict(trigger_tokens=8000, target_ratio=0.5, keep_recent=3, min_tokens=100)
    base.update(kw)
    return parse_section(PruneConfig, base, "filters.prune")


def run(f: PruneFilter, api: str, body: dict, session: str = "s1", tenant: str = "acme") -> tuple[Turn, dict]:
    raw = orjson.dumps(body)
    t = Turn(api=api, route="r", path="/", headers={}, request=ADAPTERS[api].parse_request(raw), tokens=TOKENS,
             identity=Identity(tenant=tenant, session=session))
    Pipeline([f]).run_request(t)  # as the proxy runs it: originals are on disk when it returns
    return t, orjson.loads(t.request.to_bytes())


# -- config ---------------------------------------------------------------------------------

def test_config_block_parses_and_defaults():
    raw = tomllib.loads(DEFAULT_BLOCK)["filters"]["prune"]
    c = parse_section(PruneConfig, raw, "filters.prune")
    assert c.trigger_tokens == 100000 and c.keep_recent == 3 and c.mode == "auto"
    assert c.exclude_tools == ()
    assert parse_section(PruneConfig, {"exclude_tools": ["Bash*", "read_file"]}, "p").exclude_tools == \
        ("Bash*", "read_file")


@pytest.mark.parametrize("raw, key", [
    ({"trigger": 5}, "filters.prune.trigger"),
    ({"target_ratio": 0}, "filters.prune.target_ratio"),
    ({"target_ratio": 1.5}, "filters.prune.target_ratio"),
    ({"keep_recent": -1}, "filters.prune.keep_recent"),
    ({"min_batch_ratio": 2}, "filters.prune.min_batch_ratio"),
    ({"mode": "gentle"}, "filters.prune.mode"),
    ({"trigger_tokens": "lots"}, "filters.prune.trigger_tokens"),
    ({"exclude_tools": "Bash"}, "filters.prune.exclude_tools"),
    ({"soft_head_chars": 0, "soft_tail_chars": 0}, "filters.prune.soft_head_chars"),
])
def test_config_errors_name_the_key(raw, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        parse_section(PruneConfig, raw, "filters.prune")


# -- one batch --------------------------------------------------------------------------------

@pytest.mark.parametrize("api", APIS)
def test_batch_prunes_oldest_keeps_recent_and_pairs(api, store):
    body = canned(api, OUTS, 30)
    t, out = run(PruneFilter(cfg(), store), api, body)
    st = t.state["prune"]
    assert st.batch is True and st.pruned
    assert st.tokens_after <= 4000 < 8000 < st.tokens_estimated  # cleared down to the target
    sent, got = results_of(api, body), results_of(api, out)
    ids = list(sent)
    # the 3 most recent results are untouched; pruned ones are a prefix of the oldest
    assert all(got[c] == sent[c] for c in ids[-3:])
    pruned = [c for c in ids if got[c] != sent[c]]
    assert pruned and set(pruned) <= set(ids[:-3])
    # oldest first: whatever was skipped before the newest pruned one was too small to bother
    skipped = [c for c in ids[:ids.index(pruned[-1])] if c not in pruned]
    assert all(TOKENS.count(sent[c]) < 100 for c in skipped)
    for c in pruned:
        assert REF_PREFIX in got[c]
    # only contents changed: every call/result pair and every other byte is where it was
    assert without_results(api, out[KEY[api]]) == without_results(api, body[KEY[api]])
    assert {k: v for k, v in out.items() if k != KEY[api]} == {k: v for k, v in body.items() if k != KEY[api]}
    # originals are stored under the referenced id, per tenant
    for entry in st.pruned:
        pid = entry["ref"][len(REF_PREFIX):]
        doc = store.pruned.get("acme", pid)
        assert doc is not None and doc.session == "s1"
        assert doc.data["content"] == sent[doc.data["call_id"]]
        assert entry["tokens_after"] < entry["tokens_before"] == doc.data["tokens"]
        assert entry["mode"] in ("soft", "hard") and entry["new"] is True
        assert store.pruned.get("other", pid) is None


@pytest.mark.parametrize("api", APIS)
def test_below_trigger_forwards_original_bytes(api, store):
    body = canned(api, OUTS, 5)
    raw = orjson.dumps(body)
    t = Turn(api=api, route="r", path="/", headers={}, request=ADAPTERS[api].parse_request(raw), tokens=TOKENS,
             identity=Identity(tenant="acme", session="s1"))
    Pipeline([PruneFilter(cfg(), store)]).run_request(t)
    assert not t.request.changed and t.request.to_bytes() == raw
    assert t.state["prune"].pruned == [] and t.state["prune"].batch is False
    assert store.sessions.get("acme", "s1") is None  # nothing written on a quiet turn


# -- across turns ---------------------------------------------------------------------------

@pytest.mark.parametrize("api", APIS)
def test_monotonic_stable_and_batched(api, store):
    f = PruneFilter(cfg(), store)
    seen: dict[str, str] = {}  # call id -> forwarded stub once pruned
    batches, prev, breaks = [], None, []
    for n in range(1, 41):
        body = canned(api, OUTS, n)
        t, out = run(f, api, body)
        sent, got = results_of(api, body), results_of(api, out)
        for c, text in got.items():
            if c in seen:
                # once pruned, stays pruned; the bytes change only at a batch (soft -> hard)
                assert text != sent[c]
                if text != seen[c]:
                    assert t.state["prune"].batch and "cleared" in text
            if text != sent[c]:
                seen[c] = text
        if t.state["prune"].batch:
            batches.append(n)
        if prev is not None and not prefix_kept(api, prev, out):
            breaks.append(n)
        prev = out
    assert len(batches) >= 2
    assert set(breaks) <= set(batches)  # the cached prefix changes only at batch points
    state = store.sessions.get("acme", "s1", part="prune")
    assert len(state["d"]) == len(seen)
    assert "prune" not in (store.sessions.get("acme", "s1") or {})  # the record every filter reads stays small


def test_decisions_from_before_the_part_are_kept_and_moved(store):
    body = canned("chat", OUTS, 30)
    _, hard = run(PruneFilter(cfg(mode="hard"), store), "chat", body, session="old")
    decisions = store.sessions.get("acme", "old", part="prune")
    # a session stored by an earlier version: the decisions in the session's own state
    store.sessions.delete("acme", "old")
    store.sessions.put("acme", "old", {"prune": decisions, "effects": {"goal": "g"}})
    soft = cfg(mode="soft", soft_min_chars=100, soft_head_chars=100, soft_tail_chars=100)
    _, out = run(PruneFilter(soft, store), "chat", body, session="old")
    assert out == hard  # its decisions still hold (a decision is never undone)
    run(PruneFilter(soft, store), "chat", canned("chat", OUTS, 60), session="old")  # a write moves them
    moved = store.sessions.get("acme", "old", part="prune")["d"]
    assert all(moved[k] == d for k, d in decisions["d"].items())
    assert store.sessions.get("acme", "old") == {"prune": None, "effects": {"goal": "g"}}


@pytest.mark.parametrize("api", APIS)
def test_unseen_results_are_never_pruned(api, store):
    body = canned(api, OUTS, 30)
    t, out = run(PruneFilter(cfg(keep_recent=0), store), api, body)
    sent, got = results_of(api, body), results_of(api, out)
    last = list(sent)[-1]
    assert got[last] == sent[last]  # the model has not seen it yet
    assert t.state["prune"].batch


@pytest.mark.parametrize("api", APIS)
def test_excluded_tools_are_kept(api, store):
    body = canned(api, OUTS, 30)
    _, out = run(PruneFilter(cfg(exclude_tools=["READ_*", "grep"]), store), api, body)
    sent, got = results_of(api, body), results_of(api, out)
    tools = {f"{'toolu' if api == 'anthropic' else 'call'}_{i:04d}": OUTS[i][0] for i in range(30)}
    changed = [c for c in sent if got[c] != sent[c]]
    assert changed and all(tools[c] not in ("read_file", "grep") for c in changed)


def test_clear_at_least_skips_a_batch_that_frees_too_little(store):
    body = canned("chat", OUTS, 30)
    t, out = run(PruneFilter(cfg(clear_at_least=10**6), store), "chat", body)
    assert out == body and t.state["prune"].skipped.startswith("clear_at_least")
    assert store.sessions.get("acme", "s1") is None


def test_min_batch_keeps_a_saturated_session_from_breaking_every_turn(store):
    """When the recent results alone exceed the trigger, every turn would prune
    the one result that just aged out; a minimum batch groups them."""
    big = [("read_file", {"path": f"f{i}"}, "\n".join(f"{i} line {k} of a large file" for k in range(700)))
           for i in range(16)]
    assert TOKENS.count(big[0][2]) > 3000

    def batches(ratio: float, session: str) -> int:
        f = PruneFilter(cfg(trigger_tokens=8000, min_batch_ratio=ratio, mode="hard"), store)
        return sum(run(f, "chat", canned("chat", big, n), session=session)[0].state["prune"].batch
                   for n in range(1, len(big) + 1))

    every_turn, grouped = batches(0.0, "s-a"), batches(0.8, "s-b")
    assert every_turn >= 10 and grouped <= every_turn // 2 + 1


def test_soft_trim_keeps_head_and_tail(store):
    big = [(t, a, o) for t, a, o in tool_outputs(80, seed=5) if len(o) > 5000][:12]
    body = canned("anthropic", big)
    f = PruneFilter(cfg(mode="soft", soft_head_chars=800, soft_tail_chars=600, keep_recent=1), store)
    t, out = run(f, "anthropic", body)
    sent, got = results_of("anthropic", body), results_of("anthropic", out)
    trimmed = [c for c in sent if got[c] != sent[c]]
    assert trimmed and all(e["mode"] == "soft" for e in t.state["prune"].pruned)
    for c in trimmed:
        orig, text = sent[c], got[c]
        head, _, rest = text.partition("\n[... ctxproxy: ")
        note, _, tail = rest.partition(" ...]\n")
        assert orig.startswith(head) and orig.endswith(tail) and 400 <= len(head) <= 800 and len(tail) <= 600
        assert f"of {len(orig)} characters" in note and REF_PREFIX in note


def test_hard_mode_and_auto_upgrades_soft_to_hard(store):
    big = [(t, a, o) for t, a, o in tool_outputs(120, seed=9) if len(o) > 5000][:40]
    f = PruneFilter(cfg(trigger_tokens=30000, mode="auto", keep_recent=2), store)
    first_soft = None
    for n in range(1, len(big) + 1):
        t, out = run(f, "chat", canned("chat", big, n))
        for e in t.state["prune"].pruned:
            if e["mode"] == "soft" and first_soft is None:
                first_soft = e["ref"]
            if first_soft and e["ref"] == first_soft and e["mode"] == "hard":
                assert t.state["prune"].batch
                return
    pytest.fail("a soft-trimmed result was never upgraded to a hard clear")


def test_changed_content_of_a_pruned_call_is_pruned_at_once(store):
    f = PruneFilter(cfg(), store)
    body = canned("chat", OUTS, 30)
    _, out = run(f, "chat", body)
    first = body["messages"][3]
    assert out["messages"][3]["content"] != first["content"]
    body2 = canned("chat", OUTS, 31)
    body2["messages"][3]["content"] = first["content"] + "\n(edited by the client)"
    t, out2 = run(f, "chat", body2)
    assert REF_PREFIX in out2["messages"][3]["content"]
    assert out2["messages"][3]["content"] != out["messages"][3]["content"]  # a new id for new content
    assert not t.state["prune"].batch


def test_images_are_left_alone(store):
    body = canned("anthropic", OUTS, 30)
    block = body["messages"][2]["content"][0]
    block["content"] = [{"type": "text", "text": OUTS[0][2]},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}]
    body_r = canned("responses", OUTS, 30)
    body_r["input"][2]["output"] = [{"type": "input_text", "text": OUTS[0][2]},
                                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K"}]
    _, out = run(PruneFilter(cfg(), store), "anthropic", body)
    _, out_r = run(PruneFilter(cfg(), store), "responses", body_r, session="s2")
    assert out["messages"][2]["content"][0] == block
    assert out_r["input"][2] == body_r["input"][2]
    assert REF_PREFIX in str(out["messages"][4]["content"][0]["content"])  # its neighbours were pruned


def test_a_breakpoint_inside_a_result_is_kept(store):
    body = canned("anthropic", OUTS, 30)
    block = body["messages"][2]["content"][0]
    block["content"] = [{"type": "text", "text": OUTS[0][2], "cache_control": {"type": "ephemeral"}}]
    _, out = run(PruneFilter(cfg(), store), "anthropic", body)
    assert out["messages"][2]["content"][0] == block


def test_store_failure_fails_open(store):
    class Broken:
        sessions = store.sessions
        pruned = store.pruned

        def batch(self):
            raise OSError("disk full")

    body = canned("chat", OUTS, 30)
    raw = orjson.dumps(body)
    t = Turn(api="chat", route="r", path="/", headers={}, request=ADAPTERS["chat"].parse_request(raw),
             tokens=TOKENS, identity=Identity(tenant="acme", session="s1"))
    Pipeline([PruneFilter(cfg(), Broken())]).run_request(t, reparse=lambda: ADAPTERS["chat"].parse_request(raw))
    assert t.request.to_bytes() == raw and t.degraded == ["prune"]


def test_no_store_means_no_pruning():
    body = canned("chat", OUTS, 30)
    t, out = run(PruneFilter(cfg(), None), "chat", body)
    assert out == body and "prune" not in t.state


def test_two_workers_agree_on_one_decision(store):
    """A worker that planned from a stale read adopts the decision already
    stored, so every worker sends the same bytes."""
    class Stale:
        def __init__(self, real):
            self.real, self.pruned = real, real.pruned

        @property
        def sessions(self):
            real = self.real.sessions

            class S:
                def get(self, tenant, session, part=None):
                    return None

                def get_parts(self, tenant, session, parts):
                    return dict.fromkeys(parts)

                def __getattr__(self, name):
                    return getattr(real, name)
            return S()

        def batch(self):
            return self.real.batch()

    body = canned("chat", OUTS, 30)
    _, a = run(PruneFilter(cfg(mode="hard"), store), "chat", body)
    _, b = run(PruneFilter(cfg(mode="soft", soft_min_chars=100, soft_head_chars=100, soft_tail_chars=100),
                           Stale(store)), "chat", body)
    ra, rb = results_of("chat", a), results_of("chat", b)
    common = [c for c in ra if REF_PREFIX in ra[c] and REF_PREFIX in rb[c]]
    assert common and all(ra[c] == rb[c] for c in common)


def test_a_stub_is_rendered_from_the_decision_it_stands_for():
    """The stub memo is keyed by every field a stub shows: a decision adopted from
    another worker (same original, its own token count) is not given this worker's
    stub for its own earlier decision."""
    f = PruneFilter(cfg(mode="hard"), None)
    mine = {"id": pruned_id("acme", "s1", "call_1", "ab"), "m": "hard", "t": "Bash", "b": 1200, "n": 5000}
    theirs = dict(mine, b=1234)
    assert "(1200 tokens" in f._stub(mine, "x" * 5000, len)[0]
    stub, tokens = f._stub(theirs, "x" * 5000, len)
    assert stub == render_stub(theirs, "x" * 5000) and "(1234 tokens" in stub and tokens == len(stub)
    assert f._stub(dict(mine, t="Read"), "x" * 5000, len)[0] == render_stub(dict(mine, t="Read"), "x" * 5000)


def test_ids_and_stubs_are_deterministic():
    a = pruned_id("acme", "s1", "call_1", "ab")
    assert a == pruned_id("acme", "s1", "call_1", "ab") and a.startswith("pr_")
    assert len({a, pruned_id("other", "s1", "call_1", "ab"), pruned_id("acme", "s2", "call_1", "ab"),
                pruned_id("acme", "s1", "call_2", "ab"), pruned_id("acme", "s1", "call_1", "cd")}) == 5
    d = {"id": a, "m": "hard", "t": "Bash", "b": 1234, "n": 5000}
    assert render_stub(d, "x" * 5000) == render_stub(dict(d), "x" * 5000)
    assert "1234 tokens" in render_stub(d, "") and REF_PREFIX + a in render_stub(d, "")
    soft = {"id": a, "m": "soft", "t": "", "b": 10, "n": 30, "hc": 5, "tc": 5}
    assert render_stub(soft, "0123456789" * 3).startswith("01234\n[... ctxproxy: 20 of 30 characters")
    assert render_stub(soft, "0123456789") is None  # nothing to trim


# -- a reference alone finds its original, and only its own tenant's ------------------------

async def test_a_reference_alone_finds_its_tenants_original_through_the_admin_api(make_proxy, fake, monkeypatch,
                                                                                  capsys):
    """ctx://pruned/<id> names no tenant. With several tenants the admin API and
    the CLI find the original from the reference alone (an id -> tenant pointer
    the prune filter writes with it); asked for another tenant, they find nothing."""
    import aiohttp

    from ctxproxy.filters.prune import REF_INDEX_TENANT
    from ctxproxy.proxy.cli.main import main as cli

    monkeypatch.setenv("CTXPROXY_ADMIN_TOKEN", "adm-prune-tenants")
    proxy = await make_proxy('[pipeline]\nrequest = ["identify", "prune"]\n'
                             "[filters.prune]\ntrigger_tokens = 2000\nkeep_recent = 1\nmin_tokens = 100\n")
    body = canned("chat", OUTS, 8)
    refs: dict[str, list[str]] = {}
    for tenant in ("team-a", "team-b"):
        await proxy.openai().chat.completions.create(
            **body, extra_headers={"X-Ctx-Tenant": tenant, "X-Ctx-Session": "shared-session-name"})
        got = results_of("chat", fake.last.json)
        refs[tenant] = [t[t.index(REF_PREFIX):].split()[0].rstrip("].") for t in got.values() if REF_PREFIX in t]
        assert refs[tenant]
    assert not set(refs["team-a"]) & set(refs["team-b"])  # the id hashes the tenant in
    originals = results_of("chat", body)

    auth = {"Authorization": "Bearer adm-prune-tenants"}
    async with aiohttp.ClientSession() as http:
        async def get(ref: str, tenant: str | None = None) -> tuple[int, dict]:
            params = {"tenant": tenant} if tenant else {}
            async with http.get(f"{proxy.url}/ctx/v1/pruned/{ref[len(REF_PREFIX):]}", params=params,
                                headers=auth) as r:
                return r.status, await r.json()

        for tenant, other in (("team-a", "team-b"), ("team-b", "team-a")):
            for ref in refs[tenant]:
                status, doc = await get(ref)  # the reference alone
                assert status == 200 and doc["tenant"] == tenant and doc["ref"] == ref
                assert doc["content"] == originals[doc["call_id"]]
                assert (await get(ref, tenant))[0] == 200
                assert (await get(ref, other))[0] == 404  # never another tenant's original
                assert (await get(ref, "default"))[0] == 404

    data_dir = proxy.state.config.server.data_dir
    ref = refs["team-b"][0]
    capsys.readouterr()
    assert cli(["pruned", "show", ref, "--json", "--data-dir", data_dir]) == 0
    assert orjson.loads(capsys.readouterr().out)["tenant"] == "team-b"
    assert cli(["pruned", "show", ref, "--tenant", "team-a", "--data-dir", data_dir]) == 1

    # the pointers carry the originals' session, so erasing it can find them
    store = proxy.settled_store()
    pointers = store.pruned.list(REF_INDEX_TENANT, session="shared-session-name")
    assert {REF_PREFIX + d.id for d in pointers} == set(refs["team-a"]) | set(refs["team-b"])
    # an original stored before pointers existed is still found in the default tenant
    store.pruned.put("default", "pr_legacy", {"content": "old output", "call_id": "c0"}, session="s0")
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{proxy.url}/ctx/v1/pruned/pr_legacy", headers=auth) as r:
            assert r.status == 200 and (await r.json())["content"] == "old output"
    # erasing one tenant's session takes its pointers with it, not another tenant's of the same name
    receipt = store.delete_subject("team-a", session="shared-session-name")
    left = {REF_PREFIX + d.id for d in store.pruned.list(REF_INDEX_TENANT, session="shared-session-name")}
    assert left == set(refs["team-b"]) and receipt.counts["pointers"] == len(refs["team-a"])
    assert store.count_subject("team-a", session="shared-session-name")["pointers"] == 0


# Through the proxy (OpenAI SDK -> ctxproxy -> fake provider):
# 1. A client that reuses tool call ids (``call_0`` every turn, as some
#    OpenAI-compatible servers emit) must not have its newest, unseen tool
#    output replaced by a stub because an old output under the same id was
#    pruned.
# 2. A ``cache_control`` breakpoint on a Chat ``tool`` message's text part
#    (OpenRouter passes them on to Anthropic models) must survive: such a result
#    is not rewritten, as on Anthropic.
PRUNE_TOML = prune_toml(8000)
HEADERS = {"X-Ctx-Session": "review-prune"}


async def send(client, body):
    return await client.chat.completions.create(extra_headers=HEADERS, **body)


async def test_reused_call_id_does_not_stub_the_newest_result(make_proxy, fake):
    proxy = await make_proxy(PRUNE_TOML)
    fake.script(Reply.text("one"), Reply.text("two"))
    client = proxy.openai()
    first = canned("chat", OUTS, 30)
    await send(client, first)
    got = results_of("chat", fake.model_requests[-1].json)
    pruned = [c for c, t in got.items() if REF_PREFIX in t]
    assert pruned, "the first turn should prune a batch"
    # next turn: the model's new call reuses the id of a pruned call (its output is new, unseen)
    second = canned("chat", OUTS, 31)
    newest = list(results_of("chat", second))[-1]
    reused = pruned[0]
    for m in second["messages"]:
        if m.get("role") == "tool" and m.get("tool_call_id") == newest:
            m["tool_call_id"] = reused
        for tc in m.get("tool_calls") or ():
            if tc["id"] == newest:
                tc["id"] = reused
    sent_last = second["messages"][-1]
    assert sent_last["role"] == "tool" and sent_last["tool_call_id"] == reused
    await send(client, second)
    fwd_last = fake.model_requests[-1].json["messages"][-1]
    assert fwd_last["content"] == sent_last["content"], "the newest tool output was replaced by a stub"
    # the old output under that id is still pruned the same way
    old = [m for m in fake.model_requests[-1].json["messages"] if m.get("tool_call_id") == reused][0]
    assert old["content"] == got[reused]


async def test_chat_tool_part_cache_breakpoint_survives(make_proxy, fake):
    proxy = await make_proxy(PRUNE_TOML)
    fake.script(Reply.text("one"))
    body = canned("chat", OUTS, 30)
    tool_msgs = [m for m in body["messages"] if m.get("role") == "tool"]
    marked = tool_msgs[0]
    marked["content"] = [{"type": "text", "text": marked["content"], "cache_control": {"type": "ephemeral"}}]
    await send(proxy.openai(), body)
    fwd = fake.model_requests[-1].json["messages"]
    got = [m for m in fwd if m.get("tool_call_id") == marked["tool_call_id"]][0]
    assert got["content"] == marked["content"]  # breakpoint and text as sent
    assert any(REF_PREFIX in str(m.get("content")) for m in fwd if m.get("role") == "tool")  # others pruned


# -- a long conversation first seen -----------------------------------------------------------

def first_seen(f: PruneFilter, api: str, body: dict, tokens: TokenCounter) -> Turn:
    t = Turn(api=api, route="r", path="/", headers={}, request=ADAPTERS[api].parse_request(orjson.dumps(body)),
             tokens=tokens, identity=Identity(tenant="acme", session="long"))
    pipe = Pipeline([f])
    pipe.run_request(t)
    pipe.reports(t)  # the turn's end, as after the answer
    return t


@pytest.mark.parametrize("api", APIS)
def test_a_long_conversation_first_seen_is_decided_from_an_estimate_and_counted_after(api, store, monkeypatch):
    monkeypatch.setattr("ctxproxy.filters.prune.ESTIMATE_CHARS", 20_000)  # the suite's conversations are small
    body = canned(api, OUTS, 30)
    exact = TokenCounter()  # a process that never saw these texts
    f = PruneFilter(cfg(), store)
    t = first_seen(f, api, body, exact)
    st = t.state["prune"]
    assert st.counts_estimated and st.batch and st.pruned
    assert all(p["tokens_estimated"] is True for p in st.pruned)
    forwarded = ADAPTERS[api].parse_request(t.request.to_bytes())
    # the estimate leans high: the request as forwarded is at or below the batch's target, counted exactly
    assert estimate_tokens(forwarded, TOKENS.count) <= 4000 < 8000 < st.tokens_estimated
    stubs = results_of(api, orjson.loads(t.request.to_bytes()))
    # after the answer the helper counted every text exactly: the next turn decides from exact counts,
    # and keeps the stored decisions' bytes
    nxt = canned(api, OUTS, 31)
    t2 = first_seen(f, api, nxt, exact)
    assert not t2.state["prune"].counts_estimated
    got = results_of(api, orjson.loads(t2.request.to_bytes()))
    assert all(got[c] == s for c, s in stubs.items() if REF_PREFIX in s)
    assert not [p for p in t2.state["prune"].pruned if "tokens_estimated" in p]


@pytest.mark.parametrize("api", APIS)
def test_a_first_seen_conversation_s_small_items_are_estimated_from_their_json_and_counted_after(
        api, store, monkeypatch):
    """Its calls and short messages are estimated from their JSON's length (no walk
    of their strings before the request leaves); after the answer each item, small
    or large, is counted exactly from what the model reads of it."""
    monkeypatch.setattr("ctxproxy.filters.prune.ESTIMATE_CHARS", 20_000)
    body = canned(api, OUTS, 30)
    long_text = "Prüfe die Ausgabe: " + "ein längerer Absatz über das Bauen. " * 200  # > 4 KB: walked
    body[KEY[api]].insert(1, {"role": "user", "content": long_text})
    body[KEY[api]].insert(2, {"role": "user", "content": "a lone surrogate LONE kept escaped"})
    raw = orjson.dumps(body).replace(b"LONE", b"\\ud800")  # valid JSON, not valid Unicode
    exact = TokenCounter()
    f = PruneFilter(cfg(), store)
    t = Turn(api=api, route="r", path="/", headers={}, request=ADAPTERS[api].parse_request(raw),
             tokens=exact, identity=Identity(tenant="acme", session="long"))
    Pipeline([f]).run_request(t)
    assert t.state["prune"].counts_estimated and t.state["prune"].batch
    Pipeline([f]).reports(t)  # the turn's end: the exact counts are made on the helper thread
    exact.wait_later()
    view = ADAPTERS[api].parse_request(raw)
    holders = {r.position for r in view.tool_results()}
    items = [(item, enc) for i, (item, enc) in enumerate(zip(view.items(), view.item_encodings()))
             if i not in holders]
    assert any(len(enc) > 4096 for _, enc in items) and sum(len(enc) <= 4096 for _, enc in items) >= 30
    for item, enc in items:
        assert f._items.get(memo_key(enc)) == sum(TOKENS.count(s) for s in view.visible_strings(item))


def test_near_the_trigger_a_first_seen_conversation_is_counted_exactly(store, monkeypatch):
    monkeypatch.setattr("ctxproxy.filters.prune.ESTIMATE_CHARS", 20_000)
    body = canned("chat", OUTS, 30)
    total = estimate_tokens(ADAPTERS["chat"].parse_request(orjson.dumps(body)), TOKENS.count)
    t = first_seen(PruneFilter(cfg(trigger_tokens=total - 100), store), "chat", body, TokenCounter())
    st = t.state["prune"]
    assert not st.counts_estimated and st.tokens_estimated == total and st.batch
    assert all("tokens_estimated" not in p for p in st.pruned)
