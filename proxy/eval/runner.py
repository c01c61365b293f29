"""Running the sets: each set against a fresh ctxproxy (the configuration under test)
and against the scripted provider directly (the no-proxy column), each with its
own data directory, then the report."""
from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import compaction, facts, isolation, probes, turns
from .cases import Cases, replay
from .harness import TARGETS, shared_cache_dir, target
from .report import REPORT_VERSION
from .spec import ProbeSet

SETS = ("facts", "isolation", "turns", "compaction")


@dataclass(frozen=True)
class Sizes:
    """How big the generated sets are. ``full``: what ``ctxproxy eval`` runs (``all`` in well
    under two minutes on 2 cores); ``quick``: the CI slice."""

    services: int = 8  # facts: services, each with 5 facts/decisions, a rule, maybe a procedure
    tenants: int = 3  # isolation: tenants × users principals
    users: int = 2
    filler: int = 24  # compaction: long file reads between the set-up and the compaction
    after: int = 4  # compaction: turns after it
    read_lines: int = 240  # compaction: lines of each file read (~4K tokens: the sessions outgrow prune's trigger)


FULL = Sizes()
QUICK = Sizes(services=3, tenants=2, users=2, filler=3, after=2, read_lines=29)


class Progress:
    """A one-line bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, total: int, stream: Any = None):
        self.total, self.done = max(total, 1), 0
        self.stream = stream or sys.stderr
        self.on = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = ""

    def step(self) -> None:
        self.done += 1
        if self.on:
            filled = int(30 * self.done / self.total)
            self.stream.write(f"\r{self.label:<22} [{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self.on:
            self.stream.write("\r" + " " * 70 + "\r")
            self.stream.flush()


def probe_sets(sets: tuple[str, ...], seed: int, sizes: Sizes, cases: Cases | None,
               sealed: bool = True) -> dict[str, ProbeSet]:
    out = {}
    if "facts" in sets:
        out["facts"] = facts.build(seed, sizes.services)
    if "isolation" in sets:
        out["isolation"] = isolation.build(seed, sizes.tenants, sizes.users)
    if "turns" in sets:
        out["turns"] = turns.build(seed, sealed=sealed)
    if cases is not None and (cases.probes.questions or cases.probes.memories):
        out["cases"] = cases.probes
    return out


def _write_rules(ps: ProbeSet, root: Path) -> Path | None:
    if not ps.rules:
        return None
    for rel, text in ps.rules.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    return root


async def run_eval(sets: tuple[str, ...], config: str | None, data_dir: Path, seed: int = 7,
                   sizes: Sizes = FULL, cases: Cases | None = None, progress: Progress | None = None,
                   child: bool = False, cache_dir: Path | None = None, sealed: bool = True) -> dict:
    """Run ``sets`` (and ``cases``) through the configuration under test, in this process or,
    with ``child``, through ``ctxproxy serve`` as a child process; the report. ``cache_dir``:
    where the proxies keep the compiled redaction rules (default: one directory for this
    process, so the proxies of every run in it share them). ``sealed``: False leaves the sealed
    held-out halves out, unread (``--no-sealed``)."""
    cache_dir = cache_dir or shared_cache_dir()
    pss = probe_sets(sets, seed, sizes, cases, sealed)
    n_compaction = len(compaction.AGENTS) if "compaction" in sets else 0
    n_sessions = len(cases.sessions) if cases else 0
    total = sum(len(p.primes) + len(p.questions) for p in pss.values()) * len(TARGETS) \
        + (n_compaction + n_sessions) * len(TARGETS)
    bar = progress or Progress(total)
    bar.total = max(total, 1)
    report: dict[str, Any] = {"version": REPORT_VERSION, "commit": commit(), "seed": seed,
                              "config": config or "<defaults>", "proxy": "child" if child else "in-process",
                              "sealed": sealed, "sizes": sizes.__dict__, "sets": {}}
    try:
        names = [s for s in SETS if s in sets] + (["cases"] if "cases" in pss or n_sessions else [])
        for name in names:
            t0 = time.perf_counter()
            cols, details = {}, {}
            raws = {}
            for tname in TARGETS:
                bar.label = f"{name} ({tname})"
                base = data_dir / name / tname
                rules = _write_rules(pss[name], base / "project") if name in pss else None
                async with target(tname, config, base / "data", rules, cache_dir, child) as t:
                    m: dict[str, Any] = {}
                    if name in pss:
                        ps = pss[name]
                        obs, writes = await probes.run(t, ps, bar.step)
                        stale = [x.statement for x in ps.memories if x.stale]
                        m.update(probes.metrics(obs, writes, stale))
                        if tname == "ctxproxy":
                            details.update(probes.details(obs, writes, stale))
                    if name == "compaction":
                        raws[tname] = await compaction.run_set(t, bar.step, sizes.filler, sizes.after, sizes.read_lines)
                    elif name == "cases" and n_sessions:
                        raws[tname] = await replay(t, cases.sessions, bar.step)
                    cols[tname] = m
            if raws:
                for tname in TARGETS:
                    if name == "compaction":
                        cols[tname].update(compaction.metrics(raws[tname], raws["direct"]))
                    else:
                        cols[tname].update(_session_metrics(raws[tname], raws["direct"], cols[tname]))
                details["lost_after_compaction"] = raws["ctxproxy"].get("lost")
            report["sets"][name] = {"ctxproxy": cols["ctxproxy"], "direct": cols["direct"],
                                    "seconds": round(time.perf_counter() - t0, 2), "details": details}
    finally:
        bar.close()
    return report


def _session_metrics(raw: dict, direct: dict, probe_metrics: dict) -> dict:
    leak_probes = probe_metrics.get("privacy_leakage")
    out = {"compaction_fidelity": round(sum(raw["visible"]) / len(raw["visible"]), 4) if raw["visible"] else None,
           "cache_prefix_retention": round(sum(raw["kept"]) / len(raw["kept"]), 4) if raw["kept"] else None,
           "tokens_saved_by_pruning": round(1 - (raw["input_tokens"] - raw["injected_tokens"])
                                            / direct["input_tokens"], 4) if direct["input_tokens"] else None,
           "input_tokens": raw["input_tokens"], "injected_tokens": raw["injected_tokens"]}
    session_leak = raw["leaks"] / raw["requests"] if raw["requests"] else 0.0
    out["privacy_leakage"] = round(max(leak_probes or 0.0, session_leak), 4)
    return out


def commit() -> str:
    """The source tree's commit (+ when it has uncommitted changes), for bench/RESULTS.md."""
    here = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return sha + ("+" if sha and dirty else "")

