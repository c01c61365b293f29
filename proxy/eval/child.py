"""The proxy under test as a child process: ``ctxproxy serve`` (``ctxproxy eval --child``).

The child runs the configuration under test as a deployment would: its own
process, its own event loop and store writer, started by the installed
``ctxproxy`` entry point. The eval writes the configuration it runs (the user's
file with the eval's filter changes, the same ones the in-process proxy gets:
``harness.eval_filters``) into the set's directory, starts the child on a free
127.0.0.1 port with the scripted provider as both upstreams, the admin token in
``CTXPROXY_ADMIN_TOKEN`` (never in a file), and waits until ``/ctx/healthz``
answers with the child's pid. Stopping is SIGTERM, then the child's own
graceful shutdown; a child still running after ``STOP_TIMEOUT`` is killed.
The child stays in the eval's process group (a terminal's Ctrl-C stops both)
and, on Linux, gets SIGTERM if the eval dies without stopping it.

    async with serve(config, data_dir, fake.url, rules_dir) as proc:
        proc.url, proc.token
"""
from __future__ import annotations

import asyncio
import collections
import json
import math
import os
import signal
import sys
import tomllib
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp

from ..ports import free_port

START_TIMEOUT = 120.0  # seconds for the child to answer /ctx/healthz (compiling the redaction rules on a busy machine)
STOP_TIMEOUT = 15.0  # seconds for it to exit after SIGTERM
PORT_ATTEMPTS = 3  # a free port can be taken between choosing it and the child binding it
_TAIL = 40  # lines of the child's log kept for an error message


class ChildError(RuntimeError):
    """The child did not start, answered wrongly or did not stop."""


@dataclass
class Child:
    url: str
    token: str
    keys_mode: bool
    proc: asyncio.subprocess.Process
    log: collections.deque = field(default_factory=lambda: collections.deque(maxlen=_TAIL))
    lines: int = 0  # lines the child has written so far
    ended: bool = False  # its output ended (it exited)

    def tail(self) -> str:
        return "\n".join(self.log) or "(no output)"


def toml_text(table: dict, prefix: str = "") -> str:
    """``table`` as TOML: keys with plain values first, then each sub-table under its header."""
    lines, subs = [], []
    for key, value in table.items():
        if isinstance(value, dict) and value and not _inline(value):
            subs.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, value in subs:
        name = f"{prefix}.{_key(key)}" if prefix else _key(key)
        out += f"\n[{name}]\n" + toml_text(value, name)
    return out


def _inline(value: dict) -> bool:
    """A table written inline: one holding no table (``chars = { tenant = 1000 }``)."""
    return not any(isinstance(v, dict) for v in value.values())


