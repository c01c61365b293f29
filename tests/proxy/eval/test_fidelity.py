"""Context fidelity across a compaction: scripted sessions shaped like Claude Code, Codex (local and
remote compaction), OpenClaw and Hermes, run through the real proxy and the scripted provider."""
import pytest
from ctxproxy.proxy.eval.agents import AGENTS, OFF, run

from ctxproxy.filters.tokens import TokenCounter

COUNT = TokenCounter().count


# Known (measured by `ctxproxy eval --set compaction`): with the follow-up ticket, Claude Code's and
# Hermes' checkpoints need ~626 tokens, over the default 600; leaving out the local edit adds the
# "side effects not listed" notice, which costs more than it saved, and the fit goes on to drop the
# commit and the PR (the model then opens it again). 650 holds it all. Strict: a fix makes these fail.
OVER_BUDGET = pytest.mark.xfail(strict=True, reason="checkpoint budget: the PR is left out once the ticket is in")


@pytest.mark.parametrize("name", [pytest.param(n, marks=OVER_BUDGET) if n in ("claude-code", "hermes") else n
                                  for n in sorted(AGENTS)])
async def test_everything_the_session_established_is_visible_after_its_compaction(make_proxy, fake, name):
    p = await make_proxy()
    r = await run(AGENTS[name](), p.url, fake, filler=6, after=4, count=COUNT)
    missing = sorted(k for k, ok in r.visible_all.items() if not ok)
    assert not missing, f"{name}: not visible after the compaction: {missing}"
    assert r.duplicates == 0
    assert r.cache_kept == 1.0
    assert r.checkpoint_tokens and all(0 < n <= 600 for n in r.checkpoint_tokens)  # effects included
    assert not any(r.ledger_tokens)  # the ledger is the checkpoint's effects field, not a segment of its own
    store = p.settled_store()
    m = store.manifests.get("default", r.turn_ids[-1]).data
    (seg,) = [s for s in m["segments"] if s["kind"] == "task_state"]
    assert seg["status"] == "placed" and seg["placement"].startswith("turn")
    assert m["task_state"]["compacted"] is True and m["task_state"]["items"]["decisions"] >= 2
    assert m["task_state"]["effects_ref"].startswith("checkpoint:") and m["task_state"]["items"]["effects"] >= 2
    # frozen for the compaction: every later turn carries the same bytes (the ref names their digest)
    refs = {s["ref"] for t in r.turn_ids[-4:] for s in store.manifests.get("default", t).data["segments"]
            if s["kind"] == "task_state"}
    assert len(refs) == 1


@pytest.mark.parametrize("name", ["claude-code", "codex"])
async def test_without_the_checkpoint_the_model_loses_it_and_repeats_the_pr(make_proxy, fake, name):
    """The same sessions with the checkpoint, the ledger and re-injection switched off: the
    measurement above can fail."""
    p = await make_proxy(OFF)
    r = await run(AGENTS[name](), p.url, fake, filler=2, after=2)
    lost = {k for k, ok in r.visible.items() if not ok}
    assert {"evidence 1", "evidence 2", "evidence 3", "effect 1"} <= lost  # Codex keeps the user turns itself
    assert r.duplicates >= 1


async def test_a_state_that_outgrows_the_budget_keeps_the_first_and_newest_items_whole(make_proxy, fake):
    """Every turn adds an instruction and a passing test run: the checkpoint stays within its budget,
    is never cut by inject, keeps the task-setting items and the open approval; the older test run
    gives way to newer ones."""
    p = await make_proxy()
    r = await run(AGENTS["codex"](), p.url, fake, filler=40, after=2, count=COUNT, busy=True)
    assert all(0 < n <= 600 for n in r.checkpoint_tokens)
    lost = {k for k, ok in r.visible_all.items() if not ok}
    assert lost <= {"evidence 1", "effect 1", "effect 2"}, lost  # the ledger itself is cut at its own cap
    assert r.duplicates == 0
    m = p.settled_store().manifests.get("default", r.turn_ids[-1]).data
    (seg,) = [s for s in m["segments"] if s["kind"] == "task_state"]
    assert seg["status"] == "placed" and m["task_state"]["dropped"] > 0
