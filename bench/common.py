"""Small helpers shared by bench/bench_redact.py and bench/bench_growth.py.

Process handling, percentiles and the machine description come from
``bench/run.py`` (imported, not copied); this adds what those two scripts also
need: a load meter (how busy the rest of the machine was while we measured)
and the header / append of a section of ``bench/RESULTS.md``.
"""
from __future__ import annotations

import os
import shlex
import sys
import time
from datetime import datetime, timezone

from run import ROOT, RESULTS, cpu_seconds, machine, pct, self_cpu, system_cpu  # noqa: F401  (pct re-exported)


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