def _key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "-_" for c in key) else _string(key)


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, float):
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else "nan" if math.isnan(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise ChildError(f"cannot write {type(value).__name__} {value!r} to the child's configuration")


def child_config(config: str | os.PathLike | None, filters: dict) -> dict:
    """The user's configuration file as a table, with the eval's ``filters`` (every filter
    section, resolved) and no admin token. Redaction rule files named relative to the
    user's file are made absolute: the child reads its configuration from elsewhere."""
    raw: dict = {}
    if config is not None:
        raw = tomllib.loads(Path(config).read_text("utf-8"))
    base = Path(config).resolve().parent if config is not None else Path.cwd()
    server = {k: v for k, v in (raw.get("server") or {}).items() if k != "admin_token"}
    if server:
        raw["server"] = server
    filters = dict(filters)
    redact = dict(filters.get("redact") or {})
    profiles = redact.get("profiles")
    if isinstance(profiles, dict):
        redact["profiles"] = {name: {**p, "rule_files": [str(base / f) for f in p.get("rule_files") or ()]}
                              if isinstance(p, dict) and p.get("rule_files") else p
                              for name, p in profiles.items()}
        filters["redact"] = redact
    raw["filters"] = filters
    return raw


def _serve_command() -> list[str]:
    """``ctxproxy serve`` through the installed console script's entry point."""
    ep = next((e for e in entry_points(group="console_scripts") if e.name == "ctxproxy"), None)
    target = ep.value if ep is not None else "ctxproxy.proxy.cli.main:main"
    module, _, attr = target.partition(":")
    return [sys.executable, "-c", f"import sys; from {module} import {attr} as main; sys.exit(main())", "serve"]


def _end_with_parent() -> None:
    """In the child before it runs ctxproxy (Linux): SIGTERM when the eval process is gone, so
    an eval that was killed leaves no proxy behind. Elsewhere nothing (the eval stops it)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


@asynccontextmanager
async def serve(config: str | os.PathLike | None, data_dir: Path, upstream: str, rules_dir: Path | None = None,
                cache_dir: Path | None = None) -> AsyncIterator[Child]:
    """``ctxproxy serve`` with the configuration under test over ``data_dir``, upstream ``upstream``."""
    from ctxproxy.config import load_config

    from .harness import admin_token, eval_filters

    cfg = load_config(config)
    path = data_dir.parent / "ctxproxy-under-test.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(toml_text(child_config(config, eval_filters(cfg, rules_dir, cache_dir))), "utf-8")
    token = admin_token()
    env = {"OTEL_SDK_DISABLED": "true", **os.environ, "CTXPROXY_ADMIN_TOKEN": token}
    for attempt in range(PORT_ATTEMPTS):
        port = free_port()
        proc = await asyncio.create_subprocess_exec(
            *_serve_command(), "--config", str(path), "--host", "127.0.0.1", "--port", str(port),
            "--data-dir", str(data_dir), "--anthropic-upstream", upstream, "--openai-upstream", upstream,
            "--shutdown-timeout", "1", "--log-level", "INFO",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            env=env, preexec_fn=_end_with_parent)
        child = Child(f"http://127.0.0.1:{port}", token, cfg.auth.mode == "keys", proc)
        lines = asyncio.Condition()
        reader = asyncio.create_task(_read_log(child, lines))
        try:
            if await _started(child, lines):
                break
        except BaseException:
            await _stop(child)
            reader.cancel()
            raise
        await _stop(child)
        reader.cancel()
        if attempt == PORT_ATTEMPTS - 1 or "cannot listen" not in child.tail():
            raise ChildError(f"ctxproxy serve exited with {proc.returncode} before it answered:\n{child.tail()}")
    try:
        yield child
    finally:
        code = await _stop(child)
        reader.cancel()
    if code not in (0, -signal.SIGTERM):
        raise ChildError(f"ctxproxy serve did not stop cleanly (exit {code}):\n{child.tail()}")


async def _read_log(child: Child, lines: asyncio.Condition) -> None:
    """Keep the child's log (its tail for errors) and wake whoever waits for its next line."""
    assert child.proc.stderr is not None
    while True:
        line = await child.proc.stderr.readline()
        async with lines:
            if line:
                child.log.append(line.decode("utf-8", "replace").rstrip())
                child.lines += 1
            else:
                child.ended = True
            lines.notify_all()
        if not line:
            return


async def _started(child: Child, lines: asyncio.Condition) -> bool:
    """Wait until ``/ctx/healthz`` answers with the child's pid (True) or the child exits (False).
    Between two attempts it waits for the child to say something (it logs when it listens),
    never for a fixed time; the whole wait is bounded by ``START_TIMEOUT``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        while True:
            seen = child.lines, child.ended
            try:
                async with http.get(child.url + "/ctx/healthz") as resp:
                    body = await resp.json(content_type=None)
                if resp.status == 200 and isinstance(body, dict) and body.get("pid") == child.proc.pid:
                    return True
                raise ChildError(f"{child.url}/ctx/healthz answered {resp.status} {body} (not our child, pid "
                                 f"{child.proc.pid})")
            except (aiohttp.ClientConnectionError, asyncio.TimeoutError):
                pass
            if child.ended:  # its output ended: it exited
                await child.proc.wait()
                return False
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise ChildError(f"ctxproxy serve did not answer /ctx/healthz within {START_TIMEOUT:g} s:\n"
                                 f"{child.tail()}")
            try:
                async with lines:
                    await asyncio.wait_for(lines.wait_for(lambda: (child.lines, child.ended) != seen), remaining)
            except asyncio.TimeoutError:
                pass


async def _stop(child: Child) -> int | None:
    """SIGTERM, the child's graceful shutdown, then SIGKILL after ``STOP_TIMEOUT``: its exit code."""
    proc = child.proc
    if proc.returncode is None:
        try:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)
        except ProcessLookupError:
            pass
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            child.log.append(f"(killed: still running {STOP_TIMEOUT:g} s after SIGTERM)")
            return -signal.SIGKILL
    return await proc.wait()
