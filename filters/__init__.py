"""The per-turn filters and their one ordered registry.

``FILTERS`` maps a filter name (its ``[filters.<name>]`` section) to the class
that implements it. The chain a route runs, and its order, is the config's
(``[pipeline] request`` in ``config/ctxproxy.toml``, or a route's
``filters``); this list only names what exists (its order is that default
chain's, which a test holds). The pipeline never knows a filter's keys: each
class parses its own section once.
"""
from __future__ import annotations

import importlib
from typing import Any, Iterable, Mapping

from ctxproxy.config import Config, ConfigError, parse_section

from .base import CommitFailed, Filter, FilterError, Identity, Pipeline, Turn, field_owners
from .report import ManifestField
from .services import Services

# name -> "module:Class". Listed in the order config/ctxproxy.toml's [pipeline] runs them (a test
# holds it), for the reader; the chain that runs is always the config's.
FILTERS: dict[str, str] = {
    "identify": "ctxproxy.filters.identify:IdentifyFilter",
    "redact": "ctxproxy.filters.redact:RedactFilter",
    "effects": "ctxproxy.filters.effects.filter:EffectsFilter",
    "checkpoint": "ctxproxy.filters.checkpoint:CheckpointFilter",
    "prune": "ctxproxy.filters.prune:PruneFilter",
    "recall": "ctxproxy.filters.recall:RecallFilter",
    "inject": "ctxproxy.filters.inject.filter:InjectFilter",
    "memory_tool": "ctxproxy.filters.memory_tool:MemoryToolFilter",
    "manifest": "ctxproxy.filters.manifest.filter:ManifestFilter",
}


def filter_class(name: str) -> type[Filter]:
    try:
        target = FILTERS[name]
    except KeyError:
        raise ConfigError(f"unknown filter {name!r} (known: {', '.join(FILTERS)})") from None
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def used_filters(cfg: Config) -> list[str]:
    """Filters named by the pipeline, a route, or a config section."""
    names = dict.fromkeys(cfg.pipeline.request)
    for route in cfg.routes.values():
        names.update(dict.fromkeys(route.filters or ()))
    names.update(dict.fromkeys(cfg.filters))
    return list(names)


def manifest_fields(extra: Iterable[Any] = ()) -> dict[str, tuple[str, ManifestField]]:
    """Every top-level Context Manifest field a registered filter (or one of
    ``extra``, a chain's filters) fills: field -> (filter name, how). A field
    two filters declare is a ``ConfigError``."""
    global _registered
    key = tuple(FILTERS.items())
    if _registered is None or _registered[0] != key:
        classes = [filter_class(name) for name in FILTERS]
        _registered = (key, classes, field_owners(classes))
    _, classes, owners = _registered
    unregistered = [f for f in extra if f.name not in FILTERS]
    return field_owners([*classes, *unregistered]) if unregistered else owners


_registered: tuple[tuple, list, dict] | None = None  # (FILTERS, their classes, the fields they fill)


def filter_configs(cfg: Config) -> dict[str, Any]:
    """Parse the ``[filters.<name>]`` section of every filter in use, once;
    unknown names are errors."""
    for name in cfg.filters:
        if name not in FILTERS:
            raise ConfigError(f"filters.{name}: unknown filter (known: {', '.join(FILTERS)})")
    manifest_fields()  # two filters reporting one manifest field stop start-up
    out = {}
    for name in used_filters(cfg):
        cls = filter_class(name)
        if cls.Config is not None:
            out[name] = parse_section(cls.Config, cfg.filters.get(name), f"filters.{name}")
    return out


def build_pipeline(names: tuple[str, ...], configs: Mapping[str, Any],
                   services: Services | Mapping[str, Any]) -> Pipeline:
    """The chain ``names``: each filter made by its ``create(config, services)``
    (else its constructor, from its config alone)."""
    services = Services.of(services)
    filters = []
    for name in names:
        cls = filter_class(name)
        create = getattr(cls, "create", None)
        fcfg = configs.get(name)
        filters.append(create(fcfg, services) if create else cls(fcfg))
    return Pipeline(filters)


__all__ = ["FILTERS", "CommitFailed", "Filter", "FilterError", "Identity", "Pipeline", "Services", "Turn",
           "build_pipeline", "filter_class", "filter_configs"]
