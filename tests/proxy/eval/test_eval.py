"""``ctxproxy eval``: the CI slice of each set through a real proxy and the scripted
provider, deliberately broken configurations that the matching metric and the
``--baseline`` gate catch, the team's JSONL cases, and the command itself."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dataclasses import dataclass

import pytest

from ctxproxy.proxy.eval.agents import OFF
from ctxproxy.proxy.eval.cases import CaseError, load
from ctxproxy.proxy.eval.facts import build as build_facts
from ctxproxy.proxy.eval.report import compare
from ctxproxy.proxy.eval.runner import QUICK, SETS, run_eval
from ctxproxy.proxy.eval.turns import build as build_turns

RECALL_OFF = "[filters.recall]\nenabled = false\n"
LEAKY_WIDEN = '[filters.recall]\nwiden = "same_user"\n'  # session search beyond the session tree
LEAKY_SENSITIVITY = '[filters.recall]\nmax_sensitivity = "confidential"\n'


async def evaluate(tmp_path: Path, sets: tuple[str, ...], toml: str = "", cases=None) -> dict:
    """The quick slice under the configuration ``toml`` ("": the defaults). Every configuration
    file of the session sits in one directory, so their proxies share the compiled redaction rules."""
    cfg = tmp_path.parent / "eval-configs" / f"{hashlib.sha256(toml.encode()).hexdigest()[:12]}.toml"
    cfg.parent.mkdir(exist_ok=True)
    cfg.write_text(toml)
    # the sealed held-out half is never scored here: the lead scores it once, by hand
    return await run_eval(sets, str(cfg), tmp_path / "data", seed=3, sizes=QUICK, cases=cases, sealed=False)


def failed(report: dict, baseline: dict, pct: float = 1.0) -> set[str]:
    return {f"{d.set}.{d.metric}" for d in compare(report, baseline, pct) if d.failed}


@pytest.fixture(scope="module")
def default_report(tmp_path_factory) -> dict:
    """The quick slice of every set on the default configuration (one run for the module)."""
    import asyncio

    return asyncio.run(evaluate(tmp_path_factory.mktemp("default"), SETS))


def test_the_default_configuration_gets_the_context_right_and_no_proxy_does_not(default_report):
    facts, iso, turns, comp = (default_report["sets"][s] for s in SETS)
    assert facts["ctxproxy"]["recall@5"] >= 0.6 and facts["ctxproxy"]["facts_injected"] >= 0.6
    # lexical recall finds every fact asked in (some of) its own words; what it misses are the
    # questions that share little but the service's name with the statement
    ps = build_facts(3, QUICK.services)
    by = facts["details"]["by_variant"]
    assert by["close"]["recall@5"] == by["partial"]["recall@5"] == 1.0
    assert by["synonym"]["recall@5"] < 1.0
    synonym = {q.text for q in ps.questions if q.variant == "synonym"}
    assert facts["details"]["missed"] and set(facts["details"]["missed"]) <= synonym
    # superseded (same words) and expired memories are never injected; an older value in other
    # words, which the gate cannot tell from a new fact, may be (that is the freshness error)
    reworded = {m.statement for m in ps.memories if m.stale and "observed_at" in m.fields
                and "expires_at" not in m.fields}
    assert set(facts["details"]["stale_injected"]) <= reworded
    assert facts["ctxproxy"]["privacy_leakage"] == 0.0  # the other project's facts never visible
    assert 0 < facts["ctxproxy"]["memory_write_precision"] < 1  # the gate kept an expired event: it counts
    assert facts["details"]["writes"]["memory_blocked"] >= 2  # the instruction overrides and the secret
    assert facts["direct"]["recall@5"] == 0.0 and facts["direct"]["facts_injected"] == 0.0
    assert iso["ctxproxy"]["privacy_leakage"] == 0.0 and iso["ctxproxy"]["facts_injected"] == 1.0
    # real agent turns (long, tool results, wrapped by Claude Code and Codex) bring back what they need;
    # the thresholds hold on the dev halves (bench/RESULTS.md), the sealed half is left out unread
    halves = turns["details"]["by_split"]
    assert set(halves) == {"dev", "held-out", "dev (fresh)", "dev (fresh2)", "dev (fresh3)",
                           "dev (fresh4)", "dev (fresh5)", "dev (fresh6)", "dev (fresh7)", "dev (fresh8)", "dev (fresh9)", "dev (fresh10)", "dev (fresh11)", "dev (fresh12)", "dev (fresh13)", "dev (fresh14)", "dev (fresh15)", "dev (fresh16)", "dev (fresh17)", "dev (fresh18)", "dev (fresh19)", "dev (fresh20)", "dev (fresh21)"} and default_report["sealed"] is False
    assert halves["dev"]["turns"] > 30 and halves["held-out"]["turns"] > 20 and halves["dev (fresh)"]["turns"] >= 30
    # dev read 0.893 while a request's common words (use, first) raised the chance floor (generic_weight)
    assert halves["dev"]["turn_hit_rate"] >= 0.9 and halves["held-out"]["turn_hit_rate"] >= 0.75
    assert halves["dev"]["false_injection_rate"] <= 0.05 and halves["held-out"]["false_injection_rate"] <= 0.05
    # the fresh half read 0.72 / 0.29 when a name the tokenizer splits counted as several coincidences,
    # 0.80 before a word's other forms (approval: approve, prod: production) were looked up, false 0.206
    # before a request recalled only what its words single out (then 0.147)
    assert halves["dev (fresh)"]["turn_hit_rate"] >= 0.8 and halves["dev (fresh)"]["false_injection_rate"] <= 0.2
    # the second fresh half read 0.576 / 0.156 the one time it was scored sealed (then the word forms:
    # 0.697 / 0.133; singling out: 0.697 / 0.089)
    assert halves["dev (fresh2)"]["turns"] >= 40 and halves["dev (fresh2)"]["turn_hit_rate"] >= 0.65
    assert halves["dev (fresh2)"]["false_injection_rate"] <= 0.12
    # the third read 0.632 / 0.160 the one time it was scored sealed
    assert halves["dev (fresh3)"]["turns"] >= 45 and halves["dev (fresh3)"]["turn_hit_rate"] >= 0.58
    # the fourth read 0.647 / 0.217 the one time it was scored sealed
    assert halves["dev (fresh4)"]["turns"] >= 40 and halves["dev (fresh4)"]["turn_hit_rate"] >= 0.6
    # the fifth read 0.725 / 0.269 the one time it was scored sealed
    assert halves["dev (fresh5)"]["turns"] >= 45 and halves["dev (fresh5)"]["turn_hit_rate"] >= 0.65
    # the sixth read 0.614 / 0.214 the one time it was scored sealed
    assert halves["dev (fresh6)"]["turns"] >= 45 and halves["dev (fresh6)"]["turn_hit_rate"] >= 0.55
    # the seventh read 0.850 / 0.288 the one time it was scored sealed
    assert halves["dev (fresh7)"]["turns"] >= 45 and halves["dev (fresh7)"]["turn_hit_rate"] >= 0.75
    # the eighth read 0.682 / 0.179 the one time it was scored sealed
    assert halves["dev (fresh8)"]["turns"] >= 45 and halves["dev (fresh8)"]["turn_hit_rate"] >= 0.6
    # the ninth read 0.727 / 0.161 the one time it was scored sealed
    assert halves["dev (fresh9)"]["turns"] >= 45 and halves["dev (fresh9)"]["turn_hit_rate"] >= 0.63
    # the tenth read 0.818 / 0.214 the one time it was scored sealed
    assert halves["dev (fresh10)"]["turns"] >= 45 and halves["dev (fresh10)"]["turn_hit_rate"] >= 0.72
    # the eleventh read 0.818 / 0.125 the one time it was scored sealed
    assert halves["dev (fresh11)"]["turns"] >= 45 and halves["dev (fresh11)"]["turn_hit_rate"] >= 0.72
    # the twelfth read 0.705 / 0.214 the one time it was scored sealed
    assert halves["dev (fresh12)"]["turns"] >= 45 and halves["dev (fresh12)"]["turn_hit_rate"] >= 0.66
    # the thirteenth read 0.568 / 0.143 the one time it was scored sealed
    assert halves["dev (fresh13)"]["turns"] >= 45 and halves["dev (fresh13)"]["turn_hit_rate"] >= 0.52
    # the fourteenth read 0.682 / 0.071 the one time it was scored sealed
    assert halves["dev (fresh14)"]["turns"] >= 45 and halves["dev (fresh14)"]["turn_hit_rate"] >= 0.64
    # the fifteenth read 0.682 / 0.143 the one time it was scored sealed
    assert halves["dev (fresh15)"]["turns"] >= 45 and halves["dev (fresh15)"]["turn_hit_rate"] >= 0.64
    # the sixteenth read 0.727 / 0.161 the one time it was scored sealed
    assert halves["dev (fresh16)"]["turns"] >= 45 and halves["dev (fresh16)"]["turn_hit_rate"] >= 0.68
    # the seventeenth read 0.818 / 0.036 the one time it was scored sealed
    assert halves["dev (fresh17)"]["turns"] >= 45 and halves["dev (fresh17)"]["turn_hit_rate"] >= 0.72
    # the eighteenth read 0.864 / 0.125 the one time it was scored sealed
    assert halves["dev (fresh18)"]["turns"] >= 45 and halves["dev (fresh18)"]["turn_hit_rate"] >= 0.72
    # the nineteenth read 0.659 / 0.125 the one time it was scored sealed
    assert halves["dev (fresh19)"]["turns"] >= 45 and halves["dev (fresh19)"]["turn_hit_rate"] >= 0.6
    # the twentieth read 0.659 / 0.143 the one time it was scored sealed
    assert halves["dev (fresh20)"]["turns"] >= 45 and halves["dev (fresh20)"]["turn_hit_rate"] >= 0.6
    # the twenty-first read 0.932 / 0.071 the one time it was scored sealed
    assert halves["dev (fresh21)"]["turns"] >= 45 and halves["dev (fresh21)"]["turn_hit_rate"] >= 0.85
    assert turns["direct"]["turn_hit_rate"] == 0.0
    assert set(turns["details"]["by_shape"]) >= {"claude-tool", "codex-tool", "claude-after-compact",
                                                "claude (nothing)"}
    # every agent's ticket survives its compaction and is never filed again
    lost = comp["details"]["lost_after_compaction"]
    assert not any("ticket" in items for items in lost.values())
    assert comp["ctxproxy"]["compaction_fidelity"] == 1.0 and comp["direct"]["compaction_fidelity"] < 0.5
    assert comp["ctxproxy"]["duplicate_side_effects"] == 0 < comp["direct"]["duplicate_side_effects"]
    assert not any(lost.values()), lost  # every agent keeps everything within the 600-token checkpoint
    assert failed(default_report, default_report) == set()  # the same report never fails its own gate


async def test_recall_off_fails_facts_recall_and_the_gate(tmp_path, default_report):
    r = await evaluate(tmp_path, ("facts",), RECALL_OFF)
    assert r["sets"]["facts"]["ctxproxy"]["recall@5"] == 0.0
    assert {"facts.recall@5", "facts.mrr", "facts.facts_injected"} <= failed(r, default_report)


@pytest.mark.parametrize("toml", [LEAKY_WIDEN, LEAKY_SENSITIVITY], ids=["widen-same-user", "confidential"])
async def test_a_leaky_visibility_setting_fails_privacy_leakage_and_the_gate(tmp_path, default_report, toml):
    r = await evaluate(tmp_path, ("isolation",), toml)
    assert r["sets"]["isolation"]["ctxproxy"]["privacy_leakage"] > 0
    assert r["sets"]["isolation"]["details"]["leaked"]
    # zero tolerance: no --max-regression lets a leak through
    assert "isolation.privacy_leakage" in failed(r, default_report, pct=100)


async def test_checkpoint_off_fails_compaction_fidelity_duplicates_and_the_gate(tmp_path, default_report):
    r = await evaluate(tmp_path, ("compaction",), OFF)
    m = r["sets"]["compaction"]["ctxproxy"]
    assert m["compaction_fidelity"] < 0.8 and m["duplicate_side_effects"] > 0
    assert {"compaction.compaction_fidelity", "compaction.duplicate_side_effects"} <= failed(r, default_report)


async def test_tokens_saved_by_pruning_measure_what_prune_cut_and_the_gate_catches_no_pruning(tmp_path,
                                                                                            default_report):
    """The quick sessions stay below the default trigger (nothing is pruned: 0 saved, both columns
    see the same requests); a trigger below them prunes the older reads. Against that report as
    the baseline, the default configuration fails the gate on the tokens it no longer saves."""
    soon = await evaluate(tmp_path, ("compaction",), "[filters.prune]\ntrigger_tokens = 600\nkeep_recent = 1\n")
    m, default = soon["sets"]["compaction"], default_report["sets"]["compaction"]
    assert default["ctxproxy"]["tokens_saved_by_pruning"] == 0.0
    assert default["ctxproxy"]["input_tokens"] == default["direct"]["input_tokens"]
    assert m["ctxproxy"]["tokens_saved_by_pruning"] > 0.05
    assert m["ctxproxy"]["input_tokens"] < m["direct"]["input_tokens"] == default["direct"]["input_tokens"]
    # what was pruned is not what the task needs: the same items stay visible as without pruning
    assert m["details"]["lost_after_compaction"] == default["details"]["lost_after_compaction"]
    assert "compaction.tokens_saved_by_pruning" in failed(default_report, soon)


def test_the_gate_allows_what_max_regression_allows():
    base = {"sets": {"facts": {"ctxproxy": {"recall@5": 0.9, "privacy_leakage": 0.0, "input_tokens": 100}}}}
    cur = {"sets": {"facts": {"ctxproxy": {"recall@5": 0.885, "privacy_leakage": 0.0, "input_tokens": 900}}}}
    assert failed(cur, base, pct=2) == set()  # 1.5 points down, tokens are never gated
    assert failed(cur, base, pct=1) == {"facts.recall@5"}


CASES = [
    {"type": "rule", "path": "AGENTS.md", "text": "# Shop\n- Amounts are integer cents, never floats (RULE-77).\n"},
    {"type": "memory", "statement": "The shop cache runs Redis 6.", "tenant": "acme", "project": "shop",
     "kind": "fact", "evidence_ref": "commit:1111111", "stale": True},
    {"type": "memory", "statement": "The shop cache runs Redis 7.", "tenant": "acme", "project": "shop",
     "kind": "fact", "evidence_ref": "commit:2222222"},
    {"type": "memory", "statement": "The other tenant's vault code is CANARY-0x1.", "tenant": "globex",
     "kind": "fact", "evidence_ref": "commit:3333333"},
    {"type": "question", "text": "Which Redis version does the shop cache run?", "tenant": "acme", "user": "ana",
     "project": "shop", "expect": ["Redis 7"], "ranked": True},
    {"type": "question", "text": "What is the vault code?", "tenant": "acme", "user": "ana",
     "forbid": ["CANARY-0x1"]},
    {"type": "question", "text": "How are amounts stored?", "tenant": "acme", "user": "ana", "expect": "RULE-77"},
    {"type": "session", "name": "two-turns", "api": "chat", "headers": {"X-Ctx-Session": "rec-1"},
     "requests": [{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]},
                  {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"},
                                                     {"role": "assistant", "content": "hello"},
                                                     {"role": "user", "content": "and the rules?"}]}],
     "expect": ["RULE-77"]},
]


def write_cases(path: Path, rows: list) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


async def test_the_teams_own_cases_run_as_their_own_set(tmp_path):
    cases = load(write_cases(tmp_path / "cases.jsonl", CASES))
    r = await evaluate(tmp_path, (), cases=cases)
    m = r["sets"]["cases"]["ctxproxy"]
    assert m["recall@5"] == 1.0 and m["facts_injected"] == 1.0
    assert m["freshness_error"] == 0.0 and m["privacy_leakage"] == 0.0
    assert m["compaction_fidelity"] == 1.0  # the rule is in the recorded session's last request
    assert r["sets"]["cases"]["direct"]["facts_injected"] == 0.0


@pytest.mark.parametrize("row, message", [
    ({"type": "memo", "statement": "x"}, "expected an object with type"),
    ({"type": "question", "text": "q", "expect": [1]}, "expect must be"),
    ({"type": "question", "text": "q", "colour": "red"}, "unknown field 'colour'"),
    ({"type": "rule", "path": "../etc/passwd", "text": "x"}, "relative, inside the project"),
    ({"type": "session", "requests": []}, "'requests' is required"),
])
def test_a_bad_case_line_is_named(tmp_path, row, message):
    with pytest.raises(CaseError, match=message) as exc:
        load(write_cases(tmp_path / "c.jsonl", [CASES[0], row]))
    assert ":2:" in str(exc.value)


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(capsys):
    """``ctxproxy eval ARGS`` through the command's own entry (in this process: the proxies
    share its compiled rules; `ctxproxy serve --child` is still a process of its own)."""
    from ctxproxy.proxy.cli.main import main

    def run(*args: str) -> Ran:
        code = main(["eval", *args])
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)
    return run


def test_the_command_writes_json_exits_nonzero_on_a_regression_and_a_child_proxy_measures_the_same(tmp_path,
                                                                                                  run_cli):
    out = tmp_path / "eval.json"
    r = run_cli("--set", "isolation", "--quick", "--seed", "3", "--json", str(out), "--no-sealed")
    assert r.returncode == 0, r.stderr
    assert "privacy_leakage" in r.stdout and "no proxy" in r.stdout
    assert r.stderr == ""  # no progress bar when stderr is not a terminal
    report = json.loads(out.read_text())
    assert report["sets"]["isolation"]["ctxproxy"]["privacy_leakage"] == 0.0 and report["proxy"] == "in-process"
    assert report["sealed"] is False
    better = json.loads(out.read_text())
    better["sets"]["isolation"]["ctxproxy"]["noise_ratio"] = -1.0  # a baseline this run is worse than
    (tmp_path / "base.json").write_text(json.dumps(better))
    # the same slice through `ctxproxy serve` as a child process: the same report, and the gate
    r = run_cli("--set", "isolation", "--quick", "--seed", "3", "--child", "--json", str(tmp_path / "child.json"),
                "--baseline", str(tmp_path / "base.json"))
    assert r.returncode == 1 and "isolation.noise_ratio" in r.stderr and "FAIL" in r.stdout
    child = json.loads((tmp_path / "child.json").read_text())
    assert child["proxy"] == "child"
    for part in ("ctxproxy", "direct", "details"):
        assert child["sets"]["isolation"][part] == report["sets"]["isolation"][part], part
    r = run_cli("--set", "isolation", "--quick", "--baseline", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and "--baseline: cannot read" in r.stderr
    r = run_cli("--set", "isolation", "--quick", "--data", str(tmp_path))  # holds eval.json: not a fresh run
    assert r.returncode == 2 and "not an empty directory" in r.stderr


def test_a_sealed_half_is_read_only_when_scored_and_never_quoted(monkeypatch):
    from ctxproxy.proxy.eval import turns
    from ctxproxy.proxy.eval.probes import Observation, Writes, details

    # a sealed half that does not exist: left out, it is never imported; scored, it would be
    monkeypatch.setattr(turns, "HALVES", turns.HALVES[:23] + (("held-out (sealed)", "ctxproxy.proxy.eval.no_half"),))
    splits = {q.split for q in build_turns(3, sealed=False).questions}
    assert splits == {"dev", "held-out", "dev (fresh)", "dev (fresh2)", "dev (fresh3)", "dev (fresh4)",
                      "dev (fresh5)", "dev (fresh6)", "dev (fresh7)", "dev (fresh8)", "dev (fresh9)", "dev (fresh10)", "dev (fresh11)", "dev (fresh12)", "dev (fresh13)", "dev (fresh14)", "dev (fresh15)", "dev (fresh16)", "dev (fresh17)", "dev (fresh18)", "dev (fresh19)", "dev (fresh20)", "dev (fresh21)"}
    with pytest.raises(ModuleNotFoundError):
        build_turns(3, sealed=True)
    # a half marked sealed is counted per half, its texts never quoted (missed, false injections)
    monkeypatch.setattr(turns, "HALVES", turns.HALVES[:2])
    monkeypatch.setattr(turns, "SEALED", {"held-out"})
    qs = build_turns(3).questions
    sealed = [q for q in qs if q.sealed]
    assert sealed and {q.split for q in sealed} == {"held-out"}
    obs = [Observation(q, "", ["unrelated"], ["unrelated"], [1]) for q in qs]
    d = details(obs, Writes(), [], limit=len(obs))
    quoted = " ".join(d["missed"] + d["false_injected"])
    assert d["by_split"]["held-out"]["turns"] == len(sealed) and d["by_split"]["held-out"]["turn_hit_rate"] == 0.0
    assert len(d["missed"]) == sum(bool(q.expect) for q in qs if not q.sealed)
    assert not any(q.text[:60] in quoted for q in sealed)


async def test_in_keys_mode_each_principal_calls_with_its_own_key_and_nothing_crosses(tmp_path):
    r = await evaluate(tmp_path, ("isolation",), '[auth]\nmode = "keys"\n')
    m = r["sets"]["isolation"]["ctxproxy"]
    assert m["privacy_leakage"] == 0.0 and m["facts_injected"] == 1.0


def test_the_progress_bar_draws_only_on_a_terminal():
    import io

    from ctxproxy.proxy.eval.runner import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = Progress(4, stream)
        bar.label = "facts (ctxproxy)"
        for _ in range(4):
            bar.step()
        bar.close()
    assert "4/4" in tty.getvalue() and "#" * 30 in tty.getvalue()
    assert pipe.getvalue() == ""


def test_the_child_proxy_runs_the_configuration_under_test(tmp_path):
    """What `ctxproxy serve` is given: the user's file with the eval's filter changes (the same
    as in this process), rule files still found, and the admin token only in its environment."""
    import tomllib

    from ctxproxy.config import load_config
    from ctxproxy.proxy.eval.child import child_config, toml_text
    from ctxproxy.proxy.eval.harness import eval_config, eval_filters

    user = tmp_path / "team" / "ctxproxy.toml"
    user.parent.mkdir()
    user.write_text('[server]\nadmin_token = "not-for-a-file"\nmax_body_bytes = 1048576\n'
                    '[filters.recall]\nk = 3\nexclude_kinds = ["procedure"]\n'
                    '[filters.redact.profiles.default]\ngroups = ["llm"]\nrule_files = ["rules/team.toml"]\n')
    rules, cache = tmp_path / "project", tmp_path / "cache"
    in_process = eval_config(user, tmp_path / "data", "http://127.0.0.1:1", rules, cache)
    raw = child_config(user, eval_filters(load_config(user), rules, cache))
    text = toml_text(raw)
    assert tomllib.loads(text) == raw and "not-for-a-file" not in text
    (tmp_path / "child.toml").write_text(text)
    child = load_config(tmp_path / "child.toml")
    assert child.server.max_body_bytes == 1048576
    team_rules = str(user.parent / "rules" / "team.toml")
    assert child.filters["redact"]["profiles"]["default"]["rule_files"] == [team_rules]
    child.filters["redact"]["profiles"]["default"]["rule_files"] = ["rules/team.toml"]
    assert child.filters == in_process.filters


async def test_a_child_proxy_that_cannot_start_is_reported_with_its_log(tmp_path):
    from ctxproxy.proxy.eval.child import ChildError, serve

    (tmp_path / "data").write_text("a file where the data directory should be")
    with pytest.raises(ChildError, match="exited with 1 before it answered") as exc:
        async with serve(None, tmp_path / "data", "http://127.0.0.1:1"):
            pass
    assert "is not a directory" in str(exc.value)
