"""Packaging: every third-party module the code and the tests import is declared
in pyproject.toml with a lower bound; the Dockerfile's fixed serve flags survive
arguments given to ``docker run``."""
from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE_DIRS = ("proxy", "filters", "store", "config")
# the tests' own helpers, and the benchmarks' workloads a test may import (bench_recall)
# (a backend's tests rerun another test module's tests on it: those import it by name)
LOCAL_TEST_MODULES = {p.stem for d in ("tests", "bench") for p in (ROOT / d).rglob("*.py")}


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].strip().lower().replace("_", "-")


def declared(*extras: str) -> dict[str, str]:
    """The requirements of the base install and ``extras``, an extra that takes in
    another (``ctxproxy[postgres]``) with that one's too."""
    reqs = list(PYPROJECT["project"]["dependencies"])
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for r in PYPROJECT["project"]["optional-dependencies"][extra]:
            if r.startswith("ctxproxy["):
                todo.append(r.rstrip("]").split("[")[1])
            reqs.append(r)
    return {_name(r): r for r in reqs}


def imported(dirs: list[Path]) -> set[str]:
    """Top-level modules imported anywhere under ``dirs`` (at any depth, lazily too)."""
    mods = set()
    for d in dirs:
        for path in d.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    mods.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods.add(node.module.split(".")[0])
    return mods


def third_party(mods: set[str]) -> dict[str, set[str]]:
    """module -> the distributions that provide it, for modules that are neither
    the standard library, ctxproxy, nor the tests' own helpers."""
    dists = metadata.packages_distributions()
    out = {}
    for m in sorted(mods - set(sys.stdlib_module_names) - {"ctxproxy", "__future__"} - LOCAL_TEST_MODULES):
        out[m] = {d.lower().replace("_", "-") for d in dists.get(m, [])}
    return out


def _undeclared(mods: dict[str, set[str]], deps: dict[str, str]) -> list[str]:
    missing = []
    for mod, dists in mods.items():
        if mod == "opentelemetry":  # a namespace many distributions share: checked by name below
            continue
        if mod == "hyperscan":  # optional at run time (pure-Python fallback), declared per platform
            assert "hyperscan" in deps
            continue
        if not dists & set(deps):
            missing.append(f"{mod} (from {', '.join(sorted(dists)) or '?'})")
    return missing


def test_the_package_declares_what_it_imports():
    deps = declared()
    mods = third_party(imported([ROOT / d for d in PACKAGE_DIRS]))
    assert {"aiohttp", "multidict", "yarl", "orjson", "lmdb"} <= set(mods)
    # anthropic is imported by the demo command only, mitmproxy and certifi by transparent mode
    # only, numpy, tokenizers and safetensors by recall's embeddings only, each behind a check that
    # names its extra
    extra_only = {"anthropic": "demo", "mitmproxy": "mitm", "certifi": "mitm", "numpy": "embeddings",
                  "tokenizers": "embeddings", "safetensors": "embeddings", "psycopg": "postgres",
                  "psycopg_pool": "postgres"}
    assert not _undeclared({m: d for m, d in mods.items() if m not in extra_only}, deps)
    for mod, extra in extra_only.items():
        assert mod.replace("_", "-") in declared(extra), (mod, extra)
    assert "opentelemetry-api" in deps and "opentelemetry-sdk" in deps


def test_the_test_extra_declares_what_the_tests_import():
    deps = declared("test")
    mods = third_party(imported([ROOT / "tests"]))
    assert {"httpx2", "openai", "anthropic", "pytest", "hypothesis"} <= set(mods)
    assert not _undeclared(mods, deps)


def test_every_requirement_has_a_lower_bound():
    for group in ("", "test", "demo", "mitm", "embeddings", "postgres"):
        reqs = declared(group) if group else declared()
        for name, req in reqs.items():
            if name == "ctxproxy":  # the test extra takes in another extra: its bounds are there
                assert req.startswith("ctxproxy[") and req.rstrip("]").split("[")[1] in \
                    PYPROJECT["project"]["optional-dependencies"], req
                continue
            assert ">=" in req, f"{req}: no lower bound"


