"""Small helpers shared by the bench scripts.

Process handling, percentiles and the machine description come from
``bench/run.py`` (imported, not copied); this adds what the scripts also
need: a load meter (how busy the rest of the machine was while we measured),
the header / append of a section of ``bench/RESULTS.md``, a ``ctxproxy serve``
child process and the wait for it, and a store filled in batches.
"""
from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import aiohttp

from run import ROOT, RESULTS, cpu_seconds, free_port, machine, pct, self_cpu, system_cpu  # noqa: F401  (pct re-exported)


class LoadMeter:
    """CPU used by other processes while a benchmark runs.

    ``pids()`` returns the benchmark's own child processes (their CPU is
    ours, not foreign load); this process is always counted as ours.
    """

    def __init__(self, pids=lambda: ()):
        self._pids = pids
        self.load0 = os.getloadavg()[0]
        self.sys0 = system_cpu()
        self.ours0 = self._ours()
        self.wall0 = time.monotonic()

    def _ours(self) -> float:
        total = self_cpu()
        for pid in self._pids():
            try:
                total += cpu_seconds(pid)
            except OSError:
                pass
        return total

    def rebase(self) -> None:
        """Start counting now (after the child processes started, say)."""
        self.sys0, self.ours0, self.wall0 = system_cpu(), self._ours(), time.monotonic()

    def summary(self) -> str:
        (busy, steal), ours, wall = system_cpu(), self._ours(), time.monotonic() - self.wall0
        foreign = max(0.0, (busy - self.sys0[0]) - (ours - self.ours0))
        text = (f"Other processes on the machine used {foreign:.1f} CPU-s during the {wall:.0f} s of measurement "
                f"({100 * foreign / max(wall, 1e-9):.0f}% of one CPU; steal {steal - self.sys0[1]:.1f} s; "
                f"load average at start {self.load0:.2f}, at end {os.getloadavg()[0]:.2f}).")
        if wall > 0 and foreign / wall > 0.1:
            text += " **The machine was not idle: absolute numbers are pessimistic.**"
        return text


def section_head(title: str) -> str:
    m = machine()
    cmd = "python " + shlex.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
    return (f"## {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} — `{cmd}` ({title})\n\n"
            f"Machine: {m['nproc']} CPUs ({m['cpu']}), Linux {m['kernel']}, Python {m['python']}, "
            f"aiohttp {m['aiohttp']}. Code: {m['commit']}.\n")


def append_results(section: str) -> None:
    with RESULTS.open("a") as f:
        f.write("\n" + section.rstrip("\n") + "\n")
    print(f"# appended to {RESULTS}", file=sys.stderr)


def start_serve(tmp: Path, name: str, upstream: str, config: str = "") -> tuple[subprocess.Popen, str]:
    """``ctxproxy serve`` as a child process on a free port, in front of ``upstream``
    for both APIs, with ``config`` as its TOML: its data in ``tmp/<name>``, its
    stderr in ``tmp/<name>.log`` (``wait_up`` shows the tail if it exits)."""
    tmp.mkdir(parents=True, exist_ok=True)
    cfg = tmp / f"{name}.toml"
    cfg.write_text(config)
    port = free_port()
    log = open(tmp / f"{name}.log", "wb")
    p = subprocess.Popen([sys.executable, "-m", "ctxproxy.proxy.cli.main", "serve", "--port", str(port), "--config",
                          str(cfg), "--data-dir", str(tmp / name), "--anthropic-upstream", upstream,
                          "--openai-upstream", upstream, "--log-level", "WARNING"],
                         stdout=subprocess.DEVNULL, stderr=log)
    return p, f"http://127.0.0.1:{port}"


async def wait_up(http: aiohttp.ClientSession, url: str, proc: subprocess.Popen | None = None,
                  limit: float = 30.0) -> None:
    """Until ``url`` answers its health check (``limit`` seconds at most); a
    ``proc`` that exits first ends the run with the tail of its stderr (a pipe,
    or the log ``start_serve`` gave it)."""
    for _ in range(int(limit / 0.05)):
        if proc is not None and proc.poll() is not None:
            if proc.stderr is not None:
                tail = proc.stderr.read().decode(errors="replace")[-2000:]
            else:
                log = Path(proc.args[proc.args.index("--data-dir") + 1] + ".log")
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise SystemExit(f"{url} exited with {proc.returncode}:\n{tail}")
        try:
            async with http.get(url + "/ctx/healthz") as r:
                if r.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.05)
    raise SystemExit(f"{url} did not come up")


def put_memories(store: Any, records: Iterable[Any], batch: int = 2000) -> None:
    """Every record into ``store.memories``, ``batch`` to a write transaction."""
    pending: list = []
    for rec in records:
        pending.append(rec)
        if len(pending) == batch:
            with store.batch() as b:
                for r in pending:
                    b.memories.put(r)
            pending = []
    if pending:
        with store.batch() as b:
            for r in pending:
                b.memories.put(r)
