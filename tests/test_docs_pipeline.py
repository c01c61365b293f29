"""Every page that states the default pipeline's order states the one
config/ctxproxy.toml has (``[pipeline] request``), and ``FILTERS`` lists the
filters in that order too."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ctxproxy.config import default_config_text
from ctxproxy.filters import FILTERS

DOCS = Path(__file__).resolve().parent.parent / "docs"
ORDER = tuple(tomllib.loads(default_config_text())["pipeline"]["request"])


def text(page: str) -> str:
    return " ".join((DOCS / page).read_text(encoding="utf-8").replace("`", " ").split())


def arrows(page: str) -> list[tuple[str, ...]]:
    """Each ``identify → … → manifest`` chain on the page."""
    return [tuple(re.split(r"\s*→\s*", m)) for m in re.findall(r"identify(?:\s*→\s*[a-z_]+)+", text(page))]


@pytest.mark.parametrize("page", ["architecture.md", "recall.md", "filters/README.md"])
def test_the_chains_on_a_page_are_the_configs_order(page):
    chains = arrows(page)
    assert chains, f"docs/{page} shows no pipeline"
    for chain in chains:
        assert chain == ORDER, f"docs/{page}: {' → '.join(chain)}"


def test_the_listed_pipeline_in_performance_is_the_configs_order():
    (listed,) = re.findall(r"\((identify(?:, [a-z_]+)+)\)", text("performance.md"))
    assert tuple(listed.split(", ")) == ORDER


def test_the_worked_example_adds_its_filter_to_the_configs_order():
    (request,) = re.findall(r'request = (\[[^\]]*"house_note"[^\]]*\])', text("writing-a-filter.md"))
    names = tuple(n for n in re.findall(r'"([a-z_]+)"', request) if n != "house_note")
    assert names == ORDER


def test_the_registry_lists_the_filters_in_the_configs_order():
    assert tuple(name for name in FILTERS if name in ORDER) == ORDER