def test_sdk_floors_are_the_ones_the_tests_and_demo_need():
    """Older SDKs were tried: the demo awaits ``with_raw_response(...).parse()``
    (a coroutine from anthropic 1.0); the tests need anthropic 2.0 and openai 3.14."""
    def floor(req: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.search(r">=\s*([0-9.]+)", req).group(1).split("."))

    assert floor(declared("demo")["anthropic"]) >= (1, 0)
    assert floor(declared("test")["anthropic"]) >= (2, 0)
    assert floor(declared("test")["openai"]) >= (3, 14)
    assert floor(declared("test")["pytest-asyncio"]) >= (0, 24)  # asyncio_default_fixture_loop_scope


def _instruction(name: str) -> list[str]:
    lines = [ln for ln in (ROOT / "Dockerfile").read_text().splitlines() if ln.startswith(name + " ")]
    assert len(lines) == 1, f"one {name} expected"
    return json.loads(lines[0][len(name) + 1:])  # exec form


def test_docker_run_arguments_keep_the_serve_flags():
    """``docker run IMAGE --config /data/x.toml`` runs ENTRYPOINT + those arguments."""
    from ctxproxy.proxy.cli.main import _parser

    entry, cmd = _instruction("ENTRYPOINT"), _instruction("CMD")
    assert entry[0] == "ctxproxy"
    for user_args in ([], ["--config", "/data/x.toml"], ["--log-level", "DEBUG", "--workers", "2"]):
        argv = entry[1:] + (user_args or cmd)
        args = _parser().parse_args(argv)
        assert args.command == "serve"
        assert (args.host, args.port, args.data_dir) == ("0.0.0.0", 8788, "/data")
        if user_args[:1] == ["--config"]:
            assert args.config == "/data/x.toml"
    health = next(ln for ln in (ROOT / "Dockerfile").read_text().splitlines() if ln.startswith("HEALTHCHECK"))
    assert "127.0.0.1:8788/ctx/healthz" in health


def test_ci_runs_the_readme_test_command_and_installs_the_newest_releases():
    """CI runs exactly what the README tells a user to run, and that command
    upgrades what an environment already holds: a new SDK release that breaks
    the suite fails CI, not a user on a fresh machine."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("Run the tests", 1)[1].split("```sh\n", 1)[1].split("\n```", 1)[0]
    (command,) = block.splitlines()
    ci = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln and not ln.startswith("#")]
    assert command in ci
    installs = [step for step in command.split("&&") if "pip install" in step]
    assert installs and all("--upgrade " in s and "--upgrade-strategy eager" in s for s in installs), installs
    assert command.rstrip().endswith("python -m pytest")


def test_every_package_and_its_data_is_in_the_distribution():
    """``pip install .`` (not editable) installs only the packages pyproject lists:
    a subpackage left out imports in a clone and fails in the quick start."""
    tool = PYPROJECT["tool"]["setuptools"]
    listed = set(tool["packages"])
    dirs = {v: k for k, v in tool["package-dir"].items()}
    found = set()
    for folder in PACKAGE_DIRS:
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT)
            found.add(".".join([dirs[rel.parts[0]], *rel.parts[1:]]))
    assert found - listed == set(), "packages missing from pyproject's [tool.setuptools] packages"
    data = tool.get("package-data", {})
    for folder in PACKAGE_DIRS:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts:
                rel = path.parent.relative_to(ROOT)
                pkg_parts = list(rel.parts)
                while not (ROOT.joinpath(*pkg_parts) / "__init__.py").exists():
                    pkg_parts.pop()
                pkg = ".".join([dirs[pkg_parts[0]], *pkg_parts[1:]])
                inner = path.relative_to(ROOT.joinpath(*pkg_parts)).as_posix()
                patterns = data.get(pkg, [])
                import fnmatch

                assert any(fnmatch.fnmatch(inner, p) for p in patterns), f"{path.relative_to(ROOT)} not in package-data"
