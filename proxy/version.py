"""The installed distribution's version: ``ctxproxy --version``, ``/ctx/healthz``, telemetry."""
from __future__ import annotations

from importlib import metadata


def version() -> str:
    try:
        return metadata.version("ctxproxy")
    except metadata.PackageNotFoundError:
        return "0+unknown"
