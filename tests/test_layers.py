"""The dependency rule, read from the code: edge → engine → filters → services → store.

Every module's imports (relative ones resolved, lazy ones inside functions
included) are checked against the layers it may use. The drivers side by
side: transparent mode (``proxy/mitm``) imports nothing of serve's aiohttp
edge (``proxy/edge``); what both use (service start-up, the WebSocket's
lanes) lives in ``proxy/`` beside the engine.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"proxy": "ctxproxy.proxy", "filters": "ctxproxy.filters", "store": "ctxproxy.store", "config": "ctxproxy.config"}

# A module in the first layer never imports one in these.
_DRIVERS = ("ctxproxy.proxy.edge", "ctxproxy.proxy.mitm", "ctxproxy.proxy.admin", "ctxproxy.proxy.cli")
FORBIDDEN = {
    "ctxproxy.proxy.mitm": ("ctxproxy.proxy.edge",),
    # the engine and what every driver shares know no driver
    **{f"ctxproxy.proxy.{m}": _DRIVERS for m in ("engine", "replies", "adapters", "routing", "sse", "content_coding",
                                                 "rounds", "ws_lanes", "services", "auth", "telemetry")},
    "ctxproxy.store.services": ("ctxproxy.proxy", "ctxproxy.filters"),
    "ctxproxy.store": ("ctxproxy.proxy", "ctxproxy.filters", "ctxproxy.store.services"),
    "ctxproxy.filters": ("ctxproxy.proxy",),
    "ctxproxy.config": ("ctxproxy.proxy", "ctxproxy.filters", "ctxproxy.store"),
}


def _modules():
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            yield name, path


def _imports(name: str, path: Path) -> set[str]:
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _layer(name: str) -> str | None:
    for layer in FORBIDDEN:  # most specific first
        if name == layer or name.startswith(layer + "."):
            return layer
    return None


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_every_module_imports_only_the_layers_below_it():
    broken = []
    for name, path in _modules():
        layer = _layer(name)
        if layer is None:
            continue
        for imported in _imports(name, path):
            for banned in FORBIDDEN[layer]:
                if _within(imported, banned):
                    broken.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not broken, "\n".join(sorted(set(broken)))


@pytest.mark.parametrize("prefix,layer", [
    ("ctxproxy.store.services.memory.gate", "ctxproxy.store.services"),
    ("ctxproxy.store.lmdb_store", "ctxproxy.store"),
    ("ctxproxy.filters.recall", "ctxproxy.filters"),
    ("ctxproxy.proxy.mitm.addon", "ctxproxy.proxy.mitm"),
    ("ctxproxy.proxy.edge.server", None),
    ("ctxproxy.proxy.adapters.anthropic", "ctxproxy.proxy.adapters"),
    ("ctxproxy.proxy.engine", "ctxproxy.proxy.engine"),
])
def test_the_layers_are_told_apart(prefix, layer):
    assert _layer(prefix) == layer
