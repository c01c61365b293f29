"""docs/admin-api.md lists every admin endpoint the server registers, by its
method and path, so what a user looks up there is what the server answers."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

from ctxproxy.proxy.admin.app import _routes
from ctxproxy.proxy.edge.server import ADMIN_MODULES

DOC = Path(__file__).resolve().parents[3] / "docs" / "admin-api.md"


def documented() -> set[tuple[str, str]]:
    """(method, path) pairs written in the doc as `METHOD /ctx/v1/...`, a
    query string left out."""
    found = set()
    for method, path in re.findall(r"`(GET|POST|PATCH|DELETE|PUT) (/ctx/v1/[^`?\s]*)", DOC.read_text()):
        found.add((method, path))
    return found


def test_every_admin_endpoint_is_documented():
    for module in ADMIN_MODULES:
        importlib.import_module(module)
    registered = {(method, path) for method, path, _ in _routes}
    missing = sorted(registered - documented())
    assert not missing, f"not in docs/admin-api.md: {missing}"
